//! Lazy SMP: the engine with more than one search thread, in `polybook search`, over UCI (a real
//! process, with the same latency bounds as tests/uci.rs) and in the library on the mate puzzles
//! of tests/data; and the one-thread search, which must stay exactly what it was.
//!
//! A multi-threaded search is not deterministic (the threads race over the table), so its tests
//! check what must hold whatever the interleaving: a legal move, a prompt answer to `stop`, node
//! counts that grow, mates found. Limits are depths and nodes where the answer must not depend on
//! the machine's load.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use polybook::engine::options::max_threads;
use polybook::engine::{Engine, Limits, SearchOptions};

use common::{legal_in, polybook, stderr, stdout};

/// The `nodes` figures of the `info` lines of `output`, in order.
fn info_nodes(output: &str) -> Vec<u64> {
    output
        .lines()
        .filter(|l| l.starts_with("info depth"))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            words.find(|&w| w == "nodes")?;
            words.next()?.parse().ok()
        })
        .collect()
}

/// The move of the last `bestmove` line of `output`.
fn bestmove(output: &str) -> &str {
    output
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("bestmove "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no bestmove in {output}"))
}

const MIDDLEGAME: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10";

#[test]
fn one_thread_searches_are_what_they_were() {
    // (FEN, depth, the last info line's nodes, bestmove): recorded from `polybook search --fen
    // FEN --depth D --hash 16` built from the commit before Lazy SMP (d89ddd5), not from the
    // code under test, and recorded again when the search or the evaluation changed the tree on
    // purpose: last from the binary that joined the tuned evaluation and the search changes
    // (continuation histories, SEE pruning). The figures before those were 19275 d2d4 g8f6,
    // 46106 e2a6 b4c3, 57882 b4f4 h4g3, 25327 a2a3 c8d7. One thread must search exactly the same
    // tree: same nodes, same move. Recorded again from the binary with the narrower aspiration
    // windows (before them: 12944 b1c3 d7d5, 43631 d5e6 e7e6, 71583 b4f4 h4g3, 21214 h2h3 c8d7),
    // and again from the binaries with correction history (before it: 11824 d2d4 d7d5, 39157 e2a6
    // e6d5, 30582 b4f4 h4g3, 13177 d3d4 e7c6; by pawns alone: 17660 e2e4 e7e5, 55855 d5e6 e7e6,
    // 35712 b4f4 h4g3, 12539 h2h3 c8d7), and again from the binary whose null move searches at
    // least one ply (SPRT row 38; before it: 10840 d2d4 d7d5, 47596 e2a6 e6d5, 31998 b4f4 h4g3,
    // 19092 a2a3 h7h6), and again from the binary with singular extensions (SPRT row 59; before
    // them, and with `--no-singular-extensions` still: 11267 d2d4 d7d5, 45572 e2a6 e6d5, 34680
    // b4f4 h4g3, 13804 a2a4 c8d7), and again from the binary whose cut nodes reduce one ply more
    // (SPRT row 63; before it: 12213 d2d4 d7d5, 36421 e2a6 b4c3, 82750 b4f4 h4g3, 21869 a2a3
    // c8d7), and again from the binary with capture history, the table in quiescence and ProbCut
    // (SPRT row 67; before them: 12073 d2d4 d7d5, 36234 e2a6 b4c3, 78341 b4f4 h4g3, 17776 f1e1
    // c8d7), and again from the binary that reduces late losing captures (SPRT row 71; before it:
    // 8127 d2d4 d7d5, 28041 e2a6 b4c3, 55885 b4f4 h4g3, 20831 d3d4 e7c6). Row 81's late quiet
    // moves dropped at once left these four trees as they were.
    let cases = [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "9",
            8084,
            "d2d4 ponder d7d5",
        ),
        (MIDDLEGAME, "8", 23788, "e2a6 ponder e6d5"),
        (
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
            "12",
            37738,
            "b4f4 ponder h4g3",
        ),
        (
            "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
            "8",
            20528,
            "d3d4 ponder e7c6",
        ),
    ];
    for (fen, depth, nodes, best) in cases {
        for threads in [None, Some("1")] {
            // The hand-crafted evaluation's trees, as recorded (the net's are newer than these).
            let mut args = vec![
                "search",
                "--fen",
                fen,
                "--depth",
                depth,
                "--hash",
                "16",
                "--no-nnue",
            ];
            if let Some(t) = threads {
                args.extend(["--threads", t]);
            }
            let out = polybook(&args);
            assert!(out.status.success(), "{}", stderr(&out));
            let text = stdout(&out);
            assert_eq!(info_nodes(&text).last(), Some(&nodes), "{fen}: {text}");
            assert_eq!(
                text.lines().last(),
                Some(format!("bestmove {best}").as_str()),
                "{fen}"
            );
        }
    }
}

#[test]
fn bench_ignores_threads() {
    // The signature of `bench` (README, BENCHMARKS.md) is one thread's, whatever Threads says.
    let out = polybook(&["bench", "--set", "Threads=2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // 1182413 before the quiet moves that steps 9 and 10 would skip were dropped at once (row 81:
    // moves of equal keys come in another order).
    common::assert_contains(&text, "\n1192332 nodes ");
}

#[test]
fn bench_without_singular_extensions_has_a_signature_of_its_own() {
    // Step 8a off leaves every other step as it is: a signature of its own (829801 before row 81's
    // late quiet moves dropped at once; 864103 before row 71's losing captures reduced; 942905
    // before row 67's capture history, table in quiescence and ProbCut; 960472 before cut nodes
    // were reduced more, the one before singular extensions).
    let out = polybook(&["bench", "--no-singular-extensions"]);
    assert!(out.status.success(), "{}", stderr(&out));
    common::assert_contains(&stdout(&out), "\n770522 nodes ");
}

#[test]
fn search_with_two_threads() {
    // `search` of MIDDLEGAME on two threads, within a limit.
    let search = |limit: &str, value: &str| {
        polybook(&[
            "search",
            "--fen",
            MIDDLEGAME,
            limit,
            value,
            "--threads",
            "2",
        ])
    };
    // A fixed depth: a legal move, and the node counts of the info lines grow.
    let out = search("--depth", "9");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let nodes = info_nodes(&text);
    assert!(nodes.len() >= 5, "{text}");
    assert!(nodes.windows(2).all(|w| w[0] < w[1]), "{nodes:?}");
    common::assert_contains(&text, "info depth 9 ");
    assert!(legal_in(MIDDLEGAME, bestmove(&text)), "{text}");

    // A time limit stops every thread: the answer comes in time (wide bounds for a loaded
    // machine; a helper left running would hold the process for its whole depth).
    let start = Instant::now();
    let out = search("--movetime", "300");
    let took = start.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(legal_in(MIDDLEGAME, bestmove(&stdout(&out))));

    // A node limit counts the nodes of all threads.
    let out = search("--nodes", "200000");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(legal_in(MIDDLEGAME, bestmove(&text)));
    assert!(
        info_nodes(&text).iter().all(|&n| n <= 200_000 + 8 * 1024),
        "{text}"
    );
}

#[test]
fn search_threads_bad_and_too_many() {
    for bad in ["0", "-1", "two", "5000"] {
        let out = polybook(&["search", "--depth", "2", &format!("--threads={bad}")]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = stderr(&out);
        common::assert_contains(&err, "--threads");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = polybook(&["search", "--depth", "2", "--set", "Threads=0"]);
    assert_eq!(out.status.code(), Some(2));
    common::assert_contains(&stderr(&out), "Threads");
    // More threads than cores: searched with all of them, with one warning line.
    let too_many = (max_threads() + 1).to_string();
    let out = polybook(&["search", "--depth", "4", "--threads", &too_many]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end(),
        format!(
            "polybook: warning: --threads {too_many}: this machine has {} cores, which the threads share",
            max_threads(),
        )
    );
    assert!(legal_in(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        bestmove(&stdout(&out))
    ));
}

#[test]
fn mates_are_found_with_two_threads() {
    // The mate-in-2 puzzles of tests/data, with the dedicated mate search off so that the
    // (two-threaded) tree search must find every mate, within 2,000,000 nodes of both threads.
    let entries = common::mate_in_2_puzzles();
    let mut engine = Engine::new(SearchOptions {
        hash_mb: 16,
        threads: 2,
        mate_search: false,
        ..SearchOptions::default()
    });
    for e in entries.iter().step_by(3) {
        let limits = Limits {
            nodes: Some(2_000_000),
            mate: e.task.mate.map(|n| n as u32),
            ..Limits::default()
        };
        engine.clear();
        let r = engine.search(
            &e.pos,
            &[],
            &limits,
            Arc::new(AtomicBool::new(false)),
            &mut |_| {},
        );
        common::assert_solved(e, &r);
    }
}

// ---- a real UCI process ---------------------------------------------------------------------------

use common::UciChild as Uci;

#[test]
fn uci_with_two_threads() {
    const FEN: &str = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let mut e = Uci::start(&[]);
    e.send("uci");
    let (lines, _) = e.until("uciok", Duration::from_secs(5));
    // Up to 1024 threads whatever the machine, as Stockfish offers.
    let threads = "option name Threads type spin default 1 min 1 max 1024";
    assert!(lines.contains(&threads.to_string()), "{lines:?}");
    // More: cut down, with the usual word for an out-of-range spin value.
    e.send("setoption name Threads value 1025");
    e.send("isready");
    let (lines, _) = e.until("readyok", Duration::from_secs(5));
    assert!(
        lines.contains(
            &"info string option Threads: 1025 is out of range 1..1024; using 1024".into()
        ),
        "{lines:?}"
    );
    e.send("setoption name Threads value 2");
    e.send("setoption name OwnBook value false");
    e.send(&format!("position fen {FEN}"));

    // go depth: a legal move, nodes that grow.
    e.send("go depth 9");
    let (lines, _) = e.until("bestmove ", Duration::from_secs(60));
    let text = lines.join("\n");
    let nodes = info_nodes(&text);
    assert!(nodes.len() >= 5, "{text}");
    assert!(nodes.windows(2).all(|w| w[0] < w[1]), "{nodes:?}");
    common::assert_contains(&text, "info depth 9 ");
    assert!(legal_in(FEN, bestmove(&text)), "{text}");

    // go movetime: in time.
    e.send("go movetime 300");
    let (lines, took) = e.until("bestmove ", Duration::from_secs(3));
    assert!(took < Duration::from_millis(1300), "took {took:?}");
    assert!(legal_in(FEN, bestmove(&lines.join("\n"))));

    // go infinite, then stop: answered at once (tests/uci.rs's bound), with a legal move.
    e.send("go infinite");
    e.until("info depth 3", Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(300));
    e.send("isready");
    let (_, took) = e.until("readyok", Duration::from_secs(1));
    assert!(took < Duration::from_millis(1000), "readyok took {took:?}");
    e.send("stop");
    let (lines, took) = e.until("bestmove ", Duration::from_secs(1));
    assert!(took < Duration::from_millis(1000), "bestmove took {took:?}");
    assert!(legal_in(FEN, bestmove(&lines.join("\n"))));

    // Pondering: no answer before ponderhit, then one within the clock.
    e.send(&format!("position fen {FEN} moves f1c4"));
    e.send("go ponder wtime 2000 btime 2000");
    std::thread::sleep(Duration::from_millis(400));
    e.send("isready");
    let (lines, _) = e.until("readyok", Duration::from_secs(1));
    assert!(
        !lines.iter().any(|l| l.starts_with("bestmove")),
        "{lines:?}"
    );
    e.send("ponderhit");
    let (lines, took) = e.until("bestmove ", Duration::from_secs(3));
    assert!(took < Duration::from_millis(2000), "took {took:?}");
    let after = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3";
    assert!(legal_in(after, bestmove(&lines.join("\n"))));

    drop(e.stdin);
    let status = e.child.wait().unwrap();
    assert!(status.success());
}
