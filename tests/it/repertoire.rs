//! `polybook repertoire`: the books and PGN trees it builds from real lichess games against a
//! python-chess reimplementation of its rules (`tests/repertoire_check.py`), the same book from a
//! tally of the games, an analysed book's limit on my moves, and what it refuses.

use crate::common;
use common::{data, path_str as s, polybook_fails, polybook_json, polybook_ok};

const CHECK: &str = include_str!("../repertoire_check.py");
const PLAYER: &str = "DrNykterstein";

/// The entries `[key, move, weight]` of one of the script's lists.
fn triples(v: &serde_json::Value) -> Vec<(u64, u64, u64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let n = |i: usize| e[i].as_u64().unwrap();
            (
                n(0),
                n(1),
                if e.as_array().unwrap().len() > 2 {
                    n(2)
                } else {
                    0
                },
            )
        })
        .collect()
}

#[test]
fn repertoire_agrees_with_python_chess_on_lichess_games() {
    let games = data("pgn/lichess_magnus_2018-2022.pgn.xz");
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    // Magnus's White repertoire with the defaults; his Black one wider and shallower; and a
    // Black repertoire from all the games (both sides of each), without a player.
    let runs: [(&str, &[&str]); 3] = [
        ("white", &[]),
        (
            "black",
            &[
                "--width",
                "2",
                "--min-games",
                "3",
                "--min-prob",
                "1",
                "--max-ply",
                "20",
            ],
        ),
        ("black", &["--min-prob", "0.2", "--max-ply", "16"]),
    ];
    let mut jobs = Vec::new();
    let mut summaries = Vec::new();
    for (i, (color, extra)) in runs.iter().enumerate() {
        let book = path(&format!("rep{i}.bin"));
        let tree = path(&format!("rep{i}.pgn"));
        let mut args = vec![
            "repertoire",
            s(&games),
            "--color",
            color,
            "-o",
            s(&book),
            "--pgn",
            s(&tree),
            "--json",
            "-q",
        ];
        if i < 2 {
            args.extend(["--player", PLAYER]);
        }
        args.extend(extra.iter());
        summaries.push(polybook_json(&args));
        polybook_ok(&["verify", s(&book)]);
        let number = |flag: &str, default: f64| {
            extra
                .iter()
                .position(|a| *a == flag)
                .map_or(default, |at| extra[at + 1].parse().unwrap())
        };
        jobs.push(serde_json::json!({
            "player": i < 2,
            "color": color,
            "min_games": number("--min-games", 5.0) as u64,
            "width": number("--width", 1.0) as u64,
            "min_prob": number("--min-prob", 0.5),
            "max_ply": number("--max-ply", 30.0) as u64,
            "book": s(&book),
            "tree": s(&tree),
        }));
    }
    // The script reads the games once for the three.
    let file = path("jobs.json");
    std::fs::write(&file, serde_json::to_string(&jobs).unwrap()).unwrap();
    let answers: Vec<serde_json::Value> = common::python(CHECK, &[s(&games), PLAYER, s(&file)])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 3);
    for (i, (a, summary)) in answers.iter().zip(&summaries).enumerate() {
        let ours = triples(&a["ours"]);
        let book = triples(&a["book"]);
        assert!(ours.len() > 50, "run {i}: only {} entries", ours.len());
        assert_eq!(
            book, ours,
            "run {i}: the book against python-chess's repertoire"
        );
        assert_eq!(summary["positions"], a["positions"], "run {i}");
        // The PGN tree holds exactly the book's moves, reads back without errors, and its main
        // line is the most likely line.
        let tree = triples(&a["tree"]);
        let pairs: Vec<(u64, u64, u64)> = book.iter().map(|&(k, m, _)| (k, m, 0)).collect();
        assert_eq!(tree, pairs, "run {i}: the PGN tree's moves");
        assert_eq!(a["tree_errors"], serde_json::json!([]), "run {i}");
        let main = a["main_line"].as_array().unwrap();
        assert!(main.len() >= 4, "run {i}: main line {main:?}");
        assert_eq!(
            a["tree_main_line"], a["main_line"],
            "run {i}: the main line"
        );
        assert_eq!(summary["main_line"].as_array().unwrap().len(), main.len());
    }
    // The options matter: the wider Black repertoire holds two moves somewhere.
    assert!(summaries[1]["my_moves"].as_u64() > summaries[1]["my_positions"].as_u64());
}

#[test]
fn a_tally_of_the_same_games_gives_the_same_book() {
    let games = data("pgn/lichess_magnus_2018-2022.pgn.xz");
    let dir = tempfile::tempdir().unwrap();
    let tally = dir.path().join("games.parquet");
    polybook_ok(&["tally", s(&games), "-o", s(&tally), "-q"]);
    for color in ["white", "black"] {
        let from_games = dir.path().join(format!("games-{color}.bin"));
        let from_tally = dir.path().join(format!("tally-{color}.bin"));
        for (input, out) in [(&games, &from_games), (&tally, &from_tally)] {
            polybook_ok(&[
                "repertoire",
                s(input),
                "--color",
                color,
                "-o",
                s(out),
                "--min-prob",
                "0.3",
                "--min-games",
                "30",
                "--width",
                "2",
                "-q",
            ]);
        }
        let a = std::fs::read(&from_games).unwrap();
        assert!(a.len() > 16 * 50, "{color}: {} bytes", a.len());
        assert_eq!(a, std::fs::read(&from_tally).unwrap(), "{color}");
    }
}

/// A scored book at the start position only: the mark `analyse` writes, then 1. e4 at +0.50 and
/// 1. d4 at -1.00 (depth 20).
fn scored_start_book(path: &std::path::Path) {
    let start: u64 = 0x463b_9618_1691_fc9c;
    let entry = |key: u64, mv: u16, learn: u32| {
        let mut b = key.to_be_bytes().to_vec();
        b.extend(mv.to_be_bytes());
        b.extend(0u16.to_be_bytes());
        b.extend(learn.to_be_bytes());
        b
    };
    let scored = |cp: i16| (u32::from(cp as u16) << 16) | (20 << 8);
    // e2e4: from e2 (12) to e4 (28); d2d4: from d2 (11) to d4 (27).
    let mut bytes = entry(0, 0, 0x7062_5344);
    bytes.extend(entry(start, 28 | (12 << 6), scored(50)));
    bytes.extend(entry(start, 27 | (11 << 6), scored(-100)));
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn an_analysed_book_refutes_my_weak_moves() {
    let games = data("pgn/lichess_magnus_2018-2022.pgn.xz");
    let dir = tempfile::tempdir().unwrap();
    let scores = dir.path().join("scored.bin");
    scored_start_book(&scores);
    let out = dir.path().join("rep.bin");
    let first = |extra: &[&str]| {
        let mut args = vec![
            "repertoire",
            s(&games),
            "--player",
            PLAYER,
            "--color",
            "white",
            "-o",
            s(&out),
            "--max-ply",
            "4",
            "--json",
            "-q",
        ];
        args.extend(extra);
        polybook_json(&args)
    };
    // Without scores Magnus's best first move by the bound is 1. d4.
    let plain = first(&[]);
    assert_eq!(plain["main_line"][0], "d4");
    assert_eq!(plain["refused"], 0);
    // 1. d4 is 150 cp below 1. e4: refused at --max-loss 50, not at 200.
    let limited = first(&["--scores", s(&scores), "--max-loss", "50"]);
    assert_eq!(limited["refused"], 1);
    assert_ne!(limited["main_line"][0], "d4");
    let loose = first(&["--scores", s(&scores), "--max-loss", "200"]);
    assert_eq!(loose["refused"], 0);
    assert_eq!(loose["main_line"][0], "d4");
}

#[test]
fn repertoire_refuses_bad_inputs_in_one_line() {
    let games = data("pgn/lichess_magnus_2018-2022.pgn.xz");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep.bin");
    let missing = dir.path().join("missing.pgn");
    let run = |extra: &[&str], code: i32, what: &str| {
        let mut args = vec!["repertoire", s(&games), "-o", s(&out)];
        args.extend(extra);
        polybook_fails(&args, code, what);
        assert!(!out.exists(), "{extra:?} wrote a book");
    };
    polybook_fails(
        &["repertoire", s(&missing), "--color", "white", "-o", s(&out)],
        1,
        "missing.pgn",
    );
    run(
        &["--color", "white", "--min-prob", "150"],
        2,
        "--min-prob 150",
    );
    run(&["--color", "white", "--min-prob=-1"], 2, "--min-prob -1");
    run(&["--color", "white", "--width", "0"], 2, "--width 0");
    run(&["--color", "white", "--max-ply", "0"], 2, "--max-ply 0");
    let o = common::polybook(&["repertoire", s(&games), "-o", s(&out), "--color", "green"]);
    common::failed(&o, 2, "not a colour");
    run(
        &["--color", "white", "--player", "Nobody"],
        1,
        "no games of 'Nobody'",
    );
    run(
        &["--color", "white", "--scores", s(&data("books/gm2001.bin"))],
        1,
        "holds no engine scores",
    );
    run(
        &["--color", "white", "--scores", s(&missing)],
        1,
        "missing.pgn",
    );
    // Tallies: one made with --player lacks the opponents' moves; no names to filter by.
    let tally = dir.path().join("magnus.parquet");
    polybook_ok(&[
        "tally",
        s(&games),
        "-o",
        s(&tally),
        "--player",
        PLAYER,
        "-q",
    ]);
    let with_tally = |extra: &[&str], code: i32, what: &str| {
        let mut args = vec!["repertoire", s(&tally), "--color", "white", "-o", s(&out)];
        args.extend(extra);
        polybook_fails(&args, code, what);
        assert!(!out.exists(), "{extra:?} wrote a book");
    };
    with_tally(&[], 1, "made with --player");
    with_tally(&["--player", PLAYER], 2, "--player reads PGN games");
    with_tally(&[s(&games)], 2, "either PGN games or tallies");
}
