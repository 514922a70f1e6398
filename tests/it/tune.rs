//! `polybook tune` on real games: the positions it samples are those python-chess counts, the
//! loss goes down, the parameter file it writes is one the engine reads, and bad input gets one
//! error line.

use crate::common;
use common::path_str as s;

use polybook::engine::eval::Params;

use common::{data, polybook_fails, polybook_ok, python};

/// TCEC Season 5's superfinal: 48 finished engine games, in xz.
const GAMES: &str = "pgn/tcec/TCEC_Season_5_-_Superfinal.pgn.xz";

#[test]
fn tunes_on_real_games_and_writes_a_parameter_file_the_engine_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("params.txt");
    let games = data(GAMES);
    let json = polybook_ok(&[
        "tune",
        s(&games),
        "-o",
        s(&out),
        "--positions",
        "1000000",
        "--epochs",
        "150",
        "--threads",
        "2",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let read = &report["read"];

    // The candidates are the positions after ply 16 of each finished game whose side to move is
    // not in check: python-chess counts them on the same file.
    let expected = python(
        r#"
import lzma, sys, chess.pgn
n = games = 0
with lzma.open(sys.argv[1], "rt", encoding="utf-8", errors="replace") as f:
    while (game := chess.pgn.read_game(f)) is not None:
        if game.headers.get("Result") not in ("1-0", "0-1", "1/2-1/2"):
            continue
        games += 1
        board = game.board()
        for ply, move in enumerate(game.mainline_moves(), 1):
            board.push(move)
            if ply >= 16 and not board.is_check():
                n += 1
print(games, n)
"#,
        &[s(&games)],
    );
    let got = format!("{} {}", read["games_used"], read["candidates"]);
    assert_eq!(got, expected.trim());
    // All of them were sampled (fewer than --positions); the quiet ones were kept, split by game.
    assert_eq!(read["sampled"], read["candidates"]);
    let kept = read["train"].as_u64().unwrap() + read["held_out"].as_u64().unwrap();
    assert!(kept > 0 && kept < read["candidates"].as_u64().unwrap());

    // Fitting lowers the loss on the positions it was fitted to; K is a sensible scale.
    let (before, after) = (
        report["train_before"].as_f64().unwrap(),
        report["train_after"].as_f64().unwrap(),
    );
    assert!(after < before, "loss {before} -> {after}");
    let k = report["k"].as_f64().unwrap();
    assert!((0.2..3.0).contains(&k), "K = {k}");

    // The file is a parameter file: every weight once, as the engine's own params.txt.
    let text = std::fs::read_to_string(&out).unwrap();
    let params = Params::parse(&text).unwrap();
    assert_ne!(params, Params::start(), "the weights moved");
    assert!(text.starts_with("# Written by polybook tune"));

    // The same sample and the same descent: the same bytes.
    let again = dir.path().join("again.txt");
    polybook_ok(&[
        "tune",
        s(&games),
        "-o",
        s(&again),
        "--epochs",
        "150",
        "--threads",
        "1",
        "--json",
    ]);
    assert_eq!(std::fs::read(&again).unwrap(), text.as_bytes());
}

#[test]
fn the_engine_plays_with_a_parameter_file_from_the_tuner() {
    // src/engine/params.txt is what the engine is built with: it reads as a parameter file.
    let text = std::fs::read_to_string(common::root().join("src/engine/params.txt")).unwrap();
    assert_eq!(Params::parse(&text).unwrap(), Params::default());
}

#[test]
fn bad_input_gets_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("params.txt");
    let out = s(&out);
    // No finished games: nothing to fit.
    let unfinished = common::write_file(
        dir.path(),
        "unfinished.pgn",
        "[Event \"?\"]\n[Result \"*\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n",
    );
    polybook_fails(
        &["tune", s(&unfinished), "-o", out],
        1,
        "no usable positions",
    );
    // Not a file.
    let missing = dir.path().join("missing.pgn");
    polybook_fails(&["tune", s(&missing), "-o", out], 1, "missing.pgn");
    // A truncated xz file.
    let bytes = std::fs::read(data(GAMES)).unwrap();
    let cut = common::write_file(dir.path(), "cut.pgn.xz", &bytes[..bytes.len() / 2]);
    polybook_fails(&["tune", s(&cut), "-o", out], 1, "cut.pgn.xz");
    // Nonsense options.
    let games = data(GAMES);
    polybook_fails(&["tune", s(&games), "--positions", "0"], 2, "--positions");
    polybook_fails(
        &["tune", s(&games), "--regularization=-1"],
        2,
        "--regularization",
    );
    // An output that cannot be written.
    polybook_fails(
        &[
            "tune",
            s(&games),
            "--epochs",
            "1",
            "-o",
            dir.path().join("no/such/dir/p.txt").to_str().unwrap(),
        ],
        1,
        "cannot write",
    );
    assert!(!std::path::Path::new(out).exists(), "no half-written file");
}

/// On a terminal (`script` gives one), reading the games shows a progress bar with the bytes read
/// and the games, as `build` does, before the first report line.
#[test]
fn reading_the_games_shows_progress_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.txt");
    let games = data("pgn/gnuchess-book_1.02.pgn.xz");
    let command = format!(
        "{} tune {} -o {} --epochs 1 --positions 20000",
        common::BIN,
        games.display(),
        out.display()
    );
    let run = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    assert!(run.status.success(), "{}", common::stderr(&run));
    let text = String::from_utf8_lossy(&run.stdout);
    let bar = text.find("MiB/15.69 MiB").expect("a progress bar");
    let report = text.find("games read").expect("the report");
    assert!(bar < report, "{text}");
    assert!(text.contains(" games, "), "{text}");
}

#[test]
fn a_gzipped_input_gives_what_the_plain_one_gives() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    xz2::read::XzDecoder::new(std::fs::File::open(data(GAMES)).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    let plain = common::write_file(dir.path(), "games.pgn", &text);
    let gz = dir.path().join("games.pgn.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    encoder.write_all(&text).unwrap();
    encoder.finish().unwrap();
    let tune = |games: &std::path::Path, out: &str| {
        let out = dir.path().join(out);
        let json = polybook_ok(&[
            "tune",
            s(games),
            "-o",
            s(&out),
            "--positions",
            "3000",
            "--epochs",
            "3",
            "--threads",
            "1",
            "--json",
        ]);
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        (report["read"].clone(), std::fs::read(&out).unwrap())
    };
    let (read, params) = tune(&plain, "plain.txt");
    assert!(read["games_used"].as_u64().unwrap() > 40, "{read}");
    let (read_gz, params_gz) = tune(&gz, "gz.txt");
    assert_eq!(read_gz, read);
    assert!(params_gz == params, "another parameter file");
}
