//! Scores and depths in the learn field: ProDeo's layout, and the mark that says a book uses it.
//!
//! PolyGlot's own tools keep learning statistics in an entry's 32-bit learn field
//! ([`super::Learn`]). ProDeo's "Poly" utility, and `polybook analyse`, keep an engine's verdict
//! there instead, big-endian like every Polyglot field:
//!
//! ```text
//! bits 31..16  score: a signed 16-bit value, centipawns from the view of the side that plays the move
//! bits 15..8   depth: the search depth the score came from (0: no score)
//! bits  7..0   learn: one byte, 0 as polybook writes it
//! ```
//!
//! The scores are on the engine's scale ([`crate::score_scale`]): mates are scores beyond
//! ±[`MATE_BOUND_CP`], `MATE_CP - n` for a mate in `n` plies, `-(MATE_CP - n)` for being mated in
//! `n` plies.
//!
//! Nothing in the entries tells one layout from the other, so a book that `polybook analyse`
//! writes starts with one more entry, the **mark** ([`SCORED_MARK`]): key 0, move 0, weight 0 and
//! the learn value `0x70625344` (`pbSD`). No position has the Polyglot key 0, so every reader that
//! probes by key (polyglot, python-chess, ProDeo) passes over it; polybook's reader recognises it,
//! leaves it out of the book's entries and reports [`super::Book::learn_layout`] as
//! [`LearnLayout::Scored`]. A book from elsewhere in ProDeo's layout has no mark: `--learn prodeo`
//! says so where a command reads learn fields.

use std::str::FromStr;

use super::{Entry, Key, RawMove};
use crate::score_scale::{MATE_BOUND_CP, MATE_CP};

/// The learn value of the mark entry: `pbSD` in ASCII.
pub const MARK_LEARN: u32 = 0x7062_5344;

/// The entry at the start of a book that holds scores and depths in its learn fields.
pub const SCORED_MARK: Entry = Entry {
    key: Key(0),
    mv: RawMove(0),
    weight: 0,
    learn: MARK_LEARN,
};

/// How a book's learn fields are to be read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LearnLayout {
    /// PolyGlot's `BookLearn` statistics (games and points), or nothing.
    #[default]
    Polyglot,
    /// ProDeo's layout: score, depth and a learn byte.
    Scored,
}

impl FromStr for LearnLayout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "polyglot" => Ok(LearnLayout::Polyglot),
            "prodeo" | "scored" | "score" => Ok(LearnLayout::Scored),
            _ => Err(format!(
                "unknown learn layout {}: expected polyglot or prodeo",
                crate::text::quote(s)
            )),
        }
    }
}

/// An engine's verdict on a book move, as ProDeo's layout holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveScore {
    /// From the view of the side that plays the move; mates beyond [`MATE_BOUND_CP`].
    pub score: i16,
    /// The depth of the search the score came from; 0 means the move has no score.
    pub depth: u8,
    /// The low byte of the learn field.
    pub learn: u8,
}

impl MoveScore {
    /// Reads a learn field in ProDeo's layout; `None` when its depth is 0 (no score).
    ///
    /// ```
    /// use polybook::book::MoveScore;
    /// let s = MoveScore::from_learn(0xffce_0c00).unwrap();
    /// assert_eq!((s.score, s.depth), (-50, 12));
    /// assert_eq!(s.to_learn(), 0xffce_0c00);
    /// assert!(MoveScore::from_learn(0x0032_0000).is_none());
    /// ```
    pub fn from_learn(learn: u32) -> Option<MoveScore> {
        let s = MoveScore {
            score: (learn >> 16) as u16 as i16,
            depth: (learn >> 8) as u8,
            learn: learn as u8,
        };
        (s.depth > 0).then_some(s)
    }

    /// The learn field in ProDeo's layout.
    pub fn to_learn(self) -> u32 {
        (u32::from(self.score as u16) << 16) | (u32::from(self.depth) << 8) | u32::from(self.learn)
    }

    /// A score of the internal scale (mates as `±(MATE_CP - plies)`) clamped into 16 bits, with a
    /// depth clamped into 8 (at least 1, since 0 means no score).
    pub fn new(score: i32, depth: u32) -> MoveScore {
        MoveScore {
            score: score.clamp(-MATE_CP, MATE_CP) as i16,
            depth: depth.clamp(1, 255) as u8,
            learn: 0,
        }
    }

    /// The score as people read it: `+0.35`, `-1.20`, `#+3` (mate in 3 plies), `#-2` (mated in
    /// 2 plies).
    pub fn text(self) -> String {
        score_text(i32::from(self.score))
    }
}

/// A score of the internal scale as people read it (see [`MoveScore::text`]).
pub fn score_text(score: i32) -> String {
    if score > MATE_BOUND_CP {
        format!("#+{}", MATE_CP - score)
    } else if score < -MATE_BOUND_CP {
        format!("#-{}", MATE_CP + score)
    } else {
        format!("{:+.2}", f64::from(score) / 100.0)
    }
}

/// Whether a book's first entry is the mark.
pub(crate) fn is_mark(entry: &Entry) -> bool {
    *entry == SCORED_MARK
}
