//! Every command at the thread counts users' machines have (1 to 256) on whatever cores the
//! tests run on: the same output where the output is deterministic, and the defaults taken from a
//! core count the test sets (`POLYBOOK_CORES`), so that a 64- or 256-core machine's defaults are
//! run here too.

use crate::common;
use crate::explore::Served;
use common::{BIN, data, path_str as s, piped, stderr};

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// The thread counts every command is run at.
const COUNTS: [usize; 5] = [1, 3, 12, 64, 256];

/// `polybook ARGS` with the core count the defaults see set to `cores` (None: the real one).
fn run(cores: Option<usize>, args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args);
    if let Some(n) = cores {
        c.env("POLYBOOK_CORES", n.to_string());
    }
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "POLYBOOK_CORES={cores:?} polybook {args:?}: {}",
        stderr(&o)
    );
    o
}

/// Runs `make(out, threads)` at every count with `--threads N`, then with no flag under
/// `POLYBOOK_CORES` = 64 and 256: every output the same bytes as the first.
fn same_at_every_count(what: &str, mut make: impl FnMut(&Path, Option<usize>, Option<usize>)) {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    make(&first, Some(1), None);
    let expected = std::fs::read(&first).unwrap();
    assert!(!expected.is_empty(), "{what}");
    let runs = COUNTS[1..]
        .iter()
        .map(|&t| (Some(t), None))
        .chain([(None, Some(64)), (None, Some(256))]);
    for (i, (threads, cores)) in runs.enumerate() {
        let out = dir.path().join(format!("out{i}"));
        make(&out, threads, cores);
        assert!(
            std::fs::read(&out).unwrap() == expected,
            "{what}: --threads {threads:?}, POLYBOOK_CORES {cores:?} differs from one thread"
        );
    }
}

fn threads_args(threads: Option<usize>) -> Vec<String> {
    threads
        .map(|t| vec!["--threads".to_string(), t.to_string()])
        .unwrap_or_default()
}

/// `run` with `--threads N` added to `args` when `threads` is given.
fn run_at(threads: Option<usize>, cores: Option<usize>, args: &[&str]) -> Output {
    let t = threads_args(threads);
    let mut all = args.to_vec();
    all.extend(t.iter().map(String::as_str));
    run(cores, &all)
}

#[test]
fn build_and_tally_make_the_same_files_at_every_thread_count() {
    let pgn = common::root().join("pgn");
    for memory in ["1G", "16M"] {
        same_at_every_count("build", |out, threads, cores| {
            run_at(
                threads,
                cores,
                &["build", s(&pgn), "-o", s(out), "-q", "--memory", memory],
            );
        });
    }
    let games = data("pgn/lichess_magnus_analysed.pgn.xz");
    same_at_every_count("tally", |out, threads, cores| {
        run_at(threads, cores, &["tally", s(&games), "-o", s(out), "-q"]);
    });
}

#[test]
fn split_is_the_same_on_a_256_core_machine() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = common::bundled("dortmund.pgn");
    let parts = |name: &str, cores: Option<usize>| {
        let out = dir.path().join(name);
        run(
            cores,
            &["split", s(&pgn), "--games", "10", "-o", s(&out), "-q"],
        );
        let mut files: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name(), std::fs::read(e.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    };
    let one = parts("one", Some(1));
    assert!(one.len() > 1);
    assert_eq!(parts("many", Some(256)), one);
}

#[test]
fn the_games_explorer_answers_the_same_at_every_thread_count() {
    let games = data("pgn/lichess_magnus_analysed.pgn.xz");
    let targets = [
        "/api/games",
        "/api/games?moves=e4+e5&speed=blitz",
        "/api/game?id=7",
    ];
    let answers = |threads: Option<usize>, cores: Option<usize>| {
        let mut command = piped();
        if let Some(n) = cores {
            command.env("POLYBOOK_CORES", n.to_string());
        }
        let t = threads_args(threads);
        let mut args = vec![s(&games), "--quiet"];
        args.extend(t.iter().map(String::as_str));
        let served = Served::start_with(command, &args);
        targets
            .iter()
            .map(|t| {
                let reply = served.get(t);
                assert_eq!(reply.status, 200, "{t}");
                reply.body
            })
            .collect::<Vec<_>>()
    };
    let expected = answers(Some(1), None);
    for t in &COUNTS[1..] {
        assert!(answers(Some(*t), None) == expected, "--threads {t}");
    }
    assert!(answers(None, Some(256)) == expected, "POLYBOOK_CORES=256");
}

#[test]
fn analyse_scores_the_same_with_any_number_of_engines() {
    let book = data("books/rodent3_guide.bin");
    same_at_every_count("analyse", |out, threads, cores| {
        let c = threads.unwrap_or(cores.unwrap_or(1)).to_string();
        let args = common::analyse_args(&book, out, "200", &["--hash", "1", "--concurrency", &c]);
        run(None, &args);
    });
}

#[test]
fn datagen_train_and_tune_are_the_same_at_every_thread_count() {
    let games = data("pgn/lichess_magnus_analysed.pgn.xz");
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels");
    same_at_every_count("datagen", |out, threads, cores| {
        run_at(
            threads,
            cores,
            &[
                "datagen",
                s(&games),
                "-o",
                s(out),
                "--positions",
                "1024",
                "--nodes",
                "100",
                "--quiet",
            ],
        );
        if threads == Some(1) {
            std::fs::copy(out, &labels).unwrap();
        }
    });
    let data_arg = format!("{}={}", s(&labels), s(&games));
    same_at_every_count("train", |out, threads, cores| {
        run_at(
            threads,
            cores,
            &[
                "train",
                "--data",
                &data_arg,
                "-o",
                s(out),
                "--epochs",
                "2",
                "--batch-size",
                "256",
            ],
        );
    });
    let tcec = data("pgn/tcec/TCEC_Season_5_-_Superfinal.pgn.xz");
    same_at_every_count("tune", |out, threads, cores| {
        run_at(
            threads,
            cores,
            &[
                "tune",
                s(&tcec),
                "-o",
                s(out),
                "--positions",
                "20000",
                "--epochs",
                "5",
                "--report-every",
                "0",
            ],
        );
    });
}

/// A match's games at fixed nodes are the same games whatever `--concurrency`: the same results
/// and moves, opening by opening.
#[test]
fn a_match_plays_the_same_games_at_any_concurrency() {
    let book = common::root().join("books/bundled.bin");
    let games = |concurrency: usize| {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("games.pgn");
        let c = concurrency.to_string();
        run(
            None,
            &[
                "match",
                "--engine",
                "builtin:Hash=1",
                "--engine",
                "builtin:Hash=2",
                "--book",
                s(&book),
                "--games",
                "8",
                "--nodes",
                "300",
                "--seed",
                "7",
                "--concurrency",
                &c,
                "--pgn",
                s(&pgn),
            ],
        );
        let text = std::fs::read_to_string(&pgn).unwrap();
        // Each game as its players, result and moves (comments left out: they hold times).
        let mut games: Vec<String> = text
            .split("[Event ")
            .filter(|g| !g.trim().is_empty())
            .map(|g| {
                let mut kept = String::new();
                let mut depth = 0;
                for c in g.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ if depth == 0 => kept.push(c),
                        _ => {}
                    }
                }
                kept.lines()
                    .filter(|l| {
                        ["[White ", "[Black ", "[Result "]
                            .iter()
                            .any(|t| l.starts_with(t))
                            || !l.starts_with('[')
                    })
                    .flat_map(str::split_whitespace)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        games.sort();
        games
    };
    let expected = games(1);
    assert_eq!(expected.len(), 8);
    for c in &COUNTS[1..] {
        assert!(games(*c) == expected, "--concurrency {c}: other games");
    }
}

/// The UCI `Threads` option up to what a 256-core machine takes, on this machine whatever its
/// cores: the option's maximum is 1024 (as Stockfish's), and a search at each count answers with
/// a legal move.
#[test]
fn uci_searches_with_up_to_256_threads() {
    let mut command = Command::new(BIN);
    command.arg("uci");
    let mut e = common::UciChild::spawn(command);
    e.send("uci");
    let (lines, _) = e.until("uciok", Duration::from_secs(10));
    assert!(
        lines.contains(&"option name Threads type spin default 1 min 1 max 1024".to_string()),
        "{lines:?}"
    );
    e.send("setoption name OwnBook value false");
    for t in COUNTS {
        e.send(&format!("setoption name Threads value {t}"));
        e.send("setoption name Hash value 16");
        e.send("ucinewgame");
        e.send("position startpos moves e2e4 e7e5 g1f3");
        e.send("go depth 7");
        let (lines, _) = e.until("bestmove ", Duration::from_secs(120));
        let best = lines.last().unwrap();
        assert!(
            !lines.iter().any(|l| l.contains("error")),
            "Threads {t}: {lines:?}"
        );
        let mv = best.split_whitespace().nth(1).unwrap();
        assert!(
            common::legal_in(
                "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
                mv
            ),
            "Threads {t}: {best}"
        );
    }
    e.send("quit");
    assert!(e.child.wait().unwrap().success());
}
