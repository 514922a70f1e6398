//! The book settings bots need: a book list per colour, no repeated positions, a limit on the
//! engine's own book moves, and a line of book moves below the move played.
//!
//! The choice itself (candidates, variety, shares) is [`ChooseOptions`]'s; this file gives it
//! the game: which books the side to move plays from, which moves repeat a position of the
//! `position … moves` history, how many moves the engine has played, and which moves lead into
//! too short a line of the book that has them. With `BookProfile`, the profile's section for the
//! game gives the books and overrides the options it sets ([`super::profile`]).

use std::path::Path;
use std::sync::Arc;

use shakmaty::{Color, Move, Position};

use super::Session;
use super::profile::{BookProfile, GameFacts, Section};
use crate::book::{Book, Books, ChooseOptions};
use crate::engine::hash::hash_of;

/// A profile with its sections' books opened (a book that cannot be opened is left out of the
/// sections that name it, with an `info string`).
pub(super) struct LoadedProfile {
    pub profile: BookProfile,
    /// The books of each section, in the profile's order.
    pub books: Vec<Books>,
}

/// The books and settings a `go` plays from: the options', or a profile section's over them.
pub(super) struct BookPlan {
    /// The books (shared with the session's lists: a clone is a few pointers).
    pub books: Books,
    /// The profile's key that chose `books`, if a profile did.
    pub key: Option<String>,
    pub choose: ChooseOptions,
    /// In full moves; 0: no limit.
    pub book_depth: u32,
    /// In plies of the game (BotLi's `max_depth`); 0: no limit.
    pub max_depth_plies: u32,
    pub max_moves: u32,
    pub allow_repetitions: bool,
    pub min_line_plies: u32,
}

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

    /// `BookProfile` set to `value`: the profile read and its books opened, each problem in one
    /// `info string` (a profile that cannot be read leaves the engine without one).
    pub(super) fn set_profile(&mut self, value: &str) {
        let path = value.trim();
        self.options.book_profile = path.to_string();
        self.profile = None;
        if path.is_empty() || path == "<empty>" {
            return;
        }
        let profile = match BookProfile::load(Path::new(path)) {
            Ok(p) => p,
            Err(e) => {
                self.info(&format!(
                    "cannot use BookProfile {e}; playing without the profile"
                ));
                return;
            }
        };
        for note in &profile.notes {
            self.info(&format!("BookProfile {path}: {note}"));
        }
        // Each file opened once, however many sections name it.
        let mut opened: Vec<(String, Option<Arc<Book>>)> = Vec::new();
        let mut books = Vec::new();
        for (key, section) in &profile.sections {
            let mut list = Books::new();
            for file in &section.books {
                let name = file.display().to_string();
                let slot = match opened.iter().position(|(n, _)| *n == name) {
                    Some(i) => i,
                    None => {
                        let book = match Book::open(file.clone()) {
                            Ok(book) => {
                                self.info(&format!("book {name} ({} entries)", book.len()));
                                Some(Arc::new(book))
                            }
                            Err(e) => {
                                self.info(&format!(
                                    "cannot use BookProfile {path}: section {key}: {e}; playing without this book"
                                ));
                                None
                            }
                        };
                        opened.push((name.clone(), book));
                        opened.len() - 1
                    }
                };
                if let Some(book) = &opened[slot].1 {
                    list.push_shared(name, book.clone());
                }
            }
            books.push(list);
        }
        self.profile = Some(LoadedProfile { profile, books });
    }

    /// What the engine knows of the game now, for the profile.
    pub(super) fn game_facts(&self) -> GameFacts {
        GameFacts {
            white: self.pos.turn() == Color::White,
            chess960: self.options.chess960,
            clock: self.game_clock,
            human: self.options.opponent_human,
        }
    }

    /// The books and settings of this `go`: the profile's section for the game over the
    /// options, or the options alone; `None` when a profile has no section for the game.
    pub(super) fn book_plan(&self, root_moves: &[Move]) -> Option<BookPlan> {
        let o = &self.options;
        let plain = Section::default();
        let (books, key, section) = match &self.profile {
            Some(loaded) => {
                let facts = self.game_facts();
                let (key, section) = loaded.profile.section_for(&facts)?;
                let index = loaded.profile.sections.iter().position(|(k, _)| k == key)?;
                (&loaded.books[index], Some(key), section)
            }
            None => (self.books_to_play(), None, &plain),
        };
        // Moves outside `go searchmoves` do not count.
        let exclude_moves: Vec<Move> = self
            .pos
            .legal_moves()
            .into_iter()
            .filter(|m| !root_moves.contains(m))
            .collect();
        Some(BookPlan {
            books: books.clone(),
            key: key.map(str::to_string),
            choose: {
                let mut choose = ChooseOptions {
                    selection: o.selection,
                    minimum_weight: o.min_weight,
                    max_loss: o.max_loss,
                    exclude_moves,
                    width: o.width,
                    min_share: o.min_share,
                    min_percent_of_best: o.min_percent_of_best,
                    variety: o.variety,
                };
                section.apply(&mut choose);
                choose
            },
            book_depth: o.book_depth,
            max_depth_plies: section.max_depth_plies.unwrap_or(0),
            max_moves: section.max_moves.unwrap_or(o.max_moves),
            allow_repetitions: section.allow_repetitions.unwrap_or(o.allow_repetitions),
            min_line_plies: section.min_line_plies.unwrap_or(o.min_line_plies),
        })
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
