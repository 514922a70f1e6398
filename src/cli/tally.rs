//! `polybook tally`: PGN games to exact counts per (position, move), as an Apache Parquet file;
//! `tally --merge`: tallies summed into one. Also the statistics view of `probe` on a tally.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use polybook::builder::{BuildError, EntryRules};
use polybook::tally::{SumReport, TallyError, TallyJson};
use shakmaty::{Chess, Position};

use super::args::CountArgs;
use super::build::list;
use super::output::clause;
use super::progress::Bar;
use super::{CliError, CliResult};

/// Count every (position, move) of PGN games exactly, into a Parquet tally.
///
/// The games are read as `build` reads them (the same filters and --max-ply); instead of a book,
/// every (position, move) pair is written with its games, wins, draws and losses for the mover.
/// `polybook book` makes books from tallies; `probe TALLY.parquet` shows a position's statistics.
#[derive(clap::Args)]
pub struct Args {
    /// PGN files or folders (`-` reads standard input); with --merge, tallies.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The tally to write (atomically: a temporary file, then a rename).
    #[arg(short, long, value_name = "OUT.parquet")]
    output: PathBuf,
    /// The inputs are tallies: sum them into one (made with the same options).
    #[arg(long)]
    merge: bool,
    /// parquet, or tsv: the same columns as tab-separated text (`-o -` for standard output), for
    /// pipes such as the Spark job's.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Parquet)]
    format: Format,
    /// Also keep, per (position, move), the games where both players are rated (WhiteElo and
    /// BlackElo), the sums of the mover's and the opponent's ratings over them, and the latest
    /// Date: four more columns, for the average ratings and the last date `probe` shows.
    #[arg(long)]
    ratings: bool,
    /// Only the games that start in the bytes START to END (END not included) of one plain PGN
    /// file: from the first game start at or after START to the first at or after END, reading
    /// past END as far as the last game goes. The tallies of consecutive ranges, summed in
    /// order with --merge, are the whole file's tally. `START:` reads to the end.
    #[arg(long, value_name = "START:END", allow_hyphen_values = true)]
    range: Option<String>,
    #[command(flatten)]
    counting: CountArgs,
}

/// What `tally` writes.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Parquet,
    Tsv,
}

pub fn run(args: Args) -> CliResult {
    if args.merge && args.range.is_some() {
        return Err(CliError::usage(
            "--range is for counting games of a PGN file, not for --merge",
        ));
    }
    if args.merge {
        if args.format != Format::Parquet {
            return Err(CliError::usage("--merge writes Parquet only"));
        }
        if args.ratings {
            return Err(CliError::usage(
                "--ratings is for counting games; --merge keeps the ratings the tallies have",
            ));
        }
        return merge(&args);
    }
    if args.output == Path::new("-") {
        if args.format != Format::Tsv {
            return Err(CliError::usage(
                "-o -: a Parquet file cannot be streamed; use a file, or --format tsv",
            ));
        }
        if args.counting.json {
            return Err(CliError::usage(
                "--json cannot share standard output with -o -",
            ));
        }
    }
    let counting = &args.counting;
    let mut filter = counting.games.filter()?;
    filter.ratings = args.ratings;
    let opts = counting.reading.options(filter, EntryRules::default())?;
    let (inputs, bar) = match &args.range {
        Some(range) => {
            let input = range_input(&args.inputs, range)?;
            let size = input.size();
            (vec![input], counting.bar(size))
        }
        None => counting.inputs(&args.inputs)?,
    };
    let cancel = super::interrupt::flag();
    let result = match args.format {
        Format::Parquet => polybook::tally::tally_pgn(&inputs, &args.output, &opts, &cancel, &bar),
        Format::Tsv => tsv(&inputs, &args.output, &opts, &cancel, &bar),
    };
    bar.finish();
    if args.format == Format::Tsv
        && args.output == Path::new("-")
        && let Some(e) = STDOUT_ERROR.lock().map_or(None, |mut e| e.take())
    {
        // As every command: a reader that went away (`| head`) stops it quietly, a full disk is
        // one line.
        return Err(super::output::write_error(e));
    }
    let report = result.map_err(tally_error)?;
    if !counting.quiet {
        let skipped: u64 = report.skipped.values().sum();
        let truncated: u64 = report.truncated.values().sum();
        let filtered: u64 = report.filtered.values().sum();
        eprintln!(
            "{}: {} (position, move) pairs, {} positions",
            args.output.display(),
            report.entries,
            report.positions
        );
        eprintln!(
            "games: {} read, {} used, {} filtered out, {} skipped{}, {} cut short; {} plies counted",
            report.games,
            report.used,
            filtered,
            skipped,
            clause(skipped > 0, || format!(" ({})", list(&report.skipped))),
            truncated,
            report.plies
        );
        eprintln!(
            "time: {:.2} s, {:.0} games/s",
            report.seconds, report.games_per_second
        );
    }
    super::build::end_report(&report, "tally", counting.json)
}

/// `--range START:END` (or `START:`) of the one input, which must be a plain PGN file: the
/// input that reads the games starting there.
fn range_input(inputs: &[PathBuf], range: &str) -> Result<polybook::pgn::input::Input, CliError> {
    let bad =
        |why: &str| CliError::usage(format!("--range {}: {why}", polybook::text::quote(range)));
    let (start, end) = range
        .split_once(':')
        .ok_or_else(|| bad("not START:END (byte offsets, e.g. 0:1000000, or START: to the end)"))?;
    let offset = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| bad("the offsets are whole numbers of bytes from 0 (START:END or START:)"))
    };
    let start = offset(start)?;
    let end = match end.trim() {
        "" => None,
        e => Some(offset(e)?),
    };
    if end.is_some_and(|e| e < start) {
        return Err(bad("END is before START"));
    }
    let [path] = inputs else {
        return Err(CliError::usage(
            "--range reads one PGN file; give one input",
        ));
    };
    let name = polybook::text::quote_path(path);
    let read_err = |e: std::io::Error| {
        CliError::data(format!(
            "{}: cannot read: {}",
            path.display(),
            polybook::text::reason(&e)
        ))
    };
    // Standard input, a folder or a FIFO cannot be read from an offset; a missing file is bad
    // data, as without --range.
    let meta = std::fs::metadata(path);
    if path.as_os_str() == "-" {
        return Err(CliError::usage(
            "--range reads a regular file from an offset, not standard input",
        ));
    }
    if meta.as_ref().is_ok_and(|m| !m.is_file()) {
        return Err(CliError::usage(format!(
            "--range reads a regular file, and {name} is not one"
        )));
    }
    meta.map_err(read_err)?;
    let compression = polybook::pgn::input::compression_of(path).map_err(read_err)?;
    if compression != polybook::pgn::input::Compression::None {
        return Err(CliError::usage(format!(
            "--range reads plain PGN files, and {name} is compressed ({}); decompress it first, or use 'polybook split'",
            format!("{compression:?}").to_lowercase()
        )));
    }
    polybook::pgn::input::Input::range(path, start, end).map_err(read_err)
}

/// The tally as text, to standard output (`-`) or to a file that appears whole.
fn tsv(
    inputs: &[polybook::pgn::input::Input],
    output: &Path,
    opts: &polybook::builder::BuildOptions,
    cancel: &std::sync::atomic::AtomicBool,
    bar: &Bar,
) -> Result<polybook::builder::BuildReport, TallyError> {
    let name = output.display().to_string();
    if output == Path::new("-") {
        let stdout = WatchPipe(std::io::stdout().lock());
        let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout);
        return polybook::tally::tally_pgn_tsv(inputs, &mut out, &name, opts, cancel, bar);
    }
    if polybook::builder::output_is_input(inputs, output) {
        return Err(TallyError::OutputIsInput(polybook::text::quote_path(
            output,
        )));
    }
    let write_err = |e: std::io::Error| TallyError::Write {
        path: polybook::text::quote_path(output),
        why: polybook::text::reason(&e),
    };
    let file = polybook::atomic::AtomicFile::create(output).map_err(write_err)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    let report = polybook::tally::tally_pgn_tsv(inputs, &mut out, &name, opts, cancel, bar)?;
    let file = out.into_inner().map_err(|e| write_err(e.into_error()))?;
    file.commit(opts.fsync).map_err(write_err)?;
    Ok(report)
}

/// The first error of writing the text tally to standard output (the tally's own error keeps
/// only its text).
static STDOUT_ERROR: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Standard output, keeping its first error in [`STDOUT_ERROR`].
struct WatchPipe<W>(W);

impl<W: Write> Write for WatchPipe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(keep)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(keep)
    }
}

fn keep(e: std::io::Error) -> std::io::Error {
    let copy = std::io::Error::new(e.kind(), e.to_string());
    if let Ok(mut first) = STDOUT_ERROR.lock() {
        first.get_or_insert(copy);
    }
    e
}

fn merge(args: &Args) -> CliResult {
    let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    let report =
        polybook::tally::merge_tallies(&inputs, &args.output, args.counting.reading.fsync())
            .map_err(tally_error)?;
    summary(
        &report,
        &args.output,
        "rows",
        args.counting.quiet,
        args.counting.json,
    )
}

/// The summary of summed tallies (`tally --merge`, `book`): on stderr, or as JSON on stdout.
pub fn summary(r: &SumReport, output: &Path, what: &str, quiet: bool, json: bool) -> CliResult {
    if !quiet {
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        eprintln!(
            "{}: {} {what}, {}, from {} ({}, {} rows read, options {})",
            output.display(),
            r.written,
            plural(r.positions_written, "position", "positions"),
            plural(r.inputs as u64, "tally file", "tally files"),
            plural(r.games, "game", "games"),
            r.pairs_read,
            r.options
        );
        eprintln!("time: {:.2} s", r.seconds);
    }
    if json {
        let text = serde_json::to_string(r).map_err(CliError::data)?;
        outln!("{text}")?;
    }
    Ok(())
}

/// A tally's failure as the command's: an interruption exits 130, anything else 1.
/// The reading errors it shares with `build` say what was not written: here a tally.
pub fn tally_error(e: TallyError) -> CliError {
    let message = e.to_string().replace("no book written", "no tally written");
    match e {
        TallyError::Build(BuildError::Interrupted) => CliError::interrupted(message),
        _ => CliError::data(message),
    }
}

/// The width of the results bar.
const BAR: usize = 24;

/// A results bar: the mover's wins, draws and losses as `█`, `▒` and `░`, in proportion.
fn results_bar(wins: u64, draws: u64, losses: u64) -> String {
    let games = (wins + draws + losses).max(1) as f64;
    let w = ((wins as f64 / games) * BAR as f64).round() as usize;
    let d = (((wins + draws) as f64 / games) * BAR as f64).round() as usize - w;
    let l = BAR.saturating_sub(w + d);
    format!("{}{}{}", "█".repeat(w), "▒".repeat(d), "░".repeat(l))
}

fn pct(n: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}

/// Prints one position's statistics as a table: each move's games, its share, the mover's
/// win/draw/loss percentages and a bar (and the book's weight, with a book; the average ratings
/// and the latest date, from a tally made with `--ratings`).
pub fn print_stats(stats: &TallyJson, pos: &Chess) -> CliResult {
    let with_book = stats.moves.iter().any(|m| m.weight.is_some());
    outln!("FEN  {}", stats.fen)?;
    outln!("key  {}   {} to move", stats.key, pos.turn())?;
    if let (Some(eco), Some(opening)) = (stats.name.eco, stats.name.opening) {
        outln!("opening  {eco} {opening}")?;
    }
    outln!("{} games", stats.games)?;
    if stats.moves.is_empty() {
        outln!("(no move in the tally)")?;
    }
    let mut header = format!(
        "{:<8} {:>10} {:>7} {:>7} {:>7} {:>7}  {:<BAR$}",
        "move", "games", "share", "win", "draw", "loss", "█ win ▒ draw ░ loss"
    );
    if with_book {
        header += "  weight";
    }
    if stats.ratings {
        header += &format!(
            "  {:>10} {:>7} {:>10}",
            "avg rating", "avg opp", "last date"
        );
    }
    if !stats.moves.is_empty() {
        outln!("{}", header.trim_end())?;
    }
    for m in &stats.moves {
        let mut line = format!(
            "{:<8} {:>10} {:>7} {:>7} {:>7} {:>7}  {}",
            m.san,
            m.games,
            pct(m.games, stats.games),
            pct(m.wins, m.games),
            pct(m.draws, m.games),
            pct(m.losses, m.games),
            if m.games > 0 {
                results_bar(m.wins, m.draws, m.losses)
            } else {
                " ".repeat(BAR)
            }
        );
        if let Some(weight) = m.weight {
            line += &match weight {
                Some(w) => format!("  {w:>6}"),
                None => format!("  {:>6}", "-"),
            };
        }
        if stats.ratings {
            let number = |n: Option<Option<u64>>| n.flatten().map_or("-".into(), |n| n.to_string());
            line += &format!(
                "  {:>10} {:>7} {:>10}",
                number(m.avg_rating),
                number(m.avg_opponent_rating),
                m.last_date.clone().flatten().unwrap_or_else(|| "-".into())
            );
        }
        outln!("{}", line.trim_end())?;
    }
    for i in &stats.illegal {
        outln!("illegal here: {} ({} games)", i.raw, i.games)?;
    }
    Ok(())
}
