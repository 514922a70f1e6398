//! `tally_reader`: mutated real Parquet tallies read by `book`, `tally --merge` and `probe`.

use std::path::Path;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::{assert_one_line, fuzz, run_in, said, tally_seeds};

/// Where a Parquet file's footer (its metadata: schema, row groups, key-value pairs) lies.
fn parquet_footer(bytes: &[u8]) -> std::ops::Range<usize> {
    let n = bytes.len();
    if n < 12 || &bytes[n - 4..] != b"PAR1" {
        return 0..0;
    }
    let len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    n.saturating_sub(8 + len).max(4)..n - 8
}

/// The schema's column names, in pairs of the same length (swapped: the columns trade places).
const TALLY_NAMES: &[(&[u8], &[u8])] = &[
    (b"games", b"draws"),
    (b"wins", b"move"),
    (b"first", b"black"),
    (b"games", b"first"),
    (b"losses", b"lossez"),
    (b"key", b"kez"),
    (b"polybook.tally", b"polybook.tallx"),
    (b"rated_games", b"rated_gamez"),
    (b"last_date", b"last_datf"),
];

/// A mutation of a real tally: bit flips (half of them in the footer, where the schema, the row
/// counts and the offsets are), bytes set to values that Parquet's varints and lengths make
/// much of, the file's own bytes spliced elsewhere, truncations, zeroed runs, and the schema's
/// column names swapped or changed.
fn mutate_tally(rng: &mut StdRng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    let footer = parquet_footer(&b);
    for _ in 0..rng.random_range(1..=3) {
        if b.is_empty() {
            break;
        }
        let n = b.len();
        let at = |rng: &mut StdRng| {
            if footer.end <= n && !footer.is_empty() && rng.random_bool(0.35) {
                rng.random_range(footer.clone())
            } else {
                rng.random_range(0..n)
            }
        };
        match rng.random_range(0..13) {
            0..=2 => {
                for _ in 0..rng.random_range(1..=3) {
                    let i = at(rng);
                    b[i] ^= 1 << rng.random_range(0..8);
                }
            }
            3 => {
                let i = at(rng);
                b[i] = [0, 0xff, 0x7f, 0x80, 0x01, 0x15, 0x19, 0x1c][rng.random_range(0..8)];
            }
            4 => {
                // Varint continuation bytes: lengths and counts that go on and on.
                let i = at(rng);
                let end = (i + rng.random_range(1..24)).min(n);
                let fill = [0xff, 0x80][rng.random_range(0..2)];
                b[i..end].fill(fill);
            }
            5 => {
                // The file's own bytes over another place.
                let from = rng.random_range(0..n);
                let len = rng.random_range(1..=256).min(n - from);
                let piece = b[from..from + len].to_vec();
                let to = at(rng);
                let end = (to + len).min(n);
                b[to..end].copy_from_slice(&piece[..end - to]);
            }
            6 => {
                // ... or put in between.
                let from = rng.random_range(0..n);
                let len = rng.random_range(1..=256).min(n - from);
                let piece = b[from..from + len].to_vec();
                let to = at(rng);
                b.splice(to..to, piece);
            }
            7 => {
                let cut = at(rng);
                if rng.random_bool(0.5) {
                    b.truncate(cut);
                } else {
                    b.drain(cut..(cut + rng.random_range(1..512)).min(n));
                }
            }
            8 => {
                let i = at(rng);
                let end = (i + rng.random_range(1..128)).min(n);
                b[i..end].fill(0);
            }
            9 => {
                // The footer's length, or the magic.
                let i = n - rng.random_range(1..=8.min(n));
                b[i] = rng.random();
            }
            10 if footer.end == n - 8 && b[n - 9] == 0 => {
                // A field of the footer's own (an id no reader knows) before its stop byte: a
                // list, set or map that claims up to 2^31 - 1 booleans (or bytes) in a few bytes.
                let mut field = vec![[0x09, 0x0a, 0x0b][rng.random_range(0..3)], 0xc8, 0x01];
                let count = [0xff, 0xff, 0xff, 0xff, 0x07];
                let elements = [0x01, 0x02, 0x03][rng.random_range(0..3)];
                if field[0] == 0x0b {
                    field.extend(count);
                    field.push(elements << 4 | elements);
                } else {
                    field.push(0xf0 | elements);
                    field.extend(count);
                }
                b.splice(n - 9..n - 9, field.iter().copied());
                let len = (b.len() - 8 - footer.start) as u32;
                let at = b.len() - 8;
                b[at..at + 4].copy_from_slice(&len.to_le_bytes());
            }
            _ => {
                let (x, y) = TALLY_NAMES[rng.random_range(0..TALLY_NAMES.len())];
                let swap = rng.random_bool(0.5);
                let region = footer.start.min(n)..footer.end.min(n);
                let mut i = region.start;
                while i + x.len() <= region.end {
                    if &b[i..i + x.len()] == x {
                        b[i..i + x.len()].copy_from_slice(y);
                        i += x.len();
                    } else if swap && &b[i..i + y.len()] == y {
                        b[i..i + y.len()].copy_from_slice(x);
                        i += y.len();
                    } else {
                        i += 1;
                    }
                }
            }
        }
    }
    b
}

/// How long one command may take on a mutated tally (the sound ones take milliseconds).
const TALLY_RUN_LIMIT: Duration = Duration::from_secs(10);

/// Runs `polybook ARGS` with stdout and stderr to files, killed after [`TALLY_RUN_LIMIT`]; checks
/// that it exits 0 or 1 (no panic, no abort, no signal), that a failure is one line naming
/// `bad` (the mutated file's name), and that it did not hang. Returns whether it succeeded.
fn tally_command(dir: &Path, args: &[&std::ffi::OsStr], bad: &str) -> bool {
    let command: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
    let command = command[..2].join(" ");
    let ran = run_in(dir, args, TALLY_RUN_LIMIT, &[]);
    let stderr = ran.stderr;
    let said = said(&stderr);
    match ran.code {
        Some(0) => {
            assert!(
                stderr.lines().count() <= 1,
                "polybook {command} succeeds, saying: {said}"
            );
            true
        }
        Some(1) => {
            assert!(
                stderr.lines().count() == 1 && !stderr.contains("panicked"),
                "polybook {command} fails with several lines: {said}"
            );
            assert!(
                stderr.contains(bad),
                "polybook {command} fails without naming {bad}: {said}"
            );
            assert_one_line(stderr.trim_end());
            false
        }
        code => panic!(
            "polybook {command} ends with {code:?} ({}): {said}",
            ran.status
        ),
    }
}

/// Mutated real tallies (bit flips, splices of their own bytes, truncations, footer and schema
/// damage, zeroed runs; with no rows, one row group or two): `book` (one tally, and two summed),
/// `tally --merge` and `probe` (the lookup `explore --tally` also uses) never panic, abort or
/// hang; they exit 0 or 1, and a failure is one line that names the mutated file.
#[test]
fn tally_reader() {
    let seeds = tally_seeds();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("mutated.parquet");
    let (book, merged) = (dir.path().join("out.bin"), dir.path().join("out.parquet"));
    // Each case is a seed's number (a byte), then the mutated file.
    fuzz(
        "tally_reader",
        200,
        Duration::from_secs(120),
        |rng| {
            // The file of two row groups is the slowest to run: a case in eight.
            let seed = if rng.random_ratio(1, 8) {
                seeds.files.len() - 1
            } else {
                rng.random_range(0..seeds.files.len() - 1)
            };
            let mut input = vec![seed as u8];
            input.extend(mutate_tally(rng, &seeds.files[seed].1));
            input
        },
        |input| {
            let (seed, bytes) = input.split_first().unwrap();
            let sound = seeds.files[usize::from(*seed)].0.as_os_str();
            std::fs::write(&bad, bytes).unwrap();
            let name = "mutated.parquet";
            let b = bad.as_os_str();
            let (book, merged) = (book.as_os_str(), merged.as_os_str());
            let run = |args: &[&str], files: &[&std::ffi::OsStr]| {
                let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
                all.extend_from_slice(files);
                tally_command(dir.path(), &all, name)
            };
            // One tally: its row groups made into entries on several threads.
            run(&["book", "-q", "-o"], &[book, b]);
            // Two: the k-way merge, also that of `tally --merge`.
            run(&["book", "-q", "-o"], &[book, sound, b]);
            run(&["tally", "--merge", "-q", "-o"], &[merged, b]);
            run(&["tally", "--merge", "-q", "-o"], &[merged, b, sound]);
            // Lookups by key: the start position, and one a few moves in.
            if run(&["probe", "--json"], &[b]) {
                run(&["probe", "--moves", "e2e4 c7c5 g1f3", "--no-board"], &[b]);
            }
        },
    );
}
