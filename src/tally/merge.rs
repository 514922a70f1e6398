//! Tallies summed: a streaming k-way merge of files sorted by key, one position at a time.
//!
//! The moves of a position keep the order in which they first appeared in the inputs taken one
//! after the other: first those of the first tally (in its own order), then those new in the
//! second, and so on, numbered again from 0. So a tally of one half of the games merged with a
//! tally of the other half is the tally of them all.
//!
//! Each input hands out whole positions (its rows of one key are consecutive); a heap holds each
//! input's next key, and a position that only one input has (every position, with one input)
//! passes through without being combined.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::builder::PairCount;

use super::TallyError;
use super::reader::TallyReader;

/// Tallies merged position by position.
pub struct TallyMerge {
    readers: Vec<TallyReader>,
    /// Each input's next position (empty when it is all read).
    heads: Vec<Vec<PairCount>>,
    /// The inputs' next keys, smallest first, then by input.
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// (input, first) of each move of the position being combined, beside it.
    combined: Vec<((usize, u64), PairCount)>,
}

impl TallyMerge {
    pub fn new(mut readers: Vec<TallyReader>) -> Result<TallyMerge, TallyError> {
        let mut heads = Vec::new();
        let mut heap = BinaryHeap::new();
        for (i, reader) in readers.iter_mut().enumerate() {
            let mut head = Vec::new();
            if let Some(key) = reader.next_position(&mut head)? {
                heap.push(Reverse((key, i)));
            }
            heads.push(head);
        }
        Ok(TallyMerge {
            readers,
            heads,
            heap,
            combined: Vec::new(),
        })
    }

    /// Takes input `i`'s next position into `into` (appending) and reads the one after it.
    fn take(&mut self, i: usize, into: &mut Vec<PairCount>) -> Result<(), TallyError> {
        into.append(&mut self.heads[i]);
        if let Some(key) = self.readers[i].next_position(&mut self.heads[i])? {
            self.heap.push(Reverse((key, i)));
        }
        Ok(())
    }

    /// The next position's pairs, summed over the inputs, in order of first appearance with
    /// `first` numbered 0, 1, 2…; `false` when every input is read.
    pub fn next_position(&mut self, out: &mut Vec<PairCount>) -> Result<bool, TallyError> {
        out.clear();
        self.append_position(out)
    }

    /// [`TallyMerge::next_position`], appending to `out` (a batch of positions) instead.
    pub fn append_position(&mut self, out: &mut Vec<PairCount>) -> Result<bool, TallyError> {
        let Some(Reverse((key, i))) = self.heap.pop() else {
            return Ok(false);
        };
        let start = out.len();
        let alone = self.heap.peek().is_none_or(|&Reverse((k, _))| k != key);
        if alone {
            self.take(i, out)?;
            if !in_order(&out[start..]) {
                let part = out.split_off(start);
                combine(&mut self.combined, &[(i, part)], out);
            }
            renumber(&mut out[start..]);
            return Ok(true);
        }
        let mut parts = Vec::new();
        let mut next = Some(i);
        while let Some(i) = next {
            let mut part = Vec::new();
            self.take(i, &mut part)?;
            parts.push((i, part));
            next = match self.heap.peek() {
                Some(&Reverse((k, j))) if k == key => {
                    self.heap.pop();
                    Some(j)
                }
                _ => None,
            };
        }
        combine(&mut self.combined, &parts, out);
        Ok(true)
    }
}

/// Whether one input's pairs of a position can be taken as they are: in their own order of
/// first appearance, no move twice (no polybook tally has that; otherwise they are combined).
pub(super) fn in_order(position: &[PairCount]) -> bool {
    position.windows(2).all(|w| w[0].first < w[1].first)
        && (position.len() < 2 || !has_duplicates(position))
}

/// Numbers a position's `first` 0, 1, 2… in the order they are.
pub(super) fn renumber(position: &mut [PairCount]) {
    for (rank, p) in position.iter_mut().enumerate() {
        p.first = rank as u64;
    }
}

/// Sums the pairs of one position from several inputs (input number, its pairs), ordered by
/// (input, first) and numbered again, and appends them to `out`. `combined` is room to work in.
pub(super) fn combine(
    combined: &mut Vec<((usize, u64), PairCount)>,
    parts: &[(usize, Vec<PairCount>)],
    out: &mut Vec<PairCount>,
) {
    combined.clear();
    for (source, pairs) in parts {
        for &p in pairs {
            let stamp = (*source, p.first);
            match combined
                .iter_mut()
                .find(|(_, c)| c.mv == p.mv && c.black == p.black)
            {
                Some((first, c)) => {
                    c.games += p.games;
                    c.wins += p.wins;
                    c.draws += p.draws;
                    c.losses += p.losses;
                    c.rating.add(&p.rating);
                    *first = (*first).min(stamp);
                }
                None => combined.push((stamp, p)),
            }
        }
    }
    combined.sort_unstable_by_key(|(stamp, _)| *stamp);
    out.extend(
        combined
            .iter()
            .enumerate()
            .map(|(rank, &(_, p))| PairCount {
                first: rank as u64,
                ..p
            }),
    );
}

/// Whether two of a position's pairs have the same move.
fn has_duplicates(pairs: &[PairCount]) -> bool {
    pairs.iter().enumerate().any(|(i, p)| {
        pairs[..i]
            .iter()
            .any(|q| q.mv == p.mv && q.black == p.black)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tally::TallyMeta;
    use crate::tally::testing::write_tally;

    fn pair(key: u64, mv: u16, first: u64, wins: u64, losses: u64) -> PairCount {
        PairCount {
            key,
            mv,
            black: true,
            first,
            games: wins + losses,
            wins,
            draws: 0,
            losses,
            rating: Default::default(),
        }
    }

    fn tally(dir: &std::path::Path, name: &str, pairs: &[PairCount]) -> TallyReader {
        let path = dir.join(name);
        write_tally(&path, pairs, &TallyMeta::default());
        TallyReader::open(&path).unwrap()
    }

    #[test]
    fn tallies_add_up_in_order_of_first_appearance() {
        let dir = tempfile::tempdir().unwrap();
        let a = [
            pair(1, 10, 0, 1, 0),
            pair(5, 20, 0, 2, 0),
            pair(5, 21, 1, 0, 1),
        ];
        let b = [
            pair(3, 10, 0, 1, 1),
            pair(5, 22, 0, 1, 0),
            pair(5, 20, 1, 4, 4),
        ];
        let (a, b) = (tally(dir.path(), "a", &a), tally(dir.path(), "b", &b));
        let mut merge = TallyMerge::new(vec![a, b]).unwrap();
        let mut out = Vec::new();
        let mut positions = Vec::new();
        while merge.next_position(&mut out).unwrap() {
            positions.push(out.clone());
        }
        assert_eq!(
            positions,
            vec![
                vec![pair(1, 10, 0, 1, 0)],
                vec![pair(3, 10, 0, 1, 1)],
                // The first tally's moves first (in its order), then the one new in the second.
                vec![
                    pair(5, 20, 0, 6, 4),
                    pair(5, 21, 1, 0, 1),
                    pair(5, 22, 2, 1, 0)
                ],
            ]
        );
    }
}
