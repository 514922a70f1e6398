//! `polybook match` with more than two engines: a gauntlet of polybook's own engine against
//! Debian's Stockfish and Glaurung at a very fast time control from the GNU Chess book, and a round
//! robin of three differently set-up builtin engines at fixed nodes. The PGN is read back by
//! python-chess (tests/match_check.py: every game legal to its end, its result consistent with
//! the final position); the table and the JSON must add up; bad input gets one line.

use crate::common;

use serde_json::Value;

use common::{
    gnuchess_book, match_check, polybook, polybook_match, polybook_match_ok, stderr, stdout,
};

/// Every game is legal to its end (no python-chess error), its result agrees with the final
/// position, its book moves are in the book, and it carries the tournament's Event tag; the
/// Round tags number the games 1, 2, ... in some order.
fn assert_games_are_sound(games: &[Value], event: &str) {
    for g in games {
        assert_eq!(g["errors"], serde_json::json!([]), "{g}");
        assert_eq!(g["consistent"], true, "{g}");
        assert_eq!(g["event"], event, "{g}");
        assert!(
            g["in_book"].as_array().unwrap().iter().all(|b| b == true),
            "{g}"
        );
        assert_eq!(
            g["plycount"].as_i64().unwrap(),
            g["moves"].as_array().unwrap().len() as i64
        );
    }
    let mut rounds: Vec<usize> = games
        .iter()
        .map(|g| g["round"].as_str().unwrap().parse().unwrap())
        .collect();
    rounds.sort();
    assert_eq!(rounds, (1..=games.len()).collect::<Vec<_>>());
}

/// The games between `a` and `b` (either colour).
fn between<'a>(games: &'a [Value], a: &str, b: &str) -> Vec<&'a Value> {
    games
        .iter()
        .filter(|g| (g["white"] == a && g["black"] == b) || (g["white"] == b && g["black"] == a))
        .collect()
}

#[test]
fn a_gauntlet_of_builtin_against_stockfish_and_glaurung() {
    let (stockfish, glaurung) = (common::stockfish(), common::glaurung());
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("gauntlet.pgn");
    let book = gnuchess_book();
    let (sf, gl) = (format!("SF=cmd:{stockfish}"), format!("cmd:{glaurung}"));
    let out = polybook(&[
        "match",
        "--tournament",
        "gauntlet",
        "--engine",
        "builtin",
        "--engine",
        &sf,
        "--engine",
        &gl,
        "--each",
        "Hash=16",
        "--option",
        "2:UCI_LimitStrength=true",
        "--option",
        "2:UCI_Elo=1500",
        // Glaurung searches with two threads unless told otherwise.
        "--option",
        "3:Threads=1",
        "--option",
        "3:OwnBook=false",
        "--tc",
        "1+0.01",
        "--games",
        "2",
        "--concurrency",
        "2",
        "--book",
        book.to_str().unwrap(),
        "--seed",
        "7",
        "--event",
        "Gauntlet test",
        "--pgn",
        pgn.to_str().unwrap(),
        "--json",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(report["tournament"], "gauntlet");
    let names: Vec<&str> = report["engines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(names[0].starts_with("polybook"), "{names:?}");
    assert_eq!(names[1], "SF", "the name given in the spec");
    assert_eq!(names[2], "Glaurung 2.2", "the engine's own id name");
    assert_eq!(report["games"], 4);
    assert_eq!(report["scheduled"], 4);
    assert_eq!(report["interrupted"], false);

    // Two pairings (the first engine against each other), two games each.
    let pairings = report["pairings"].as_array().unwrap();
    assert_eq!(pairings.len(), 2);
    for (p, opponent) in pairings.iter().zip(["SF", "Glaurung 2.2"]) {
        assert_eq!(p["engines"], serde_json::json!([names[0], opponent]));
        assert_eq!(p["games"], 2);
        let wdl = ["wins", "draws", "losses"].map(|k| p[k].as_u64().unwrap());
        assert_eq!(wdl.iter().sum::<u64>(), 2);
        // One colour-swapped pair: one of LL, LD, DD/WL, WD, WW.
        let penta: Vec<u64> = p["pentanomial"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert_eq!(penta.iter().sum::<u64>(), 1, "{p}");
        let terminations: u64 = p["terminations"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(terminations, 2);
    }

    // The ranking: every engine once; polybook played 4 games, each opponent 2; the points add
    // up to the games played, and each engine's W/D/L to its games.
    let ranking = report["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 3);
    let mut points = 0.0;
    for (i, row) in ranking.iter().enumerate() {
        assert_eq!(row["rank"], i + 1);
        let games = row["games"].as_u64().unwrap();
        let expected = if row["name"] == names[0] { 4 } else { 2 };
        assert_eq!(games, expected, "{row}");
        let wdl = ["wins", "draws", "losses"].map(|k| row[k].as_u64().unwrap());
        assert_eq!(wdl.iter().sum::<u64>(), games);
        let score = row["score"].as_f64().unwrap();
        assert_eq!(score, (wdl[0] as f64 + wdl[1] as f64 / 2.0) / games as f64);
        points += score * games as f64;
        if i > 0 {
            assert!(ranking[i - 1]["score"].as_f64().unwrap() >= score);
        }
    }
    assert!((points - 4.0).abs() < 1e-9, "{points}");

    // The PGN: all four games, sound, with the right players; both colours in each pairing;
    // the same opening for every pairing (the same book moves in all four games).
    let games = match_check(&pgn, Some(&book));
    assert_eq!(games.len(), 4);
    assert_games_are_sound(&games, "Gauntlet test");
    for opponent in ["SF", "Glaurung 2.2"] {
        let mine = between(&games, names[0], opponent);
        assert_eq!(mine.len(), 2, "{opponent}");
        assert_ne!(mine[0]["white"], mine[1]["white"], "colours swapped");
    }
    assert!(
        between(&games, "SF", "Glaurung 2.2").is_empty(),
        "a gauntlet"
    );
    let opening = &games[0]["book_moves"];
    assert!(!opening.as_array().unwrap().is_empty());
    assert!(
        games.iter().all(|g| &g["book_moves"] == opening),
        "shared opening"
    );
}

#[test]
fn a_round_robin_of_three_builtin_engines() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("rr.pgn");
    let book = gnuchess_book();
    let out = polybook_match_ok(
        &[
            "Plain=builtin",
            "Small hash=builtin:Hash=1",
            "No null=builtin:NullMove=false",
        ],
        &[
            "--nodes",
            "1500",
            "--games",
            "4",
            "--concurrency",
            "2",
            "--book",
            book.to_str().unwrap(),
            "--book-plies",
            "6",
            "--seed",
            "3",
            "--pgn",
            pgn.to_str().unwrap(),
        ],
    );
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    // Rank Name Elo +/- Games Score Draw, as cutechess-cli prints it.
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["Rank", "Name", "Elo", "+/-", "Games", "Score", "Draw"]
    );
    let mut points = 0.0;
    let mut seen = Vec::new();
    for (i, line) in lines[1..4].iter().enumerate() {
        let rank: usize = line[..4].trim().parse().unwrap();
        assert_eq!(rank, i + 1, "{text}");
        let name = ["Plain", "Small hash", "No null"]
            .into_iter()
            .find(|n| line[5..].starts_with(n))
            .unwrap_or_else(|| panic!("a name in {line:?}"));
        seen.push(name);
        let fields: Vec<&str> = line[5 + name.len()..].split_whitespace().collect();
        let games: f64 = fields[2].parse().unwrap();
        let score: f64 = fields[3].trim_end_matches('%').parse().unwrap();
        assert_eq!(games, 8.0, "each engine plays two pairings of 4: {line}");
        points += games * score / 100.0;
    }
    seen.sort();
    assert_eq!(seen, ["No null", "Plain", "Small hash"]);
    // Scores are printed to 0.1%: the points add up to the 12 games within that rounding.
    assert!((points - 12.0).abs() < 0.03, "{points}: {text}");

    // Then every pairing, W-D-L and the pentanomial counts of its two pairs.
    let at = lines.iter().position(|l| l.starts_with("Pairing")).unwrap();
    let header: Vec<&str> = lines[at].split_whitespace().collect();
    assert_eq!(
        header,
        ["Pairing", "W-D-L", "Score", "LL", "LD", "DD/WL", "WD", "WW"]
    );
    for (line, label) in lines[at + 1..at + 4].iter().zip([
        "Plain vs Small hash",
        "Plain vs No null",
        "Small hash vs No null",
    ]) {
        assert!(line.starts_with(label), "{line}");
        let fields: Vec<&str> = line[label.len()..].split_whitespace().collect();
        let wdl: u32 = fields[0]
            .split('-')
            .map(|n| n.parse::<u32>().unwrap())
            .sum();
        assert_eq!(wdl, 4, "{line}");
        let pairs: u32 = fields[2..].iter().map(|n| n.parse::<u32>().unwrap()).sum();
        assert_eq!(pairs, 2, "{line}");
    }
    common::assert_contains(&text, "games 12 of 12");

    let games = match_check(&pgn, Some(&book));
    assert_eq!(games.len(), 12);
    assert_games_are_sound(&games, "polybook match");
    for (a, b) in [
        ("Plain", "Small hash"),
        ("Plain", "No null"),
        ("Small hash", "No null"),
    ] {
        let mine = between(&games, a, b);
        assert_eq!(mine.len(), 4, "{a} vs {b}");
        let white = mine.iter().filter(|g| g["white"] == a).count();
        assert_eq!(white, 2, "{a} has White in half its games against {b}");
    }
    // Opening k is the same for every pairing: games with the same book moves come in sixes
    // (three pairings, both colours).
    let mut openings: Vec<String> = games.iter().map(|g| g["book_moves"].to_string()).collect();
    openings.sort();
    openings.dedup();
    assert!(openings.len() <= 2, "{openings:?}");
}

#[test]
fn bad_tournaments_fail_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("never.pgn");
    let pgn_arg = pgn.to_str().unwrap().to_string();
    let three = [
        "--engine", "builtin", "--engine", "builtin", "--engine", "builtin",
    ];
    let with_three = |extra: &[&'static str]| {
        let mut v: Vec<&'static str> = three.to_vec();
        v.extend(extra);
        v
    };
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["--engine", "builtin", "--tournament", "gauntlet"],
            2,
            "two engines are needed, one was given",
        ),
        (
            with_three(&["--sprt", "elo0=0,elo1=5"]),
            2,
            "--sprt tests the difference between two engines",
        ),
        (
            vec![
                "--engine",
                "A=builtin",
                "--engine",
                "A=builtin:Hash=1",
                "--engine",
                "builtin",
            ],
            2,
            "engine name 'A' is given twice",
        ),
        (
            with_three(&["--option", "4:Hash=1"]),
            2,
            "engine number '4' is not 1 to 3",
        ),
        (with_three(&["--each", "Hash"]), 2, "--each 'Hash'"),
        (
            vec!["--engine", "=builtin", "--engine", "builtin"],
            2,
            "no name before '='",
        ),
        (
            with_three(&["--each", "NoSuchOption=1"]),
            1,
            "has no option 'NoSuchOption'",
        ),
        (
            with_three(&["--engine", "cmd:/no/such/engine"]),
            1,
            "cannot start '/no/such/engine'",
        ),
    ];
    for (args, code, message) in cases {
        let mut full = vec!["match", "--pgn", &pgn_arg, "--nodes", "100"];
        full.extend(&args);
        common::assert_refused_at_once(&full, code, message, &pgn);
    }
    // An unknown kind of tournament: clap's usage error names the choices.
    let out = polybook_match(
        &["builtin", "builtin", "builtin"],
        &["--tournament", "swiss"],
    );
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(&stderr(&out), "expected round-robin or gauntlet");
}

/// An engine that crashes in every game (tests/fake_engine.py) loses those games, is started
/// again, and the log names it by its number in the tournament; the other games go on.
#[test]
fn a_crashing_engine_loses_its_games_and_the_tournament_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("crash.pgn");
    let fake = format!("Crasher={}", common::fake_engine("crash", 2));
    let out = polybook_match(
        &["A=builtin", "B=builtin:Hash=8", &fake],
        &[
            "--depth",
            "2",
            "--games",
            "2",
            "--pgn",
            pgn.to_str().unwrap(),
            "--json",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    common::assert_contains(&err, "engine 3 (Crasher) restarted");
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["games"], 6);
    let crasher = common::json_find(&report["ranking"], "name", "Crasher");
    assert_eq!(crasher["losses"], 4, "{crasher}");
    assert_eq!(crasher["rank"], 3);
    let games = match_check(&pgn, Some(&gnuchess_book()));
    assert_eq!(games.len(), 6);
    for g in &games {
        let crashed = g["white"] == "Crasher" || g["black"] == "Crasher";
        assert_eq!(g["termination"] == "abandoned", crashed, "{g}");
        assert_eq!(g["consistent"], true, "{g}");
    }
}

/// A tournament of a billion games a pairing (a cap it never reaches) keeps no schedule and no
/// opening per game: it starts at once, in little memory, and stops on Ctrl-C (it once reserved
/// 72 GB for its schedule and aborted).
#[test]
fn a_billion_games_a_pairing_start_at_once_in_little_memory() {
    crate::arena::a_billion_games_are_a_cap_not_a_reservation(&common::match_args(
        &["builtin:Hash=1", "builtin:Hash=1", "builtin:Hash=1"],
        &["--nodes", "200", "--concurrency", "2"],
    ));
}
