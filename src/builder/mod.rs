//! PGN → book: read the inputs as chunks of whole games, parse and play the chunks in parallel,
//! count every (position, move) in input order, then filter, weigh and write the entries.
//!
//! ```text
//! files, stdin ─► reader ─► chunks ─► parsers ─► plies ─► tally threads ─► entries ─► .bin
//!                                        │           past --memory: sorted runs ─► merge ─┘
//!                                        └─► game counts, incidents ─► collector ─► report
//! ```
//!
//! The inputs, their chunks, the game-by-game reader, SAN and the order of chunks are
//! [`crate::pgn`]'s, shared with every command that reads games. Where each part of the build lives:
//! - `pipeline`: the threads and the channels between them; [`build`] starts here.
//! - `parse`, `game`, `filter`: PGN text to plies (the build's visitor, the moves played, the
//!   filters).
//! - `tally_thread`, `tally`, `spill`: the counts per (position, move), in memory or on disk.
//! - `entries`, `book_out`: which moves are kept, with what weight, and the written book; or
//!   every pair as it was counted ([`count_pairs`], for the tallies of `polybook tally`).
//! - `memory`: how `--memory` is shared among the parts.
//! - `collect`: the report (games read, used, left out, and why; the reasons are [`Reason`]).
//! - `keyed_merge`: sorted sources merged by key.
//! - `merge`: books merged into one, a book sorted (the same key-by-key merge).
//! - `learn`: a book's learn fields updated from games (`polybook learn`), with the same reader.
//!
//! By default the result is byte for byte what `polyglot make-book` writes. polyglot's halving of
//! a position at 16384 games depends on the order in which games arrive, so each tally thread
//! applies the chunks in input order, whatever order the parsers finish them in; and the book is
//! the same whatever `--threads` and `--memory`.

mod book_out;
mod collect;
mod count_table;
mod entries;
mod filter;
mod game;
mod keyed_merge;
mod learn;
mod memory;
mod merge;
mod parse;
mod pipeline;
mod spill;
mod tally_thread;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use thiserror::Error;

pub use entries::{EntryRules, PairEntries, WeightScheme};
pub use filter::{GameFilter, PlayerFilter, parse_date_arg};
pub use keyed_merge::KeyedMerge;
pub use learn::{LearnOptions, LearnReport, LearnedMove, learn_from_games};
pub use merge::{MergeReport, MergeStrategy, SortReport, merge_books, sort_book};

use crate::book::BookError;
use crate::pgn::Progress;
use crate::pgn::input::{self, Input};
use book_out::{BookSink, Ordered, PairSink};
use count_table::{ExactCounts, PolyglotCounts, RatedCounts, Tallied, WideCounts};
use game::BLACK_MOVED;

/// Why a build failed.
#[derive(Debug, Error)]
pub enum BuildError {
    #[error(transparent)]
    Input(#[from] crate::pgn::input::InputError),
    #[error(
        "{name}: {cut}; no book written (--allow-truncated keeps the games read before the cut)"
    )]
    Truncated { name: String, cut: input::Truncated },
    #[error("{0}")]
    Book(#[from] BookError),
    #[error("temporary files in {dir}: {why}")]
    Temp { dir: String, why: String },
    #[error("{name}: game {game}: {detail} (--strict refuses bad games)")]
    Strict {
        name: String,
        game: u64,
        detail: String,
    },
    #[error("{0}: is one of the inputs; refusing to write the book over it")]
    OutputIsInput(String),
    #[error("{name}: cannot write: {why}")]
    Output { name: String, why: String },
    #[error("interrupted; no book written")]
    Interrupted,
    #[error("no usable game in {inputs}: {read} read, none usable{why}; no book written")]
    NoUsableGame {
        inputs: String,
        read: u64,
        /// What became of them (` (122 not pgn)`), or nothing.
        why: String,
    },
}

/// How to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub filter: GameFilter,
    pub rules: EntryRules,
    /// Parser threads.
    pub threads: usize,
    /// Memory for the tally, in bytes; past it, sorted runs are spilled to `temp_dir`.
    pub memory: usize,
    /// Where spilled runs go (default: the system's temporary folder).
    pub temp_dir: Option<PathBuf>,
    /// A bad game (broken FEN, illegal move) is an error instead of being skipped.
    pub strict: bool,
    /// Bytes of PGN per chunk handed to a parser (at most; less when `memory` is small).
    pub chunk_size: usize,
    /// Wait for the book to reach the disk before it takes its name.
    pub fsync: bool,
    /// A compressed input cut short ([`input::Truncated`]) is read up to the cut, and the cut
    /// reported ([`BuildReport::truncated_inputs`]), instead of failing the build.
    pub allow_truncated: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            filter: GameFilter::default(),
            rules: EntryRules::default(),
            threads: crate::cores::cores(),
            memory: 1 << 30,
            temp_dir: None,
            strict: false,
            chunk_size: 1 << 20,
            fsync: false,
            allow_truncated: false,
        }
    }
}

/// Why a game was left out, or cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// Skipped: a variant other than standard chess.
    Variant,
    /// Skipped: a `[FEN]` that does not parse or is not a playable position.
    BadFen,
    /// Skipped: the result is `*` or missing (with `--skip-unknown-results`).
    UnknownResult,
    /// Skipped by `--min-elo` / `--max-elo`.
    Elo,
    /// Skipped by `--since` / `--until`.
    Date,
    /// Skipped by `--time-control`.
    TimeControl,
    /// Skipped by `--player` / `--color`.
    Player,
    /// Cut short: an illegal move (its earlier plies count).
    IllegalMove,
    /// Cut short: an ambiguous move.
    AmbiguousMove,
    /// Cut short: a null move (`--`, `Z0`) or a piece drop.
    NullMove,
    /// Skipped: text with neither tags nor moves (binary garbage, stray text between games).
    NotPgn,
    /// Skipped: the game's tag section is broken (an unterminated tag, or the text ends in it).
    BadTags,
    /// Cut short: the movetext cannot go on (a comment still open where the next game starts,
    /// or at the end of the text).
    Unfinished,
}

impl Reason {
    /// The name used in the summary and its JSON.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Variant => "variant",
            Reason::BadFen => "bad_fen",
            Reason::UnknownResult => "unknown_result",
            Reason::Elo => "elo_filter",
            Reason::Date => "date_filter",
            Reason::TimeControl => "time_control_filter",
            Reason::Player => "player_filter",
            Reason::IllegalMove => "illegal_move",
            Reason::AmbiguousMove => "ambiguous_move",
            Reason::NullMove => "null_move",
            Reason::NotPgn => "not_pgn",
            Reason::BadTags => "bad_tags",
            Reason::Unfinished => "unfinished",
        }
    }

    /// Whether the game was still used (cut short) rather than skipped whole.
    pub fn truncates(self) -> bool {
        matches!(
            self,
            Reason::IllegalMove | Reason::AmbiguousMove | Reason::NullMove | Reason::Unfinished
        )
    }

    /// Whether the user's own options left the game out (`--min-elo`, `--since`, `--player`, …):
    /// counted, but not a problem to report.
    pub fn is_filter(self) -> bool {
        matches!(
            self,
            Reason::UnknownResult
                | Reason::Elo
                | Reason::Date
                | Reason::TimeControl
                | Reason::Player
        )
    }

    /// Whether this is a defect in the data (what `--strict` refuses), rather than a filter.
    pub fn is_defect(self) -> bool {
        matches!(
            self,
            Reason::BadFen
                | Reason::IllegalMove
                | Reason::AmbiguousMove
                | Reason::NullMove
                | Reason::Unfinished
        )
    }
}

/// What a build did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BuildReport {
    /// The games read.
    pub games: u64,
    /// Those counted: not filtered out nor skipped.
    pub used: u64,
    /// Games left out by the user's own filters (`--min-elo`, `--since`, `--player`, …), by filter.
    pub filtered: BTreeMap<&'static str, u64>,
    /// Games left out for what they are (a variant, a broken FEN or tags, not PGN), by reason.
    pub skipped: BTreeMap<&'static str, u64>,
    /// Games cut short (their plies before the bad move count), by reason.
    pub truncated: BTreeMap<&'static str, u64>,
    /// The plies counted, over all games used.
    pub plies: u64,
    /// Distinct (position, move) pairs counted: the entries before filtering.
    pub entries_before_filter: u64,
    /// The entries written, after the entry rules.
    pub entries: u64,
    /// The positions they are of.
    pub positions: u64,
    /// Sorted runs spilled to disk (0: all in memory).
    pub spilled_runs: usize,
    /// The build's wall-clock time, and the games read per second of it.
    pub seconds: f64,
    pub games_per_second: f64,
    /// The first few games skipped or cut short (not those filtered out), for the user to look at.
    pub examples: Vec<String>,
    /// The compressed inputs that stop before the end of their stream, read up to the cut
    /// ([`BuildOptions::allow_truncated`]).
    pub truncated_inputs: Vec<TruncatedInput>,
}

/// A compressed input read up to where it was cut short: the games read whole before the cut
/// were counted, the one the cut falls in was left out.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TruncatedInput {
    /// The input's name.
    pub input: String,
    /// Its compressed bytes, all there were: where the cut is.
    pub at: u64,
}

impl std::fmt::Display for TruncatedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cut = input::Truncated { at: self.at };
        write!(
            f,
            "{}: {cut}; the games before the cut are counted, the one it falls in is left out",
            self.input
        )
    }
}

/// Builds a book from `inputs` and writes it to `output` atomically. The output is checked first,
/// before any game is read: one of the inputs, a folder, or a place that cannot be written is an
/// error at once.
pub fn build(
    inputs: &[Input],
    output: &Path,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<BuildReport, BuildError> {
    if output_is_input(inputs, output) {
        return Err(BuildError::OutputIsInput(output.display().to_string()));
    }
    let start = std::time::Instant::now();
    let mut out = Ordered::new(BookSink::new(output, opts.fsync, &opts.rules)?);
    let mut report = match opts.rules.weights {
        WeightScheme::Polyglot => {
            pipeline::run::<PolyglotCounts, _>(inputs, &mut out, opts, cancel, progress)
        }
        _ => pipeline::run::<ExactCounts, _>(inputs, &mut out, opts, cancel, progress),
    }?;
    out.sink.finish()?;
    report.seconds = start.elapsed().as_secs_f64();
    report.games_per_second = report.games as f64 / report.seconds.max(1e-9);
    Ok(report)
}

/// The exact counts of one (position, move) pair: what `polybook tally` keeps of the games.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairCount {
    /// The position's Polyglot key.
    pub key: u64,
    /// The move in Polyglot's encoding (castling as the king taking its rook).
    pub mv: u16,
    /// The mover is Black.
    pub black: bool,
    /// When the pair first appeared in the input, as an order among the moves of its position:
    /// the lower, the earlier (ties in weight are written in this order, as polyglot does).
    pub first: u64,
    /// Games in which the move was played; wins, draws and losses are the mover's.
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// The ratings and the latest date of its games (`tally --ratings`; zero without).
    pub rating: RatingSums,
}

/// What `tally --ratings` adds to a (position, move) pair: over its games where both players
/// are rated, how many they were and the sums of the mover's and the opponent's ratings (for
/// averages); and the latest of its games' dates, as `yyyymmdd` (unknown month or day as 00; 0
/// when no game had a date).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RatingSums {
    pub rated_games: u64,
    pub mover_sum: u64,
    pub opponent_sum: u64,
    pub last_date: u32,
}

impl RatingSums {
    /// Adds the sums of the same pair from other games (the latest date is the later one).
    #[inline]
    pub fn add(&mut self, other: &RatingSums) {
        self.rated_games += other.rated_games;
        self.mover_sum += other.mover_sum;
        self.opponent_sum += other.opponent_sum;
        self.last_date = self.last_date.max(other.last_date);
    }
}

impl PairCount {
    fn from_tallied<W: WideCounts>(t: &Tallied<W>, first: u64) -> PairCount {
        let counts = t.counts.exact();
        let draws = counts.points - 2 * counts.wins;
        PairCount {
            key: t.key,
            mv: t.mv & !BLACK_MOVED,
            black: t.mv & BLACK_MOVED != 0,
            first,
            games: counts.n,
            wins: counts.wins,
            draws,
            losses: counts.n - counts.wins - draws,
            rating: t.counts.rating(),
        }
    }

    fn to_tallied(self) -> Tallied<ExactCounts> {
        Tallied {
            key: self.key,
            mv: self.mv | if self.black { BLACK_MOVED } else { 0 },
            first: self.first,
            counts: ExactCounts {
                n: self.games,
                points: 2 * self.wins + self.draws,
                wins: self.wins,
            },
        }
    }
}

/// Pairs as columns, keys ascending (a tally file stores them so): row `i` is the `i`th value of
/// every column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairColumns {
    pub key: Vec<u64>,
    pub mv: Vec<u16>,
    pub black: Vec<bool>,
    pub first: Vec<u64>,
    pub games: Vec<u64>,
    pub wins: Vec<u64>,
    pub draws: Vec<u64>,
    pub losses: Vec<u64>,
    /// Whether the pairs' [`RatingSums`] are kept, in the columns below (empty otherwise).
    pub rated: bool,
    pub rated_games: Vec<u64>,
    pub mover_sum: Vec<u64>,
    pub opponent_sum: Vec<u64>,
    pub last_date: Vec<u32>,
}

impl PairColumns {
    /// Room for `n` pairs, with their ratings' columns if `rated`.
    pub fn with_capacity(n: usize, rated: bool) -> PairColumns {
        let r = if rated { n } else { 0 };
        PairColumns {
            key: Vec::with_capacity(n),
            mv: Vec::with_capacity(n),
            black: Vec::with_capacity(n),
            first: Vec::with_capacity(n),
            games: Vec::with_capacity(n),
            wins: Vec::with_capacity(n),
            draws: Vec::with_capacity(n),
            losses: Vec::with_capacity(n),
            rated,
            rated_games: Vec::with_capacity(r),
            mover_sum: Vec::with_capacity(r),
            opponent_sum: Vec::with_capacity(r),
            last_date: Vec::with_capacity(r),
        }
    }

    pub fn len(&self) -> usize {
        self.key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.key.is_empty()
    }

    pub fn push(&mut self, p: &PairCount) {
        self.key.push(p.key);
        self.mv.push(p.mv);
        self.black.push(p.black);
        self.first.push(p.first);
        self.games.push(p.games);
        self.wins.push(p.wins);
        self.draws.push(p.draws);
        self.losses.push(p.losses);
        if self.rated {
            self.rated_games.push(p.rating.rated_games);
            self.mover_sum.push(p.rating.mover_sum);
            self.opponent_sum.push(p.rating.opponent_sum);
            self.last_date.push(p.rating.last_date);
        }
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> PairCount {
        PairCount {
            key: self.key[i],
            mv: self.mv[i],
            black: self.black[i],
            first: self.first[i],
            games: self.games[i],
            wins: self.wins[i],
            draws: self.draws[i],
            losses: self.losses[i],
            rating: if self.rated {
                RatingSums {
                    rated_games: self.rated_games[i],
                    mover_sum: self.mover_sum[i],
                    opponent_sum: self.opponent_sum[i],
                    last_date: self.last_date[i],
                }
            } else {
                RatingSums::default()
            },
        }
    }
}

/// Where [`count_pairs`] sends the counted pairs: one position at a time, keys ascending.
pub trait PositionSink {
    /// One position's pairs (all with one key), in the order they first appeared, their `first`
    /// numbered 0, 1, 2…
    fn position(&mut self, pairs: &[PairCount]) -> Result<(), BuildError>;

    /// The pairs of several positions, one after the other, as columns (keys ascending, each
    /// position's rows as [`PositionSink::position`] takes them).
    fn columns(&mut self, pairs: PairColumns) -> Result<(), BuildError> {
        let rows: Vec<PairCount> = (0..pairs.len()).map(|i| pairs.row(i)).collect();
        rows.chunk_by(|a, b| a.key == b.key)
            .try_for_each(|position| self.position(position))
    }
}

/// Reads `inputs` as [`build`] does (the same filters, `--max-ply`, threads and memory budget)
/// and hands every (position, move) pair it counted, with exact counts, to `out`, by key. The
/// result is the same whatever `opts.threads` and `opts.memory`. `opts.rules` is not used. With
/// `opts.filter.ratings` the pairs carry their [`RatingSums`] (the counting keeps wider entries,
/// within the same `--memory`); without, nothing of them is counted.
pub fn count_pairs(
    inputs: &[Input],
    out: &mut dyn PositionSink,
    opts: &BuildOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<BuildReport, BuildError> {
    if opts.filter.ratings {
        let mut out = Ordered::new(PairSink::<RatedCounts>::new(out));
        return pipeline::run::<RatedCounts, _>(inputs, &mut out, opts, cancel, progress);
    }
    let mut out = Ordered::new(PairSink::<ExactCounts>::new(out));
    pipeline::run::<ExactCounts, _>(inputs, &mut out, opts, cancel, progress)
}

/// Whether `output` is one of the files `inputs` reads (the check `build` and `tally` make before
/// they create their output, which would replace it).
pub fn output_is_input(inputs: &[Input], output: &Path) -> bool {
    inputs
        .iter()
        .any(|input| input.path().is_some_and(|p| same_file(p, output)))
}

/// Whether two paths name the same file (the same inode, or the same canonical path).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}
