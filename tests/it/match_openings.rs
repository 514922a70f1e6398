//! `polybook match` as match runners use it: an engine's own book played for it by the runner
//! (cutechess's `book=FILE bookdepth=N`), openings from PGN games cut at a number of plies and
//! from EPD files, their order (sequential, a seeded shuffle, a first opening), cutechess's and
//! fastchess's `-openings file=... format=... order=... plies=... start=...`, and bad input. Every
//! game is read back by python-chess (tests/match_check.py).
//!
//! The games are short: polybook's engine searches to depth 1, and a draw is adjudicated once
//! both engines have searched one move each (`--draw movenumber=1,score=100000,moves=1`).

use crate::common;
use common::path_str as s;

use std::path::Path;

use serde_json::Value;

use common::{gnuchess_book as book, match_check, polybook_match_ok};

/// The settings that keep a game short (see the module's comment).
const SHORT: [&str; 5] = [
    "--depth",
    "1",
    "--draw",
    "movenumber=1,score=100000,moves=1",
    "--quiet",
];

/// A JSON array of strings or numbers as text.
fn texts(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
        .collect()
}

/// Plays a short match of polybook's engine against itself with `rest`, the games logged to
/// `pgn`; the games as python-chess reads them (with `book` for match_check's book columns).
fn short_match(pgn: &Path, rest: &[&str], book: Option<&Path>) -> Vec<Value> {
    let mut args = SHORT.to_vec();
    args.extend(["--pgn", s(pgn)]);
    args.extend_from_slice(rest);
    polybook_match_ok(&["builtin", "builtin"], &args);
    let games = match_check(pgn, book);
    std::fs::remove_file(pgn).unwrap();
    for g in &games {
        assert!(g["errors"].as_array().unwrap().is_empty(), "{g}");
        assert!(g["consistent"].as_bool().unwrap(), "{g}");
    }
    games
}

#[test]
fn an_engines_own_book_is_played_for_it_by_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("m.pgn");
    let book_arg = format!("1:{}", s(&book()));
    // The first engine's own book for 4 moves, 4 games, seed 5 (`--seed` or its other name).
    let args = |seed: &'static str| {
        [
            "--engine-book",
            &book_arg,
            "--engine-book-depth",
            "1:4",
            "--games",
            "4",
            seed,
            "5",
        ]
    };
    let games = short_match(&pgn, &args("--seed"), Some(&book()));
    assert_eq!(games.len(), 4);
    for (i, g) in games.iter().enumerate() {
        // The first engine has White in games 1 and 3, Black in 2 and 4.
        let first_plays = |ply: usize| ply % 2 == i % 2;
        let book_plies: Vec<usize> = texts(&g["book_plies"])
            .iter()
            .map(|p| p.parse().unwrap())
            .collect();
        let has = g["book_has"].as_array().unwrap();
        for (ply, here) in has.iter().enumerate() {
            let marked = book_plies.contains(&ply);
            // Within 4 moves (8 plies), the first engine plays its book's move wherever the book
            // has one; the second engine, without a book, searches every move; past 8 plies no
            // move is the book's.
            let expected = first_plays(ply) && ply < 8 && here == true;
            assert_eq!(marked, expected, "game {}, ply {ply}: {g}", i + 1);
        }
        assert!(
            g["in_book"].as_array().unwrap().iter().all(|b| b == true),
            "every {{book}} move is the book's: {g}"
        );
    }
    for g in [&games[0], &games[2]] {
        assert!(
            texts(&g["book_plies"]).len() >= 2,
            "White from the start: the GNU Chess book has moves: {g}"
        );
    }
    // The picks come from the seed: the same seed, the same games.
    let again = short_match(&pgn, &args("--srand"), None);
    for (a, b) in games.iter().zip(&again) {
        assert_eq!(a["moves"], b["moves"]);
    }
}

/// Two PGN openings: a game from the start, and one from a FEN.
const TWO_GAMES: &str = "[Event \"a\"]\n\n1. d4 Nf6 2. c4 {a comment} e6 (2... g6) 3. Nc3 Bb4 *\n\n\
    [Event \"b\"]\n[SetUp \"1\"]\n[FEN \"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\"]\n\n\
    3. Bb5 a6 4. Ba4 Nf6 5. O-O 1/2-1/2\n";
const FEN_B: &str = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";

#[test]
fn openings_from_pgn_games_cut_at_plies() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::write_file(&dir, "o.pgn", TWO_GAMES);
    let pgn = dir.path().join("m.pgn");
    let a = ["d2d4", "g8f6", "c2c4", "e7e6", "b1c3", "f8b4"];
    let b = ["f1b5", "a7a6", "b5a4", "g8f6", "e1g1"];
    for (plies, take) in [(Some("plies=3"), 3), (None, usize::MAX)] {
        let mut rest = vec!["--games", "4", "--openings", s(&file)];
        rest.extend(plies);
        let games = short_match(&pgn, &rest, None);
        assert_eq!(games.len(), 4);
        for (g, line, fen) in [
            (&games[0], &a[..], None),
            (&games[1], &a[..], None),
            (&games[2], &b[..], Some(FEN_B)),
            (&games[3], &b[..], Some(FEN_B)),
        ] {
            let line = &line[..take.min(line.len())];
            assert_eq!(g["fen"].as_str(), fen, "{g}");
            assert_eq!(texts(&g["moves"])[..line.len()], *line, "{g}");
            assert_eq!(
                texts(&g["book_moves"]),
                line,
                "the opening's moves are marked {{book}}, and only they: {g}"
            );
        }
    }
}

/// Writes five one-move PGN openings (1. a3, 1. b3, ... 1. e3) to `path`.
fn five_openings(path: &Path) {
    let text: String = ["a3", "b3", "c3", "d3", "e3"]
        .iter()
        .map(|m| format!("1. {m} *\n\n"))
        .collect();
    std::fs::write(path, text).unwrap();
}

/// The first move of each game.
fn first_moves(games: &[Value]) -> Vec<String> {
    games
        .iter()
        .map(|g| texts(&g["moves"])[0].clone())
        .collect()
}

#[test]
fn opening_order_sequential_random_and_start() {
    let dir = tempfile::tempdir().unwrap();
    // Not .pgn: format=pgn says what it is.
    let file = dir.path().join("five.txt");
    five_openings(&file);
    let uci = ["a2a3", "b2b3", "c2c3", "d2d3", "e2e3"];
    let pgn = dir.path().join("m.pgn");
    let order = |rest: &[&str]| -> Vec<String> {
        let mut args = vec!["--games", "10"];
        args.extend_from_slice(rest);
        let firsts = first_moves(&short_match(&pgn, &args, None));
        assert_eq!(firsts.len(), 10);
        // Each opening is played twice in a row, colours swapped.
        for pair in firsts.chunks(2) {
            assert_eq!(pair[0], pair[1]);
        }
        firsts.into_iter().step_by(2).collect()
    };
    let file_arg = format!("file={}", s(&file));
    // Sequential from the 7th of 5: the 2nd, then round the end.
    assert_eq!(
        order(&["--openings", &file_arg, "format=pgn", "start=7"]),
        ["b2b3", "c2c3", "d2d3", "e2e3", "a2a3"]
    );
    // Random: a permutation, the same for the same seed (--seed or cutechess's --srand).
    let random = |seed: &str, start: &str| {
        order(&[
            "--openings",
            &file_arg,
            "format=pgn",
            "order=random",
            "plies=8",
            start,
            "--srand",
            seed,
        ])
    };
    let shuffled = random("1", "start=1");
    let mut sorted = shuffled.clone();
    sorted.sort();
    assert_eq!(sorted, uci);
    assert_eq!(
        order(&[
            "--openings",
            s(&file),
            "format=pgn",
            "--shuffle-openings",
            "--seed",
            "1"
        ]),
        shuffled
    );
    // Random, then the start: the same shuffle from its 3rd opening.
    let from_third = random("1", "start=3");
    assert_eq!(from_third[..3], shuffled[2..]);
    assert_eq!(from_third[3..], shuffled[..2]);
    // Some seed of a few orders them otherwise than the file does.
    assert!(
        ["2", "3", "4"]
            .iter()
            .any(|seed| random(seed, "start=1") != uci),
        "three shuffles of five in file order"
    );
}

#[test]
fn openings_from_an_epd_file_in_cutechess_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("o.epd");
    let fens = [
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1",
    ];
    std::fs::write(&file, fens.join("\n")).unwrap();
    let pgn = dir.path().join("m.pgn");
    let games = short_match(
        &pgn,
        &[
            "--games",
            "6",
            "--openings",
            &format!("file={}", s(&file)),
            "format=epd",
            "order=sequential",
            "start=2",
            "policy=round",
        ],
        None,
    );
    let got: Vec<&str> = games.iter().map(|g| g["fen"].as_str().unwrap()).collect();
    assert_eq!(
        got,
        [fens[1], fens[1], fens[2], fens[2], fens[0], fens[0]],
        "EPD lines from the 2nd, each twice"
    );
    assert!(games.iter().all(|g| texts(&g["book_moves"]).is_empty()));
}

#[test]
fn bad_openings_and_engine_books_fail_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("never.pgn");
    let pgn_arg = s(&pgn).to_string();
    let illegal = common::write_file(&dir, "illegal.pgn", "1. e4 e5 *\n\n1. d4 d5 2. Ke3 Nf6 *\n");
    let bad_fen = common::write_file(&dir, "fen.pgn", "[FEN \"8/8/8 w - -\"]\n\n1. e4 *\n");
    let empty = common::write_file(&dir, "empty.pgn", "\n");
    let good = common::write_file(&dir, "good.pgn", TWO_GAMES);
    let (illegal, bad_fen, empty, good) = (s(&illegal), s(&bad_fen), s(&empty), s(&good));
    let the_book = book();
    let book_1 = format!("1:{}", s(&the_book));
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["--openings", "/no/such.pgn"],
            1,
            "cannot read openings '/no/such.pgn'".into(),
        ),
        (
            vec!["--openings", illegal],
            1,
            format!("{illegal} game 2: move 3 'Ke3' is illegal in "),
        ),
        (
            vec!["--openings", bad_fen],
            1,
            format!("{bad_fen} game 1: invalid FEN '8/8/8 w - -'"),
        ),
        (vec!["--openings", empty], 1, format!("{empty}: no games")),
        (
            vec!["--openings", good, "plies=0"],
            2,
            "plies='0': expected a whole number of at least 1".into(),
        ),
        (
            vec!["--openings", good, "plies=eight"],
            2,
            "plies='eight'".into(),
        ),
        (vec!["--openings", good, "start=0"], 2, "start='0'".into()),
        (
            vec!["--openings", good, "srand=3"],
            2,
            "unknown key 'srand'".into(),
        ),
        (
            vec!["--openings", good, "policy=encounter"],
            2,
            "policy=encounter: polybook gives every pairing the same openings".into(),
        ),
        (
            vec!["--openings", good, "policy=often"],
            2,
            "policy='often': expected default, round or encounter".into(),
        ),
        (
            vec!["--openings", good, "order=shuffled"],
            2,
            "expected sequential or random".into(),
        ),
        (
            vec!["--openings", good, "format=cbh"],
            2,
            "expected epd or pgn".into(),
        ),
        (vec!["--openings", good, good], 2, "is a second file".into()),
        (
            vec!["--openings", "plies=3"],
            2,
            "no file (give FILE or file=FILE)".into(),
        ),
        (
            vec!["--engine-book", "3:x.bin"],
            2,
            "--engine-book '3:x.bin': engine number '3' is not 1 or 2".into(),
        ),
        (
            vec!["--engine-book", s(&the_book)],
            2,
            "expected N:FILE".into(),
        ),
        (
            vec!["--engine-book", "2:/no/such.bin"],
            1,
            "/no/such.bin".into(),
        ),
        (
            vec!["--engine-book-depth", "2:4"],
            2,
            "engine 2 has no --engine-book".into(),
        ),
        (
            vec!["--engine-book", &book_1, "--engine-book-depth", "1:0"],
            2,
            "MOVES a whole number of at least 1".into(),
        ),
    ];
    for (args, code, message) in cases {
        let mut full = vec![
            "match", "--pgn", &pgn_arg, "--engine", "builtin", "--engine", "builtin",
        ];
        full.extend(&args);
        common::assert_refused_at_once(&full, code, &message, &pgn);
    }
}
