//! `polybook build`: PGN games to a Polyglot book.

use std::io::IsTerminal;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use polybook::builder::{
    BuildOptions, BuildReport, EntryRules, GameFilter, PlayerFilter, WeightScheme, parse_date_arg,
};
use polybook::pgn::input::expand;
use polybook::pgn::tags::Speed;
use shakmaty::Color;

use super::output::clause;
use super::{CliError, CliResult};

/// Build a Polyglot book from PGN games (plain, .gz, .zst, .bz2, .xz; folders; `-` for stdin).
///
/// With the default options the book is byte for byte what `polyglot make-book` writes from the
/// same games. Unlike polyglot, games from a [FEN] start there, non-standard variants are skipped,
/// and a bad game is skipped (or cut at its bad move) instead of aborting the build.
#[derive(clap::Args)]
pub struct Args {
    /// PGN files or folders, read in order as one stream; `-` reads standard input.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// The book to write (atomically: a temporary file, then a rename).
    #[arg(short, long, value_name = "OUT.bin")]
    output: PathBuf,
    #[command(flatten)]
    rules: RuleArgs,
    #[command(flatten)]
    counting: CountArgs,
}

/// What `build` and `tally` share: which games are counted, how they are read, and how the run
/// reports.
#[derive(clap::Args)]
pub struct CountArgs {
    #[command(flatten)]
    pub games: GameArgs,
    #[command(flatten)]
    pub reading: ReadArgs,
    /// No progress bar and no summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

impl CountArgs {
    /// The inputs (folders expanded to their files), and the progress bar over their bytes (none
    /// with --quiet or without a terminal).
    pub fn inputs(
        &self,
        paths: &[PathBuf],
    ) -> Result<(Vec<polybook::pgn::input::Input>, Bar), CliError> {
        let inputs = expand(paths).map_err(CliError::data)?;
        let total: Option<u64> = inputs.iter().map(|i| i.size()).sum();
        Ok((inputs, self.bar(total)))
    }

    /// The progress bar over `total` bytes (none with --quiet or without a terminal).
    pub fn bar(&self, total: Option<u64>) -> Bar {
        Bar::new(!self.quiet && std::io::stderr().is_terminal(), total)
    }
}

/// Which moves become book entries, with what weight (`build` and `book`).
#[derive(clap::Args)]
pub struct RuleArgs {
    /// Keep a move only if it was played in at least N games (polyglot's -min-game).
    #[arg(long, default_value_t = 3, value_name = "N")]
    min_games: u64,
    /// Keep a move only if it scored at least PCT percent for its side (polyglot's -min-score).
    #[arg(long, default_value_t = 0.0, value_name = "PCT")]
    min_score: f64,
    /// Keep only White's moves.
    #[arg(long, conflicts_with = "only_black")]
    only_white: bool,
    /// Keep only Black's moves.
    #[arg(long)]
    only_black: bool,
    /// Give every kept move weight 1.
    #[arg(long)]
    uniform: bool,
    /// What a weight measures: polyglot (2 × wins + draws), games (popularity) or wins.
    #[arg(long, value_enum, ignore_case = true, default_value_t = WeightScheme::Polyglot)]
    weights: WeightScheme,
}

impl RuleArgs {
    pub fn rules(&self) -> Result<EntryRules, CliError> {
        if !(0.0..=100.0).contains(&self.min_score) {
            return Err(CliError::usage(format!(
                "--min-score {}: a percentage from 0 to 100",
                self.min_score
            )));
        }
        if self.min_games == 0 {
            return Err(CliError::usage("--min-games must be at least 1"));
        }
        Ok(EntryRules {
            min_games: self.min_games,
            min_score: self.min_score,
            side: if self.only_white {
                Some(Color::White)
            } else if self.only_black {
                Some(Color::Black)
            } else {
                None
            },
            uniform: self.uniform,
            weights: self.weights,
        })
    }
}

/// Which games and plies are counted (`build` and `tally`).
#[derive(clap::Args)]
pub struct GameArgs {
    /// Count only the first N plies of each game (polyglot's -max-ply).
    #[arg(long, default_value_t = 1024, value_name = "N")]
    max_ply: usize,
    /// Only games in which both players are rated at least N (WhiteElo, BlackElo).
    #[arg(long, value_name = "N")]
    min_elo: Option<u32>,
    /// Only games in which both players are rated at most N.
    #[arg(long, value_name = "N")]
    max_elo: Option<u32>,
    /// Only games played on or after DATE: YYYY, YYYY.MM, YYYY.MM.DD or YYYY-MM-DD (from the
    /// UTCDate tag, else Date; a game without a known year is left out).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only games played on or before DATE (a year or a month counts to its end).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Only games of these speeds, comma-separated: lichess's classes of the TimeControl tag, by
    /// base + 40 × increment seconds (under 30 ultrabullet, 180 bullet, 480 blitz, 1500 rapid,
    /// 21600 classical, else correspondence; `-` is correspondence). A game without a readable
    /// TimeControl is left out.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        value_delimiter = ',',
        value_name = "SPEED"
    )]
    time_control: Vec<Speed>,
    /// Only the moves this player made (White or Black tag, any case): a repertoire book. Repeat
    /// it for one person's several accounts: a side whose tag is any of the names is the player's.
    #[arg(long, value_name = "NAME")]
    player: Vec<String>,
    /// With --player: only the games in which the player had this colour.
    #[arg(long, value_name = "white|black", requires = "player", value_parser = parse_color)]
    color: Option<Color>,
    /// Skip games whose result is unknown (`*` or no Result tag) instead of counting them as draws.
    #[arg(long)]
    skip_unknown_results: bool,
    /// Include Chess960 games ([Variant "Chess960"/"fischerandom"], castling as king takes rook).
    #[arg(long)]
    chess960: bool,
}

impl GameArgs {
    pub fn filter(&self) -> Result<GameFilter, CliError> {
        Ok(GameFilter {
            max_ply: self.max_ply,
            chess960: self.chess960,
            skip_unknown_results: self.skip_unknown_results,
            min_elo: self.min_elo,
            max_elo: self.max_elo,
            since: date("since", &self.since)?,
            until: date("until", &self.until)?,
            speeds: self.time_control.clone(),
            player: (!self.player.is_empty()).then(|| PlayerFilter {
                names: self.player.iter().map(|n| n.trim().to_string()).collect(),
                color: self.color,
            }),
            ratings: false,
        })
    }
}

/// How the games are read: threads, memory, temporary files (`build` and `tally`).
#[derive(clap::Args)]
pub struct ReadArgs {
    /// Refuse bad games (a broken FEN, an illegal, ambiguous or null move): exit 1, write nothing.
    #[arg(long)]
    strict: bool,
    /// Parser threads (default: every core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Memory for counting (e.g. 512M, 2G); past it, sorted runs go to --temp-dir.
    #[arg(long, default_value = "1G", value_parser = parse_size, value_name = "SIZE")]
    memory: u64,
    /// Where to put spilled runs (default: the system's temporary folder).
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<PathBuf>,
    /// Wait for the output to reach the disk before it takes its name (it is always written
    /// to a temporary file and renamed, so it is never seen half-written).
    #[arg(long)]
    fsync: bool,
    /// Read a compressed input that stops before the end of its stream (a download cut short)
    /// up to the cut, with a warning: the games before the cut count, the one it falls in does
    /// not. Without it such an input is an error, and nothing is written.
    #[arg(long)]
    allow_truncated: bool,
}

impl ReadArgs {
    pub fn fsync(&self) -> bool {
        self.fsync
    }

    /// The build's options with these and `filter`, `rules`.
    pub fn options(&self, filter: GameFilter, rules: EntryRules) -> Result<BuildOptions, CliError> {
        if self.threads == Some(0) {
            return Err(CliError::usage("--threads must be at least 1"));
        }
        let mut opts = BuildOptions {
            filter,
            rules,
            memory: usize::try_from(self.memory).unwrap_or(usize::MAX),
            temp_dir: self.temp_dir.clone(),
            strict: self.strict,
            fsync: self.fsync,
            allow_truncated: self.allow_truncated,
            ..BuildOptions::default()
        };
        if let Some(t) = self.threads {
            opts.threads = t;
        }
        Ok(opts)
    }
}

pub fn parse_color(s: &str) -> Result<Color, String> {
    let quoted = polybook::text::quote(s);
    match s.to_ascii_lowercase().as_str() {
        "white" | "w" => Ok(Color::White),
        "black" | "b" => Ok(Color::Black),
        _ => Err(format!("{quoted} is not a colour: white or black")),
    }
}

/// Parses `1G`, `512M`, `300MB`, `64k`, `1000000` (bytes; binary multiples).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let quoted = polybook::text::quote(s);
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        Some('t') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{quoted} is not a size (e.g. 512M, 2G)"))?;
    if value.is_nan() || value <= 0.0 {
        return Err(format!("{quoted}: the size must be positive"));
    }
    let bytes = value * mult as f64;
    if bytes < (1 << 20) as f64 {
        return Err(format!("{quoted}: at least 1M is needed"));
    }
    Ok(bytes as u64)
}

/// `--since` (missing month and day: the first) or `--until` (missing parts: the last).
fn date(flag: &str, text: &Option<String>) -> Result<Option<(u32, u32, u32)>, CliError> {
    let fill = if flag == "until" { 99 } else { 0 };
    text.as_deref()
        .map(|t| {
            parse_date_arg(t, fill).ok_or_else(|| {
                CliError::usage(format!(
                    "--{flag} {}: not a date (YYYY, YYYY.MM, YYYY.MM.DD or YYYY-MM-DD)",
                    polybook::text::quote(t)
                ))
            })
        })
        .transpose()
}

pub fn run(args: Args) -> CliResult {
    let rules = args.rules.rules()?;
    let counting = &args.counting;
    let filter = counting.games.filter()?;
    let opts = counting.reading.options(filter, rules)?;

    let (inputs, bar) = counting.inputs(&args.inputs)?;
    // The spilled runs, which have no names, go with the process however it ends.
    let cancel = super::interrupt::flag();
    let result = polybook::builder::build(&inputs, &args.output, &opts, &cancel, &bar);
    bar.finish();
    let report = result.map_err(|e| match e {
        polybook::builder::BuildError::Interrupted => CliError {
            code: 130,
            message: e.to_string(),
        },
        e => CliError::data(e),
    })?;
    if !counting.quiet {
        eprint!(
            "{}",
            human_summary(&report, &args.output.display().to_string())
        );
    }
    end_report(&report, "book", counting.json)
}

/// The end of a build's or a tally's report: a warning for each input cut short
/// (`--allow-truncated`) and when the filters left out every game (otherwise a build without a
/// usable game fails, except on a range of a file), then the JSON report with `--json`.
pub(super) fn end_report(report: &BuildReport, what: &str, json: bool) -> CliResult {
    for cut in &report.truncated_inputs {
        eprintln!("polybook: warning: {cut}");
    }
    if report.used == 0 && !report.filtered.is_empty() {
        let filters = list(&report.filtered);
        eprintln!(
            "polybook: warning: the filters left out every game ({filters}); the {what} is empty"
        );
    }
    if json {
        let text = serde_json::to_string(report).map_err(CliError::data)?;
        outln!("{text}")?;
    }
    Ok(())
}

/// `12 elo filter, 3 date filter`: counts by reason.
pub fn list(m: &std::collections::BTreeMap<&str, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{v} {}", k.replace('_', " ")))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn human_summary(r: &BuildReport, output: &str) -> String {
    let mut s = String::new();
    let filtered: u64 = r.filtered.values().sum();
    let skipped: u64 = r.skipped.values().sum();
    let truncated: u64 = r.truncated.values().sum();
    s += &format!(
        "{output}: {} entries, {} positions ({} (position, move) pairs before filtering)\n",
        r.entries, r.positions, r.entries_before_filter
    );
    s += &format!(
        "games: {} read, {} used, {}{} skipped{}, {} cut short{}; {} plies counted\n",
        r.games,
        r.used,
        clause(filtered > 0, || {
            format!("{filtered} filtered out ({}), ", list(&r.filtered))
        }),
        skipped,
        clause(skipped > 0, || format!(" ({})", list(&r.skipped))),
        truncated,
        clause(truncated > 0, || format!(" ({})", list(&r.truncated))),
        r.plies
    );
    for ex in r.examples.iter().take(5) {
        s += &format!("  {ex}\n");
    }
    if r.spilled_runs > 0 {
        s += &format!(
            "{} sorted runs spilled to disk and merged\n",
            r.spilled_runs
        );
    }
    s += &format!(
        "time: {:.2} s, {:.0} games/s\n",
        r.seconds, r.games_per_second
    );
    s
}

/// The progress bar (bytes of input read, games/s, ETA), shown only on a terminal.
pub struct Bar(Option<ProgressBar>);

impl Bar {
    pub fn new(show: bool, total: Option<u64>) -> Bar {
        if !show {
            return Bar(None);
        }
        let bar = match total {
            Some(t) => ProgressBar::new(t).with_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg} ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {bytes} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        Bar(Some(bar))
    }

    pub fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

impl polybook::pgn::Progress for Bar {
    fn update(&self, bytes: u64, games: u64) {
        if let Some(b) = &self.0 {
            b.set_position(bytes);
            let secs = b.elapsed().as_secs_f64().max(1e-3);
            b.set_message(format!("{games} games, {:.0} games/s", games as f64 / secs));
        }
    }
}
