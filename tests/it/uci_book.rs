//! The engine's book options for bots, driven as lichess-bot and BotLi drive it: through
//! python-chess's `chess.engine` (tests/uci_book_client.py plays, this file judges). A book per
//! colour, repetitions skipped, the width, share and variety of the choice against their
//! formulas (computed here), the engine's own book moves limited, a line below the book move
//! required, bad books named once; and the options through `match`'s builtin engines.

use crate::common;
use common::path_str as s;
use common::position_after as after;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use polybook::book::{Entry, Key, write_book};
use serde_json::{Value, json};

use common::{BIN, bestmoves, uci_session as session};

/// Asserts that `out` has one `info string` and that it refuses `what` for `why`, ending with
/// what the engine does instead (`instead`).
fn assert_one_refusal(out: &str, what: &str, why: &str, instead: &str) {
    let infos = common::lines_starting(out, "info string");
    assert_eq!(infos.len(), 1, "{what}: {out}");
    let info = infos[0];
    assert!(
        info.starts_with(&format!("info string cannot use {what}: "))
            && info.contains(why)
            && info.ends_with(instead),
        "{info}"
    );
}

/// Writes a book of `lines`: each a line of UCI moves from the start and the weight of every
/// move of it (a move of two lines keeps the first line's weight).
fn book_of_lines(path: &Path, lines: &[(&[&str], u16)]) {
    let mut entries: Vec<Entry> = Vec::new();
    for (line, weight) in lines {
        for i in 0..line.len() {
            let e = Entry::from_uci(Key::of(&after(&line[..i])), line[i], *weight).unwrap();
            if !entries.iter().any(|x| x.key == e.key && x.mv == e.mv) {
                entries.push(e);
            }
        }
    }
    write_book(path, &mut entries).unwrap();
}

/// A book `polybook build` makes of `pgn` (every move of one game kept).
fn built_book(dir: &Path, name: &str, pgn: &str, extra: &[&str]) -> String {
    let pgn_path = dir.join(format!("{name}.pgn"));
    std::fs::write(&pgn_path, pgn).unwrap();
    let bin = dir.join(format!("{name}.bin"));
    let mut args = vec!["build", s(&pgn_path), "-o", s(&bin), "--min-games", "1"];
    args.extend_from_slice(extra);
    common::polybook_ok(&args);
    s(&bin).to_string()
}

/// Runs tests/uci_book_client.py with `options` and its further `args`: polybook's answers.
fn client(options: &Value, args: &[&str]) -> Vec<Value> {
    let script = common::root().join("tests/uci_book_client.py");
    let out = common::succeeds(
        Command::new(common::python_chess())
            .arg(script)
            .arg(BIN)
            .arg(options.to_string())
            .args(args),
        "tests/uci_book_client.py failed",
    );
    serde_json::from_str::<Vec<Value>>(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The engine's moves in `answers`.
fn moves(answers: &[Value]) -> Vec<&str> {
    answers
        .iter()
        .map(|a| a["move"].as_str().unwrap())
        .collect()
}

/// Where each answer's book move came from (the end of its `info string book move … from
/// PATH`), or "search" for a move that was not a book move.
fn sources(answers: &[Value]) -> Vec<String> {
    answers
        .iter()
        .map(|a| {
            let text = a["string"].as_str().unwrap();
            match text.strip_prefix("book move ") {
                Some(rest) => rest.rsplit_once(" from ").unwrap().1.to_string(),
                None => "search".to_string(),
            }
        })
        .collect()
}

#[test]
fn white_and_black_play_from_their_own_books() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let white = built_book(
        d,
        "white",
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 *\n",
        &["--only-white"],
    );
    let black = built_book(
        d,
        "black",
        "1. e4 c5 2. Nf3 d6 3. d4 cxd4 *\n",
        &["--only-black"],
    );
    // BookFile: another answer for Black, and White's first move too.
    let both = built_book(d, "both", "1. e4 e6 2. d4 d5 *\n", &[]);
    let options = json!({"BookFile": both, "BookFileWhite": white, "BookFileBlack": black,
                         "BookSelection": "best_move"});
    let game = client(
        &options,
        &["--game", "white", r#"["e7e5", "b8c6", "a7a6"]"#],
    );
    assert_eq!(moves(&game)[..3], ["e2e4", "g1f3", "f1b5"], "{game:?}");
    assert_eq!(
        sources(&game),
        [white.as_str(), &white, &white, "search"],
        "{game:?}"
    );
    let game = client(
        &options,
        &["--game", "black", r#"["e2e4", "g1f3", "d2d4"]"#],
    );
    assert_eq!(moves(&game), ["c7c5", "d7d6", "c5d4"], "{game:?}");
    assert_eq!(sources(&game), [black.as_str(); 3], "{game:?}");
    // No book for Black: BookFile's.
    let options = json!({"BookFile": both, "BookFileWhite": white});
    let game = client(&options, &["--game", "black", r#"["e2e4", "d2d4"]"#]);
    assert_eq!(moves(&game), ["e7e6", "d7d5"], "{game:?}");
    assert_eq!(sources(&game), [both.as_str(); 2], "{game:?}");
}

#[test]
fn a_book_move_that_repeats_a_position_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rep.bin");
    // After 1. Nf3 Nf6 2. Ng1, the heaviest move Ng8 repeats the start position.
    let to = ["g1f3", "g8f6", "f3g1"];
    book_of_lines(
        &path,
        &[
            (&["g1f3", "g8f6", "f3g1", "f6g8"], 100),
            (&["g1f3", "g8f6", "f3g1", "e7e6"], 1),
        ],
    );
    let position = json!([to]).to_string();
    for (selection, allow, expected) in [
        ("best", false, "e7e6"),
        ("best", true, "f6g8"),
        ("weighted", false, "e7e6"),
    ] {
        let options = json!({"BookFile": s(&path), "BookSelection": selection,
                             "BookAllowRepetitions": allow, "BookSeed": 3});
        let answers = client(&options, &[&position, "10"]);
        assert_eq!(
            moves(&answers),
            [expected; 10],
            "{selection} {allow}: {answers:?}"
        );
        assert_eq!(sources(&answers), [s(&path); 10]);
    }
    // The repeating move alone: the engine searches.
    let only = dir.path().join("only.bin");
    book_of_lines(&only, &[(&["g1f3", "g8f6", "f3g1", "f6g8"], 100)]);
    let answers = client(&json!({"BookFile": s(&only)}), &[&position]);
    assert_eq!(sources(&answers), ["search"], "{answers:?}");
}

/// The chi-square statistic of `counts` against the probabilities `expected` (a move expected
/// never must never come; those are left out of the sum), with its degrees of freedom.
fn chi_square(counts: &[usize], expected: &[f64]) -> (f64, usize) {
    let n: usize = counts.iter().sum();
    let mut chi = 0.0;
    let mut cells = 0usize;
    for (&c, &p) in counts.iter().zip(expected) {
        if p == 0.0 {
            assert_eq!(c, 0, "{counts:?} against {expected:?}");
            continue;
        }
        let e = n as f64 * p;
        chi += (c as f64 - e).powi(2) / e;
        cells += 1;
    }
    (chi, cells.saturating_sub(1))
}

#[test]
fn width_share_and_variety_follow_their_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("start.bin");
    let book: [(&str, u16); 4] = [("e2e4", 50), ("d2d4", 30), ("c2c4", 15), ("g1f3", 5)];
    common::start_book(&path, &book);
    let weights: Vec<f64> = book.iter().map(|&(_, w)| f64::from(w)).collect();
    // The curve as docs/uci.md gives it: variety v raises the weights to (100 - v) / 50 from
    // 50 up, to 50 / v below; 0 is the heaviest alone.
    let powered = |v: f64, keep: usize| -> Vec<f64> {
        let e = if v >= 50.0 {
            (100.0 - v) / 50.0
        } else {
            50.0 / v
        };
        let w: Vec<f64> = (0..4)
            .map(|i| if i < keep { weights[i].powf(e) } else { 0.0 })
            .collect();
        let total: f64 = w.iter().sum();
        w.iter().map(|x| x / total).collect()
    };
    let n = 1000;
    let cases: Vec<(Value, Vec<f64>)> = vec![
        (json!({"BookVariety": 25}), powered(25.0, 4)),
        (json!({"BookVariety": 75}), powered(75.0, 4)),
        (json!({"BookVariety": 100}), powered(100.0, 4)),
        (json!({"BookVariety": 0}), vec![1.0, 0.0, 0.0, 0.0]),
        (json!({"BookWidth": 3}), powered(50.0, 3)),
        // Shares 50%, 30%, 15%, 5%.
        (json!({"BookMinShare": 30}), powered(50.0, 2)),
        (
            json!({"BookMinShare": 10, "BookVariety": 100}),
            powered(100.0, 3),
        ),
        (
            json!({"BookWidth": 2, "BookSelection": "uniform_random"}),
            powered(100.0, 2),
        ),
    ];
    let n_text = n.to_string();
    for (mut options, expected) in cases {
        options["BookFile"] = json!(s(&path));
        options["BookSeed"] = json!(20240601);
        let answers = client(&options, &["[[]]", &n_text]);
        assert_eq!(answers.len(), n);
        let mut counts = [0usize; 4];
        for m in moves(&answers) {
            counts[book.iter().position(|&(b, _)| b == m).unwrap()] += 1;
        }
        // The 99.9% points of chi-square with 1, 2 and 3 degrees of freedom.
        let (chi, df) = chi_square(&counts, &expected);
        let limit = [0.0, 10.83, 13.82, 16.27][df];
        assert!(
            chi <= limit,
            "{options}: {counts:?} against {expected:?}: chi-square {chi:.1} (df {df})"
        );
        if options["BookVariety"] == json!(25) {
            // The same seed, the same picks.
            let again = client(&options, &["[[]]", &n_text]);
            assert_eq!(moves(&again), moves(&answers));
        }
    }
}

#[test]
fn book_max_moves_counts_the_engine_s_own_moves() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ruy.bin");
    let line = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6",
    ];
    book_of_lines(&path, &[(&line, 1)]);
    let prefixes: Vec<Vec<&str>> = (0..line.len()).map(|i| line[..i].to_vec()).collect();
    let positions = json!(prefixes).to_string();
    let book = s(&path);
    // Two own moves from the book for each side; then searches.
    let answers = client(&json!({"BookFile": book, "BookMaxMoves": 2}), &[&positions]);
    let expected: Vec<&str> = (0..line.len())
        .map(|ply| if ply < 4 { book } else { "search" })
        .collect();
    assert_eq!(sources(&answers), expected, "{answers:?}");
    assert_eq!(moves(&answers)[..4], line[..4]);
    // No limit: the whole line.
    let answers = client(&json!({"BookFile": book}), &[&positions]);
    assert_eq!(sources(&answers), [book; 8]);
    assert_eq!(moves(&answers), line);
}

#[test]
fn book_min_line_plies_wants_a_line_below_the_move() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines.bin");
    // 1. e4 (heavy) has one ply below it in the book, 1. d4 three.
    book_of_lines(
        &path,
        &[
            (&["e2e4", "e7e5"], 100),
            (&["d2d4", "d7d5", "c2c4", "e7e6"], 1),
        ],
    );
    for (plies, expected) in [(0, "e2e4"), (1, "e2e4"), (2, "d2d4"), (3, "d2d4")] {
        let options = json!({"BookFile": s(&path), "BookSelection": "best",
                             "BookMinLinePlies": plies});
        let answers = client(&options, &["[[]]"]);
        assert_eq!(moves(&answers), [expected], "{plies}: {answers:?}");
        assert_eq!(sources(&answers), [s(&path)]);
    }
    let options = json!({"BookFile": s(&path), "BookMinLinePlies": 4});
    assert_eq!(sources(&client(&options, &["[[]]"])), ["search"]);
}

#[test]
fn a_bad_book_is_named_once_and_the_engine_plays_on() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.bin");
    common::start_book(&good, &[("c2c4", 1)]);
    let html = common::data("books/invalid/html-page-saved-as.bin");
    for (option, value, why) in [
        (
            "BookFile",
            "/no/such/book.bin".to_string(),
            "cannot open book",
        ),
        ("BookFileWhite", s(&html).to_string(), ""),
        (
            "BookFileBlack",
            "/no/such/book.bin".to_string(),
            "cannot open book",
        ),
    ] {
        let out = session(&format!(
            "setoption name {option} value {value}\nposition startpos\ngo wtime 1000 btime 1000\n\
             position startpos moves e2e4\ngo wtime 1000 btime 1000\n"
        ));
        assert_one_refusal(&out, option, why, "; playing without a book");
        assert_eq!(bestmoves(&out).len(), 2, "{out}");
    }
    // In a list, the good book still plays.
    let out = session(&format!(
        "setoption name BookFileWhite value /no/such.bin; {}\nposition startpos\ngo wtime 1000 btime 1000\n",
        s(&good)
    ));
    assert!(
        out.contains("info string cannot use BookFileWhite: cannot open book '/no/such.bin'")
            && out.contains("; playing without this book"),
        "{out}"
    );
    assert_eq!(bestmoves(&out), ["c2c4"], "{out}");
}

/// Plays a match of two quick games (depth 1) between `engines` with `options`, written to
/// `pgn`; the games as python-chess reads them.
fn two_quick_games(engines: &[&str], options: &[&str], pgn: &Path) -> Vec<Value> {
    let mut rest = vec!["--games", "2", "--depth", "1", "--movetime", "1000"];
    rest.extend(options);
    rest.extend(["--pgn", s(pgn)]);
    common::polybook_match_ok(engines, &rest);
    let games = common::match_check(pgn, None);
    assert_eq!(games.len(), 2);
    games
}

#[test]
fn match_s_builtin_engines_take_the_book_options() {
    let dir = tempfile::tempdir().unwrap();
    let a3 = dir.path().join("a3.bin");
    common::start_book(&a3, &[("a2a3", 1)]);
    let pgn = dir.path().join("m.pgn");
    let first = format!("builtin:Hash=8,BookFileWhite={}", s(&a3));
    let games = two_quick_games(&[&first, "builtin:Hash=8"], &[], &pgn);
    let starts: HashMap<String, String> = games
        .iter()
        .map(|g| {
            (
                g["white"].as_str().unwrap().to_string(),
                g["moves"][0].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(starts.len(), 2, "{games:?}");
    // The engine with a White book opens 1. a3 from it; the other searches its first move.
    let a3_games: Vec<&String> = starts.values().filter(|m| *m == "a2a3").collect();
    assert_eq!(a3_games.len(), 1, "{starts:?}");
}

/// `BookProfile`: a BotLi configuration's `opening_books` and `books` sections, read as they
/// stand; python-chess plays the games with a clock (its first `go` gives the time control and
/// lichess's speed class) and an opponent (`UCI_Opponent`), and the section BotLi's rule gives
/// (time control, then speed, then `standard`; the most suffixes first) plays, named in the
/// book move's `info string`.
#[test]
fn a_book_profile_chooses_by_speed_colour_and_opponent() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    book_of_lines(&d.join("bullet.bin"), &[(&["d2d4"], 1)]);
    book_of_lines(&d.join("blitz.bin"), &[(&["c2c4"], 1)]);
    book_of_lines(&d.join("main.bin"), &[(&["e2e4", "e7e5"], 1)]);
    book_of_lines(&d.join("human.bin"), &[(&["e2e4", "c7c5"], 1)]);
    book_of_lines(&d.join("five.bin"), &[(&["g1f3"], 1)]);
    let profile = d.join("config.yml");
    std::fs::write(
        &profile,
        "# A BotLi configuration (its other sections are not the profile's).\n\
         token: \"xxx\"\n\
         opening_books:\n  enabled: false\n  books:\n\
         \x20   bullet:\n      names:\n        - Bullet\n\
         \x20   blitz_white:\n      names: [Blitz]\n\
         \x20   5+3:\n      names: [Five]\n\
         \x20   standard_black_human:\n      names: [Human]\n\
         \x20   standard:\n      selection: best_move\n      names:\n        - Main\n\
         books:\n  Bullet: bullet.bin\n  Blitz: blitz.bin\n  Main: main.bin\n  Human: human.bin\n  Five: five.bin\n",
    )
    .unwrap();
    let options = json!({"BookProfile": s(&profile)});
    let clock = |minutes: f64, inc: u32| {
        json!({"white_clock": minutes * 60.0, "black_clock": minutes * 60.0,
               "white_inc": inc, "black_inc": inc})
        .to_string()
    };
    let person = json!({"name": "someone", "is_engine": false}).to_string();
    let computer = json!({"name": "SomeBot", "title": "BOT", "is_engine": true}).to_string();
    // (the position, the clock, the opponent) → the move and the section that chose it.
    let cases: [(&str, Option<String>, &str, &str, &str); 8] = [
        ("[[]]", Some(clock(1.0, 0)), "", "d2d4", "bullet"),
        ("[[]]", Some(clock(2.0, 1)), "", "d2d4", "bullet"),
        ("[[]]", Some(clock(3.0, 2)), "", "c2c4", "blitz_white"),
        ("[[]]", Some(clock(5.0, 3)), "", "g1f3", "5+3"),
        ("[[]]", Some(clock(15.0, 10)), "", "e2e4", "standard"),
        (
            r#"[["e2e4"]]"#,
            Some(clock(3.0, 2)),
            &person,
            "c7c5",
            "standard_black_human",
        ),
        (
            r#"[["e2e4"]]"#,
            Some(clock(3.0, 2)),
            &computer,
            "e7e5",
            "standard",
        ),
        // No clock (a fixed time a move): neither time control nor speed, so `standard`.
        ("[[]]", None, "", "e2e4", "standard"),
    ];
    for (position, limit, opponent, want, section) in cases {
        let mut args = vec![position];
        if let Some(limit) = &limit {
            args.extend(["--limit", limit]);
        }
        if !opponent.is_empty() {
            args.extend(["--opponent", opponent]);
        }
        let answers = client(&options, &args);
        let text = answers[0]["string"].as_str().unwrap();
        assert_eq!(moves(&answers), [want], "{limit:?} {opponent}: {text}");
        assert!(
            text.starts_with(&format!("book move {want} "))
                && text.ends_with(&format!(" (BookProfile section {section})")),
            "{limit:?} {opponent}: {text}"
        );
    }
    // As Black against a computer in a game that the profile's sections all leave: after 1. d4
    // no book of `standard` has a move, and the engine searches.
    let answers = client(&options, &[r#"[["d2d4"]]"#, "--limit", &clock(3.0, 2)]);
    assert!(
        !answers[0]["string"]
            .as_str()
            .unwrap()
            .starts_with("book move"),
        "{answers:?}"
    );
}

/// A profile that cannot be read, or one that names a book that cannot be opened: one `info
/// string` each, and the engine plays on (from the other books of the section, or searching).
#[test]
fn a_bad_book_profile_is_named_once_and_the_engine_plays_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = d.join("good.bin");
    common::start_book(&good, &[("c2c4", 1)]);
    let write = |name: &str, text: &str| {
        let path = d.join(name);
        std::fs::write(&path, text).unwrap();
        s(&path).to_string()
    };
    for (path, why) in [
        ("/no/such/profile.yml".to_string(), "No such file"),
        (write("bad.yml", "opening_books: [\n"), "not YAML"),
        (
            write(
                "key.yml",
                "opening_books:\n  books:\n    fast:\n      names: [a]\n",
            ),
            "unknown key 'fast'",
        ),
        (
            write(
                "set.yml",
                "opening_books:\n  books:\n    standard:\n      depht: 3\n",
            ),
            "unknown setting",
        ),
    ] {
        let out = session(&format!(
            "setoption name BookProfile value {path}\nposition startpos\ngo wtime 1000 btime 1000\n"
        ));
        assert_one_refusal(
            &out,
            &format!("BookProfile {path}"),
            why,
            "; playing without the profile",
        );
        assert_eq!(bestmoves(&out).len(), 1, "{out}");
    }
    // A missing book: named, and the section's other book plays.
    let path = write(
        "missing.yml",
        &format!(
            "opening_books:\n  books:\n    standard:\n      names: [/no/such.bin, {}]\n",
            s(&good)
        ),
    );
    let out = session(&format!(
        "setoption name BookProfile value {path}\nposition startpos\ngo wtime 1000 btime 1000\n"
    ));
    assert!(
        out.contains(&format!(
            "info string cannot use BookProfile {path}: section standard: cannot open book '/no/such.bin'"
        )),
        "{out}"
    );
    assert_eq!(bestmoves(&out), ["c2c4"], "{out}");
}

/// `match --book-profile`: every builtin engine gets the profile (its section for White opens
/// with a3, for Black answers h6); a profile that cannot be read, or that names a missing book,
/// is refused before the first game.
#[test]
fn match_s_book_profile_reaches_every_builtin_engine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    book_of_lines(&d.join("a3.bin"), &[(&["a2a3"], 1)]);
    book_of_lines(
        &d.join("h6.bin"),
        &[(&["e2e4", "h7h6"], 1), (&["a2a3", "h7h6"], 1)],
    );
    let profile = d.join("profile.yml");
    std::fs::write(
        &profile,
        "opening_books:\n  books:\n    standard_white:\n      names: [a3.bin]\n    standard_black:\n      names: [h6.bin]\n",
    )
    .unwrap();
    let pgn = d.join("m.pgn");
    let games = two_quick_games(
        &["builtin:Hash=8", "builtin:Hash=8"],
        &["--book-profile", s(&profile)],
        &pgn,
    );
    for g in &games {
        assert_eq!(g["moves"][0], "a2a3", "{g}");
        assert_eq!(g["moves"][1], "h7h6", "{g}");
    }
    std::fs::write(
        &profile,
        "opening_books:\n  books:\n    standard:\n      names: [missing.bin]\n",
    )
    .unwrap();
    let out = common::polybook_match(
        &["builtin", "builtin"],
        &["--games", "2", "--book-profile", s(&profile)],
    );
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    let err = common::stderr(&out);
    assert!(
        err.contains("missing.bin") && err.lines().count() == 1,
        "{err}"
    );
}
