//! What every integration test shares: where the bundled data lies, and the reference tools.
//!
//! The data is real data made by others, carried in `tests/data/` (provenance and licences in its
//! README) and `pgn/` (the bundled games). A reference tool that is missing fails its test with one
//! line naming the tool and how to install it; `./test.sh` installs them all.
#![allow(dead_code)]

pub mod ctg_writer;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub mod obk;

/// The `polybook` binary built for the tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_polybook");

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file of the test data, `tests/data/REL`.
pub fn data(rel: &str) -> PathBuf {
    root().join("tests/data").join(rel)
}

/// An EPD suite of the test data, `tests/data/epd/NAME`.
pub fn epd(name: &str) -> PathBuf {
    data("epd").join(name)
}

/// The book Debian's GNU Chess ships (`tests/data/books/gnuchess.bin`), a real book made by
/// others.
pub fn gnuchess_book() -> PathBuf {
    data("books/gnuchess.bin")
}

/// One of the bundled game files in `pgn/` (`dortmund.pgn`, `world_matches.pgn`).
pub fn bundled(name: &str) -> PathBuf {
    root().join("pgn").join(name)
}

/// Debian's `polyglot`, the reference for books, lines and info.
pub fn polyglot() -> &'static str {
    installed(
        "/usr/games/polyglot",
        "polyglot",
        "apt-get install -y polyglot",
    )
}

/// Debian's `stockfish`, a real UCI engine.
pub fn stockfish() -> &'static str {
    installed(
        "/usr/games/stockfish",
        "stockfish",
        "apt-get install -y stockfish",
    )
}

/// Debian's `glaurung` (Glaurung 2.2, a UCI engine by others), a tournament's third engine.
pub fn glaurung() -> &'static str {
    installed(
        "/usr/games/glaurung",
        "glaurung",
        "apt-get install -y glaurung",
    )
}

/// `python3` with python-chess, the reference Polyglot reader and UCI client.
pub fn python_chess() -> &'static str {
    static FOUND: OnceLock<bool> = OnceLock::new();
    let found = *FOUND.get_or_init(|| {
        Command::new("python3")
            .args(["-c", "import chess, chess.polyglot"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    assert!(
        found,
        "reference tool missing: python-chess (pip install chess), or run ./test.sh"
    );
    "python3"
}

fn installed(path: &'static str, name: &str, install: &str) -> &'static str {
    assert!(
        Path::new(path).exists(),
        "reference tool missing: {name} ({path}): {install}, or run ./test.sh"
    );
    path
}

/// Runs the `polybook` binary built for the tests with `args`.
pub fn polybook<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(BIN).args(args).output().expect("run polybook")
}

/// The arguments of `polybook match` between `engines` (an `--engine` each), then `rest`.
pub fn match_args<'a>(engines: &[&'a str], rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["match"];
    for engine in engines {
        args.extend(["--engine", engine]);
    }
    args.extend_from_slice(rest);
    args
}

/// Runs `polybook match` between `engines` with the further arguments `rest`.
pub fn polybook_match(engines: &[&str], rest: &[&str]) -> Output {
    polybook(&match_args(engines, rest))
}

/// [`polybook_match`], which must succeed (its standard error shown if not).
pub fn polybook_match_ok(engines: &[&str], rest: &[&str]) -> Output {
    let out = polybook_match(engines, rest);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// The engine spec (`cmd:…`) of tests/fake_engine.py in `mode` with `arg`: an engine that
/// misbehaves as told (plays at random, crashes, hangs, lies, floods).
pub fn fake_engine(mode: &str, arg: impl std::fmt::Display) -> String {
    format!(
        "cmd:{} {} {mode} {arg}",
        python_chess(),
        root().join("tests/fake_engine.py").display()
    )
}

/// Runs the `polybook` binary with `args`, asserts that it succeeded, and returns its stdout.
pub fn polybook_ok(args: &[&str]) -> String {
    let out = polybook(args);
    assert!(
        out.status.success(),
        "polybook {args:?} failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// The lichess games of Magnus Carlsen's account (`tests/data/pgn/lichess_magnus_2018-2022.pgn.xz`).
pub fn lichess_magnus() -> PathBuf {
    data("pgn/lichess_magnus_2018-2022.pgn.xz")
}

/// Builds into `out` a White repertoire for Magnus Carlsen's lichess account from
/// [`lichess_magnus`]'s games: his own moves to 10 plies, each played at least twice.
pub fn build_magnus_white_repertoire(out: &Path) {
    polybook_ok(&[
        "build",
        path_str(&lichess_magnus()),
        "-o",
        path_str(out),
        "--player",
        "DrNykterstein",
        "--color",
        "white",
        "--max-ply",
        "10",
        "--min-games",
        "2",
    ]);
}

/// The arguments of `polybook analyse BOOK -o OUT --nodes NODES -q`, then `more`.
pub fn analyse_args<'a>(
    book: &'a Path,
    out: &'a Path,
    nodes: &'a str,
    more: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "analyse",
        path_str(book),
        "-o",
        path_str(out),
        "--nodes",
        nodes,
        "-q",
    ];
    args.extend_from_slice(more);
    args
}

/// Runs `polybook COMMAND -q -o OUT INPUTS... OPTIONS`, which must succeed; the bytes it wrote to
/// OUT (`build`, `tally`, `book`).
pub fn quietly_written<P: AsRef<Path>>(
    command: &str,
    inputs: &[P],
    out: &Path,
    options: &[&str],
) -> Vec<u8> {
    let mut args = vec![command, "-q", "-o", path_str(out)];
    args.extend(inputs.iter().map(|p| path_str(p.as_ref())));
    args.extend_from_slice(options);
    polybook_ok(&args);
    std::fs::read(out).unwrap()
}

/// The element of the JSON array `array` whose `key` is `value` (the first); panics if none is.
pub fn json_find<'a>(
    array: &'a serde_json::Value,
    key: &str,
    value: &str,
) -> &'a serde_json::Value {
    array
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x[key] == value)
        .unwrap_or_else(|| panic!("no {key} {value:?} in {array}"))
}

/// Runs `polybook ARGS` (a `match` that must not start): it fails at once (within 4 s) with exit
/// `code` and one error line that contains `message`, and writes no PGN at `pgn`.
pub fn assert_refused_at_once(args: &[&str], code: i32, message: &str, pgn: &Path) {
    let start = std::time::Instant::now();
    let out = polybook(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
    assert!(
        err.starts_with("polybook: error: ") && err.contains(message),
        "{args:?}: {err}"
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(4),
        "{args:?} took {:?}",
        start.elapsed()
    );
    assert!(!pgn.exists(), "{args:?}: no PGN before a game");
}

/// Runs the `polybook` binary with `args` (a `--json` report), asserts that it succeeded, and
/// returns its stdout read as JSON.
pub fn polybook_json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&polybook_ok(args)).unwrap()
}

/// Runs the `polybook` binary with `args` and asserts that it exits with `code` after one error
/// line that contains `what`; returns that line.
pub fn polybook_fails(args: &[&str], code: i32, what: &str) -> String {
    let out = polybook(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "polybook {args:?}: {}",
        stderr(&out)
    );
    let err = failed(&out, code, what);
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// Asserts that a run exited with `code` and that its standard error contains `what`; that
/// standard error.
pub fn failed(out: &Output, code: i32, what: &str) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(what), "expected {what:?} in {err}");
    err
}

/// Asserts that a run exited with `code` after one line of standard error that starts with
/// `start` (`polybook: error: ...`); that line.
pub fn one_error_line(out: &Output, code: i32, start: &str) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with(start), "expected {start:?} first in {err}");
    err
}

/// The `polybook` binary as a command whose standard input, output and error are pipes, for a
/// test that talks to it while it runs.
pub fn piped() -> Command {
    let mut command = Command::new(BIN);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs a whole UCI session in this process, until the end of `input`; its output.
pub fn uci_session(input: &str) -> String {
    /// The engine's output, written from its threads.
    #[derive(Clone, Default)]
    struct Collect(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Collect {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(b)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let out = Collect::default();
    polybook::uci::run(input.as_bytes(), out.clone());
    text(&out.0.lock().unwrap())
}

/// The moves of a UCI session's `bestmove` lines, in order.
pub fn bestmoves(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("bestmove "))
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect()
}

/// Runs `polybook ARGS` in `dir` with `input` on its standard input.
pub fn polybook_in(dir: &Path, args: &[&str], input: &str) -> Output {
    run_with_input(
        Command::new(BIN).args(args).current_dir(dir),
        input.as_bytes(),
    )
}

/// Runs `command` to its end with `input` on its standard input; what it wrote (standard output
/// and error) and how it ended. Panics if it cannot be started.
pub fn run_with_input(command: &mut Command, input: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    // The command may stop before it has read all the input: a closed pipe is no failure here.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

/// The games of a PGN as python-chess reads them, one JSON object each (tests/match_check.py:
/// whether every move is legal, the result consistent with the final position, the book moves in
/// `book`, and the tags).
pub fn match_check(pgn: &Path, book: Option<&Path>) -> Vec<serde_json::Value> {
    let mut cmd = Command::new(python_chess());
    cmd.arg(root().join("tests/match_check.py")).arg(pgn);
    if let Some(b) = book {
        cmd.arg(b);
    }
    succeeds(&mut cmd, "match_check.py")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The book python-chess's reference builder (tests/reference_book.py) makes of the `pgn` files
/// with `options` (build's entry options), written to `out`; its bytes.
pub fn reference_book<P: AsRef<Path>>(pgn: &[P], out: &Path, options: &[&str]) -> Vec<u8> {
    let mut cmd = Command::new(python_chess());
    cmd.arg(root().join("tests/reference_book.py")).arg(out);
    cmd.args(pgn.iter().map(AsRef::as_ref)).args(options);
    succeeds(&mut cmd, "reference builder (pip install chess)");
    std::fs::read(out).unwrap()
}

/// The text of the file at `path` once it has some: read up to `tries` times, `pause` apart
/// (empty if it never had any).
pub fn wait_for_text(path: &Path, tries: usize, pause: std::time::Duration) -> String {
    let mut seen = String::new();
    for _ in 0..tries {
        seen = std::fs::read_to_string(path).unwrap_or_default();
        if !seen.is_empty() {
            break;
        }
        std::thread::sleep(pause);
    }
    seen
}

/// Waits until the PGN log at `path`, which `child` (a `match`) writes, holds `games` games.
/// Panics if `child` ends first or `within` passes.
pub fn wait_for_games(
    child: &mut std::process::Child,
    path: &Path,
    games: usize,
    within: std::time::Duration,
) {
    let start = std::time::Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let logged = text.matches("[Event ").count();
        if logged >= games {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                std::io::Read::read_to_string(&mut pipe, &mut stderr).unwrap_or_default();
            }
            panic!(
                "{}: ended ({status}) with {logged} of {games} games: {stderr}",
                path.display()
            );
        }
        assert!(
            start.elapsed() < within,
            "{}: {logged} of {games} games after {within:?}",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs a python-chess script (`python3 -c SCRIPT ARGS`); its standard output. Panics with the
/// script's standard error if it fails.
pub fn python(script: &str, args: &[&str]) -> String {
    let mut cmd = Command::new(python_chess());
    cmd.arg("-c").arg(script).args(args);
    succeeds(&mut cmd, "python-chess failed")
}

/// Every position reachable from the start in the Polyglot book `book`, as python-chess reads it,
/// with its moves (UCI) and their weights: one sorted line per position, `key move:weight ...`.
/// Moves of weight 0 are left out unless `options` holds `weight0`; with `queen`, so are
/// underpromotions; with `quantize`, the weights are those an OBK book written by
/// `common::obk::encode` reads back: 100 above half the position's largest weight, 50 above a
/// quarter, 25 above 0, 1 for 0.
pub fn python_reachable(book: &Path, options: &[&str]) -> String {
    const SCRIPT: &str = r#"
import sys, chess, chess.polyglot
options = sys.argv[2:]
def q(w, top):
    return 1 if w == 0 else 100 if 2 * w > top else 50 if 4 * w > top else 25
with chess.polyglot.open_reader(sys.argv[1]) as r:
    seen, todo, out = set(), [chess.Board()], []
    while todo:
        b = todo.pop()
        k = chess.polyglot.zobrist_hash(b)
        if k in seen:
            continue
        seen.add(k)
        es = [e for e in r.find_all(b, minimum_weight=0 if 'weight0' in options else 1)
              if 'queen' not in options or e.move.promotion in (None, chess.QUEEN)]
        if not es:
            continue
        top = max(e.weight for e in es)
        quantize = 'quantize' in options
        ws = {e.move.uci(): (q(e.weight, top) if quantize else e.weight) for e in es}
        out.append(f'{k:016x} ' + ' '.join(sorted(f'{m}:{w}' for m, w in ws.items())))
        for e in es:
            nb = b.copy()
            nb.push(e.move)
            todo.append(nb)
print('\n'.join(sorted(out)))
"#;
    let mut args = vec![path_str(book)];
    args.extend_from_slice(options);
    python(SCRIPT, &args)
}

/// Runs `command` to its end; its standard output. Panics with `what` and its standard error
/// unless it succeeds.
pub fn succeeds(command: &mut Command, what: &str) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {command:?}: {e}"));
    assert!(out.status.success(), "{what}: {}", stderr(&out));
    stdout(&out)
}

/// Python lines that import DuckDB and turn its progress bar off: a query slower than two seconds
/// (on a loaded machine) would otherwise draw the bar on standard output, among what a test reads.
pub const DUCKDB: &str = "import duckdb\nduckdb.sql(\"SET enable_progress_bar = false\")\n";

/// Runs a Python `script` that queries with DuckDB (after [`DUCKDB`]) with `args`; its standard
/// output.
pub fn duckdb(script: &str, args: &[&str]) -> String {
    python(&format!("{DUCKDB}{script}"), args)
}

/// Bytes as text (lossy: a test's output may hold anything).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The lines of `text` that start with `prefix`.
pub fn lines_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// A run's standard output, as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A run's standard error, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Python lines that define `standard_games(paths, **options)`: the games of `.pgn.xz` files
/// taken in order (opened with `options`), variant games skipped, each with White's points (2 a
/// win, 1 a draw or an unknown result, 0 a loss).
pub const PYTHON_STANDARD_GAMES: &str = r#"
import lzma, io
import chess, chess.pgn
def standard_games(paths, **options):
    for path in paths:
        text = io.StringIO(lzma.open(path, "rt", **options).read())
        while (game := chess.pgn.read_game(text)) is not None:
            if game.headers.get("Variant", "Standard").lower() not in ("standard", "normal", "chess"):
                continue
            yield game, {"1-0": 2, "0-1": 0}.get(game.headers.get("Result", "*"), 1)
"#;

/// A python-chess script (after [`PYTHON_STANDARD_GAMES`]): the count of one position's moves over
/// `.pgn.xz` files taken in order (arguments: MOVES FILE...; variant games skipped): each move's
/// `uci san games wins draws losses` (the mover's results), most games first, ties in order of
/// first appearance.
pub fn python_position_stats() -> String {
    format!(
        "{PYTHON_STANDARD_GAMES}{}",
        r#"
import sys, collections
import chess.polyglot
target = chess.Board()
for san in sys.argv[1].split():
    target.push_san(san)
target = chess.polyglot.zobrist_hash(target)
stats = collections.OrderedDict()
for game, white in standard_games(sys.argv[2:]):
    board = game.board()
    for move in game.mainline_moves():
        if chess.polyglot.zobrist_hash(board) == target:
            points = 2 - white if board.turn == chess.BLACK else white
            c = stats.setdefault(move.uci(), [board.san(move), 0, 0, 0, 0])
            c[1] += 1
            c[2 + {2: 0, 1: 1, 0: 2}[points]] += 1
        board.push(move)
for uci, (san, n, w, d, l) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
    print(uci, san, n, w, d, l)
"#
    )
}

/// The binary (or any command) speaking UCI on pipes, its lines read on a thread of their own, as
/// a GUI runs an engine.
pub struct UciChild {
    pub child: std::process::Child,
    pub stdin: std::process::ChildStdin,
    pub lines: std::sync::mpsc::Receiver<String>,
}

impl UciChild {
    /// `polybook ARGS`.
    pub fn start(args: &[&str]) -> UciChild {
        let mut command = Command::new(BIN);
        command.args(args);
        UciChild::spawn(command)
    }

    /// Runs `command` (the binary, perhaps through a shell) as the engine.
    pub fn spawn(mut command: Command) -> UciChild {
        use std::io::BufRead;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        UciChild {
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The lines up to the first one starting with `prefix` (included), and how long it took.
    pub fn until(
        &mut self,
        prefix: &str,
        timeout: std::time::Duration,
    ) -> (Vec<String>, std::time::Duration) {
        use std::sync::mpsc::RecvTimeoutError;
        let start = std::time::Instant::now();
        let mut seen = Vec::new();
        loop {
            let left = timeout.saturating_sub(start.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return (seen, start.elapsed());
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no '{prefix}' within {timeout:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the engine ended before '{prefix}'"),
            }
        }
    }

    /// The first line starting with `prefix`, and how long it took.
    pub fn expect(
        &mut self,
        prefix: &str,
        timeout: std::time::Duration,
    ) -> (String, std::time::Duration) {
        let (mut lines, took) = self.until(prefix, timeout);
        (lines.pop().unwrap(), took)
    }
}

/// Writes `contents` to the file `name` in the folder `dir`; its path.
pub fn write_file(
    dir: impl AsRef<Path>,
    name: impl AsRef<Path>,
    contents: impl AsRef<[u8]>,
) -> PathBuf {
    let path = dir.as_ref().join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// A path as the `&str` an argument list takes (test paths are UTF-8).
pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every book of the test data (`tests/data/books/*.bin`), sorted by name.
pub fn data_books() -> Vec<PathBuf> {
    let mut books: Vec<PathBuf> = std::fs::read_dir(data("books"))
        .expect("tests/data/books")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    books.sort();
    assert!(books.len() >= 15, "only {} bundled books", books.len());
    books
}

/// Writes a book of the start position's `(move, weight)` entries (UCI moves, learn 0).
pub fn start_book(path: &Path, moves: &[(&str, u16)]) {
    use polybook::book::{Entry, Key, write_book};
    let key = Key::of(&shakmaty::Chess::default());
    let mut entries: Vec<Entry> = moves
        .iter()
        .map(|&(uci, weight)| Entry::from_uci(key, uci, weight).unwrap())
        .collect();
    write_book(path, &mut entries).unwrap();
}

/// The position after `moves` (UCI) from the start.
pub fn position_after(moves: &[&str]) -> shakmaty::Chess {
    polybook::position::play_moves(shakmaty::Chess::default(), &moves.join(" ")).unwrap()
}

/// Is `uci` a legal move in `fen`?
pub fn legal_in(fen: &str, uci: &str) -> bool {
    use shakmaty::{CastlingMode, Chess, fen::Fen, uci::UciMove};
    let pos: Chess = fen
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    uci.parse::<UciMove>()
        .ok()
        .and_then(|m| m.to_move(&pos).ok())
        .is_some()
}

/// The mate-in-2 puzzles of the test data (`tests/data/epd/mate_in_2.pgn`), all read.
pub fn mate_in_2_puzzles() -> Vec<polybook::engine::suite::SuiteEntry> {
    let bytes = std::fs::read(epd("mate_in_2.pgn")).unwrap();
    let (entries, errors) = polybook::engine::suite::parse_puzzles(&text(&bytes));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(entries.len() > 100);
    entries
}

/// Asserts that search result `r` solves puzzle `e`.
pub fn assert_solved(e: &polybook::engine::suite::SuiteEntry, r: &polybook::engine::SearchResult) {
    assert!(
        polybook::engine::suite::is_solved(&e.task, r),
        "line {}: {} got {:?}",
        e.line,
        e.fen,
        r.score
    );
}

/// Sends `signal` (`TERM`, `INT`, …) to process `pid` with `kill`, which must succeed.
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends `signal` (`INT`, `KILL`, …) to `child` and waits for its output. After `INT` it must
/// have stopped within a second, with exit status 130 and a message containing `says`.
pub fn signal_and_wait(child: std::process::Child, signal: &str, says: &str) -> Output {
    send_signal(child.id(), signal);
    let signalled = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    if signal == "INT" {
        assert!(signalled.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    o
}

/// The paths in folder `dir`, sorted.
pub fn sorted_paths(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths
}

/// Every game of the PGN file `path` as python-chess reads it: for each, the JSON of the Python
/// expression `game` over the game `g` (a `chess.pgn.Game`).
pub fn python_games(path: &Path, game: &str) -> Vec<serde_json::Value> {
    let script = format!(
        r#"
import sys, json, chess.pgn
games = []
with open(sys.argv[1]) as f:
    while (g := chess.pgn.read_game(f)) is not None:
        games.append({game})
print(json.dumps(games))
"#
    );
    serde_json::from_str(&python(&script, &[path_str(path)])).unwrap()
}

/// Asserts that `text` contains `part`, showing `text` when it does not.
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "{text}");
}

/// Makes a FIFO (named pipe) at `path`.
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Reads the FIFO at `path` on a thread of its own, to its end (once a writer has opened and
/// closed it); join the thread for the bytes.
pub fn read_fifo(path: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    use std::io::Read;
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        bytes
    })
}

/// A small deterministic generator (xorshift64), for tests that make their own random input.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    /// The next index below `n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// The rows of the tallies `paths` summed in order (as `tally --merge` sums them), and their
/// games.
pub fn summed_tallies(paths: &[&Path]) -> (Vec<polybook::builder::PairCount>, u64) {
    let readers: Vec<polybook::tally::TallyReader> = paths
        .iter()
        .map(|p| polybook::tally::TallyReader::open(p).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let games = readers.iter().map(|r| r.meta().games).sum();
    let mut merge = polybook::tally::TallyMerge::new(readers).unwrap();
    let (mut out, mut position) = (Vec::new(), Vec::new());
    while merge.next_position(&mut position).unwrap() {
        out.append(&mut position);
    }
    (out, games)
}
