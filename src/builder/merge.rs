//! Merging books: the union of their entries, as `polyglot merge-book` does, but with weights that
//! saturate at 65535 instead of wrapping around, and each position's moves sorted by weight.
//! Sorting one book into the canonical order is the same walk over a single book.

use std::cmp::Reverse;
use std::convert::Infallible;
use std::path::Path;

use super::keyed_merge::KeyedMerge;
use crate::book::{Book, BookError, BookWriter, Entry, LearnLayout};

/// How [`merge_books`] combines the books where several have the same position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MergeStrategy {
    /// Every book's moves; the same move in several books gets the summed weight (Debian's
    /// `polyglot merge-book`, which wraps around where polybook holds the sum at 65535).
    #[default]
    Sum,
    /// The first book listed that has the position gives all its moves; the others' moves there
    /// are left out (PolyGlot 1.4's `merge-book`: `-in1` has priority).
    Priority,
    /// Every book's moves; the same move in several books gets the largest of its weights (for
    /// books on one scale that overlap, such as two builds from shared games).
    Max,
}

/// What a merge wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MergeReport {
    /// The entries written.
    pub entries: u64,
    /// The positions they are of.
    pub positions: u64,
    /// Entries whose summed weight passed 65535 and was held there.
    pub saturated: u64,
    /// How the books were combined.
    pub strategy: MergeStrategy,
    /// With [`MergeStrategy::Priority`]: the entries left out because a book listed earlier has
    /// their position, one count per input book, in the order given (0 for the first).
    pub skipped: Vec<u64>,
    /// Entries left out because their move code is no move at all (see
    /// [`crate::book::RawMove::impossibility`]): one count per input book, in the order given.
    pub dropped: Vec<u64>,
    /// For each input book, the first entry dropped: its index and why.
    #[serde(skip)]
    pub first_dropped: Vec<Option<(u64, String)>>,
}

/// What `sort` changed, besides the order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SortReport {
    /// Entries read.
    pub entries_read: u64,
    /// Entries written.
    pub entries: u64,
    pub positions: u64,
    /// The fewest entries that had to move for the keys to be in order.
    pub out_of_order: u64,
    /// Positions whose moves were put in order of weight.
    pub reordered_positions: u64,
    /// Entries with the key and move of an earlier entry, merged into it (weights summed).
    pub duplicates: u64,
    /// Summed weights held at 65535.
    pub saturated: u64,
    /// Entries left out because their move code is no move at all.
    pub dropped: u64,
    /// Bytes after the last whole entry of the file read (a truncated or padded book), left
    /// out; set by the caller that opened the book ([`crate::book::Book::open_whole_entries`]).
    pub stray_bytes: u64,
    /// Whether the written book differs from the file read.
    pub changed: bool,
}

/// The position's entries in stored order, the same move merged into its first entry (weights
/// summed, held at 65535), then sorted by weight, heaviest first (a stable sort).
struct Position {
    entries: Vec<Entry>,
    saturated: u64,
    duplicates: u64,
}

impl Position {
    fn new() -> Position {
        Position {
            entries: Vec::new(),
            saturated: 0,
            duplicates: 0,
        }
    }

    fn add(&mut self, e: Entry) {
        self.add_with(e, MergeStrategy::Sum);
    }

    /// Adds `e`: the same move again is merged into its first entry by `strategy` (summed or the
    /// larger weight).
    fn add_with(&mut self, e: Entry, strategy: MergeStrategy) {
        match self.entries.iter_mut().find(|p| p.mv == e.mv) {
            Some(p) if strategy == MergeStrategy::Max => {
                p.weight = p.weight.max(e.weight);
                self.duplicates += 1;
            }
            Some(p) => {
                let sum = u32::from(p.weight) + u32::from(e.weight);
                if sum > u32::from(u16::MAX) {
                    self.saturated += 1;
                }
                p.weight = sum.min(u32::from(u16::MAX)) as u16;
                self.duplicates += 1;
            }
            None => self.entries.push(e),
        }
    }

    fn finish(&mut self) -> &[Entry] {
        self.entries.sort_by_key(|e| Reverse(e.weight));
        &self.entries
    }
}

/// The entries of a book in key order, with their index in the file, leaving out (and counting)
/// those whose move code is no move at all.
fn valid_entries<'a>(
    book: &'a Book,
    dropped: &'a mut u64,
    first: &'a mut Option<(u64, String)>,
) -> impl Iterator<Item = (u64, Entry)> + 'a {
    book.entries_by_key_indexed()
        .filter(move |&(i, e)| match e.mv.impossibility() {
            None => true,
            Some(why) => {
                *dropped += 1;
                if first.is_none() {
                    *first = Some((i, format!("key {}: {why}", e.key)));
                }
                false
            }
        })
}

/// Merges `books` into a new book at `output` (written atomically), combined by `strategy`.
///
/// A position's entries are those of every book ([`MergeStrategy::Priority`]: of the first book
/// that has it); the same move in several books (or twice in one) gets the sum of the weights (at
/// most 65535; [`MergeStrategy::Max`]: the largest) and the learn value of the first entry that has
/// it.
/// Entries are sorted by key, then weight descending, ties in the order of the books given, then
/// in stored order. Entries whose move code is no move at all are left out and counted
/// ([`MergeReport::dropped`]), so that the book written is always well formed. Unsorted books are
/// read whole (in key order).
pub fn merge_books(
    books: &[Book],
    output: &Path,
    strategy: MergeStrategy,
) -> Result<MergeReport, BookError> {
    // Scores from several analyses are kept as the learn values are (the first book's); the
    // caller refuses a mix of scored and unscored books, whose learn fields mean different things.
    let layout = books
        .first()
        .map_or(LearnLayout::Polyglot, |b| b.learn_layout());
    let mut writer = BookWriter::create_in(output, layout)?;
    let mut report = MergeReport {
        dropped: vec![0; books.len()],
        first_dropped: vec![None; books.len()],
        strategy,
        skipped: vec![0; books.len()],
        ..MergeReport::default()
    };
    let sources = books
        .iter()
        .zip(
            report
                .dropped
                .iter_mut()
                .zip(report.first_dropped.iter_mut()),
        )
        .enumerate()
        .map(|(source, (book, (dropped, first)))| {
            valid_entries(book, dropped, first).map(move |(_, e)| Ok::<_, Infallible>((source, e)))
        });
    // Books are merged one key at a time, the first book's entries first.
    let Ok(mut merge) = KeyedMerge::new(sources, |(_, e): &(usize, Entry)| e.key.0);
    let mut skipped = vec![0u64; books.len()];
    let mut group = Vec::new();
    let mut position = Position::new();
    let (mut entries, mut positions) = (0u64, 0u64);
    while let Ok(Some(_)) = merge.next_group(&mut group) {
        position.entries.clear();
        // The group is in the order of the books given: its first source has the priority.
        let first_source = group.first().map_or(0, |&(source, _)| source);
        for (source, e) in group.drain(..) {
            if strategy == MergeStrategy::Priority && source != first_source {
                skipped[source] += 1;
            } else {
                position.add_with(e, strategy);
            }
        }
        for e in position.finish() {
            writer.write(e)?;
        }
        entries += position.entries.len() as u64;
        positions += 1;
    }
    drop(merge);
    report.skipped = skipped;
    writer.finish()?;
    report.entries = entries;
    report.positions = positions;
    report.saturated = position.saturated;
    Ok(report)
}

/// Writes `book` in the canonical order at `output` (atomically): key ascending, then weight
/// descending, entries equal in both in stored order. The same key and move twice is merged into
/// one entry as [`merge_books`] merges books (weights summed, held at 65535; the first entry's
/// learn value); entries whose move code is no move at all are left out. Entries with move 0
/// (polyglot's "no move", e.g. a `ffffffffffffffff` terminator) are kept where the order puts them.
/// The book written always passes `verify`.
pub fn sort_book(book: &Book, output: &Path) -> Result<SortReport, BookError> {
    let mut writer = BookWriter::create_in(output, book.learn_layout())?;
    let mut report = SortReport {
        entries_read: book.len() as u64,
        out_of_order: book.disorder().map_or(0, |d| d.out_of_order),
        ..SortReport::default()
    };
    let mut first = None;
    let mut dropped = 0;
    let mut entries = valid_entries(book, &mut dropped, &mut first).peekable();
    let mut position = Position::new();
    let mut written = 0usize;
    while let Some(&(_, head)) = entries.peek() {
        position.entries.clear();
        while let Some((_, e)) = entries.next_if(|(_, e)| e.key == head.key) {
            position.add(e);
        }
        let dedup: Vec<Entry> = position.entries.clone();
        let sorted = position.finish();
        if sorted != dedup.as_slice() {
            report.reordered_positions += 1;
        }
        for e in sorted {
            report.changed |= written >= book.len() || book.entry(written) != *e;
            written += 1;
            writer.write(e)?;
        }
        report.positions += 1;
    }
    drop(entries);
    report.changed |= written != book.len();
    report.entries = written as u64;
    report.duplicates = position.duplicates;
    report.saturated = position.saturated;
    report.dropped = dropped;
    writer.finish()?;
    Ok(report)
}
