//! The book settings bots need: a book list per colour, no repeated positions, a limit on the
//! engine's own book moves, and a line of book moves below the move played.
//!
//! The choice itself (candidates, variety, shares) is [`ChooseOptions`]'s; this file gives it
//! the game: which books the side to move plays from, which moves repeat a position of the
//! `position … moves` history, how many moves the engine has played, and which moves lead into
//! too short a line of the book that has them.

use shakmaty::{Color, Move, Position};

use super::Session;
use crate::book::{Books, ChooseOptions, Pick};
use crate::engine::hash::hash_of;

impl Session {
    /// `BookFileWhite` or `BookFileBlack` set to `value`: that colour plays from these books
    /// (empty: from `BookFile`'s).
    pub(super) fn set_colour_book(&mut self, colour: Color, value: &str) {
        let list = value.trim();
        let (option, text) = match colour {
            Color::White => ("BookFileWhite", &mut self.options.book_file_white),
            Color::Black => ("BookFileBlack", &mut self.options.book_file_black),
        };
        *text = list.to_string();
        let books = match list {
            "" | "<empty>" => None,
            _ => Some(self.load_books(option, list)),
        };
        self.colour_books[side(colour)] = books;
        self.note_unscored_books();
    }

    /// The books of the side to move: its colour's list if one is set, else `BookFile`'s.
    pub(super) fn books_to_play(&self) -> &Books {
        books_for(&self.books, &self.colour_books, self.pos.turn())
    }

    /// The moves the engine has played in this game: those of the side to move in the
    /// `position … moves` history (every other move, counted back from the last).
    pub(super) fn own_moves(&self) -> u32 {
        (self.past.len() / 2) as u32
    }

    /// The legal moves that lead to a position of the game's history (`position … moves`).
    pub(super) fn repeating_moves(&self) -> Vec<Move> {
        if self.past.is_empty() {
            return Vec::new();
        }
        self.pos
            .legal_moves()
            .into_iter()
            .filter(|&m| {
                let mut next = self.pos.clone();
                next.play_unchecked(m);
                self.past.contains(&hash_of(&next))
            })
            .collect()
    }

    /// The first book of the side to move with a candidate picks one with `options` (the moves
    /// without a line of `BookMinLinePlies` book moves below them left out, book by book): the
    /// book's index and the [`Pick`]; `None` when no book has one.
    pub(super) fn pick_book_move(&mut self, options: &ChooseOptions) -> Option<(usize, Pick)> {
        let books = books_for(&self.books, &self.colour_books, self.pos.turn());
        let plies = self.options.min_line_plies;
        for (index, (_, book)) in books.iter().enumerate() {
            let moves = book.find_all(&self.pos);
            let mut options = options.clone();
            if plies > 0 {
                let short: Vec<Move> = moves
                    .iter()
                    .filter(|m| options.counts(m))
                    .filter(|m| {
                        let mut next = self.pos.clone();
                        next.play_unchecked(m.mv);
                        !book.has_line(&next, plies, options.minimum_weight)
                    })
                    .map(|m| m.mv)
                    .collect();
                options.exclude_moves.extend(short);
            }
            if let Some(pick) = options.pick_in(&moves, book.learn_layout(), &mut self.rng) {
                return Some((index, pick));
            }
        }
        None
    }
}

/// The books `colour` plays from: its own list if set, else `all` (`BookFile`'s).
fn books_for<'a>(all: &'a Books, colour_books: &'a [Option<Books>; 2], colour: Color) -> &'a Books {
    colour_books[side(colour)].as_ref().unwrap_or(all)
}

/// The index of `colour`'s books in the session's `colour_books`: White's first.
fn side(colour: Color) -> usize {
    match colour {
        Color::White => 0,
        Color::Black => 1,
    }
}
