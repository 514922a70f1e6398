//! Openings for a match: walks through a book from a start position.

use rand::Rng;
use shakmaty::{Chess, Move, Position};

use crate::book::{Book, ChooseOptions};

/// Walks `book` from `start` for up to `plies` plies, choosing each move with `options`; stops
/// early where the book has no eligible move (or the game is over).
pub fn book_walk<R: Rng + ?Sized>(
    book: &Book,
    start: &Chess,
    plies: usize,
    options: &ChooseOptions,
    rng: &mut R,
) -> Vec<Move> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    while moves.len() < plies && !pos.is_game_over() {
        let Some(pick) = book.pick(&pos, options, rng) else {
            break;
        };
        pos.play_unchecked(pick.book_move.mv);
        moves.push(pick.book_move.mv);
    }
    moves
}
