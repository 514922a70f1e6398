//! A match between two UCI engines: openings from a book played twice with colours swapped,
//! clocks kept by the runner, forfeits and adjudication, several games at once.
//!
//! The runner reports each game as it finishes (see [`Event`]); writing the PGN, the progress
//! line and the SPRT stop are the caller's (it sets `stop` to end the match early).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, KnownOutcome, Move, Position};

use super::clock::{Clock, PerMove, TimeControl};
use super::game::{Game, Termination};
use super::opening::{StartLine, book_walk};
use super::pgn::{game_text, result_text, roster};
use super::player::{EngineError, EngineSpec, GoError, UciEngine};
use super::resume::Done;
use crate::book::{Books, ChooseOptions};

/// How long each move may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveLimit {
    /// Clocks under a time control, kept by the runner.
    Clock(TimeControl),
    /// A fixed budget per move (`go depth`, `nodes`, `movetime`: the first reached ends it).
    PerMove(PerMove),
}

impl std::fmt::Display for MoveLimit {
    /// `tc 10+0.1`, or the budget per move (`2000 nodes a move`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MoveLimit::Clock(tc) => write!(f, "tc {tc}"),
            MoveLimit::PerMove(p) => write!(f, "{p}"),
        }
    }
}

/// Resign adjudication: a side whose engine reports at most `-score` centipawns for `moves`
/// moves in a row, while its opponent reports at least `score`, loses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResignRule {
    pub score: i32,
    pub moves: usize,
}

/// Draw adjudication: from move `movenumber` on, once both engines have reported scores within
/// `±score` centipawns for `moves` moves each in a row, the game is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRule {
    pub movenumber: u32,
    pub score: i32,
    pub moves: usize,
}

/// Everything a match needs.
#[derive(Clone)]
pub struct MatchConfig {
    /// The two engines, the first one's view being the report's.
    pub engines: [EngineSpec; 2],
    /// The books of the openings, in priority order (first hit wins at each ply).
    pub book: Option<Arc<Books>>,
    /// The most plies an opening takes from the books.
    pub book_plies: usize,
    /// How each opening move is picked from the books.
    pub choose: ChooseOptions,
    /// The lines the openings start from (a position and the moves played from it): pair k
    /// plays `starts[k % len]`, then the book walk from where it ends, if there is a book.
    /// Never empty.
    pub starts: Vec<StartLine>,
    /// The games to play, in colour-swapped pairs.
    pub games: usize,
    /// Each move's limit: a clock, a time, nodes or a depth.
    pub limit: MoveLimit,
    /// Extra time past a clock's zero before the flag falls.
    pub time_margin: Duration,
    /// Games played at once.
    pub concurrency: usize,
    /// The seed of the openings' walk through the books.
    pub seed: u64,
    /// Adjudication: a game is lost by resignation, or drawn, when the engines' scores agree
    /// long enough (`None`: never).
    pub resign: Option<ResignRule>,
    pub draw: Option<DrawRule>,
    /// The PGN `Event` tag of the games.
    pub event: String,
    /// How long an engine may take to answer `uci` and `isready`.
    pub handshake_timeout: Duration,
    /// How long a move without a clock or a movetime (`go nodes`, `go depth`) may take before the
    /// engine counts as hung (the game is lost as a stalled connection).
    pub move_timeout: Duration,
}

/// A finished game, as the runner reports it.
#[derive(Clone, Debug)]
pub struct GameReport {
    /// 0-based game number; games `2k` and `2k + 1` share an opening.
    pub index: usize,
    /// The first engine's half points: 2 a win, 1 a draw, 0 a loss.
    pub first_half_points: u8,
    /// Whether the first engine had White.
    pub first_white: bool,
    /// The result (`None`: unfinished, `*`).
    pub outcome: Option<KnownOutcome>,
    pub termination: Termination,
    /// The engines' names as the PGN gives them.
    pub white: String,
    pub black: String,
    pub pgn: String,
}

impl GameReport {
    /// The PGN result string: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn result(&self) -> &'static str {
        result_text(self.outcome)
    }
}

/// What the runner tells its caller.
#[derive(Clone, Debug)]
pub enum Event {
    GameFinished(GameReport),
    /// An engine crashed or hung and was started again (which engine, why).
    Restarted(usize, String),
    /// An engine could not be started again; that worker stops.
    Failed(String),
}

/// Starts each engine once to check that it runs, answers and has the options asked for;
/// returns their names. Nothing is played if this fails.
pub fn check_engines(config: &MatchConfig) -> Result<[String; 2], EngineError> {
    let first = UciEngine::start(&config.engines[0], config.handshake_timeout)?;
    let second = UciEngine::start(&config.engines[1], config.handshake_timeout)?;
    let names = distinct_names(&first.name, &second.name);
    first.quit();
    second.quit();
    Ok(names)
}

/// Engine names for the PGN, told apart when both engines give the same one.
fn distinct_names(a: &str, b: &str) -> [String; 2] {
    if a == b {
        [format!("{a} (1)"), format!("{b} (2)")]
    } else {
        [a.to_string(), b.to_string()]
    }
}

/// The opening a pair of games plays (one game each way round): where the games start and the
/// moves played from there, those of its line of the openings file ([`StartLine`]) first, then
/// the book moves.
#[derive(Clone, Debug)]
pub struct PairOpening {
    pub start: Chess,
    pub moves: Vec<Move>,
    /// How many of `moves` come from the openings file (the rest from the book walk).
    pub file_moves: usize,
}

impl PairOpening {
    /// The book walk's part: the position it starts from and its moves.
    pub fn book_part(&self) -> (Chess, &[Move]) {
        let (line, book) = self.moves.split_at(self.file_moves);
        let mut pos = self.start.clone();
        for &m in line {
            pos.play_unchecked(m);
        }
        (pos, book)
    }
}

/// The opening of pair `pair`: the same whatever the concurrency, for a given seed.
pub fn opening_for(config: &MatchConfig, pair: usize) -> PairOpening {
    let line = &config.starts[pair % config.starts.len()];
    let mut opening = PairOpening {
        start: line.start.clone(),
        moves: line.moves.clone(),
        file_moves: line.moves.len(),
    };
    if let Some(book) = &config.book {
        let mut rng =
            StdRng::seed_from_u64(config.seed ^ (pair as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (from, _) = opening.book_part();
        let walk = book_walk(book, &from, config.book_plies, &config.choose, &mut rng);
        opening.moves.extend(walk);
    }
    opening
}

/// The random numbers of engine `which`'s own book in the game of PGN round `round`: the same
/// whatever the concurrency, for a given seed.
fn engine_book_rng(seed: u64, round: usize, which: usize) -> StdRng {
    let salt =
        (round as u64).wrapping_mul(0xD1B5_4A32_D192_ED03) ^ (which as u64 + 1).rotate_left(32);
    StdRng::seed_from_u64(seed ^ salt)
}

/// The move engine `spec`'s own book gives in `game`'s position, if it has one and the game is
/// still within its depth (cutechess's rule: fewer plies played from the game's start than
/// twice the depth in moves).
fn engine_book_move(
    spec: &EngineSpec,
    game: &Game,
    choose: &ChooseOptions,
    rng: &mut StdRng,
) -> Option<Move> {
    let book = spec.book.as_ref()?;
    if book
        .depth
        .is_some_and(|d| game.moves().len() >= d.saturating_mul(2))
    {
        return None;
    }
    let (_, pick) = book.books.pick(game.position(), choose, rng)?;
    Some(pick.book_move.mv)
}

/// The openings of the games being started, each walked once and shared by the games that play
/// it. An opening is kept only until the last of its games has taken it, so that what is kept
/// grows with the games being started, not with the match's length.
#[derive(Default)]
pub(crate) struct OpeningCache {
    /// By opening number: the opening, and how many of its games have yet to take it.
    open: Mutex<HashMap<usize, (PairOpening, usize)>>,
}

impl OpeningCache {
    /// Opening `number` for one of the `games` games that play it: walked by `walk` for the
    /// first of them, then shared, and forgotten once all `games` have taken it.
    pub(crate) fn take(
        &self,
        number: usize,
        games: usize,
        walk: impl FnOnce() -> PairOpening,
    ) -> PairOpening {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        match open.entry(number) {
            Entry::Occupied(mut entry) => {
                entry.get_mut().1 -= 1;
                if entry.get().1 == 0 {
                    entry.remove().0
                } else {
                    entry.get().0.clone()
                }
            }
            Entry::Vacant(entry) => {
                let opening = walk();
                if games > 1 {
                    entry.insert((opening.clone(), games - 1));
                }
                opening
            }
        }
    }
}

/// The games of a match's pair `pair` (games `2 * pair` and `2 * pair + 1`): 2, or 1 for the
/// last pair of an odd number of games.
pub(crate) fn games_of_pair(games: usize, pair: usize) -> usize {
    games.saturating_sub(2 * pair).min(2)
}

/// Plays the match: `config.games` games on `config.concurrency` workers (no more than there
/// are games), each game reported through `events` as it ends, except the games `done` holds
/// (a resumed match's). Workers stop taking new games once `stop` is set; `abort` also ends the
/// games being played (they are not reported).
///
/// Nothing is kept per game of the match: game `i`'s opening and colours are worked out when it
/// starts, so that a match of a billion games (an SPRT's cap) takes no more memory than a short
/// one.
pub fn run(
    config: &MatchConfig,
    names: &[String; 2],
    stop: &Arc<AtomicBool>,
    abort: &Arc<AtomicBool>,
    events: Sender<Event>,
    done: &Done,
) {
    let next = AtomicUsize::new(0);
    let openings = OpeningCache::default();
    thread::scope(|scope| {
        for _ in 0..config.concurrency.clamp(1, config.games.max(1)) {
            let events = events.clone();
            let (next, openings) = (&next, &openings);
            scope.spawn(move || {
                let mut worker = Worker {
                    config,
                    names,
                    engines: [None, None],
                    events,
                    abort,
                };
                loop {
                    if stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed) {
                        break;
                    }
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= config.games {
                        break;
                    }
                    if done.contains(index) {
                        continue;
                    }
                    let pair = index / 2;
                    let games = games_of_pair(config.games, pair) - done.of_opening(pair);
                    let opening = openings.take(pair, games, || opening_for(config, pair));
                    if !worker.play(index, index + 1, &opening) {
                        break;
                    }
                }
                for engine in worker.engines.into_iter().flatten() {
                    engine.quit();
                }
            });
        }
    });
}

/// One worker: its own two engine processes, playing one game at a time.
struct Worker<'a> {
    config: &'a MatchConfig,
    names: &'a [String; 2],
    engines: [Option<UciEngine>; 2],
    events: Sender<Event>,
    abort: &'a AtomicBool,
}

/// How long a late `bestmove` is waited for after a flag fall before the engine counts as hung.
const LATE_ANSWER: Duration = Duration::from_secs(2);

impl Worker<'_> {
    /// The engine `which`, started if it is not running. `None` (and an event) if it can't be.
    fn engine(&mut self, which: usize) -> Option<&mut UciEngine> {
        if self.engines[which].is_none() {
            match UciEngine::start(&self.config.engines[which], self.config.handshake_timeout) {
                Ok(e) => self.engines[which] = Some(e),
                Err(e) => {
                    let _ = self.events.send(Event::Failed(e.to_string()));
                    return None;
                }
            }
        }
        self.engines[which].as_mut()
    }

    /// Throws away engine `which` (it crashed or hung); it is started again when next needed.
    fn discard(&mut self, which: usize, why: &str) {
        if let Some(e) = self.engines[which].take() {
            drop(e);
        }
        let _ = self.events.send(Event::Restarted(which, why.to_string()));
    }

    /// Plays game `index` (PGN round `round`); `false` if the worker must stop (an engine can't
    /// start, or abort).
    fn play(&mut self, index: usize, round: usize, opening: &PairOpening) -> bool {
        let config = self.config;
        let first_white = index.is_multiple_of(2);
        // Engine index (0 = first) of each colour.
        let engine_of = |c: Color| usize::from(c.is_white() != first_white);

        for which in 0..2 {
            let timeout = config.handshake_timeout;
            let Some(engine) = self.engine(which) else {
                return false;
            };
            if let Err(e) = engine.new_game(timeout) {
                self.discard(which, &e.to_string());
                if self.engine(which).is_none() {
                    return false;
                }
            }
        }

        let mut game = Game::new(opening.start.clone());
        for &m in &opening.moves {
            game.play(m, Some("book".to_string()));
        }
        let start_fen = game
            .start_fen()
            .map(|_| Fen::from_position(game.start(), EnPassantMode::Legal).to_string());
        let mut clocks = match config.limit {
            MoveLimit::Clock(tc) => Some([Clock::new(tc), Clock::new(tc)]),
            _ => None,
        };
        // Each engine's scores, its own view, newest last (for adjudication).
        let mut scores: [Vec<Option<i32>>; 2] = [Vec::new(), Vec::new()];
        // The random numbers of each engine's own book, if it has one.
        let mut book_rngs = [0, 1].map(|which| engine_book_rng(config.seed, round, which));

        let mut uci_moves = game.uci_moves();
        while game.end.is_none() {
            if self.abort.load(Ordering::Relaxed) {
                return false;
            }
            if let Some((outcome, why)) = game.ended_by_rules() {
                game.finish(outcome, why);
                break;
            }
            let side = game.position().turn();
            let which = engine_of(side);
            // The engine's own book, played for it by the runner (as cutechess does): no search,
            // no time off its clock, no score.
            if let Some(mv) = engine_book_move(
                &config.engines[which],
                &game,
                &config.choose,
                &mut book_rngs[which],
            ) {
                uci_moves.push(mv.to_uci(CastlingMode::Standard).to_string());
                game.play(mv, Some("book".to_string()));
                continue;
            }
            let position = match &start_fen {
                Some(fen) => format!("position fen {fen}"),
                None => "position startpos".to_string(),
            };
            let position = if uci_moves.is_empty() {
                position
            } else {
                format!("{position} moves {}", uci_moves.join(" "))
            };
            let (go, deadline) = go_command(config, clocks.as_ref(), side);
            let abort = self.abort;
            let Some(engine) = self.engine(which) else {
                return false;
            };
            let reply = engine.go(&position, &go, Some(Instant::now() + deadline), Some(abort));
            match reply {
                // Stopped by Ctrl-C or SIGTERM: the game is not scored.
                Err(GoError::Aborted) => return false,
                Err(GoError::Timeout(_)) => {
                    let late = engine.stop_and_drain(LATE_ANSWER);
                    if clocks.is_some() {
                        game.forfeit(Termination::TimeForfeit(side));
                    } else {
                        game.forfeit(Termination::Stall(side));
                    }
                    if !late {
                        self.discard(which, "it did not answer 'stop'");
                    }
                }
                Err(GoError::Crashed(why)) => {
                    game.forfeit(Termination::Crash(side, why.clone()));
                    self.discard(which, &why);
                }
                Ok(reply) => {
                    if let Some(clocks) = clocks.as_mut()
                        && !clocks[side as usize].spend(reply.elapsed, config.time_margin)
                    {
                        game.forfeit(Termination::TimeForfeit(side));
                        continue;
                    }
                    let Some(mv) = legal_move(game.position(), &reply.bestmove) else {
                        game.forfeit(Termination::IllegalMove(side, reply.bestmove.clone()));
                        continue;
                    };
                    let comment = move_comment(&reply);
                    uci_moves.push(mv.to_uci(CastlingMode::Standard).to_string());
                    game.play(mv, Some(comment));
                    scores[which].push(reply.score.map(|s| s.centipawns()));
                    if let Some(end) = adjudicate(config, &game, &scores, engine_of) {
                        game.finish(end.0, end.1);
                    }
                }
            }
        }

        let (outcome, termination) = game.end.clone().expect("the loop ends with an end");
        let first_half_points = match outcome {
            Some(KnownOutcome::Decisive { winner }) => {
                if engine_of(winner) == 0 {
                    2
                } else {
                    0
                }
            }
            Some(KnownOutcome::Draw) => 1,
            None => 1,
        };
        let (white, black) = if first_white {
            (&self.names[0], &self.names[1])
        } else {
            (&self.names[1], &self.names[0])
        };
        let mut tags = roster(&config.event, &round.to_string(), white, black);
        if let MoveLimit::Clock(tc) = config.limit {
            tags.push(("TimeControl", tc.to_string()));
        }
        let pgn = game_text(&game, &tags);
        let _ = self.events.send(Event::GameFinished(GameReport {
            index,
            first_half_points,
            first_white,
            outcome,
            termination,
            white: white.clone(),
            black: black.clone(),
            pgn,
        }));
        true
    }
}

/// Plays one game of a tournament's schedule with the pairing's two engine processes (started
/// here if `None`, left for the next game of the same engines): game `index` of the pairing
/// `config` describes, written as PGN round `round`. `false` if the caller must stop.
#[allow(clippy::too_many_arguments)]
pub(crate) fn play_game(
    config: &MatchConfig,
    names: &[String; 2],
    engines: &mut [Option<UciEngine>; 2],
    index: usize,
    round: usize,
    opening: &PairOpening,
    events: Sender<Event>,
    abort: &AtomicBool,
) -> bool {
    let mut worker = Worker {
        config,
        names,
        engines: [engines[0].take(), engines[1].take()],
        events,
        abort,
    };
    let go_on = worker.play(index, round, opening);
    *engines = worker.engines;
    go_on
}

/// The `go` command for the side to move, and how long to wait for its answer.
fn go_command(
    config: &MatchConfig,
    clocks: Option<&[Clock; 2]>,
    side: Color,
) -> (String, Duration) {
    match (config.limit, clocks) {
        (MoveLimit::Clock(_), Some(c)) => {
            let (w, b) = (&c[Color::White as usize], &c[Color::Black as usize]);
            let mut go = format!(
                "go wtime {} btime {} winc {} binc {}",
                w.left().as_millis(),
                b.left().as_millis(),
                w.increment().as_millis(),
                b.increment().as_millis()
            );
            let own = &c[side as usize];
            if let Some(m) = own.moves_to_go() {
                go.push_str(&format!(" movestogo {m}"));
            }
            (
                go,
                own.left() + config.time_margin + Duration::from_millis(1),
            )
        }
        (MoveLimit::PerMove(p), _) => (
            p.go_command(),
            p.movetime.map_or(config.move_timeout, |t| {
                t + config.time_margin + Duration::from_secs(5)
            }),
        ),
        (MoveLimit::Clock(_), None) => unreachable!("a clocked match has clocks"),
    }
}

/// The move an engine sent, if it is legal in `pos` (castling as e1g1, or as king-takes-rook).
fn legal_move(pos: &Chess, text: &str) -> Option<Move> {
    let uci: UciMove = text.parse().ok()?;
    uci.to_move(pos).ok()
}

/// The PGN comment after an engine's move: score/depth and time, as cutechess writes it.
fn move_comment(reply: &super::player::Reply) -> String {
    let time = format!("{:.2}s", reply.elapsed.as_secs_f64());
    match (reply.score, reply.depth) {
        (Some(s), Some(d)) => format!("{}/{d} {time}", s.pgn()),
        (Some(s), None) => format!("{} {time}", s.pgn()),
        _ => time,
    }
}

/// Resign or draw adjudication from the engines' latest scores, if the rules ask for it.
fn adjudicate(
    config: &MatchConfig,
    game: &Game,
    scores: &[Vec<Option<i32>>; 2],
    engine_of: impl Fn(Color) -> usize,
) -> Option<(Option<KnownOutcome>, Termination)> {
    // The last `n` scores of engine `which`, if it has reported that many in a row.
    let last = |which: usize, n: usize| -> Option<Vec<i32>> {
        let s = &scores[which];
        if n == 0 || s.len() < n {
            return None;
        }
        s[s.len() - n..].iter().copied().collect()
    };
    if let Some(rule) = config.resign {
        for loser in [Color::White, Color::Black] {
            let (l, w) = (engine_of(loser), engine_of(!loser));
            if let (Some(ls), Some(ws)) = (last(l, rule.moves), last(w, rule.moves))
                && ls.iter().all(|&s| s <= -rule.score)
                && ws.iter().all(|&s| s >= rule.score)
            {
                return Some((
                    Some(KnownOutcome::Decisive { winner: !loser }),
                    Termination::Adjudication(format!(
                        "{} resigns (scores past {} cp for {} moves)",
                        if loser.is_white() { "White" } else { "Black" },
                        rule.score,
                        rule.moves
                    )),
                ));
            }
        }
    }
    if let Some(rule) = config.draw {
        let move_number = game.position().fullmoves().get();
        if move_number >= rule.movenumber
            && (0..2).all(|w| {
                last(w, rule.moves).is_some_and(|s| s.iter().all(|&x| x.abs() <= rule.score))
            })
        {
            return Some((
                Some(KnownOutcome::Draw),
                Termination::Adjudication(format!(
                    "draw (scores within {} cp for {} moves)",
                    rule.score, rule.moves
                )),
            ));
        }
    }
    None
}
