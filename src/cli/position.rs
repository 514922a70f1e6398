//! Positions from the command line: the `--fen` and `--moves` arguments that `key`, `probe` and
//! `perft` share, and the position they give.

use clap::Args;
use polybook::position::{parse_fen, play_moves};
use shakmaty::Chess;

use super::CliError;

/// `--fen` and `--moves`, flattened into a command's arguments (`#[command(flatten)]`).
#[derive(Args, Clone, Debug, Default)]
pub struct PositionArgs {
    /// The position, in FEN (default: the start position).
    #[arg(long)]
    pub fen: Option<String>,
    /// Moves to play first, in SAN or UCI, from the start or from --fen (e.g. "e4 e5 Nf3").
    #[arg(long)]
    pub moves: Option<String>,
}

impl PositionArgs {
    /// The position given by `--fen` (default: the start) after `--moves`.
    pub fn position(&self) -> Result<Chess, CliError> {
        parse_position(self.fen.as_deref(), self.moves.as_deref())
    }
}

/// The position given by `fen` (default: the start) after `moves`.
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
