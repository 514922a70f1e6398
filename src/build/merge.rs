//! Merging books: the union of their entries, as `polyglot merge-book` does, but with weights that
//! saturate at 65535 instead of wrapping around, and each position's moves sorted by weight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use crate::book::{Book, BookError, BookWriter, Entry, Key};

/// What a merge wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MergeReport {
    pub entries: u64,
    pub positions: u64,
    /// Entries whose summed weight passed 65535 and was held there.
    pub saturated: u64,
}

/// Merges `books` into a new book at `output` (written atomically).
///
/// A position's entries are those of every book; the same move in several books gets the sum of
/// the weights (at most 65535) and the learn value of the first book that has it. Entries are
/// sorted by key, then weight descending, ties in the order of the books given.
pub fn merge_books(books: &[Book], output: &Path) -> Result<MergeReport, BookError> {
    let mut writer = BookWriter::create(output)?;
    let mut report = MergeReport::default();
    // Next entry index per book, and a heap of the books' next keys.
    let mut next: Vec<usize> = vec![0; books.len()];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = books
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.is_empty())
        .map(|(i, b)| Reverse((b.entry(0).key.0, i)))
        .collect();
    let mut position: Vec<Entry> = Vec::new();
    while let Some(Reverse((key, _))) = heap.peek().copied() {
        position.clear();
        // Books come off the heap in key order, then book order: the first book's entries first.
        while let Some(&Reverse((k, i))) = heap.peek() {
            if k != key {
                break;
            }
            heap.pop();
            let book = &books[i];
            while next[i] < book.len() && book.entry(next[i]).key == Key(key) {
                let e = book.entry(next[i]);
                match position.iter_mut().find(|p| p.mv == e.mv) {
                    Some(p) => {
                        let sum = u32::from(p.weight) + u32::from(e.weight);
                        if sum > u32::from(u16::MAX) {
                            report.saturated += 1;
                        }
                        p.weight = sum.min(u32::from(u16::MAX)) as u16;
                    }
                    None => position.push(e),
                }
                next[i] += 1;
            }
            if next[i] < book.len() {
                heap.push(Reverse((book.entry(next[i]).key.0, i)));
            }
        }
        position.sort_by_key(|e| std::cmp::Reverse(e.weight));
        for e in &position {
            writer.write(e)?;
        }
        report.entries += position.len() as u64;
        report.positions += 1;
    }
    writer.finish()?;
    Ok(report)
}
