//! Positions from the command line's `--fen` and `--moves`.

use polybook::position::{parse_fen, play_moves};
use shakmaty::Chess;

use super::CliError;

/// The position given by `--fen` (default: the start) after `--moves`.
pub fn parse_position(fen: Option<&str>, moves: Option<&str>) -> Result<Chess, CliError> {
    let pos = match fen {
        Some(fen) => parse_fen(fen).map_err(CliError::data)?,
        None => Chess::default(),
    };
    match moves {
        Some(moves) => play_moves(pos, moves).map_err(CliError::data),
        None => Ok(pos),
    }
}
