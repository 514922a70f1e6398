//! Move ordering: which move the search tries first.
//!
//! Alpha-beta cuts off sooner the sooner it meets the best move, so each node scores its moves
//! and picks them best first: the transposition table's move, then captures by MVV-LVA (most
//! valuable victim, least valuable attacker) with those that lose material by SEE after the
//! quiet moves, then the killer moves (quiet moves that refuted a sibling), then the other quiet
//! moves by their histories, and under-promotions last.
//!
//! A quiet move's history is the sum of three tables: the butterfly history (side, from, to), and
//! two continuation histories indexed by the move one ply before (the counter-move history: how
//! well this piece going to this square answers that move) and two plies before (the follow-up
//! history: how well it continues our own last move). All three learn by "history gravity": a
//! bonus or malus `b` moves an entry `h` by `b - h·|b| / HISTORY_MAX`, so entries stay within
//! ±`HISTORY_MAX` and recent results weigh more than old ones.
//!
//! Captures have a history of their own too (the capture history: the piece, where it lands and
//! what it takes), added to MVV-LVA in the share that [`CAPTURE_HISTORY_SHARE`] sets.

use arrayvec::ArrayVec;
use shakmaty::{Chess, Color, Move, MoveList, Position, Role};

use super::correction::Correction;
use super::eval::{role_index, see_value};
use super::packed_move::PackedMove;
use super::parameters::CAPTURE_HISTORY_SHARE;
use super::score::MAX_PLY;
use super::see::see_ge;

/// The most moves a position can have: shakmaty's move list's capacity (more than 218, the most
/// a reachable position has, because positions with more pieces than promotions could make are
/// accepted too).
pub(super) const MAX_MOVES: usize = {
    let list = MoveList::new_const();
    let capacity = list.capacity();
    std::mem::forget(list);
    capacity
};

/// Move ordering keys.
pub(super) const TT_MOVE: i32 = 1 << 30;
pub(super) const GOOD_CAPTURE: i32 = 1 << 28;
pub(super) const KILLER: i32 = 1 << 26;
pub(super) const BAD_CAPTURE: i32 = -(1 << 28);

/// The bound of every history entry (see history gravity above).
pub(super) const HISTORY_MAX: i32 = 16384;

/// A piece arriving on a square: what the continuation histories remember of a move. The piece
/// is numbered 0..12 (colour × 6 + role), the square 0..64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PieceTo {
    piece: u8,
    to: u8,
}

impl PieceTo {
    /// The piece `side` moves with `m` and where it lands (the pawn, for a promotion).
    #[inline]
    pub(super) fn of(side: Color, m: Move) -> PieceTo {
        PieceTo {
            piece: (side as usize * 6 + role_index(m.role())) as u8,
            to: m.to() as u8,
        }
    }

    #[inline]
    fn index(self) -> usize {
        self.piece as usize * 64 + self.to as usize
    }
}

/// The moves played one and two plies before a node (`None` at the root's first plies or after a
/// null move): the keys of its continuation histories.
#[derive(Clone, Copy, Default)]
pub(super) struct Previous {
    pub(super) one: Option<PieceTo>,
    pub(super) two: Option<PieceTo>,
}

/// Moves a history entry by `bonus` (negative: a malus) with history gravity: entries saturate
/// at ±[`HISTORY_MAX`] instead of growing without bound.
#[inline]
fn gravity(h: &mut i32, bonus: i32) {
    *h += bonus - *h * bonus.abs() / HISTORY_MAX;
}

/// The history heuristic: the butterfly history (for each side, from square and to square) and
/// the continuation history (for a previous move's piece and square, this move's piece and
/// square), each saying how often a quiet move caused a cutoff and how rarely it failed to. It
/// lives across searches, in the engine.
pub(super) struct History {
    butterfly: Vec<[[i32; 64]; 64]>,
    /// 768 × 768 entries: [previous piece-to][piece-to], shared by the counter-move (one ply
    /// back) and follow-up (two plies back) histories.
    continuation: Vec<i32>,
    /// 768 × 6 entries: [piece-to][victim], the capture history.
    capture: Vec<i32>,
    /// The static evaluation's correction history, kept and cleared with the move histories.
    pub(super) correction: Correction,
}

impl History {
    pub(super) fn new() -> History {
        History {
            butterfly: vec![[[0; 64]; 64]; 2],
            continuation: vec![0; 768 * 768],
            capture: vec![0; 768 * 6],
            correction: Correction::new(),
        }
    }

    pub(super) fn clear(&mut self) {
        for side in &mut self.butterfly {
            *side = [[0; 64]; 64];
        }
        self.continuation.fill(0);
        self.capture.fill(0);
        self.correction.clear();
    }

    /// The quiet move `m` of `side` after the moves `prev`: the sum of its three histories.
    #[inline]
    pub(super) fn get(&self, side: Color, m: Move, prev: Previous) -> i32 {
        let from = m.from().map_or(0, |s| s as usize);
        let this = PieceTo::of(side, m).index();
        let mut h = self.butterfly[side as usize][from][m.to() as usize];
        if let Some(p) = prev.one {
            h += self.continuation[p.index() * 768 + this];
        }
        if let Some(p) = prev.two {
            h += self.continuation[p.index() * 768 + this];
        }
        h
    }

    /// Adds `bonus` (negative: a malus) to the move's entries in the three tables.
    #[inline]
    pub(super) fn update(&mut self, side: Color, m: Move, prev: Previous, bonus: i32) {
        let from = m.from().map_or(0, |s| s as usize);
        gravity(
            &mut self.butterfly[side as usize][from][m.to() as usize],
            bonus,
        );
        let this = PieceTo::of(side, m).index();
        for p in [prev.one, prev.two].into_iter().flatten() {
            gravity(&mut self.continuation[p.index() * 768 + this], bonus);
        }
    }

    /// The capture history's entry of the capture `m` of `side` (`None` for another move).
    #[inline]
    fn capture_index(side: Color, m: Move) -> Option<usize> {
        let victim = match m {
            Move::EnPassant { .. } => Role::Pawn,
            _ => m.capture()?,
        };
        Some(PieceTo::of(side, m).index() * 6 + role_index(victim))
    }

    /// The capture history of the capture `m` of `side` (0 for another move).
    #[inline]
    pub(super) fn capture(&self, side: Color, m: Move) -> i32 {
        History::capture_index(side, m).map_or(0, |i| self.capture[i])
    }

    /// Adds `bonus` (negative: a malus) to the capture history of the capture `m` of `side`.
    #[inline]
    pub(super) fn update_capture(&mut self, side: Color, m: Move, bonus: i32) {
        if let Some(i) = History::capture_index(side, m) {
            gravity(&mut self.capture[i], bonus);
        }
    }
}

/// The killer moves: per ply, the last two quiet moves that caused a cutoff there.
pub(super) struct Killers([[Option<Move>; 2]; MAX_PLY + 2]);

impl Killers {
    pub(super) fn new() -> Killers {
        Killers([[None; 2]; MAX_PLY + 2])
    }

    /// Forgets the killers of `ply` (the grandchildren's, before a node searches its moves).
    #[inline]
    pub(super) fn clear(&mut self, ply: usize) {
        if ply < self.0.len() {
            self.0[ply] = [None, None];
        }
    }

    /// The killers of `ply`.
    #[inline]
    pub(super) fn at(&self, ply: usize) -> [Option<Move>; 2] {
        self.0[ply]
    }

    /// Remembers a quiet move that caused a cutoff at `ply`.
    #[inline]
    pub(super) fn remember(&mut self, ply: usize, m: Move) {
        let k = &mut self.0[ply];
        if k[0] != Some(m) {
            k[1] = k[0];
            k[0] = Some(m);
        }
    }
}

/// The ordering keys of a node's moves, one per move in the same order: a fixed array that is
/// never cleared (each node fills only as many keys as it has moves).
pub(super) type Scores = ArrayVec<i32, MAX_MOVES>;

/// Scores `moves` of `pos`, reached by the moves `prev`, with the killers of its ply, into the
/// empty `scores` (higher first).
pub(super) fn score_moves(
    pos: &Chess,
    moves: &MoveList,
    tt_move: PackedMove,
    killers: [Option<Move>; 2],
    history: &History,
    prev: Previous,
    scores: &mut Scores,
) {
    let side = pos.turn();
    let capture_share = CAPTURE_HISTORY_SHARE.get();
    // One `match` per move reads its kind, piece, victim and promotion at once (each accessor of
    // `Move` is a `match` of its own).
    let capture_key = |victim: Option<Role>, promotion: Option<Role>, role: Role, m: Move| {
        // MVV-LVA, with SEE separating winning from losing exchanges.
        let gain = victim.map_or(0, see_value) + promotion.map_or(0, see_value);
        let mut key = gain * 8 - role_index(role) as i32;
        if capture_share > 0 {
            key += history.capture(side, m) * capture_share / 16;
        }
        if see_ge(pos, m, 0) {
            GOOD_CAPTURE + key
        } else {
            BAD_CAPTURE + key
        }
    };
    let quiet_key = |m: Move| {
        if killers[0] == Some(m) {
            KILLER + 1
        } else if killers[1] == Some(m) {
            KILLER
        } else {
            history.get(side, m, prev)
        }
    };
    debug_assert!(scores.is_empty());
    for &m in moves {
        let key = if !tt_move.is_none() && tt_move.is(m) {
            TT_MOVE
        } else {
            match m {
                Move::Normal {
                    role,
                    capture,
                    promotion,
                    ..
                } => match (capture, promotion) {
                    // A queen promotion is ordered as a capture (of nothing, or of the victim).
                    (Some(_), _) | (None, Some(Role::Queen)) => {
                        capture_key(capture, promotion, role, m)
                    }
                    // Under-promotions last.
                    (None, Some(_)) => BAD_CAPTURE - 1000,
                    (None, None) => quiet_key(m),
                },
                Move::EnPassant { .. } => capture_key(Some(Role::Pawn), None, Role::Pawn, m),
                Move::Castle { .. } | Move::Put { .. } => quiet_key(m),
            }
        };
        // A move list holds at most MAX_MOVES moves: never full here.
        scores.push(key);
    }
}

/// Picks the best-scored move among the remaining ones (selection sort, one step).
#[inline]
pub(super) fn pick(moves: &mut MoveList, scores: &mut [i32], i: usize) -> (Move, i32) {
    // The first of the highest keys among moves i.., scanned as one slice (no index checks).
    let mut best = i;
    let mut best_score = scores[i];
    for (j, &s) in scores[i..moves.len()].iter().enumerate().skip(1) {
        if s > best_score {
            best = i + j;
            best_score = s;
        }
    }
    moves.swap(i, best);
    scores.swap(i, best);
    (moves[i], scores[i])
}
