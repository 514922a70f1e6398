//! Fuzz targets that run on stable Rust: real files mutated by a seeded generator, fed to the
//! PGN → book path, the book reader and everything that walks a book, the FEN/EPD parsers and the
//! engine behind them, the UCI loop, the commands that read Parquet tallies (run as the binary:
//! `book`, `tally --merge`, `probe`), the commands that read books and PGN and write books or text
//! (`book_commands`: `learn`, `edit`, `filter`, `export`, `sort`, `merge`, `verify`, `dump`),
//! `match` against engines that crash, hang, flood or lie (`bad_engines`), and the HTTP server of
//! `explore` (`explore_http`: in process, over real sockets). Every target checks the same
//! promises: no panic, no hang, errors of one short line, and the properties that must hold
//! whatever the input (the book does not depend on `--threads` or the chunk size; `merge` writes a
//! book `verify` accepts; a command on a damaged tally exits 1 with one line naming it; a book a
//! command writes passes `verify`, and a command that fails leaves no file behind; a match ends,
//! scores a forfeit against the engine that failed, and leaves no engine running; every answer of
//! the server is well-formed HTTP, and a good request after each case is answered at once).
//!
//! In the normal test command each target runs a fixed number of cases from a fixed seed, so a run
//! is repeatable. For a long run:
//!
//! ```sh
//! FUZZ_SECONDS=3600 cargo test --release --test fuzz -- --nocapture --test-threads 1
//! FUZZ_SECONDS=600 FUZZ_SEED=7 cargo test --release --test fuzz book -- --nocapture
//! ```
//!
//! A failing case is written to `target/fuzz-failures/` and named in the failure. A long run does not
//! stop at the first failure: it saves each failing input, goes on, and at the end lists the distinct
//! failures (by their message) with how often each was hit.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use polybook::book::{Book, Key};
use polybook::builder::{BuildOptions, build};
use polybook::engine::perft::perft;
use polybook::engine::suite::parse_epd_line;
use polybook::engine::{Engine, Limits, SearchOptions};
use polybook::pgn::input::Input;
use polybook::position::{parse_fen, play_moves};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Chess, Color, Position};

// ---- the driver ---------------------------------------------------------------------------------

/// How long a target runs: a fixed number of cases, or `FUZZ_SECONDS` of them.
struct Budget {
    cases: u64,
    until: Option<Instant>,
    seed: u64,
}

impl Budget {
    fn new(default_cases: u64) -> Budget {
        let seconds = std::env::var("FUZZ_SECONDS")
            .ok()
            .and_then(|s| s.parse::<u64>().ok());
        let seed = std::env::var("FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(if seconds.is_some() {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_secs())
            } else {
                20261124
            });
        Budget {
            cases: if seconds.is_some() {
                u64::MAX
            } else {
                default_cases
            },
            until: seconds.map(|s| Instant::now() + Duration::from_secs(s)),
            seed,
        }
    }

    fn more(&self, done: u64) -> bool {
        done < self.cases && self.until.is_none_or(|t| Instant::now() < t)
    }
}

/// Runs `case` on generated inputs until the budget is spent. Each case gets its own generator
/// (seeded from the run's seed and the case number), so a failure is replayed by its numbers. A case
/// that panics or runs longer than `hang` has its input saved and fails the test.
fn fuzz(
    target: &str,
    default_cases: u64,
    hang: Duration,
    case: impl Fn(&mut StdRng) -> Vec<u8>,
    check: impl Fn(&[u8]) + Sync,
) {
    let budget = Budget::new(default_cases);
    if budget.until.is_some() {
        // A long run reports its failures at the end, not each panic as it happens.
        std::panic::set_hook(Box::new(|_| {}));
    }
    let started = Instant::now();
    let mut done = 0u64;
    let mut failures: std::collections::BTreeMap<String, (u64, PathBuf)> = Default::default();
    while budget.more(done) {
        let mut rng = StdRng::seed_from_u64(budget.seed ^ done.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let input = case(&mut rng);
        let finished = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let finished = finished.clone();
            let saved = failure_path(target, budget.seed, done);
            let input = input.clone();
            let target = target.to_string();
            std::thread::spawn(move || {
                let start = Instant::now();
                while !finished.load(Ordering::Relaxed) {
                    if start.elapsed() > hang {
                        save(&saved, &input);
                        eprintln!(
                            "fuzz {target}: case {done} hangs (over {hang:?}); input saved to {}",
                            saved.display()
                        );
                        std::process::abort();
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&input)));
        finished.store(true, Ordering::Relaxed);
        watchdog.join().unwrap();
        if let Err(panic) = outcome {
            let saved = failure_path(target, budget.seed, done);
            save(&saved, &input);
            if budget.until.is_none() {
                eprintln!(
                    "fuzz {target}: case {done} (seed {}) failed; input saved to {}",
                    budget.seed,
                    saved.display()
                );
                std::panic::resume_unwind(panic);
            }
            // A long run goes on, and tells the distinct failures apart by their message.
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic without a message");
            let first_line: String = message
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(160)
                .collect();
            failures
                .entry(first_line)
                .or_insert_with(|| (0, saved.clone()))
                .0 += 1;
        }
        done += 1;
    }
    eprintln!(
        "fuzz {target}: {done} cases in {:.1} s (seed {}), {} failing",
        started.elapsed().as_secs_f64(),
        budget.seed,
        failures.values().map(|f| f.0).sum::<u64>()
    );
    for (message, (count, path)) in &failures {
        eprintln!(
            "fuzz {target}: {count} x {message} (first: {})",
            path.display()
        );
    }
    assert!(
        failures.is_empty(),
        "fuzz {target}: {} distinct failures",
        failures.len()
    );
}

fn failure_path(target: &str, seed: u64, case: u64) -> PathBuf {
    common::root()
        .join("target/fuzz-failures")
        .join(format!("{target}-{seed}-{case}.bin"))
}

fn save(path: &Path, bytes: &[u8]) {
    let _ = std::fs::create_dir_all(path.parent().unwrap());
    let _ = std::fs::write(path, bytes);
}

/// An error for the user: one line, short (what, where, why; never the whole input echoed).
fn assert_one_line(message: &str) {
    assert!(
        !message.contains('\n'),
        "error of several lines: {message:?}"
    );
    assert!(
        message.chars().count() <= 400,
        "error of {} characters: {:?}…",
        message.chars().count(),
        message.chars().take(200).collect::<String>()
    );
}

// ---- mutations ----------------------------------------------------------------------------------

/// A mutation of one of `seeds`: a few byte flips, insertions of `tokens` or random bytes,
/// deletions, duplications, splices with another seed and truncations.
fn mutate(rng: &mut StdRng, seeds: &[Vec<u8>], tokens: &[&[u8]], max_len: usize) -> Vec<u8> {
    let mut out = seeds[rng.random_range(0..seeds.len())].clone();
    out.truncate(max_len);
    for _ in 0..rng.random_range(1..=8) {
        let at = rng.random_range(0..=out.len());
        match rng.random_range(0..8) {
            0 if !out.is_empty() => {
                let i = rng.random_range(0..out.len());
                out[i] = rng.random();
            }
            1 | 2 => {
                let t = tokens[rng.random_range(0..tokens.len())];
                out.splice(at..at, t.iter().copied());
            }
            3 => {
                let end = (at + rng.random_range(1..64)).min(out.len());
                out.drain(at..end);
            }
            4 => {
                let end = (at + rng.random_range(1..256)).min(out.len());
                let piece = out[at..end].to_vec();
                let to = rng.random_range(0..=out.len());
                out.splice(to..to, piece);
            }
            5 => {
                let other = &seeds[rng.random_range(0..seeds.len())];
                if !other.is_empty() {
                    let from = rng.random_range(0..other.len());
                    let end = (from + rng.random_range(1..512)).min(other.len());
                    out.splice(at..at, other[from..end].iter().copied());
                }
            }
            6 if rng.random_ratio(1, 4) => out.truncate(at),
            _ => {
                let n = rng.random_range(1..16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
                out.splice(at..at, bytes);
            }
        }
    }
    out.truncate(max_len);
    out
}

fn files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_below(&p, out);
        } else {
            out.push(p);
        }
    }
}

// ---- PGN → book ---------------------------------------------------------------------------------

const PGN_TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"\"",
    b"\n",
    b"\n\n",
    b"\r\n",
    b"\0",
    b";",
    b"%",
    b"$1",
    b"[Event \"x\"]\n",
    b"[FEN \"",
    b"[SetUp \"1\"]\n",
    b"[Variant \"Chess960\"]\n",
    b"[Result \"1-0\"]\n",
    b"1-0",
    b"0-1",
    b"1/2-1/2",
    b"*",
    b"1.",
    b"1...",
    b" e4 ",
    b" O-O ",
    b" O-O-O ",
    b" Nf3 ",
    b" exd6 ",
    b" e8=Q ",
    b" -- ",
    b" Z0 ",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"{ [%clk 0:01:00] }",
    b"[FEN \"nnnnknnn/pppppppp/8/8/8/8/PPPPPPPP/NNNNKNNN w - - 0 1\"]\n",
];

fn pgn_seeds() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    files_below(&common::data("pgn/edge"), &mut files);
    let mut seeds: Vec<Vec<u8>> = files
        .iter()
        .map(|p| {
            let mut b = std::fs::read(p).unwrap();
            b.truncate(24 << 10);
            b
        })
        .collect();
    let dortmund = std::fs::read(common::bundled("dortmund.pgn")).unwrap();
    seeds.extend(dortmund.chunks(16 << 10).take(4).map(<[u8]>::to_vec));
    seeds
}

/// Builds `pgn` with `threads` parser threads and chunks of `chunk` bytes: the book's bytes and what
/// the report counted, or the error's text.
fn build_bytes(
    pgn: &Path,
    out: &Path,
    threads: usize,
    chunk: usize,
    memory: usize,
) -> Result<(Vec<u8>, String), String> {
    let opts = BuildOptions {
        threads,
        chunk_size: chunk,
        memory,
        rules: polybook::builder::EntryRules {
            min_games: 1,
            ..Default::default()
        },
        ..BuildOptions::default()
    };
    let _ = std::fs::remove_file(out);
    match build(
        &[Input::File(pgn.to_path_buf())],
        out,
        &opts,
        &AtomicBool::new(false),
        &(),
    ) {
        Ok(r) => {
            let counted = format!(
                "games {} used {} skipped {:?} cut short {:?} plies {} examples {:?}",
                r.games, r.used, r.skipped, r.truncated, r.plies, r.examples
            );
            Ok((std::fs::read(out).unwrap(), counted))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Mutated real PGN: the build never panics, errors are one line, and the book is the same bytes
/// and the report the same counts whatever the threads and the chunk size.
#[test]
fn pgn_build() {
    let seeds = pgn_seeds();
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("in.pgn");
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    fuzz(
        "pgn_build",
        300,
        Duration::from_secs(60),
        |rng| mutate(rng, &seeds, PGN_TOKENS, 64 << 10),
        |input| {
            std::fs::write(&pgn, input).unwrap();
            let whole = build_bytes(&pgn, &a, 1, 1 << 20, 64 << 20);
            let chunked = build_bytes(&pgn, &b, 2, 16 << 10, 4 << 20);
            if let Err(e) = &whole {
                assert_one_line(e);
            }
            if let Err(e) = &chunked {
                assert_one_line(e);
            }
            if let (Ok(x), Ok(y)) = (&whole, &chunked) {
                assert!(x.0 == y.0, "the book depends on --threads / the chunk size");
                assert_eq!(x.1, y.1, "the report depends on --threads / the chunk size");
            }
        },
    );
}

// ---- books --------------------------------------------------------------------------------------

fn book_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for name in [
        "lasker-trap.bin",
        "rodent3_guide.bin",
        "rodent3_single_entry.bin",
        "empty.bin",
        "gnuchess.bin",
        "performance.bin",
        "gm2001.bin",
        "invalid/gnuchess-smallbook-trailing-byte.bin",
        "invalid/html-page-saved-as.bin",
        "invalid/git-lfs-pointer.bin",
    ] {
        let mut b = std::fs::read(common::data("books").join(name)).unwrap();
        b.truncate(8 << 10);
        seeds.push(b);
    }
    seeds
}

/// A mutation of a real book: byte-level ([`mutate`]) or entry-level (swapped, repeated, moved
/// entries, as tools that append to or patch a book leave them).
fn mutate_book(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    if rng.random_ratio(1, 2) {
        let mut b = seeds[rng.random_range(0..seeds.len())].clone();
        let n = b.len() / 16;
        if n >= 2 {
            for _ in 0..rng.random_range(1..4) {
                let (i, j) = (rng.random_range(0..n), rng.random_range(0..n));
                match rng.random_range(0..3) {
                    0 => {
                        for k in 0..16 {
                            b.swap(i * 16 + k, j * 16 + k);
                        }
                    }
                    1 => {
                        let e = b[i * 16..i * 16 + 16].to_vec();
                        b.extend(e);
                    }
                    _ => {
                        let field = rng.random_range(8..16);
                        b[i * 16 + field] = rng.random();
                    }
                }
            }
        }
        b
    } else {
        mutate(
            rng,
            seeds,
            &[&[0; 16], &[0xff; 8], b"<html>", b"version https://git-lfs"],
            16 << 10,
        )
    }
}

/// Positions to probe: the start, and those reached by the book's own moves (a few plies).
fn probe_walk(book: &Book) -> usize {
    let mut frontier = vec![Chess::default()];
    let mut probed = 0;
    for _ in 0..3 {
        let mut next = Vec::new();
        for pos in frontier.iter().take(40) {
            let probe = book.probe(pos);
            probed += 1;
            for m in probe.legal {
                let mut child = pos.clone();
                child.play_unchecked(m.mv);
                next.push(child);
            }
        }
        frontier = next;
    }
    probed
}

/// Mutated real books: opening, probing, `info`, `lines`, `verify` and `merge` never panic, their
/// errors are one line, and whatever `merge` writes passes `verify`.
#[test]
fn book_reader() {
    let seeds = book_seeds();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.bin");
    let merged = dir.path().join("merged.bin");
    fuzz(
        "book_reader",
        1500,
        Duration::from_secs(60),
        |rng| mutate_book(rng, &seeds),
        |input| {
            std::fs::write(&path, input).unwrap();
            match polybook::inspect::verify(&path, 20) {
                Ok(report) => {
                    for p in &report.problems {
                        assert_one_line(&p.to_string());
                    }
                }
                Err(e) => assert_one_line(&e.to_string()),
            }
            let book = match Book::open(&path) {
                Ok(book) => book,
                Err(e) => return assert_one_line(&e.to_string()),
            };
            probe_walk(&book);
            polybook::inspect::book_info(&book);
            for color in [Color::White, Color::Black] {
                polybook::inspect::write_lines(&book, "in.bin", color, &mut std::io::sink())
                    .unwrap();
            }
            let _ = std::fs::remove_file(&merged);
            match polybook::builder::merge_books(&[book], &merged) {
                Ok(_) => {
                    let report = polybook::inspect::verify(&merged, 20).unwrap();
                    assert!(
                        report.is_ok(),
                        "merge wrote a book verify rejects: {:?}",
                        report.problems.first().map(|p| p.to_string())
                    );
                }
                Err(e) => assert_one_line(&e.to_string()),
            }
        },
    );
}

// ---- FEN and EPD --------------------------------------------------------------------------------

const FEN_TOKENS: &[&[u8]] = &[
    b"/",
    b"8",
    b"1",
    b"K",
    b"k",
    b"Q",
    b"q",
    b"P",
    b"p",
    b"N",
    b"n",
    b" w ",
    b" b ",
    b"KQkq",
    b"-",
    b" - ",
    b"e3",
    b"e6",
    b" 0 1",
    b" 99 ",
    b" bm ",
    b"; ",
    b"id \"x\"",
    b" dm 3;",
    b" ",
    b"\t",
    b"8/8/8/8/8/8/8/8",
    b"pppppppp",
    b"QQQQQQQQ",
    b"AHah",
    b" moves ",
];

fn fen_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for name in [
        "epd/wac.epd",
        "epd/perftsuite.epd",
        "epd/bratko-kopec.epd",
        "epd/KRvK1000.epd",
    ] {
        let text = std::fs::read_to_string(common::data(name)).unwrap();
        seeds.extend(text.lines().take(60).map(|l| l.as_bytes().to_vec()));
    }
    for line in std::fs::read_to_string(common::data("spec/polyglot_key_test_vectors.tsv"))
        .unwrap()
        .lines()
    {
        if let Some(fen) = line.split('\t').next() {
            seeds.push(fen.as_bytes().to_vec());
        }
    }
    seeds.push(b"nnnnknnn/pppppppp/8/8/8/8/PPPPPPPP/NNNNKNNN w - - 0 1".to_vec());
    seeds
}

/// Mutated real FENs and EPD lines: parsing never panics and errors are one short line; a position
/// that parses can be keyed, walked to depth 2, evaluated by a short search and played on.
#[test]
fn fen_and_epd() {
    let seeds = fen_seeds();
    fuzz(
        "fen_and_epd",
        3000,
        Duration::from_secs(60),
        |rng| mutate(rng, &seeds, FEN_TOKENS, 4 << 10),
        |input| {
            let text = String::from_utf8_lossy(input);
            if let Some(Err(e)) = parse_epd_line(&text, 1) {
                assert_one_line(&e.to_string());
            }
            let pos = match parse_fen(&text) {
                Ok(pos) => pos,
                Err(e) => return assert_one_line(&e.to_string()),
            };
            Key::of(&pos);
            perft(&pos, 2);
            let mut engine = Engine::new(SearchOptions {
                hash_mb: 1,
                ..SearchOptions::default()
            });
            let limits = Limits {
                nodes: Some(300),
                ..Limits::default()
            };
            engine.search(
                &pos,
                &[],
                &limits,
                Arc::new(AtomicBool::new(false)),
                &mut |_| {},
            );
            let moves: Vec<String> = pos
                .legal_moves()
                .iter()
                .take(3)
                .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
                .collect();
            if let Err(e) = play_moves(pos, &moves.join(" ")) {
                assert_one_line(&e.to_string());
            }
        },
    );
}

// ---- UCI ----------------------------------------------------------------------------------------

/// A random UCI session: commands a GUI sends, in any order, some mangled.
fn uci_stream(rng: &mut StdRng, fens: &[Vec<u8>], book: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.random_range(1..40) {
        let line = match rng.random_range(0..16) {
            0 => "uci".to_string(),
            1 => "isready".to_string(),
            2 => "ucinewgame".to_string(),
            3 => "position startpos".to_string(),
            4 => "position startpos moves e2e4 e7e5 g1f3 b8c6 f1b5".to_string(),
            5 => format!(
                "position fen {} moves e2e4",
                String::from_utf8_lossy(&fens[rng.random_range(0..fens.len())])
            ),
            6 => format!("go depth {}", rng.random_range(0..5)),
            7 => format!("go nodes {}", rng.random_range(0..3000)),
            8 => format!("go movetime {}", rng.random_range(0..20)),
            9 => format!(
                "go wtime {} btime {} winc 0 binc 0",
                rng.random_range(0..200),
                rng.random_range(0..200)
            ),
            10 => "go infinite".to_string(),
            11 => "stop".to_string(),
            12 => format!("setoption name Hash value {}", rng.random_range(0..32)),
            13 => format!("setoption name BookFile value {}", book.display()),
            14 => "setoption name OwnBook value true".to_string(),
            _ => format!("go mate {}", rng.random_range(0..4)),
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    if rng.random_ratio(1, 3) {
        out = mutate(
            rng,
            &[out],
            &[
                b" ",
                b"\n",
                b"go ",
                b"position ",
                b"moves ",
                b"fen ",
                b"\0",
                b"\r",
            ],
            16 << 10,
        );
    }
    out
}

/// Random UCI sessions: the loop never panics or hangs, and always ends when its input ends.
#[test]
fn uci_session() {
    let fens = fen_seeds();
    let book = common::data("books/gm2001.bin");
    fuzz(
        "uci_session",
        150,
        Duration::from_secs(60),
        |rng| uci_stream(rng, &fens, &book),
        |input| {
            let output = Shared::default();
            polybook::uci::run(std::io::Cursor::new(input.to_vec()), output.clone());
            let text = output.0.lock().unwrap();
            assert!(
                text.len() < 1 << 24,
                "the engine printed {} bytes",
                text.len()
            );
        },
    );
}

/// Output collected from the UCI loop's threads.
#[derive(Clone, Default)]
struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// ---- tallies ------------------------------------------------------------------------------------

/// The real tallies the mutations start from, made once by `polybook tally` from bundled games
/// (each with the unmutated file, for the runs that sum a mutated tally with a sound one).
struct TallySeeds {
    _dir: tempfile::TempDir,
    files: Vec<(PathBuf, Vec<u8>)>,
}

fn tally_seeds() -> &'static TallySeeds {
    static SEEDS: std::sync::OnceLock<TallySeeds> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let tcec = common::data("pgn/tcec/TCEC_Match_1.pgn.xz");
        let magnus = common::data("pgn/lichess_magnus_2018-2022.pgn.xz");
        let mut files = Vec::new();
        for (name, input, options) in [
            // A few hundred rows, and with the ratings' columns.
            ("small", &tcec, &["--max-ply", "12"][..]),
            ("rated", &magnus, &["--max-ply", "4", "--ratings"]),
            // Two row groups (a position can straddle them).
            ("groups", &magnus, &["--max-ply", "18"]),
        ] {
            let path = dir.path().join(format!("{name}.parquet"));
            let out = std::process::Command::new(common::BIN)
                .args(["tally", "-q", "-o"])
                .arg(&path)
                .arg(input)
                .args(options)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let bytes = std::fs::read(&path).unwrap();
            files.push((path, bytes));
        }
        // No rows at all (`tally` refuses input without games; the writer does not).
        let path = dir.path().join("empty.parquet");
        let meta = polybook::tally::TallyMeta {
            options: "--max-ply 1024".into(),
            ..Default::default()
        };
        let writer = polybook::tally::TallyWriter::create(&path).unwrap();
        writer.finish(&meta, false).unwrap();
        files.insert(2, (path.clone(), std::fs::read(&path).unwrap()));
        TallySeeds { _dir: dir, files }
    })
}

/// Where a Parquet file's footer (its metadata: schema, row groups, key-value pairs) lies.
fn parquet_footer(bytes: &[u8]) -> std::ops::Range<usize> {
    let n = bytes.len();
    if n < 12 || &bytes[n - 4..] != b"PAR1" {
        return 0..0;
    }
    let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    n.saturating_sub(8 + len).max(4)..n - 8
}

/// The schema's column names, in pairs of the same length (swapped: the columns trade places).
const TALLY_NAMES: &[(&[u8], &[u8])] = &[
    (b"games", b"draws"),
    (b"wins", b"move"),
    (b"first", b"black"),
    (b"games", b"first"),
    (b"losses", b"lossez"),
    (b"key", b"kez"),
    (b"polybook.tally", b"polybook.tallx"),
    (b"rated_games", b"rated_gamez"),
    (b"last_date", b"last_datf"),
];

/// A mutation of a real tally: bit flips (half of them in the footer, where the schema, the row
/// counts and the offsets are), bytes set to values that Parquet's varints and lengths make
/// much of, the file's own bytes spliced elsewhere, truncations, zeroed runs, and the schema's
/// column names swapped or changed.
fn mutate_tally(rng: &mut StdRng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    let footer = parquet_footer(&b);
    for _ in 0..rng.random_range(1..=3) {
        if b.is_empty() {
            break;
        }
        let n = b.len();
        let at = |rng: &mut StdRng| {
            if footer.end <= n && !footer.is_empty() && rng.random_bool(0.35) {
                rng.random_range(footer.clone())
            } else {
                rng.random_range(0..n)
            }
        };
        match rng.random_range(0..13) {
            0..=2 => {
                for _ in 0..rng.random_range(1..=3) {
                    let i = at(rng);
                    b[i] ^= 1 << rng.random_range(0..8);
                }
            }
            3 => {
                let i = at(rng);
                b[i] = [0, 0xff, 0x7f, 0x80, 0x01, 0x15, 0x19, 0x1c][rng.random_range(0..8)];
            }
            4 => {
                // Varint continuation bytes: lengths and counts that go on and on.
                let i = at(rng);
                let end = (i + rng.random_range(1..24)).min(n);
                let fill = [0xff, 0x80][rng.random_range(0..2)];
                b[i..end].fill(fill);
            }
            5 => {
                // The file's own bytes over another place.
                let from = rng.random_range(0..n);
                let len = rng.random_range(1..=256).min(n - from);
                let piece = b[from..from + len].to_vec();
                let to = at(rng);
                let end = (to + len).min(n);
                b[to..end].copy_from_slice(&piece[..end - to]);
            }
            6 => {
                // ... or put in between.
                let from = rng.random_range(0..n);
                let len = rng.random_range(1..=256).min(n - from);
                let piece = b[from..from + len].to_vec();
                let to = at(rng);
                b.splice(to..to, piece);
            }
            7 => {
                let cut = at(rng);
                if rng.random_bool(0.5) {
                    b.truncate(cut);
                } else {
                    b.drain(cut..(cut + rng.random_range(1..512)).min(n));
                }
            }
            8 => {
                let i = at(rng);
                let end = (i + rng.random_range(1..128)).min(n);
                b[i..end].fill(0);
            }
            9 => {
                // The footer's length, or the magic.
                let i = n - rng.random_range(1..=8.min(n));
                b[i] = rng.random();
            }
            10 if footer.end == n - 8 && b[n - 9] == 0 => {
                // A field of the footer's own (an id no reader knows) before its stop byte: a
                // list, set or map that claims up to 2^31 - 1 booleans (or bytes) in a few bytes.
                let mut field = vec![[0x09, 0x0a, 0x0b][rng.random_range(0..3)], 0xc8, 0x01];
                let count = [0xff, 0xff, 0xff, 0xff, 0x07];
                let elements = [0x01, 0x02, 0x03][rng.random_range(0..3)];
                if field[0] == 0x0b {
                    field.extend(count);
                    field.push(elements << 4 | elements);
                } else {
                    field.push(0xf0 | elements);
                    field.extend(count);
                }
                b.splice(n - 9..n - 9, field.iter().copied());
                let len = (b.len() - 8 - footer.start) as u32;
                let at = b.len() - 8;
                b[at..at + 4].copy_from_slice(&len.to_le_bytes());
            }
            _ => {
                let (x, y) = TALLY_NAMES[rng.random_range(0..TALLY_NAMES.len())];
                let swap = rng.random_bool(0.5);
                let region = footer.start.min(n)..footer.end.min(n);
                let mut i = region.start;
                while i + x.len() <= region.end {
                    if &b[i..i + x.len()] == x {
                        b[i..i + x.len()].copy_from_slice(y);
                        i += x.len();
                    } else if swap && &b[i..i + y.len()] == y {
                        b[i..i + y.len()].copy_from_slice(x);
                        i += y.len();
                    } else {
                        i += 1;
                    }
                }
            }
        }
    }
    b
}

/// How long one command may take on a mutated tally (the sound ones take milliseconds).
const TALLY_RUN_LIMIT: Duration = Duration::from_secs(10);

/// Runs `polybook ARGS` with stdout and stderr to files, killed after [`TALLY_RUN_LIMIT`]; checks
/// that it exits 0 or 1 (no panic, no abort, no signal), that a failure is one line naming
/// `bad` (the mutated file's name), and that it did not hang. Returns whether it succeeded.
fn tally_command(dir: &Path, args: &[&std::ffi::OsStr], bad: &str) -> bool {
    let command: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
    let command = command[..2].join(" ");
    let ran = run_in(dir, args, TALLY_RUN_LIMIT, &[]);
    let stderr = ran.stderr;
    let said = said(&stderr);
    match ran.code {
        Some(0) => {
            assert!(
                stderr.lines().count() <= 1,
                "polybook {command} succeeds, saying: {said}"
            );
            true
        }
        Some(1) => {
            assert!(
                stderr.lines().count() == 1 && !stderr.contains("panicked"),
                "polybook {command} fails with several lines: {said}"
            );
            assert!(
                stderr.contains(bad),
                "polybook {command} fails without naming {bad}: {said}"
            );
            assert_one_line(stderr.trim_end());
            false
        }
        code => panic!(
            "polybook {command} ends with {code:?} ({}): {said}",
            ran.status
        ),
    }
}

/// Mutated real tallies (bit flips, splices of their own bytes, truncations, footer and schema
/// damage, zeroed runs; with no rows, one row group or two): `book` (one tally, and two summed),
/// `tally --merge` and `probe` (the lookup `explore --tally` also uses) never panic, abort or
/// hang; they exit 0 or 1, and a failure is one line that names the mutated file.
#[test]
fn tally_reader() {
    let seeds = tally_seeds();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("mutated.parquet");
    let (book, merged) = (dir.path().join("out.bin"), dir.path().join("out.parquet"));
    // Each case is a seed's number (a byte), then the mutated file.
    fuzz(
        "tally_reader",
        200,
        Duration::from_secs(120),
        |rng| {
            // The file of two row groups is the slowest to run: a case in eight.
            let seed = if rng.random_ratio(1, 8) {
                seeds.files.len() - 1
            } else {
                rng.random_range(0..seeds.files.len() - 1)
            };
            let mut input = vec![seed as u8];
            input.extend(mutate_tally(rng, &seeds.files[seed].1));
            input
        },
        |input| {
            let (seed, bytes) = input.split_first().unwrap();
            let sound = seeds.files[usize::from(*seed)].0.as_os_str();
            std::fs::write(&bad, bytes).unwrap();
            let name = "mutated.parquet";
            let b = bad.as_os_str();
            let (book, merged) = (book.as_os_str(), merged.as_os_str());
            let run = |args: &[&str], files: &[&std::ffi::OsStr]| {
                let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
                all.extend_from_slice(files);
                tally_command(dir.path(), &all, name)
            };
            // One tally: its row groups made into entries on several threads.
            run(&["book", "-q", "-o"], &[book, b]);
            // Two: the k-way merge, also that of `tally --merge`.
            run(&["book", "-q", "-o"], &[book, sound, b]);
            run(&["tally", "--merge", "-q", "-o"], &[merged, b]);
            run(&["tally", "--merge", "-q", "-o"], &[merged, b, sound]);
            // Lookups by key: the start position, and one a few moves in.
            if run(&["probe", "--json"], &[b]) {
                run(&["probe", "--moves", "e2e4 c7c5 g1f3", "--no-board"], &[b]);
            }
        },
    );
}

// ---- the commands that read books and PGN and write books or text --------------------------------

/// How long one command may take on a mutated book or PGN (the sound ones take milliseconds).
const COMMAND_LIMIT: Duration = Duration::from_secs(20);

/// What a run of the binary did: its exit status and code (`None`: a signal), stdout and stderr.
struct Ran {
    status: std::process::ExitStatus,
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `polybook ARGS` in `dir` (stdin empty; stdout and stderr to files there, which it then
/// removes), killed after `limit`: a hang fails the case.
fn run_in<S: AsRef<std::ffi::OsStr>>(
    dir: &Path,
    args: &[S],
    limit: Duration,
    envs: &[(&str, &str)],
) -> Ran {
    let (out, err) = (dir.join(".stdout"), dir.join(".stderr"));
    let mut child = std::process::Command::new(common::BIN)
        .args(args)
        .current_dir(dir)
        .envs(envs.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "polybook {} hangs (no end in {limit:?})",
                args[0].as_ref().to_string_lossy()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let ran = Ran {
        status,
        code: status.code(),
        stdout: std::fs::read(&out).unwrap(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err).unwrap()).into_owned(),
    };
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&err);
    ran
}

/// A panic's place and message, or the first lines of `stderr`, short.
fn said(stderr: &str) -> String {
    match stderr.split_once("panicked at ") {
        Some((_, rest)) => {
            let mut lines = rest.lines();
            let place = lines.next().unwrap_or("");
            let place = place.rsplit('/').next().unwrap_or(place);
            format!("panic at {place} {}", lines.next().unwrap_or(""))
        }
        None => stderr.lines().take(2).collect::<Vec<_>>().join(" / "),
    }
    .chars()
    .take(200)
    .collect()
}

/// The tiny scored book (`polybook analyse` of a small book at 100 nodes a position, with the
/// mark of a scored book first), made once per run.
fn scored_seed() -> &'static Vec<u8> {
    static SEED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SEED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("scored.bin");
        let ran = std::process::Command::new(common::BIN)
            .args(["analyse", "-q", "--nodes", "100", "-o"])
            .arg(&out)
            .arg(common::data("books/rodent3_guide.bin"))
            .output()
            .unwrap();
        assert!(ran.status.success(), "{}", common::text(&ran.stderr));
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(
            bytes[..16],
            polybook::book::SCORED_MARK.to_bytes(),
            "a scored book starts with the mark"
        );
        bytes
    })
}

/// [`mutate_book`], and now and then more of the damage books are found with: a run of entries
/// zeroed, an impossible move code (a square to itself, an unknown promotion), keys out of order.
fn mutate_book_more(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    if rng.random_ratio(1, 8) {
        return seeds[rng.random_range(0..seeds.len())].clone();
    }
    let mut b = mutate_book(rng, seeds);
    let n = b.len() / 16;
    if n >= 2 && rng.random_ratio(1, 3) {
        let i = rng.random_range(0..n);
        match rng.random_range(0..3) {
            0 => {
                let end = (i + rng.random_range(1..8)).min(n);
                b[i * 16..end * 16].fill(0);
            }
            1 => {
                let sq = rng.random_range(0..64u16);
                let code = if rng.random_bool(0.5) {
                    sq << 6 | sq
                } else {
                    rng.random_range(5..8u16) << 12 | rng.random::<u16>() & 0xfff
                };
                b[i * 16 + 8..i * 16 + 10].copy_from_slice(&code.to_be_bytes());
            }
            _ => {
                let j = rng.random_range(0..n);
                b[i * 16..i * 16 + 8].copy_from_slice(&rng.random::<u64>().to_be_bytes());
                b.swap(i * 16, j * 16);
            }
        }
    }
    b
}

/// A case of [`book_commands`]: the command's number, a choice of its options, and its two
/// input files (a book, and a PGN or a second book).
fn encode_case(command: u8, variant: u8, a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![command, variant];
    out.extend((a.len() as u32).to_le_bytes());
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out
}

fn decode_case(input: &[u8]) -> (u8, u8, &[u8], &[u8]) {
    let len = u32::from_le_bytes(input[2..6].try_into().unwrap()) as usize;
    (input[0], input[1], &input[6..6 + len], &input[6 + len..])
}

const BOOK_COMMANDS: &[&str] = &[
    "learn", "edit", "filter", "export", "sort", "merge", "verify", "dump",
];

/// Mutated real books (and the tiny scored one) and PGN given to the commands that read them and
/// write books or text: `learn`, `edit`, `filter`, `export`, `sort`, `merge`, `verify`, `dump`.
/// Each exits 0 or 1 (no panic, abort, signal or hang); on 0 a book written passes `verify` and
/// text written is UTF-8; on 1 it says one short line and leaves no output file (a book changed
/// in place is as it was) and no temporary file behind.
#[test]
fn book_commands() {
    let mut books = book_seeds();
    books.push(scored_seed().clone());
    books.push(scored_seed().clone());
    let pgns = pgn_seeds();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fuzz(
        "book_commands",
        500,
        Duration::from_secs(120),
        |rng| {
            let command = rng.random_range(0..BOOK_COMMANDS.len() as u8);
            let a = mutate_book_more(rng, &books);
            let b = match BOOK_COMMANDS[usize::from(command)] {
                "learn" if rng.random_ratio(1, 6) => pgns[rng.random_range(0..pgns.len())].clone(),
                "learn" => mutate(rng, &pgns, PGN_TOKENS, 32 << 10),
                "merge" => mutate_book_more(rng, &books),
                _ => Vec::new(),
            };
            encode_case(command, rng.random(), &a, &b)
        },
        |input| {
            let (command, variant, a, b) = decode_case(input);
            let command = BOOK_COMMANDS[usize::from(command)];
            for entry in std::fs::read_dir(d).unwrap() {
                std::fs::remove_file(entry.unwrap().path()).unwrap();
            }
            std::fs::write(d.join("a.bin"), a).unwrap();
            let second = if command == "learn" { "b.pgn" } else { "b.bin" };
            if !b.is_empty() || command == "learn" {
                std::fs::write(d.join(second), b).unwrap();
            }
            let pick = |options: &[&[&str]]| -> Vec<String> {
                options[usize::from(variant) % options.len()]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            };
            // The arguments; the book written (and whether over a.bin); the text file written.
            let in_place = variant & 0x80 != 0;
            let out_or_in_place = |args: &mut Vec<String>| {
                if !in_place {
                    args.extend(["-o".into(), "out.bin".into()]);
                }
            };
            let (mut args, book_out, text_out): (Vec<String>, Option<&str>, Option<&str>) =
                match command {
                    "learn" => {
                        let mut args = pick(&[
                            &[],
                            &["--color", "white"],
                            &["--player", "Carlsen"],
                            &["--json"],
                        ]);
                        args.extend(["a.bin".into(), "b.pgn".into()]);
                        out_or_in_place(&mut args);
                        (args, Some(if in_place { "a.bin" } else { "out.bin" }), None)
                    }
                    "edit" => {
                        let mut args = pick(&[
                            &["--add", "e2e4=7"],
                            &["--set", "e2e4=10"],
                            &["--remove", "d2d4"],
                            &["--moves", "e4 e5", "--add", "g1f3=3"],
                            &["--moves", "e4", "--set", "c7c5=0", "--json"],
                            &[
                                "--fen",
                                "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
                                "--add",
                                "e2e4=1",
                            ],
                        ]);
                        args.push("a.bin".into());
                        out_or_in_place(&mut args);
                        (args, Some(if in_place { "a.bin" } else { "out.bin" }), None)
                    }
                    "filter" => {
                        let mut args = pick(&[
                            &["--max-ply", "6"],
                            &["--max-loss", "50"],
                            &["--max-loss", "0", "--learn", "prodeo"],
                            &["--min-share", "10", "--reachable"],
                            &["--only-white", "--min-weight", "2"],
                            &["--only-black", "--json"],
                        ]);
                        args.push("a.bin".into());
                        let out = if in_place { "a.bin" } else { "out.bin" };
                        args.extend(["-o".into(), out.into()]);
                        (args, Some(out), None)
                    }
                    "export" => {
                        let (mut args, to_file) = match variant % 5 {
                            0 => (pick(&[&["--pgn"]]), false),
                            1 => (vec!["--pgn".into(), "--max-ply".into(), "8".into()], true),
                            2 => (vec!["--epd".into(), "--ply".into(), "4".into()], true),
                            3 => (vec!["--epd".into(), "--ply".into(), "2".into()], false),
                            _ => (
                                ["--pgn", "--ply", "3", "--min-eval", "-50", "--json"]
                                    .map(String::from)
                                    .to_vec(),
                                true,
                            ),
                        };
                        args.push("a.bin".into());
                        if to_file {
                            args.extend(["-o".into(), "out.txt".into()]);
                        }
                        (args, None, to_file.then_some("out.txt"))
                    }
                    "sort" => (
                        ["a.bin", "-o", "out.bin"].map(String::from).to_vec(),
                        Some("out.bin"),
                        None,
                    ),
                    "merge" => {
                        let mut args: Vec<String> = ["a.bin", "b.bin", "-o", "out.bin"]
                            .map(String::from)
                            .to_vec();
                        if b.is_empty() {
                            args[1] = "a.bin".into();
                        }
                        (args, Some("out.bin"), None)
                    }
                    "verify" => (vec!["a.bin".into()], None, None),
                    _ => {
                        let mut args =
                            pick(&[&[], &["--json"], &["--csv"], &["--learn", "prodeo"]]);
                        args.push("a.bin".into());
                        (args, None, None)
                    }
                };
            args.insert(0, command.into());
            let ran = run_in(d, &args, COMMAND_LIMIT, &[]);
            let line = args.join(" ");
            let told = said(&ran.stderr);
            assert!(
                !ran.stderr.contains("panicked"),
                "polybook {command} panics: {told}"
            );
            // What is in the folder now, less the inputs.
            let mut left: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != "a.bin" && n != second)
                .collect();
            left.sort();
            match ran.code {
                Some(0) => {
                    assert!(
                        ran.stderr.lines().count() <= 20 && ran.stderr.len() <= 4000,
                        "polybook {line} succeeds, saying much: {told}"
                    );
                    if command != "dump" && command != "export" {
                        assert!(
                            ran.stdout.len() <= 1 << 20,
                            "polybook {line} prints {} bytes",
                            ran.stdout.len()
                        );
                    }
                    assert!(
                        std::str::from_utf8(&ran.stdout).is_ok(),
                        "polybook {line} prints what is not UTF-8"
                    );
                    if let Some(text) = text_out {
                        let written = std::fs::read(d.join(text));
                        assert!(
                            written
                                .as_deref()
                                .is_ok_and(|t| std::str::from_utf8(t).is_ok()),
                            "polybook {line} writes no UTF-8 {text}"
                        );
                    }
                    if let Some(book) = book_out {
                        let check = run_in(d, &["verify", book], COMMAND_LIMIT, &[]);
                        assert!(
                            check.code == Some(0),
                            "polybook {command} writes a book verify rejects: {}",
                            said_short(&check)
                        );
                    }
                    let expected: Vec<&str> = [book_out, text_out]
                        .into_iter()
                        .flatten()
                        .filter(|n| *n != "a.bin")
                        .collect();
                    assert!(
                        left.iter().all(|n| expected.contains(&n.as_str())),
                        "polybook {line} leaves {left:?} behind"
                    );
                }
                Some(1) => {
                    // One error line; before it, at most the warnings of a book read in spite
                    // of its order (and of a PGN's bad games: at most ten and a count).
                    let lines: Vec<&str> = ran.stderr.lines().collect();
                    let (error, warnings) = lines.split_last().unwrap_or((&"", &[]));
                    assert!(
                        error.starts_with("polybook: error: ")
                            && warnings.len() <= 12
                            && warnings
                                .iter()
                                .all(|w| w.starts_with("polybook: warning: ")),
                        "polybook {command} fails with {} lines: {told}",
                        lines.len()
                    );
                    for line in &lines {
                        assert_one_line(line);
                    }
                    assert!(
                        left.is_empty(),
                        "polybook {command} fails and leaves {left:?} behind"
                    );
                    assert!(
                        std::fs::read(d.join("a.bin")).unwrap() == a,
                        "polybook {command} fails and changes its book"
                    );
                }
                code => panic!("polybook {command} ends with {code:?}: {told}"),
            }
        },
    );
}

/// What `verify` said, short.
fn said_short(ran: &Ran) -> String {
    let out = String::from_utf8_lossy(&ran.stdout);
    out.lines()
        .chain(ran.stderr.lines())
        .take(2)
        .collect::<Vec<_>>()
        .join(" / ")
        .chars()
        .take(200)
        .collect()
}

// ---- matches with misbehaving engines -----------------------------------------------------------

/// A UCI engine that misbehaves: `bad.py MODE N POLYBOOK` plays as `POLYBOOK uci` (which it runs
/// and speaks through) until its N-th `go` or `isready`, then does what MODE says.
const BAD_ENGINE: &str = r#"import os, random, signal, subprocess, sys, threading, time
mode, n, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(n * 7919 + len(mode))
out = sys.stdout.buffer
lock = threading.Lock()
state = {"go": 0, "ready": 0, "mute": False}
def say(b):
    with lock:
        out.write(b)
        out.flush()
def hang():
    while True:
        time.sleep(3600)
def garbage():
    if rng.random() < 0.5:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) + b"\n"
    return rng.choice([b"bestmove", b"info score cp", b"info depth x score mate", b"uciok uciok",
                       b"id name \xff\xfe", b"option name", b"readyok?", b"\r\r\r", b""]) + b"\n"
BAD_MOVES = [b"a1a1", b"0000", b"(none)", b"", b"e2e5", b"Nf3", b"E2E4", b"e7e8k", b"e2e4e5",
             b"\x00\x01", b"h9h1"]
if mode == "crash_start":
    sys.exit(1)
if mode == "kill_start":
    os.kill(os.getpid(), signal.SIGKILL)
child = subprocess.Popen([engine, "uci"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def pump():
    for line in child.stdout:
        if state["mute"]:
            continue
        if mode == "garbage" and rng.random() < 0.3:
            say(garbage())
        if mode == "no_uciok" and line.startswith(b"uciok"):
            continue
        if mode == "no_readyok" and line.startswith(b"readyok") and state["ready"] > n:
            continue
        if mode == "illegal" and line.startswith(b"bestmove") and state["go"] >= n:
            line = b"bestmove " + rng.choice(BAD_MOVES) + b"\n"
        say(line)
threading.Thread(target=pump, daemon=True).start()
for line in sys.stdin.buffer:
    words = line.split()
    cmd = words[0] if words else b""
    if cmd == b"isready":
        state["ready"] += 1
        if mode == "early_bestmove" and state["ready"] >= n:
            say(b"bestmove e2e4\n")
    if cmd == b"quit" and mode == "ignore_quit":
        hang()
    if cmd == b"go":
        state["go"] += 1
        if state["go"] >= n:
            if mode == "crash_after":
                if n % 2:
                    os._exit(1)
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "no_bestmove":
                state["mute"] = True
                hang()
            if mode == "flood":
                state["mute"] = True
                while True:
                    say(b"info depth 1 score cp 0 nodes 1 pv e2e4\n" * 500)
            if mode == "noeol":
                state["mute"] = True
                while True:
                    say(b"info string " + b"x" * 65536)
            if mode == "close_stdout":
                state["mute"] = True
                with lock:
                    os.close(1)
                hang()
            if mode == "chatty":
                say(b"info string hello\n" * 20000)
    child.stdin.write(line)
    child.stdin.flush()
"#;

/// Engines as shell scripts: one that never answers, one that speaks binary, one that closes its
/// output and keeps running, and a sound one behind a wrapper that runs it as its child.
const SHELL_ENGINES: &[(&str, &str)] = &[
    ("hang.sh", "#!/bin/bash\nsleep 600\n"),
    (
        "binary.sh",
        "#!/bin/bash\nhead -c 300000 /dev/urandom\nsleep 600\n",
    ),
    ("closed.sh", "#!/bin/bash\nexec >&-\nsleep 600\n"),
    ("wrap.sh", "#!/bin/bash\n\"$1\" uci\n"),
];

/// The misbehaviours of [`BAD_ENGINE`], and whether each can leave a `go` without an answer (then
/// the match needs a clock or a move time: under `--nodes` it waits long for a move).
const BAD_MODES: &[(&str, bool)] = &[
    ("crash_start", false),
    ("kill_start", false),
    ("crash_after", false),
    ("no_uciok", false),
    ("no_readyok", false),
    ("garbage", false),
    ("illegal", false),
    ("early_bestmove", false),
    ("ignore_quit", false),
    ("chatty", false),
    ("close_stdout", false),
    ("no_bestmove", true),
    ("flood", true),
    ("noeol", true),
];

/// A match or tournament at `--concurrency 2` of misbehaving engines and `builtin`: the command
/// line, one argument a line, `{dir}` for the folder of the engines and `{bin}` for polybook.
fn bad_match(rng: &mut StdRng) -> Vec<u8> {
    let engines = if rng.random_ratio(1, 3) { 3 } else { 2 };
    let mut args: Vec<String> = vec!["match".into()];
    let mut clock_needed = false;
    let bad_one = rng.random_range(0..engines);
    for i in 0..engines {
        let spec = if i != bad_one && rng.random_bool(0.5) {
            format!("good{i}=builtin:Hash=4")
        } else if rng.random_ratio(1, 5) {
            let (name, _) = SHELL_ENGINES[rng.random_range(0..SHELL_ENGINES.len())];
            if name == "wrap.sh" {
                format!("good{i}=cmd:{{dir}}/{name} {{bin}}")
            } else {
                format!("bad{i}=cmd:{{dir}}/{name}")
            }
        } else {
            let (mode, hangs) = BAD_MODES[rng.random_range(0..BAD_MODES.len())];
            clock_needed |= hangs;
            let n = rng.random_range(1..12);
            format!("bad{i}=cmd:python3 {{dir}}/bad.py {mode} {n} {{bin}}")
        };
        args.extend(["--engine".into(), spec]);
    }
    if engines == 3 && rng.random_bool(0.5) {
        args.extend(["--tournament".into(), "round-robin".into()]);
    } else if engines == 3 && rng.random_bool(0.3) {
        args.extend(["--tournament".into(), "gauntlet".into()]);
    }
    let limit: &[&str] = match rng.random_range(0..3) {
        0 if !clock_needed => &["--nodes", "200"],
        1 => &["--movetime", "50"],
        _ => &["--tc", "0.5+0.01"],
    };
    args.extend(limit.iter().map(|s| s.to_string()));
    let games = if engines == 3 {
        2
    } else {
        rng.random_range(2..=4)
    };
    args.extend(["--games".into(), games.to_string()]);
    args.extend(["--concurrency".into(), "2".into()]);
    match rng.random_range(0..3) {
        0 => args.extend(["--book".into(), "{books}/gm2001.bin".into()]),
        1 => args.extend(["--book".into(), "{dir}/scored.bin".into()]),
        _ => {}
    }
    if rng.random_bool(0.5) {
        args.extend(["--book-plies".into(), rng.random_range(1..12).to_string()]);
    }
    if rng.random_bool(0.5) {
        args.extend(["--handshake-timeout".into(), "2".into()]);
    }
    if rng.random_bool(0.5) {
        args.extend(["--draw".into(), "movenumber=30,score=20,moves=6".into()]);
    }
    if rng.random_bool(0.5) {
        args.push("-q".into());
    }
    args.extend(["--seed".into(), rng.random_range(0..1000).to_string()]);
    args.extend(["--pgn".into(), "games.pgn".into()]);
    args.join("\n").into_bytes()
}

/// How long one match may take (its engines' own timeouts must end it well before).
const MATCH_LIMIT: Duration = Duration::from_secs(40);

/// The processes (not zombies) whose environment holds `marker`: what a run left behind.
fn processes_marked(marker: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let needle = marker.as_bytes();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !env.split(|&b| b == 0).any(|v| v == needle) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|c| stat[c + 1..].split_whitespace().next());
        if state == Some("Z") {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, cmdline.chars().take(120).collect()));
    }
    found
}

/// `polybook match` (or a tournament) at `--concurrency 2` where engines crash at the start or
/// mid-game, hang (no `uciok`, `readyok` or `bestmove`), speak garbage or binary, claim illegal
/// moves, answer before `go`, flood their output, close it and keep running, or ignore `quit`;
/// against `builtin` at tiny limits, with a book or none. The match ends in bounded time, exits 0
/// or 1, says little, writes a PGN python-chess reads whose forfeits are scored against the side
/// that failed, and leaves no engine process running.
#[test]
fn bad_engines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let engines = d.join("engines");
    std::fs::create_dir(&engines).unwrap();
    std::fs::write(engines.join("bad.py"), BAD_ENGINE).unwrap();
    for (name, text) in SHELL_ENGINES {
        let path = engines.join(name);
        std::fs::write(&path, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(engines.join("scored.bin"), scored_seed()).unwrap();
    let work = d.join("work");
    std::fs::create_dir(&work).unwrap();
    let check_pgn = common::root().join("tests/match_check.py");
    let python = common::python_chess();
    let books = common::data("books");
    let case_number = std::sync::atomic::AtomicU64::new(0);
    fuzz(
        "bad_engines",
        6,
        Duration::from_secs(120),
        bad_match,
        |input| {
            let text = String::from_utf8_lossy(input);
            let args: Vec<String> = text
                .lines()
                .map(|a| {
                    a.replace("{dir}", &engines.to_string_lossy())
                        .replace("{bin}", common::BIN)
                        .replace("{books}", &books.to_string_lossy())
                })
                .collect();
            let _ = std::fs::remove_file(work.join("games.pgn"));
            let marker = format!(
                "POLYBOOK_FUZZ_ENGINE={}-{}",
                std::process::id(),
                case_number.fetch_add(1, Ordering::Relaxed)
            );
            let (key, value) = marker.split_once('=').unwrap();
            let started = Instant::now();
            let ran = run_in(&work, &args, MATCH_LIMIT, &[(key, value)]);
            let took = started.elapsed();
            // Whatever the outcome, no engine outlives the match (a moment to be reaped).
            let mut left = processes_marked(&marker);
            for _ in 0..50 {
                if left.is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(40));
                left = processes_marked(&marker);
            }
            for (pid, _) in &left {
                // SAFETY: kill(2) on processes this case started (they carry its marker).
                unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
            }
            let told = said(&ran.stderr);
            assert!(
                left.is_empty(),
                "polybook match leaves engines running: {:?}",
                left.iter().map(|l| &l.1).collect::<Vec<_>>()
            );
            assert!(
                !ran.stderr.contains("panicked"),
                "polybook match panics: {told}"
            );
            assert!(
                matches!(ran.code, Some(0 | 1)),
                "polybook match ends with {:?} after {took:?}: {told}",
                ran.code
            );
            let lines: Vec<&str> = ran.stderr.lines().collect();
            assert!(
                lines.len() <= 100 && lines.iter().all(|l| l.chars().count() <= 400),
                "polybook match says too much: {} lines, the longest {} characters",
                lines.len(),
                lines.iter().map(|l| l.chars().count()).max().unwrap_or(0)
            );
            assert!(
                ran.stdout.len() <= 20_000,
                "polybook match prints {} bytes",
                ran.stdout.len()
            );
            if ran.code == Some(1) {
                assert_one_line(lines.last().unwrap_or(&""));
            }
            let pgn = work.join("games.pgn");
            if std::fs::metadata(&pgn).is_ok_and(|m| m.len() > 0) {
                let out = std::process::Command::new(python)
                    .arg(&check_pgn)
                    .arg(&pgn)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "python-chess can't read the match's PGN: {}",
                    said(&common::text(&out.stderr))
                );
                for game in common::text(&out.stdout).lines() {
                    let g: serde_json::Value = serde_json::from_str(game).unwrap();
                    let term = g["termination"].as_str().unwrap_or("");
                    assert!(
                        g["errors"].as_array().is_some_and(|e| e.is_empty()),
                        "a game of the PGN has errors: {g}"
                    );
                    assert!(!term.is_empty(), "a game without a Termination tag: {g}");
                    assert!(
                        g["consistent"] == true,
                        "a game's result does not follow from its end: {g}"
                    );
                    // A forfeit for a crash or an illegal move is never the sound engine's.
                    if term == "abandoned" || term == "illegal move" {
                        let loser = if g["result"] == "1-0" {
                            &g["black"]
                        } else {
                            &g["white"]
                        };
                        assert!(
                            loser.as_str().is_some_and(|l| l.starts_with("bad")),
                            "a sound engine loses by {term}: {g}"
                        );
                    }
                }
            }
        },
    );
}

// ---- the explore server -------------------------------------------------------------------------

/// The limits of the server under fuzzing: the defaults, with deadlines short enough that a case
/// can outwait them and a cap that a burst of connections passes.
fn fuzz_limits() -> polybook::explore::Limits {
    polybook::explore::Limits {
        connections: 32,
        head_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(1),
        write_timeout: Duration::from_secs(2),
        ..polybook::explore::Limits::default()
    }
}

/// What `explore` serves in the fuzzing: the GNU Chess book and a small tally.
fn fuzz_explorer() -> polybook::explore::Explorer {
    let book = common::gnuchess_book();
    let mut books = polybook::book::Books::new();
    books.push("gnuchess.bin", Book::open(&book).unwrap());
    let tally = &tally_seeds().files[0].0;
    let lookup = polybook::tally::TallyLookup::open(&[tally.as_path()]).unwrap();
    let games = common::data("pgn/tcec/TCEC_Season_7_-_Superfinal.pgn.xz");
    let opts = polybook::repertoire::IndexOptions {
        player: polybook::repertoire::Player::new(
            &["Stockfish 141214".to_string()],
            Some("^komodo"),
        )
        .unwrap(),
        max_ply: 50,
        threads: 2,
        memory: 1 << 30,
    };
    let index = polybook::repertoire::Index::read(
        &[polybook::pgn::input::Input::File(games)],
        &opts,
        &std::sync::atomic::AtomicBool::new(false),
        &(),
    )
    .unwrap();
    polybook::explore::Explorer {
        books,
        tally: Some(("small.parquet".into(), std::sync::Mutex::new(lookup))),
        games: Some(("tcec.pgn".into(), index)),
        start: Chess::default(),
    }
}

/// The requests the page makes (and a script might), as a browser sends them, to `host`.
fn http_seeds(host: &str) -> Vec<Vec<u8>> {
    let after_e4 =
        "rnbqkbnr%2Fpppppppp%2F8%2F8%2F4P3%2F8%2FPPPP1PPP%2FRNBQKBNR%20b%20KQkq%20-%200%201";
    let browser = format!(
        "Host: {host}\r\nConnection: keep-alive\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) \
         Chrome/131.0 Safari/537.36\r\nAccept: */*\r\nSec-Fetch-Site: same-origin\r\n\
         Sec-Fetch-Mode: cors\r\nReferer: http://{host}/\r\nAccept-Encoding: gzip, deflate, br\r\n\
         Accept-Language: en-GB,en;q=0.9\r\n"
    );
    let targets = [
        "/".to_string(),
        "/explore.js".into(),
        "/explore.css".into(),
        "/favicon.svg".into(),
        "/api/books".into(),
        "/api/probe".into(),
        format!("/api/probe?fen={after_e4}"),
        format!("/api/tally?fen={after_e4}"),
        "/api/probe?moves=e4+e5+Nf3+Nc6+Bb5".into(),
        "/api/tally?moves=d4%20Nf6%20c4".into(),
        "/api/probe?fen=8%2F8%2F8%2F8%2F8%2F8%2F8%2Fk6K%20w%20-%20-%200%201&moves=Kg2".into(),
        "/api/probe?fen=%ff%fe".into(),
        "/api/games?moves=d4&color=white&speed=classical,unknown&mode=all&rating=3000-&since=2014-01&until=2025-12&result=win,draw&opponent=kom".into(),
        "/api/games?moves=e4+c5&rating=-3200&result=loss".into(),
        "/api/game?id=3&moves=e4".into(),
        "/nope".into(),
    ];
    let mut seeds: Vec<Vec<u8>> = targets
        .iter()
        .map(|t| format!("GET {t} HTTP/1.1\r\n{browser}\r\n").into_bytes())
        .collect();
    seeds.push(format!("HEAD /explore.js HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes());
    seeds.push(b"GET /api/books HTTP/1.0\r\n\r\n".to_vec());
    seeds.push(
        format!("GET /api/probe?moves=d4 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
            .into_bytes(),
    );
    seeds.push(
        format!("POST /api/probe HTTP/1.1\r\nHost: {host}\r\nContent-Length: 7\r\n\r\nmoves=e4")
            .into_bytes(),
    );
    seeds
}

const HTTP_TOKENS: &[&[u8]] = &[
    b"\r\n",
    b"\r\n\r\n",
    b"\n",
    b"\r",
    b" ",
    b"\t",
    b":",
    b"%",
    b"%2",
    b"%ff",
    b"%00",
    b"%zz",
    b"\xff\xfe",
    b"\xc3\x28",
    b"\0",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b"HTTP/2.0",
    b"HTTP/1.1\r\n\r\n",
    b"GET ",
    b"HEAD ",
    b"POST ",
    b"OPTIONS * ",
    b"CONNECT ",
    b"Content-Length: 5\r\n",
    b"Content-Length: 99999999999999999999\r\n",
    b"Content-Length: -1\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Connection: close\r\n",
    b"Connection: keep-alive\r\n",
    b"Host: evil.example\r\n",
    b"Host: ",
    b"Expect: 100-continue\r\n",
    b"?",
    b"&",
    b"=",
    b"fen=",
    b"moves=",
    b"moves=e4+e5",
    b"/api/probe?",
    b"/api/tally?",
    b"/api/books",
    b"/../",
    b"//",
    b"#",
];

/// The request bytes one step sends: a seed (or several, pipelined), mutated or not, or a head
/// over the limits, a random method, random bytes, a truncated request.
fn http_bytes(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let seed = |rng: &mut StdRng| seeds[rng.random_range(0..seeds.len())].clone();
    match rng.random_range(0..12) {
        0..=1 => seed(rng),
        2 => (0..rng.random_range(2..6))
            .flat_map(|_| seed(rng))
            .collect(),
        3..=6 => mutate(rng, seeds, HTTP_TOKENS, 64 << 10),
        7 => {
            // A header, the URL or a body over the limits (16 KiB, 8 KiB, 64 KiB), or near them.
            let mut request = seed(rng);
            let n = rng.random_range(0..40 << 10);
            let after_line = request.windows(2).position(|w| w == b"\r\n").unwrap_or(0) + 2;
            if rng.random_bool(0.3) {
                let at = after_line.min(request.len());
                let header = format!("X-Pad: {}\r\n", "a".repeat(n));
                request.splice(at..at, header.into_bytes());
            } else if rng.random_bool(0.5) {
                // A body of `length` bytes, sent whole, in part or with more after it.
                let length = rng.random_range(0..100 << 10);
                let at = after_line.min(request.len());
                let header = format!("Content-Length: {length}\r\n");
                request.splice(at..at, header.into_bytes());
                let sent = rng.random_range(0..=length + 64);
                request.extend((0..sent).map(|i| b"moves=e4&"[i % 9]));
            } else {
                let at = request.iter().position(|&b| b == b' ').unwrap_or(0) + 1;
                let path = format!("/api/probe?moves={}", "e4+e5+".repeat(n / 6));
                request.splice(at..at, path.into_bytes());
            }
            request
        }
        8 => {
            let method: String = (0..rng.random_range(1..12))
                .map(|_| rng.random_range(b'A'..=b'z') as char)
                .collect();
            let mut request = seed(rng);
            let space = request.iter().position(|&b| b == b' ').unwrap_or(0);
            request.splice(..space, method.into_bytes());
            request
        }
        9 => (0..rng.random_range(1..2048))
            .map(|_| rng.random())
            .collect(),
        _ => {
            let mut request = seed(rng);
            request.truncate(rng.random_range(0..request.len()));
            request
        }
    }
}

/// One step of a case, as the input encodes it.
enum HttpStep {
    /// Writes the bytes on connection `conn` (opened at its first use).
    Send {
        conn: u8,
        bytes: Vec<u8>,
    },
    /// Writes them `chunk` bytes at a time, `pause` ms apart.
    Trickle {
        conn: u8,
        chunk: u8,
        pause: u8,
        bytes: Vec<u8>,
    },
    /// Ends the connection's sending (the server sees the end of its input).
    Shutdown {
        conn: u8,
    },
    /// Closes the connection at once, with a reset, whatever it was doing.
    Reset {
        conn: u8,
    },
    Wait {
        ms: u16,
    },
    /// `count` new connections at once, each sending the bytes.
    Burst {
        count: u8,
        bytes: Vec<u8>,
    },
}

fn encode_steps(steps: &[HttpStep]) -> Vec<u8> {
    let mut out = Vec::new();
    let with_bytes = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    for step in steps {
        match step {
            HttpStep::Send { conn, bytes } => {
                out.extend([0, *conn]);
                with_bytes(&mut out, bytes);
            }
            HttpStep::Trickle {
                conn,
                chunk,
                pause,
                bytes,
            } => {
                out.extend([1, *conn, *chunk, *pause]);
                with_bytes(&mut out, bytes);
            }
            HttpStep::Shutdown { conn } => out.extend([2, *conn]),
            HttpStep::Reset { conn } => out.extend([3, *conn]),
            HttpStep::Wait { ms } => {
                out.push(4);
                out.extend_from_slice(&ms.to_le_bytes());
            }
            HttpStep::Burst { count, bytes } => {
                out.extend([5, *count]);
                with_bytes(&mut out, bytes);
            }
        }
    }
    out
}

fn decode_steps(mut input: &[u8]) -> Vec<HttpStep> {
    fn take<'a>(input: &mut &'a [u8], n: usize) -> &'a [u8] {
        let (head, rest) = input.split_at(n.min(input.len()));
        *input = rest;
        head
    }
    fn bytes(input: &mut &[u8]) -> Vec<u8> {
        let len = take(input, 4);
        let len = u32::from_le_bytes(len.try_into().unwrap_or([0; 4])) as usize;
        take(input, len).to_vec()
    }
    let mut steps = Vec::new();
    while let Some((&kind, rest)) = input.split_first() {
        input = rest;
        let byte = |input: &mut &[u8]| take(input, 1).first().copied().unwrap_or(0);
        steps.push(match kind {
            0 => HttpStep::Send {
                conn: byte(&mut input),
                bytes: bytes(&mut input),
            },
            1 => HttpStep::Trickle {
                conn: byte(&mut input),
                chunk: byte(&mut input),
                pause: byte(&mut input),
                bytes: bytes(&mut input),
            },
            2 => HttpStep::Shutdown {
                conn: byte(&mut input),
            },
            3 => HttpStep::Reset {
                conn: byte(&mut input),
            },
            4 => HttpStep::Wait {
                ms: u16::from_le_bytes([byte(&mut input), byte(&mut input)]),
            },
            _ => HttpStep::Burst {
                count: byte(&mut input),
                bytes: bytes(&mut input),
            },
        });
    }
    steps
}

/// A case: a few steps over up to four connections (and bursts of many).
fn http_case(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let steps: Vec<HttpStep> = (0..rng.random_range(1..=6))
        .map(|_| {
            let conn = rng.random_range(0..4);
            match rng.random_range(0..20) {
                0..=9 => HttpStep::Send {
                    conn,
                    bytes: http_bytes(rng, seeds),
                },
                10..=11 => {
                    let mut bytes = http_bytes(rng, seeds);
                    bytes.truncate(600);
                    HttpStep::Trickle {
                        conn,
                        chunk: rng.random_range(1..=64),
                        pause: rng.random_range(0..=3),
                        bytes,
                    }
                }
                12 => HttpStep::Shutdown { conn },
                13..=14 => HttpStep::Reset { conn },
                15..=16 => HttpStep::Wait {
                    // Now and then past the server's deadlines (a second).
                    ms: if rng.random_ratio(1, 40) {
                        1100
                    } else {
                        rng.random_range(0..20)
                    },
                },
                _ => HttpStep::Burst {
                    count: rng.random_range(2..=80),
                    bytes: if rng.random_bool(0.5) {
                        seeds[rng.random_range(0..seeds.len())].clone()
                    } else {
                        http_bytes(rng, seeds)
                    },
                },
            }
        })
        .collect();
    encode_steps(&steps)
}

/// A client's connection: what it sends, and a thread reading all that comes back.
struct HttpConn {
    stream: Arc<std::net::TcpStream>,
    reader: std::thread::JoinHandle<(Vec<u8>, bool)>,
    /// Reset by the client (what came back may end anywhere).
    reset: bool,
    /// Its sending ended (shut down, or a write failed).
    done: bool,
}

impl HttpConn {
    fn open(addr: std::net::SocketAddr) -> HttpConn {
        let stream = Arc::new(
            std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("cannot connect to the server: {e}")),
        );
        let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let reader = {
            let stream = stream.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut chunk = [0u8; 16 << 10];
                loop {
                    match std::io::Read::read(&mut &*stream, &mut chunk) {
                        Ok(0) => return (got, true),
                        Ok(n) => got.extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e)
                            if e.kind() == std::io::ErrorKind::WouldBlock
                                || e.kind() == std::io::ErrorKind::TimedOut =>
                        {
                            panic!("the server neither answered nor closed in 10 s")
                        }
                        // A reset: the server closed while the client still sent.
                        Err(_) => return (got, false),
                    }
                }
            })
        };
        HttpConn {
            stream,
            reader,
            reset: false,
            done: false,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        if !self.done && (&*self.stream).write_all(bytes).is_err() {
            // The server closed (after an error's answer): no more to send.
            self.done = true;
        }
    }

    fn reset(&mut self) {
        let _ = socket2::SockRef::from(&*self.stream).set_linger(Some(Duration::ZERO));
        // Wakes the reader with an end of input; the last handle's close sends the reset.
        let _ = self.stream.shutdown(std::net::Shutdown::Read);
        self.reset = true;
        self.done = true;
    }

    /// Ends the connection (the server then closes it) and checks all that came back.
    fn finish(self) {
        if !self.reset {
            let _ = self.stream.shutdown(std::net::Shutdown::Write);
        }
        let (got, clean) = match self.reader.join() {
            Ok(got) => got,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        check_http_answers(&got, clean && !self.reset);
    }
}

/// `got` is a series of well-formed answers: a status line, headers with a Content-Length, that
/// many bytes of body (none after a `HEAD`), a one-line JSON error for a status other than 200,
/// nothing after `Connection: close`. Unless `whole`, the last one may be cut short.
fn check_http_answers(got: &[u8], whole: bool) {
    let mut rest = got;
    let shown = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned();
    while !rest.is_empty() {
        let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") else {
            assert!(!whole, "an answer's head without its end: {}", shown(rest));
            return;
        };
        let head = std::str::from_utf8(&rest[..end])
            .unwrap_or_else(|_| panic!("an answer's head not UTF-8: {}", shown(rest)));
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let status = status_line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("a bad status line: {status_line:?}"));
        assert!(
            [200, 400, 403, 404, 405, 408, 413, 414, 431, 500, 503, 505].contains(&status)
                && status_line.len() > 13,
            "a bad status line: {status_line:?}"
        );
        assert!(status != 500, "a 500: {}", shown(rest));
        let mut headers = std::collections::HashMap::new();
        for line in lines {
            let (name, value) = line
                .split_once(": ")
                .unwrap_or_else(|| panic!("a bad header line {line:?} in {head:?}"));
            assert!(
                headers
                    .insert(name.to_ascii_lowercase(), value.to_string())
                    .is_none(),
                "{name} twice in {head:?}"
            );
        }
        for name in ["content-type", "date", "server-timing", "cache-control"] {
            assert!(headers.contains_key(name), "no {name} in {head:?}");
        }
        let length: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or_else(|| panic!("no Content-Length in {head:?}"));
        let closes = headers.get("connection").map(String::as_str) == Some("close");
        rest = &rest[end + 4..];
        // The answer to a HEAD has no body: the next answer, or the end, follows its head (no
        // body of this server starts as a status line does).
        if rest.is_empty() || rest.starts_with(b"HTTP/1.1 ") {
            if closes {
                assert!(rest.is_empty(), "an answer after Connection: close");
            }
            continue;
        }
        if rest.len() < length {
            assert!(
                !whole,
                "a body of {} bytes, not {length}: {head:?}",
                rest.len()
            );
            return;
        }
        let body = &rest[..length];
        if headers["content-type"].starts_with("application/json") {
            let json: serde_json::Value = serde_json::from_slice(body)
                .unwrap_or_else(|e| panic!("a body that is not JSON ({e}): {}", shown(body)));
            if status != 200 {
                assert!(json["error"].is_string(), "{json}");
                assert!(!body.contains(&b'\n'), "an error of several lines");
            }
        }
        rest = &rest[length..];
        if closes {
            assert!(rest.is_empty(), "an answer after Connection: close");
        }
    }
}

/// Runs a case's steps on the server at `addr`, then ends every connection and checks what each
/// got back.
fn run_http_case(addr: std::net::SocketAddr, steps: Vec<HttpStep>) {
    let mut conns: std::collections::BTreeMap<u8, HttpConn> = Default::default();
    let mut bursts = Vec::new();
    for step in steps {
        match step {
            HttpStep::Send { conn, bytes } => conns
                .entry(conn)
                .or_insert_with(|| HttpConn::open(addr))
                .send(&bytes),
            HttpStep::Trickle {
                conn,
                chunk,
                pause,
                bytes,
            } => {
                let c = conns.entry(conn).or_insert_with(|| HttpConn::open(addr));
                for piece in bytes.chunks(usize::from(chunk.max(1))) {
                    c.send(piece);
                    std::thread::sleep(Duration::from_millis(u64::from(pause)));
                }
            }
            HttpStep::Shutdown { conn } => {
                if let Some(c) = conns.get_mut(&conn) {
                    let _ = c.stream.shutdown(std::net::Shutdown::Write);
                    c.done = true;
                }
            }
            HttpStep::Reset { conn } => {
                if let Some(mut c) = conns.remove(&conn) {
                    c.reset();
                    c.finish();
                }
            }
            HttpStep::Wait { ms } => {
                std::thread::sleep(Duration::from_millis(u64::from(ms.min(2000))))
            }
            HttpStep::Burst { count, bytes } => {
                let bytes = Arc::new(bytes);
                let threads: Vec<_> = (0..count.min(100))
                    .map(|_| {
                        let bytes = bytes.clone();
                        std::thread::spawn(move || {
                            let mut c = HttpConn::open(addr);
                            c.send(&bytes);
                            c
                        })
                    })
                    .collect();
                for t in threads {
                    match t.join() {
                        Ok(c) => bursts.push(c),
                        Err(panic) => std::panic::resume_unwind(panic),
                    }
                }
            }
        }
    }
    for c in conns.into_values().chain(bursts) {
        c.finish();
    }
}

/// A good request after a case: answered whole and correctly within 2 s (a 503 is allowed while
/// the connections of the case are still ending, within the same 2 s).
fn probe_promptly(addr: std::net::SocketAddr, expected: &[u8]) {
    let start = Instant::now();
    loop {
        let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .unwrap_or_else(|e| panic!("the server no longer takes connections: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        write!(
            stream,
            "GET /api/probe?moves=e4 HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut stream, &mut got).unwrap_or_else(|e| {
            panic!(
                "no answer to a good probe ({e}) after {:?}",
                start.elapsed()
            )
        });
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "a good probe took {:?}",
            start.elapsed()
        );
        check_http_answers(&got, true);
        if got.starts_with(b"HTTP/1.1 503 ") {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        assert!(
            got.starts_with(b"HTTP/1.1 200 OK\r\n"),
            "a good probe answered {}",
            String::from_utf8_lossy(&got)
        );
        assert!(got.ends_with(expected), "a good probe answered wrong");
        return;
    }
}

/// The explore server under mutated requests (the page's own, and malformed request lines, heads
/// and URLs over the limits, bad percent-encoding, bytes that are not UTF-8, random methods,
/// truncated and pipelined requests), many connections at once, slow writers and resets: every
/// answer is well-formed HTTP, and after each case a good `/api/probe` is answered correctly
/// within 2 s. One server takes all the cases (its connection threads must all end: a leaked one
/// fills the cap of 32, and the probe gets 503s).
#[test]
fn explore_http() {
    let server = polybook::explore::Server::start_with(
        fuzz_explorer(),
        "127.0.0.1:0".parse().unwrap(),
        fuzz_limits(),
    )
    .unwrap();
    let addr = server.addr();
    let seeds = http_seeds(&addr.to_string());
    let expected = polybook::explore::route(&fuzz_explorer(), "GET", "/api/probe?moves=e4").body;
    fuzz(
        "explore_http",
        30,
        Duration::from_secs(60),
        |rng| http_case(rng, &seeds),
        |input| {
            run_http_case(addr, decode_steps(input));
            probe_promptly(addr, &expected);
        },
    );
    server.stop();
}
