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
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use thiserror::Error;

pub use entries::{EntryRules, WeightScheme};
pub use game::{GameFilter, PlayerFilter, Reason, Speed, parse_date};
pub use input::Input;
pub use merge::{MergeReport, merge_books};

use crate::book::{BookError, BookWriter, Entry};
use entries::{EntryMaker, halve_combined, widen};
use game::{ChunkOutput, GameVisitor, Ply};
use spill::{RunWriter, merge_runs};
use tally::{Counts, ExactCounts, PARTITIONS, PolyglotCounts, Pressure, Tallied, Tally};

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
    /// Games left out, by reason.
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
    /// The first few games skipped or cut short, for the user to look at.
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
    runs: Vec<PathBuf>,
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
    let spill_dir: Mutex<Option<tempfile::TempDir>> = Mutex::new(None);

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
    for _ in 0..tallies {
        let (tx, rx) = sync_channel::<TallyWork>(in_flight);
        tally_txs.push(tx);
        tally_rxs.push(rx);
    }

    let mut report = BuildReport::default();
    let mut failure: Option<BuildError> = None;

    let results: Vec<Result<TallyResult<C>, BuildError>> = std::thread::scope(|s| {
        // The reader: inputs → chunks, one input after the other.
        let bytes_read = &bytes_read;
        let abort_ref = &abort;
        let reader = s.spawn(move || -> Result<(), BuildError> {
            let abort = abort_ref;
            let mut index = 0u64;
            for (source, input) in inputs.iter().enumerate() {
                let read_err = |e: std::io::Error| BuildError::Input {
                    name: input.name(),
                    why: e.to_string(),
                };
                let stream = input::open(input, bytes_read.clone()).map_err(read_err)?;
                let mut chunker = input::Chunker::new(stream, plan.chunk_size);
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
            .enumerate()
            .map(|(t, rx)| {
                let token_tx = token_tx.clone();
                let spill_dir = &spill_dir;
                let abort = &abort;
                s.spawn(move || {
                    let r = tally_thread::<C>(t, tallies, rx, token_tx, plan, opts, spill_dir);
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
                            } else {
                                &mut report.skipped
                            };
                            *map.entry(inc.reason.name()).or_insert(0) += 1;
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

    let mut writer = BookWriter::create(output)?.sync(opts.fsync);
    let mut entries: Vec<Entry> = Vec::new();
    let mut maker = EntryMaker::new(&opts.rules);
    let mut write_group = |group: &mut Vec<Tallied<ExactCounts>>,
                           report: &mut BuildReport|
     -> Result<(), BookError> {
        report.entries_before_filter += group.len() as u64;
        entries.clear();
        maker.append(group, &mut entries);
        if !entries.is_empty() {
            report.positions += 1;
            report.entries += entries.len() as u64;
        }
        for e in &entries {
            writer.write(e)?;
        }
        Ok(())
    };

    if tallies_done.iter().all(|t| t.runs.is_empty()) {
        // Everything fit in memory: partitions in order are keys in order. Each tally's
        // partitions become entries on a thread of their own; this one writes them in order.
        let owners = tallies_done.len();
        let rules = &opts.rules;
        std::thread::scope(|s| -> Result<(), BuildError> {
            let mut channels = Vec::new();
            for (t, done) in tallies_done.iter_mut().enumerate() {
                let (tx, rx) = sync_channel::<PartitionEntries>(4);
                channels.push(rx);
                s.spawn(move || {
                    for p in (t..PARTITIONS).step_by(owners) {
                        if tx
                            .send(partition_entries(&mut done.tally, p, rules))
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
            for p in 0..PARTITIONS {
                let part = channels[p % owners].recv().map_err(|_| BuildError::Temp {
                    dir: String::new(),
                    why: "a thread writing entries failed".into(),
                })?;
                report.entries_before_filter += part.before_filter;
                report.positions += part.positions;
                report.entries += part.entries;
                writer.write_encoded(&part.bytes, part.entries)?;
            }
            Ok(())
        })?;
    } else {
        // Spill what is left, then merge every run.
        let mut runs = Vec::new();
        for (t, done) in tallies_done.iter_mut().enumerate() {
            let seq = done.runs.len() as u64;
            if !done.tally.is_empty() {
                done.runs
                    .push(spill_tally(&mut done.tally, t, seq, &spill_dir, opts)?);
            }
            runs.extend(done.runs.iter().cloned());
        }
        report.spilled_runs = runs.len();
        let runs = reduce_runs(runs, &spill_dir)?;
        let halve = opts.rules.weights == WeightScheme::Polyglot;
        let mut book_err = None;
        merge_runs(&runs, |group| {
            if halve {
                halve_combined(group);
            }
            write_group(group, &mut report).map_err(|e| {
                book_err = Some(e);
                std::io::Error::other("book write failed")
            })
        })
        .map_err(|e| match book_err.take() {
            Some(b) => BuildError::Book(b),
            None => BuildError::Temp {
                dir: spill_dir_name(&spill_dir),
                why: e.to_string(),
            },
        })?;
    }
    writer.finish()?;
    drop(spill_dir);
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

/// Reads every game of `data`. pgn-reader recovers from bad movetext by itself; a broken tag
/// section is an error for that game only, after which reading goes on.
fn read_games(data: &[u8], visitor: &mut GameVisitor) {
    let mut reader = pgn_reader::Reader::new(data);
    loop {
        match reader.read_game(visitor) {
            Ok(Some(())) => {}
            Ok(None) => break,
            // Reading from memory fails only on bad syntax, and the reader has moved past it.
            Err(e) => visitor.broken(&e.to_string()),
        }
    }
    visitor.finish();
}

/// The partition of a key: its top byte (so partitions in order are keys in order).
fn partition(key: u64) -> usize {
    (key >> 56) as usize
}

/// Applies every chunk, in input order, to the partitions `t, t + n, t + 2n, …` that this
/// tally thread owns among `n`.
fn tally_thread<C: Counts>(
    t: usize,
    n: usize,
    rx: Receiver<TallyWork>,
    token_tx: SyncSender<()>,
    plan: &MemoryPlan,
    opts: &BuildOptions,
    spill_dir: &Mutex<Option<tempfile::TempDir>>,
) -> Result<TallyResult<C>, BuildError> {
    let mut tally: Tally<C> = Tally::new(Some(plan.tally_budget));
    let mut runs = Vec::new();
    let mut pending: BTreeMap<u64, TallyWork> = BTreeMap::new();
    let mut next = 0u64;
    let mut batch: Vec<TallyWork> = Vec::new();
    let mut batch_plies = 0;
    let mut apply = |batch: &mut Vec<TallyWork>| -> Result<(), BuildError> {
        for p in (t..PARTITIONS).step_by(n) {
            for work in batch.iter() {
                let plies = work.plies.partition(p);
                // Fetch a few plies ahead: overlap the cache misses.
                const AHEAD: usize = 8;
                for (i, &ply) in plies.iter().enumerate() {
                    if let Some(later) = plies.get(i + AHEAD) {
                        tally.prefetch(later.key);
                    }
                    if let Pressure::Spill = tally.add(ply) {
                        let seq = runs.len() as u64;
                        runs.push(spill_tally(&mut tally, t, seq, spill_dir, opts)?);
                        let _ = tally.add(ply);
                    }
                }
            }
        }
        for work in batch.drain(..) {
            if work.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                let _ = token_tx.send(());
            }
        }
        Ok(())
    };
    for work in rx {
        pending.insert(work.index, work);
        while let Some(work) = pending.remove(&next) {
            next += 1;
            batch_plies += work.plies.plies.len();
            batch.push(work);
            if batch_plies >= plan.batch_plies || batch.len() >= plan.in_flight / 2 {
                apply(&mut batch)?;
                batch_plies = 0;
            }
        }
    }
    apply(&mut batch)?;
    Ok(TallyResult { tally, runs })
}

/// Runs merged at once (each holds a file open and a read buffer).
const MAX_FAN_IN: usize = 64;

/// Merges runs in groups until at most [`MAX_FAN_IN`] are left, so that the last merge never
/// holds more files open than the system allows.
fn reduce_runs(
    mut runs: Vec<PathBuf>,
    spill_dir: &Mutex<Option<tempfile::TempDir>>,
) -> Result<Vec<PathBuf>, BuildError> {
    let mut pass = 0;
    while runs.len() > MAX_FAN_IN {
        let dir = spill_dir_name(spill_dir);
        let temp_err = |e: std::io::Error| BuildError::Temp {
            dir: dir.clone(),
            why: e.to_string(),
        };
        let mut merged = Vec::new();
        for (i, group) in runs.chunks(MAX_FAN_IN).enumerate() {
            let mut out = RunWriter::create(Path::new(&dir), &format!("merge-{pass}-{i}"))
                .map_err(temp_err)?;
            merge_runs(group, |records| {
                records.iter().try_for_each(|r| out.write(r))
            })
            .map_err(temp_err)?;
            merged.push(out.finish().map_err(temp_err)?);
            for run in group {
                let _ = std::fs::remove_file(run);
            }
        }
        runs = merged;
        pass += 1;
    }
    Ok(runs)
}

fn spill_dir_name(dir: &Mutex<Option<tempfile::TempDir>>) -> String {
    dir.lock()
        .ok()
        .and_then(|d| d.as_ref().map(|d| d.path().display().to_string()))
        .unwrap_or_default()
}

/// Writes every partition of `tally` as one sorted run and empties it.
fn spill_tally<C: Counts>(
    tally: &mut Tally<C>,
    t: usize,
    seq: u64,
    spill_dir: &Mutex<Option<tempfile::TempDir>>,
    opts: &BuildOptions,
) -> Result<PathBuf, BuildError> {
    let base = opts.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let temp_err = |e: std::io::Error| BuildError::Temp {
        dir: base.display().to_string(),
        why: e.to_string(),
    };
    let dir = {
        let mut guard = spill_dir.lock().map_err(|_| BuildError::Temp {
            dir: base.display().to_string(),
            why: "lock poisoned".into(),
        })?;
        if guard.is_none() {
            *guard = Some(
                tempfile::Builder::new()
                    .prefix(".polybook-build-")
                    .tempdir_in(&base)
                    .map_err(temp_err)?,
            );
        }
        guard
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default()
    };
    let mut run = RunWriter::create(&dir, &format!("run-{t}-{seq}")).map_err(temp_err)?;
    for p in 0..PARTITIONS {
        for rec in tally.drain_partition(p, seq) {
            run.write(&widen(&rec)).map_err(temp_err)?;
        }
    }
    run.finish().map_err(temp_err)
}
