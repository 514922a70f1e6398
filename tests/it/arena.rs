//! `polybook match` with real engines: polybook's own against Debian's Stockfish from the GNU
//! Chess book, every game checked by python-chess (tests/match_check.py); an engine killed
//! mid-match; misbehaving engines (tests/fake_engine.py) that play an illegal move, crash, hang
//! or never finish the handshake; an SPRT that stops a match; Ctrl-C; bad input.

use crate::common;
use common::path_str as s;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use polybook::arena::clock::PerMove;
use polybook::arena::player::EngineSpec;
use polybook::arena::runner::{MatchConfig, MoveLimit};
use polybook::arena::session::{Report, Session, SessionConfig};
use polybook::book::{Book, Books, ChooseOptions};
use serde_json::Value;

use common::{
    BIN, fake_engine, gnuchess_book as book, match_check, polybook, polybook_match,
    polybook_match_ok,
};

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// Games of `games` whose Termination is `tag`.
fn with_termination<'a>(games: &'a [Value], tag: &str) -> Vec<&'a Value> {
    games.iter().filter(|g| g["termination"] == tag).collect()
}

#[test]
fn a_match_against_stockfish_from_a_book() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("m.pgn");
    let out = polybook_match_ok(
        &["builtin:Hash=16", &format!("cmd:{}", common::stockfish())],
        &[
            "--option",
            "2:Skill Level=3",
            "--option",
            "2:Hash=16",
            "--book",
            s(&book()),
            "--book-plies",
            "8",
            "--games",
            "4",
            "--tc",
            "2+0.02",
            "--seed",
            "11",
            "--pgn",
            s(&pgn),
            "--json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let games = match_check(&pgn, Some(&book()));
    assert_eq!(games.len(), 4, "{stderr}");

    let mut points = 0.0;
    for (i, g) in games.iter().enumerate() {
        assert!(g["errors"].as_array().unwrap().is_empty(), "{g}");
        assert_eq!(
            g["round"],
            (i + 1).to_string(),
            "games in the order they ended (one at a time)"
        );
        assert!(
            g["consistent"].as_bool().unwrap(),
            "result vs final position: {g}"
        );
        assert_eq!(
            g["plycount"].as_u64().unwrap() as usize,
            g["moves"].as_array().unwrap().len()
        );
        let book_moves = strs(&g["book_moves"]);
        assert!(!book_moves.is_empty() && book_moves.len() <= 8, "{g}");
        assert_eq!(
            strs(&g["moves"])[..book_moves.len()],
            book_moves[..],
            "book plies come first"
        );
        assert!(
            g["in_book"].as_array().unwrap().iter().all(|b| b == true),
            "every {{book}} move is in the book: {g}"
        );
        let polybook_white = g["white"].as_str().unwrap().starts_with("polybook");
        assert_eq!(
            polybook_white,
            i % 2 == 0,
            "the first engine has White in odd rounds"
        );
        points += match (g["result"].as_str().unwrap(), polybook_white) {
            ("1-0", true) | ("0-1", false) => 1.0,
            ("1/2-1/2", _) => 0.5,
            _ => 0.0,
        };
    }
    for pair in games.chunks(2) {
        assert_eq!(
            pair[0]["book_moves"], pair[1]["book_moves"],
            "a pair shares its opening"
        );
        assert_eq!(pair[0]["white"], pair[1]["black"], "colours swapped");
        assert_eq!(pair[0]["black"], pair[1]["white"], "colours swapped");
    }
    assert_ne!(
        games[0]["book_moves"], games[2]["book_moves"],
        "two pairs, two openings (seed 11)"
    );
    // The report agrees with the PGN.
    assert_eq!(report["games"], 4);
    let score = report["score"].as_f64().unwrap();
    assert!(
        (score * 4.0 - points).abs() < 1e-9,
        "report {report} vs PGN {points}"
    );
}

/// The pids of the processes whose parent is `parent` and whose name is `name`.
fn children(parent: u32, name: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = &stat[open + 1..close];
        let ppid = stat[close + 1..].split_whitespace().nth(1);
        if comm == name && ppid == Some(&parent.to_string()) {
            found.push(stat[..open].trim().parse().unwrap());
        }
    }
    found
}

/// Whether one of process `pid`'s threads is running: an idle UCI engine sleeps on its input
/// and its search threads wait, so a running thread means it is searching, mid-game.
fn searching(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
            stat.rfind(')')
                .and_then(|close| stat[close + 1..].split_whitespace().next())
                == Some("R")
        })
    })
}

#[test]
fn an_engine_killed_mid_match_loses_that_game_and_the_match_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("k.pgn");
    let mut child = Command::new(BIN)
        .args(common::match_args(
            &["builtin:Hash=16", &format!("cmd:{}", common::stockfish())],
            &[
                "--option",
                "2:Skill Level=0",
                "--book",
                s(&book()),
                "--book-plies",
                "4",
                "--games",
                "4",
                "--movetime",
                "50",
                "--seed",
                "3",
                "--pgn",
                s(&pgn),
            ],
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The match's log, read as it comes.
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let log = log.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in
                std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok)
            {
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        })
    };
    // Once the first game is over (the start-up check, which starts and quits its own
    // Stockfish, is long done), kill the match's Stockfish while it searches: killed between two
    // games, it would only be restarted, with no game to lose.
    let start = Instant::now();
    while !log.lock().unwrap().contains("game 1/4") {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no game ended: {}",
            log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut killed = false;
    while start.elapsed() < Duration::from_secs(150) && !killed {
        // Running on two looks 10 ms apart: searching a move (50 ms), not the moment of work
        // that a new game's commands cost between two games.
        if let Some(&pid) = children(child.id(), "stockfish")
            .first()
            .filter(|&&pid| searching(pid))
            .filter(|&&pid| {
                std::thread::sleep(Duration::from_millis(10));
                searching(pid)
            })
        {
            killed = Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap()
                .success();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(killed, "found Stockfish searching under the match");
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    let stderr = log.lock().unwrap().clone();
    assert!(out.status.success(), "{stderr}");
    common::assert_contains(&stderr, "restarted");
    let games = match_check(&pgn, None);
    assert_eq!(games.len(), 4, "{stderr}");
    let abandoned = with_termination(&games, "abandoned");
    assert_eq!(abandoned.len(), 1, "{games:?}");
    let g = abandoned[0];
    assert!(
        g["consistent"].as_bool().unwrap(),
        "Stockfish, to move, lost: {g}"
    );
    assert!(
        g["final_comment"].as_str().unwrap().contains("crashed"),
        "{g}"
    );
    let stockfish_white = g["white"].as_str().unwrap().starts_with("Stockfish");
    assert_eq!(g["result"], if stockfish_white { "0-1" } else { "1-0" });
    // The other games were played out normally, by the restarted Stockfish.
    assert!(
        games
            .iter()
            .filter(|g| g["termination"] != "abandoned")
            .all(|g| g["consistent"] == true)
    );
}

/// A two-game match of polybook against a fake engine; returns the games and stderr.
fn against_fake(mode: &str, n: i32, limit: &[&str]) -> (Vec<Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("f.pgn");
    let mut args = vec!["match", "--engine", "builtin:Hash=8"];
    let spec = fake_engine(mode, n);
    args.extend(["--engine", &spec, "--games", "2", "--pgn", s(&pgn)]);
    args.extend(limit);
    let out = polybook(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    (match_check(&pgn, None), stderr)
}

fn assert_fake_lost(games: &[Value], tag: &str) {
    assert_eq!(games.len(), 2);
    for g in games {
        assert_eq!(g["termination"], tag, "{g}");
        assert!(
            g["consistent"].as_bool().unwrap(),
            "the fake, to move, lost: {g}"
        );
        let fake_white = g["white"].as_str().unwrap().starts_with("Fake");
        assert_eq!(g["result"], if fake_white { "0-1" } else { "1-0" }, "{g}");
    }
}

#[test]
fn an_illegal_move_loses() {
    let (games, _) = against_fake("illegal", 3, &["--depth", "2"]);
    assert_fake_lost(&games, "illegal move");
    assert!(
        games[0]["final_comment"]
            .as_str()
            .unwrap()
            .contains("illegal move")
    );
}

#[test]
fn a_crash_loses_and_the_engine_is_restarted() {
    let (games, stderr) = against_fake("crash", 2, &["--depth", "2"]);
    assert_fake_lost(&games, "abandoned");
    common::assert_contains(&stderr, "restarted");
}

#[test]
fn a_hang_loses_on_time_or_as_a_stall() {
    let (games, _) = against_fake("hang", 2, &["--tc", "1+0"]);
    assert_fake_lost(&games, "time forfeit");
    let (games, _) = against_fake("hang", 2, &["--movetime", "50"]);
    assert_fake_lost(&games, "stalled connection");
}

/// `polybook ARGS`, killed (and the test failed) if it has not ended within `limit`.
fn polybook_within(args: &[&str], limit: Duration) -> std::process::Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("polybook {} still runs after {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn an_engine_that_talks_without_end_loses_on_time_or_as_a_stall() {
    // It floods `info` lines instead of a `bestmove` (and ignores `stop`): the lines that keep
    // coming must not keep the match waiting past the clock or the move's limit.
    for (limit, tag) in [
        (&["--tc", "1+0"][..], "time forfeit"),
        (&["--movetime", "50"][..], "stalled connection"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("f.pgn");
        let spec = fake_engine("flood", 2);
        let mut args = vec!["match", "--engine", "builtin:Hash=8", "--engine", &spec];
        args.extend(["--games", "2", "--pgn", s(&pgn)]);
        args.extend(limit);
        let out = polybook_within(&args, Duration::from_secs(60));
        assert!(out.status.success(), "{}", common::stderr(&out));
        assert_fake_lost(&match_check(&pgn, None), tag);
    }
    // ... nor past the handshake's timeout.
    let chatty = fake_engine("chatty", 0);
    let args = common::match_args(&["builtin", &chatty], &["--handshake-timeout", "1"]);
    let out = polybook_within(&args, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("no 'uciok' within 1 s"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn a_hung_engine_without_a_clock_loses_after_the_move_timeout() {
    // Under --depth there is no clock to run out: --move-timeout says how long a move may take.
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("f.pgn");
    let spec = fake_engine("hang", 2);
    let mut args = vec!["match", "--engine", "builtin:Hash=8", "--engine", &spec];
    args.extend(["--games", "2", "--depth", "2", "--move-timeout", "1"]);
    args.extend(["--pgn", s(&pgn)]);
    let started = std::time::Instant::now();
    let out = polybook_within(&args, Duration::from_secs(60));
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_fake_lost(&match_check(&pgn, None), "stalled connection");
    for bad in ["0", "-1", "nan", "1e300"] {
        let bad = format!("--move-timeout={bad}");
        let args = common::match_args(&["builtin", "builtin"], &[&bad]);
        common::polybook_fails(&args, 2, "--move-timeout");
    }
}

#[test]
fn an_engine_line_past_the_cap_is_cut_and_the_game_goes_on() {
    // Every move comes after a line of 1 MiB, sixteen times the 64 KiB kept of an engine's line:
    // the rest of the line is skipped, the `bestmove` after it is read, the games end normally.
    let (games, _) = against_fake("longlines", 1024, &["--depth", "2"]);
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g["termination"], "normal", "{g}");
        assert!(g["consistent"].as_bool().unwrap(), "{g}");
    }
}

#[test]
fn a_hung_engine_is_ended_with_the_processes_it_started() {
    // The fake starts a child that sleeps, then hangs: when the match gives up on it, the child
    // goes too (the engine's process group is killed, not only its first process).
    let marker = format!("{}{}", std::process::id(), 424242);
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("f.pgn");
    let spec = fake_engine("forks", &marker);
    let args = common::match_args(
        &["builtin:Hash=8", &spec],
        &["--games", "2", "--movetime", "50", "--pgn", s(&pgn)],
    );
    let out = polybook_within(&args, Duration::from_secs(60));
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_fake_lost(&match_check(&pgn, None), "stalled connection");
    let left = Command::new("pgrep")
        .args(["-f", &format!("time.sleep.600. {marker}$")])
        .output()
        .unwrap();
    let pids = common::stdout(&left);
    for pid in pids.split_whitespace() {
        let _ = Command::new("kill").args(["-9", pid]).status();
    }
    assert!(pids.trim().is_empty(), "left running: {pids}");
}

#[test]
fn sprt_stops_a_decided_match() {
    let out = polybook_match_ok(
        &["builtin:Hash=8", &fake_engine("random", 0)],
        &[
            "--depth",
            "3",
            "--games",
            "40",
            "--sprt",
            "elo0=0,elo1=200,alpha=0.05,beta=0.05",
            "--json",
            "--quiet",
        ],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["sprt"]["verdict"], "H1", "{report}");
    let games = report["games"].as_u64().unwrap();
    assert!(games < 40, "stopped early: {report}");
    assert!(report["sprt"]["llr"].as_f64().unwrap() >= report["sprt"]["upper"].as_f64().unwrap());
}

#[test]
fn ctrl_c_keeps_the_finished_games() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("c.pgn");
    let mut child = Command::new(BIN)
        .args(common::match_args(
            &["builtin:Hash=8", "builtin:Hash=8"],
            &[],
        ))
        .args(["--movetime", "20", "--games", "100", "--pgn", s(&pgn)])
        .args(["--book", s(&book()), "--book-plies", "6"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once two games are in the PGN.
    common::wait_for_games(&mut child, &pgn, 2, Duration::from_secs(60));
    let engines = children(child.id(), "polybook");
    assert_eq!(engines.len(), 2, "the match runs its two engines");
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.lines().last().unwrap().contains("interrupted"),
        "{stderr}"
    );
    let games = match_check(&pgn, None);
    assert!(games.len() >= 2 && games.len() < 100, "{}", games.len());
    for g in &games {
        assert!(g["consistent"].as_bool().unwrap(), "{g}");
        assert_ne!(g["result"], "*", "only finished games are written");
    }
    // No engine is left running.
    std::thread::sleep(Duration::from_millis(200));
    for pid in engines {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "engine {pid} still runs"
        );
    }
}

#[test]
fn bad_input_fails_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("never.pgn");
    let pgn_arg = s(&pgn).to_string();
    let silent = fake_engine("silent", 0);
    let cases: Vec<(Vec<&str>, u8, &str)> = vec![
        (
            vec!["--engine", "builtin", "--engine", "cmd:/no/such/engine"],
            1,
            "cannot start '/no/such/engine'",
        ),
        (
            vec![
                "--engine",
                "builtin",
                "--engine",
                &silent,
                "--handshake-timeout",
                "1",
            ],
            1,
            "no 'uciok' within 1 s",
        ),
        (
            vec![
                "--engine",
                "builtin",
                "--engine",
                "builtin",
                "--option",
                "2:NoSuchOption=1",
            ],
            1,
            "has no option 'NoSuchOption'",
        ),
        (
            vec![
                "--engine",
                "builtin",
                "--engine",
                "builtin",
                "--book",
                "/no/such.bin",
            ],
            1,
            "/no/such.bin",
        ),
        (
            vec!["--engine", "builtin", "--engine", "builtin", "--tc", "ten"],
            2,
            "time control 'ten'",
        ),
        // Bad data, as in `search`, `probe` and `play`: exit 1.
        (
            vec![
                "--engine",
                "builtin",
                "--engine",
                "builtin",
                "--fen",
                "not a fen",
            ],
            1,
            "invalid FEN 'not a fen'",
        ),
        (
            vec!["--engine", "builtin"],
            2,
            "two engines are needed, one was given",
        ),
        (
            vec!["--engine", "builtin", "--engine", "stockfish"],
            2,
            "expected 'builtin'",
        ),
        (
            vec![
                "--engine", "builtin", "--engine", "builtin", "--option", "3:Hash=1",
            ],
            2,
            "not 1 or 2",
        ),
        (
            vec![
                "--engine",
                "builtin",
                "--engine",
                "builtin",
                "--sprt",
                "elo0=5,elo1=0",
            ],
            2,
            "elo1 must be greater",
        ),
        (
            vec![
                "--engine", "builtin", "--engine", "builtin", "--draw", "score=10",
            ],
            2,
            "movenumber is missing",
        ),
    ];
    for (args, code, message) in cases {
        let mut full = vec!["match", "--pgn", &pgn_arg];
        full.extend(&args);
        common::assert_refused_at_once(&full, i32::from(code), message, &pgn);
    }
}

#[test]
fn openings_from_an_epd_file_then_the_book() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("o.epd");
    // Two lines of Win At Chess (EPD with operations) and a FEN with its counters.
    let wac: Vec<String> = std::fs::read_to_string(common::data("epd/wac.epd"))
        .unwrap()
        .lines()
        .take(2)
        .map(str::to_string)
        .collect();
    let fen3 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    std::fs::write(
        &epd,
        format!("# openings\n{}\n\n{}\n{fen3}\n", wac[0], wac[1]),
    )
    .unwrap();
    let pgn = dir.path().join("o.pgn");
    polybook_match_ok(
        &["builtin:Hash=8", &fake_engine("random", 0)],
        &[
            "--depth",
            "2",
            "--games",
            "6",
            "--openings",
            s(&epd),
            "--pgn",
            s(&pgn),
            "--book",
            s(&book()),
            "--book-plies",
            "2",
            "--quiet",
        ],
    );
    let text = std::fs::read_to_string(&pgn).unwrap();
    let fens: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("[FEN \"").map(|f| f.trim_end_matches("\"]")))
        .collect();
    let board = |line: &str| {
        line.split_whitespace()
            .take(4)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(fens.len(), 6, "every game starts from a FEN");
    for (pair, start) in [&wac[0], &wac[1], &fen3.to_string()].iter().enumerate() {
        assert_eq!(board(fens[2 * pair]), board(start));
        assert_eq!(
            fens[2 * pair],
            fens[2 * pair + 1],
            "a pair shares its start"
        );
    }
    // From 1. e4 the GNU Chess book has moves: those games begin with two {book} plies.
    let games = match_check(&pgn, Some(&book()));
    assert_eq!(games.len(), 6);
    for g in &games[4..] {
        assert_eq!(strs(&g["book_moves"]).len(), 2, "{g}");
        assert!(g["in_book"].as_array().unwrap().iter().all(|b| b == true));
    }

    std::fs::write(&epd, "8/8/8/8/8/8/8/8 w - - 0 1\n").unwrap();
    let out = polybook_match(&["builtin", "builtin"], &["--openings", s(&epd)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    common::assert_contains(&stderr, "o.epd line 1");
}

#[test]
fn resign_and_draw_adjudication() {
    // polybook soon sees a won game against a random mover that says it is 10 pawns down: both
    // agree for 3 moves, so the random mover resigns.
    // (With the hand-crafted evaluation: the net mates the random mover before 3 moves agree.)
    let (games, _) = against_fake(
        "random",
        -1000,
        &[
            "--depth",
            "3",
            "--resign",
            "score=500,moves=3",
            "--option",
            "1:UseNNUE=false",
        ],
    );
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g["termination"], "adjudication", "{g}");
        let fake_white = g["white"].as_str().unwrap().starts_with("Fake");
        assert_eq!(g["result"], if fake_white { "0-1" } else { "1-0" }, "{g}");
        assert!(
            g["final_comment"].as_str().unwrap().contains("resigns"),
            "{g}"
        );
    }
    // Without the opponent's agreement (it says +0.00), nobody resigns: the games are played out.
    let (games, _) = against_fake(
        "random",
        0,
        &["--depth", "3", "--resign", "score=500,moves=3"],
    );
    assert!(
        games.iter().all(|g| g["termination"] == "normal"),
        "{games:?}"
    );

    // Two engines that both say 0.00: a draw from move 10 once each has said so 4 times.
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("d.pgn");
    polybook_match_ok(
        &[&fake_engine("random", 0), &fake_engine("random", 5)],
        &[
            "--depth",
            "1",
            "--games",
            "2",
            "--draw",
            "movenumber=10,score=10,moves=4",
            "--pgn",
            s(&pgn),
        ],
    );
    for g in match_check(&pgn, None) {
        assert_eq!(g["termination"], "adjudication", "{g}");
        assert_eq!(g["result"], "1/2-1/2");
        // Move 10 begins after ply 18: the earliest adjudication is at ply 18 or 19.
        let plies = g["moves"].as_array().unwrap().len();
        assert!((18..=19).contains(&plies), "{plies}");
    }
}

/// Ctrl-C and SIGTERM stop a match within a second even while an engine searches without end
/// (`--depth 100000`): the engines are told `stop` and left, the game in progress is not scored,
/// and the exit code is 130; a tournament the same.
#[test]
fn a_signal_stops_a_match_whose_engine_thinks_without_end() {
    let dir = tempfile::tempdir().unwrap();
    for (signal, extra) in [
        ("TERM", vec![]),
        ("INT", vec!["--engine", "builtin:Hash=4"]),
    ] {
        let pgn = dir.path().join(format!("{signal}.pgn"));
        let child = common::piped()
            .args(common::match_args(
                &["builtin:Hash=4", "builtin:Hash=4"],
                &[],
            ))
            .args(&extra)
            .args(["--depth", "100000", "--games", "2", "--pgn"])
            .arg(&pgn)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let sent = std::time::Instant::now();
        common::send_signal(child.id(), signal);
        let out = child.wait_with_output().unwrap();
        let took = sent.elapsed();
        assert!(took.as_secs_f64() < 1.5, "{signal}: stopped after {took:?}");
        assert_eq!(
            out.status.code(),
            Some(130),
            "{signal}: {}",
            common::stderr(&out)
        );
        assert!(
            std::fs::read_to_string(&pgn).unwrap_or_default().is_empty(),
            "{signal}: the game in progress was written"
        );
        assert!(!common::stderr(&out).contains("panicked"));
    }
}

/// A library session's settings: games of `engines` at 300 nodes a move from the start position
/// (then `books`, 4 plies), one at a time.
fn session_config(
    engines: Vec<EngineSpec>,
    books: Option<Books>,
    games: usize,
    seed: u64,
    pgn: &Path,
) -> SessionConfig {
    SessionConfig {
        settings: MatchConfig {
            engines: [engines[0].clone(), engines[1].clone()],
            book: books.map(Arc::new),
            book_plies: 4,
            choose: ChooseOptions::default(),
            starts: vec![shakmaty::Chess::default().into()],
            games,
            limit: MoveLimit::PerMove(PerMove {
                nodes: Some(300),
                ..PerMove::default()
            }),
            time_margin: Duration::ZERO,
            concurrency: 1,
            seed,
            resign: None,
            draw: None,
            event: "polybook match".to_string(),
            handshake_timeout: Duration::from_secs(5),
            move_timeout: Duration::from_secs(600),
        },
        engines,
        tournament: None,
        pgn: Some(pgn.to_path_buf()),
        learn: None,
        sprt: None,
        resume: false,
    }
}

/// The library's session of a tiny fixed-node match: its report serializes to the object
/// `polybook match --json` prints (the same fields and values, the time aside), its progress
/// lines are the command's, and its PGN log has the command's bytes.
#[test]
fn the_library_session_is_the_match_command() {
    let dir = tempfile::tempdir().unwrap();
    let (lib_pgn, cli_pgn) = (dir.path().join("lib.pgn"), dir.path().join("cli.pgn"));
    let book_path = book();
    let engine =
        |name: &str| EngineSpec::parse(&format!("{name}=builtin:Hash=1"), Path::new(BIN)).unwrap();
    let mut books = Books::new();
    books.push(
        book_path.display().to_string(),
        Book::open(&book_path).unwrap(),
    );
    let session = Session::new(session_config(
        vec![engine("A"), engine("B")],
        Some(books),
        4,
        11,
        &lib_pgn,
    ))
    .unwrap();
    assert_eq!(session.names(), ["A", "B"]);
    let mut lines = Vec::new();
    let finished = session.run(&Arc::new(AtomicBool::new(false)), |p| {
        lines.push(p.to_string())
    });
    assert!(finished.failure.is_none() && finished.pgn_error.is_none());
    let Report::Match(report) = &finished.report else {
        panic!("two engines play a match");
    };
    assert_eq!(report.score.games, 4);
    assert!(!report.interrupted);
    let mut lib: Value = serde_json::to_value(&finished.report).unwrap();

    let out = polybook_match_ok(
        &["A=builtin:Hash=1", "B=builtin:Hash=1"],
        &[
            "--nodes",
            "300",
            "--games",
            "4",
            "--book",
            s(&book_path),
            "--book-plies",
            "4",
            "--seed",
            "11",
            "--pgn",
            s(&cli_pgn),
            "--json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    for v in [&mut lib, &mut cli] {
        assert!(v["seconds"].as_f64().unwrap() >= 0.0);
        v["seconds"] = 0.into();
    }
    assert_eq!(lib, cli);
    let fields: Vec<&str> = cli
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        fields,
        [
            "draw_ratio",
            "draws",
            "elo",
            "elo_error95",
            "engines",
            "games",
            "interrupted",
            "los",
            "losses",
            "pentanomial",
            "score",
            "seconds",
            "seed",
            "sprt",
            "terminations",
            "wins"
        ]
    );
    assert_eq!(lines, stderr.lines().collect::<Vec<_>>(), "{stderr}");
    // The games, each on one line, the moves' times (`{+0.08/2 0.01s}`, or `{0.00s}` for a move
    // with no score) left out.
    let games = |path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        text.split("[Event ")
            .filter(|g| !g.is_empty())
            .map(|g| {
                g.split(' ')
                    .filter(|w| {
                        let w = w.strip_prefix('{').unwrap_or(w);
                        !(w.ends_with("s}") && w[..w.len() - 2].parse::<f64>().is_ok())
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<String>>()
    };
    assert_eq!(games(&lib_pgn).len(), 4);
    assert_eq!(games(&lib_pgn), games(&cli_pgn));
}

/// An interrupted session starts no game and says so.
#[test]
fn an_interrupted_library_session_plays_nothing() {
    let engine = EngineSpec::parse("builtin:Hash=1", Path::new(BIN)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("t.pgn");
    let engines = vec![engine.clone(), engine.clone(), engine];
    let session = Session::new(session_config(engines, None, 2, 1, &pgn)).unwrap();
    let mut lines = Vec::new();
    let finished = session.run(&Arc::new(AtomicBool::new(true)), |p| {
        lines.push(p.to_string())
    });
    let report = serde_json::to_value(&finished.report).unwrap();
    assert_eq!(report["tournament"], "round-robin", "{report}");
    assert_eq!(report["interrupted"], true, "{report}");
    assert_eq!(report["games"], 0, "{report}");
    assert_eq!(report["scheduled"], 6, "{report}");
    assert_eq!(lines.len(), 1, "the plan only: {lines:?}");
    assert_eq!(std::fs::read_to_string(&pgn).unwrap(), "");
}

/// A field of `/proc/PID/status` in kB (`VmHWM`, `VmPeak`).
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}

/// Runs `polybook match ARGS --pgn FILE` (a billion games: a cap that is never reached) until a
/// game is in the PGN, then interrupts it: it must have started at once, hold its memory to what
/// the games being played need (the resident peak, VmHWM, under 200 MB: nothing reserved per
/// game of the cap), and stop within a second of SIGINT with exit 130.
pub fn a_billion_games_are_a_cap_not_a_reservation(args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("cap.pgn");
    let mut child = common::piped()
        .args(args)
        .args(["--games", "1000000000", "--quiet", "--pgn"])
        .arg(&pgn)
        .spawn()
        .unwrap();
    common::wait_for_games(&mut child, &pgn, 1, Duration::from_secs(60));
    let resident = status_kb(child.id(), "VmHWM");
    assert!(
        resident < 200_000,
        "{args:?}: a peak of {resident} kB resident"
    );
    let sent = Instant::now();
    common::send_signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let stderr = common::stderr(&out);
    assert!(
        took < Duration::from_secs(1),
        "{args:?}: stopped after {took:?}"
    );
    assert_eq!(out.status.code(), Some(130), "{args:?}: {stderr}");
    common::assert_contains(&stderr, "interrupted");
}

/// An SPRT's `--games` is a cap for a test that stops itself: a billion takes no more memory
/// than ten (it once reserved 80 GB at the start and aborted).
#[test]
fn an_sprt_with_a_billion_game_cap_starts_at_once_in_little_memory() {
    a_billion_games_are_a_cap_not_a_reservation(&common::match_args(
        &["builtin:Hash=1", "builtin:Hash=1"],
        &["--nodes", "200", "--sprt", "elo0=0,elo1=5"],
    ));
}

/// Far more workers asked for than there are games: only as many as there are games are
/// started (a million threads took minutes to start and end), and the match plays as any other.
#[test]
fn a_concurrency_above_the_games_starts_one_worker_a_game() {
    let start = Instant::now();
    let out = polybook_match_ok(
        &["builtin:Hash=1", "builtin:Hash=1"],
        &[
            "--nodes",
            "200",
            "--games",
            "2",
            "--concurrency",
            "1000000",
            "--json",
            "--quiet",
        ],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["games"], 2, "{report}");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}

/// The games of a PGN file as python-chess reads them: each one's tags and its number of moves.
fn pgn_headers(path: &Path) -> Vec<Value> {
    common::python_games(
        path,
        r#"{"headers": dict(g.headers), "moves": len(list(g.mainline_moves())),
            "errors": [str(e) for e in g.errors]}"#,
    )
}

/// `--pgn` adds the games to a file that ends without a line break (or with one) after a blank
/// line: python-chess reads the old game and the new ones, every tag in place.
#[test]
fn games_appended_to_a_pgn_without_a_final_newline_stand_apart() {
    let dir = tempfile::tempdir().unwrap();
    let old = "[Event \"old\"]\n[Site \"?\"]\n[Date \"2024.01.01\"]\n[Round \"1\"]\n\
        [White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0";
    for (name, end) in [("bare.pgn", ""), ("newline.pgn", "\n")] {
        let pgn = common::write_file(&dir, name, format!("{old}{end}"));
        polybook_match_ok(
            &["builtin:Hash=1", "builtin:Hash=1"],
            &[
                "--nodes",
                "100",
                "--games",
                "2",
                "--quiet",
                "--pgn",
                s(&pgn),
            ],
        );
        let games = pgn_headers(&pgn);
        assert_eq!(games.len(), 3, "{name}: {games:?}");
        assert_eq!(games[0]["headers"]["Event"], "old", "{name}");
        assert_eq!(games[0]["moves"], 7, "{name}");
        for g in &games[1..] {
            assert_eq!(g["errors"], serde_json::json!([]), "{name}: {g}");
            assert_eq!(g["headers"]["Event"], "polybook match", "{name}: {g}");
            assert!(
                g["headers"]["White"]
                    .as_str()
                    .unwrap()
                    .starts_with("polybook")
            );
            assert!(g["moves"].as_u64().unwrap() > 0, "{name}: {g}");
        }
        let text = std::fs::read_to_string(&pgn).unwrap();
        common::assert_contains(&text, "1-0\n\n[Event \"polybook match\"]");
    }
}

/// A `--pgn` log moved away by another process mid-match: the next game creates it anew at its
/// path, with one warning line (even with `--quiet`), and no game is lost.
#[test]
fn a_pgn_log_moved_mid_match_is_written_anew() {
    let dir = tempfile::tempdir().unwrap();
    let (pgn, moved) = (dir.path().join("log.pgn"), dir.path().join("moved.pgn"));
    let child = common::piped()
        .args(common::match_args(
            &["builtin:Hash=1", "builtin:Hash=1"],
            &[
                "--nodes", "300", "--games", "8", "--quiet", "--json", "--pgn",
            ],
        ))
        .arg(&pgn)
        .spawn()
        .unwrap();
    let text = common::wait_for_text(&pgn, 3000, Duration::from_millis(20));
    assert!(text.contains("[Event "), "no game within a minute");
    std::fs::rename(&pgn, &moved).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = common::stderr(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("polybook: warning: the PGN log ")
            && stderr.contains("log.pgn' was moved or deleted: it is written anew from game "),
        "{stderr}"
    );
    let (before, after) = (pgn_headers(&moved), pgn_headers(&pgn));
    assert!(!before.is_empty() && !after.is_empty());
    assert_eq!(before.len() + after.len(), 8, "{before:?} {after:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["games"], 8);
}
