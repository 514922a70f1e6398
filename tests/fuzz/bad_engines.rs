//! `bad_engines`: matches and tournaments against engines that crash, hang, flood or lie.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rand::Rng;
use rand::rngs::StdRng;

use crate::{assert_one_line, common, fuzz, run_in, said, scored_seed};

/// A UCI engine that misbehaves: `bad.py MODE N POLYBOOK` plays as `POLYBOOK uci` (which it runs
/// and speaks through) until its N-th `go` or `isready`, then does what MODE says.
const BAD_ENGINE: &str = r#"import os, random, signal, subprocess, sys, threading, time
mode, n, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(n * 7919 + len(mode))
out = sys.stdout.buffer
lock = threading.Lock()
state = {"go": 0, "ready": 0, "mute": False}
def say(b):
    with lock:
        out.write(b)
        out.flush()
def hang():
    while True:
        time.sleep(3600)
def garbage():
    if rng.random() < 0.5:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) + b"\n"
    return rng.choice([b"bestmove", b"info score cp", b"info depth x score mate", b"uciok uciok",
                       b"id name \xff\xfe", b"option name", b"readyok?", b"\r\r\r", b""]) + b"\n"
BAD_MOVES = [b"a1a1", b"0000", b"(none)", b"", b"e2e5", b"Nf3", b"E2E4", b"e7e8k", b"e2e4e5",
             b"\x00\x01", b"h9h1"]
if mode == "crash_start":
    sys.exit(1)
if mode == "kill_start":
    os.kill(os.getpid(), signal.SIGKILL)
child = subprocess.Popen([engine, "uci"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def pump():
    for line in child.stdout:
        if state["mute"]:
            continue
        if mode == "garbage" and rng.random() < 0.3:
            say(garbage())
        if mode == "no_uciok" and line.startswith(b"uciok"):
            continue
        if mode == "no_readyok" and line.startswith(b"readyok") and state["ready"] > n:
            continue
        if mode == "illegal" and line.startswith(b"bestmove") and state["go"] >= n:
            line = b"bestmove " + rng.choice(BAD_MOVES) + b"\n"
        say(line)
threading.Thread(target=pump, daemon=True).start()
for line in sys.stdin.buffer:
    words = line.split()
    cmd = words[0] if words else b""
    if cmd == b"isready":
        state["ready"] += 1
        if mode == "early_bestmove" and state["ready"] >= n:
            say(b"bestmove e2e4\n")
    if cmd == b"quit" and mode == "ignore_quit":
        hang()
    if cmd == b"go":
        state["go"] += 1
        if state["go"] >= n:
            if mode == "crash_after":
                if n % 2:
                    os._exit(1)
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "no_bestmove":
                state["mute"] = True
                hang()
            if mode == "flood":
                state["mute"] = True
                while True:
                    say(b"info depth 1 score cp 0 nodes 1 pv e2e4\n" * 500)
            if mode == "noeol":
                state["mute"] = True
                while True:
                    say(b"info string " + b"x" * 65536)
            if mode == "close_stdout":
                state["mute"] = True
                with lock:
                    os.close(1)
                hang()
            if mode == "chatty":
                say(b"info string hello\n" * 20000)
    child.stdin.write(line)
    child.stdin.flush()
"#;

/// Engines as shell scripts: one that never answers, one that speaks binary, one that closes its
/// output and keeps running, and a sound one behind a wrapper that runs it as its child.
const SHELL_ENGINES: &[(&str, &str)] = &[
    ("hang.sh", "#!/bin/bash\nsleep 600\n"),
    (
        "binary.sh",
        "#!/bin/bash\nhead -c 300000 /dev/urandom\nsleep 600\n",
    ),
    ("closed.sh", "#!/bin/bash\nexec >&-\nsleep 600\n"),
    ("wrap.sh", "#!/bin/bash\n\"$1\" uci\n"),
];

/// The misbehaviours of [`BAD_ENGINE`], and whether each can leave a `go` without an answer (then
/// the match needs a clock or a move time: under `--nodes` it waits long for a move).
const BAD_MODES: &[(&str, bool)] = &[
    ("crash_start", false),
    ("kill_start", false),
    ("crash_after", false),
    ("no_uciok", false),
    ("no_readyok", false),
    ("garbage", false),
    ("illegal", false),
    ("early_bestmove", false),
    ("ignore_quit", false),
    ("chatty", false),
    ("close_stdout", false),
    ("no_bestmove", true),
    ("flood", true),
    ("noeol", true),
];

/// A match or tournament at `--concurrency 2` of misbehaving engines and `builtin`: the command
/// line, one argument a line, `{dir}` for the folder of the engines and `{bin}` for polybook.
fn bad_match(rng: &mut StdRng) -> Vec<u8> {
    let engines = if rng.random_ratio(1, 3) { 3 } else { 2 };
    let mut args: Vec<String> = vec!["match".into()];
    let mut clock_needed = false;
    let bad_one = rng.random_range(0..engines);
    for i in 0..engines {
        let spec = if i != bad_one && rng.random_bool(0.5) {
            format!("good{i}=builtin:Hash=4")
        } else if rng.random_ratio(1, 5) {
            let (name, _) = SHELL_ENGINES[rng.random_range(0..SHELL_ENGINES.len())];
            if name == "wrap.sh" {
                format!("good{i}=cmd:{{dir}}/{name} {{bin}}")
            } else {
                format!("bad{i}=cmd:{{dir}}/{name}")
            }
        } else {
            let (mode, hangs) = BAD_MODES[rng.random_range(0..BAD_MODES.len())];
            clock_needed |= hangs;
            let n = rng.random_range(1..12);
            format!("bad{i}=cmd:python3 {{dir}}/bad.py {mode} {n} {{bin}}")
        };
        args.extend(["--engine".into(), spec]);
    }
    if engines == 3 && rng.random_bool(0.5) {
        args.extend(["--tournament".into(), "round-robin".into()]);
    } else if engines == 3 && rng.random_bool(0.3) {
        args.extend(["--tournament".into(), "gauntlet".into()]);
    }
    let limit: &[&str] = match rng.random_range(0..3) {
        0 if !clock_needed => &["--nodes", "200"],
        1 => &["--movetime", "50"],
        _ => &["--tc", "0.5+0.01"],
    };
    args.extend(limit.iter().map(|s| s.to_string()));
    let games = if engines == 3 {
        2
    } else {
        rng.random_range(2..=4)
    };
    args.extend(["--games".into(), games.to_string()]);
    args.extend(["--concurrency".into(), "2".into()]);
    match rng.random_range(0..3) {
        0 => args.extend(["--book".into(), "{books}/gm2001.bin".into()]),
        1 => args.extend(["--book".into(), "{dir}/scored.bin".into()]),
        _ => {}
    }
    if rng.random_bool(0.5) {
        args.extend(["--book-plies".into(), rng.random_range(1..12).to_string()]);
    }
    if rng.random_bool(0.5) {
        args.extend(["--handshake-timeout".into(), "2".into()]);
    }
    if rng.random_bool(0.5) {
        args.extend(["--draw".into(), "movenumber=30,score=20,moves=6".into()]);
    }
    if rng.random_bool(0.5) {
        args.push("-q".into());
    }
    args.extend(["--seed".into(), rng.random_range(0..1000).to_string()]);
    args.extend(["--pgn".into(), "games.pgn".into()]);
    args.join("\n").into_bytes()
}

/// How long one match may take (its engines' own timeouts must end it well before).
const MATCH_LIMIT: Duration = Duration::from_secs(40);

/// The processes (not zombies) whose environment holds `marker`: what a run left behind.
fn processes_marked(marker: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let needle = marker.as_bytes();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !env.split(|&b| b == 0).any(|v| v == needle) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|c| stat[c + 1..].split_whitespace().next());
        if state == Some("Z") {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, cmdline.chars().take(120).collect()));
    }
    found
}

/// `polybook match` (or a tournament) at `--concurrency 2` where engines crash at the start or
/// mid-game, hang (no `uciok`, `readyok` or `bestmove`), speak garbage or binary, claim illegal
/// moves, answer before `go`, flood their output, close it and keep running, or ignore `quit`;
/// against `builtin` at tiny limits, with a book or none. The match ends in bounded time, exits 0
/// or 1, says little, writes a PGN python-chess reads whose forfeits are scored against the side
/// that failed, and leaves no engine process running.
#[test]
fn bad_engines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let engines = d.join("engines");
    std::fs::create_dir(&engines).unwrap();
    std::fs::write(engines.join("bad.py"), BAD_ENGINE).unwrap();
    for (name, text) in SHELL_ENGINES {
        let path = engines.join(name);
        std::fs::write(&path, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(engines.join("scored.bin"), scored_seed()).unwrap();
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    // The games are checked with python-chess (tests/match_check.py): missing, it fails first.
    common::python_chess();
    let books = common::data("books");
    let case_number = std::sync::atomic::AtomicU64::new(0);
    fuzz(
        "bad_engines",
        6,
        Duration::from_secs(120),
        bad_match,
        |input| {
            let text = String::from_utf8_lossy(input);
            let args: Vec<String> = text
                .lines()
                .map(|a| {
                    a.replace("{dir}", &engines.to_string_lossy())
                        .replace("{bin}", common::BIN)
                        .replace("{books}", &books.to_string_lossy())
                })
                .collect();
            let _ = std::fs::remove_file(work.join("games.pgn"));
            let marker = format!(
                "POLYBOOK_FUZZ_ENGINE={}-{}",
                std::process::id(),
                case_number.fetch_add(1, Ordering::Relaxed)
            );
            let (key, value) = marker.split_once('=').unwrap();
            let started = Instant::now();
            let ran = run_in(&work, &args, MATCH_LIMIT, &[(key, value)]);
            let took = started.elapsed();
            // Whatever the outcome, no engine outlives the match (a moment to be reaped).
            let mut left = processes_marked(&marker);
            for _ in 0..50 {
                if left.is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(40));
                left = processes_marked(&marker);
            }
            for (pid, _) in &left {
                // SAFETY: kill(2) on processes this case started (they carry its marker).
                unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
            }
            let told = said(&ran.stderr);
            assert!(
                left.is_empty(),
                "polybook match leaves engines running: {:?}",
                left.iter().map(|l| &l.1).collect::<Vec<_>>()
            );
            assert!(
                !ran.stderr.contains("panicked"),
                "polybook match panics: {told}"
            );
            assert!(
                matches!(ran.code, Some(0 | 1)),
                "polybook match ends with {:?} after {took:?}: {told}",
                ran.code
            );
            let lines: Vec<&str> = ran.stderr.lines().collect();
            assert!(
                lines.len() <= 100 && lines.iter().all(|l| l.chars().count() <= 400),
                "polybook match says too much: {} lines, the longest {} characters",
                lines.len(),
                lines.iter().map(|l| l.chars().count()).max().unwrap_or(0)
            );
            assert!(
                ran.stdout.len() <= 20_000,
                "polybook match prints {} bytes",
                ran.stdout.len()
            );
            if ran.code == Some(1) {
                assert_one_line(lines.last().unwrap_or(&""));
            }
            let pgn = work.join("games.pgn");
            if std::fs::metadata(&pgn).is_ok_and(|m| m.len() > 0) {
                for g in common::match_check(&pgn, None) {
                    let term = g["termination"].as_str().unwrap_or("");
                    assert!(
                        g["errors"].as_array().is_some_and(|e| e.is_empty()),
                        "a game of the PGN has errors: {g}"
                    );
                    assert!(!term.is_empty(), "a game without a Termination tag: {g}");
                    assert!(
                        g["consistent"] == true,
                        "a game's result does not follow from its end: {g}"
                    );
                    // A forfeit for a crash or an illegal move is never the sound engine's.
                    if term == "abandoned" || term == "illegal move" {
                        let loser = if g["result"] == "1-0" {
                            &g["black"]
                        } else {
                            &g["white"]
                        };
                        assert!(
                            loser.as_str().is_some_and(|l| l.starts_with("bad")),
                            "a sound engine loses by {term}: {g}"
                        );
                    }
                }
            }
        },
    );
}
