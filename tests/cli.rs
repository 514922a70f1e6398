//! The command line as a whole: what every command does with its standard output when the reader
//! goes away or the disk is full, how `-o` treats what is already at the path, what is left behind
//! after a signal, and the usage rules the commands share.

mod common;
use common::{bundled, data};

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn polybook() -> Command {
    Command::new(env!("CARGO_BIN_EXE_polybook"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A command line for each command that prints results, with the files it needs made in `dir`.
fn printing_commands(dir: &Path) -> Vec<(String, Vec<PathBuf>)> {
    let p = |s: &str| PathBuf::from(s);
    let book = data("books/gnuchess.bin");
    vec![
        ("key".into(), vec![p("key")]),
        ("perft".into(), vec![p("perft"), p("3")]),
        (
            "perft --divide".into(),
            vec![p("perft"), p("3"), p("--divide")],
        ),
        ("search".into(), vec![p("search"), p("--depth"), p("6")]),
        ("bench".into(), vec![p("bench"), p("--depth"), p("2")]),
        (
            "solve".into(),
            vec![
                p("solve"),
                data("epd/wac.epd"),
                p("--first"),
                p("2"),
                p("--depth"),
                p("3"),
            ],
        ),
        (
            "build --json".into(),
            vec![
                p("build"),
                bundled("dortmund.pgn"),
                p("-o"),
                dir.join("built.bin"),
                p("--json"),
            ],
        ),
        (
            "merge --json".into(),
            vec![
                p("merge"),
                book.clone(),
                data("books/rodent3_small.bin"),
                p("-o"),
                dir.join("merged.bin"),
                p("--json"),
            ],
        ),
        ("probe".into(), vec![p("probe"), book.clone()]),
        ("dump".into(), vec![p("dump"), book.clone()]),
        ("info".into(), vec![p("info"), book.clone()]),
        ("verify".into(), vec![p("verify"), book.clone()]),
        (
            "lines".into(),
            vec![p("lines"), book, p("--color"), p("white")],
        ),
    ]
}

/// Into a full disk, every command says so in one line and exits 1; none panics.
#[test]
fn a_full_disk_on_standard_output_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in printing_commands(dir.path()) {
        let full = File::options().write(true).open("/dev/full").unwrap();
        let out = polybook()
            .args(&args)
            .stdout(Stdio::from(full))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert_eq!(
            errors,
            [
                "polybook: error: cannot write to standard output: No space left on device (os error 28)"
            ],
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

/// Into a pipe whose reader has gone (`polybook search | head -1`), every command stops quietly.
#[test]
fn a_closed_pipe_on_standard_output_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in printing_commands(dir.path()) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = polybook()
            .args(&args)
            .stdout(Stdio::from(writer))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        assert!(
            !err.contains("error") && !err.contains("panicked"),
            "{name}: {err}"
        );
    }
}
