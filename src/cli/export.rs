//! `polybook export --pgn`: a book's tree from the start position as one PGN game.

use std::io::Write;
use std::path::PathBuf;

use polybook::inspect::{ExportOptions, export_pgn};

use super::filter::percent;
use super::output::{Output, write_error};
use super::{CliError, CliResult, open_book};

/// Write BOOK's tree from the start position as one PGN game: the heaviest move of each position
/// as the main line, the other book moves as variations, each move with its weight and share as a
/// comment (`{w 120, 35.2%}`). A move back to a position earlier on its line is marked `cycle`
/// and not followed.
#[derive(clap::Args)]
pub struct Args {
    /// The book to export.
    book: PathBuf,
    /// Write PGN (the one format so far).
    #[arg(long, required = true)]
    pgn: bool,
    /// The PGN file to write (atomically); default: standard output.
    #[arg(short, long, value_name = "OUT.pgn")]
    output: Option<PathBuf>,
    /// The longest line, in plies.
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_ply: u32,
    /// Leave out moves whose share of their position is below PCT percent.
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = percent)]
    min_share: f64,
    /// Write at most this many moves in all (transpositions make trees grow fast).
    #[arg(long, value_name = "N", default_value_t = 5000)]
    max_moves: u64,
    /// Print what was written as one JSON object (on stderr when the PGN goes to stdout).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let book = open_book(&args.book)?;
    let name = args.book.file_name().map_or_else(
        || args.book.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let options = ExportOptions {
        max_ply: args.max_ply,
        min_share: args.min_share,
        max_moves: args.max_moves,
        name,
    };
    let mut out = Output::create(args.output.as_deref())?;
    let report = export_pgn(&book, &options, &mut out).map_err(|e| match &args.output {
        Some(path) => super::output::cannot_write(path, &e),
        None => write_error(e),
    })?;
    out.finish()?;
    let line = if args.json {
        serde_json::to_string(&report).map_err(CliError::data)?
    } else {
        format!(
            "{}: {} move{} written{}{}",
            args.output
                .as_ref()
                .map_or_else(|| "stdout".to_string(), |p| p.display().to_string()),
            report.moves,
            if report.moves == 1 { "" } else { "s" },
            if report.cycles > 0 {
                format!(", {} closing a cycle", report.cycles)
            } else {
                String::new()
            },
            if report.truncated {
                format!(" (cut at --max-moves {})", args.max_moves)
            } else {
                String::new()
            }
        )
    };
    if args.output.is_some() {
        outln!("{line}")
    } else {
        // The PGN has standard output to itself.
        eprintln!("{line}");
        let _ = std::io::stderr().flush();
        Ok(())
    }
}
