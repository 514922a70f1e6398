//! `polybook split`: a PGN input cut into zstd-compressed parts of N games each.

use std::num::NonZeroU64;
use std::path::PathBuf;

use polybook::pgn::input::expand;
use polybook::pgn::split::{SplitError, SplitOptions};

use super::progress::Bar;
use super::{CliError, CliResult};

/// Cut PGN games into zstd-compressed parts of N games each (DIR/part-00000.pgn.zst, …).
///
/// The input (plain, .gz, .zst, .bz2, .xz, or `-` for standard input) is read as `build` reads
/// it, a megabyte at a time, and cut only where a game starts by build's rule: the parts read
/// in name order are the same games, so their tallies and books add up to the input's. Each part
/// takes its name only once it is complete; Ctrl-C leaves the complete parts.
#[derive(clap::Args)]
pub struct Args {
    /// The PGN file to cut (`-` reads standard input).
    #[arg(value_name = "INPUT")]
    input: PathBuf,
    /// Games per part (the last part may have fewer).
    #[arg(long, value_name = "N")]
    games: u64,
    /// The folder of the parts: made if missing; it must be empty (parts of another split would
    /// be read with these).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// The zstd level of the parts, from 1 (fastest) to 19 (smallest).
    #[arg(long, default_value_t = 3, value_name = "N")]
    level: i32,
    /// Wait for each part to reach the disk before it takes its name.
    #[arg(long)]
    fsync: bool,
    /// No progress bar and no summary on stderr.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: Args) -> CliResult {
    let games =
        NonZeroU64::new(args.games).ok_or_else(|| CliError::usage("--games must be at least 1"))?;
    if !(1..=19).contains(&args.level) {
        return Err(CliError::usage(format!(
            "--level {}: zstd's levels are 1 to 19",
            args.level
        )));
    }
    let inputs = expand(std::slice::from_ref(&args.input)).map_err(CliError::data)?;
    let [input] = &inputs[..] else {
        return Err(CliError::usage(format!(
            "{} is a folder of {} PGN files; split cuts one file (or standard input)",
            args.input.display(),
            inputs.len()
        )));
    };
    let opts = SplitOptions {
        games,
        level: args.level,
        fsync: args.fsync,
    };
    let bar = Bar::new(
        !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        input.size(),
    );
    let cancel = super::interrupt::flag();
    let result = polybook::pgn::split::split_pgn(input, &args.output, &opts, &cancel, &bar);
    bar.finish();
    let report = result.map_err(|e| match e {
        SplitError::Interrupted { .. } => CliError::interrupted(e),
        e => CliError::data(e),
    })?;
    if !args.quiet {
        eprintln!(
            "{}: {} games in {} parts",
            args.output.display(),
            report.games,
            report.parts
        );
    }
    Ok(())
}
