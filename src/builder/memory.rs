//! How `--memory` is shared among the build's parts: the size of the chunks the reader cuts, how
//! many chunks may be on their way at once, how many plies a tally thread gathers before it
//! counts them, and what each tally thread's table may hold.

use super::BuildOptions;

/// Chunks the tally threads may gather into one batch (besides those being parsed).
const BATCH_CHUNKS: usize = 24;

/// The smallest chunk the reader cuts.
const MIN_CHUNK: usize = 16 << 10;

/// What the program holds whatever the input (its code and data, the threads' stacks, the
/// reader's, the spilled runs' and the output's buffers): about 5 MB measured on an empty input,
/// 7 to 8.5 MB with the output's writer. Left out of what is shared, so that the peak stays near
/// `--memory` (an eighth of it at most, for tiny budgets).
const FIXED: usize = 8 << 20;

/// How `--memory` is shared: the chunks and plies on their way to the tally, and the tally.
pub struct MemoryPlan {
    /// Parser threads: `--threads`, or fewer when the budget cannot keep more of them fed with
    /// chunks of at least [`MIN_CHUNK`] bytes (about 200 with the default 1G).
    pub workers: usize,
    /// Bytes of PGN the reader cuts into one chunk (whole games).
    pub chunk_size: usize,
    /// Chunks read but not yet counted by every tally thread.
    pub in_flight: usize,
    /// Plies a tally thread gathers before it applies them partition by partition, so that each
    /// partition's slots are touched in one burst, while they are in cache.
    pub batch_plies: usize,
    /// Bytes for each tally thread's table.
    pub tally_budget: usize,
}

impl MemoryPlan {
    /// The plan for `threads` parsers (at most) and `tallies` tally threads, when the output
    /// itself holds `output` bytes (an eighth of `--memory` at most, like the fixed share).
    pub fn new(opts: &BuildOptions, threads: usize, tallies: usize, output: usize) -> MemoryPlan {
        let memory = opts.memory - FIXED.min(opts.memory / 8) - output.min(opts.memory / 8);
        // A chunk costs about 5 times its size while parsed (text, plies, plies by partition, at
        // 16 bytes a ply and about 8 bytes of PGN a ply); 2 per worker and 2 more are in flight.
        let pipeline = (memory / 4).min(64 << 20);
        let fed = (pipeline / (2 * 5 * MIN_CHUNK)).saturating_sub(2) / 2;
        let workers = threads.min(fed).max(1);
        let chunk_size = (pipeline / 2 / (5 * (2 * workers + 2))).clamp(MIN_CHUNK, opts.chunk_size);
        let batch_plies = (pipeline / 4 / 16).max(4096);
        // A parsed chunk waiting to be counted holds about 2.5 times its size in plies. Every
        // parser needs chunks on their way whatever the budget says, so with many parsers the
        // floor wins over the batch's ceiling.
        let floor = 2 * workers + 2;
        let in_flight = (pipeline / (4 * chunk_size)).clamp(floor, floor.max(BATCH_CHUNKS));
        MemoryPlan {
            workers,
            chunk_size,
            in_flight,
            batch_plies,
            tally_budget: (memory - pipeline) / tallies,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan at every thread count a user's machine has, and far past it, under budgets from
    /// tiny to large: no panic, parsers at least 1 and never more than asked, every parser fed.
    #[test]
    fn a_plan_exists_at_every_thread_count_and_budget() {
        for memory in [1 << 20, 16 << 20, 64 << 20, 1 << 30, 64 << 30] {
            for threads in [1, 2, 3, 8, 11, 12, 16, 64, 128, 256, 1024, 100_000] {
                let opts = BuildOptions {
                    memory,
                    threads,
                    ..BuildOptions::default()
                };
                let tallies = if threads >= 2 { 2 } else { 1 };
                let plan = MemoryPlan::new(&opts, threads, tallies, 0);
                let at = format!("memory {memory}, threads {threads}");
                assert!((1..=threads).contains(&plan.workers), "{at}");
                assert!(plan.in_flight >= 2 * plan.workers + 2, "{at}");
                assert!(plan.chunk_size >= MIN_CHUNK, "{at}");
                assert!(plan.tally_budget > 0, "{at}");
            }
        }
        // The default budget runs a 128-core machine's parsers, all of them.
        let opts = BuildOptions::default();
        assert_eq!(MemoryPlan::new(&opts, 128, 2, 0).workers, 128);
    }
}
