//! PGN → book: read the inputs as chunks of whole games, parse and play the chunks in parallel,
//! count every (position, move) in input order, then filter, weigh and write the entries.
//!
//! ```text
//! reader ─► chunks ─► parse workers (pgn-reader + shakmaty) ─► plies ─► tally threads ─► entries ─► .bin
//!                                       └─► game counts, incidents ─► report
//! ```
//!
//! By default the result is byte for byte what `polyglot make-book` writes. polyglot's halving of
//! a position at 16384 games depends on the order in which games arrive, so each tally thread
//! applies the chunks in input order, whatever order the workers finish them in.

mod entries;
mod game;
pub mod input;
mod merge;
mod resolve;
mod spill;
mod tally;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use thiserror::Error;

pub use entries::{EntryRules, WeightScheme};
pub use game::{GameFilter, PlayerFilter, Reason, Speed, parse_date, parse_date_arg};
pub use input::Input;
pub use merge::{MergeReport, SortReport, merge_books, sort_book};

use crate::book::{BookError, BookWriter, Entry};
use entries::{EntryMaker, halve_combined, widen};
use game::{ChunkOutput, GameVisitor, Ply};
use spill::{Run, RunWriter, merge_runs};
use tally::{Counts, ExactCounts, PARTITIONS, PolyglotCounts, Pressure, Tally};

/// Why a build failed.
#[derive(Debug, Error)]
pub enum BuildError {
    #[error("{name}: cannot read: {why}")]
    Input { name: String, why: String },
    #[error("{0}")]
    Book(#[from] BookError),
    #[error("temporary files in {dir}: {why}")]
    Temp { dir: String, why: String },
    #[error("{name}: game {game}: {detail} (--strict refuses bad games)")]
    Strict {
        name: String,
        game: u64,
        detail: String,
    },
    #[error("{0}: is one of the inputs; refusing to write the book over it")]
    OutputIsInput(String),
    #[error("interrupted; no book written")]
    Interrupted,
    #[error("no usable game in {inputs}: {read} read, none usable{why}; no book written")]
    NoUsableGame {
        inputs: String,
        read: u64,
        /// What became of them (` (122 not pgn)`), or nothing.
        why: String,
    },
}

/// How to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub filter: GameFilter,
    pub rules: EntryRules,
    /// Parser threads.
    pub threads: usize,
    /// Memory for the tally, in bytes; past it, sorted runs are spilled to `temp_dir`.
    pub memory: usize,
    /// Where spilled runs go (default: the system's temporary folder).
    pub temp_dir: Option<PathBuf>,
    /// A bad game (broken FEN, illegal move) is an error instead of being skipped.
    pub strict: bool,
    /// Bytes of PGN per chunk handed to a parser (at most; less when `memory` is small).
    pub chunk_size: usize,
    /// Wait for the book to reach the disk before it takes its name.
    pub fsync: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            filter: GameFilter::default(),
            rules: EntryRules::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory: 1 << 30,
            temp_dir: None,
            strict: false,
            chunk_size: 1 << 20,
            fsync: false,
        }
    }
}

/// What a build did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BuildReport {
    pub games: u64,
    pub used: u64,
    /// Games left out by the user's own filters (`--min-elo`, `--since`, `--player`, …), by filter.
    pub filtered: BTreeMap<&'static str, u64>,
    /// Games left out for what they are (a variant, a broken FEN or tags, not PGN), by reason.
    pub skipped: BTreeMap<&'static str, u64>,
    /// Games cut short (their plies before the bad move count), by reason.
    pub truncated: BTreeMap<&'static str, u64>,
    pub plies: u64,
    /// Distinct (position, move) pairs counted: the entries before filtering.
    pub entries_before_filter: u64,
    pub entries: u64,
    pub positions: u64,
    /// Sorted runs spilled to disk (0: all in memory).
    pub spilled_runs: usize,
    pub seconds: f64,
    pub games_per_second: f64,
    /// The first few games skipped or cut short (not those filtered out), for the user to look at.
    pub examples: Vec<String>,
}

/// Progress as the build goes: raw input bytes read so far, games parsed so far.
pub trait Progress: Sync {
    fn update(&self, bytes: u64, games: u64);
}

impl Progress for () {
    fn update(&self, _bytes: u64, _games: u64) {}
}

/// A chunk of PGN on its way to a parser.
struct Chunk {
    index: u64,
    source: usize,
    data: Vec<u8>,
    /// How far into the inputs the chunk ends (0 to 1), when their size is known.
    progress: Option<f64>,
}

/// What a parser reports about one chunk (the plies go to the tally threads).
struct ChunkStats {
    index: u64,
    source: usize,
    games: u64,
    used: u64,
    plies: u64,
    incidents: Vec<game::Incident>,
}

/// The plies of one chunk grouped by partition (input order kept within each partition).
struct Bucketed {
    plies: Vec<Ply>,
    /// `plies[starts[p]..starts[p + 1]]` belong to partition `p`.
    starts: Vec<usize>,
}

impl Bucketed {
    /// A stable counting sort by partition.
    fn new(plies: Vec<Ply>) -> Bucketed {
        let mut starts = vec![0usize; PARTITIONS + 1];
        for ply in &plies {
            starts[partition(ply.key) + 1] += 1;
        }
        for p in 0..PARTITIONS {
            starts[p + 1] += starts[p];
        }
        let mut next = starts.clone();
        let mut sorted = vec![
            Ply {
                key: 0,
                mv: 0,
                points: 0
            };
            plies.len()
        ];
        for ply in plies {
            let slot = &mut next[partition(ply.key)];
            sorted[*slot] = ply;
            *slot += 1;
        }
        Bucketed {
            plies: sorted,
            starts,
        }
    }

    fn partition(&self, p: usize) -> &[Ply] {
        &self.plies[self.starts[p]..self.starts[p + 1]]
    }
}

/// A chunk's plies, shared by the tally threads (each applies the partitions it owns).
struct TallyWork {
    index: u64,
    plies: Arc<Bucketed>,
    progress: Option<f64>,
    /// Tally threads that still have to apply this chunk; the last one frees its slot.
    remaining: Arc<AtomicUsize>,
}

/// Chunks the tally threads may gather into one batch (besides those being parsed).
const BATCH_CHUNKS: usize = 24;

/// How `--memory` is shared: the chunks and plies on their way to the tally, and the tally.
struct MemoryPlan {
    chunk_size: usize,
    /// Chunks read but not yet counted by every tally thread.
    in_flight: usize,
    /// Plies a tally thread gathers before it applies them partition by partition, so that each
    /// partition's slots are touched in one burst, while they are in cache.
    batch_plies: usize,
    /// Bytes for each tally thread's table.
    tally_budget: usize,
}

impl MemoryPlan {
    fn new(opts: &BuildOptions, workers: usize, tallies: usize) -> MemoryPlan {
        // A chunk costs about 5 times its size while parsed (text, plies, plies by partition, at
        // 16 bytes a ply and about 8 bytes of PGN a ply); 2 per worker and 2 more are in flight.
        let pipeline = (opts.memory / 4).min(64 << 20);
        let chunk_size = (pipeline / 2 / (5 * (2 * workers + 2))).clamp(16 << 10, opts.chunk_size);
        let batch_plies = (pipeline / 4 / 16).max(4096);
        // A parsed chunk waiting to be counted holds about 2.5 times its size in plies.
        let in_flight = (pipeline / (4 * chunk_size)).clamp(2 * workers + 2, BATCH_CHUNKS);
        MemoryPlan {
            chunk_size,
            in_flight,
            batch_plies,
            tally_budget: (opts.memory - pipeline) / tallies,
        }
    }
}

const MAX_EXAMPLES: usize = 20;

/// Builds a book from `inputs` and writes it to `output` atomically.
pub fn build(
    inputs: &[Input],
    output: &Path,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<BuildReport, BuildError> {
    for input in inputs {
        if matches!(input, Input::File(p) if same_file(p, output)) {
            return Err(BuildError::OutputIsInput(output.display().to_string()));
        }
    }
    match opts.rules.weights {
        WeightScheme::Polyglot => run::<PolyglotCounts>(inputs, output, opts, cancel, progress),
        _ => run::<ExactCounts>(inputs, output, opts, cancel, progress),
    }
}

/// Whether two paths name the same file (the same inode, or the same canonical path).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// What one tally thread hands back.
struct TallyResult<C> {
    tally: Tally<C>,
    runs: Vec<Run>,
    /// Its partitions were all sent as entries (nothing spilled): `tally` is empty.
    in_memory: bool,
}

fn run<C: Counts>(
    inputs: &[Input],
    output: &Path,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<BuildReport, BuildError> {
    let start = Instant::now();
    let workers = opts.threads.max(1);
    let tallies = if workers >= 2 { 2 } else { 1 };
    let plan = MemoryPlan::new(opts, workers, tallies);
    let plan = &plan;
    let in_flight = plan.in_flight;
    let abort = AtomicBool::new(false);
    let bytes_read = Arc::new(AtomicU64::new(0));
    let spill_dir = opts.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let spill_dir = spill_dir.as_path();

    let (work_tx, work_rx) = sync_channel::<Chunk>(workers * 2);
    // Shared by the parsers only, so that it is gone (and the reader stops) once they all are.
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (token_tx, token_rx) = sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        let _ = token_tx.send(());
    }
    let (stats_tx, stats_rx) = channel::<ChunkStats>();
    let mut tally_txs = Vec::new();
    let mut tally_rxs = Vec::new();
    let mut entry_txs = Vec::new();
    let mut entry_rxs = Vec::new();
    for _ in 0..tallies {
        let (tx, rx) = sync_channel::<TallyWork>(in_flight);
        tally_txs.push(tx);
        tally_rxs.push(rx);
        let (tx, rx) = channel::<PartitionEntries>();
        entry_txs.push(tx);
        entry_rxs.push(rx);
    }

    let mut report = BuildReport::default();
    let mut failure: Option<BuildError> = None;
    let mut book = BookOut::new(output, opts.fsync);

    let results: Vec<Result<TallyResult<C>, BuildError>> = std::thread::scope(|s| {
        // The reader: inputs → chunks, one input after the other.
        let bytes_read = &bytes_read;
        let abort_ref = &abort;
        // The inputs' raw size, which the bytes read are counted against (unknown for stdin).
        let total_size = inputs
            .iter()
            .map(Input::size)
            .sum::<Option<u64>>()
            .filter(|&t| t > 0);
        let reader = s.spawn(move || -> Result<(), BuildError> {
            let abort = abort_ref;
            let mut index = 0u64;
            for (source, input) in inputs.iter().enumerate() {
                let read_err = |e: std::io::Error| BuildError::Input {
                    name: input.name(),
                    why: e.to_string(),
                };
                let mut chunker = input::Chunks::open(input, bytes_read.clone(), plan.chunk_size)
                    .map_err(read_err)?;
                while let Some(data) = chunker.next_chunk().map_err(read_err)? {
                    if abort.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    if token_rx.recv().is_err() {
                        return Ok(());
                    }
                    let chunk = Chunk {
                        index,
                        source,
                        data,
                        progress: total_size.map(|total| {
                            (bytes_read.load(Ordering::Relaxed) as f64 / total as f64).min(1.0)
                        }),
                    };
                    if work_tx.send(chunk).is_err() {
                        return Ok(());
                    }
                    index += 1;
                }
            }
            Ok(())
        });

        // The parsers: chunk → plies (split by tally thread) and statistics.
        for _ in 0..workers {
            let stats_tx = stats_tx.clone();
            let tally_txs = tally_txs.clone();
            let work_rx = work_rx.clone();
            let filter = &opts.filter;
            s.spawn(move || {
                loop {
                    let chunk = match work_rx.lock() {
                        Ok(rx) => match rx.recv() {
                            Ok(c) => c,
                            Err(_) => return,
                        },
                        Err(_) => return,
                    };
                    let out = parse_chunk(&chunk.data, filter);
                    drop(chunk.data);
                    let remaining = Arc::new(AtomicUsize::new(tally_txs.len()));
                    let plies = out.plies.len() as u64;
                    let bucketed = Arc::new(Bucketed::new(out.plies));
                    for tx in &tally_txs {
                        let work = TallyWork {
                            index: chunk.index,
                            plies: bucketed.clone(),
                            progress: chunk.progress,
                            remaining: remaining.clone(),
                        };
                        if tx.send(work).is_err() {
                            return;
                        }
                    }
                    let stats = ChunkStats {
                        index: chunk.index,
                        source: chunk.source,
                        games: out.games,
                        used: out.used,
                        plies,
                        incidents: out.incidents,
                    };
                    if stats_tx.send(stats).is_err() {
                        return;
                    }
                }
            });
        }
        drop(stats_tx);
        drop(tally_txs);
        drop(work_rx);

        // The tally threads: each applies its share of every chunk, in chunk order.
        let handles: Vec<_> = tally_rxs
            .into_iter()
            .zip(entry_txs)
            .enumerate()
            .map(|(t, (rx, entry_tx))| {
                let token_tx = token_tx.clone();
                let abort = &abort;
                s.spawn(move || {
                    let channels = TallyChannels {
                        rx,
                        token_tx,
                        entry_tx,
                    };
                    let r = tally_thread::<C>(t, tallies, channels, plan, opts, spill_dir);
                    if r.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        drop(token_tx);

        // This thread: statistics in chunk order (for game numbers), --strict, progress.
        let mut pending: BTreeMap<u64, ChunkStats> = BTreeMap::new();
        let mut next = 0u64;
        let mut games_in_source: HashMap<usize, u64> = HashMap::new();
        loop {
            match stats_rx.recv_timeout(Duration::from_millis(100)) {
                Ok(stats) => {
                    pending.insert(stats.index, stats);
                    while let Some(stats) = pending.remove(&next) {
                        next += 1;
                        let before = *games_in_source.get(&stats.source).unwrap_or(&0);
                        games_in_source.insert(stats.source, before + stats.games);
                        report.games += stats.games;
                        report.used += stats.used;
                        report.plies += stats.plies;
                        for inc in stats.incidents {
                            let map = if inc.reason.truncates() {
                                &mut report.truncated
                            } else if inc.reason.is_filter() {
                                &mut report.filtered
                            } else {
                                &mut report.skipped
                            };
                            *map.entry(inc.reason.name()).or_insert(0) += 1;
                            if inc.reason.is_filter() {
                                continue;
                            }
                            let name = inputs[stats.source].name();
                            let game = before + inc.game;
                            if opts.strict && inc.reason.is_defect() && failure.is_none() {
                                failure = Some(BuildError::Strict {
                                    name: name.clone(),
                                    game,
                                    detail: inc.detail.clone(),
                                });
                                abort.store(true, Ordering::Relaxed);
                            }
                            if report.examples.len() < MAX_EXAMPLES {
                                report
                                    .examples
                                    .push(format!("{name}: game {game}: {}", inc.detail));
                            }
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            progress.update(bytes_read.load(Ordering::Relaxed), report.games);
            if cancel.load(Ordering::Relaxed) {
                abort.store(true, Ordering::Relaxed);
            }
        }
        if let Ok(Err(e)) = reader.join() {
            failure.get_or_insert(e);
        }
        // The tally threads send each partition's entries as they finish it.
        if failure.is_none()
            && !cancel.load(Ordering::Relaxed)
            && let Err(e) = book.receive(&entry_rxs, &mut report)
        {
            failure = Some(e.into());
            abort.store(true, Ordering::Relaxed);
        }
        // Entries nobody will write: the tally threads stop making them.
        drop(entry_rxs);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(BuildError::Temp {
                        dir: String::new(),
                        why: "a tally thread failed".into(),
                    })
                })
            })
            .collect()
    });
    progress.update(bytes_read.load(Ordering::Relaxed), report.games);

    if let Some(e) = failure {
        return Err(e);
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(BuildError::Interrupted);
    }
    let mut tallies_done = Vec::new();
    for r in results {
        tallies_done.push(r?);
    }

    if tallies_done.iter().any(|t| !t.in_memory) {
        // Spill what is left, then merge every run; the partitions of tallies that finished in
        // memory go in between, in key order.
        let mut runs = Vec::new();
        for done in tallies_done.iter_mut() {
            let seq = done.runs.len() as u64;
            if !done.tally.is_empty() {
                done.runs
                    .push(spill_tally(&mut done.tally, seq, spill_dir)?);
            }
            runs.append(&mut done.runs);
        }
        report.spilled_runs = runs.len();
        let runs = reduce_runs(runs, spill_dir)?;
        let halve = opts.rules.weights == WeightScheme::Polyglot;
        let mut entries: Vec<Entry> = Vec::new();
        let mut maker = EntryMaker::new(&opts.rules);
        let mut book_err = None;
        merge_runs(runs, |group| {
            let written = (|| -> Result<(), BookError> {
                book.write_held_before(partition(group[0].key), &mut report)?;
                if halve {
                    halve_combined(group);
                }
                report.entries_before_filter += group.len() as u64;
                entries.clear();
                maker.append(group, &mut entries);
                if !entries.is_empty() {
                    report.positions += 1;
                    report.entries += entries.len() as u64;
                }
                let writer = book.writer()?;
                entries.iter().try_for_each(|e| writer.write(e))
            })();
            written.map_err(|e| {
                book_err = Some(e);
                std::io::Error::other("book write failed")
            })
        })
        .map_err(|e| match book_err.take() {
            Some(b) => BuildError::Book(b),
            None => BuildError::Temp {
                dir: spill_dir.display().to_string(),
                why: e.to_string(),
            },
        })?;
        book.write_held_before(PARTITIONS, &mut report)?;
    }
    if report.used == 0 && report.filtered.is_empty() {
        // Nothing the user asked to leave out, and still nothing to count: not PGN at all.
        let skipped = report
            .skipped
            .iter()
            .map(|(k, v)| format!("{v} {}", k.replace('_', " ")))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(BuildError::NoUsableGame {
            inputs: match inputs {
                [one] => one.name(),
                [first, rest @ ..] => format!("{} and {} more", first.name(), rest.len()),
                [] => "the inputs".into(),
            },
            read: report.games,
            why: if skipped.is_empty() {
                String::new()
            } else {
                format!(" ({skipped})")
            },
        });
    }
    book.finish()?;
    report.seconds = start.elapsed().as_secs_f64();
    report.games_per_second = report.games as f64 / report.seconds.max(1e-9);
    Ok(report)
}

/// The book entries of one partition of a tally held in memory.
struct PartitionEntries {
    /// The entries, already in the book's byte format.
    bytes: Vec<u8>,
    entries: u64,
    /// Distinct (position, move) pairs the partition held.
    before_filter: u64,
    /// Positions with at least one entry.
    positions: u64,
}

/// Empties partition `p` of `tally` into its book entries, in book order.
fn partition_entries<C: Counts>(
    tally: &mut Tally<C>,
    p: usize,
    rules: &EntryRules,
) -> PartitionEntries {
    // Entries that cannot be kept are only counted, not sorted.
    let (part, held) = tally.drain_partition_with(p, 0, Some(rules.min_games));
    let mut out = PartitionEntries {
        bytes: Vec::with_capacity(part.len() * crate::book::ENTRY_SIZE),
        entries: 0,
        before_filter: held,
        positions: 0,
    };
    let mut maker = EntryMaker::new(rules);
    let mut entries = Vec::new();
    for group in part.chunk_by(|a, b| a.key == b.key) {
        entries.clear();
        maker.append(group, &mut entries);
        if !entries.is_empty() {
            out.positions += 1;
            out.entries += entries.len() as u64;
            for e in &entries {
                out.bytes.extend_from_slice(&e.to_bytes());
            }
        }
    }
    out
}

fn parse_chunk(data: &[u8], filter: &GameFilter) -> ChunkOutput {
    let mut visitor = GameVisitor::new(filter);
    visitor.out.plies.reserve(data.len() / 6);
    read_games(data, &mut visitor);
    visitor.out
}

/// Reads every game of `data` as if each game's text were read alone, cut where
/// [`input::next_game_start`] says games start (as the chunks are), so that nothing (an unclosed
/// comment, say) runs from one game into the next and a game reads the same whatever chunk holds
/// it. A reader goes through the games in runs in which it cannot read across a game start
/// ([`input::run_end`]): a run ends only where a comment was left open. pgn-reader recovers from
/// bad movetext by itself; a broken tag section is an error for that game only.
fn read_games(data: &[u8], visitor: &mut GameVisitor) {
    let mut start = 0;
    while start < data.len() {
        let stop = input::run_end(data, start);
        let mark = visitor.mark();
        if !read_game_text(&mut pgn_reader::Reader::new(&data[start..stop]), visitor) {
            // A tag section broke: read these games again one by one.
            visitor.rewind(mark);
            read_one_by_one(&data[..stop], start, visitor);
        }
        start = stop;
    }
    visitor.finish();
}

/// Reads the games of `data` from `start` each with a reader of its own. pgn-reader looks for a
/// tag's end only in what its buffer holds (16 KB at most): a game whose tag section breaks is
/// read again with a buffer that holds it whole, so that a long tag is read whole.
fn read_one_by_one(data: &[u8], start: usize, visitor: &mut GameVisitor) {
    let mut game = start;
    while game < data.len() {
        let next = input::next_game_start(data, game).unwrap_or(data.len());
        let text = &data[game..next];
        let mark = visitor.mark();
        if !read_game_text(&mut pgn_reader::Reader::new(text), visitor) {
            visitor.rewind(mark);
            let mut whole = pgn_reader::Reader::build(text)
                .set_supported_tag_line_length(text.len())
                .finish();
            read_game_text(&mut whole, visitor);
        }
        game = next;
    }
}

/// Reads the games of the reader's text to its end; `false` if a tag section broke on the way
/// (the visitor has counted it).
fn read_game_text<R: std::io::Read>(
    reader: &mut pgn_reader::Reader<R>,
    visitor: &mut GameVisitor,
) -> bool {
    let mut tags_whole = true;
    loop {
        match reader.read_game(visitor) {
            Ok(Some(())) => {}
            Ok(None) => return tags_whole,
            // Reading from memory fails only on bad syntax, and the reader has moved past it.
            Err(e) => tags_whole &= !visitor.broken(&e.to_string()),
        }
    }
}

/// The partition of a key: its top byte (so partitions in order are keys in order).
fn partition(key: u64) -> usize {
    (key >> 56) as usize
}

/// A tally thread's channels: chunks in, tokens back to the reader, entries out.
struct TallyChannels {
    rx: Receiver<TallyWork>,
    /// One token per chunk counted by every tally thread, so the reader may read another.
    token_tx: SyncSender<()>,
    /// The entries of each partition, in order, when nothing was spilled.
    entry_tx: Sender<PartitionEntries>,
}

/// Applies every chunk, in input order, to the partitions `t, t + n, t + 2n, …` that this
/// tally thread owns among `n`. When nothing was spilled, the last chunks are applied one
/// partition at a time, and each partition, then complete, is made into book entries at once
/// (while its slots are still in cache) and sent on.
fn tally_thread<C: Counts>(
    t: usize,
    n: usize,
    channels: TallyChannels,
    plan: &MemoryPlan,
    opts: &BuildOptions,
    spill_dir: &Path,
) -> Result<TallyResult<C>, BuildError> {
    let TallyChannels {
        rx,
        token_tx,
        entry_tx,
    } = channels;
    let mut tally: Tally<C> = Tally::new(Some(plan.tally_budget));
    let mut runs = Vec::new();
    let mut pending: BTreeMap<u64, TallyWork> = BTreeMap::new();
    let mut next = 0u64;
    let mut batch: Vec<TallyWork> = Vec::new();
    let mut batch_plies = 0;
    let release = |batch: &mut Vec<TallyWork>| {
        for work in batch.drain(..) {
            if work.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                let _ = token_tx.send(());
            }
        }
    };
    let apply = |tally: &mut Tally<C>,
                 batch: &mut Vec<TallyWork>,
                 runs: &mut Vec<Run>|
     -> Result<(), BuildError> {
        for p in (t..PARTITIONS).step_by(n) {
            for work in batch.iter() {
                apply_partition(tally, work, p, |tally| {
                    let seq = runs.len() as u64;
                    runs.push(spill_tally(tally, seq, spill_dir)?);
                    Ok(())
                })?;
            }
        }
        release(batch);
        Ok(())
    };
    for work in rx {
        pending.insert(work.index, work);
        while let Some(work) = pending.remove(&next) {
            next += 1;
            batch_plies += work.plies.plies.len();
            batch.push(work);
            if batch_plies >= plan.batch_plies || batch.len() >= plan.in_flight / 2 {
                apply(&mut tally, &mut batch, &mut runs)?;
                batch_plies = 0;
            }
        }
    }
    if !runs.is_empty() {
        apply(&mut tally, &mut batch, &mut runs)?;
        return Ok(TallyResult {
            tally,
            runs,
            in_memory: false,
        });
    }
    for p in (t..PARTITIONS).step_by(n) {
        for work in &batch {
            // Partitions already made into entries have given their memory back, so growing
            // past the budget here overshoots it by one partition's growth at most.
            apply_partition(&mut tally, work, p, |_| Ok(()))?;
        }
        if entry_tx
            .send(partition_entries(&mut tally, p, &opts.rules))
            .is_err()
        {
            break;
        }
    }
    release(&mut batch);
    Ok(TallyResult {
        tally,
        runs,
        in_memory: true,
    })
}

/// Counts the plies of one chunk that fall in partition `p`; `spill` is called when the tally
/// reaches its budget (it must empty the tally or accept that it grows past it).
fn apply_partition<C: Counts>(
    tally: &mut Tally<C>,
    work: &TallyWork,
    p: usize,
    mut spill: impl FnMut(&mut Tally<C>) -> Result<(), BuildError>,
) -> Result<(), BuildError> {
    let plies = work.plies.partition(p);
    tally.set_progress(work.progress);
    // Fetch a few plies ahead: overlap the cache misses.
    const AHEAD: usize = 8;
    for (i, &ply) in plies.iter().enumerate() {
        if let Some(later) = plies.get(i + AHEAD) {
            tally.prefetch(later.key);
        }
        if let Pressure::Spill = tally.add(ply) {
            spill(tally)?;
            tally.add_anyway(ply);
        }
    }
    Ok(())
}

/// The book being written: the partitions' entries in partition order, as the tally threads
/// finish them, then (if some tally spilled) the merge of the spilled runs with the partitions
/// held back meanwhile.
struct BookOut<'a> {
    output: &'a Path,
    fsync: bool,
    writer: Option<BookWriter>,
    /// Partitions received before an earlier one, which must come from the spilled runs.
    held: Vec<Option<PartitionEntries>>,
    /// Every partition below this one is written.
    next: usize,
}

impl<'a> BookOut<'a> {
    fn new(output: &'a Path, fsync: bool) -> Self {
        BookOut {
            output,
            fsync,
            writer: None,
            held: (0..PARTITIONS).map(|_| None).collect(),
            next: 0,
        }
    }

    /// The book's writer, created (as a temporary file) on first use.
    fn writer(&mut self) -> Result<&mut BookWriter, BookError> {
        let writer = match self.writer.take() {
            Some(w) => w,
            None => BookWriter::create(self.output)?.sync(self.fsync),
        };
        Ok(self.writer.insert(writer))
    }

    fn write_partition(
        &mut self,
        part: PartitionEntries,
        report: &mut BuildReport,
    ) -> Result<(), BookError> {
        report.entries_before_filter += part.before_filter;
        report.positions += part.positions;
        report.entries += part.entries;
        self.writer()?.write_encoded(&part.bytes, part.entries)
    }

    /// Writes the partitions as the tally threads (one receiver each, partition `p` from
    /// `rxs[p % n]`) send them. A tally thread that spilled sends nothing: from its first
    /// partition on, the others' partitions are held for [`BookOut::write_held_before`].
    fn receive(
        &mut self,
        rxs: &[Receiver<PartitionEntries>],
        report: &mut BuildReport,
    ) -> Result<(), BookError> {
        let mut spilled = vec![false; rxs.len()];
        for p in 0..PARTITIONS {
            let owner = p % rxs.len();
            if spilled[owner] {
                continue;
            }
            match rxs[owner].recv() {
                Ok(part) if self.next == p => {
                    self.write_partition(part, report)?;
                    self.next = p + 1;
                }
                Ok(part) => self.held[p] = Some(part),
                Err(_) => spilled[owner] = true,
            }
        }
        Ok(())
    }

    /// Writes the held partitions below partition `end`.
    fn write_held_before(&mut self, end: usize, report: &mut BuildReport) -> Result<(), BookError> {
        while self.next < end {
            if let Some(part) = self.held[self.next].take() {
                self.write_partition(part, report)?;
            }
            self.next += 1;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<(), BookError> {
        self.writer()?;
        match self.writer.take() {
            Some(writer) => writer.finish(),
            None => Ok(()),
        }
    }
}

/// Runs merged at once (each holds a file open and a read buffer).
const MAX_FAN_IN: usize = 64;

/// Merges runs in groups until at most [`MAX_FAN_IN`] are left, so that the last merge never
/// holds more files open than the system allows.
fn reduce_runs(mut runs: Vec<Run>, dir: &Path) -> Result<Vec<Run>, BuildError> {
    let temp_err = |e: std::io::Error| BuildError::Temp {
        dir: dir.display().to_string(),
        why: e.to_string(),
    };
    while runs.len() > MAX_FAN_IN {
        let mut merged = Vec::new();
        let mut rest = runs.into_iter();
        loop {
            let group: Vec<Run> = rest.by_ref().take(MAX_FAN_IN).collect();
            if group.is_empty() {
                break;
            }
            let mut out = RunWriter::create(dir).map_err(temp_err)?;
            merge_runs(group, |records| {
                records.iter().try_for_each(|r| out.write(r))
            })
            .map_err(temp_err)?;
            merged.push(out.finish().map_err(temp_err)?);
        }
        runs = merged;
    }
    Ok(runs)
}

/// Writes every partition of `tally` as one sorted run (an unnamed file in `dir`) and empties it.
fn spill_tally<C: Counts>(tally: &mut Tally<C>, seq: u64, dir: &Path) -> Result<Run, BuildError> {
    let temp_err = |e: std::io::Error| BuildError::Temp {
        dir: dir.display().to_string(),
        why: e.to_string(),
    };
    let mut run = RunWriter::create(dir).map_err(temp_err)?;
    for p in 0..PARTITIONS {
        for rec in tally.drain_partition(p, seq) {
            run.write(&widen(&rec)).map_err(temp_err)?;
        }
    }
    run.finish().map_err(temp_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use game::Incident;

    /// What reading a text chunk by chunk gave: the chunks' outputs put together, with game
    /// numbers counted from the start of the text.
    #[derive(Debug, PartialEq, Eq)]
    struct Reading {
        games: u64,
        used: u64,
        plies: Vec<Ply>,
        incidents: Vec<(u64, Reason, String)>,
    }

    fn read_in_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Reading {
        let filter = GameFilter::default();
        let mut r = Reading {
            games: 0,
            used: 0,
            plies: Vec::new(),
            incidents: Vec::new(),
        };
        for chunk in chunks {
            let out = parse_chunk(chunk, &filter);
            r.incidents.extend(out.incidents.into_iter().map(
                |Incident {
                     game,
                     reason,
                     detail,
                 }| (r.games + game, reason, detail),
            ));
            r.games += out.games;
            r.used += out.used;
            r.plies.extend(out.plies);
        }
        r
    }

    fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }

    fn rfind(hay: &[u8], byte: u8) -> Option<usize> {
        hay.iter().rposition(|&b| b == byte)
    }

    /// Where a game's movetext begins: after the blank line that ends its tags.
    fn movetext(game: &[u8]) -> usize {
        let lf = find(game, b"\n\n").map(|i| i + 2);
        let crlf = find(game, b"\n\r\n").map(|i| i + 3);
        lf.into_iter().chain(crlf).min().unwrap()
    }

    fn lf_only(text: &[u8]) -> Vec<u8> {
        text.iter().copied().filter(|&b| b != b'\r').collect()
    }

    /// The games of a real file (historical matches, CRLF: multi-line comments, variations,
    /// [FEN] games) and of a lichess export (LF, one-line movetext, a comment on every move),
    /// damaged the ways real files are: comments and variations never closed, stray `[` lines,
    /// NUL bytes, CRLF and LF mixed, a 20 KB tag, and a text that ends inside a comment.
    fn damaged_real_games() -> Vec<Vec<u8>> {
        let root = env!("CARGO_MANIFEST_DIR");
        let matches = std::fs::read(format!("{root}/pgn/world_matches.pgn")).unwrap();
        let mut lichess = Vec::new();
        let xz = std::fs::File::open(format!(
            "{root}/tests/data/pgn/lichess_magnus_2018-2022.pgn.xz"
        ))
        .unwrap();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(xz2::read::XzDecoder::new(xz), 40_000),
            &mut lichess,
        )
        .unwrap();
        let mut games = Vec::new();
        for text in [&matches[..], &lichess[..]] {
            let mut start = 0;
            let mut n = 0;
            while let Some(next) = input::next_game_start(text, start) {
                if n == 24 {
                    break;
                }
                games.push(text[start..next].to_vec());
                start = next;
                n += 1;
            }
        }
        // A comment never closed (a multi-line one).
        let g = &mut games[2];
        let close = rfind(g, b'}').unwrap();
        g.remove(close);
        // A variation never closed.
        let g = games[4..24].iter_mut().find(|g| g.contains(&b'(')).unwrap();
        let close = rfind(g, b')').unwrap();
        g.remove(close);
        // Stray `[` lines and NUL bytes in the movetext.
        let g = &mut games[6];
        let moves = movetext(g);
        let line = moves + find(&g[moves..], b"\n").unwrap() + 1;
        g.splice(
            line..line,
            b"[\n[Event\n[%eval 0.3]\n\0\0[\n".iter().copied(),
        );
        // LF throughout one game, in half of another (the file is CRLF).
        games[8] = lf_only(&games[8]);
        let half = games[9].len() / 2;
        let lf = lf_only(&games[9][..half]);
        games[9].splice(..half, lf);
        // A 20 KB tag before the others (before a [FEN] in a game that has one).
        let g = games
            .iter()
            .position(|g| find(g, b"[FEN ").is_some())
            .unwrap();
        let long = format!("[Annotator \"{}\"]\n", "x".repeat(20_000));
        games[g].splice(0..0, long.bytes());
        // NUL bytes in a tag value and in the movetext.
        let g = &mut games[12];
        let quote = find(g, b"\"").unwrap() + 1;
        g.splice(quote..quote, [0, 0, 0]);
        let mid = g.len() / 2;
        g.splice(mid..mid, [0, b' ', 0]);
        // A comment opened after a game's last one, never closed.
        let g = &mut games[14];
        let after = rfind(g, b'}').unwrap() + 1;
        g.splice(after..after, b"{ never closed\n\n".iter().copied());
        // A lichess game's last comment never closed.
        let g = &mut games[30];
        let close = rfind(g, b'}').unwrap();
        g.remove(close);
        // A blank line inside a tag section: by the rule the tags after it start a game, while
        // pgn-reader, reading on, would take them for the same game's.
        let g = &mut games[16];
        let second_tag = find(g, b"\n[").unwrap() + 1;
        g.splice(second_tag..second_tag, b"\r\n".iter().copied());
        // A tag value across lines, and a tag line left open.
        let g = &mut games[18];
        let quote = find(g, b"\"").unwrap() + 1;
        g.splice(quote..quote, b"two\r\nlines ".iter().copied());
        let g = &mut games[20];
        let end = find(g, b"]").unwrap();
        g.remove(end);
        // The text ends inside a comment.
        let last = games.last_mut().unwrap();
        let open = last.len() / 2 + find(&last[last.len() / 2..], b"{").unwrap() + 1;
        last.truncate(open);
        games
    }

    /// However a text is cut into chunks at game starts, it reads the same: the rule of where a
    /// game starts is the splitter's and the reader's alike.
    #[test]
    fn a_cut_at_any_game_start_reads_the_same() {
        let games = damaged_real_games();
        let text = games.concat();
        let whole = read_in_chunks([&text[..]]);
        // The damage is seen as such, and nothing else is lost.
        let reasons: Vec<Reason> = whole.incidents.iter().map(|i| i.1).collect();
        assert!(
            reasons.iter().filter(|&&r| r == Reason::Unfinished).count() >= 3,
            "{:?}",
            whole.incidents
        );
        assert!(!reasons.contains(&Reason::BadTags), "{:?}", whole.incidents);
        assert!(whole.games >= games.len() as u64);
        let mut start = 0;
        for g in &games[..games.len() - 1] {
            start += g.len();
            let cut = read_in_chunks([&text[..start], &text[start..]]);
            assert_eq!(cut, whole, "cut at byte {start}");
        }
    }

    /// Reading games in runs (one reader across game starts where no comment is open) is reading
    /// each game alone.
    #[test]
    fn runs_read_as_games_alone() {
        let games = damaged_real_games();
        let text = games.concat();
        let filter = GameFilter::default();
        let mut alone = GameVisitor::new(&filter);
        read_one_by_one(&text, 0, &mut alone);
        alone.finish();
        let mut runs = GameVisitor::new(&filter);
        read_games(&text, &mut runs);
        assert_eq!(runs.out.games, alone.out.games);
        assert_eq!(runs.out.used, alone.out.used);
        assert_eq!(runs.out.plies, alone.out.plies);
        let incidents = |v: &GameVisitor| -> Vec<(u64, Reason, String)> {
            v.out
                .incidents
                .iter()
                .map(|i| (i.game, i.reason, i.detail.clone()))
                .collect()
        };
        assert_eq!(incidents(&runs), incidents(&alone));
        // Most games are read in runs of several.
        let starts = std::iter::successors(Some(0), |&s| input::next_game_start(&text, s)).count();
        let runs = std::iter::successors(Some(0), |&s| {
            Some(input::run_end(&text, s)).filter(|&e| e < text.len())
        })
        .count();
        assert!(runs * 4 < starts, "{runs} runs for {starts} games");
    }

    /// The chunker, with every chunk size, cuts only at game starts: the reading is the same.
    #[test]
    fn chunks_of_every_size_read_the_same() {
        let games = damaged_real_games();
        let text = games[..16].concat();
        let whole = read_in_chunks([&text[..]]);
        let sizes = (1..600).chain((600..text.len() + 1).step_by(97));
        for target in sizes {
            let mut chunker = input::Chunker::new(&text[..], target);
            let mut chunks = Vec::new();
            while let Some(chunk) = chunker.next_chunk().unwrap() {
                chunks.push(chunk);
            }
            assert_eq!(chunks.concat(), text);
            let got = read_in_chunks(chunks.iter().map(|c| &c[..]));
            assert_eq!(got, whole, "chunks of {target} bytes");
        }
    }

    /// A tag longer than pgn-reader's buffer is read whole: the game with it reads as without it.
    #[test]
    fn a_long_tag_is_read_whole() {
        let root = env!("CARGO_MANIFEST_DIR");
        let matches = std::fs::read(format!("{root}/pgn/world_matches.pgn")).unwrap();
        // The second game has a [FEN] (a position from move 17).
        let start = input::next_game_start(&matches, 0).unwrap();
        let end = input::next_game_start(&matches, start).unwrap();
        let game = &matches[start..end];
        assert!(find(game, b"[FEN ").is_some());
        let plain = read_in_chunks([game]);
        assert!(plain.plies.len() > 10 && plain.incidents.is_empty());
        for len in [300, 20_000, 1 << 20] {
            let long = format!("[Annotator \"{}\"]\n", "y".repeat(len));
            let with_long: Vec<u8> = long.bytes().chain(game.iter().copied()).collect();
            assert_eq!(
                read_in_chunks([&with_long[..]]),
                plain,
                "a tag of {len} bytes"
            );
        }
    }
}
