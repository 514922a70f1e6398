//! Sorted runs on disk, for tallies larger than the memory budget, and their k-way merge
//! (a [`KeyedMerge`]).
//!
//! A run is a temporary file of fixed-size little-endian records sorted by key. It has no name:
//! it is created unlinked (`O_TMPFILE` on Linux, else created and removed at once), so that it
//! is gone when the build ends, however it ends — even killed with `kill -9`, the system frees
//! it with the process. Nothing is ever left in `--temp-dir`.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::marker::PhantomData;
use std::path::Path;

use byteorder::{ByteOrder, LittleEndian};

use super::BuildError;
use super::count_table::{Counts, PARTITIONS, Tallied, Tally, WideCounts};
use super::keyed_merge::KeyedMerge;

/// A record's key, move and first appearance; its counts follow (`W::BYTES`).
const HEAD: usize = 8 + 2 + 8;
/// Room for the widest record.
const MAX_RECORD: usize = 128;

/// A run on disk, ready to be read from its start.
pub struct Run(File);

/// Writes one run, record by record, in key order.
pub struct RunWriter {
    out: BufWriter<File>,
}

impl RunWriter {
    /// A new run, an unnamed file in `dir`.
    pub fn create(dir: &Path) -> io::Result<RunWriter> {
        let out = BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(dir)?);
        Ok(RunWriter { out })
    }

    pub fn write<W: WideCounts>(&mut self, t: &Tallied<W>) -> io::Result<()> {
        let mut buf = [0u8; MAX_RECORD];
        LittleEndian::write_u64(&mut buf[0..8], t.key);
        LittleEndian::write_u16(&mut buf[8..10], t.mv);
        LittleEndian::write_u64(&mut buf[10..18], t.first);
        t.counts.write(&mut buf[HEAD..HEAD + W::BYTES]);
        self.out.write_all(&buf[..HEAD + W::BYTES])
    }

    /// Flushes the run and returns it, to be read.
    pub fn finish(self) -> io::Result<Run> {
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        Ok(Run(file))
    }
}

/// Reads a run of `W` records back, record by record.
struct RunReader<W> {
    input: BufReader<File>,
    counts: PhantomData<W>,
}

impl<W> RunReader<W> {
    fn new(run: Run) -> RunReader<W> {
        RunReader {
            input: BufReader::with_capacity(1 << 18, run.0),
            counts: PhantomData,
        }
    }
}

impl<W: WideCounts> Iterator for RunReader<W> {
    type Item = io::Result<Tallied<W>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = [0u8; MAX_RECORD];
        let buf = &mut buf[..HEAD + W::BYTES];
        match self.input.read_exact(buf) {
            Ok(()) => Some(Ok(Tallied {
                key: LittleEndian::read_u64(&buf[0..8]),
                mv: LittleEndian::read_u16(&buf[8..10]),
                first: LittleEndian::read_u64(&buf[10..18]),
                counts: W::read(&buf[HEAD..]),
            })),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Merges sorted runs and calls `each` once per position with all its moves, the counts of the
/// same move in several runs added up (first appearance: the earliest). The runs are consumed.
pub fn merge_runs<W: WideCounts>(
    runs: Vec<Run>,
    mut each: impl FnMut(&mut Vec<Tallied<W>>) -> io::Result<()>,
) -> io::Result<()> {
    let readers = runs.into_iter().map(RunReader::<W>::new);
    let mut merge = KeyedMerge::new(readers, |t: &Tallied<W>| t.key)?;
    let mut records = Vec::new();
    let mut group: Vec<Tallied<W>> = Vec::new();
    while merge.next_group(&mut records)?.is_some() {
        group.clear();
        for h in records.drain(..) {
            match group.iter_mut().find(|g| g.mv == h.mv) {
                Some(g) => {
                    g.counts.merge(&h.counts);
                    g.first = g.first.min(h.first);
                }
                None => group.push(h),
            }
        }
        each(&mut group)?;
    }
    Ok(())
}

/// Runs merged at once (each holds a file open and a read buffer).
const MAX_FAN_IN: usize = 64;

/// An I/O error on a temporary file in `dir`, as the build reports it.
fn temp_error(dir: &Path) -> impl Fn(io::Error) -> BuildError + '_ {
    move |e| BuildError::Temp {
        dir: dir.display().to_string(),
        why: crate::text::reason(&e),
    }
}

/// Merges runs (of `W` records) in groups until at most [`MAX_FAN_IN`] are left, so that the
/// last merge never holds more files open than the system allows.
pub fn reduce_runs<W: WideCounts>(mut runs: Vec<Run>, dir: &Path) -> Result<Vec<Run>, BuildError> {
    let temp_err = temp_error(dir);
    while runs.len() > MAX_FAN_IN {
        let mut merged = Vec::new();
        let mut rest = runs.into_iter();
        loop {
            let group: Vec<Run> = rest.by_ref().take(MAX_FAN_IN).collect();
            if group.is_empty() {
                break;
            }
            let mut out = RunWriter::create(dir).map_err(&temp_err)?;
            merge_runs::<W>(group, |records| {
                records.iter().try_for_each(|r| out.write(r))
            })
            .map_err(&temp_err)?;
            merged.push(out.finish().map_err(&temp_err)?);
        }
        runs = merged;
    }
    Ok(runs)
}

/// Writes every partition of `tally` as one sorted run (an unnamed file in `dir`) of its wide
/// counts (`C::Wide`) and empties it.
pub fn spill_tally<C: Counts>(
    tally: &mut Tally<C>,
    seq: u64,
    dir: &Path,
) -> Result<Run, BuildError> {
    let temp_err = temp_error(dir);
    let mut run = RunWriter::create(dir).map_err(&temp_err)?;
    for p in 0..PARTITIONS {
        for rec in tally.drain_partition(p, seq) {
            let wide = Tallied {
                key: rec.key,
                mv: rec.mv,
                first: rec.first,
                counts: rec.counts.widen(),
            };
            run.write(&wide).map_err(&temp_err)?;
        }
    }
    run.finish().map_err(&temp_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::count_table::ExactCounts;

    fn rec(key: u64, mv: u16, first: u64, n: u64) -> Tallied<ExactCounts> {
        Tallied {
            key,
            mv,
            first,
            counts: ExactCounts {
                n,
                points: n,
                wins: 0,
            },
        }
    }

    #[test]
    fn runs_merge_by_key_and_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = RunWriter::create(dir.path()).unwrap();
        for r in [rec(1, 5, 0, 1), rec(3, 5, 0, 2), rec(3, 6, 1, 1)] {
            a.write(&r).unwrap();
        }
        let mut b = RunWriter::create(dir.path()).unwrap();
        for r in [
            rec(2, 5, 1 << 16, 1),
            rec(3, 6, 1 << 16, 4),
            rec(9, 1, 1 << 16, 1),
        ] {
            b.write(&r).unwrap();
        }
        let runs = vec![a.finish().unwrap(), b.finish().unwrap()];
        // The runs have no names: nothing is in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut seen = Vec::new();
        merge_runs::<ExactCounts>(runs, |g| {
            g.sort_by_key(|t| t.mv);
            seen.push(
                g.iter()
                    .map(|t| (t.key, t.mv, t.counts.n, t.first))
                    .collect::<Vec<_>>(),
            );
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                vec![(1, 5, 1, 0)],
                vec![(2, 5, 1, 1 << 16)],
                vec![(3, 5, 2, 0), (3, 6, 5, 1)],
                vec![(9, 1, 1, 1 << 16)],
            ]
        );
    }
}
