//! The Polyglot format core against real data: the spec's key test vectors, python-chess's probe
//! expectations on real books, and the atomic writer.

use crate::common;
use common::path_str as s;
use common::{data, polybook, polybook_json};

use std::process::Command;

use polybook::book::{Book, ChooseOptions, Entry, Key, RawMove, Selection, choose, write_book};
use polybook::position::{parse_fen, play_moves};
use shakmaty::{Chess, Position};

/// Every vector of the spec (computed by Toga II) and python-chess's versions of the same positions.
#[test]
fn keys_match_the_spec_test_vectors() {
    let text = std::fs::read_to_string(data("spec/polyglot_key_test_vectors.tsv")).unwrap();
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("description"))
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (fen_spec, key, fen_pc) = (cols[1], cols[2], cols[3]);
        for fen in [fen_spec, fen_pc] {
            let pos = parse_fen(fen).unwrap();
            assert_eq!(Key::of(&pos).to_string(), key, "{fen}");
            checked += 1;
        }
    }
    assert!(checked >= 18, "only {checked} vectors read");
    // The command line prints the same.
    let out = polybook(&[
        "key",
        "--fen",
        "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0756b94461c50fb0"
    );
}

/// A pawn that could take en passant but is pinned still puts the file into Polyglot's key.
#[test]
fn en_passant_with_a_pinned_pawn_is_hashed() {
    let out = polybook(&["key", "--fen", "8/8/8/8/k2Pp2Q/8/8/4K3 b - d3 0 1"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "83bf25e378cb17d0"
    );
}

fn legal_uci(book: &Book, pos: &Chess) -> Vec<String> {
    book.find_all(pos)
        .iter()
        .map(|m| m.mv.to_uci(shakmaty::CastlingMode::Standard).to_string())
        .collect()
}

/// python-chess's test.py assertions on performance.bin and lasker-trap.bin
/// (tests/data/spec/python-chess_polyglot_probe_expectations.tsv).
#[test]
fn python_chess_probe_expectations() {
    let book = Book::open(data("books/performance.bin")).unwrap();
    assert_eq!(book.len(), 92954);
    let start = Chess::default();
    let moves = book.find_all(&start);
    let listed: Vec<(String, u16, u32)> = moves
        .iter()
        .map(|m| (m.entry.mv.to_string(), m.entry.weight, m.entry.learn))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("e2e4".to_string(), 1, 486544384),
            ("d2d4".to_string(), 1, 5120),
            ("c2c4".to_string(), 1, 3825144832)
        ]
    );
    let best = ChooseOptions {
        selection: Selection::Best,
        ..Default::default()
    };
    let mut rng = rand::rng();
    assert_eq!(
        choose(&moves, &best, &mut rng)
            .unwrap()
            .entry
            .mv
            .to_string(),
        "e2e4"
    );
    let excluding = ChooseOptions {
        exclude_moves: vec![moves[0].mv],
        ..best.clone()
    };
    assert_eq!(
        choose(&moves, &excluding, &mut rng)
            .unwrap()
            .entry
            .mv
            .to_string(),
        "d2d4"
    );
    assert!(
        choose(
            &moves,
            &ChooseOptions {
                minimum_weight: 2,
                ..best.clone()
            },
            &mut rng
        )
        .is_none()
    );

    let after_e4 = play_moves(start.clone(), "e4").unwrap();
    assert_eq!(legal_uci(&book, &after_e4)[0], "e7e5");

    // Following the best move until out of book.
    let mut pos = start;
    while let Some(m) = choose(&book.find_all(&pos), &best, &mut rng) {
        pos.play_unchecked(m.mv);
    }
    assert_eq!(
        polybook::position::fen_of(&pos),
        "r2q1rk1/4bppp/p2p1n2/np5b/3BP1P1/5N1P/PPB2P2/RN1QR1K1 b - - 0 15"
    );

    let castles =
        parse_fen("r1bqr1k1/pp1nbppp/2p2n2/3p2B1/3P4/2NBP3/PPQ1NPPP/R3K2R w KQ - 5 10").unwrap();
    assert_eq!(legal_uci(&book, &castles), vec!["e1g1", "e1c1", "h2h3"]);
    let long =
        parse_fen("r3k1nr/1pp1q1pp/p1pb1p2/4p3/3PP1b1/2P1BN2/PP1N1PPP/R2Q1RK1 b kq - 4 9").unwrap();
    assert_eq!(legal_uci(&book, &long), vec!["e8c8"]);
    // e1a1 here is a rook move: the king is on g1.
    let rook = parse_fen("1r1qr1k1/1b2bp1n/p2p2pB/1pnPp2p/P1p1P3/R1P2NNP/1PBQ1PP1/4R1K1 w - - 0 1")
        .unwrap();
    let m = choose(&book.find_all(&rook), &best, &mut rng).unwrap();
    assert_eq!(
        m.mv.to_uci(shakmaty::CastlingMode::Standard).to_string(),
        "e1a1"
    );
    assert_eq!(m.mv.role(), shakmaty::Role::Rook);

    let lasker = Book::open(data("books/lasker-trap.bin")).unwrap();
    let pos = parse_fen("rnbqk1nr/ppp2ppp/8/4P3/1BP5/8/PP2KpPP/RN1Q1BNR b kq - 1 7").unwrap();
    let m = choose(&lasker.find_all(&pos), &best, &mut rng).unwrap();
    assert_eq!(
        m.mv.to_uci(shakmaty::CastlingMode::Standard).to_string(),
        "f2g1n"
    );
}

/// Every position reachable by book moves (10 plies, at most 3,000 a book) of every bundled book,
/// probed by polybook and by python-chess: same moves, weights, learn values, order and keys.
/// The comparison script is the benchmark script bench/probe_vs_python_chess.py, run against this build.
#[test]
fn probe_matches_python_chess_on_every_bundled_book() {
    let script = common::root().join("bench/probe_vs_python_chess.py");
    for book in common::data_books() {
        let out = Command::new(common::python_chess())
            .arg(&script)
            .arg(&book)
            .args([
                "--plies",
                "10",
                "--max",
                "3000",
                "--polybook",
                env!("CARGO_BIN_EXE_polybook"),
            ])
            .output()
            .expect("python3 runs (install python-chess: pip install chess)");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {text}{}",
            book.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        common::assert_contains(&text, "positions match");
    }
}

#[test]
fn probe_json_has_the_contract_fields() {
    let book = data("books/performance.bin");
    let v = polybook_json(&[
        "probe",
        s(&book),
        "--fen",
        "r1bqr1k1/pp1nbppp/2p2n2/3p2B1/3P4/2NBP3/PPQ1NPPP/R3K2R w KQ - 5 10",
        "--json",
    ]);
    assert_eq!(v["key"], "551c7ab33a908d3e");
    let e = &v["entries"][0];
    assert_eq!(
        (e["uci"].as_str(), e["raw"].as_str(), e["san"].as_str()),
        (Some("e1g1"), Some("e1h1"), Some("O-O"))
    );
    assert_eq!(e["weight"], 159);
    let shares: f64 = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["share"].as_f64().unwrap())
        .sum();
    assert!((shares - 1.0).abs() < 1e-9);
    assert_eq!(v["illegal"].as_array().unwrap().len(), 0);
}

/// Entries under the position's key whose move is not legal there are listed apart.
#[test]
fn illegal_entries_are_listed_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.bin");
    let key = Key::of(&Chess::default());
    let e = |mv: &str, weight| Entry {
        key,
        mv: RawMove::from_uci_str(mv).unwrap(),
        weight,
        learn: 7,
    };
    // e1h1 is not castling at the start (the bishop and knight are in the way): illegal.
    write_book(&path, &mut [e("e2e4", 3), e("e1h1", 9), e("d2d4", 1)]).unwrap();
    let out = polybook(&["probe", s(&path), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ucis: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["uci"].as_str().unwrap())
        .collect();
    assert_eq!(ucis, vec!["e2e4", "d2d4"]);
    assert_eq!(v["entries"][0]["share"], 0.75);
    assert_eq!(v["illegal"][0]["raw"], "e1h1");
    assert_eq!(v["illegal"][0]["weight"], 9);
}

#[test]
fn probe_epd_gives_one_json_line_per_position_and_reports_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let epd = common::write_file(
        dir.path(),
        "p.epd",
        "# a comment\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; id \"x\";\n\nnot a position\n\
         rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n",
    );
    let book = data("books/gnuchess.bin");
    let out = polybook(&["probe", s(&book), "--epd", s(&epd), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["key"], "823c9b50fd114196");
    assert_eq!(lines[1]["line"], 4);
    assert_eq!(lines[2]["key"], "463b96181691fc9c");
    assert!(String::from_utf8_lossy(&out.stderr).contains("p.epd:4: invalid FEN"));
}

#[test]
fn an_empty_book_is_a_valid_empty_book() {
    let out = polybook(&[
        "probe",
        data("books/empty.bin").to_str().unwrap(),
        "--no-board",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no book moves"));
}

/// Each bad input: exit code and one line on stderr that names the problem.
/// A compressed file or a Parquet tally given as a book is named for what it is, whatever its size,
/// by every command that reads books (`verify` too): one line, exit 1.
#[test]
fn compressed_files_and_tallies_are_not_books() {
    let dir = tempfile::tempdir().unwrap();
    let xz = data("pgn/lichess_magnus_2018-2022.pgn.xz");
    // The first 4,096,000 bytes: a size that is a multiple of 16.
    let xz16 = common::write_file(
        dir.path(),
        "cut.pgn.xz",
        &std::fs::read(&xz).unwrap()[..4_096_000],
    );
    let gz = dir.path().join("d.pgn.gz");
    common::python(
        "import gzip, sys, shutil\nshutil.copyfileobj(open(sys.argv[1], 'rb'), gzip.open(sys.argv[2], 'wb'))",
        &[common::bundled("dortmund.pgn").to_str().unwrap(), s(&gz)],
    );
    let tally = dir.path().join("t.parquet");
    common::polybook_ok(&[
        "tally",
        common::bundled("dortmund.pgn").to_str().unwrap(),
        "-o",
        s(&tally),
        "-q",
    ]);
    for (file, what) in [
        (&xz, "xz-compressed"),
        (&xz16, "xz-compressed"),
        (&gz, "gzip-compressed"),
        (&tally, "Parquet file"),
    ] {
        let f = s(file);
        for args in [
            vec!["info", f],
            vec!["verify", f],
            vec!["dump", f],
            vec!["export", f, "--pgn"],
            vec!["sort", f, "-o", "/dev/null"],
        ] {
            let err = common::polybook_fails(&args, 1, what);
            assert!(err.contains("not a Polyglot book"), "{args:?}: {err}");
        }
    }
}

/// `solve` and `probe --epd` given a binary file refuse it in one line; a text file of bad lines
/// gets at most ten lines about them and one that counts the rest.
#[test]
fn wrong_line_files_do_not_flood_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/gm2001.bin");
    let b = s(&book);
    common::polybook_fails(&["solve", b], 1, "binary data");
    common::polybook_fails(&["probe", b, "--epd", b], 1, "binary data");
    let bad = dir.path().join("bad.epd");
    let lines: String = (1..=25).map(|i| format!("not a position {i}\n")).collect();
    std::fs::write(&bad, lines).unwrap();
    let bad = s(&bad);
    for args in [vec!["solve", bad], vec!["probe", b, "--epd", bad]] {
        let out = polybook(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = common::stderr(&out);
        assert_eq!(err.lines().count(), 12, "{args:?}: {err}");
        assert!(
            err.contains("15 more like these not shown"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn bad_input_gets_one_clear_line() {
    let gnuchess = data("books/gnuchess.bin");
    let gnuchess = s(&gnuchess);
    let books = data("books");
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec!["probe".into(), "/no/such/book.bin".into()],
            1,
            "No such file",
        ),
        (vec!["probe".into(), s(&books).into()], 1, "is a directory"),
        (
            vec![
                "probe".into(),
                data("books/invalid/html-page-saved-as.bin")
                    .to_str()
                    .unwrap()
                    .into(),
            ],
            1,
            "HTML page",
        ),
        (
            vec![
                "probe".into(),
                data("books/invalid/git-lfs-pointer.bin")
                    .to_str()
                    .unwrap()
                    .into(),
            ],
            1,
            "Git LFS pointer",
        ),
        (
            vec![
                "probe".into(),
                data("books/invalid/gnuchess-smallbook-trailing-byte.bin")
                    .to_str()
                    .unwrap()
                    .into(),
            ],
            1,
            "1 stray byte",
        ),
        (
            vec![
                "probe".into(),
                gnuchess.into(),
                "--fen".into(),
                "rnbqkbnr/pppppppp/8 w".into(),
            ],
            1,
            "invalid FEN",
        ),
        (
            vec![
                "probe".into(),
                gnuchess.into(),
                "--fen".into(),
                "8/8/8/8/8/8/8/K7 w - - 0 1".into(),
            ],
            1,
            "impossible position",
        ),
        (
            vec![
                "probe".into(),
                gnuchess.into(),
                "--fen".into(),
                "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1".into(),
            ],
            1,
            "impossible position",
        ),
        (
            vec![
                "probe".into(),
                gnuchess.into(),
                "--moves".into(),
                "e4 e5 Ke3".into(),
            ],
            1,
            "move 3 'Ke3' is illegal",
        ),
        (
            vec![
                "probe".into(),
                gnuchess.into(),
                "--fen".into(),
                "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1".into(),
                "--moves".into(),
                "Nd2".into(),
            ],
            1,
            "is ambiguous",
        ),
        (
            vec!["probe".into(), gnuchess.into(), "--bogus".into()],
            2,
            "--bogus",
        ),
        (
            vec![
                "probe".into(),
                gnuchess.into(),
                "--epd".into(),
                "x.epd".into(),
                "--fen".into(),
                "x".into(),
            ],
            2,
            "cannot be used",
        ),
    ];
    for (args, code, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = polybook(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{args:?}: {err}"
        );
        if code == 1 {
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        }
    }
}

/// The chances python-chess's `weighted_choice` gives each move: the entries of
/// `find_all(board, minimum_weight=..., exclude_moves=...)`, each weight over their sum. For each
/// of `positions` (moves in SAN from the start), the legal entries in stored order as (UCI,
/// weight, share), share 0 for the entries that do not count.
fn python_chess_shares(
    book: &std::path::Path,
    minimum_weight: u16,
    exclude: &[&str],
    positions: &[&str],
) -> Vec<Vec<(String, u16, f64)>> {
    let script = r#"
import json, sys
import chess, chess.polyglot
book, minimum, exclude = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
out = []
with chess.polyglot.open_reader(book) as reader:
    for line in sys.argv[4:]:
        board = chess.Board()
        for san in line.split():
            board.push_san(san)
        excluded = [chess.Move.from_uci(m) for m in exclude]
        counted = reader.find_all(board, minimum_weight=minimum, exclude_moves=excluded)
        total = sum(e.weight for e in counted)
        counts = lambda e: e.weight >= minimum and e.move not in excluded and total > 0
        out.append([
            [e.move.uci(), e.weight, e.weight / total if counts(e) else 0.0]
            for e in reader.find_all(board, minimum_weight=0)
        ])
print(json.dumps(out))
"#;
    let (minimum_weight, exclude) = (minimum_weight.to_string(), exclude.join(" "));
    let mut args = vec![common::path_str(book), &minimum_weight, &exclude];
    args.extend_from_slice(positions);
    serde_json::from_str(&common::python(script, &args)).unwrap()
}

/// `probe --json`'s shares are the chances python-chess's `weighted_choice` gives each move (with
/// its default minimum weight, 1), on every bundled book: the one share rule of `book::choose`.
#[test]
fn probe_shares_are_the_odds_of_python_chess_weighted_choice() {
    let positions = [
        "",
        "e4",
        "d4",
        "e4 e5",
        "e4 c5",
        "d4 d5 c4",
        "Nf3",
        "c4",
        "e4 e5 Nf3 Nc6",
    ];
    let mut books = common::data_books();
    books.push(common::root().join("books/bundled.bin"));
    let mut compared = 0;
    for book in &books {
        let expected = python_chess_shares(book, 1, &[], &positions);
        for (moves, want) in positions.iter().zip(expected) {
            let v = polybook_json(&["probe", s(book), "--moves", moves, "--json"]);
            let got: Vec<(String, u16, f64)> = v["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["uci"].as_str().unwrap().to_string(),
                        e["weight"].as_u64().unwrap() as u16,
                        e["share"].as_f64().unwrap(),
                    )
                })
                .collect();
            assert_eq!(got, want, "{} after '{moves}'", book.display());
            compared += got.len();
        }
    }
    assert!(compared > 100, "{compared} shares compared");
}

/// The UCI engine reports its book move's share by the same rule: with `BookMinWeight` and
/// `go searchmoves`, the share among the moves that count, as python-chess weighs them with
/// `minimum_weight` and `exclude_moves` (the legal moves outside `searchmoves`).
#[test]
fn the_uci_book_share_counts_only_the_moves_that_count() {
    use std::io::Write as _;
    let book = common::root().join("books/bundled.bin");
    // (BookMinWeight, searchmoves) at the start position, where the book's weights are e4 485,
    // d4 469, Nf3 90, c4 63.
    let cases = [(1, ""), (80, ""), (80, "d2d4 g1f3 c2c4"), (0, "g1f3")];
    for (minimum, searchmoves) in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_polybook"))
            .arg("uci")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let go = if searchmoves.is_empty() {
            "go depth 1 wtime 60000 btime 60000".to_string()
        } else {
            format!("go depth 1 wtime 60000 btime 60000 searchmoves {searchmoves}")
        };
        write!(
            child.stdin.take().unwrap(),
            "uci\nsetoption name BookFile value {}\nsetoption name BookSelection value best\n\
             setoption name BookMinWeight value {minimum}\nisready\nposition startpos\n{go}\nquit\n",
            book.display()
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with("info string book move"))
            .unwrap_or_else(|| panic!("no book move: {text}"));
        let excluded: Vec<&str> = ["e2e4", "d2d4", "g1f3", "c2c4"]
            .into_iter()
            .filter(|m| !searchmoves.is_empty() && !searchmoves.contains(m))
            .collect();
        let shares = &python_chess_shares(&book, minimum, &excluded, &[""])[0];
        // `best`: the heaviest move that counts (no two weigh the same here).
        let (best, weight, share) = shares
            .iter()
            .filter(|m| m.2 > 0.0)
            .max_by_key(|m| m.1)
            .unwrap();
        assert_eq!(
            line,
            format!(
                "info string book move {best} weight {weight} share {:.1}% from {}",
                100.0 * share,
                book.display()
            ),
            "BookMinWeight {minimum}, searchmoves '{searchmoves}'"
        );
    }
}
