//! `polybook play`: a person plays the built-in engine in the terminal.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap::ValueEnum;
use polybook::arena::clock::{PerMove, TimeControl};
use polybook::arena::pgn::{append_atomic, default_stem, write_new};
use polybook::arena::play::{BookRules, PlayOptions, PlaySession, Thinking};
use polybook::atomic::AtomicFile;
use polybook::book::{Books, ChooseOptions, Selection};
use polybook::engine::SearchOptions;
use polybook::engine::tt::TranspositionTable;
use polybook::position::parse_fen;
use polybook::uci::profile::{BookProfile, GameFacts};
use rand::Rng;
use shakmaty::{Chess, Color, Position};

use super::args::LimitArgs;
use super::output::write_error;
use super::{CliError, CliResult, open_book};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Side {
    White,
    Black,
    Random,
}

#[derive(clap::Args)]
pub struct Args {
    /// The engine's Polyglot book (.bin): it plays from it while the position is in it.
    /// Repeatable: `--book A --book B` plays from A and, where A has no move, from B (first hit
    /// wins).
    #[arg(long, value_name = "FILE")]
    book: Vec<PathBuf>,
    /// Your colour.
    #[arg(long, value_enum, ignore_case = true, default_value = "white")]
    color: Side,
    /// Play on clocks: [MOVES/]SECONDS[+INCREMENT] in seconds, or with a unit: 300+3, 5m+3,
    /// 5:00+3 and 40/600 are games of 5 minutes plus 3 seconds a move (the last: 40 moves in 10
    /// minutes). Without it and without --depth, --nodes or --movetime, the engine thinks 2000 ms
    /// a move.
    #[arg(long, value_name = "TC", conflicts_with_all = ["depth", "movetime", "nodes"])]
    tc: Option<String>,
    /// The engine's limits for each move, without clocks.
    #[command(flatten)]
    limits: LimitArgs,
    /// Start from this position (FEN) instead of the standard start.
    #[arg(long)]
    fen: Option<String>,
    /// Show the board from your side (by default White is at the bottom).
    #[arg(long)]
    flip: bool,
    /// Add the game to this PGN file (default: a new game-DATE-TIME.pgn here).
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Write no PGN file at all (`save FILE` during the game still writes one).
    #[arg(long, conflicts_with = "pgn")]
    no_pgn: bool,
    /// The engine's transposition table size in MB.
    #[arg(long, value_name = "MB", default_value_t = 64)]
    hash: usize,
    /// Seed for the book choice and --color random (default: a random seed).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// How the engine picks among the book moves: weighted, best, uniform, learned or score (the
    /// best-scored move of a book that `polybook analyse` scored; by weight without scores).
    #[arg(long, default_value = "weighted", value_name = "HOW")]
    book_selection: Selection,
    /// With --book-selection score: pick by weight among the moves within CP centipawns of the
    /// best-scored one (0: the best).
    #[arg(long, default_value_t = 0, value_name = "CP")]
    book_max_loss: u16,
    /// Book moves of less weight do not count.
    #[arg(long, default_value_t = 1, value_name = "W")]
    book_min_weight: u16,
    /// Only the moves with at least P percent of the weight of those that count are candidates.
    #[arg(long, default_value_t = 0, value_name = "P", value_parser = clap::value_parser!(u8).range(0..=100))]
    book_min_share: u8,
    /// Only the moves with at least P percent of the heaviest move's weight are candidates.
    #[arg(long, default_value_t = 0, value_name = "P", value_parser = clap::value_parser!(u8).range(0..=100))]
    book_min_percent_of_best: u8,
    /// Only the N heaviest candidates (0: all).
    #[arg(long, default_value_t = 0, value_name = "N")]
    book_width: usize,
    /// WinBoard's book variation, 0-100: 0 always the heaviest move, 50 by weight, 100 uniform.
    #[arg(long, default_value_t = 50, value_name = "V", value_parser = clap::value_parser!(u8).range(0..=100))]
    book_variety: u8,
    /// At most N of the engine's moves from the book (0: no limit).
    #[arg(long, default_value_t = 0, value_name = "N")]
    book_max_moves: u32,
    /// A book move may repeat a position of the game (by default such moves are skipped).
    #[arg(long)]
    book_allow_repetitions: bool,
    /// Play a book move only if its book goes on for K more book moves below it (0: no check).
    #[arg(long, default_value_t = 0, value_name = "K")]
    book_min_line_plies: u32,
    /// A book profile (YAML, BotLi's `opening_books` or lichess-bot's `engine.polyglot`, as the
    /// engine's BookProfile option reads it): the books and book settings of this game's time
    /// control, speed and the engine's colour (against a human), over the --book* flags.
    #[arg(long, value_name = "FILE", conflicts_with = "book")]
    book_profile: Option<PathBuf>,
}

pub fn run(args: Args) -> CliResult {
    // Everything that can be wrong is checked before the game starts.
    let thinking = match (&args.tc, args.limits.per_move()) {
        (Some(text), _) => {
            let tc = text.parse::<TimeControl>().map_err(CliError::usage)?;
            // `--tc 5+3` is five seconds: say so, in case minutes were meant.
            if tc.base.as_secs() < 60
                && text
                    .chars()
                    .all(|c| c.is_ascii_digit() || "+./".contains(c))
            {
                eprintln!(
                    "polybook: note: --tc {text} gives each side {} seconds; for minutes write e.g. {}m+{}",
                    tc.base.as_secs_f64(),
                    tc.base.as_secs_f64(),
                    tc.increment.as_secs_f64()
                );
            }
            Thinking::Clock(tc)
        }
        (None, Some(per_move)) => Thinking::PerMove(per_move),
        (None, None) => Thinking::PerMove(PerMove {
            movetime: Some(Duration::from_secs(2)),
            ..PerMove::default()
        }),
    };
    let start = match &args.fen {
        Some(fen) => parse_fen(fen).map_err(CliError::data)?,
        None => Chess::default(),
    };
    if start.legal_moves().is_empty() {
        let why = if start.is_check() {
            "checkmate"
        } else {
            "stalemate"
        };
        return Err(CliError::data(format!(
            "the game is over in the --fen position ({why})"
        )));
    }
    TranspositionTable::check_size(args.hash.max(1), 1).map_err(super::args::hash_error)?;
    let seed = args.seed.unwrap_or_else(|| rand::rng().random());
    let human = match args.color {
        Side::White => Color::White,
        Side::Black => Color::Black,
        Side::Random => {
            if seed.is_multiple_of(2) {
                Color::White
            } else {
                Color::Black
            }
        }
    };
    let mut choose = ChooseOptions {
        selection: args.book_selection,
        minimum_weight: args.book_min_weight,
        max_loss: args.book_max_loss,
        width: args.book_width,
        min_share: args.book_min_share,
        min_percent_of_best: args.book_min_percent_of_best,
        variety: args.book_variety,
        ..ChooseOptions::default()
    };
    let mut book_rules = BookRules {
        allow_repetitions: args.book_allow_repetitions,
        max_moves: args.book_max_moves,
        max_depth_plies: 0,
        min_line_plies: args.book_min_line_plies,
    };
    let mut book_paths = args.book.clone();
    if let Some(path) = &args.book_profile {
        let profile = BookProfile::load(path).map_err(CliError::data)?;
        for note in &profile.notes {
            eprintln!("polybook: note: {}: {note}", path.display());
        }
        let facts = GameFacts {
            white: human == Color::Black,
            chess960: false,
            clock: match thinking {
                Thinking::Clock(tc) => {
                    Some((tc.base.as_millis() as u64, tc.increment.as_millis() as u64))
                }
                Thinking::PerMove(_) => None,
            },
            human: Some(true),
        };
        match profile.section_for(&facts) {
            Some((key, section)) => {
                eprintln!("polybook: book profile section {key}");
                book_paths = section.books.clone();
                section.apply(&mut choose);
                book_rules.allow_repetitions = section
                    .allow_repetitions
                    .unwrap_or(book_rules.allow_repetitions);
                book_rules.max_moves = section.max_moves.unwrap_or(book_rules.max_moves);
                book_rules.max_depth_plies = section.max_depth_plies.unwrap_or(0);
                book_rules.min_line_plies =
                    section.min_line_plies.unwrap_or(book_rules.min_line_plies);
            }
            None => {
                eprintln!("polybook: the book profile has no section for this game: no book");
                book_paths.clear();
            }
        }
    }
    let mut books = Books::new();
    for path in &book_paths {
        books.push(path.display().to_string(), open_book(path)?);
    }
    super::warn_unscored(&books, choose.selection);
    if let Some(path) = &args.pgn {
        check_writable(path)?;
    } else if !args.no_pgn {
        // The game goes to a new file here: this folder must take it.
        check_folder(Path::new("."), "save the game in").map_err(|e| {
            CliError::data(format!(
                "{}; --pgn FILE saves it elsewhere, --no-pgn nowhere",
                e.message
            ))
        })?;
    }

    // The PGN so far, for Ctrl-C: written where the game would go, then the process ends.
    let snapshot: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    {
        let snapshot = snapshot.clone();
        let target = args.pgn.clone();
        let no_pgn = args.no_pgn;
        super::interrupt::on_signal(move || {
            let pgn = snapshot
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .filter(|_| !no_pgn);
            eprintln!();
            if let Some(pgn) = pgn {
                let pgn = interrupted(&pgn);
                match save_game(target.as_deref(), &pgn) {
                    Ok(path) => eprintln!("Interrupted; the game so far is in {}", path.display()),
                    // The game holds standard output (locked): the last resort is standard error.
                    Err(e) => {
                        let e = rescue(e, &pgn, io::stderr().lock(), "standard error");
                        eprintln!("polybook: error: {}", e.message);
                    }
                }
            }
            std::process::exit(130);
        });
    }
    let hook_snapshot = snapshot.clone();
    let options = PlayOptions {
        human,
        thinking,
        books,
        choose,
        book_rules,
        search: SearchOptions {
            hash_mb: args.hash.max(1),
            ..SearchOptions::default()
        },
        flip: args.flip,
        seed: Some(seed),
        on_move: Some(Box::new(move |pgn: &str| {
            *hook_snapshot.lock().unwrap_or_else(PoisonError::into_inner) = Some(pgn.to_string());
        })),
    };

    let stdout = io::stdout();
    let stdin = io::stdin();
    let mut session = PlaySession::new(start, options, stdout.lock());
    let played = session.run(stdin.lock());
    // No more Ctrl-C snapshots: the game is written below.
    *snapshot.lock().unwrap_or_else(PoisonError::into_inner) = None;
    let pgn = session.pgn();
    // A game stopped before any move was played, without a result, is not a game to keep (a
    // resignation or an agreed draw before the first move is: it has a result).
    let game = session.game();
    let empty = game.moves().is_empty()
        && game
            .end
            .as_ref()
            .is_none_or(|(outcome, _)| outcome.is_none());
    drop(session);
    let said = if args.no_pgn {
        Ok(())
    } else if empty {
        writeln!(io::stdout(), "No move was played: no game saved.")
    } else {
        let path = save_game(args.pgn.as_deref(), &pgn)
            .map_err(|e| rescue(e, &pgn, io::stdout().lock(), "standard output"))?;
        writeln!(io::stdout(), "The game is in {}", path.display())
    };
    played.and(said).map_err(write_error)
}

/// The PGN of a game stopped by Ctrl-C: result `*`, termination unterminated.
fn interrupted(pgn: &str) -> String {
    let mut out = String::with_capacity(pgn.len() + 32);
    for line in pgn.lines() {
        if line.starts_with("[PlyCount ") {
            out.push_str(line);
            out.push_str("\n[Termination \"unterminated\"]\n");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push('\n');
    out
}

/// Writes the game: added to `--pgn FILE`, or to a new file named by the date and time here.
fn save_game(target: Option<&Path>, pgn: &str) -> Result<PathBuf, CliError> {
    match target {
        Some(path) => append_atomic(path, pgn)
            .map(|()| path.to_path_buf())
            .map_err(|e| super::file_error("write the game to", path, &e)),
        None => write_new(Path::new(""), &default_stem(), pgn.as_bytes())
            .map_err(|e| super::file_error("write the game in", Path::new("."), &e)),
    }
}

/// A game that could not be saved (`error`), kept all the same: written to a new file in the
/// system's temporary folder, or else printed on `out` (named `name`: `standard output`). The
/// error says where it is.
fn rescue(error: CliError, pgn: &str, mut out: impl Write, name: &str) -> CliError {
    let kept = match write_new(&std::env::temp_dir(), &default_stem(), pgn.as_bytes()) {
        Ok(path) => format!("the game is in {} instead", path.display()),
        Err(_) => match writeln!(out, "\n{pgn}").and_then(|()| out.flush()) {
            Ok(()) => format!("the game's PGN is on {name} instead"),
            Err(_) => "it could not be kept elsewhere either".to_string(),
        },
    };
    CliError::data(format!("{}; {kept}", error.message))
}

/// Refuses a `--pgn` path that can't be written, before the game starts.
fn check_writable(path: &Path) -> CliResult {
    if path.is_dir() {
        return Err(CliError::data(format!(
            "{}: is a directory, not a PGN file",
            path.display()
        )));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(CliError::data(format!(
            "{}: the folder {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    // A FIFO or a device is written in place; a file through a temporary file in its folder,
    // renamed onto it.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    check_folder(dir, "write the game in")
}

/// Refuses a folder where no file can be created, before the game starts: a temporary file is
/// made there and removed. `what` says what the folder is for (`save the game in`).
fn check_folder(dir: &Path, what: &str) -> CliResult {
    AtomicFile::create_in(dir)
        .map(drop)
        .map_err(|e| super::file_error(what, dir, &e))
}
