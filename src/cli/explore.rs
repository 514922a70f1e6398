//! `polybook explore`: serves the page that walks through books in a browser, prints its URL,
//! and runs until Ctrl-C (exit 130).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use polybook::book::Books;
use polybook::explore::{Explorer, Server};
use polybook::tally::TallyLookup;
use polybook::text::quote;

use super::position::PositionArgs;
use super::{CliError, CliResult, open_book};

#[derive(clap::Args)]
pub struct Args {
    /// The Polyglot books (.bin) to show, each in its own panel, in this order.
    #[arg(required_unless_present = "tally", value_name = "BOOK")]
    books: Vec<PathBuf>,
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
}

fn parse_host(host: &str) -> Result<IpAddr, String> {
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    host.parse()
        .map_err(|_| "not an IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)".to_string())
}

pub fn run(args: Args) -> CliResult {
    let mut books = Books::new();
    for path in &args.books {
        books.push(path.display().to_string(), open_book(path)?);
    }
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
            start,
        },
        addr,
    )
    .map_err(CliError::data)?;

    // Ctrl-C (or SIGTERM, SIGHUP) ends the wait below. If the handler cannot be installed, the
    // signal still ends the process.
    let (stop, stopped) = std::sync::mpsc::channel();
    super::interrupt::on_signal(move || {
        let _ = stop.send(());
    });
    let url = server.url();
    outln!("{url}")?;
    let what = match (args.books.len(), args.tally.is_empty()) {
        (0, _) => "a tally".to_string(),
        (1, true) => "1 book".to_string(),
        (1, false) => "1 book and a tally".to_string(),
        (n, true) => format!("{n} books"),
        (n, false) => format!("{n} books and a tally"),
    };
    eprintln!("polybook: serving {what} at {url}; Ctrl-C stops");
    if args.open {
        open_in_browser(&url);
    }
    let _ = stopped.recv();
    server.stop();
    Err(CliError {
        code: 130,
        message: String::new(),
    })
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
