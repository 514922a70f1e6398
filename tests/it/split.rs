//! `polybook split`: 10,024 lichess games cut into parts of 1,000 (the games per part counted
//! from the parts' text), the parts' tally the input's row for row, standard input, Ctrl-C and
//! `kill -9` mid-split (only complete parts under their names), and bad input.

use crate::common;
use common::{data, path_str as s, polybook, stderr};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use polybook::tally::TallyReader;

/// The parts in a folder, by name, each decompressed.
fn parts(dir: &Path) -> Vec<(String, String)> {
    common::sorted_paths(dir)
        .iter()
        .map(|p| {
            let bytes = zstd::decode_all(std::fs::File::open(p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, String::from_utf8(bytes).unwrap())
        })
        .collect()
}

/// A tally's rows as stored.
fn rows(path: &Path) -> Vec<polybook::builder::PairCount> {
    let mut reader = TallyReader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(p) = reader.next_pair().unwrap() {
        out.push(p);
    }
    out
}

fn split_ok(args: &[&str]) -> String {
    let o = polybook(args);
    assert!(o.status.success(), "polybook {args:?}: {}", stderr(&o));
    stderr(&o)
}

#[test]
fn parts_of_1000_games_tally_as_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let xz = data("pgn/lichess_magnus_2018-2022.pgn.xz");
    let said = split_ok(&["split", s(&xz), "--games", "1000", "-o", s(&d("parts"))]);
    assert_eq!(
        said.trim(),
        format!("{}: 10024 games in 11 parts", s(&d("parts")))
    );
    let got = parts(&d("parts"));
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    let want: Vec<String> = (0..11).map(|i| format!("part-{i:05}.pgn.zst")).collect();
    assert_eq!(names, want);
    for (i, (name, text)) in got.iter().enumerate() {
        let games = text.lines().filter(|l| l.starts_with("[Event ")).count();
        assert_eq!(games, if i < 10 { 1000 } else { 24 }, "{name}");
        assert!(text.starts_with("[Event "), "{name}");
    }
    // The parts are the input's bytes, in order.
    let mut whole = String::new();
    std::io::Read::read_to_string(
        &mut xz2::read::XzDecoder::new(std::fs::File::open(&xz).unwrap()),
        &mut whole,
    )
    .unwrap();
    assert!(got.iter().map(|(_, t)| t.as_str()).collect::<String>() == whole);

    // The folder of parts tallies as the input, row for row.
    split_ok(&["tally", "-q", s(&xz), "-o", s(&d("input.parquet"))]);
    split_ok(&["tally", "-q", s(&d("parts")), "-o", s(&d("parts.parquet"))]);
    assert!(rows(&d("input.parquet")) == rows(&d("parts.parquet")));

    // Standard input, plain, into parts of 4,000 at level 1.
    let plain = d("lichess.pgn");
    std::fs::write(&plain, &whole).unwrap();
    let o = Command::new(common::BIN)
        .args(["split", "-", "--games", "4000", "--level", "1", "-o"])
        .arg(d("stdin"))
        .stdin(std::fs::File::open(&plain).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got = parts(&d("stdin"));
    assert_eq!(got.len(), 3);
    assert!(got.iter().map(|(_, t)| t.as_str()).collect::<String>() == whole);
}

/// Ctrl-C stops a split within a second (exit 130); it and `kill -9` leave only complete parts,
/// under their final names, and nothing else.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_split_leaves_only_complete_parts() {
    let dir = tempfile::tempdir().unwrap();
    let games = data("pgn/gnuchess-book_1.02.pgn.xz");
    for signal in ["INT", "KILL"] {
        let out = dir.path().join(signal);
        // The slowest level: the split takes many seconds.
        let child = Command::new(common::BIN)
            .args(["split", s(&games), "--games", "2000", "--level", "19", "-o"])
            .arg(&out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while std::fs::read_dir(&out).map_or(0, |d| d.count()) == 0 {
            assert!(start.elapsed() < Duration::from_secs(60), "no part written");
            std::thread::sleep(Duration::from_millis(20));
        }
        common::signal_and_wait(child, signal, "interrupted");
        let got = parts(&out);
        assert!(
            !got.is_empty() && got.len() < 73,
            "{signal}: {} parts",
            got.len()
        );
        for (i, (name, text)) in got.iter().enumerate() {
            assert_eq!(name, &format!("part-{i:05}.pgn.zst"));
            let games = text.lines().filter(|l| l.starts_with("[Event ")).count();
            assert_eq!(games, 2000, "{signal}: {name}");
        }
    }
}

#[test]
fn bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let pgn = data("pgn/edge/pychess/bilbao.pgn");
    std::fs::create_dir(d("full")).unwrap();
    std::fs::write(d("full/x"), "").unwrap();
    std::fs::write(d("file"), "").unwrap();
    let book = common::gnuchess_book();
    let (missing, folder, full, out) = (
        d("missing.pgn"),
        data("pgn/edge/pychess"),
        d("full"),
        d("out"),
    );
    let cases: [(&[&str], i32, &str); 7] = [
        (&[s(&missing), "--games", "10"], 1, "No such file"),
        (&[s(&book), "--games", "10"], 1, "binary data, not PGN"),
        (&[s(&pgn), "--games", "0"], 2, "--games must be at least 1"),
        (
            &[s(&pgn), "--games", "10", "--level", "0"],
            2,
            "levels are 1 to 19",
        ),
        (&[s(&pgn), "--games", "-3"], 2, "-3"),
        (&[s(&folder), "--games", "10"], 2, "split cuts one file"),
        (&[s(&pgn), "--games", "1", "-o", s(&full)], 1, "not empty"),
    ];
    for (args, code, want) in cases {
        let mut all = vec!["split"];
        all.extend_from_slice(args);
        if !args.contains(&"-o") {
            all.extend(["-o", s(&out)]);
        }
        let o = polybook(&all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: {err}");
        assert!(
            err.lines().count() <= 2 && !err.contains("panicked"),
            "{err}"
        );
        assert!(!d("out").exists(), "{all:?}");
    }
    let o = polybook(&["split", s(&pgn), "--games", "1", "-o", s(&d("file"))]);
    common::assert_contains(&stderr(&o), "not a folder");
    // One part per game, as many as tally reads (four lichess games and two tag sections alone).
    let six = data("pgn/edge/rust-pgn-reader/rewrite-example.pgn");
    split_ok(&["split", "-q", s(&six), "--games", "1", "-o", s(&d("ok"))]);
    let report =
        common::polybook_json(&["tally", "-q", "--json", s(&six), "-o", s(&d("t.parquet"))]);
    assert_eq!(report["games"], 6);
    assert_eq!(parts(&d("ok")).len(), 6);
}
