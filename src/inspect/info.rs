//! Statistics of a book: the numbers `polyglot info-book` prints, and a few more.

use shakmaty::Color;

use super::lines::Walk;
use crate::book::Book;

/// What `polybook info` reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BookInfo {
    /// The number of entries.
    pub entries: u64,
    /// The number of distinct keys.
    pub positions: u64,
    /// The largest weight of any entry (0 for an empty book).
    pub max_weight: u16,
    /// The number of lines for white (see [`super::write_lines`]).
    pub lines_white: u64,
    /// The number of lines for black.
    pub lines_black: u64,
    /// Positions of the book with white to move that lie on white's lines.
    pub positions_white: u64,
    /// Positions of the book with black to move that lie on black's lines.
    pub positions_black: u64,
    /// Positions of the book on no line of either colour (entries with move 0 left out, and a
    /// first run of key 0, as polyglot leaves them out).
    pub isolated: u64,
}

/// Computes a book's statistics, walking its lines for both colours as `polyglot info-book` does.
///
/// ```
/// use polybook::book::{Book, Entry, Key, RawMove};
/// use polybook::inspect::book_info;
/// use shakmaty::Chess;
///
/// // One entry: 1. e4 from the start position.
/// let e4 = Entry {
///     key: Key::of(&Chess::default()),
///     mv: RawMove::from_uci_str("e2e4").unwrap(),
///     weight: 1,
///     learn: 0,
/// };
/// let book = Book::from_bytes("e4.bin", e4.to_bytes().to_vec()).unwrap();
/// let info = book_info(&book);
/// assert_eq!((info.entries, info.positions, info.max_weight), (1, 1, 1));
/// // White has one line (1. e4); black has none (no black position in the book).
/// assert_eq!((info.lines_white, info.lines_black), (1, 0));
/// assert_eq!((info.positions_white, info.positions_black, info.isolated), (1, 0, 0));
/// ```
pub fn book_info(book: &Book) -> BookInfo {
    let mut info = BookInfo {
        entries: book.len() as u64,
        ..BookInfo::default()
    };
    // An unsorted book counts as the book a stable sort by key would make of it: every entry is
    // found, each key's entries in stored order.
    let mut previous = None;
    for e in book.entries_by_key() {
        info.max_weight = info.max_weight.max(e.weight);
        if previous != Some(e.key) {
            info.positions += 1;
            previous = Some(e.key);
        }
    }
    // polyglot walks white's lines on the book as read, then removes the entries with move 0 and
    // walks black's lines.
    let white = Walk::new(book, Color::White, false, None)
        .run()
        .expect("a walk without output cannot fail to write");
    let black = Walk::new(book, Color::Black, true, None)
        .run()
        .expect("a walk without output cannot fail to write");
    info.lines_white = white.lines;
    info.lines_black = black.lines;
    // polyglot then counts runs of equal keys among the remaining entries (starting from key 0,
    // so a first run with key 0 is not counted) and the colour each run's first entry was given.
    let mut total = 0;
    let mut last = 0u64;
    for e in book.entries_by_key().filter(|e| e.mv.0 != 0) {
        if e.key.0 == last {
            continue;
        }
        last = e.key.0;
        total += 1;
        if black.book_positions.contains(&last) {
            info.positions_black += 1;
        } else if white.book_positions.contains(&last) {
            info.positions_white += 1;
        }
    }
    info.isolated = total - info.positions_white - info.positions_black;
    info
}
