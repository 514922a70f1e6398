//! `polybook check`: games checked against a repertoire book: where each left it, by whom, the
//! biggest gaps and the coverage.

use std::path::PathBuf;

use polybook::pgn::input::expand;
use polybook::repertoire::Player;
use polybook::repertoire::check::{CheckError, Left, check_games};

use super::progress::Bar;
use super::{CliError, CliResult, open_book};

/// Check games against a repertoire book: for each game, where it left the book (the first
/// position the book has no move for: `end`; the first move the book does not list: by the
/// `player` or the `opponent`, or `white`/`black` without --player; never: `none`), then the
/// biggest gaps (positions reached most often where the book has no answer, with the moves played
/// there) and the share of games still in the book at each ply.
///
/// A book's moves are its entries of weight 1 or more whose move is legal (weight-0 moves are
/// never played). Games are walked along their main line from their start (`FEN` set-ups too);
/// games of other variants, and with --player the games the player did not play, are left out.
#[derive(clap::Args)]
pub struct Args {
    /// PGN files or folders (plain, .gz, .zst, .bz2, .xz; `-` reads standard input).
    #[arg(required = true, value_name = "GAMES")]
    games: Vec<PathBuf>,
    /// The repertoire book (any format polybook reads).
    #[arg(long, value_name = "BOOK")]
    book: PathBuf,
    /// Only this player's games, checked from the player's side (White or Black tag, any case;
    /// repeat it for several accounts).
    #[arg(long, value_name = "NAME")]
    player: Vec<String>,
    /// How many gaps to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    gaps: usize,
    /// JSON Lines: one object per game checked (`game`, `white`, `black`, `ply`, `who`, `move`,
    /// `fen`), then one line `{"summary": {...}}` with the counts, the gaps and the coverage.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: Args) -> CliResult {
    let player = Player::new(&args.player, None).map_err(CliError::usage)?;
    let book = open_book(&args.book)?;
    let inputs = expand(&args.games).map_err(CliError::data)?;
    let bar = Bar::over_inputs(&inputs, args.quiet);
    let stop = super::interrupt::flag();
    let result = check_games(&inputs, &book, player.as_ref(), &bar, &stop);
    bar.finish();
    let mut report = result.map_err(|e| match e {
        CheckError::Stopped => CliError::interrupted(e),
        e => CliError::data(e),
    })?;
    report.gaps.truncate(args.gaps);
    if args.json {
        for g in &report.games {
            outln!("{}", serde_json::to_string(g).map_err(CliError::data)?)?;
        }
        let summary = serde_json::json!({ "summary": &report });
        outln!("{summary}")?;
        return Ok(());
    }
    for g in &report.games {
        let what = match g.who {
            Left::None => "never left the book".to_string(),
            Left::End => format!("the book ends after {} moves", g.ply),
            who => format!(
                "left at ply {} by {}",
                g.ply,
                serde_json::to_value(who)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
        };
        let mv =
            g.mv.as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
        outln!("game {} ({} - {}): {what}{mv}", g.game, g.white, g.black)?;
    }
    outln!(
        "{} games read, {} checked, {} left out",
        report.read,
        report.checked,
        report.skipped
    )?;
    let at = |n: usize| report.coverage.get(n).copied().unwrap_or(0.0) * 100.0;
    outln!(
        "in the book after 2, 4, 8, 12, 16, 20 plies: {:.1} %, {:.1} %, {:.1} %, {:.1} %, {:.1} %, {:.1} %",
        at(2),
        at(4),
        at(8),
        at(12),
        at(16),
        at(20)
    )?;
    for (i, gap) in report.gaps.iter().enumerate() {
        let moves: Vec<String> = gap
            .moves
            .iter()
            .take(5)
            .map(|(m, n)| format!("{m} {n}"))
            .collect();
        outln!(
            "gap {}: {} game{}, no book move in {} (played: {})",
            i + 1,
            gap.games,
            if gap.games == 1 { "" } else { "s" },
            gap.fen,
            moves.join(", ")
        )?;
    }
    Ok(())
}
