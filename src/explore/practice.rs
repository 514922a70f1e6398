//! Practising a repertoire book in the page: `polybook explore REP.bin --practice white|black`.
//!
//! The page plays the opponent's book moves and the user plays theirs on the board; a move the
//! book does not list for the user's side is a mistake (the page shows the book's moves); a line
//! ends where the book has no move for the side to move. What the server keeps is one card per
//! position where the user must move, scheduled by SM-2 ([`review`]), in a JSON progress file
//! beside the book ([`Progress`]), written whole after every graded answer.
//!
//! **The opponent's move** ([`Practice::opponent_move`]), among the book's moves of the position:
//!
//! 1. the moves with a weight above 0 (every move when none has);
//! 2. of those, the ones whose line leads (through the book, up to [`WALK_LIMIT`] positions
//!    ahead) to a position of the user's that is due: never answered, or due today or earlier.
//!    If none does, all of them;
//! 3. of those, the ones whose least practised position ahead has been answered the fewest
//!    times;
//! 4. one of those at random, in proportion to its book weight (equal chances when all are 0).
//!
//! **Grading** ([`QUALITY_RIGHT`], [`QUALITY_WRONG`]): the first answer in a position of a line
//! is graded, 5 when it is a book move and 1 when it is not (SM-2's "incorrect response; the
//! correct one remembered" once the page has shown the book's moves); a retry after a mistake is
//! checked but not graded again.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move, Position};
use thiserror::Error;

use crate::atomic::AtomicFile;
use crate::book::{Book, Key};
use crate::text::{quote, reason};

/// The SM-2 quality of a book move played at the first try.
pub const QUALITY_RIGHT: u8 = 5;
/// The SM-2 quality of a move the book does not list.
pub const QUALITY_WRONG: u8 = 1;
/// The most positions a walk ahead through the book visits (a big book's lines are followed
/// only that far when the opponent's move is chosen and the due positions counted).
pub const WALK_LIMIT: usize = 20_000;

/// The ease factor of a new card, in hundredths (SM-2's 2.5).
const EASE_START: u32 = 250;
/// The lowest ease factor, in hundredths (SM-2's 1.3).
const EASE_MIN: u32 = 130;

/// One position's schedule (SM-2's item), as the progress file keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    /// The ease factor in hundredths (250 is 2.5): every value SM-2 gives is a multiple of 0.02,
    /// so the arithmetic is exact in integers.
    pub ease: u32,
    /// The days until the next review.
    pub interval: u32,
    /// The right answers in a row (SM-2's n).
    pub repetitions: u32,
    /// The day (days since 1970-01-01, UTC) the position is due.
    pub due: i64,
    /// Every graded answer.
    pub reviews: u32,
    /// The wrong ones.
    pub lapses: u32,
    /// The day of the latest graded answer.
    pub last: i64,
}

impl Card {
    /// A card never answered: SM-2's start (ease 2.5, no repetitions), due at once.
    pub fn new(today: i64) -> Card {
        Card {
            ease: EASE_START,
            interval: 0,
            repetitions: 0,
            due: today,
            reviews: 0,
            lapses: 0,
            last: today,
        }
    }
}

/// SM-2 (P. Woźniak, 1990, in the form of its usual pseudo-code): an answer of `quality` (0 to
/// 5) on `today`.
///
/// - quality 3 or more: the interval is 1 day after the first right answer in a row, 6 after the
///   second, then the previous interval times the ease factor (before this answer's change),
///   rounded to the nearest day (halves up); the repetitions count up;
/// - under 3: the repetitions start again from 0 and the interval is 1 day;
/// - either way the ease factor becomes EF + (0.1 − (5 − q) × (0.08 + (5 − q) × 0.02)), never
///   below 1.3; the card is due `today` + the interval.
pub fn review(card: &Card, quality: u8, today: i64) -> Card {
    let q = u32::from(quality.min(5));
    let mut next = card.clone();
    if q >= 3 {
        next.interval = match card.repetitions {
            0 => 1,
            1 => 6,
            _ => (card.interval * card.ease + 50) / 100,
        };
        next.repetitions += 1;
    } else {
        next.repetitions = 0;
        next.interval = 1;
        next.lapses += 1;
    }
    // 100 × (0.1 − d × (0.08 + d × 0.02)) = 10 − d × (8 + 2d), with d = 5 − q.
    let d = 5 - q as i64;
    let change = 10 - d * (8 + 2 * d);
    next.ease = (i64::from(card.ease) + change).max(i64::from(EASE_MIN)) as u32;
    next.reviews += 1;
    next.due = today + i64::from(next.interval);
    next.last = today;
    next
}

/// The day of a Unix time in seconds (UTC).
pub fn day_of(unix_seconds: u64) -> i64 {
    (unix_seconds / 86_400) as i64
}

/// Today (UTC), as a day count since 1970-01-01.
pub fn today() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    day_of(secs)
}

/// `YYYY-MM-DD` of a day count since 1970-01-01.
pub fn date_text(day: i64) -> String {
    let (y, m, d) = crate::text::civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The day count of `YYYY-MM-DD` (H. Hinnant's `days_from_civil`), or `None`.
pub fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let day = era * 146_097 + doe - 719_468;
    // 2026-02-31 is refused: it would be read as a day of March.
    (date_text(day) == text).then_some(day)
}

/// The progress file's text: `{"format":"polybook practice","version":1,"positions":{KEY:CARD…}}`,
/// KEY the position's Polyglot key in 16 hex digits, CARD `{"fen","ease","interval",
/// "repetitions","due","reviews","lapses","last"}` (`ease` as SM-2 writes it, 2.5; dates
/// `YYYY-MM-DD`, UTC).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProgressJson {
    format: String,
    version: u32,
    positions: BTreeMap<String, CardJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CardJson {
    fen: String,
    ease: f64,
    interval: u32,
    repetitions: u32,
    due: String,
    reviews: u32,
    lapses: u32,
    last: String,
}

const FORMAT: &str = "polybook practice";

/// Why the progress file cannot be used (the command stops with this line: it is never written
/// over).
#[derive(Debug, Error)]
pub enum ProgressError {
    #[error("cannot read practice progress {}: {why}", quote(&.path.display().to_string()))]
    Read { path: PathBuf, why: String },
    #[error(
        "practice progress {} is damaged ({why}): it is left as it is; move it away to start afresh, or give another --progress",
        quote(&.path.display().to_string())
    )]
    Damaged { path: PathBuf, why: String },
    #[error("cannot write practice progress {}: {why}", quote(&.path.display().to_string()))]
    Write { path: PathBuf, why: String },
}

/// The cards, by position key, and the FEN each was made for.
#[derive(Default)]
pub struct Progress {
    cards: BTreeMap<u64, (String, Card)>,
}

impl Progress {
    /// Reads `path`; no file there is no progress yet.
    pub fn load(path: &Path) -> Result<Progress, ProgressError> {
        let text = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Progress::default()),
            Err(e) => {
                return Err(ProgressError::Read {
                    path: path.to_path_buf(),
                    why: reason(&e),
                });
            }
        };
        let damaged = |why: String| ProgressError::Damaged {
            path: path.to_path_buf(),
            why,
        };
        let json: ProgressJson =
            serde_json::from_slice(&text).map_err(|e| damaged(e.to_string()))?;
        if json.format != FORMAT || json.version != 1 {
            return Err(damaged(format!(
                "not {FORMAT} version 1 but {} version {}",
                quote(&json.format),
                json.version
            )));
        }
        let mut cards = BTreeMap::new();
        for (key, c) in json.positions {
            let k = (key.len() == 16)
                .then(|| u64::from_str_radix(&key, 16).ok())
                .flatten()
                .ok_or_else(|| damaged(format!("{} is not a key in 16 hex digits", quote(&key))))?;
            let date = |d: &str| {
                parse_date(d).ok_or_else(|| {
                    damaged(format!("{}: {} is not a date YYYY-MM-DD", key, quote(d)))
                })
            };
            let ease = (c.ease * 100.0).round();
            if !(f64::from(EASE_MIN)..=100_000.0).contains(&ease) {
                return Err(damaged(format!("{key}: ease {} is below 1.3", c.ease)));
            }
            let card = Card {
                ease: ease as u32,
                interval: c.interval,
                repetitions: c.repetitions,
                due: date(&c.due)?,
                reviews: c.reviews,
                lapses: c.lapses,
                last: date(&c.last)?,
            };
            cards.insert(k, (c.fen, card));
        }
        Ok(Progress { cards })
    }

    /// The text written to the file.
    fn to_json(&self) -> String {
        let positions = self
            .cards
            .iter()
            .map(|(key, (fen, c))| {
                (
                    format!("{key:016x}"),
                    CardJson {
                        fen: fen.clone(),
                        ease: f64::from(c.ease) / 100.0,
                        interval: c.interval,
                        repetitions: c.repetitions,
                        due: date_text(c.due),
                        reviews: c.reviews,
                        lapses: c.lapses,
                        last: date_text(c.last),
                    },
                )
            })
            .collect();
        let json = ProgressJson {
            format: FORMAT.to_string(),
            version: 1,
            positions,
        };
        let mut text = serde_json::to_string_pretty(&json).expect("serializing cannot fail");
        text.push('\n');
        text
    }

    /// Writes the progress to `path` whole: a temporary file beside it, flushed to the disk,
    /// renamed onto it. A crash leaves the old file or the new one, never a part.
    pub fn save(&self, path: &Path) -> Result<(), ProgressError> {
        let write = || -> std::io::Result<()> {
            let mut file = AtomicFile::create(path)?;
            file.write_all(self.to_json().as_bytes())?;
            file.commit(true)
        };
        write().map_err(|e| ProgressError::Write {
            path: path.to_path_buf(),
            why: reason(&e),
        })
    }

    /// The card of the position with `key`, if it has been answered.
    pub fn card(&self, key: u64) -> Option<&Card> {
        self.cards.get(&key).map(|(_, c)| c)
    }

    /// How many positions have a card.
    pub fn len(&self) -> usize {
        self.cards.len()
    }

    /// Whether no position has a card.
    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }
}

/// A book move of a position, for the page: its UCI (castling as the king's two-square step, as
/// books write it), SAN and weight.
#[derive(Clone, Debug, Serialize)]
pub struct BookMoveJson {
    pub uci: String,
    pub san: String,
    pub weight: u16,
}

/// The book's legal moves in `pos` with their weights.
fn book_moves(book: &Book, pos: &Chess) -> Vec<(Move, u16)> {
    book.probe(pos)
        .legal
        .into_iter()
        .map(|m| (m.mv, m.entry.weight))
        .collect()
}

fn move_json(pos: &Chess, mv: &Move, weight: u16) -> BookMoveJson {
    BookMoveJson {
        uci: mv.to_uci(CastlingMode::Standard).to_string(),
        san: San::from_move(pos, *mv).to_string(),
        weight,
    }
}

/// What lies ahead of a position through the book: the user's positions, how many are due
/// (never answered, or due by today), how many were never answered, and the fewest answers of
/// any of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Ahead {
    /// The user's positions reached (at most [`WALK_LIMIT`] positions are visited).
    pub positions: usize,
    /// Of those, the ones due today or earlier, never-answered ones included.
    pub due: usize,
    /// Of those, the ones never answered.
    pub new: usize,
    /// The fewest graded answers of any of them (`None`: there is none).
    #[serde(skip)]
    pub fewest: Option<u32>,
}

/// A practice session's settings and progress: the side the user plays, the book (the first one
/// given to `explore`), the progress file and its cards.
pub struct Practice {
    /// The side the user plays.
    pub color: Color,
    /// The progress file.
    pub path: PathBuf,
    progress: Mutex<Progress>,
    /// Today as a day count (the system clock; tests give their own).
    clock: Box<dyn Fn() -> i64 + Send + Sync>,
}

impl Practice {
    /// Practice as `color`, with the progress read from `path` (none yet when there is no file).
    pub fn open(color: Color, path: PathBuf) -> Result<Practice, ProgressError> {
        Practice::with_clock(color, path, Box::new(today))
    }

    /// [`Practice::open`] with `clock` for today (a day count since 1970-01-01).
    pub fn with_clock(
        color: Color,
        path: PathBuf,
        clock: Box<dyn Fn() -> i64 + Send + Sync>,
    ) -> Result<Practice, ProgressError> {
        let progress = Progress::load(&path)?;
        Ok(Practice {
            color,
            path,
            progress: Mutex::new(progress),
            clock,
        })
    }

    /// The default progress file of `book`: `BOOK.practice.json` beside it.
    pub fn default_path(book: &Path) -> PathBuf {
        let mut name = book.as_os_str().to_os_string();
        name.push(".practice.json");
        PathBuf::from(name)
    }

    /// Today, by the practice's clock.
    pub fn today(&self) -> i64 {
        (self.clock)()
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The card of the position `pos`, if it has been answered.
    pub fn card(&self, pos: &Chess) -> Option<Card> {
        self.progress().card(Key::of(pos).0).cloned()
    }

    /// What lies ahead of `pos` through `book` (the position itself included).
    pub fn ahead(&self, book: &Book, pos: &Chess) -> Ahead {
        let progress = self.progress();
        ahead(book, pos, self.color, &progress, self.today())
    }

    /// The opponent's move in `pos` by the rule of the module's documentation, `None` when the
    /// book has none; `pick` draws a number in `0..n` for the weighted choice.
    pub fn opponent_move(
        &self,
        book: &Book,
        pos: &Chess,
        pick: &mut dyn FnMut(u64) -> u64,
    ) -> Option<BookMoveJson> {
        let moves = book_moves(book, pos);
        let mut candidates: Vec<(Move, u16)> =
            moves.iter().filter(|(_, w)| *w > 0).cloned().collect();
        if candidates.is_empty() {
            candidates = moves;
        }
        if candidates.is_empty() {
            return None;
        }
        let aheads: Vec<Ahead> = {
            let progress = self.progress();
            let today = self.today();
            candidates
                .iter()
                .map(|(mv, _)| {
                    let mut after = pos.clone();
                    after.play_unchecked(*mv);
                    ahead(book, &after, self.color, &progress, today)
                })
                .collect()
        };
        let mut kept: Vec<usize> = (0..candidates.len()).collect();
        if kept.iter().any(|&i| aheads[i].due > 0) {
            kept.retain(|&i| aheads[i].due > 0);
        }
        let fewest = kept.iter().filter_map(|&i| aheads[i].fewest).min();
        if fewest.is_some() {
            kept.retain(|&i| aheads[i].fewest == fewest);
        }
        let total: u64 = kept.iter().map(|&i| u64::from(candidates[i].1)).sum();
        let chosen = if total == 0 {
            kept[pick(kept.len() as u64) as usize]
        } else {
            let mut at = pick(total);
            *kept
                .iter()
                .find(|&&i| {
                    let w = u64::from(candidates[i].1);
                    if at < w {
                        true
                    } else {
                        at -= w;
                        false
                    }
                })
                .expect("the draw is below the total")
        };
        let (mv, weight) = &candidates[chosen];
        Some(move_json(pos, mv, *weight))
    }

    /// Grades `mv`, the user's move in `pos` (which must be the user's to move, with book moves):
    /// whether the book lists it, and the book's moves. A graded answer (`graded`) updates the
    /// position's card by [`review`] and writes the progress file before this returns.
    pub fn answer(
        &self,
        book: &Book,
        pos: &Chess,
        mv: &Move,
        graded: bool,
    ) -> Result<Answer, ProgressError> {
        let moves = book_moves(book, pos);
        let right = moves.iter().any(|(m, _)| m == mv);
        let key = Key::of(pos).0;
        let mut progress = self.progress();
        let before = progress.card(key).cloned();
        let card = if graded {
            let today = self.today();
            let old = before.clone().unwrap_or_else(|| Card::new(today));
            let quality = if right { QUALITY_RIGHT } else { QUALITY_WRONG };
            let new = review(&old, quality, today);
            progress
                .cards
                .insert(key, (crate::inspect::fen_string(pos), new.clone()));
            if let Err(e) = progress.save(&self.path) {
                // The answer is not kept in memory either: what is shown is what is on disk.
                match before {
                    Some(b) => {
                        progress
                            .cards
                            .insert(key, (crate::inspect::fen_string(pos), b));
                    }
                    None => {
                        progress.cards.remove(&key);
                    }
                }
                return Err(e);
            }
            Some(new)
        } else {
            before
        };
        Ok(Answer {
            right,
            graded,
            book: moves.iter().map(|(m, w)| move_json(pos, m, *w)).collect(),
            card,
        })
    }

    /// The number of positions with a card.
    pub fn answered(&self) -> usize {
        self.progress().len()
    }
}

/// [`Practice::answer`]'s result.
pub struct Answer {
    /// The book lists the move.
    pub right: bool,
    /// The answer was graded (the card changed and the file was written).
    pub graded: bool,
    /// The book's moves in the position.
    pub book: Vec<BookMoveJson>,
    /// The position's card after the answer (`None`: never graded).
    pub card: Option<Card>,
}

/// What lies ahead of `pos` (included) through `book`, for the user playing `color`: every book
/// move followed, each position once (by key), up to [`WALK_LIMIT`] positions.
fn ahead(book: &Book, pos: &Chess, color: Color, progress: &Progress, today: i64) -> Ahead {
    let mut seen = HashSet::new();
    let mut stack = vec![pos.clone()];
    let mut found = Ahead::default();
    while let Some(pos) = stack.pop() {
        if seen.len() >= WALK_LIMIT {
            break;
        }
        let key = Key::of(&pos).0;
        if !seen.insert(key) {
            continue;
        }
        let moves = book_moves(book, &pos);
        if moves.is_empty() {
            continue;
        }
        if pos.turn() == color {
            found.positions += 1;
            let card = progress.card(key);
            match card {
                None => {
                    found.new += 1;
                    found.due += 1;
                }
                Some(c) if c.due <= today => found.due += 1,
                Some(_) => {}
            }
            let reviews = card.map_or(0, |c| c.reviews);
            found.fewest = Some(found.fewest.map_or(reviews, |f| f.min(reviews)));
        }
        for (mv, _) in moves {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            stack.push(after);
        }
    }
    found
}

/// The UCI move `text` in `pos`, if it is legal there (castling either way: e1g1 or e1h1).
pub fn legal_move(pos: &Chess, text: &str) -> Option<Move> {
    let uci: UciMove = text.parse().ok()?;
    uci.to_move(pos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_days_since_1970() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(20_420), "2025-11-28");
        assert_eq!(parse_date("2025-11-28"), Some(20_420));
        assert_eq!(parse_date("2024-02-29"), Some(19_782));
        for day in [-1000, 0, 59, 60, 11_016, 20_000, 40_000] {
            assert_eq!(parse_date(&date_text(day)), Some(day), "{day}");
        }
        for bad in ["2025-02-30", "2025-13-01", "25-01-01", "2025-1-01", "x"] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_ease_never_falls_below_1_3() {
        let mut card = Card::new(0);
        for day in 0..10 {
            card = review(&card, 0, day);
        }
        assert_eq!((card.ease, card.interval, card.repetitions), (130, 1, 0));
        assert_eq!((card.reviews, card.lapses), (10, 10));
    }
}
