//! `polybook explore`: serves the page that walks through books in a browser, prints its URL,
//! and runs until Ctrl-C (exit 130).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use std::io::IsTerminal;

use polybook::book::Books;
use polybook::explore::{ExploreError, Explorer, Practice, Server};
use polybook::pgn::input::expand;
use polybook::repertoire::check::{CheckError, Left, check_games};
use polybook::repertoire::{Index, IndexOptions, Player, is_games_input};
use polybook::tally::TallyLookup;
use polybook::text::{quote, thousands};
use shakmaty::Color;

use super::position::PositionArgs;
use super::{CliError, CliResult, open_book};

#[derive(clap::Args)]
pub struct Args {
    /// The Polyglot books (.bin) to show, each in its own panel, in this order; and games to
    /// explore (PGN, compressed or not, or folders of them: anything that is not a .bin book),
    /// read at start into an index whose moves the page shows with filters (colour, speed, rated,
    /// ratings, dates, result, opponent) and the games themselves.
    #[arg(required_unless_present_any = ["tally", "practice"], value_name = "BOOK|GAMES")]
    books: Vec<PathBuf>,
    /// With games: only this player's games, seen from the player's side (the White or Black
    /// tag, any case). Repeated for the player's accounts on several sites.
    #[arg(long, value_name = "NAME")]
    player: Vec<String>,
    /// With games: also the games of the players whose name matches this regular expression (any
    /// case; anchor it with ^…$ for whole names).
    #[arg(long, value_name = "REGEX")]
    player_regex: Option<String>,
    /// With games: the plies of each game whose positions are indexed (as lichess's explorer);
    /// the whole game is kept for replaying it.
    #[arg(long, default_value_t = 50, value_name = "N")]
    max_ply: usize,
    /// With games: the most memory the index may take (e.g. 2G, 512M); more games than that is
    /// an error that says so. Default: three quarters of the memory available at start.
    #[arg(long, value_parser = super::args::parse_size, value_name = "SIZE")]
    memory: Option<u64>,
    /// With games: threads that read them (default: every core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// With games: where each game left this repertoire book, as `polybook check --book REP.bin`
    /// says (with the same --player): the games' lists and the replayed game show "in the book"
    /// or "left at ply N (who)".
    #[arg(long, value_name = "REP.bin")]
    repertoire: Option<PathBuf>,
    /// No progress bar while the games are read.
    #[arg(long)]
    quiet: bool,
    /// Show each move's games and results (white / draw / black) from this tally (`polybook
    /// tally`'s .parquet, or a folder of them as the Spark job writes). Repeated: the tallies are
    /// summed; they must have been made with the same options.
    #[arg(long, value_name = "TALLY")]
    tally: Vec<PathBuf>,
    #[command(flatten)]
    position: PositionArgs,
    /// The port to listen on; 0 takes any free port (the URL printed says which).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// The address to listen on. Anything but a loopback address (127.0.0.1, ::1, localhost)
    /// lets other machines read the books, and is warned about.
    #[arg(long, default_value = "127.0.0.1", value_parser = parse_host)]
    host: IpAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// Practise the book (one .bin, a repertoire) as this side, white or black: the page plays
    /// the other side's book moves and you play yours on the board; a move the book does not
    /// list is a mistake, and the page shows the book's. The positions are scheduled by spaced
    /// repetition (SM-2), and the progress is kept in a JSON file beside the book.
    #[arg(long, value_name = "COLOUR", value_parser = parse_colour)]
    practice: Option<Color>,
    /// With --practice: the progress file (default: the book's path with .practice.json added,
    /// REP.bin.practice.json). Written after every answer; a damaged one is an error, never
    /// written over.
    #[arg(long, value_name = "FILE")]
    progress: Option<PathBuf>,
}

fn parse_colour(colour: &str) -> Result<Color, String> {
    match colour.to_ascii_lowercase().as_str() {
        "white" | "w" => Ok(Color::White),
        "black" | "b" => Ok(Color::Black),
        _ => Err("the side to practise is white or black".to_string()),
    }
}

fn parse_host(host: &str) -> Result<IpAddr, String> {
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    host.parse()
        .map_err(|_| "not an IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)".to_string())
}

pub fn run(args: Args) -> CliResult {
    let (game_paths, book_paths): (Vec<&PathBuf>, Vec<&PathBuf>) =
        args.books.iter().partition(|p| is_games_input(p));
    let mut books = Books::new();
    for path in &book_paths {
        books.push(path.display().to_string(), open_book(path)?);
    }
    let practice = match args.practice {
        Some(colour) => Some(practice(&args, colour, &book_paths, &game_paths)?),
        None if args.progress.is_some() => {
            return Err(CliError::usage(
                "--progress is the file of --practice: give --practice white|black too",
            ));
        }
        None => None,
    };
    let player =
        Player::new(&args.player, args.player_regex.as_deref()).map_err(CliError::usage)?;
    if game_paths.is_empty() && player.is_some() {
        return Err(CliError::usage(
            "--player and --player-regex need games to explore (PGN files or folders)",
        ));
    }
    if game_paths.is_empty() && args.repertoire.is_some() {
        return Err(CliError::usage(
            "--repertoire checks games against the book: give games to explore (PGN files or folders)",
        ));
    }
    let repertoire = match &args.repertoire {
        Some(path) => Some((path, open_book(path)?)),
        None => None,
    };
    if args.max_ply == 0 {
        return Err(CliError::usage("--max-ply must be at least 1"));
    }
    if args.threads == Some(0) {
        return Err(CliError::usage("--threads must be at least 1"));
    }
    let games = if game_paths.is_empty() {
        None
    } else {
        let paths: Vec<PathBuf> = game_paths.iter().map(|p| p.to_path_buf()).collect();
        let inputs = expand(&paths).map_err(CliError::data)?;
        let opts = IndexOptions {
            player: player.clone(),
            max_ply: args.max_ply,
            threads: args.threads.unwrap_or_else(polybook::cores::cores),
            memory: args.memory.unwrap_or_else(default_memory),
        };
        let total = inputs.iter().map(|i| i.size()).sum::<Option<u64>>();
        let bar = super::progress::Bar::new(!args.quiet && std::io::stderr().is_terminal(), total);
        let index = Index::read(&inputs, &opts, &super::interrupt::flag(), &bar);
        bar.finish();
        let mut index = index.map_err(|e| match e {
            polybook::repertoire::IndexError::Interrupted => CliError::interrupted(e),
            _ => CliError::data(e),
        })?;
        let left_out = index.left_out();
        eprintln!(
            "polybook: {} games indexed ({} plies, {} MiB) in {:.1} s{}",
            thousands(index.games()),
            thousands(index.plies()),
            index.bytes() >> 20,
            index.seconds,
            if left_out.is_empty() {
                String::new()
            } else {
                format!("; left out: {}", left_out.join(", "))
            }
        );
        if let Some((path, book)) = &repertoire {
            let bar = super::progress::Bar::over_inputs(&inputs, args.quiet);
            let report = check_games(
                &inputs,
                book,
                player.as_ref(),
                &bar,
                &super::interrupt::flag(),
            );
            bar.finish();
            let report = report.map_err(|e| match e {
                CheckError::Stopped => CliError::interrupted(e),
                e => CliError::data(e),
            })?;
            let never = report.games.iter().filter(|g| g.who == Left::None).count();
            eprintln!(
                "polybook: {} games checked against {}: {} never left it",
                thousands(report.games.len()),
                path.display(),
                thousands(never)
            );
            index.set_repertoire(&report.games);
        }
        let name = game_paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" + ");
        Some((name, index))
    };
    let tally = if args.tally.is_empty() {
        None
    } else {
        let paths: Vec<&std::path::Path> = args.tally.iter().map(PathBuf::as_path).collect();
        let lookup = TallyLookup::open(&paths).map_err(super::tally::tally_error)?;
        let name = args
            .tally
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" + ");
        Some((name, Mutex::new(lookup)))
    };
    let start = args.position.position()?;
    if !args.host.is_loopback() {
        eprintln!(
            "polybook: warning: listening on {}, not on loopback: anyone who can reach this machine can read the books",
            args.host
        );
    }
    let addr = SocketAddr::new(args.host, args.port);
    let server = Server::start(
        Explorer {
            books,
            tally,
            games,
            practice,
            start,
        },
        addr,
    )
    .map_err(|e| match e {
        ExploreError::Listen {
            kind: std::io::ErrorKind::AddrInUse,
            ..
        } => CliError::data(format!(
            "{e}; give another --port, or --port 0 for any free port"
        )),
        e => CliError::data(e),
    })?;

    // Ctrl-C (or SIGTERM, SIGHUP) ends the wait below. If the handler cannot be installed, the
    // signal still ends the process.
    let (stop, stopped) = std::sync::mpsc::channel();
    super::interrupt::on_signal(move || {
        let _ = stop.send(());
    });
    let url = server.url();
    outln!("{url}")?;
    let mut shown = Vec::new();
    match book_paths.len() {
        0 => {}
        1 => shown.push("1 book".to_string()),
        n => shown.push(format!("{n} books")),
    }
    if !args.tally.is_empty() {
        shown.push("a tally".to_string());
    }
    if !game_paths.is_empty() {
        shown.push("the games".to_string());
    }
    if let Some(colour) = args.practice {
        shown = vec![format!(
            "the practice of {} as {colour}",
            book_paths[0].display()
        )];
    }
    let what = match shown.len() {
        1 => shown.remove(0),
        _ => {
            let last = shown.pop().unwrap_or_default();
            format!("{} and {last}", shown.join(", "))
        }
    };
    eprintln!("polybook: serving {what} at {url}; Ctrl-C stops");
    if args.open {
        open_in_browser(&url);
    }
    let _ = stopped.recv();
    server.stop();
    Err(CliError::interrupted(""))
}

/// `--practice COLOUR`'s settings checked (one book, no games, no tally) and its progress read:
/// each refusal is one line.
fn practice(
    args: &Args,
    colour: Color,
    book_paths: &[&PathBuf],
    game_paths: &[&PathBuf],
) -> Result<Practice, CliError> {
    if let Some(games) = game_paths.first() {
        return Err(CliError::usage(format!(
            "--practice practises a repertoire book (.bin), not games: {} is read as games",
            quote(&games.display().to_string())
        )));
    }
    let book = match book_paths {
        [] => {
            return Err(CliError::usage(
                "--practice needs the repertoire book to practise (polybook explore REP.bin --practice white|black)",
            ));
        }
        [book] => book,
        several => {
            return Err(CliError::usage(format!(
                "--practice practises one book, and {} were given: merge them first (polybook merge)",
                several.len()
            )));
        }
    };
    if !args.tally.is_empty() {
        return Err(CliError::usage(
            "--practice shows no tally: the page hides the moves while you answer",
        ));
    }
    let path = args
        .progress
        .clone()
        .unwrap_or_else(|| Practice::default_path(book));
    let practice = Practice::open(colour, path).map_err(CliError::data)?;
    eprintln!(
        "polybook: practising {} as {colour}; progress in {} ({} positions answered)",
        book.display(),
        practice.path.display(),
        thousands(practice.answered())
    );
    Ok(practice)
}

/// The default `--memory`: three quarters of what the machine can give at start (Linux's
/// `MemAvailable`), or 4 GiB where that is not known.
fn default_memory() -> u64 {
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let kb = info.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
            kb.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
        });
    available.map_or(4 << 30, |kb| kb * 1024 / 4 * 3)
}

/// Opens `url` in the default browser (`xdg-open`, `open` on macOS, `start` on Windows); a
/// failure is a warning, the server goes on.
fn open_in_browser(url: &str) {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    let spawned = Command::new(program)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!(
            "polybook: warning: cannot open a browser ({} {}): open {url} yourself",
            quote(program),
            polybook::text::reason(&e)
        );
    }
}
