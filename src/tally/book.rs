//! A book from one tally, row group by row group on several threads.
//!
//! A tally's rows are sorted by key, so each row group holds whole positions except perhaps the
//! first and the last, which may go on in the groups before and after. Each worker thread decodes
//! its share of the groups and makes the entries of the positions that lie inside a group
//! straight from its columns, already in the book's bytes; it hands on the rows of the two edge
//! positions as they are. The writing thread takes the groups in order, puts the edge positions
//! together, makes their entries and writes everything in key order: the book the k-way merge
//! of [`super::merge`] would make from the same file, with the same checks of every row.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, sync_channel};

use super::TallyError;
use super::columns::Columns;
use super::merge::{combine, in_order};
use super::reader::TallyReader;
use crate::book::{BookWriter, ENTRY_SIZE, Entry};
use crate::builder::{EntryRules, PairCount, PairEntries};

/// What was read and written.
#[derive(Default)]
pub(super) struct Counted {
    pub positions: u64,
    /// Positions with at least one book entry.
    pub positions_written: u64,
    /// Distinct (position, move) pairs.
    pub pairs: u64,
    /// Book entries.
    pub written: u64,
}

impl Counted {
    fn add(&mut self, other: &Counted) {
        self.positions += other.positions;
        self.positions_written += other.positions_written;
        self.pairs += other.pairs;
        self.written += other.written;
    }
}

/// One position's entries, by the build's rules, as book bytes.
struct PositionEntries<'a> {
    maker: PairEntries<'a>,
    /// Room to combine a position whose rows are out of order or repeat a move.
    combined: Vec<((usize, u64), PairCount)>,
    normal: Vec<PairCount>,
    entries: Vec<Entry>,
}

impl<'a> PositionEntries<'a> {
    fn new(rules: &'a EntryRules) -> Self {
        PositionEntries {
            maker: PairEntries::new(rules),
            combined: Vec::new(),
            normal: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Appends to `out` the entry of a position with one move, `pair`, if it has one.
    #[inline]
    fn single(&mut self, pair: &PairCount, out: &mut Vec<u8>, counted: &mut Counted) {
        counted.positions += 1;
        counted.pairs += 1;
        if let Some(entry) = self.maker.single(pair) {
            counted.written += 1;
            counted.positions_written += 1;
            out.extend_from_slice(&entry.to_bytes());
        }
    }

    /// Appends to `out` the entries of one position (all of `pairs` has one key).
    fn add(&mut self, pairs: &[PairCount], out: &mut Vec<u8>, counted: &mut Counted) {
        let pairs = if in_order(pairs) {
            pairs
        } else {
            // As the merge does for one input: the same move summed, in order of first
            // appearance (only the order of `first` matters to the entries).
            self.normal.clear();
            combine(&mut self.combined, &[(0, pairs.to_vec())], &mut self.normal);
            &self.normal
        };
        self.entries.clear();
        self.maker.append(pairs, &mut self.entries);
        counted.positions += 1;
        counted.pairs += pairs.len() as u64;
        counted.written += self.entries.len() as u64;
        counted.positions_written += u64::from(!self.entries.is_empty());
        for e in &self.entries {
            out.extend_from_slice(&e.to_bytes());
        }
    }
}

/// What a worker makes of one row group.
#[derive(Default)]
struct Group {
    /// The rows of its first position (perhaps begun in the group before), checked.
    head: Vec<PairCount>,
    /// The entries of the positions between the first and the last, as book bytes.
    body: Vec<u8>,
    counted: Counted,
    /// The rows of its last position when it is not the first (perhaps going on in the next).
    tail: Vec<PairCount>,
}

/// Decodes row group `g` (whose first row is row `before + 1` of the file) and makes the
/// entries of the positions inside it, into `body` (empty, perhaps with room).
fn make_group(
    reader: &TallyReader,
    g: usize,
    before: u64,
    cols: &mut Columns,
    maker: &mut PositionEntries,
    body: Vec<u8>,
) -> Result<Group, TallyError> {
    reader.decode(g, cols)?;
    let mut group = Group {
        body,
        ..Group::default()
    };
    let keys = &cols.key;
    let n = keys.len();
    if n == 0 {
        return Ok(group);
    }
    if let Some(i) = keys.windows(2).position(|w| w[0] > w[1]) {
        return Err(reader.bad(format!(
            "row {}: the keys are not in ascending order",
            before + i as u64 + 2
        )));
    }
    cols.check(before).map_err(|why| reader.bad(why))?;
    let rows = |range: std::ops::Range<usize>, out: &mut Vec<PairCount>| {
        out.clear();
        out.extend(range.map(|i| cols.row(i)));
    };
    // Where the first position ends and the last begins: found on the key column alone.
    let head_end = keys.iter().position(|&k| k != keys[0]).unwrap_or(n);
    rows(0..head_end, &mut group.head);
    if head_end == n {
        return Ok(group);
    }
    let tail_start = n - keys
        .iter()
        .rev()
        .position(|&k| k != keys[n - 1])
        .unwrap_or(n);
    rows(tail_start..n, &mut group.tail);
    let mut pairs = Vec::new();
    // At most one entry a row.
    group.body.reserve((tail_start - head_end) * ENTRY_SIZE);
    let mut start = head_end;
    while start < tail_start {
        let key = keys[start];
        let end = start
            + keys[start..tail_start]
                .iter()
                .position(|&k| k != key)
                .unwrap_or(tail_start - start);
        if end == start + 1 {
            // Most positions of a big tally have one move: its entry straight from the row.
            maker.single(&cols.row(start), &mut group.body, &mut group.counted);
        } else {
            rows(start..end, &mut pairs);
            maker.add(&pairs, &mut group.body, &mut group.counted);
        }
        start = end;
    }
    Ok(group)
}

/// Writes the book of the tally `reader` to `writer` by `rules`, decoding on `threads` threads.
pub(super) fn write_book(
    reader: &TallyReader,
    writer: &mut BookWriter,
    rules: &EntryRules,
    threads: usize,
) -> Result<Counted, TallyError> {
    let groups = reader.row_groups();
    let threads = threads.clamp(1, groups.max(1));
    // The file's row number before each group, for the errors.
    let before: Vec<u64> = reader
        .group_rows()
        .iter()
        .scan(0, |sum, &n| {
            let b = *sum;
            *sum += n;
            Some(b)
        })
        .collect();
    let before = &before;
    // Written bodies go back to the workers: fresh megabytes for every group would cost a page
    // fault every 4 KB.
    let spare: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
    let spare = &spare;
    std::thread::scope(|scope| {
        let mut rxs: Vec<Receiver<Result<Group, TallyError>>> = Vec::new();
        for t in 0..threads {
            // Two groups ahead per thread, at most.
            let (tx, rx) = sync_channel(2);
            rxs.push(rx);
            scope.spawn(move || {
                let mut cols = Columns::default();
                let mut maker = PositionEntries::new(rules);
                for g in (t..groups).step_by(threads) {
                    let body = spare.lock().ok().and_then(|mut s| s.pop());
                    let body = body.unwrap_or_default();
                    let group = make_group(reader, g, before[g], &mut cols, &mut maker, body);
                    let failed = group.is_err();
                    if tx.send(group).is_err() || failed {
                        return;
                    }
                }
            });
        }
        let mut counted = Counted::default();
        let mut maker = PositionEntries::new(rules);
        // The position cut by the edges of the groups read so far, and its entries.
        let mut open: Vec<PairCount> = Vec::new();
        let mut bytes = Vec::new();
        let mut last_key: Option<u64> = None;
        let write = |bytes: &mut Vec<u8>, writer: &mut BookWriter| {
            let n = (bytes.len() / ENTRY_SIZE) as u64;
            let written = writer.write_encoded(bytes, n);
            bytes.clear();
            written
        };
        for g in 0..groups {
            let group = rxs[g % threads]
                .recv()
                .unwrap_or_else(|_| Err(reader.bad(format!("row group {g}: not read"))))?;
            let Some(first) = group.head.first() else {
                continue;
            };
            if last_key.is_some_and(|k| k > first.key) {
                return Err(reader.bad(format!(
                    "row {}: the keys are not in ascending order",
                    before[g] + 1
                )));
            }
            last_key = Some(group.tail.last().unwrap_or(first).key);
            if open.first().is_some_and(|p| p.key != first.key) {
                maker.add(&open, &mut bytes, &mut counted);
                open.clear();
            }
            open.extend_from_slice(&group.head);
            if !group.tail.is_empty() {
                maker.add(&open, &mut bytes, &mut counted);
                write(&mut bytes, writer)?;
                let mut body = group.body;
                write(&mut body, writer)?;
                if let Ok(mut s) = spare.lock() {
                    s.push(body);
                }
                counted.add(&group.counted);
                open = group.tail;
            }
        }
        if !open.is_empty() {
            maker.add(&open, &mut bytes, &mut counted);
        }
        write(&mut bytes, writer)?;
        Ok(counted)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::WeightScheme;
    use crate::tally::{TallyMeta, TallyWriter, sum_tallies};

    /// Pairs of positions of 1 to 6 moves, with positions that go over one, two and three row
    /// groups (the same moves over and over, summed), moves out of their order of appearance,
    /// and a move twice in a position.
    fn pairs() -> Vec<PairCount> {
        let mut out = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut key = 0u64;
        let mut position = |moves: usize, out: &mut Vec<PairCount>, x: &mut u64| {
            key += 1 + (*x >> 40);
            for m in 0..moves {
                *x ^= *x << 13;
                *x ^= *x >> 7;
                *x ^= *x << 17;
                let (wins, draws, losses) = (*x % 5, (*x >> 8) % 3, (*x >> 16) % 4);
                out.push(PairCount {
                    key,
                    mv: (m % 700) as u16 + 1,
                    black: key % 2 == 1,
                    first: m as u64,
                    games: wins + draws + losses + 1,
                    wins: wins + 1,
                    draws,
                    losses,
                    rating: Default::default(),
                });
            }
        };
        for i in 0..60_000 {
            position(1 + i % 6, &mut out, &mut x);
            if i == 20_000 {
                position(3 * (1 << 16) + 5, &mut out, &mut x);
            }
            if i == 30_000 {
                position(4, &mut out, &mut x);
                let n = out.len();
                out.swap(n - 1, n - 3);
                out[n - 2].mv = out[n - 4].mv;
            }
        }
        out
    }

    #[test]
    fn a_book_by_row_groups_is_the_merges_book() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TallyWriter::create(&path).unwrap().threads(2);
        w.push_all(&pairs()).unwrap();
        w.finish(&TallyMeta::default(), false).unwrap();
        for weights in [WeightScheme::Games, WeightScheme::Polyglot] {
            let rules = EntryRules {
                weights,
                min_games: 1,
                ..EntryRules::default()
            };
            let mut maker = PairEntries::new(&rules);
            let mut entries = Vec::new();
            let mut want = Vec::new();
            sum_tallies(vec![TallyReader::open(&path).unwrap()], |pairs| {
                entries.clear();
                maker.append(pairs, &mut entries);
                want.extend(entries.iter().flat_map(|e| e.to_bytes()));
                Ok(entries.len() as u64)
            })
            .unwrap();
            assert!(want.len() > 16 * 100_000);
            for threads in [1, 2, 3] {
                let out = dir.path().join("b.bin");
                let mut writer = BookWriter::create(&out).unwrap();
                let reader = TallyReader::open(&path).unwrap();
                write_book(&reader, &mut writer, &rules, threads).unwrap();
                writer.finish().unwrap();
                assert!(
                    std::fs::read(&out).unwrap() == want,
                    "{weights:?} {threads}"
                );
            }
        }
    }
}
