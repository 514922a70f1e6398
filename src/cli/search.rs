//! `polybook search`: search one position and print UCI-style `info` lines, then `bestmove`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use polybook::engine::hash::hash_of;
use polybook::engine::options::max_threads;
use polybook::engine::tt::TableError;
use polybook::engine::{Engine, Limits, SearchOptions};
use shakmaty::{CastlingMode, Position};

use super::position::PositionArgs;
use super::{CliError, CliResult};

/// The search switches shared by `search`, `bench` and `solve`.
#[derive(clap::Args, Clone, Debug)]
pub struct EngineArgs {
    /// Turn Mate Distance Pruning off.
    #[arg(long)]
    no_mdp: bool,
    /// Turn the check extension off.
    #[arg(long)]
    no_check_extension: bool,
    /// Turn null-move pruning off.
    #[arg(long)]
    no_null_move: bool,
    /// Turn reverse futility, futility and SEE pruning off.
    #[arg(long)]
    no_futility: bool,
    /// Turn aggressive futility pruning on (experimental).
    #[arg(long)]
    aggressive_futility: bool,
    /// Turn late move reductions off.
    #[arg(long)]
    no_lmr: bool,
    /// Turn late move pruning off.
    #[arg(long)]
    no_lmp: bool,
    /// Turn the spite-check analogy on (experimental).
    #[arg(long)]
    spite_check: bool,
    /// Mate tasks (`--mate N`, `solve`'s mate puzzles) without the dedicated mate search: the
    /// normal search, stopped at the first mate short enough.
    #[arg(long)]
    no_mate_search: bool,
    /// Turn the 3-man tablebase (KQvK, KRvK) off: the search alone.
    #[arg(long)]
    no_tablebase: bool,
    /// Evaluate with the hand-crafted evaluation instead of the neural network
    /// (src/engine/net.nnue).
    #[arg(long)]
    no_nnue: bool,
    /// Transposition table size in MB.
    #[arg(long, default_value_t = SearchOptions::DEFAULT_HASH_MB)]
    hash: usize,
    /// Set a search option by name, e.g. `--set NullMove=false` (repeatable; names: MDP,
    /// CheckExtension, NullMove, Futility, AggressiveFutility, LMR, LMP, SpiteCheck, MateSearch,
    /// Tablebase, NNUE, Hash, Threads).
    #[arg(long, value_name = "NAME=VALUE")]
    set: Vec<String>,
}

impl EngineArgs {
    pub fn options(&self) -> Result<SearchOptions, CliError> {
        let mut o = SearchOptions {
            mdp: !self.no_mdp,
            check_extension: !self.no_check_extension,
            null_move: !self.no_null_move,
            futility: !self.no_futility,
            aggressive_futility: self.aggressive_futility,
            lmr: !self.no_lmr,
            lmp: !self.no_lmp,
            spite_check: self.spite_check,
            mate_search: !self.no_mate_search,
            tablebase: !self.no_tablebase,
            nnue: !self.no_nnue,
            hash_mb: self.hash.max(1),
            threads: 1,
        };
        for s in &self.set {
            let (name, value) = s.split_once('=').ok_or_else(|| {
                CliError::usage(format!(
                    "--set expects NAME=VALUE, got {}",
                    polybook::text::quote(s)
                ))
            })?;
            o.set(name.trim(), value.trim()).map_err(CliError::usage)?;
        }
        Ok(o)
    }
}

/// A hash size the machine cannot give, in one line: a usage error when it is more than the
/// memory free (refused before anything starts), a failure when the system refused it.
pub fn hash_error(e: TableError) -> CliError {
    match e {
        TableError::TooLarge { .. } => CliError::usage(e),
        TableError::OutOfMemory { .. } => CliError::data(e),
    }
}

/// How long to search, the same in `search`, `solve`, `play` and `match`: every limit given
/// applies and the first one reached ends the search, as UCI's `go depth 8 movetime 1000` does.
#[derive(clap::Args, Clone, Debug)]
pub struct LimitArgs {
    /// Search to this depth (plies; with other limits, the first reached ends the search).
    #[arg(long, value_name = "N", value_parser = at_least_one::<u32>)]
    depth: Option<u32>,
    /// Search for this many milliseconds (with other limits, the first reached ends the search).
    #[arg(long, value_name = "MS", value_parser = at_least_one::<u64>)]
    movetime: Option<u64>,
    /// Search about this many nodes (with other limits, the first reached ends the search).
    #[arg(long, value_name = "N", value_parser = at_least_one::<u64>)]
    nodes: Option<u64>,
}

/// A whole number of at least 1: `--depth 0`, `--movetime 0` and `--nodes 0` are usage errors.
pub fn at_least_one<T: std::str::FromStr + PartialOrd + From<u8>>(text: &str) -> Result<T, String> {
    match text.trim().parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        Ok(_) => Err("must be at least 1".to_string()),
        Err(_) => Err("expected a whole number".to_string()),
    }
}

impl LimitArgs {
    /// The limits given, as a budget for each move of a game (`None` when none was given).
    pub fn per_move(&self) -> Option<polybook::arena::clock::PerMove> {
        (!self.is_default()).then(|| polybook::arena::clock::PerMove {
            depth: self.depth,
            movetime: self.movetime.map(Duration::from_millis),
            nodes: self.nodes,
        })
    }

    /// No limit was given.
    pub fn is_default(&self) -> bool {
        self.depth.is_none() && self.movetime.is_none() && self.nodes.is_none()
    }

    /// The limits, or `default` when none was given.
    pub fn limits(&self, default: Limits) -> Limits {
        if self.is_default() {
            return default;
        }
        Limits {
            depth: self.depth,
            movetime: self.movetime.map(Duration::from_millis),
            nodes: self.nodes,
            ..Limits::default()
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The position; the moves of `--moves` count for repetitions.
    #[command(flatten)]
    position: PositionArgs,
    #[command(flatten)]
    limits: LimitArgs,
    /// Look for a mate in at most N moves (as UCI `go mate N`): a dedicated mate search that
    /// stops as soon as one is proven; without one, the normal search picks the move.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=62))]
    mate: Option<u32>,
    /// Search threads (Lazy SMP: helpers share the transposition table; `info` counts the nodes
    /// of all). More than the machine's cores are cut down to that many, with a note.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn run(args: Args) -> CliResult {
    let mut options = args.engine.options()?;
    if let Some(n) = args.threads {
        options.threads = n as usize;
    }
    let cores = max_threads();
    if options.threads > cores {
        eprintln!(
            "polybook: warning: --threads {}: this machine has {cores} cores; searching with {cores} threads",
            options.threads
        );
    }
    // The keys of the positions before this one, for the repetition rule.
    let mut past = Vec::new();
    let pos = args
        .position
        .position_after(|before| past.push(hash_of(before)))?;
    let mut limits = args.limits.limits(Limits {
        depth: Some(12),
        ..Limits::default()
    });
    if args.mate.is_some() {
        limits.mate = args.mate;
        // A mate search with no other limit runs until it has an answer.
        if args.limits.is_default() {
            limits.depth = None;
        }
    }
    let mut engine = Engine::try_new(options).map_err(hash_error)?;
    let stop = Arc::new(AtomicBool::new(false));
    // A failed write stops the search; the error ends the command once it has returned.
    let mut failed = None;
    let result = engine.search(&pos, &past, &limits, stop.clone(), &mut |it| {
        if failed.is_none()
            && let Err(e) = outln!("{}", it.info_line())
        {
            failed = Some(e);
            stop.store(true, Ordering::Relaxed);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    match result.best_move {
        Some(m) => {
            let mut line = format!("bestmove {}", m.to_uci(CastlingMode::Standard));
            if let Some(p) = result.pv.get(1) {
                line.push_str(&format!(" ponder {}", p.to_uci(CastlingMode::Standard)));
            }
            outln!("{line}")
        }
        None => {
            // No legal move: say why before the null move, as engines do (`score mate 0`).
            if pos.is_checkmate() {
                outln!("info depth 0 score mate 0 string checkmate: no legal move")?;
            } else if pos.is_stalemate() {
                outln!("info depth 0 score cp 0 string stalemate: no legal move")?;
            }
            outln!("bestmove 0000")
        }
    }
}
