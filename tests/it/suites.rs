//! `export --epd/--pgn` suites as testers make them (`--plies`, `--min-games`, `--material`,
//! `--draw-rate`, `--shuffle`, compressed outputs, EPD opcodes) against python-chess
//! (`tests/suites_check.py`), and the WDL model of `--draw-rate` against its fit.

use std::path::{Path, PathBuf};

use crate::common;
use common::path_str as s;
use common::{data, polybook_fails, polybook_ok, python};
use polybook::inspect::wdl::WdlModel;

/// `tests/suites_check.py`, after the helpers it shares with the other suite reference.
const SUITES_CHECK: &str = concat!(
    include_str!("../suite_reference.py"),
    include_str!("../suites_check.py")
);

/// The bundled world-championship games, their book and their tally, in `dir`.
fn games_book_tally(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let games = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("pgn/world_matches.pgn");
    let (book, tally) = (dir.join("wm.bin"), dir.join("wm.parquet"));
    polybook_ok(&["build", s(&games), "-o", s(&book)]);
    polybook_ok(&["tally", s(&games), "-o", s(&tally)]);
    (games, book, tally)
}

#[test]
fn suites_at_plies_with_filters_are_the_positions_python_chess_finds() {
    let dir = tempfile::tempdir().unwrap();
    let (games, book, tally) = games_book_tally(dir.path());
    let (epd, pgn) = (dir.path().join("s.epd"), dir.path().join("s.pgn"));
    // (plies, --material, --min-games, --shuffle's seed)
    for (plies, material, min_games, seed) in [
        ("3-6", "-", "-", "-"),
        ("4-8", "-", "5", "-"),
        ("2-10", "queens", "-", "-"),
        ("2-12", "BBbbNn", "3", "-"),
        ("6-10", "-", "20", "4"),
        ("0-5", "-", "-", "9"),
    ] {
        let mut more = vec!["--plies", plies];
        if material != "-" {
            more.extend(["--material", material]);
        }
        if min_games != "-" {
            more.extend(["--min-games", min_games, "--tally", s(&tally)]);
        }
        if seed != "-" {
            more.extend(["--shuffle", "--seed", seed]);
        }
        let epd_args = [
            &["export", s(&book), "--epd", "--opcodes", "-o", s(&epd)][..],
            &more,
        ]
        .concat();
        let pgn_args = [&["export", s(&book), "--pgn", "-o", s(&pgn)][..], &more].concat();
        polybook_ok(&epd_args);
        polybook_ok(&pgn_args);
        let (first, last) = plies.split_once('-').unwrap();
        let mut check = vec![
            "suite",
            s(&book),
            first,
            last,
            material,
            s(&games),
            min_games,
        ];
        check.extend([s(&epd), s(&pgn)]);
        if seed != "-" {
            check.push("shuffled");
        }
        let line = python(SUITES_CHECK, &check);
        let n: u64 = line.trim().trim_start_matches("openings ").parse().unwrap();
        assert!(n >= 10, "{plies} {material} {min_games}: {line}");
    }
}

#[test]
fn ply_n_is_plies_n_n_and_shuffles_are_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let (_, book, _) = games_book_tally(dir.path());
    let run = |more: &[&str]| {
        let out = dir.path().join("x.epd");
        polybook_ok(&[&["export", s(&book), "--epd", "-o", s(&out)][..], more].concat());
        std::fs::read_to_string(&out).unwrap()
    };
    let ply = run(&["--ply", "6"]);
    assert_eq!(run(&["--plies", "6-6"]), ply);
    assert_eq!(run(&["--plies", "6"]), ply);
    // No opcodes unless asked: four fields a line, as before.
    assert!(ply.lines().all(|l| l.split(' ').count() == 4), "{ply}");
    let shuffled = run(&["--plies", "4-8", "--shuffle", "--seed", "5"]);
    assert_eq!(
        run(&["--plies", "4-8", "--shuffle", "--seed", "5"]),
        shuffled
    );
    let other = run(&["--plies", "4-8", "--shuffle", "--seed", "6"]);
    let plain = run(&["--plies", "4-8"]);
    assert_ne!(other, shuffled);
    assert_ne!(plain, shuffled);
    let sorted = |t: &str| {
        let mut v: Vec<String> = t.lines().map(str::to_string).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(&shuffled), sorted(&plain));
    assert_eq!(sorted(&other), sorted(&plain));
}

#[test]
fn gz_and_zip_outputs_read_back_with_python() {
    let dir = tempfile::tempdir().unwrap();
    let (_, book, _) = games_book_tally(dir.path());
    for format in ["epd", "pgn"] {
        let plain = dir.path().join(format!("suite.{format}"));
        let flag = format!("--{format}");
        polybook_ok(&["export", s(&book), &flag, "--plies", "2-6", "-o", s(&plain)]);
        for ext in ["gz", "zip"] {
            let packed = dir.path().join(format!("suite.{format}.{ext}"));
            polybook_ok(&[
                "export",
                s(&book),
                &flag,
                "--plies",
                "2-6",
                "-o",
                s(&packed),
            ]);
            let read = python(
                "import gzip, sys, zipfile\n\
                 path, ext = sys.argv[1], sys.argv[2]\n\
                 if ext == 'gz':\n    data = gzip.open(path).read()\n\
                 else:\n    z = zipfile.ZipFile(path)\n    assert z.testzip() is None\n    \
                 [name] = z.namelist()\n    print(name)\n    data = z.read(name)\n\
                 sys.stdout.write(data.decode())\n",
                &[s(&packed), ext],
            );
            let text = std::fs::read_to_string(&plain).unwrap();
            let expected = match ext {
                "zip" => format!("suite.{format}\n{text}"),
                _ => text,
            };
            assert_eq!(read, expected, "suite.{format}.{ext}");
        }
    }
}

#[test]
fn bad_suite_options_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (_, book, _) = games_book_tally(dir.path());
    let b = s(&book);
    polybook_fails(&["export", b, "--epd", "--plies", "5-3"], 2, "5 is above 3");
    polybook_fails(&["export", b, "--epd", "--plies", "x"], 2, "--plies");
    // clap's own refusals: the error line, then the usage line.
    for (args, what) in [
        (&["--ply", "4", "--plies", "4-5"][..], "--plies"),
        (&["--material", "Qq"], "--ply"),
        (&["--ply", "4", "--seed", "3"], "--shuffle"),
    ] {
        let out = common::polybook(&[&["export", b, "--epd"][..], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = common::stderr(&out);
        assert!(
            err.starts_with("polybook: error: ") && err.lines().next().unwrap().contains(what),
            "{err}"
        );
    }
    // Refusals of a suite at ply 4 with one more option.
    for (option, code, what) in [
        (
            &["--draw-rate", "40-50"][..],
            1,
            "has no scores for --draw-rate",
        ),
        (&["--draw-rate", "50-40"], 2, "above"),
        (&["--min-games", "3"], 2, "--tally"),
        (&["--material", "Qz"], 2, "unknown --material"),
    ] {
        let args = [&["export", b, "--epd", "--ply", "4"][..], option].concat();
        polybook_fails(&args, code, what);
    }
    let missing = dir.path().join("none/suite.epd.zip");
    polybook_fails(
        &["export", b, "--epd", "--ply", "4", "-o", s(&missing)],
        1,
        "cannot write",
    );
    assert!(!missing.exists());
    let no_tally = dir.path().join("none.parquet");
    let tally_args = [
        "export",
        b,
        "--epd",
        "--ply",
        "4",
        "--min-games",
        "1",
        "--tally",
        s(&no_tally),
    ];
    let err = polybook_fails(&tally_args, 1, "none.parquet");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn draw_rate_keeps_the_positions_the_model_puts_in_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("micro-scored.bin");
    let raw = data("books/rodent3_micro.bin");
    polybook_ok(&common::analyse_args(&raw, &book, "600", &[]));
    let (full, kept) = (dir.path().join("full.epd"), dir.path().join("kept.epd"));
    let model = WdlModel::SELFPLAY;
    let (a, b) = (model.a.to_string(), model.b.to_string());
    for (plies, window) in [("4-8", "30.3-30.45"), ("6", "0-30.3"), ("2-6", "30.45-100")] {
        // The same suite without and with the window.
        let suite = ["export", s(&book), "--epd", "--opcodes", "--plies", plies];
        polybook_ok(&[&suite[..], &["-o", s(&full)]].concat());
        polybook_ok(&[&suite[..], &["--draw-rate", window, "-o", s(&kept)]].concat());
        let (lo, hi) = window.split_once('-').unwrap();
        let line = python(
            SUITES_CHECK,
            &["drawrate", s(&full), s(&kept), &a, &b, lo, hi],
        );
        let n: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(n >= 3, "{plies} {window}: {line}");
    }
}

/// `WdlModel::SELFPLAY` is what `polybook fit-wdl` fits to the self-play games and labels in
/// `nets/` (about 1.5 million positions; some ten seconds).
#[test]
fn the_wdl_model_is_the_fit_of_the_shipped_games() {
    let root = env!("CARGO_MANIFEST_DIR");
    let sets: Vec<String> = ["selfplay-1", "selfplay-1-1", "selfplay-2", "selfplay-2-1"]
        .iter()
        .map(|l| {
            let games = &l[..10];
            format!("{root}/nets/{l}.labels={root}/nets/{games}.pgn.xz")
        })
        .collect();
    let mut args = vec!["fit-wdl", "--json"];
    args.extend(sets.iter().map(String::as_str));
    let fit: serde_json::Value = serde_json::from_str(&polybook_ok(&args)).unwrap();
    let model = WdlModel::SELFPLAY;
    assert_eq!(fit["a"].as_f64().unwrap(), model.a, "{fit}");
    assert_eq!(fit["b"].as_f64().unwrap(), model.b, "{fit}");
    assert!(fit["positions"].as_u64().unwrap() > 1_000_000, "{fit}");
}
