//! `polybook book`: a Polyglot book from one or more tallies, summed.

use std::path::{Path, PathBuf};

use super::args::RuleArgs;
use super::tally::{summary, tally_error};
use super::{CliError, CliResult};

/// Write a Polyglot book from tallies (`polybook tally`), summed, with `build`'s entry options.
///
/// With --weights games or wins the book is byte for byte the one `build` writes from the same
/// games. With polyglot's weights, a position whose most played move has 16384 games or more is
/// halved as a whole until none has (polyglot halves as the games come, in input order).
#[derive(clap::Args)]
pub struct Args {
    /// Tallies (Parquet files written by `polybook tally`), made with the same options.
    #[arg(required = true, value_name = "TALLY")]
    inputs: Vec<PathBuf>,
    /// The book to write (atomically: a temporary file, then a rename).
    #[arg(short, long, value_name = "OUT.bin")]
    output: PathBuf,
    #[command(flatten)]
    rules: RuleArgs,
    /// Wait for the book to reach the disk before it takes its name.
    #[arg(long)]
    fsync: bool,
    /// No summary on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let rules = args.rules.rules()?;
    if rules.weights == polybook::builder::WeightScheme::Nag {
        return Err(CliError::usage(
            "--weights nag reads the moves' annotations in PGN, which a tally does not keep: \
             build the book from the PGN with `polybook build`",
        ));
    }
    let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    let report = polybook::tally::book_from_tallies(&inputs, &args.output, &rules, args.fsync)
        .map_err(tally_error)?;
    summary(&report, &args.output, "entries", args.quiet, args.json)
}
