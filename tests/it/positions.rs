//! Positions as lichess allows them. Setups that no game can reach but that are playable chess
//! (lichess "From Position" games start from them: more promoted pieces than missing pawns, a
//! check no last move could give, castling rights or an en-passant square that cannot be) are
//! accepted by every command, with keys, move counts and books equal to python-chess's; setups
//! that cannot be played are refused with one clear line.

use crate::common;
use common::path_str as s;
use common::{bestmoves, data, polybook, polybook_json, python, text};

use std::path::Path;
use std::process::Output;

/// Playable setups that shakmaty's strict check refuses.
const PLAYABLE: &[&str] = &[
    // A lichess "From Position" setup (the issue's example): seven knights a side.
    "nnnnknnn/pppppppp/8/8/8/8/PPPPPPPP/NNNNKNNN w - - 0 1",
    // Queens everywhere, Black to move.
    "qqqqkqqq/pppppppp/8/8/8/8/PPPPPPPP/QQQQKQQQ b - - 0 1",
    // Nine white pawns.
    "rnbqkbnr/pppppppp/8/8/8/P7/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    // Castling rights without rooks in the corners (dropped), and too much material.
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/QQQQKQQQ w KQkq - 0 1",
    // Two knights give check at once.
    "4k3/8/8/8/8/3n1n2/8/R3K2R w KQ - 0 1",
    // Three checkers: a bishop, a knight and a rook.
    "4k3/8/8/8/1b6/5n2/8/4K2r w - - 0 1",
    // An en-passant square that no pawn can have crossed (dropped).
    "4k3/8/8/8/8/8/8/4K3 w - e6 0 1",
];

/// Setups that cannot be played, with the words of the refusal.
const UNPLAYABLE: &[(&str, &str)] = &[
    ("8/8/8/8/8/8/8/8 w - - 0 1", "empty board"),
    ("8/8/8/8/8/8/8/K7 w - - 0 1", "missing king"),
    ("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "too many kings"),
    ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "pawns on backrank"),
    ("4k3/8/8/8/8/8/4R3/4K3 w - - 0 1", "opposite check"),
];

/// Runs `polybook ARGS` in `dir` with `input` on its standard input.
fn polybook_with_input(args: &[&str], input: &str, dir: &Path) -> Output {
    common::polybook_in(dir, args, input)
}

/// For each FEN: its python-chess polyglot key, the key after its first legal move (UCI, in
/// python-chess's order), and its perft counts to depth 3.
fn python_facts(fens: &[&str]) -> Vec<(u64, String, u64, Vec<u64>)> {
    let script = r#"
import sys, chess, chess.polyglot
def perft(b, d):
    if d == 1:
        return b.legal_moves.count()
    n = 0
    for m in list(b.legal_moves):
        b.push(m); n += perft(b, d - 1); b.pop()
    return n
for fen in sys.argv[1:]:
    b = chess.Board(fen)
    # As polybook reads such a setup: impossible castling rights and en passant are dropped.
    b.castling_rights = b.clean_castling_rights()
    if b.status() & chess.STATUS_INVALID_EP_SQUARE:
        b.ep_square = None
    m = next(iter(b.legal_moves))
    key = chess.polyglot.zobrist_hash(b)
    b.push(m)
    after = chess.polyglot.zobrist_hash(b)
    b.pop()
    print(key, m.uci(), after, *[perft(b, d) for d in (1, 2, 3)])
"#;
    python(script, fens)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse().unwrap(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[3..].iter().map(|n| n.parse().unwrap()).collect(),
            )
        })
        .collect()
}

fn key_of(args: &[&str]) -> u64 {
    let o = polybook(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let out = text(&o.stdout);
    let hex = out.trim().trim_start_matches("0x");
    u64::from_str_radix(hex, 16).unwrap_or_else(|_| panic!("key {out:?}"))
}

/// `key` equals python-chess's `chess.polyglot.zobrist_hash`, before and after a move, and
/// `perft` counts the moves python-chess generates.
#[test]
fn keys_and_move_counts_equal_python_chess() {
    let facts = python_facts(PLAYABLE);
    for (fen, (key, first, after, perft)) in PLAYABLE.iter().zip(facts) {
        assert_eq!(key_of(&["key", "--fen", fen]), key, "{fen}");
        assert_eq!(
            key_of(&["key", "--fen", fen, "--moves", &first]),
            after,
            "{fen} {first}"
        );
        for (depth, expected) in perft.iter().enumerate() {
            let depth = (depth + 1).to_string();
            let o = polybook(&["perft", &depth, "--fen", fen]);
            assert!(o.status.success(), "{fen}: {}", text(&o.stderr));
            let got: u64 = text(&o.stdout)
                .split_whitespace()
                .last()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("perft output {:?}", text(&o.stdout)));
            assert_eq!(got, *expected, "perft {depth} {fen}");
        }
    }
}

/// Unplayable setups are refused everywhere with the same line, naming why.
#[test]
fn unplayable_setups_are_refused_with_the_reason() {
    let book = data("books/gnuchess.bin");
    let dir = tempfile::tempdir().unwrap();
    for (fen, why) in UNPLAYABLE {
        for args in [
            vec!["key", "--fen", fen],
            vec!["perft", "1", "--fen", fen],
            vec!["probe", s(&book), "--fen", fen],
            vec!["search", "--depth", "2", "--fen", fen],
        ] {
            let o = polybook(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains("impossible position"), "{args:?}: {err}");
            assert!(err.contains(why), "{args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        }
        let o = polybook_with_input(&["play", "--fen", fen], "quit\n", dir.path());
        assert_eq!(o.status.code(), Some(1), "play {fen}");
        assert!(text(&o.stderr).contains(why), "{}", text(&o.stderr));
        let o = polybook_with_input(
            &["uci"],
            &format!("uci\nposition fen {fen}\nisready\nquit\n"),
            dir.path(),
        );
        let out = text(&o.stdout);
        assert!(
            out.lines()
                .any(|l| l.starts_with("info string impossible position") && l.contains(why)),
            "{out}"
        );
    }
}

/// A 10,240-character FEN or move argument is quoted by its start and length, not echoed.
#[test]
fn long_arguments_are_quoted_not_echoed() {
    let fen = "r".repeat(10_240);
    let moves = format!("e4 {}", "x".repeat(10_240));
    for args in [
        vec!["key", "--fen", fen.as_str()],
        vec!["perft", "1", "--fen", fen.as_str()],
        vec!["key", "--moves", moves.as_str()],
    ] {
        let o = polybook(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.len() < 400, "{} bytes: {err}", err.len());
        assert!(err.contains("(10,240 characters)"), "{err}");
    }
}

/// Whether `mv` (UCI) is legal in `fen` by python-chess (with the setup read as polybook reads it).
fn legal_by_python(fen: &str, mv: &str) -> bool {
    let script = r#"
import sys, chess
b = chess.Board(sys.argv[1])
b.castling_rights = b.clean_castling_rights()
print(chess.Move.from_uci(sys.argv[2]) in b.legal_moves)
"#;
    python(script, &[fen, mv]).trim() == "True"
}

/// The engine plays from these setups: `search`, `uci` (`position fen`), `play --fen`,
/// `match --fen` and `--openings`, and `solve` on an EPD of one.
#[test]
fn the_engine_plays_from_them() {
    let dir = tempfile::tempdir().unwrap();
    for fen in PLAYABLE {
        let o = polybook(&["search", "--depth", "4", "--fen", fen]);
        assert!(o.status.success(), "{fen}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        let best = *bestmoves(&out).first().unwrap_or_else(|| panic!("{out}"));
        assert!(legal_by_python(fen, best), "search {fen}: {best}");

        let o = polybook_with_input(
            &["uci"],
            &format!("uci\nposition fen {fen}\ngo depth 3\nisready\nquit\n"),
            dir.path(),
        );
        let out = text(&o.stdout);
        assert!(!out.contains("impossible position"), "{out}");
        let best = *bestmoves(&out).first().unwrap_or_else(|| panic!("{out}"));
        assert!(legal_by_python(fen, best), "uci {fen}: {best}");
    }

    // play: the user (White) makes a move, the engine answers, the game is saved from the FEN.
    let fen = PLAYABLE[0];
    let o = polybook_with_input(
        &["play", "--fen", fen, "--depth", "2", "--pgn", "g.pgn"],
        "Na3\nquit\n",
        dir.path(),
    );
    assert!(o.status.success(), "play: {}", text(&o.stderr));
    let pgn = std::fs::read_to_string(dir.path().join("g.pgn")).unwrap();
    assert!(pgn.contains(&format!("[FEN \"{fen}\"]")), "{pgn}");
    assert!(pgn.contains("1. Na3"), "{pgn}");

    // match: from --fen, and from an --openings file of such setups.
    let openings = common::write_file(
        dir.path(),
        "openings.epd",
        format!("{}\n{}\n", PLAYABLE[1], PLAYABLE[2]),
    );
    for start in [vec!["--fen", PLAYABLE[0]], vec!["--openings", s(&openings)]] {
        let mut args = vec![
            "match", "--engine", "builtin", "--engine", "builtin", "--depth", "1", "--games", "2",
            "--pgn",
        ];
        let pgn = dir.path().join("match.pgn");
        let _ = std::fs::remove_file(&pgn);
        args.push(s(&pgn));
        args.extend(&start);
        let o = polybook(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
        let games = std::fs::read_to_string(&pgn).unwrap();
        assert_eq!(games.matches("[FEN \"").count(), 2, "{games}");
    }

    // solve: a mate in one with nine pawns.
    let suite = common::write_file(
        dir.path(),
        "suite.epd",
        "6k1/5ppp/3R4/8/8/P7/PPPPPPPP/4K3 w - - dm 1; id \"queens\";\n",
    );
    let o = polybook(&["solve", s(&suite), "--depth", "3"]);
    assert!(o.status.success(), "solve: {}", text(&o.stderr));
    assert!(text(&o.stdout).contains("1/1"), "{}", text(&o.stdout));
}

/// Games from these setups are counted from their [FEN]: the book equals the one python-chess
/// builds (tests/reference_book.py), and a game from an unplayable setup is skipped as a bad FEN.
#[test]
fn games_from_them_are_built_and_probed_like_python_chess() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("from_position.pgn");
    // Games of random legal moves (seeded) from each setup, three per setup so that entries
    // survive --min-games 3, then one game from an unplayable setup.
    let script = r#"
import random, sys, chess, chess.pgn
rng = random.Random(13)
out = open(sys.argv[1], "w")
for fen in sys.argv[2:]:
    for g in range(3):
        board = chess.Board(fen)
        board.castling_rights = board.clean_castling_rights()
        if board.status() & chess.STATUS_INVALID_EP_SQUARE:
            board.ep_square = None
        game = chess.pgn.Game()
        game.headers["Variant"] = "From Position"
        game.headers["Result"] = ["1-0", "0-1", "1/2-1/2"][g]
        game.setup(fen)
        node = game
        for ply in range(40):
            moves = sorted(board.legal_moves, key=lambda m: m.uci())
            if not moves:
                break
            # The same first moves in every game, so that positions repeat.
            m = moves[0] if ply < 4 else rng.choice(moves)
            node = node.add_main_variation(m)
            board.push(m)
        print(game, file=out, end="\n\n")
print('[Event "unplayable"]\n[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/8/P3K3 w - - 0 1"]\n[Result "1-0"]\n\n1. Kd2 1-0\n', file=out)
"#;
    let mut args = vec![s(&pgn)];
    args.extend(PLAYABLE);
    python(script, &args);

    let expected = common::reference_book(&[&pgn], &dir.path().join("ref.bin"), &[]);
    assert!(
        expected.len() >= 16 * 4 * PLAYABLE.len(),
        "{}",
        expected.len()
    );

    let out = dir.path().join("pb.bin");
    let report = polybook_json(&["build", s(&pgn), "-o", s(&out), "--json"]);
    let games = 3 * PLAYABLE.len() as u64 + 1;
    assert_eq!(report["games"], games, "{report}");
    assert_eq!(report["used"], games - 1, "{report}");
    assert_eq!(report["skipped"]["bad_fen"], 1, "{report}");
    assert!(
        std::fs::read(&out).unwrap() == expected,
        "the book differs from python-chess's"
    );

    // Probing each setup lists what python-chess's reader finds there.
    let script = r#"
import sys, chess, chess.polyglot
with chess.polyglot.open_reader(sys.argv[1]) as r:
    for fen in sys.argv[2:]:
        b = chess.Board(fen)
        b.castling_rights = b.clean_castling_rights()
        print(" ".join(f"{e.move.uci()}:{e.weight}" for e in r.find_all(b)))
"#;
    let mut args = vec![s(&out)];
    args.extend(PLAYABLE);
    let expected: Vec<String> = python(script, &args).lines().map(String::from).collect();
    for (fen, expected) in PLAYABLE.iter().zip(expected) {
        assert!(!expected.is_empty(), "{fen}: no entry");
        let json = polybook_json(&["probe", s(&out), "--fen", fen, "--json"]);
        let got: Vec<String> = json["entries"]
            .as_array()
            .unwrap_or_else(|| panic!("{json}"))
            .iter()
            .map(|m| format!("{}:{}", m["uci"].as_str().unwrap(), m["weight"]))
            .collect();
        assert_eq!(got.join(" "), expected, "{fen}");
    }
}

/// A null move in a move list (UCI's `0000`, PGN's `--` and `Z0`) is refused, named with its
/// number, not skipped as if it were a move number (which shifted the moves after it to the
/// other side and blamed the wrong move).
#[test]
fn a_null_move_in_a_move_list_is_refused_by_its_number() {
    let book = data("books/gnuchess.bin");
    for (moves, number, null) in [
        ("e4 0000 e5", 2, "0000"),
        ("1. e4 e5 2. 0000", 3, "0000"),
        ("e2e4 e7e5 -- Nc6", 3, "--"),
        ("e4 Z0", 2, "Z0"),
    ] {
        for args in [
            vec!["probe", s(&book), "--moves", moves],
            vec!["key", "--moves", moves],
            vec!["perft", "1", "--moves", moves],
        ] {
            let o = polybook(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
            let want = format!("move {number} '{null}' is a null move");
            assert!(err.contains(&want), "{args:?}: {want:?} in {err}");
        }
    }
    // Move numbers are still skipped, and a trailing result of any kind (a line pasted from PGN).
    let a = key_of(&["key", "--moves", "1. e4 e5 2. Nf3"]);
    assert_eq!(a, key_of(&["key", "--moves", "e4 e5 Nf3"]));
    for result in ["1-0", "0-1", "1/2-1/2", "*"] {
        let moves = format!("1. e4 e5 2. Nf3 {result}");
        assert_eq!(a, key_of(&["key", "--moves", &moves]), "{moves}");
    }
}

/// A FEN that does not parse is refused with the field that is wrong, its text and what it
/// should be.
#[test]
fn a_bad_fen_names_its_wrong_field() {
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
    let cases = [
        (format!("{start}/8 w KQkq - 0 1"), "field 1, the board"),
        (
            "rnbqkbnr/ppppXppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_string(),
            "field 1, the board: not 8 ranks of 8 squares",
        ),
        (
            "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1".to_string(),
            "field 1, the board",
        ),
        (
            format!("{start} x KQkq - 0 1"),
            "field 2, the side to move, 'x': not w or b",
        ),
        (format!("{start} w KQkz - 0 1"), "field 3, castling, 'KQkz'"),
        (
            format!("{start} w KQkq e9 0 1"),
            "field 4, en passant, 'e9'",
        ),
        (
            format!("{start} w KQkq - x 1"),
            "field 5, the halfmove clock, 'x'",
        ),
        (
            format!("{start} w KQkq - 0 y"),
            "field 6, the fullmove number, 'y'",
        ),
        (format!("{start} w KQkq - 0 1 z"), "7 fields"),
        (" ".to_string(), "it is empty"),
    ];
    for (fen, want) in &cases {
        for args in [
            vec!["key", "--fen", fen.as_str()],
            vec!["perft", "1", "--fen", fen.as_str()],
        ] {
            let o = polybook(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
            assert!(err.contains("invalid FEN"), "{args:?}: {err}");
            assert!(err.contains(want), "{args:?}: {want:?} in {err}");
        }
    }
}

/// Every command of the position arguments exits 1 (bad data) on a bad --fen, whatever is wrong
/// with it (a field, the position), with one line.
#[test]
fn a_bad_fen_exits_1_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("book.bin");
    std::fs::copy(data("books/gnuchess.bin"), &book).unwrap();
    let out = dir.path().join("out.bin");
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "",
    ] {
        for args in [
            vec!["key", "--fen", fen],
            vec!["probe", s(&book), "--fen", fen],
            vec!["probe", s(&book), "--fen", fen, "--json"],
            vec!["perft", "2", "--fen", fen],
            vec!["perft", "--depth", "2", "--fen", fen],
            vec!["search", "--depth", "2", "--fen", fen],
            vec![
                "edit",
                s(&book),
                "-o",
                s(&out),
                "--fen",
                fen,
                "--remove",
                "e2e4",
            ],
            vec![
                "analyse",
                s(&book),
                "-o",
                s(&out),
                "--depth",
                "1",
                "--fen",
                fen,
            ],
            vec!["explore", s(&book), "--port", "0", "--fen", fen],
        ] {
            let o = polybook(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
            assert!(!out.exists(), "{args:?}");
        }
    }
}
