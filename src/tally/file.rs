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
//! With `tally --ratings`, four more columns (and `polybook.ratings` = `1` in the metadata):
//!
//! | column | Parquet type | what |
//! | --- | --- | --- |
//! | `rated_games` | INT64 | games in which both players had a rating (`WhiteElo`, `BlackElo` > 0) |
//! | `mover_rating_sum`, `opponent_rating_sum` | INT64 | over those games, the sums of the mover's and the other side's ratings |
//! | `last_date` | INT32 | the latest `Date` of the games as `yyyymmdd` (unknown month or day as 00; 0 if none had one) |
//!
//! SQL engines and Spark have no unsigned 64-bit integer: a key stored as it is would sort its
//! upper half before the lower. Stored minus 2^63, any engine groups, sorts and range-partitions
//! keys correctly as signed numbers. The file's key-value metadata says it is a tally
//! (`polybook.tally` = `1`), with which options it was made (`polybook.options`) and from how
//! many games (`polybook.games`).

use std::collections::VecDeque;
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;

use parquet::basic::{Compression, Encoding, Type as PhysicalType, ZstdLevel};
use parquet::column::reader::get_typed_column_reader;
use parquet::column::writer::{ColumnCloseResult, get_column_writer, get_typed_column_writer};
use parquet::data_type::{BoolType, DataType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesPtr};
use parquet::file::reader::{ChunkReader, FileReader, Length, RowGroupReader};
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::{ColumnDescPtr, ColumnPath, SchemaDescPtr, SchemaDescriptor};

use super::TallyError;
use crate::atomic::AtomicFile;
use crate::builder::{PairColumns, PairCount, RatingSums};
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

/// The columns `tally --ratings` adds, after [`COLUMNS`].
pub const RATING_COLUMNS: [(&str, PhysicalType); 4] = [
    ("rated_games", PhysicalType::INT64),
    ("mover_rating_sum", PhysicalType::INT64),
    ("opponent_rating_sum", PhysicalType::INT64),
    ("last_date", PhysicalType::INT32),
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

const SCHEMA_RATED: &str = "message polybook_tally {
    REQUIRED INT64 key;
    REQUIRED INT32 move;
    REQUIRED BOOLEAN black;
    REQUIRED INT64 games;
    REQUIRED INT64 wins;
    REQUIRED INT64 draws;
    REQUIRED INT64 losses;
    REQUIRED INT64 first;
    REQUIRED INT64 rated_games;
    REQUIRED INT64 mover_rating_sum;
    REQUIRED INT64 opponent_rating_sum;
    REQUIRED INT32 last_date;
}";

/// Rows per row group: a probe reads the one or two groups whose key range holds its key.
const ROW_GROUP: usize = 1 << 16;

/// The metadata key that marks a tally, and its format's version.
pub const MARK: (&str, &str) = ("polybook.tally", "1");
/// The metadata key of the options a tally was made with.
pub const OPTIONS: &str = "polybook.options";
/// The metadata key of the number of games counted.
pub const GAMES: &str = "polybook.games";
/// The metadata key that says the tally has the [`RATING_COLUMNS`] (`1`; absent otherwise).
pub const RATINGS: &str = "polybook.ratings";

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
    /// It has the [`RATING_COLUMNS`] (`tally --ratings`).
    pub ratings: bool,
}

/// The columns of one row group, as read.
#[derive(Default)]
pub(super) struct Columns {
    pub key: Vec<i64>,
    pub mv: Vec<i32>,
    pub black: Vec<bool>,
    pub games: Vec<i64>,
    pub wins: Vec<i64>,
    pub draws: Vec<i64>,
    pub losses: Vec<i64>,
    pub first: Vec<i64>,
    /// The [`RATING_COLUMNS`] were read (else they are empty).
    pub rated: bool,
    pub rated_games: Vec<i64>,
    pub mover_sum: Vec<i64>,
    pub opponent_sum: Vec<i64>,
    pub last_date: Vec<i32>,
}

impl Columns {
    /// Row `i`, checked (`row` is its number in the file, from 1, for the error).
    #[inline]
    pub fn pair(&self, i: usize, row: u64) -> Result<PairCount, String> {
        let count = |v: i64| u64::try_from(v).ok();
        let mv = u16::try_from(self.mv[i]).ok().filter(|m| m & 0x8000 == 0);
        let (Some(mv), Some(games), Some(wins), Some(draws), Some(losses), Some(first)) = (
            mv,
            count(self.games[i]),
            count(self.wins[i]),
            count(self.draws[i]),
            count(self.losses[i]),
            count(self.first[i]),
        ) else {
            return Err(format!("row {row}: a move or count out of range"));
        };
        if games == 0 || wins.checked_add(draws).and_then(|s| s.checked_add(losses)) != Some(games)
        {
            return Err(format!(
                "row {row}: {games} games but {wins} wins, {draws} draws and {losses} losses"
            ));
        }
        let mut rating = RatingSums::default();
        if self.rated {
            let (Some(rated_games), Some(mover_sum), Some(opponent_sum), Ok(last_date)) = (
                count(self.rated_games[i]),
                count(self.mover_sum[i]),
                count(self.opponent_sum[i]),
                u32::try_from(self.last_date[i]),
            ) else {
                return Err(format!("row {row}: a rating sum or date out of range"));
            };
            if rated_games > games {
                return Err(format!(
                    "row {row}: {rated_games} rated games of {games} games"
                ));
            }
            rating = RatingSums {
                rated_games,
                mover_sum,
                opponent_sum,
                last_date,
            };
        }
        Ok(PairCount {
            key: key_of_stored(self.key[i]),
            mv,
            black: self.black[i],
            first,
            games,
            wins,
            draws,
            losses,
            rating,
        })
    }

    /// Row `i`, as [`Columns::check`] found it (always inline: a row copied out through memory
    /// costs more than all its uses, in `book`'s loop over single-move positions).
    #[inline(always)]
    pub fn row(&self, i: usize) -> PairCount {
        PairCount {
            key: key_of_stored(self.key[i]),
            mv: self.mv[i] as u16,
            black: self.black[i],
            first: self.first[i] as u64,
            games: self.games[i] as u64,
            wins: self.wins[i] as u64,
            draws: self.draws[i] as u64,
            losses: self.losses[i] as u64,
            rating: if self.rated {
                RatingSums {
                    rated_games: self.rated_games[i] as u64,
                    mover_sum: self.mover_sum[i] as u64,
                    opponent_sum: self.opponent_sum[i] as u64,
                    last_date: self.last_date[i] as u32,
                }
            } else {
                RatingSums::default()
            },
        }
    }

    /// Checks every row as [`Columns::pair`] does, column by column (`before`: the rows of the
    /// file before these).
    pub fn check(&self, before: u64) -> Result<(), String> {
        let n = self.key.len();
        // Counts are below 2^62 (a tally would need that many games), so their sum cannot wrap.
        const BIG: i64 = 1 << 62;
        let bad = (0..n).find(|&i| {
            let (g, w, d, l) = (self.games[i], self.wins[i], self.draws[i], self.losses[i]);
            !(0..0x8000).contains(&self.mv[i])
                | !(1..BIG).contains(&g)
                | !(0..BIG).contains(&w)
                | !(0..BIG).contains(&d)
                | !(0..BIG).contains(&l)
                | (self.first[i] < 0)
                | (w + d + l != g)
                | (self.rated
                    && ((self.rated_games[i] < 0)
                        | (self.rated_games[i] > g)
                        | (self.mover_sum[i] < 0)
                        | (self.opponent_sum[i] < 0)
                        | (self.last_date[i] < 0)))
        });
        match bad {
            Some(i) => match self.pair(i, before + i as u64 + 1) {
                Err(why) => Err(why),
                // Counts past 2^62 that add up: read row by row.
                Ok(_) => (i..n).try_for_each(|i| self.pair(i, before + i as u64 + 1).map(drop)),
            },
            None => Ok(()),
        }
    }

    fn clear(&mut self) {
        for v in [
            &mut self.key,
            &mut self.games,
            &mut self.wins,
            &mut self.draws,
            &mut self.losses,
            &mut self.first,
            &mut self.rated_games,
            &mut self.mover_sum,
            &mut self.opponent_sum,
        ] {
            v.clear();
        }
        self.mv.clear();
        self.black.clear();
        self.last_date.clear();
    }
}

/// A count as Parquet's signed 64 bits (counts never come near 2^63).
fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Writes a tally, pair by pair in key order, to a file that appears whole when finished.
///
/// The rows are gathered into row groups of [`ROW_GROUP`] rows; each full group goes to an
/// encoder thread, which encodes and compresses its column chunks into memory, and the chunks
/// are written to the file in group order. The file is the same bytes as if one thread had
/// encoded it (the same encoder settings on the same rows; only where it happens differs).
/// Columns handed over whole ([`TallyWriter::push_columns`]) are not copied here: a group is a
/// list of pieces of them, which its encoder gathers.
pub struct TallyWriter {
    path: PathBuf,
    writer: SerializedFileWriter<AtomicFile>,
    schema: SchemaDescPtr,
    props: WriterPropertiesPtr,
    /// The pieces of the group being filled, and their rows.
    pieces: Vec<Piece>,
    waiting: usize,
    /// Rows pushed one by one since the last piece.
    open: PairColumns,
    written: u64,
    last_key: Option<u64>,
    /// Encoder threads wanted, started on the first full group.
    threads: usize,
    /// It writes the [`RATING_COLUMNS`].
    rated: bool,
    encoders: Option<Encoders>,
    /// The groups being encoded, in file order.
    pending: VecDeque<Receiver<Result<EncodedGroup, String>>>,
}

/// Some consecutive rows of shared columns.
type Piece = (Arc<PairColumns>, Range<usize>);

/// A row group's column chunks, encoded and compressed in memory, with what the file's footer
/// says of each.
type EncodedGroup = Vec<(Bytes, ColumnCloseResult)>;

/// A row group to encode, and where to send its chunks.
struct Job {
    pieces: Vec<Piece>,
    done: SyncSender<Result<EncodedGroup, String>>,
}

/// The encoder threads and their queue.
struct Encoders {
    jobs: SyncSender<Job>,
    threads: Vec<JoinHandle<()>>,
}

impl TallyWriter {
    /// A new tally at `path` (a temporary file until [`TallyWriter::finish`]), encoded on as
    /// many threads as there are cores (at most 4).
    pub fn create(path: &Path) -> Result<TallyWriter, TallyError> {
        Self::create_with(path, false)
    }

    /// A new tally at `path`, with the [`RATING_COLUMNS`] if `rated` (the pairs' ratings).
    pub fn create_with(path: &Path, rated: bool) -> Result<TallyWriter, TallyError> {
        let write_err = write_error(path);
        let file = AtomicFile::create(path).map_err(|e| write_err(e.to_string()))?;
        let text = if rated { SCHEMA_RATED } else { SCHEMA };
        let schema = Arc::new(parse_message_type(text).map_err(|e| write_err(e.to_string()))?);
        let zstd = ZstdLevel::try_new(1).map_err(|e| write_err(e.to_string()))?;
        // The counts are small and the keys and stamps grow slowly: every integer column is
        // stored as bit-packed deltas (a dictionary costs more time and saves nothing here),
        // then compressed. Only the key's minimum and maximum per row group are kept (a probe
        // reads them to find its groups): statistics of the other columns, or per page, would
        // cost a pass over every value and serve no reader. A row group is one page per column,
        // written in one batch.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(zstd))
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::DELTA_BINARY_PACKED)
            .set_statistics_enabled(EnabledStatistics::None)
            .set_column_statistics_enabled(ColumnPath::from("key"), EnabledStatistics::Chunk)
            .set_write_batch_size(ROW_GROUP)
            .set_data_page_row_count_limit(ROW_GROUP)
            .set_max_row_group_row_count(Some(ROW_GROUP))
            .set_created_by(format!("polybook {}", env!("CARGO_PKG_VERSION")));
        props = props.set_column_encoding(ColumnPath::from("black"), Encoding::PLAIN);
        // The keys' deltas, the moves and the colours are close to random bits: zstd finds
        // nothing to save in them (1.00 of their size) and would only spend time looking.
        for column in ["key", "move", "black"] {
            props =
                props.set_column_compression(ColumnPath::from(column), Compression::UNCOMPRESSED);
        }
        let props = Arc::new(props.build());
        let descr = Arc::new(SchemaDescriptor::new(schema.clone()));
        let writer = SerializedFileWriter::new(file, schema, props.clone())
            .map_err(|e| write_err(e.to_string()))?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        Ok(TallyWriter {
            path: path.to_path_buf(),
            writer,
            schema: descr,
            props,
            pieces: Vec::new(),
            waiting: 0,
            open: PairColumns {
                rated,
                ..PairColumns::default()
            },
            written: 0,
            last_key: None,
            threads,
            rated,
            encoders: None,
            pending: VecDeque::new(),
        })
    }

    /// Encodes on `n` threads (at least 1) instead.
    pub fn threads(mut self, n: usize) -> TallyWriter {
        self.threads = n.max(1);
        self
    }

    /// Adds one pair; keys must come in ascending order.
    pub fn push(&mut self, p: &PairCount) -> Result<(), TallyError> {
        self.push_all(std::slice::from_ref(p))
    }

    /// Adds pairs; keys must come in ascending order.
    pub fn push_all(&mut self, pairs: &[PairCount]) -> Result<(), TallyError> {
        for p in pairs {
            debug_assert!(self.last_key.is_none_or(|k| k <= p.key));
            self.last_key = Some(p.key);
            self.open.push(p);
            if self.waiting + self.open.len() == ROW_GROUP {
                self.seal()?;
            }
        }
        Ok(())
    }

    /// Adds pairs as columns, without copying them; keys must come in ascending order.
    pub fn push_columns(&mut self, pairs: PairColumns) -> Result<(), TallyError> {
        let Some(&last) = pairs.key.last() else {
            return Ok(());
        };
        debug_assert!(self.last_key.is_none_or(|k| k <= pairs.key[0]));
        if pairs.rated != self.rated {
            return Err(write_error(&self.path)(
                "rows with and without ratings in one tally".into(),
            ));
        }
        self.last_key = Some(last);
        self.seal()?;
        self.add_piece(Arc::new(pairs))
    }

    /// Makes the rows pushed one by one a piece of the group.
    fn seal(&mut self) -> Result<(), TallyError> {
        if self.open.is_empty() {
            return Ok(());
        }
        let open = std::mem::replace(
            &mut self.open,
            PairColumns {
                rated: self.rated,
                ..PairColumns::default()
            },
        );
        self.add_piece(Arc::new(open))
    }

    /// Adds the rows of `columns` to the groups, sending each group on when it is full.
    fn add_piece(&mut self, columns: Arc<PairColumns>) -> Result<(), TallyError> {
        let mut start = 0;
        while start < columns.len() {
            let end = columns.len().min(start + ROW_GROUP - self.waiting);
            self.pieces.push((columns.clone(), start..end));
            self.waiting += end - start;
            start = end;
            if self.waiting == ROW_GROUP {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.written + (self.waiting + self.open.len()) as u64
    }

    /// Hands the rows waiting, as one row group, to an encoder thread; writes the groups already
    /// encoded while more than one per thread is on its way.
    fn flush(&mut self) -> Result<(), TallyError> {
        if self.waiting == 0 {
            return Ok(());
        }
        let pieces = std::mem::take(&mut self.pieces);
        self.written += self.waiting as u64;
        self.waiting = 0;
        let (done, encoded) = sync_channel(1);
        let job = Job { pieces, done };
        let threads = self.threads;
        let (schema, props) = (&self.schema, &self.props);
        let encoders = self
            .encoders
            .get_or_insert_with(|| Encoders::start(threads, schema, props));
        if encoders.jobs.send(job).is_err() {
            return Err(write_error(&self.path)("an encoder thread stopped".into()));
        }
        self.pending.push_back(encoded);
        while self.pending.len() > self.threads {
            self.write_encoded()?;
        }
        Ok(())
    }

    /// Writes the oldest group being encoded, once it is.
    fn write_encoded(&mut self) -> Result<(), TallyError> {
        let write_err = write_error(&self.path);
        let Some(encoded) = self.pending.pop_front() else {
            return Ok(());
        };
        let chunks = encoded
            .recv()
            .unwrap_or_else(|_| Err("an encoder thread stopped".into()))
            .map_err(&write_err)?;
        let mut group = self
            .writer
            .next_row_group()
            .map_err(|e| write_err(e.to_string()))?;
        for (bytes, close) in chunks {
            group
                .append_column(&bytes, close)
                .map_err(|e| write_err(e.to_string()))?;
        }
        group.close().map_err(|e| write_err(e.to_string()))?;
        Ok(())
    }

    /// Writes the last rows and the metadata and gives the file its name. Returns the rows
    /// written.
    pub fn finish(mut self, meta: &TallyMeta, fsync: bool) -> Result<u64, TallyError> {
        self.seal()?;
        self.flush()?;
        while !self.pending.is_empty() {
            self.write_encoded()?;
        }
        if let Some(encoders) = self.encoders.take() {
            encoders.stop();
        }
        let write_err = write_error(&self.path);
        for (k, v) in [
            (MARK.0, MARK.1.to_string()),
            (OPTIONS, meta.options.clone()),
            (GAMES, meta.games.to_string()),
        ] {
            self.writer
                .append_key_value_metadata(KeyValue::new(k.to_string(), v));
        }
        if self.rated {
            self.writer
                .append_key_value_metadata(KeyValue::new(RATINGS.to_string(), "1".to_string()));
        }
        let file = self
            .writer
            .into_inner()
            .map_err(|e| write_err(e.to_string()))?;
        file.commit(fsync).map_err(|e| write_err(e.to_string()))?;
        Ok(self.written)
    }
}

impl Encoders {
    fn start(n: usize, schema: &SchemaDescPtr, props: &WriterPropertiesPtr) -> Encoders {
        let (jobs, queue) = sync_channel::<Job>(n);
        let queue = Arc::new(Mutex::new(queue));
        let threads = (0..n)
            .map(|_| {
                let (queue, schema, props) = (queue.clone(), schema.clone(), props.clone());
                std::thread::spawn(move || {
                    let mut columns = Gathered::default();
                    // The queue is locked only while a job is taken from it.
                    while let Some(job) = queue.lock().ok().and_then(|q| q.recv().ok()) {
                        columns.gather(&job.pieces);
                        drop(job.pieces);
                        let encoded = columns.encode(&schema, &props);
                        let _ = job.done.send(encoded.map_err(|e| e.to_string()));
                    }
                })
            })
            .collect();
        Encoders { jobs, threads }
    }

    /// Closes the queue and waits for the threads.
    fn stop(self) {
        drop(self.jobs);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// One row group's columns as the file stores them, gathered from its pieces (kept from group
/// to group by an encoder thread).
#[derive(Default)]
struct Gathered {
    key: Vec<i64>,
    mv: Vec<i32>,
    black: Vec<bool>,
    counts: [Vec<i64>; 5],
    /// The ratings' columns (`rated_games`, the two sums), and `last_date`: when the rows
    /// have them.
    rated: bool,
    sums: [Vec<i64>; 3],
    last_date: Vec<i32>,
}

impl Gathered {
    fn gather(&mut self, pieces: &[Piece]) {
        self.key.clear();
        self.mv.clear();
        self.black.clear();
        self.counts.iter_mut().for_each(Vec::clear);
        self.sums.iter_mut().for_each(Vec::clear);
        self.last_date.clear();
        self.rated = pieces.first().is_some_and(|(c, _)| c.rated);
        for (columns, range) in pieces {
            let c = &**columns;
            let r = range.clone();
            self.key
                .extend(c.key[r.clone()].iter().map(|&k| stored_key(k)));
            self.mv
                .extend(c.mv[r.clone()].iter().map(|&m| i32::from(m)));
            self.black.extend_from_slice(&c.black[r.clone()]);
            for (out, column) in self
                .counts
                .iter_mut()
                .zip([&c.games, &c.wins, &c.draws, &c.losses, &c.first])
            {
                out.extend(column[r.clone()].iter().map(|&n| signed(n)));
            }
            if self.rated {
                for (out, column) in
                    self.sums
                        .iter_mut()
                        .zip([&c.rated_games, &c.mover_sum, &c.opponent_sum])
                {
                    out.extend(column[r.clone()].iter().map(|&n| signed(n)));
                }
                self.last_date
                    .extend(c.last_date[r.clone()].iter().map(|&d| d as i32));
            }
        }
    }

    /// Encodes and compresses the columns, each as the file writer would.
    fn encode(
        &self,
        schema: &SchemaDescPtr,
        props: &WriterPropertiesPtr,
    ) -> parquet::errors::Result<EncodedGroup> {
        let col = |i: usize| (schema.column(i), props.clone());
        let [games, wins, draws, losses, first] = &self.counts;
        let mut chunks = vec![
            encode_column::<Int64Type>(col(0), &self.key)?,
            encode_column::<Int32Type>(col(1), &self.mv)?,
            encode_column::<BoolType>(col(2), &self.black)?,
            encode_column::<Int64Type>(col(3), games)?,
            encode_column::<Int64Type>(col(4), wins)?,
            encode_column::<Int64Type>(col(5), draws)?,
            encode_column::<Int64Type>(col(6), losses)?,
            encode_column::<Int64Type>(col(7), first)?,
        ];
        if self.rated {
            let [rated_games, mover_sum, opponent_sum] = &self.sums;
            chunks.push(encode_column::<Int64Type>(col(8), rated_games)?);
            chunks.push(encode_column::<Int64Type>(col(9), mover_sum)?);
            chunks.push(encode_column::<Int64Type>(col(10), opponent_sum)?);
            chunks.push(encode_column::<Int32Type>(col(11), &self.last_date)?);
        }
        Ok(chunks)
    }
}

/// One column chunk encoded and compressed into memory (its pages as the file would hold them,
/// and its metadata with offsets counted from the start of the chunk).
fn encode_column<T: DataType>(
    (descr, props): (ColumnDescPtr, WriterPropertiesPtr),
    values: &[T::T],
) -> parquet::errors::Result<(Bytes, ColumnCloseResult)> {
    let mut buf = TrackedWrite::new(Vec::new());
    let pages = SerializedPageWriter::new(&mut buf);
    let mut writer = get_typed_column_writer::<T>(get_column_writer(descr, props, Box::new(pages)));
    writer.write_batch(values, None, None)?;
    let close = writer.close()?;
    Ok((Bytes::from(buf.into_inner()?), close))
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
    reader: SerializedFileReader<SharedFile>,
    meta: TallyMeta,
    /// Where each of [`COLUMNS`] is in the file.
    index: [usize; 8],
    /// Where each of [`RATING_COLUMNS`] is, when the tally has them.
    rating_index: Option<[usize; 4]>,
    /// Whether they are read (a book leaves them).
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
    /// Opens a tally and checks that it is one: a Parquet file with the columns of [`COLUMNS`]
    /// and polybook's mark in its metadata.
    pub fn open(path: &Path) -> Result<TallyReader, TallyError> {
        let quoted = quote_path(path);
        let file = File::open(path).map_err(|e| TallyError::Read {
            path: quoted.clone(),
            why: crate::text::reason(&e),
        })?;
        let reader =
            SerializedFileReader::new(SharedFile(file)).map_err(|e| TallyError::NotTally {
                path: quoted.clone(),
                why: format!("not a Parquet file, or a truncated one ({e})"),
            })?;
        let not_tally = |why: String| TallyError::NotTally {
            path: quoted.clone(),
            why,
        };
        let metadata = reader.metadata().file_metadata();
        let schema = metadata.schema_descr();
        let column = |name: &str, ty: PhysicalType| {
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
            Ok(i)
        };
        let mut index = [0usize; 8];
        for (slot, (name, ty)) in index.iter_mut().zip(COLUMNS) {
            *slot = column(name, ty)?;
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
        let ratings = kv(RATINGS).is_some_and(|v| v == "1");
        let rating_index = if ratings {
            let mut index = [0usize; 4];
            for (slot, (name, ty)) in index.iter_mut().zip(RATING_COLUMNS) {
                *slot = column(name, ty).map_err(|e| {
                    not_tally(format!(
                        "its metadata says it has ratings, but {}",
                        match e {
                            TallyError::NotTally { why, .. } => why,
                            e => e.to_string(),
                        }
                    ))
                })?;
            }
            Some(index)
        } else {
            None
        };
        let meta = TallyMeta {
            options: kv(OPTIONS).unwrap_or_default(),
            games: kv(GAMES).and_then(|g| g.parse().ok()).unwrap_or(0),
            ratings,
        };
        Ok(TallyReader {
            path: path.to_path_buf(),
            reader,
            meta,
            index,
            rating_index,
            read_ratings: ratings,
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

    /// Leaves the [`RATING_COLUMNS`] unread (their pairs' [`RatingSums`] are zero): for a book,
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

    /// Reads row group `g` whole into `rows` (any thread may, at once).
    pub(super) fn decode(&self, g: usize, rows: &mut Columns) -> Result<(), TallyError> {
        let rg = self
            .reader
            .get_row_group(g)
            .map_err(|e| self.bad(format!("row group {g}: {e}")))?;
        let n = usize::try_from(rg.metadata().num_rows()).unwrap_or(0);
        rows.clear();
        let err = |e: String| self.bad(format!("row group {g}: {e}"));
        read_column::<Int64Type>(&*rg, self.index[0], n, &mut rows.key).map_err(&err)?;
        read_column::<Int32Type>(&*rg, self.index[1], n, &mut rows.mv).map_err(&err)?;
        read_column::<BoolType>(&*rg, self.index[2], n, &mut rows.black).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[3], n, &mut rows.games).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[4], n, &mut rows.wins).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[5], n, &mut rows.draws).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[6], n, &mut rows.losses).map_err(&err)?;
        read_column::<Int64Type>(&*rg, self.index[7], n, &mut rows.first).map_err(&err)?;
        rows.rated = false;
        if let Some(r) = self.rating_index.filter(|_| self.read_ratings) {
            read_column::<Int64Type>(&*rg, r[0], n, &mut rows.rated_games).map_err(&err)?;
            read_column::<Int64Type>(&*rg, r[1], n, &mut rows.mover_sum).map_err(&err)?;
            read_column::<Int64Type>(&*rg, r[2], n, &mut rows.opponent_sum).map_err(&err)?;
            read_column::<Int32Type>(&*rg, r[3], n, &mut rows.last_date).map_err(&err)?;
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

/// A file that several threads read at once, each at its own offsets (no shared seek position).
pub(super) struct SharedFile(File);

impl Length for SharedFile {
    fn len(&self) -> u64 {
        self.0.metadata().map_or(0, |m| m.len())
    }
}

impl ChunkReader for SharedFile {
    type T = std::io::BufReader<ReadAt>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(std::io::BufReader::new(ReadAt {
            file: self.0.try_clone()?,
            at: start,
        }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let mut buf = vec![0u8; length];
        read_exact_at(&self.0, &mut buf, start)?;
        Ok(buf.into())
    }
}

/// Reads a file from an offset of its own.
pub(super) struct ReadAt {
    file: File,
    at: u64,
}

impl std::io::Read for ReadAt {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = read_at(&self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, at) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                at += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
            rating: RatingSums::default(),
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
