//! The engines that score positions: polybook's own search in this process, or any UCI engine in
//! its own (restarted when it crashes or hangs, its position tried again).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

use crate::arena::player::{EngineScore, EngineSpec, GoError, UciEngine};
use crate::book::RawMove;
use crate::engine::{Engine, Limits, Score, SearchOptions};
use crate::position::fen_of;
use crate::score_scale::{MATE_BOUND_CP, MATE_CP};

/// How long each position is searched: nodes, depth or time (at least one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnalysisLimits {
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    pub movetime: Option<Duration>,
}

impl AnalysisLimits {
    /// `nodes 20000`, `depth 12 movetime 500`: as a UCI `go` command's arguments.
    pub fn uci(&self) -> String {
        let mut s = Vec::new();
        if let Some(n) = self.nodes {
            s.push(format!("nodes {n}"));
        }
        if let Some(d) = self.depth {
            s.push(format!("depth {d}"));
        }
        if let Some(t) = self.movetime {
            s.push(format!("movetime {}", t.as_millis()));
        }
        s.join(" ")
    }
}

/// Which engine analyses.
#[derive(Clone, Debug)]
pub enum EngineChoice {
    /// polybook's own search, in this process, one thread per engine, `hash_mb` each.
    Builtin { hash_mb: usize },
    /// A UCI engine: its program, arguments and options.
    Uci(EngineSpec),
}

impl EngineChoice {
    /// The engine as the cache's header names it.
    pub fn label(&self) -> String {
        match self {
            EngineChoice::Builtin { .. } => "builtin".to_string(),
            EngineChoice::Uci(spec) => spec.label.clone(),
        }
    }
}

/// An engine's verdict on a position: the score from the side to move's view on the internal
/// scale (centipawns; mates as `±(MATE_CP - plies)`), the depth it came from, and the move it
/// chose (what `analyse --expand` adds to a book).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub score: i32,
    pub depth: u32,
    /// The engine's best move, in Polyglot's encoding; `None` when it gave none (no legal move,
    /// or a move that is not legal) or for a value backed up from other verdicts.
    pub best: Option<RawMove>,
}

impl Verdict {
    /// A score and depth with no move.
    pub fn score(score: i32, depth: u32) -> Verdict {
        Verdict {
            score,
            depth,
            best: None,
        }
    }
}

/// Scores positions, one at a time.
pub trait Analyser: Send {
    /// The best score of `pos` over `moves` (its legal moves when empty).
    fn analyse(&mut self, pos: &Chess, moves: &[Move]) -> Result<Verdict, String>;
}

/// The process ids of the running UCI engines, so that an interruption can end them at once.
pub type Running = Arc<Mutex<HashSet<u32>>>;

/// Makes one analyser of `choice`.
pub fn make_analyser(
    choice: &EngineChoice,
    limits: AnalysisLimits,
    stop: Arc<AtomicBool>,
    running: Running,
    timeout: Duration,
) -> Box<dyn Analyser> {
    match choice {
        EngineChoice::Builtin { hash_mb } => Box::new(Builtin {
            engine: Engine::new(SearchOptions {
                hash_mb: *hash_mb,
                threads: 1,
                ..SearchOptions::default()
            }),
            limits,
            stop,
        }),
        EngineChoice::Uci(spec) => Box::new(Uci {
            spec: spec.clone(),
            engine: None,
            limits,
            running,
            timeout,
            stop,
        }),
    }
}

/// A mate in `moves` moves as UCI gives it (negative: being mated) on the internal scale.
fn mate_score(moves: i32) -> i32 {
    if moves > 0 {
        MATE_CP - (2 * moves - 1)
    } else {
        -(MATE_CP + 2 * moves)
    }
}

/// Centipawns clamped inside the mate bound.
fn cp_score(cp: i32) -> i32 {
    cp.clamp(-(MATE_BOUND_CP - 1), MATE_BOUND_CP - 1)
}

/// polybook's own search, cleared before every position so that a score depends on the position
/// and the limits alone (with `nodes` or `depth`: the same on every run and every thread).
struct Builtin {
    engine: Engine,
    limits: AnalysisLimits,
    stop: Arc<AtomicBool>,
}

impl Analyser for Builtin {
    fn analyse(&mut self, pos: &Chess, moves: &[Move]) -> Result<Verdict, String> {
        self.engine.clear();
        let limits = Limits {
            depth: self.limits.depth,
            nodes: self.limits.nodes,
            movetime: self.limits.movetime,
            mate: None,
            root_moves: (!moves.is_empty()).then(|| moves.to_vec()),
        };
        let result = self
            .engine
            .search(pos, &[], &limits, self.stop.clone(), &mut |_| {});
        if self.stop.load(Ordering::Relaxed) {
            return Err("interrupted".to_string());
        }
        let score = match result.score {
            Score::Cp(cp) => cp_score(cp),
            Score::Mate(n) => mate_score(n),
        };
        Ok(Verdict {
            score,
            depth: result.depth.max(1),
            best: result.best_move.and_then(RawMove::from_move),
        })
    }
}

/// A UCI engine in its own process; `ucinewgame` before every position.
struct Uci {
    spec: EngineSpec,
    engine: Option<UciEngine>,
    limits: AnalysisLimits,
    running: Running,
    /// The most a position may take before the engine counts as hung.
    timeout: Duration,
    stop: Arc<AtomicBool>,
}

/// Tries per position before the run gives up on the engine.
const TRIES: usize = 3;

impl Uci {
    fn start(&mut self) -> Result<&mut UciEngine, String> {
        if self.engine.is_none() {
            let engine =
                UciEngine::start(&self.spec, Duration::from_secs(30)).map_err(|e| e.to_string())?;
            self.running.lock().unwrap().insert(engine.pid());
            self.engine = Some(engine);
        }
        Ok(self.engine.as_mut().expect("started"))
    }

    fn drop_engine(&mut self) {
        if let Some(engine) = self.engine.take() {
            self.running.lock().unwrap().remove(&engine.pid());
            drop(engine); // killed
        }
    }

    fn try_once(&mut self, pos: &Chess, moves: &[Move]) -> Result<Verdict, String> {
        let timeout = self.timeout;
        let go = {
            let mut go = format!("go {}", self.limits.uci());
            if !moves.is_empty() {
                go.push_str(" searchmoves");
                for m in moves {
                    go.push(' ');
                    go.push_str(&UciMove::from_move(*m, CastlingMode::Standard).to_string());
                }
            }
            go
        };
        let position = format!("position fen {}", fen_of(pos));
        let engine = self.start()?;
        engine.new_game(timeout).map_err(|e| e.to_string())?;
        let reply = engine
            .go(&position, &go, Some(Instant::now() + timeout), None)
            .map_err(|e| match e {
                GoError::Timeout(t) => format!("no bestmove within {:.1} s", t.as_secs_f64()),
                GoError::Crashed(why) => format!("it crashed ({why})"),
                GoError::Aborted => "stopped".to_string(),
            })?;
        let score = match reply.score {
            Some(EngineScore::Cp(cp)) => cp_score(cp),
            Some(EngineScore::Mate(n)) if n != 0 => mate_score(n),
            Some(EngineScore::Mate(_)) => -MATE_CP,
            None if pos.legal_moves().is_empty() => {
                if pos.is_check() {
                    -MATE_CP
                } else {
                    0
                }
            }
            None => return Err("no score in its info lines".to_string()),
        };
        let best = reply
            .bestmove
            .parse::<UciMove>()
            .ok()
            .and_then(|m| m.to_move(pos).ok())
            .and_then(RawMove::from_move);
        Ok(Verdict {
            score,
            depth: reply.depth.unwrap_or(1).max(1),
            best,
        })
    }
}

impl Analyser for Uci {
    fn analyse(&mut self, pos: &Chess, moves: &[Move]) -> Result<Verdict, String> {
        let mut last = String::new();
        for _ in 0..TRIES {
            if self.stop.load(Ordering::Relaxed) {
                return Err("interrupted".to_string());
            }
            match self.try_once(pos, moves) {
                Ok(v) => return Ok(v),
                Err(why) => {
                    // A crash, a hang or nonsense: a fresh process for the next try.
                    self.drop_engine();
                    last = why;
                }
            }
        }
        Err(format!(
            "engine {}: {TRIES} tries at {} failed, the last: {last}",
            crate::text::quote(&self.spec.label),
            fen_of(pos)
        ))
    }
}

impl Drop for Uci {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.take() {
            self.running.lock().unwrap().remove(&engine.pid());
            engine.quit();
        }
    }
}
