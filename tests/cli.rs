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

/// The commands that write an output file with `-o`, writing it to `target`.
fn writing_commands(target: &Path) -> Vec<(&'static str, Vec<PathBuf>)> {
    let p = |s: &str| PathBuf::from(s);
    vec![
        (
            "build",
            vec![
                p("build"),
                bundled("dortmund.pgn"),
                p("-o"),
                target.to_path_buf(),
                p("--quiet"),
            ],
        ),
        (
            "merge",
            vec![
                p("merge"),
                data("books/gnuchess.bin"),
                data("books/rodent3_small.bin"),
                p("-o"),
                target.to_path_buf(),
            ],
        ),
        (
            "lines",
            vec![
                p("lines"),
                data("books/rodent3_small.bin"),
                p("--color"),
                p("white"),
                p("-o"),
                target.to_path_buf(),
            ],
        ),
    ]
}

/// The names in a folder, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `-o` onto a character device (a private copy of /dev/null's node) writes into it and leaves
/// it a device: it is never replaced by a regular file.
#[test]
fn an_output_onto_a_device_writes_into_it_and_keeps_it() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .unwrap();
    assert!(made.success(), "mknod needs root");
    for (name, args) in writing_commands(&node) {
        let out = polybook().args(&args).output().unwrap();
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let kind = std::fs::symlink_metadata(&node).unwrap().file_type();
        assert!(kind.is_char_device(), "{name}: {kind:?}");
        assert_eq!(listing(dir.path()), ["null"], "{name}");
    }
}

/// `-o` onto a FIFO streams the output to its reader: the bytes the same command writes to a
/// regular file, and the FIFO stays a FIFO.
#[test]
fn an_output_onto_a_fifo_streams_to_its_reader() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let regular = dir.path().join("regular");
    for ((name, to_fifo), (_, to_file)) in writing_commands(&fifo)
        .into_iter()
        .zip(writing_commands(&regular))
    {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                File::open(fifo).unwrap().read_to_end(&mut bytes).unwrap();
                bytes
            })
        };
        let out = polybook().args(&to_fifo).output().unwrap();
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let streamed = reader.join().unwrap();
        let out = polybook().args(&to_file).output().unwrap();
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let written = std::fs::read(&regular).unwrap();
        assert!(!written.is_empty(), "{name}");
        assert!(streamed == written, "{name}: the FIFO got other bytes");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{name}: {kind:?}");
        std::fs::remove_file(&regular).unwrap();
        assert_eq!(listing(dir.path()), ["fifo"], "{name}");
    }
}

/// Whether process `pid` has a file open in `dir` (its output being written).
fn writes_in(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|target| target.starts_with(dir))
}

/// `kill -9` while the output is being written leaves nothing in its folder: no temporary file,
/// no half output.
#[test]
fn kill_9_while_writing_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out");
    let big = [
        (
            "build",
            vec![
                PathBuf::from("build"),
                data("pgn/lichess_magnus_2018-2022.pgn.xz"),
                "--min-games".into(),
                "1".into(),
                "--quiet".into(),
                "-o".into(),
                target.clone(),
            ],
        ),
        (
            "lines",
            vec![
                PathBuf::from("lines"),
                data("books/pychess.bin"),
                "--color".into(),
                "white".into(),
                "-o".into(),
                target.clone(),
            ],
        ),
    ];
    let mut caught = 0;
    for (name, args) in &big {
        let mut child = polybook()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Killed as soon as it has its output open (or not at all, if it was too quick).
        while child.try_wait().unwrap().is_none() {
            if writes_in(child.id(), dir.path()) {
                child.kill().unwrap();
                caught += 1;
                break;
            }
        }
        child.wait().unwrap();
        let left = listing(dir.path());
        assert!(left.is_empty() || left == ["out"], "{name}: {left:?}");
        let _ = std::fs::remove_file(&target);
    }
    eprintln!("{caught} of {} killed while writing", big.len());
}

/// SIGTERM is handled as Ctrl-C is: `play` saves the game so far and exits 130.
#[test]
fn sigterm_stops_play_as_ctrl_c_does() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("game.pgn");
    let mut child = polybook()
        .args(["play", "--color", "white", "--movetime", "50", "--pgn"])
        .arg(&pgn)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"e4\n").unwrap();
    // Wait for the engine's reply, then signal.
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !text(&seen).contains("1... ") {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "play ended early: {}", text(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{status}: {err}");
    assert!(err.contains("Interrupted; the game so far is in"), "{err}");
    let game = std::fs::read_to_string(&pgn).unwrap();
    assert!(game.contains("1. e4 "), "{game}");
    assert!(game.contains("[Termination \"unterminated\"]"), "{game}");
    drop(stdin);
}

/// A small tmpfs mounted for a test, unmounted when dropped.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount() -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "this test mounts a 64 KB tmpfs: run it as root");
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// A file that cannot be used is named, with what it was for and why, in one line; no message
/// names a temporary file, and a failed write leaves nothing on the disk.
#[test]
fn file_errors_name_the_file_and_what_it_was_for() {
    let disk = SmallDisk::mount();
    let full = disk.0.path();
    let work = tempfile::tempdir().unwrap();
    let cd = work.path();
    std::fs::create_dir(cd.join("folder")).unwrap();
    let gnuchess = data("books/gnuchess.bin");
    let cases: Vec<(Vec<PathBuf>, String)> = vec![
        (
            vec!["probe".into(), "missing.bin".into()],
            "cannot open book 'missing.bin': No such file or directory".into(),
        ),
        (
            vec![
                "lines".into(),
                "missing.bin".into(),
                "--color".into(),
                "white".into(),
            ],
            "cannot open book 'missing.bin': No such file or directory".into(),
        ),
        (
            vec!["solve".into(), "missing.epd".into()],
            "cannot read suite 'missing.epd': No such file or directory".into(),
        ),
        (
            vec![
                "probe".into(),
                gnuchess.clone(),
                "--epd".into(),
                "missing.epd".into(),
            ],
            "cannot open EPD file 'missing.epd': No such file or directory".into(),
        ),
        (
            vec![
                "merge".into(),
                gnuchess.clone(),
                gnuchess.clone(),
                "-o".into(),
                "no/x.bin".into(),
            ],
            "cannot write book 'no/x.bin': No such file or directory".into(),
        ),
        (
            vec![
                "lines".into(),
                gnuchess.clone(),
                "--color".into(),
                "white".into(),
                "-o".into(),
                "folder".into(),
            ],
            "cannot write 'folder': Is a directory".into(),
        ),
        (
            vec![
                "merge".into(),
                gnuchess.clone(),
                data("books/pychess.bin"),
                "-o".into(),
                full.join("x.bin"),
            ],
            format!(
                "cannot write book '{}': No space left on device",
                full.join("x.bin").display()
            ),
        ),
        (
            vec![
                "lines".into(),
                gnuchess.clone(),
                "--color".into(),
                "white".into(),
                "-o".into(),
                full.join("x.txt"),
            ],
            format!(
                "cannot write '{}': No space left on device",
                full.join("x.txt").display()
            ),
        ),
        (
            vec![
                "build".into(),
                bundled("world_matches.pgn"),
                "--min-games".into(),
                "1".into(),
                "--quiet".into(),
                "-o".into(),
                full.join("x.bin"),
            ],
            format!(
                "cannot write book '{}': No space left on device",
                full.join("x.bin").display()
            ),
        ),
    ];
    for (args, expected) in cases {
        let out = polybook().args(&args).current_dir(cd).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err, format!("polybook: error: {expected}\n"), "{args:?}");
        assert!(!err.contains(".polybook-"), "{err}");
        assert!(listing(full).is_empty(), "{args:?}: {:?}", listing(full));
    }
}
