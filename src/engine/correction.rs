//! Correction history: how far the static evaluation has been from the search's results in
//! positions with the same pawns, learnt during the search and added to the evaluation.
//!
//! An evaluation is wrong in ways that repeat: a pawn structure it misjudges is misjudged in every
//! position of the tree that keeps it. After each node whose result says something about its
//! static evaluation (an exact score, or a bound on the right side of it), the difference moves
//! the entry of (side to move, pawn structure) toward it, by a weight growing with the depth. The
//! corrected evaluation is what the pruning steps compare with their margins. (The technique is
//! the field's, e.g. Weiss and Stockfish; the sizes here are the common ones.)

use shakmaty::{Board, Color};

/// Entries per side to move (a power of two).
const SIZE: usize = 16_384;
/// An entry counts in 1/GRAIN of a centipawn.
const GRAIN: i32 = 256;
/// Weights are out of WEIGHT_SCALE.
const WEIGHT_SCALE: i32 = 256;
/// No entry corrects by more than 32 centipawns.
const MAX: i32 = GRAIN * 32;

/// The table, one per search thread, kept across searches like the move histories.
pub(super) struct Correction {
    pawns: Vec<i32>,
}

/// The pawn structure's key: both sides' pawns, mixed (splitmix64's finaliser).
#[inline]
fn pawn_key(board: &Board) -> usize {
    let pawns = board.pawns();
    let white = (pawns & board.white()).0;
    let black = (pawns & board.black()).0;
    let mut x = white ^ black.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x as usize) & (SIZE - 1)
}

impl Correction {
    pub(super) fn new() -> Correction {
        Correction {
            pawns: vec![0; 2 * SIZE],
        }
    }

    pub(super) fn clear(&mut self) {
        self.pawns.fill(0);
    }

    #[inline]
    fn index(board: &Board, turn: Color) -> usize {
        (turn as usize) * SIZE + pawn_key(board)
    }

    /// The correction, in centipawns, for the side to move `turn` in `board`.
    #[inline]
    pub(super) fn get(&self, board: &Board, turn: Color) -> i32 {
        self.pawns[Self::index(board, turn)] / GRAIN
    }

    /// A node of `depth` scored `score` where its (uncorrected) static evaluation was `eval`.
    #[inline]
    pub(super) fn update(&mut self, board: &Board, turn: Color, depth: i32, score: i32, eval: i32) {
        let entry = &mut self.pawns[Self::index(board, turn)];
        let diff = i64::from(score - eval) * i64::from(GRAIN);
        let weight = i64::from((depth * depth + 2 * depth + 1).min(128));
        let scale = i64::from(WEIGHT_SCALE);
        let moved = (i64::from(*entry) * (scale - weight) + diff * weight) / scale;
        *entry = moved.clamp(-i64::from(MAX), i64::from(MAX)) as i32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Position};

    #[test]
    fn an_entry_moves_toward_the_results_and_stays_bounded() {
        let pos = Chess::default();
        let mut c = Correction::new();
        assert_eq!(c.get(pos.board(), Color::White), 0);
        c.update(pos.board(), Color::White, 4, 100, 80);
        let once = c.get(pos.board(), Color::White);
        assert!(once > 0 && once < 20, "{once}");
        // Black's entry for the same pawns is another one.
        assert_eq!(c.get(pos.board(), Color::Black), 0);
        for _ in 0..100 {
            c.update(pos.board(), Color::White, 20, 5000, 0);
        }
        assert_eq!(c.get(pos.board(), Color::White), MAX / GRAIN);
        for _ in 0..100 {
            c.update(pos.board(), Color::White, 20, -20, 0);
        }
        let settled = c.get(pos.board(), Color::White);
        assert!((-20..=-19).contains(&settled), "{settled}");
        c.clear();
        assert_eq!(c.get(pos.board(), Color::White), 0);
    }
}
