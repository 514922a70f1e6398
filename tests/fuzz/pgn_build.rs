//! `pgn_build`: mutated real PGN built into books at several thread counts and chunk sizes.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use polybook::builder::{BuildOptions, build};
use polybook::pgn::input::Input;

use crate::{PGN_TOKENS, assert_one_line, fuzz, mutate, pgn_seeds};

/// Builds `pgn` with `threads` parser threads and chunks of `chunk` bytes: the book's bytes and what
/// the report counted, or the error's text.
fn build_bytes(
    pgn: &Path,
    out: &Path,
    threads: usize,
    chunk: usize,
    memory: usize,
) -> Result<(Vec<u8>, String), String> {
    let opts = BuildOptions {
        threads,
        chunk_size: chunk,
        memory,
        rules: polybook::builder::EntryRules {
            min_games: 1,
            ..Default::default()
        },
        ..BuildOptions::default()
    };
    let _ = std::fs::remove_file(out);
    match build(
        &[Input::File(pgn.to_path_buf())],
        out,
        &opts,
        &AtomicBool::new(false),
        &(),
    ) {
        Ok(r) => {
            let counted = format!(
                "games {} used {} skipped {:?} cut short {:?} plies {} examples {:?}",
                r.games, r.used, r.skipped, r.truncated, r.plies, r.examples
            );
            Ok((std::fs::read(out).unwrap(), counted))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Mutated real PGN: the build never panics, errors are one line, and the book is the same bytes
/// and the report the same counts whatever the threads and the chunk size.
#[test]
fn pgn_build() {
    let seeds = pgn_seeds();
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("in.pgn");
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    fuzz(
        "pgn_build",
        300,
        Duration::from_secs(60),
        |rng| mutate(rng, &seeds, PGN_TOKENS, 64 << 10),
        |input| {
            std::fs::write(&pgn, input).unwrap();
            let whole = build_bytes(&pgn, &a, 1, 1 << 20, 64 << 20);
            let chunked = build_bytes(&pgn, &b, 2, 16 << 10, 4 << 20);
            if let Err(e) = &whole {
                assert_one_line(e);
            }
            if let Err(e) = &chunked {
                assert_one_line(e);
            }
            if let (Ok(x), Ok(y)) = (&whole, &chunked) {
                assert!(x.0 == y.0, "the book depends on --threads / the chunk size");
                assert_eq!(x.1, y.1, "the report depends on --threads / the chunk size");
            }
        },
    );
}
