//! Move ordering: which move the search tries first.
//!
//! Alpha-beta cuts off sooner the sooner it meets the best move, so each node scores its moves
//! and picks them best first: the transposition table's move, then captures by MVV-LVA (most
//! valuable victim, least valuable attacker) with those that lose material by SEE after the
//! quiet moves, then the killer moves (quiet moves that refuted a sibling), then the other quiet
//! moves by the history heuristic (how often each caused a cutoff), and under-promotions last.

use shakmaty::{Chess, Color, Move, MoveList, Position, Role};

use super::eval::{role_index, see_value};
use super::packed_move::PackedMove;
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

/// The history heuristic: for each side, from square and to square, how often a quiet move
/// caused a cutoff (and how rarely it failed to). It lives across searches, in the engine.
pub(super) struct History(Vec<[[i32; 64]; 64]>);

impl History {
    pub(super) fn new() -> History {
        History(vec![[[0; 64]; 64]; 2])
    }

    pub(super) fn clear(&mut self) {
        for side in &mut self.0 {
            *side = [[0; 64]; 64];
        }
    }

    #[inline]
    fn get(&self, side: usize, m: Move) -> i32 {
        let from = m.from().map_or(0, |s| s as usize);
        self.0[side][from][m.to() as usize]
    }

    /// Adds `bonus` (negative: a malus) to the move's entry.
    #[inline]
    pub(super) fn update(&mut self, side: Color, m: Move, bonus: i32) {
        let from = m.from().map_or(0, |s| s as usize);
        let h = &mut self.0[side as usize][from][m.to() as usize];
        // History gravity: entries saturate instead of growing without bound.
        *h += bonus - *h * bonus.abs() / 16384;
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

/// Scores `moves` of `pos` at `ply` into `scores` (higher first).
pub(super) fn score_moves(
    pos: &Chess,
    moves: &MoveList,
    tt_move: PackedMove,
    ply: usize,
    killers: &Killers,
    history: &History,
    scores: &mut [i32],
) {
    let side = pos.turn() as usize;
    let killers = &killers.0[ply];
    for (i, &m) in moves.iter().enumerate() {
        scores[i] = if tt_move.is(m) {
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
        } else if killers[0] == Some(m) {
            KILLER + 1
        } else if killers[1] == Some(m) {
            KILLER
        } else {
            history.get(side, m)
        };
    }
}

/// Picks the best-scored move among the remaining ones (selection sort, one step).
#[inline]
pub(super) fn pick(moves: &mut MoveList, scores: &mut [i32], i: usize) -> (Move, i32) {
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
