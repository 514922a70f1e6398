//! Several books in priority order, first hit wins.
//!
//! A personal book in front of a big one: the books are tried in order, and the first book that
//! has a move that *counts* for the position (see the share rule in `choose.rs`) gives the move.
//! The share of that move is computed within the book that gave it, as if it were the only book;
//! the books after it are not looked at. This is lichess-bot's rule for its list of books.
//!
//! ```
//! use polybook::book::{Book, Books};
//!
//! let mut books = Books::new();
//! books.push("mine.bin", Book::from_bytes("mine.bin", Vec::new()).unwrap());
//! assert_eq!(books.len(), 1);
//! assert_eq!(books.name(0), "mine.bin");
//! // A list of paths as the engine's `BookFile` takes it: `;` between paths, spaces trimmed.
//! let paths: Vec<&str> = polybook::book::book_paths(" a.bin ; ;b.bin").collect();
//! assert_eq!(paths, ["a.bin", "b.bin"]);
//! ```

use std::sync::Arc;

use rand::Rng;
use shakmaty::Position;

use super::{Book, ChooseOptions, Pick};

/// The separator of a list of book paths (the engine's `BookFile`). A path that contains it cannot
/// be in such a list.
pub const BOOK_LIST_SEPARATOR: char = ';';

/// The paths of a list such as `small.bin; big.bin`, in order: each trimmed, empty ones skipped.
pub fn book_paths(list: &str) -> impl Iterator<Item = &str> {
    list.split(BOOK_LIST_SEPARATOR)
        .map(str::trim)
        .filter(|path| !path.is_empty())
}

/// Books in priority order, each with the name it is shown under (its path as given). A book may
/// be in several lists at once (the sections of a book profile), opened once.
#[derive(Default, Clone)]
pub struct Books {
    books: Vec<(String, Arc<Book>)>,
}

impl Books {
    /// No books: every pick is `None`.
    pub fn new() -> Books {
        Books::default()
    }

    /// Adds `book` after the books already there (so it is tried after them).
    pub fn push(&mut self, name: impl Into<String>, book: Book) {
        self.books.push((name.into(), Arc::new(book)));
    }

    /// Adds a book that other lists hold too, after the books already there.
    pub fn push_shared(&mut self, name: impl Into<String>, book: Arc<Book>) {
        self.books.push((name.into(), book));
    }

    pub fn len(&self) -> usize {
        self.books.len()
    }

    pub fn is_empty(&self) -> bool {
        self.books.is_empty()
    }

    /// The name of the book at `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.books[index].0
    }

    /// The books with their names, in priority order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Book)> {
        self.books
            .iter()
            .map(|(name, book)| (name.as_str(), book.as_ref()))
    }

    /// The index of the book that [`Books::pick`] takes its move from for `pos`: the first with
    /// a move that counts; `None` when no book has one.
    pub fn first_with_move<P: Position>(&self, pos: &P, options: &ChooseOptions) -> Option<usize> {
        self.books
            .iter()
            .position(|(_, book)| book.find_all(pos).iter().any(|m| options.counts(m)))
    }

    /// The first book (in order) with a move that counts for `pos` picks one with `options`:
    /// the book's index and its [`Pick`], whose share is within that book. `None` when no book
    /// has a move that counts.
    pub fn pick<P: Position, R: Rng + ?Sized>(
        &self,
        pos: &P,
        options: &ChooseOptions,
        rng: &mut R,
    ) -> Option<(usize, Pick)> {
        self.books
            .iter()
            .enumerate()
            .find_map(|(index, (_, book))| Some((index, book.pick(pos, options, rng)?)))
    }

    /// As [`Books::pick`], each book leaving out the moves below which it holds no line of
    /// `line_plies` more book moves (`Book::has_line`; 0: no check): the first book with a
    /// candidate left picks it, by its learn layout.
    pub fn pick_with_line<R: Rng + ?Sized>(
        &self,
        pos: &shakmaty::Chess,
        options: &ChooseOptions,
        line_plies: u32,
        rng: &mut R,
    ) -> Option<(usize, Pick)> {
        for (index, (_, book)) in self.iter().enumerate() {
            let moves = book.find_all(pos);
            let mut options = options.clone();
            if line_plies > 0 {
                let short: Vec<shakmaty::Move> = moves
                    .iter()
                    .filter(|m| options.counts(m))
                    .filter(|m| {
                        let mut next = pos.clone();
                        next.play_unchecked(m.mv);
                        !book.has_line(&next, line_plies, options.minimum_weight)
                    })
                    .map(|m| m.mv)
                    .collect();
                options.exclude_moves.extend(short);
            }
            if let Some(pick) = options.pick_in(&moves, book.learn_layout(), rng) {
                return Some((index, pick));
            }
        }
        None
    }
}

impl FromIterator<(String, Book)> for Books {
    fn from_iter<I: IntoIterator<Item = (String, Book)>>(iter: I) -> Books {
        Books {
            books: iter
                .into_iter()
                .map(|(name, book)| (name, Arc::new(book)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::{ENTRY_SIZE, Entry, Key};
    use shakmaty::{Chess, Position};

    /// A book of one position's moves, in memory.
    fn book(name: &str, pos: &Chess, moves: &[(&str, u16)]) -> Book {
        let key = Key::of(pos);
        let mut entries: Vec<Entry> = moves
            .iter()
            .map(|&(uci, weight)| Entry::from_uci(key, uci, weight).unwrap())
            .collect();
        crate::book::sort_entries(&mut entries);
        let mut bytes = Vec::with_capacity(entries.len() * ENTRY_SIZE);
        for e in &entries {
            bytes.extend_from_slice(&e.to_bytes());
        }
        Book::from_bytes(name, bytes).unwrap()
    }

    #[test]
    fn the_first_book_with_a_move_that_counts_gives_it() {
        let start = Chess::default();
        let mut books = Books::new();
        // The first book's only move does not count (weight 0): the second book gives the move.
        books.push("a", book("a", &start, &[("d2d4", 0)]));
        books.push("b", book("b", &start, &[("e2e4", 1), ("c2c4", 3)]));
        books.push("c", book("c", &start, &[("g1f3", 9)]));
        let options = ChooseOptions {
            selection: crate::book::Selection::Best,
            ..Default::default()
        };
        let (index, pick) = books.pick(&start, &options, &mut rand::rng()).unwrap();
        assert_eq!((index, books.name(index)), (1, "b"));
        assert_eq!(
            pick.book_move
                .mv
                .to_uci(shakmaty::CastlingMode::Standard)
                .to_string(),
            "c2c4"
        );
        // The share is within the book that gave the move.
        assert_eq!(pick.share, 0.75);
        assert_eq!(books.first_with_move(&start, &options), Some(1));
        // A position no book has: no pick.
        let mut after = start.clone();
        after.play_unchecked(after.legal_moves()[0]);
        assert!(books.pick(&after, &options, &mut rand::rng()).is_none());
        assert!(
            Books::new()
                .pick(&start, &options, &mut rand::rng())
                .is_none()
        );
    }
}
