//! `polybook sort`: a book rewritten in the canonical order, the repair of an unsorted book.

use std::path::PathBuf;

use polybook::book::Book;
use polybook::builder::{SortReport, sort_book};

use super::output::clause;
use super::{CliError, CliResult};

/// Write BOOK in the canonical order: key ascending, then weight descending, entries equal in both
/// in stored order. The same key and move twice become one entry (weights summed, held at 65535;
/// the first entry's learn value), as `merge` does; entries whose move code is no move at all are
/// left out; entries with move 0 are kept; a truncated or padded file's bytes after its last whole
/// entry are left out. The result always passes `verify`. OUT may be BOOK
/// itself: the book is read whole first and written atomically.
#[derive(clap::Args)]
pub struct Args {
    /// The book to sort.
    book: PathBuf,
    /// The book to write (atomically).
    #[arg(short, long, value_name = "OUT.bin")]
    output: PathBuf,
    /// Print what was changed as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    // No "not sorted" warning here: the summary says what was put in order.
    // A truncated or padded book is repaired too: its whole entries are kept.
    let (book, stray_bytes) = Book::open_whole_entries(&args.book).map_err(CliError::data)?;
    let mut report = sort_book(&book, &args.output).map_err(CliError::data)?;
    report.stray_bytes = stray_bytes;
    report.changed |= stray_bytes > 0;
    let line = if args.json {
        serde_json::to_string(&report).map_err(CliError::data)?
    } else {
        summary(&args.output.display().to_string(), &report)
    };
    super::output::write_result({
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").and_then(|()| out.flush())
    })
}

fn summary(name: &str, r: &SortReport) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut changes = Vec::new();
    // Each count that is not zero says what was done to that many of its kind.
    let mut note = |n: u64, one: &str, many: &str, done: &dyn Fn(String) -> String| {
        if n > 0 {
            changes.push(done(plural(n, one, many)));
        }
    };
    note(r.out_of_order, "entry", "entries", &|n| {
        format!("{n} out of key order put in place")
    });
    note(r.reordered_positions, "position", "positions", &|n| {
        format!("the moves of {n} put in order of weight")
    });
    note(r.duplicates, "entry", "entries", &|n| {
        format!(
            "{n} repeating the key and move of an earlier one merged into it (weights summed{})",
            clause(r.saturated > 0, || format!(
                ", {} held at 65535",
                r.saturated
            ))
        )
    });
    note(r.dropped, "entry", "entries", &|n| {
        format!("{n} with impossible move codes left out")
    });
    note(r.stray_bytes, "stray byte", "stray bytes", &|n| {
        format!("{n} after the last whole entry left out")
    });
    let what = if !r.changed {
        "already in canonical order, written unchanged".to_string()
    } else if changes.is_empty() {
        "rewritten".to_string()
    } else {
        changes.join("; ")
    };
    format!(
        "{name}: {}, {}; {what}",
        plural(r.entries, "entry", "entries"),
        plural(r.positions, "position", "positions")
    )
}
