//! The tally writer: pairs in key order to a Parquet file, row group by row group, the column
//! chunks encoded and compressed on worker threads.

use std::collections::VecDeque;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;

use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::column::writer::{ColumnCloseResult, get_column_writer, get_typed_column_writer};
use parquet::data_type::{BoolType, DataType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::{ColumnDescPtr, ColumnPath, SchemaDescPtr, SchemaDescriptor};

use super::TallyError;
use super::schema::{GAMES, MARK, OPTIONS, RATINGS, TallyMeta, schema, stored_key};
use crate::atomic::AtomicFile;
use crate::builder::{PairColumns, PairCount};
use crate::text::quote_path;

/// Rows per row group: a probe reads the one or two groups whose key range holds its key.
pub(super) const ROW_GROUP: usize = 1 << 16;

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
    /// It writes the [`RATING_COLUMNS`](super::RATING_COLUMNS).
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

    /// A new tally at `path`, with the [`RATING_COLUMNS`](super::RATING_COLUMNS) if `rated`
    /// (the pairs' ratings).
    pub fn create_with(path: &Path, rated: bool) -> Result<TallyWriter, TallyError> {
        let write_err = write_error(path);
        let file = AtomicFile::create(path).map_err(|e| write_err(crate::text::reason(&e)))?;
        let schema =
            Arc::new(parse_message_type(&schema(rated)).map_err(|e| write_err(e.to_string()))?);
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
        let threads = crate::cores::cores().min(4);
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
        file.commit(fsync)
            .map_err(|e| write_err(crate::text::reason(&e)))?;
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
