//! From the tally to the written book: each partition's entries as the tally threads finish
//! them, written in partition (that is, key) order; and, when some tally spilled, the merge of
//! the sorted runs, with the partitions held back meanwhile written in between.

use std::path::Path;
use std::sync::mpsc::Receiver;

use super::entries::{EntryMaker, EntryRules, WeightScheme, halve_combined};
use super::spill::{Run, merge_runs};
use super::tally::{Counts, PARTITIONS, Tally, partition};
use super::{BuildError, BuildReport};
use crate::book::{BookError, BookWriter, ENTRY_SIZE, Entry};

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
    let (part, held) = tally.drain_partition_with(p, 0, Some(rules.min_games));
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

/// The book being written: the partitions' entries in partition order, as the tally threads
/// finish them, then (if some tally spilled) the merge of the spilled runs with the partitions
/// held back meanwhile.
pub struct BookOut<'a> {
    output: &'a Path,
    fsync: bool,
    writer: Option<BookWriter>,
    /// Partitions received before an earlier one, which must come from the spilled runs.
    held: Vec<Option<PartitionEntries>>,
    /// Every partition below this one is written.
    next: usize,
}

impl<'a> BookOut<'a> {
    pub fn new(output: &'a Path, fsync: bool) -> Self {
        BookOut {
            output,
            fsync,
            writer: None,
            held: (0..PARTITIONS).map(|_| None).collect(),
            next: 0,
        }
    }

    /// The book's writer, created (as a temporary file) on first use.
    fn writer(&mut self) -> Result<&mut BookWriter, BookError> {
        let writer = match self.writer.take() {
            Some(w) => w,
            None => BookWriter::create(self.output)?.sync(self.fsync),
        };
        Ok(self.writer.insert(writer))
    }

    fn write_partition(
        &mut self,
        part: PartitionEntries,
        report: &mut BuildReport,
    ) -> Result<(), BookError> {
        report.entries_before_filter += part.before_filter;
        report.positions += part.positions;
        report.entries += part.entries;
        self.writer()?.write_encoded(&part.bytes, part.entries)
    }

    /// Writes the partitions as the tally threads (one receiver each, partition `p` from
    /// `rxs[p % n]`) send them. A tally thread that spilled sends nothing: from its first
    /// partition on, the others' partitions are held for [`BookOut::write_merged`].
    pub fn receive(
        &mut self,
        rxs: &[Receiver<PartitionEntries>],
        report: &mut BuildReport,
    ) -> Result<(), BookError> {
        let mut spilled = vec![false; rxs.len()];
        for p in 0..PARTITIONS {
            let owner = p % rxs.len();
            if spilled[owner] {
                continue;
            }
            match rxs[owner].recv() {
                Ok(part) if self.next == p => {
                    self.write_partition(part, report)?;
                    self.next = p + 1;
                }
                Ok(part) => self.held[p] = Some(part),
                Err(_) => spilled[owner] = true,
            }
        }
        Ok(())
    }

    /// Writes the held partitions below partition `end`.
    fn write_held_before(&mut self, end: usize, report: &mut BuildReport) -> Result<(), BookError> {
        while self.next < end {
            if let Some(part) = self.held[self.next].take() {
                self.write_partition(part, report)?;
            }
            self.next += 1;
        }
        Ok(())
    }

    /// Writes the entries of the merged `runs` (spilled in `dir`), position by position, and
    /// the held partitions where their keys fall among them.
    pub fn write_merged(
        &mut self,
        runs: Vec<Run>,
        rules: &EntryRules,
        report: &mut BuildReport,
        dir: &Path,
    ) -> Result<(), BuildError> {
        let halve = rules.weights == WeightScheme::Polyglot;
        let mut entries: Vec<Entry> = Vec::new();
        let mut maker = EntryMaker::new(rules);
        let mut book_err = None;
        merge_runs(runs, |group| {
            let written = (|| -> Result<(), BookError> {
                self.write_held_before(partition(group[0].key), report)?;
                if halve {
                    halve_combined(group);
                }
                report.entries_before_filter += group.len() as u64;
                entries.clear();
                maker.append(group, &mut entries);
                if !entries.is_empty() {
                    report.positions += 1;
                    report.entries += entries.len() as u64;
                }
                let writer = self.writer()?;
                entries.iter().try_for_each(|e| writer.write(e))
            })();
            written.map_err(|e| {
                book_err = Some(e);
                std::io::Error::other("book write failed")
            })
        })
        .map_err(|e| match book_err.take() {
            Some(b) => BuildError::Book(b),
            None => BuildError::Temp {
                dir: dir.display().to_string(),
                why: e.to_string(),
            },
        })?;
        self.write_held_before(PARTITIONS, report)?;
        Ok(())
    }

    /// Gives the book its name (an empty book if nothing was written).
    pub fn finish(mut self) -> Result<(), BookError> {
        self.writer()?;
        match self.writer.take() {
            Some(writer) => writer.finish(),
            None => Ok(()),
        }
    }
}
