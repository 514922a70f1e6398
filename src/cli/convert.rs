//! `polybook convert`: a book in any format polybook reads, written as a Polyglot book, an Arena
//! (ABK) book or PGN, the format chosen by the output's extension.

use std::io::Write;
use std::path::{Path, PathBuf};

use polybook::atomic::AtomicFile;
use polybook::book::abk_bytes;
use polybook::book::formats::abk::{ABK_HEADER_RECORDS, ABK_RECORD_SIZE};
use polybook::builder::sort_book;
use polybook::inspect::{ExportOptions, export_pgn};

use super::output::cannot_write;
use super::{CliError, CliResult, open_book};

/// Convert BOOK (a Polyglot book, an Arena .abk, a ChessBase .ctg, a Chessmaster .obk or a
/// BrainLearn/ShashChess/SugaR .exp experience file: every format polybook reads) into the format
/// OUT's extension names:
///
/// .bin: a Polyglot book in the canonical order, as `sort` writes it (it passes `verify`). An
/// experience file's scores and depths are in its learn fields (ProDeo's layout, with the mark
/// that says so).
///
/// .abk: an Arena book: the tree of the book's moves from the start position (a transposition's
/// moves once, under the first line that reaches it), each move's weight as its number of games
/// at Arena's default priority (weight 0: priority 0, never played); positions the start does not
/// reach are left out.
///
/// .pgn: the tree as one PGN game with variations, as `export --pgn` writes it (its defaults:
/// 20 plies, 5000 moves).
///
/// The output is written atomically.
#[derive(clap::Args)]
pub struct Args {
    /// The book to convert.
    book: PathBuf,
    /// The file to write: OUT.bin, OUT.abk or OUT.pgn.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// With .abk: the comment in its header (at most 120 characters).
    #[arg(long, value_name = "TEXT", default_value = "")]
    comment: String,
    /// With .abk: the author in its header (at most 80 characters).
    #[arg(long, value_name = "TEXT", default_value = "")]
    author: String,
}

/// The formats `convert` writes.
enum Target {
    Polyglot,
    Abk,
    Pgn,
}

pub fn run(args: Args) -> CliResult {
    let target = target(&args.output)?;
    let book = open_book(&args.book)?;
    let line = match target {
        Target::Polyglot => {
            let report = sort_book(&book, &args.output).map_err(CliError::data)?;
            format!("{}: {} entries", args.output.display(), report.entries)
        }
        Target::Abk => {
            let bytes = abk_bytes(&book, &args.comment, &args.author);
            write_atomically(&args.output, &bytes)?;
            let moves = (bytes.len() / ABK_RECORD_SIZE).saturating_sub(ABK_HEADER_RECORDS);
            format!(
                "{}: {moves} move{} from the start position",
                args.output.display(),
                if moves == 1 { "" } else { "s" }
            )
        }
        Target::Pgn => {
            let options = ExportOptions {
                max_ply: 20,
                min_share: 0.0,
                max_moves: 5000,
                name: file_name(&args.book),
            };
            let mut pgn = Vec::new();
            let report = export_pgn(&book, &options, &mut pgn).map_err(CliError::data)?;
            write_atomically(&args.output, &pgn)?;
            format!(
                "{}: {} move{} written{}",
                args.output.display(),
                report.moves,
                if report.moves == 1 { "" } else { "s" },
                if report.truncated {
                    " (cut at 5000)"
                } else {
                    ""
                }
            )
        }
    };
    outln!("{line}")
}

/// The format OUT's extension names; any other is a usage error.
fn target(output: &Path) -> Result<Target, CliError> {
    let ext = output
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("bin") => Ok(Target::Polyglot),
        Some("abk") => Ok(Target::Abk),
        Some("pgn") => Ok(Target::Pgn),
        _ => Err(CliError::usage(format!(
            "{}: the output's extension names its format: .bin (Polyglot), .abk (Arena) or .pgn",
            output.display()
        ))),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn write_atomically(path: &Path, bytes: &[u8]) -> CliResult {
    let mut file = AtomicFile::create(path).map_err(|e| cannot_write(path, &e))?;
    file.write_all(bytes)
        .and_then(|()| file.commit(false))
        .map_err(|e| cannot_write(path, &e))
}
