//! The net's data and training: `polybook datagen` labels the same positions with the same
//! scores whatever the thread count and however often it is stopped and resumed (Ctrl-C and
//! `kill -9` included); `polybook train` makes the same net on one thread and two, refuses labels
//! of other games, and its net is what the engine reads; bad input is one line.

use crate::common;
use common::{data, path_str as s, polybook, polybook_fails, stderr};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The lichess games with their analysis: about 1,000 games, quick to read.
fn games() -> std::path::PathBuf {
    data("pgn/lichess_magnus_analysed.pgn.xz")
}

fn datagen(out: &Path, extra: &[&str]) -> String {
    let games = games();
    let mut args = vec!["datagen", s(&games), "-o", s(out)];
    args.extend_from_slice(extra);
    if !extra.contains(&"--nodes") {
        args.extend(["--nodes", "300"]);
    }
    let o = polybook(&args);
    assert!(o.status.success(), "polybook {args:?}: {}", stderr(&o));
    stderr(&o)
}

const HEADER: usize = 40;

/// Bytes of a whole block of 1,024 labels in a label file: the labels and a CRC-32.
const BLOCK_BYTES: usize = 2 * 1024 + 4;

/// The labels of a label file's whole blocks (its checksums left out).
fn labels_of(file: &[u8]) -> Vec<i16> {
    file[HEADER..]
        .chunks(BLOCK_BYTES)
        .filter(|b| b.len() == BLOCK_BYTES)
        .flat_map(|b| b[..2048].chunks(2))
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

#[test]
fn labels_are_the_same_on_any_thread_count_and_after_a_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let said = datagen(&d("one"), &["--positions", "3072", "--threads", "1"]);
    common::assert_contains(&said, "0 labelled, 3072 to label at 300 nodes");
    let one = std::fs::read(d("one")).unwrap();
    assert_eq!(one.len(), HEADER + 3 * BLOCK_BYTES);
    assert_eq!(&one[..8], b"PBLABEL2");

    // Two threads, in two steps: the same bytes.
    datagen(&d("two"), &["--positions", "1024", "--threads", "2"]);
    assert_eq!(
        std::fs::metadata(d("two")).unwrap().len(),
        (HEADER + BLOCK_BYTES) as u64
    );
    let said = datagen(&d("two"), &["--positions", "3072", "--threads", "2"]);
    common::assert_contains(&said, "1024 labelled, 2048 to label");
    assert_eq!(std::fs::read(d("two")).unwrap(), one);

    // A file cut inside a block goes on from the block's start.
    let mut cut = one.clone();
    cut.truncate(HEADER + 2 * 1500);
    std::fs::write(d("cut"), &cut).unwrap();
    let said = datagen(&d("cut"), &["--positions", "3072"]);
    common::assert_contains(&said, "1024 labelled, 2048 to label");
    assert_eq!(std::fs::read(d("cut")).unwrap(), one);

    // A file with no whole block: `train` names it.
    std::fs::write(d("header_only"), &one[..HEADER]).unwrap();
    let data_arg = format!("{}={}", s(&d("header_only")), s(&games()));
    // (After the line that says what each data set holds.)
    let out = polybook(&["train", "--data", &data_arg, "-o", s(&d("net.nnue"))]);
    common::failed(&out, 1, "header_only': too few labelled positions");
    assert!(!d("net.nnue").exists());

    // A damaged block (one byte of block 1 changed on disk) is found by its checksum: `train`
    // refuses the file, naming the block; `datagen` labels it again from there, to the same bytes.
    let mut damaged = one.clone();
    damaged[HEADER + BLOCK_BYTES + 100] ^= 0x10;
    std::fs::write(d("damaged"), &damaged).unwrap();
    let data_arg = format!("{}={}", s(&d("damaged")), s(&games()));
    let err = polybook_fails(
        &["train", "--data", &data_arg, "-o", s(&d("net.nnue"))],
        1,
        "block 1 (positions 1024 to 2047) is damaged (wrong checksum)",
    );
    common::assert_contains(&err, "datagen");
    assert!(!d("net.nnue").exists());
    let said = datagen(&d("damaged"), &["--positions", "3072"]);
    common::assert_contains(&said, "block 1 (positions 1024 to 2047) is damaged");
    common::assert_contains(&said, "1024 labelled, 2048 to label");
    assert_eq!(std::fs::read(d("damaged")).unwrap(), one);

    // A file of the first format (no checksums) is written again in the current one.
    let mut first: Vec<u8> = b"PBLABEL1".to_vec();
    first.extend(&one[8..HEADER]);
    first.extend(labels_of(&one).iter().flat_map(|l| l.to_le_bytes()));
    std::fs::write(d("first"), &first).unwrap();
    let said = datagen(&d("first"), &["--positions", "3072"]);
    common::assert_contains(&said, "a label file of the first format");
    assert_eq!(std::fs::read(d("first")).unwrap(), one);

    // Most positions get a score; some are left out (a capture or a mate was best); scores are
    // centipawns, not mates.
    let labels = labels_of(&one);
    assert_eq!(labels.len(), 3072);
    let skipped = labels.iter().filter(|&&l| l == i16::MIN).count();
    assert!(
        skipped > 0 && skipped < labels.len() / 3,
        "{skipped} skipped"
    );
    let scored: Vec<i32> = labels
        .iter()
        .filter(|&&l| l != i16::MIN)
        .map(|&l| l.into())
        .collect();
    assert!(scored.iter().all(|l| l.abs() <= 30000));
    let small = scored.iter().filter(|l| l.abs() < 300).count();
    assert!(
        small > scored.len() / 2,
        "{small} of {} within 3 pawns",
        scored.len()
    );
}

/// Ctrl-C stops labelling within a second (exit 130, the blocks done kept); `kill -9` loses only
/// the blocks in progress; the same command then finishes with the bytes of a run never stopped.
#[cfg(target_os = "linux")]
#[test]
fn stopped_labelling_goes_on_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let games = games();
    // Searches long enough that a block takes a second or more.
    datagen(
        &d("whole"),
        &[
            "--positions",
            "4096",
            "--threads",
            "1",
            "--quiet",
            "--nodes",
            "1500",
        ],
    );
    let whole = std::fs::read(d("whole")).unwrap();
    let out = d("stopped");
    for signal in ["INT", "KILL"] {
        let child = Command::new(common::BIN)
            .args([
                "datagen",
                s(&games),
                "--nodes",
                "1500",
                "--positions",
                "4096",
            ])
            .args(["--threads", "1", "-o"])
            .arg(&out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for a block more than was there.
        let before = std::fs::metadata(&out).map_or(0, |m| m.len());
        let start = Instant::now();
        while std::fs::metadata(&out).map_or(0, |m| m.len()) <= before.max(HEADER as u64) {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "no block labelled"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        common::signal_and_wait(child, signal, "the same command goes on from there");
        let now = std::fs::read(&out).unwrap();
        assert!(
            now.len() < whole.len(),
            "{signal}: finished before the signal"
        );
        let whole_blocks = (now.len() - HEADER) / BLOCK_BYTES * BLOCK_BYTES;
        assert_eq!(
            now[..HEADER + whole_blocks],
            whole[..HEADER + whole_blocks],
            "{signal}"
        );
    }
    let said = datagen(
        &out,
        &["--positions", "4096", "--threads", "2", "--nodes", "1500"],
    );
    assert!(!said.contains(" 0 labelled"), "{said}");
    assert_eq!(std::fs::read(&out).unwrap(), whole);
}

#[test]
fn the_same_labels_train_the_same_net_on_one_thread_and_two() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    datagen(&d("labels"), &["--positions", "4096", "--quiet"]);
    let games = games();
    let train = |out: &str, threads: &str| {
        let data = format!("{}={}", s(&d("labels")), s(&games));
        let out_path = d(out);
        let args = [
            "train",
            "--data",
            &data,
            "-o",
            s(&out_path),
            "--epochs",
            "8",
            "--batch-size",
            "256",
            "--learning-rate",
            "0.005",
            "--threads",
            threads,
            "--json",
        ];
        let o = polybook(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (std::fs::read(d(out)).unwrap(), report)
    };
    let (one, report) = train("one.nnue", "1");
    let (two, _) = train("two.nnue", "2");
    assert_eq!(one, two);
    assert_eq!(one.len(), polybook::engine::nnue::Network::FILE_SIZE);
    let epochs = report["epochs"].as_array().unwrap();
    assert_eq!(epochs.len(), 8);
    // It learns (3,278 positions are too few for the held-out loss to fall much).
    let loss = |e: &serde_json::Value| e["train_loss"].as_f64().unwrap();
    assert!(loss(&epochs[7]) < loss(&epochs[0]) * 0.5, "{report}");
    // The engine reads what train writes.
    let net = polybook::engine::nnue::Network::from_bytes(&one).unwrap();
    let start = net.evaluate_position(&shakmaty::Chess::default());
    assert!(start.abs() < 200, "{start}");
}

#[test]
fn bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let games = games();
    let other = data("pgn/edge/pychess/bilbao.pgn");
    datagen(&d("labels"), &["--positions", "1024", "--quiet"]);
    std::fs::write(
        d("junk"),
        b"not labels at all, but long enough for a header...",
    )
    .unwrap();
    let (g, l, o) = (s(&games), d("labels"), d("net.nnue"));
    let (l, o, junk) = (s(&l), s(&o), d("junk"));
    let (other_data, junk_data, data) = (
        format!("{l}={}", s(&other)),
        format!("{}={g}", s(&junk)),
        format!("{l}={g}"),
    );
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["datagen", g, "-o", l, "--every", "3", "--nodes", "300"],
            1,
            "labelled with --skip-plies 8 --every 4, not --skip-plies 8 --every 3",
        ),
        (
            vec!["datagen", g, "-o", l, "--nodes", "500"],
            1,
            "labelled at --nodes 300, not 500",
        ),
        (vec!["datagen", g, "-o", l, "--nodes", "0"], 2, "at least 1"),
        (
            vec!["datagen", s(&other), "-o", l, "--nodes", "300"],
            1,
            "other positions",
        ),
        (
            vec!["datagen", s(&junk), "-o", l],
            1,
            "no position of the games",
        ),
        (
            vec!["train", "--data", &other_data, "-o", o],
            1,
            "give the games it was made from",
        ),
        (
            vec!["train", "--data", &junk_data, "-o", o],
            1,
            "not a polybook label file",
        ),
        (
            vec!["train", "--data", l, "-o", o],
            2,
            "--data expects LABELS=GAMES",
        ),
        (
            vec!["train", "--data", &data, "-o", o, "--wdl", "2"],
            2,
            "--wdl",
        ),
        (
            vec!["train", "--data", &data, "-o", o, "--epochs", "0"],
            2,
            "at least 1",
        ),
    ];
    for (args, code, want) in cases {
        polybook_fails(&args, code, want);
    }
    assert!(!d("net.nnue").exists());
}

/// `--every 2 --part 1` keeps the candidates that `--every 2` leaves out: the two parts share the
/// candidates out, and a label file of one part is not resumed as the other.
#[test]
fn the_parts_of_every_share_the_candidates_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    // "… N candidate positions, K kept; …"
    let counts = |said: &str| -> (u64, u64) {
        let n = |word: &str| -> u64 {
            let before = said.split(word).next().unwrap();
            before.split_whitespace().last().unwrap().parse().unwrap()
        };
        (n(" candidate positions"), n(" kept"))
    };
    let args = ["--positions", "1024", "--every", "2", "--quiet"];
    let (all, zero) = counts(&datagen(&d("zero"), &args));
    let (all_again, one) = counts(&datagen(&d("one"), &[&args[..], &["--part", "1"]].concat()));
    assert_eq!(all, all_again);
    assert!(zero > all / 3 && one > all / 3, "{zero} and {one} of {all}");
    assert_eq!(zero + one, all);
    // Part 0's file is what files were before parts: the rule (2) alone in bytes 20..24.
    let bytes = std::fs::read(d("zero")).unwrap();
    assert_eq!(bytes[20..24], 2u32.to_le_bytes());
    let bytes = std::fs::read(d("one")).unwrap();
    assert_eq!(bytes[20..24], (2u32 | 1 << 16).to_le_bytes());
    let (g, one_file) = (games(), d("one"));
    let (g, l) = (s(&g), s(&one_file));
    let resume_as = |part: &'static str| {
        vec![
            "datagen", g, "-o", l, "--every", "2", "--part", part, "--nodes", "300",
        ]
    };
    polybook_fails(
        &resume_as("0"),
        1,
        "labelled with --skip-plies 8 --every 2 --part 1, not --skip-plies 8 --every 2",
    );
    polybook_fails(&resume_as("2"), 2, "the parts are 0 to 1");
    // The trainer reads a part's positions (one epoch is enough to see it accepted).
    let data = format!("{l}={g}");
    let out = d("net.nnue");
    let o = polybook(&["train", "--data", &data, "-o", s(&out), "--epochs", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    common::assert_contains(&stderr(&o), "1024 of ");
}
