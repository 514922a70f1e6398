//! `polybook info`: a book's statistics, with the numbers `polyglot info-book` prints.

use std::io::Write;
use std::path::PathBuf;

use polybook::inspect::book_info;

use super::output::{Output, write_result};
use super::{CliResult, open_book};

#[derive(clap::Args)]
pub struct Args {
    /// The Polyglot book (.bin).
    book: PathBuf,
    /// Print one JSON object: entries, positions, max_weight, lines_white, lines_black,
    /// positions_white, positions_black, isolated.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let book = open_book(&args.book)?;
    let info = book_info(&book);
    let mut out = Output::create(None)?;
    let written = if args.json {
        serde_json::to_writer(&mut out, &info)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        let rows: [(&str, u64); 8] = [
            ("entries", info.entries),
            ("positions (distinct keys)", info.positions),
            ("max weight", u64::from(info.max_weight)),
            ("lines for white", info.lines_white),
            ("lines for black", info.lines_black),
            ("positions on lines for white", info.positions_white),
            ("positions on lines for black", info.positions_black),
            ("isolated positions", info.isolated),
        ];
        rows.iter()
            .try_for_each(|(name, value)| writeln!(out, "{name:<30} {value:>10}"))
    };
    write_result(written.and_then(|()| out.flush()))?;
    out.finish().or(Ok(()))
}
