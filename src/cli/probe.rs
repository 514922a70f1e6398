//! `polybook probe`: the book moves of one position, or of every position in an EPD file.
//!
//! With several books, each book's moves are shown in turn (in the order given), each under a
//! header naming the book; with `--json`, one object per book per position, with a `book` field
//! first. With one book the output is the same as it always was (no header, no `book` field).

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use clap::ArgGroup;
use polybook::book::{Book, Books, Learn, LearnLayout, MoveScore};
use polybook::diagram::diagram;
use polybook::inspect::{BookProbeJson, probe_json_in, write_probe_json_line};
use polybook::openings::LineName;
use polybook::position::{EpdLine, parse_fen_and_normalize};
use shakmaty::{Chess, Position};

use super::output::write_error;
use super::position::PositionArgs;
use super::{CliError, CliResult, open_book};

#[derive(clap::Args)]
#[command(group(ArgGroup::new("what").args(["epd"]).conflicts_with_all(["fen", "moves"])))]
pub struct Args {
    /// The Polyglot book (.bin); several books are shown one after the other. A tally
    /// (`polybook tally`'s .parquet, or a folder of them as the Spark job writes) shows each
    /// move's games and results instead.
    #[arg(required = true, value_name = "BOOK")]
    books: Vec<PathBuf>,
    /// Show the moves' statistics from this tally (a .parquet file or a folder of them) beside
    /// the book's weights.
    #[arg(long, value_name = "TALLY.parquet")]
    tally: Option<PathBuf>,
    #[command(flatten)]
    position: PositionArgs,
    /// Probe every position of a file: one FEN or EPD a line (EPD operations are ignored; blank
    /// lines and lines starting with # are skipped).
    #[arg(long, value_name = "FILE")]
    epd: Option<PathBuf>,
    /// Print JSON: one object for a position, one object a line (JSON Lines) with --epd. With
    /// several books, one object per book per position, its `book` field naming the book.
    #[arg(long)]
    json: bool,
    /// Leave out the board diagram.
    #[arg(long)]
    no_board: bool,
    /// Read the learn fields as: polyglot (PolyGlot's BookLearn games and score) or prodeo
    /// (score and depth, as `polybook analyse` writes them). Default: prodeo for a book that
    /// starts with the mark `analyse` writes, polyglot for the others.
    #[arg(long, value_name = "LAYOUT")]
    learn: Option<LearnLayout>,
}

pub fn run(args: Args) -> CliResult {
    if args.tally.is_some()
        || args
            .books
            .iter()
            .any(|p| polybook::tally::is_parquet(p) || is_tally_folder(p))
    {
        return probe_tally(&args);
    }
    // Each book is opened before anything is printed: a missing one ends the command.
    let mut books = Books::new();
    for path in &args.books {
        let mut book = open_book(path)?;
        if let Some(layout) = args.learn {
            book.set_learn_layout(layout);
        }
        books.push(path.display().to_string(), book);
    }
    let stdout = io::stdout();
    // Large buffers: `--epd` writes megabytes, and each flush is a system call (and, into a pipe,
    // a wake-up of the reader).
    let mut out = BufWriter::with_capacity(IO_BUFFER, stdout.lock());
    let result = match &args.epd {
        Some(path) => probe_epd(&books, path, &args, &mut out),
        None => {
            let (pos, line) = args.position.position_named()?;
            print_books(&books, &pos, &line, &args, !args.no_board, &mut out).map_err(write_error)
        }
    };
    out.flush().map_err(write_error)?;
    result
}

/// The size of the input and output buffers.
const IO_BUFFER: usize = 64 * 1024;

/// Probes each position of an EPD file. A line that is not a position is reported on stderr with
/// its number (and, with --json, as `{"line": N, "error": "..."}` so that output lines stay aligned
/// with input positions); the rest are still probed, and the exit code says that something failed.
fn probe_epd(books: &Books, path: &PathBuf, args: &Args, out: &mut impl Write) -> CliResult {
    let file = File::open(path).map_err(|e| super::file_error("open EPD file", path, &e))?;
    let mut reader = BufReader::with_capacity(IO_BUFFER, file);
    let head = reader
        .fill_buf()
        .map_err(|e| super::file_error("read EPD file", path, &e))?;
    super::refuse_binary(path, head, "an EPD file (text)")?;
    let mut errors = super::Warnings::new("polybook: error:", path);
    // One buffer for every input line and one for every JSON line, reused.
    let (mut bytes, mut json, mut fen) = (Vec::new(), Vec::new(), String::new());
    let mut bad = 0usize;
    let mut number = 0usize;
    loop {
        bytes.clear();
        let read = reader.read_until(b'\n', &mut bytes);
        number += 1;
        let read = read.map_err(|e| CliError::data(format!("{}:{number}: {e}", path.display())))?;
        if read == 0 {
            break;
        }
        // What `BufRead::lines` gives: the line without its `\n`, and an error if it is not UTF-8.
        let line =
            std::str::from_utf8(bytes.strip_suffix(b"\n").unwrap_or(&bytes)).map_err(|_| {
                CliError::data(format!(
                    "{}:{number}: stream did not contain valid UTF-8",
                    path.display()
                ))
            })?;
        let Some(epd) = EpdLine::parse(line) else {
            continue;
        };
        fen.clear();
        match parse_fen_and_normalize(epd.fen, &mut fen) {
            Ok(pos) if args.json => {
                for (name, book) in books.iter() {
                    json.clear();
                    if books.len() > 1 {
                        // `{"book":NAME,` and the rest of the object.
                        json.extend_from_slice(b"{\"book\":");
                        serde_json::to_writer(&mut json, name)
                            .expect("writing to a Vec cannot fail");
                        json.push(b',');
                    }
                    let start = json.len();
                    let probe = book.probe(&pos);
                    // The position's own name: an EPD line has no line of moves.
                    let line = LineName::of_key(probe.key);
                    if book.learn_layout() == LearnLayout::Scored {
                        let probe = probe_json_in(&pos, &probe, &line, LearnLayout::Scored);
                        serde_json::to_writer(&mut json, &probe)
                            .expect("writing to a Vec cannot fail");
                        json.push(b'\n');
                    } else {
                        write_probe_json_line(&fen, &pos, &probe, &line, &mut json);
                    }
                    if books.len() > 1 {
                        json.remove(start);
                    }
                    out.write_all(&json).map_err(write_error)?;
                }
            }
            Ok(pos) => {
                let line = LineName::of_position(&pos);
                print_books(books, &pos, &line, args, false, out).map_err(write_error)?
            }
            Err(e) => {
                bad += 1;
                errors.push(format_args!("{}:{number}: {e}", path.display()));
                if args.json {
                    let obj = serde_json::json!({ "line": number, "error": e.to_string() });
                    writeln!(out, "{obj}").map_err(write_error)?;
                }
            }
        }
    }
    errors.finish();
    if bad > 0 {
        return Err(CliError::data(format!(
            "{}: {bad} line(s) were not positions",
            path.display()
        )));
    }
    Ok(())
}

/// Prints `pos`'s moves in each book: the board (if `board`) once, then each book's moves, under
/// a header naming the book when there are several.
fn print_books(
    books: &Books,
    pos: &Chess,
    line: &LineName,
    args: &Args,
    board: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    if board && !args.json {
        write!(out, "{}", diagram(pos, false))?;
        writeln!(out)?;
    }
    for (i, (name, book)) in books.iter().enumerate() {
        let name = (books.len() > 1).then_some(name);
        if name.is_some() && i > 0 && !args.json && args.epd.is_none() {
            writeln!(out)?;
        }
        print_position(book, name, pos, line, args, out)?;
    }
    Ok(())
}

/// Prints `pos`'s moves in `book`; `name` (with several books) is printed first.
fn print_position(
    book: &Book,
    name: Option<&str>,
    pos: &Chess,
    line: &LineName,
    args: &Args,
    out: &mut impl Write,
) -> io::Result<()> {
    let probe = book.probe(pos);
    let scored = book.learn_layout() == LearnLayout::Scored;
    let json = probe_json_in(pos, &probe, line, book.learn_layout());
    if args.json {
        // One compact line, as with --epd: `jq` and line-based tools read it as it is.
        match name {
            Some(book) => serde_json::to_writer(&mut *out, &BookProbeJson { book, probe: json })?,
            None => serde_json::to_writer(&mut *out, &json)?,
        }
        return writeln!(out);
    }
    if let Some(name) = name {
        writeln!(out, "book {name}")?;
    }
    writeln!(out, "FEN  {}", json.fen)?;
    writeln!(out, "key  {}   {} to move", json.key, pos.turn())?;
    if let Some(opening) = line.name() {
        writeln!(out, "opening  {opening}")?;
    }
    if json.entries.is_empty() {
        writeln!(out, "no book moves")?;
    } else {
        let last = if scored { "score depth" } else { "learn" };
        // The last column names the opening a move leads to, where it is not the line's own.
        let new_name = |e: &polybook::inspect::EntryJson| {
            (e.name != json.name).then(|| {
                let name = e.name;
                format!(
                    "  {} {}",
                    name.eco.unwrap_or(""),
                    name.opening.unwrap_or("")
                )
            })
        };
        let names = json.entries.iter().any(|e| new_name(e).is_some());
        writeln!(
            out,
            "{:<9} {:<6} {:>6} {:>7} {:>10}{}",
            "move",
            "uci",
            "weight",
            "share",
            last,
            if names { "  opening" } else { "" }
        )?;
        for e in &json.entries {
            let learn = match (scored, e.score, e.depth) {
                (true, Some(score), Some(depth)) => format!(
                    "{:>7} {depth:>3}",
                    MoveScore {
                        score,
                        depth,
                        learn: 0
                    }
                    .text()
                ),
                (true, _, _) => format!("{:>7} {:>3}", "-", "-"),
                (false, _, _) => Learn::from_raw(e.learn).to_string(),
            };
            writeln!(
                out,
                "{:<9} {:<6} {:>6} {:>6.1}% {:>10}{}",
                e.san,
                e.uci,
                e.weight,
                e.share * 100.0,
                learn,
                new_name(e).unwrap_or_default()
            )?;
        }
        let moves = json.entries.len();
        let total: u64 = json.entries.iter().map(|e| u64::from(e.weight)).sum();
        writeln!(
            out,
            "{moves} move{}, total weight {total}",
            if moves == 1 { "" } else { "s" }
        )?;
    }
    if !json.illegal.is_empty() {
        writeln!(
            out,
            "{} entr{} under this key {} not legal here (a key collision or a broken book):",
            json.illegal.len(),
            if json.illegal.len() == 1 { "y" } else { "ies" },
            if json.illegal.len() == 1 { "is" } else { "are" }
        )?;
        for e in &json.illegal {
            writeln!(
                out,
                "  raw {:<8} weight {:>6} learn {:>10}",
                e.raw,
                e.weight,
                Learn::from_raw(e.learn).to_string()
            )?;
        }
    }
    if args.epd.is_some() {
        writeln!(out)?;
    }
    Ok(())
}

/// A folder of tally files, as the Spark job writes (a folder without them is refused as a book:
/// "is a directory").
fn is_tally_folder(path: &std::path::Path) -> bool {
    path.is_dir() && polybook::tally::dataset_files(path).is_ok()
}

/// `probe TALLY.parquet` or `probe BOOK --tally TALLY.parquet`: one position's statistics from
/// a tally (with the book's weights beside them).
fn probe_tally(args: &Args) -> CliResult {
    let (tally, book) = match (&args.tally, args.books.as_slice()) {
        (Some(tally), [book]) => (tally, Some(book)),
        (None, [tally]) => (tally, None),
        _ => {
            return Err(CliError::usage(
                "a tally is probed alone (probe TALLY.parquet) or beside one book \
                 (probe BOOK --tally TALLY.parquet)",
            ));
        }
    };
    if args.epd.is_some() {
        return Err(CliError::usage("--epd cannot be used with a tally"));
    }
    let book = book.map(|p| open_book(p)).transpose()?;
    let mut lookup = polybook::tally::TallyLookup::open(&[tally.as_path()])
        .map_err(super::tally::tally_error)?;
    let (pos, line) = args.position.position_named()?;
    let pairs = lookup
        .find(polybook::book::Key::of(&pos).0)
        .map_err(super::tally::tally_error)?;
    let probe = book.as_ref().map(|b| b.probe(&pos));
    let stats =
        polybook::tally::position_stats(&pos, &line, &pairs, probe.as_ref(), lookup.has_ratings());
    if args.json {
        let text = serde_json::to_string(&stats).map_err(CliError::data)?;
        return outln!("{text}");
    }
    if !args.no_board {
        outln!("{}", diagram(&pos, false))?;
    }
    super::tally::print_stats(&stats, &pos)
}
