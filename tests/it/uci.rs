//! `polybook uci` with real clients: python-chess (book moves, an analysis, a game against
//! Stockfish), Debian's polyglot adapter (xboard), the timing of `isready` and `stop` mid-search,
//! the bad-input rules and a fuzz run of random and truncated lines.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use common::{BIN, gnuchess_book as book, legal_in};

// ---- in-process sessions ----------------------------------------------------------------------

use common::{bestmoves, uci_session as session};

/// A UCI session with `book` as its `BookFile`, then `commands`; its output.
fn book_session(book: &Path, commands: &str) -> String {
    session(&format!(
        "setoption name BookFile value {}\n{commands}",
        book.display()
    ))
}

fn fen_line(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("Fen: "))
        .collect()
}

#[test]
fn bad_input_is_answered_and_the_position_survives() {
    let out = session(
        "go depth 2\n\
         frobnicate the engine\n\
         position startpos moves e2e4 e7e5\n\
         position fen not/a/fen w - - 0 1\n\
         d\n\
         position startpos moves d2d4 d7d5 e1e8 g1f3\n\
         d\n\
         position fen 8/8/8/8/8/8/8/8 w - - 0 1\n\
         position\n\
         d\n\
         setoption name Move Overhead value 999999\n\
         setoption name Hash value 0\n\
         setoption name BookMinWeight value lots\n\
         setoption name NoSuchOption value 3\n\
         setoption name BookFile value /no/such/book.bin\n\
         go depth 3\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    // `go` before any `position`: the start position.
    let first = bestmoves(&out)[0];
    assert!(legal_in(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        first
    ));
    assert!(lines.contains(&"info string unknown command 'frobnicate the engine'"));
    for said in [
        "info string invalid FEN 'not/a/fen",
        "info string move 3 'e1e8' is illegal",
        "info string impossible position",
        "info string malformed position",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(said)), "{said}");
    }
    let fens = fen_line(&out);
    // A bad FEN keeps the last position; an illegal move keeps the position before it.
    assert_eq!(
        fens,
        [
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
            "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
        ]
    );
    assert!(
        lines.contains(
            &"info string option Move Overhead: 999999 is out of range 0..5000; using 5000"
        )
    );
    assert!(lines.contains(&"info string option Hash: 0 is out of range 1..33554432; using 1"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string option BookMinWeight expects a whole number"))
    );
    assert!(lines.contains(&"info string unknown option 'NoSuchOption'"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("info string cannot use BookFile")
                && l.ends_with("playing without a book"))
    );
    // Without a book the last `go` searched.
    let last = *bestmoves(&out).last().unwrap();
    assert!(legal_in(fens[2], last));
    assert!(lines.iter().any(|l| l.starts_with("info depth 3 ")));
}

#[test]
fn an_illegal_book_entry_is_never_played() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trap.bin");
    // e2e5 is not a legal move; it has by far the highest weight.
    common::start_book(&path, &[("e2e5", 60000), ("g1f3", 1)]);
    let out = book_session(
        &path,
        "setoption name BookSelection value best\n\
         position startpos\ngo movetime 5000\n\
         setoption name BookSelection value weighted\ngo movetime 5000\ngo movetime 5000\n",
    );
    assert_eq!(bestmoves(&out), ["g1f3", "g1f3", "g1f3"], "{out}");
    assert!(out.contains("info string book move g1f3 weight 1 share 100.0%"));

    // Only an illegal entry: the engine searches. (The end of the input stops a search at its
    // first check of the limits, after 1,024 nodes: depth 2 is done well before.)
    common::start_book(&path, &[("e2e5", 60000)]);
    let out = book_session(
        &path,
        "position startpos\ngo depth 2 wtime 60000 btime 60000\n",
    );
    assert!(!out.contains("book move"), "{out}");
    assert!(out.contains("info depth 2 "), "{out}");
}

#[test]
fn book_depth_and_min_weight_hand_over_to_the_search() {
    let b = book();
    // After 1. e4 e5 2. Nf3 (move 2 for black) with BookDepth 1: searched, not from the book.
    let out = book_session(
        &b,
        "setoption name BookDepth value 1\n\
         position startpos moves e2e4 e7e5 g1f3\ngo depth 3 wtime 60000 btime 60000\n\
         position startpos moves e2e4\ngo depth 3 wtime 60000 btime 60000\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    let book_at = lines.iter().position(|l| l.contains("book move")).unwrap();
    let search_at = lines
        .iter()
        .position(|l| l.starts_with("info depth 3"))
        .unwrap();
    assert!(search_at < book_at, "{out}");
    // No entry reaches the minimum weight: searched.
    let out = book_session(
        &b,
        "setoption name BookMinWeight value 65535\n\
         position startpos\ngo depth 3 wtime 60000 btime 60000\n",
    );
    assert!(
        !out.contains("book move") && out.contains("info depth 3 "),
        "{out}"
    );
}

/// A book position is searched under an analysis's limits (`go depth`, `nodes`, `mate` without a
/// clock: what analysis clients send, and they read the scores), and answered from the book in a
/// game (a clock, a `movetime`, or a bare `go`).
#[test]
fn analyses_of_book_positions_are_searched_and_games_play_the_book() {
    let after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    let run = |go: &str| {
        book_session(
            &book(),
            &format!("position startpos moves e2e4\n{go}\nisready\n"),
        )
    };
    for go in [
        "go depth 3",
        "go nodes 3000",
        "go mate 1 depth 2",
        "go depth 2 searchmoves e7e5 c7c5",
    ] {
        let out = run(go);
        assert!(!out.contains("book move"), "{go}: {out}");
        assert!(
            out.lines()
                .any(|l| l.starts_with("info depth ") && l.contains(" score cp ")),
            "{go}: {out}"
        );
        let best = bestmoves(&out);
        assert!(
            best.len() == 1 && legal_in(after_e4, best[0]),
            "{go}: {out}"
        );
    }
    for go in [
        "go wtime 60000 btime 60000 winc 1000 binc 1000",
        "go depth 3 wtime 60000 btime 60000",
        "go movetime 5000",
        "go",
    ] {
        let out = run(go);
        assert!(out.contains("info string book move "), "{go}: {out}");
        assert!(!out.contains("info depth"), "{go}: {out}");
        assert_eq!(bestmoves(&out).len(), 1, "{go}: {out}");
    }
}

#[test]
fn no_or_one_legal_move_and_searchmoves() {
    // Checkmated: bestmove 0000. Stalemate likewise. One legal move: at once.
    let out = session(
        "position fen 7k/6Q1/6K1/8/8/8/8/8 b - - 0 1\ngo wtime 1000 btime 1000\n\
         position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\ngo depth 5\n\
         position fen 7k/8/8/8/8/8/8/K5R1 b - - 0 1\ngo depth 30\n",
    );
    assert_eq!(
        bestmoves(&out),
        ["0000", "0000", "h8h7"].map(|s| s.to_string()),
        "{out}"
    );
    assert!(out.contains("info depth 0 score mate 0"));
    assert!(!out.contains("info depth 30"));
    // searchmoves: only the listed moves are considered (the mate d1d8 is left out).
    let out = session(
        "position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1\n\
         go depth 5 searchmoves h2h3 g2g3\ngo depth 5 searchmoves g1f1 d1d8\n",
    );
    let b = bestmoves(&out);
    assert!(["h2h3", "g2g3"].contains(&b[0]), "{out}");
    assert_eq!(b[1], "d1d8", "{out}");
    assert!(out.contains("score mate 1"), "{out}");
}

#[test]
fn go_mate_runs_the_mate_search() {
    // The binary, so that each search runs to its end (a new command or EOF would stop it).
    let mut e = Engine::start(&["uci"]);
    let wait = Duration::from_secs(30);
    // A mate in 2 (quiet defences): one info line with the exact distance, the mating move.
    e.send("position fen r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1");
    e.send("go mate 2");
    let (info, _) = e.expect("info ", wait);
    assert!(
        info.starts_with("info depth 3 seldepth 3 multipv 1 score mate 2 "),
        "{info}"
    );
    assert!(info.ends_with(" pv d5f6 g7f6 c4f7"), "{info}");
    assert_eq!(e.expect("bestmove", wait).0, "bestmove d5f6 ponder g7f6");
    // A mate in 4 whose key move is quiet (1. Qf4, mate_in_4.pgn line 701), which the normal
    // search missed in a second.
    e.send("position fen rnbq1b1r/ppp1pQ1p/1n1p2p1/4P2k/3P4/8/PPP2PPP/RNB1K2R w - - 0 1");
    e.send("go mate 4");
    let (info, _) = e.expect("info ", wait);
    assert!(info.contains(" score mate 4 "), "{info}");
    assert!(e.expect("bestmove", wait).0.starts_with("bestmove f7f4"));
    // No mate in 2 from the start: the normal search answers, with no mate score.
    e.send("position startpos");
    e.send("go mate 2 nodes 20000");
    let (info, _) = e.expect("info depth 1 ", wait);
    assert!(info.contains(" score cp "), "{info}");
    e.expect("bestmove", wait);
    // A value that is not a number: one line saying so, and the rest of the command still runs.
    e.send("go mate x depth 1");
    let (info, _) = e.expect("info string", wait);
    assert_eq!(
        info,
        "info string go: 'mate' expects a number, got 'x' (ignored)"
    );
    e.expect("info depth 1 ", wait);
    e.expect("bestmove", wait);
    e.send("quit");
    let _ = e.child.wait();
}

#[test]
fn fuzz_random_and_truncated_lines_then_readyok() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let valid = [
        "uci",
        "isready",
        "ucinewgame",
        "position startpos",
        "position startpos moves e2e4 e7e5 g1f3 b8c6 f1b5",
        "position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 moves e1g1",
        "position fen 8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "go depth 3",
        "go nodes 2000",
        "go movetime 5",
        "go wtime 50 btime 50 winc 0 binc 0",
        "go wtime 0 btime 0 movestogo 1",
        "go infinite",
        "go ponder wtime 100 btime 100",
        "go searchmoves e2e4 d2d4 depth 2",
        "go mate 2 nodes 5000",
        "ponderhit",
        "stop",
        "d",
        "eval",
        "setoption name OwnBook value false",
        "setoption name BookSelection value uniform",
        "setoption name BookDepth value -3",
        "setoption name Move Overhead value 10",
        "setoption name NullMove value maybe",
        "setoption name LMR value false",
        "setoption name Clear Hash",
        "debug on",
    ];
    let book_line = format!("setoption name BookFile value {}", book().display());
    let words = [
        "go",
        "position",
        "fen",
        "moves",
        "startpos",
        "setoption",
        "name",
        "value",
        "depth",
        "wtime",
        "-1",
        "0",
        "99999999999999999999",
        "e2e4",
        "e7e8q",
        "a1a1",
        "0000",
        "KQkq",
        "-",
        "w",
        "b",
        "8/8/8/8/8/8/8/8",
        "searchmoves",
        "infinite",
        "ponder",
        "stop",
        "Hash",
        "\t",
    ];
    let mut input = String::new();
    for _ in 0..3000 {
        let line: String = match rng.random_range(0..5) {
            0 => {
                // Random bytes (as text, lossily).
                let n = rng.random_range(0..60);
                let bytes: Vec<u8> = (0..n).map(|_| rng.random_range(1..=255u8)).collect();
                String::from_utf8_lossy(&bytes).replace(['\n', '\r'], " ")
            }
            1 => {
                // A valid command cut short.
                let l = if rng.random_range(0..20) == 0 {
                    book_line.as_str()
                } else {
                    valid[rng.random_range(0..valid.len())]
                };
                let cut = rng.random_range(0..=l.len());
                l.get(..cut).unwrap_or(l).to_string()
            }
            2 => valid[rng.random_range(0..valid.len())].to_string(),
            _ => {
                let n = rng.random_range(0..12);
                (0..n)
                    .map(|_| words[rng.random_range(0..words.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        };
        input.push_str(&line);
        input.push('\n');
    }
    input.push_str("stop\nisready\nposition startpos moves e2e4\ngo depth 2\n");
    // A very long line and a last line without its end.
    input.push_str(&"x".repeat(200_000));
    input.push_str("\nisready");
    let out = session(&input);
    let lines: Vec<&str> = out.lines().collect();
    // The long line is refused as a whole (cut to a bounded length), then `isready` is answered
    // (maybe while the last `go` still searches), and that search ends with a legal move.
    let long = lines
        .iter()
        .rposition(|l| l.starts_with("info string unknown command 'xxxx"))
        .expect("the long line is reported");
    assert!(lines[long].len() < 200);
    let tail = &lines[long + 1..];
    assert!(tail.contains(&"readyok"), "{tail:?}");
    let best = lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("bestmove "))
        .expect("a bestmove");
    assert!(legal_in(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        best.split_whitespace().next().unwrap()
    ));
}

// ---- the binary, as a GUI runs it --------------------------------------------------------------

use common::UciChild as Engine;

/// `setoption name Hash` with more than the machine can give: an `info string` says what is used
/// instead, and the engine plays. The system's refusal is made certain with an address-space
/// limit of about 500 MB, far below the free memory the table is first cut down to.
#[cfg(target_os = "linux")]
#[test]
fn a_hash_the_machine_cannot_give_is_cut_down_with_a_word() {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v 500000 && exec \"$0\" uci")
        .arg(BIN);
    let mut engine = Engine::spawn(command);
    let timeout = Duration::from_secs(60);
    engine.send("uci");
    let (line, _) = engine.expect("option name Hash ", timeout);
    assert_eq!(
        line,
        "option name Hash type spin default 64 min 1 max 33554432"
    );
    engine.send("setoption name Hash value 100000000");
    engine.send("isready");
    let (line, _) = engine.expect("info string", timeout);
    assert_eq!(
        line,
        "info string option Hash: 100000000 is out of range 1..33554432; using 33554432"
    );
    // More than half the memory free: cut to half of it; then, under the 500 MB limit, to what
    // the system gives.
    let (line, _) = engine.expect("info string", timeout);
    let half: usize = line
        .strip_prefix("info string option Hash: 33554432 MB is more than half the memory free (")
        .and_then(|rest| rest.split_once(" MB); using "))
        .and_then(|(_, half)| half.strip_suffix(" MB"))
        .and_then(|mb| mb.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let (line, _) = engine.expect("info string", timeout);
    let used: usize = line
        .strip_prefix(&format!(
            "info string option Hash: {half} MB is more than this machine can give; using "
        ))
        .and_then(|rest| rest.strip_suffix(" MB"))
        .and_then(|mb| mb.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((1..500).contains(&used), "{line}");
    engine.expect("readyok", timeout);
    // The list shows the size in use.
    engine.send("uci");
    let (line, _) = engine.expect("option name Hash ", timeout);
    assert_eq!(
        line,
        format!("option name Hash type spin default {used} min 1 max 33554432")
    );
    engine.send("position startpos moves e2e4");
    engine.send("go depth 3");
    engine.expect("info depth 3 ", timeout);
    let (line, _) = engine.expect("bestmove ", timeout);
    assert!(legal_in(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        &line["bestmove ".len()..][..4]
    ));
    engine.send("quit");
    assert!(engine.child.wait().unwrap().success());
}

#[test]
fn isready_and_stop_are_answered_at_once_mid_search() {
    // The bounds are a GUI's patience, wide enough for a loaded machine running other tests at
    // the same time; a search that held the answers back would take seconds. The latency itself
    // is a benchmark: bench/isready_latency.py, figures in BENCHMARKS.md.
    // No subcommand: what GUIs run.
    let mut e = Engine::start(&[]);
    e.send("uci");
    e.expect("uciok", Duration::from_secs(5));
    e.send("position fen r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    e.send("go infinite");
    e.expect("info depth 3", Duration::from_secs(5));
    let mut worst = Duration::ZERO;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(100));
        e.send("isready");
        let (_, took) = e.expect("readyok", Duration::from_secs(1));
        worst = worst.max(took);
    }
    assert!(
        worst < Duration::from_millis(1000),
        "readyok took {worst:?}"
    );
    e.send("stop");
    let (line, took) = e.expect("bestmove ", Duration::from_secs(1));
    assert!(
        took < Duration::from_millis(1000),
        "bestmove took {took:?} after stop"
    );
    assert!(legal_in(
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        line.split_whitespace().nth(1).unwrap()
    ));
    // `stop` right after `go`: a legal bestmove all the same.
    e.send("go infinite");
    e.send("stop");
    let (line, _) = e.expect("bestmove ", Duration::from_secs(1));
    assert!(line.split_whitespace().nth(1).unwrap() != "0000");
    // A nearly empty clock: the answer comes before the flag falls.
    e.send("position startpos moves e2e4 e7e5");
    e.send("go wtime 200 btime 200 winc 0 binc 0");
    let (_, took) = e.expect("bestmove ", Duration::from_secs(2));
    assert!(
        took < Duration::from_millis(700),
        "took {took:?} with 200 ms on the clock"
    );
    // EOF: a clean exit.
    drop(e.stdin);
    let status = e.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn ponder_waits_for_ponderhit_then_keeps_to_the_clock() {
    let mut e = Engine::start(&["uci"]);
    e.send("position startpos moves e2e4 e7e5 g1f3");
    e.send("go ponder wtime 2000 btime 2000 winc 0 binc 0");
    e.expect("info depth 4", Duration::from_secs(5));
    // Pondering: no bestmove however long it takes.
    let quiet = Instant::now() + Duration::from_millis(1200);
    while let Some(left) = quiet.checked_duration_since(Instant::now()) {
        match e.lines.recv_timeout(left) {
            Ok(line) => assert!(!line.starts_with("bestmove"), "{line} while pondering"),
            Err(_) => break,
        }
    }
    e.send("ponderhit");
    let (line, took) = e.expect("bestmove ", Duration::from_secs(3));
    // The clock plan starts at ponderhit: at most 2/5 of the 2 s left, minus the overhead.
    assert!(took < Duration::from_millis(800), "{took:?}");
    assert!(legal_in(
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
        line.split_whitespace().nth(1).unwrap()
    ));
    e.send("quit");
    assert!(e.child.wait().unwrap().success());
}

#[test]
fn works_behind_the_polyglot_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let ini = common::write_file(
        dir.path(),
        "polybook.ini",
        format!(
            "[PolyGlot]\nEngineDir = {}\nEngineCommand = {} uci\nBook = false\nLog = false\n\n[Engine]\nHash = 16\n",
            dir.path().display(),
            BIN
        ),
    );
    let mut child = Command::new(common::polyglot())
        .arg(&ini)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("polyglot is installed (apt-get install polyglot)");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_for = |rx: &Receiver<String>, what: &dyn Fn(&str) -> bool, label: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if what(&line) => return line,
                Ok(line) => seen.push(line),
                Err(_) => panic!("no {label} from polyglot; saw {seen:?}"),
            }
        }
    };
    writeln!(stdin, "xboard\nprotover 2").unwrap();
    stdin.flush().unwrap();
    let features = wait_for(&rx, &|l| l.contains("done=1"), "feature done=1");
    assert!(features.starts_with("feature"));
    writeln!(stdin, "new\nst 1\ngo").unwrap();
    stdin.flush().unwrap();
    let answer = wait_for(&rx, &|l| l.starts_with("move "), "move");
    let mv = answer.trim_start_matches("move ").trim();
    assert!(
        legal_in(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            mv
        ),
        "{answer}"
    );
    // The game goes on: the opponent replies, polybook moves again.
    writeln!(stdin, "usermove e7e5").unwrap();
    stdin.flush().unwrap();
    let answer = wait_for(&rx, &|l| l.starts_with("move "), "second move");
    assert!(answer.len() > 5);
    writeln!(stdin, "quit").unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "polyglot did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `UCI_Chess960`: listed; Shredder-FEN and X-FEN read; castling read and written as king takes
/// rook, a king that stays where it is included; `startpos` is the standard start, whose castling
/// is king takes rook too. Off, a Chess960 FEN is refused with one line saying what would take it.
#[test]
fn chess960_positions_and_castling_as_king_takes_rook() {
    let out = session(
        "uci\n\
         setoption name UCI_Chess960 value true\n\
         position fen 1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1 moves e1g1 e8b8\n\
         d\n\
         position fen 1r2k2r/pppppppp/8/8/8/8/PPPPPPPP/1R2K2R w KQkq - 0 1 moves e1h1 e8b8\n\
         d\n\
         position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 e1h1\n\
         d\n\
         position fen k4r2/8/8/8/8/7p/7P/6KR w H - 0 1\n\
         go depth 3\n\
         position fen 4rkr1/4p1p1/8/8/8/8/6PP/6KR w H - 0 1\n\
         go depth 3\n\
         position fen 2rkr3/2p1p3/8/8/8/8/PP6/RK6 w A - 0 1\n\
         go depth 3\n\
         setoption name UCI_Chess960 value false\n\
         position fen 1r2k2r/pppppppp/8/8/8/8/PPPPPPPP/1R2K2R w HBhb - 0 1\n\
         d\n\
         position fen r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1 moves e1g1\n\
         d\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.contains(&"option name UCI_Chess960 type check default false"));
    // The FENs after castling, as python-chess writes them.
    assert_eq!(
        fen_line(&out),
        [
            "2kr2r1/pppppppp/8/8/8/8/PPPPPPPP/1R3RK1 w - - 2 2",
            "2kr3r/pppppppp/8/8/8/8/PPPPPPPP/1R3RK1 w - - 2 2",
            "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4",
            // Refused without UCI_Chess960: the last position stays (its castling in X-FEN).
            "2rkr3/2p1p3/8/8/8/8/PP6/RK6 w Q - 0 1",
            // A standard FEN in Shredder-FEN, castling as the king's step.
            "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1",
        ]
    );
    // The only legal move, and two mates that only castling gives: king takes rook.
    assert_eq!(bestmoves(&out), ["g1h1", "g1h1", "b1a1"], "{out}");
    assert!(lines.contains(&"info string only one legal move"));
    for pv in ["score mate 1 ", "pv g1h1", "pv b1a1"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info depth") && l.contains(pv)),
            "{pv}: {out}"
        );
    }
    let refused: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("castling rights of Chess960"))
        .collect();
    assert_eq!(refused.len(), 1, "{out}");
    assert!(
        refused[0].starts_with("info string invalid FEN '1r2k2r/")
            && refused[0].ends_with(
                "(setoption name UCI_Chess960 value true plays Chess960); keeping the last position"
            ),
        "{}",
        refused[0]
    );
}

/// A Chess960 game's book is probed with the keys `build --chess960` gives its positions, and a
/// castling entry is played as king takes rook; a standard book's castling too, from the standard
/// start (which is a Chess960 start).
#[test]
fn chess960_book_moves_castle_as_king_takes_rook() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = common::write_file(
        &dir,
        "960.pgn",
        "[Event \"?\"]\n[Variant \"Chess960\"]\n[SetUp \"1\"]\n\
         [FEN \"1r2k2r/pppppppp/8/8/8/8/PPPPPPPP/1R2K2R w HBhb - 0 1\"]\n\
         [Result \"1/2-1/2\"]\n\n1. O-O O-O-O 1/2-1/2\n",
    );
    let bin = dir.path().join("960.bin");
    let (pgn, bin) = (pgn.to_str().unwrap(), bin.to_str().unwrap());
    common::polybook_ok(&["build", pgn, "-o", bin, "--min-games", "1", "--chess960"]);
    let fen = "1r2k2r/pppppppp/8/8/8/8/PPPPPPPP/1R2K2R w KQkq - 0 1";
    let out = session(&format!(
        "setoption name UCI_Chess960 value true\nsetoption name BookFile value {bin}\n\
         position fen {fen}\ngo wtime 10000 btime 10000\n\
         position fen {fen} moves e1h1\ngo wtime 10000 btime 10000\n\
         setoption name BookFile value {}\nsetoption name BookSelection value best\n\
         position startpos moves e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6\n\
         go wtime 10000 btime 10000\n",
        book().display()
    ));
    assert_eq!(bestmoves(&out), ["e1h1", "e8b8", "e1h1"], "{out}");
    for said in ["info string book move e1h1 ", "info string book move e8b8 "] {
        assert!(out.lines().any(|l| l.starts_with(said)), "{said}: {out}");
    }
}

// ---- python-chess --------------------------------------------------------------------------------

fn python(mode: &str, extra: &[&Path]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/uci_client.py");
    let out = Command::new(common::python_chess())
        .arg(script)
        .arg(mode)
        .arg(BIN)
        .args(extra)
        .output()
        .expect("python3 runs (with python-chess: pip install chess)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains(&format!("{mode} ok")),
        "{}\n{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn python_chess_book_moves_are_the_books() {
    python("book", &[&book()]);
}

#[test]
fn python_chess_analysis_stream() {
    python("analyse", &[]);
}

#[test]
fn python_chess_game_against_stockfish() {
    common::stockfish();
    python("game", &[&book()]);
}

#[test]
fn python_chess_chess960_games_against_stockfish() {
    common::stockfish();
    python("chess960", &[]);
}

/// A client's `Hash` past half the memory free (a typo's extra digits) is cut to that half with a
/// word, so that a bot's engine never takes its whole server; sizes below it are taken as asked.
#[test]
fn a_client_s_hash_is_capped_at_half_the_memory_free() {
    let free_mb = || -> usize {
        let info = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kb = info
            .lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .unwrap();
        kb.trim()
            .strip_suffix("kB")
            .unwrap()
            .trim()
            .parse::<usize>()
            .unwrap()
            / 1024
    };
    let mut engine = Engine::start(&["uci"]);
    let timeout = Duration::from_secs(60);
    engine.send("uci");
    engine.expect("uciok", timeout);
    let before = free_mb();
    engine.send("setoption name Hash value 10000000");
    engine.send("isready");
    let (lines, _) = engine.until("readyok", timeout);
    let line = lines
        .iter()
        .find(|l| l.starts_with("info string option Hash"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    let (free, used) = line
        .strip_prefix("info string option Hash: 10000000 MB is more than half the memory free (")
        .and_then(|rest| rest.split_once(" MB); using "))
        .and_then(|(free, used)| Some((free.parse::<usize>().ok()?, used.strip_suffix(" MB")?)))
        .and_then(|(free, used)| Some((free, used.parse::<usize>().ok()?)))
        .unwrap_or_else(|| panic!("{line}"));
    // The memory free the engine saw is what /proc said about then (other processes move it).
    assert!(
        free <= before * 2 && free * 2 >= before,
        "{free} MB against {before} MB"
    );
    assert_eq!(used, free / 2, "{line}");
    // A size well below the cap: taken as asked, no word.
    engine.send("setoption name Hash value 8");
    engine.send("isready");
    let (lines, _) = engine.until("readyok", timeout);
    assert!(
        !lines.iter().any(|l| l.starts_with("info string")),
        "{lines:?}"
    );
    engine.send("uci");
    let (line, _) = engine.expect("option name Hash ", timeout);
    assert_eq!(
        line,
        "option name Hash type spin default 8 min 1 max 33554432"
    );
    engine.send("quit");
}

/// `BookSelection` takes the values `uci` lists for it and no other (`random`, a command-line
/// synonym of weighted, included): anything else is one `info string`, the selection unchanged.
#[test]
fn a_combo_takes_only_the_values_it_lists() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.bin");
    common::start_book(&path, &[("e2e4", 60000), ("d2d4", 1)]);
    let out = session(&format!(
        "uci\nsetoption name BookFile value {}\nsetoption name BookSelection value best\n\
         setoption name BookSelection value random\nsetoption name BookSelection value Uniformly\n\
         setoption name BookSeed value 7\n{}",
        path.display(),
        "position startpos\ngo depth 1 wtime 60000 btime 60000\n".repeat(20)
    ));
    let vars = out
        .lines()
        .find(|l| l.starts_with("option name BookSelection "))
        .unwrap();
    assert_eq!(
        vars,
        "option name BookSelection type combo default weighted var best var weighted var uniform var learned var score var best_move var weighted_random var uniform_random"
    );
    for bad in ["'random'", "'Uniformly'"] {
        let word = format!(
            "info string option BookSelection: {bad} is not one of its values (best, weighted, uniform, learned, score, best_move, weighted_random, uniform_random); unchanged"
        );
        assert!(out.contains(&word), "{out}");
    }
    // Still `best`: the heavy move every time (weighted would play d2d4 about once in 60,000).
    assert_eq!(bestmoves(&out), vec!["e2e4"; 20], "{out}");
    // The listed values in any case.
    let out = session(&format!(
        "setoption name BookFile value {}\nsetoption name BookSelection value UNIFORM\n\
         setoption name BookSeed value 7\n{}",
        path.display(),
        "position startpos\ngo depth 1 wtime 60000 btime 60000\n".repeat(40)
    ));
    assert!(!out.contains("info string option"), "{out}");
    let d4 = bestmoves(&out).iter().filter(|m| **m == "d2d4").count();
    assert!((8..=32).contains(&d4), "uniform: d2d4 {d4} times in 40");
}
