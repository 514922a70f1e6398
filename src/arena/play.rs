//! The terminal game: a person against the built-in engine.
//!
//! A [`PlaySession`] reads the person's moves and commands from any [`BufRead`] and writes the
//! board, the engine's moves and its messages to any [`Write`], so that a terminal drives it
//! through stdin/stdout and a test through a byte slice. Bad input never ends the game: an
//! illegal or ambiguous move or an unknown command gets a message and a new prompt. The end of
//! the input is a `quit`.
//!
//! ```
//! use polybook::arena::clock::PerMove;
//! use polybook::arena::play::{PlayOptions, PlaySession, Thinking};
//! use polybook::position::parse_fen;
//! use shakmaty::Color;
//!
//! // White to move mates in one.
//! let start = parse_fen("7k/8/6K1/8/8/8/8/R7 w - - 0 1").unwrap();
//! let options = PlayOptions {
//!     thinking: Thinking::PerMove(PerMove { depth: Some(2), ..PerMove::default() }),
//!     ..PlayOptions::new(Color::White)
//! };
//! let mut out = Vec::new();
//! let mut session = PlaySession::new(start, options, &mut out);
//! session.run("Kh8\nRa8\n".as_bytes()).unwrap();
//! assert_eq!(session.game().result(), "1-0");
//! let pgn = session.pgn();
//! assert!(pgn.contains("1. Ra8# {White mates} 1-0"), "{pgn}");
//! assert!(String::from_utf8(out).unwrap().contains("'Kh8' is illegal here"));
//! ```

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;
use shakmaty::san::{San, SanPlus};
use shakmaty::{Chess, Color, KnownOutcome, Move, Position};

use super::clock::{Clock, PerMove, TimeControl};
use super::game::{Game, Termination};
use super::pgn::{game_text, roster, write_atomic};
use crate::book::{BookMove, Books, ChooseOptions};
use crate::diagram::diagram;
use crate::engine::time::{Stability, TimeLeft, TimePlan};
use crate::engine::{Engine, Limits, Score, SearchOptions};
use crate::position::{fen_of, parse_move};

/// The longest input line read whole; the rest of a longer line is skipped.
const MAX_LINE: usize = 4096;

/// The engine accepts a draw offer only from this move number on.
pub const DRAW_FROM_MOVE: u32 = 20;

/// The engine accepts a draw offer when its own score is at most this (centipawns): a level
/// position, or one it stands worse in.
pub const DRAW_MARGIN_CP: i32 = 10;

/// The book moves listed with the engine's book move (the `book` command lists them all).
const BOOK_MOVES_SHOWN: usize = 6;

/// The time kept back from the engine's clock for printing and the terminal.
const ENGINE_OVERHEAD: Duration = Duration::from_millis(50);

/// How long the engine thinks about its moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thinking {
    /// Both sides play on a clock; the engine shares its time out with [`TimePlan`].
    Clock(TimeControl),
    /// A fixed budget per move (depth, nodes, time: the first reached ends it), no clocks.
    PerMove(PerMove),
}

/// A hook called with the PGN so far after every move.
pub type OnMove = Box<dyn FnMut(&str) + Send>;

/// When the engine plays from its books, beyond how it picks ([`ChooseOptions`]): the rules of
/// the engine's UCI options of the same names (`BookAllowRepetitions`, `BookMaxMoves`,
/// `BookMinLinePlies`) and BotLi's `max_depth`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BookRules {
    /// A book move may lead to a position the game has had.
    pub allow_repetitions: bool,
    /// The engine's own moves of the game that may come from the book; 0: no limit.
    pub max_moves: u32,
    /// The book is asked while fewer plies than this have been played (as the move number
    /// counts them); 0: no limit.
    pub max_depth_plies: u32,
    /// A book move is played only if its book holds a line of this many book moves below it; 0:
    /// no check.
    pub min_line_plies: u32,
}

/// Everything a game needs besides its start position.
pub struct PlayOptions {
    /// The person's colour.
    pub human: Color,
    /// How long the engine thinks: a clock for both sides, or a budget per move.
    pub thinking: Thinking,
    /// The engine's books in priority order (it plays from them while a book has a move that
    /// counts; the first such book gives it, see [`Books`]). Empty: no book.
    pub books: Books,
    /// How the engine picks its book move.
    pub choose: ChooseOptions,
    /// When it plays from the books at all.
    pub book_rules: BookRules,
    /// The engine's search out of the book: its switches, evaluation, hash and threads.
    pub search: SearchOptions,
    /// Show the board from the person's side (by default it is shown from White's).
    pub flip: bool,
    /// The seed of the book choice (`None`: from the operating system).
    pub seed: Option<u64>,
    /// Called with the PGN so far after every move (e.g. to keep it for a Ctrl-C).
    pub on_move: Option<OnMove>,
}

impl PlayOptions {
    /// A game for a person playing `human`, 2 s a move, no book.
    pub fn new(human: Color) -> PlayOptions {
        PlayOptions {
            human,
            thinking: Thinking::PerMove(PerMove {
                movetime: Some(Duration::from_secs(2)),
                ..PerMove::default()
            }),
            books: Books::new(),
            choose: ChooseOptions::default(),
            book_rules: BookRules::default(),
            search: SearchOptions::default(),
            flip: false,
            seed: None,
            on_move: None,
        }
    }
}

/// What one line of input asked for.
enum Step {
    /// Keep reading the person's input.
    Again,
    /// A move was played (or the game ended): the person's turn is over.
    Done,
}

/// A game between a person and the engine, in progress.
pub struct PlaySession<W: Write> {
    options: PlayOptions,
    game: Game,
    engine: Engine,
    rng: StdRng,
    /// White's and Black's clocks, with a time control.
    clocks: Option<[Clock; 2]>,
    flipped: bool,
    /// The tags the PGN starts with (Result and the rest are added by [`Game::to_pgn`]).
    tags: Vec<(&'static str, String)>,
    out: W,
}

fn index(c: Color) -> usize {
    c.fold_wb(0, 1)
}

fn side(c: Color) -> &'static str {
    c.fold_wb("White", "Black")
}

/// A clock reading: `4:59.3`, or `1:02:03` from an hour on.
pub fn clock_text(d: Duration) -> String {
    let tenths = d.as_millis() / 100;
    let (h, m, s, t) = (
        tenths / 36_000,
        tenths / 600 % 60,
        tenths / 10 % 60,
        tenths % 10,
    );
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}.{t}")
    }
}

/// The move number and dots before a move by the side to move in `pos` (`12.` or `12...`).
fn move_number(pos: &Chess) -> String {
    let n = pos.fullmoves().get();
    if pos.turn().is_white() {
        format!("{n}.")
    } else {
        format!("{n}...")
    }
}

/// A line of input as a move: `0-0` and `o-o` as `O-O`, a leading move number (`12.` or
/// `12...`) skipped.
fn normalize_move(text: &str) -> String {
    let mut t = text.trim();
    if let Some(i) = t.find('.')
        && i > 0
        && t[..i].bytes().all(|b| b.is_ascii_digit())
    {
        t = t[i..].trim_start_matches('.').trim_start();
    }
    match t {
        "0-0" | "o-o" => "O-O".to_string(),
        "0-0-0" | "o-o-o" => "O-O-O".to_string(),
        _ => t.replace("0-0-0", "O-O-O").replace("0-0", "O-O"),
    }
}

/// Reads one line (without its end) into `buf`, keeping at most [`MAX_LINE`] bytes of it;
/// `false` at the end of the input.
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> io::Result<bool> {
    buf.clear();
    Ok(crate::bounded_lines::read_bounded_line(input, buf, MAX_LINE)? > 0)
}

const HELP: &str = "\
Moves: SAN (e4, Nf3, O-O, exd8=Q) or UCI (e2e4, g1f3, e1g1, e7e8q).
Commands:
  undo       take back your last move and the engine's reply
  hint       let the engine suggest a move
  draw       offer a draw (accepted from move 20 on when the engine's score is +0.10 or less)
  resign     give up the game
  book       the book moves of this position, with weights and shares
  board      show the board again
  flip       turn the board over
  save FILE  write the game so far as PGN to FILE (replacing it)
  help       this text
  quit       stop here; the game is saved unfinished (end of input does the same)";

impl<W: Write> PlaySession<W> {
    /// A game from `start` (the caller has checked that it is not over already).
    pub fn new(start: Chess, options: PlayOptions, out: W) -> PlaySession<W> {
        let rng = match options.seed {
            Some(s) => StdRng::seed_from_u64(s),
            None => StdRng::from_os_rng(),
        };
        let clocks = match options.thinking {
            Thinking::Clock(tc) => Some([Clock::new(tc), Clock::new(tc)]),
            _ => None,
        };
        let (white, black) = if options.human.is_white() {
            ("Human", "polybook")
        } else {
            ("polybook", "Human")
        };
        let tc = match options.thinking {
            Thinking::Clock(tc) => tc.to_string(),
            _ => "-".to_string(),
        };
        let mut tags = roster("polybook play", "-", white, black);
        tags.push(("TimeControl", tc));
        let engine = Engine::new(options.search.clone());
        let flipped = options.flip && options.human.is_black();
        PlaySession {
            game: Game::new(start),
            engine,
            rng,
            clocks,
            flipped,
            tags,
            options,
            out,
        }
    }

    /// The game so far.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The game so far as PGN.
    pub fn pgn(&self) -> String {
        game_text(&self.game, &self.tags)
    }

    /// Plays until the game ends, the person quits or the input ends. Only a failure to write
    /// the output is an error (the game so far stays in [`PlaySession::game`]).
    pub fn run<R: BufRead>(&mut self, mut input: R) -> io::Result<()> {
        self.intro()?;
        self.show_board()?;
        loop {
            if self.game.end.is_some() {
                break;
            }
            if let Some((outcome, why)) = self.game.ended_by_rules() {
                self.game.finish(outcome, why);
                break;
            }
            if self.game.position().turn() == self.options.human {
                self.human_turn(&mut input)?;
            } else {
                self.engine_turn()?;
            }
        }
        self.announce_end()
    }

    fn intro(&mut self) -> io::Result<()> {
        let human = self.options.human;
        let how = match self.options.thinking {
            Thinking::Clock(tc) => format!("time control {tc}"),
            Thinking::PerMove(p) => p.to_string(),
        };
        let names: Vec<String> = self
            .options
            .books
            .iter()
            .map(|(_, b)| {
                b.path().file_name().map_or_else(
                    || b.path().display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                )
            })
            .collect();
        let book = match names.len() {
            0 => String::new(),
            1 => format!(", book {}", names[0]),
            _ => format!(", books {}", names.join(", ")),
        };
        writeln!(
            self.out,
            "polybook play: you are {}, polybook is {} ({how}{book}).",
            side(human),
            side(!human)
        )?;
        writeln!(
            self.out,
            "Type a move in SAN or UCI, or help for the commands."
        )?;
        Ok(())
    }

    fn show_board(&mut self) -> io::Result<()> {
        writeln!(self.out)?;
        let board = diagram(self.game.position(), self.flipped);
        write!(self.out, "{board}")?;
        if let Some(clocks) = &self.clocks {
            writeln!(
                self.out,
                "White {}  Black {}",
                clock_text(clocks[0].left()),
                clock_text(clocks[1].left())
            )?;
        }
        writeln!(self.out)
    }

    fn prompt(&mut self) -> io::Result<()> {
        let pos = self.game.position();
        let check = if pos.is_check() { ", check" } else { "" };
        write!(
            self.out,
            "{} you ({}{check})> ",
            move_number(pos),
            side(pos.turn())
        )?;
        self.out.flush()
    }

    /// Plays a move, calls the `on_move` hook and shows the board.
    fn play(&mut self, mv: Move, comment: Option<String>) -> io::Result<()> {
        self.game.play(mv, comment);
        if let Some(hook) = self.options.on_move.as_mut() {
            let pgn = game_text(&self.game, &self.tags);
            hook(&pgn);
        }
        self.show_board()
    }

    /// The person's turn: reads lines until a move is played or the game ends.
    fn human_turn<R: BufRead>(&mut self, input: &mut R) -> io::Result<()> {
        let started = Instant::now();
        let mut buf = Vec::new();
        loop {
            self.prompt()?;
            let more = read_line(input, &mut buf)?;
            if !more {
                writeln!(self.out)?;
                self.game.finish(None, Termination::Unterminated);
                return Ok(());
            }
            let used = started.elapsed();
            if let Some(clocks) = &self.clocks
                && used > clocks[index(self.options.human)].left()
            {
                self.game
                    .forfeit(Termination::TimeForfeit(self.options.human));
                return Ok(());
            }
            let line = String::from_utf8_lossy(&buf).trim().to_string();
            if let Step::Done = self.human_line(&line, started)? {
                return Ok(());
            }
        }
    }

    /// One line of the person's input.
    fn human_line(&mut self, line: &str, started: Instant) -> io::Result<Step> {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else {
            return Ok(Step::Again);
        };
        let rest: Vec<&str> = words.collect();
        match first.to_ascii_lowercase().as_str() {
            "help" | "?" => writeln!(self.out, "{HELP}")?,
            "quit" | "exit" => {
                self.game.finish(None, Termination::Unterminated);
                return Ok(Step::Done);
            }
            "resign" => {
                self.game
                    .forfeit(Termination::Resignation(self.options.human));
                return Ok(Step::Done);
            }
            "undo" | "takeback" => self.undo()?,
            "hint" => self.hint()?,
            "draw" => return self.draw_offer(),
            "book" => self.show_book()?,
            "board" => self.show_board()?,
            "flip" => {
                self.flipped = !self.flipped;
                self.show_board()?;
            }
            "save" => self.save(&rest.join(" "))?,
            _ => return self.human_move(line, started),
        }
        Ok(Step::Again)
    }

    fn human_move(&mut self, line: &str, started: Instant) -> io::Result<Step> {
        let text = normalize_move(line);
        let pos = self.game.position().clone();
        let mv = match parse_move(&pos, &text) {
            Ok(mv) => mv,
            Err(why) => {
                self.explain_bad_move(&pos, line, &text, why)?;
                return Ok(Step::Again);
            }
        };
        if let Some(clocks) = self.clocks.as_mut()
            && !clocks[index(self.options.human)].spend(started.elapsed(), Duration::ZERO)
        {
            self.game
                .forfeit(Termination::TimeForfeit(self.options.human));
            return Ok(Step::Done);
        }
        let san = SanPlus::from_move(pos.clone(), mv);
        writeln!(self.out, "{} {san}", move_number(&pos))?;
        self.play(mv, None)?;
        Ok(Step::Done)
    }

    /// Says why a line is not a move here, naming the candidates of an ambiguous one.
    fn explain_bad_move(
        &mut self,
        pos: &Chess,
        line: &str,
        text: &str,
        why: &str,
    ) -> io::Result<()> {
        let shown = crate::text::quote(line);
        match why {
            "ambiguous" => {
                let san = San::from_ascii(text.trim_end_matches(['+', '#', '!', '?']).as_bytes());
                let candidates: Vec<String> = match san {
                    Ok(san) => pos
                        .legal_moves()
                        .iter()
                        .filter(|m| san.matches(**m))
                        .map(|m| San::from_move(pos, *m).to_string())
                        .collect(),
                    Err(_) => Vec::new(),
                };
                writeln!(
                    self.out,
                    "{shown} is ambiguous here: say which, {}.",
                    candidates.join(" or ")
                )
            }
            "illegal" => {
                let more = if pos.is_check() {
                    " (you are in check)"
                } else {
                    ""
                };
                writeln!(self.out, "{shown} is illegal here{more}.")
            }
            _ => writeln!(
                self.out,
                "{shown} is neither a move (SAN or UCI, e.g. Nf3 or g1f3) nor a command; type help."
            ),
        }
    }

    /// Takes back the person's last move and the engine's reply.
    fn undo(&mut self) -> io::Result<()> {
        if self.game.moves().len() < 2 {
            return writeln!(self.out, "Nothing to take back.");
        }
        let taken: Vec<String> = self.game.moves()[self.game.moves().len() - 2..]
            .iter()
            .map(|m| m.san.clone())
            .collect();
        self.game.undo();
        self.game.undo();
        writeln!(self.out, "Took back {}.", taken.join(" "))?;
        self.show_board()
    }

    /// The limits of a short search for `hint` and draw offers.
    fn short_limits(&self) -> Limits {
        match self.options.thinking {
            Thinking::PerMove(p) => Limits {
                movetime: p.movetime.map(|t| t.min(Duration::from_secs(1))),
                ..p.limits()
            },
            Thinking::Clock(_) => {
                let left = self.clocks.map_or(Duration::from_secs(1), |c| {
                    c[index(self.options.human)].left()
                });
                Limits {
                    movetime: Some(
                        (left / 30).clamp(Duration::from_millis(50), Duration::from_secs(1)),
                    ),
                    ..Limits::default()
                }
            }
        }
    }

    /// Searches the position now; the score is the side to move's.
    fn search_now(
        &mut self,
        limits: &Limits,
        soft: Option<TimePlan>,
    ) -> (Option<Move>, Score, u32) {
        let pos = self.game.position().clone();
        let hashes = self.game.hashes();
        let history = hashes[..hashes.len() - 1].to_vec();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let started = Instant::now();
        let mut stability = Stability::new();
        let result = self.engine.search(&pos, &history, limits, stop, &mut |it| {
            let scale = stability.scale(it.depth, it.pv.first(), it.best_share);
            if soft.is_some_and(|plan| started.elapsed() >= plan.soft_scaled(scale)) {
                flag.store(true, Ordering::Relaxed);
            }
        });
        (result.best_move, result.score, result.depth)
    }

    /// How the engine picks its book move now: the options with the moves that would repeat a
    /// position of the game left out (unless allowed); `None` when the rules say no book move
    /// (past `max_depth_plies`, or `max_moves` of its own moves played).
    fn engine_choose(&self) -> Option<ChooseOptions> {
        let rules = self.options.book_rules;
        let pos = self.game.position();
        let ply = 2 * (pos.fullmoves().get() - 1) + u32::from(pos.turn() == Color::Black);
        if rules.max_depth_plies > 0 && ply >= rules.max_depth_plies {
            return None;
        }
        // The engine's moves so far: every other move, from the first the engine made.
        let played = self.game.moves().len();
        let first = usize::from(self.game.start().turn() != pos.turn());
        let own = played.saturating_sub(first).div_ceil(2);
        if rules.max_moves > 0 && own >= rules.max_moves as usize {
            return None;
        }
        let mut choose = self.options.choose.clone();
        if !rules.allow_repetitions {
            let seen = self.game.hashes();
            choose
                .exclude_moves
                .extend(pos.legal_moves().into_iter().filter(|&m| {
                    let mut next = pos.clone();
                    next.play_unchecked(m);
                    seen.contains(&crate::engine::hash::hash_of(&next))
                }));
        }
        Some(choose)
    }

    /// The legal moves of the book that gives the engine's book move here (the first with a
    /// move that counts), with that book's index; no moves when no book has one.
    fn book_moves(&self) -> (Option<usize>, Vec<BookMove>) {
        let books = &self.options.books;
        let pos = self.game.position();
        match books.first_with_move(pos, &self.options.choose) {
            Some(index) => {
                let (_, book) = books.iter().nth(index).expect("a book of the list");
                (Some(index), book.probe(pos).legal)
            }
            None => (None, Vec::new()),
        }
    }

    /// `the book` with one book, `the book NAME` with several.
    fn book_name(&self, index: Option<usize>) -> String {
        match index {
            Some(i) if self.options.books.len() > 1 => {
                format!("the book {}", self.options.books.name(i))
            }
            _ => "the book".to_string(),
        }
    }

    fn hint(&mut self) -> io::Result<()> {
        let pos = self.game.position().clone();
        let (index, book) = self.book_moves();
        let best = ChooseOptions {
            selection: crate::book::Selection::Best,
            ..self.options.choose.clone()
        };
        if let Some(pick) = best.pick(&book, &mut self.rng) {
            let san = SanPlus::from_move(pos, pick.book_move.mv);
            return writeln!(
                self.out,
                "hint: {san} ({}'s most played move, {:.1}%)",
                self.book_name(index),
                100.0 * pick.share
            );
        }
        let limits = self.short_limits();
        let (best, score, depth) = self.search_now(&limits, None);
        match best {
            Some(m) => writeln!(
                self.out,
                "hint: {} ({} for you, depth {depth})",
                SanPlus::from_move(pos, m),
                score.text()
            ),
            None => writeln!(self.out, "No legal move."),
        }
    }

    /// A draw offer: the engine searches and accepts from move [`DRAW_FROM_MOVE`] on when its
    /// score is at most [`DRAW_MARGIN_CP`].
    fn draw_offer(&mut self) -> io::Result<Step> {
        let number = self.game.position().fullmoves().get();
        if number < DRAW_FROM_MOVE {
            writeln!(
                self.out,
                "polybook declines the draw: too early (it considers offers from move {DRAW_FROM_MOVE} on)."
            )?;
            return Ok(Step::Again);
        }
        let limits = self.short_limits();
        let (_, score, _) = self.search_now(&limits, None);
        // The score is the person's (the side to move's); the engine's is the opposite.
        let engine_view = match score {
            Score::Cp(cp) => Score::Cp(-cp),
            Score::Mate(n) => Score::Mate(-n),
        };
        let accepts = match engine_view {
            Score::Cp(cp) => cp <= DRAW_MARGIN_CP,
            Score::Mate(n) => n < 0,
        };
        if accepts {
            writeln!(
                self.out,
                "polybook accepts the draw (its score {}).",
                engine_view.text()
            )?;
            self.game
                .finish(Some(KnownOutcome::Draw), Termination::Agreement);
            Ok(Step::Done)
        } else {
            writeln!(
                self.out,
                "polybook declines the draw (its score {}); play on.",
                engine_view.text()
            )?;
            Ok(Step::Again)
        }
    }

    /// The `book` command: the book moves of the position, of each book that has some (the
    /// book's name above its table when there are several books).
    fn show_book(&mut self) -> io::Result<()> {
        if self.options.books.is_empty() {
            return writeln!(self.out, "No book (start with --book FILE).");
        }
        let pos = self.game.position().clone();
        let several = self.options.books.len() > 1;
        let mut shown = false;
        for index in 0..self.options.books.len() {
            let (name, book) = self.options.books.iter().nth(index).expect("a book");
            let probe = book.probe(&pos);
            if probe.legal.is_empty() {
                continue;
            }
            if several {
                let name = name.to_string();
                writeln!(self.out, "book {name}")?;
            }
            self.book_table(&pos, &probe.legal)?;
            shown = true;
        }
        if !shown {
            return writeln!(self.out, "No book moves in this position.");
        }
        Ok(())
    }

    /// One book's moves of `pos` as a table: move, weight, share.
    fn book_table(&mut self, pos: &Chess, moves: &[BookMove]) -> io::Result<()> {
        let total = self.options.choose.total_weight(moves);
        let shares = self.options.choose.shares(moves);
        writeln!(self.out, "{:<9} {:>6} {:>7}", "move", "weight", "share")?;
        for (m, share) in moves.iter().zip(shares) {
            writeln!(
                self.out,
                "{:<9} {:>6} {:>6.1}%",
                SanPlus::from_move(pos.clone(), m.mv).to_string(),
                m.entry.weight,
                100.0 * share
            )?;
        }
        let n = moves.len();
        writeln!(
            self.out,
            "{n} book move{}, total weight {total}",
            if n == 1 { "" } else { "s" }
        )
    }

    fn save(&mut self, path: &str) -> io::Result<()> {
        if path.is_empty() {
            return writeln!(self.out, "save needs a file name: save FILE");
        }
        match write_atomic(Path::new(path), self.pgn().as_bytes()) {
            Ok(()) => writeln!(self.out, "Saved the game so far to {path}."),
            Err(e) => writeln!(self.out, "Cannot save to {path}: {e}"),
        }
    }

    /// The engine's turn: a book move if the book has one, else a search.
    fn engine_turn(&mut self) -> io::Result<()> {
        let me = !self.options.human;
        let pos = self.game.position().clone();
        let started = Instant::now();
        let choose = self.engine_choose();
        let picked = choose.as_ref().and_then(|choose| {
            self.options.books.pick_with_line(
                &pos,
                choose,
                self.options.book_rules.min_line_plies,
                &mut self.rng,
            )
        });
        let legal = pos.legal_moves();
        let (mv, comment, report) = if let (Some((giver, pick)), Some(choose)) = (picked, &choose) {
            let (_, giver_book) = self.options.books.iter().nth(giver).expect("a book");
            let book = giver_book.probe(&pos).legal;
            let shares = choose.shares(&book);
            let mut sorted: Vec<(&BookMove, f64)> = book.iter().zip(shares).collect();
            sorted.sort_by_key(|(m, _)| std::cmp::Reverse(m.entry.weight));
            let mut list: Vec<String> = sorted
                .iter()
                .take(BOOK_MOVES_SHOWN)
                .map(|(m, share)| {
                    format!(
                        "{} {:.1}%",
                        SanPlus::from_move(pos.clone(), m.mv),
                        100.0 * share
                    )
                })
                .collect();
            if sorted.len() > BOOK_MOVES_SHOWN {
                list.push(format!("{} more", sorted.len() - BOOK_MOVES_SHOWN));
            }
            (
                pick.book_move.mv,
                Some("book".to_string()),
                format!("from {}: {}", self.book_name(Some(giver)), list.join(", ")),
            )
        } else if legal.len() == 1 {
            (legal[0], None, "the only legal move".to_string())
        } else {
            writeln!(self.out, "polybook is thinking...")?;
            self.out.flush()?;
            let (limits, soft) = self.engine_limits(me);
            let (best, score, depth) = self.search_now(&limits, soft);
            let secs = started.elapsed().as_secs_f64();
            let Some(best) = best else {
                // Cannot happen: the position has legal moves.
                return Ok(());
            };
            (
                best,
                Some(format!("{}/{depth} {secs:.2}s", score.text())),
                format!(
                    "score {} for polybook, depth {depth}, {secs:.2} s",
                    score.text()
                ),
            )
        };
        if let Some(clocks) = self.clocks.as_mut()
            && !clocks[index(me)].spend(started.elapsed(), Duration::ZERO)
        {
            self.game.forfeit(Termination::TimeForfeit(me));
            return Ok(());
        }
        let san = SanPlus::from_move(pos.clone(), mv);
        writeln!(self.out, "{} {san}   polybook, {report}", move_number(&pos))?;
        self.play(mv, comment)
    }

    /// The engine's limits for its own move, with the time plan of a clock (its soft limit is
    /// scaled after each iteration).
    fn engine_limits(&self, me: Color) -> (Limits, Option<TimePlan>) {
        match (self.options.thinking, &self.clocks) {
            (Thinking::Clock(_), Some(clocks)) => {
                let c = &clocks[index(me)];
                let plan = TimePlan::new(
                    TimeLeft {
                        time: c.left(),
                        inc: c.increment(),
                        movestogo: c.moves_to_go(),
                    },
                    ENGINE_OVERHEAD,
                );
                (
                    Limits {
                        movetime: Some(plan.hard),
                        ..Limits::default()
                    },
                    Some(plan),
                )
            }
            (Thinking::PerMove(p), _) => (p.limits(), None),
            (Thinking::Clock(_), None) => (Limits::default(), None),
        }
    }

    fn announce_end(&mut self) -> io::Result<()> {
        let Some((outcome, why)) = self.game.end.clone() else {
            return Ok(());
        };
        if why == Termination::Unterminated {
            writeln!(self.out, "Game stopped before its end (result *).")?;
        } else {
            writeln!(
                self.out,
                "Game over: {} ({}).",
                why.describe(outcome),
                self.game.result()
            )?;
        }
        writeln!(self.out, "Final position: {}", fen_of(self.game.position()))?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        assert_eq!(clock_text(Duration::from_millis(299_350)), "4:59.3");
        assert_eq!(clock_text(Duration::from_secs(3723)), "1:02:03");
        assert_eq!(normalize_move("12. e4"), "e4");
        assert_eq!(normalize_move("3...Nf6"), "Nf6");
        assert_eq!(normalize_move("0-0"), "O-O");
        assert_eq!(normalize_move("0-0-0+"), "O-O-O+");
        assert_eq!(normalize_move("e2e4"), "e2e4");
    }
}
