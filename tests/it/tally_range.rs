//! `polybook tally FILE --range START:END`: the tallies of the ranges of any cut of a file,
//! summed in order, are the whole file's tally row for row (`first` included), on edge files cut
//! at every offset and on 10,024 lichess games cut at arbitrary offsets; and bad ranges.

use crate::common;
use common::{data, path_str as s, polybook, stderr, stdout};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use polybook::builder::{BuildError, BuildOptions, PairCount};
use polybook::pgn::input::Input;
use polybook::tally::{TallyError, TallyReader, tally_pgn};

/// The rows of a tally file as stored, and its count of games.
fn rows(path: &Path) -> (Vec<PairCount>, u64) {
    let mut reader = TallyReader::open(path).unwrap();
    let games = reader.meta().games;
    let mut out = Vec::new();
    while let Some(p) = reader.next_pair().unwrap() {
        out.push(p);
    }
    (out, games)
}

/// Tallies `input` into `out` in process (one parser thread: these inputs are small); `false`
/// when the input has no usable game (only a whole file can fail so).
fn tally(input: &Input, out: &Path) -> bool {
    let opts = BuildOptions {
        threads: 1,
        ..BuildOptions::default()
    };
    match tally_pgn(
        std::slice::from_ref(input),
        out,
        &opts,
        &AtomicBool::new(false),
        &(),
    ) {
        Ok(_) => true,
        Err(TallyError::Build(BuildError::NoUsableGame { .. })) => {
            assert!(matches!(input, Input::File(_)), "{input:?}");
            false
        }
        Err(e) => panic!("{}: {e}", input.name()),
    }
}

/// Cuts `path` in two at every offset k (and past its end): [0, k) and [k, end) abut, and their
/// tallies summed are the whole file's.
fn every_cut_adds_up(path: &Path, dir: &Path) {
    let len = std::fs::metadata(path).unwrap().len();
    let whole_file = dir.join("whole.parquet");
    let whole = if tally(&Input::File(path.to_path_buf()), &whole_file) {
        rows(&whole_file)
    } else {
        (Vec::new(), 0)
    };
    // A range's tally depends only on the bytes it reads: each is made once.
    let mut made: HashMap<(u64, u64), PathBuf> = HashMap::new();
    let mut tally_of = |input: Input| -> PathBuf {
        let Input::Range { start, end, .. } = input else {
            panic!("{input:?}")
        };
        made.entry((start, end))
            .or_insert_with(|| {
                let out = dir.join(format!("{start}-{end}.parquet"));
                assert!(tally(&input, &out));
                out
            })
            .clone()
    };
    for k in 0..=len + 1 {
        let a = Input::range(path, 0, Some(k)).unwrap();
        let b = Input::range(path, k, None).unwrap();
        match (&a, &b) {
            (
                Input::Range { start: 0, end, .. },
                Input::Range {
                    start, end: last, ..
                },
            ) => {
                assert_eq!(
                    end,
                    start,
                    "{}: cut at {k}: the ranges do not abut",
                    path.display()
                );
                assert_eq!(*last, len);
            }
            _ => panic!("{}: cut at {k}: {a:?} {b:?}", path.display()),
        }
        let (a, b) = (tally_of(a), tally_of(b));
        let sum = common::summed_tallies(&[&a, &b]);
        assert!(
            sum == whole,
            "{}: cut at {k}: the halves' tallies summed differ from the whole file's",
            path.display()
        );
    }
}

/// Games whose clock comments run over lines that start with `[%clk`: real lichess games with
/// each comment's clock moved to a line of its own (one that looks like a tag to nobody, since
/// it has no name before a quote), and a comment line that reads like a tag after it.
fn clock_lines() -> String {
    let text = std::fs::read_to_string(data("pgn/edge/rust-pgn-reader/rewrite-example.pgn"))
        .unwrap()
        .replace(" { [%clk", " {\n[%clk");
    text.replacen("} 1-0", "\n[Event \"inside a comment\"]\n} 1-0", 1)
}

#[test]
fn every_cut_of_edge_files_adds_up_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let made = |name: &str, text: &str| common::write_file(&dir, name, text);
    let clocks = clock_lines();
    let mut files = vec![
        made("clock-lines.pgn", &clocks),
        made("clock-lines-crlf.pgn", &clocks.replace('\n', "\r\n")),
        // No blank line anywhere, no tag at the start, no line break at the end.
        made(
            "packed.pgn",
            "1. e4 e5 2. Nf3 *\n[Event \"a\"]\n[Result \"1-0\"]\n1. d4 d5 { a\n[%clk 0:01] } 2. c4 1-0\n[Event \"b\"]\n1. c4 e5 0-1",
        ),
    ];
    for edge in [
        "pychess/bilbao.pgn",                            // CRLF
        "rust-pgn-reader/rewrite-example.pgn",           // lichess clocks in comments
        "pgn-extract/test-nobadresults.pgn",             // tags and moves on one line, no blanks
        "pgn-extract/nested-comment.pgn",                // no tag at the start
        "python-chess/utf8-bom.pgn",                     // a byte-order mark first
        "python-chess/variations-nags-and-comments.pgn", // variations
        "python-chess/chessbase-empty-line.pgn",
        "pychess/badpgn.pgn", // no usable game
        "pgn-extract/test-fifty.pgn",
    ] {
        files.push(data(&format!("pgn/edge/{edge}")));
    }
    for file in &files {
        let work = tempfile::tempdir().unwrap();
        every_cut_adds_up(file, work.path());
    }
}

/// The lichess games (39 MB), decompressed once for the tests that need a plain file.
fn lichess_plain(dir: &Path) -> PathBuf {
    let path = dir.join("lichess.pgn");
    let mut out = std::fs::File::create(&path).unwrap();
    let xz = std::fs::File::open(data("pgn/lichess_magnus_2018-2022.pgn.xz")).unwrap();
    std::io::copy(&mut xz2::read::XzDecoder::new(xz), &mut out).unwrap();
    path
}

/// Tallies `pgn` (only `range` of it, if given) into `out` with `tally --json`; the games counted.
fn tally_games(pgn: &Path, range: Option<&str>, out: &Path) -> u64 {
    let mut args = vec!["tally", "-q", "--json", s(pgn)];
    args.extend(range.iter().flat_map(|r| ["--range", *r]));
    args.extend(["-o", s(out)]);
    json_games(&polybook(&args))
}

fn json_games(out: &std::process::Output) -> u64 {
    assert!(out.status.success(), "{}", stderr(out));
    let report: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
    report["games"].as_u64().unwrap()
}

/// 10,024 games cut into 2, 3, 7 and 16 ranges at arbitrary offsets by the command: the ranges'
/// tallies merged in order (`tally --merge`) are the whole file's, and their games add up.
#[test]
fn ranges_of_a_real_file_add_up_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let pgn = lichess_plain(dir.path());
    let len = std::fs::metadata(&pgn).unwrap().len();
    let whole = d("whole.parquet");
    let games = tally_games(&pgn, None, &whole);
    assert_eq!(games, 10_024);
    let want = rows(&whole);
    let mut rng = common::XorShift(0x9e37_79b9_7f4a_7c15);
    for pieces in [2, 3, 7, 16] {
        let mut cuts: Vec<u64> = (1..pieces).map(|_| 1 + rng.below(len - 1)).collect();
        cuts.sort_unstable();
        let bounds: Vec<u64> = [0].into_iter().chain(cuts).collect();
        let mut parts = Vec::new();
        let mut counted = 0;
        for (i, &start) in bounds.iter().enumerate() {
            // The last range as `START:`, the others as `START:END`.
            let range = match bounds.get(i + 1) {
                Some(end) => format!("{start}:{end}"),
                None => format!("{start}:"),
            };
            let part = d(&format!("part-{i}.parquet"));
            counted += tally_games(&pgn, Some(&range), &part);
            parts.push(part);
        }
        assert_eq!(counted, games, "{pieces} ranges");
        let merged = d("merged.parquet");
        let mut args = vec!["tally", "-q", "--merge", "-o", s(&merged)];
        args.extend(parts.iter().map(|p| s(p)));
        let out = polybook(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(rows(&merged) == want, "{pieces} ranges: the sum differs");
        // Range 0:len is the whole file; a range past the end reads nothing.
        if pieces == 2 {
            let all = d("all.parquet");
            let n = tally_games(&pgn, Some(&format!("0:{}", len + 5)), &all);
            assert_eq!((n, rows(&all)), (games, want.clone()));
            let none = d("none.parquet");
            let n = tally_games(&pgn, Some(&format!("{len}:")), &none);
            assert_eq!((n, rows(&none)), (0, (Vec::new(), 0)));
        }
    }
}

/// Bad ranges and inputs that cannot be read from an offset: one line, exit 2, nothing written.
#[test]
fn bad_ranges_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.parquet");
    let plain = data("pgn/edge/pychess/bilbao.pgn");
    let xz = data("pgn/lichess_magnus_2018-2022.pgn.xz");
    let cases: [(&[&str], &str); 9] = [
        (&[s(&plain), "--range", "10:5"], "END is before START"),
        (&[s(&plain), "--range", "abc"], "not START:END"),
        (&[s(&plain), "--range", "-5:10"], "whole numbers"),
        (&[s(&plain), "--range", "5:x"], "whole numbers"),
        (&[s(&plain), "--range", ""], "not START:END"),
        (&[s(&xz), "--range", "0:100"], "compressed (xz)"),
        (&["-", "--range", "0:100"], "standard input"),
        (&[s(&plain), s(&plain), "--range", "0:100"], "one PGN file"),
        (&[s(dir.path()), "--range", "0:100"], "not one"),
    ];
    for (args, want) in cases {
        let mut all = vec!["tally", "-o", s(&out)];
        all.extend_from_slice(args);
        let o = polybook(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: {err}");
        assert!(!out.exists());
    }
    let o = polybook(&["tally", "--merge", s(&out), "--range", "0:1", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `world_matches.pgn` with a comment of `nuls` NUL bytes before the first move of its first game
/// that starts at or after byte `after`: the file, and where the NULs start.
fn with_nuls(dir: &Path, after: usize, nuls: usize) -> (PathBuf, usize) {
    let mut text = std::fs::read(common::bundled("world_matches.pgn")).unwrap();
    let game = after
        + text[after..]
            .windows(8)
            .position(|w| w == b"[Event \"")
            .unwrap();
    let moves = game + text[game..].windows(3).position(|w| w == b"\n1.").unwrap() + 1;
    let mut comment = b"{".to_vec();
    comment.extend(std::iter::repeat_n(0u8, nuls));
    comment.extend_from_slice(b"} ");
    text.splice(moves..moves, comment);
    (common::write_file(dir, "nuls.pgn", text), moves + 1)
}

/// One rule for binary data, whole file and ranges alike: a run of NUL bytes in a comment far
/// into a file (its start is text) is read by the whole file's tally and by every range, and the
/// ranges summed are the whole, wherever the cut; a file whose start is binary is refused by the
/// whole tally and by a range far past its start alike, at the same byte, counted from the file's
/// start.
#[test]
fn binary_bytes_are_judged_alike_whole_and_in_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let (pgn, nuls_at) = with_nuls(dir.path(), 200_000, 4000);
    let whole_file = dir.path().join("whole.parquet");
    assert!(tally(&Input::File(pgn.clone()), &whole_file));
    let whole = rows(&whole_file);
    for k in [
        nuls_at - 3000,
        nuls_at - 10,
        nuls_at,
        nuls_at + 2000,
        nuls_at + 5000,
    ] {
        let k = k as u64;
        let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
        assert!(tally(&Input::range(&pgn, 0, Some(k)).unwrap(), &a));
        assert!(tally(&Input::range(&pgn, k, None).unwrap(), &b));
        assert!(common::summed_tallies(&[&a, &b]) == whole, "cut at {k}");
    }
    // The same through the command, and `--merge`.
    let at = format!("{}:", nuls_at - 100);
    let upto = format!("0:{}", nuls_at - 100);
    let (a, b) = (dir.path().join("ca.parquet"), dir.path().join("cb.parquet"));
    for (range, out) in [(&upto, &a), (&at, &b)] {
        let o = polybook(&["tally", "-q", s(&pgn), "--range", range, "-o", s(out)]);
        assert!(o.status.success(), "--range {range}: {}", stderr(&o));
    }
    let merged = dir.path().join("merged.parquet");
    let o = polybook(&["tally", "-q", "--merge", s(&a), s(&b), "-o", s(&merged)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(rows(&merged) == whole);

    let (binary, nuls_at) = with_nuls(dir.path(), 0, 4000);
    let out = dir.path().join("refused.parquet");
    let byte = format!("control bytes from byte {nuls_at} on");
    for range in [None, Some("0:"), Some("300000:"), Some("400000:500000")] {
        let mut args = vec!["tally", "-q", s(&binary), "-o", s(&out)];
        args.extend(range.iter().flat_map(|r| ["--range", *r]));
        let o = polybook(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{range:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{range:?}: {err}");
        assert!(
            err.contains("binary data") && err.contains(&byte),
            "{range:?}: {err}"
        );
        assert!(!out.exists());
    }
}
