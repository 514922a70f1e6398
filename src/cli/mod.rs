//! The command line: one file per subcommand, each with its clap `Args` and a `run` function.
//! The argument groups several subcommands share are in `args`, the progress bars in `progress`.
//!
//! Printing and exit codes live here; the library returns values and typed errors.

// Results go to standard output through `outln!` (see `output::print`): `println!` panics when
// the reader has gone away or the disk is full.
#![deny(clippy::print_stdout)]

use std::fmt::Display;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `println!` for a command's results: returns `Result<(), CliError>`, to be ended with `?` (a
/// closed pipe ends the command quietly, any other write error with one line; see
/// `output::write_result`).
macro_rules! outln {
    () => {
        $crate::cli::output::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics: std's panics when standard error cannot be written (`polybook
/// … 2>&1 | head -1` closes it), which would turn a command's last words into exit 101. Messages
/// to a standard error that is gone are dropped; every command below uses this one.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics (see `eprintln!` above).
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod analyse;
mod args;
mod bench;
mod book;
mod build;
mod check;
mod convert;
mod datagen;
mod dump;
mod edit;
mod explore;
mod export;
mod filter;
mod fit_wdl;
mod info;
mod interrupt;
mod key;
mod learn;
mod lines;
mod match_cmd;
mod merge;
mod output;
mod perft;
mod play;
mod position;
mod probe;
mod progress;
mod reference;
mod repertoire;
mod search;
mod solve;
mod sort;
mod split;
mod suite_stats;
mod tally;
mod train;
mod tune;
mod uci;
mod verify;

/// A Polyglot opening-book toolkit: build books from PGN, inspect them, play from them.
#[derive(Parser)]
#[command(name = "polybook", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print the Polyglot Zobrist key of a position.
    Key(key::Args),
    /// Show the book moves of a position (or of every position in an EPD file).
    Probe(probe::Args),
    /// Print every entry of a book (key, move, weight, learn), as a table, JSON Lines or CSV.
    Dump(dump::Args),
    /// Print the lines of a book for one colour, as `polyglot dump-book` does.
    Lines(lines::Args),
    /// Print a book's statistics (the numbers of `polyglot info-book` and more).
    Info(info::Args),
    /// Check that a file is a well-formed sorted book; list every problem if not.
    Verify(verify::Args),
    /// Build a Polyglot book from PGN games.
    Build(build::Args),
    /// Count every (position, move) of PGN games exactly, into a Parquet tally (or sum tallies).
    Tally(tally::Args),
    /// Cut PGN games into zstd-compressed parts of N games each, at game starts.
    Split(split::Args),
    /// Write a book from tallies (summed), with build's entry options.
    Book(book::Args),
    /// Merge books into one.
    Merge(merge::Args),
    /// Write a book in the canonical order (key, then weight descending): repairs unsorted books.
    #[command(visible_alias = "repair")]
    Sort(sort::Args),
    /// Cut a book down: by depth, weight, share, one side's moves, or what a line reaches.
    Filter(filter::Args),
    /// Set, remove or add one move of one position in a book.
    Edit(edit::Args),
    /// Write a book's tree as one PGN game with variations, or its positions at one ply as an
    /// opening suite (EPD or PGN).
    Export(export::Args),
    /// Convert a book (Polyglot, Arena .abk, ChessBase .ctg, Chessmaster .obk, engine experience
    /// .exp) into a Polyglot book, an Arena book or PGN.
    Convert(convert::Args),
    /// Score a book with an engine, back the scores up its tree, write them into the learn fields.
    #[command(visible_alias = "analyze")]
    Analyse(analyse::Args),
    /// Update a book's learn fields from games, as PolyGlot's BookLearn does.
    Learn(learn::Args),
    /// Check games against a repertoire book: where each left it, the biggest gaps, the coverage.
    Check(check::Args),
    /// Build an opening repertoire for one colour from games: a book and its PGN tree.
    Repertoire(repertoire::Args),
    /// Walk through books in the browser: a local web page with a board and the book moves.
    Explore(explore::Args),
    /// Count the legal move paths of a given length (move generator check).
    Perft(perft::Args),
    /// Search a position and print UCI-style info lines, then the best move.
    Search(search::Args),
    /// Search built-in positions to a fixed depth: a node-count signature and a speed.
    Bench(bench::Args),
    /// Label positions of games with the engine's own search, for `train` (resumable).
    Datagen(datagen::Args),
    /// Train the engine's neural network on positions labelled by `datagen`.
    Train(train::Args),
    /// Run a test suite (EPD bm/am/dm, matetrack bm #N, PGN mate puzzles) and count the solved.
    Solve(solve::Args),
    /// Play the engine in the terminal (moves in SAN or UCI; undo, hint, draw, resign, book, save).
    Play(play::Args),
    /// Play a match between two UCI engines, openings from a book; PGN, Elo and SPRT.
    Match(match_cmd::Args),
    /// What each opening of a suite did in games played from it; the suite refined by it.
    SuiteStats(suite_stats::Args),
    /// Fit the evaluation's weights to the results of real games (Texel's method).
    Tune(tune::Args),
    /// Speak UCI on stdin/stdout (also what `polybook` with no command does, for GUIs).
    Uci(uci::Args),
    /// Print the command reference (docs/reference.md) in Markdown.
    #[command(hide = true)]
    Reference(reference::Args),
    /// Fit `export --draw-rate`'s WDL model to labelled games (the constants of the code).
    #[command(hide = true, name = "fit-wdl")]
    FitWdl(fit_wdl::Args),
}

/// A failure that ends a command: one line for the user and an exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    /// Bad data or a failure (exit code 1).
    pub fn data(message: impl Display) -> Self {
        CliError {
            code: 1,
            message: message.to_string(),
        }
    }

    /// Standard output's reader went away: the command stops, quietly and successfully (what
    /// `head` expects of the command before it).
    pub fn closed_pipe() -> Self {
        CliError {
            code: 0,
            message: String::new(),
        }
    }

    /// A usage error (exit code 2).
    pub fn usage(message: impl Display) -> Self {
        CliError {
            code: 2,
            message: message.to_string(),
        }
    }

    /// Stopped by Ctrl-C, SIGTERM or SIGHUP (see `interrupt`): exit code 130, as a shell reports
    /// a command ended by Ctrl-C. `message` says what was kept and how to go on (empty: nothing
    /// to say).
    pub fn interrupted(message: impl Display) -> Self {
        CliError {
            code: 130,
            message: message.to_string(),
        }
    }
}

pub type CliResult = Result<(), CliError>;

/// Opens a book for reading, turning any problem into one line for the user
/// (`cannot open book 'x.bin': No such file or directory`). A book whose keys are not sorted is
/// read whole all the same, with one warning line that points to the repair.
pub fn open_book(path: &std::path::Path) -> Result<polybook::book::Book, CliError> {
    let book = open_book_quietly(path)?;
    warn_disorder(path, &book);
    Ok(book)
}

/// The warning [`open_book`] gives about a book whose keys are not sorted (for a command that
/// opens it quietly and may refuse it first: then the refusal is the one line said).
pub fn warn_disorder(path: &std::path::Path, book: &polybook::book::Book) {
    if let Some(disorder) = book.disorder() {
        eprintln!("polybook: warning: {}", disorder.warning(path));
    }
}

/// Messages about the lines of one input file, at most [`Warnings::SHOWN`] of them: a file of the
/// wrong kind would otherwise flood the terminal; the rest are counted in one last line.
pub struct Warnings {
    label: &'static str,
    file: String,
    count: usize,
}

impl Warnings {
    pub const SHOWN: usize = 10;

    /// `label` starts each line (`polybook: warning:` or `polybook: error:`).
    pub fn new(label: &'static str, file: &std::path::Path) -> Warnings {
        Warnings {
            label,
            file: file.display().to_string(),
            count: 0,
        }
    }

    pub fn push(&mut self, message: impl Display) {
        self.count += 1;
        if self.count <= Self::SHOWN {
            eprintln!("{} {message}", self.label);
        }
    }

    /// The line that counts what was not shown, if anything was left out.
    pub fn finish(self) {
        if self.count > Self::SHOWN {
            eprintln!(
                "{} {}: {} more like these not shown",
                self.label,
                self.file,
                self.count - Self::SHOWN
            );
        }
    }
}

/// A text input (a test suite, an EPD file) whose start is binary data (see
/// [`polybook::pgn::input::binary_at`]) is refused in one line instead of read line by line
/// as garbage.
pub fn refuse_binary(path: &std::path::Path, head: &[u8], expected: &str) -> CliResult {
    match polybook::pgn::input::binary_at(head) {
        Some(at) => Err(CliError::data(format!(
            "{}: binary data, not {expected} (control bytes from byte {at} on)",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// A book with problems of `kinds` (see `verify`) is refused in one line that points to `sort`:
/// the commands that write a book from it would write them again.
pub fn refuse_corrupt(
    path: &std::path::Path,
    kinds: &[polybook::inspect::ProblemKind],
) -> CliResult {
    let report = polybook::inspect::verify(path, 1).map_err(CliError::data)?;
    for &kind in kinds {
        if report.count(kind) > 0 {
            let first = report
                .problems
                .iter()
                .find(|p| p.kind == kind)
                .map(|p| p.to_string())
                .unwrap_or_default();
            return Err(CliError::data(format!(
                "{}: {} entries with {} (the first: {first}); 'polybook sort {} -o fixed.bin' repairs it",
                path.display(),
                report.count(kind),
                kind.name(),
                path.display()
            )));
        }
    }
    // In a book whose keys are not sorted, entries that repeat need not be next to each other
    // (where `verify` looks): the book written, sorted, would have them side by side.
    if kinds.contains(&polybook::inspect::ProblemKind::Duplicate)
        && report.count(polybook::inspect::ProblemKind::Unsorted) > 0
    {
        let repeats = polybook::inspect::repeated_entries(path, report.scored)
            .map_err(|e| file_error("read book", path, &e))?;
        if let Some((count, first)) = repeats {
            return Err(CliError::data(format!(
                "{}: {count} entries with duplicate key and move, apart in its unsorted order (the first: entry {}: key {} and move {} repeat entry {}); 'polybook sort {} -o fixed.bin' repairs it",
                path.display(),
                first.index,
                first.key,
                first.mv,
                first.repeats,
                path.display()
            )));
        }
    }
    Ok(())
}

/// Learning writes PolyGlot's statistics into the learn fields: refused on a book whose learn
/// fields hold `analyse`'s scores, which it would overwrite.
pub fn refuse_scored(path: &std::path::Path, book: &polybook::book::Book) -> CliResult {
    if book.learn_layout() == polybook::book::LearnLayout::Scored {
        return Err(CliError::data(format!(
            "{}: holds engine scores in its learn fields (from 'polybook analyse'); learning would overwrite them",
            path.display()
        )));
    }
    Ok(())
}

/// [`open_book`] without the warning about an unsorted book (for a command that refuses one).
pub fn open_book_quietly(path: &std::path::Path) -> Result<polybook::book::Book, CliError> {
    polybook::book::Book::open(path).map_err(|e| match e {
        polybook::book::BookError::Io { path, source } => file_error("open book", &path, &source),
        e => CliError::data(e),
    })
}

/// With the `score` selection, one warning per book that has no scores (it is played by weight).
pub fn warn_unscored(books: &polybook::book::Books, selection: polybook::book::Selection) {
    if selection != polybook::book::Selection::Score {
        return;
    }
    for (name, book) in books.iter() {
        if book.learn_layout() != polybook::book::LearnLayout::Scored {
            eprintln!(
                "polybook: warning: {name} has no scores ('polybook analyse' adds them): its moves are picked by weight"
            );
        }
    }
}

/// A file that could not be used, named with what it was for: `what` is the verb and the kind of
/// file (`open book`, `read suite`), as in `cannot open book 'x.bin': No such file or directory`.
pub fn file_error(what: &str, path: &std::path::Path, e: &std::io::Error) -> CliError {
    CliError::data(format!(
        "cannot {what} {}: {}",
        polybook::text::quote_path(path),
        polybook::text::reason(e)
    ))
}

/// A usage error from clap in the one or two lines the README promises: what is wrong (with the
/// accepted values or clap's suggestion, when there are), then the usage line.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // --help and --version print to stdout; a closed pipe there is not an error.
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let rendered = e.render().to_string();
    let mut what = String::new();
    let mut usage = None;
    let mut listed = 0;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(first) = line.strip_prefix("error: ") {
            what.push_str(first);
        } else if line.starts_with("Usage: ") {
            usage = Some(line.to_string());
        } else if line.starts_with("For more information") {
        } else if let Some(tip) = line.strip_prefix("tip: ") {
            what.push_str("; ");
            what.push_str(tip);
        } else if line.starts_with('[') {
            what.push(' ');
            what.push_str(line);
        } else {
            // The arguments clap lists below its first line (the missing ones).
            what.push_str(if listed == 0 { " " } else { ", " });
            what.push_str(line);
            listed += 1;
        }
    }
    eprintln!("polybook: error: {what}");
    if let Some(usage) = usage {
        eprintln!("{usage} (see --help)");
    }
    ExitCode::from(2)
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match cli.command {
        Some(Command::Key(args)) => key::run(args),
        Some(Command::Probe(args)) => probe::run(args),
        Some(Command::Dump(args)) => dump::run(args),
        Some(Command::Lines(args)) => lines::run(args),
        Some(Command::Info(args)) => info::run(args),
        Some(Command::Verify(args)) => verify::run(args),
        Some(Command::Build(args)) => build::run(args),
        Some(Command::Analyse(args)) => analyse::run(args),
        Some(Command::Tally(args)) => tally::run(args),
        Some(Command::Split(args)) => split::run(args),
        Some(Command::Book(args)) => book::run(args),
        Some(Command::Merge(args)) => merge::run(args),
        Some(Command::Sort(args)) => sort::run(args),
        Some(Command::Filter(args)) => filter::run(args),
        Some(Command::Edit(args)) => edit::run(args),
        Some(Command::Learn(args)) => learn::run(args),
        Some(Command::Check(args)) => check::run(args),
        Some(Command::Repertoire(args)) => repertoire::run(args),
        Some(Command::Tune(args)) => tune::run(args),
        Some(Command::Export(args)) => export::run(args),
        Some(Command::Convert(args)) => convert::run(args),
        Some(Command::Explore(args)) => explore::run(args),
        Some(Command::Perft(args)) => perft::run(args),
        Some(Command::Search(args)) => search::run(args),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Datagen(args)) => datagen::run(args),
        Some(Command::Train(args)) => train::run(args),
        Some(Command::Solve(args)) => solve::run(args),
        Some(Command::Play(args)) => play::run(args),
        Some(Command::Match(args)) => match_cmd::run(args),
        Some(Command::SuiteStats(args)) => suite_stats::run(args),
        Some(Command::Uci(args)) => uci::run(args),
        Some(Command::Reference(args)) => reference::run(args),
        Some(Command::FitWdl(args)) => fit_wdl::run(args),
        None => {
            // A person who typed `polybook` in a terminal is told what it is waiting for; a GUI,
            // which starts it on pipes, sees nothing new.
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!("polybook speaks UCI here; type 'uci', or run 'polybook --help'");
            }
            uci::run(uci::Args {})
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.message.is_empty() => ExitCode::from(err.code),
        Err(err) => {
            eprintln!("polybook: error: {}", err.message);
            ExitCode::from(err.code)
        }
    }
}
