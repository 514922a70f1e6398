//! `polybook dump`: every entry of a book, streamed in file order.

use std::io::{self, Write};
use std::path::PathBuf;

use polybook::book::{Book, LearnLayout, MoveScore};

use super::output::{Output, write_result};
use super::{CliResult, open_book};

#[derive(clap::Args)]
pub struct Args {
    /// The Polyglot book (.bin).
    book: PathBuf,
    /// Print JSON Lines: one object {"key","raw","weight","learn"} per entry.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV with a header line: key,raw,weight,learn (and score,depth in a scored book).
    #[arg(long)]
    csv: bool,
    /// Read the learn fields as prodeo (scores) or polyglot; default: prodeo for a book that
    /// `analyse` wrote (it carries a mark), polyglot otherwise. In a scored book each entry also
    /// shows its score (centipawns, mover's view) and depth; JSON adds "score" and "depth".
    #[arg(long, value_name = "LAYOUT")]
    learn: Option<LearnLayout>,
}

pub fn run(args: Args) -> CliResult {
    let mut book = open_book(&args.book)?;
    if let Some(layout) = args.learn {
        book.set_learn_layout(layout);
    }
    let mut out = Output::create(None)?;
    let written = dump(&book, &args, &mut out);
    // A closed pipe stops the dump quietly; so does a failing final flush to it.
    write_result(written.and_then(|()| out.flush()))?;
    out.finish().or(Ok(()))
}

fn dump(book: &Book, args: &Args, out: &mut impl Write) -> io::Result<()> {
    let scored = book.learn_layout() == LearnLayout::Scored;
    // A scored entry's score and depth; `None` for an entry without a score (depth 0).
    let verdict = |learn: u32| scored.then(|| MoveScore::from_learn(learn)).flatten();
    if args.json {
        for e in book.entries() {
            let extra = verdict(e.learn).map_or_else(String::new, |s| {
                format!(r#","score":{},"depth":{}"#, s.score, s.depth)
            });
            writeln!(
                out,
                r#"{{"key":"{}","raw":"{}","weight":{},"learn":{}{extra}}}"#,
                e.key, e.mv, e.weight, e.learn
            )?;
        }
    } else if args.csv {
        writeln!(
            out,
            "key,raw,weight,learn{}",
            if scored { ",score,depth" } else { "" }
        )?;
        for e in book.entries() {
            let extra = match verdict(e.learn) {
                Some(s) => format!(",{},{}", s.score, s.depth),
                None if scored => ",,".to_string(),
                None => String::new(),
            };
            writeln!(out, "{},{},{},{}{extra}", e.key, e.mv, e.weight, e.learn)?;
        }
    } else if scored {
        writeln!(
            out,
            "{:<16}  {:<6} {:>6} {:>7} {:>5}",
            "key", "move", "weight", "score", "depth"
        )?;
        for e in book.entries() {
            let (score, depth) = verdict(e.learn).map_or(("-".to_string(), "-".to_string()), |s| {
                (s.text(), s.depth.to_string())
            });
            writeln!(
                out,
                "{}  {:<6} {:>6} {score:>7} {depth:>5}",
                e.key,
                e.mv.to_string(),
                e.weight
            )?;
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
