//! `polybook filter`: a book cut down by depth, weight, share, side or reachability.

use std::path::PathBuf;

use polybook::book::LearnLayout;
use polybook::inspect::{FilterOptions, FilterReport, filter_book};
use shakmaty::Color;

use polybook::inspect::ProblemKind;

use super::{CliError, CliResult};

/// Write the part of BOOK the options keep (they combine). First per move, on the input book:
/// --min-weight, --min-share and --max-loss; then per position: --max-ply,
/// --only-white/--only-black or --moves-of, and --reachable. When nothing is left, the empty book
/// (a valid book) is written, with a warning.
#[derive(clap::Args)]
pub struct Args {
    /// The book to filter.
    book: PathBuf,
    /// The book to write (atomically; may be BOOK itself).
    #[arg(short, long, value_name = "OUT.bin")]
    output: PathBuf,
    /// Keep the positions a line of book moves reaches from the start in fewer than N plies.
    #[arg(long, value_name = "N")]
    max_ply: Option<u32>,
    /// Drop the entries whose weight is below W.
    #[arg(long, value_name = "W")]
    min_weight: Option<u16>,
    /// Drop the moves whose share of their position (as `probe` shows it) is below PCT percent.
    #[arg(long, value_name = "PCT", value_parser = percent)]
    min_share: Option<f64>,
    /// Drop the moves whose score (from `polybook analyse`) is more than CP centipawns below the
    /// best of their position's book moves; moves without a score are kept.
    #[arg(long, value_name = "CP", value_parser = clap::value_parser!(u16).range(0..=30000))]
    max_loss: Option<u16>,
    /// Read the learn fields as prodeo (scores) or polyglot; default: prodeo for a book that
    /// `analyse` wrote (it carries a mark), polyglot otherwise.
    #[arg(long, value_name = "LAYOUT")]
    learn: Option<LearnLayout>,
    /// Keep white's moves, and black's replies after which white still has a book move (a
    /// repertoire for White; White's moves alone, as `build --only-white` keeps them, are
    /// --moves-of white).
    #[arg(long, conflicts_with = "only_black")]
    only_white: bool,
    /// Keep black's moves, and white's replies after which black still has a book move.
    #[arg(long)]
    only_black: bool,
    /// Keep only the positions where this side is to move: its moves and no reply, the book
    /// `build --only-white` or `--only-black` makes from the same games. Whose move it is is
    /// learnt by walking from the start; a position no walk reaches is left out, with a warning.
    #[arg(
        long,
        value_name = "white|black",
        value_parser = super::args::parse_color,
        conflicts_with_all = ["only_white", "only_black"]
    )]
    moves_of: Option<Color>,
    /// Drop the positions on no line from the start (the ones `info` counts as isolated).
    #[arg(long)]
    reachable: bool,
    /// Print what was changed as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// A percentage from 0 to 100.
pub fn percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err("expected a percentage from 0 to 100".to_string()),
    }
}

pub fn run(args: Args) -> CliResult {
    let mut book = super::open_book_quietly(&args.book)?;
    // The book written must pass `verify`: what it cannot repair is refused (in one line, without
    // the warning about its order first).
    super::refuse_corrupt(
        &args.book,
        &[ProblemKind::Duplicate, ProblemKind::ImpossibleMove],
    )?;
    super::warn_disorder(&args.book, &book);
    if let Some(layout) = args.learn {
        book.set_learn_layout(layout);
    }
    if args.max_loss.is_some() && book.learn_layout() != LearnLayout::Scored {
        return Err(CliError::data(format!(
            "{}: has no scores for --max-loss ('polybook analyse' adds them; --learn prodeo reads a book scored elsewhere)",
            args.book.display()
        )));
    }
    let options = FilterOptions {
        max_loss: args.max_loss.map(i32::from),
        max_ply: args.max_ply,
        min_weight: args.min_weight,
        min_share: args.min_share,
        only: super::args::only_side(args.only_white, args.only_black),
        moves_of: args.moves_of,
        reachable: args.reachable,
    };
    let report = filter_book(&book, &options, &args.output).map_err(CliError::data)?;
    if report.side_unknown > 0 {
        eprintln!(
            "polybook: warning: {}: {} positions left out: no walk from the start reaches them, so whose move it is there is not known",
            args.book.display(),
            report.side_unknown
        );
    }
    if report.entries_after == 0 && report.entries_before > 0 {
        eprintln!(
            "polybook: warning: {}: the filter left no entry; wrote the empty book",
            args.output.display()
        );
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string(&report).map_err(CliError::data)?
        )
    } else {
        outln!("{}", summary(&args.output.display().to_string(), &report))
    }
}

fn summary(name: &str, r: &FilterReport) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{name}: {} → {}, {} → {} ({} removed)",
        plural(r.entries_before, "entry", "entries"),
        r.entries_after,
        plural(r.positions_before, "position", "positions"),
        r.positions_after,
        r.positions_removed()
    )
}
