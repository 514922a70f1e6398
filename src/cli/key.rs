//! `polybook key`: the Polyglot key of a position.

use super::{CliResult, position::parse_position};
use polybook::book::Key;

#[derive(clap::Args)]
pub struct Args {
    /// The position, in FEN (default: the start position).
    #[arg(long)]
    fen: Option<String>,
    /// Moves to play from the position first, in SAN or UCI (e.g. "e4 e5 Nf3").
    #[arg(long)]
    moves: Option<String>,
}

pub fn run(args: Args) -> CliResult {
    let pos = parse_position(args.fen.as_deref(), args.moves.as_deref())?;
    outln!("{}", Key::of(&pos))
}
