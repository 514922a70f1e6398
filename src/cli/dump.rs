//! `polybook dump`: every entry of a book, streamed in file order.

use std::io::{self, Write};
use std::path::PathBuf;

use polybook::book::Book;

use super::output::{Output, write_result};
use super::{CliResult, open_book};

#[derive(clap::Args)]
pub struct Args {
    /// The Polyglot book (.bin).
    book: PathBuf,
    /// Print JSON Lines: one object {"key","raw","weight","learn"} per entry.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV with a header line: key,raw,weight,learn.
    #[arg(long)]
    csv: bool,
}

pub fn run(args: Args) -> CliResult {
    let book = open_book(&args.book)?;
    let mut out = Output::create(None)?;
    let written = dump(&book, &args, &mut out);
    // A closed pipe stops the dump quietly; so does a failing final flush to it.
    write_result(written.and_then(|()| out.flush()))?;
    out.finish().or(Ok(()))
}

fn dump(book: &Book, args: &Args, out: &mut impl Write) -> io::Result<()> {
    if args.json {
        for e in book.entries() {
            writeln!(
                out,
                r#"{{"key":"{}","raw":"{}","weight":{},"learn":{}}}"#,
                e.key, e.mv, e.weight, e.learn
            )?;
        }
    } else if args.csv {
        writeln!(out, "key,raw,weight,learn")?;
        for e in book.entries() {
            writeln!(out, "{},{},{},{}", e.key, e.mv, e.weight, e.learn)?;
        }
    } else {
        writeln!(
            out,
            "{:<16}  {:<6} {:>6} {:>10}",
            "key", "move", "weight", "learn"
        )?;
        for e in book.entries() {
            writeln!(
                out,
                "{}  {:<6} {:>6} {:>10}",
                e.key,
                e.mv.to_string(),
                e.weight,
                e.learn
            )?;
        }
    }
    Ok(())
}
