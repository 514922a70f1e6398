//! Openings for a match: start positions from a file of FEN/EPD lines, and walks through books
//! from a start position (several books: at each ply the first with a move that counts gives it).

use rand::Rng;
use shakmaty::{Chess, Move, Position};
use thiserror::Error;

use crate::book::{Books, ChooseOptions};
use crate::position::{EpdLine, PositionError, parse_fen};

/// Why an openings file gives no start positions.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OpeningsError {
    /// A line (1-based) is not a position.
    #[error("line {line}: {error}")]
    BadLine { line: usize, error: PositionError },
    #[error("no positions (one FEN or EPD a line)")]
    Empty,
}

/// The start positions of an openings file: one FEN or EPD a line (EPD operations ignored,
/// blank lines and `#` comments skipped; see [`EpdLine`]). Every line must be a position.
pub fn parse_openings(text: &str) -> Result<Vec<Chess>, OpeningsError> {
    let mut starts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(epd) = EpdLine::parse(line) else {
            continue;
        };
        let fen = epd.fields().collect::<Vec<_>>().join(" ");
        let pos = parse_fen(&fen).map_err(|error| OpeningsError::BadLine { line: i + 1, error })?;
        starts.push(pos);
    }
    if starts.is_empty() {
        return Err(OpeningsError::Empty);
    }
    Ok(starts)
}

/// Walks `books` from `start` for up to `plies` plies, choosing each move with `options` in the
/// first book that has an eligible move there ([`Books::pick`]); stops early where no book has
/// one (or the game is over).
pub fn book_walk<R: Rng + ?Sized>(
    books: &Books,
    start: &Chess,
    plies: usize,
    options: &ChooseOptions,
    rng: &mut R,
) -> Vec<Move> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    while moves.len() < plies && !pos.is_game_over() {
        let Some((_, pick)) = books.pick(&pos, options, rng) else {
            break;
        };
        pos.play_unchecked(pick.book_move.mv);
        moves.push(pick.book_move.mv);
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openings_are_fen_or_epd_lines() {
        let text = "# two openings\n\n\
            rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
            8/8/8/8/8/8/8/k6K w - - bm Kg2; id \"x\";\n";
        let starts = parse_openings(text).unwrap();
        assert_eq!(starts.len(), 2);
        assert!(starts[0].turn().is_black());
        assert_eq!(parse_openings("# nothing\n"), Err(OpeningsError::Empty));
        let bad = parse_openings("8/8/8/8/8/8/8/k6K w - -\nnot a fen\n").unwrap_err();
        assert!(
            matches!(bad, OpeningsError::BadLine { line: 2, .. }),
            "{bad}"
        );
    }
}
