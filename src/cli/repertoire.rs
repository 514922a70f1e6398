//! `polybook repertoire`: a player's opening repertoire for one colour, built from games (PGN or
//! tallies), written as a book and, with --pgn, as a PGN tree.

use std::path::{Path, PathBuf};

use polybook::builder::BuildError;
use polybook::pgn::input::expand;
use polybook::repertoire::build::{
    Counts, RepertoireError, RepertoireOptions, ScoreLimit, build_repertoire,
};
use shakmaty::Color;

use super::args::parse_color;
use super::output::Output;
use super::progress::Bar;
use super::{CliError, CliResult, open_book};

/// Build an opening repertoire for one colour from games: at my moves the best by a lower
/// confidence bound on the score, at the opponent's every reply down to a line probability.
///
/// The games (PGN, or tallies made by `polybook tally`) are counted as `build` counts them. From
/// the start position: at my moves (the side of --color), among the moves played in at least
/// --min-games games, the --width best by the Wilson lower bound (95 %) on their score from my
/// side, (wins + draws / 2) / games; at the opponent's, every reply that keeps the line's
/// probability (the product of the opponent's reply frequencies along it) at least --min-prob
/// percent; no move at --max-ply or beyond. A position reached by several lines
/// (transpositions, by Polyglot key) is expanded once, with its most likely line.
///
/// The book holds my moves (weight by rank: with --width N, N for the best, then N - 1, … 1) and
/// the replies (weight: games). With --scores, an analysed book refutes my moves that it scores
/// more than --max-loss centipawns below the position's best scored move; moves it does not
/// score are allowed.
#[derive(clap::Args)]
pub struct Args {
    /// PGN files or folders (plain, .gz, .zst, .bz2, .xz; `-` reads standard input), or tallies
    /// (.parquet files or folders of them), not both.
    #[arg(required = true, value_name = "GAMES")]
    games: Vec<PathBuf>,
    /// My side: white or black.
    #[arg(long, value_name = "white|black", value_parser = parse_color)]
    color: Color,
    /// The book to write (atomically: a temporary file, then a rename).
    #[arg(short, long, value_name = "REP.bin")]
    output: PathBuf,
    /// Also write the repertoire as one PGN game with variations (main line: the most likely).
    #[arg(long, value_name = "REP.pgn")]
    pgn: Option<PathBuf>,
    /// Only the games in which this player (White or Black tag, any case) had --color; repeat it
    /// for one person's several accounts. PGN input only.
    #[arg(long, value_name = "NAME")]
    player: Vec<String>,
    /// A move of mine needs at least N games to be chosen.
    #[arg(long, default_value_t = 5, value_name = "N")]
    min_games: u64,
    /// My moves kept per position: the N best by the bound.
    #[arg(long, default_value_t = 1, value_name = "N")]
    width: usize,
    /// Follow the opponent's replies while the line's probability stays at least P percent
    /// (0 to 100; 0 follows every reply).
    #[arg(long, default_value_t = 0.5, value_name = "P")]
    min_prob: f64,
    /// Lines are at most N plies long.
    #[arg(long, default_value_t = 30, value_name = "N")]
    max_ply: u32,
    /// An analysed book (made by `polybook analyse`) whose scores refute my weak moves.
    #[arg(long, value_name = "BOOK")]
    scores: Option<PathBuf>,
    /// With --scores: refuse my moves scored more than CP centipawns below the position's best
    /// scored move.
    #[arg(long, default_value_t = 50, value_name = "CP", requires = "scores")]
    max_loss: i32,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: Args) -> CliResult {
    if !(0.0..=100.0).contains(&args.min_prob) {
        return Err(CliError::usage(format!(
            "--min-prob {}: a percentage from 0 to 100",
            args.min_prob
        )));
    }
    if args.width == 0 {
        return Err(CliError::usage("--width 0: at least one move per position"));
    }
    if args.max_ply == 0 {
        return Err(CliError::usage("--max-ply 0: lines need at least one ply"));
    }
    if args.max_loss < 0 {
        return Err(CliError::usage(format!(
            "--max-loss {}: centipawns, 0 or more",
            args.max_loss
        )));
    }
    let scores = match &args.scores {
        Some(path) => {
            Some(ScoreLimit::new(open_book(path)?, args.max_loss).map_err(CliError::data)?)
        }
        None => None,
    };
    let tallies = args.games.iter().filter(|p| is_tally(p)).count();
    let mut counts = if tallies == args.games.len() {
        if !args.player.is_empty() {
            return Err(CliError::usage(
                "--player reads PGN games; a tally keeps no names (make it from the player's games)",
            ));
        }
        refuse_overwrite(&args.games, &args.output)?;
        Counts::from_tallies(&args.games).map_err(CliError::data)?
    } else if tallies > 0 {
        return Err(CliError::usage(
            "the inputs are either PGN games or tallies, not both",
        ));
    } else {
        let inputs = expand(&args.games).map_err(CliError::data)?;
        refuse_overwrite(&args.games, &args.output)?;
        let bar = Bar::over_inputs(&inputs, args.quiet);
        let stop = super::interrupt::flag();
        let result = Counts::from_games(&inputs, &args.player, args.color, &stop, &bar);
        bar.finish();
        result.map_err(repertoire_error)?.0
    };
    let options = RepertoireOptions {
        color: args.color,
        min_games: args.min_games,
        width: args.width,
        min_prob: args.min_prob / 100.0,
        max_ply: args.max_ply,
    };
    let rep = build_repertoire(&mut counts, &options, scores.as_ref()).map_err(repertoire_error)?;
    let mut entries = rep.entries();
    polybook::book::write_book(&args.output, &mut entries).map_err(CliError::data)?;
    if let Some(path) = &args.pgn {
        let mut out = Output::create(Some(path))?;
        let name = args
            .output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        rep.write_pgn(&name, &args.player.join(", "), &mut out)
            .map_err(|e| super::output::cannot_write(path, &e))?;
        out.finish()?;
    }
    let s = rep.summary();
    if args.json {
        outln!("{}", serde_json::to_string(&s).map_err(CliError::data)?)?;
        return Ok(());
    }
    let side = if args.color == Color::White {
        "White"
    } else {
        "Black"
    };
    outln!(
        "{}: a repertoire for {side} of {} positions: {} of my moves in {} positions, {} replies of the opponent; lines up to {} plies, {} ending early (no move of mine with {} games{}){}; most likely line: {}",
        args.output.display(),
        s.positions,
        s.my_moves,
        s.my_positions,
        s.replies,
        s.depth,
        s.ends_early,
        args.min_games,
        if scores.is_some() {
            " or all refuted"
        } else {
            ""
        },
        if scores.is_some() {
            format!("; {} of my moves refuted by --scores", s.refused)
        } else {
            String::new()
        },
        if s.main_line.is_empty() {
            "none".to_string()
        } else {
            s.main_line.join(" ")
        }
    )?;
    Ok(())
}

/// A tally: a Parquet file, or a folder of them.
fn is_tally(path: &Path) -> bool {
    polybook::tally::is_parquet(path)
        || (path.is_dir() && polybook::tally::dataset_files(path).is_ok())
}

/// The book must not replace one of the inputs.
fn refuse_overwrite(inputs: &[PathBuf], output: &Path) -> CliResult {
    if inputs
        .iter()
        .any(|i| polybook::builder::same_file(i, output))
    {
        return Err(CliError::data(format!(
            "{}: is one of the inputs; refusing to write over it",
            output.display()
        )));
    }
    Ok(())
}

fn repertoire_error(e: RepertoireError) -> CliError {
    match e {
        RepertoireError::Build(BuildError::Interrupted) => CliError::interrupted(e),
        e => CliError::data(e),
    }
}
