//! The argument groups that several commands share, flattened into their `Args`: the engine's
//! switches and the search limits (`search`, `bench`, `solve`, `play`, `match`), which games are
//! counted and how they are read (`build`, `tally`), the rules that make entries (`build`,
//! `book`), and the value parsers they use.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use polybook::builder::{
    BuildOptions, EntryRules, GameFilter, PlayerFilter, WeightScheme, parse_date_arg,
};
use polybook::engine::tt::TableError;
use polybook::engine::{Limits, SearchOptions};
use polybook::pgn::input::expand;
use polybook::pgn::tags::Speed;
use shakmaty::Color;

use super::CliError;
use super::progress::Bar;

/// The search switches shared by `search`, `bench` and `solve`.
#[derive(clap::Args, Clone, Debug)]
pub struct EngineArgs {
    /// Turn Mate Distance Pruning off.
    #[arg(long)]
    no_mdp: bool,
    /// Turn the check extension off.
    #[arg(long)]
    no_check_extension: bool,
    /// Turn null-move pruning off.
    #[arg(long)]
    no_null_move: bool,
    /// Turn reverse futility, futility and SEE pruning off.
    #[arg(long)]
    no_futility: bool,
    /// Turn aggressive futility pruning on (experimental).
    #[arg(long)]
    aggressive_futility: bool,
    /// Turn late move reductions off.
    #[arg(long)]
    no_lmr: bool,
    /// Turn late move pruning off.
    #[arg(long)]
    no_lmp: bool,
    /// Turn singular extensions off.
    #[arg(long)]
    no_singular_extensions: bool,
    /// Turn the spite-check analogy on (experimental).
    #[arg(long)]
    spite_check: bool,
    /// Mate tasks (`--mate N`, `solve`'s mate puzzles) without the dedicated mate search: the
    /// normal search, stopped at the first mate short enough.
    #[arg(long)]
    no_mate_search: bool,
    /// Turn the 3-man tablebase (KQvK, KRvK) off: the search alone.
    #[arg(long)]
    no_tablebase: bool,
    /// Evaluate with the hand-crafted evaluation instead of the neural network
    /// (src/engine/net.nnue).
    #[arg(long)]
    no_nnue: bool,
    /// Transposition table size in MB.
    #[arg(long, default_value_t = SearchOptions::DEFAULT_HASH_MB)]
    hash: usize,
    /// Set a search option by name, e.g. `--set NullMove=false` (repeatable; names: MDP,
    /// CheckExtension, NullMove, Futility, AggressiveFutility, LMR, LMP, SingularExtensions,
    /// SpiteCheck, MateSearch, Tablebase, NNUE, Hash, Threads).
    #[arg(long, value_name = "NAME=VALUE")]
    set: Vec<String>,
}

impl EngineArgs {
    pub fn options(&self) -> Result<SearchOptions, CliError> {
        let mut o = SearchOptions {
            mdp: !self.no_mdp,
            check_extension: !self.no_check_extension,
            null_move: !self.no_null_move,
            futility: !self.no_futility,
            aggressive_futility: self.aggressive_futility,
            lmr: !self.no_lmr,
            lmp: !self.no_lmp,
            singular_extensions: !self.no_singular_extensions,
            spite_check: self.spite_check,
            mate_search: !self.no_mate_search,
            tablebase: !self.no_tablebase,
            nnue: !self.no_nnue,
            hash_mb: self.hash.max(1),
            threads: 1,
        };
        for s in &self.set {
            let (name, value) = s.split_once('=').ok_or_else(|| {
                CliError::usage(format!(
                    "--set expects NAME=VALUE, got {}",
                    polybook::text::quote(s)
                ))
            })?;
            o.set(name.trim(), value.trim()).map_err(CliError::usage)?;
        }
        Ok(o)
    }
}

/// A hash size the machine cannot give, in one line: a usage error when it is more than the
/// memory free (refused before anything starts), a failure when the system refused it.
pub fn hash_error(e: TableError) -> CliError {
    match e {
        TableError::TooLarge { .. } => CliError::usage(e),
        TableError::OutOfMemory { .. } => CliError::data(e),
    }
}

/// How long to search, the same in `search`, `solve`, `play` and `match`: every limit given
/// applies and the first one reached ends the search, as UCI's `go depth 8 movetime 1000` does.
#[derive(clap::Args, Clone, Debug)]
pub struct LimitArgs {
    /// Search to this depth (plies; with other limits, the first reached ends the search).
    #[arg(long, value_name = "N", value_parser = at_least_one::<u32>)]
    depth: Option<u32>,
    /// Search for this many milliseconds (with other limits, the first reached ends the search).
    #[arg(long, value_name = "MS", value_parser = at_least_one::<u64>)]
    movetime: Option<u64>,
    /// Search about this many nodes (with other limits, the first reached ends the search).
    #[arg(long, value_name = "N", value_parser = at_least_one::<u64>)]
    nodes: Option<u64>,
}

/// A whole number of at least 1: `--depth 0`, `--movetime 0` and `--nodes 0` are usage errors.
pub fn at_least_one<T: std::str::FromStr + PartialOrd + From<u8>>(text: &str) -> Result<T, String> {
    match text.trim().parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        Ok(_) => Err("must be at least 1".to_string()),
        Err(_) => Err("expected a whole number".to_string()),
    }
}

impl LimitArgs {
    /// The limits given, as a budget for each move of a game (`None` when none was given).
    pub fn per_move(&self) -> Option<polybook::arena::clock::PerMove> {
        (!self.is_default()).then(|| polybook::arena::clock::PerMove {
            depth: self.depth,
            movetime: self.movetime.map(Duration::from_millis),
            nodes: self.nodes,
        })
    }

    /// No limit was given.
    pub fn is_default(&self) -> bool {
        self.depth.is_none() && self.movetime.is_none() && self.nodes.is_none()
    }

    /// The limits, or `default` when none was given.
    pub fn limits(&self, default: Limits) -> Limits {
        if self.is_default() {
            return default;
        }
        Limits {
            depth: self.depth,
            movetime: self.movetime.map(Duration::from_millis),
            nodes: self.nodes,
            ..Limits::default()
        }
    }
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
    /// What a weight measures: polyglot (2 × wins + draws), games (popularity), wins, or nag:
    /// the moves' annotations (each reading adds !! 16, ! 8, !? 4, none 2, ?! 1, ? and ?? 0: in
    /// the book, never chosen), for repertoire files with --variations.
    #[arg(long, value_enum, ignore_case = true, default_value_t = WeightScheme::Polyglot)]
    weights: WeightScheme,
}

/// The side of `--only-white` and `--only-black` (which exclude each other); `None`: both.
pub fn only_side(only_white: bool, only_black: bool) -> Option<Color> {
    if only_white {
        Some(Color::White)
    } else if only_black {
        Some(Color::Black)
    } else {
        None
    }
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
        if self.weights == WeightScheme::Nag && self.min_score > 0.0 {
            return Err(CliError::usage(
                "--min-score reads the games' results; --weights nag weighs moves by their \
                 annotations instead",
            ));
        }
        Ok(EntryRules {
            min_games: self.min_games,
            min_score: self.min_score,
            side: only_side(self.only_white, self.only_black),
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
    /// Count the moves of the games' variations too (RAV, nested), each move of the tree once with
    /// the game's result: a book from a repertoire file (a lichess study, a Chessable export).
    /// Repertoire files mostly have the result `*`, counted as a draw unless
    /// --skip-unknown-results; add --uniform to weigh every move alike.
    #[arg(long)]
    variations: bool,
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
                both_sides: false,
            }),
            ratings: false,
            variations: self.variations,
            nags: false,
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
    pub fn options(
        &self,
        mut filter: GameFilter,
        rules: EntryRules,
    ) -> Result<BuildOptions, CliError> {
        if self.threads == Some(0) {
            return Err(CliError::usage("--threads must be at least 1"));
        }
        filter.nags = rules.weights == WeightScheme::Nag;
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
