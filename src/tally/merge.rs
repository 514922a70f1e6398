//! Tallies summed: a streaming k-way merge of files sorted by key, one position at a time.
//!
//! The moves of a position keep the order in which they first appeared in the inputs taken one
//! after the other: first those of the first tally (in its own order), then those new in the
//! second, and so on, numbered again from 0. So a tally of one half of the games merged with a
//! tally of the other half is the tally of them all.

use crate::build::{KeyedMerge, PairCount};

use super::TallyError;
use super::file::TallyReader;

/// One input's pair, with the input's number.
type Sourced = (usize, PairCount);

/// Tallies merged position by position.
pub struct TallyMerge {
    merge: KeyedMerge<Sourced, Source, fn(&Sourced) -> u64>,
    group: Vec<Sourced>,
    /// (input, first) of each move of the position, beside it: the order to number them in.
    combined: Vec<((usize, u64), PairCount)>,
}

/// One input read pair by pair, tagged with its number.
pub struct Source {
    number: usize,
    reader: TallyReader,
}

impl Iterator for Source {
    type Item = Result<Sourced, TallyError>;

    fn next(&mut self) -> Option<Self::Item> {
        let number = self.number;
        self.reader
            .next_pair()
            .map(|p| p.map(|p| (number, p)))
            .transpose()
    }
}

fn key_of(s: &Sourced) -> u64 {
    s.1.key
}

impl TallyMerge {
    pub fn new(readers: Vec<TallyReader>) -> Result<TallyMerge, TallyError> {
        let sources = readers
            .into_iter()
            .enumerate()
            .map(|(number, reader)| Source { number, reader });
        Ok(TallyMerge {
            merge: KeyedMerge::new(sources, key_of as fn(&Sourced) -> u64)?,
            group: Vec::new(),
            combined: Vec::new(),
        })
    }

    /// The next position's pairs, summed over the inputs, in order of first appearance with
    /// `first` numbered 0, 1, 2…; `None` when every input is read.
    pub fn next_position(&mut self, out: &mut Vec<PairCount>) -> Result<bool, TallyError> {
        self.group.clear();
        if self.merge.next_group(&mut self.group)?.is_none() {
            return Ok(false);
        }
        self.combined.clear();
        for &(source, p) in &self.group {
            let stamp = (source, p.first);
            match self
                .combined
                .iter_mut()
                .find(|(_, c)| c.mv == p.mv && c.black == p.black)
            {
                Some((first, c)) => {
                    c.games += p.games;
                    c.wins += p.wins;
                    c.draws += p.draws;
                    c.losses += p.losses;
                    *first = (*first).min(stamp);
                }
                None => self.combined.push((stamp, p)),
            }
        }
        self.combined.sort_unstable_by_key(|(stamp, _)| *stamp);
        out.clear();
        out.extend(
            self.combined
                .iter()
                .enumerate()
                .map(|(rank, &(_, p))| PairCount {
                    first: rank as u64,
                    ..p
                }),
        );
        Ok(true)
    }
}
