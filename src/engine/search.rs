//! The engine and its iterative deepening: [`Engine::search`] searches a position to depth 1, 2,
//! 3, … with aspiration windows around the last score, until a limit stops it, and reports each
//! completed depth as an [`Iteration`].
//!
//! Before the tree search (`super::negamax`) the root may be answered otherwise: a position
//! with no legal move at once, a 3-man position by the tablebase's move, and a mate task (`go
//! mate N`) by the dedicated mate search first (`Engine::mate_first`).
//!
//! With `SearchOptions::threads` above 1 the search is **Lazy SMP**: helper threads search the
//! same root at the same time, each its own `negamax::Worker` (killers, history, line) over the
//! one lock-free transposition table, at depths staggered by Stockfish 9's skip blocks, so that
//! the main thread finds their results in the table. The main thread alone reports, keeps to the
//! limits and decides the move; node counts (and node limits) are summed over the threads, a stop
//! or a deadline ends them all, and the helpers end when the main thread is done. One thread
//! searches exactly as before (`bench` keeps its signature; it searches with one thread always).
//!
//! Scores are centipawns from the side to move's point of view, mates as [`super::score`] counts
//! them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use shakmaty::{CastlingMode, Chess, Move, Position};

use super::eval::Params;
use super::hash::hash_of;
use super::mate::{MateLimits, MateOutcome, MateSearch, MateTable};
use super::negamax::{Shared, StopWhen, Worker, WorkerSetup};
use super::options::{Limits, SearchOptions};
use super::ordering::History;
use super::parameters::{
    ASPIRATION_DELTA, ASPIRATION_MAX_FAIL_HIGH_REDUCTION, ASPIRATION_MIN_DEPTH,
    ASPIRATION_OPEN_DELTA,
};
use super::score::{INF, MATE_BOUND_CP, MATE_CP, MAX_PLY, Score};
use super::tablebase::{self, Value};
use super::tt::{TableError, TranspositionTable};

/// One finished iteration of iterative deepening, for `info` lines.
#[derive(Clone, Debug)]
pub struct Iteration {
    pub depth: u32,
    pub seldepth: u32,
    pub score: Score,
    pub nodes: u64,
    pub time: Duration,
    pub hashfull: u32,
    pub pv: Vec<Move>,
    /// The share (0 to 1) of the main thread's root nodes, since the search began, spent under
    /// the best move: near 1 when the other moves were refuted at once (time management).
    pub best_share: f64,
}

impl Iteration {
    pub fn nps(&self) -> u64 {
        let us = self.time.as_micros().max(1);
        (self.nodes as u128 * 1_000_000 / us) as u64
    }

    /// The UCI `info` line of this iteration.
    pub fn info_line(&self) -> String {
        let mut s = format!(
            "info depth {} seldepth {} score {} nodes {} nps {} hashfull {} time {} pv",
            self.depth,
            self.seldepth,
            self.score,
            self.nodes,
            self.nps(),
            self.hashfull,
            self.time.as_millis()
        );
        for m in &self.pv {
            s.push(' ');
            s.push_str(&m.to_uci(CastlingMode::Standard).to_string());
        }
        s
    }
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `None` only when the side to move has no legal move (or none of the root moves allowed
    /// is legal).
    pub best_move: Option<Move>,
    pub score: Score,
    pub depth: u32,
    pub nodes: u64,
    pub time: Duration,
    pub pv: Vec<Move>,
}

/// The engine: the transposition table and the move-ordering memory that lives across searches.
pub struct Engine {
    pub options: SearchOptions,
    pub params: Params,
    tt: TranspositionTable,
    /// History heuristic: how often a quiet move (by side, from, to) caused a cutoff.
    history: History,
    /// The helper threads' own histories (Lazy SMP), one per helper, kept across searches too.
    helper_history: Vec<History>,
    /// The mate search's table (made on the first mate search).
    mate_table: Option<MateTable>,
}

/// The size of the mate search's table in MB.
const MATE_TABLE_MB: usize = 16;

/// The stack of a helper thread, as much as a program's main thread has on Linux.
const HELPER_STACK: usize = 8 * 1024 * 1024;

/// What the mate search, run first for a mate task, left to do.
enum MateFirst {
    /// It answered (into the result): the search is over.
    Answered,
    /// It found no mate that short, or ran out of its half of the budget; the normal search goes
    /// on from `nodes`, to at most `max_depth`.
    Continue { nodes: u64, max_depth: u32 },
}

impl Engine {
    /// An engine with a table of `options.hash_mb` MB, or why the machine cannot give it (more
    /// than its free memory, or refused by the system).
    pub fn try_new(options: SearchOptions) -> Result<Self, TableError> {
        let tt = TranspositionTable::try_new(options.hash_mb)?;
        Ok(Engine::with_table(options, tt))
    }

    /// An engine with a table of `options.hash_mb` MB or, when the machine cannot give that
    /// much, the largest it can: the memory free, then halved until the system gives it. Its
    /// `options.hash_mb` says the size it has.
    pub fn new(mut options: SearchOptions) -> Self {
        loop {
            match TranspositionTable::try_new(options.hash_mb) {
                Ok(tt) => return Engine::with_table(options, tt),
                Err(TableError::TooLarge { free_mb, .. })
                    if (1..options.hash_mb).contains(&free_mb) =>
                {
                    options.hash_mb = free_mb;
                }
                Err(_) if options.hash_mb > 1 => options.hash_mb /= 2,
                // The smallest table is tried even when the memory free is reported lower.
                Err(_) => match TranspositionTable::allocate(1) {
                    Ok(tt) => return Engine::with_table(options, tt),
                    Err(e) => panic!("{e}"),
                },
            }
        }
    }

    fn with_table(options: SearchOptions, tt: TranspositionTable) -> Self {
        Engine {
            tt,
            options,
            params: Params::default(),
            history: History::new(),
            helper_history: Vec::new(),
            mate_table: None,
        }
    }

    /// Has the table's memory allocated now, before a search needs it (see
    /// `TranspositionTable::populate`).
    pub fn populate(&self) {
        self.tt.populate();
    }

    /// Forgets everything learnt in earlier searches (a new game, or a deterministic bench).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.history.clear();
        self.helper_history.clear();
    }

    /// Searches `pos`. `game` holds the keys ([`super::hash::hash_of`]) of the positions played
    /// before it (oldest first), for repetition draws. The search stops at the limits or when
    /// `stop` is set, and calls `on_iteration` after every completed depth.
    pub fn search(
        &mut self,
        pos: &Chess,
        game: &[u64],
        limits: &Limits,
        stop: Arc<AtomicBool>,
        on_iteration: &mut dyn FnMut(&Iteration),
    ) -> SearchResult {
        self.tt.new_search();
        let start = Instant::now();
        let max_depth = limits
            .depth
            .unwrap_or(MAX_PLY as u32 - 1)
            .clamp(1, MAX_PLY as u32 - 1);
        // The root moves: every legal move, or those of them allowed (`go searchmoves`).
        let legal = pos.legal_moves();
        let mut root_moves = legal.clone();
        if let Some(allowed) = &limits.root_moves {
            root_moves.retain(|m| allowed.contains(m));
        }
        let restricted = root_moves.len() < legal.len();
        let mut result = SearchResult {
            best_move: root_moves.first().copied(),
            score: Score::Cp(0),
            depth: 0,
            nodes: 0,
            time: Duration::ZERO,
            pv: root_moves.first().copied().into_iter().collect(),
        };
        if root_moves.is_empty() {
            result.score = Score::Mate(0);
            if !pos.is_check() || !legal.is_empty() {
                result.score = Score::Cp(0);
            }
            return result;
        }
        // The table knows nothing of the game: with earlier positions that could repeat, the
        // search (which probes the table below the root) decides.
        let repeatable = (pos.halfmoves() as usize).min(game.len());
        if self.options.tablebase
            && repeatable == 0
            && !restricted
            && let Some(result) = tablebase_root(pos, start, on_iteration)
        {
            return result;
        }
        let mut max_depth = max_depth;
        let mut nodes = 0;
        if let Some(n) = limits.mate.filter(|&n| n > 0 && self.options.mate_search)
            && !restricted
        {
            let past = &game[game.len() - repeatable..];
            match self.mate_first(
                pos,
                past,
                n,
                limits,
                start,
                &stop,
                on_iteration,
                &mut result,
            ) {
                MateFirst::Answered => return result,
                MateFirst::Continue {
                    nodes: spent,
                    max_depth: cap,
                } => {
                    nodes = spent;
                    max_depth = max_depth.min(cap);
                }
            }
        }
        let threads = self.options.threads.clamp(1, SearchOptions::MAX_THREADS);
        let shared = Shared::new(threads);
        let stop_when = StopWhen {
            stop,
            deadline: limits.movetime.map(|t| start + t),
            node_limit: limits.nodes.unwrap_or(u64::MAX),
        };
        let allowed: Option<Vec<Move>> = restricted.then(|| root_moves.iter().copied().collect());
        let mut worker = Worker::new(WorkerSetup {
            opts: self.options.clone(),
            params: &self.params,
            tt: &self.tt,
            history: &mut self.history,
            shared: &shared,
            id: 0,
            root: pos,
            root_moves: allowed.clone(),
            past: game,
            stop_when: stop_when.clone(),
        });
        worker.nodes = nodes;
        // The main thread's deepening, the same with or without helpers.
        let mut main_deepening = |worker: &mut Worker| {
            iterative_deepening(
                worker,
                pos,
                max_depth,
                limits,
                start,
                on_iteration,
                &mut result,
            )
        };
        if threads == 1 {
            main_deepening(&mut worker);
        } else {
            // Lazy SMP: helper threads search the same root over the same table, each with its
            // own killers, history and line, at staggered depths, and fill the table with what
            // the main thread then finds there. The main thread alone reports, keeps the clock
            // and chooses the move; when it is done the helpers are told to stop.
            self.helper_history.resize_with(threads - 1, History::new);
            let (options, params, tt) = (&self.options, &self.params, &self.tt);
            std::thread::scope(|scope| {
                for (i, history) in self.helper_history.iter_mut().enumerate() {
                    let mut helper = Worker::new(WorkerSetup {
                        opts: options.clone(),
                        params,
                        tt,
                        history,
                        shared: &shared,
                        id: i + 1,
                        root: pos,
                        root_moves: allowed.clone(),
                        past: game,
                        stop_when: stop_when.clone(),
                    });
                    // The tree can be deep: the helpers have the stack a main thread has. A
                    // helper that cannot be started is simply not there.
                    let _ = std::thread::Builder::new()
                        .name(format!("search helper {}", i + 1))
                        .stack_size(HELPER_STACK)
                        .spawn_scoped(scope, move || {
                            helper_deepening(&mut helper, pos, max_depth, i + 1);
                            helper.publish_nodes();
                        });
                }
                main_deepening(&mut worker);
                worker.publish_nodes();
                shared.done.store(true, Ordering::Relaxed);
            });
        }
        result.nodes = shared.total().max(worker.nodes);
        result.time = start.elapsed();
        result
    }

    /// The hand-over of a mate task (`Limits::mate`, `n` moves) to the dedicated mate search,
    /// run before the normal search. `past`: the keys of the game's positions that can come
    /// again. With a time or node budget the mate search has the first half of it; the normal
    /// search, looking for a mate that short too, has the rest.
    #[allow(clippy::too_many_arguments)]
    fn mate_first(
        &mut self,
        pos: &Chess,
        past: &[u64],
        n: u32,
        limits: &Limits,
        start: Instant,
        stop: &Arc<AtomicBool>,
        on_iteration: &mut dyn FnMut(&Iteration),
        result: &mut SearchResult,
    ) -> MateFirst {
        let table = self
            .mate_table
            .get_or_insert_with(|| MateTable::new(MATE_TABLE_MB));
        table.clear();
        let mut mate = MateSearch::new(
            table,
            past,
            MateLimits {
                deadline: limits.movetime.map(|t| start + t / 2),
                nodes: limits.nodes.map_or(u64::MAX, |n| n / 2),
                stop: stop.clone(),
            },
        );
        let outcome = mate.run(pos, n, &mut |_, _| {});
        let mut max_depth = u32::MAX;
        match outcome {
            MateOutcome::Mate { moves, pv } => {
                let iteration = Iteration {
                    depth: 2 * moves - 1,
                    seldepth: mate.seldepth.max(2 * moves - 1),
                    score: Score::Mate(moves as i32),
                    nodes: mate.nodes,
                    time: start.elapsed(),
                    hashfull: 0,
                    pv: pv.clone(),
                    best_share: 1.0,
                };
                on_iteration(&iteration);
                result.best_move = pv.first().copied().or(result.best_move);
                result.score = iteration.score;
                result.depth = iteration.depth;
                result.nodes = mate.nodes;
                result.time = iteration.time;
                if !pv.is_empty() {
                    result.pv = pv;
                }
                return MateFirst::Answered;
            }
            // Stopped from outside (UCI `stop`, the clock): answer now.
            MateOutcome::Stopped { .. }
                if stop.load(Ordering::Relaxed)
                    || (limits.movetime.is_none() && limits.nodes.is_none()) =>
            {
                result.nodes = mate.nodes;
                result.time = start.elapsed();
                return MateFirst::Answered;
            }
            MateOutcome::Stopped { .. } => {}
            // No mate that short: the normal search chooses the move.
            MateOutcome::NoMate => {
                if limits.depth.is_none() {
                    max_depth = 2 * n.min(MAX_PLY as u32) + 8;
                }
            }
        }
        MateFirst::Continue {
            nodes: mate.nodes,
            max_depth,
        }
    }
}

/// One depth searched with an aspiration window: expect a score near `score` (the last depth's),
/// widen the window on failure. The depth's score, or `None` when the search was stopped.
///
/// The window starts at ±[`ASPIRATION_DELTA`] centipawns (from depth [`ASPIRATION_MIN_DEPTH`]; with
/// the net, in its scale as the pruning margins are: 19 cp, SPRT row 51) and grows by half at each
/// failure. After a fail high the next try searches one ply shallower (as Ethereal does): a move
/// that beats the window is usually confirmed sooner than refuted, and the full depth comes back
/// after a fail low.
fn aspiration_search(
    worker: &mut Worker,
    pos: &Chess,
    root_hash: u64,
    depth: i32,
    score: i32,
) -> Option<i32> {
    let mut delta = worker.margin(&ASPIRATION_DELTA);
    let (mut alpha, mut beta) =
        if depth >= ASPIRATION_MIN_DEPTH.get() && score.abs() < MATE_BOUND_CP {
            (score - delta, score + delta)
        } else {
            (-INF, INF)
        };
    let mut search_depth = depth;
    loop {
        let s = worker.root(pos, root_hash, search_depth, alpha, beta);
        if worker.stopped {
            return None;
        }
        let failed_low = s <= alpha;
        if failed_low {
            beta = (alpha + beta) / 2;
            alpha = (s - delta).max(-INF);
            search_depth = depth;
        } else if s >= beta {
            beta = (s + delta).min(INF);
            if s.abs() < MATE_BOUND_CP {
                search_depth = (search_depth - 1)
                    .max(depth - ASPIRATION_MAX_FAIL_HIGH_REDUCTION.get())
                    .max(1);
            }
        } else {
            return Some(s);
        }
        delta += delta / 2;
        // Far off: open the window on the side that failed.
        if delta > ASPIRATION_OPEN_DELTA.get() {
            if failed_low {
                alpha = -INF;
            } else {
                beta = INF;
            }
        }
    }
}

/// Stockfish's old "skip blocks" (Stockfish 9): helper `id`'s pattern of depths, so that the
/// helpers are not all on the main thread's depth. Helper 1 searches the even depths, helper 2
/// the odd ones, helpers 3 to 6 two depths out of four (at four phases), helpers 7 to 12 three
/// out of six, and so on, from 20 patterns.
const SKIP_SIZE: [i32; 20] = [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4];
const SKIP_PHASE: [i32; 20] = [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7];

/// Does helper `id` (1, 2, …) skip `depth`?
fn helper_skips(id: usize, depth: i32) -> bool {
    let i = (id - 1) % SKIP_SIZE.len();
    ((depth + SKIP_PHASE[i]) / SKIP_SIZE[i]) % 2 == 1
}

/// A helper thread's iterative deepening (Lazy SMP): the depths of its pattern up to
/// `max_depth`, each with an aspiration window, until it is stopped. What it finds goes to the
/// table only; the main thread reports and chooses.
fn helper_deepening(worker: &mut Worker, pos: &Chess, max_depth: u32, id: usize) {
    let root_hash = hash_of(pos);
    let mut score: i32 = 0;
    for depth in 1..=max_depth as i32 {
        if helper_skips(id, depth) {
            continue;
        }
        worker.start_iteration(depth);
        match aspiration_search(worker, pos, root_hash, depth, score) {
            Some(s) => score = s,
            None => break,
        }
    }
}

/// Iterative deepening with aspiration windows: depth 1, 2, … up to `max_depth` until a limit
/// stops `worker`, each completed depth written into `result` and reported to `on_iteration`.
fn iterative_deepening(
    worker: &mut Worker,
    pos: &Chess,
    max_depth: u32,
    limits: &Limits,
    start: Instant,
    on_iteration: &mut dyn FnMut(&Iteration),
    result: &mut SearchResult,
) {
    let root_hash = hash_of(pos);
    let mut score: i32 = 0;
    for depth in 1..=max_depth as i32 {
        worker.start_iteration(depth);
        if let Some(s) = aspiration_search(worker, pos, root_hash, depth, score) {
            score = s;
        }
        if worker.stopped {
            // A root move that already beat the previous best in this unfinished iteration
            // is better informed than the last iteration's choice.
            if let Some((m, s)) = worker.root_best
                && s > score
                && result.depth > 0
            {
                result.best_move = Some(m);
                result.score = Score::from_internal(s);
                result.pv = vec![m];
            }
            break;
        }
        let pv = worker.principal_variation().to_vec();
        result.best_move = pv.first().copied().or(result.best_move);
        result.score = Score::from_internal(score);
        result.depth = depth as u32;
        result.pv = if pv.is_empty() {
            result.best_move.into_iter().collect()
        } else {
            pv
        };
        let iteration = Iteration {
            depth: depth as u32,
            seldepth: worker.seldepth.max(depth as u32),
            score: result.score,
            nodes: worker.total_nodes(),
            time: start.elapsed(),
            hashfull: worker.tt.hashfull(),
            pv: result.pv.clone(),
            best_share: worker.root_share(result.pv.first()),
        };
        on_iteration(&iteration);
        if let (Some(n), Score::Mate(m)) = (limits.mate, result.score)
            && m > 0
            && m as u32 <= n
        {
            break;
        }
        // A forced mate found with the whole tree searched deeper than its length is final.
        if score.abs() >= MATE_BOUND_CP && depth > 2 * (MATE_CP - score.abs()) + 8 {
            break;
        }
    }
}

/// The root of a tablebase position: the table's best move and line, without a search. `None`
/// when the position is not covered, or its mate would come after the fifty-move rule (the
/// search then finds what it can). Only for a root that no earlier position can repeat.
fn tablebase_root(
    pos: &Chess,
    start: Instant,
    on_iteration: &mut dyn FnMut(&Iteration),
) -> Option<SearchResult> {
    if !tablebase::covers(pos) {
        return None;
    }
    let value = tablebase::probe(pos)?;
    let score = value.search_score(0, pos.halfmoves());
    if score == 0 && value != Value::Draw {
        return None;
    }
    let (best, _) = tablebase::best_move(pos)?;
    let pv = if value == Value::Draw {
        vec![best]
    } else {
        tablebase::principal_variation(pos, MAX_PLY)
    };
    let iteration = Iteration {
        depth: pv.len() as u32,
        seldepth: pv.len() as u32,
        score: Score::from_internal(score),
        nodes: 0,
        time: start.elapsed(),
        hashfull: 0,
        pv: pv.clone(),
        best_share: 1.0,
    };
    on_iteration(&iteration);
    Some(SearchResult {
        best_move: Some(best),
        score: iteration.score,
        depth: iteration.depth,
        nodes: 0,
        time: iteration.time,
        pv,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{parse_fen, parse_move};

    /// Searches the position of `fen` to `depth`, among the moves `allowed` (UCI) when given.
    fn search(fen: &str, depth: u32, allowed: Option<&[&str]>) -> SearchResult {
        let pos = parse_fen(fen).unwrap();
        let root_moves = allowed.map(|a| a.iter().map(|m| parse_move(&pos, m).unwrap()).collect());
        search_position(&pos, depth, root_moves, false)
    }

    /// Searches `pos` to `depth` with a fresh one-megabyte engine, among `root_moves` when
    /// given, evaluating with the net when `nnue`.
    fn search_position(
        pos: &Chess,
        depth: u32,
        root_moves: Option<Vec<Move>>,
        nnue: bool,
    ) -> SearchResult {
        let limits = Limits {
            depth: Some(depth),
            root_moves,
            ..Limits::default()
        };
        let mut engine = Engine::new(SearchOptions {
            hash_mb: 1,
            nnue,
            ..SearchOptions::default()
        });
        let stop = Arc::new(AtomicBool::new(false));
        engine.search(pos, &[], &limits, stop, &mut |_| {})
    }

    fn uci(m: Option<Move>) -> String {
        m.map_or("0000".to_string(), |m| {
            m.to_uci(CastlingMode::Standard).to_string()
        })
    }

    /// With the net, every evaluation in the tree reads an accumulator updated move by move; the
    /// search checks each against one computed from scratch (`Worker::evaluate` under test), over
    /// castling, en passant, promotions with and without capture, and null moves.
    #[test]
    fn the_nets_accumulators_follow_every_line_of_the_search() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
            "rnbqkb1r/pp1p1ppp/5n2/2pPp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 4",
        ];
        for fen in fens {
            let r = search_position(&parse_fen(fen).unwrap(), 7, None, true);
            assert!(r.best_move.is_some() && r.nodes > 1000, "{fen}");
        }
    }

    /// Chess960's castling in the tree: a mate that only castling gives (the king stays, the
    /// rook comes to f1) is found, and the net's accumulators follow castling that swaps king and
    /// rook or moves only one of them.
    #[test]
    fn the_search_castles_in_chess960() {
        let pos =
            crate::position::parse_fen_for("4rkr1/4p1p1/8/8/8/8/6PP/6KR w H - 0 1", true).unwrap();
        let r = search_position(&pos, 3, None, false);
        let best = r.best_move.unwrap();
        assert_eq!(
            (best.to_uci(CastlingMode::Chess960).to_string(), r.score),
            ("g1h1".to_string(), Score::Mate(1))
        );
        for fen in [
            "2rk1r2/pppppppp/8/8/8/8/PPPPPPPP/2RK1R2 w FCfc - 0 1",
            "1r2k1r1/ppp2ppp/3pp3/8/8/3PP3/PPP2PPP/1R2K1R1 b GBgb - 0 1",
        ] {
            let pos = crate::position::parse_fen_for(fen, true).unwrap();
            let r = search_position(&pos, 6, None, true);
            assert!(r.best_move.is_some() && r.nodes > 1000, "{fen}");
        }
    }

    #[test]
    fn root_moves_restrict_the_root() {
        // A back-rank mate: Rd8# when allowed, else one of the moves allowed.
        let fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
        let r = search(fen, 4, None);
        assert_eq!(
            (uci(r.best_move), r.score),
            ("d1d8".to_string(), Score::Mate(1))
        );
        let r = search(fen, 4, Some(&["h2h3", "g2g3"]));
        assert!(
            ["h2h3", "g2g3"].contains(&uci(r.best_move).as_str()),
            "{r:?}"
        );
        assert!(matches!(r.score, Score::Cp(_)), "{r:?}");
        let r = search(fen, 4, Some(&["g1f1", "d1d8"]));
        assert_eq!(
            (uci(r.best_move), r.score),
            ("d1d8".to_string(), Score::Mate(1))
        );
        // A tablebase position: the table's move is not taken when the root is restricted.
        let fen = "8/1k1K4/8/8/6R1/8/8/8 w - - 0 1";
        let r = search(fen, 3, Some(&["g4g1"]));
        assert_eq!(uci(r.best_move), "g4g1");
        // No allowed move is legal: no move.
        let pos = parse_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap();
        let other = parse_fen("8/1k1K4/8/8/6R1/8/8/8 w - - 0 1").unwrap();
        let foreign = parse_move(&other, "g4g1").unwrap();
        let limits = Limits {
            depth: Some(2),
            root_moves: Some(vec![foreign]),
            ..Limits::default()
        };
        let mut engine = Engine::new(SearchOptions {
            hash_mb: 1,
            ..SearchOptions::default()
        });
        let stop = Arc::new(AtomicBool::new(false));
        let r = engine.search(&pos, &[], &limits, stop, &mut |_| {});
        assert_eq!((r.best_move, r.score), (None, Score::Cp(0)));
    }

    #[test]
    fn helpers_stagger_their_depths() {
        // Helper 1 takes the even depths, helper 2 the odd ones, helper 3 every other pair of depths.
        let depths = |id| {
            (1..=8)
                .filter(|&d| !helper_skips(id, d))
                .collect::<Vec<_>>()
        };
        assert_eq!(depths(1), [2, 4, 6, 8]);
        assert_eq!(depths(2), [1, 3, 5, 7]);
        assert_eq!(depths(3), [1, 4, 5, 8]);
        // Past the 20 patterns they come round again.
        assert_eq!(depths(21), depths(1));
    }

    #[test]
    fn two_threads_find_the_mate_and_obey_stop() {
        let fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
        let pos = parse_fen(fen).unwrap();
        let mut engine = Engine::new(SearchOptions {
            hash_mb: 1,
            threads: 2,
            ..SearchOptions::default()
        });
        let limits = Limits {
            depth: Some(6),
            ..Limits::default()
        };
        let mut depths = Vec::new();
        let r = engine.search(
            &pos,
            &[],
            &limits,
            Arc::new(AtomicBool::new(false)),
            &mut |it| depths.push(it.depth),
        );
        assert_eq!(
            (uci(r.best_move), r.score),
            ("d1d8".to_string(), Score::Mate(1))
        );
        // The main thread reports every depth, in order.
        assert_eq!(depths, (1..=depths.len() as u32).collect::<Vec<_>>());
        // Stopped before it starts: still a legal move, at once.
        let start = Instant::now();
        let r = engine.search(
            &Chess::default(),
            &[],
            &Limits::default(),
            Arc::new(AtomicBool::new(true)),
            &mut |_| {},
        );
        assert!(r.best_move.is_some_and(|m| Chess::default().is_legal(m)));
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}
