//! `polybook build`: PGN games to a Polyglot book.

use std::path::PathBuf;

use polybook::builder::BuildReport;

use super::args::{CountArgs, RuleArgs};
use super::output::clause;
use super::{CliError, CliResult};

/// Build a Polyglot book from PGN games (plain, .gz, .zst, .bz2, .xz; folders; `-` for stdin).
///
/// With the default options the book is byte for byte what `polyglot make-book` writes from the
/// same games. Unlike polyglot, games from a [FEN] start there, non-standard variants are skipped,
/// and a bad game is skipped (or cut at its bad move) instead of aborting the build.
#[derive(clap::Args)]
pub struct Args {
    /// PGN files or folders, read in order as one stream; `-` reads standard input.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The book to write (atomically: a temporary file, then a rename).
    #[arg(short, long, value_name = "OUT.bin")]
    output: PathBuf,
    #[command(flatten)]
    rules: RuleArgs,
    #[command(flatten)]
    counting: CountArgs,
}

pub fn run(args: Args) -> CliResult {
    let rules = args.rules.rules()?;
    let counting = &args.counting;
    let filter = counting.games.filter()?;
    let opts = counting.reading.options(filter, rules)?;

    let (inputs, bar) = counting.inputs(&args.inputs)?;
    // The spilled runs, which have no names, go with the process however it ends.
    let cancel = super::interrupt::flag();
    let result = polybook::builder::build(&inputs, &args.output, &opts, &cancel, &bar);
    bar.finish();
    let report = result.map_err(|e| match e {
        polybook::builder::BuildError::Interrupted => CliError::interrupted(e),
        e => CliError::data(e),
    })?;
    if !counting.quiet {
        eprint!(
            "{}",
            human_summary(&report, &args.output.display().to_string())
        );
    }
    end_report(&report, "book", counting.json)
}

/// The end of a build's or a tally's report: a warning for each input cut short
/// (`--allow-truncated`) and when the filters left out every game (otherwise a build without a
/// usable game fails, except on a range of a file), then the JSON report with `--json`.
pub(super) fn end_report(report: &BuildReport, what: &str, json: bool) -> CliResult {
    for cut in &report.truncated_inputs {
        eprintln!("polybook: warning: {cut}");
    }
    if report.used == 0 && !report.filtered.is_empty() {
        let filters = list(&report.filtered);
        eprintln!(
            "polybook: warning: the filters left out every game ({filters}); the {what} is empty"
        );
    }
    if json {
        let text = serde_json::to_string(report).map_err(CliError::data)?;
        outln!("{text}")?;
    }
    Ok(())
}

/// `12 elo filter, 3 date filter`: counts by reason.
pub fn list(m: &std::collections::BTreeMap<&str, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{v} {}", k.replace('_', " ")))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn human_summary(r: &BuildReport, output: &str) -> String {
    let mut s = String::new();
    let filtered: u64 = r.filtered.values().sum();
    let skipped: u64 = r.skipped.values().sum();
    let truncated: u64 = r.truncated.values().sum();
    s += &format!(
        "{output}: {} entries, {} positions ({} (position, move) pairs before filtering)\n",
        r.entries, r.positions, r.entries_before_filter
    );
    s += &format!(
        "games: {} read, {} used, {}{} skipped{}, {} cut short{}; {} plies counted\n",
        r.games,
        r.used,
        clause(filtered > 0, || {
            format!("{filtered} filtered out ({}), ", list(&r.filtered))
        }),
        skipped,
        clause(skipped > 0, || format!(" ({})", list(&r.skipped))),
        truncated,
        clause(truncated > 0, || format!(" ({})", list(&r.truncated))),
        r.plies
    );
    for ex in r.examples.iter().take(5) {
        s += &format!("  {ex}\n");
    }
    if r.spilled_runs > 0 {
        s += &format!(
            "{} sorted runs spilled to disk and merged\n",
            r.spilled_runs
        );
    }
    s += &format!(
        "time: {:.2} s, {:.0} games/s\n",
        r.seconds, r.games_per_second
    );
    s
}
