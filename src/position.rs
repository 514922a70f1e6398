//! Positions from user input: FEN strings and move lists in SAN or UCI.
//!
//! Shared by every command that takes a position, so that they accept and refuse the same things
//! with the same messages.

use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};
use thiserror::Error;

/// Why a position or a move list was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PositionError {
    #[error("invalid FEN '{fen}': {why}")]
    BadFen { fen: String, why: String },
    #[error("impossible position '{fen}': {why}")]
    Illegal { fen: String, why: String },
    #[error("move {number} '{text}' is {why} in {fen}")]
    BadMove {
        number: usize,
        text: String,
        why: &'static str,
        fen: String,
    },
}

/// Parses a FEN (or the first four or more fields of an EPD line) into a legal standard-chess position.
pub fn parse_fen(fen: &str) -> Result<Chess, PositionError> {
    let fen = fen.trim();
    let parsed: Fen =
        fen.parse()
            .map_err(|e: shakmaty::fen::ParseFenError| PositionError::BadFen {
                fen: fen.to_string(),
                why: e.to_string(),
            })?;
    parsed
        .into_position(CastlingMode::Standard)
        .map_err(|e| PositionError::Illegal {
            fen: fen.to_string(),
            why: e.to_string(),
        })
}

/// The FEN of a position, with the en-passant square only where a capture is legal.
pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string()
}

/// Reads one move in UCI (`e2e4`, `e1g1`, `e7e8q`) or SAN (`e4`, `O-O`, `exd8=Q+`).
pub fn parse_move(pos: &Chess, text: &str) -> Result<Move, &'static str> {
    if let Ok(m) = text
        .parse::<UciMove>()
        .map_err(drop)
        .and_then(|uci| uci.to_move(pos).map_err(drop))
    {
        return Ok(m);
    }
    let san = San::from_ascii(text.trim_end_matches(['+', '#', '!', '?']).as_bytes())
        .map_err(|_| "not a move in SAN or UCI")?;
    san.to_move(pos).map_err(|e| match e {
        SanError::AmbiguousSan => "ambiguous",
        SanError::IllegalSan => "illegal",
    })
}

/// Plays a whitespace-separated list of moves; move numbers (`1.`, `12...`) and a trailing
/// result are skipped.
pub fn play_moves(pos: Chess, moves: &str) -> Result<Chess, PositionError> {
    play_moves_each(pos, moves, |_, _| {})
}

/// [`play_moves`], calling `each` with the position before every move and the move.
pub fn play_moves_each(
    mut pos: Chess,
    moves: &str,
    mut each: impl FnMut(&Chess, Move),
) -> Result<Chess, PositionError> {
    let mut number = 0;
    for token in moves.split_whitespace() {
        let token = token
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches('.');
        if token.is_empty() || matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*") {
            continue;
        }
        number += 1;
        let m = parse_move(&pos, token).map_err(|why| PositionError::BadMove {
            number,
            text: token.to_string(),
            why,
            fen: fen_of(&pos),
        })?;
        each(&pos, m);
        pos.play_unchecked(m);
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_in_san_and_uci_and_with_numbers() {
        let a = play_moves(Chess::default(), "1. e4 e5 2. Nf3").unwrap();
        let b = play_moves(Chess::default(), "e2e4 e7e5 g1f3").unwrap();
        assert_eq!(fen_of(&a), fen_of(&b));
    }

    #[test]
    fn bad_input_is_named() {
        let err = play_moves(Chess::default(), "e4 e5 Ke3")
            .unwrap_err()
            .to_string();
        assert!(err.contains("move 3 'Ke3' is illegal"), "{err}");
        let pos = parse_fen("4k3/8/8/8/8/8/8/R3K2R w - - 0 1").unwrap();
        assert!(play_moves(pos.clone(), "Rd1").is_ok());
        let pos = parse_fen("4k3/8/8/8/8/8/8/R3K1NR w - - 0 1").unwrap();
        assert!(play_moves(pos, "Nf3 Ke7 Ng1 Ke8 Rg1").is_err());
        assert!(matches!(
            parse_fen("8/8/8/8/8/8/8/8 w - - 0 1"),
            Err(PositionError::Illegal { .. })
        ));
        assert!(matches!(
            parse_fen("not a fen"),
            Err(PositionError::BadFen { .. })
        ));
    }
}
