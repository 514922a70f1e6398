//! `polybook merge`: the union of several books.

use std::path::PathBuf;

use polybook::book::{Book, LearnLayout};
use polybook::builder::MergeStrategy;

use super::output::clause;
use super::{CliError, CliResult, open_book};

/// Merge books: every entry of every book; the same move in several books gets the summed weight
/// (held at 65535, where polyglot merge-book wraps around) and the first book's learn value.
/// `--strategy priority` is PolyGlot 1.4's rule instead: where several books have a position, the
/// first one listed gives all its moves.
/// Entries whose move code is no move at all are left out, with a warning and a count: the book
/// written always passes `verify`. Unsorted books are read whole.
#[derive(clap::Args)]
pub struct Args {
    /// Two or more books; for equal weights, the first book's moves come first.
    #[arg(required = true, num_args = 2.., value_name = "BOOK")]
    books: Vec<PathBuf>,
    /// The book to write (atomically).
    #[arg(short, long, value_name = "OUT.bin")]
    output: PathBuf,
    /// How books that share a position combine: `sum` the weights of a move in several books
    /// (Debian's polyglot merge-book), take the first book listed that has the position
    /// (`priority`, PolyGlot 1.4's merge-book: a small hand-made book over a big one), or keep the
    /// largest weight of a move (`max`).
    #[arg(long, value_enum, default_value_t = MergeStrategy::Sum)]
    strategy: MergeStrategy,
    /// Print what was written as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let books: Vec<Book> = args
        .books
        .iter()
        .map(|p| open_book(p))
        .collect::<Result<_, _>>()?;
    for p in &args.books {
        if polybook::builder::same_file(p, &args.output) {
            return Err(CliError::data(format!(
                "{}: is one of the inputs; refusing to write the merged book over it",
                args.output.display()
            )));
        }
    }
    let scored = |b: &Book| b.learn_layout() == LearnLayout::Scored;
    if let Some(i) = books.iter().position(|b| scored(b) != scored(&books[0])) {
        let (with, without) = if scored(&books[0]) { (0, i) } else { (i, 0) };
        return Err(CliError::data(format!(
            "{}: holds scores in its learn fields and {} does not; refusing to merge them (analyse the merged book instead)",
            args.books[with].display(),
            args.books[without].display()
        )));
    }
    let report = polybook::builder::merge_books(&books, &args.output, args.strategy)
        .map_err(CliError::data)?;
    for ((path, dropped), first) in args
        .books
        .iter()
        .zip(&report.dropped)
        .zip(&report.first_dropped)
    {
        if let Some((index, why)) = first {
            eprintln!(
                "polybook: warning: {}: {dropped} entr{} with impossible move codes left out (first: entry {index}, {why})",
                path.display(),
                if *dropped == 1 { "y" } else { "ies" },
            );
        }
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string(&report).map_err(CliError::data)?
        )?;
    } else {
        let held = clause(report.saturated > 0, || {
            format!(", {} summed weights held at 65535", report.saturated)
        });
        let skipped: u64 = report.skipped.iter().sum();
        let skipped = clause(skipped > 0, || {
            format!(", {skipped} entries left out where a book listed earlier has the position")
        });
        outln!(
            "{}: {} entries, {} positions{held}{skipped}",
            args.output.display(),
            report.entries,
            report.positions
        )?;
    }
    Ok(())
}
