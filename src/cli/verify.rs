//! `polybook verify`: whether a file is a well-formed, sorted Polyglot book, and every problem if not.

use std::io::Write;
use std::path::PathBuf;

use polybook::book::BookFormat;
use polybook::inspect::{ProblemKind, verify};

use super::output::{Output, write_result};
use super::{CliError, CliResult};

/// How many problems of each kind are listed (all are counted).
const LISTED: usize = 20;

#[derive(clap::Args)]
pub struct Args {
    /// The file to check.
    book: PathBuf,
}

pub fn run(args: Args) -> CliResult {
    let report = verify(&args.book, LISTED).map_err(CliError::data)?;
    let name = args.book.display();
    let mut out = Output::create(None)?;
    if report.is_ok() && report.format != BookFormat::Polyglot {
        write_result(writeln!(
            out,
            "{name}: OK: {} book, read as {} Polyglot entries for {} positions",
            report.format.name(),
            report.entries,
            report.positions
        ))?;
        write_result(out.flush())?;
        return Ok(());
    }
    if report.is_ok() {
        let no_moves = match report.no_moves {
            0 => String::new(),
            1 => " (1 entry with move 0, polyglot's \"no move\", which readers skip)".to_string(),
            n => format!(" ({n} entries with move 0, polyglot's \"no move\", which readers skip)"),
        };
        write_result(writeln!(
            out,
            "{name}: OK: {} entries, {} positions, sorted by key, no duplicate entries, no impossible move codes{no_moves}",
            report.entries, report.positions
        ))?;
        write_result(out.flush())?;
        return Ok(());
    }
    let mut written = Ok(());
    for kind in ProblemKind::ALL {
        for p in report.problems.iter().filter(|p| p.kind == kind) {
            written = written.and_then(|()| writeln!(out, "{name}: {p}"));
        }
        let count = report.count(kind);
        if count > LISTED as u64 {
            written = written.and_then(|()| {
                writeln!(
                    out,
                    "{name}: … and {} more problems of this kind ({})",
                    count - LISTED as u64,
                    kind.name()
                )
            });
        }
    }
    // A closed pipe stops the listing, not the verdict: the exit code still says "not a book".
    if let Err(e) = write_result(written.and_then(|()| out.flush()))
        && e.code != 0
    {
        return Err(e);
    }
    if let Some(what) = report.not_a_book {
        return Err(CliError::data(format!(
            "{name}: not a Polyglot book: {what}"
        )));
    }
    let summary: Vec<String> = ProblemKind::ALL
        .iter()
        .filter(|k| report.count(**k) > 0)
        .map(|k| format!("{} {}", report.count(*k), k.name()))
        .collect();
    // Order, duplicates, impossible move codes and stray bytes after the whole entries are what
    // `sort` repairs (a file of another kind was refused above).
    let repair = format!("; 'polybook sort {name} -o sorted.bin' repairs it");
    Err(CliError::data(format!(
        "{name}: not a valid book ({} entries read): {}{repair}",
        report.entries,
        summary.join(", ")
    )))
}
