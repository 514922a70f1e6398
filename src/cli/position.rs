//! Positions from the command line: the `--fen` and `--moves` arguments that `key`, `probe`,
//! `perft` and `search` share, and the position they give.

use clap::Args;
use polybook::book::Key;
use polybook::openings::LineName;
use polybook::position::{parse_fen, parse_fen_for, play_moves_each};
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
        self.position_after(|_| {})
    }

    /// The position with the name of the line that leads to it (lichess's opening table: the last
    /// named position of `--fen` and the positions of `--moves`).
    pub fn position_named(&self) -> Result<(Chess, LineName), CliError> {
        let mut line = LineName::new();
        let pos = self.position_after(|pos| line.push(Key::of(pos)))?;
        line.push(Key::of(&pos));
        Ok((pos, line))
    }

    /// The position of a game of standard chess or, with `chess960`, of Chess960
    /// ([`parse_fen_for`]: Shredder-FEN and X-FEN castling; without it, castling rights that only
    /// Chess960 has are refused, with a word on `flag`, the option that takes them).
    pub fn position_for(&self, chess960: bool, flag: &str) -> Result<Chess, CliError> {
        let pos = match &self.fen {
            Some(fen) => parse_fen_for(fen, chess960).map_err(|e| {
                let hint = if !chess960 && parse_fen_for(fen, true).is_ok() {
                    format!(" ({flag} plays Chess960)")
                } else {
                    String::new()
                };
                CliError::data(format!("{e}{hint}"))
            })?,
            None => Chess::default(),
        };
        self.play_from(pos, |_| {})
    }

    /// The same, calling `before` with each position a move of `--moves` is played from (the
    /// game so far, for the repetition rule).
    pub fn position_after(&self, before: impl FnMut(&Chess)) -> Result<Chess, CliError> {
        let pos = match &self.fen {
            Some(fen) => parse_fen(fen).map_err(CliError::data)?,
            None => Chess::default(),
        };
        self.play_from(pos, before)
    }

    /// `pos` after `--moves`, calling `before` with each position a move is played from.
    fn play_from(&self, pos: Chess, mut before: impl FnMut(&Chess)) -> Result<Chess, CliError> {
        match &self.moves {
            Some(moves) => {
                play_moves_each(pos, moves, |pos, _| before(pos)).map_err(CliError::data)
            }
            None => Ok(pos),
        }
    }
}
