//! `split_and_range`: `polybook split` and `polybook tally --range` on damaged and odd PGN.

use std::path::Path;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::{
    COMMAND_LIMIT, PGN_TOKENS, assert_one_line, common, fuzz, mutate, pgn_seeds, run_in, said,
};

/// A mutated real PGN, and now and then the damage of files found in the wild: line ends
/// made CRLF, a byte-order mark first, a line of 200,000 bytes, a comment over many lines whose
/// lines look like tags and game starts, binary junk.
fn damaged_pgn(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut pgn = mutate(rng, seeds, PGN_TOKENS, 64 << 10);
    if rng.random_ratio(1, 5) {
        let mut crlf = Vec::with_capacity(pgn.len() * 2);
        for &b in &pgn {
            if b == b'\n' {
                crlf.push(b'\r');
            }
            crlf.push(b);
        }
        pgn = crlf;
    }
    if rng.random_ratio(1, 6) {
        pgn.splice(0..0, *b"\xef\xbb\xbf");
    }
    if rng.random_ratio(1, 8) {
        let at = rng.random_range(0..=pgn.len());
        let filler = [b'x', b' ', b'{', b'['][rng.random_range(0..4)];
        pgn.splice(at..at, std::iter::repeat_n(filler, 200_000));
    }
    if rng.random_ratio(1, 5) {
        let at = rng.random_range(0..=pgn.len());
        let mut comment = b"{ a comment\n".to_vec();
        for _ in 0..rng.random_range(1..200) {
            comment.extend_from_slice(
                [
                    &b"[Event \"in a comment\"]\n"[..],
                    b"\n",
                    b"1. e4 e5 2. Nf3 *\n",
                    b"[Site \"?\"]\n",
                    b"%escape\n",
                ][rng.random_range(0..5)],
            );
        }
        if rng.random_bool(0.8) {
            comment.extend_from_slice(b"}\n");
        }
        pgn.splice(at..at, comment);
    }
    if rng.random_ratio(1, 8) {
        let at = rng.random_range(0..=pgn.len());
        let junk: Vec<u8> = (0..rng.random_range(1..4096))
            .map(|_| rng.random())
            .collect();
        pgn.splice(at..at, junk);
    }
    pgn
}

/// Checks a failed run: exit 1, one line (after at most a few warnings), no panic.
fn failed_cleanly(ran: &crate::Ran, what: &str) {
    let told = said(&ran.stderr);
    assert!(!ran.stderr.contains("panicked"), "{what} panics: {told}");
    assert_eq!(ran.code, Some(1), "{what} ends with {:?}: {told}", ran.code);
    let last = ran.stderr.lines().last().unwrap_or("");
    assert!(last.starts_with("polybook: error: "), "{what}: {told}");
    assert_one_line(last);
}

/// Damaged and odd PGN (mutated real games, truncated games, binary junk, lines of 200,000 bytes,
/// CRLF, a byte-order mark, comments over many lines that look like games): `split` and `tally
/// --range` never panic or hang and exit 0 or 1 with one line; the parts of `split`, decompressed
/// in name order, are the input's bytes (every game in them, in order, none twice); and the
/// tallies of consecutive ranges cut anywhere, summed, are the tally of the whole file row for
/// row, with the same count of games.
#[test]
fn split_and_range() {
    let seeds = pgn_seeds();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fuzz(
        "split_and_range",
        80,
        Duration::from_secs(120),
        |rng| {
            // The case: the games per part, the cuts (fractions of the length), then the PGN.
            let mut input = vec![rng.random_range(1..6u8), rng.random_range(0..4u8)];
            for _ in 0..3 {
                input.push(rng.random());
            }
            input.extend(damaged_pgn(rng, &seeds));
            input
        },
        |input| {
            let (per_part, cuts, fractions, pgn) = (input[0], input[1], &input[2..5], &input[5..]);
            for entry in std::fs::read_dir(d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    std::fs::remove_dir_all(path).unwrap();
                } else {
                    std::fs::remove_file(path).unwrap();
                }
            }
            std::fs::write(d.join("in.pgn"), pgn).unwrap();

            // split: the parts are the input, cut at game starts.
            let args = [
                "split",
                "in.pgn",
                "--games",
                &per_part.to_string(),
                "-o",
                "parts",
                "-q",
            ];
            let ran = run_in(d, &args, COMMAND_LIMIT, &[]);
            let mut parts: Vec<String> = std::fs::read_dir(d.join("parts"))
                .map(|r| {
                    r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            parts.sort();
            assert!(
                parts
                    .iter()
                    .all(|p| p.starts_with("part-") && p.ends_with(".pgn.zst")),
                "split leaves {parts:?}"
            );
            if ran.code == Some(0) {
                let mut joined = Vec::new();
                for part in &parts {
                    let bytes = std::fs::read(d.join("parts").join(part)).unwrap();
                    joined.extend(zstd::decode_all(&bytes[..]).unwrap());
                }
                assert!(
                    joined == pgn,
                    "the parts of split are not the input ({} bytes of {})",
                    joined.len(),
                    pgn.len()
                );
                assert!(
                    !parts.is_empty() || pgn.iter().all(u8::is_ascii_whitespace),
                    "split of {} bytes wrote no part",
                    pgn.len()
                );
            } else {
                failed_cleanly(&ran, "split");
            }

            // tally of the whole file and of consecutive ranges: the same rows.
            let ran = run_in(
                d,
                &["tally", "in.pgn", "-o", "whole.parquet", "-q"],
                COMMAND_LIMIT,
                &[],
            );
            let whole = match ran.code {
                Some(0) => Some(common::summed_tallies(&[&d.join("whole.parquet")])),
                _ => {
                    failed_cleanly(&ran, "tally");
                    assert!(
                        ran.stderr.contains("in.pgn"),
                        "tally fails without naming in.pgn"
                    );
                    assert!(
                        !d.join("whole.parquet").exists(),
                        "tally fails and leaves a file"
                    );
                    None
                }
            };
            let len = pgn.len() as u64;
            let mut bounds: Vec<u64> = fractions[..usize::from(cuts)]
                .iter()
                .map(|&f| len * u64::from(f) / 255)
                .collect();
            bounds.sort();
            bounds.insert(0, 0);
            let mut ranges = Vec::new();
            for (i, &start) in bounds.iter().enumerate() {
                let range = match bounds.get(i + 1) {
                    Some(end) => format!("{start}:{end}"),
                    None => format!("{start}:"),
                };
                let out = format!("range{i}.parquet");
                let args = ["tally", "in.pgn", "--range", &range, "-o", &out, "-q"];
                let ran = run_in(d, &args, COMMAND_LIMIT, &[]);
                if whole.is_some() || ran.code == Some(0) {
                    assert!(
                        ran.code == Some(0),
                        "tally --range {range} of {len} bytes ends with {:?}: {}",
                        ran.code,
                        said(&ran.stderr)
                    );
                } else {
                    // The whole file is refused (binary data, say): a range may be too.
                    failed_cleanly(&ran, "tally --range");
                    assert!(
                        !d.join(&out).exists(),
                        "tally --range fails and leaves a file"
                    );
                    return;
                }
                ranges.push(d.join(out));
            }
            let ranges: Vec<&Path> = ranges.iter().map(|p| p.as_path()).collect();
            let (rows, games) = common::summed_tallies(&ranges);
            // A whole file refused for having no usable game: the ranges have none either.
            let whole = whole.unwrap_or_default();
            assert_eq!(
                games, whole.1,
                "the ranges count other games than the whole"
            );
            assert!(
                rows == whole.0,
                "the ranges' tallies summed are not the whole file's ({} rows, not {})",
                rows.len(),
                whole.0.len()
            );
        },
    );
}
