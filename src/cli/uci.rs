//! `polybook uci` (and `polybook` with no command): speak UCI on stdin/stdout.

use std::io;

use super::CliResult;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    polybook::uci::run(io::stdin().lock(), io::stdout());
    Ok(())
}
