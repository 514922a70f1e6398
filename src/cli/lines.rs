//! `polybook lines`: the lines of a book for one colour, as `polyglot dump-book` writes them.

use std::path::PathBuf;

use clap::ValueEnum;
use polybook::inspect::{write_lines, write_named_lines};
use shakmaty::Color;

use super::output::{Output, cannot_write, write_result};
use super::{CliResult, open_book};

#[derive(Clone, Copy, ValueEnum)]
enum Side {
    White,
    Black,
}

#[derive(clap::Args)]
pub struct Args {
    /// The Polyglot book (.bin).
    book: PathBuf,
    /// The colour that plays book moves; the other side plays every legal move that stays in book.
    #[arg(long, value_enum, ignore_case = true)]
    color: Side,
    /// Write to this file (atomically: it appears only when complete) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// End each line with its opening's ECO code and name, e.g. `{B20 Sicilian Defense}` (lichess's
    /// table: the line's last named position). Without it the output is `polyglot dump-book`'s.
    #[arg(long)]
    openings: bool,
}

pub fn run(args: Args) -> CliResult {
    let book = open_book(&args.book)?;
    let color = match args.color {
        Side::White => Color::White,
        Side::Black => Color::Black,
    };
    let mut out = Output::create(args.output.as_deref())?;
    let name = args.book.display().to_string();
    let write = if args.openings {
        write_named_lines
    } else {
        write_lines
    };
    match write(&book, &name, color, &mut out) {
        Ok(_) => out.finish(),
        // Into a file, every failure is one; to a closed pipe, the command just stops.
        Err(e) if let Some(path) = &args.output => Err(cannot_write(path, &e)),
        Err(e) => write_result(Err(e)),
    }
}
