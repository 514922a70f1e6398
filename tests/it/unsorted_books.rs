//! Books as they exist in the wild: keys not fully sorted. Two are made from a real book,
//! Debian's gnuchess.bin (sorted, canonical): one with three entries moved to its end, as a tool
//! appending to a sorted book leaves it, and one with two entries swapped. Every command and the
//! engine read them (with one warning), `probe` agrees with python-chess, `lines` and `info` with
//! polyglot, `verify` still rejects them, and `sort` turns them back into gnuchess.bin.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::path_str as s;
use common::{data, polybook, polybook_fails, polybook_match_ok, stderr, stdout};
use polybook::book::Key;
use shakmaty::san::San;
use shakmaty::{Chess, Position};

type Record = [u8; 16];

fn records(path: &Path) -> Vec<Record> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(16)
        .map(|c| c.try_into().unwrap())
        .collect()
}

fn write_records(path: &Path, records: &[Record]) {
    std::fs::write(path, records.concat()).unwrap();
}

fn key(r: &Record) -> u64 {
    u64::from_be_bytes(r[..8].try_into().unwrap())
}

fn weight(r: &Record) -> u16 {
    u16::from_be_bytes([r[10], r[11]])
}

/// The key of the position after `moves` (SAN) from the start.
fn key_after(moves: &str) -> u64 {
    let mut pos = Chess::default();
    for san in moves.split_whitespace() {
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    Key::of(&pos).0
}

/// The indices of the entries under the position's key.
fn indices(book: &[Record], moves: &str) -> Vec<usize> {
    let k = key_after(moves);
    (0..book.len()).filter(|&i| key(&book[i]) == k).collect()
}

/// The two unsorted books, made in `dir`, with where their order breaks and how many entries are
/// out of order, as made.
struct Books {
    tail: PathBuf,
    swapped: PathBuf,
    /// The first entry out of order in the swapped book.
    swapped_first: usize,
}

fn make_books(dir: &Path) -> Books {
    let gnuchess = records(&data("books/gnuchess.bin"));
    // The tail: the only entry of 1.e4 g5, the last (lightest) of 1.e4 c5's twelve and the last of
    // 1.e4 e6's eleven, moved to the end of the file.
    let only = indices(&gnuchess, "e4 g5");
    let c5 = indices(&gnuchess, "e4 c5");
    let e6 = indices(&gnuchess, "e4 e6");
    assert_eq!((only.len(), c5.len(), e6.len()), (1, 12, 11));
    let moved = [only[0], *c5.last().unwrap(), *e6.last().unwrap()];
    let mut tail: Vec<Record> = (0..gnuchess.len())
        .filter(|i| !moved.contains(i))
        .map(|i| gnuchess[i])
        .collect();
    tail.extend(moved.iter().map(|&i| gnuchess[i]));
    // Each moved key is smaller than the last key of the book: the three stand out of order.
    assert!(
        moved
            .iter()
            .all(|&i| key(&gnuchess[i]) < key(&tail[tail.len() - 4]))
    );
    let tail_path = dir.join("tail.bin");
    write_records(&tail_path, &tail);
    // The swap: the first (heaviest) entries of 1.e4 e5 and 1.e4 c6.
    let (a, b) = (
        indices(&gnuchess, "e4 e5")[0],
        indices(&gnuchess, "e4 c6")[0],
    );
    assert!(a + 1 < b && key(&gnuchess[a]) < key(&gnuchess[b]));
    let mut swapped = gnuchess.clone();
    swapped.swap(a, b);
    let swapped_path = dir.join("swapped.bin");
    write_records(&swapped_path, &swapped);
    Books {
        tail: tail_path,
        swapped: swapped_path,
        swapped_first: a + 1,
    }
}

/// The warning each command prints once for an unsorted book.
fn warning(path: &Path, first: usize, out_of_order: u64) -> String {
    let p = path.display();
    format!(
        "polybook: warning: {p}: keys not sorted from entry {first} ({out_of_order} entries out \
         of order); 'polybook sort {p} -o sorted.bin' repairs it\n"
    )
}

fn cases(books: &Books) -> [(PathBuf, String); 2] {
    let n = records(&data("books/gnuchess.bin")).len();
    [
        (books.tail.clone(), warning(&books.tail, n - 3, 3)),
        (
            books.swapped.clone(),
            warning(&books.swapped, books.swapped_first, 2),
        ),
    ]
}

/// Every position reachable by book moves (10 plies, at most 3,000), probed by polybook and by
/// python-chess (bench/probe_vs_python_chess.py): positions whose entries lie in the sorted part
/// must get exactly python-chess's `find_all`; the others (and those whose bisection in python-chess
/// reads an out-of-order entry on its way) every entry a scan of the file finds, in file order.
#[test]
fn probe_matches_python_chess_on_unsorted_books() {
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    let script = common::root().join("bench/probe_vs_python_chess.py");
    for (book, out_of_order) in [(&books.tail, 3), (&books.swapped, 2)] {
        let out = Command::new(common::python_chess())
            .arg(&script)
            .arg(book)
            .args(["--plies", "10", "--max", "3000", "--polybook"])
            .arg(env!("CARGO_BIN_EXE_polybook"))
            .output()
            .expect("python3 runs");
        let text = stdout(&out);
        assert!(out.status.success(), "{text}{}", stderr(&out));
        assert!(text.contains("3000/3000 positions match"), "{text}");
        assert!(
            text.contains(&format!(
                "{out_of_order} entries out of key order; {out_of_order} positions have one"
            )),
            "{text}"
        );
    }
}

/// A position whose only entry stands in the tail gets it, and 1.e4 c5 gets all twelve moves (the
/// twelfth from the tail, last, as it is stored); the engine plays the tail's move.
#[test]
fn probe_and_the_engine_find_entries_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    let [(tail, tail_warning), _] = cases(&books);
    let sorted = data("books/gnuchess.bin");
    for moves in ["e4 g5", "e4 c5", "e4 e6", "e4 e5", "d4"] {
        let probe = |book: &Path| polybook(&["probe", s(book), "--moves", moves, "--json"]);
        let (got, expected) = (probe(&tail), probe(&sorted));
        assert!(got.status.success(), "{}", stderr(&got));
        // gnuchess.bin is canonical and the tail holds each key's lightest entries: the same list.
        assert_eq!(stdout(&got), stdout(&expected), "{moves}");
        assert_eq!(stderr(&got), tail_warning);
    }
    // The engine, in a game (with a clock: `go depth` searches without the book): after 1.e4 g5
    // the book's one move, 2.d4, stands in the tail.
    let mut child = common::piped().arg("uci").spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "uci\nsetoption name BookFile value {}\nisready\nposition startpos moves e2e4 g7g5\ngo wtime 10000 btime 10000",
        tail.display()
    )
    .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let done = line.starts_with("bestmove");
        seen.push(line);
        if done {
            break;
        }
    }
    writeln!(stdin, "quit").unwrap();
    drop(stdin);
    child.wait().unwrap();
    let text = seen.join("\n");
    assert_eq!(
        seen.last().map(String::as_str),
        Some("bestmove d2d4"),
        "{text}"
    );
    assert!(text.contains("info string book move d2d4"), "{text}");
    let warned: Vec<&String> = seen
        .iter()
        .filter(|l| l.contains("keys not sorted"))
        .collect();
    assert_eq!(warned.len(), 1, "{text}");
    // The same line as the commands' warning, as an `info string`.
    assert_eq!(
        format!(
            "polybook: {}\n",
            warned[0].strip_prefix("info string ").unwrap()
        ),
        tail_warning,
        "{text}"
    );
}

/// `dump` lists the file as it is, in file order.
#[test]
fn dump_lists_the_entries_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    for (book, expected_warning) in cases(&books) {
        let out = polybook(&[Path::new("dump"), &book, Path::new("--json")]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), expected_warning);
        let raw = records(&book);
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), raw.len());
        for (line, r) in lines.iter().zip(&raw) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["key"], format!("{:016x}", key(r)));
            assert_eq!(v["weight"], weight(r));
        }
    }
}

/// What a stable sort by key makes of a book (each key's entries in stored order): the book
/// polybook reads an unsorted book as. polyglot itself binary-searches an unsorted book and misses
/// the entries out of order (its dump of the tail book lacks 2.Bc4 after 1.e4 c5), so the
/// reference is polyglot on this copy.
fn key_sorted_copy(book: &Path, dir: &Path) -> PathBuf {
    let mut r = records(book);
    r.sort_by_key(key);
    let path = dir.join(format!(
        "key-sorted-{}",
        book.file_name().unwrap().to_str().unwrap()
    ));
    write_records(&path, &r);
    path
}

#[test]
fn lines_and_info_equal_polyglot_on_the_book_sorted_by_key() {
    let polyglot = common::polyglot();
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    for (book, expected_warning) in cases(&books) {
        let copy = key_sorted_copy(&book, dir.path());
        for color in ["white", "black"] {
            let expected = dir.path().join(format!("polyglot-{color}.txt"));
            let run = Command::new(polyglot)
                .args(["dump-book", "-bin"])
                .arg(&copy)
                .args(["-color", color, "-out"])
                .arg(&expected)
                .output()
                .unwrap();
            assert!(run.status.success());
            let expected = std::fs::read_to_string(&expected).unwrap();
            let out = polybook(&["lines", s(&book), "--color", color]);
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(stderr(&out), expected_warning);
            let got = stdout(&out);
            // The first line names the file.
            let body = |t: &str| t.split_once('\n').unwrap().1.to_string();
            assert!(
                body(&got) == body(&expected),
                "{} {color}: lines differ",
                book.display()
            );
            assert!(got.lines().count() > 31_000);
        }
        let run = Command::new(polyglot)
            .args(["info-book", "-bin"])
            .arg(&copy)
            .output()
            .unwrap();
        let text = stdout(&run);
        let number = |label: &str| -> u64 {
            let line = text.lines().find(|l| l.starts_with(label)).unwrap();
            line.rsplit(':').next().unwrap().trim().parse().unwrap()
        };
        let out = polybook(&[Path::new("info"), &book, Path::new("--json")]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), expected_warning);
        let info: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let raw = records(&book);
        let mut keys: Vec<u64> = raw.iter().map(key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(info["entries"], raw.len());
        assert_eq!(info["positions"], keys.len());
        assert_eq!(info["lines_white"], number("Lines for white"));
        assert_eq!(info["lines_black"], number("Lines for black"));
        assert_eq!(
            info["positions_white"],
            number("Positions on lines for white")
        );
        assert_eq!(
            info["positions_black"],
            number("Positions on lines for black")
        );
        assert_eq!(info["isolated"], number("Isolated positions"));
    }
}

/// `verify` stays strict: an unsorted book is not a valid book.
#[test]
fn verify_still_rejects_them() {
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    for (book, count) in [(&books.tail, 1), (&books.swapped, 2)] {
        let out = polybook(&[Path::new("verify"), book]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            stderr(&out),
            format!(
                "polybook: error: {p}: not a valid book (180358 entries read): {count} unsorted \
                 keys; 'polybook sort {p} -o sorted.bin' repairs it\n",
                p = book.display()
            )
        );
    }
}

/// `sort` gives back gnuchess.bin byte for byte (it is canonical), and says what it moved;
/// `merge` of an unsorted book with the empty book gives it too.
#[test]
fn sort_and_merge_repair_them() {
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    let gnuchess = std::fs::read(data("books/gnuchess.bin")).unwrap();
    let out_path = dir.path().join("fixed.bin");
    for (book, said) in [
        (&books.tail, "3 entries out of key order put in place\n"),
        (
            &books.swapped,
            "2 entries out of key order put in place; the moves of 1 position put in order of weight\n",
        ),
    ] {
        let out = polybook(&[Path::new("sort"), book, Path::new("-o"), &out_path]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), "");
        assert_eq!(
            stdout(&out),
            format!(
                "{}: 180358 entries, 149694 positions; {said}",
                out_path.display()
            )
        );
        assert!(std::fs::read(&out_path).unwrap() == gnuchess);
        let verify = polybook(&[Path::new("verify"), &out_path]);
        assert!(verify.status.success(), "{}", stdout(&verify));

        let out = polybook(&[
            Path::new("merge"),
            book,
            &data("books/empty.bin"),
            Path::new("-o"),
            &out_path,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(std::fs::read(&out_path).unwrap() == gnuchess);
    }
    // In place, under its alias: the book is read whole before it is replaced.
    let copy = dir.path().join("copy.bin");
    std::fs::copy(&books.tail, &copy).unwrap();
    let out = polybook(&[Path::new("repair"), &copy, Path::new("-o"), &copy]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read(&copy).unwrap() == gnuchess);
    // Only the book is left in the folder's listing of it: no temporary file.
    assert!(
        std::fs::read_dir(dir.path()).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".tmp"))
    );
}

/// The canonical order: key ascending, weight descending, stable. Books already in it are written
/// back byte for byte; the others become the stable sort of their entries by (key, -weight).
#[test]
fn sort_writes_every_bundled_book_in_the_canonical_order() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("sorted.bin");
    let mut canonical_seen = 0;
    for book in common::data_books() {
        let raw = records(&book);
        let order = |r: &Record| (key(r), std::cmp::Reverse(weight(r)));
        let canonical = raw.windows(2).all(|w| order(&w[0]) <= order(&w[1]));
        let out = polybook(&[Path::new("sort"), &book, Path::new("-o"), &out_path]);
        assert!(out.status.success(), "{}: {}", book.display(), stderr(&out));
        let got = records(&out_path);
        let verify = polybook(&[Path::new("verify"), &out_path]);
        assert!(verify.status.success(), "{}", stdout(&verify));
        if canonical {
            canonical_seen += 1;
            assert!(got == raw, "{}", book.display());
            assert!(stdout(&out).ends_with("already in canonical order, written unchanged\n"));
        } else {
            let mut expected = raw.clone();
            expected.sort_by_key(order);
            assert!(got == expected, "{}", book.display());
        }
    }
    assert!(canonical_seen >= 5, "{canonical_seen}");
}

/// Duplicates are merged (weights summed, so each move keeps its chance of being picked), an
/// impossible move code is left out, and a move-0 terminator (key ffffffffffffffff) is kept last.
#[test]
fn sort_merges_duplicates_drops_impossible_codes_and_keeps_the_terminator() {
    let dir = tempfile::tempdir().unwrap();
    let gnuchess = records(&data("books/gnuchess.bin"));
    let mut book = gnuchess.clone();
    // 1.e4 c5's second entry (weight 969) appended again: it sums to 1938, still second.
    let c5 = indices(&gnuchess, "e4 c5");
    book.push(gnuchess[c5[1]]);
    // An entry with bit 15 of the move set (no move at all) under 1.e4 c5's key.
    let mut bad = gnuchess[c5[0]];
    bad[8] |= 0x80;
    book.insert(10, bad);
    let mut terminator = [0u8; 16];
    terminator[..8].copy_from_slice(&[0xff; 8]);
    book.push(terminator);
    let path = dir.path().join("dup.bin");
    write_records(&path, &book);
    let out_path = dir.path().join("fixed.bin");
    let out = polybook(&["sort", s(&path), "-o", s(&out_path), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["duplicates"], 1);
    assert_eq!(report["dropped"], 1);
    assert_eq!(report["entries"], gnuchess.len() + 1);
    let mut expected = gnuchess.clone();
    let doubled = weight(&gnuchess[c5[1]]) * 2;
    expected[c5[1]][10..12].copy_from_slice(&doubled.to_be_bytes());
    assert!(doubled < weight(&gnuchess[c5[0]]));
    expected.push(terminator);
    assert!(records(&out_path) == expected);
    let verify = polybook(&[Path::new("verify"), &out_path]);
    assert!(verify.status.success(), "{}", stdout(&verify));
}

#[test]
fn a_book_refused_as_unsorted_and_duplicated_gets_one_line() {
    // An entry repeated next to itself, and the last entry moved to the front: an entry repeats,
    // and the keys are out of order. `edit` and `filter` refuse the duplicate; the refusal is all
    // they say (no warning about the order before it: both point to `sort`).
    let dir = tempfile::tempdir().unwrap();
    let gnuchess = records(&data("books/gnuchess.bin"));
    let mut book = gnuchess.clone();
    let c5 = indices(&gnuchess, "e4 c5")[1];
    book.insert(c5, gnuchess[c5]);
    let last = book.pop().unwrap();
    book.insert(0, last);
    let path = dir.path().join("dup.bin");
    write_records(&path, &book);
    let out_path = dir.path().join("out.bin");
    for args in [
        &["edit", "--add", "a2a3=1"][..],
        &["filter", "--max-ply", "6"],
    ] {
        refused_as_duplicated(args, &path, &out_path);
    }
}

/// `polybook ARGS BOOK -o OUT` refuses the book in one line naming the duplicate and pointing to
/// `sort`, and writes nothing (on a failure, what `verify` says of what it wrote is in the message).
fn refused_as_duplicated(args: &[&str], book: &Path, out_path: &Path) {
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    all.extend([book.as_os_str(), "-o".as_ref(), out_path.as_os_str()]);
    let out = polybook(&all);
    let said = stderr(&out);
    if out.status.code() != Some(1) {
        let verify = polybook(&[Path::new("verify"), out_path]);
        panic!(
            "{args:?}: exit {:?}: {said}; verify of what it wrote: {}",
            out.status.code(),
            stdout(&verify)
        );
    }
    assert_eq!(said.lines().count(), 1, "{args:?}: {said}");
    assert!(
        said.contains("duplicate key and move") && said.contains("polybook sort"),
        "{args:?}: {said}"
    );
    assert!(!out_path.exists());
}

#[test]
fn a_duplicate_apart_in_an_unsorted_book_is_refused() {
    // 1.e4 c5's second entry appended again at the end: the keys are out of order and the entry
    // repeats, but not next to itself (where `verify` looks). The book `edit` or `filter` would
    // write, sorted, would repeat it side by side, which `verify` rejects: they refuse it.
    let dir = tempfile::tempdir().unwrap();
    let gnuchess = records(&data("books/gnuchess.bin"));
    let mut book = gnuchess.clone();
    book.push(gnuchess[indices(&gnuchess, "e4 c5")[1]]);
    let path = dir.path().join("apart.bin");
    write_records(&path, &book);
    let out_path = dir.path().join("out.bin");
    for args in [
        &["filter", "--max-ply", "6"][..],
        &["edit", "--moves", "e4", "--set", "c7c5=5"],
    ] {
        refused_as_duplicated(args, &path, &out_path);
    }
}

/// Every other command that takes a book reads them, with the one warning line.
#[test]
fn match_and_probe_epd_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    for (book, expected_warning) in cases(&books) {
        let pgn = dir.path().join("games.pgn");
        let out = polybook_match_ok(
            &["builtin", "builtin"],
            &[
                "--book",
                s(&book),
                "--book-plies",
                "4",
                "--games",
                "2",
                "--depth",
                "1",
                "--seed",
                "7",
                "--quiet",
                "--pgn",
                s(&pgn),
            ],
        );
        assert_eq!(stderr(&out), expected_warning);
        let games = std::fs::read_to_string(&pgn).unwrap();
        assert_eq!(games.matches("[Event ").count(), 2, "{games}");
        std::fs::remove_file(&pgn).unwrap();

        let epd = common::write_file(
            dir.path(),
            "positions.epd",
            "rnbqkbnr/pppppp1p/8/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n",
        );
        let out = polybook(&["probe", s(&book), "--epd", s(&epd), "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), expected_warning);
        assert!(stdout(&out).contains(r#""uci":"d2d4""#), "{}", stdout(&out));
    }
}

/// A book truncated by another process while a command streams its output: the command read the
/// book whole before its first line, so it finishes with the whole book (a mapped file would have
/// been a SIGBUS here).
#[test]
fn a_book_truncated_while_a_command_runs_is_no_crash() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("shrinking.bin");
    let entries = records(&data("books/gnuchess.bin")).len();
    for args in [vec!["dump", "--csv"], vec!["lines", "--color", "black"]] {
        std::fs::copy(data("books/gnuchess.bin"), &copy).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_polybook"))
            .arg(args[0])
            .arg(&copy)
            .args(&args[1..])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        // The command is now blocked on the pipe (its output is megabytes): cut the book.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_len(1000)
            .unwrap();
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{args:?}: {status:?}");
        let lines = 1 + rest.lines().count();
        if args[0] == "dump" {
            assert_eq!(lines, entries + 1, "{args:?}");
        } else {
            // `polyglot dump-book -color black` on gnuchess.bin: a title and 31,236 lines.
            assert_eq!(lines, 31_237, "{args:?}");
        }
    }
    // Cut to a size that is not a whole number of entries before a command: one clear line.
    let out = polybook(&[Path::new("info"), &copy]);
    let err = common::failed(&out, 1, "shrinking.bin");
    assert!(err.contains("1000 bytes"), "{err}");
}

/// `play`: after 1.e4 g5 the engine plays the book's one move, 2.d4, which stands in the tail.
#[test]
fn play_takes_a_book_move_from_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let books = make_books(dir.path());
    let [(tail, tail_warning), _] = cases(&books);
    let pgn = dir.path().join("game.pgn");
    let mut child = Command::new(env!("CARGO_BIN_EXE_polybook"))
        .arg("play")
        .arg("--book")
        .arg(&tail)
        .args(["--color", "black", "--depth", "1", "--seed", "1", "--fen"])
        .arg("rnbqkbnr/pppppp1p/8/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
        .arg("--pgn")
        .arg(&pgn)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"quit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), tail_warning);
    assert!(
        stdout(&out).contains("2. d4   polybook, from the book: d4 100.0%"),
        "{}",
        stdout(&out)
    );
    assert!(
        std::fs::read_to_string(&pgn)
            .unwrap()
            .contains("2. d4 {book}")
    );
}

/// A file that holds fewer bytes than its size said when it was opened: a sysfs attribute file
/// (its size is given as 4096; it holds a few bytes), a deterministic stand-in for a book that
/// another program truncates while it is read. Every command that reads a book says so in one line.
#[cfg(target_os = "linux")]
#[test]
fn a_file_that_shrinks_while_it_is_read_is_one_clear_error() {
    let path = Path::new("/sys/devices/system/cpu/online");
    let size = std::fs::metadata(path)
        .expect("Linux has /sys/devices/system/cpu/online")
        .len();
    let held = std::fs::read(path).unwrap().len() as u64;
    assert!(size.is_multiple_of(16) && held < size, "{size} {held}");
    let commands: [&[&str]; 6] = [
        &["info"],
        &["dump"],
        &["probe"],
        &["lines", "--color", "white"],
        &["sort", "-o", "/nonexistent/never.bin"],
        &[
            "merge",
            "/nonexistent/never.bin",
            "-o",
            "/nonexistent/never.bin",
        ],
    ];
    for command in commands {
        let mut args = vec![std::ffi::OsStr::new(command[0]), path.as_os_str()];
        args.extend(command[1..].iter().map(std::ffi::OsStr::new));
        let out = polybook(&args);
        assert_eq!(out.status.code(), Some(1), "{command:?}");
        assert_eq!(
            stderr(&out),
            format!(
                "polybook: error: {}: the file shrank while it was read ({size} bytes when opened, \
                 {held} read): is another program writing it?\n",
                path.display()
            ),
            "{command:?}"
        );
        assert!(out.stdout.is_empty(), "{command:?}");
    }
}

/// Real small books mutated at random (seeded): entries swapped, moved to the end, repeated, bytes
/// flipped (keys, move codes, weights). Whatever the bytes, a lookup finds what a scan of the file
/// finds, `info` and `lines` walk it without a panic, and the books `sort` and `merge` write
/// always pass `verify`.
#[test]
fn mutated_books_are_read_like_a_scan_and_repaired_into_valid_books() {
    use polybook::book::{Book, Key};
    use polybook::builder::{merge_books, sort_book};
    use polybook::inspect::{book_info, verify, write_lines};
    use shakmaty::Color;

    let dir = tempfile::tempdir().unwrap();
    let sources: Vec<Vec<Record>> = [
        "books/lasker-trap.bin",
        "books/rodent3_guide.bin",
        "books/rodent3_guide_grandpa.bin",
    ]
    .iter()
    .map(|b| records(&data(b)))
    .collect();
    let mut rng = common::XorShift(0x9e37_79b9_7f4a_7c15);
    let mut next = move |n: usize| rng.index(n);
    let (sorted_out, merged_out) = (dir.path().join("sorted.bin"), dir.path().join("merged.bin"));
    // How many books were unsorted, had duplicates merged, impossible codes left out.
    let mut seen = [0; 3];
    for round in 0..120 {
        let mut book = sources[round % sources.len()].clone();
        for _ in 0..1 + next(4) {
            let len = book.len();
            match next(5) {
                0 => book.swap(next(len), next(len)),
                1 => {
                    let from = next(len);
                    let moved: Vec<Record> =
                        book.drain(from..(from + 1 + next(3)).min(len)).collect();
                    book.extend(moved);
                }
                2 => {
                    let r = book[next(len)];
                    book.insert(next(len), r);
                }
                3 => book[next(len)][8 + next(8)] ^= 1 << next(8),
                _ => book[next(len)][next(8)] ^= 1 << next(8),
            }
        }
        let b = Book::from_bytes("mutated.bin", book.concat()).unwrap();
        for r in &book {
            let k = key(r);
            let expected: Vec<Record> = book.iter().filter(|x| key(x) == k).copied().collect();
            let got: Vec<Record> = b.lookup(Key(k)).map(|e| e.to_bytes()).collect();
            assert_eq!(got, expected, "round {round}");
        }
        let info = book_info(&b);
        assert_eq!(info.entries, book.len() as u64);
        let mut sink = Vec::new();
        write_lines(&b, "mutated.bin", Color::White, &mut sink).unwrap();
        let sorted = sort_book(&b, &sorted_out).unwrap();
        seen[0] += usize::from(b.disorder().is_some());
        seen[1] += usize::from(sorted.duplicates > 0);
        seen[2] += usize::from(sorted.dropped > 0);
        let report = verify(&sorted_out, 5).unwrap();
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
        let other = Book::from_bytes("other.bin", sources[1].concat()).unwrap();
        merge_books(
            &[b, other],
            &merged_out,
            polybook::builder::MergeStrategy::Sum,
        )
        .unwrap();
        let report = verify(&merged_out, 5).unwrap();
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
    }
    assert!(seen.iter().all(|&n| n >= 5), "{seen:?}");
}

/// A book with stray bytes after its whole entries (GNU Chess's small book with one byte more, a
/// real broken file) is refused by the other commands with a pointer to `sort`, and `sort`
/// (`repair`) keeps its whole entries and says what it left out; a file of another kind (a web
/// page saved as a book) is still refused.
#[test]
fn sort_keeps_the_whole_entries_of_a_book_with_stray_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let broken = data("books/invalid/gnuchess-smallbook-trailing-byte.bin");
    let bytes = std::fs::read(&broken).unwrap();
    assert_eq!(bytes.len() % 16, 1);
    let err = polybook_fails(&["info", s(&broken)], 1, "1 stray byte");
    assert!(
        err.contains("`polybook sort` keeps its whole entries"),
        "{err}"
    );
    let err = polybook_fails(&["verify", s(&broken)], 1, "not a valid book");
    assert!(err.contains("'polybook sort "), "{err}");

    let fixed = dir.path().join("fixed.bin");
    let out = polybook(&["repair", s(&broken), "-o", s(&fixed), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["stray_bytes"], 1);
    assert_eq!(report["changed"], true);
    // The whole entries were already in the canonical order: they come back as they were.
    assert_eq!(std::fs::read(&fixed).unwrap(), bytes[..bytes.len() - 1]);
    let out = polybook(&["verify", s(&fixed)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = polybook(&["sort", s(&broken), "-o", s(&fixed)]);
    assert!(
        stdout(&out).ends_with("1 stray byte after the last whole entry left out\n"),
        "{}",
        stdout(&out)
    );

    let page = data("books/invalid/html-page-saved-as.bin");
    let out_path = dir.path().join("page.bin");
    polybook_fails(&["sort", s(&page), "-o", s(&out_path)], 1, "HTML page");
    assert!(!out_path.exists());
}
