//! `polybook key`: the Polyglot key of a position.

use super::{CliResult, position::PositionArgs};
use polybook::book::Key;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    position: PositionArgs,
}

pub fn run(args: Args) -> CliResult {
    let pos = args.position.position()?;
    outln!("{}", Key::of(&pos))
}
