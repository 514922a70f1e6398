//! `polybook suite-stats`: what each opening of a suite did in the games played from it, and the
//! suite refined by it.

use std::path::PathBuf;

use polybook::arena::suite_stats::{ExitStats, Refine, Suite, SuiteStatsError, suite_stats};
use polybook::pgn::input::expand;

use super::progress::Bar;
use super::{CliError, CliResult};

/// What each opening of a suite did in games played from it (a match's PGN): per exit, in the
/// suite's order, the games, White's wins, draws, Black's wins, the draw rate, the pentanomial of
/// its colour-swapped pairs and the engines' first score out of it; with -o, the suite without
/// the exits outside the windows.
///
/// A game counts for the first exit of the suite it reaches, walking its main line from its start
/// (a game played from an EPD suite starts on it), matched by position so that transpositions
/// count. The engines' score is the first move's comment after the exit as cutechess and `polybook
/// match` write it (`{+0.36/5 0.02s}`), from White's view; mates are left out.
#[derive(clap::Args)]
pub struct Args {
    /// The games: PGN files or folders (plain, .gz, .zst, .bz2, .xz; `-` reads standard input).
    #[arg(required = true, value_name = "GAMES")]
    games: Vec<PathBuf>,
    /// The suite: one FEN or EPD a line, or a PGN file (.pgn) whose games' moves are the
    /// openings, as `match --openings` reads them (compressed too).
    #[arg(long, value_name = "FILE")]
    suite: PathBuf,
    /// JSON Lines on stdout: one object per exit in the suite's order (`index`, `key`, `fen`,
    /// `games`, `white_wins`, `draws`, `black_wins`, `unfinished`, `draw_rate`, `white_score`,
    /// `pentanomial`, `unpaired`, `average_score`, `scored`).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// CSV on stdout, a header line then one line per exit.
    #[arg(long)]
    csv: bool,
    /// Write the refined suite here (atomically; EPD lines or PGN games as the suite wrote
    /// them): the suite without the exits whose draw rate or White's score is outside the windows.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// With -o: keep the exits whose draw rate lies in LO-HI percent (e.g. 20-80).
    #[arg(long, value_name = "LO-HI", value_parser = parse_window, requires = "output")]
    prune_draw_rate: Option<(f64, f64)>,
    /// With -o: keep the exits where White's score lies in LO-HI percent (e.g. 30-70).
    #[arg(long, value_name = "LO-HI", value_parser = parse_window, requires = "output")]
    prune_score: Option<(f64, f64)>,
    /// With -o: judge only the exits with at least N games; those with fewer are kept.
    #[arg(long, default_value_t = 1, value_name = "N")]
    min_games: u64,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

/// `LO-HI`, percentages with LO ≤ HI.
fn parse_window(s: &str) -> Result<(f64, f64), String> {
    let (lo, hi) = s
        .split_once('-')
        .ok_or("a window of percentages LO-HI, e.g. 20-80")?;
    let number = |t: &str| {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| (0.0..=100.0).contains(v))
            .ok_or_else(|| format!("{t:?} is not a percentage from 0 to 100"))
    };
    let (lo, hi) = (number(lo)?, number(hi)?);
    if lo > hi {
        return Err(format!("{lo} is above {hi}"));
    }
    Ok((lo, hi))
}

pub fn run(args: Args) -> CliResult {
    if args.output.is_some() && args.prune_draw_rate.is_none() && args.prune_score.is_none() {
        return Err(CliError::usage(
            "-o writes the suite refined by --prune-draw-rate or --prune-score: give one",
        ));
    }
    let suite = Suite::read(&args.suite).map_err(CliError::data)?;
    let out = match &args.output {
        Some(path) => Some(Refine::create(path).map_err(CliError::data)?),
        None => None,
    };
    let inputs = expand(&args.games).map_err(CliError::data)?;
    let bar = Bar::over_inputs(&inputs, args.quiet);
    let stop = super::interrupt::flag();
    let result = suite_stats(&inputs, &suite, &bar, &stop);
    bar.finish();
    let stats = result.map_err(|e| match e {
        SuiteStatsError::Stopped => CliError::interrupted(e),
        e => CliError::data(e),
    })?;
    if args.json {
        for exit in &stats.exits {
            outln!("{}", serde_json::to_string(exit).map_err(CliError::data)?)?;
        }
    } else if args.csv {
        outln!(
            "index,key,fen,games,white_wins,draws,black_wins,unfinished,draw_rate,white_score,\
             ll,ld,dd_wl,wd,ww,unpaired,average_score,scored"
        )?;
        for e in &stats.exits {
            let p = e.pentanomial;
            outln!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                e.index,
                e.key,
                e.fen,
                e.games,
                e.white_wins,
                e.draws,
                e.black_wins,
                e.unfinished,
                optional(e.draw_rate, 4),
                optional(e.white_score, 4),
                p[0],
                p[1],
                p[2],
                p[3],
                p[4],
                e.unpaired,
                optional(e.average_score, 1),
                e.scored
            )?;
        }
    } else {
        outln!(
            "{:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>21} {:>7}  exit",
            "#",
            "games",
            "white",
            "draw",
            "black",
            "draw%",
            "pairs (0 ½ 1 1½ 2)",
            "score"
        )?;
        for e in &stats.exits {
            outln!("{}", table_row(e))?;
        }
    }
    let matched = stats.read - stats.unmatched;
    eprintln!(
        "{} games read, {matched} reached an exit of the suite's {}, {} reached none",
        stats.read,
        stats.exits.len(),
        stats.unmatched
    );
    if let (Some(path), Some(out)) = (&args.output, out) {
        let refine = Refine {
            min_games: args.min_games,
            draw_rate: args.prune_draw_rate,
            white_score: args.prune_score,
        };
        let refined = refine.write(&suite, &stats, out).map_err(CliError::data)?;
        let unjudged = match refined.unjudged {
            0 => String::new(),
            n => format!(" ({n} of them with fewer than {} games)", args.min_games),
        };
        eprintln!(
            "{}: {} exits kept{unjudged}, {} dropped",
            path.display(),
            refined.kept + refined.unjudged,
            refined.dropped,
        );
    }
    Ok(())
}

fn optional(value: Option<f64>, decimals: usize) -> String {
    value.map_or(String::new(), |v| format!("{v:.decimals$}"))
}

fn table_row(e: &ExitStats) -> String {
    let p = e.pentanomial;
    format!(
        "{:>5} {:>6} {:>6} {:>6} {:>6} {:>6} {:>21} {:>7}  {}",
        e.index,
        e.games,
        e.white_wins,
        e.draws,
        e.black_wins,
        e.draw_rate
            .map_or("-".into(), |d| format!("{:.1}", d * 100.0)),
        format!("{} {} {} {} {}", p[0], p[1], p[2], p[3], p[4]),
        e.average_score.map_or("-".into(), |s| format!("{:+.0}", s)),
        e.fen
    )
}
