//! The threads of a build and what flows between them.
//!
//! ```text
//!   ┌─► read_chunks
//!   │     │ Chunk
//!   │     ▼
//!   │   parse_chunks (× --threads) ──ChunkStats──► Collector ─► report, --strict, progress
//!   │     │ TallyWork
//!   │     ▼
//!   └── tally_thread (× 1 or 2): a token back to the reader once a chunk is counted
//!         │ a part per partition (or, past --memory, sorted runs merged at the end)
//!         ▼
//!       Ordered<Sink> ─► .bin (BookSink), or pairs (PairSink)
//! ```
//!
//! - [`read_chunks`] cuts the inputs, one after the other, into numbered chunks of whole games.
//! - [`parse_chunks`] (each parser) turns a chunk into plies, grouped by partition, and
//!   statistics.
//! - [`tally_thread`] counts the plies of its partitions, in chunk order.
//! - [`Collector`] takes the statistics, in chunk order.
//! - [`Ordered`] hands the partitions to the [`Sink`] in key order: the book's entries, or the
//!   pairs of a tally.
//!
//! The reader stops when `--memory`'s share of chunks in flight is out: it takes a token per
//! chunk, and a token comes back once every tally thread has counted the chunk.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::book_out::{Ordered, Sink};
use super::collect::{ChunkStats, Collector, no_usable_game};
use super::count_table::Counts;
use super::filter::GameFilter;
use super::memory::MemoryPlan;
use super::parse::parse_chunk;
use super::spill::reduce_runs;
use super::tally_thread::{
    Bucketed, TallyChannels, TallyResult, TallyWork, all_runs, tally_thread,
};
use super::{BuildError, BuildOptions, BuildReport, TruncatedInput};
use crate::pgn::Progress;
use crate::pgn::input::{self, Input};

/// A chunk of PGN on its way to a parser.
pub struct Chunk {
    /// Its number in input order (from 0, across all inputs).
    index: u64,
    /// The input it was cut from.
    source: usize,
    data: Vec<u8>,
    /// How far into the inputs the chunk ends (0 to 1), when their size is known.
    progress: Option<f64>,
}

/// Runs the build's threads over `inputs` and writes what they count to `out` (the book, or the
/// pairs). `C` is what the tally counts: polyglot's saturating counts, or exact ones.
pub fn run<C: Counts<Wide = S::Wide>, S: Sink>(
    inputs: &[Input],
    out: &mut Ordered<S>,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<BuildReport, BuildError> {
    let start = Instant::now();
    let tallies = if opts.threads >= 2 { 2 } else { 1 };
    let plan = MemoryPlan::new(opts, opts.threads, tallies, S::OUTPUT_MEMORY);
    let workers = plan.workers;
    let plan = &plan;
    let in_flight = plan.in_flight;
    let abort = AtomicBool::new(false);
    let bytes_read = Arc::new(AtomicU64::new(0));
    let spill_dir = opts.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let spill_dir = spill_dir.as_path();

    // Chunks to the parsers (one queue they all take from: when they are all gone, the reader
    // stops); the tokens that let the reader read ahead, all in hand at the start; the chunks'
    // statistics to the collector; each tally thread's plies in and entries out.
    let (work_tx, work_rx) = sync_channel::<Chunk>(workers * 2);
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
        let (tx, rx) = channel::<S::Part>();
        entry_txs.push(tx);
        entry_rxs.push(rx);
    }

    let (mut report, failure, results) = std::thread::scope(|s| {
        // 1. The reader.
        let stop = || abort.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed);
        let bytes = bytes_read.clone();
        let reading = Reading {
            chunk_size: plan.chunk_size,
            allow_truncated: opts.allow_truncated,
        };
        let reader =
            s.spawn(move || read_chunks(inputs, reading, bytes, (token_rx, work_tx), stop));

        // 2. The parsers.
        for _ in 0..workers {
            let (work_rx, tally_txs, stats_tx) =
                (work_rx.clone(), tally_txs.clone(), stats_tx.clone());
            s.spawn(move || parse_chunks(&work_rx, &tally_txs, &stats_tx, &opts.filter));
        }
        drop(stats_tx);
        drop(tally_txs);
        drop(work_rx);

        // 3. The tally threads.
        let handles: Vec<_> = tally_rxs
            .into_iter()
            .zip(entry_txs)
            .enumerate()
            .map(|(t, (rx, entry_tx))| {
                let channels = TallyChannels {
                    rx,
                    token_tx: token_tx.clone(),
                    entry_tx,
                };
                let abort = &abort;
                s.spawn(move || {
                    let r = tally_thread::<C, S>(t, tallies, channels, plan, opts, spill_dir);
                    if r.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        drop(token_tx);

        // 4. The collector, on this thread, until the parsers are done.
        let (mut report, mut failure) = Collector::new(inputs, opts.strict).run(
            stats_rx,
            progress,
            &bytes_read,
            cancel,
            &abort,
        );
        match reader.join() {
            Ok(Ok(cuts)) => report.truncated_inputs = cuts,
            Ok(Err(e)) => {
                failure.get_or_insert(e);
            }
            Err(_) => {}
        }
        // 5. The output: the tally threads send each partition as they finish it.
        if failure.is_none()
            && !cancel.load(Ordering::Relaxed)
            && let Err(e) = out.receive(&entry_rxs, &mut report)
        {
            failure = Some(e);
            abort.store(true, Ordering::Relaxed);
        }
        // Entries nobody will write: the tally threads stop making them.
        drop(entry_rxs);
        let results: Vec<Result<TallyResult<C>, BuildError>> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(BuildError::Temp {
                        dir: String::new(),
                        why: "a tally thread failed".into(),
                    })
                })
            })
            .collect();
        (report, failure, results)
    });
    progress.update(bytes_read.load(Ordering::Relaxed), report.games);

    if let Some(e) = failure {
        return Err(e);
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(BuildError::Interrupted);
    }
    let done = results.into_iter().collect::<Result<Vec<_>, _>>()?;

    if done.iter().any(|t| !t.in_memory) {
        // Spill what is left, then merge every run; the partitions of tallies that finished in
        // memory go in between, in key order.
        let runs = all_runs(done, spill_dir)?;
        report.spilled_runs = runs.len();
        let runs = reduce_runs::<S::Wide>(runs, spill_dir)?;
        out.write_merged(runs, &mut report, spill_dir)?;
    }
    if let Some(e) = no_usable_game(&report, inputs) {
        return Err(e);
    }
    report.seconds = start.elapsed().as_secs_f64();
    report.games_per_second = report.games as f64 / report.seconds.max(1e-9);
    Ok(report)
}

/// How the reader reads.
#[derive(Clone, Copy)]
struct Reading {
    /// The bytes of a chunk, about.
    chunk_size: usize,
    /// A compressed input cut short is read up to the cut (the cut is reported), not an error.
    allow_truncated: bool,
}

/// The reader: cuts `inputs`, one after the other, into chunks of whole games of about
/// `reading.chunk_size` bytes, numbered in input order, and sends them to the parsers. It takes a
/// token before each chunk, and stops early (without error) when `stop` says so or nobody is left
/// to take its chunks. `bytes_read` counts the raw (compressed) bytes read so far. A compressed
/// input cut short ([`input::Truncated`]) is an error, or with `reading.allow_truncated` read up
/// to the cut and returned among the cuts.
fn read_chunks(
    inputs: &[Input],
    reading: Reading,
    bytes_read: Arc<AtomicU64>,
    (tokens, chunks): (Receiver<()>, SyncSender<Chunk>),
    stop: impl Fn() -> bool,
) -> Result<Vec<TruncatedInput>, BuildError> {
    // The inputs' raw size, which the bytes read are counted against (unknown for stdin).
    let total_size = inputs
        .iter()
        .map(Input::size)
        .sum::<Option<u64>>()
        .filter(|&t| t > 0);
    let mut index = 0u64;
    let mut cuts = Vec::new();
    for (source, input) in inputs.iter().enumerate() {
        let read_err = |e: std::io::Error| match input::Truncated::of(&e) {
            Some(cut) => BuildError::Truncated {
                name: input.name(),
                cut: cut.clone(),
            },
            None => BuildError::Input(input.read_error(&e)),
        };
        let mut chunker =
            input::Chunks::open(input, bytes_read.clone(), reading.chunk_size).map_err(read_err)?;
        loop {
            let data = match chunker.next_chunk() {
                Ok(Some(data)) => data,
                Ok(None) => break,
                Err(e) => match input::Truncated::of(&e) {
                    Some(cut) if reading.allow_truncated => {
                        cuts.push(TruncatedInput {
                            input: input.name(),
                            at: cut.at,
                        });
                        break;
                    }
                    _ => return Err(read_err(e)),
                },
            };
            if stop() || tokens.recv().is_err() {
                return Ok(cuts);
            }
            let chunk = Chunk {
                index,
                source,
                data,
                progress: total_size.map(|total| {
                    (bytes_read.load(Ordering::Relaxed) as f64 / total as f64).min(1.0)
                }),
            };
            if chunks.send(chunk).is_err() {
                return Ok(cuts);
            }
            index += 1;
        }
    }
    Ok(cuts)
}

/// A parser: takes chunks from the shared queue until it is empty and closed, reads each into
/// plies, sends the plies (grouped by partition) to every tally thread and the chunk's
/// statistics to the collector.
fn parse_chunks(
    chunks: &Mutex<Receiver<Chunk>>,
    tallies: &[SyncSender<TallyWork>],
    stats: &Sender<ChunkStats>,
    filter: &GameFilter,
) {
    // The queue is locked only while a chunk is taken from it.
    while let Some(chunk) = chunks.lock().ok().and_then(|rx| rx.recv().ok()) {
        let out = parse_chunk(&chunk.data, filter);
        drop(chunk.data);
        let remaining = Arc::new(AtomicUsize::new(tallies.len()));
        let plies = out.plies.len() as u64;
        let bucketed = Arc::new(Bucketed::new(out.plies, out.games_rated));
        for tx in tallies {
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
        let chunk_stats = ChunkStats {
            index: chunk.index,
            source: chunk.source,
            games: out.games,
            used: out.used,
            plies,
            incidents: out.incidents,
        };
        if stats.send(chunk_stats).is_err() {
            return;
        }
    }
}
