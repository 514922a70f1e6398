//! Changing one position's moves in a book: a move's weight set, a move removed, a move added.
//!
//! The book is read whole, the entries of the position (found by its Zobrist key) are changed,
//! and the whole book is written again in the canonical order ([`super::write_book`]), so the
//! result is always a valid sorted book. A move is matched by what it does in the position, so
//! castling written as `e1g1` or `O-O` finds the entry Polyglot stores as king-takes-rook.

use std::fmt;
use std::path::Path;

use shakmaty::{Chess, Move};

use super::{Book, BookError, Entry, Key, RawMove};

/// One change to a position's moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditAction {
    /// Give a move already in the book a new weight.
    Set(Move, u16),
    /// Take a move out of the book.
    Remove(Move),
    /// Put a move that is not in the book yet into it (learn value 0).
    Add(Move, u16),
}

impl EditAction {
    fn mv(self) -> Move {
        match self {
            EditAction::Set(m, _) | EditAction::Remove(m) | EditAction::Add(m, _) => m,
        }
    }
}

/// What an edit changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EditReport {
    /// The position's key, in hexadecimal.
    pub key: String,
    /// The move, in UCI.
    pub uci: String,
    /// The move's weight before (`None`: it was not in the book).
    pub weight_before: Option<u16>,
    /// The move's weight after (`None`: it is no longer in the book).
    pub weight_after: Option<u16>,
    /// The number of entries of the book before and after.
    pub entries_before: u64,
    pub entries_after: u64,
}

/// Why an edit was refused.
#[derive(Debug)]
pub enum EditError {
    /// `--set` or `--remove` of a move the position does not have in the book.
    NotInBook { uci: String },
    /// `--add` of a move the position already has.
    AlreadyInBook { uci: String, weight: u16 },
    /// A move Polyglot cannot encode (none in standard chess).
    Unencodable { uci: String },
    /// Reading or writing the book failed.
    Book(BookError),
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::NotInBook { uci } => {
                write!(f, "move {uci} is not in the book for this position")
            }
            EditError::AlreadyInBook { uci, weight } => write!(
                f,
                "move {uci} is already in the book for this position (weight {weight}); use --set to change its weight"
            ),
            EditError::Unencodable { uci } => {
                write!(f, "move {uci} cannot be written in a Polyglot book")
            }
            EditError::Book(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for EditError {}

impl From<BookError> for EditError {
    fn from(e: BookError) -> Self {
        EditError::Book(e)
    }
}

/// Applies `action` to the moves of `pos` in `book` and writes the result to `out` (which may be
/// the book's own path: the book was read whole, and the new one appears atomically). Nothing is
/// written when the edit is refused.
pub fn edit_book(
    book: &Book,
    pos: &Chess,
    action: EditAction,
    out: &Path,
) -> Result<EditReport, EditError> {
    let key = Key::of(pos);
    let m = action.mv();
    let uci = m.to_uci(shakmaty::CastlingMode::Standard).to_string();
    let is_move = |e: &Entry| e.key == key && e.mv.to_move(pos) == Some(m);
    let mut entries: Vec<Entry> = book.entries_by_key().collect();
    let before = entries.iter().find(|e| is_move(e)).map(|e| e.weight);
    let after = match (action, before) {
        (EditAction::Set(..) | EditAction::Remove(_), None) => {
            return Err(EditError::NotInBook { uci });
        }
        (EditAction::Add(..), Some(weight)) => {
            return Err(EditError::AlreadyInBook { uci, weight });
        }
        (EditAction::Set(_, weight), Some(_)) => {
            // A move stored twice (a broken book) becomes one entry with the new weight.
            let mut first = true;
            entries.retain_mut(|e| {
                if !is_move(e) {
                    return true;
                }
                e.weight = weight;
                std::mem::replace(&mut first, false)
            });
            Some(weight)
        }
        (EditAction::Remove(_), Some(_)) => {
            entries.retain(|e| !is_move(e));
            None
        }
        (EditAction::Add(_, weight), None) => {
            let mv =
                RawMove::from_move(m).ok_or_else(|| EditError::Unencodable { uci: uci.clone() })?;
            entries.push(Entry {
                key,
                mv,
                weight,
                learn: 0,
            });
            Some(weight)
        }
    };
    super::write_book_in(out, &mut entries, book.learn_layout())?;
    Ok(EditReport {
        key: key.to_string(),
        uci,
        weight_before: before,
        weight_after: after,
        entries_before: book.len() as u64,
        entries_after: entries.len() as u64,
    })
}
