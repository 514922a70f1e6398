//! Tallies: the exact counts of every (position, move) of a set of games, kept as an Apache
//! Parquet file (`polybook tally`), so that books can be made from them again with other weights
//! or filters without reading the games, several tallies summed (this month's games added to
//! last month's), and any position's statistics shown.
//!
//! ```text
//! PGN ─► build's pipeline (count_pairs) ─► TallyWriter ─► .parquet          tally_pgn
//! .parquet… ─► TallyMerge (sum by key) ─► TallyWriter ─► .parquet          merge_tallies
//! .parquet… ─► TallyMerge ─► build's entry rules (PairEntries) ─► .bin      book_from_tallies
//! .parquet (one) ─► row groups on every core ─► PairEntries ─► .bin        book_from_tallies
//! .parquet… ─► TallyLookup::find(key) (each file's rows of the key, summed) ─► position_stats
//!                                                               probe, explore --tally
//! ```
//!
//! - `schema`: the Parquet file's columns and metadata (and how the key is stored), found by name.
//! - `writer`: the writer, row groups encoded on worker threads.
//! - `reader`: the reader, pairs in file order or one key's; `columns`: a row group as read, its
//!   rows checked; `io`: the file read at offsets from several threads; `guard`: a damaged file
//!   an error (its footer and page headers walked first, `thrift`; its metadata checked against
//!   the file; the decoders' panics caught).
//! - `merge`: the k-way merge that sums tallies position by position.
//! - `lookup`: one position's pairs, found in several tallies and summed.
//! - `book`: a book from one tally, its row groups decoded and made into entries in parallel.
//! - `stats`: one position's statistics for people (`probe`) and programs (`probe --json`).
//!
//! A tally is the build's count table before any filtering of moves, with 64-bit counts: a book
//! made from it with `--weights games` or `wins` is byte for byte the book `build` makes from the
//! same games. Tallies made with different game options (`--max-ply`, the filters) count
//! different things: they are refused together. So are, except for a book (which does not read
//! them), tallies with and without the ratings' columns of `tally --ratings`.

mod book;
mod columns;
mod guard;
mod io;
mod lookup;
mod merge;
mod reader;
mod schema;
mod stats;
#[cfg(test)]
mod testing;
mod thrift;
mod writer;

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use thiserror::Error;

pub use lookup::TallyLookup;
pub use merge::TallyMerge;
pub use reader::TallyReader;
pub use schema::{COLUMNS, RATING_COLUMNS, TallyMeta, key_of_stored, stored_key};
pub use stats::{IllegalStats, MoveStats, TallyJson, position_stats};
pub use writer::TallyWriter;

use crate::book::{BookError, BookWriter, Entry};
use crate::builder::{
    BuildError, BuildOptions, BuildReport, EntryRules, GameFilter, PairColumns, PairCount,
    PairEntries, PositionSink, output_is_input, same_file,
};
use crate::pgn::Progress;
use crate::pgn::input::Input;
use crate::text::quote_path;

/// Why a tally could not be made, read or used.
#[derive(Debug, Error)]
pub enum TallyError {
    #[error("{path}: cannot read: {why}")]
    Read { path: String, why: String },
    #[error("{path}: not a polybook tally: {why}")]
    NotTally { path: String, why: String },
    #[error("{path}: cannot write: {why}")]
    Write { path: String, why: String },
    #[error(
        "{first} and {other} were made with different options ({first_options} / {other_options}); \
         their counts cannot be summed"
    )]
    Mixed {
        first: String,
        first_options: String,
        other: String,
        other_options: String,
    },
    #[error(
        "{with} has the ratings' columns (tally --ratings) and {without} has not; \
         make both with or both without --ratings"
    )]
    MixedRatings { with: String, without: String },
    #[error("{0}: is one of the inputs; refusing to write over it")]
    OutputIsInput(String),
    #[error("{0}")]
    Build(#[from] BuildError),
    #[error("{0}")]
    Book(#[from] BookError),
}

/// The options that decide what a tally counts, in one spelling (`--max-ply 1024 --min-elo 2000`):
/// tallies with different ones are not summed.
pub fn options_of(filter: &GameFilter) -> String {
    let mut s = format!("--max-ply {}", filter.max_ply);
    let date = |(y, m, d): (u32, u32, u32)| format!("{y:04}.{m:02}.{d:02}");
    if filter.chess960 {
        s += " --chess960";
    }
    if filter.skip_unknown_results {
        s += " --skip-unknown-results";
    }
    if filter.variations {
        s += " --variations";
    }
    if let Some(e) = filter.min_elo {
        s += &format!(" --min-elo {e}");
    }
    if let Some(e) = filter.max_elo {
        s += &format!(" --max-elo {e}");
    }
    if let Some(d) = filter.since {
        s += &format!(" --since {}", date(d));
    }
    if let Some(d) = filter.until {
        s += &format!(" --until {}", date(d));
    }
    if !filter.speeds.is_empty() {
        let speeds: Vec<String> = filter
            .speeds
            .iter()
            .map(|sp| format!("{sp:?}").to_lowercase())
            .collect();
        s += &format!(" --time-control {}", speeds.join(","));
    }
    if let Some(p) = &filter.player {
        for name in &p.names {
            s += &format!(" --player {name:?}");
        }
        if let Some(c) = p.color {
            s += &format!(" --color {c}");
        }
        if p.both_sides {
            s += " --both-sides";
        }
    }
    s
}

/// Writes each position's pairs to a tally file.
struct FileSink(TallyWriter);

impl PositionSink for FileSink {
    fn position(&mut self, pairs: &[PairCount]) -> Result<(), BuildError> {
        self.0.push_all(pairs).map_err(output_error)
    }

    fn columns(&mut self, pairs: PairColumns) -> Result<(), BuildError> {
        self.0.push_columns(pairs).map_err(output_error)
    }
}

/// The tally writer's error, as the build's pipeline hands it on.
fn output_error(e: TallyError) -> BuildError {
    BuildError::Output {
        name: String::new(),
        why: e.to_string(),
    }
}

/// Threads encoding a tally's row groups at most: each holds a row group (64 Ki rows) while it
/// encodes, so more would cost memory outside `--memory` for little speed.
const ENCODERS: usize = 4;

/// Counts the games of `inputs` as `build` does (`opts`' filters, `--max-ply`, threads, memory;
/// not its entry rules) and writes every (position, move) pair to the tally `output`. The file is
/// the same whatever `opts.threads` and `opts.memory`.
pub fn tally_pgn(
    inputs: &[Input],
    output: &Path,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<BuildReport, TallyError> {
    if output_is_input(inputs, output) {
        return Err(TallyError::OutputIsInput(quote_path(output)));
    }
    let start = Instant::now();
    // Created before any game is read: an output that cannot be written fails at once.
    let writer = TallyWriter::create_with(output, opts.filter.ratings)?;
    let mut sink = FileSink(writer.threads(opts.threads.min(ENCODERS)));
    let mut report = crate::builder::count_pairs(inputs, &mut sink, opts, cancel, progress)
        .map_err(|e| {
            match e {
                // The writer's own error, already naming the file.
                BuildError::Output { why, .. } => TallyError::Write {
                    path: quote_path(output),
                    why,
                },
                e => TallyError::Build(e),
            }
        })?;
    let meta = TallyMeta {
        options: options_of(&opts.filter),
        games: report.used,
        ratings: opts.filter.ratings,
    };
    sink.0.finish(&meta, opts.fsync)?;
    report.seconds = start.elapsed().as_secs_f64();
    report.games_per_second = report.games as f64 / report.seconds.max(1e-9);
    Ok(report)
}

/// Writes each position's pairs as lines of tab-separated values (with their ratings' columns
/// if `.1`).
struct TsvSink<'a>(&'a mut dyn Write, bool);

impl PositionSink for TsvSink<'_> {
    fn position(&mut self, pairs: &[PairCount]) -> Result<(), BuildError> {
        pairs
            .iter()
            .try_for_each(|p| {
                write!(
                    self.0,
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    stored_key(p.key),
                    p.mv,
                    u8::from(p.black),
                    p.games,
                    p.wins,
                    p.draws,
                    p.losses,
                    p.first
                )?;
                if self.1 {
                    let r = &p.rating;
                    write!(
                        self.0,
                        "\t{}\t{}\t{}\t{}",
                        r.rated_games, r.mover_sum, r.opponent_sum, r.last_date
                    )?;
                }
                writeln!(self.0)
            })
            .map_err(|e| BuildError::Output {
                name: String::new(),
                why: crate::text::reason(&e),
            })
    }
}

/// The first line of a tally as text: the options after this.
pub const TSV_OPTIONS: &str = "#options\t";
/// The second line of a tally as text: the columns.
pub const TSV_COLUMNS: &str = "key\tmove\tblack\tgames\twins\tdraws\tlosses\tfirst";
/// The columns that follow with `--ratings`.
pub const TSV_RATING_COLUMNS: &str =
    "\trated_games\tmover_rating_sum\topponent_rating_sum\tlast_date";

/// [`tally_pgn`] as text, for pipes (the map step of the Spark job): a line `#options\t…`, a line
/// naming the columns, then one line per pair with the Parquet file's columns, tab-separated
/// (`black` as 0 or 1, `key` stored as in the file; with `--ratings` the four ratings' columns
/// last), by key. `out` is where it goes.
pub fn tally_pgn_tsv(
    inputs: &[Input],
    out: &mut dyn Write,
    name: &str,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<BuildReport, TallyError> {
    let start = Instant::now();
    let write_err = |e: std::io::Error| TallyError::Write {
        path: name.to_string(),
        why: crate::text::reason(&e),
    };
    writeln!(out, "{TSV_OPTIONS}{}", options_of(&opts.filter)).map_err(write_err)?;
    let rated = opts.filter.ratings;
    let more = if rated { TSV_RATING_COLUMNS } else { "" };
    writeln!(out, "{TSV_COLUMNS}{more}").map_err(write_err)?;
    let mut sink = TsvSink(out, rated);
    let mut report = crate::builder::count_pairs(inputs, &mut sink, opts, cancel, progress)
        .map_err(|e| match e {
            BuildError::Output { why, .. } => TallyError::Write {
                path: name.to_string(),
                why,
            },
            e => TallyError::Build(e),
        })?;
    sink.0.flush().map_err(write_err)?;
    report.seconds = start.elapsed().as_secs_f64();
    report.games_per_second = report.games as f64 / report.seconds.max(1e-9);
    Ok(report)
}

/// What summing tallies did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SumReport {
    pub inputs: usize,
    /// Games counted in all the inputs.
    pub games: u64,
    /// Rows read from the inputs.
    pub pairs_read: u64,
    /// Distinct (position, move) pairs after summing.
    pub pairs: u64,
    /// Distinct positions after summing.
    pub positions: u64,
    /// Positions written: those with at least one book entry (`book`), or all (`tally --merge`).
    pub positions_written: u64,
    /// Book entries written (`book`), or rows written (`tally --merge`).
    pub written: u64,
    /// The options the tallies were made with.
    pub options: String,
    pub seconds: f64,
}

/// Opens the tallies (files, or folders of them as Spark writes them) and checks that they were
/// made with the same options (and that `output`, if any, is none of them); unless
/// `any_ratings`, also that all or none have the ratings' columns.
fn open_all(
    inputs: &[&Path],
    output: Option<&Path>,
    any_ratings: bool,
) -> Result<Vec<TallyReader>, TallyError> {
    let mut readers: Vec<TallyReader> = Vec::new();
    let mut files = Vec::new();
    for &input in inputs {
        if input.is_dir() {
            files.extend(dataset_files(input)?);
        } else {
            files.push(input.to_path_buf());
        }
    }
    for path in &files {
        let path = path.as_path();
        if let Some(output) = output
            && same_file(path, output)
        {
            return Err(TallyError::OutputIsInput(quote_path(output)));
        }
        let reader = TallyReader::open(path)?;
        if let Some(first) = readers.first()
            && first.meta().options != reader.meta().options
        {
            return Err(TallyError::Mixed {
                first: quote_path(first.path()),
                first_options: first.meta().options.clone(),
                other: quote_path(path),
                other_options: reader.meta().options.clone(),
            });
        }
        if let Some(first) = readers.first()
            && !any_ratings
            && first.meta().ratings != reader.meta().ratings
        {
            let (with, without) = if first.meta().ratings {
                (first.path(), path)
            } else {
                (path, first.path())
            };
            return Err(TallyError::MixedRatings {
                with: quote_path(with),
                without: quote_path(without),
            });
        }
        readers.push(reader);
    }
    Ok(readers)
}

/// The files of a tally dataset (a folder, as Spark writes one): its `*.parquet` files in name
/// order (Spark's part files of a range-partitioned dataset, in key order); names starting with
/// `_` or `.` are left out.
pub fn dataset_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, TallyError> {
    let read_err = |e: std::io::Error| TallyError::Read {
        path: quote_path(dir),
        why: crate::text::reason(&e),
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let path = entry.map_err(read_err)?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| !n.starts_with(['_', '.']) && n.ends_with(".parquet")) {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(TallyError::NotTally {
            path: quote_path(dir),
            why: "the folder holds no .parquet file".into(),
        });
    }
    Ok(files)
}

/// Sums the tallies `readers` position by position, calling `each` with every position's pairs.
fn sum_tallies(
    readers: Vec<TallyReader>,
    mut each: impl FnMut(&[PairCount]) -> Result<u64, TallyError>,
) -> Result<SumReport, TallyError> {
    let start = Instant::now();
    let mut report = SumReport {
        inputs: readers.len(),
        games: readers.iter().map(|r| r.meta().games).sum(),
        pairs_read: readers.iter().map(TallyReader::rows).sum(),
        options: readers
            .first()
            .map(|r| r.meta().options.clone())
            .unwrap_or_default(),
        ..SumReport::default()
    };
    // The merge reads and sums on a thread of its own, handing on batches of positions; this
    // thread makes them into the output.
    let merge = TallyMerge::new(readers)?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Batch, TallyError>>(4);
    std::thread::scope(|scope| {
        scope.spawn(move || read_batches(merge, &tx));
        for batch in rx {
            let batch = batch?;
            let mut start = 0;
            for &end in &batch.ends {
                let pairs = &batch.pairs[start..end];
                report.positions += 1;
                report.pairs += pairs.len() as u64;
                report.written += each(pairs)?;
                start = end;
            }
        }
        Ok::<(), TallyError>(())
    })?;
    report.seconds = start.elapsed().as_secs_f64();
    // Every position is written (`tally --merge`); `book` counts its own.
    report.positions_written = report.positions;
    Ok(report)
}

/// Positions summed by a [`TallyMerge`], handed on together.
struct Batch {
    pairs: Vec<PairCount>,
    /// Where each position's pairs end in `pairs`.
    ends: Vec<usize>,
}

/// Pairs in a batch, about.
const BATCH: usize = 1 << 15;

/// Runs the merge to its end, sending its positions in batches (and its error, if any); stops
/// when nobody takes them.
fn read_batches(
    mut merge: TallyMerge,
    tx: &std::sync::mpsc::SyncSender<Result<Batch, TallyError>>,
) {
    loop {
        let mut batch = Batch {
            pairs: Vec::with_capacity(BATCH + 64),
            ends: Vec::new(),
        };
        let mut done = false;
        while batch.pairs.len() < BATCH {
            match merge.append_position(&mut batch.pairs) {
                Ok(true) => batch.ends.push(batch.pairs.len()),
                Ok(false) => {
                    done = true;
                    break;
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        if (!batch.ends.is_empty() && tx.send(Ok(batch)).is_err()) || done {
            return;
        }
    }
}

/// Sums the tallies `inputs` into one tally, `output`: `tally --merge`.
pub fn merge_tallies(
    inputs: &[&Path],
    output: &Path,
    fsync: bool,
) -> Result<SumReport, TallyError> {
    let readers = open_all(inputs, Some(output), false)?;
    let ratings = readers.first().is_some_and(|r| r.meta().ratings);
    let mut writer = TallyWriter::create_with(output, ratings)?;
    let mut report = sum_tallies(readers, |pairs| {
        writer.push_all(pairs)?;
        Ok(pairs.len() as u64)
    })?;
    let meta = TallyMeta {
        options: report.options.clone(),
        games: report.games,
        ratings,
    };
    let start = Instant::now();
    writer.finish(&meta, fsync)?;
    report.seconds += start.elapsed().as_secs_f64();
    Ok(report)
}

/// Sums the tallies `inputs` and writes the book `output` by `rules`, as `build` would from the
/// same games: `polybook book`.
pub fn book_from_tallies(
    inputs: &[&Path],
    output: &Path,
    rules: &EntryRules,
    fsync: bool,
) -> Result<SumReport, TallyError> {
    let mut writer = BookWriter::create(output)?.sync(fsync);
    // A book reads no ratings: tallies with and without them make the same book.
    let mut readers = open_all(inputs, Some(output), true)?;
    readers.iter_mut().for_each(TallyReader::skip_ratings);
    if let [reader] = &readers[..] {
        // One tally: no merge, its row groups made into entries on every core.
        let start = Instant::now();
        let threads = crate::cores::cores().min(4);
        let counted = book::write_book(reader, &mut writer, rules, threads)?;
        writer.finish()?;
        return Ok(SumReport {
            inputs: 1,
            games: reader.meta().games,
            pairs_read: reader.rows(),
            pairs: counted.pairs,
            positions: counted.positions,
            positions_written: counted.positions_written,
            written: counted.written,
            options: reader.meta().options.clone(),
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    let mut maker = PairEntries::new(rules);
    let mut entries: Vec<Entry> = Vec::new();
    let mut positions_written = 0;
    let mut report = sum_tallies(readers, |pairs| {
        entries.clear();
        maker.append(pairs, &mut entries);
        positions_written += u64::from(!entries.is_empty());
        entries.iter().try_for_each(|e| writer.write(e))?;
        Ok(entries.len() as u64)
    })?;
    writer.finish()?;
    report.positions_written = positions_written;
    Ok(report)
}

/// Whether `path` holds a Parquet file (its first four bytes are `PAR1`).
pub fn is_parquet(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"PAR1"
}
