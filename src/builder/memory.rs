//! How `--memory` is shared among the build's parts: the size of the chunks the reader cuts, how
//! many chunks may be on their way at once, how many plies a tally thread gathers before it
//! counts them, and what each tally thread's table may hold.

use super::BuildOptions;

/// Chunks the tally threads may gather into one batch (besides those being parsed).
const BATCH_CHUNKS: usize = 24;

/// What the program holds whatever the input (its code and data, the threads' stacks, the
/// reader's, the spilled runs' and the output's buffers): about 5 MB measured on an empty input,
/// 7 to 8.5 MB with the output's writer. Left out of what is shared, so that the peak stays near
/// `--memory` (an eighth of it at most, for tiny budgets).
const FIXED: usize = 8 << 20;

/// How `--memory` is shared: the chunks and plies on their way to the tally, and the tally.
pub struct MemoryPlan {
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
    /// The plan for `workers` parsers and `tallies` tally threads, when the output itself holds
    /// `output` bytes (an eighth of `--memory` at most, like the fixed share).
    pub fn new(opts: &BuildOptions, workers: usize, tallies: usize, output: usize) -> MemoryPlan {
        let memory = opts.memory - FIXED.min(opts.memory / 8) - output.min(opts.memory / 8);
        // A chunk costs about 5 times its size while parsed (text, plies, plies by partition, at
        // 16 bytes a ply and about 8 bytes of PGN a ply); 2 per worker and 2 more are in flight.
        let pipeline = (memory / 4).min(64 << 20);
        let chunk_size = (pipeline / 2 / (5 * (2 * workers + 2))).clamp(16 << 10, opts.chunk_size);
        let batch_plies = (pipeline / 4 / 16).max(4096);
        // A parsed chunk waiting to be counted holds about 2.5 times its size in plies.
        let in_flight = (pipeline / (4 * chunk_size)).clamp(2 * workers + 2, BATCH_CHUNKS);
        MemoryPlan {
            chunk_size,
            in_flight,
            batch_plies,
            tally_budget: (memory - pipeline) / tallies,
        }
    }
}
