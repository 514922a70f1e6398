//! `polybook build` against the reference tools on real games: byte for byte what
//! `polyglot make-book` writes (Debian's GNU Chess book, TCEC and lichess games, every option),
//! python-chess where polyglot is wrong (games from a FEN, variants, bad moves), and bad input.

use crate::common;
use common::{bundled, data, failed, polybook, polybook_fails, polybook_json, polybook_ok};

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::path_str as s;

/// Builds with polybook; panics with its stderr if it fails.
fn build(inputs: &[&Path], out: &Path, options: &[&str]) -> Vec<u8> {
    common::quietly_written("build", inputs, out, options)
}

/// The `--json` report of a quiet build of `input` into `out` with `--min-games 1` and `extra`.
fn build_json(input: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "build",
        s(input),
        "-o",
        s(out),
        "--json",
        "-q",
        "--min-games",
        "1",
    ];
    args.extend_from_slice(extra);
    polybook_json(&args)
}

/// `polyglot make-book` on a plain PGN file; `None` when polyglot reports an error (it exits 0).
fn polyglot_book(pgn: &Path, dir: &Path, options: &[&str]) -> Option<Vec<u8>> {
    let out = dir.join("polyglot.bin");
    let _ = std::fs::remove_file(&out);
    let o = Command::new(common::polyglot())
        .current_dir(dir)
        .args(["make-book", "-pgn", s(pgn), "-bin", s(&out)])
        .args(options)
        .output()
        .expect("run polyglot");
    let log = String::from_utf8_lossy(&o.stdout).to_lowercase();
    if log.contains("error") || log.contains("illegal") || !log.contains("all done") {
        return None;
    }
    std::fs::read(&out).ok()
}

/// The text of an .xz file (Latin-1 names become replacement characters, which no book sees).
fn xz_text(path: &Path) -> String {
    let mut bytes = Vec::new();
    xz2::read::XzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The games of a PGN text whose tags start with `[Event`.
fn split_games(text: &str) -> Vec<&str> {
    let mut games = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices("\n[Event ") {
        if i > start {
            games.push(&text[start..=i]);
        }
        start = i + 1;
    }
    games.push(&text[start..]);
    games.retain(|g| g.contains('['));
    games
}

fn tag<'a>(game: &'a str, name: &str) -> Option<&'a str> {
    let prefix = format!("[{name} \"");
    let line = game.lines().find(|l| l.starts_with(&prefix))?;
    line[prefix.len()..].strip_suffix("\"]")
}

/// The GNU Chess book in Debian is polyglot make-book's output on this collection; it triggers
/// polyglot's halving at 16384 games. Read straight from the .xz.
#[test]
fn default_build_reproduces_the_gnu_chess_book_from_debian() {
    let dir = tempfile::tempdir().unwrap();
    let got = build(
        &[&data("pgn/gnuchess-book_1.02.pgn.xz")],
        &dir.path().join("gnu.bin"),
        &[],
    );
    let expected = std::fs::read(data("books/gnuchess.bin")).unwrap();
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "the bytes differ");
}

/// Every make-book option, on the first 50,000 GNU Chess games (enough for the halving at 16384
/// games to happen in the start position), compared with polyglot run here.
#[test]
fn every_option_matches_polyglot_make_book() {
    let dir = tempfile::tempdir().unwrap();
    let text = xz_text(&data("pgn/gnuchess-book_1.02.pgn.xz"));
    let games = split_games(&text);
    assert!(games.len() > 100_000);
    let pgn = common::write_file(dir.path(), "gnu50k.pgn", games[..50_000].concat());
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &[]),
        (
            &["-max-ply", "30", "-min-game", "1"],
            &["--max-ply", "30", "--min-games", "1"],
        ),
        (&["-min-score", "50"], &["--min-score", "50"]),
        (
            &["-min-game", "10", "-min-score", "45.5"],
            &["--min-games", "10", "--min-score", "45.5"],
        ),
        (&["-only-white"], &["--only-white"]),
        (&["-only-black"], &["--only-black"]),
        (&["-uniform"], &["--uniform"]),
        (
            &["-max-ply", "12", "-min-game", "1", "-uniform"],
            &["--max-ply", "12", "--min-games", "1", "--uniform"],
        ),
    ];
    for (pg, pb) in cases {
        let expected = polyglot_book(&pgn, dir.path(), pg).expect("polyglot reads these games");
        for threads in ["1", "2"] {
            let mut options = pb.to_vec();
            options.extend(["--threads", threads]);
            if threads == "1" {
                // The same book when it waits for the disk before its rename.
                options.push("--fsync");
            }
            let got = build(&[&pgn], &dir.path().join("pb.bin"), &options);
            assert!(got == expected, "options {pb:?} with {threads} threads");
        }
    }
}

/// Every TCEC file that polyglot reads without error (long engine comments on every move).
#[test]
fn tcec_games_match_polyglot() {
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(data("pgn/tcec"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".pgn.xz"))
        .collect();
    files.sort();
    for xz in files {
        let pgn = common::write_file(dir.path(), "in.pgn", xz_text(&xz));
        let Some(expected) = polyglot_book(&pgn, dir.path(), &["-min-game", "1"]) else {
            continue;
        };
        let got = build(&[&xz], &dir.path().join("pb.bin"), &["--min-games", "1"]);
        assert!(got == expected, "{}", xz.display());
        compared += 1;
    }
    assert!(compared >= 11, "only {compared} TCEC files compared");
}

/// lichess games: the standard ones without a FEN (what polyglot can read), whole and through
/// each of polybook's filters, against polyglot on the same games picked by their tags.
#[test]
fn lichess_games_and_filters_match_polyglot() {
    let dir = tempfile::tempdir().unwrap();
    let text = xz_text(&data("pgn/lichess_magnus_2018-2022.pgn.xz"));
    let games: Vec<&str> = split_games(&text)
        .into_iter()
        .filter(|g| tag(g, "Variant").is_none_or(|v| v == "Standard") && tag(g, "FEN").is_none())
        .collect();
    assert!(games.len() > 9000);
    let standard = common::write_file(dir.path(), "standard.pgn", games.concat());

    let elo = |g: &&str, name| tag(g, name).and_then(|e| e.parse::<u32>().ok());
    let speed = |g: &&str| -> &'static str {
        let tc = tag(g, "TimeControl").unwrap_or("-");
        let Some((base, inc)) = tc.split_once('+') else {
            return "none";
        };
        let secs = base.parse::<f64>().unwrap() + 40.0 * inc.parse::<f64>().unwrap();
        match secs {
            s if s < 30.0 => "ultrabullet",
            s if s < 180.0 => "bullet",
            s if s < 480.0 => "blitz",
            s if s < 1500.0 => "rapid",
            s if s < 21600.0 => "classical",
            _ => "correspondence",
        }
    };
    type Pick<'a> = Box<dyn Fn(&&str) -> bool + 'a>;
    let cases: Vec<(Vec<&str>, Pick, Vec<&str>)> = vec![
        (vec![], Box::new(|_| true), vec![]),
        (
            vec!["--min-elo", "2600"],
            Box::new(|g| {
                elo(g, "WhiteElo").is_some_and(|e| e >= 2600)
                    && elo(g, "BlackElo").is_some_and(|e| e >= 2600)
            }),
            vec![],
        ),
        (
            vec!["--max-elo", "2900"],
            Box::new(|g| {
                elo(g, "WhiteElo").is_some_and(|e| e <= 2900)
                    && elo(g, "BlackElo").is_some_and(|e| e <= 2900)
            }),
            vec![],
        ),
        (
            vec!["--since", "2021.01.01", "--until", "2021-12-31"],
            Box::new(|g| tag(g, "UTCDate").is_some_and(|d| d.starts_with("2021."))),
            vec![],
        ),
        (
            vec!["--time-control", "blitz,rapid"],
            Box::new(|g| matches!(speed(g), "blitz" | "rapid")),
            vec![],
        ),
        (
            vec!["--player", "DrNykterstein", "--color", "white"],
            Box::new(|g| tag(g, "White").is_some_and(|w| w.eq_ignore_ascii_case("drnykterstein"))),
            vec!["-only-white"],
        ),
    ];
    for (pb, pick, pg) in cases {
        let subset: Vec<&str> = games.iter().copied().filter(|g| pick(g)).collect();
        assert!(
            !subset.is_empty() && subset.len() < games.len() || pb.is_empty(),
            "{pb:?}"
        );
        let pgn = common::write_file(dir.path(), "subset.pgn", subset.concat());
        let mut pg_opts = vec!["-min-game", "1"];
        pg_opts.extend(pg);
        let expected = polyglot_book(&pgn, dir.path(), &pg_opts).expect("polyglot reads them");
        let mut pb_opts = vec!["--min-games", "1"];
        pb_opts.extend(&pb);
        let got = build(&[&standard], &dir.path().join("pb.bin"), &pb_opts);
        assert!(got == expected, "filter {pb:?} ({} games)", subset.len());
    }
}

/// `--time-control` puts a game in lichess's class (base + 40 × increment seconds: under 30
/// ultrabullet, 180 bullet, 480 blitz, 1500 rapid, 21600 classical, else correspondence): a game of
/// `179+0` is bullet and not blitz, `180+0` blitz, chess.com's daily `1/259200` correspondence.
/// Each game has its own number of plies, so the report's plies say which game was kept.
#[test]
fn time_control_classes_are_lichesss() {
    let dir = tempfile::tempdir().unwrap();
    let knights = ["Nf3", "Nf6", "Ng1", "Ng8"];
    let games = [
        ("29+0", 2),
        ("30+0", 3),
        ("179+0", 4),
        ("180+0", 5),
        ("479+0", 6),
        ("480+0", 7),
        ("1499", 8),
        ("1500", 9),
        ("1/259200", 10),
    ];
    let mut pgn = String::new();
    for (tc, plies) in games {
        let moves: Vec<&str> = knights.iter().cycle().take(plies).copied().collect();
        pgn += &format!(
            "[TimeControl \"{tc}\"]\n[Result \"1-0\"]\n\n{} 1-0\n\n",
            moves.join(" ")
        );
    }
    let input = common::write_file(dir.path(), "tc.pgn", pgn);
    let out = dir.path().join("tc.bin");
    for (speed, plies) in [
        ("ultrabullet", 2),
        ("bullet", 3 + 4),
        ("blitz", 5 + 6),
        ("rapid", 7 + 8),
        ("classical", 9),
        ("correspondence", 10),
    ] {
        let report = build_json(&input, &out, &["--time-control", speed]);
        assert_eq!(report["plies"], plies, "{speed}: {report}");
        assert_eq!(
            report["filtered"]["time_control_filter"],
            9 - report["used"].as_u64().unwrap(),
            "{speed}"
        );
    }
}

/// Where polyglot is wrong or gives up: games from a [FEN], variants, illegal and ambiguous moves,
/// null moves, captures without `x`, UCI coordinates, several inputs in a row. The judge is an
/// independent builder on python-chess (tests/reference_book.py).
#[test]
fn fen_games_variants_and_bad_moves_match_python_chess() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        bundled("world_matches.pgn"),
        data("pgn/lichess_magnus_analysed.pgn.xz"),
        data("pgn/edge/pychess/fenSetup.pgn"),
        data("pgn/edge/pychess/atomic.pgn"),
        data("pgn/edge/pychess/chess960rwch.pgn"),
        data("pgn/edge/pychess/zh.pgn"),
        data("pgn/edge/python-chess/immortal-games.pgn"),
        data("pgn/edge/python-chess/anastasian-lewis.pgn"),
        data("pgn/edge/python-chess/uci-moves.pgn"),
        data("pgn/edge/rust-pgn-reader/examples_illegal.pgn"),
        data("pgn/edge/pgn-extract/test-setup-in.pgn"),
    ];
    for options in [
        &["--min-games", "1"][..],
        &["--min-games", "2", "--max-ply", "40"],
    ] {
        let expected = common::reference_book(&inputs, &dir.path().join("ref.bin"), options);
        let refs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
        let got = build(&refs, &dir.path().join("pb.bin"), options);
        assert!(expected.len() > 16 * 1000);
        assert!(got == expected, "{options:?}");
    }
}

/// The summary counts what was skipped and why, and `--json` prints it for programs.
#[test]
fn the_summary_reports_skipped_and_cut_games() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.bin");
    let o = polybook(&[
        "build",
        s(&data("pgn/edge/pychess/atomic.pgn")),
        s(&data("pgn/edge/python-chess/immortal-games.pgn")),
        "-o",
        s(&out),
        "--json",
    ]);
    assert!(o.status.success());
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["games"], 46);
    assert_eq!(report["used"], 36);
    assert_eq!(report["skipped"]["variant"], 10);
    assert_eq!(report["truncated"]["ambiguous_move"], 4);
    assert!(report["plies"].as_u64().unwrap() > 1000);
    let stderr = String::from_utf8_lossy(&o.stderr);
    common::assert_contains(&stderr, "10 variant");
    common::assert_contains(&stderr, "4 ambiguous move");
    let examples = report["examples"].to_string();
    common::assert_contains(
        &examples,
        "immortal-games.pgn: game 1: move 5... Nd7 is ambiguous",
    );
}

/// `--skip-unknown-results` leaves out the games whose result is `*`; by default they count as
/// draws, as in polyglot.
#[test]
fn unknown_results_count_as_draws_or_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        String::from_utf8_lossy(&std::fs::read(bundled("dortmund.pgn")).unwrap()).into_owned();
    let games = split_games(&text);
    // Every third game loses its result.
    let mut all = String::new();
    let mut known = String::new();
    for (i, g) in games.iter().enumerate() {
        if i % 3 == 0 {
            let r = tag(g, "Result").unwrap();
            all += &g.replace(&format!("[Result \"{r}\"]"), "[Result \"*\"]");
        } else {
            all += g;
            known += g;
        }
    }
    let (all_pgn, known_pgn) = (dir.path().join("all.pgn"), dir.path().join("known.pgn"));
    std::fs::write(&all_pgn, &all).unwrap();
    std::fs::write(&known_pgn, &known).unwrap();
    let opts = ["--min-games", "1"];
    let expected = polyglot_book(&known_pgn, dir.path(), &["-min-game", "1"]).unwrap();
    let skipped = build(
        &[&all_pgn],
        &dir.path().join("s.bin"),
        &["--min-games", "1", "--skip-unknown-results"],
    );
    assert!(skipped == expected);
    let expected = polyglot_book(&all_pgn, dir.path(), &["-min-game", "1"]).unwrap();
    assert!(build(&[&all_pgn], &dir.path().join("a.bin"), &opts) == expected);
}

/// gzip, zstd, bzip2 (told by their magic bytes, whatever the name), standard input and folders
/// all give the same book as the plain file.
#[test]
fn compressed_inputs_stdin_and_folders() {
    let dir = tempfile::tempdir().unwrap();
    let plain = bundled("dortmund.pgn");
    let text = std::fs::read(&plain).unwrap();
    let expected = build(&[&plain], &dir.path().join("plain.bin"), &[]);
    assert!(expected.len() > 1000);

    let gz = dir.path().join("games.pgn.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&text).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let zst = dir.path().join("games.zst.pgn"); // a misleading name: the magic bytes decide
    std::fs::write(&zst, zstd::encode_all(&text[..], 3).unwrap()).unwrap();
    let bz2 = dir.path().join("games.pgn.bz2");
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(&text).unwrap();
    std::fs::write(&bz2, e.finish().unwrap()).unwrap();
    for input in [&gz, &zst, &bz2] {
        let got = build(&[input], &dir.path().join("c.bin"), &[]);
        assert!(got == expected, "{}", input.display());
    }

    let out = dir.path().join("stdin.bin");
    let mut child = Command::new(env!("CARGO_BIN_EXE_polybook"))
        .args(["build", "-", "-q", "-o", s(&out)])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(std::fs::read(&out).unwrap() == expected);

    // A folder: every PGN below it, in path order (world_matches.pgn before z/dortmund.pgn).
    let folder = dir.path().join("folder");
    std::fs::create_dir_all(folder.join("z")).unwrap();
    std::fs::copy(&plain, folder.join("z/dortmund.pgn")).unwrap();
    std::fs::copy(
        bundled("world_matches.pgn"),
        folder.join("world_matches.pgn"),
    )
    .unwrap();
    std::fs::write(folder.join("notes.txt"), "not a PGN").unwrap();
    let both = build(
        &[&bundled("world_matches.pgn"), &plain],
        &dir.path().join("both.bin"),
        &[],
    );
    let got = build(&[&folder], &dir.path().join("folder.bin"), &[]);
    assert!(got == both);
}

/// `--weights games` counts exactly in 64 bits; spilling sorted runs to disk (a tiny --memory)
/// gives the same book as counting in memory.
#[test]
fn spilling_to_disk_gives_the_same_book() {
    let dir = tempfile::tempdir().unwrap();
    let gnu = data("pgn/gnuchess-book_1.02.pgn.xz");
    let tmp = dir.path().join("runs");
    std::fs::create_dir(&tmp).unwrap();
    for weights in ["games", "wins"] {
        let opts = ["--max-ply", "16", "--min-games", "2", "--weights", weights];
        let in_memory = build(&[&gnu], &dir.path().join("mem.bin"), &opts);
        let mut spill_opts = opts.to_vec();
        spill_opts.extend(["--memory", "2M", "--temp-dir", s(&tmp)]);
        let out = dir.path().join("spill.bin");
        let mut args = vec!["build", s(&gnu), "-o", s(&out), "--json"];
        args.extend(&spill_opts);
        let report = polybook_json(&args);
        assert!(report["spilled_runs"].as_u64().unwrap() >= 2, "{report}");
        assert!(std::fs::read(&out).unwrap() == in_memory, "{weights}");
        // The runs are gone.
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    }
    // With polyglot's weights and no position reaching 16384 games, spilling is exact too.
    let tcec = data("pgn/tcec/TCEC_Season_9_-_Stage_1a.pgn.xz");
    let in_memory = build(&[&tcec], &dir.path().join("m.bin"), &["--min-games", "1"]);
    let spilled = build(
        &[&tcec],
        &dir.path().join("s.bin"),
        &["--min-games", "1", "--memory", "1M", "--temp-dir", s(&tmp)],
    );
    assert!(spilled == in_memory);
}

/// When one tally thread spills and the other does not, the book interleaves the merged runs of
/// the first with the partitions the second made in memory, in key order. Games from a [FEN]
/// whose key's top byte is even all go to the first of two tally threads, which must spill;
/// a few with an odd top byte go to the second.
#[test]
fn one_tally_spilling_and_one_not_give_the_same_book() {
    use shakmaty::fen::Fen;
    use shakmaty::san::San;
    use shakmaty::{Chess, EnPassantMode, Position};

    let mut rng = common::XorShift(0x2545_f491_4f6c_dd1d);
    let mut next = move |n: usize| rng.index(n);
    let mut pgn = String::new();
    let (mut even, mut odd) = (0, 0);
    while even < 40_000 {
        let mut pos = Chess::default();
        for _ in 0..8 + next(24) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play_unchecked(moves[next(moves.len())]);
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            continue;
        }
        let top = polybook::book::Key::of(&pos).0 >> 56;
        if top % 2 == 1 {
            if odd >= 300 {
                continue;
            }
            odd += 1;
        } else {
            even += 1;
        }
        let fen = Fen::from_position(&pos, EnPassantMode::Legal);
        let san = San::from_move(&pos, moves[next(moves.len())]);
        pgn.push_str(&format!(
            "[SetUp \"1\"]\n[FEN \"{fen}\"]\n[Result \"1/2-1/2\"]\n\n{san} 1/2-1/2\n\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let input = common::write_file(dir.path(), "fen.pgn", pgn);
    let tmp = dir.path().join("runs");
    std::fs::create_dir(&tmp).unwrap();
    let opts = ["--min-games", "1", "--threads", "2"];
    let in_memory = build(&[&input], &dir.path().join("m.bin"), &opts);
    let out = dir.path().join("s.bin");
    let mut args = vec!["build", s(&input), "-o", s(&out), "--json"];
    args.extend(opts);
    args.extend(["--memory", "1M", "--temp-dir", s(&tmp)]);
    let report = polybook_json(&args);
    assert!(report["spilled_runs"].as_u64().unwrap() >= 1, "{report}");
    assert!(in_memory.len() > 16 * 40_000, "{}", in_memory.len());
    assert!(std::fs::read(&out).unwrap() == in_memory);
}

/// Each bad input: one line on stderr naming the problem, a non-zero exit, no book written.
#[test]
fn bad_input_gets_one_clear_line_and_no_book() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin");
    let dortmund = bundled("dortmund.pgn");
    let corrupt = dir.path().join("corrupt.pgn.xz");
    let mut bytes = std::fs::read(data("pgn/tcec/TCEC_Match_1.pgn.xz")).unwrap();
    let mid = bytes.len() / 2;
    bytes.truncate(mid);
    std::fs::write(&corrupt, bytes).unwrap();
    let empty_dir = dir.path().join("empty");
    std::fs::create_dir(&empty_dir).unwrap();
    let illegal = data("pgn/edge/rust-pgn-reader/examples_illegal.pgn");
    let gnu = data("pgn/gnuchess-book_1.02.pgn.xz");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["build", "/no/such.pgn", "-o", s(&out)],
            1,
            "/no/such.pgn",
        ),
        (
            vec!["build", s(&empty_dir), "-o", s(&out)],
            1,
            "no PGN files",
        ),
        (
            vec!["build", s(&corrupt), "-o", s(&out)],
            1,
            "corrupt.pgn.xz",
        ),
        (
            vec!["build", s(&dortmund), "-o", s(&dortmund)],
            1,
            "is one of the inputs",
        ),
        (
            vec!["build", s(&illegal), "-o", s(&out), "--strict"],
            1,
            "examples_illegal.pgn: game 38: move 1... b4 is illegal",
        ),
        (
            vec!["build", s(&dortmund), "-o", s(&out), "--min-score", "120"],
            2,
            "--min-score",
        ),
        (
            vec!["build", s(&dortmund), "-o", s(&out), "--memory", "lots"],
            2,
            "not a size",
        ),
        (
            vec!["build", s(&dortmund), "-o", s(&out), "--since", "last year"],
            2,
            "not a date",
        ),
        (vec!["build", s(&dortmund)], 2, "--output"),
        (
            vec![
                "build",
                s(&gnu),
                "-o",
                s(&out),
                "--memory",
                "1M",
                "--temp-dir",
                "/nonexistent/folder",
            ],
            1,
            "temporary files in /nonexistent/folder",
        ),
    ];
    for (args, code, needle) in cases {
        let o = polybook(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "{args:?} wrote a book");
    }
    // The folder holds no temporary file either.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    // The input is untouched.
    assert!(std::fs::metadata(&dortmund).unwrap().len() > 1000);
}

/// The bundled book is what the README's first command makes from the bundled games, checked
/// against the independent python-chess builder (polyglot cannot read the [FEN] games among them).
#[test]
fn the_bundled_book_is_the_bundled_games_book() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let expected = common::reference_book(
        &[
            root.join("pgn/dortmund.pgn"),
            root.join("pgn/world_matches.pgn"),
        ],
        &dir.path().join("ref.bin"),
        &[],
    );
    assert!(expected.len() > 16 * 500);
    let built = build(&[&root.join("pgn")], &dir.path().join("b.bin"), &[]);
    assert!(built == expected);
    assert!(std::fs::read(root.join("books/bundled.bin")).unwrap() == expected);
}

/// Chess960 games are skipped unless `--chess960` (a file of nothing else is then an error); with
/// it, they start from their FEN.
#[test]
fn chess960_games_only_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let frc = data("pgn/tcec/TCEC_Season_6_-_FRC.pgn.xz");
    let out = dir.path().join("b.bin");
    // Without it no game is usable: an error that says why, and no book.
    let o = polybook(&["build", s(&frc), "-o", s(&out)]);
    let err = failed(&o, 1, "no usable game");
    common::assert_contains(&err, "112 read, none usable (112 variant)");
    assert!(!out.exists());
    let with = build_json(&frc, &out, &["--chess960"]);
    assert_eq!(with["used"], 112);
    assert!(with["skipped"].as_object().unwrap().is_empty(), "{with}");
    // Every ply of every game (FILES.tsv beside the games counts 13,883).
    assert_eq!(with["plies"], 13883);
    assert!(with["entries"].as_u64().unwrap() > 9000);
}

/// Whether process `pid` holds a file open in `dir` (a spilled run: it has no name, so only the
/// process's open files show it).
#[cfg(target_os = "linux")]
fn has_file_open_in(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target.starts_with(dir)))
}

/// Starts a build of the GNU Chess games that spills runs to `runs`, and waits until it does.
#[cfg(target_os = "linux")]
fn spilling_build(runs: &Path, out: &Path) -> std::process::Child {
    let child = Command::new(env!("CARGO_BIN_EXE_polybook"))
        .args([
            "build",
            "-q",
            "--memory",
            "2M",
            "--temp-dir",
            s(runs),
            "-o",
            s(out),
        ])
        .arg(data("pgn/gnuchess-book_1.02.pgn.xz"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !has_file_open_in(child.id(), runs) {
        assert!(start.elapsed().as_secs() < 60, "no run was spilled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child
}

/// A temporary folder with an empty folder `runs` in it, for spilled runs.
fn with_runs_folder() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    (dir, runs)
}

/// Spilled runs have no names: even `kill -9` mid-build leaves nothing in --temp-dir; SIGTERM and
/// SIGHUP stop a build as Ctrl-C does (exit 130, no book).
#[cfg(target_os = "linux")]
#[test]
fn a_killed_build_leaves_no_spilled_run() {
    let (dir, runs) = with_runs_folder();
    for signal in ["KILL", "TERM", "HUP"] {
        let out = dir.path().join("book.bin");
        let child = spilling_build(&runs, &out);
        // The runs are open but not in the folder.
        assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0);
        common::send_signal(child.id(), signal);
        let o = child.wait_with_output().unwrap();
        if signal == "KILL" {
            assert_eq!(o.status.code(), None);
        } else {
            assert_eq!(o.status.code(), Some(130), "{signal}");
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("interrupted; no book written"),
                "{signal}"
            );
            assert!(!out.exists());
        }
        assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0, "{signal}");
    }
}

/// Ctrl-C (SIGINT) mid-build: exit code 130, no book, no temporary file or spilled run left.
#[cfg(target_os = "linux")]
#[test]
fn an_interrupted_build_leaves_nothing_behind() {
    let (dir, runs) = with_runs_folder();
    let out = dir.path().join("book.bin");
    // Wait until runs are being spilled, then interrupt.
    let child = spilling_build(&runs, &out);
    common::send_signal(child.id(), "INT");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(&runs).unwrap().count(),
        0,
        "spilled runs left"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "files left"
    );
}

/// Binary garbage between games and a game cut inside its tags are skipped and counted; a 300 KB
/// tag line (its quote never closed: the value runs to the end of the line, as a short one does)
/// is read whole, a game with no moves; every real game is still read (the book is polyglot's of
/// the real ones).
#[test]
fn garbage_and_broken_tags_do_not_stop_a_build() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read(bundled("dortmund.pgn")).unwrap();
    let cut = real.windows(7).rposition(|w| w == b"[Event ").unwrap();
    let middle = real[200_000..]
        .windows(7)
        .position(|w| w == b"[Event ")
        .unwrap()
        + 200_000;
    let mut bytes = real[..middle].to_vec();
    // Bytes that are neither letters nor digits: no move can be read from them.
    let mut x = 12345u32;
    bytes.extend((0..500_000).map(|_| {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        0x80 | (x >> 24) as u8
    }));
    bytes.extend_from_slice(b"\n\n[Event \"");
    bytes.extend(std::iter::repeat_n(b'x', 300_000));
    bytes.extend_from_slice(b"\n\n");
    bytes.extend_from_slice(&real[middle..]);
    bytes.extend_from_slice(&real[cut..cut + 40]); // a last game cut inside its tags
    let messy = common::write_file(dir.path(), "messy.pgn", &bytes);
    let out = dir.path().join("b.bin");
    let report = polybook_json(&["build", s(&messy), "-o", s(&out), "--json", "-q"]);
    assert_eq!(report["used"], 348, "{report}");
    assert_eq!(report["skipped"]["bad_tags"], 1, "{report}");
    let expected = polyglot_book(&bundled("dortmund.pgn"), dir.path(), &[]).unwrap();
    assert!(std::fs::read(&out).unwrap() == expected);
}

/// Real games damaged the ways real files are: comments and variations never closed, stray `[`
/// lines, NUL bytes, LF lines in a CRLF file, a 20 KB tag, and a last game cut inside a comment.
/// (The bundled historical games: CRLF, multi-line comments, variations, [FEN] games.)
fn damaged_real_file(dir: &Path) -> PathBuf {
    let mut text = std::fs::read(bundled("world_matches.pgn")).unwrap();
    text.extend(std::fs::read(bundled("dortmund.pgn")).unwrap());
    let starts: Vec<usize> = text
        .windows(9)
        .enumerate()
        .filter(|(_, w)| w == b"\n[Event \"")
        .map(|(i, _)| i + 1)
        .collect();
    let mut games: Vec<Vec<u8>> = std::iter::once(0)
        .chain(starts.iter().copied())
        .zip(starts.iter().copied().chain(std::iter::once(text.len())))
        .map(|(a, b)| text[a..b].to_vec())
        .collect();
    let n = games.len();
    for (i, g) in games.iter_mut().enumerate() {
        let rfind = |g: &[u8], b: u8| g.iter().rposition(|&x| x == b);
        match i % 37 {
            // A game's last comment or variation never closed.
            3 => {
                if let Some(c) = rfind(g, b'}') {
                    g.remove(c);
                }
            }
            7 => {
                if let Some(c) = rfind(g, b')') {
                    g.remove(c);
                }
            }
            // Stray lines that look a little like tags, and NUL bytes, in the movetext.
            11 => {
                let at = g.len() * 2 / 3;
                let at = at + g[at..].iter().position(|&b| b == b'\n').unwrap_or(0) + 1;
                let at = at.min(g.len());
                g.splice(
                    at..at,
                    b"[\n[Event\n[%eval 0.3]\n\0\0[ \"x\"\n".iter().copied(),
                );
            }
            // LF lines in the CRLF file.
            17 => g.retain(|&b| b != b'\r'),
            // A long tag first.
            23 => {
                let long = format!("[Annotator \"{}\"]\r\n", "z".repeat(20_000));
                g.splice(0..0, long.bytes());
            }
            // NUL bytes in a tag value.
            29 => {
                if let Some(q) = g.iter().position(|&b| b == b'"') {
                    g.splice(q + 1..q + 1, [0, 0]);
                }
            }
            _ => {}
        }
        if i == n - 1 {
            let open = g.iter().position(|&b| b == b'{').unwrap_or(g.len() / 2);
            g.truncate(open + 1);
        }
    }
    common::write_file(dir, "damaged.pgn", games.concat())
}

/// The book and the report are the same bytes whatever --threads and --memory (which change the
/// chunks the input is cut into: 16 KB at 1M, about 280 KB at 64M, 1 MB at the default), on a
/// damaged real file and on its compressed copy.
#[test]
fn the_book_does_not_depend_on_threads_or_memory() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = damaged_real_file(dir.path());
    let compressed = dir.path().join("damaged.pgn.gz");
    {
        let mut gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&compressed).unwrap(),
            flate2::Compression::fast(),
        );
        gz.write_all(&std::fs::read(&damaged).unwrap()).unwrap();
        gz.finish().unwrap();
    }
    let mut first: Option<(Vec<u8>, serde_json::Value)> = None;
    for input in [&damaged, &compressed] {
        for threads in ["1", "2"] {
            for memory in ["1M", "64M", "1G"] {
                let out = dir.path().join("b.bin");
                let mut report =
                    build_json(input, &out, &["--threads", threads, "--memory", memory]);
                for timing in ["seconds", "games_per_second", "spilled_runs", "examples"] {
                    report[timing] = serde_json::Value::Null;
                }
                let book = std::fs::read(&out).unwrap();
                match &first {
                    None => {
                        // The damage is seen: games cut short at their unclosed comments.
                        assert!(
                            report["truncated"]["unfinished"].as_u64().unwrap() >= 10,
                            "{report}"
                        );
                        assert!(book.len() > 16 * 10_000);
                        first = Some((book, report));
                    }
                    Some((b, r)) => {
                        assert_eq!(
                            &report, r,
                            "{input:?} --threads {threads} --memory {memory}"
                        );
                        assert!(
                            &book == b,
                            "{input:?} --threads {threads} --memory {memory}: another book"
                        );
                    }
                }
            }
        }
    }
}

/// A tag longer than the PGN reader's buffer (lichess and engine exports carry long ones) is read
/// whole: a real game from a [FEN] with a 20 KB or a 1 MB tag before its others gives the book
/// it gives without it, even with --strict.
#[test]
fn a_long_tag_does_not_split_its_game() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(bundled("world_matches.pgn")).unwrap();
    // The second game starts from a [FEN].
    let starts: Vec<usize> = text
        .windows(9)
        .enumerate()
        .filter(|(_, w)| w == b"\n[Event \"")
        .map(|(i, _)| i + 1)
        .take(2)
        .collect();
    let game = &text[starts[0]..starts[1]];
    assert!(game.windows(5).any(|w| w == b"[FEN "));
    let plain = common::write_file(dir.path(), "plain.pgn", game);
    let expected = build(
        &[&plain],
        &dir.path().join("plain.bin"),
        &["--min-games", "1"],
    );
    // Its 21 plies; the loser's 10 moves score no points and are not kept.
    assert_eq!(expected.len(), 16 * 11);
    for len in [20_000, 1 << 20] {
        let long = dir.path().join("long.pgn");
        let mut bytes = format!("[Annotator \"{}\"]\r\n", "a".repeat(len)).into_bytes();
        bytes.extend_from_slice(game);
        std::fs::write(&long, bytes).unwrap();
        let out = dir.path().join("long.bin");
        let report = polybook_json(&[
            "build",
            s(&long),
            "-o",
            s(&out),
            "--min-games",
            "1",
            "--strict",
            "--json",
        ]);
        assert_eq!(
            (report["games"].as_u64(), report["used"].as_u64()),
            (Some(1), Some(1))
        );
        assert!(std::fs::read(&out).unwrap() == expected, "a {len}-byte tag");
    }
}

/// A 1 MB [FEN] tag is quoted, not echoed: the example line names its length.
#[test]
fn a_huge_fen_is_quoted_not_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("huge.pgn");
    // 1 MiB: 1,048,576 characters.
    let fen = "rnbqkbnr/".repeat(116_508) + "rnbq";
    std::fs::write(
        &pgn,
        format!("[FEN \"{fen}\"]\n[SetUp \"1\"]\n\n1. e4 *\n\n[Event \"ok\"]\n\n1. d4 *\n"),
    )
    .unwrap();
    let out = dir.path().join("b.bin");
    let o = polybook(&["build", s(&pgn), "-o", s(&out), "--min-games", "1"]);
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.len() < 2000, "{} bytes of messages", stderr.len());
    assert!(
        stderr.contains("'rnbqkbnr/rnbq") && stderr.contains("(1,048,576 characters)"),
        "{stderr}"
    );
    let o = polybook(&["build", s(&pgn), "-o", s(&out), "--strict"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.len() < 400 && stderr.contains("characters)"),
        "{stderr}"
    );
}

/// Binary input (the polybook executable, a book, a Parquet tally, random bytes, a compressed
/// book) is refused by every command that reads games: exit 1, one line naming the file, no
/// output file.
#[test]
fn binary_input_is_refused_by_every_command_that_reads_games() {
    let dir = tempfile::tempdir().unwrap();
    let tally = dir.path().join("t.parquet");
    polybook_ok(&["tally", s(&bundled("dortmund.pgn")), "-o", s(&tally)]);
    let random = dir.path().join("random.dat");
    // Bytes of a fixed generator, with NUL bytes among them.
    let mut x: u32 = 12345;
    let bytes: Vec<u8> = (0..4000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    std::fs::write(&random, bytes).unwrap();
    let book = data("books/gm2001.bin");
    let inputs = [PathBuf::from(common::BIN), book.clone(), tally, random];
    let out = dir.path().join("out.bin");
    let scratch = dir.path().join("scratch.bin");
    std::fs::copy(data("books/rodent3_guide.bin"), &scratch).unwrap();
    for input in &inputs {
        for args in [
            vec!["build", s(input), "-o", s(&out)],
            vec!["tally", s(input), "-o", s(&out)],
            vec!["learn", s(&scratch), s(input)],
            vec!["tune", s(input), "-o", s(&out)],
        ] {
            let err = polybook_fails(&args, 1, "binary data");
            assert!(err.contains(s(input)), "{args:?}: {err}");
            assert!(!out.exists(), "{args:?}");
        }
    }
    assert_eq!(
        std::fs::read(&scratch).unwrap(),
        std::fs::read(data("books/rodent3_guide.bin")).unwrap()
    );
}

/// Input with no usable game (a licence text, an empty file) is an error: exit 1, one line, no
/// book. Filters that leave out every game give an empty book and one warning line; games left
/// out by filters are counted apart, not listed as problems.
#[test]
fn no_usable_game_is_an_error_and_filters_are_not_problems() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.bin");
    let empty = common::write_file(dir.path(), "empty.pgn", "");
    let licence = common::root().join("LICENSE");
    for input in [&licence, &empty] {
        let err = polybook_fails(&["build", s(input), "-o", s(&out)], 1, "no usable game");
        assert!(err.contains(s(input)), "{err}");
        assert!(!out.exists());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // Elo filters on the Dortmund games: python-chess counts those with both ratings in range.
    let dortmund = bundled("dortmund.pgn");
    let count = |min: u32| -> u64 {
        let script = r#"
import sys, chess.pgn
f = open(sys.argv[1], encoding="latin-1")
n = 0
while (h := chess.pgn.read_headers(f)) is not None:
    e = [h.get("WhiteElo", ""), h.get("BlackElo", "")]
    n += all(x.strip().isdigit() and int(x) >= int(sys.argv[2]) for x in e)
print(n)
"#;
        let o = Command::new(common::python_chess())
            .args(["-c", script, s(&dortmund), &min.to_string()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
    };
    let used = count(2700);
    assert!(used > 0 && used < 347);
    // A build with `--min-elo ELO` and one more flag.
    let rated = |elo: &str, flag: &str| {
        polybook(&["build", s(&dortmund), "-o", s(&out), "--min-elo", elo, flag])
    };
    let o = rated("2700", "--json");
    assert!(o.status.success());
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["used"], used, "{report}");
    assert_eq!(report["filtered"]["elo_filter"], 347 - used, "{report}");
    assert!(report["skipped"].get("elo_filter").is_none(), "{report}");
    let examples = report["examples"].to_string();
    assert!(
        !examples.contains("Elo") && !examples.contains("no Elo"),
        "{examples}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    common::assert_contains(&stderr, &format!("{} filtered out", 347 - used));
    assert!(!stderr.contains("warning"), "{stderr}");

    assert_eq!(count(4000), 0);
    let o = rated("4000", "-q");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    common::assert_contains(&stderr, "warning: the filters left out every game");
    assert_eq!(std::fs::read(&out).unwrap().len(), 0);
}

/// `--since`/`--until` take YYYY, YYYY.MM, YYYY.MM.DD and YYYY-MM-DD (a year or month given to
/// --until counts to its end) and refuse dates that do not exist; the games kept are those
/// python-chess finds in the range (unknown parts of a game's date count as the lowest).
#[test]
fn date_filters_take_the_documented_forms() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.bin");
    let dortmund = bundled("dortmund.pgn");
    for bad in ["2020-13-45", "2019.02.29", "2020-00", "05/06/2020", "20"] {
        for flag in ["--since", "--until"] {
            let o = polybook(&["build", s(&dortmund), "-o", s(&out), flag, bad]);
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{flag} {bad}: {stderr}");
            common::assert_contains(&stderr, "not a date");
        }
    }
    let script = r#"
import sys, chess.pgn
def parse(d, fill):
    p = (d.replace("-", ".").split(".") + [None, None])[:3]
    return tuple(fill if x is None else int(x) if x.isdigit() else 0 for x in p)
f = open(sys.argv[1], encoding="latin-1")
lo, hi = parse(sys.argv[2], 0), parse(sys.argv[3], 99)
n = 0
while (h := chess.pgn.read_headers(f)) is not None:
    d = h.get("UTCDate") or h.get("Date", "")
    if d[:4].isdigit():
        n += lo <= parse(d, 0) <= hi
print(n)
"#;
    for (since, until) in [
        ("2001", "2005"),
        ("2001.07", "2005.07"),
        ("2003.07.01", "2008.06.30"),
        ("2003-08-01", "2010-07"),
        ("1928", "1928"),
    ] {
        let o = Command::new(common::python_chess())
            .args(["-c", script, s(&dortmund), since, until])
            .output()
            .unwrap();
        let expected: u64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
        assert!(expected > 0, "{since}..{until}");
        let report = polybook_json(&[
            "build",
            s(&dortmund),
            "-o",
            s(&out),
            "--since",
            since,
            "--until",
            until,
            "--json",
            "-q",
        ]);
        assert_eq!(report["used"], expected, "{since}..{until}: {report}");
    }
}

/// A plain input that shrinks while it is read (truncated by another program) is an error that
/// names it, not a crash.
#[cfg(unix)]
#[test]
fn an_input_that_shrinks_while_read_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("big.pgn");
    let text = xz_text(&data("pgn/gnuchess-book_1.02.pgn.xz"));
    std::fs::write(&pgn, &text[..60 << 20]).unwrap();
    let out = dir.path().join("b.bin");
    let child = Command::new(env!("CARGO_BIN_EXE_polybook"))
        .args(["build", "-q", "--threads", "1", "-o", s(&out), s(&pgn)])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&pgn)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = failed(&o, 1, "big.pgn");
    common::assert_contains(&err, "shrank");
    assert!(!out.exists());
}

/// Waits at most `limit` for `child` to end, killing it past that; whether it ended by itself.
fn ends_within(child: &mut std::process::Child, limit: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    false
}

/// An output that cannot be written (its folder missing, a folder, a path under a file, one of
/// the inputs) is refused before any game is read, by `build` as by `tally`: with standard input
/// as the input, left open and empty (a big input that would take hours), the command ends at
/// once, with one line and exit 1.
#[test]
fn an_output_that_cannot_be_written_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let file = common::write_file(dir.path(), "file", "x");
    let missing = dir.path().join("no/such/folder/out.bin");
    let under_file = file.join("out.bin");
    let input = dir.path().join("in.pgn");
    std::fs::copy(bundled("dortmund.pgn"), &input).unwrap();
    let cases = [
        (&missing, "No such file or directory"),
        (&folder, "directory"),
        (&under_file, "Not a directory"),
        (&input, "is one of the inputs"),
    ];
    for command in ["build", "tally"] {
        for (out, why) in cases {
            let mut child = Command::new(env!("CARGO_BIN_EXE_polybook"))
                .args([command, "-q", "-", s(&input), "-o", s(out)])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let stdin = child.stdin.take();
            let ended = ends_within(&mut child, std::time::Duration::from_secs(10));
            drop(stdin);
            let o = child.wait_with_output().unwrap();
            assert!(
                ended,
                "{command} -o {}: still reading after 10 s",
                out.display()
            );
            let err = failed(&o, 1, why);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.starts_with("polybook: error: "), "{err}");
        }
    }
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(bundled("dortmund.pgn")).unwrap()
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}

/// The text the decompressor of `name` (by its extension) gives of `bytes`, a compressed stream
/// cut short, up to where it stops.
fn decompressed_before_the_cut(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut reader: Box<dyn Read> = match name.rsplit('.').next() {
        Some("xz") => Box::new(xz2::read::XzDecoder::new(bytes)),
        Some("gz") => Box::new(flate2::read::GzDecoder::new(bytes)),
        Some("bz2") => Box::new(bzip2::read::BzDecoder::new(bytes)),
        _ => Box::new(zstd::Decoder::new(bytes).unwrap()),
    };
    let mut text = Vec::new();
    let mut buf = [0u8; 1 << 14];
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return text,
            Ok(n) => text.extend_from_slice(&buf[..n]),
        }
    }
}

/// A compressed input cut in half (a download cut short): without --allow-truncated, `build` and
/// `tally` fail in one line that names the file, says it is truncated and at which byte, and
/// points to the flag, and write nothing; with it they warn in one line and write what the
/// games before the cut make: the book of those games alone (the games whose text the cut leaves
/// whole; the one it falls in is left out). xz (the lichess games), gzip and bzip2 of the same
/// text, and a zstd part written by `polybook split`.
#[test]
fn a_truncated_compressed_input_is_an_error_or_read_to_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let xz_bytes = std::fs::read(data("pgn/lichess_magnus_analysed.pgn.xz")).unwrap();
    let text = xz_text(&data("pgn/lichess_magnus_analysed.pgn.xz")).into_bytes();
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&text).unwrap();
        e.finish().unwrap()
    };
    let bz2 = {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        e.write_all(&text).unwrap();
        e.finish().unwrap()
    };
    let plain = common::write_file(dir.path(), "all.pgn", &text);
    let parts = d("parts");
    polybook_ok(&["split", s(&plain), "-o", s(&parts), "--games", "400", "-q"]);
    let zst = std::fs::read(parts.join("part-00001.pgn.zst")).unwrap();

    let cases: [(&str, &[u8]); 4] = [
        ("cut.pgn.xz", &xz_bytes),
        ("cut.pgn.gz", &gz),
        ("cut.pgn.bz2", &bz2),
        ("cut.pgn.zst", &zst),
    ];
    for (name, whole) in cases {
        let half = &whole[..whole.len() / 2];
        let cut = common::write_file(dir.path(), name, half);
        // The games before the cut: the text up to the last game start the decompressor reached.
        let before = decompressed_before_the_cut(name, half);
        let last = before
            .windows(8)
            .rposition(|w| w == b"\n[Event ")
            .expect("a game starts before the cut");
        let games_before = &before[..=last];
        let games = games_before
            .windows(8)
            .filter(|w| w == b"[Event \"")
            .count() as u64;
        assert!(games > 10, "{name}: {games} games before the cut");
        let kept = common::write_file(dir.path(), "kept.pgn", games_before);

        let at = format!("byte {}", half.len());
        let _ = std::fs::remove_file(d("b.bin"));
        for (command, out) in [("build", d("b.bin")), ("tally", d("t.parquet"))] {
            let o = polybook(&[command, s(&cut), "-o", s(&out), "-q"]);
            let err = failed(&o, 1, name);
            assert_eq!(err.lines().count(), 1, "{err}");
            for needed in ["truncated", at.as_str(), "--allow-truncated"] {
                assert!(
                    err.contains(needed),
                    "{command} {name}: {needed:?} in {err}"
                );
            }
            assert!(!out.exists(), "{command} {name}: wrote half an output");
        }

        let out = d("b.bin");
        let o = polybook(&[
            "build",
            s(&cut),
            "-o",
            s(&out),
            "-q",
            "--json",
            "--allow-truncated",
        ]);
        let err = common::stderr(&o);
        assert!(o.status.success(), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one warning: {err}");
        assert!(err.starts_with("polybook: warning: "), "{err}");
        for needed in [name, "truncated", at.as_str()] {
            assert!(err.contains(needed), "{name}: {needed:?} in {err}");
        }
        let report: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
        assert_eq!(report["games"], games, "{name}");
        assert_eq!(report["truncated_inputs"][0]["at"], half.len(), "{name}");
        let expected = build(&[&kept], &d("kept.bin"), &[]);
        assert!(
            std::fs::read(&out).unwrap() == expected,
            "{name}: other entries"
        );

        let tsv = |input: &Path, extra: &[&str]| {
            let mut args = vec!["tally", s(input), "-q", "--format", "tsv", "-o", "-"];
            args.extend_from_slice(extra);
            polybook_ok(&args)
        };
        assert!(
            tsv(&cut, &["--allow-truncated"]) == tsv(&kept, &[]),
            "{name}: tally"
        );
    }
}

/// `--player` repeated (one person's two accounts) counts the moves of a side whose tag is either
/// name, in any case: half of Magnus Carlsen's lichess games renamed to a second account, built
/// and tallied with both names, give the book and the counts of all his games under one name.
#[test]
fn several_player_names_make_one_book() {
    let dir = tempfile::tempdir().unwrap();
    let text = xz_text(&data("pgn/lichess_magnus_2018-2022.pgn.xz"));
    let games = split_games(&text);
    let renamed: String = games
        .iter()
        .enumerate()
        .map(|(i, g)| match i % 2 {
            0 => g.replace("\"DrNykterstein\"", "\"DrDrunkenstein\""),
            _ => g.to_string(),
        })
        .collect();
    assert!(renamed.matches("\"DrDrunkenstein\"").count() > 4000);
    let original = common::write_file(dir.path(), "one.pgn", &text);
    let two = common::write_file(dir.path(), "two.pgn", &renamed);
    let one_name = ["--player", "DrNykterstein"];
    let two_names = ["--player", "drnykterstein", "--player", "DRDRUNKENSTEIN"];
    for color in [None, Some("white")] {
        let with_color = |names: &[&'static str]| {
            let mut options = vec!["--min-games", "1"];
            options.extend_from_slice(names);
            options.extend(color.iter().flat_map(|c| ["--color", *c]));
            options
        };
        let want = build(
            &[&original],
            &dir.path().join("one.bin"),
            &with_color(&one_name),
        );
        let got = build(
            &[&two],
            &dir.path().join("two.bin"),
            &with_color(&two_names),
        );
        assert!(want.len() > 10_000 && got == want, "{color:?}");
        // Only the names the options line spells differ.
        let rows = |input: &Path, names: &[&'static str]| {
            let mut args = vec!["tally", s(input), "-q", "--format", "tsv", "-o", "-"];
            args.extend_from_slice(&with_color(names)[2..]);
            let out = polybook_ok(&args);
            out.lines().skip(1).collect::<Vec<_>>().join("\n")
        };
        assert!(
            rows(&two, &two_names) == rows(&original, &one_name),
            "{color:?}: tally"
        );
    }
}

/// python-chess's walk of a repertoire's tree: for every clean file of `tests/data/pgn/edge` with
/// variations (python-chess reads it without an error; standard chess), every move of every
/// line, main line and variations at any depth, once per place in the tree, from the position it
/// is played in, with the points of the game's result for the mover (`*`: a draw); with `nag`,
/// the points of the move's assessment instead (`--weights nag`: !! 16, ! 8, !? 4, none 2, ?! 1,
/// ? and ?? 0, the least of several).
const VARIATION_TREE: &str = r#"
import sys, os, json, chess, chess.pgn, chess.polyglot
root, mode = sys.argv[1], sys.argv[2]
nags = len(sys.argv) > 3
# chess.pgn's NAG numbers: the documented weight of each move assessment.
NAG = {chess.pgn.NAG_BRILLIANT_MOVE: 16, chess.pgn.NAG_FORCED_MOVE: 16, chess.pgn.NAG_SINGULAR_MOVE: 16,
       chess.pgn.NAG_GOOD_MOVE: 8, chess.pgn.NAG_SPECULATIVE_MOVE: 4, chess.pgn.NAG_DUBIOUS_MOVE: 1,
       chess.pgn.NAG_MISTAKE: 0, chess.pgn.NAG_BLUNDER: 0}
def games(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        while (g := chess.pgn.read_game(f)) is not None:
            yield g
def clean(path):
    gs = list(games(path))
    # No error, standard chess, no null move (polybook ends a line there), some variations.
    return gs and all(not g.errors and g.headers.get("Variant", "Standard").lower() in ("standard", "")
                      and all(m != chess.Move.null() for m in walk_moves(g)) for g in gs) \
        and any(len(n.variations) > 1 for g in gs for n in g.mainline())
def walk_moves(g):
    stack = [g]
    while stack:
        node = stack.pop()
        for child in node.variations:
            yield child.move
            stack.append(child)
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".pgn"))
files = [p for p in files if clean(p)]
if mode == "files":
    print("\n".join(files)); sys.exit()
book = chess.polyglot.open_reader(mode)
expected, boards = {}, {}
for path in files:
    for g in games(path):
        white = {"1-0": 2, "0-1": 0}.get(g.headers.get("Result", "*"), 1)
        stack = [g]
        while stack:
            node = stack.pop()
            board = node.board()
            for child in node.variations:
                key = chess.polyglot.zobrist_hash(board)
                pts = white if board.turn == chess.WHITE else 2 - white
                if nags:
                    pts = min((NAG[n] for n in child.nags if n in NAG), default=2)
                k = (key, child.move.uci())
                expected[k] = expected.get(k, 0) + pts
                boards[key] = board
                stack.append(child)
# polyglot's rule, which `build` follows: a move that scored no point is left out (with NAGs it
# is kept with weight 0).
if not nags:
    expected = {k: v for k, v in expected.items() if v > 0}
ours = {}
for key, board in boards.items():
    for e in book.find_all(board, minimum_weight=0):
        ours[(key, e.move.uci())] = e.weight
lost = sorted(f"{k[0]:016x} {k[1]}" for k in expected if k not in ours)
extra = sorted(f"{k[0]:016x} {k[1]}" for k in ours if k not in expected)
wrong = sorted(f"{k[0]:016x} {k[1]} {expected[k]} {ours[k]}" for k in expected if k in ours and ours[k] != expected[k])
print(json.dumps({"files": len(files), "moves": len(expected), "zero": sum(v == 0 for v in expected.values()),
                  "annotated": sum(v not in (1, 2) for v in expected.values()), "lost": lost[:5], "extra": extra[:5], "wrong": wrong[:5],
                  "n_lost": len(lost), "n_extra": len(extra), "n_wrong": len(wrong)}))
"#;

#[test]
fn build_variations_counts_every_move_of_the_tree_as_python_chess_walks_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = data("pgn/edge");
    let files = common::python(VARIATION_TREE, &[s(&root), "files"]);
    let files: Vec<PathBuf> = files.lines().map(PathBuf::from).collect();
    assert!(
        files.len() >= 3,
        "too few clean files with variations: {files:?}"
    );
    let out = dir.path().join("rep.bin");
    let mut args = vec!["build"];
    args.extend(files.iter().map(|p| s(p)));
    args.extend(["-o", s(&out), "--variations", "--min-games", "1"]);
    polybook_ok(&args);
    let report: serde_json::Value =
        serde_json::from_str(&common::python(VARIATION_TREE, &[s(&root), s(&out)])).unwrap();
    assert!(report["moves"].as_u64().unwrap() > 100, "{report}");
    for what in ["n_lost", "n_extra", "n_wrong"] {
        assert_eq!(report[what], 0, "{what}: {report}");
    }
    // Without --variations the same files give fewer moves: the variations are what was added.
    let main = dir.path().join("main.bin");
    args.retain(|a| *a != "--variations");
    *args.iter_mut().find(|a| **a == s(&out)).unwrap() = s(&main);
    polybook_ok(&args);
    assert!(std::fs::metadata(&main).unwrap().len() < std::fs::metadata(&out).unwrap().len());
}

/// `build --variations --weights nag`: every move of the tree weighs what its annotations say,
/// summed over its places in the tree, as python-chess reads the NAGs (`!` and `$1` alike); the
/// moves marked `?` or `??` are in the book with weight 0, and the book passes `verify`.
#[test]
fn build_weights_nag_weighs_each_move_by_its_annotation_as_python_chess_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = data("pgn/edge");
    let files = common::python(VARIATION_TREE, &[s(&root), "files"]);
    let out = dir.path().join("rep.bin");
    let mut args = vec!["build"];
    args.extend(files.lines());
    args.extend(["-o", s(&out), "--variations", "--min-games", "1"]);
    args.extend(["--weights", "nag", "-q"]);
    polybook_ok(&args);
    let report: serde_json::Value =
        serde_json::from_str(&common::python(VARIATION_TREE, &[s(&root), s(&out), "nag"])).unwrap();
    // The files hold annotated moves of every kind, some marked as mistakes.
    assert!(report["annotated"].as_u64().unwrap() > 50, "{report}");
    assert!(report["zero"].as_u64().unwrap() > 5, "{report}");
    for what in ["n_lost", "n_extra", "n_wrong"] {
        assert_eq!(report[what], 0, "{what}: {report}");
    }
    let verified = polybook_ok(&["verify", s(&out)]);
    assert!(verified.contains("OK"), "{verified}");
    // Results do not count with NAGs, so --min-score is refused; so is a tally, which keeps none.
    let first = files.lines().next().unwrap();
    let nag = ["--weights", "nag"];
    let min_score = ["build", first, "-o", s(&out), "--min-score", "10"];
    polybook_fails(
        &[&min_score[..], &nag].concat(),
        2,
        "--min-score reads the games' results",
    );
    let tally = ["book", "x.parquet", "-o", s(&out)];
    polybook_fails(
        &[&tally[..], &nag].concat(),
        2,
        "which a tally does not keep",
    );
}
