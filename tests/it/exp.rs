//! Experience files (`.exp`) of BrainLearn, ShashChess and SugaR: Stockfish's keys against Debian's
//! Stockfish, and a real Polyglot book's positions and moves written as an experience file by an
//! encoder of this file (from the layouts of `docs/formats.md`), read back by `probe`, `convert`
//! and `verify` with the scores in the learn fields.

use crate::common;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position, Role};

use polybook::book::formats::exp::{EXP_V2_SIGNATURE, stockfish_key, stockfish_keys};
use polybook::book::{Book, BookFormat, Key, LearnLayout, MoveScore};

use crate::common::{data, polybook, polybook_fails, polybook_ok, position_after, run_with_input};

// ---- an encoder, for these tests only -----------------------------------------------------------

/// The layouts the encoder writes.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// No header: key, depth, score, move (4 bytes), performance.
    BrainLearn,
    /// `SugaR Experience version 2`, then key, move (4 bytes), score, depth, count (2), padding (2).
    SugarV2,
}

/// One move to write: the position, the move, its score and depth.
struct Learned {
    pos: Chess,
    mv: Move,
    score: i32,
    depth: i32,
}

/// A move in Stockfish's encoding, written here from its definition: `to | from << 6`, the
/// promotion piece `(role - knight) << 12`, the kind `<< 14` (1 promotion, 2 en passant,
/// 3 castling as king takes rook).
fn sf_move(mv: &Move) -> u32 {
    let sq = |s: shakmaty::Square| u32::from(s);
    match *mv {
        Move::Normal {
            from,
            to,
            promotion,
            ..
        } => {
            let p = promotion.map_or(0, |r| {
                (1 << 14)
                    | (match r {
                        Role::Knight => 0,
                        Role::Bishop => 1,
                        Role::Rook => 2,
                        _ => 3,
                    } << 12)
            });
            p | (sq(from) << 6) | sq(to)
        }
        Move::EnPassant { from, to } => (2 << 14) | (sq(from) << 6) | sq(to),
        Move::Castle { king, rook } => (3 << 14) | (sq(king) << 6) | sq(rook),
        Move::Put { .. } => unreachable!(),
    }
}

/// The bytes of an experience file holding `moves` in `layout`.
fn encode(layout: Layout, moves: &[Learned]) -> Vec<u8> {
    let mut out = match layout {
        Layout::BrainLearn => Vec::new(),
        Layout::SugarV2 => b"SugaR Experience version 2".to_vec(),
    };
    for m in moves {
        out.extend(stockfish_key(&m.pos).to_le_bytes());
        match layout {
            Layout::BrainLearn => {
                out.extend(m.depth.to_le_bytes());
                out.extend(m.score.to_le_bytes());
                out.extend(sf_move(&m.mv).to_le_bytes());
                out.extend(100i32.to_le_bytes());
            }
            Layout::SugarV2 => {
                out.extend(sf_move(&m.mv).to_le_bytes());
                out.extend(m.score.to_le_bytes());
                out.extend(m.depth.to_le_bytes());
                out.extend(3u16.to_le_bytes());
                out.extend([0, 0]);
            }
        }
    }
    out
}

/// Every position of the Polyglot book `path` reachable from the start by its moves, each once,
/// with its legal book moves: what an experience file walked from the start can hold.
fn reachable(path: &Path) -> Vec<(Chess, Vec<Move>)> {
    let book = Book::open(path).unwrap();
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([Chess::default()]);
    seen.insert(Key::of(&Chess::default()));
    while let Some(pos) = queue.pop_front() {
        let moves: Vec<Move> = book.probe(&pos).legal.iter().map(|m| m.mv).collect();
        if moves.is_empty() {
            continue;
        }
        for &m in &moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            if seen.insert(Key::of(&child)) {
                queue.push_back(child);
            }
        }
        out.push((pos, moves));
    }
    out
}

/// A score and depth for the `i`-th move written, spread over wins, losses and a few mates.
fn score_and_depth(i: usize) -> (i32, i32) {
    let score = match i % 50 {
        0 => 32_000 - 7,  // mate in 7 plies
        1 => -32_000 + 4, // mated in 4 plies
        k => (i as i32 * 37) % 400 - 200 + k as i32,
    };
    (score, 1 + (i % 60) as i32)
}

/// The weight the documented rule gives: 1000 for the best score, falling by 10 a unit to 0 at
/// 100 below it, at least 1 within.
fn expected_weight(score: i32, best: i32) -> u16 {
    let gap = best - score;
    if gap >= 100 {
        0
    } else {
        (10 * (100 - gap)).max(1) as u16
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---- the tests ----------------------------------------------------------------------------------

/// The key Stockfish prints (`d`, "Key: ...") for each of `setups` (`position ...` arguments).
fn stockfish_printed_keys(engine: &str, setups: &[String]) -> Vec<u64> {
    let mut input = String::new();
    for setup in setups {
        input.push_str(&format!("position {setup}\nd\n"));
    }
    input.push_str("quit\n");
    let out = run_with_input(&mut Command::new(engine), input.as_bytes());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("Key: "))
        .map(|k| u64::from_str_radix(k.trim(), 16).unwrap())
        .collect()
}

#[test]
fn stockfish_keys_match_debian_stockfish() {
    let engine = "/usr/games/stockfish";
    if !Path::new(engine).exists() {
        eprintln!("skipped: {engine} is not installed (apt-get install -y stockfish)");
        return;
    }
    let lines: &[&str] = &[
        "",
        "e2e4",                     // a double push no pawn can take: no en-passant file
        "e2e4 a7a6 e4e5 d7d5",      // en passant possible
        "e2e4 a7a6 e4e5 d7d5 e5d6", // taken en passant
        "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1", // castled: Black keeps both rights
        "e2e4 e7e5 e1e2",           // White loses both rights by a king move
        "h2h4 a7a5 h1h3 a8a6",      // one right lost on each side
        "g2g4 h7h5 g4h5 g7g6 h5g6 g8f6 g6f7 e8f7", // captures and the king's move
        "g2g4 h7h5 g4h5 g7g6 h5g6 g8f6 g6g7 f6e4 g7h8q", // a promotion
        "g2g4 h7h5 g4h5 g7g6 h5g6 g8f6 g6g7 f6e4 g7h8n", // an underpromotion
        // 14 plies without a pawn move or capture: Stockfish 15's key() mixes the counter in.
        "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 g1f3 g8f6",
        "e2e4 e7e5 g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8 g1f3 g8f6",
    ];
    let fens: &[(&str, &str)] = &[
        // A pinned pawn beside a double push: the file counts (a pseudo-legal capture).
        ("8/8/8/k7/1p6/8/2PB4/4K3 w - - 0 1", "c2c4"),
        ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8c8"),
        ("8/8/8/8/8/8/k6p/4K3 b - - 0 1", "h2h1q"),
    ];
    let mut setups = Vec::new();
    let mut positions = Vec::new();
    for line in lines {
        let moves: Vec<&str> = line.split_whitespace().collect();
        setups.push(if moves.is_empty() {
            "startpos".to_string()
        } else {
            format!("startpos moves {line}")
        });
        positions.push(position_after(&moves));
    }
    for (fen, mv) in fens {
        setups.push(format!("fen {fen} moves {mv}"));
        let mut pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = mv.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
        positions.push(pos);
    }
    let printed = stockfish_printed_keys(engine, &setups);
    assert_eq!(printed.len(), setups.len(), "one key per position");
    for ((setup, pos), key) in setups.iter().zip(&positions).zip(&printed) {
        // Where the counter is mixed in, the second key is the one `key()` prints.
        let ours = stockfish_keys(pos);
        let expected = ours[1].unwrap_or(ours[0].unwrap());
        assert_eq!(
            expected,
            *key,
            "{setup}: {}",
            Fen::from_position(pos, EnPassantMode::Legal)
        );
    }
}

#[test]
fn hand_written_bytes_decode_as_the_layout_says() {
    let dir = tempfile::tempdir().unwrap();
    // BrainLearn: key, depth 18, score -25, e2e4 (from 12, to 28), performance 100.
    let mut bytes = 0x8F8F_01D4_562F_59FBu64.to_le_bytes().to_vec();
    bytes.extend([
        18, 0, 0, 0, 0xe7, 0xff, 0xff, 0xff, 0x1c, 0x03, 0, 0, 100, 0, 0, 0,
    ]);
    let path = common::write_file(&dir, "one.exp", &bytes);
    let book = Book::open(&path).unwrap();
    assert_eq!(book.format(), BookFormat::Exp);
    assert_eq!(book.learn_layout(), LearnLayout::Scored);
    let probe = book.probe(&Chess::default());
    assert_eq!(probe.legal.len(), 1);
    let e = probe.legal[0].entry;
    assert_eq!(e.mv.to_string(), "e2e4");
    let score = MoveScore::from_learn(e.learn).unwrap();
    assert_eq!((score.score, score.depth, e.weight), (-25, 18, 1000));
    // SugaR v2: the signature, then key, move e2e4, score 40, depth 9, count 3, padding.
    let mut v2 = EXP_V2_SIGNATURE.to_vec();
    v2.extend(0x8F8F_01D4_562F_59FBu64.to_le_bytes());
    v2.extend([0x1c, 0x03, 0, 0, 40, 0, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0]);
    let named_bin = common::write_file(&dir, "v2.bin", &v2);
    let probe = polybook_ok(&["probe", s(&named_bin)]);
    assert!(probe.contains("e2e4"), "{probe}");
    assert!(probe.contains("+0.40"), "{probe}");
}

/// A real book → experience file (both layouts) → `probe`, `convert`, `verify`: the same
/// positions and moves, the scores and depths in the learn fields, weights by the rule.
#[test]
fn a_polyglot_book_comes_back_from_an_experience_file() {
    let dir = tempfile::tempdir().unwrap();
    let original = data("books/rodent3_small.bin");
    let positions = reachable(&original);
    assert!(positions.len() > 500, "{}", positions.len());
    let mut learned = Vec::new();
    for (pos, moves) in &positions {
        for &mv in moves {
            let (score, depth) = score_and_depth(learned.len());
            learned.push(Learned {
                pos: pos.clone(),
                mv,
                score,
                depth,
            });
        }
    }
    // The expected book: per Polyglot key, move → (weight, score, depth).
    let mut expected: BTreeMap<u64, BTreeMap<String, (u16, i16, u8)>> = BTreeMap::new();
    for (pos, _) in &positions {
        let mine: Vec<&Learned> = learned.iter().filter(|l| &l.pos == pos).collect();
        let best = mine.iter().map(|l| l.score).max().unwrap();
        let moves = expected.entry(Key::of(pos).0).or_default();
        for l in mine {
            let uci = l.mv.to_uci(CastlingMode::Chess960).to_string();
            let uci = match l.mv {
                // Polyglot's castling is king takes rook: e1h1.
                Move::Castle { .. } => uci,
                _ => l.mv.to_uci(CastlingMode::Standard).to_string(),
            };
            moves.insert(
                uci,
                (
                    expected_weight(l.score, best),
                    l.score as i16,
                    l.depth as u8,
                ),
            );
        }
    }
    for layout in [Layout::BrainLearn, Layout::SugarV2] {
        let exp = common::write_file(&dir, format!("{layout:?}.exp"), encode(layout, &learned));
        let bin = dir.path().join(format!("{layout:?}.bin"));
        let said = polybook_ok(&["convert", s(&exp), "-o", s(&bin)]);
        assert!(said.contains("entries"), "{said}");
        for path in [&exp, &bin] {
            let verify = polybook_ok(&["verify", s(path)]);
            assert!(verify.contains(": OK"), "{verify}");
            let book = Book::open(path).unwrap();
            assert_eq!(
                book.learn_layout(),
                LearnLayout::Scored,
                "{}",
                path.display()
            );
            let mut got: BTreeMap<u64, BTreeMap<String, (u16, i16, u8)>> = BTreeMap::new();
            for e in book.entries() {
                let score = MoveScore::from_learn(e.learn).expect("a score in every entry");
                got.entry(e.key.0)
                    .or_default()
                    .insert(e.mv.to_string(), (e.weight, score.score, score.depth));
            }
            assert_eq!(got.len(), expected.len(), "{}", path.display());
            assert!(got == expected, "{}: the entries differ", path.display());
        }
        // `probe` shows the scores and depths.
        let probe = polybook_ok(&["probe", s(&exp)]);
        let first = &expected[&Key::of(&Chess::default()).0];
        for (uci, (_, score, depth)) in first {
            let line = probe
                .lines()
                .find(|l| l.contains(uci.as_str()))
                .unwrap_or_else(|| panic!("{uci} in {probe}"));
            let shown = MoveScore {
                score: *score,
                depth: *depth,
                learn: 0,
            }
            .text();
            assert!(line.contains(&shown), "{uci} {shown}: {line}");
        }
    }
}

#[test]
fn damaged_experience_files_are_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("odd.exp", vec![7u8; 50]),
        ("v2.exp", EXP_V2_SIGNATURE[..20].to_vec()),
        ("cut.exp", {
            let mut v = EXP_V2_SIGNATURE.to_vec();
            v.extend([1u8; 30]);
            v
        }),
    ];
    for (name, bytes) in cases {
        let path: PathBuf = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        for command in ["probe", "verify", "info"] {
            let err = polybook_fails(&[command, s(&path)], 1, "not an experience file");
            assert!(err.contains(name), "{err}");
        }
        let out = polybook(&["convert", s(&path), "-o", s(&dir.path().join("x.bin"))]);
        assert_eq!(out.status.code(), Some(1));
        assert!(!dir.path().join("x.bin").exists());
    }
    // Garbage of whole records is read: nothing reachable, an empty book, no error.
    let path = common::write_file(&dir, "noise.exp", vec![0xa5u8; 24 * 100]);
    let book = Book::open(&path).unwrap();
    assert!(book.is_empty());
}
