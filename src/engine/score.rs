//! Scores: the search's centipawn/mate scale, its bounds, and the [`Score`] people and GUIs see.
//!
//! Inside the search a score is an `i32` in centipawns from the side to move's point of view
//! (the scale of [`crate::score_scale`]). A mate is `MATE_CP - ply` (the side to move mates at
//! that ply from the root) or `-MATE_CP + ply` (it is mated there), so that a nearer mate scores
//! higher; everything beyond [`MATE_BOUND_CP`] is a mate.
//! The transposition table stores mates counted from the node instead of the root (see
//! [`to_tt`]), so that they stay right when the position comes again at another ply.

/// The ends of the centipawn scale, shared with scored books: [`MATE_CP`] is the score of
/// delivering mate right now (at ply 0), scores beyond [`MATE_BOUND_CP`] are mates.
pub use crate::score_scale::{MATE_BOUND_CP, MATE_CP};
/// More than any score: the bound of a full window.
pub const INF: i32 = MATE_CP + 1;
/// The deepest ply the search goes to (extensions included).
pub const MAX_PLY: usize = 128;

/// Scores as stored in the transposition table.
pub type Score16 = i16;

/// The score of mating at `ply` (from the side to move at the root of the count).
#[inline]
pub fn mate_in(ply: usize) -> i32 {
    MATE_CP - ply as i32
}

/// The score of being mated at `ply`.
#[inline]
pub fn mated_in(ply: usize) -> i32 {
    -MATE_CP + ply as i32
}

/// Is this score a mate, for either side?
#[inline]
pub fn is_mate(score: i32) -> bool {
    score.abs() >= MATE_BOUND_CP
}

/// A mate score counts plies from the root; in the table it must count from the node itself.
#[inline]
pub fn to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND_CP {
        score + ply as i32
    } else if score <= -MATE_BOUND_CP {
        score - ply as i32
    } else {
        score
    }
}

/// The inverse of [`to_tt`]: back from the node to the root's count.
#[inline]
pub fn from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND_CP {
        score - ply as i32
    } else if score <= -MATE_BOUND_CP {
        score + ply as i32
    } else {
        score
    }
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
    /// The score of the search's internal scale, mates turned into moves.
    pub fn from_internal(score: i32) -> Score {
        if score >= MATE_BOUND_CP {
            Score::Mate((MATE_CP - score + 1) / 2)
        } else if score <= -MATE_BOUND_CP {
            Score::Mate(-(MATE_CP + score) / 2)
        } else {
            Score::Cp(score)
        }
    }

    /// The score in pawns as people read it, and as cutechess writes it in PGN comments:
    /// `+0.35`, `-1.20`, `+M3` (mate in 3), `-M2` (mated in 2).
    ///
    /// ```
    /// use polybook::engine::Score;
    /// assert_eq!(Score::Cp(35).text(), "+0.35");
    /// assert_eq!(Score::Mate(-2).text(), "-M2");
    /// ```
    pub fn text(self) -> String {
        match self {
            Score::Cp(cp) => format!("{:+.2}", f64::from(cp) / 100.0),
            Score::Mate(n) if n > 0 => format!("+M{n}"),
            Score::Mate(n) => format!("-M{}", -n),
        }
    }
}

/// The UCI form: `cp 35`, `mate -2`.
impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_in_moves() {
        assert_eq!(Score::from_internal(MATE_CP - 1), Score::Mate(1));
        assert_eq!(Score::from_internal(MATE_CP - 3), Score::Mate(2));
        assert_eq!(Score::from_internal(-MATE_CP + 2), Score::Mate(-1));
        assert_eq!(Score::from_internal(15), Score::Cp(15));
    }

    #[test]
    fn table_scores_count_from_the_node() {
        // Mate at ply 9 from the root, found at ply 5: 4 plies from the node.
        assert_eq!(to_tt(mate_in(9), 5), mate_in(4));
        assert_eq!(from_tt(mate_in(4), 5), mate_in(9));
        assert_eq!(from_tt(to_tt(mated_in(7), 3), 3), mated_in(7));
        assert_eq!(to_tt(120, 30), 120);
    }

    #[test]
    fn text_for_people() {
        assert_eq!(Score::Cp(35).text(), "+0.35");
        assert_eq!(Score::Cp(-120).text(), "-1.20");
        assert_eq!(Score::Cp(0).text(), "+0.00");
        assert_eq!(Score::Mate(3).text(), "+M3");
        assert_eq!(Score::Mate(-2).text(), "-M2");
        assert_eq!(Score::Mate(0).text(), "-M0");
    }
}
