//! `polybook merge` against `polyglot merge-book` on the bundled books: the same union of entries,
//! weights held at 65535 where polyglot's wrap around, and every position sorted by weight.

use crate::common;
use common::data;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The raw records of a book file: (key, move, weight, learn), read here byte by byte.
fn records(path: &Path) -> Vec<(u64, u16, u16, u32)> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .chunks_exact(16)
        .map(|r| {
            (
                u64::from_be_bytes(r[0..8].try_into().unwrap()),
                u16::from_be_bytes(r[8..10].try_into().unwrap()),
                u16::from_be_bytes(r[10..12].try_into().unwrap()),
                u32::from_be_bytes(r[12..16].try_into().unwrap()),
            )
        })
        .collect()
}

#[test]
fn merge_matches_polyglot_merge_book_but_saturates_and_sorts() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = [
        ("books/gnuchess.bin", "books/pychess.bin"),
        ("books/performance.bin", "books/gm2001.bin"),
        ("books/rodent3_guide.bin", "books/rodent3_small.bin"),
        ("books/lasker-trap.bin", "books/gnuchess.bin"),
    ];
    let mut wrapped_seen = 0;
    for (a, b) in pairs {
        let (a, b) = (data(a), data(b));
        let pg = dir.path().join("pg.bin");
        let o = Command::new(common::polyglot())
            .args(["merge-book", "-in1"])
            .arg(&a)
            .arg("-in2")
            .arg(&b)
            .arg("-out")
            .arg(&pg)
            .output()
            .expect("polyglot runs (apt-get install -y polyglot)");
        assert!(String::from_utf8_lossy(&o.stdout).contains("done"));
        let pb = dir.path().join("pb.bin");
        let o = Command::new(env!("CARGO_BIN_EXE_polybook"))
            .args(["merge", a.to_str().unwrap(), b.to_str().unwrap(), "-o"])
            .arg(&pb)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

        // The true sums, from the inputs.
        let mut sums: HashMap<(u64, u16), u32> = HashMap::new();
        for r in records(&a).into_iter().chain(records(&b)) {
            *sums.entry((r.0, r.1)).or_default() += u32::from(r.2);
        }
        let theirs = records(&pg);
        let ours = records(&pb);
        assert_eq!(theirs.len(), ours.len(), "{}", a.display());
        let ours_by: HashMap<(u64, u16), (u16, u32)> =
            ours.iter().map(|r| ((r.0, r.1), (r.2, r.3))).collect();
        for t in &theirs {
            let (w, learn) = ours_by[&(t.0, t.1)];
            assert_eq!(learn, t.3, "learn of {:016x} {}", t.0, t.1);
            let sum = sums[&(t.0, t.1)];
            if sum > 65535 {
                wrapped_seen += 1;
                assert_eq!(u32::from(t.2), sum % 65536, "polyglot wraps around");
                assert_eq!(w, 65535);
            } else {
                assert_eq!(w, t.2);
            }
        }
        // Sorted by key, then weight descending.
        assert!(
            ours.windows(2)
                .all(|p| p[0].0 < p[1].0 || (p[0].0 == p[1].0 && p[0].2 >= p[1].2))
        );
    }
    assert!(wrapped_seen > 0, "no pair exercised the 16-bit overflow");
}

#[test]
fn merge_refuses_bad_books_and_its_own_input() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.bin");
    std::fs::copy(data("books/gm2001.bin"), &copy).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_polybook"))
            .arg("merge")
            .args(args)
            .output()
            .unwrap()
    };
    let bad = data("books/invalid/html-page-saved-as.bin");
    let o = run(&[
        copy.to_str().unwrap(),
        bad.to_str().unwrap(),
        "-o",
        "/tmp/never.bin",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("HTML page"));
    let o = run(&[
        copy.to_str().unwrap(),
        copy.to_str().unwrap(),
        "-o",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is one of the inputs"));
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(data("books/gm2001.bin")).unwrap()
    );
    let o = run(&[copy.to_str().unwrap(), "-o", "x.bin"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Inputs holding move codes that are no move at all (bit 15 set, from = to, a promotion from the
/// 4th rank) are merged without those entries, with one warning line per input naming the file,
/// the count and the first: the book written passes `verify`, and is the merge of the clean inputs.
#[test]
fn merge_leaves_out_impossible_move_codes_and_writes_a_valid_book() {
    let dir = tempfile::tempdir().unwrap();
    let clean = records(&data("books/gm2001.bin"));
    let mut broken = clean.clone();
    let (k0, k1) = (clean[100].0, clean[2000].0);
    // Each under a key of the book, where it belongs in key order.
    broken.insert(101, (k0, 0x8000 | clean[100].1, 5, 0));
    broken.insert(2002, (k1, 9 | 9 << 6, 7, 0));
    broken.insert(2003, (k1, 28 | 12 << 6 | 4 << 12, 1, 0));
    let write = |path: &PathBuf, records: &[(u64, u16, u16, u32)]| {
        let bytes: Vec<u8> = records
            .iter()
            .flat_map(|r| {
                let mut b = r.0.to_be_bytes().to_vec();
                b.extend(r.1.to_be_bytes());
                b.extend(r.2.to_be_bytes());
                b.extend(r.3.to_be_bytes());
                b
            })
            .collect();
        std::fs::write(path, bytes).unwrap();
    };
    let broken_path = dir.path().join("broken.bin");
    write(&broken_path, &broken);
    let verify = |path: &PathBuf| {
        Command::new(env!("CARGO_BIN_EXE_polybook"))
            .arg("verify")
            .arg(path)
            .output()
            .unwrap()
    };
    // The input itself is not a valid book.
    assert_eq!(verify(&broken_path).status.code(), Some(1));
    let merged = dir.path().join("merged.bin");
    let o = Command::new(env!("CARGO_BIN_EXE_polybook"))
        .arg("merge")
        .arg(&broken_path)
        .arg(data("books/performance.bin"))
        .arg("-o")
        .arg(&merged)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "polybook: warning: {}: 3 entries with impossible move codes left out (first: entry 101, key {:016x}: move code 0x",
            broken_path.display(),
            k0
        )) && err.contains("bit 15"),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["dropped"], serde_json::json!([3, 0]));
    let v = verify(&merged);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // The same book as the merge of the inputs without those entries.
    let reference = dir.path().join("reference.bin");
    let o = Command::new(env!("CARGO_BIN_EXE_polybook"))
        .arg("merge")
        .arg(data("books/gm2001.bin"))
        .arg(data("books/performance.bin"))
        .arg("-o")
        .arg(&reference)
        .output()
        .unwrap();
    assert!(o.status.success() && o.stderr.is_empty());
    assert!(std::fs::read(&merged).unwrap() == std::fs::read(&reference).unwrap());
}

/// `--strategy priority` is PolyGlot 1.4's `merge-book` rule (Debian's polyglot 2.0 sums, so the
/// expected book is made here from the inputs' records): each position comes whole from the first
/// book listed that has it. `--strategy max` keeps the largest weight of a move found in several
/// books. Three books, the second an Arena book (any format merges).
#[test]
fn merge_priority_and_max_take_positions_and_weights_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.bin");
    common::start_book(&small, &[("e2e4", 7), ("c2c4", 1)]);
    let abk = data("books/libra8.abk");
    let abk_bin = dir.path().join("libra8.bin");
    let o = common::polybook(&[
        "convert",
        abk.to_str().unwrap(),
        "-o",
        abk_bin.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let gm = data("books/gm2001.bin");
    let inputs = [small.clone(), abk_bin.clone(), gm.clone()];
    let per_book: Vec<Vec<(u64, u16, u16, u32)>> = inputs.iter().map(|p| records(p)).collect();

    for strategy in ["priority", "max"] {
        let out = dir.path().join(format!("{strategy}.bin"));
        let o = common::polybook(&[
            "merge",
            small.to_str().unwrap(),
            abk.to_str().unwrap(),
            gm.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--strategy",
            strategy,
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ours: HashMap<(u64, u16), u16> =
            records(&out).iter().map(|r| ((r.0, r.1), r.2)).collect();

        // The expected weights, from the inputs' records.
        let mut expected: HashMap<(u64, u16), u16> = HashMap::new();
        let mut owner: HashMap<u64, usize> = HashMap::new();
        let mut skipped = [0u64; 3];
        for (i, book) in per_book.iter().enumerate() {
            for r in book {
                if strategy == "priority" {
                    let first = *owner.entry(r.0).or_insert(i);
                    if first != i {
                        skipped[i] += 1;
                        continue;
                    }
                }
                let w = expected.entry((r.0, r.1)).or_insert(0);
                *w = (*w).max(r.2);
            }
        }
        assert_eq!(ours, expected, "--strategy {strategy}");
        if strategy == "priority" {
            // The start position is the small book's alone: 1. e4 and 1. c4 as it says.
            let start = 0x463b96181691fc9c_u64;
            let mut at_start: Vec<_> = ours.iter().filter(|(k, _)| k.0 == start).collect();
            at_start.sort();
            assert_eq!(at_start.len(), 2, "{at_start:?}");
            assert_eq!(report["skipped"], serde_json::json!(skipped));
            assert!(skipped[1] > 0 && skipped[2] > 0, "{skipped:?}");
        }
        let v = common::polybook(&["verify", out.to_str().unwrap()]);
        assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    }
}
