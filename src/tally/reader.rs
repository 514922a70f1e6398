//! The tally reader: a tally's pairs in file order (by key), position by position, or one key's
//! (through the row groups' key ranges); each row group decoded whole, its rows checked.

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::column::reader::get_typed_column_reader;
use parquet::data_type::{BoolType, DataType, Int32Type, Int64Type};
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::file::statistics::Statistics;

use super::TallyError;
use super::columns::Columns;
use super::guard::{check_footer, check_metadata, check_pages, guarded};
use super::io::SharedFile;
use super::schema::{Layout, RatingLayout, TallyMeta, key_of_stored, read_meta, stored_key};
use crate::builder::PairCount;
use crate::text::quote_path;

/// Reads a tally, row group by row group: its pairs in file order (by key), or one key's.
pub struct TallyReader {
    path: PathBuf,
    reader: SerializedFileReader<SharedFile>,
    /// The file the reader reads, for the checks of its page headers.
    file: SharedFile,
    meta: TallyMeta,
    /// Where each column is in the file, found by name.
    layout: Layout,
    /// Whether the ratings' columns are read (a book leaves them).
    read_ratings: bool,
    /// The row group loaded, and the next row of it to hand out.
    group: usize,
    rows: Columns,
    next: usize,
    /// Rows handed out before this group, and the last key handed out.
    before: u64,
    last_key: Option<u64>,
}

impl TallyReader {
    /// Opens a tally and checks that it is one: a Parquet file with the columns of
    /// [`COLUMNS`](super::COLUMNS) (found by name) and polybook's mark in its metadata.
    pub fn open(path: &Path) -> Result<TallyReader, TallyError> {
        let quoted = quote_path(path);
        let file = File::open(path)
            .and_then(SharedFile::new)
            .map_err(|e| TallyError::Read {
                path: quoted.clone(),
                why: crate::text::reason(&e),
            })?;
        let not_tally = |why: String| TallyError::NotTally {
            path: quoted.clone(),
            why,
        };
        let data_end = check_footer(&file).map_err(&not_tally)?;
        let reader = guarded(|| {
            SerializedFileReader::new(file.clone())
                .map_err(|e| format!("not a Parquet file, or a truncated one ({e})"))
        })
        .map_err(&not_tally)?;
        let metadata = reader.metadata().file_metadata();
        let schema = metadata.schema_descr();
        // The columns are looked for first: a Parquet file of other columns is told as such,
        // not as one without polybook's mark.
        let mut layout = Layout::find(schema).map_err(&not_tally)?;
        let meta = read_meta(metadata).map_err(&not_tally)?;
        if meta.ratings {
            let ratings = RatingLayout::find(schema)
                .map_err(|why| not_tally(format!("its metadata says it has ratings, but {why}")))?;
            layout.ratings = Some(ratings);
        }
        check_metadata(reader.metadata(), data_end).map_err(&not_tally)?;
        Ok(TallyReader {
            path: path.to_path_buf(),
            reader,
            file,
            read_ratings: meta.ratings,
            meta,
            layout,
            group: 0,
            rows: Columns::default(),
            next: 0,
            before: 0,
            last_key: None,
        })
    }

    pub fn meta(&self) -> &TallyMeta {
        &self.meta
    }

    /// Leaves the [`RATING_COLUMNS`](super::RATING_COLUMNS) unread (their pairs'
    /// [`RatingSums`](crate::builder::RatingSums) are zero): for a book,
    /// which does not use them.
    pub fn skip_ratings(&mut self) {
        self.read_ratings = false;
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of rows.
    pub fn rows(&self) -> u64 {
        u64::try_from(self.reader.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    pub(super) fn bad(&self, why: String) -> TallyError {
        TallyError::NotTally {
            path: quote_path(&self.path),
            why,
        }
    }

    /// The number of row groups.
    pub(super) fn row_groups(&self) -> usize {
        self.reader.num_row_groups()
    }

    /// The rows of each row group.
    pub(super) fn group_rows(&self) -> Vec<u64> {
        let meta = self.reader.metadata();
        (0..meta.num_row_groups())
            .map(|g| u64::try_from(meta.row_group(g).num_rows()).unwrap_or(0))
            .collect()
    }

    /// Reads row group `g` whole into `rows` (any thread may, at once); on an error, `rows` is
    /// left empty.
    pub(super) fn decode(&self, g: usize, rows: &mut Columns) -> Result<(), TallyError> {
        rows.clear();
        let decoded = guarded(|| self.decode_columns(g, rows));
        decoded.map_err(|why| {
            rows.clear();
            self.bad(format!("row group {g}: {why}"))
        })
    }

    /// [`TallyReader::decode`]'s work (each column's decoding guarded).
    fn decode_columns(&self, g: usize, rows: &mut Columns) -> Result<(), String> {
        let rg = self.reader.get_row_group(g).map_err(|e| e.to_string())?;
        let n = usize::try_from(rg.metadata().num_rows()).unwrap_or(0);
        let l = &self.layout;
        read_column::<Int64Type>(&self.file, &*rg, l.key, n, &mut rows.key)?;
        read_column::<Int32Type>(&self.file, &*rg, l.mv, n, &mut rows.mv)?;
        read_column::<BoolType>(&self.file, &*rg, l.black, n, &mut rows.black)?;
        read_column::<Int64Type>(&self.file, &*rg, l.games, n, &mut rows.games)?;
        read_column::<Int64Type>(&self.file, &*rg, l.wins, n, &mut rows.wins)?;
        read_column::<Int64Type>(&self.file, &*rg, l.draws, n, &mut rows.draws)?;
        read_column::<Int64Type>(&self.file, &*rg, l.losses, n, &mut rows.losses)?;
        read_column::<Int64Type>(&self.file, &*rg, l.first, n, &mut rows.first)?;
        rows.rated = false;
        if let Some(r) = l.ratings.filter(|_| self.read_ratings) {
            read_column::<Int64Type>(&self.file, &*rg, r.rated_games, n, &mut rows.rated_games)?;
            read_column::<Int64Type>(&self.file, &*rg, r.mover_sum, n, &mut rows.mover_sum)?;
            read_column::<Int64Type>(&self.file, &*rg, r.opponent_sum, n, &mut rows.opponent_sum)?;
            read_column::<Int32Type>(&self.file, &*rg, r.last_date, n, &mut rows.last_date)?;
            rows.rated = true;
        }
        Ok(())
    }

    /// Reads row group `g` whole into `self.rows`.
    fn load(&mut self, g: usize) -> Result<(), TallyError> {
        let mut rows = std::mem::take(&mut self.rows);
        let decoded = self.decode(g, &mut rows);
        self.rows = rows;
        decoded
    }

    /// Row `i` of the loaded group, checked.
    #[inline]
    fn pair(&self, i: usize) -> Result<PairCount, TallyError> {
        self.rows
            .pair(i, self.before + i as u64 + 1)
            .map_err(|why| self.bad(why))
    }

    /// Loads row groups until one has rows left to hand out; `false` at the end of the file.
    fn ensure_rows(&mut self) -> Result<bool, TallyError> {
        while self.next >= self.rows.key.len() {
            if self.group >= self.reader.num_row_groups() {
                return Ok(false);
            }
            self.before += self.rows.key.len() as u64;
            self.load(self.group)?;
            self.group += 1;
            self.next = 0;
        }
        Ok(true)
    }

    /// Checks that the key of the next row does not go down.
    fn check_order(&mut self) -> Result<u64, TallyError> {
        let key = key_of_stored(self.rows.key[self.next]);
        if self.last_key.is_some_and(|k| k > key) {
            return Err(self.bad(format!(
                "row {}: the keys are not in ascending order",
                self.before + self.next as u64 + 1
            )));
        }
        self.last_key = Some(key);
        Ok(key)
    }

    /// The next pair in file order, or `None` at the end. Keys must not go down.
    pub fn next_pair(&mut self) -> Result<Option<PairCount>, TallyError> {
        if !self.ensure_rows()? {
            return Ok(None);
        }
        self.check_order()?;
        let pair = self.pair(self.next)?;
        self.next += 1;
        Ok(Some(pair))
    }

    /// Appends to `out` every pair of the next position in file order (its rows are consecutive,
    /// perhaps over two row groups); returns its key, or `None` at the end.
    pub fn next_position(&mut self, out: &mut Vec<PairCount>) -> Result<Option<u64>, TallyError> {
        if !self.ensure_rows()? {
            return Ok(None);
        }
        let key = self.check_order()?;
        let stored = self.rows.key[self.next];
        loop {
            // The position's run of rows in this group: found on the key column alone.
            let run = self.rows.key[self.next..]
                .iter()
                .position(|&k| k != stored)
                .unwrap_or(self.rows.key.len() - self.next);
            for i in self.next..self.next + run {
                out.push(self.pair(i)?);
            }
            self.next += run;
            if self.next < self.rows.key.len()
                || !self.ensure_rows()?
                || self.rows.key[self.next] != stored
            {
                return Ok(Some(key));
            }
        }
    }

    /// Every pair of one position, read from the row groups whose key range holds its key.
    pub fn find(&mut self, key: u64) -> Result<Vec<PairCount>, TallyError> {
        let stored = stored_key(key);
        let mut out = Vec::new();
        for g in 0..self.reader.num_row_groups() {
            let meta = self.reader.metadata().row_group(g);
            let in_range = match meta.column(self.layout.key).statistics() {
                Some(Statistics::Int64(s)) => match (s.min_opt(), s.max_opt()) {
                    (Some(&lo), Some(&hi)) => (lo..=hi).contains(&stored),
                    _ => true,
                },
                _ => true,
            };
            if !in_range {
                continue;
            }
            self.load(g)?;
            self.before = 0;
            for i in 0..self.rows.key.len() {
                if self.rows.key[i] == stored {
                    out.push(self.pair(i)?);
                }
            }
        }
        // Reading in order starts again from the first group.
        self.group = 0;
        self.rows.clear();
        self.next = 0;
        self.before = 0;
        self.last_key = None;
        Ok(out)
    }
}

impl Iterator for TallyReader {
    type Item = Result<PairCount, TallyError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_pair().transpose()
    }
}

/// Reads the `n` values of column `i` of a row group into `out`; a null is an error, and so is
/// a panic of the decoder (the error names the column).
fn read_column<T: DataType>(
    file: &SharedFile,
    rg: &dyn RowGroupReader,
    i: usize,
    n: usize,
    out: &mut Vec<T::T>,
) -> Result<(), String>
where
    T::T: Default + Clone,
{
    let descr = rg.metadata().column(i).column_descr();
    let (name, nullable) = (descr.name(), descr.max_def_level() > 0);
    guarded(|| {
        check_pages(file, rg.metadata().column(i))?;
        let reader = rg.get_column_reader(i).map_err(|e| e.to_string())?;
        let mut reader = get_typed_column_reader::<T>(reader);
        let mut defs = Vec::new();
        let mut records = 0;
        while records < n {
            let before = out.len();
            let (r, v, _) = reader
                .read_records(
                    n - records,
                    if nullable { Some(&mut defs) } else { None },
                    None,
                    out,
                )
                .map_err(|e| e.to_string())?;
            if r == 0 {
                return Err(format!("it ends after {records} of {n} rows"));
            }
            if out.len() - before != v || v != r {
                return Err("it has empty (null) values".into());
            }
            records += r;
        }
        Ok(())
    })
    .map_err(|why| format!("column {name:?}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tally::TallyWriter;
    use crate::tally::testing::pair;
    use crate::tally::writer::ROW_GROUP;

    #[test]
    fn a_tally_reads_back_by_key_and_by_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut w = TallyWriter::create(&path).unwrap();
        // More rows than a row group, so that a position straddles two groups.
        let rows: Vec<PairCount> = (0..(ROW_GROUP as u64 + 11) / 3)
            .flat_map(|k| {
                [
                    pair(k * 7, 1, 0, k + 1),
                    pair(k * 7, 2, 1, 1),
                    pair(k * 7, 3, 2, 2),
                ]
            })
            .collect();
        for p in &rows {
            w.push(p).unwrap();
        }
        let meta = TallyMeta {
            options: "--max-ply 8".into(),
            games: 3,
            ratings: false,
        };
        assert_eq!(w.finish(&meta, false).unwrap(), rows.len() as u64);
        let mut r = TallyReader::open(&path).unwrap();
        assert_eq!(r.meta(), &meta);
        assert_eq!(r.rows(), rows.len() as u64);
        // Rows 65535, 65536 and 65537: the last of the first group and the first two of the next.
        let straddling = rows[ROW_GROUP - 1].key;
        assert_eq!(rows[ROW_GROUP + 1].key, straddling);
        assert_eq!(r.find(straddling).unwrap().len(), 3);
        let mut read = Vec::new();
        let mut position = Vec::new();
        while let Some(key) = r.next_position(&mut position).unwrap() {
            assert!(position.iter().all(|p| p.key == key) && position.len() == 3);
            read.append(&mut position);
        }
        assert_eq!(read, rows);
    }
}
