//! `match --resume`: a match or a round robin killed mid-way (SIGKILL: no clean-up) and run again
//! with `--resume` ends with the games, results and report of the same run left alone, each
//! game of its schedule once, as python-chess reads the two logs; a log of other engines, or a
//! resume without the seed, is refused in one line.

use crate::common;
use common::path_str as s;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use common::{BIN, match_args, polybook_match};

/// Each game of a PGN file as python-chess reads it: round, players, result, moves (UCI).
fn games_by_round(path: &Path) -> Vec<Value> {
    let mut games = common::python_games(
        path,
        r#"{"round": int(g.headers["Round"]), "white": g.headers["White"],
            "black": g.headers["Black"], "result": g.headers["Result"],
            "moves": [m.uci() for m in g.mainline_moves()]}"#,
    );
    games.sort_by_key(|g| g["round"].as_u64());
    games
}

/// The final JSON report without what differs between runs (the time taken).
fn report(stdout: &[u8]) -> Value {
    let mut report: Value = serde_json::from_slice(stdout).expect("a JSON report");
    report.as_object_mut().unwrap().remove("seconds");
    report
}

/// Plays `engines` with `rest` once straight through and once killed (SIGKILL) after `kill_at`
/// games then resumed, and asserts that both end with the same games and the same report.
fn killed_and_resumed_is_the_same_as_uninterrupted(
    engines: &[&str],
    rest: &[&str],
    kill_at: usize,
) {
    let dir = tempfile::tempdir().unwrap();
    let (whole, resumed) = (dir.path().join("whole.pgn"), dir.path().join("resumed.pgn"));
    let args = |pgn: &Path| {
        let mut args: Vec<String> = match_args(engines, rest)
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.extend(["--pgn", s(pgn), "--json", "--quiet"].map(String::from));
        args
    };
    let straight = Command::new(BIN).args(args(&whole)).output().unwrap();
    assert!(straight.status.success(), "{}", common::stderr(&straight));

    let mut child = Command::new(BIN)
        .args(args(&resumed))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for_games(&mut child, &resumed, kill_at, Duration::from_secs(120));
    child.kill().unwrap();
    child.wait().unwrap();
    let logged = games_by_round(&resumed).len();
    let total = games_by_round(&whole).len();
    assert!(logged >= kill_at && logged < total, "{logged} of {total}");

    let mut again = args(&resumed);
    again.push("--resume".to_string());
    again.retain(|a| a != "--quiet");
    let out = Command::new(BIN).args(&again).output().unwrap();
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("resumed: {logged} of the {total} games are in")),
        "{err}"
    );
    assert_eq!(report(&out.stdout), report(&straight.stdout));
    let (a, b) = (games_by_round(&whole), games_by_round(&resumed));
    let rounds: Vec<u64> = b.iter().map(|g| g["round"].as_u64().unwrap()).collect();
    assert_eq!(
        rounds,
        (1..=total as u64).collect::<Vec<_>>(),
        "each game once"
    );
    assert_eq!(a, b);

    // Resumed once more, a finished match plays nothing and reports the same.
    let out = Command::new(BIN).args(&again).output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(report(&out.stdout), report(&straight.stdout));
    assert_eq!(games_by_round(&resumed).len(), total);
}

#[test]
fn a_killed_match_resumes_to_the_games_and_report_of_an_uninterrupted_one() {
    killed_and_resumed_is_the_same_as_uninterrupted(
        &["A=builtin:Hash=8", "B=builtin:Hash=8,UseNNUE=false"],
        &[
            "--nodes",
            "400",
            "--games",
            "12",
            "--concurrency",
            "2",
            "--seed",
            "7",
            "--book",
            s(&common::gnuchess_book()),
            "--book-plies",
            "6",
            "--sprt",
            "elo0=0,elo1=10,alpha=0.05,beta=0.05",
        ],
        4,
    );
}

#[test]
fn a_killed_round_robin_resumes_to_the_games_and_report_of_an_uninterrupted_one() {
    killed_and_resumed_is_the_same_as_uninterrupted(
        &[
            "A=builtin:Hash=8",
            "B=builtin:Hash=8,UseNNUE=false",
            "C=builtin:Hash=8,NullMove=false",
        ],
        &[
            "--nodes",
            "300",
            "--games",
            "3",
            "--concurrency",
            "2",
            "--seed",
            "3",
            "--book",
            s(&common::gnuchess_book()),
            "--book-plies",
            "4",
        ],
        3,
    );
}

#[test]
fn a_resume_needs_the_seed_and_a_log_of_the_same_engines() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("m.pgn");
    let rest = [
        "--nodes",
        "200",
        "--games",
        "2",
        "--seed",
        "1",
        "--pgn",
        s(&pgn),
    ];
    let out = polybook_match(&["A=builtin:Hash=8", "B=builtin:Hash=8"], &rest);
    assert!(out.status.success(), "{}", common::stderr(&out));

    let no_seed = polybook_match(
        &["A=builtin:Hash=8", "B=builtin:Hash=8"],
        &[
            "--nodes",
            "200",
            "--games",
            "4",
            "--pgn",
            s(&pgn),
            "--resume",
        ],
    );
    common::one_error_line(&no_seed, 2, "polybook: error: --resume needs the --seed");

    let mut resume = rest.to_vec();
    resume.push("--resume");
    let other = polybook_match(&["C=builtin:Hash=8", "B=builtin:Hash=8"], &resume);
    let line = common::one_error_line(&other, 1, "polybook: error: cannot resume from");
    common::assert_contains(&line, "its game of round 1");
    common::assert_contains(&line, "is A - B, but this session's game 1 is C - B");
    // Nothing was added to the log.
    assert_eq!(games_by_round(&pgn).len(), 2);

    let no_pgn = polybook_match(&["A=builtin", "B=builtin"], &["--resume", "--seed", "1"]);
    assert_eq!(no_pgn.status.code(), Some(2));
}
