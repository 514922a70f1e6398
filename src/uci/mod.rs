//! The UCI protocol around the engine and the book.
//!
//! [`run`] reads commands from any [`BufRead`] and writes answers to any [`Write`], so a GUI can
//! drive it over stdin/stdout and a test in-process. The search runs on its own thread: the
//! command loop keeps reading while it thinks, so `isready`, `stop` and `ponderhit` are answered
//! at once. The book comes first: on `go`, a legal book move (within `BookDepth`) is played
//! without searching.
//!
//! Bad input never ends the loop: an unknown command, a malformed `position` or an out-of-range
//! option value is answered with an `info string` naming the problem.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//!
//! /// Collects the engine's output where the test can read it.
//! #[derive(Clone, Default)]
//! struct Collect(Arc<Mutex<Vec<u8>>>);
//! impl std::io::Write for Collect {
//!     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
//!         self.0.lock().unwrap().write(b)
//!     }
//!     fn flush(&mut self) -> std::io::Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! let input = "uci\nisready\nposition startpos moves e2e4\ngo depth 3\nquit\n";
//! let out = Collect::default();
//! polybook::uci::run(input.as_bytes(), out.clone());
//! let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
//! assert!(text.contains("uciok") && text.contains("readyok"));
//! assert!(text.lines().last().unwrap().starts_with("bestmove "));
//! ```

pub mod time;

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;
use shakmaty::{CastlingMode, Chess, Color, Move, Position};

use crate::book::{Book, ChooseOptions, Key, Pick, Selection};
use crate::engine::eval::{Params, evaluate};
use crate::engine::search::{MATE, hash_of};
use crate::engine::{Engine, Iteration, Limits, Score, SearchOptions};
use crate::position::{fen_of, parse_fen, parse_move};
use crate::text::quote;
use time::{Clock, TimePlan};

/// The longest input line read whole; the rest of a longer line is skipped.
const MAX_LINE: usize = 1 << 16;

/// A writer shared between the command loop and the search thread, one whole line at a time.
struct Output {
    inner: Mutex<Box<dyn Write + Send>>,
}

impl Output {
    /// Writes one line and flushes it (a GUI waits for whole lines). A closed output is not an
    /// error worth dying for: the GUI has gone, and EOF on the input will follow.
    fn line(&self, text: &str) {
        let mut w = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = writeln!(w, "{text}");
        let _ = w.flush();
    }
}

/// The UCI options, as set by `setoption`.
#[derive(Clone, Debug)]
struct Options {
    move_overhead: Duration,
    own_book: bool,
    book_file: String,
    selection: Selection,
    min_weight: u16,
    /// In full moves; 0 means no limit.
    book_depth: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            move_overhead: Duration::from_millis(DEFAULT_OVERHEAD_MS),
            own_book: true,
            book_file: String::new(),
            selection: Selection::Weighted,
            min_weight: 1,
            book_depth: 0,
        }
    }
}

const DEFAULT_OVERHEAD_MS: u64 = 30;
/// The largest transposition table offered (the machines this runs on are shared).
const MAX_HASH_MB: i64 = 1024;

/// The search switches offered as UCI options: (UCI name, name for [`SearchOptions::set`]).
const SWITCHES: [(&str, &str); 10] = [
    ("MateDistancePruning", "MDP"),
    ("CheckExtension", "CheckExtension"),
    ("NullMove", "NullMove"),
    ("Futility", "Futility"),
    ("AggressiveFutility", "AggressiveFutility"),
    ("LMR", "LMR"),
    ("LMP", "LMP"),
    ("SpiteCheckAnalogy", "SpiteCheck"),
    ("MateSearch", "MateSearch"),
    ("Tablebase", "Tablebase"),
];

fn switch_default(o: &SearchOptions, set_name: &str) -> bool {
    match set_name {
        "MDP" => o.mdp,
        "CheckExtension" => o.check_extension,
        "NullMove" => o.null_move,
        "Futility" => o.futility,
        "AggressiveFutility" => o.aggressive_futility,
        "LMR" => o.lmr,
        "LMP" => o.lmp,
        "Tablebase" => o.tablebase,
        "MateSearch" => o.mate_search,
        _ => o.spite_check,
    }
}

/// The `go` command's parameters.
#[derive(Clone, Debug, Default)]
struct Go {
    wtime: Option<u64>,
    btime: Option<u64>,
    winc: Option<u64>,
    binc: Option<u64>,
    movestogo: Option<u32>,
    depth: Option<u32>,
    nodes: Option<u64>,
    movetime: Option<u64>,
    mate: Option<u32>,
    infinite: bool,
    ponder: bool,
    searchmoves: Vec<String>,
}

/// What the command loop and the running search share.
struct Control {
    /// Set to stop the search (by `stop`, a time limit or the end of input).
    stop: Arc<AtomicBool>,
    /// `stop` was asked for (by the GUI or the end of input), not a time limit.
    stop_requested: AtomicBool,
    /// `go ponder` until `ponderhit`.
    pondering: AtomicBool,
    /// `go infinite`: `bestmove` waits for `stop`.
    infinite: bool,
    /// When the clock started for this move (the `go`, or the `ponderhit`), with the plan.
    deadlines: Mutex<Option<(Instant, TimePlan)>>,
    /// The plan to start at `ponderhit`.
    ponder_plan: Option<TimePlan>,
    finished: AtomicBool,
}

impl Control {
    fn deadlines(&self) -> MutexGuard<'_, Option<(Instant, TimePlan)>> {
        self.deadlines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn past_soft(&self) -> bool {
        self.deadlines()
            .is_some_and(|(start, plan)| start.elapsed() >= plan.soft)
    }

    fn past_hard(&self) -> bool {
        self.deadlines()
            .is_some_and(|(start, plan)| start.elapsed() >= plan.hard)
    }

    /// `bestmove` may be sent: not pondering, and not infinite unless stopped.
    fn may_answer(&self) -> bool {
        self.stop_requested.load(Ordering::Relaxed)
            || !(self.infinite || self.pondering.load(Ordering::Relaxed))
    }
}

struct Running {
    handle: JoinHandle<Engine>,
    control: Arc<Control>,
}

/// The whole state of a UCI session.
struct Session {
    out: Arc<Output>,
    options: Options,
    search_options: SearchOptions,
    /// `None` while a search has it.
    engine: Option<Engine>,
    book: Option<Book>,
    rng: StdRng,
    pos: Chess,
    /// Hashes of the positions before `pos`, oldest first.
    history: Vec<u64>,
    running: Option<Running>,
}

/// Runs the UCI loop until `quit` or the end of `input`.
///
/// Errors reading the input end the loop like EOF; a running search is stopped and its
/// `bestmove` written before returning.
pub fn run<R: BufRead>(mut input: R, output: impl Write + Send + 'static) {
    let out = Arc::new(Output {
        inner: Mutex::new(Box::new(output)),
    });
    let mut session = Session::new(out);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match read_line(&mut input, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        if !session.command(line.trim()) {
            break;
        }
    }
    session.finish_search(true);
}

/// Reads one line into `buf` (without its end), keeping at most [`MAX_LINE`] bytes of it.
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> io::Result<usize> {
    read_bounded_line(input, buf, MAX_LINE)
}

/// Appends one line of `input` to `buf` (its end consumed but not kept), keeping at most `max`
/// bytes in `buf` and skipping the rest of a longer line; returns the bytes consumed (0 at the
/// end of the input). An interrupted read is retried.
pub(crate) fn read_bounded_line<R: BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(total);
        }
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let keep = used.min(max.saturating_sub(buf.len()));
        buf.extend_from_slice(&chunk[..keep]);
        input.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

fn uci(m: &Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// Orders scores: higher is better for the side to move.
fn score_key(s: Score) -> i32 {
    match s {
        Score::Cp(cp) => cp,
        Score::Mate(n) if n > 0 => MATE - n,
        Score::Mate(n) => -MATE - n,
    }
}

/// A child position's score seen from its parent.
fn negate(s: Score) -> Score {
    match s {
        Score::Cp(cp) => Score::Cp(-cp),
        Score::Mate(n) if n > 0 => Score::Mate(-n),
        Score::Mate(n) => Score::Mate(-n + 1),
    }
}

/// The `info` line of an iteration, with `multipv 1` as GUIs expect.
fn info_line(it: &Iteration) -> String {
    let mut s = format!(
        "info depth {} seldepth {} multipv 1 score {} nodes {} nps {} hashfull {} time {} pv",
        it.depth,
        it.seldepth,
        it.score,
        it.nodes,
        it.nps(),
        it.hashfull,
        it.time.as_millis()
    );
    for m in &it.pv {
        s.push(' ');
        s.push_str(&uci(m));
    }
    s
}

fn bestmove_line(best: Option<&Move>, ponder: Option<&Move>) -> String {
    match (best, ponder) {
        (Some(b), Some(p)) => format!("bestmove {} ponder {}", uci(b), uci(p)),
        (Some(b), None) => format!("bestmove {}", uci(b)),
        (None, _) => "bestmove 0000".to_string(),
    }
}

impl Session {
    fn new(out: Arc<Output>) -> Self {
        let search_options = SearchOptions::default();
        let engine = Engine::new(search_options.clone());
        engine.populate();
        // The 3-man tablebase is generated on first probe, about 100 ms in which the search does
        // not see `stop`: generate it now, on a helper thread, while the GUI is still talking.
        if search_options.tablebase {
            std::thread::spawn(crate::engine::tablebase::init);
        }
        Session {
            out,
            options: Options::default(),
            engine: Some(engine),
            search_options,
            book: None,
            rng: StdRng::from_os_rng(),
            pos: Chess::default(),
            history: Vec::new(),
            running: None,
        }
    }

    fn say(&self, text: &str) {
        self.out.line(text);
    }

    fn info(&self, text: &str) {
        self.out.line(&format!("info string {text}"));
    }

    /// Handles one command; `false` to quit.
    fn command(&mut self, line: &str) -> bool {
        let mut words = line.split_whitespace();
        let Some(cmd) = words.next() else {
            return true;
        };
        let rest: Vec<&str> = words.collect();
        self.reap();
        match cmd {
            "uci" => self.uci(),
            "isready" => self.say("readyok"),
            "debug" | "register" => {}
            "setoption" => {
                self.finish_search(true);
                self.setoption(&rest);
            }
            "ucinewgame" => {
                self.finish_search(true);
                if let Some(e) = self.engine.as_mut() {
                    e.clear();
                }
                self.pos = Chess::default();
                self.history.clear();
            }
            "position" => {
                self.finish_search(true);
                self.position(&rest);
            }
            "go" => {
                self.finish_search(true);
                self.go(&rest);
            }
            "stop" => self.finish_search(true),
            "ponderhit" => self.ponderhit(),
            "quit" => return false,
            "d" => self.show(),
            "eval" => self.eval(),
            _ => self.info(&format!("unknown command {}", quote(line))),
        }
        true
    }

    fn uci(&self) {
        self.say(&format!("id name polybook {}", env!("CARGO_PKG_VERSION")));
        self.say("id author the polybook authors");
        let d = &self.search_options;
        for line in [
            format!(
                "option name Hash type spin default {} min 1 max {MAX_HASH_MB}",
                d.hash_mb
            ),
            "option name Threads type spin default 1 min 1 max 1".to_string(),
            "option name Clear Hash type button".to_string(),
            format!("option name Move Overhead type spin default {DEFAULT_OVERHEAD_MS} min 0 max 5000"),
            "option name Ponder type check default false".to_string(),
            "option name OwnBook type check default true".to_string(),
            "option name BookFile type string default <empty>".to_string(),
            "option name BookSelection type combo default weighted var best var weighted var uniform"
                .to_string(),
            "option name BookMinWeight type spin default 1 min 0 max 65535".to_string(),
            "option name BookDepth type spin default 0 min 0 max 1000".to_string(),
            "option name BookSeed type spin default 0 min 0 max 2147483647".to_string(),
        ] {
            self.say(&line);
        }
        for (name, set_name) in SWITCHES {
            self.say(&format!(
                "option name {name} type check default {}",
                switch_default(d, set_name)
            ));
        }
        self.say("uciok");
    }

    /// Gets the engine back from a finished search thread without waiting.
    fn reap(&mut self) {
        if self
            .running
            .as_ref()
            .is_some_and(|r| r.control.finished.load(Ordering::Acquire))
        {
            self.finish_search(false);
        }
    }

    /// Stops the running search (if `stop`), waits for its `bestmove` and takes the engine back.
    fn finish_search(&mut self, stop: bool) {
        let Some(running) = self.running.take() else {
            return;
        };
        if stop {
            running
                .control
                .stop_requested
                .store(true, Ordering::Relaxed);
            running.control.stop.store(true, Ordering::Relaxed);
            // An infinite or ponder search waiting to answer: wake it now.
            running.handle.thread().unpark();
        }
        match running.handle.join() {
            Ok(engine) => self.engine = Some(engine),
            Err(_) => {
                // Its `bestmove` never came: answer with a legal move all the same.
                self.info("the search failed; starting a fresh engine");
                let first = self.pos.legal_moves().first().copied();
                self.say(&bestmove_line(first.as_ref(), None));
                self.engine = Some(Engine::new(self.search_options.clone()));
            }
        }
    }

    fn ponderhit(&mut self) {
        let Some(running) = &self.running else {
            return;
        };
        let c = &running.control;
        if c.pondering.load(Ordering::Relaxed) {
            if let Some(plan) = c.ponder_plan {
                *c.deadlines() = Some((Instant::now(), plan));
            }
            c.pondering.store(false, Ordering::Relaxed);
            running.handle.thread().unpark();
        }
    }

    // ---- setoption -------------------------------------------------------------------------

    fn setoption(&mut self, words: &[&str]) {
        // setoption name <name, maybe several words> [value <value, maybe several words>]
        if words.first().map(|w| w.to_ascii_lowercase()) != Some("name".to_string()) {
            self.info("setoption expects 'setoption name <name> [value <value>]'");
            return;
        }
        let value_at = words.iter().position(|w| w.eq_ignore_ascii_case("value"));
        let name = words[1..value_at.unwrap_or(words.len())].join(" ");
        let value = value_at.map(|i| words[i + 1..].join(" "));
        let value = value.as_deref().unwrap_or("");
        let key = name.to_ascii_lowercase().replace(' ', "");
        match key.as_str() {
            "hash" => {
                if let Some(mb) = self.spin(&name, value, 1, MAX_HASH_MB) {
                    self.search_options.hash_mb = mb as usize;
                    // The old table goes first, then the new one is allocated whole: its
                    // pages are not left for the search to fault in (a legitimate wait for the
                    // next `isready`).
                    self.engine = None;
                    let engine = Engine::new(self.search_options.clone());
                    engine.populate();
                    self.engine = Some(engine);
                }
            }
            "threads" => {
                if let Some(n) = self.spin(&name, value, 1, 1) {
                    let _ = n;
                }
            }
            "clearhash" => {
                if let Some(e) = self.engine.as_mut() {
                    e.clear();
                }
            }
            "moveoverhead" => {
                if let Some(ms) = self.spin(&name, value, 0, 5000) {
                    self.options.move_overhead = Duration::from_millis(ms as u64);
                }
            }
            "ponder" | "uci_analysemode" | "uci_chess960" | "uci_showwdl" => {
                if key == "uci_chess960" && value.eq_ignore_ascii_case("true") {
                    self.info("UCI_Chess960 is not supported; playing standard chess");
                }
            }
            "ownbook" => {
                if let Some(b) = self.check(&name, value) {
                    self.options.own_book = b;
                }
            }
            "bookfile" => self.set_book(value),
            "bookselection" => match value.parse::<Selection>() {
                Ok(s) => self.options.selection = s,
                Err(e) => self.info(&format!("{e}; keeping {:?}", self.options.selection)),
            },
            "bookminweight" => {
                if let Some(w) = self.spin(&name, value, 0, 65535) {
                    self.options.min_weight = w as u16;
                }
            }
            "bookdepth" => {
                if let Some(d) = self.spin(&name, value, 0, 1000) {
                    self.options.book_depth = d as u32;
                }
            }
            "bookseed" => {
                if let Some(seed) = self.spin(&name, value, 0, 2147483647) {
                    self.rng = if seed == 0 {
                        StdRng::from_os_rng()
                    } else {
                        StdRng::seed_from_u64(seed as u64)
                    };
                }
            }
            _ => {
                let switch = SWITCHES
                    .iter()
                    .find(|(uci_name, _)| uci_name.eq_ignore_ascii_case(&key));
                match switch {
                    Some((uci_name, set_name)) => {
                        if let Some(b) = self.check(uci_name, value) {
                            let v = if b { "true" } else { "false" };
                            if let Err(e) = self.search_options.set(set_name, v) {
                                self.info(&e.to_string());
                            }
                            if let Some(engine) = self.engine.as_mut() {
                                engine.options = self.search_options.clone();
                            }
                        }
                    }
                    None => self.info(&format!("unknown option {}", quote(&name))),
                }
            }
        }
    }

    /// A spin value, clamped into range with a word when it was out of it.
    fn spin(&self, name: &str, value: &str, min: i64, max: i64) -> Option<i64> {
        let Ok(v) = value.trim().parse::<i128>() else {
            self.info(&format!(
                "option {name} expects a whole number from {min} to {max}, not {}; unchanged",
                quote(value)
            ));
            return None;
        };
        let clamped = v.clamp(min as i128, max as i128) as i64;
        if clamped as i128 != v {
            self.info(&format!(
                "option {name}: {v} is out of range {min}..{max}; using {clamped}"
            ));
        }
        Some(clamped)
    }

    fn check(&self, name: &str, value: &str) -> Option<bool> {
        match value.trim().to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => {
                self.info(&format!(
                    "option {name} expects true or false, not {}; unchanged",
                    quote(value)
                ));
                None
            }
        }
    }

    fn set_book(&mut self, value: &str) {
        let path = value.trim();
        self.options.book_file = path.to_string();
        if path.is_empty() || path == "<empty>" {
            self.book = None;
            return;
        }
        match Book::open(PathBuf::from(path)) {
            Ok(book) => {
                self.info(&format!("book {} ({} entries)", path, book.len()));
                if let Some(disorder) = book.disorder() {
                    self.info(&format!("warning: {}", disorder.warning(book.path())));
                }
                self.book = Some(book);
            }
            Err(e) => {
                self.info(&format!("cannot use BookFile: {e}; playing without a book"));
                self.book = None;
            }
        }
    }

    // ---- position ----------------------------------------------------------------------------

    fn position(&mut self, words: &[&str]) {
        let moves_at = words.iter().position(|w| *w == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&words[..i], &words[i + 1..]),
            None => (words, &[][..]),
        };
        let start = match setup.first() {
            Some(&"startpos") if setup.len() == 1 => Chess::default(),
            Some(&"fen") if setup.len() > 1 => match parse_fen(&setup[1..].join(" ")) {
                Ok(pos) => pos,
                Err(e) => {
                    self.info(&format!("{}; keeping the last position", e));
                    return;
                }
            },
            _ => {
                self.info(&format!(
                    "malformed position command {}: expected 'position startpos|fen <fen> [moves ...]'; keeping the last position",
                    quote(&words.join(" "))
                ));
                return;
            }
        };
        let mut pos = start;
        let mut history = Vec::with_capacity(moves.len());
        for (i, text) in moves.iter().enumerate() {
            match parse_move(&pos, text) {
                Ok(m) => {
                    history.push(hash_of(&pos));
                    pos.play_unchecked(m);
                }
                Err(why) => {
                    self.info(&format!(
                        "move {} {} is {why} in {}; the position stays before it",
                        i + 1,
                        quote(text),
                        fen_of(&pos)
                    ));
                    break;
                }
            }
        }
        self.pos = pos;
        self.history = history;
    }

    // ---- d and eval ----------------------------------------------------------------------------

    fn show(&self) {
        let board = self.pos.board();
        self.say("");
        self.say(" +---+---+---+---+---+---+---+---+");
        for rank in (0..8u32).rev() {
            let mut row = String::from(" |");
            for file in 0..8u32 {
                let sq = shakmaty::Square::from_coords(
                    shakmaty::File::new(file),
                    shakmaty::Rank::new(rank),
                );
                let c = board.piece_at(sq).map_or(' ', |p| p.char());
                row.push_str(&format!(" {c} |"));
            }
            row.push_str(&format!(" {}", rank + 1));
            self.say(&row);
            self.say(" +---+---+---+---+---+---+---+---+");
        }
        self.say("   a   b   c   d   e   f   g   h");
        self.say("");
        self.say(&format!("Fen: {}", fen_of(&self.pos)));
        self.say(&format!("Key: {}", Key::of(&self.pos)));
        let checkers: Vec<String> = self
            .pos
            .checkers()
            .into_iter()
            .map(|s| s.to_string())
            .collect();
        self.say(&format!("Checkers: {}", checkers.join(" ")));
    }

    fn eval(&self) {
        let cp = evaluate(&self.pos, &Params::default());
        let white = if self.pos.turn() == Color::White {
            cp
        } else {
            -cp
        };
        self.say(&format!(
            "info string static eval cp {cp} (side to move), {white:+} for white; the evaluation has no per-term breakdown"
        ));
    }

    // ---- go ------------------------------------------------------------------------------------

    fn parse_go(&self, words: &[&str]) -> Go {
        let mut go = Go::default();
        let mut i = 0;
        fn num<T: std::str::FromStr>(w: Option<&&str>) -> Option<T> {
            w.and_then(|w| w.parse().ok())
        }
        while i < words.len() {
            let w = words[i];
            let next = words.get(i + 1);
            let mut takes = true;
            // A number that isn't one: say so (the parameter is then ignored).
            let bad = match w {
                "wtime" | "btime" | "winc" | "binc" | "movetime" => num::<i64>(next).is_none(),
                "movestogo" | "depth" | "mate" => num::<u32>(next).is_none(),
                "nodes" => num::<u64>(next).is_none(),
                _ => false,
            };
            if bad {
                self.info(&format!(
                    "go: '{w}' expects a number, got {} (ignored)",
                    quote(next.copied().unwrap_or(""))
                ));
            }
            match w {
                "wtime" => go.wtime = num::<i64>(next).map(|t| t.max(0) as u64),
                "btime" => go.btime = num::<i64>(next).map(|t| t.max(0) as u64),
                "winc" => go.winc = num::<i64>(next).map(|t| t.max(0) as u64),
                "binc" => go.binc = num::<i64>(next).map(|t| t.max(0) as u64),
                "movestogo" => go.movestogo = num(next),
                "depth" => go.depth = num(next),
                "nodes" => go.nodes = num(next),
                "movetime" => go.movetime = num::<i64>(next).map(|t| t.max(0) as u64),
                "mate" => go.mate = num(next),
                "infinite" => {
                    go.infinite = true;
                    takes = false;
                }
                "ponder" => {
                    go.ponder = true;
                    takes = false;
                }
                "searchmoves" => {
                    takes = false;
                    while let Some(m) = words.get(i + 1) {
                        if parse_move(&self.pos, m).is_err() {
                            break;
                        }
                        go.searchmoves.push(m.to_string());
                        i += 1;
                    }
                }
                other => {
                    self.info(&format!("go: ignoring {}", quote(other)));
                    takes = false;
                }
            }
            i += if takes { 2 } else { 1 };
        }
        go
    }

    fn go(&mut self, words: &[&str]) {
        let received = Instant::now();
        let go = self.parse_go(words);
        let legal = self.pos.legal_moves();
        let mut root_moves: Vec<Move> = legal.iter().copied().collect();
        if !go.searchmoves.is_empty() {
            root_moves = go
                .searchmoves
                .iter()
                .filter_map(|m| parse_move(&self.pos, m).ok())
                .collect();
            let mut seen = Vec::new();
            root_moves.retain(|m| {
                let new = !seen.contains(m);
                seen.push(*m);
                new
            });
        }
        let waits = go.infinite || go.ponder;

        if root_moves.is_empty() {
            let score = if legal.is_empty() && self.pos.is_check() {
                "mate 0"
            } else {
                "cp 0"
            };
            self.say(&format!("info depth 0 score {score}"));
            if !waits {
                self.say("bestmove 0000");
                return;
            }
        } else if !waits {
            if self.book_move(&root_moves) {
                return;
            }
            if root_moves.len() == 1 {
                self.info("only one legal move");
                self.say(&bestmove_line(root_moves.first(), None));
                return;
            }
        }

        // The clock.
        let (time, inc) = match self.pos.turn() {
            Color::White => (go.wtime, go.winc),
            Color::Black => (go.btime, go.binc),
        };
        let overhead = self.options.move_overhead;
        let plan = match (go.movetime, time) {
            (Some(mt), _) => {
                // The GUI's limit, less the overhead (but never all of it).
                let t = Duration::from_millis(mt);
                let t = t.saturating_sub(overhead).max(t / 2);
                Some(TimePlan { soft: t, hard: t })
            }
            (None, Some(t)) => Some(TimePlan::new(
                Clock {
                    time: Duration::from_millis(t),
                    inc: Duration::from_millis(inc.unwrap_or(0)),
                    movestogo: go.movestogo,
                },
                overhead,
            )),
            (None, None) => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let control = Arc::new(Control {
            stop: stop.clone(),
            stop_requested: AtomicBool::new(false),
            pondering: AtomicBool::new(go.ponder),
            infinite: go.infinite,
            deadlines: Mutex::new(if go.ponder || go.infinite {
                None
            } else {
                plan.map(|p| (received, p))
            }),
            ponder_plan: if go.ponder { plan } else { None },
            finished: AtomicBool::new(false),
        });
        let limits = Limits {
            depth: go.depth,
            // The clock is kept by the watchdog below; a mate search is told its time too, so
            // that it can leave half of it to the normal search (see `Limits::mate`).
            movetime: match (go.mate, &plan) {
                (Some(_), Some(p)) if !waits => Some(p.hard),
                _ => None,
            },
            nodes: go.nodes,
            mate: go.mate,
        };
        let Some(mut engine) = self.engine.take() else {
            self.info("no engine available");
            self.say("bestmove 0000");
            return;
        };
        let pos = self.pos.clone();
        let history = self.history.clone();
        let out = self.out.clone();
        let restricted = root_moves.len() < legal.len();
        let c = control.clone();
        let handle = std::thread::spawn(move || {
            // The watchdog: the hard limit, wherever the search is.
            let watch = c.clone();
            let watchdog = std::thread::spawn(move || {
                while !watch.finished.load(Ordering::Acquire) {
                    if watch.past_hard() {
                        watch.stop.store(true, Ordering::Relaxed);
                    }
                    // Woken at once when the search ends, so that joining it costs nothing.
                    std::thread::park_timeout(Duration::from_millis(1));
                }
            });
            let (best, ponder) = if root_moves.is_empty() {
                (None, None)
            } else if restricted {
                search_moves(&mut engine, &pos, &history, &root_moves, &limits, &c, &out)
            } else {
                let result = engine.search(&pos, &history, &limits, c.stop.clone(), &mut |it| {
                    out.line(&info_line(it));
                    if c.past_soft() {
                        c.stop.store(true, Ordering::Relaxed);
                    }
                });
                (result.best_move, result.pv.get(1).copied())
            };
            // Infinite and ponder searches answer only once told to.
            // (`stop` and `ponderhit` wake this thread.)
            while !c.may_answer() {
                std::thread::park_timeout(Duration::from_millis(1));
            }
            out.line(&bestmove_line(best.as_ref(), ponder.as_ref()));
            c.finished.store(true, Ordering::Release);
            watchdog.thread().unpark();
            let _ = watchdog.join();
            engine
        });
        self.running = Some(Running { handle, control });
    }

    /// Plays a book move if the options and the book allow one; `true` if it did.
    fn book_move(&mut self, root_moves: &[Move]) -> bool {
        let o = &self.options;
        if !o.own_book {
            return false;
        }
        let Some(book) = &self.book else {
            return false;
        };
        if o.book_depth > 0 && self.pos.fullmoves().get() > o.book_depth {
            return false;
        }
        // Moves outside `go searchmoves` do not count.
        let choose_options = ChooseOptions {
            selection: o.selection,
            minimum_weight: o.min_weight,
            exclude_moves: self
                .pos
                .legal_moves()
                .into_iter()
                .filter(|m| !root_moves.contains(m))
                .collect(),
        };
        let Some(Pick {
            book_move: pick,
            share,
        }) = book.pick(&self.pos, &choose_options, &mut self.rng)
        else {
            return false;
        };
        self.info(&format!(
            "book move {} weight {} share {:.1}%",
            uci(&pick.mv),
            pick.entry.weight,
            100.0 * share
        ));
        self.say(&bestmove_line(Some(&pick.mv), None));
        true
    }
}

/// `go searchmoves`: iterative deepening over the allowed root moves, each searched as its
/// child position one ply shallower (the engine has no root-move filter).
fn search_moves(
    engine: &mut Engine,
    pos: &Chess,
    history: &[u64],
    moves: &[Move],
    limits: &Limits,
    c: &Control,
    out: &Output,
) -> (Option<Move>, Option<Move>) {
    let start = Instant::now();
    let mut best: (Move, Vec<Move>) = (moves[0], vec![moves[0]]);
    let mut nodes = 0u64;
    let mut child_history = history.to_vec();
    child_history.push(hash_of(pos));
    let max_depth = limits.depth.unwrap_or(100).clamp(1, 100);
    'deepen: for depth in 1..=max_depth {
        let mut iteration: Option<(Score, Vec<Move>)> = None;
        let mut seldepth = depth;
        for &m in moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let (score, pv) = if depth == 1 || child.legal_moves().is_empty() {
                let score = if child.is_checkmate() {
                    Score::Mate(1)
                } else if child.is_stalemate() {
                    Score::Cp(0)
                } else {
                    Score::Cp(-evaluate(&child, &engine.params))
                };
                (score, vec![m])
            } else {
                let child_limits = Limits {
                    depth: Some(depth - 1),
                    movetime: None,
                    nodes: limits.nodes.map(|n| n.saturating_sub(nodes).max(1)),
                    mate: None,
                };
                let r = engine.search(
                    &child,
                    &child_history,
                    &child_limits,
                    c.stop.clone(),
                    &mut |it| {
                        seldepth = seldepth.max(it.seldepth + 1);
                    },
                );
                nodes += r.nodes;
                if c.stop.load(Ordering::Relaxed)
                    || (limits.nodes.is_some_and(|n| nodes >= n) && r.depth < depth - 1)
                {
                    break 'deepen;
                }
                let mut pv = vec![m];
                pv.extend(r.pv);
                (negate(r.score), pv)
            };
            if iteration
                .as_ref()
                .is_none_or(|(s, _)| score_key(score) > score_key(*s))
            {
                iteration = Some((score, pv));
            }
        }
        let Some((score, pv)) = iteration else {
            break;
        };
        best = (pv[0], pv.clone());
        let it = Iteration {
            depth,
            seldepth,
            score,
            nodes,
            time: start.elapsed(),
            hashfull: 0,
            pv,
        };
        out.line(&info_line(&it));
        if c.past_soft()
            || limits.nodes.is_some_and(|n| nodes >= n)
            || matches!((limits.mate, score), (Some(n), Score::Mate(m)) if m > 0 && m as u32 <= n)
        {
            break;
        }
    }
    (Some(best.0), best.1.get(1).copied())
}
