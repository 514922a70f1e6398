//! Correction history: how far the static evaluation has been from the search's results in
//! positions with the same pawns, or the same placement of one side's pieces, learnt during the
//! search and added to the evaluation.
//!
//! An evaluation is wrong in ways that repeat: a pawn structure (or a placement of one side's
//! pieces) it misjudges is misjudged in every position of the tree that keeps it. After each node
//! whose result says something about its static evaluation (an exact score, or a bound on the
//! right side of it), the difference moves the entries of (side to move, pawn structure) and
//! (side to move, each colour's other pieces) toward it, by a weight growing with the depth. The
//! corrected evaluation is what the pruning steps compare with their margins. (The technique is
//! the field's, e.g. Weiss and Stockfish; the sizes here are the common ones.)

use shakmaty::{Board, Color};

use super::parameters::CORRECTION_MAX;

/// Entries per side to move (a power of two).
const SIZE: usize = 16_384;
/// An entry counts in 1/GRAIN of a centipawn.
const GRAIN: i32 = 256;
/// Weights are out of WEIGHT_SCALE.
const WEIGHT_SCALE: i32 = 256;
/// No entry corrects by more than this, in GRAIN units.
#[inline(always)]
fn max() -> i32 {
    GRAIN * CORRECTION_MAX.get()
}

/// The tables, one set per search thread, kept across searches like the move histories: by the
/// side to move and its pawn structure, and by the side to move and each colour's other pieces.
pub(super) struct Correction {
    pawns: Vec<i32>,
    /// `[turn][colour of the pieces]`, each SIZE entries.
    pieces: Vec<i32>,
}

/// splitmix64's finaliser, to an index of a table.
#[inline]
fn mix(mut x: u64) -> usize {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x as usize) & (SIZE - 1)
}

/// The pawn structure's key: both sides' pawns.
#[inline]
fn pawn_key(board: &Board) -> usize {
    let pawns = board.pawns();
    let white = (pawns & board.white()).0;
    let black = (pawns & board.black()).0;
    mix(white ^ black.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The key of one colour's pieces other than pawns (king included).
#[inline]
fn pieces_key(board: &Board, colour: Color) -> usize {
    let mine = board.by_color(colour);
    let x = (board.knights() & mine)
        .0
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (board.bishops() & mine)
            .0
            .wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ (board.rooks() & mine).0.wrapping_mul(0x1656_67B1_9E37_79F9)
        ^ (board.queens() & mine)
            .0
            .wrapping_mul(0xD6E8_FEB8_6659_FD93)
        ^ (board.kings() & mine).0.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    mix(x)
}

/// Moves `entry` toward `diff` (in GRAIN units) by `weight` out of WEIGHT_SCALE, within ±`max()`.
#[inline]
fn learn(entry: &mut i32, diff: i64, weight: i64) {
    let scale = i64::from(WEIGHT_SCALE);
    let moved = (i64::from(*entry) * (scale - weight) + diff * weight) / scale;
    let max = i64::from(max());
    *entry = moved.clamp(-max, max) as i32;
}

impl Correction {
    pub(super) fn new() -> Correction {
        Correction {
            pawns: vec![0; 2 * SIZE],
            pieces: vec![0; 4 * SIZE],
        }
    }

    pub(super) fn clear(&mut self) {
        self.pawns.fill(0);
        self.pieces.fill(0);
    }

    /// The entries of `board` with `turn` to move: the pawns', White's pieces', Black's pieces'.
    #[inline]
    fn indices(board: &Board, turn: Color) -> [usize; 3] {
        let t = turn as usize;
        [
            t * SIZE + pawn_key(board),
            (2 * t) * SIZE + pieces_key(board, Color::White),
            (2 * t + 1) * SIZE + pieces_key(board, Color::Black),
        ]
    }

    /// The correction, in centipawns, for the side to move `turn` in `board`: the pawns' entry
    /// weighs a half, each colour's pieces' a quarter.
    #[inline]
    pub(super) fn get(&self, board: &Board, turn: Color) -> i32 {
        let [p, w, b] = Self::indices(board, turn);
        (2 * self.pawns[p] + self.pieces[w] + self.pieces[b]) / (4 * GRAIN)
    }

    /// A node of `depth` scored `score` where its (uncorrected) static evaluation was `eval`.
    #[inline]
    pub(super) fn update(&mut self, board: &Board, turn: Color, depth: i32, score: i32, eval: i32) {
        let [p, w, b] = Self::indices(board, turn);
        let diff = i64::from(score - eval) * i64::from(GRAIN);
        let weight = i64::from((depth * depth + 2 * depth + 1).min(128));
        learn(&mut self.pawns[p], diff, weight);
        learn(&mut self.pieces[w], diff, weight);
        learn(&mut self.pieces[b], diff, weight);
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
        assert_eq!(c.get(pos.board(), Color::White), CORRECTION_MAX.get());
        for _ in 0..100 {
            c.update(pos.board(), Color::White, 20, -20, 0);
        }
        let settled = c.get(pos.board(), Color::White);
        assert!((-20..=-19).contains(&settled), "{settled}");
        c.clear();
        assert_eq!(c.get(pos.board(), Color::White), 0);
    }
}
