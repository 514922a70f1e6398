//! `polybook explore GAMES.pgn [--player NAME]`: the games explorer. Its counts under every filter
//! against python-chess (`tests/games_check.py`, which reads the games again and counts by rules
//! written out there), several accounts and a pattern for one player, and what it refuses: files
//! that are not PGN, a player in no game, more games than `--memory`, bad query parameters.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use crate::explore::{Served, encode};

use common::{data, piped, polybook, stderr};

fn lichess() -> String {
    common::lichess_magnus().display().to_string()
}

/// `games_check.py`: the server's answers about `games` agree with python-chess's reading of
/// them, seen from `player` (`-`: every game from White's side) up to `max_ply`.
fn agrees_with_python_chess(served: &Served, games: &str, player: &str, max_ply: &str) {
    let out = common::python(
        include_str!("../games_check.py"),
        &[&served.url, games, player, max_ply],
    );
    assert!(out.ends_with("ok\n"), "{out}");
}

/// A player's games: each of 80 positions (the 40 most played and 40 drawn at random) under 17
/// filter sets (colour, speed, rated, rating ranges, months, result, opponent, all at once), and
/// 20 games replayed, agree with python-chess field by field.
#[test]
fn a_players_counts_agree_with_python_chess() {
    let games = lichess();
    let served = Served::start(&[&games, "--player", "DrNykterstein"]);
    agrees_with_python_chess(&served, &games, "DrNykterstein", "50");
}

/// Without `--player`: every game, seen from White's side, and the rating filter on both players'
/// average; with a smaller `--max-ply`.
#[test]
fn all_games_counts_agree_with_python_chess() {
    let games = data("pgn/lichess_magnus_analysed.pgn.xz")
        .display()
        .to_string();
    let served = Served::start(&[&games, "--max-ply", "30"]);
    agrees_with_python_chess(&served, &games, "-", "30");
}

/// One player under several names: a pattern and names in any case find the same games, and two
/// players' names find the games of either, as many as python-chess counts from the tags.
#[test]
fn several_accounts_and_a_pattern() {
    let games = lichess();
    let by_name = Served::start(&[&games, "--player", "drnykterstein"]);
    let by_pattern = Served::start(&[&games, "--player-regex", "^DRNYK"]);
    for target in [
        "/api/games",
        "/api/games?moves=e4+c5&speed=bullet&color=white",
    ] {
        let (a, b) = (by_name.get(target), by_pattern.get(target));
        assert_eq!((a.status, b.status), (200, 200));
        assert_eq!(a.json(), b.json(), "{target}");
    }
    let either = Served::start(&[
        &games,
        "--player",
        "DrNykterstein",
        "--player",
        "penguingim1",
    ]);
    let books = either.get("/api/books").json();
    let counted = common::python(
        r#"
import sys, lzma, chess.pgn
names = {"drnykterstein", "penguingim1"}
n = 0
with lzma.open(sys.argv[1], "rt") as f:
    while (h := chess.pgn.read_headers(f)) is not None:
        standard = h.get("Variant", "Standard") in ("Standard", "From Position")
        finished = h.get("Result") in ("1-0", "0-1", "1/2-1/2")
        player = h.get("White", "").lower() in names or h.get("Black", "").lower() in names
        n += standard and finished and player
print(n)
"#,
        &[&games],
    );
    assert_eq!(books["games"]["games"].to_string(), counted.trim());
    assert_eq!(
        books["games"]["player"],
        serde_json::json!(["drnykterstein", "penguingim1"])
    );
}

/// Bad query parameters are a 400 with the reason (never a 500); a filter that leaves no game is
/// an empty answer; a game that does not exist is a 404; without games, `/api/games` is a 404.
#[test]
fn bad_queries_are_refused_with_the_reason() {
    let games = lichess();
    let served = Served::start(&[&games, "--player", "DrNykterstein"]);
    for (query, says) in [
        ("speed=turbo", "speed='turbo'"),
        ("color=red", "color='red': white, black or both"),
        ("rating=3000-2000", "its minimum is above its maximum"),
        ("rating=abc", "MIN-MAX"),
        ("since=2020-13", "since='2020-13': a month as YYYY-MM"),
        ("since=2021-05&until=2021-01", "before since"),
        ("result=won", "win, draw, loss"),
        ("mode=ranked", "rated, casual or all"),
        ("depth=20", "unknown parameter 'depth'"),
        ("speed=bullet&speed=blitz", "given twice"),
        ("moves=e4+e4", "is illegal"),
        ("fen=xyz", "invalid FEN"),
        ("opponent=%ff%fe", ""),
    ] {
        let reply = served.get(&format!("/api/games?{query}"));
        if says.is_empty() {
            assert_eq!(reply.status, 200, "{query}");
            continue;
        }
        assert_eq!(reply.status, 400, "{query}");
        reply.assert_says(says);
    }
    let none = served
        .get("/api/games?moves=e4&color=white&rating=4000-")
        .json();
    assert_eq!(none["games"], 0);
    assert_eq!(none["moves"], serde_json::json!([]));
    let reply = served.get("/api/game?id=999999");
    assert_eq!(reply.status, 404);
    reply.assert_says("not a game (the games are numbered from 0 to");
    let huge = served.get("/api/game?id=99999999999999999999999");
    assert_eq!(huge.status, 404);
    assert_eq!(served.get("/api/game?id=1&x=2").status, 400);
    // An id is a number in plain decimal digits: no sign, space or leading zero.
    assert_eq!(served.get("/api/game?id=0").status, 200);
    assert_eq!(served.get("/api/game?id=1").json()["id"], 1);
    let no_id = served.get("/api/game");
    assert_eq!(no_id.status, 400);
    no_id.assert_says("no id: /api/game?id=N names a game (numbered from 0 to ");
    // `+` is a space in a query; `%2B` a plus sign.
    for (id, shown) in [
        ("abc", "abc"),
        ("-1", "-1"),
        ("%2B1", "+1"),
        ("+1", " 1"),
        ("1+", "1 "),
        ("00000000001", "00000000001"),
        ("1.0", "1.0"),
        ("", ""),
    ] {
        let reply = served.get(&format!("/api/game?id={id}"));
        assert_eq!(reply.status, 400, "{id}");
        assert!(
            reply.json()["error"]
                .as_str()
                .unwrap()
                .starts_with(&format!("id='{shown}': not a game's number (")),
            "{id}: {}",
            reply.json()
        );
    }
    // The same rule for the numbers of /api/games' rating.
    for rating in ["%2B1800-", "01800-", "1800+-+2200", "+1800-2200", "-02200"] {
        let reply = served.get(&format!("/api/games?rating={rating}"));
        assert_eq!(reply.status, 400, "{rating}");
        reply.assert_says("rating=");
    }
    for rating in ["0-", "1800-2200", "-2200"] {
        assert_eq!(
            served.get(&format!("/api/games?rating={rating}")).status,
            200
        );
    }
    let fen = encode("8/8/8/8/8/8/8/k6K w - - 0 1");
    let game = served.get(&format!("/api/game?id=1&fen={fen}")).json();
    assert_eq!(game["ply"], serde_json::Value::Null);

    let book = common::gnuchess_book().display().to_string();
    let books_only = Served::start(&[&book]);
    let reply = books_only.get("/api/games");
    assert_eq!(reply.status, 404);
    reply.assert_says("no games are shown");
    assert!(books_only.get("/api/books").json()["games"].is_null());
}

/// `--repertoire REP.bin`: every game object of the API (the top and recent games of several
/// positions, from both sides, and each of them whole) carries where the game left the book,
/// exactly `check --json`'s line for the game's number; without `--repertoire` there is none.
#[test]
fn the_games_say_where_they_left_the_repertoire_as_check_does() {
    let games = lichess();
    let dir = tempfile::tempdir().unwrap();
    let rep = dir.path().join("rep.bin");
    common::build_magnus_white_repertoire(&rep);
    let rep_str = rep.display().to_string();
    let checked = polybook(&[
        "check",
        &games,
        "--book",
        &rep_str,
        "--player",
        "DrNykterstein",
        "--json",
        "-q",
    ]);
    assert!(checked.status.success(), "{}", stderr(&checked));
    // check's verdict and players by game number (its last line is the summary).
    let verdicts: std::collections::HashMap<u64, (serde_json::Value, [serde_json::Value; 2])> =
        common::stdout(&checked)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter_map(|g| {
                let n = g["game"].as_u64()?;
                let verdict = serde_json::json!({
                    "game": n, "who": g["who"], "ply": g["ply"], "move": g["move"]
                });
                Some((n, (verdict, [g["white"].clone(), g["black"].clone()])))
            })
            .collect();
    assert!(verdicts.len() > 100, "{}", verdicts.len());

    let served = Served::start(&[
        &games,
        "--player",
        "DrNykterstein",
        "--repertoire",
        &rep_str,
    ]);
    let plain = Served::start(&[&games, "--player", "DrNykterstein"]);
    let mut seen = std::collections::BTreeSet::new();
    let mut kinds = std::collections::BTreeSet::new();
    for query in [
        "",
        "moves=e4",
        "moves=d4",
        "moves=e4+c5",
        "moves=e4+e5+Nf3",
        "moves=d4+Nf6+c4",
        "color=black",
        "moves=e4&color=black",
        "moves=Nf3&color=white",
        "moves=e4+c5+Nf3+d6",
    ] {
        let answer = served.get(&format!("/api/games?{query}")).json();
        let without = plain.get(&format!("/api/games?{query}")).json();
        for (moves, with_book) in [(&without["moves"], false), (&answer["moves"], true)] {
            for m in moves.as_array().unwrap() {
                for g in ["top", "recent"]
                    .iter()
                    .flat_map(|list| m[*list].as_array().unwrap())
                {
                    if !with_book {
                        assert!(g.get("repertoire").is_none(), "{query}: {g}");
                        continue;
                    }
                    let rep = &g["repertoire"];
                    let n = rep["game"]
                        .as_u64()
                        .unwrap_or_else(|| panic!("{query}: {g}"));
                    let (verdict, players) = &verdicts[&n];
                    assert_eq!(rep, verdict, "{query}: game {}", g["id"]);
                    // The number is the game's: the same players as check's line.
                    assert_eq!(
                        [&g["white"], &g["black"]],
                        [&players[0], &players[1]],
                        "{query}"
                    );
                    kinds.insert(rep["who"].as_str().unwrap().to_string());
                    seen.insert((g["id"].as_u64().unwrap(), n));
                }
            }
        }
    }
    assert!(seen.len() > 30, "{}", seen.len());
    for who in ["player", "opponent", "end"] {
        assert!(kinds.contains(who), "{who}: {kinds:?}");
    }
    // One game whole: the same object.
    for &(id, n) in seen.iter().take(20) {
        let game = served.get(&format!("/api/game?id={id}")).json();
        let verdict = &verdicts[&n].0;
        assert_eq!(&game["repertoire"], verdict, "game {id}");
        // The move where it left the book is the game's move there.
        if !verdict["move"].is_null() {
            let ply = verdict["ply"].as_u64().unwrap() as usize;
            assert_eq!(game["moves"][ply]["uci"], verdict["move"], "game {id}");
        }
        let game = plain.get(&format!("/api/game?id={id}")).json();
        assert!(game.get("repertoire").is_none(), "game {id}");
    }
}

/// What `explore` refuses before it serves: one line on standard error, a non-zero exit.
#[test]
fn bad_games_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("book.pgn");
    std::fs::copy(common::gnuchess_book(), &binary).unwrap();
    let binary = binary.display().to_string();
    let games = lichess();
    for (args, code, says) in [
        (vec![binary.as_str()], 1, "binary data, not PGN text"),
        (
            vec![games.as_str(), "--player", "nobody"],
            1,
            "no game to explore in",
        ),
        (
            vec![games.as_str(), "--memory", "1M"],
            1,
            "need more memory than --memory 1 MiB allows",
        ),
        (
            vec![games.as_str(), "--max-ply", "0"],
            2,
            "--max-ply must be at least 1",
        ),
        (
            vec![games.as_str(), "--player-regex", "(unclosed"],
            2,
            "--player-regex '(unclosed'",
        ),
        (
            vec![common::gnuchess_book().to_str().unwrap(), "--player", "x"],
            2,
            "need games to explore",
        ),
        (vec!["no/such/file.pgn"], 1, "no/such/file.pgn"),
        (
            vec![
                common::gnuchess_book().to_str().unwrap(),
                "--repertoire",
                "r.bin",
            ],
            2,
            "--repertoire checks games against the book: give games to explore",
        ),
        (
            vec![games.as_str(), "--repertoire", "no/such/rep.bin"],
            1,
            "no/such/rep.bin",
        ),
    ] {
        let out = polybook(&[&["explore", "--port", "0"][..], &args].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let nobody = polybook(&["explore", &games, "--player", "nobody", "--port", "0"]);
    let err = stderr(&nobody);
    assert!(
        err.contains("10,024 read") && err.contains("the player: 'nobody'"),
        "{err}"
    );
}

/// Ctrl-C while the games are read stops `explore` within a second, exit 130.
#[test]
fn an_interrupt_stops_the_reading() {
    let games = data("pgn/gnuchess-book_1.02.pgn.xz");
    let child = piped()
        .args(["explore", "--port", "0"])
        .arg(&games)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let sent = Instant::now();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    common::assert_contains(&stderr(&out), "interrupted");
    assert!(out.stdout.is_empty(), "no URL printed");
}
