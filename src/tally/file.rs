//! The tally file: exact counts per (position, move) as an Apache Parquet file, written and read
//! row group by row group with the `parquet` crate's column API.
//!
//! One row per (position, move), sorted by key, in these columns (all required):
//!
//! | column | Parquet type | what |
//! | --- | --- | --- |
//! | `key` | INT64 | the Polyglot key minus 2^63 (its top bit flipped), so signed order is key order |
//! | `move` | INT32 | the move in Polyglot's 16-bit encoding (castling as the king taking its rook) |
//! | `black` | BOOLEAN | the mover is Black |
//! | `games` | INT64 | games in which the move was played |
//! | `wins`, `draws`, `losses` | INT64 | their results for the mover |
//! | `first` | INT64 | when the move first appeared among its position's moves: 0, 1, 2… |
//!
//! SQL engines and Spark have no unsigned 64-bit integer: a key stored as it is would sort its
//! upper half before the lower. Stored minus 2^63, any engine groups, sorts and range-partitions
//! keys correctly as signed numbers. The file's key-value metadata says it is a tally
//! (`polybook.tally` = `1`), with which options it was made (`polybook.options`) and from how
//! many games (`polybook.games`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, Encoding, Type as PhysicalType, ZstdLevel};
use parquet::column::reader::get_typed_column_reader;
use parquet::data_type::{BoolType, DataType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::file::statistics::Statistics;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

use super::TallyError;
use crate::atomic::AtomicFile;
use crate::build::PairCount;
use crate::text::quote_path;

/// The columns of a tally, in the order polybook writes them.
pub const COLUMNS: [(&str, PhysicalType); 8] = [
    ("key", PhysicalType::INT64),
    ("move", PhysicalType::INT32),
    ("black", PhysicalType::BOOLEAN),
    ("games", PhysicalType::INT64),
    ("wins", PhysicalType::INT64),
    ("draws", PhysicalType::INT64),
    ("losses", PhysicalType::INT64),
    ("first", PhysicalType::INT64),
];

const SCHEMA: &str = "message polybook_tally {
    REQUIRED INT64 key;
    REQUIRED INT32 move;
    REQUIRED BOOLEAN black;
    REQUIRED INT64 games;
    REQUIRED INT64 wins;
    REQUIRED INT64 draws;
    REQUIRED INT64 losses;
    REQUIRED INT64 first;
}";

/// Rows per row group: a probe reads the one or two groups whose key range holds its key.
const ROW_GROUP: usize = 1 << 16;

/// The metadata key that marks a tally, and its format's version.
pub const MARK: (&str, &str) = ("polybook.tally", "1");
/// The metadata key of the options a tally was made with.
pub const OPTIONS: &str = "polybook.options";
/// The metadata key of the number of games counted.
pub const GAMES: &str = "polybook.games";

/// The metadata key under which Spark stores a dataset's schema (with each column's metadata).
const SPARK_SCHEMA: &str = "org.apache.spark.sql.parquet.row.metadata";

/// The metadata of the `key` column in a schema Spark stored (JSON), where the Spark job puts
/// `polybook.tally`, `polybook.options` and `polybook.games`.
fn spark_key_metadata(schema: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let schema: serde_json::Value = serde_json::from_str(schema).ok()?;
    schema["fields"]
        .as_array()?
        .iter()
        .find(|f| f["name"] == "key")?["metadata"]
        .as_object()
        .cloned()
}

/// The key as stored: minus 2^63, so that signed order is the key's order.
pub fn stored_key(key: u64) -> i64 {
    (key ^ (1 << 63)) as i64
}

/// The key from its stored value.
pub fn key_of_stored(stored: i64) -> u64 {
    (stored as u64) ^ (1 << 63)
}

/// What a tally says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TallyMeta {
    /// The options that decide what was counted (`--max-ply 1024`, the filters), in one spelling.
    pub options: String,
    /// Games counted (used).
    pub games: u64,
}

/// The columns of one row group, or of rows waiting to be written.
#[derive(Default)]
struct Columns {
    key: Vec<i64>,
    mv: Vec<i32>,
    black: Vec<bool>,
    games: Vec<i64>,
    wins: Vec<i64>,
    draws: Vec<i64>,
    losses: Vec<i64>,
    first: Vec<i64>,
}

impl Columns {
    fn clear(&mut self) {
        for v in [
            &mut self.key,
            &mut self.games,
            &mut self.wins,
            &mut self.draws,
            &mut self.losses,
            &mut self.first,
        ] {
            v.clear();
        }
        self.mv.clear();
        self.black.clear();
    }
}

/// A count as Parquet's signed 64 bits (counts never come near 2^63).
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Writes a tally, pair by pair in key order, to a file that appears whole when finished.
pub struct TallyWriter {
    path: PathBuf,
    writer: SerializedFileWriter<AtomicFile>,
    rows: Columns,
    written: u64,
    last_key: Option<u64>,
}

impl TallyWriter {
    /// A new tally at `path` (a temporary file until [`TallyWriter::finish`]).
    pub fn create(path: &Path) -> Result<TallyWriter, TallyError> {
        let write_err = write_error(path);
        let file = AtomicFile::create(path).map_err(|e| write_err(e.to_string()))?;
        let schema = Arc::new(parse_message_type(SCHEMA).map_err(|e| write_err(e.to_string()))?);
        let zstd = ZstdLevel::try_new(1).map_err(|e| write_err(e.to_string()))?;
        // The counts are small and the keys and stamps grow slowly: every integer column is
        // stored as bit-packed deltas (a dictionary costs more time and saves nothing here),
        // then compressed.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(zstd))
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::DELTA_BINARY_PACKED)
            .set_max_row_group_row_count(Some(ROW_GROUP))
            .set_created_by(format!("polybook {}", env!("CARGO_PKG_VERSION")));
        props = props.set_column_encoding(ColumnPath::from("black"), Encoding::PLAIN);
        let writer = SerializedFileWriter::new(file, schema, Arc::new(props.build()))
            .map_err(|e| write_err(e.to_string()))?;
        Ok(TallyWriter {
            path: path.to_path_buf(),
            writer,
            rows: Columns::default(),
            written: 0,
            last_key: None,
        })
    }

    /// Adds one pair; keys must come in ascending order.
    pub fn push(&mut self, p: &PairCount) -> Result<(), TallyError> {
        debug_assert!(self.last_key.is_none_or(|k| k <= p.key));
        self.last_key = Some(p.key);
        let r = &mut self.rows;
        r.key.push(stored_key(p.key));
        r.mv.push(i32::from(p.mv));
        r.black.push(p.black);
        r.games.push(signed(p.games));
        r.wins.push(signed(p.wins));
        r.draws.push(signed(p.draws));
        r.losses.push(signed(p.losses));
        r.first.push(signed(p.first));
        if r.key.len() >= ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.written + self.rows.key.len() as u64
    }

    /// Writes the rows waiting as one row group.
    fn flush(&mut self) -> Result<(), TallyError> {
        if self.rows.key.is_empty() {
            return Ok(());
        }
        let write_err = write_error(&self.path);
        let r = &self.rows;
        let mut group = self
            .writer
            .next_row_group()
            .map_err(|e| write_err(e.to_string()))?;
        let mut i = 0;
        while let Some(mut col) = group.next_column().map_err(|e| write_err(e.to_string()))? {
            let written = match i {
                0 => col.typed::<Int64Type>().write_batch(&r.key, None, None),
                1 => col.typed::<Int32Type>().write_batch(&r.mv, None, None),
                2 => col.typed::<BoolType>().write_batch(&r.black, None, None),
                3 => col.typed::<Int64Type>().write_batch(&r.games, None, None),
                4 => col.typed::<Int64Type>().write_batch(&r.wins, None, None),
                5 => col.typed::<Int64Type>().write_batch(&r.draws, None, None),
                6 => col.typed::<Int64Type>().write_batch(&r.losses, None, None),
                _ => col.typed::<Int64Type>().write_batch(&r.first, None, None),
            };
            written.map_err(|e| write_err(e.to_string()))?;
            col.close().map_err(|e| write_err(e.to_string()))?;
            i += 1;
        }
        group.close().map_err(|e| write_err(e.to_string()))?;
        self.written += r.key.len() as u64;
        self.rows.clear();
        Ok(())
    }

    /// Writes the last rows and the metadata and gives the file its name. Returns the rows
    /// written.
    pub fn finish(mut self, meta: &TallyMeta, fsync: bool) -> Result<u64, TallyError> {
        self.flush()?;
        let write_err = write_error(&self.path);
        for (k, v) in [
            (MARK.0, MARK.1.to_string()),
            (OPTIONS, meta.options.clone()),
            (GAMES, meta.games.to_string()),
        ] {
            self.writer
                .append_key_value_metadata(KeyValue::new(k.to_string(), v));
        }
        let file = self
            .writer
            .into_inner()
            .map_err(|e| write_err(e.to_string()))?;
        file.commit(fsync).map_err(|e| write_err(e.to_string()))?;
        Ok(self.written)
    }
}

fn write_error(path: &Path) -> impl Fn(String) -> TallyError + '_ {
    move |why| TallyError::Write {
        path: quote_path(path),
        why,
    }
}

/// Reads a tally, row group by row group: its pairs in file order (by key), or one key's.
pub struct TallyReader {
    path: PathBuf,
    reader: SerializedFileReader<File>,
    meta: TallyMeta,
    /// Where each of [`COLUMNS`] is in the file.
    index: [usize; 8],
    /// The row group loaded, and the next row of it to hand out.
    group: usize,
    rows: Columns,
    next: usize,
    /// Rows handed out before this group, and the last key handed out.
    before: u64,
    last_key: Option<u64>,
}

impl TallyReader {
    /// Opens a tally and checks that it is one: a Parquet file with the columns of [`COLUMNS`]
    /// and polybook's mark in its metadata.
    pub fn open(path: &Path) -> Result<TallyReader, TallyError> {
        let quoted = quote_path(path);
        let file = File::open(path).map_err(|e| TallyError::Read {
            path: quoted.clone(),
            why: crate::text::reason(&e),
        })?;
        let reader = SerializedFileReader::new(file).map_err(|e| TallyError::NotTally {
            path: quoted.clone(),
            why: format!("not a Parquet file, or a truncated one ({e})"),
        })?;
        let not_tally = |why: String| TallyError::NotTally {
            path: quoted.clone(),
            why,
        };
        let metadata = reader.metadata().file_metadata();
        let schema = metadata.schema_descr();
        let mut index = [0usize; 8];
        for (slot, (name, ty)) in index.iter_mut().zip(COLUMNS) {
            let found = (0..schema.num_columns()).find(|&i| schema.column(i).name() == name);
            let Some(i) = found else {
                return Err(not_tally(format!("it has no column {name:?}")));
            };
            let col = schema.column(i);
            if col.physical_type() != ty || col.max_rep_level() != 0 {
                return Err(not_tally(format!(
                    "column {name:?} is {}, not {ty}",
                    col.physical_type()
                )));
            }
            *slot = i;
        }
        let file_kv = |key: &str| {
            metadata
                .key_value_metadata()
                .and_then(|kv| kv.iter().find(|e| e.key == key))
                .and_then(|e| e.value.clone())
        };
        // Spark cannot write a file's own metadata: its job puts polybook's on the `key` column
        // of the schema it stores in the file.
        let spark = file_kv(SPARK_SCHEMA).and_then(|schema| spark_key_metadata(&schema));
        let kv = |key: &str| match &spark {
            Some(fields) if file_kv(MARK.0).is_none() => {
                fields.get(key).and_then(|v| v.as_str().map(str::to_string))
            }
            _ => file_kv(key),
        };
        match kv(MARK.0) {
            Some(v) if v == MARK.1 => {}
            Some(v) => {
                return Err(not_tally(format!(
                    "its format is version {v}; this polybook reads version {}",
                    MARK.1
                )));
            }
            None => return Err(not_tally(format!("its metadata has no {:?} mark", MARK.0))),
        }
        let meta = TallyMeta {
            options: kv(OPTIONS).unwrap_or_default(),
            games: kv(GAMES).and_then(|g| g.parse().ok()).unwrap_or(0),
        };
        Ok(TallyReader {
            path: path.to_path_buf(),
            reader,
            meta,
            index,
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

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of rows.
    pub fn rows(&self) -> u64 {
        u64::try_from(self.reader.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    fn bad(&self, why: String) -> TallyError {
        TallyError::NotTally {
            path: quote_path(&self.path),
            why,
        }
    }

    /// Reads row group `g` whole into `self.rows`.
    fn load(&mut self, g: usize) -> Result<(), TallyError> {
        let rg = self
            .reader
            .get_row_group(g)
            .map_err(|e| self.bad(format!("row group {g}: {e}")))?;
        let n = usize::try_from(rg.metadata().num_rows()).unwrap_or(0);
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        let err = |e: String| TallyError::NotTally {
            path: quote_path(&self.path),
            why: format!("row group {g}: {e}"),
        };
        read_column::<Int64Type>(&*rg, self.index[0], n, &mut rows.key).map_err(&err)?;
        read_column::<Int32Type>(&*rg, self.index[1], n, &mut rows.mv).map_err(&err)?;
        read_column::<BoolType>(&*rg, self.index[2], n, &mut rows.black).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[3], n, &mut rows.games).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[4], n, &mut rows.wins).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[5], n, &mut rows.draws).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[6], n, &mut rows.losses).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[7], n, &mut rows.first).map_err(&err)?;
        drop(rg);
        self.rows = rows;
        Ok(())
    }

    /// Row `i` of the loaded group, checked.
    #[inline]
    fn pair(&self, i: usize) -> Result<PairCount, TallyError> {
        let r = &self.rows;
        let row = self.before + i as u64 + 1;
        let count = |v: i64| u64::try_from(v).ok();
        let mv = u16::try_from(r.mv[i]).ok().filter(|m| m & 0x8000 == 0);
        let (Some(mv), Some(games), Some(wins), Some(draws), Some(losses), Some(first)) = (
            mv,
            count(r.games[i]),
            count(r.wins[i]),
            count(r.draws[i]),
            count(r.losses[i]),
            count(r.first[i]),
        ) else {
            return Err(self.bad(format!("row {row}: a move or count out of range")));
        };
        if games == 0 || wins.checked_add(draws).and_then(|s| s.checked_add(losses)) != Some(games)
        {
            return Err(self.bad(format!(
                "row {row}: {games} games but {wins} wins, {draws} draws and {losses} losses"
            )));
        }
        Ok(PairCount {
            key: key_of_stored(r.key[i]),
            mv,
            black: r.black[i],
            first,
            games,
            wins,
            draws,
            losses,
        })
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
            let in_range = match meta.column(self.index[0]).statistics() {
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

/// Reads the `n` values of column `i` of a row group into `out`; a null is an error.
fn read_column<T: DataType>(
    rg: &dyn RowGroupReader,
    i: usize,
    n: usize,
    out: &mut Vec<T::T>,
) -> Result<(), String>
where
    T::T: Default + Clone,
{
    let reader = rg.get_column_reader(i).map_err(|e| e.to_string())?;
    let mut reader = get_typed_column_reader::<T>(reader);
    let nullable = rg.metadata().column(i).column_descr().max_def_level() > 0;
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
            return Err(format!("column {i} ends after {records} of {n} rows"));
        }
        if out.len() - before != v || v != r {
            return Err(format!("column {i} has empty (null) values"));
        }
        records += r;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_keys_sort_as_the_keys_do() {
        let keys = [0, 1, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000, u64::MAX];
        for w in keys.windows(2) {
            assert!(stored_key(w[0]) < stored_key(w[1]), "{w:?}");
        }
        for k in keys {
            assert_eq!(key_of_stored(stored_key(k)), k);
            // Minus 2^63, as the README says.
            assert_eq!(i128::from(stored_key(k)), i128::from(k) - (1i128 << 63));
        }
    }

    fn pair(key: u64, mv: u16, first: u64, games: u64) -> PairCount {
        PairCount {
            key,
            mv,
            black: false,
            first,
            games,
            wins: games,
            draws: 0,
            losses: 0,
        }
    }

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
