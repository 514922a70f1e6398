//! The search: iterative deepening with aspiration windows around a principal variation search
//! (negamax, fail-soft), with `depth` counting down to the horizon and `ply` counting up from the
//! root.
//!
//! Scores are centipawns from the side to move's point of view; a mate is `MATE - ply` (the side
//! to move mates at that ply) or `-MATE + ply` (it is mated), so a nearer mate scores higher.
//!
//! Every pruning technique is a labelled block in [`Search::negamax`] behind a switch of
//! [`SearchOptions`], so that its effect can be measured on and off.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Move, MoveList, Position, Role};
use thiserror::Error;

use super::eval::{Params, evaluate, has_non_pawn_material, role_index, see_value};
use super::mate::{MateLimits, MateOutcome, MateSearch, MateTable};
use super::see::see_ge;
use super::tablebase::{self, Value};
use super::tt::{Bound, TranspositionTable};

/// The score of delivering mate right now (at ply 0).
pub const MATE: i32 = 32000;
/// Scores beyond this are mates.
pub const MATE_BOUND: i32 = MATE - 1000;
const INF: i32 = MATE + 1;
/// The most moves a position can have: shakmaty's move list's capacity (more than 218, the most
/// a reachable position has, because positions with more pieces than promotions could make are
/// accepted too).
const MAX_MOVES: usize = {
    let list = MoveList::new_const();
    let capacity = list.capacity();
    std::mem::forget(list);
    capacity
};
/// Scores as stored in the transposition table.
pub type Score16 = i16;
/// The deepest ply the search goes to (extensions included).
pub const MAX_PLY: usize = 128;

/// An unknown option name or value for [`SearchOptions::set`].
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OptionError {
    #[error("unknown search option {} (known: {known})", crate::text::quote(.0), known = SearchOptions::NAMES.join(", "))]
    Unknown(String),
    #[error("bad value {} for search option {name}: expected {expected}", crate::text::quote(.value))]
    BadValue {
        name: String,
        value: String,
        expected: &'static str,
    },
}

/// The switches of the search (each a UCI option later) and the hash size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Mate Distance Pruning.
    pub mdp: bool,
    /// Search one ply deeper when in check.
    pub check_extension: bool,
    /// Null-move pruning.
    pub null_move: bool,
    /// Reverse futility pruning and futility pruning near the leaves.
    pub futility: bool,
    /// Aggressive futility pruning at frontier nodes of the root's side (experimental).
    pub aggressive_futility: bool,
    /// Late move reductions.
    pub lmr: bool,
    /// Late move pruning.
    pub lmp: bool,
    /// H.G. Muller's spite-check analogy (experimental): step 8 of `negamax` (the null move
    /// searched again after a check and its evasion) and the transposition-table "analogy" at
    /// the leaves (see [`Analogy`]).
    pub spite_check: bool,
    /// Mate tasks (`Limits::mate`, UCI `go mate N`) go to the dedicated mate search first
    /// ([`super::mate`]); off, the normal search only stops at the first mate short enough.
    pub mate_search: bool,
    /// The 3-man tablebase (KQvK, KRvK with distance to mate): exact scores for those positions
    /// in the tree, and at the root the table's move without a search.
    pub tablebase: bool,
    /// Transposition table size in MB.
    pub hash_mb: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            mdp: true,
            check_extension: true,
            null_move: true,
            futility: true,
            aggressive_futility: false,
            lmr: true,
            lmp: true,
            spite_check: false,
            mate_search: true,
            tablebase: true,
            hash_mb: 64,
        }
    }
}

impl SearchOptions {
    /// The option names accepted by [`SearchOptions::set`] (case-insensitive).
    pub const NAMES: [&'static str; 11] = [
        "MDP",
        "CheckExtension",
        "NullMove",
        "Futility",
        "AggressiveFutility",
        "LMR",
        "LMP",
        "SpiteCheck",
        "MateSearch",
        "Tablebase",
        "Hash",
    ];

    /// Sets one option by name, as `--set Name=value` (and a UCI `setoption` later) does.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), OptionError> {
        let flag = |v: &str| match v.to_ascii_lowercase().as_str() {
            "true" | "on" | "1" | "yes" => Ok(true),
            "false" | "off" | "0" | "no" => Ok(false),
            _ => Err(OptionError::BadValue {
                name: name.to_string(),
                value: v.to_string(),
                expected: "true or false",
            }),
        };
        let slot = match name.to_ascii_lowercase().as_str() {
            "mdp" => &mut self.mdp,
            "checkextension" => &mut self.check_extension,
            "nullmove" => &mut self.null_move,
            "futility" => &mut self.futility,
            "aggressivefutility" => &mut self.aggressive_futility,
            "lmr" => &mut self.lmr,
            "lmp" => &mut self.lmp,
            "spitecheck" => &mut self.spite_check,
            "matesearch" => &mut self.mate_search,
            "tablebase" => &mut self.tablebase,
            "hash" => {
                self.hash_mb = value
                    .parse()
                    .ok()
                    .filter(|&mb| (1..=65536).contains(&mb))
                    .ok_or_else(|| OptionError::BadValue {
                        name: name.to_string(),
                        value: value.to_string(),
                        expected: "a size in MB from 1 to 65536",
                    })?;
                return Ok(());
            }
            _ => return Err(OptionError::Unknown(name.to_string())),
        };
        *slot = flag(value)?;
        Ok(())
    }
}

/// When to stop searching; no limit at all means "until stopped" (or the maximum depth).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub depth: Option<u32>,
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
    /// A mate search (UCI `go mate N`): look for a mate in at most this many moves with the
    /// dedicated mate search first (see [`super::mate`]), and stop as soon as one is proven. When
    /// there is none, the normal search runs (to depth `2N + 8` unless a depth was given). With a
    /// `movetime` or `nodes` budget the mate search has half of it, and when it runs out the
    /// normal search has the rest, stopping at the first mate that short.
    pub mate: Option<u32>,
}

/// A score as UCI prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves; negative when the side to move is mated.
    Mate(i32),
}

impl Score {
    pub fn from_internal(score: i32) -> Score {
        if score >= MATE_BOUND {
            Score::Mate((MATE - score + 1) / 2)
        } else if score <= -MATE_BOUND {
            Score::Mate(-(MATE + score) / 2)
        } else {
            Score::Cp(score)
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

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
    /// `None` only when the side to move has no legal move.
    pub best_move: Option<Move>,
    pub score: Score,
    pub depth: u32,
    pub nodes: u64,
    pub time: Duration,
    pub pv: Vec<Move>,
}

/// The Zobrist hash the search uses (shakmaty's, with the en-passant square only when legal).
pub fn hash_of(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// A move packed into 16 bits for the transposition table: from, to and promotion.
pub fn encode_move(m: Move) -> u16 {
    let from = m.from().map_or(0, |s| s as u16);
    let to = m.to() as u16;
    let promo = m.promotion().map_or(0, |r| r as u16);
    // Never 0 for a real move: from == to is impossible, so set a marker bit.
    from | to << 6 | promo << 12 | 1 << 15
}

/// The engine: the transposition table and the move-ordering memory that lives across searches.
pub struct Engine {
    pub options: SearchOptions,
    pub params: Params,
    tt: TranspositionTable,
    /// History heuristic: how often a quiet move (by side, from, to) caused a cutoff.
    history: Vec<[[i32; 64]; 64]>,
    /// The mate search's table (made on the first mate search).
    mate_table: Option<MateTable>,
}

/// The size of the mate search's table in MB.
const MATE_TABLE_MB: usize = 16;

impl Engine {
    pub fn new(options: SearchOptions) -> Self {
        Engine {
            tt: TranspositionTable::new(options.hash_mb),
            options,
            params: Params::default(),
            history: vec![[[0; 64]; 64]; 2],
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
        for side in &mut self.history {
            *side = [[0; 64]; 64];
        }
    }

    /// Searches `pos`. `game` holds the hashes of the positions played before it (oldest first),
    /// for repetition draws. The search stops at the limits or when `stop` is set, and calls
    /// `on_iteration` after every completed depth.
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
        let mut search = Search {
            opts: self.options.clone(),
            params: &self.params,
            tt: &self.tt,
            history: &mut self.history,
            stop,
            deadline: limits.movetime.map(|t| start + t),
            node_limit: limits.nodes.unwrap_or(u64::MAX),
            nodes: 0,
            seldepth: 0,
            stopped: false,
            root_turn: pos.turn(),
            hashes: game.to_vec(),
            rep_floor: 0,
            stack: vec![Frame::default(); MAX_PLY + 4],
            pv: (0..=MAX_PLY).map(|_| Vec::with_capacity(MAX_PLY)).collect(),
            killers: [[None; 2]; MAX_PLY + 2],
            root_best: None,
            root_depth: 1,
        };
        let max_depth = limits
            .depth
            .unwrap_or(MAX_PLY as u32 - 1)
            .clamp(1, MAX_PLY as u32 - 1);
        let root_moves = pos.legal_moves();
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
            if !pos.is_check() {
                result.score = Score::Cp(0);
            }
            return result;
        }
        // The table knows nothing of the game: with earlier positions that could repeat, the
        // search (which probes the table below the root) decides.
        let repeatable = (pos.halfmoves() as usize).min(game.len());
        if self.options.tablebase
            && repeatable == 0
            && let Some(result) = tablebase_root(pos, start, on_iteration)
        {
            return result;
        }
        let mut max_depth = max_depth;
        if let Some(n) = limits.mate.filter(|&n| n > 0 && self.options.mate_search) {
            let table = self
                .mate_table
                .get_or_insert_with(|| MateTable::new(MATE_TABLE_MB));
            table.clear();
            // Only the positions since the last capture or pawn move can come again.
            let mut mate = MateSearch::new(
                table,
                &game[game.len() - repeatable..],
                // With a time or node budget, the mate search has the first half of it; the
                // normal search, looking for a mate that short too, has the rest.
                MateLimits {
                    deadline: limits.movetime.map(|t| start + t / 2),
                    nodes: limits.nodes.map_or(u64::MAX, |n| n / 2),
                    stop: search.stop.clone(),
                },
            );
            let outcome = mate.run(pos, n, &mut |_, _| {});
            search.nodes = mate.nodes;
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
                    return result;
                }
                // Stopped from outside (UCI `stop`, the clock): answer now.
                MateOutcome::Stopped { .. }
                    if search.stop.load(Ordering::Relaxed)
                        || (limits.movetime.is_none() && limits.nodes.is_none()) =>
                {
                    result.nodes = mate.nodes;
                    result.time = start.elapsed();
                    return result;
                }
                MateOutcome::Stopped { .. } => {}
                // No mate that short: the normal search chooses the move.
                MateOutcome::NoMate => {
                    if limits.depth.is_none() {
                        max_depth = max_depth.min(2 * n.min(MAX_PLY as u32) + 8);
                    }
                }
            }
        }
        let root_hash = hash_of(pos);
        let mut score: i32 = 0;
        for depth in 1..=max_depth as i32 {
            search.seldepth = 0;
            search.root_best = None;
            search.root_depth = depth;
            // Aspiration window: expect a score near the last one, widen on failure.
            let mut delta = 30;
            let (mut alpha, mut beta) = if depth >= 5 && score.abs() < MATE_BOUND {
                (score - delta, score + delta)
            } else {
                (-INF, INF)
            };
            loop {
                let s = search.negamax(pos, root_hash, depth, 0, alpha, beta, false);
                if search.stopped {
                    break;
                }
                if s <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (s - delta).max(-INF);
                } else if s >= beta {
                    beta = (s + delta).min(INF);
                } else {
                    score = s;
                    break;
                }
                delta += delta;
                // Far off: open the window on the side that failed.
                if delta > 500 {
                    if s <= alpha {
                        alpha = -INF;
                    } else {
                        beta = INF;
                    }
                }
            }
            if search.stopped {
                // A root move that already beat the previous best in this unfinished iteration
                // is better informed than the last iteration's choice.
                if let Some((m, s)) = search.root_best
                    && s > score
                    && result.depth > 0
                {
                    result.best_move = Some(m);
                    result.score = Score::from_internal(s);
                    result.pv = vec![m];
                }
                break;
            }
            let pv = search.pv[0].clone();
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
                seldepth: search.seldepth.max(depth as u32),
                score: result.score,
                nodes: search.nodes,
                time: start.elapsed(),
                hashfull: search.tt.hashfull(),
                pv: result.pv.clone(),
            };
            on_iteration(&iteration);
            if let (Some(n), Score::Mate(m)) = (limits.mate, result.score)
                && m > 0
                && m as u32 <= n
            {
                break;
            }
            // A forced mate found with the whole tree searched deeper than its length is final.
            if score.abs() >= MATE_BOUND && depth > 2 * (MATE - score.abs()) + 8 {
                break;
            }
        }
        result.nodes = search.nodes;
        result.time = start.elapsed();
        result
    }
}

/// The score of a tablebase value at `ply` (mates counted from the root as the search counts
/// them). A mate that the fifty-move rule would come before, with best defence, is a draw.
fn tablebase_score(value: Value, ply: usize, halfmoves: u32) -> i32 {
    match value {
        Value::Win { plies } if halfmoves + plies <= 100 => MATE - ply as i32 - plies as i32,
        Value::Loss { plies } if halfmoves + plies <= 100 => -MATE + ply as i32 + plies as i32,
        _ => 0,
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
    let score = tablebase_score(value, 0, pos.halfmoves());
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

/// What the search remembers about each ply of the current line.
#[derive(Clone, Copy, Default)]
struct Frame {
    /// The move played from this ply (None for a null move or not yet).
    mv: Option<Move>,
    in_check: bool,
    eval: i32,
    /// The move played from this ply captured something.
    captured: bool,
    /// A null move was tried from this ply.
    null: bool,
    /// The spite-check analogy in force below this ply (set only with the switch on).
    analogy: Option<Analogy>,
}

/// The spite-check analogy (H.G. Muller's proposal, the transposition-table part).
///
/// A check and its evasion that win no material (a "spite check") change little on the board:
/// the checking piece and the king stand elsewhere, and the opponent's threat is still there,
/// only two plies further, perhaps now over the horizon. The positions below the pair are then
/// analogous to those below the position before it: moving the two pieces back maps one onto
/// the other, and with Zobrist keys that map is an XOR with `shift` = key after the pair XOR key
/// before it. The position before the pair was searched to a greater depth (by its other moves
/// or its null move), so the transposition table often knows the analogous position of a leaf.
///
/// At a leaf, where quiescence would stand pat on the static evaluation, the table is probed
/// for `key ^ shift`; its stored bound, corrected by `delta` (how much the pair changed the
/// static evaluation), bounds the stand-pat score: an upper bound caps it (the threat that was
/// pushed over the horizon is seen again), a lower bound raises it, an exact score replaces it.
/// A mate score of the analogous position counts as just short of a mate, since the analogy is
/// no proof. The most recent pair below the root is the one in force.
#[derive(Clone, Copy, Debug)]
struct Analogy {
    /// Key after the check and evasion XOR key before them.
    shift: u64,
    /// Static evaluation after the pair minus before it, for the side to move at `ply`.
    delta: i32,
    /// The ply of the position after the pair.
    ply: usize,
}

struct Search<'a> {
    opts: SearchOptions,
    params: &'a Params,
    tt: &'a TranspositionTable,
    history: &'a mut Vec<[[i32; 64]; 64]>,
    stop: Arc<AtomicBool>,
    deadline: Option<Instant>,
    node_limit: u64,
    nodes: u64,
    seldepth: u32,
    stopped: bool,
    root_turn: Color,
    /// Hashes of the game and of the current line, for repetitions.
    hashes: Vec<u64>,
    /// Repetitions are not looked for across a null move.
    rep_floor: usize,
    stack: Vec<Frame>,
    pv: Vec<Vec<Move>>,
    killers: [[Option<Move>; 2]; MAX_PLY + 2],
    root_best: Option<(Move, i32)>,
    /// The depth of the current iteration.
    root_depth: i32,
}

/// Move ordering keys.
const TT_MOVE: i32 = 1 << 30;
const GOOD_CAPTURE: i32 = 1 << 28;
const KILLER: i32 = 1 << 26;
const BAD_CAPTURE: i32 = -(1 << 28);

/// Late move reduction in plies for a depth and a move number: grows with both, slowly.
fn lmr_reduction(depth: i32, moves: usize) -> i32 {
    let d = (depth.max(1) as f32).ln();
    let m = (moves.max(1) as f32).ln();
    (0.75 + d * m / 2.25) as i32
}

/// The stand-pat score `stand_pat` bounded by the analogous position's stored `score` and
/// `bound`, corrected by `delta` (see [`Analogy`]). A mate score counts as just short of a mate.
fn bound_by_analogy(stand_pat: i32, score: i32, bound: Bound, delta: i32) -> i32 {
    let v = if score >= MATE_BOUND {
        MATE_BOUND - 1
    } else if score <= -MATE_BOUND {
        -MATE_BOUND + 1
    } else {
        (score + delta).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    };
    match bound {
        Bound::Upper => stand_pat.min(v),
        Bound::Lower => stand_pat.max(v),
        Bound::Exact => v,
    }
}

impl Search<'_> {
    /// Has a limit been reached? Checked every 1024 nodes.
    fn check_limits(&mut self) {
        if self.nodes >= self.node_limit
            || self.stop.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            self.stopped = true;
        }
    }

    fn is_repetition(&self, hash: u64, halfmoves: u32) -> bool {
        let len = self.hashes.len();
        let floor = len.saturating_sub(halfmoves as usize).max(self.rep_floor);
        let mut i = len;
        while i >= floor + 2 {
            i -= 2;
            if self.hashes[i] == hash {
                return true;
            }
        }
        false
    }

    fn child_hash(pos: &Chess, hash: u64, m: Move, child: &Chess) -> u64 {
        match pos.update_zobrist_hash(Zobrist64(hash), m, EnPassantMode::Legal) {
            Some(h) => h.0,
            None => hash_of(child),
        }
    }

    fn score_moves(
        &self,
        pos: &Chess,
        moves: &MoveList,
        tt_move: u16,
        ply: usize,
        scores: &mut [i32],
    ) {
        let side = pos.turn() as usize;
        for (i, &m) in moves.iter().enumerate() {
            scores[i] = if encode_move(m) == tt_move {
                TT_MOVE
            } else if m.is_capture() || m.promotion() == Some(Role::Queen) {
                // MVV-LVA, with SEE separating winning from losing exchanges.
                let victim = if m.is_en_passant() {
                    see_value(Role::Pawn)
                } else {
                    m.capture().map_or(0, see_value)
                };
                let promo = m.promotion().map_or(0, see_value);
                let key = (victim + promo) * 8 - role_index(m.role()) as i32;
                if see_ge(pos, m, 0) {
                    GOOD_CAPTURE + key
                } else {
                    BAD_CAPTURE + key
                }
            } else if m.is_promotion() {
                // Under-promotions last.
                BAD_CAPTURE - 1000
            } else if self.killers[ply][0] == Some(m) {
                KILLER + 1
            } else if self.killers[ply][1] == Some(m) {
                KILLER
            } else {
                let from = m.from().map_or(0, |s| s as usize);
                self.history[side][from][m.to() as usize]
            };
        }
    }

    /// Picks the best-scored move among the remaining ones (selection sort, one step).
    fn pick(moves: &mut MoveList, scores: &mut [i32], i: usize) -> (Move, i32) {
        let mut best = i;
        for j in i + 1..moves.len() {
            if scores[j] > scores[best] {
                best = j;
            }
        }
        moves.swap(i, best);
        scores.swap(i, best);
        (moves[i], scores[i])
    }

    fn update_history(&mut self, side: Color, m: Move, bonus: i32) {
        let from = m.from().map_or(0, |s| s as usize);
        let h = &mut self.history[side as usize][from][m.to() as usize];
        // History gravity: entries saturate instead of growing without bound.
        *h += bonus - *h * bonus.abs() / 16384;
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(m);
        line.extend_from_slice(&tail[0]);
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        pos: &Chess,
        hash: u64,
        mut depth: i32,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
        cut_from_null: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        let root = ply == 0;
        self.pv[ply].clear();
        let in_check = pos.is_check();

        // 1. Check extension: a check is searched one ply deeper, so that the horizon never
        //    falls between a check and its answer.
        //    Limited to lines no longer than twice the iteration's depth, so that long series of
        //    checks can't blow the tree up.
        if in_check && self.opts.check_extension && (ply as i32) < 2 * self.root_depth {
            depth += 1;
        }
        if depth <= 0 {
            let analogy = self.analogy_at(pos, ply).map(|a| (hash, a));
            return self.quiescence(pos, ply, alpha, beta, analogy);
        }

        if !self.enter_node(ply) {
            return 0;
        }
        if ply >= MAX_PLY - 1 {
            return evaluate(pos, self.params);
        }

        if !root {
            // 2. Draws: repetition (once within the search is enough), the fifty-move rule and
            //    material with which nobody can mate.
            if self.is_repetition(hash, pos.halfmoves()) {
                return 0;
            }
            let b = pos.board();
            if (b.pawns() | b.rooks_and_queens()).is_empty() && pos.is_insufficient_material() {
                return 0;
            }
            if pos.halfmoves() >= 100 && !(in_check && pos.legal_moves().is_empty()) {
                return 0;
            }

            // 2a. Tablebase: with three men on the board (KQvK, KRvK) the exact distance to
            //     mate is known.
            if self.opts.tablebase
                && tablebase::covers(pos)
                && let Some(v) = tablebase::probe(pos)
            {
                return tablebase_score(v, ply, pos.halfmoves());
            }

            // 3. Mate Distance Pruning: even mating right here cannot score more than
            //    MATE - ply, nor can being mated here score less than -MATE + ply. If the
            //    window lies outside that range, a shorter mate is already known: prune.
            if self.opts.mdp {
                alpha = alpha.max(-MATE + ply as i32);
                beta = beta.min(MATE - ply as i32 - 1);
                if alpha >= beta {
                    return alpha;
                }
            }
        }

        // 4. Transposition table: a deep enough result for this position ends the node.
        let tt_entry = self.tt.probe(hash, ply);
        let tt_move = tt_entry.map_or(0, |e| e.mv);
        if let Some(e) = tt_entry
            && !pv_node
            && e.depth >= depth
            && match e.bound {
                Bound::Exact => true,
                Bound::Lower => e.score >= beta,
                Bound::Upper => e.score <= alpha,
            }
        {
            return e.score;
        }

        // Static evaluation (meaningless in check).
        let eval = if in_check {
            -INF
        } else if let Some(e) = tt_entry {
            e.eval
        } else {
            evaluate(pos, self.params)
        };
        self.stack[ply].eval = eval;
        self.stack[ply].in_check = in_check;
        self.stack[ply].null = false;
        if self.opts.spite_check {
            self.stack[ply].analogy = self.analogy_at(pos, ply);
        }
        let improving = !in_check && ply >= 2 && eval > self.stack[ply - 2].eval;
        let last_was_capture = ply >= 1 && self.stack[ply - 1].captured;
        let mut spite_extend = false;

        if !pv_node && !in_check {
            // 5. Reverse futility pruning: far above beta near the leaves, the opponent's
            //    threats (searched by quiescence) are unlikely to bring the score back down.
            if self.opts.futility
                && depth <= 7
                && beta.abs() < MATE_BOUND
                && eval - 80 * depth + if improving { 40 } else { 0 } >= beta
            {
                return eval;
            }

            // 6. Aggressive futility pruning (the seeds' careful style): at a frontier node of
            //    the root's own side, if the static evaluation is below alpha by half a pawn and
            //    the last move was no capture, assume no quiet move will save it and prune.
            if self.opts.aggressive_futility
                && depth == 1
                && pos.turn() == self.root_turn
                && !last_was_capture
                && alpha.abs() < MATE_BOUND
                && eval + 50 <= alpha
            {
                return eval;
            }

            // 7. Null-move pruning: if passing still fails high, a real move would too. Not in
            //    pawn endings (zugzwang), not twice in a row, and verified at high depth.
            if self.opts.null_move
                && !cut_from_null
                && depth >= 3
                && eval >= beta
                && beta.abs() < MATE_BOUND
                && has_non_pawn_material(pos)
            {
                let r = 3 + depth / 4 + ((eval - beta) / 200).min(3);
                let null_score = self.null_search(pos, hash, depth - 1 - r, ply, beta);
                if self.stopped {
                    return 0;
                }
                if null_score >= beta {
                    // 8. Spite-check analogy: when the last two plies were a check and an
                    //    evasion that won nothing, the opponent may have "spent" its check to
                    //    push a threat over the horizon. Re-search the null move one ply
                    //    deeper; if it now fails low the threat is real: don't prune, and
                    //    extend the non-checking moves below.
                    if self.opts.spite_check && self.after_check_and_quiet_evasion(ply) {
                        let deeper = self.null_search(pos, hash, depth - r, ply, beta);
                        if self.stopped {
                            return 0;
                        }
                        if deeper < beta {
                            spite_extend = true;
                        }
                    }
                    if !spite_extend {
                        let null_score = if null_score >= MATE_BOUND {
                            beta
                        } else {
                            null_score
                        };
                        // Zugzwang guard: at high depth, confirm with a real reduced search.
                        if depth < 10 {
                            return null_score;
                        }
                        let v = self.negamax(pos, hash, depth - 1 - r, ply, beta - 1, beta, true);
                        if v >= beta {
                            return null_score;
                        }
                    }
                }
            }
        }

        // The moves, best first.
        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        let mut scores = [0i32; MAX_MOVES];
        self.score_moves(pos, &moves, tt_move, ply, &mut scores);
        if ply + 2 < self.killers.len() {
            self.killers[ply + 2] = [None, None];
        }

        let side = pos.turn();
        let mut best = -INF;
        let mut best_move: Option<Move> = None;
        let old_alpha = alpha;
        let mut searched = 0usize;
        let mut quiets_tried: MoveList = MoveList::new();
        self.hashes.push(hash);

        for i in 0..moves.len() {
            let (m, order) = Self::pick(&mut moves, &mut scores, i);
            let quiet = !m.is_capture() && !m.is_promotion();
            let mut child = pos.clone();
            child.play_unchecked(m);
            let child_hash = Self::child_hash(pos, hash, m, &child);
            self.tt.prefetch(child_hash);
            let gives_check = child.is_check();

            // Never prune while a mate is at stake: with a mate score as alpha, every quiet
            // move looks futile, including the one that mates sooner.
            if !root
                && best > -MATE_BOUND
                && alpha > -MATE_BOUND
                && !in_check
                && quiet
                && !gives_check
            {
                // 9. Late move pruning: near the leaves, after enough quiet moves the rest
                //    (ordered by history) are unlikely to matter.
                if self.opts.lmp
                    && !pv_node
                    && depth <= 4
                    && searched >= (3 + depth * depth) as usize / if improving { 1 } else { 2 }
                {
                    continue;
                }
                // 10. Futility pruning: a quiet move cannot lift a hopeless static score above
                //     alpha within the last plies.
                if self.opts.futility
                    && !pv_node
                    && depth <= 3
                    && order < KILLER
                    && eval + 100 + 120 * depth <= alpha
                {
                    continue;
                }
            }

            self.stack[ply].mv = Some(m);
            self.stack[ply].captured = m.is_capture();
            searched += 1;
            if quiet && quiets_tried.len() < quiets_tried.capacity() {
                quiets_tried.push(m);
            }

            // The spite-check analogy's extension of non-checking moves (see step 8).
            let extension = i32::from(spite_extend && !gives_check);
            let new_depth = depth - 1 + extension;

            let mut score;
            if searched == 1 {
                score = -self.negamax(&child, child_hash, new_depth, ply + 1, -beta, -alpha, false);
            } else {
                // 11. Late move reductions: later quiet moves are searched shallower with a
                //     null window first, and again at full depth only if they surprise.
                let mut r = 0;
                if self.opts.lmr && depth >= 3 && searched >= 3 && quiet && !gives_check {
                    r = lmr_reduction(depth, searched);
                    r -= i32::from(pv_node) + i32::from(root);
                    r += i32::from(!improving);
                    r -= i32::from(order >= KILLER);
                    r -= order.clamp(-16384, 16384) / 8192;
                    r = r.clamp(0, new_depth - 1);
                }
                score = -self.negamax(
                    &child,
                    child_hash,
                    new_depth - r,
                    ply + 1,
                    -alpha - 1,
                    -alpha,
                    false,
                );
                if score > alpha && r > 0 {
                    score = -self.negamax(
                        &child,
                        child_hash,
                        new_depth,
                        ply + 1,
                        -alpha - 1,
                        -alpha,
                        false,
                    );
                }
                // Principal variation search: a null-window fail high inside a PV node is
                // searched again with the full window.
                if score > alpha && score < beta {
                    score =
                        -self.negamax(&child, child_hash, new_depth, ply + 1, -beta, -alpha, false);
                }
            }
            if self.stopped {
                self.hashes.pop();
                return 0;
            }

            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(m);
                    alpha = score;
                    if pv_node {
                        self.update_pv(ply, m);
                    }
                    if root {
                        self.root_best = Some((m, score));
                    }
                    if score >= beta {
                        // A cutoff: remember a quiet refutation as killer and in the history.
                        if quiet {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(m) {
                                k[1] = k[0];
                                k[0] = Some(m);
                            }
                            let bonus = (depth * depth).min(400) * 8;
                            for &q in &quiets_tried {
                                if q != m {
                                    self.update_history(side, q, -bonus);
                                }
                            }
                            self.update_history(side, m, bonus);
                        }
                        break;
                    }
                }
            }
        }
        self.hashes.pop();
        if searched == 0 {
            // Every move was pruned: the node fails low at its static score.
            return eval.max(-MATE_BOUND);
        }

        let bound = if best >= beta {
            Bound::Lower
        } else if alpha > old_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(
            hash,
            ply,
            best_move.map_or(0, encode_move),
            best,
            if in_check { 0 } else { eval },
            depth,
            bound,
        );
        best
    }

    /// The spite-check analogy in force at `ply` (see [`Analogy`]): a new one when the last two
    /// plies were a check and an evasion, neither of which captured, else the parent's. `None`
    /// with the switch off. Reads the frames and hashes of plies `ply - 1` and `ply - 2`, which
    /// the search has set before its children run.
    fn analogy_at(&self, pos: &Chess, ply: usize) -> Option<Analogy> {
        if !self.opts.spite_check || ply == 0 {
            return None;
        }
        let inherited = self.stack[ply - 1].analogy;
        if ply < 2 || self.hashes.len() < 2 {
            return inherited;
        }
        let (check, evasion) = (&self.stack[ply - 2], &self.stack[ply - 1]);
        if !evasion.in_check
            || evasion.captured
            || check.captured
            || check.null
            || check.eval == -INF
            || pos.is_check()
        {
            return inherited;
        }
        let n = self.hashes.len();
        let (before, after) = (self.hashes[n - 2], hash_of(pos));
        Some(Analogy {
            shift: before ^ after,
            delta: evaluate(pos, self.params) - check.eval,
            ply,
        })
    }

    /// Did the last two plies consist of a check and an evasion that captured nothing?
    fn after_check_and_quiet_evasion(&self, ply: usize) -> bool {
        ply >= 2 && self.stack[ply - 1].in_check && !self.stack[ply - 1].captured
    }

    /// The null move: the side to move passes, and the opponent searches at reduced depth
    /// with a null window at beta.
    fn null_search(&mut self, pos: &Chess, hash: u64, depth: i32, ply: usize, beta: i32) -> i32 {
        let Ok(null) = pos.clone().swap_turn() else {
            return -INF;
        };
        let null_hash = hash_of(&null);
        self.stack[ply].mv = None;
        self.stack[ply].captured = false;
        self.stack[ply].null = true;
        self.hashes.push(hash);
        let floor = std::mem::replace(&mut self.rep_floor, self.hashes.len());
        let score = -self.negamax(&null, null_hash, depth, ply + 1, -beta, -beta + 1, true);
        self.rep_floor = floor;
        self.hashes.pop();
        score
    }

    /// Counts a node, checks the limits every 1024 nodes and records the selective depth; `false`
    /// when the search has been stopped.
    #[inline]
    fn enter_node(&mut self, ply: usize) -> bool {
        self.nodes += 1;
        if self.nodes & 1023 == 0 {
            self.check_limits();
        }
        self.seldepth = self.seldepth.max(ply as u32);
        !self.stopped
    }

    /// The spite-check analogy at a leaf (see [`Analogy`]): the stand-pat score bounded by what
    /// the transposition table knows of the analogous position `hash ^ a.shift`.
    fn analogous_stand_pat(&self, stand_pat: i32, hash: u64, a: Analogy, ply: usize) -> i32 {
        let Some(e) = self.tt.probe(hash ^ a.shift, ply) else {
            return stand_pat;
        };
        // The pair's change of the evaluation, seen from the side to move here.
        let delta = if (ply - a.ply).is_multiple_of(2) {
            a.delta
        } else {
            -a.delta
        };
        bound_by_analogy(stand_pat, e.score, e.bound, delta)
    }

    /// Quiescence search: only captures and queen promotions (all moves when in check) until
    /// the position is quiet, so that the evaluation never stands in the middle of an exchange.
    /// `analogy`: the position's hash and the spite-check analogy in force, if any.
    fn quiescence(
        &mut self,
        pos: &Chess,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
        analogy: Option<(u64, Analogy)>,
    ) -> i32 {
        if !self.enter_node(ply) {
            return 0;
        }
        let in_check = pos.is_check();
        if ply >= MAX_PLY - 1 {
            return if in_check {
                0
            } else {
                evaluate(pos, self.params)
            };
        }
        if self.opts.tablebase
            && tablebase::covers(pos)
            && let Some(v) = tablebase::probe(pos)
        {
            return tablebase_score(v, ply, pos.halfmoves());
        }
        if self.opts.mdp {
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        let mut best = -INF;
        let mut stand_pat = -INF;
        if !in_check {
            // Stand pat: the side to move may decline every capture.
            stand_pat = evaluate(pos, self.params);
            if let Some((hash, a)) = analogy {
                stand_pat = self.analogous_stand_pat(stand_pat, hash, a, ply);
            }
            if stand_pat >= beta {
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            best = stand_pat;
            moves.retain(|m| m.is_capture() || m.promotion() == Some(Role::Queen));
        }
        let mut scores = [0i32; MAX_MOVES];
        self.score_moves(pos, &moves, 0, ply, &mut scores);
        for i in 0..moves.len() {
            let (m, order) = Self::pick(&mut moves, &mut scores, i);
            if !in_check {
                // SEE: a capture that loses material is not worth searching here.
                if order < GOOD_CAPTURE / 2 {
                    break;
                }
                // Delta pruning: even winning the victim and a margin can't reach alpha.
                let gain = if m.is_en_passant() {
                    see_value(Role::Pawn)
                } else {
                    m.capture().map_or(0, see_value)
                } + m
                    .promotion()
                    .map_or(0, |r| see_value(r) - see_value(Role::Pawn));
                if stand_pat + gain + 200 <= alpha && alpha.abs() < MATE_BOUND {
                    continue;
                }
            }
            let mut child = pos.clone();
            child.play_unchecked(m);
            let child_analogy = analogy.map(|(h, a)| (Self::child_hash(pos, h, m, &child), a));
            let score = -self.quiescence(&child, ply + 1, -beta, -alpha, child_analogy);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_by_name() {
        let mut o = SearchOptions::default();
        o.set("mdp", "off").unwrap();
        assert!(!o.mdp);
        o.set("AggressiveFutility", "true").unwrap();
        assert!(o.aggressive_futility);
        o.set("Hash", "16").unwrap();
        assert_eq!(o.hash_mb, 16);
        assert!(matches!(o.set("Nope", "1"), Err(OptionError::Unknown(_))));
        assert!(matches!(
            o.set("LMR", "maybe"),
            Err(OptionError::BadValue { .. })
        ));
    }

    #[test]
    fn spite_check_analogy_maps_positions_by_a_key_shift() {
        use crate::position::{parse_fen, parse_move};
        // P: White to move. The spite check Qe3+ and the evasion Kf7 give P'. Any later quiet
        // move m away from the two pieces leads from P' to a position whose key, XOR the shift,
        // is the key of P followed by m: the analogous position.
        let p = parse_fen("4k3/7p/8/8/8/Q7/1P6/4K3 w - - 0 1").unwrap();
        let play = |pos: &Chess, moves: &[&str]| {
            let mut pos = pos.clone();
            for m in moves {
                let m = parse_move(&pos, m).unwrap();
                pos.play_unchecked(m);
            }
            pos
        };
        let p2 = play(&p, &["Qe3+", "Kf7"]);
        let shift = hash_of(&p) ^ hash_of(&p2);
        for m in [["b3", "h6"], ["b4", "h5"]] {
            assert_eq!(hash_of(&play(&p2, &m)) ^ shift, hash_of(&play(&p, &m)));
        }
        // Bounds: an upper bound caps, a lower bound raises, an exact score replaces, each
        // corrected by the evaluation change; mate scores count as just short of a mate.
        assert_eq!(bound_by_analogy(100, 20, Bound::Upper, 10), 30);
        assert_eq!(bound_by_analogy(10, 20, Bound::Upper, 10), 10);
        assert_eq!(bound_by_analogy(10, 20, Bound::Lower, -5), 15);
        assert_eq!(bound_by_analogy(100, 20, Bound::Lower, -5), 100);
        assert_eq!(bound_by_analogy(100, 20, Bound::Exact, 0), 20);
        assert_eq!(
            bound_by_analogy(0, -MATE + 5, Bound::Upper, 50),
            -MATE_BOUND + 1
        );
        assert_eq!(
            bound_by_analogy(0, MATE - 5, Bound::Exact, 50),
            MATE_BOUND - 1
        );
    }

    #[test]
    fn mate_scores_in_moves() {
        assert_eq!(Score::from_internal(MATE - 1), Score::Mate(1));
        assert_eq!(Score::from_internal(MATE - 3), Score::Mate(2));
        assert_eq!(Score::from_internal(-MATE + 2), Score::Mate(-1));
        assert_eq!(Score::from_internal(15), Score::Cp(15));
    }
}
