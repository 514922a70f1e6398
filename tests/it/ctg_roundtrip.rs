//! CTG books written by the tests' own writer (`common::ctg_writer`, from docs/formats.md's
//! layout) and read back by polybook: the bytes against the layout written out by hand, Polyglot
//! books through `.bin → .ctg → convert → .bin`, the weight and learn rules through `probe`,
//! flipped and mirrored positions, `verify`; and a large book for the speed benchmark.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use polybook::book::formats::ctg;
use polybook::book::{Book, Key, RawMove};
use shakmaty::san::San;
use shakmaty::{Chess, Move, Position};

use crate::common::ctg_writer::{self, Record, Stats};
use crate::common::{self, data, path_str, polybook, polybook_json, polybook_ok};

/// The position after `line` (SAN, space-separated) from the start.
fn after(line: &str) -> Chess {
    let mut pos = Chess::default();
    for san in line.split_whitespace() {
        let mv = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(mv);
    }
    pos
}

fn san(pos: &Chess, s: &str) -> Move {
    s.parse::<San>().unwrap().to_move(pos).unwrap()
}

/// A hand-made book: for each line (SAN from the start), its moves, each with its annotation byte
/// and the statistics of the position it leads to. A position both reached and listed keeps the
/// statistics its parent gave it (the start position: `start`).
/// A line of [`hand_book`]: the moves from the start (SAN), then the moves of the position reached,
/// each with its annotation byte and the statistics of the position it leads to.
type Line<'a> = (&'a str, &'a [(&'a str, u8, Stats)]);

fn hand_book(start: Stats, lines: &[Line]) -> Vec<Record> {
    let mut records: Vec<Record> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut record = |records: &mut Vec<Record>, pos: &Chess, stats: Option<Stats>| -> usize {
        let i = *index.entry(Key::of(pos)).or_insert_with(|| {
            records.push(Record {
                position: pos.clone(),
                moves: Vec::new(),
                stats: Stats::default(),
            });
            records.len() - 1
        });
        if let Some(s) = stats {
            records[i].stats = s;
        }
        i
    };
    record(&mut records, &Chess::default(), Some(start));
    for (line, moves) in lines {
        let pos = after(line);
        let i = record(&mut records, &pos, None);
        for &(m, annotation, stats) in moves.iter() {
            let mv = san(&pos, m);
            records[i].moves.push((mv, annotation));
            let child = pos.clone().play(mv).unwrap();
            record(&mut records, &child, Some(stats));
        }
    }
    records
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// (a) A one-position book, byte by byte as docs/formats.md lays it out; every byte below is
/// written from the document, none computed by the writer.
#[test]
fn a_written_book_is_laid_out_as_documented() {
    let start = Chess::default();
    let stats = Stats {
        games: 10,
        wins: 4,
        losses: 3,
        draws: 2,
        recommendation: 0x80,
    };
    let book = ctg_writer::write_ctg(
        &[Record {
            position: start.clone(),
            moves: vec![(san(&start, "e4"), 0x00), (san(&start, "d4"), 0x01)],
            stats,
        }],
        10,
    );
    // The .ctb: 4 bytes, the lowest slot in use (0: one position, one slot, level m = 0), the
    // highest (0).
    assert_eq!(hex(&book.ctb), "000000000000000000000000");
    // The .cto: 16 bytes of head, then slot 0 → page 0; slots 1 and 2 (the next level, m = 1,
    // that a reader may read before it tests the upper bound) empty.
    assert_eq!(
        hex(&book.cto),
        format!("{}00000000ffffffffffffffff", "00".repeat(16))
    );
    // The .ctg: the header page (the game count at offset 28), then one data page.
    assert_eq!(book.ctg.len(), 2 * 4096);
    assert_eq!(&book.ctg[28..32], &[0, 0, 0, 10]);
    assert!(
        book.ctg[..28]
            .iter()
            .chain(&book.ctg[32..4096])
            .all(|&b| b == 0)
    );
    let page = &book.ctg[4096..];
    // The page's head: 1 position, 64 bytes used (4 + a 22-byte encoding + 5 bytes of moves +
    // 33 of statistics).
    assert_eq!(hex(&page[..4]), "00010040");
    let record = [
        // The start position's encoding, as docs/formats.md gives it.
        "56b60f7960f3a60f58b078e0c1e1a60f5960f3b60f7f",
        // The moves: length 5 (its own byte included), e2–e4 (0x5f, pawn 4 two ranks up, no
        // annotation), d2–d4 (0xe6, pawn 3 two ranks up, `!`).
        "055f00e601",
        // games 10, wins 4, losses 3, draws 2 (3 bytes each), 4 unknown bytes.
        "00000a000004000003000002",
        "00000000",
        // Rated games and their sum, performance games and their sum: none.
        "000000",
        "00000000",
        "000000",
        "00000000",
        // Green, the unknown byte, no commentary.
        "800000",
    ]
    .concat();
    assert_eq!(hex(&page[4..64]), record);
    assert!(page[64..].iter().all(|&b| b == 0));
    // And polybook reads it back so.
    let positions = ctg::read_ctg_bytes(Path::new("a.ctg"), book.ctg, book.cto, book.ctb).unwrap();
    assert_eq!(positions.len(), 1);
    let p = &positions[0];
    let moves: Vec<String> = p.moves.iter().map(|m| m.mv.to_string()).collect();
    assert_eq!(moves, ["e2-e4", "d2-d4"]);
    assert_eq!(p.moves[1].annotation, ctg::Annotation::Good);
    assert_eq!(
        (p.stats.games, p.stats.wins, p.stats.losses, p.stats.draws),
        (10, 4, 3, 2)
    );
    assert_eq!(p.stats.recommendation, ctg::Recommendation::Green);
}

/// The (key, move) → weight map of a Polyglot book's part reachable from the start by its legal
/// moves (each position once), and the parents of each position reached: (key, move) pairs.
type Reachable = (HashMap<(Key, RawMove), u16>, HashMap<Key, usize>);

fn reachable(book: &Book) -> Reachable {
    let start = Chess::default();
    let mut moves = HashMap::new();
    let mut parents: HashMap<Key, usize> = HashMap::new();
    let mut seen = HashSet::from([Key::of(&start)]);
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(pos) = queue.pop_front() {
        let key = Key::of(&pos);
        for bm in book.find_all(&pos) {
            let raw = RawMove::from_move(bm.mv).unwrap();
            if moves.insert((key, raw), bm.entry.weight).is_some() {
                continue;
            }
            let child = pos.clone().play(bm.mv).unwrap();
            *parents.entry(Key::of(&child)).or_default() += 1;
            if seen.insert(Key::of(&child)) {
                queue.push_back(child);
            }
        }
    }
    (moves, parents)
}

/// (b), (e) A real Polyglot book (gm2001.bin, 30,000 entries) through CTG and back: every
/// position reachable from the start keeps every move, and a move's weight comes back where its
/// position is reached by that move alone.
///
/// The writer gives each position reached the weight of the move reaching it as its games, with
/// no result, and polybook reads a move's weight from the position it leads to (games of no known
/// result count as draws: one point each). A position reached by two moves (a transposition)
/// has one count in a CTG book, so only one of its moves can keep its weight: those are compared
/// for the (key, move) pair, not the weight.
#[test]
fn a_polyglot_book_survives_ctg_and_convert() {
    let dir = tempfile::tempdir().unwrap();
    let book = Book::open(data("books/gm2001.bin")).unwrap();
    let (want, parents) = reachable(&book);
    let (records, written) = ctg_writer::from_polyglot(&book, |_| 0);
    assert_eq!(written.len(), want.len(), "every reachable move written");
    let files = ctg_writer::write_ctg(&records, 1000);
    assert!(files.pages() > 50, "{} pages", files.pages());
    let ctg_path = files.save(&dir.path().join("gm2001"));
    let bin = dir.path().join("back.bin");
    polybook_ok(&["convert", path_str(&ctg_path), "-o", path_str(&bin)]);

    let back = Book::open(&bin).unwrap();
    let got: HashMap<(Key, RawMove), u16> =
        back.entries().map(|e| ((e.key, e.mv), e.weight)).collect();
    assert_eq!(got.len(), back.len(), "no entry twice");
    let want_pairs: HashSet<_> = want.keys().collect();
    let got_pairs: HashSet<_> = got.keys().collect();
    assert_eq!(
        got_pairs.difference(&want_pairs).count(),
        0,
        "moves the book lacked"
    );
    assert_eq!(
        want_pairs.difference(&got_pairs).count(),
        0,
        "moves lost on the way"
    );
    let positions: HashMap<Key, &Chess> = records
        .iter()
        .map(|r| (Key::of(&r.position), &r.position))
        .collect();
    let mut compared = 0;
    for (key, mv, weight) in &written {
        let child = Key::of(&positions[key].clone().play(*mv).unwrap());
        if parents[&child] == 1 {
            let raw = RawMove::from_move(*mv).unwrap();
            assert_eq!(got[&(*key, raw)], *weight, "{key} {mv}");
            compared += 1;
        }
    }
    assert!(
        compared > written.len() * 3 / 4,
        "{compared} of {}",
        written.len()
    );

    // (e) `verify` accepts the CTG book and the converted one.
    for path in [&ctg_path, &bin] {
        let out = polybook(&["verify", path_str(path)]);
        let text = common::stdout(&out);
        assert!(out.status.success() && text.contains(": OK"), "{out:?}");
    }
}

/// (c) The weight and learn rules through `probe --json`: a move annotated `?` or `??`, or
/// leading to a red position, weighs 0 whatever its games; a move's results are its position's
/// from the mover's side (the position's losses are the mover's wins), weighing `2 × wins +
/// draws` plus one a game of no result, with the decided games and their points in the learn
/// field; `!` and green change nothing.
#[test]
fn annotations_colours_and_results_give_weights_and_learn() {
    let games = Stats::games;
    let records = hand_book(
        games(60),
        &[(
            "",
            &[
                ("e4", 0x02, games(20)),
                ("d4", 0x04, games(15)),
                (
                    "Nf3",
                    0x00,
                    Stats {
                        recommendation: 0x40,
                        ..games(5)
                    },
                ),
                // Black's view after 1.c4: 3 won, 5 lost, 2 drawn, 2 of no result.
                (
                    "c4",
                    0x00,
                    Stats {
                        games: 12,
                        wins: 3,
                        losses: 5,
                        draws: 2,
                        recommendation: 0,
                    },
                ),
                (
                    "g3",
                    0x01,
                    Stats {
                        recommendation: 0x80,
                        ..games(7)
                    },
                ),
            ],
        )],
    );
    let dir = tempfile::tempdir().unwrap();
    let book = ctg_writer::write_ctg(&records, 60).save(&dir.path().join("rules"));
    let probe = polybook_json(&["probe", path_str(&book), "--json"]);
    let entries = probe["entries"].as_array().unwrap();
    let row = |uci: &str| {
        let e = common::json_find(&probe["entries"], "uci", uci);
        (
            e["weight"].as_u64().unwrap(),
            e["learn_games"].as_u64().unwrap(),
            e["learn_score"].as_f64(),
        )
    };
    assert_eq!(entries.len(), 5, "{probe}");
    assert_eq!(row("e2e4"), (0, 0, None), "`?`");
    assert_eq!(row("d2d4"), (0, 0, None), "`??`");
    assert_eq!(row("g1f3"), (0, 0, None), "red");
    // White won 5, lost 3, drew 2: 2 × 5 + 2 points, and 2 games of no result.
    assert_eq!(row("c2c4"), (14, 10, Some(12.0 / 20.0)), "results");
    assert_eq!(row("g2g3"), (7, 0, None), "`!`, green");
}

/// (d) A Black-to-move position (stored colour-flipped) and positions where nobody may castle and
/// the king to move stands on files a–d (stored mirrored, White's and Black's), each with moves of
/// their own weights, come back with those moves and weights through `convert`.
#[test]
fn flipped_and_mirrored_positions_round_trip() {
    let g = Stats::games;
    // 1.e4 e5 2.Ke2 Ke7 3.Kd3 Kd6: White's king on d3, no castling rights (mirrored); then 4.Kc3:
    // Black's king on d6 (flipped and mirrored).
    let records = hand_book(
        g(9),
        &[
            ("", &[("e4", 0, g(9))]),
            ("e4", &[("e5", 0, g(4)), ("c5", 0, g(3)), ("Nf6", 0, g(2))]),
            ("e4 e5", &[("Ke2", 0, g(4))]),
            ("e4 e5 Ke2", &[("Ke7", 0, g(4))]),
            ("e4 e5 Ke2 Ke7", &[("Kd3", 0, g(4))]),
            ("e4 e5 Ke2 Ke7 Kd3", &[("Kd6", 0, g(4))]),
            (
                "e4 e5 Ke2 Ke7 Kd3 Kd6",
                &[("Kc3", 0, g(11)), ("c4", 0, g(6)), ("Qe1", 0, g(2))],
            ),
            (
                "e4 e5 Ke2 Ke7 Kd3 Kd6 Kc3",
                &[("Kc6", 0, g(8)), ("b5", 0, g(5)), ("Qh4", 0, g(1))],
            ),
        ],
    );
    // The positions the test means to cover are stored as it says.
    let kinds: Vec<(bool, bool)> = records
        .iter()
        .map(|r| {
            let (_, flipped, mirrored) = ctg_writer::stored(&r.position);
            (flipped, mirrored)
        })
        .collect();
    for kind in [(true, false), (false, true), (true, true)] {
        assert!(kinds.contains(&kind), "{kind:?} in {kinds:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let book = ctg_writer::write_ctg(&records, 9).save(&dir.path().join("kings"));
    let bin = dir.path().join("kings.bin");
    polybook_ok(&["convert", path_str(&book), "-o", path_str(&bin)]);
    let back = Book::open(&bin).unwrap();
    let mut want = Vec::new();
    for r in &records {
        for &(mv, _) in &r.moves {
            let child = r.position.clone().play(mv).unwrap();
            let weight = records
                .iter()
                .find(|c| Key::of(&c.position) == Key::of(&child))
                .unwrap()
                .stats
                .games;
            want.push((Key::of(&r.position), mv.to_string(), weight as u16));
        }
    }
    let mut got = Vec::new();
    for r in &records {
        for bm in back.find_all(&r.position) {
            got.push((bm.entry.key, bm.mv.to_string(), bm.entry.weight));
        }
    }
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(back.len(), want.len());
}

/// A large CTG book for the speed benchmark (not run by default):
///
/// ```sh
/// POLYBOOK_CTG_FROM=tests/data/books/gnuchess.bin POLYBOOK_CTG_TO=/tmp/big.ctg \
///     cargo test --release --test it ctg_roundtrip::write_large_ctg_for_the_benchmark -- --ignored
/// polybook convert /tmp/big.ctg -o /tmp/big.bin
/// ```
///
/// writes `big.ctg`, `big.cto` and `big.ctb` holding every position of the Polyglot book
/// reachable from the start (`from_polyglot`: each move's weight as the games of the position it
/// leads to), and prints the numbers of positions, moves and pages.
#[test]
#[ignore = "writes a large CTG book for the benchmark; needs POLYBOOK_CTG_FROM and POLYBOOK_CTG_TO"]
fn write_large_ctg_for_the_benchmark() {
    let from = std::env::var_os("POLYBOOK_CTG_FROM").expect("POLYBOOK_CTG_FROM: a Polyglot book");
    let to = std::env::var_os("POLYBOOK_CTG_TO").expect("POLYBOOK_CTG_TO: the .ctg to write");
    let book = Book::open(&from).unwrap();
    let (records, written) = ctg_writer::from_polyglot(&book, |_| 0);
    let files = ctg_writer::write_ctg(&records, records[0].stats.games);
    let path = files.save(Path::new(&to));
    println!(
        "{}: {} positions, {} moves, {} pages",
        path.display(),
        records.len(),
        written.len(),
        files.pages()
    );
    // Every record read back (and a position stored alike with one read there too).
    assert!(ctg::read_ctg(&path).unwrap().len() >= records.len());
}
