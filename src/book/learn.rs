//! Book learning as PolyGlot's `BookLearn` does it: each entry's 32-bit learn field counts the
//! games played with the move and the points they scored.
//!
//! **The encoding** (PolyGlot 1.4 and Debian's 2.0.4, `book.c`: `read_entry` reads the field as
//! two 16-bit numbers, `n` then `sum`; `book_learn_move` does `n++; sum += result + 1`): the high
//! 16 bits are the number of games played with the move, the low 16 bits the sum of their
//! results from the view of the side that played it, a loss 0, a draw 1, a win 2. So the score
//! of a move is `sum / (2 × games)`. `tests/it/learn.rs` checks it against PolyGlot itself.
//!
//! **At the 16-bit limits** PolyGlot adds without a check and its counters wrap around to 0. Here,
//! when one more game would not fit (games at 65535, or the sum past 65535, which happens from
//! 32768 won games on), both numbers are halved first, rounding down, as `polyglot make-book`
//! halves the counts of a position: the score survives, the old games weigh half.
//!
//! **Which entry learns**: PolyGlot's rule, the first entry stored under the position's key
//! whose move is the move played (a book with a move stored twice learns in the first).
//! [`Learner`] collects the changes in memory and writes the book again with only the learn
//! fields changed: the same entries in the same order, byte for byte, atomically.
//!
//! ```
//! use polybook::book::{Learn, LearnResult};
//!
//! let learn = Learn::from_raw(0).record(LearnResult::Win).record(LearnResult::Draw);
//! assert_eq!((learn.games, learn.score_sum), (2, 3));
//! assert_eq!(learn.to_raw(), 0x0002_0003);
//! assert_eq!(learn.score(), Some(0.75));
//! assert_eq!(learn.to_string(), "2g 75%");
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::Path;

use shakmaty::{Color, KnownOutcome};

use super::{Book, BookError, ENTRY_SIZE, Entry, Key, RawMove};
use crate::atomic::AtomicFile;

/// A decoded learn field: games played with the move and the points they scored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Learn {
    /// Games played with the move (the high 16 bits).
    pub games: u16,
    /// The sum of their results from the mover's view: loss 0, draw 1, win 2 (the low 16 bits).
    pub score_sum: u16,
}

/// One game's result from the view of the side whose move learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LearnResult {
    Loss,
    Draw,
    Win,
}

impl LearnResult {
    /// Points as the learn field counts them: loss 0, draw 1, win 2.
    pub fn points(self) -> u16 {
        match self {
            LearnResult::Loss => 0,
            LearnResult::Draw => 1,
            LearnResult::Win => 2,
        }
    }

    /// The result of points 0, 1 or 2; `None` for anything else.
    pub fn from_points(points: u8) -> Option<LearnResult> {
        match points {
            0 => Some(LearnResult::Loss),
            1 => Some(LearnResult::Draw),
            2 => Some(LearnResult::Win),
            _ => None,
        }
    }

    /// A finished game's result from `side`'s view.
    pub fn for_side(outcome: KnownOutcome, side: Color) -> LearnResult {
        match outcome {
            KnownOutcome::Draw => LearnResult::Draw,
            KnownOutcome::Decisive { winner } if winner == side => LearnResult::Win,
            KnownOutcome::Decisive { .. } => LearnResult::Loss,
        }
    }
}

impl Learn {
    /// Decodes a learn field: games in the high 16 bits, the sum of results in the low 16.
    pub fn from_raw(raw: u32) -> Learn {
        Learn {
            games: (raw >> 16) as u16,
            score_sum: raw as u16,
        }
    }

    /// Encodes it back into the 32-bit field.
    pub fn to_raw(self) -> u32 {
        (u32::from(self.games) << 16) | u32::from(self.score_sum)
    }

    /// One more game with `result`; both numbers halved first when it would not fit in 16 bits
    /// (PolyGlot wraps around there; see the module's overview).
    #[must_use]
    pub fn record(self, result: LearnResult) -> Learn {
        let points = result.points();
        let mut learn = self;
        if learn.games == u16::MAX || learn.score_sum > u16::MAX - points {
            learn = Learn {
                games: learn.games / 2,
                score_sum: learn.score_sum / 2,
            };
        }
        Learn {
            games: learn.games + 1,
            score_sum: learn.score_sum + points,
        }
    }

    /// The move's score from 0 (every game lost) to 1 (every game won): `sum / (2 × games)`;
    /// `None` before its first game. A field not written by learning (a sum above two per
    /// game) still gives its ratio, capped at 1.
    pub fn score(self) -> Option<f64> {
        (self.games > 0)
            .then(|| (f64::from(self.score_sum) / (2.0 * f64::from(self.games))).min(1.0))
    }
}

impl fmt::Display for Learn {
    /// `12g 58%` (games, score rounded to a percent), or `-` before the first game.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.score() {
            Some(score) => write!(f, "{}g {:.0}%", self.games, score * 100.0),
            None => f.write_str("-"),
        }
    }
}

/// One entry whose learn field a [`Learner`] changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LearnChange {
    /// The entry as it is in the book (its old learn field).
    pub before: Entry,
    /// The new learn value.
    pub after: Learn,
}

/// The learning of one book: games recorded in memory, then written as a new book.
pub struct Learner<'a> {
    book: &'a Book,
    /// The changed entries by index in the file.
    changes: BTreeMap<usize, LearnChange>,
    /// Moves recorded that found no entry (out of the book).
    missed: u64,
}

impl<'a> Learner<'a> {
    pub fn new(book: &'a Book) -> Learner<'a> {
        Learner {
            book,
            changes: BTreeMap::new(),
            missed: 0,
        }
    }

    /// Records a game's `result` for move `mv` in the position of `key`, in the first entry of
    /// that key and move (PolyGlot's rule). Returns whether the book has the move.
    pub fn record(&mut self, key: Key, mv: RawMove, result: LearnResult) -> bool {
        let Some((index, entry)) = self.book.lookup_indexed(key).find(|(_, e)| e.mv == mv) else {
            self.missed += 1;
            return false;
        };
        let change = self.changes.entry(index).or_insert(LearnChange {
            before: entry,
            after: Learn::from_raw(entry.learn),
        });
        change.after = change.after.record(result);
        true
    }

    /// The entries changed so far, in file order (an entry whose learn value came back to what
    /// it was, through halving, is still listed).
    pub fn changes(&self) -> impl ExactSizeIterator<Item = &LearnChange> {
        self.changes.values()
    }

    /// The number of recorded moves that were not in the book.
    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// Writes the book with its new learn fields to `out` (which may be the book's own path: the
    /// book was read whole and the new one appears atomically). Everything else stays byte for
    /// byte: the same entries in the same order.
    pub fn write(&self, out: &Path) -> Result<(), BookError> {
        if out.is_dir() {
            return Err(BookError::IsDirectory {
                path: out.to_path_buf(),
            });
        }
        let mut bytes = self.book.data().to_vec();
        for (&index, change) in &self.changes {
            // The learn field is the last 4 bytes of the 16-byte record, big-endian.
            let at = index * ENTRY_SIZE + 12;
            bytes[at..at + 4].copy_from_slice(&change.after.to_raw().to_be_bytes());
        }
        let write_error = |source| BookError::Write {
            path: out.to_path_buf(),
            source,
        };
        let mut file = AtomicFile::create(out).map_err(write_error)?;
        file.write_all(&bytes).map_err(write_error)?;
        file.commit(true).map_err(write_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_is_games_high_and_points_low() {
        let learn = Learn::from_raw(0x000c_000e);
        assert_eq!((learn.games, learn.score_sum), (12, 14));
        assert_eq!(learn.to_string(), "12g 58%");
        assert_eq!(Learn::from_raw(0).to_string(), "-");
        assert_eq!(Learn::from_raw(0).score(), None);
        let learn = learn.record(LearnResult::Loss);
        assert_eq!(learn.to_raw(), 0x000d_000e);
    }

    #[test]
    fn full_counters_are_halved_before_one_more_game() {
        let full = Learn {
            games: u16::MAX,
            score_sum: 40_000,
        };
        assert_eq!(
            full.record(LearnResult::Win),
            Learn {
                games: 32_768,
                score_sum: 20_002
            }
        );
        // The sum fills first when the move keeps winning.
        let winning = Learn {
            games: 32_767,
            score_sum: 65_534,
        };
        assert_eq!(
            winning.record(LearnResult::Win),
            Learn {
                games: 16_384,
                score_sum: 32_769
            }
        );
        assert_eq!(
            winning.record(LearnResult::Draw),
            Learn {
                games: 32_768,
                score_sum: 65_535
            }
        );
    }

    #[test]
    fn results_from_each_side() {
        let white_won = KnownOutcome::Decisive {
            winner: Color::White,
        };
        assert_eq!(
            LearnResult::for_side(white_won, Color::White),
            LearnResult::Win
        );
        assert_eq!(
            LearnResult::for_side(white_won, Color::Black),
            LearnResult::Loss
        );
        assert_eq!(
            LearnResult::for_side(KnownOutcome::Draw, Color::Black),
            LearnResult::Draw
        );
    }
}
