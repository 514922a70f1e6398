//! `polybook search`: search one position and print UCI-style `info` lines, then `bestmove`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use polybook::engine::hash::hash_of;
use polybook::engine::options::max_threads;
use polybook::engine::{Engine, Limits};
use shakmaty::{CastlingMode, Position};

use super::CliResult;
use super::args::{EngineArgs, LimitArgs, hash_error};
use super::position::PositionArgs;

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
            "polybook: warning: --threads {}: this machine has {cores} cores, which the threads share",
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
