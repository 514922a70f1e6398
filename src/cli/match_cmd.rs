//! `polybook match`: two UCI engines play a match whose openings come from a book; more engines
//! play a tournament (round robin or gauntlet, see `match_cmd/tournament.rs`).

mod openings;
mod tournament;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use polybook::arena::clock::TimeControl;
use polybook::arena::opening::{Order, StartLine};
use polybook::arena::player::{EngineBook, EngineSpec, parse_option};
use polybook::arena::runner::{DrawRule, MatchConfig, MoveLimit, ResignRule};
use polybook::arena::session::{
    MatchReport, Report, Session, SessionConfig, SessionError, SessionEvent,
};
use polybook::arena::stats::{Sprt, SprtVerdict};
use polybook::arena::tournament::Kind;
use polybook::book::{Books, ChooseOptions, Selection};

use super::args::LimitArgs;
use super::{CliError, CliResult, open_book};

#[derive(clap::Args)]
#[command(after_help = "\
ENGINES:
  builtin                      polybook's own engine (its binary run as `polybook uci`)
  builtin:Hash=64,Threads=1    the same with UCI options
  cmd:/usr/games/stockfish     any UCI engine: a program and its arguments
  SF=cmd:/usr/games/stockfish  any of them named (in the PGN and the reports)

EXAMPLES:
  polybook match --engine builtin --engine cmd:/usr/games/stockfish \\
      --option 2:UCI_LimitStrength=true --option 2:UCI_Elo=2000 \\
      --book books/bundled.bin --games 100 --tc 10+0.1 --pgn match.pgn
  polybook match --engine builtin:NullMove=false --engine builtin --tc 5+0.05 \\
      --book books/bundled.bin --games 2000 --concurrency 2 \\
      --sprt elo0=0,elo1=10,alpha=0.05,beta=0.05
  polybook match --tournament gauntlet --engine builtin \\
      --engine SF=cmd:/usr/games/stockfish --engine cmd:/usr/games/glaurung \\
      --each Hash=16 --option 2:UCI_LimitStrength=true --option 2:UCI_Elo=1500 \\
      --book books/bundled.bin --games 20 --tc 2+0.05 --concurrency 2
  polybook match --engine builtin --engine cmd:/usr/games/stockfish \\
      --engine-book 2:books/bundled.bin --engine-book-depth 2:8 \\
      --openings file=openings.pgn format=pgn order=random plies=8 start=3 \\
      --games 100 --tc 10+0.1 --srand 42")]
pub struct Args {
    /// An engine (twice, or more for a tournament): `builtin`, `builtin:Name=Value,...` or
    /// `cmd:PROGRAM [ARGS]`, each optionally named: `NAME=SPEC`.
    #[arg(long = "engine", value_name = "SPEC", required = true, num_args = 1)]
    engines: Vec<String>,
    /// A UCI option for engine N (1 is the first `--engine`): `N:Name=Value` (repeatable).
    #[arg(long = "option", value_name = "N:NAME=VALUE")]
    options: Vec<String>,
    /// A UCI option for every engine: `Name=Value` (repeatable; sent before each engine's own
    /// options, which win).
    #[arg(long, value_name = "NAME=VALUE")]
    each: Vec<String>,
    /// Engine N's own book: `N:FILE` (cutechess's `book=FILE`; repeatable: several books of one
    /// engine are asked in order). The runner plays its moves for that engine (weighted by
    /// --book-selection, from the seed) while the game is within --engine-book-depth and the
    /// book has a move; the engine searches the others. A `builtin` engine's own book is turned
    /// off (OwnBook=false).
    #[arg(long = "engine-book", value_name = "N:FILE")]
    engine_books: Vec<String>,
    /// How deep engine N's own book is asked: `N:MOVES`, full moves from the game's start
    /// (cutechess's `bookdepth=MOVES`) [default: as long as the book has a move].
    #[arg(long = "engine-book-depth", value_name = "N:MOVES")]
    engine_book_depths: Vec<String>,
    /// A book profile for every builtin engine (its BookProfile option: the books and book
    /// settings of each game by time control, speed and colour; see docs/uci.md), read and its
    /// books opened before the first game.
    #[arg(long, value_name = "FILE")]
    book_profile: Option<std::path::PathBuf>,
    /// Play a tournament: `round-robin` (every engine against every other) or `gauntlet` (the
    /// first engine against each of the others). More than two engines make a round robin
    /// when this is not given.
    #[arg(long, value_name = "KIND")]
    tournament: Option<Kind>,
    /// The book the openings come from (none: every game starts from the start position).
    /// Repeatable: `--book A --book B` walks A and, where A has no move, B (first hit wins).
    #[arg(long, value_name = "BOOK")]
    book: Vec<PathBuf>,
    /// The most plies of an opening taken from the book.
    #[arg(long, default_value_t = 16, value_name = "N")]
    book_plies: usize,
    /// How book moves are picked: weighted, best, uniform, learned or score (the best-scored
    /// move of a book that `polybook analyse` scored; by weight in a book without scores).
    #[arg(long, default_value = "weighted", value_name = "HOW")]
    book_selection: Selection,
    /// With --book-selection score: pick by weight among the moves within CP centipawns of the
    /// best-scored one (0: the best).
    #[arg(long, default_value_t = 0, value_name = "CP")]
    book_max_loss: u16,
    /// After each finished game, the opening's book moves learn its result in the book files
    /// they came from (PolyGlot's BookLearn encoding), each for the side that played it.
    #[arg(long, requires = "book")]
    book_learn: bool,
    /// Book moves with a smaller weight are never picked.
    #[arg(long, default_value_t = 1, value_name = "W")]
    book_min_weight: u16,
    /// The position the openings start from (default: the standard start).
    #[arg(long, conflicts_with = "openings")]
    fen: Option<String>,
    /// The openings file, then settings: `FILE [format=epd|pgn] [order=sequential|random]
    /// [plies=N] [start=N] [policy=round]` (or cutechess's and fastchess's `file=FILE format=...
    /// ...`). EPD
    /// (any extension but .pgn): one FEN or EPD a line (`#` comments and blank lines skipped).
    /// PGN: each game's moves from its start (its FEN tag), the first `plies` of them (default:
    /// all). Pair k plays opening k (cycling), then walks the book if there is one; `order=random`
    /// shuffles them by the seed, `start=N` begins at the Nth (wrapping around).
    #[arg(long, value_name = "FILE [KEY=VALUE...]", num_args = 1..)]
    openings: Vec<String>,
    /// The same as `--openings ... order=random`.
    #[arg(long, requires = "openings")]
    shuffle_openings: bool,
    /// Games to play (each opening is played twice, colours swapped); in a tournament, the
    /// games of each pairing.
    #[arg(long, default_value_t = 2, value_name = "N")]
    games: usize,
    /// Time control per side: `[MOVES/]SECONDS[+INC]` (e.g. 10+0.1, 40/60+0.5) [default: 10+0.1
    /// when no --depth, --nodes or --movetime is given].
    #[arg(long, value_name = "TC", conflicts_with_all = ["movetime", "nodes", "depth"])]
    tc: Option<String>,
    /// A fixed budget for each move, without clocks.
    #[command(flatten)]
    limits: LimitArgs,
    /// Extra time past zero on the clock before a flag falls, in milliseconds.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    time_margin: u64,
    /// Games played at once (each game has its two engines; one thinks at a time); in a
    /// tournament, across the whole schedule.
    #[arg(long, default_value_t = 1, value_name = "K")]
    concurrency: usize,
    /// Append every game to this PGN file as soon as it ends.
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Go on with a match or tournament that was stopped: the games the --pgn log already holds
    /// of it (its --event, its rounds, its players) are counted, not played again, and the others
    /// are played as the first run would have (give its --seed and its other settings).
    #[arg(long, requires = "pgn")]
    resume: bool,
    /// Seed for the openings and the engines' books (default: random, printed so a match can be
    /// repeated).
    #[arg(long, visible_alias = "srand", value_name = "S")]
    seed: Option<u64>,
    /// Stop when a sequential test decides: `elo0=0,elo1=5,alpha=0.05,beta=0.05`.
    #[arg(long, value_name = "SPEC")]
    sprt: Option<String>,
    /// Resign adjudication: `score=800,moves=4` (both engines agree for that many moves).
    #[arg(long, value_name = "SPEC")]
    resign: Option<String>,
    /// Draw adjudication: `movenumber=40,score=10,moves=8`.
    #[arg(long, value_name = "SPEC")]
    draw: Option<String>,
    /// The PGN `Event` tag.
    #[arg(long, default_value = "polybook match")]
    event: String,
    /// Seconds an engine may take to answer `uci` or `isready`.
    #[arg(long, default_value_t = 5.0, value_name = "S")]
    handshake_timeout: f64,
    /// Seconds a move may take under --nodes or --depth without --movetime (no clock to run out)
    /// before its engine counts as hung and loses the game as a stalled connection.
    #[arg(long, default_value_t = 600.0, value_name = "S")]
    move_timeout: f64,
    /// Print the final report as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
}

/// `name=value,...` with the names `allowed` as numbers.
fn key_values(flag: &str, text: &str, allowed: &[&str]) -> Result<Vec<i64>, CliError> {
    let quoted = polybook::text::quote(text);
    let mut values = vec![None; allowed.len()];
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let bad = || {
            CliError::usage(format!(
                "--{flag} {quoted}: expected {}",
                allowed
                    .iter()
                    .map(|n| format!("{n}=N"))
                    .collect::<Vec<_>>()
                    .join(",")
            ))
        };
        let (name, value) = part.split_once('=').ok_or_else(bad)?;
        let i = allowed
            .iter()
            .position(|n| *n == name.trim())
            .ok_or_else(bad)?;
        let v: i64 = value.trim().parse().map_err(|_| bad())?;
        if v < 0 {
            return Err(bad());
        }
        values[i] = Some(v);
    }
    values
        .into_iter()
        .zip(allowed)
        .map(|(v, n)| {
            v.ok_or_else(|| CliError::usage(format!("--{flag} {quoted}: {n} is missing")))
        })
        .collect()
}

/// The engines of the command line, with the options of `--each` and then of `--option`.
fn engine_specs(args: &Args) -> Result<Vec<EngineSpec>, CliError> {
    if args.engines.len() < 2 {
        return Err(CliError::usage(
            "two engines are needed, one was given: --engine A --engine B (e.g. --engine builtin --engine cmd:/usr/games/stockfish)",
        ));
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::data(format!("cannot find polybook's own binary: {e}")))?;
    let mut engines = args
        .engines
        .iter()
        .map(|text| EngineSpec::parse(text, &exe).map_err(CliError::usage))
        .collect::<Result<Vec<_>, _>>()?;
    let count = engines.len();
    let each = args
        .each
        .iter()
        .map(|text| {
            parse_option(text).map_err(|why| {
                CliError::usage(format!("--each {}: {why}", polybook::text::quote(text)))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    for engine in &mut engines {
        // Sent first, so that the engine's own options (set later) win.
        engine.options.splice(0..0, each.iter().cloned());
    }
    for text in &args.options {
        let bad = |why: String| {
            CliError::usage(format!("--option {}: {why}", polybook::text::quote(text)))
        };
        let (n, option) = engine_number("option", text, "Name=Value", count)?;
        engines[n].options.push(parse_option(option).map_err(bad)?);
    }
    if let Some(path) = &args.book_profile {
        let profile = polybook::uci::profile::BookProfile::load(path).map_err(CliError::data)?;
        for section in &profile.sections {
            for book in &section.1.books {
                super::open_book_quietly(book)?;
            }
        }
        // Absolute, so that the engine's working folder does not matter.
        let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        for engine in engines.iter_mut().filter(|e| e.program == exe) {
            // Before the engine's own options, which win.
            let at = each.len();
            engine.options.insert(
                at.min(engine.options.len()),
                ("BookProfile".to_string(), path.display().to_string()),
            );
        }
    }
    engine_books(args, &mut engines, &exe)?;
    // Two engines given the same name could not be told apart in the PGN and the table.
    for (i, engine) in engines.iter().enumerate() {
        if let Some(name) = &engine.name
            && engines[..i].iter().any(|e| e.name.as_ref() == Some(name))
        {
            return Err(CliError::usage(format!(
                "engine name {} is given twice: each engine needs its own",
                polybook::text::quote(name)
            )));
        }
    }
    Ok(engines)
}

/// The numbers an engine may be given by, for messages: `1 or 2`, `1 to 5`.
fn engine_numbers(count: usize) -> String {
    if count == 2 {
        "1 or 2".to_string()
    } else {
        format!("1 to {count}")
    }
}

/// `N:REST` of `--FLAG` (whose `REST` is `what`) as engine N's index (0-based) among `count`
/// engines, and `REST`.
fn engine_number<'a>(
    flag: &str,
    text: &'a str,
    what: &str,
    count: usize,
) -> Result<(usize, &'a str), CliError> {
    let numbers = engine_numbers(count);
    let bad =
        |why: String| CliError::usage(format!("--{flag} {}: {why}", polybook::text::quote(text)));
    let (n, rest) = text
        .split_once(':')
        .ok_or_else(|| bad(format!("expected N:{what}, N being {numbers}")))?;
    match n.trim().parse::<usize>() {
        Ok(n) if (1..=count).contains(&n) => Ok((n - 1, rest)),
        _ => Err(bad(format!("engine number '{n}' is not {numbers}"))),
    }
}

/// The engines' own books (`--engine-book`, `--engine-book-depth`), opened and given to their
/// specs; a `builtin` engine with one has its own book turned off (OwnBook=false, sent first so
/// that an OwnBook the user gives wins).
fn engine_books(args: &Args, engines: &mut [EngineSpec], exe: &std::path::Path) -> CliResult {
    let count = engines.len();
    let mut books: Vec<Books> = (0..count).map(|_| Books::new()).collect();
    for text in &args.engine_books {
        let (n, path) = engine_number("engine-book", text, "FILE", count)?;
        let path = PathBuf::from(path);
        books[n].push(path.display().to_string(), open_book(&path)?);
    }
    for engine_books in &books {
        super::warn_unscored(engine_books, args.book_selection);
    }
    let mut depths = vec![None; count];
    for text in &args.engine_book_depths {
        let (n, depth) = engine_number("engine-book-depth", text, "MOVES", count)?;
        let bad = |why: &str| {
            CliError::usage(format!(
                "--engine-book-depth {}: {why}",
                polybook::text::quote(text)
            ))
        };
        match depth.trim().parse::<usize>() {
            Ok(d) if d >= 1 => depths[n] = Some(d),
            _ => return Err(bad("expected N:MOVES, MOVES a whole number of at least 1")),
        }
        if books[n].is_empty() {
            return Err(bad(&format!("engine {} has no --engine-book", n + 1)));
        }
    }
    for ((engine, books), depth) in engines.iter_mut().zip(books).zip(depths) {
        if books.is_empty() {
            continue;
        }
        if engine.program == exe && engine.args == ["uci"] {
            engine
                .options
                .insert(0, ("OwnBook".to_string(), "false".to_string()));
        }
        engine.book = Some(EngineBook {
            books: Arc::new(books),
            depth,
        });
    }
    Ok(())
}

/// The match's settings; `engines` are the first two of `specs`.
fn config(args: &Args, specs: &[EngineSpec]) -> Result<MatchConfig, CliError> {
    let engines = [specs[0].clone(), specs[1].clone()];
    let limit = match (&args.tc, args.limits.per_move()) {
        (Some(tc), _) => MoveLimit::Clock(
            tc.parse::<TimeControl>()
                .map_err(|e| CliError::usage(format!("--tc: {e}")))?,
        ),
        (None, Some(per_move)) => MoveLimit::PerMove(per_move),
        (None, None) => MoveLimit::Clock("10+0.1".parse().expect("a valid default")),
    };
    if args.games == 0 {
        return Err(CliError::usage("--games must be at least 1"));
    }
    if args.concurrency == 0 {
        return Err(CliError::usage("--concurrency must be at least 1"));
    }
    let resign = match &args.resign {
        Some(t) => {
            let v = key_values("resign", t, &["score", "moves"])?;
            Some(ResignRule {
                score: v[0].min(i64::from(i32::MAX)) as i32,
                moves: v[1].max(1) as usize,
            })
        }
        None => None,
    };
    let draw = match &args.draw {
        Some(t) => {
            let v = key_values("draw", t, &["movenumber", "score", "moves"])?;
            Some(DrawRule {
                movenumber: v[0].min(i64::from(u32::MAX)) as u32,
                score: v[1].min(i64::from(i32::MAX)) as i32,
                moves: v[2].max(1) as usize,
            })
        }
        None => None,
    };
    let seed = args.seed.unwrap_or_else(rand::random);
    let starts: Vec<StartLine> = match (&args.fen, &args.openings[..]) {
        (Some(fen), _) => vec![
            polybook::position::parse_fen(fen)
                .map_err(CliError::data)?
                .into(),
        ],
        (None, []) => vec![shakmaty::Chess::default().into()],
        (None, words) => {
            let mut spec = openings::OpeningsSpec::parse(words)?;
            if args.shuffle_openings {
                spec.order = Order::Random;
            }
            spec.read(seed)?
        }
    };
    let mut books = Books::new();
    for path in &args.book {
        let book = open_book(path)?;
        if args.book_learn {
            super::refuse_scored(path, &book)?;
        }
        books.push(path.display().to_string(), book);
    }
    super::warn_unscored(&books, args.book_selection);
    let book = (!books.is_empty()).then(|| Arc::new(books));
    for (value, name) in [
        (args.handshake_timeout, "--handshake-timeout"),
        (args.move_timeout, "--move-timeout"),
    ] {
        if !value.is_finite() || value <= 0.0 || value > 1e9 {
            return Err(CliError::usage(format!(
                "{name} must be above 0 (and at most 1000000000 seconds)"
            )));
        }
    }
    Ok(MatchConfig {
        engines,
        book,
        book_plies: args.book_plies,
        choose: ChooseOptions {
            selection: args.book_selection,
            minimum_weight: args.book_min_weight,
            max_loss: args.book_max_loss,
            ..ChooseOptions::default()
        },
        starts,
        games: args.games,
        limit,
        time_margin: Duration::from_millis(args.time_margin),
        concurrency: args.concurrency,
        seed,
        resign,
        draw,
        event: args.event.clone(),
        handshake_timeout: Duration::from_secs_f64(args.handshake_timeout),
        move_timeout: Duration::from_secs_f64(args.move_timeout),
    })
}

pub fn run(args: Args) -> CliResult {
    let specs = engine_specs(&args)?;
    let settings = config(&args, &specs)?;
    let tournament = specs.len() > 2 || args.tournament.is_some();
    let sprt = match &args.sprt {
        Some(_) if tournament => {
            return Err(CliError::usage(format!(
                "--sprt tests the difference between two engines: it needs a match of two, not a tournament of {}",
                specs.len()
            )));
        }
        Some(t) => Some(t.parse::<Sprt>().map_err(CliError::usage)?),
        None => None,
    };
    if args.resume && args.seed.is_none() {
        return Err(CliError::usage(
            "--resume needs the --seed the match was started with (its first line says it): the games left must be the ones it would have played",
        ));
    }
    let session = Session::new(SessionConfig {
        engines: specs,
        tournament: args.tournament,
        settings,
        pgn: args.pgn.clone(),
        learn: args.book_learn.then(|| args.book.clone()),
        sprt,
        resume: args.resume,
    })
    .map_err(|e| match e {
        SessionError::Pgn { path, source } => super::file_error("write PGN", &path, &source),
        SessionError::ResumeRead { path, source } => super::file_error("read PGN", &path, &source),
        e @ SessionError::ResumeMismatch { .. } => CliError::data(e),
        SessionError::Engine(e) => CliError::data(e),
        e => CliError::usage(e),
    })?;
    let log = !args.quiet;
    let finished = session.run(&super::interrupt::flag(), |progress| match progress {
        // A warning: printed even with --quiet.
        SessionEvent::PgnCreatedAnew { .. } | SessionEvent::PgnUnlocked { .. } => {
            eprintln!("polybook: warning: {progress}")
        }
        _ if log => eprintln!("{progress}"),
        _ => {}
    });
    let what = match &finished.report {
        Report::Match(_) => "match",
        Report::Tournament(_) => "tournament",
    };
    if args.json {
        let value = serde_json::to_value(&finished.report).map_err(CliError::data)?;
        outln!("{value}")?;
    } else {
        match &finished.report {
            Report::Match(report) => print_match(report)?,
            Report::Tournament(report) => tournament::print(report)?,
        }
    }
    let _ = std::io::stdout().flush();
    if args.book_learn && !args.quiet {
        for (path, n) in args.book.iter().zip(&finished.learned) {
            eprintln!(
                "book learning: {n} learn field update{} in {}",
                if *n == 1 { "" } else { "s" },
                path.display()
            );
        }
    }
    if let Some(e) = finished.learn_error {
        return Err(CliError::data(format!(
            "book learning failed: {e}; the {what} was stopped"
        )));
    }
    if let Some(e) = finished.pgn_error {
        return Err(CliError::data(format!(
            "writing the PGN failed: {e}; the {what} was stopped"
        )));
    }
    if let Some(why) = finished.failure {
        return Err(CliError::data(format!("{what} stopped: {why}")));
    }
    if finished.report.interrupted() {
        return Err(CliError::interrupted(
            "interrupted; the games that finished are in the PGN",
        ));
    }
    Ok(())
}

/// A match's final report as text: the score, the pairs and the time, and the SPRT's verdict.
fn print_match(report: &MatchReport) -> CliResult {
    let (names, score) = (&report.engines, &report.tally.score);
    outln!("{} vs {}: {score}", names[0], names[1])?;
    outln!(
        "games {}, pairs (0, ½, 1, 1½, 2 points) {:?}, {:.0} s",
        score.games(),
        score.pairs,
        report.seconds
    )?;
    if let Some(s) = &report.sprt {
        outln!(
            "SPRT elo0={} elo1={} alpha={} beta={}: LLR {:.2} ({:.2}, {:.2}): {}",
            s.elo0,
            s.elo1,
            s.alpha,
            s.beta,
            s.llr,
            s.lower,
            s.upper,
            match report.tally.verdict {
                SprtVerdict::H1 => "H1 accepted",
                SprtVerdict::H0 => "H0 accepted",
                SprtVerdict::Continue => "no decision",
            }
        )?;
        // Games being played when the LLR crossed a bound end afterwards and count above.
        if let Some((games, llr)) = report.tally.decided_at
            && games < score.games()
        {
            outln!(
                "decided at game {games} (LLR {llr:.2}); the {} game(s) still being played then are counted above",
                score.games() - games
            )?;
        }
    }
    Ok(())
}
