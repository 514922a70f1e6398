//! From the tally to the output: each partition as the tally threads finish it, written in
//! partition (that is, key) order; and, when some tally spilled, the merge of the sorted runs,
//! with the partitions held back meanwhile written in between.
//!
//! What is written is a [`Sink`]'s business: the book ([`BookSink`]: entries, filtered and
//! weighed), or every counted pair as it is ([`PairSink`], for `polybook tally`).

use std::marker::PhantomData;
use std::path::Path;
use std::sync::mpsc::Receiver;

use super::count_table::{Counts, ExactCounts, PARTITIONS, Tallied, Tally, WideCounts, partition};
use super::entries::{EntryMaker, EntryRules, WeightScheme, halve_combined};
use super::spill::{Run, merge_runs};
use super::{BuildError, BuildReport, PairColumns, PairCount, PositionSink};
use crate::book::{BookError, BookWriter, ENTRY_SIZE, Entry};

/// Where the counts of a build go, one partition (or, from spilled runs, one position) at a time,
/// in key order.
pub trait Sink {
    /// What a tally thread makes of one finished partition, to be written by the sink.
    type Part: Send + 'static;
    /// The counts of the pairs it takes from spilled runs.
    type Wide: WideCounts;
    /// Bytes the output itself holds while it writes, whatever the input (beside the program's
    /// fixed share): taken out of `--memory` before the counting's share is planned.
    const OUTPUT_MEMORY: usize;
    /// Empties partition `p` of `tally` into a part (on a tally thread).
    fn make_part<C: Counts<Wide = Self::Wide>>(
        tally: &mut Tally<C>,
        p: usize,
        rules: &EntryRules,
    ) -> Self::Part;
    /// Writes one partition's part.
    fn write_part(&mut self, part: Self::Part, report: &mut BuildReport) -> Result<(), BuildError>;
    /// Writes one position's pairs merged from the spilled runs (one key, any order).
    fn write_group(
        &mut self,
        group: &mut [Tallied<Self::Wide>],
        report: &mut BuildReport,
    ) -> Result<(), BuildError>;
}

/// The book as a [`Sink`]: each position's entries.
pub struct BookSink<'a> {
    rules: &'a EntryRules,
    maker: EntryMaker<'a>,
    writer: BookWriter,
    entries: Vec<Entry>,
}

impl<'a> BookSink<'a> {
    /// Starts the book (as a temporary file), before any game is read: an output that cannot be
    /// written (no such folder, a folder, no permission) fails at once, not after the reading.
    pub fn new(output: &Path, fsync: bool, rules: &'a EntryRules) -> Result<Self, BookError> {
        Ok(BookSink {
            rules,
            maker: EntryMaker::new(rules),
            writer: BookWriter::create(output)?.sync(fsync),
            entries: Vec::new(),
        })
    }

    /// Gives the book its name (an empty book if nothing was written).
    pub fn finish(self) -> Result<(), BookError> {
        self.writer.finish()
    }
}

impl Sink for BookSink<'_> {
    type Part = PartitionEntries;
    type Wide = ExactCounts;
    /// The book writer's buffer is counted in the program's fixed share.
    const OUTPUT_MEMORY: usize = 0;

    fn make_part<C: Counts<Wide = ExactCounts>>(
        tally: &mut Tally<C>,
        p: usize,
        rules: &EntryRules,
    ) -> Self::Part {
        partition_entries(tally, p, rules)
    }

    fn write_part(
        &mut self,
        part: PartitionEntries,
        report: &mut BuildReport,
    ) -> Result<(), BuildError> {
        report.entries_before_filter += part.before_filter;
        report.positions += part.positions;
        report.entries += part.entries;
        Ok(self.writer.write_encoded(&part.bytes, part.entries)?)
    }

    fn write_group(
        &mut self,
        group: &mut [Tallied<ExactCounts>],
        report: &mut BuildReport,
    ) -> Result<(), BuildError> {
        if self.rules.weights == WeightScheme::Polyglot {
            halve_combined(group);
        }
        report.entries_before_filter += group.len() as u64;
        let mut entries = std::mem::take(&mut self.entries);
        entries.clear();
        self.maker.append(group, &mut entries);
        if !entries.is_empty() {
            report.positions += 1;
            report.entries += entries.len() as u64;
        }
        let writer = &mut self.writer;
        let written = entries.iter().try_for_each(|e| writer.write(e));
        self.entries = entries;
        Ok(written?)
    }
}

/// Every counted pair as a [`Sink`], handed position by position to a [`PositionSink`], each
/// position's moves in the order they first appeared, their [`PairCount::first`] numbered from
/// 0 in that order (so that it does not depend on `--threads` or `--memory`). `W`: the counts
/// (exact, or with the ratings of `tally --ratings`).
pub struct PairSink<'a, W> {
    out: &'a mut dyn PositionSink,
    pairs: Vec<PairCount>,
    counts: PhantomData<W>,
}

impl<'a, W: WideCounts> PairSink<'a, W> {
    pub fn new(out: &'a mut dyn PositionSink) -> Self {
        PairSink {
            out,
            pairs: Vec::new(),
            counts: PhantomData,
        }
    }

    /// Hands on one position's pairs, sorted by first appearance.
    fn position(&mut self, group: &[Tallied<W>]) -> Result<(), BuildError> {
        self.pairs.clear();
        self.pairs.extend(
            group
                .iter()
                .enumerate()
                .map(|(rank, t)| PairCount::from_tallied(t, rank as u64)),
        );
        self.out.position(&self.pairs)
    }
}

impl<W: WideCounts> Sink for PairSink<'_, W> {
    /// The partition's pairs as columns, sorted by key, then first appearance, `first`
    /// numbered in each position (made on the tally thread), and how many positions they are.
    type Part = (PairColumns, u64);
    type Wide = W;
    /// A tally file's row groups held while they are encoded and compressed (measured: a tally
    /// at `--memory 64M` peaked 2–4 MB above the book's build of the same games); with the
    /// ratings' four more columns, 8 MB (measured on the same games at `--memory 64M`: 6 MB let
    /// the peak reach 73 MB, 8 MB kept it at 64–65 MB).
    const OUTPUT_MEMORY: usize = if W::RATED { 8 << 20 } else { 4 << 20 };

    fn make_part<C: Counts<Wide = W>>(
        tally: &mut Tally<C>,
        p: usize,
        _: &EntryRules,
    ) -> Self::Part {
        let part = tally.drain_partition(p, 0);
        let mut pairs = PairColumns::with_capacity(part.len(), W::RATED);
        let mut positions = 0;
        for group in part.chunk_by(|a, b| a.key == b.key) {
            positions += 1;
            for (rank, t) in group.iter().enumerate() {
                let wide = Tallied {
                    key: t.key,
                    mv: t.mv,
                    first: t.first,
                    counts: t.counts.widen(),
                };
                pairs.push(&PairCount::from_tallied(&wide, rank as u64));
            }
        }
        (pairs, positions)
    }

    fn write_part(&mut self, part: Self::Part, report: &mut BuildReport) -> Result<(), BuildError> {
        let (pairs, positions) = part;
        report.entries_before_filter += pairs.len() as u64;
        report.entries += pairs.len() as u64;
        report.positions += positions;
        self.out.columns(pairs)
    }

    fn write_group(
        &mut self,
        group: &mut [Tallied<W>],
        report: &mut BuildReport,
    ) -> Result<(), BuildError> {
        group.sort_unstable_by_key(|t| t.first);
        report.entries_before_filter += group.len() as u64;
        report.entries += group.len() as u64;
        report.positions += 1;
        self.position(group)
    }
}

/// The book entries of one partition of a tally held in memory.
pub struct PartitionEntries {
    /// The entries, already in the book's byte format.
    bytes: Vec<u8>,
    entries: u64,
    /// Distinct (position, move) pairs the partition held.
    before_filter: u64,
    /// Positions with at least one entry.
    positions: u64,
}

/// Empties partition `p` of `tally` into its book entries, in book order.
pub fn partition_entries<C: Counts>(
    tally: &mut Tally<C>,
    p: usize,
    rules: &EntryRules,
) -> PartitionEntries {
    // Entries that cannot be kept are only counted, not sorted.
    let (part, held) = tally.drain_partition_with(p, 0, Some(rules.keep()));
    let mut out = PartitionEntries {
        bytes: Vec::with_capacity(part.len() * ENTRY_SIZE),
        entries: 0,
        before_filter: held,
        positions: 0,
    };
    let mut maker = EntryMaker::new(rules);
    let mut entries = Vec::new();
    for group in part.chunk_by(|a, b| a.key == b.key) {
        entries.clear();
        maker.append(group, &mut entries);
        if !entries.is_empty() {
            out.positions += 1;
            out.entries += entries.len() as u64;
            for e in &entries {
                out.bytes.extend_from_slice(&e.to_bytes());
            }
        }
    }
    out
}

/// The output being written: the partitions in partition order, as the tally threads finish
/// them, then (if some tally spilled) the merge of the spilled runs with the partitions held back
/// meanwhile.
pub struct Ordered<S: Sink> {
    pub sink: S,
    /// Partitions received before an earlier one, which must come from the spilled runs.
    held: Vec<Option<S::Part>>,
    /// Every partition below this one is written.
    next: usize,
}

impl<S: Sink> Ordered<S> {
    pub fn new(sink: S) -> Self {
        Ordered {
            sink,
            held: (0..PARTITIONS).map(|_| None).collect(),
            next: 0,
        }
    }

    /// Writes the partitions as the tally threads (one receiver each, partition `p` from
    /// `rxs[p % n]`) send them. A tally thread that spilled sends nothing: from its first
    /// partition on, the others' partitions are held for [`Ordered::write_merged`].
    pub fn receive(
        &mut self,
        rxs: &[Receiver<S::Part>],
        report: &mut BuildReport,
    ) -> Result<(), BuildError> {
        let mut spilled = vec![false; rxs.len()];
        for p in 0..PARTITIONS {
            let owner = p % rxs.len();
            if spilled[owner] {
                continue;
            }
            match rxs[owner].recv() {
                Ok(part) if self.next == p => {
                    self.sink.write_part(part, report)?;
                    self.next = p + 1;
                }
                Ok(part) => self.held[p] = Some(part),
                Err(_) => spilled[owner] = true,
            }
        }
        Ok(())
    }

    /// Writes the held partitions below partition `end`.
    fn write_held_before(
        &mut self,
        end: usize,
        report: &mut BuildReport,
    ) -> Result<(), BuildError> {
        while self.next < end {
            if let Some(part) = self.held[self.next].take() {
                self.sink.write_part(part, report)?;
            }
            self.next += 1;
        }
        Ok(())
    }

    /// Writes the merged `runs` (spilled in `dir`), position by position, and the held
    /// partitions where their keys fall among them.
    pub fn write_merged(
        &mut self,
        runs: Vec<Run>,
        report: &mut BuildReport,
        dir: &Path,
    ) -> Result<(), BuildError> {
        let mut failure = None;
        merge_runs::<S::Wide>(runs, |group| {
            let written = self
                .write_held_before(partition(group[0].key), report)
                .and_then(|()| self.sink.write_group(group, report));
            written.map_err(|e| {
                failure = Some(e);
                std::io::Error::other("write failed")
            })
        })
        .map_err(|e| match failure.take() {
            Some(f) => f,
            None => BuildError::Temp {
                dir: dir.display().to_string(),
                why: crate::text::reason(&e),
            },
        })?;
        self.write_held_before(PARTITIONS, report)
    }
}
