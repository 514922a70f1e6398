//! The command line as a whole: what every command does with its standard output when the reader
//! goes away or the disk is full, how `-o` treats what is already at the path, what is left behind
//! after a signal, and the usage rules the commands share.

use crate::common;
use common::{bundled, data, failed, text};

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn polybook() -> Command {
    Command::new(env!("CARGO_BIN_EXE_polybook"))
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
            vec![p("lines"), book.clone(), p("--color"), p("white")],
        ),
        (
            "tally --format tsv -o -".into(),
            vec![
                p("tally"),
                bundled("dortmund.pgn"),
                p("--format"),
                p("tsv"),
                p("-o"),
                p("-"),
            ],
        ),
        (
            "export --pgn".into(),
            vec![p("export"), book.clone(), p("--pgn")],
        ),
        (
            "export --epd".into(),
            vec![p("export"), book.clone(), p("--epd"), p("--ply"), p("4")],
        ),
        (
            "probe --epd --json".into(),
            vec![
                p("probe"),
                book,
                p("--epd"),
                data("epd/wac.epd"),
                p("--json"),
            ],
        ),
    ]
}

/// Runs each of [`printing_commands`] with its outputs set up by `wire`; `check` gets the
/// command's name and what it did.
fn run_printing_commands(wire: impl Fn(&mut Command), check: impl Fn(&str, std::process::Output)) {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in printing_commands(dir.path()) {
        let mut command = polybook();
        command.args(&args);
        wire(&mut command);
        check(&name, command.output().unwrap());
    }
}

/// Into a full disk, every command says so in one line and exits 1; none panics.
#[test]
fn a_full_disk_on_standard_output_is_one_error_line() {
    let to_full_disk = |command: &mut Command| {
        let full = File::options().write(true).open("/dev/full").unwrap();
        command.stdout(Stdio::from(full));
    };
    run_printing_commands(to_full_disk, |name, out| {
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
    });
}

/// A pipe whose reader has gone.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

/// Into a pipe whose reader has gone (`polybook search | head -1`), every command stops quietly.
#[test]
fn a_closed_pipe_on_standard_output_ends_quietly() {
    let to_closed_pipe = |command: &mut Command| {
        command.stdout(Stdio::from(closed_pipe()));
    };
    run_printing_commands(to_closed_pipe, |name, out| {
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        assert!(
            !err.contains("error") && !err.contains("panicked"),
            "{name}: {err}"
        );
    });
}

/// With standard error into the same closed pipe (`polybook … 2>&1 | head -1`), nothing panics:
/// the commands stop quietly or, where their last words cannot be written, with exit 1.
#[test]
fn a_closed_pipe_on_both_outputs_never_panics() {
    let both_to_closed_pipe = |command: &mut Command| {
        let writer = closed_pipe();
        command.stdout(Stdio::from(writer.try_clone().unwrap()));
        command.stderr(Stdio::from(writer));
    };
    run_printing_commands(both_to_closed_pipe, |name, out| {
        let code = out.status.code();
        assert!(matches!(code, Some(0 | 1)), "{name}: {:?}", out.status);
    });
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
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    common::mkfifo(&fifo);
    let regular = dir.path().join("regular");
    for ((name, to_fifo), (_, to_file)) in writing_commands(&fifo)
        .into_iter()
        .zip(writing_commands(&regular))
    {
        let reader = common::read_fifo(&fifo);
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
    let mut child = common::piped()
        .args(["play", "--color", "white", "--movetime", "50", "--pgn"])
        .arg(&pgn)
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
    common::send_signal(child.id(), "TERM");
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{}: {err}", out.status);
    common::assert_contains(&err, "Interrupted; the game so far is in");
    let game = std::fs::read_to_string(&pgn).unwrap();
    common::assert_contains(&game, "1. e4 ");
    common::assert_contains(&game, "[Termination \"unterminated\"]");
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
    let g = gnuchess.to_str().unwrap();
    let (pychess, world) = (data("books/pychess.bin"), bundled("world_matches.pgn"));
    let (p, w) = (pychess.to_str().unwrap(), world.to_str().unwrap());
    let (full_bin, full_txt) = (full.join("x.bin"), full.join("x.txt"));
    let (bin, txt) = (full_bin.to_str().unwrap(), full_txt.to_str().unwrap());
    let no_space =
        |what: &str, path: &str| format!("cannot write {what}'{path}': No space left on device");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["probe", "missing.bin"],
            "cannot open book 'missing.bin': No such file or directory".into(),
        ),
        (
            vec!["lines", "missing.bin", "--color", "white"],
            "cannot open book 'missing.bin': No such file or directory".into(),
        ),
        (
            vec!["solve", "missing.epd"],
            "cannot read suite 'missing.epd': No such file or directory".into(),
        ),
        (
            vec!["probe", g, "--epd", "missing.epd"],
            "cannot open EPD file 'missing.epd': No such file or directory".into(),
        ),
        (
            vec!["merge", g, g, "-o", "no/x.bin"],
            "cannot write book 'no/x.bin': No such file or directory".into(),
        ),
        (
            vec!["lines", g, "--color", "white", "-o", "folder"],
            "cannot write 'folder': Is a directory".into(),
        ),
        (vec!["merge", g, p, "-o", bin], no_space("book ", bin)),
        (
            vec!["lines", g, "--color", "white", "-o", txt],
            no_space("", txt),
        ),
        (
            vec!["build", w, "--min-games", "1", "--quiet", "-o", bin],
            no_space("book ", bin),
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

/// A file that is not there gives the system's reason in every command's words, without the
/// ` (os error 2)` that Rust's I/O errors add: inputs of every kind (games, books, tallies,
/// suites, engines) and outputs into a folder that does not exist.
#[test]
fn a_missing_file_is_one_line_without_an_error_number() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/gnuchess.bin");
    let book = book.to_str().unwrap();
    let games = bundled("dortmund.pgn");
    let games = games.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["build", "nope.pgn", "-o", "x.bin"],
        &["build", games, "-o", "no/x.bin"],
        &["tally", "nope.pgn", "-o", "x.parquet"],
        &["tally", games, "-o", "no/x.parquet"],
        &["tally", games, "--format", "tsv", "-o", "no/x.tsv"],
        &["tally", "--merge", "nope.parquet", "-o", "x.parquet"],
        &["book", "nope.parquet", "-o", "x.bin"],
        &["learn", book, "nope.pgn", "-o", "x.bin"],
        &["tune", "nope.pgn", "-o", "p.txt"],
        &[
            "tune",
            games,
            "-o",
            "no/p.txt",
            "--positions",
            "100",
            "--epochs",
            "1",
        ],
        &["probe", "nope.bin"],
        &["dump", "nope.bin"],
        &["info", "nope.bin"],
        &["verify", "nope.bin"],
        &["sort", "nope.bin", "-o", "x.bin"],
        &["filter", book, "-o", "no/x.bin", "--max-ply", "2"],
        &["export", book, "--pgn", "-o", "no/x.pgn"],
        &["analyse", "nope.bin", "-o", "x.bin"],
        &["solve", "nope.epd"],
        &["explore", "--tally", "nope.parquet"],
        &[
            "match",
            "--engine",
            "builtin",
            "--engine",
            "cmd:nope-engine",
            "--games",
            "1",
        ],
    ];
    for args in cases {
        let out = polybook()
            .args(*args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("No such file or directory"), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
}

use common::{polybook as run, polybook_in as run_with_input};

/// White mates in one with Ra8#.
const MATE_IN_ONE: &str = "6k1/5ppp/8/8/8/8/8/R5K1 w - -";

/// `solve` gates CI: exit 1 unless every task is solved (or `--min-solved N` are); a file with no
/// valid task is an error.
#[test]
fn solve_fails_unless_enough_tasks_are_solved() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite.epd");
    // The first task is solved by any search (the mate); the second, which asks to avoid the
    // mate, by none.
    std::fs::write(
        &suite,
        format!("{MATE_IN_ONE} bm Ra8#; id \"mate\";\n{MATE_IN_ONE} am Ra8#; id \"avoid\";\n"),
    )
    .unwrap();
    let suite = suite.to_str().unwrap();
    let out = run(&["solve", suite, "--depth", "3"]);
    failed(&out, 1, "polybook: error: solved 1 of 2 positions");
    assert_eq!(text(&out.stdout).lines().last(), Some("solved 1/2"));
    let out = run(&["solve", suite, "--depth", "3", "--min-solved", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(&["solve", suite, "--depth", "3", "--first", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let empty = common::write_file(dir.path(), "empty.epd", "not a position\n");
    let out = run(&["solve", empty.to_str().unwrap()]);
    failed(&out, 1, "no valid task (1 line(s) skipped)");
}

/// One rule for limits in `search`, `solve`, `play` and `match`: --depth, --nodes and
/// --movetime combine (the first reached ends the search, as UCI's `go depth 2 movetime 60000`);
/// 0 is a usage error.
#[test]
fn limits_combine_alike_and_zero_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let suite = common::write_file(dir.path(), "suite.epd", format!("{MATE_IN_ONE} bm Ra8#;\n"));
    let suite = suite.to_str().unwrap();
    let both = [
        "--depth",
        "2",
        "--nodes",
        "100000000",
        "--movetime",
        "600000",
    ];
    let commands: [Vec<&str>; 4] = [
        vec!["search"],
        vec!["solve", suite],
        vec!["play", "--pgn", "g.pgn"],
        vec![
            "match", "--engine", "builtin", "--engine", "builtin", "--games", "2", "--quiet",
        ],
    ];
    for command in &commands {
        let args: Vec<&str> = command.iter().chain(both.iter()).copied().collect();
        let out = run_with_input(dir.path(), &args, "e4\nquit\n");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        for zero in ["--depth", "--nodes", "--movetime"] {
            let args: Vec<&str> = command.iter().copied().chain([zero, "0"]).collect();
            let out = run_with_input(dir.path(), &args, "quit\n");
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains("must be at least 1"), "{args:?}: {err}");
        }
    }
    // The depth limit was the one reached: the last search went to depth 2.
    let out = run(&["search", "--depth", "2", "--movetime", "600000"]);
    let info = text(&out.stdout);
    let last = info.lines().rfind(|l| l.starts_with("info depth"));
    assert!(last.unwrap().starts_with("info depth 2 "), "{info}");
    // Clocks stand alone: --tc with a fixed budget is a usage error in both.
    for command in [&commands[2], &commands[3]] {
        let args: Vec<&str> = command
            .iter()
            .copied()
            .chain(["--tc", "10+0.1", "--depth", "2"])
            .collect();
        let out = run_with_input(dir.path(), &args, "quit\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// `match` explains a bare engine name, a single engine, and shows its default time control.
#[test]
fn match_explains_engine_mistakes_and_its_defaults() {
    let out = run(&["match", "--engine", "stockfish", "--engine", "builtin"]);
    failed(&out, 2, "did you mean 'cmd:stockfish'?");
    let out = run(&["match", "--engine", "builtin"]);
    failed(&out, 2, "two engines are needed, one was given");
    let help = text(&run(&["match", "--help"]).stdout);
    common::assert_contains(&help, "[default: 10+0.1");
}

/// Choices are case-insensitive: `--color White` is `--color white`.
#[test]
fn choices_ignore_case() {
    let book = data("books/rodent3_small.bin");
    let lines = |color: &str| {
        let out = polybook()
            .arg("lines")
            .arg(&book)
            .args(["--color", color])
            .output()
            .unwrap();
        assert!(out.status.success(), "{color}: {}", text(&out.stderr));
        out.stdout
    };
    assert!(lines("White") == lines("white"));
    assert!(lines("BLACK") == lines("black"));
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_input(
        dir.path(),
        &["play", "--color", "Black", "--depth", "1", "--no-pgn"],
        "quit\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::assert_contains(&text(&out.stdout), "you are Black");
}

/// `probe --json` on one position prints one compact JSON line.
#[test]
fn probe_json_is_one_line() {
    let out = run(&[
        "probe".as_ref(),
        data("books/gnuchess.bin").as_os_str(),
        "--json".as_ref(),
    ]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["key"], "463b96181691fc9c");
}

/// On a mate or a stalemate, `search` ends as Stockfish does: an `info depth 0` line with the
/// same score (`mate 0`, `cp 0`), then the null move.
#[test]
fn search_says_mate_or_stalemate_before_the_null_move() {
    use std::io::Write;
    for fen in [
        "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
        "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    ] {
        let mut sf = Command::new(common::stockfish())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        writeln!(
            sf.stdin.as_mut().unwrap(),
            "position fen {fen}\ngo depth 5\nisready\nquit"
        )
        .unwrap();
        let sf = text(&sf.wait_with_output().unwrap().stdout);
        let sf_score = sf
            .lines()
            .find(|l| l.starts_with("info depth 0 score "))
            .unwrap_or_else(|| panic!("{sf}"));
        let out = run(&["search", "--fen", fen]);
        let ours = text(&out.stdout);
        let lines: Vec<&str> = ours.lines().collect();
        assert_eq!(lines.last(), Some(&"bestmove 0000"), "{ours}");
        let info = lines[lines.len() - 2];
        assert!(info.starts_with(sf_score), "{info} / {sf_score}");
        assert!(info.contains("string checkmate") || info.contains("string stalemate"));
    }
}

/// Usage errors are one or two lines: what is wrong, then the usage line.
#[test]
fn usage_errors_are_one_or_two_lines() {
    for args in [
        &["search", "--bogus"][..],
        &["search", "--depth", "abc"],
        &["play", "--color", "purple"],
        &["lines"],
        &["nosuchcommand"],
    ] {
        let out = run(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert!((1..=2).contains(&lines.len()), "{args:?}: {err}");
        assert!(lines[0].starts_with("polybook: error: "), "{args:?}: {err}");
    }
    // What is missing is named.
    let err = text(&run(&["lines"]).stderr);
    assert!(
        err.starts_with(
            "polybook: error: the following required arguments were not provided: --color <COLOR>, <BOOK>\n"
        ),
        "{err}"
    );
}

/// A hash table larger than the machine's free memory is refused by every command that takes
/// `--hash` (or `--set Hash`) before anything starts: one line and a usage error's code, no
/// abort and no backtrace.
#[test]
fn a_hash_the_machine_cannot_give_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/gnuchess.bin");
    let wac = data("epd/wac.epd");
    let out = dir.path().join("out.bin");
    let (book, wac, out) = (
        book.to_str().unwrap(),
        wac.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let huge = "100000000";
    let commands: [&[&str]; 6] = [
        &["search", "--hash", huge, "--depth", "3"],
        &["search", "--set", "Hash=33554432", "--depth", "3"],
        &["bench", "--hash", huge],
        &["solve", wac, "--hash", huge, "--first", "1"],
        &["play", "--hash", huge, "--no-pgn"],
        &["analyse", book, "-o", out, "--hash", huge],
    ];
    for args in commands {
        let run = run_with_input(dir.path(), args, "quit\n");
        let err = common::one_error_line(&run, 2, "polybook: error: a hash table of ");
        assert!(
            err.contains(" MB is more than this machine can give ("),
            "{args:?}: {err}"
        );
    }
    assert!(!dir.path().join("out.bin").exists());
    // Engines at once each have their table: together they must fit.
    let run = run_with_input(
        dir.path(),
        &[
            "analyse",
            book,
            "-o",
            out,
            "--hash",
            "4194304",
            "--concurrency",
            "8",
        ],
        "",
    );
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    common::assert_contains(&err, "8 hash tables of 4194304 MB are more than");
}

/// A table the system refuses (here an address-space limit far below the table) is one error
/// line and a failure's code, not an abort.
#[cfg(target_os = "linux")]
#[test]
fn a_hash_the_system_refuses_is_one_error_line() {
    let run = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 400000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_polybook"))
        .args(["search", "--hash", "1024", "--depth", "3"])
        .output()
        .unwrap();
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "polybook: error: cannot allocate a hash table of 1024 MB: out of memory\n"
    );
    assert!(run.stdout.is_empty());
}

/// `polybook` with no command prints one hint when a person runs it in a terminal, and nothing
/// new for a GUI (pipes).
#[test]
fn no_command_hints_in_a_terminal_only() {
    // Pipes, as a GUI starts it: UCI on stdout and nothing on stderr.
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_input(dir.path(), &[], "uci\nquit\n");
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("uciok"));
    assert_eq!(text(&out.stderr), "");
    // A terminal (tmux): the hint, once, on stderr.
    let tmux = Command::new("tmux").arg("-V").output();
    assert!(
        tmux.is_ok_and(|o| o.status.success()),
        "reference tool missing: tmux (apt-get install -y tmux), or run ./test.sh"
    );
    let err = dir.path().join("stderr.txt");
    let socket = dir.path().join("tmux.sock");
    let script = format!(
        "'{}' 2>'{}' </dev/tty",
        env!("CARGO_BIN_EXE_polybook"),
        err.display()
    );
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(args)
            .output()
            .unwrap()
    };
    let started = tmux(&["new-session", "-d", "-s", "hint", &script]);
    assert!(started.status.success(), "{}", text(&started.stderr));
    let hint = "polybook speaks UCI here; type 'uci', or run 'polybook --help'\n";
    let seen = common::wait_for_text(&err, 100, std::time::Duration::from_millis(50));
    tmux(&["send-keys", "-t", "hint", "quit", "Enter"]);
    tmux(&["kill-server"]);
    assert_eq!(seen, hint);
}

/// `play --no-pgn` writes no file; the default still writes one.
#[test]
fn play_no_pgn_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_input(
        dir.path(),
        &["play", "--depth", "1", "--no-pgn"],
        "e4\nresign\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("The game is in"));
    assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
    let out = run_with_input(dir.path(), &["play", "--depth", "1"], "e4\nresign\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(listing(dir.path()).len(), 1);
}

/// A 10,000-character FEN or move is quoted by its start and its length, not printed back.
#[test]
fn long_input_is_quoted_short() {
    let long_fen = "r".repeat(10_000);
    let long_move = "e".repeat(10_000);
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["key", "--fen", &long_fen],
        vec!["key", "--moves", &long_move],
        vec!["search", "--fen", &long_fen],
        vec!["perft", "1", "--moves", &long_move],
        vec!["play", "--fen", &long_fen],
        vec!["match", "--engine", &long_move, "--engine", "builtin"],
    ] {
        let out = run_with_input(dir.path(), &args, "");
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{}", &args[0]);
        assert!(err.len() < 400, "{}: {} bytes: {err}", args[0], err.len());
        assert!(err.contains("(10,000 characters)"), "{}: {err}", args[0]);
    }
    // UCI answers a long position command in one short line.
    let out = run_with_input(
        dir.path(),
        &["uci"],
        &format!("position fen {long_fen}\nposition startpos moves {long_move}\nisready\nquit\n"),
    );
    let answer = text(&out.stdout);
    let infos = common::lines_starting(&answer, "info string");
    assert_eq!(infos.len(), 2, "{answer}");
    assert!(
        infos
            .iter()
            .all(|l| l.len() < 400 && l.contains("(10,000 characters)")),
        "{infos:?}"
    );
}

/// SIGTERM stops `build` as Ctrl-C does (exit 130, or 0 if it had finished): never killed by
/// the signal, and nothing left beside the output.
#[test]
fn sigterm_stops_build_cleanly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let target = dir.path().join("book.bin");
    let child = polybook()
        .arg("build")
        .arg(data("pgn/lichess_magnus_2018-2022.pgn.xz"))
        .arg("-o")
        .arg(&target)
        .arg("--temp-dir")
        .arg(spill.path())
        .args(["--quiet", "--memory", "1M"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Past the start, where the handler is installed.
    std::thread::sleep(std::time::Duration::from_millis(300));
    common::send_signal(child.id(), "TERM");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), None, "killed by a signal");
    assert!(
        matches!(out.status.code(), Some(0 | 130)),
        "{:?}: {}",
        out.status,
        text(&out.stderr)
    );
    let left = listing(dir.path());
    assert!(left.is_empty() || left == ["book.bin"], "{left:?}");
    if out.status.code() == Some(130) {
        assert!(left.is_empty(), "an interrupted build wrote {left:?}");
    }
}

/// `play --pgn` onto a FIFO writes the game into it (it is not read back first, nor replaced).
#[test]
fn play_pgn_onto_a_fifo_streams_the_game() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("games");
    common::mkfifo(&fifo);
    let reader = common::read_fifo(&fifo);
    let out = run_with_input(
        dir.path(),
        &["play", "--depth", "1", "--pgn", "games"],
        "e4\nresign\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let game = text(&reader.join().unwrap());
    assert!(game.starts_with("[Event \"polybook play\"]"), "{game}");
    common::assert_contains(&game, "1. e4 ");
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo());
    assert_eq!(listing(dir.path()), ["games"]);
}

/// `perft` takes its depth as `search` does (`--depth N`) or alone (`perft N`): the same counts;
/// both or neither is a usage error.
#[test]
fn perft_takes_its_depth_either_way() {
    for (args, count) in [
        (&["perft", "3"][..], "8902"),
        (&["perft", "--depth", "3"], "8902"),
        (&["perft", "--depth", "2", "--moves", "e4"], "600"),
        (&["perft", "--moves", "e4", "--depth=1", "--divide"], "20"),
    ] {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert_eq!(stdout.lines().last(), Some(count), "{args:?}: {stdout}");
    }
    for (args, what) in [
        (&["perft", "3", "--depth", "3"][..], "cannot be used with"),
        (&["perft"], "required"),
        (&["perft", "--depth", "x"], "invalid value"),
    ] {
        let out = run(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("polybook: error: ") && err.contains(what),
            "{args:?}: {err}"
        );
        assert!(err.lines().count() <= 2, "{args:?}: {err}");
    }
}
