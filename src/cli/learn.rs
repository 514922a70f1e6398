//! `polybook learn`: a book's learn fields updated from games, as PolyGlot's `BookLearn` does.

use std::path::PathBuf;

use polybook::builder::{LearnOptions, LearnReport, learn_from_games};
use polybook::pgn::input::expand;
use shakmaty::Color;

use polybook::inspect::ProblemKind;

use super::{CliError, CliResult};

/// How many changed entries the text report lists.
const SHOWN: usize = 10;

/// Update BOOK's learn fields from finished games (1-0, 0-1, 1/2-1/2; others are skipped): each
/// move of the learning side that the book has in the position records the game's result from
/// that side's view, in PolyGlot's encoding (games in the high 16 bits, points in the low 16: a
/// loss 0, a draw 1, a win 2). BOOK is rewritten in place (atomically) unless -o names another
/// file; only learn fields change.
#[derive(clap::Args)]
pub struct Args {
    /// The book that learns.
    book: PathBuf,
    /// PGN files or folders (plain or compressed); `-` reads standard input.
    #[arg(required = true, value_name = "GAMES")]
    games: Vec<PathBuf>,
    /// Only this player's moves learn (the White or Black tag, any case); games without the
    /// player are skipped. Repeat it for one person's several accounts: a side whose tag is any
    /// of the names is the player's.
    #[arg(long, value_name = "NAME")]
    player: Vec<String>,
    /// Only this colour's moves learn (with --player: the games in which the player had it).
    /// Without --player and --color both sides learn.
    #[arg(long, value_name = "white|black", value_parser = super::args::parse_color)]
    color: Option<Color>,
    /// Write the result here instead of over BOOK (atomically).
    #[arg(short, long, value_name = "OUT.bin")]
    output: Option<PathBuf>,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let book = super::open_book_quietly(&args.book)?;
    // The book written must pass `verify`: what it cannot repair is refused (an unsorted book
    // too: learning changes learn fields in place).
    super::refuse_corrupt(&args.book, &ProblemKind::ALL)?;
    super::refuse_scored(&args.book, &book)?;
    let inputs = expand(&args.games).map_err(CliError::data)?;
    let options = LearnOptions {
        player: args.player.clone(),
        color: args.color,
    };
    let out = args.output.as_ref().unwrap_or(&args.book);
    let report = learn_from_games(&book, &inputs, &options, out).map_err(CliError::data)?;
    if args.json {
        return outln!(
            "{}",
            serde_json::to_string(&report).map_err(CliError::data)?
        );
    }
    outln!("{}", summary(&out.display().to_string(), &report))?;
    for change in report.changed.iter().take(SHOWN) {
        outln!(
            "  {} {}: {} -> {}",
            change.key,
            change.uci,
            change.before,
            change.after
        )?;
    }
    if report.changed.len() > SHOWN {
        outln!("  ... and {} more", report.changed.len() - SHOWN)?;
    }
    Ok(())
}

/// The report's first line: games, moves, entries changed.
fn summary(name: &str, r: &LearnReport) -> String {
    let mut skipped = Vec::new();
    if r.unfinished > 0 {
        skipped.push(format!("{} without a result", r.unfinished));
    }
    if r.skipped > 0 {
        skipped.push(format!("{} other", r.skipped));
    }
    let skipped = match skipped.is_empty() {
        true => String::new(),
        false => format!(" (skipped: {})", skipped.join(", ")),
    };
    format!(
        "{name}: {} game{} read, {} used{skipped}; {} move{} in the book learned, {} not in the book; {} entr{} changed",
        r.games_read,
        plural(r.games_read, "", "s"),
        r.games_used,
        r.moves_learned,
        plural(r.moves_learned, "", "s"),
        r.moves_not_in_book,
        r.changed.len(),
        plural(r.changed.len() as u64, "y", "ies"),
    )
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
