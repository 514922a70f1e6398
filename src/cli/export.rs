//! `polybook export`: a book's tree from the start position as one PGN game, or the positions at
//! one ply as an opening suite (EPD or PGN) for match runners.

use std::io::Write;
use std::path::PathBuf;

use polybook::book::{Book, LearnLayout};
use polybook::inspect::{
    ExportOptions, SuiteOpening, SuiteOptions, export_pgn, opening_suite, write_movetext,
};
use polybook::openings::LineName;
use shakmaty::Position;

use super::filter::percent;
use super::output::{Output, write_error};
use super::{CliError, CliResult, open_book};

/// Write BOOK's tree from the start position as one PGN game: the heaviest move of each position
/// as the main line, the other book moves as variations, each move with its weight and share as a
/// comment (`{w 120, 35.2%}`). A move back to a position earlier on its line is marked `cycle`
/// and not followed.
///
/// With --ply N, write an opening suite instead: each position that book lines reach in exactly N
/// plies, once, in a stable order (depth first, heaviest move first), as EPD lines (--epd) or as
/// one PGN game per opening (--pgn), for `fastchess`/`cutechess-cli -openings file=…`. On a book
/// with scores (`polybook analyse`), --min-eval/--max-eval keep the positions whose score, in
/// centipawns from White's view, lies in the window.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("format").required(true).args(["pgn", "epd"])))]
pub struct Args {
    /// The book to export.
    book: PathBuf,
    /// Write PGN: the tree as one game, or with --ply one game per opening.
    #[arg(long)]
    pgn: bool,
    /// Write EPD, one position per line (needs --ply).
    #[arg(long, requires = "ply")]
    epd: bool,
    /// The file to write (atomically); default: standard output.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// An opening suite: the positions book lines reach in exactly N plies.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    ply: Option<u32>,
    #[command(flatten)]
    eval: EvalWindow,
    /// Read the learn fields as prodeo (scores) or polyglot; default: prodeo for a book that
    /// `analyse` wrote (it carries a mark), polyglot otherwise.
    #[arg(long, value_name = "LAYOUT")]
    learn: Option<LearnLayout>,
    /// The longest line of the tree, in plies.
    #[arg(long, value_name = "N", default_value_t = 20, conflicts_with = "ply")]
    max_ply: u32,
    /// Leave out moves whose share of their position is below PCT percent.
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = percent)]
    min_share: f64,
    /// Write at most this many moves of the tree in all (transpositions make trees grow fast).
    #[arg(long, value_name = "N", default_value_t = 5000, conflicts_with = "ply")]
    max_moves: u64,
    /// Print what was written as one JSON object (on stderr when the PGN goes to stdout).
    #[arg(long)]
    json: bool,
}

/// `--min-eval`/`--max-eval`: both need --ply.
#[derive(clap::Args)]
#[group(requires = "ply", multiple = true)]
struct EvalWindow {
    /// With --ply: keep the positions scored at least CP centipawns for White.
    #[arg(long, value_name = "CP", allow_negative_numbers = true)]
    min_eval: Option<i32>,
    /// With --ply: keep the positions scored at most CP centipawns for White.
    #[arg(long, value_name = "CP", allow_negative_numbers = true)]
    max_eval: Option<i32>,
}

pub fn run(args: Args) -> CliResult {
    let mut book = open_book(&args.book)?;
    if let Some(layout) = args.learn {
        book.set_learn_layout(layout);
    }
    if let Some(ply) = args.ply {
        return suite(&args, &book, ply);
    }
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
    let report = export_pgn(&book, &options, &mut out).map_err(|e| output_error(&args, e))?;
    out.finish()?;
    let line = if args.json {
        serde_json::to_string(&report).map_err(CliError::data)?
    } else {
        format!(
            "{}: {} move{} written{}{}",
            destination(&args),
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
    report_line(&args, &line)
}

/// The error for output that could not be written: to `--output`'s file, or to stdout.
fn output_error(args: &Args, e: std::io::Error) -> CliError {
    match &args.output {
        Some(path) => super::output::cannot_write(path, &e),
        None => write_error(e),
    }
}

/// Where the export went, as its summary names it: `--output`'s path, or `stdout`.
fn destination(args: &Args) -> String {
    args.output
        .as_ref()
        .map_or_else(|| "stdout".to_string(), |p| p.display().to_string())
}

/// The summary: on stdout after a file, on stderr when the export has stdout to itself.
fn report_line(args: &Args, line: &str) -> CliResult {
    if args.output.is_some() {
        outln!("{line}")
    } else {
        eprintln!("{line}");
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// `--ply N`: the opening suite, as EPD or PGN.
fn suite(args: &Args, book: &Book, ply: u32) -> CliResult {
    let window = args.eval.min_eval.is_some() || args.eval.max_eval.is_some();
    if window && book.learn_layout() != LearnLayout::Scored {
        return Err(CliError::data(format!(
            "{}: has no scores for --min-eval/--max-eval ('polybook analyse' adds them; --learn prodeo reads a book scored elsewhere)",
            args.book.display()
        )));
    }
    if let (Some(lo), Some(hi)) = (args.eval.min_eval, args.eval.max_eval)
        && lo > hi
    {
        return Err(CliError::usage(format!(
            "--min-eval {lo} is above --max-eval {hi}: no position can lie in that window"
        )));
    }
    let options = SuiteOptions {
        ply,
        min_share: args.min_share,
        min_eval: args.eval.min_eval,
        max_eval: args.eval.max_eval,
    };
    let (openings, report) = opening_suite(book, &options);
    let mut out = Output::create(args.output.as_deref())?;
    let written = if args.epd {
        write_epd(&openings, &mut out)
    } else {
        write_pgn_suite(&openings, &mut out)
    };
    written.map_err(|e| output_error(args, e))?;
    out.finish()?;
    let line = if args.json {
        serde_json::to_string(&report).map_err(CliError::data)?
    } else {
        let mut left_out = Vec::new();
        if report.outside_window > 0 {
            left_out.push(format!("{} outside the window", report.outside_window));
        }
        if report.unscored > 0 {
            left_out.push(format!("{} without a score", report.unscored));
        }
        format!(
            "{}: {} opening{} at ply {ply}{}",
            destination(args),
            report.openings,
            if report.openings == 1 { "" } else { "s" },
            if left_out.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} of {} positions left out: {})",
                    report.positions_at_ply - report.openings,
                    report.positions_at_ply,
                    left_out.join(", ")
                )
            }
        )
    };
    if report.openings == 0 {
        eprintln!(
            "polybook: warning: {}: no opening at ply {ply}; wrote an empty suite",
            args.book.display()
        );
    }
    report_line(args, &line)
}

/// The name of a line of moves from the start (its last named position).
fn line_name(line: &[shakmaty::Move]) -> Option<polybook::openings::Opening> {
    let mut pos = shakmaty::Chess::default();
    let mut name = LineName::of_position(&pos);
    for &m in line {
        pos.play_unchecked(m);
        name.push(polybook::book::Key::of(&pos));
    }
    name.name()
}

/// One position per line, its four EPD fields and nothing else: fastchess and cutechess set up
/// the line as a FEN (counters 0 and 1).
fn write_epd(openings: &[SuiteOpening], out: &mut dyn Write) -> std::io::Result<()> {
    for o in openings {
        writeln!(out, "{}", o.epd())?;
    }
    Ok(())
}

/// One game per opening: its line of book moves from the start, with the `ECO` and `Opening` tags
/// of the line's name (lichess's table) when it has one, and the score (White's view) as a comment
/// after the last move when the book has one.
fn write_pgn_suite(openings: &[SuiteOpening], out: &mut dyn Write) -> std::io::Result<()> {
    for (i, o) in openings.iter().enumerate() {
        for (name, value) in [
            ("Event", "polybook export"),
            ("Site", "?"),
            ("Date", "????.??.??"),
            ("Round", &(i + 1).to_string()),
            ("White", "?"),
            ("Black", "?"),
            ("Result", "*"),
        ] {
            writeln!(out, "[{name} \"{value}\"]")?;
        }
        if let Some(named) = line_name(&o.line) {
            writeln!(out, "[ECO \"{}\"]", named.eco)?;
            writeln!(out, "[Opening \"{}\"]", named.name)?;
        }
        writeln!(out)?;
        let mut pos = shakmaty::Chess::default();
        let mut tokens = Vec::new();
        for (ply, m) in o.line.iter().enumerate() {
            if ply % 2 == 0 {
                tokens.push(format!("{}.", ply / 2 + 1));
            }
            tokens.push(
                shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string(),
            );
        }
        if let Some(e) = o.eval {
            tokens.push(format!("{{{}}}", polybook::book::score_text(e)));
        }
        tokens.push("*".to_string());
        write_movetext(&tokens, out)?;
    }
    Ok(())
}
