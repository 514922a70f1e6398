//! The tree search: a principal variation search (negamax, fail-soft) with quiescence at the
//! horizon, `depth` counting down to the horizon and `ply` counting up from the root.
//!
//! Every pruning technique is a numbered, labelled step in [`Worker::negamax`] behind a switch
//! of [`SearchOptions`], so that its effect can be measured on and off; the bigger steps are
//! methods named after them. Their margins, depth limits and reductions are the named constants
//! of [`super::parameters`]; where an SPRT measured a step, its comment gives the Elo and the row. Iterative deepening and the root's hand-overs (tablebase, mate
//! search) live in [`super::search`], which drives this one.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use arrayvec::ArrayVec;
use shakmaty::{Chess, Color, Move, MoveList, Position, Role};

use super::eval::{Params, evaluate, has_non_pawn_material, see_value};
use super::hash::{child_hash, hash_of};
use super::movegen::{self, Checks};
use super::nnue::{Accumulator, Network};
use super::options::SearchOptions;
use super::ordering::{
    GOOD_CAPTURE, History, KILLER, Killers, PieceTo, Previous, Scores, TT_MOVE, pick, score_moves,
};
use super::packed_move::PackedMove;
use super::parameters::{
    AGGRESSIVE_FUTILITY_MARGIN, CAPTURE_HISTORY_SHARE, CHECK_EXTENSION_MAX_PLY_PER_DEPTH,
    DELTA_MARGIN, FAIL_HIGH_BLEND, FUTILITY_BASE, FUTILITY_MAX_DEPTH, FUTILITY_PER_DEPTH,
    HISTORY_BONUS_MAX_DEPTH_SQUARED, HISTORY_BONUS_SCALE, IIR_MIN_DEPTH, LMP_BASE, LMP_MAX_DEPTH,
    LMP_NOT_IMPROVING_DIVISOR, LMR_BAD_CAPTURE, LMR_BASE, LMR_CUT_NODE, LMR_DEEPER_MARGIN,
    LMR_DIVISOR, LMR_HISTORY_CLAMP, LMR_HISTORY_DIVISOR, LMR_MIN_DEPTH, LMR_MIN_MOVES,
    LMR_TT_CAPTURE, NET_MARGIN_QUARTERS, NMP_BASE_REDUCTION, NMP_DEPTH_DIVISOR, NMP_EVAL_DIVISOR,
    NMP_EVAL_MAX_REDUCTION, NMP_MIN_DEPTH, NMP_VERIFY_DEPTH, PROBCUT_MARGIN, PROBCUT_MIN_DEPTH,
    QS_TT, RAZOR_MARGIN, RAZOR_MAX_DEPTH, RFP_BLEND, RFP_IMPROVING_BONUS, RFP_MARGIN_PER_DEPTH,
    RFP_MAX_DEPTH, SE_DOUBLE_MARGIN, SE_MARGIN_PER_DEPTH, SE_MIN_DEPTH, SE_NEGATIVE_EXTENSION,
    SE_TT_DEPTH_MARGIN, SEE_CAPTURE_MARGIN, SEE_PRUNING_MAX_DEPTH, SEE_QUIET_MARGIN, TT_EVAL,
    Tunable,
};
use super::score::{INF, MATE_BOUND_CP, MAX_PLY, mate_in, mated_in};
use super::see::see_ge;
use super::spite_check::Analogy;
use super::tablebase;
use super::tt::{Bound, TranspositionTable, TtEntry};

/// What the search remembers about each ply of the current line.
#[derive(Clone, Copy, Default)]
struct Frame {
    /// The move played from this ply (None for a null move or not yet).
    mv: Option<Move>,
    /// Its piece and target square, the key of the continuation histories below it.
    moved: Option<PieceTo>,
    in_check: bool,
    /// The static evaluation, corrected (see [`super::correction`]); `-INF` in check.
    eval: i32,
    /// The static evaluation before the correction.
    raw_eval: i32,
    /// The move played from this ply captured something.
    captured: bool,
    /// A null move was tried from this ply.
    null: bool,
    /// The spite-check analogy in force below this ply (set only with the switch on).
    analogy: Option<Analogy>,
    /// The move a singular-extension search leaves out at this ply (step 8a).
    excluded: Option<Move>,
}

/// What the threads of one search (Lazy SMP, see [`super::search`]) share besides the
/// transposition table: each thread's node count, published every 1024 nodes so that limits and
/// `info` lines count them all, and the flag that ends the helper threads once the main thread is
/// done. A one-thread search has one counter and never sees the flag set.
pub(super) struct Shared {
    nodes: Vec<AtomicU64>,
    pub(super) done: AtomicBool,
}

impl Shared {
    pub(super) fn new(threads: usize) -> Shared {
        Shared {
            nodes: (0..threads.max(1)).map(|_| AtomicU64::new(0)).collect(),
            done: AtomicBool::new(false),
        }
    }

    /// The nodes of every thread but `id`, as last published.
    fn others(&self, id: usize) -> u64 {
        let mut sum = 0;
        for (i, n) in self.nodes.iter().enumerate() {
            if i != id {
                sum += n.load(Ordering::Relaxed);
            }
        }
        sum
    }

    /// The nodes of every thread, as last published.
    pub(super) fn total(&self) -> u64 {
        self.nodes.iter().map(|n| n.load(Ordering::Relaxed)).sum()
    }
}

/// One thread's search (a worker): the tree below a root, with its limits, counters and per-ply
/// memory. Under Lazy SMP each thread has its own worker (its killers, history and line), all over
/// one table; [`super::search`] drives them.
pub(super) struct Worker<'a> {
    opts: SearchOptions,
    params: &'a Params,
    /// The net that evaluates (`None`: the hand-crafted evaluation, `params`).
    net: Option<&'a Network>,
    /// The net's accumulator of each ply of the current line (with a net only).
    acc: Vec<Accumulator>,
    pub(super) tt: &'a TranspositionTable,
    /// The history heuristic (move ordering), kept by the engine across searches.
    history: &'a mut History,
    stop: Arc<AtomicBool>,
    deadline: Option<Instant>,
    /// The limit on the nodes of all threads together.
    node_limit: u64,
    /// What the threads share, and this thread's number in it (0: the main thread).
    shared: &'a Shared,
    id: usize,
    /// This thread's nodes.
    pub(super) nodes: u64,
    pub(super) seldepth: u32,
    pub(super) stopped: bool,
    root_turn: Color,
    /// The only moves searched at the root (`None`: all of them).
    root_moves: Option<Vec<Move>>,
    /// Keys of the game's positions and of the current line, oldest first, for repetitions.
    past: Vec<u64>,
    /// Repetitions are not looked for across a null move.
    rep_floor: usize,
    stack: Vec<Frame>,
    pv: Vec<Vec<Move>>,
    killers: Killers,
    /// The best root move of the current iteration so far, with its score.
    pub(super) root_best: Option<(Move, i32)>,
    /// The depth of the current iteration.
    root_depth: i32,
    /// The nodes this thread has spent under each root move since the search began, for time
    /// management (a best move that took most of the effort is a settled one).
    root_move_nodes: Vec<(Move, u64)>,
}

/// Late move reduction in plies for a depth and a move number: grows with both, slowly.
fn lmr_formula(depth: i32, moves: usize) -> i32 {
    let d = (depth.max(1) as f32).ln();
    let m = (moves.max(1) as f32).ln();
    (LMR_BASE + d * m / LMR_DIVISOR) as i32
}

/// The depths and move numbers below this have their reduction in [`LMR`].
const LMR_SIZE: usize = 64;

/// [`lmr_formula`] worked out once per process for the common depths and move numbers (two
/// logarithms a late move otherwise): the same values, read from a table.
static LMR: LazyLock<[[u8; LMR_SIZE]; LMR_SIZE]> = LazyLock::new(|| {
    std::array::from_fn(|depth| std::array::from_fn(|moves| lmr_formula(depth as i32, moves) as u8))
});

/// Late move reduction in plies for a depth and a move number (see [`lmr_formula`]).
#[inline]
fn lmr_reduction(depth: i32, moves: usize) -> i32 {
    match usize::try_from(depth) {
        Ok(d) if d < LMR_SIZE && moves < LMR_SIZE => i32::from(LMR[d][moves]),
        _ => lmr_formula(depth, moves),
    }
}

/// Step 9: how many quiet moves late move pruning lets through at `depth`: fewer when the
/// static evaluation is not `improving`.
#[inline]
fn lmp_limit(depth: i32, improving: bool) -> usize {
    let divisor = if improving {
        1
    } else {
        LMP_NOT_IMPROVING_DIVISOR
    };
    (LMP_BASE.get() + depth * depth) as usize / divisor
}

/// The history bonus of a move that refutes a position at `depth` (the malus of those tried
/// before it).
#[inline]
fn history_bonus(depth: i32) -> i32 {
    (depth * depth).min(HISTORY_BONUS_MAX_DEPTH_SQUARED.get()) * HISTORY_BONUS_SCALE.get()
}

/// What a node's fail-soft score `best` says of its true value, searched with the window
/// (`old_alpha`, `beta`): a lower bound at or above beta, exact inside the window, else an upper
/// bound.
#[inline]
fn bound_of(best: i32, old_alpha: i32, beta: i32) -> Bound {
    if best >= beta {
        Bound::Lower
    } else if best > old_alpha {
        Bound::Exact
    } else {
        Bound::Upper
    }
}

/// Step 4: does the table's entry end the node? Its score when it is deep enough and its
/// bound settles the window (never in a PV node, whose line must be searched).
#[inline]
fn tt_cutoff(e: Option<TtEntry>, pv_node: bool, depth: i32, alpha: i32, beta: i32) -> Option<i32> {
    let e = e?;
    let settled = match e.bound {
        Bound::Exact => true,
        Bound::Lower => e.score >= beta,
        Bound::Upper => e.score <= alpha,
    };
    (!pv_node && e.depth >= depth && settled).then_some(e.score)
}

/// When a search stops, besides the end of its depth: the `stop` flag set from outside, the
/// `deadline`, or `node_limit` nodes counted over all its threads (`u64::MAX`: no limit). The
/// threads of one search share it.
#[derive(Clone, Debug)]
pub(super) struct StopWhen {
    pub stop: Arc<AtomicBool>,
    pub deadline: Option<Instant>,
    pub node_limit: u64,
}

/// Everything a [`Worker`] starts from: its switches, what it shares with the engine and the
/// other threads, the root and its history, and when to stop.
pub(super) struct WorkerSetup<'a> {
    pub opts: SearchOptions,
    pub params: &'a Params,
    pub tt: &'a TranspositionTable,
    /// The history heuristic, the engine's (or a helper thread's), kept across searches.
    pub history: &'a mut History,
    /// What the threads of this search share, and this thread's number in it (0: the main
    /// thread).
    pub shared: &'a Shared,
    pub id: usize,
    pub root: &'a Chess,
    /// The only moves searched at the root (`None`: all of them).
    pub root_moves: Option<Vec<Move>>,
    /// The keys of the positions before the root, oldest first (for repetitions).
    pub past: &'a [u64],
    pub stop_when: StopWhen,
}

impl<'a> Worker<'a> {
    /// A worker as `setup` describes it.
    pub(super) fn new(setup: WorkerSetup<'a>) -> Self {
        let WorkerSetup {
            opts,
            params,
            tt,
            history,
            shared,
            id,
            root,
            root_moves,
            past,
            stop_when:
                StopWhen {
                    stop,
                    deadline,
                    node_limit,
                },
        } = setup;
        let net = opts.nnue.then(super::nnue::net);
        let acc = match net {
            Some(net) => {
                let mut acc = vec![Accumulator::default(); MAX_PLY + 2];
                acc[0] = Accumulator::new(net, root.board());
                acc
            }
            None => Vec::new(),
        };
        Worker {
            opts,
            params,
            net,
            acc,
            tt,
            history,
            stop,
            deadline,
            node_limit,
            shared,
            id,
            nodes: 0,
            seldepth: 0,
            stopped: false,
            root_turn: root.turn(),
            root_moves,
            past: past.to_vec(),
            rep_floor: 0,
            stack: vec![Frame::default(); MAX_PLY + 4],
            pv: (0..=MAX_PLY).map(|_| Vec::with_capacity(MAX_PLY)).collect(),
            killers: Killers::new(),
            root_best: None,
            root_depth: 1,
            root_move_nodes: Vec::new(),
        }
    }

    /// A new iteration of iterative deepening begins, to `depth`.
    pub(super) fn start_iteration(&mut self, depth: i32) {
        self.seldepth = 0;
        self.root_best = None;
        self.root_depth = depth;
    }

    /// The root `pos` (key `hash`) searched to `depth` in the window (`alpha`, `beta`).
    pub(super) fn root(
        &mut self,
        pos: &Chess,
        hash: u64,
        depth: i32,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        self.negamax(pos, hash, depth, 0, alpha, beta, false, false)
    }

    /// The share (0 to 1) of this thread's root-move nodes that went to `best`, all iterations
    /// so far together; 1 when nothing was counted.
    pub(super) fn root_share(&self, best: Option<&Move>) -> f64 {
        let total: u64 = self.root_move_nodes.iter().map(|(_, n)| n).sum();
        let best = best.map_or(0, |b| {
            self.root_move_nodes
                .iter()
                .find(|(m, _)| m == b)
                .map_or(0, |(_, n)| *n)
        });
        if total == 0 {
            1.0
        } else {
            best as f64 / total as f64
        }
    }

    /// Adds `nodes` to root move `m`'s count.
    fn count_root_nodes(&mut self, m: Move, nodes: u64) {
        match self.root_move_nodes.iter_mut().find(|(r, _)| *r == m) {
            Some((_, n)) => *n += nodes,
            None => self.root_move_nodes.push((m, nodes)),
        }
    }

    /// The principal variation of the last completed root search.
    pub(super) fn principal_variation(&self) -> &[Move] {
        &self.pv[0]
    }

    /// The nodes of all threads: this one's, and the others' as last published.
    pub(super) fn total_nodes(&self) -> u64 {
        self.nodes + self.shared.others(self.id)
    }

    /// Publishes this thread's node count for the others (and the final sum).
    pub(super) fn publish_nodes(&self) {
        self.shared.nodes[self.id].store(self.nodes, Ordering::Relaxed);
    }

    /// Has a limit been reached, or the main thread finished? Checked every 1024 nodes.
    fn check_limits(&mut self) {
        self.publish_nodes();
        if self.total_nodes() >= self.node_limit
            || self.stop.load(Ordering::Relaxed)
            || self.shared.done.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            self.stopped = true;
        }
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

    /// Has the position `hash` come before, with the same side to move, since the last
    /// irreversible move (and not across a null move)?
    fn is_repetition(&self, hash: u64, halfmoves: u32) -> bool {
        let len = self.past.len();
        let floor = len.saturating_sub(halfmoves as usize).max(self.rep_floor);
        let mut i = len;
        while i >= floor + 2 {
            i -= 2;
            if self.past[i] == hash {
                return true;
            }
        }
        false
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(m);
        line.extend_from_slice(&tail[0]);
    }

    /// The negamax search of `pos` (key `hash`): its score in the window (`alpha`, `beta`),
    /// fail-soft. `cut_from_null`: this node verifies a null-move cutoff (no null move here).
    /// `cut_node`: a null-window node expected to fail high (the parent searched it as a late
    /// move, or as the first move of an expected fail-low node); step 11 may reduce more there.
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
        cut_node: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        let root = ply == 0;
        self.pv[ply].clear();
        let in_check = pos.is_check();

        // 1. Check extension: a check is searched one ply deeper, so that the horizon never
        //    falls between a check and its answer.
        //    Limited to lines no longer than twice the iteration's depth, so that long series of
        //    checks can't blow the tree up.
        if in_check
            && self.opts.check_extension
            && (ply as i32) < CHECK_EXTENSION_MAX_PLY_PER_DEPTH * self.root_depth
        {
            depth += 1;
        }
        if depth <= 0 {
            let analogy = self.analogy_at(pos, ply);
            return self.quiescence(pos, hash, ply, alpha, beta, analogy);
        }

        if !self.enter_node(ply) {
            return 0;
        }
        if ply >= MAX_PLY - 1 {
            return self.evaluate(pos, ply);
        }

        if !root {
            // 2. Draws (repetition, the fifty-move rule, no mating material) and
            // 2a. the tablebase's exact score.
            if let Some(score) = self.draw_or_tablebase(pos, hash, in_check, ply) {
                return score;
            }

            // 3. Mate Distance Pruning: even mating right here cannot score more than
            //    MATE_CP - ply, nor can being mated here score less than -MATE_CP + ply. If the
            //    window lies outside that range, a shorter mate is already known: prune.
            //    SPRT (off against on): −4.6 ± 22.7 Elo, no decision; stays on (row 14 of
            //    docs/benchmarks-log.md 'Every SPRT (the full table)').
            if self.opts.mdp {
                alpha = alpha.max(mated_in(ply));
                beta = beta.min(mate_in(ply) - 1);
                if alpha >= beta {
                    return alpha;
                }
            }
        }

        // 4. Transposition table: a deep enough result for this position ends the node (not in
        //    a singular-extension search, which asks another question of the same position).
        let excluded = self.stack[ply].excluded;
        let tt_entry = self.tt.probe(hash, ply);
        let tt_move = tt_entry.map_or(PackedMove::NONE, |e| e.mv);
        if excluded.is_none()
            && let Some(score) = tt_cutoff(tt_entry, pv_node, depth, alpha, beta)
        {
            return score;
        }

        // 4a. Internal iterative reduction: a deep node the table knows no move for is
        //     searched one ply shallower: without a good first move it is costly, and the
        //     next iteration finds it again with the move this one leaves in the table.
        let iir_depth = IIR_MIN_DEPTH.get();
        if iir_depth > 0 && depth >= iir_depth && tt_move == PackedMove::NONE && excluded.is_none()
        {
            depth -= 1;
        }

        let mut eval = self.enter_frame(pos, ply, in_check, tt_entry);
        let improving = !in_check && ply >= 2 && eval > self.stack[ply - 2].eval;
        // 4b. The table's score, where its bound says it is nearer the truth than the static
        //     evaluation, is what the pruning steps below compare (the frame keeps the static
        //     one, for `improving` and the correction history). Off: SPRT at 2+0.02, −33.4 ± 21.8
        //     Elo, H0 (row 68 of docs/benchmarks-log.md 'Every SPRT (the full table)').
        if TT_EVAL.get() > 0
            && !in_check
            && excluded.is_none()
            && let Some(e) = tt_entry
            && e.score.abs() < MATE_BOUND_CP
            && match e.bound {
                Bound::Exact => true,
                Bound::Lower => e.score > eval,
                Bound::Upper => e.score < eval,
            }
        {
            eval = e.score;
        }
        let last_was_capture = ply >= 1 && self.stack[ply - 1].captured;
        let mut spite_extend = false;

        if !pv_node && !in_check && excluded.is_none() {
            // 5. Reverse futility pruning: far above beta near the leaves, the opponent's
            //    threats (searched by quiescence) are unlikely to bring the score back down.
            if self.opts.futility
                && depth <= RFP_MAX_DEPTH.get()
                && beta.abs() < MATE_BOUND_CP
                && eval - self.margin(&RFP_MARGIN_PER_DEPTH) * depth
                    + if improving {
                        self.margin(&RFP_IMPROVING_BONUS)
                    } else {
                        0
                    }
                    >= beta
            {
                return if RFP_BLEND.get() > 0 {
                    (eval + beta) / 2
                } else {
                    eval
                };
            }

            // 5a. Razoring: far below alpha near the leaves, only a capture or a threat could
            //     bring the score back; when quiescence finds none, the node fails low with it.
            if self.opts.futility
                && RAZOR_MARGIN.get() > 0
                && depth <= RAZOR_MAX_DEPTH.get()
                && alpha.abs() < MATE_BOUND_CP
                && eval + self.margin(&RAZOR_MARGIN) * depth < alpha
            {
                let analogy = self.analogy_at(pos, ply);
                let score = self.quiescence(pos, hash, ply, alpha, alpha + 1, analogy);
                if self.stopped || score <= alpha {
                    return score;
                }
            }

            // 6. Aggressive futility pruning (the seeds' careful style): at a frontier node of
            //    the root's own side, if the static evaluation is below alpha by half a pawn and
            //    the last move was no capture, assume no quiet move will save it and prune.
            //    SPRT (on against off): −47.3 ± 27.3 Elo, H0; stays off (row 15 of
            //    docs/benchmarks-log.md 'Every SPRT (the full table)').
            if self.opts.aggressive_futility
                && depth == 1
                && pos.turn() == self.root_turn
                && !last_was_capture
                && alpha.abs() < MATE_BOUND_CP
                && eval + AGGRESSIVE_FUTILITY_MARGIN <= alpha
            {
                return eval;
            }

            // 7. Null-move pruning: if passing still fails high, a real move would too. Not in
            //    pawn endings (zugzwang), not twice in a row, and verified at high depth. The
            //    null move's search is at least one ply deep, so that a quiet mate in one that
            //    passing allows refutes the pass (SPRT row 38: +32.6 ± 14.4 Elo, H1).
            //    First the null move's search: `Some` when it failed high.
            let null_cut = self.null_move_fails_high(
                pos,
                hash,
                depth,
                ply,
                eval,
                beta,
                cut_from_null,
                cut_node,
            );
            if self.stopped {
                return 0;
            }

            // 8. Spite-check analogy: when the last two plies were a check and an evasion that
            //    won nothing, the opponent may have "spent" its check to push a threat over the
            //    horizon. Re-search the failed-high null move one ply deeper; if it now fails
            //    low the threat is real: don't prune, and extend the non-checking moves below.
            //    SPRT (on against off): +13.3 ± 22.2 Elo, no decision (row 16), then
            //    −14.1 ± 16.8 Elo, H0 (row 17); stays off (rows of
            //    docs/benchmarks-log.md 'Every SPRT (the full table)').
            if let Some(null) = null_cut
                && self.opts.spite_check
                && self.after_check_and_quiet_evasion(ply)
            {
                spite_extend =
                    self.null_search(pos, hash, depth - null.reduction, ply, beta, !cut_node)
                        < beta;
                if self.stopped {
                    return 0;
                }
            }

            // 7b. Null-move cutoff (unless step 8 found a threat), at high depth only once a
            //     real reduced search confirms it (zugzwang guard).
            if let Some(null) = null_cut
                && !spite_extend
                && let Some(score) = self.null_move_cutoff(pos, hash, depth, ply, beta, null)
            {
                return score;
            }

            // 7c. ProbCut: a capture whose reduced search clears beta by a margin would very
            //     likely clear beta at full depth: the node fails high. At 12,000 nodes:
            //     +3.8 ± 23.6 Elo over 641 games, stopped (row 22 of docs/benchmarks-log.md
            //     'Every SPRT (the full table)'); at 2+0.02, with capture history and the table
            //     in quiescence: +20.5 ± 14.0 Elo, H1 (row 67).
            let probcut = self.probcut(pos, hash, depth, ply, beta, eval, tt_entry, cut_node);
            if self.stopped {
                return 0;
            }
            if let Some(score) = probcut {
                return score;
            }
        }

        // The moves, best first (at the root, only those allowed).
        let mut moves = pos.legal_moves();
        if root && let Some(allowed) = &self.root_moves {
            moves.retain(|m| allowed.contains(m));
        }
        if moves.is_empty() {
            return if in_check { mated_in(ply) } else { 0 };
        }
        let prev = self.previous(ply);
        // Filled in place: a list returned by value would be copied whole (1 KB).
        let mut scores = Scores::new();
        score_moves(
            pos,
            &moves,
            tt_move,
            self.killers.at(ply),
            self.history,
            prev,
            &mut scores,
        );
        self.killers.clear(ply + 2);

        let side = pos.turn();
        let mut best = -INF;
        let mut best_move: Option<Move> = None;
        let old_alpha = alpha;
        let mut searched = 0usize;
        // The table's move is a capture: the quiet moves after it are less likely to matter.
        let mut tt_capture = false;
        let mut quiets_tried: MoveList = MoveList::new();
        // The captures tried, for the capture history (when it is kept).
        let capture_history = CAPTURE_HISTORY_SHARE.get() > 0;
        let mut captures_tried: ArrayVec<Move, 32> = ArrayVec::new();
        self.past.push(hash);

        // Set once step 9 or 10 has pruned a quiet move: both stay true for the node's later
        // quiet moves (alpha and the count of searched moves only grow), so those that give no
        // check are dropped from the list at once instead of being picked one by one. SPRT at
        // 2+0.02: +32.6 ± 18.5 Elo, H1 (row 81 of docs/benchmarks-log.md 'Every SPRT (the full
        // table)'; moves of equal keys come in another order, the decisions are otherwise the same).
        let mut quiets_pruned = false;
        // Whether a move gives check, read before it is made (steps 9 to 10a need it).
        let checks = Checks::new(pos);
        let mut i = 0;
        while i < moves.len() {
            let (m, order) = pick(&mut moves, &mut scores, i);
            i += 1;
            if excluded == Some(m) {
                continue;
            }
            let quiet = !m.is_capture() && !m.is_promotion();
            tt_capture |= order == TT_MOVE && m.is_capture();

            // 8a. Singular extension: when the table's move is much better than every other
            //      (they all fail low against its score less a margin, searched at half depth),
            //      it is searched one ply deeper. If even the others reach beta (multi-cut),
            //      several moves refute the position: it fails high without more search.
            //      SPRT at 2+0.02 (on against off): +26.1 ± 17.1 Elo, H1 (row 59 of
            //      docs/benchmarks-log.md 'Every SPRT (the full table)'; at 12,000 nodes it had
            //      lost, rows 11 and 23: too shallow a search for it).
            let mut singular = 0;
            if order == TT_MOVE
                && let Some(e) = tt_entry
                && let Some(singular_beta) = self.singular_beta(e, depth, ply, excluded)
            {
                let score = self.search_excluding(
                    pos,
                    hash,
                    (depth - 1) / 2,
                    ply,
                    singular_beta,
                    m,
                    cut_node,
                );
                if self.stopped {
                    self.past.pop();
                    return 0;
                }
                let double = SE_DOUBLE_MARGIN.get();
                if score < singular_beta {
                    singular = if double > 0 && !pv_node && score < singular_beta - double {
                        2
                    } else {
                        1
                    };
                } else if singular_beta >= beta {
                    self.past.pop();
                    return singular_beta;
                } else if e.score >= beta {
                    singular = -SE_NEGATIVE_EXTENSION.get();
                }
            }

            // Read off the board before the move is made: steps 9 to 10a skip most late moves
            // without ever making them.
            let gives_check = checks.gives_check(pos, m);

            // Never prune while a mate is at stake: with a mate score as alpha, every quiet
            // move looks futile, including the one that mates sooner.
            if !root
                && best > -MATE_BOUND_CP
                && alpha > -MATE_BOUND_CP
                && !in_check
                && quiet
                && !gives_check
            {
                // 9. Late move pruning: near the leaves, after enough quiet moves the rest
                //    (ordered by history) are unlikely to matter.
                if self.opts.lmp
                    && !pv_node
                    && depth <= LMP_MAX_DEPTH.get()
                    && searched >= lmp_limit(depth, improving)
                {
                    if !quiets_pruned {
                        quiets_pruned = true;
                        keep_checks_and_noisy(pos, &checks, &mut moves, &mut scores, i);
                    }
                    continue;
                }
                // 10. Futility pruning: a quiet move cannot lift a hopeless static score above
                //     alpha within the last plies.
                if self.opts.futility
                    && !pv_node
                    && depth <= FUTILITY_MAX_DEPTH.get()
                    && order < KILLER
                    && eval + self.margin(&FUTILITY_BASE) + self.margin(&FUTILITY_PER_DEPTH) * depth
                        <= alpha
                {
                    if !quiets_pruned {
                        quiets_pruned = true;
                        keep_checks_and_noisy(pos, &checks, &mut moves, &mut scores, i);
                    }
                    continue;
                }
            }

            // 10a. SEE pruning: near the leaves, a move that loses material by the static
            //      exchange evaluation beyond a margin growing with depth is not worth searching:
            //      quiet moves (the piece left where it can be taken) below
            //      -SEE_QUIET_MARGIN·depth², captures below -SEE_CAPTURE_MARGIN·depth. Captures
            //      that win by SEE skip the test.
            //      SPRT: +56.2 ± 24.6 Elo, H1 (row 5 of
            //      docs/benchmarks-log.md 'Every SPRT (the full table)', and of BENCHMARKS.md).
            if self.opts.futility
                && !root
                && best > -MATE_BOUND_CP
                && depth <= SEE_PRUNING_MAX_DEPTH.get()
                && order < GOOD_CAPTURE
                && order != TT_MOVE
            {
                let margin = if quiet {
                    -SEE_QUIET_MARGIN.get() * depth * depth
                } else {
                    -SEE_CAPTURE_MARGIN.get() * depth
                };
                if !see_ge(pos, m, margin) {
                    continue;
                }
            }

            let mut child = pos.clone();
            child.play_unchecked(m);
            debug_assert_eq!(gives_check, child.is_check(), "{m:?}");
            let child_hash = child_hash(pos, hash, m, &child);
            self.tt.prefetch(child_hash);
            self.play_on_net(pos, m, ply);
            self.stack[ply].mv = Some(m);
            self.stack[ply].moved = Some(PieceTo::of(side, m));
            self.stack[ply].captured = m.is_capture();
            searched += 1;
            if quiet && quiets_tried.len() < quiets_tried.capacity() {
                quiets_tried.push(m);
            }
            if capture_history && m.is_capture() {
                let _ = captures_tried.try_push(m);
            }

            // The spite-check analogy's extension of non-checking moves (see step 8).
            // A negative extension (step 8a) stands; otherwise the larger of the two.
            let extension = if singular < 0 {
                singular
            } else {
                i32::from(spite_extend && !gives_check).max(singular)
            };
            let new_depth = depth - 1 + extension;

            let nodes_before = self.nodes;
            let score = if searched == 1 {
                let child_cut = !pv_node && !cut_node;
                -self.negamax(
                    &child,
                    child_hash,
                    new_depth,
                    ply + 1,
                    -beta,
                    -alpha,
                    false,
                    child_cut,
                )
            } else {
                // 11. Late move reductions: later quiet moves are searched shallower with a null
                //     window first, and again at full depth only if they surprise (then with the
                //     full window in a PV node). A cut node's one ply more: SPRT at 2+0.02,
                //     +10.7 ± 8.6 Elo, H1 (row 63 of docs/benchmarks-log.md 'Every SPRT (the full
                //     table)'). Late losing captures two plies: +19.5 ± 13.5 Elo over 1,104 games,
                //     H1 (row 71).
                let late = LateMove {
                    searched,
                    order,
                    quiet,
                    gives_check,
                    pv_node,
                    root,
                    improving,
                    cut_node,
                    tt_capture,
                    best,
                };
                self.search_late_move(&child, child_hash, depth, new_depth, ply, alpha, beta, late)
            };
            if root {
                self.count_root_nodes(m, self.nodes - nodes_before);
            }
            if self.stopped {
                self.past.pop();
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
                            self.remember_refutation(side, ply, depth, m, prev, &quiets_tried);
                        }
                        if capture_history {
                            self.remember_captures(side, depth, m, &captures_tried);
                        }
                        break;
                    }
                }
            }
        }
        self.past.pop();
        if searched == 0 {
            // Every move was pruned (or, in a singular-extension search, the only other moves):
            // the node fails low at its static score, or at alpha.
            return if excluded.is_some() {
                alpha
            } else {
                eval.max(-MATE_BOUND_CP)
            };
        }
        // A search without one of the moves says nothing of the position itself: neither the
        // correction history nor the table learn from it.
        if excluded.is_some() {
            return best;
        }

        // A fail-soft score above beta is an estimate from one refutation: pulled toward beta
        // (the more, the shallower the node), it misleads the nodes above less.
        if FAIL_HIGH_BLEND.get() > 0
            && best >= beta
            && best.abs() < MATE_BOUND_CP
            && beta.abs() < MATE_BOUND_CP
        {
            best = (best * depth + beta) / (depth + 1);
        }
        let bound = bound_of(best, old_alpha, beta);
        let raw_eval = self.stack[ply].raw_eval;
        // 12. Correction history: a quiet best move (or none) whose score says where the static
        //     evaluation should have been (exact, or a bound beyond it) teaches its entries.
        //     SPRT: +62.0 ± 25.8 Elo, H1 by pawn structure (row 20), +56.9 ± 27.0 Elo, H1 by
        //     each side's other pieces too (row 21); rows of
        //     docs/benchmarks-log.md 'Every SPRT (the full table)'.
        if !in_check
            && !bare_king(pos)
            && best_move.is_none_or(|m| !m.is_capture() && !m.is_promotion())
            && best.abs() < MATE_BOUND_CP
            && !(bound == Bound::Lower && best <= self.stack[ply].eval)
            && !(bound == Bound::Upper && best >= self.stack[ply].eval)
        {
            self.history
                .correction
                .update(pos.board(), pos.turn(), depth, best, raw_eval);
        }
        self.tt.store(
            hash,
            ply,
            PackedMove::from_option(best_move),
            best,
            if in_check { 0 } else { raw_eval },
            depth,
            bound,
        );
        best
    }

    /// Step 8a's condition: the null window under which the other moves must all fail for the
    /// table's move `e` to be singular at `depth`, or `None` where the step does not apply (off,
    /// shallow, a table result too shallow or only an upper bound, a mate score, the root, a
    /// line already twice the iteration's depth, or inside another such search).
    fn singular_beta(
        &self,
        e: TtEntry,
        depth: i32,
        ply: usize,
        excluded: Option<Move>,
    ) -> Option<i32> {
        (self.opts.singular_extensions
            && ply > 0
            && excluded.is_none()
            && depth >= SE_MIN_DEPTH.get()
            && (ply as i32) < 2 * self.root_depth
            && e.depth >= depth - SE_TT_DEPTH_MARGIN.get()
            && e.bound != Bound::Upper
            && e.score.abs() < MATE_BOUND_CP)
            .then(|| e.score - SE_MARGIN_PER_DEPTH.get() * depth)
    }

    /// Step 8a's search: the position at `ply` to `depth` with a null window at `beta`, every
    /// move but `excluded` (the table's move). The ply's frame is the node's again afterwards.
    #[allow(clippy::too_many_arguments)]
    fn search_excluding(
        &mut self,
        pos: &Chess,
        hash: u64,
        depth: i32,
        ply: usize,
        beta: i32,
        excluded: Move,
        cut_node: bool,
    ) -> i32 {
        // The same position again at the same ply: its key leaves the line meanwhile, so that
        // the repetitions below stay aligned.
        let key = self.past.pop();
        let frame = self.stack[ply];
        self.stack[ply].excluded = Some(excluded);
        let score = self.negamax(pos, hash, depth, ply, beta - 1, beta, false, cut_node);
        self.stack[ply] = frame;
        self.past.extend(key);
        score
    }

    /// The static evaluation `raw` of `pos` with its correction history added, kept clear of
    /// the mate scores (`-INF`, in check, stays as it is). A bare king's mop-up evaluation, which
    /// drives the mate, is left as it is.
    #[inline]
    fn corrected(&self, pos: &Chess, raw: i32) -> i32 {
        if raw.abs() >= MATE_BOUND_CP || bare_king(pos) {
            return raw;
        }
        let c = self.history.correction.get(pos.board(), pos.turn());
        (raw + c).clamp(-MATE_BOUND_CP + 1, MATE_BOUND_CP - 1)
    }

    /// A centipawn margin of `parameters`, in the scale of the evaluation in use: as it stands
    /// with the hand-crafted evaluation, times [`NET_MARGIN_QUARTERS`] / 4 (rounded) with the net.
    #[inline(always)]
    pub(super) fn margin(&self, margin: &Tunable) -> i32 {
        match self.net {
            Some(_) => (margin.get() * NET_MARGIN_QUARTERS + 2) / 4,
            None => margin.get(),
        }
    }

    /// The static evaluation of `pos` at `ply`, for the side to move: the net's, from the ply's
    /// accumulator, or the hand-crafted one. A bare king (a side with nothing else) is left to
    /// the hand-crafted evaluation, whose mop-up term drives it to the edge for the mate.
    #[inline]
    fn evaluate(&self, pos: &Chess, ply: usize) -> i32 {
        match self.net {
            Some(net) if !bare_king(pos) => {
                // The unit tests check every updated accumulator against one from scratch.
                #[cfg(test)]
                assert_eq!(self.acc[ply].v, Accumulator::new(net, pos.board()).v);
                net.evaluate(&self.acc[ply], pos.turn(), pos.board().occupied().count())
            }
            _ => evaluate(pos, self.params),
        }
    }

    /// With a net: the accumulator of `ply + 1`, after `m` is played in `pos` (at `ply`).
    #[inline]
    fn play_on_net(&mut self, pos: &Chess, m: Move, ply: usize) {
        if let Some(net) = self.net {
            let (before, after) = self.acc.split_at_mut(ply + 1);
            before[ply].play(net, pos, m, &mut after[0]);
        }
    }

    /// Steps 2 and 2a: the score of a position the rules or the tablebase settle, if it is one.
    /// Draws: a repetition (once within the search is enough), the fifty-move rule, and material
    /// with which nobody can mate. The tablebase: with three men on the board (KQvK, KRvK) the
    /// exact distance to mate is known.
    #[inline]
    fn draw_or_tablebase(&self, pos: &Chess, hash: u64, in_check: bool, ply: usize) -> Option<i32> {
        if self.is_repetition(hash, pos.halfmoves()) {
            return Some(0);
        }
        let b = pos.board();
        if (b.pawns() | b.rooks_and_queens()).is_empty() && pos.is_insufficient_material() {
            return Some(0);
        }
        if pos.halfmoves() >= 100 && !(in_check && pos.legal_moves().is_empty()) {
            return Some(0);
        }
        if self.opts.tablebase
            && tablebase::covers(pos)
            && let Some(v) = tablebase::probe(pos)
        {
            return Some(v.search_score(ply, pos.halfmoves()));
        }
        None
    }

    /// The static evaluation (meaningless in check: `-INF` then), from the table's entry when
    /// there is one, recorded with the ply's other facts in its frame.
    #[inline]
    fn enter_frame(
        &mut self,
        pos: &Chess,
        ply: usize,
        in_check: bool,
        tt_entry: Option<TtEntry>,
    ) -> i32 {
        let raw_eval = if in_check {
            -INF
        } else if let Some(e) = tt_entry {
            e.eval
        } else {
            self.evaluate(pos, ply)
        };
        let eval = self.corrected(pos, raw_eval);
        self.stack[ply].eval = eval;
        self.stack[ply].raw_eval = raw_eval;
        self.stack[ply].in_check = in_check;
        self.stack[ply].null = false;
        if self.opts.spite_check {
            self.stack[ply].analogy = self.analogy_at(pos, ply);
        }
        eval
    }

    /// Step 7's search: when null-move pruning applies here, the null move searched with its
    /// reduction; `Some` when it failed high.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn null_move_fails_high(
        &mut self,
        pos: &Chess,
        hash: u64,
        depth: i32,
        ply: usize,
        eval: i32,
        beta: i32,
        cut_from_null: bool,
        cut_node: bool,
    ) -> Option<NullCut> {
        if !(self.opts.null_move
            && !cut_from_null
            && depth >= NMP_MIN_DEPTH.get()
            && eval >= beta
            && beta.abs() < MATE_BOUND_CP
            && has_non_pawn_material(pos))
        {
            return None;
        }
        let reduction = NMP_BASE_REDUCTION.get()
            + depth / NMP_DEPTH_DIVISOR.get()
            + ((eval - beta) / self.margin(&NMP_EVAL_DIVISOR)).min(NMP_EVAL_MAX_REDUCTION.get());
        // At least one ply: a quiet mate in one that passing allows (which the quiescence
        // search, all captures, would not see) refutes the pass.
        let score = self.null_search(
            pos,
            hash,
            (depth - 1 - reduction).max(1),
            ply,
            beta,
            !cut_node,
        );
        (score >= beta).then_some(NullCut { score, reduction })
    }

    /// Step 7b: the score to return for a null move that failed high, or `None` when the
    /// verification search (at depth 10 and more) does not confirm it.
    fn null_move_cutoff(
        &mut self,
        pos: &Chess,
        hash: u64,
        depth: i32,
        ply: usize,
        beta: i32,
        null: NullCut,
    ) -> Option<i32> {
        // A mate found by passing is no proof: claim beta only.
        let score = if null.score >= MATE_BOUND_CP {
            beta
        } else {
            null.score
        };
        if depth < NMP_VERIFY_DEPTH.get() {
            return Some(score);
        }
        let r = null.reduction;
        let v = self.negamax(pos, hash, depth - 1 - r, ply, beta - 1, beta, true, false);
        (v >= beta).then_some(score)
    }

    /// The null move: the side to move passes, and the opponent searches at reduced depth
    /// with a null window at beta (`cut_node`: the child's kind, see [`Self::negamax`]).
    fn null_search(
        &mut self,
        pos: &Chess,
        hash: u64,
        depth: i32,
        ply: usize,
        beta: i32,
        cut_node: bool,
    ) -> i32 {
        let Ok(null) = pos.clone().swap_turn() else {
            return -INF;
        };
        let null_hash = hash_of(&null);
        self.stack[ply].mv = None;
        self.stack[ply].moved = None;
        self.stack[ply].captured = false;
        self.stack[ply].null = true;
        if self.net.is_some() {
            self.acc[ply + 1] = self.acc[ply];
        }
        self.past.push(hash);
        let floor = std::mem::replace(&mut self.rep_floor, self.past.len());
        let score = -self.negamax(
            &null,
            null_hash,
            depth,
            ply + 1,
            -beta,
            -beta + 1,
            true,
            cut_node,
        );
        self.rep_floor = floor;
        self.past.pop();
        score
    }

    /// Step 7c, ProbCut: the first capture (or queen promotion) that wins at least the margin by
    /// SEE and, searched four plies shallower, still scores at or above beta plus the margin
    /// (quiescence first, to weed out the hopeless ones cheaply); its score, stored as a lower
    /// bound three plies shallower than the node. `None` where the step does not apply or no
    /// capture succeeds, also when the table already knows the node below that bar.
    #[allow(clippy::too_many_arguments)]
    fn probcut(
        &mut self,
        pos: &Chess,
        hash: u64,
        depth: i32,
        ply: usize,
        beta: i32,
        eval: i32,
        tt_entry: Option<TtEntry>,
        cut_node: bool,
    ) -> Option<i32> {
        let min_depth = PROBCUT_MIN_DEPTH.get();
        if min_depth == 0 || depth < min_depth || beta.abs() >= MATE_BOUND_CP {
            return None;
        }
        let probcut_beta = beta + self.margin(&PROBCUT_MARGIN);
        if let Some(e) = tt_entry
            && e.depth >= depth - 3
            && e.score < probcut_beta
        {
            return None;
        }
        let mut moves = pos.legal_moves();
        moves.retain(|m| m.is_capture() || m.promotion() == Some(Role::Queen));
        let mut scores = Scores::new();
        let tt_move = tt_entry.map_or(PackedMove::NONE, |e| e.mv);
        score_moves(
            pos,
            &moves,
            tt_move,
            [None, None],
            self.history,
            Previous::default(),
            &mut scores,
        );
        let side = pos.turn();
        self.past.push(hash);
        let mut found = None;
        for i in 0..moves.len() {
            let (m, _) = pick(&mut moves, &mut scores, i);
            if !see_ge(pos, m, probcut_beta - eval) {
                continue;
            }
            let mut child = pos.clone();
            child.play_unchecked(m);
            let child_hash = child_hash(pos, hash, m, &child);
            self.play_on_net(pos, m, ply);
            self.stack[ply].mv = Some(m);
            self.stack[ply].moved = Some(PieceTo::of(side, m));
            self.stack[ply].captured = m.is_capture();
            let window = (-probcut_beta, -probcut_beta + 1);
            let mut score = -self.negamax(
                &child,
                child_hash,
                0,
                ply + 1,
                window.0,
                window.1,
                false,
                !cut_node,
            );
            if score >= probcut_beta && !self.stopped {
                score = -self.negamax(
                    &child,
                    child_hash,
                    depth - 4,
                    ply + 1,
                    window.0,
                    window.1,
                    false,
                    !cut_node,
                );
            }
            if self.stopped {
                break;
            }
            if score >= probcut_beta {
                let raw_eval = self.stack[ply].raw_eval;
                let mv = PackedMove::from_option(Some(m));
                self.tt
                    .store(hash, ply, mv, score, raw_eval, depth - 3, Bound::Lower);
                found = Some(score);
                break;
            }
        }
        self.past.pop();
        found
    }

    /// Did the last two plies consist of a check and an evasion that captured nothing?
    fn after_check_and_quiet_evasion(&self, ply: usize) -> bool {
        ply >= 2 && self.stack[ply - 1].in_check && !self.stack[ply - 1].captured
    }

    /// The spite-check analogy in force at `ply` (see [`super::spite_check`]): a new one when the
    /// last two plies were a check and an evasion, neither of which captured, else the parent's.
    /// `None` with the switch off. Reads the frames and keys of plies `ply - 1` and `ply - 2`,
    /// which the search has set before its children run.
    fn analogy_at(&self, pos: &Chess, ply: usize) -> Option<Analogy> {
        if !self.opts.spite_check || ply == 0 {
            return None;
        }
        let inherited = self.stack[ply - 1].analogy;
        if ply < 2 || self.past.len() < 2 {
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
        let before = self.past[self.past.len() - 2];
        Some(Analogy::after_pair(
            before,
            check.eval,
            pos,
            self.evaluate(pos, ply),
            ply,
        ))
    }

    /// Step 11, late move reductions: later quiet moves (and late losing captures, by a fixed
    /// number of plies) are searched shallower with a null window first, and again at full depth
    /// only if they surprise; then, as in any principal variation search, a null-window fail high
    /// inside a PV node is searched again with the full window.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn search_late_move(
        &mut self,
        child: &Chess,
        child_hash: u64,
        depth: i32,
        new_depth: i32,
        ply: usize,
        alpha: i32,
        beta: i32,
        late: LateMove,
    ) -> i32 {
        let mut r = 0;
        let reducible = self.opts.lmr
            && depth >= LMR_MIN_DEPTH.get()
            && late.searched >= LMR_MIN_MOVES
            && late.quiet
            && !late.gives_check;
        if reducible {
            r = lmr_reduction(depth, late.searched);
            r -= i32::from(late.pv_node) + i32::from(late.root);
            r += i32::from(!late.improving);
            r += i32::from(late.cut_node) * LMR_CUT_NODE.get();
            r += i32::from(late.tt_capture) * LMR_TT_CAPTURE.get();
            r -= i32::from(late.order >= KILLER);
            r -= late
                .order
                .clamp(-LMR_HISTORY_CLAMP.get(), LMR_HISTORY_CLAMP.get())
                / LMR_HISTORY_DIVISOR.get();
            r = r.clamp(0, new_depth - 1);
        }
        // A losing capture (never quiet, so never reducible above): a fixed reduction.
        let bad_capture = LMR_BAD_CAPTURE.get();
        let bad_capture_reducible = bad_capture > 0
            && self.opts.lmr
            && depth >= LMR_MIN_DEPTH.get()
            && late.searched >= LMR_MIN_MOVES
            && !late.quiet
            && late.order < KILLER
            && !late.gives_check;
        if bad_capture_reducible {
            r = (bad_capture - i32::from(late.pv_node)).clamp(0, new_depth - 1);
        }
        let reducible = reducible || bad_capture_reducible;
        // The child of a reducible move is expected to fail high (its move to be refuted);
        // otherwise it takes the kind opposite to this node's.
        let new_depth_reduced = new_depth - r;
        let mut score = -self.negamax(
            child,
            child_hash,
            new_depth_reduced,
            ply + 1,
            -alpha - 1,
            -alpha,
            false,
            reducible || !late.cut_node,
        );
        let mut new_depth = new_depth;
        if score > alpha && r > 0 {
            // How far the reduced search beat the best so far says how deep to look again.
            let margin = self.margin(&LMR_DEEPER_MARGIN);
            if margin > 0 {
                if score > late.best + margin + 2 * new_depth {
                    new_depth += 1;
                } else if score < late.best + margin / 10 {
                    new_depth -= 1;
                }
            }
            if new_depth > new_depth_reduced {
                score = -self.negamax(
                    child,
                    child_hash,
                    new_depth,
                    ply + 1,
                    -alpha - 1,
                    -alpha,
                    false,
                    !late.cut_node,
                );
            }
        }
        // Principal variation search: a null-window fail high inside a PV node is searched again
        // with the full window.
        if score > alpha && score < beta {
            score = -self.negamax(
                child,
                child_hash,
                new_depth,
                ply + 1,
                -beta,
                -alpha,
                false,
                false,
            );
        }
        score
    }

    /// The moves that led to `ply` (one and two plies before), for the continuation histories.
    #[inline]
    fn previous(&self, ply: usize) -> Previous {
        Previous {
            one: ply.checked_sub(1).and_then(|p| self.stack[p].moved),
            two: ply.checked_sub(2).and_then(|p| self.stack[p].moved),
        }
    }

    /// A quiet move `m` refuted the position at `ply` (reached by `prev`): it becomes a killer,
    /// its histories (butterfly, counter-move and follow-up) rise and those of the quiet moves
    /// tried before it fall.
    fn remember_refutation(
        &mut self,
        side: Color,
        ply: usize,
        depth: i32,
        m: Move,
        prev: Previous,
        quiets_tried: &MoveList,
    ) {
        self.killers.remember(ply, m);
        let bonus = history_bonus(depth);
        for &q in quiets_tried {
            if q != m {
                self.history.update(side, q, prev, -bonus);
            }
        }
        self.history.update(side, m, prev, bonus);
    }

    /// The move `m` refuted the position: if a capture, its capture history rises; those of the
    /// captures tried before it fall.
    fn remember_captures(&mut self, side: Color, depth: i32, m: Move, captures_tried: &[Move]) {
        let bonus = history_bonus(depth);
        for &c in captures_tried {
            if c != m {
                self.history.update_capture(side, c, -bonus);
            }
        }
        self.history.update_capture(side, m, bonus);
    }

    /// Quiescence search: only captures and queen promotions (all moves when in check) until
    /// the position is quiet, so that the evaluation never stands in the middle of an exchange.
    /// `hash`: the position's hash (0 when neither the table nor an analogy needs it);
    /// `analogy`: the spite-check analogy in force, if any. With [`QS_TT`], the transposition
    /// table's entry ends a null-window node as in step 4, gives its static evaluation and its
    /// move to search first, and the result is stored at depth 0 (unless the table holds a real
    /// search's result for the position).
    fn quiescence(
        &mut self,
        pos: &Chess,
        hash: u64,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
        analogy: Option<Analogy>,
    ) -> i32 {
        if !self.enter_node(ply) {
            return 0;
        }
        let in_check = pos.is_check();
        if ply >= MAX_PLY - 1 {
            return if in_check { 0 } else { self.evaluate(pos, ply) };
        }
        if self.opts.tablebase
            && tablebase::covers(pos)
            && let Some(v) = tablebase::probe(pos)
        {
            return v.search_score(ply, pos.halfmoves());
        }
        if self.opts.mdp {
            alpha = alpha.max(mated_in(ply));
            beta = beta.min(mate_in(ply) - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        let use_tt = analogy.is_none() && QS_TT.get() > 0;
        let tt_entry = if use_tt {
            self.tt.probe(hash, ply)
        } else {
            None
        };
        // A real search's entry for this position (depth 1 or more) is kept: what quiescence
        // learns is worth less.
        let store = use_tt && tt_entry.is_none_or(|e| e.depth <= 0);
        if let Some(score) = tt_cutoff(tt_entry, beta - alpha > 1, 0, alpha, beta) {
            return score;
        }

        let mut moves = MoveList::new();
        if in_check {
            moves = pos.legal_moves();
            if moves.is_empty() {
                return mated_in(ply);
            }
        }
        let old_alpha = alpha;
        let mut best = -INF;
        let mut best_move = None;
        let mut stand_pat = -INF;
        let mut raw_eval = 0;
        if !in_check {
            // Stand pat: the side to move may decline every capture.
            raw_eval = tt_entry.map_or_else(|| self.evaluate(pos, ply), |e| e.eval);
            stand_pat = self.corrected(pos, raw_eval);
            if let Some(a) = analogy {
                stand_pat = a.bound_stand_pat(self.tt, stand_pat, hash, ply);
            }
            if stand_pat >= beta {
                if store {
                    let none = PackedMove::NONE;
                    self.tt
                        .store(hash, ply, none, stand_pat, raw_eval, 0, Bound::Lower);
                }
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            best = stand_pat;
            // The moves only now: a stand pat at or above beta never needs them (nor asks
            // whether the side to move is stalemated). Only captures and queen promotions,
            // generated without the quiet moves.
            moves = movegen::noisy_moves(pos);
            if moves.is_empty() && !movegen::has_legal_move(pos) {
                return 0;
            }
        }
        let mut scores = Scores::new();
        score_moves(
            pos,
            &moves,
            tt_entry.map_or(PackedMove::NONE, |e| e.mv),
            self.killers.at(ply),
            self.history,
            Previous::default(),
            &mut scores,
        );
        for i in 0..moves.len() {
            let (m, order) = pick(&mut moves, &mut scores, i);
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
                if stand_pat + gain + self.margin(&DELTA_MARGIN) <= alpha
                    && alpha.abs() < MATE_BOUND_CP
                {
                    continue;
                }
            }
            let mut child = pos.clone();
            child.play_unchecked(m);
            self.play_on_net(pos, m, ply);
            let child_hash = if use_tt || analogy.is_some() {
                child_hash(pos, hash, m, &child)
            } else {
                0
            };
            let score = -self.quiescence(&child, child_hash, ply + 1, -beta, -alpha, analogy);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_move = Some(m);
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        if store {
            let mv = PackedMove::from_option(best_move);
            let bound = bound_of(best, old_alpha, beta);
            self.tt.store(hash, ply, mv, best, raw_eval, 0, bound);
        }
        best
    }
}

/// Drops the quiet moves that give no check from `moves[from..]` (and their keys from
/// `scores`), keeping the others in their order: what is left of a node once steps 9 and 10
/// prune every such move.
fn keep_checks_and_noisy(
    pos: &Chess,
    checks: &Checks,
    moves: &mut MoveList,
    scores: &mut Scores,
    from: usize,
) {
    let mut kept = from;
    for j in from..moves.len() {
        let m = moves[j];
        if m.is_capture() || m.is_promotion() || checks.gives_check(pos, m) {
            moves[kept] = m;
            scores[kept] = scores[j];
            kept += 1;
        }
    }
    moves.truncate(kept);
    scores.truncate(kept);
}

/// Has a side nothing but its king?
#[inline]
fn bare_king(pos: &Chess) -> bool {
    let b = pos.board();
    (b.white() & !b.kings()).is_empty() || (b.black() & !b.kings()).is_empty()
}

/// A null move that failed high (step 7): its score and the reduction it was searched with.
#[derive(Clone, Copy)]
struct NullCut {
    score: i32,
    reduction: i32,
}

/// What step 11 knows of a move after the first.
#[derive(Clone, Copy)]
struct LateMove {
    /// How many moves have been searched, this one included.
    searched: usize,
    /// Its move-ordering key.
    order: i32,
    quiet: bool,
    gives_check: bool,
    pv_node: bool,
    root: bool,
    improving: bool,
    /// The node is expected to fail high (see [`Worker::negamax`]).
    cut_node: bool,
    /// The table's move, searched first, is a capture.
    tt_capture: bool,
    /// The node's best score so far.
    best: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reduction_table_holds_the_formulas_values() {
        for depth in -2..80 {
            for moves in 0..300 {
                assert_eq!(
                    lmr_reduction(depth, moves),
                    lmr_formula(depth, moves),
                    "depth {depth}, move {moves}"
                );
            }
        }
        // A few by hand: ln 3 · ln 3 / 2.25 + 0.75 = 1.29; ln 10 · ln 20 / 2.25 + 0.75 = 3.82.
        assert_eq!(lmr_reduction(3, 3), 1);
        assert_eq!(lmr_reduction(10, 20), 3);
        assert_eq!(lmr_reduction(1, 50), 0);
    }

    /// The positions along `games` random games (up to 100 plies each) from the start position
    /// and from Kiwipete.
    fn random_positions(seed: u64, games: usize) -> Vec<Chess> {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        use shakmaty::CastlingMode;
        use shakmaty::fen::Fen;

        let mut rng = StdRng::seed_from_u64(seed);
        let mut out = Vec::new();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ] {
            let start: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            for _ in 0..games {
                let mut pos = start.clone();
                for _ in 0..100 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    out.push(pos.clone());
                    pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
                }
            }
        }
        out
    }

    #[test]
    fn dropping_the_quiet_non_checks_keeps_the_rest_in_order() {
        let mut dropped = 0;
        for (n, pos) in random_positions(7, 40).iter().enumerate() {
            let mut moves = pos.legal_moves();
            let mut scores: Scores = (0..moves.len() as i32).collect();
            let from = n % (moves.len() + 1);
            let expected: Vec<(Move, i32)> = moves
                .iter()
                .zip(&scores)
                .enumerate()
                .filter(|&(j, (&m, _))| {
                    let mut child = pos.clone();
                    child.play_unchecked(m);
                    j < from || m.is_capture() || m.is_promotion() || child.is_check()
                })
                .map(|(_, (&m, &s))| (m, s))
                .collect();
            dropped += moves.len() - expected.len();
            keep_checks_and_noisy(pos, &Checks::new(pos), &mut moves, &mut scores, from);
            let kept: Vec<(Move, i32)> =
                moves.iter().copied().zip(scores.iter().copied()).collect();
            assert_eq!(kept, expected, "from {from} in {pos:?}");
        }
        assert!(dropped > 10_000, "{dropped}");
    }
}
