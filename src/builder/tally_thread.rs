//! The tally threads: each counts its share of the partitions of every chunk's plies, in input
//! order, and at the end either sends its partitions on as book entries (all in memory) or
//! hands back the sorted runs it spilled to disk.
//!
//! Input order matters: polyglot halves a position's counts when one reaches 16384 games, so
//! the counts depend on the order in which games arrive. The parsers finish chunks in any
//! order; a [`Reorder`] puts them back.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender};

use super::book_out::Sink;
use super::count_table::{Counts, PARTITIONS, Pressure, Tally, partition};
use super::game::{GameRatings, Ply};
use super::memory::MemoryPlan;
use super::spill::{Run, spill_tally};
use super::{BuildError, BuildOptions};
use crate::pgn::reorder::Reorder;

/// The plies of one chunk grouped by partition (input order kept within each partition).
pub struct Bucketed {
    plies: Vec<Ply>,
    /// `plies[starts[p]..starts[p + 1]]` belong to partition `p`.
    starts: Vec<usize>,
    /// The chunk's games' ratings and dates, which the plies point to (`tally --ratings`;
    /// empty otherwise).
    games: Vec<GameRatings>,
}

impl Bucketed {
    /// A stable counting sort by partition (`games`: what the plies' [`Ply::game`] point to).
    pub fn new(plies: Vec<Ply>, games: Vec<GameRatings>) -> Bucketed {
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
                points: 0,
                game: 0,
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
            games,
        }
    }

    fn partition(&self, p: usize) -> &[Ply] {
        &self.plies[self.starts[p]..self.starts[p + 1]]
    }
}

/// A chunk's plies, shared by the tally threads (each applies the partitions it owns).
pub struct TallyWork {
    /// The chunk's number in input order.
    pub index: u64,
    pub plies: Arc<Bucketed>,
    /// How far into the inputs the chunk ends (0 to 1), when their size is known.
    pub progress: Option<f64>,
    /// Tally threads that still have to apply this chunk; the last one frees its slot.
    pub remaining: Arc<AtomicUsize>,
}

/// A tally thread's channels: chunks in, tokens back to the reader, finished partitions out.
pub struct TallyChannels<P> {
    pub rx: Receiver<TallyWork>,
    /// One token per chunk counted by every tally thread, so the reader may read another.
    pub token_tx: SyncSender<()>,
    /// Each partition made into the output's part, in order, when nothing was spilled.
    pub entry_tx: Sender<P>,
}

/// What one tally thread hands back.
pub struct TallyResult<C> {
    pub tally: Tally<C>,
    pub runs: Vec<Run>,
    /// Its partitions were all sent as entries (nothing spilled): `tally` is empty.
    pub in_memory: bool,
}

/// Applies every chunk, in input order, to the partitions `t, t + n, t + 2n, …` that this
/// tally thread owns among `n`. When nothing was spilled, the last chunks are applied one
/// partition at a time, and each partition, then complete, is made into the output's part (book
/// entries, or pairs) at once (while its slots are still in cache) and sent on.
pub fn tally_thread<C: Counts<Wide = S::Wide>, S: Sink>(
    t: usize,
    n: usize,
    channels: TallyChannels<S::Part>,
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
    let mut in_order = Reorder::new();
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
        in_order.push(work.index, work);
        while let Some(work) = in_order.pop() {
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
            .send(S::make_part(&mut tally, p, &opts.rules))
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
    let games = &work.plies.games[..];
    tally.set_progress(work.progress);
    // Fetch a few plies ahead: overlap the cache misses.
    const AHEAD: usize = 8;
    for (i, &ply) in plies.iter().enumerate() {
        if let Some(later) = plies.get(i + AHEAD) {
            tally.prefetch(later.key);
        }
        if let Pressure::Spill = tally.add(ply, games) {
            spill(tally)?;
            tally.add_anyway(ply, games);
        }
    }
    Ok(())
}

/// Every run the tally threads spilled, in thread order, after what each still held in memory
/// is spilled as a last run of its own.
pub fn all_runs<C: Counts>(done: Vec<TallyResult<C>>, dir: &Path) -> Result<Vec<Run>, BuildError> {
    let mut runs = Vec::new();
    for mut done in done {
        let seq = done.runs.len() as u64;
        if !done.tally.is_empty() {
            done.runs.push(spill_tally(&mut done.tally, seq, dir)?);
        }
        runs.append(&mut done.runs);
    }
    Ok(runs)
}
