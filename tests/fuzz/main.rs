//! Fuzz targets that run on stable Rust, a file each in this folder: real files mutated by a seeded
//! generator, fed to the PGN → book path (`pgn_build`), the book reader and everything that walks a
//! book (`book_reader`), Arena (ABK) books (`abk_reader`), ChessBase's CTG books read in
//! process (`ctg_reader`), Chessmaster (OBK) books (`obk_reader`), BrainLearn and SugaR experience
//! files (`exp_reader`), the FEN/EPD parsers and the engine behind them (`fen_and_epd`), the UCI
//! loop (`uci_session`), the commands that read Parquet tallies (`tally_reader`, run as the binary:
//! `book`, `tally --merge`, `probe`), the commands that read books and PGN and write books or text
//! (`book_commands`: `learn`, `edit`, `filter`, `export`, `sort`, `merge`, `verify`, `dump`),
//! `match` against engines that crash, hang, flood or lie (`bad_engines`), the HTTP server of
//! `explore` (`explore_http`: in process, over real sockets) and its games explorer
//! (`games_explorer`: `/api/games` and `/api/game` under every filter), `split` and `tally --range`
//! on damaged PGN (`split_and_range`), `analyse --resume` on a damaged cache (`analyse_resume`),
//! `datagen` resuming a damaged label file (`datagen_resume`), `train` on one (`train_labels`), and
//! `match --pgn` while another process meddles with the log (`match_log`). Every target checks the
//! same promises: no panic, no hang, errors of one short line (exit 1 on bad data, no file left
//! half-written), and the properties that must hold whatever the input (the book does not depend
//! on `--threads` or the chunk size; `merge` writes a book `verify` accepts; a command on a damaged
//! tally exits 1 with one line naming it; a book a command writes passes `verify`, and a command
//! that fails leaves no file behind; a match ends, scores a forfeit against the engine that failed,
//! and leaves no engine running; every answer of the server is well-formed HTTP, and a good
//! request after each case is answered at once; a filter never adds games; the parts of `split`
//! are the input and the tallies of ranges add up to the whole's; a resumed `analyse` or `datagen`
//! writes what an undamaged run writes; `train` writes a whole net or none; the games a match logs
//! after the log was tampered with are whole in it).
//!
//! In the normal test command each target runs a fixed number of cases from a fixed seed, so a run
//! is repeatable. For a long run:
//!
//! ```sh
//! FUZZ_SECONDS=3600 cargo test --release --test fuzz -- --nocapture --test-threads 1
//! FUZZ_SECONDS=600 FUZZ_SEED=7 cargo test --release --test fuzz book -- --nocapture
//! FUZZ_SECONDS=120 cargo test --release --test fuzz split_and_range -- --nocapture
//! ```
//!
//! A failing case is written to `target/fuzz-failures/` and named in the failure. A long run does not
//! stop at the first failure: it saves each failing input, goes on, and at the end lists the distinct
//! failures (by their message) with how often each was hit.

#[path = "../common/mod.rs"]
mod common;

// The targets, a file each (its test is named after it: `pgn_build::pgn_build`, which the filter
// `pgn_build` runs).

// Mutated real PGN built into books: the same book whatever the threads and the chunk size.
mod pgn_build;
// Mutated real books opened, probed, listed, verified and merged in process.
mod book_reader;
// Mutated CTG books (`.ctg`, `.cto`, `.ctb`) read by `formats::ctg` in process.
mod ctg_reader;
// Arena (ABK) books, mutated slices of libra8.abk and generated trees, opened, probed, converted.
mod abk_reader;
// Chessmaster (OBK) books from the tests' encoder, mutated, opened, probed, converted.
mod obk_reader;
// BrainLearn and SugaR experience files (.exp), generated from random games and mutated.
mod exp_reader;
// Mutated FENs and EPD lines parsed, keyed, walked, searched and played on.
mod fen_and_epd;
// Random, mangled UCI sessions through the UCI loop in process.
mod uci_session;
// Mutated Parquet tallies read by `book`, `tally --merge` and `probe`.
mod tally_reader;
// Mutated books and PGN given to the commands that read them and write books or text.
mod book_commands;
// Matches against engines that crash, hang, flood or lie.
mod bad_engines;
// The HTTP server of `explore`, in process, under mutated requests.
mod explore_http;
// The games explorer of `explore GAMES…` (`/api/games`, `/api/game`) under every filter parameter.
mod games_explorer;
// `split` and `tally --range` on damaged PGN: the parts are the input, the ranges add up.
mod split_and_range;
// `analyse --resume` on a damaged analysis cache: the book of an undamaged run.
mod analyse_resume;
// `datagen` resuming a damaged label file: the labels of an undamaged run.
mod datagen_resume;
// `train` on damaged label files: a whole net, or one line naming the file.
mod train_labels;
// `match --pgn LOG` while another process meddles with the log between games.
mod match_log;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

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
        // A generator that panics is a bug of the target: said with its numbers even in a long
        // run, whose panic hook is silent.
        let input = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&mut rng)))
            .unwrap_or_else(|panic| {
                eprintln!(
                    "fuzz {target}: the generator of case {done} (seed {}) panics",
                    budget.seed
                );
                std::panic::resume_unwind(panic)
            });
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

// ---- seeds and helpers the targets share ------------------------------------------------------

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

/// The first `len` bytes of the file at `path` (all of a shorter file).
fn file_head(path: &Path, len: usize) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    bytes.truncate(len);
    bytes
}

fn pgn_seeds() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    files_below(&common::data("pgn/edge"), &mut files);
    let mut seeds: Vec<Vec<u8>> = files.iter().map(|p| file_head(p, 24 << 10)).collect();
    let dortmund = std::fs::read(common::bundled("dortmund.pgn")).unwrap();
    seeds.extend(dortmund.chunks(16 << 10).take(4).map(<[u8]>::to_vec));
    seeds
}

fn book_seeds() -> Vec<Vec<u8>> {
    [
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
    ]
    .iter()
    .map(|name| file_head(&common::data("books").join(name), 8 << 10))
    .collect()
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

/// `polybook probe BOOK` and `polybook convert BOOK -o out.bin` in `dir`: each exits 0, or 1 with
/// one error line (the book readers' targets run them now and then on a mutated book).
fn probe_and_convert_exit_0_or_1(dir: &Path, book: &str) {
    for args in [&["probe", book][..], &["convert", book, "-o", "out.bin"]] {
        let ran = run_in(dir, args, COMMAND_LIMIT, &[]);
        match ran.code {
            Some(0) => {}
            Some(1) => assert_one_line(
                ran.stderr
                    .trim_end()
                    .trim_start_matches("polybook: error: "),
            ),
            _ => panic!("polybook {args:?}: {:?}: {}", ran.status, ran.stderr),
        }
    }
}

/// The target of a reader of books in another format (300 cases, a case hung after 60 s): each
/// input `make` gives is written into a temporary folder as the file `name(n)` (`n`: the input's
/// number, from 0) and opened by `Book::open`: a book is probed from the start position, an error
/// must be one line; `opened` checks further what it gave (with the input and the file's name).
/// Every 25th input, the binary's `probe` and `convert … -o out.bin` on the file exit 0 or 1 with
/// one line, then `converted` looks at the folder (with the file's name).
fn fuzz_book_format(
    target: &str,
    make: impl Fn(&mut StdRng) -> Vec<u8>,
    name: impl Fn(u64) -> &'static str + Sync,
    opened: impl Fn(&[u8], &str, Result<&polybook::book::Book, &polybook::book::BookError>) + Sync,
    converted: impl Fn(&Path, &str) + Sync,
) {
    let dir = tempfile::tempdir().unwrap();
    let counter = std::sync::atomic::AtomicU64::new(0);
    fuzz(target, 300, Duration::from_secs(60), make, |input| {
        let count = counter.fetch_add(1, Ordering::Relaxed);
        let name = name(count);
        let path = common::write_file(&dir, name, input);
        let book = polybook::book::Book::open(&path);
        match &book {
            Ok(book) => {
                book.probe(&shakmaty::Chess::default());
            }
            Err(e) => assert_one_line(&e.to_string()),
        }
        opened(input, name, book.as_ref());
        if count.is_multiple_of(25) {
            let _ = std::fs::remove_file(dir.path().join("out.bin"));
            probe_and_convert_exit_0_or_1(dir.path(), name);
            converted(dir.path(), name);
        }
    });
}

/// The records of a binary book file, for [`mutate_records`]: `size` bytes each from byte
/// `start`, the first `keep` of them left alone (a header written as records).
#[derive(Clone, Copy)]
struct Records {
    start: usize,
    size: usize,
    keep: usize,
}

impl Records {
    /// The offset of a random record of the `n`, past the kept ones.
    fn random(self, rng: &mut StdRng, n: usize) -> usize {
        self.start + rng.random_range(self.keep..n) * self.size
    }
}

/// A mutation of a file of `records`: below `edits` times a random record (past the kept ones)
/// is given to `edit` with its offset and the number of records; where `edit` returns `false`
/// and leaves it be, a random byte of the file is set instead. Then the end is damaged
/// ([`damage_the_end`], up to `max_extra` bytes added).
fn mutate_records(
    rng: &mut StdRng,
    mut b: Vec<u8>,
    records: Records,
    edits: usize,
    max_extra: usize,
    mut edit: impl FnMut(&mut StdRng, &mut Vec<u8>, usize, usize) -> bool,
) -> Vec<u8> {
    let n = (b.len() - records.start) / records.size;
    for _ in 0..rng.random_range(0..edits) {
        if n <= records.keep {
            break;
        }
        let i = records.random(rng, n);
        if !edit(rng, &mut b, i, n) {
            let at = rng.random_range(0..b.len());
            b[at] = rng.random();
        }
    }
    damage_the_end(rng, &mut b, max_extra);
    b
}

/// Swaps the `len` bytes at `i` with the `len` bytes at `j`.
fn swap_bytes(b: &mut [u8], i: usize, j: usize, len: usize) {
    for k in 0..len {
        b.swap(i + k, j + k);
    }
}

/// Now and then cuts a mutated file short or adds up to `max_extra` random bytes at its end.
fn damage_the_end(rng: &mut StdRng, b: &mut Vec<u8>, max_extra: usize) {
    match rng.random_range(0..10) {
        0 => b.truncate(rng.random_range(0..=b.len())),
        1 => b.extend((0..rng.random_range(1..max_extra)).map(|_| rng.random::<u8>())),
        _ => {}
    }
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
