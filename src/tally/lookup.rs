//! One position looked up in several tallies at once (files, or the folder of part files a Spark
//! job writes): each file's rows under the key, found through its row groups' key ranges, summed
//! as `tally --merge` would sum them. For `probe` and `explore`, which ask for a position at a
//! time.

use std::path::{Path, PathBuf};

use super::merge::combine;
use super::reader::TallyReader;
use super::{TallyError, open_all};
use crate::builder::PairCount;

/// Tallies opened for lookups by key.
pub struct TallyLookup {
    readers: Vec<TallyReader>,
    /// The tallies as named when opened (a folder stays one name).
    names: Vec<PathBuf>,
    /// Room for summing a position.
    combined: Vec<((usize, u64), PairCount)>,
}

impl TallyLookup {
    /// Opens the tallies `paths` (files or folders of `.parquet` files); they must have been made
    /// with the same options.
    pub fn open(paths: &[&Path]) -> Result<TallyLookup, TallyError> {
        Ok(TallyLookup {
            readers: open_all(paths, None, false)?,
            names: paths.iter().map(|p| p.to_path_buf()).collect(),
            combined: Vec::new(),
        })
    }

    /// The tallies as they were named.
    pub fn names(&self) -> &[PathBuf] {
        &self.names
    }

    /// Games counted in all the tallies.
    pub fn games(&self) -> u64 {
        self.readers.iter().map(|r| r.meta().games).sum()
    }

    /// Whether the tallies have the ratings' columns (`tally --ratings`; all or none have).
    pub fn has_ratings(&self) -> bool {
        self.readers.first().is_some_and(|r| r.meta().ratings)
    }

    /// The options the tallies were made with (the same for all).
    pub fn options(&self) -> &str {
        self.readers
            .first()
            .map(|r| r.meta().options.as_str())
            .unwrap_or("")
    }

    /// Every pair of the position `key`, summed over the tallies, in order of first appearance.
    pub fn find(&mut self, key: u64) -> Result<Vec<PairCount>, TallyError> {
        let mut parts = Vec::new();
        for (i, reader) in self.readers.iter_mut().enumerate() {
            let pairs = reader.find(key)?;
            if !pairs.is_empty() {
                parts.push((i, pairs));
            }
        }
        let mut out = Vec::new();
        match parts.as_mut_slice() {
            [] => {}
            // One file's pairs need no summing (a range-partitioned dataset has each key in one).
            [(_, pairs)] if pairs.windows(2).all(|w| w[0].first < w[1].first) => {
                out = std::mem::take(pairs)
            }
            _ => combine(&mut self.combined, &parts, &mut out),
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tally::TallyMeta;
    use crate::tally::testing::{pair, write_tally};

    fn write(path: &Path, pairs: &[PairCount], games: u64) {
        let meta = TallyMeta {
            games,
            ..TallyMeta::default()
        };
        write_tally(path, pairs, &meta);
    }

    #[test]
    fn a_key_is_summed_over_files_and_folders() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.parquet");
        write(
            &a,
            &[pair(5, 1, 0, 3), pair(5, 2, 1, 1), pair(9, 1, 0, 7)],
            10,
        );
        let folder = dir.path().join("dataset");
        std::fs::create_dir(&folder).unwrap();
        write(&folder.join("part-0.parquet"), &[pair(5, 3, 0, 2)], 2);
        write(&folder.join("part-1.parquet"), &[pair(5, 2, 0, 4)], 4);
        std::fs::write(folder.join("_SUCCESS"), "").unwrap();

        let mut lookup = TallyLookup::open(&[&a, &folder]).unwrap();
        assert_eq!(lookup.games(), 16);
        let found: Vec<(u16, u64, u64)> = lookup
            .find(5)
            .unwrap()
            .iter()
            .map(|p| (p.mv, p.games, p.first))
            .collect();
        // a.parquet's moves first, in its order; then the folder's new move.
        assert_eq!(found, [(1, 3, 0), (2, 5, 1), (3, 2, 2)]);
        assert_eq!(lookup.find(9).unwrap()[0].games, 7);
        assert!(lookup.find(6).unwrap().is_empty());
    }
}
