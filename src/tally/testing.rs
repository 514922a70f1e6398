//! What the unit tests of the tally's modules share.

use std::path::Path;

use super::{TallyMeta, TallyWriter};
use crate::builder::PairCount;

/// A pair of White's move `mv` in position `key`, played in `games` games that the mover all won.
pub(super) fn pair(key: u64, mv: u16, first: u64, games: u64) -> PairCount {
    PairCount {
        key,
        mv,
        black: false,
        first,
        games,
        wins: games,
        draws: 0,
        losses: 0,
        rating: Default::default(),
    }
}

/// Writes a tally of `pairs` (in key order) at `path`, with `meta`.
pub(super) fn write_tally(path: &Path, pairs: &[PairCount], meta: &TallyMeta) {
    let mut w = TallyWriter::create(path).unwrap();
    pairs.iter().for_each(|p| w.push(p).unwrap());
    w.finish(meta, false).unwrap();
}
