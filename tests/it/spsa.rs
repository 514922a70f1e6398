//! The tuning build (`--features spsa`) and `bench/spsa.py`: the build offers each tunable number
//! of src/engine/parameters.rs as a UCI spin option that `setoption` changes (clamped into its
//! range) and that changes the search, its defaults searching as the normal build does; the
//! tuner plays iterations, saves its state after each and resumes from it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use polybook::engine::parameters::TUNABLES;

/// The tuning build, made once (an unoptimised build of the crate over optimised dependencies,
/// in a target folder of its own so that the release build is left alone).
fn spsa_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let target = common::root().join("target/spsa");
        let built = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "--features",
                "spsa",
                "--bin",
                "polybook",
            ])
            .arg("--target-dir")
            .arg(&target)
            .current_dir(common::root())
            .status()
            .expect("cargo runs");
        assert!(built.success(), "cargo build --features spsa failed");
        target.join("debug/polybook")
    })
}

fn uci(binary: &Path, input: &str) -> String {
    let out = common::run_with_input(Command::new(binary).arg("uci"), input.as_bytes());
    assert!(out.status.success(), "{}", common::stderr(&out));
    common::stdout(&out)
}

/// The `bestmove` and the node count of a depth-8 search after the `setoption` lines `setup`.
fn search(binary: &Path, setup: &[&str]) -> (String, String) {
    let mut engine = common::UciChild::spawn({
        let mut command = Command::new(binary);
        command.arg("uci");
        command
    });
    for line in setup {
        engine.send(line);
    }
    engine.send("position fen r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
    engine.send("go depth 8");
    let (lines, _) = engine.until("bestmove", Duration::from_secs(300));
    engine.send("quit");
    let nodes = lines
        .iter()
        .filter(|l| l.starts_with("info depth 8 "))
        .filter_map(|l| l.split(" nodes ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .next_back()
        .expect("an info line of depth 8")
        .to_string();
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    (best.to_string(), nodes)
}

#[test]
fn the_tuning_build_offers_every_tunable_and_searches_as_the_normal_one_by_default() {
    let binary = spsa_binary();
    let listed = uci(binary, "uci\nquit\n");
    for t in TUNABLES {
        common::assert_contains(
            &listed,
            &format!(
                "option name {} type spin default {} min {} max {}",
                t.name, t.default, t.min, t.max
            ),
        );
    }
    // The normal build lists none of them.
    let normal = uci(Path::new(common::BIN), "uci\nquit\n");
    assert!(!normal.contains("RFP_MARGIN_PER_DEPTH"), "{normal}");
    assert_contains_unknown(&uci(
        Path::new(common::BIN),
        "setoption name RFP_MARGIN_PER_DEPTH value 90\nquit\n",
    ));

    // Set, clamped, listed with its new value.
    let set = uci(
        binary,
        "setoption name FUTILITY_BASE value 9999\nsetoption name rfp_margin_per_depth value 95\nuci\nquit\n",
    );
    common::assert_contains(
        &set,
        "FUTILITY_BASE: 9999 is out of range 0..300; using 300",
    );
    common::assert_contains(
        &set,
        "option name RFP_MARGIN_PER_DEPTH type spin default 95 min 30 max 160",
    );

    // By default the same search as the normal build; other values, another search.
    let normal_search = search(Path::new(common::BIN), &[]);
    assert_eq!(search(binary, &[]), normal_search);
    let changed = search(
        binary,
        &[
            "setoption name LMR_HISTORY_DIVISOR value 2048",
            "setoption name NMP_BASE_REDUCTION value 5",
        ],
    );
    assert_ne!(changed.1, normal_search.1, "the values change the search");
}

fn assert_contains_unknown(out: &str) {
    common::assert_contains(out, "info string unknown option 'RFP_MARGIN_PER_DEPTH'");
}

#[test]
fn the_tuner_plays_iterations_saves_them_and_resumes() {
    let binary = spsa_binary();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("spsa.json");
    let run = |iterations: &str| {
        let out = Command::new("python3")
            .arg(common::root().join("bench/spsa.py"))
            .arg(binary)
            .args([
                "--state",
                common::path_str(&state),
                "--iterations",
                iterations,
            ])
            .args(["--pairs", "1", "--nodes", "150", "--params", "^(RFP|NMP)_"])
            .current_dir(common::root())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::stderr(&out));
        (common::stdout(&out), common::stderr(&out))
    };
    let (_, err) = run("2");
    assert_eq!(common::lines_starting(&err, "iteration ").len(), 2, "{err}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["iteration"], 2);
    // Every tunable the pattern names, those that are off included (naming one switches it on).
    let mut tuned: Vec<&str> = saved["params"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    tuned.sort_unstable();
    let mut named: Vec<&str> = TUNABLES
        .iter()
        .map(|t| t.name)
        .filter(|n| n.starts_with("RFP_") || n.starts_with("NMP_"))
        .collect();
    named.sort_unstable();
    assert!(named.len() >= 9, "{named:?}");
    assert_eq!(tuned, named);
    for p in saved["params"].as_object().unwrap().values() {
        let v = p["value"].as_f64().unwrap();
        assert!(v >= p["min"].as_f64().unwrap() && v <= p["max"].as_f64().unwrap());
    }
    // The same command again goes on from the state, whose iteration count wins: its 2 are
    // played, so it only reports.
    let (out, err) = run("99");
    common::assert_contains(&err, "resuming");
    assert_eq!(common::lines_starting(&err, "iteration ").len(), 0, "{err}");
    common::assert_contains(&out, "after 2 iterations:");
    let csv = std::fs::read_to_string(dir.path().join("spsa.json.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        3,
        "a header and a line per iteration: {csv}"
    );
}

#[test]
fn the_tuner_leaves_the_steps_that_are_off_alone_unless_named() {
    let binary = spsa_binary();
    let dir = tempfile::tempdir().unwrap();
    let tuned = |state: &str, params: &[&str]| {
        let state = dir.path().join(state);
        let out = Command::new("python3")
            .arg(common::root().join("bench/spsa.py"))
            .arg(binary)
            .args(["--state", common::path_str(&state), "--iterations", "1"])
            .args(["--pairs", "1", "--nodes", "150"])
            .args(params)
            .current_dir(common::root())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::stderr(&out));
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
        let mut names: Vec<String> = saved["params"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    };
    let off: Vec<&str> = TUNABLES
        .iter()
        .filter(|t| t.default == 0 && t.min == 0)
        .map(|t| t.name)
        .collect();
    assert!(off.contains(&"IIR_MIN_DEPTH"), "{off:?}");
    let mut expected: Vec<String> = TUNABLES
        .iter()
        .filter(|t| !off.contains(&t.name))
        .map(|t| t.name.to_string())
        .collect();
    expected.sort();
    assert_eq!(tuned("all.json", &[]), expected);
    assert_eq!(
        tuned("named.json", &["--params", "^IIR_MIN_DEPTH$"]),
        ["IIR_MIN_DEPTH"]
    );
}
