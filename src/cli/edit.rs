//! `polybook edit`: one move of one position set, removed or added, without rebuilding the book.

use std::path::PathBuf;

use polybook::book::{EditAction, EditReport, edit_book};
use polybook::position::parse_move;
use polybook::text::quote;
use shakmaty::{Chess, Move};

use polybook::inspect::ProblemKind;

use super::position::PositionArgs;
use super::{CliError, CliResult};

/// Change the moves of one position (--fen/--moves, default the start) in BOOK: --set a move's
/// weight, --remove a move, or --add a move not in the book yet. MOVE is in SAN or UCI, WEIGHT
/// from 0 to 65535. BOOK is rewritten in place (atomically) unless -o names another file; the
/// result is sorted. A refused edit leaves every file untouched.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["set", "remove", "add"])))]
pub struct Args {
    /// The book to change.
    book: PathBuf,
    #[command(flatten)]
    position: PositionArgs,
    /// Give a move already in the book a new weight.
    #[arg(long, value_name = "MOVE=WEIGHT")]
    set: Option<String>,
    /// Take a move out of the book.
    #[arg(long, value_name = "MOVE")]
    remove: Option<String>,
    /// Put a move that is not in the book yet into it.
    #[arg(long, value_name = "MOVE=WEIGHT")]
    add: Option<String>,
    /// Write the result here instead of over BOOK (atomically).
    #[arg(short, long, value_name = "OUT.bin")]
    output: Option<PathBuf>,
    /// Print what was changed as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let pos = args.position.position()?;
    let action = if let Some(text) = &args.set {
        let (m, w) = move_and_weight(&pos, text, "--set")?;
        EditAction::Set(m, w)
    } else if let Some(text) = &args.add {
        let (m, w) = move_and_weight(&pos, text, "--add")?;
        EditAction::Add(m, w)
    } else {
        let text = args.remove.as_deref().unwrap_or_default();
        EditAction::Remove(book_move(&pos, text)?)
    };
    let book = super::open_book_quietly(&args.book)?;
    // The book written must pass `verify`: what it cannot repair is refused (in one line, without
    // the warning about its order first).
    super::refuse_corrupt(
        &args.book,
        &[ProblemKind::Duplicate, ProblemKind::ImpossibleMove],
    )?;
    super::warn_disorder(&args.book, &book);
    let out = args.output.as_ref().unwrap_or(&args.book);
    let report = edit_book(&book, &pos, action, out).map_err(CliError::data)?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string(&report).map_err(CliError::data)?
        )
    } else {
        outln!("{}", summary(&out.display().to_string(), &report))
    }
}

/// `MOVE=WEIGHT`, the move legal in `pos`, the weight from 0 to 65535.
fn move_and_weight(pos: &Chess, text: &str, option: &str) -> Result<(Move, u16), CliError> {
    let Some((m, w)) = text.rsplit_once('=') else {
        return Err(CliError::data(format!(
            "{option} {}: expected MOVE=WEIGHT",
            quote(text)
        )));
    };
    let weight = w.trim().parse::<u16>().map_err(|_| {
        CliError::data(format!(
            "{option} {}: the weight must be a whole number from 0 to 65535",
            quote(text)
        ))
    })?;
    Ok((book_move(pos, m.trim())?, weight))
}

fn book_move(pos: &Chess, text: &str) -> Result<Move, CliError> {
    parse_move(pos, text).map_err(|why| {
        CliError::data(format!(
            "move {}: {why} in {}",
            quote(text),
            polybook::position::fen_of(pos)
        ))
    })
}

fn summary(name: &str, r: &EditReport) -> String {
    let what = match (r.weight_before, r.weight_after) {
        (Some(a), Some(b)) => format!("weight {a} → {b}"),
        (Some(a), None) => format!("removed (weight {a})"),
        (None, Some(b)) => format!("added (weight {b})"),
        (None, None) => "unchanged".to_string(),
    };
    format!(
        "{name}: {} in position {}: {what}; {} → {} entries",
        r.uci, r.key, r.entries_before, r.entries_after
    )
}
