//! `polybook solve`: run a test suite (EPD with bm/am/dm or matetrack's `bm #N`, or PGN mate
//! puzzles) and count the positions solved.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use polybook::engine::suite::{SuiteEntry, is_solved, parse_epd, parse_puzzles};
use polybook::engine::{Engine, Limits, Score};
use serde::Serialize;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Move};

use super::args::{EngineArgs, LimitArgs};
use super::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {
    /// The suite: an EPD file, or a PGN file of mate puzzles (by the .pgn extension).
    file: PathBuf,
    #[command(flatten)]
    limits: LimitArgs,
    /// Only the first N positions.
    #[arg(long, value_name = "N")]
    first: Option<usize>,
    /// One JSON object per position (JSON Lines), then the summary line.
    #[arg(long)]
    json: bool,
    /// Print only the failures and the summary.
    #[arg(long)]
    quiet: bool,
    /// Succeed (exit 0) when at least N positions are solved; by default every position must
    /// be, else the exit code is 1.
    #[arg(long, value_name = "N")]
    min_solved: Option<usize>,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Serialize)]
struct ResultJson {
    line: usize,
    id: Option<String>,
    fen: String,
    solved: bool,
    expected: String,
    bestmove: Option<String>,
    score: String,
    depth: u32,
    nodes: u64,
    time_ms: u128,
}

fn san(entry: &SuiteEntry, m: Move) -> String {
    San::from_move(&entry.pos, m).to_string()
}

fn expected(entry: &SuiteEntry) -> String {
    let mut parts = Vec::new();
    if let Some(n) = entry.task.mate {
        parts.push(format!("mate {n}"));
    }
    if !entry.task.best.is_empty() {
        let moves: Vec<String> = entry.task.best.iter().map(|&m| san(entry, m)).collect();
        parts.push(format!("bm {}", moves.join(" ")));
    }
    if !entry.task.avoid.is_empty() {
        let moves: Vec<String> = entry.task.avoid.iter().map(|&m| san(entry, m)).collect();
        parts.push(format!("am {}", moves.join(" ")));
    }
    parts.join("; ")
}

pub fn run(args: Args) -> CliResult {
    let options = args.engine.options()?;
    let bytes =
        std::fs::read(&args.file).map_err(|e| super::file_error("read suite", &args.file, &e))?;
    super::refuse_binary(&args.file, &bytes, "a test suite (EPD or PGN text)")?;
    // Old PGN files are often Latin-1: only FENs, tags and moves matter, all ASCII.
    let text = String::from_utf8_lossy(&bytes);
    let is_pgn = args
        .file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pgn"));
    let (mut entries, errors) = if is_pgn {
        parse_puzzles(&text)
    } else {
        parse_epd(&text)
    };
    let mut warnings = super::Warnings::new("polybook: warning:", &args.file);
    for e in &errors {
        warnings.push(format_args!("{} {e} (skipped)", args.file.display()));
    }
    warnings.finish();
    if let Some(n) = args.first {
        entries.truncate(n);
    }
    if entries.is_empty() {
        return Err(CliError::data(format!(
            "{}: no valid task ({} line(s) skipped); expected EPD with bm, am or dm, or PGN mate puzzles",
            polybook::text::quote_path(&args.file),
            errors.len()
        )));
    }
    let base = args.limits.limits(Limits {
        movetime: Some(Duration::from_millis(1000)),
        ..Limits::default()
    });
    let mut engine = Engine::try_new(options).map_err(super::args::hash_error)?;
    let mut solved = 0;
    let mut total_nodes = 0u64;
    for entry in &entries {
        engine.clear();
        let mut limits = base.clone();
        // A mate task ends as soon as a mate that short is found.
        limits.mate = entry.task.mate.filter(|&n| n > 0).map(|n| n as u32);
        let stop = Arc::new(AtomicBool::new(false));
        let result = engine.search(&entry.pos, &[], &limits, stop, &mut |_| {});
        let ok = is_solved(&entry.task, &result);
        solved += usize::from(ok);
        total_nodes += result.nodes;
        let score = match result.score {
            Score::Cp(cp) => format!("cp {cp}"),
            Score::Mate(n) => format!("mate {n}"),
        };
        if args.json {
            let json = ResultJson {
                line: entry.line,
                id: entry.id.clone(),
                fen: entry.fen.clone(),
                solved: ok,
                expected: expected(entry),
                bestmove: result
                    .best_move
                    .map(|m| m.to_uci(CastlingMode::Standard).to_string()),
                score,
                depth: result.depth,
                nodes: result.nodes,
                time_ms: result.time.as_millis(),
            };
            outln!("{}", serde_json::to_string(&json).map_err(CliError::data)?)?;
        } else if !ok || !args.quiet {
            outln!(
                "{} line {:<5} {:<12} {:<24} got {:<8} {:<10} depth {:>2} nodes {:>9} {} ms",
                if ok { "ok  " } else { "FAIL" },
                entry.line,
                entry.id.as_deref().unwrap_or("-"),
                expected(entry),
                result.best_move.map_or("-".to_string(), |m| san(entry, m)),
                score,
                result.depth,
                result.nodes,
                result.time.as_millis()
            )?;
        }
    }
    eprintln!("{total_nodes} nodes in all");
    outln!("solved {solved}/{}", entries.len())?;
    // The exit code gates CI: every position solved, or at least --min-solved.
    let needed = args.min_solved.unwrap_or(entries.len());
    if solved < needed {
        return Err(CliError::data(format!(
            "solved {solved} of {} positions, fewer than the {needed} required{}",
            entries.len(),
            if args.min_solved.is_none() {
                " (all; --min-solved N to accept fewer)"
            } else {
                ""
            }
        )));
    }
    Ok(())
}
