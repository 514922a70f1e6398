//! The inspection commands against the reference tools: `lines` and `info` against polyglot's
//! `dump-book` and `info-book` on every bundled book, `dump` against python-chess's reader and the
//! raw bytes, `verify` on valid, invalid and crafted books, and bad input for every command.

use crate::common;
use common::{data, data_books, polybook, stderr, stdout};

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One record: key, move, weight, learn.
type RawEntry = (u64, u16, u16, u32);

fn require_polyglot() {
    common::polyglot();
}

/// What `polyglot dump-book` writes into its output file (it exits 0 even on errors, so its
/// output file is what counts).
fn polyglot_dump(book: &str, color: &str, dir: &Path) -> Vec<u8> {
    let out = dir.join(format!("polyglot-{color}.txt"));
    let _ = std::fs::remove_file(&out);
    let run = Command::new(common::polyglot())
        .args(["dump-book", "-bin", book, "-color", color, "-out"])
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .expect("run polyglot");
    assert!(run.success());
    std::fs::read(&out).unwrap_or_else(|e| panic!("polyglot wrote no {}: {e}", out.display()))
}

/// `polybook lines` must print exactly what `polyglot dump-book` writes.
fn assert_lines_match(book: &str, color: &str, dir: &Path) {
    let expected = polyglot_dump(book, color, dir);
    let out = polybook(&["lines", book, "--color", color]);
    assert!(out.status.success(), "{book} {color}: {}", stderr(&out));
    if out.stdout != expected {
        let (ours, theirs) = (
            stdout(&out),
            String::from_utf8_lossy(&expected).into_owned(),
        );
        let first = ours
            .lines()
            .zip(theirs.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(ours.lines().count().min(theirs.lines().count()));
        panic!(
            "{book} {color}: lines differ from polyglot dump-book at line {first} \
             ({} vs {} lines)\npolybook: {:?}\npolyglot: {:?}",
            ours.lines().count(),
            theirs.lines().count(),
            ours.lines().nth(first),
            theirs.lines().nth(first)
        );
    }
}

/// [`assert_lines_match`] for `color` on every bundled book.
fn assert_lines_match_on_every_bundled_book(color: &str) {
    require_polyglot();
    let dir = tempfile::tempdir().unwrap();
    for book in data_books() {
        assert_lines_match(book.to_str().unwrap(), color, dir.path());
    }
}

#[test]
fn lines_for_white_equal_polyglot_dump_book_on_every_bundled_book() {
    assert_lines_match_on_every_bundled_book("white");
}

#[test]
fn lines_for_black_equal_polyglot_dump_book_on_every_bundled_book() {
    assert_lines_match_on_every_bundled_book("black");
}

/// Writes entries (key, move, weight, learn) as a book file, in the given order.
fn write_raw(path: &Path, entries: &[RawEntry]) {
    let mut bytes = Vec::new();
    for &(k, m, w, l) in entries {
        bytes.extend_from_slice(&k.to_be_bytes());
        bytes.extend_from_slice(&m.to_be_bytes());
        bytes.extend_from_slice(&w.to_be_bytes());
        bytes.extend_from_slice(&l.to_be_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

const START: u64 = 0x463b96181691fc9c;
const AFTER_E4: u64 = 0x823c9b50fd114196;
const E2E4: u16 = 28 | 12 << 6;
const E7E5: u16 = 36 | 52 << 6;
const D2D4: u16 = 27 | 11 << 6;

/// The line the quirky books share: 1. e4 (weight 3), then 1... e5.
const E4: RawEntry = (START, E2E4, 3, 0);
const E5: RawEntry = (AFTER_E4, E7E5, 1, 0);

/// Books made to hit polyglot's corner cases: an entry with move 0 (polyglot's "no move") first or
/// not first under a key, weight-0 entries, an illegal move, two entries with the same move, a
/// key 0, shares that round to a half.
fn quirky_books(dir: &Path) -> Vec<PathBuf> {
    let books: [(&str, Vec<RawEntry>); 6] = [
        ("move0-first.bin", vec![(START, 0, 5, 0), E4, E5]),
        ("move0-second.bin", vec![E4, (START, 0, 5, 0), E5]),
        ("move0-after-e4.bin", vec![E4, (AFTER_E4, 0, 1, 0), E5]),
        (
            "weight0-illegal-duplicate.bin",
            vec![
                E4,
                (START, D2D4, 0, 0),
                (START, E7E5, 9, 0),
                (START, E2E4, 1, 0),
                (AFTER_E4, E7E5, 2, 0),
            ],
        ),
        (
            // polyglot's count of positions starts from key 0, so a run with key 0 is not counted.
            "key0.bin",
            vec![(0, E2E4, 1, 0), (0, E7E5, 1, 0), (7, E2E4, 1, 0), E4, E5],
        ),
        (
            // 12.5 % and 87.5 %: C's printf rounds half to even (12 %, 88 %).
            "eighths.bin",
            vec![(START, E2E4, 1, 0), (START, D2D4, 7, 0), E5],
        ),
    ];
    books
        .into_iter()
        .map(|(name, entries)| {
            let path = dir.join(name);
            write_raw(&path, &entries);
            path
        })
        .collect()
}

#[test]
fn lines_and_info_equal_polyglot_on_crafted_corner_cases() {
    require_polyglot();
    let dir = tempfile::tempdir().unwrap();
    for book in quirky_books(dir.path()) {
        let book = book.to_str().unwrap();
        assert_lines_match(book, "white", dir.path());
        assert_lines_match(book, "black", dir.path());
        assert_info_matches(Path::new(book));
    }
}

/// The five numbers `polyglot info-book` prints: lines white, lines black, positions white,
/// positions black, isolated.
fn polyglot_info(book: &Path) -> [u64; 5] {
    let out = Command::new(common::polyglot())
        .args(["info-book", "-bin"])
        .arg(book)
        .output()
        .expect("run polyglot");
    let text = String::from_utf8_lossy(&out.stdout);
    let labels = [
        "Lines for white",
        "Lines for black",
        "Positions on lines for white",
        "Positions on lines for black",
        "Isolated positions",
    ];
    labels.map(|label| {
        let line = text
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| {
                panic!(
                    "{}: no '{label}' in polyglot's output:\n{text}",
                    book.display()
                )
            });
        line.rsplit(':').next().unwrap().trim().parse().unwrap()
    })
}

/// Entries, distinct keys and the largest weight, read from the file here.
fn raw_counts(book: &Path) -> (u64, u64, u64) {
    let bytes = std::fs::read(book).unwrap();
    let mut keys: Vec<u64> = Vec::new();
    let mut max_weight = 0;
    for record in bytes.chunks_exact(16) {
        keys.push(u64::from_be_bytes(record[0..8].try_into().unwrap()));
        max_weight = max_weight.max(u64::from(u16::from_be_bytes([record[10], record[11]])));
    }
    let entries = keys.len() as u64;
    keys.sort();
    keys.dedup();
    (entries, keys.len() as u64, max_weight)
}

fn assert_info_matches(book: &Path) {
    let out = polybook(&[Path::new("info"), Path::new("--json"), book]);
    assert!(out.status.success(), "{}: {}", book.display(), stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "entries",
            "isolated",
            "lines_black",
            "lines_white",
            "max_weight",
            "positions",
            "positions_black",
            "positions_white"
        ]
    );
    assert!(
        stdout(&out).starts_with(r#"{"entries":"#),
        "{}",
        stdout(&out)
    );
    let field = |k: &str| json[k].as_u64().unwrap();
    let ours = [
        "lines_white",
        "lines_black",
        "positions_white",
        "positions_black",
        "isolated",
    ]
    .map(field);
    assert_eq!(
        ours,
        polyglot_info(book),
        "{}: polybook vs polyglot info-book",
        book.display()
    );
    let (entries, positions, max_weight) = raw_counts(book);
    assert_eq!(
        (field("entries"), field("positions"), field("max_weight")),
        (entries, positions, max_weight),
        "{}",
        book.display()
    );
}

#[test]
fn info_equals_polyglot_info_book_on_every_bundled_book() {
    require_polyglot();
    for book in data_books() {
        assert_info_matches(&book);
    }
    // The human table carries the same numbers.
    let out = polybook(&[Path::new("info"), &data("books/gm2001.bin")]);
    let text = stdout(&out);
    assert!(text.contains("entries") && text.contains("30416"), "{text}");
    assert!(
        text.contains("isolated positions") && text.contains("656"),
        "{text}"
    );
}

/// Polyglot's spelling of a move code, written independently of the crate.
fn spell(code: u16) -> String {
    if code & 0x8000 != 0 || (code >> 12) & 7 > 4 {
        return format!("0x{code:04x}");
    }
    let square = |s: u16| format!("{}{}", (b'a' + (s % 8) as u8) as char, s / 8 + 1);
    let promo = ["", "n", "b", "r", "q"][usize::from((code >> 12) & 7)];
    format!("{}{}{promo}", square((code >> 6) & 63), square(code & 63))
}

#[test]
fn dump_equals_python_chess_reader_on_every_bundled_book() {
    let script = r#"
import sys, chess.polyglot
for path in sys.argv[1:]:
    with chess.polyglot.open_reader(path) as r:
        for e in r:
            print("%s,%016x,%d,%d,%d" % (path, e.key, e.raw_move, e.weight, e.learn))
"#;
    let books = data_books();
    let mut cmd = Command::new(common::python_chess());
    cmd.arg("-c").arg(script).args(&books);
    let python = common::succeeds(&mut cmd, "python-chess failed (pip install chess)");
    let mut checked = 0;
    for book in &books {
        let name = book.to_str().unwrap();
        let expected: Vec<String> = python
            .lines()
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix(','))
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                format!(
                    "{},{},{},{}",
                    f[0],
                    spell(f[1].parse().unwrap()),
                    f[2],
                    f[3]
                )
            })
            .collect();
        let out = polybook(&["dump", name, "--csv"]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let text = stdout(&out);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("key,raw,weight,learn"));
        let ours: Vec<&str> = lines.collect();
        assert_eq!(ours.len(), expected.len(), "{name}");
        for (i, (a, b)) in ours.iter().zip(&expected).enumerate() {
            assert_eq!(a, b, "{name} entry {i}");
        }
        checked += ours.len();
    }
    assert!(checked > 600_000, "only {checked} entries compared");
}

#[test]
fn dump_json_and_table_read_the_raw_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.bin");
    // Odd but sorted: move 0, bit 15, promotion code 6, an underpromotion, the largest fields.
    let entries = [
        (1, 0, 0, 0),
        (2, 0x8000 | E2E4, 7, 1),
        (3, E2E4 | 6 << 12, 65535, u32::MAX),
        (u64::MAX, 56 | 48 << 6 | 1 << 12, 1, 2),
    ];
    write_raw(&path, &entries);
    let out = polybook(&[Path::new("dump"), Path::new("--json"), &path]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), entries.len());
    for (row, &(k, m, w, l)) in rows.iter().zip(&entries) {
        assert_eq!(row["key"], format!("{k:016x}"));
        assert_eq!(row["raw"], spell(m));
        assert_eq!(row["weight"], w);
        assert_eq!(row["learn"], l);
        assert_eq!(row.as_object().unwrap().len(), 4);
    }
    assert_eq!(rows[3]["raw"], "a7a8n");
    let out = polybook(&[Path::new("dump"), &path]);
    let table = stdout(&out);
    assert_eq!(table.lines().count(), entries.len() + 1);
    assert!(
        table
            .lines()
            .nth(4)
            .unwrap()
            .starts_with("ffffffffffffffff  a7a8n"),
        "{table}"
    );
    // --json and --csv exclude each other.
    let out = polybook(&[
        Path::new("dump"),
        Path::new("--json"),
        Path::new("--csv"),
        &path,
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// A reader that goes away (`polybook dump big.bin | head`) ends the dump quietly.
#[test]
fn dump_into_a_closed_pipe_exits_quietly() {
    for format in ["--json", "--csv", "--table"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_polybook"));
        cmd.arg("dump").arg(data("books/gnuchess.bin"));
        if format != "--table" {
            cmd.arg(format);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 100];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut head)
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert!(out.status.success(), "{format}: {} {err}", out.status);
        assert!(err.is_empty(), "{format}: {err}");
    }
}

#[test]
fn lines_to_a_file_is_written_whole_and_equals_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_small.bin");
    let target = common::write_file(dir.path(), "white.txt", "old");
    let out = polybook(&[
        Path::new("lines"),
        &book,
        Path::new("--color"),
        Path::new("white"),
        Path::new("-o"),
        &target,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let printed = polybook(&[
        Path::new("lines"),
        &book,
        Path::new("--color"),
        Path::new("white"),
    ]);
    assert_eq!(std::fs::read(&target).unwrap(), printed.stdout);
    // Only the output is left in the folder: no temporary file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // A bad colour is a usage error.
    let out = polybook(&[
        Path::new("lines"),
        &book,
        Path::new("--color"),
        Path::new("red"),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn verify_accepts_every_bundled_book() {
    for book in data_books() {
        let out = polybook(&[Path::new("verify"), &book]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}{}",
            book.display(),
            stdout(&out),
            stderr(&out)
        );
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 1, "{text}");
        common::assert_contains(&text, ": OK:");
    }
    let out = polybook(&[Path::new("verify"), &data("books/gnuchess.bin")]);
    common::assert_contains(&stdout(&out), "180358 entries, 149694 positions");
}

#[test]
fn verify_reports_the_invalid_data_books() {
    let cases = [
        (
            "gnuchess-smallbook-trailing-byte.bin",
            "38673 bytes",
            "1 stray byte",
        ),
        (
            "html-page-saved-as.bin",
            "not a multiple of 16",
            "HTML page",
        ),
        (
            "git-lfs-pointer.bin",
            "not a multiple of 16",
            "Git LFS pointer",
        ),
    ];
    for (name, what, hint) in cases {
        let path = data(&format!("books/invalid/{name}"));
        let out = polybook(&[Path::new("verify"), &path]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let text = stdout(&out);
        assert!(text.contains(what) && text.contains(hint), "{name}: {text}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("polybook: error: ") && err.contains(name),
            "{err}"
        );
    }
    // The whole entries before the stray byte are still checked: gnuchess's small book is sorted.
    let out = polybook(&[
        Path::new("verify"),
        &data("books/invalid/gnuchess-smallbook-trailing-byte.bin"),
    ]);
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
    common::assert_contains(&stderr(&out), "2417 entries read");
    // A file recognised as something else (a web page, an LFS pointer) gets that one finding, not
    // the unsorted keys and impossible moves its bytes would give read as entries.
    for (name, what) in [
        ("html-page-saved-as.bin", "it is an HTML page"),
        ("git-lfs-pointer.bin", "it is a Git LFS pointer"),
    ] {
        let path = data(&format!("books/invalid/{name}"));
        let out = polybook(&[Path::new("verify"), &path]);
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains("not a multiple of 16") && text.contains(what),
            "{text}"
        );
        assert_eq!(
            stderr(&out),
            format!(
                "polybook: error: {}: not a Polyglot book: {what}{}\n",
                path.display(),
                text.split_once(what)
                    .unwrap()
                    .1
                    .trim_end()
                    .trim_end_matches(')')
            )
        );
    }
}

#[test]
fn verify_names_each_problem_of_crafted_books() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.bin");
    write_raw(
        &path,
        &[
            (START, E2E4, 3, 0),
            (START, D2D4, 2, 0),
            (START, E2E4, 1, 0),                  // entry 2: duplicate of entry 0
            (AFTER_E4, 12 | 12 << 6, 1, 0),       // entry 3: from == to
            (AFTER_E4 + 1, E2E4 | 4 << 12, 1, 0), // entry 4: promotion on e2e4
            (AFTER_E4 + 2, 25, 1, 0),             // entry 5: a1b4, no piece moves so
            (5, E7E5, 1, 0),                      // entry 6: unsorted
        ],
    );
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"xyz");
    std::fs::write(&path, bytes).unwrap();
    let out = polybook(&[Path::new("verify"), &path]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let has = |needle: &str| text.lines().any(|l| l.contains(needle));
    assert!(has("entry 2:") && has("repeat entry 0"), "{text}");
    assert!(has("entry 3:") && has("same square"), "{text}");
    assert!(has("entry 4:") && has("a promotion"), "{text}");
    assert!(
        has("entry 5:") && has("no piece moves from a1 to b4"),
        "{text}"
    );
    assert!(has("entry 6:") && has("not sorted"), "{text}");
    assert!(has("size 115 bytes") && has("3 stray bytes"), "{text}");
    let err = stderr(&out);
    common::assert_contains(
        &err,
        "1 size, 1 unsorted keys, 1 duplicate key and move, 3 impossible move codes",
    );

    // Many problems of one kind: 20 listed, the rest counted.
    let descending: Vec<RawEntry> = (0..100u64).rev().map(|k| (k, E2E4, 1, 0)).collect();
    write_raw(&path, &descending);
    let out = polybook(&[Path::new("verify"), &path]);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 21, "{text}");
    common::assert_contains(&text, "79 more problems of this kind (unsorted keys)");
}

/// Each command refuses what is not a book with one line on stderr that names the file, and
/// exit code 1; `verify` reports the contents' problems instead (tested above).
#[test]
fn bad_input_gives_one_clear_line_and_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.bin");
    let cases: Vec<(PathBuf, &str)> = vec![
        (missing.clone(), "No such file"),
        (dir.path().to_path_buf(), "is a directory"),
        (
            data("books/invalid/gnuchess-smallbook-trailing-byte.bin"),
            "stray byte",
        ),
        (data("books/invalid/html-page-saved-as.bin"), "HTML page"),
        (data("books/invalid/git-lfs-pointer.bin"), "Git LFS pointer"),
    ];
    let commands: [&[&str]; 5] = [
        &["dump"],
        &["dump", "--json"],
        &["lines", "--color", "white"],
        &["info"],
        &["info", "--json"],
    ];
    for (path, why) in &cases {
        for command in commands {
            let mut args = vec![std::ffi::OsStr::new(command[0]), path.as_os_str()];
            args.extend(command[1..].iter().map(std::ffi::OsStr::new));
            let out = polybook(&args);
            let err = stderr(&out);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{command:?} {}: {err}",
                path.display()
            );
            assert!(out.stdout.is_empty(), "{command:?} {}", path.display());
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.starts_with("polybook: error: "), "{err}");
            assert!(
                err.contains(path.to_str().unwrap()) && err.contains(why),
                "{err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    for path in [&missing, &dir.path().to_path_buf()] {
        let out = polybook(&[Path::new("verify"), path]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
    // `lines -o` into a folder that does not exist.
    let out = polybook(&[
        Path::new("lines"),
        &data("books/lasker-trap.bin"),
        Path::new("--color"),
        Path::new("black"),
        Path::new("-o"),
        &dir.path().join("no/such/dir/out.txt"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}
