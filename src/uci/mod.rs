//! The UCI protocol around the engine and the book.
//!
//! [`run`] reads commands from any [`BufRead`] and writes answers to any [`Write`], so a GUI can
//! drive it over stdin/stdout and a test in-process. The search runs on its own thread: the
//! command loop keeps reading while it thinks, so `isready`, `stop` and `ponderhit` are answered
//! at once. The book comes first in a game: on a `go` with a clock, a legal book move (within
//! `BookDepth`) is played without searching; an analysis (`go depth`, `nodes`, `mate` or
//! `infinite` without a clock) is searched, for its scores. `BookFile` may name several books
//! (`a.bin;b.bin`): the first with a move that counts gives it ([`crate::book::Books`]).
//!
//! With `UCI_Chess960` the positions are Chess960's: `position fen` reads Shredder-FEN and X-FEN
//! castling, and castling is read and written as king-takes-rook (`e1h1`). The same books are
//! consulted: a position's Polyglot key does not depend on the variant, and it is the key that
//! `polybook build --chess960` gives the positions of Chess960 games, whose castling it stores as
//! king-takes-rook too.
//!
//! Bad input never ends the loop: an unknown command, a malformed `position` or an out-of-range
//! option value is answered with an `info string` naming the problem.
//!
//! - this file: the session, the protocol loop and its commands;
//! - `options`: the option table (names, types, defaults, ranges, and what each one sets);
//! - `go`: the `go` command's parameters, its time plan and search limits;
//! - `thread`: the search thread, its watchdog and the shared output.
//!
//! The engine does the rest: the time plan is `engine::time`'s, and `go searchmoves` is the
//! engine's root-move restriction (`Limits::root_moves`).
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

mod book;
mod go;
mod options;
pub mod profile;
mod thread;

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;
use shakmaty::{CastlingMode, Chess, Color, Move, Position};

use crate::book::{Book, Books, Key, LearnLayout, Pick, Selection, book_paths};
use crate::engine::eval::{Params, evaluate};
use crate::engine::hash::hash_of;
use crate::engine::options::SWITCHES;
use crate::engine::tt::memory_free_mb;
use crate::engine::{Engine, SearchOptions};
use crate::position::{fen_of, parse_fen_for, parse_move};
use crate::text::quote;
use go::Go;
use options::Options;
use thread::{Control, Output, Running, bestmove_line, uci};

/// The longest input line read whole; the rest of a longer line is skipped.
const MAX_LINE: usize = 1 << 16;

/// A client's `Hash` may take at most the memory free divided by this (half of it).
const HASH_SHARE: usize = 2;

/// The whole state of a UCI session.
struct Session {
    out: Arc<Output>,
    options: Options,
    search_options: SearchOptions,
    /// `None` while a search has it.
    engine: Option<Engine>,
    /// The books of `BookFile`, in priority order (none: no book).
    books: Books,
    /// The books of `BookFileWhite` and `BookFileBlack`; `None` while the option is empty.
    colour_books: [Option<Books>; 2],
    /// `BookProfile`'s sections and their books; `None` while the option is empty.
    profile: Option<book::LoadedProfile>,
    /// The engine's clock and increment (ms) at its first `go` of the game: the game's time
    /// control for the profile.
    game_clock: Option<(u64, u64)>,
    rng: StdRng,
    pos: Chess,
    /// Keys of the positions before `pos`, oldest first (for repetitions).
    past: Vec<u64>,
    running: Option<Running>,
}

/// Runs the UCI loop until `quit` or the end of `input`.
///
/// Errors reading the input end the loop like EOF; a running search is stopped and its
/// `bestmove` written before returning.
pub fn run<R: BufRead>(mut input: R, output: impl Write + Send + 'static) {
    let out = Arc::new(Output::new(output));
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
    crate::bounded_lines::read_bounded_line(input, buf, MAX_LINE)
}

impl Session {
    fn new(out: Arc<Output>) -> Self {
        let engine = Engine::new(SearchOptions::default());
        // The default table, or less on a machine that cannot give it.
        let search_options = engine.options.clone();
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
            books: Books::new(),
            colour_books: [None, None],
            profile: None,
            game_clock: None,
            rng: StdRng::from_os_rng(),
            pos: Chess::default(),
            past: Vec::new(),
            running: None,
        }
    }

    fn say(&self, text: &str) {
        self.out.line(text);
    }

    fn info(&self, text: &str) {
        self.out.line(&format!("info string {text}"));
    }

    /// How castling is written: king-takes-rook in Chess960 (`UCI_Chess960`).
    fn castling_mode(&self) -> CastlingMode {
        CastlingMode::from_chess960(self.options.chess960)
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
                self.past.clear();
                self.game_clock = None;
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
        for line in options::option_lines(&self.search_options) {
            self.say(&line);
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
                self.say(&bestmove_line(first.as_ref(), None, self.castling_mode()));
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
        if let Some(option) = options::find(&name) {
            option.apply(self, &name, value);
            return;
        }
        let key = options::key(&name);
        match SWITCHES
            .iter()
            .find(|s| s.uci_name.eq_ignore_ascii_case(&key))
        {
            Some(switch) => {
                if let Some(b) = self.check(switch.uci_name, value) {
                    (switch.put)(&mut self.search_options, b);
                    self.search_options_changed();
                }
            }
            None => self.set_tunable(&name, value),
        }
    }

    /// A tuning build's tunable number (`--features spsa`), set by `setoption`; in another build
    /// every name that gets here is unknown.
    fn set_tunable(&mut self, name: &str, value: &str) {
        #[cfg(feature = "spsa")]
        if let Some(t) = crate::engine::parameters::TUNABLES
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
        {
            if let Some(v) = self.spin(t.name, value, (i64::from(t.min), i64::from(t.max))) {
                t.set(v as i32);
            }
            return;
        }
        let _ = value;
        self.info(&format!("unknown option {}", quote(name)));
    }

    /// `Hash`: a new table of `mb` MB, or of the most the machine can give, with a word. The old
    /// table goes first, then the new one is allocated whole: its pages are not left for the
    /// search to fault in (a legitimate wait for the next `isready`).
    fn set_hash(&mut self, mb: usize) {
        self.engine = None;
        // A client's size is capped at a share of the memory free: a typo (`Hash 100000`) must
        // not take the whole machine from the bot or GUI that runs the engine beside it.
        let mb = match memory_free_mb() {
            Some(free) if mb > (free / HASH_SHARE).max(1) => {
                let cap = (free / HASH_SHARE).max(1);
                self.info(&format!(
                    "option Hash: {mb} MB is more than half the memory free ({free} MB); using {cap} MB"
                ));
                cap
            }
            _ => mb,
        };
        let engine = Engine::new(SearchOptions {
            hash_mb: mb,
            ..self.search_options.clone()
        });
        let got = engine.options.hash_mb;
        if got != mb {
            self.info(&format!(
                "option Hash: {mb} MB is more than this machine can give; using {got} MB"
            ));
        }
        self.search_options.hash_mb = got;
        engine.populate();
        self.engine = Some(engine);
    }

    /// The engine searches with the session's search options from now on.
    fn search_options_changed(&mut self) {
        if let Some(engine) = self.engine.as_mut() {
            engine.options = self.search_options.clone();
        }
    }

    /// A spin value, clamped into range with a word when it was out of it.
    fn spin(&self, name: &str, value: &str, (min, max): (i64, i64)) -> Option<i64> {
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

    /// Opens the books of `BookFile`: one path, or several separated by `;` (each trimmed, empty
    /// ones skipped), tried in that order. A book that cannot be used is named in an
    /// `info string` and left out; the others are still used.
    fn set_book(&mut self, value: &str) {
        let list = value.trim();
        self.options.book_file = list.to_string();
        self.books = self.load_books("BookFile", list);
        self.note_unscored_books();
    }

    /// The books of a list of `option` (`BookFile` or one colour's): each loaded with an `info
    /// string`; one that cannot be used is named in an `info string` and left out.
    fn load_books(&self, option: &str, list: &str) -> Books {
        let mut books = Books::new();
        if list == "<empty>" {
            return books;
        }
        let paths: Vec<&str> = book_paths(list).collect();
        for &path in &paths {
            match Book::open(PathBuf::from(path)) {
                Ok(book) => {
                    self.info(&format!("book {} ({} entries)", path, book.len()));
                    if let Some(disorder) = book.disorder() {
                        self.info(&format!("warning: {}", disorder.warning(book.path())));
                    }
                    books.push(path, book);
                }
                // One book: today's words. Several: the others are still played from.
                Err(e) if paths.len() == 1 => {
                    self.info(&format!("cannot use {option}: {e}; playing without a book"))
                }
                Err(e) => self.info(&format!(
                    "cannot use {option}: {e}; playing without this book"
                )),
            }
        }
        books
    }

    /// With `BookSelection` score, says once per book that one without scores is played by
    /// weight.
    fn note_unscored_books(&mut self) {
        if self.options.selection != Selection::Score {
            return;
        }
        let unscored: Vec<String> = self
            .books
            .iter()
            .chain(self.colour_books.iter().flatten().flat_map(Books::iter))
            .filter(|(_, b)| b.learn_layout() != LearnLayout::Scored)
            .map(|(name, _)| name.to_string())
            .collect();
        for name in unscored {
            self.info(&format!(
                "book {name} has no scores ('polybook analyse' adds them): its moves are picked by weight"
            ));
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
            Some(&"fen") if setup.len() > 1 => {
                let fen = setup[1..].join(" ");
                match parse_fen_for(&fen, self.options.chess960) {
                    Ok(pos) => pos,
                    Err(e) => {
                        // A Chess960 position sent without `UCI_Chess960`: say what would take it.
                        let hint = if !self.options.chess960 && parse_fen_for(&fen, true).is_ok() {
                            " (setoption name UCI_Chess960 value true plays Chess960)"
                        } else {
                            ""
                        };
                        self.info(&format!("{e}{hint}; keeping the last position"));
                        return;
                    }
                }
            }
            _ => {
                self.info(&format!(
                    "malformed position command {}: expected 'position startpos|fen <fen> [moves ...]'; keeping the last position",
                    quote(&words.join(" "))
                ));
                return;
            }
        };
        let mut pos = start;
        let mut past = Vec::with_capacity(moves.len());
        for (i, text) in moves.iter().enumerate() {
            match parse_move(&pos, text) {
                Ok(m) => {
                    past.push(hash_of(&pos));
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
        self.past = past;
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
        let (cp, by) = if self.search_options.nnue {
            (
                crate::engine::nnue::net().evaluate_position(&self.pos),
                "the net",
            )
        } else {
            (
                evaluate(&self.pos, &Params::default()),
                "the hand-crafted evaluation",
            )
        };
        let white = if self.pos.turn() == Color::White {
            cp
        } else {
            -cp
        };
        self.say(&format!(
            "info string static eval cp {cp} (side to move), {white:+} for white, by {by}; no per-term breakdown"
        ));
    }

    // ---- go ------------------------------------------------------------------------------------

    fn go(&mut self, words: &[&str]) {
        let received = Instant::now();
        let out = self.out.clone();
        let go = Go::parse(words, &self.pos, &mut |warning| {
            out.line(&format!("info string {warning}"))
        });
        let legal = self.pos.legal_moves();
        let root_moves = go.root_moves(&self.pos);
        let waits = go.waits();
        // The engine's first move of a game: its clock now is the game's time control.
        if self.own_moves() == 0 {
            self.game_clock = go.clock_of(self.pos.turn());
        }

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
            // A game's move may come from the book; an analysis is searched (see `Go::analysis`).
            if !go.analysis() && self.book_move(&root_moves) {
                return;
            }
            if root_moves.len() == 1 {
                self.info("only one legal move");
                self.say(&bestmove_line(
                    root_moves.first(),
                    None,
                    self.castling_mode(),
                ));
                return;
            }
        }

        let plan = go.time_plan(self.pos.turn(), self.options.move_overhead);
        let control = Arc::new(Control::new(plan, received, go.ponder, go.infinite));
        // `searchmoves`: the engine searches only those moves at the root.
        let restricted = root_moves.len() < legal.len();
        let limits = go.limits(plan.as_ref(), restricted.then(|| root_moves.clone()));
        let Some(engine) = self.engine.take() else {
            self.info("no engine available");
            self.say("bestmove 0000");
            return;
        };
        self.running = Some(thread::spawn(
            engine,
            self.pos.clone(),
            self.past.clone(),
            limits,
            !root_moves.is_empty(),
            control,
            self.out.clone(),
            self.castling_mode(),
        ));
    }

    /// Plays a book move if the options (or the profile) and the book allow one; `true` if it
    /// did.
    fn book_move(&mut self, root_moves: &[Move]) -> bool {
        if !self.options.own_book {
            return false;
        }
        let Some(mut plan) = self.book_plan(root_moves) else {
            return false;
        };
        if plan.books.is_empty() {
            return false;
        }
        if plan.book_depth > 0 && self.pos.fullmoves().get() > plan.book_depth {
            return false;
        }
        // BotLi's `max_depth`: python-chess's `Board.ply()`, the plies since the game's start as
        // the move number says.
        let ply = 2 * (self.pos.fullmoves().get() - 1) + u32::from(self.pos.turn() == Color::Black);
        if plan.max_depth_plies > 0 && ply >= plan.max_depth_plies {
            return false;
        }
        if plan.max_moves > 0 && self.own_moves() >= plan.max_moves {
            return false;
        }
        // Unless allowed, moves that repeat a position of the game do not count.
        if !plan.allow_repetitions {
            plan.choose.exclude_moves.extend(self.repeating_moves());
        }
        let Some((
            index,
            Pick {
                book_move: pick,
                share,
            },
        )) = plan
            .books
            .pick_with_line(&self.pos, &plan.choose, plan.min_line_plies, &mut self.rng)
        else {
            return false;
        };
        // The share is within the book that gave the move, named at the end (with the profile's
        // key that chose the book).
        let chosen_by = plan
            .key
            .as_ref()
            .map(|k| format!(" (BookProfile section {k})"))
            .unwrap_or_default();
        self.info(&format!(
            "book move {} weight {} share {:.1}% from {}{chosen_by}",
            uci(&pick.mv, self.castling_mode()),
            pick.entry.weight,
            100.0 * share,
            plan.books.name(index)
        ));
        self.say(&bestmove_line(Some(&pick.mv), None, self.castling_mode()));
        true
    }
}
