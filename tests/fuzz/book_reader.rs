//! `book_reader`: mutated real books opened, probed, listed, verified and merged in process.

use std::time::Duration;

use polybook::book::Book;
use shakmaty::{Chess, Color, Position};

use crate::{assert_one_line, book_seeds, fuzz, mutate_book};

/// Positions to probe: the start, and those reached by the book's own moves (a few plies).
fn probe_walk(book: &Book) -> usize {
    let mut frontier = vec![Chess::default()];
    let mut probed = 0;
    for _ in 0..3 {
        let mut next = Vec::new();
        for pos in frontier.iter().take(40) {
            let probe = book.probe(pos);
            probed += 1;
            for m in probe.legal {
                let mut child = pos.clone();
                child.play_unchecked(m.mv);
                next.push(child);
            }
        }
        frontier = next;
    }
    probed
}

/// Mutated real books: opening, probing, `info`, `lines`, `verify` and `merge` never panic, their
/// errors are one line, and whatever `merge` writes passes `verify`.
#[test]
fn book_reader() {
    let seeds = book_seeds();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.bin");
    let merged = dir.path().join("merged.bin");
    fuzz(
        "book_reader",
        1500,
        Duration::from_secs(60),
        |rng| mutate_book(rng, &seeds),
        |input| {
            std::fs::write(&path, input).unwrap();
            match polybook::inspect::verify(&path, 20) {
                Ok(report) => {
                    for p in &report.problems {
                        assert_one_line(&p.to_string());
                    }
                }
                Err(e) => assert_one_line(&e.to_string()),
            }
            let book = match Book::open(&path) {
                Ok(book) => book,
                Err(e) => return assert_one_line(&e.to_string()),
            };
            probe_walk(&book);
            polybook::inspect::book_info(&book);
            for color in [Color::White, Color::Black] {
                polybook::inspect::write_lines(&book, "in.bin", color, &mut std::io::sink())
                    .unwrap();
            }
            let _ = std::fs::remove_file(&merged);
            match polybook::builder::merge_books(
                &[book],
                &merged,
                polybook::builder::MergeStrategy::Sum,
            ) {
                Ok(_) => {
                    let report = polybook::inspect::verify(&merged, 20).unwrap();
                    assert!(
                        report.is_ok(),
                        "merge wrote a book verify rejects: {:?}",
                        report.problems.first().map(|p| p.to_string())
                    );
                }
                Err(e) => assert_one_line(&e.to_string()),
            }
        },
    );
}
