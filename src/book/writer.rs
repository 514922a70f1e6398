//! Writing a book atomically ([`crate::atomic`]): to a temporary file in the target's folder, then
//! a rename, so that the target path holds either the old file or the complete new book, never
//! half a book.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::atomic::AtomicFile;

use super::{BookError, ENTRY_SIZE, Entry, LearnLayout, SCORED_MARK};

/// Sorts entries the way Polyglot books are sorted: key ascending, then weight descending; entries
/// equal in both keep their order (the sort is stable).
pub fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by(|a, b| a.key.cmp(&b.key).then(b.weight.cmp(&a.weight)));
}

/// Sorts `entries` and writes them as a book at `path`, atomically.
pub fn write_book(path: impl AsRef<Path>, entries: &mut [Entry]) -> Result<(), BookError> {
    write_book_in(path, entries, LearnLayout::Polyglot)
}

/// Sorts `entries` and writes them as a book at `path`, atomically, with the mark of a scored
/// book first when `layout` is [`LearnLayout::Scored`] (so that a command that rewrites a scored
/// book keeps it readable as one).
pub fn write_book_in(
    path: impl AsRef<Path>,
    entries: &mut [Entry],
    layout: LearnLayout,
) -> Result<(), BookError> {
    sort_entries(entries);
    let mut writer = BookWriter::create_in(path, layout)?;
    for entry in entries.iter() {
        writer.write(entry)?;
    }
    writer.finish()
}

/// Streams entries, already in book order, into a new book that appears at its path only when
/// [`BookWriter::finish`] succeeds. Dropped without `finish`, it leaves the target untouched and
/// removes its temporary file.
pub struct BookWriter {
    path: PathBuf,
    out: BufWriter<AtomicFile>,
    count: u64,
    /// Wait for the disk before the rename (see [`BookWriter::sync`]).
    sync: bool,
}

impl BookWriter {
    pub fn create(path: impl AsRef<Path>) -> Result<BookWriter, BookError> {
        let path = path.as_ref().to_path_buf();
        if path.is_dir() {
            return Err(BookError::IsDirectory { path });
        }
        let tmp = AtomicFile::create(&path).map_err(|source| BookError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(BookWriter {
            path,
            out: BufWriter::with_capacity(1 << 16, tmp),
            count: 0,
            sync: true,
        })
    }

    /// [`BookWriter::create`], then the mark of a scored book ([`SCORED_MARK`]) when `layout` is
    /// [`LearnLayout::Scored`]. The mark is not counted in [`BookWriter::count`].
    pub fn create_in(path: impl AsRef<Path>, layout: LearnLayout) -> Result<BookWriter, BookError> {
        let mut writer = BookWriter::create(path)?;
        if layout == LearnLayout::Scored {
            writer.write(&SCORED_MARK)?;
            writer.count = 0;
        }
        Ok(writer)
    }

    /// Whether [`BookWriter::finish`] waits for the data to reach the disk before the rename
    /// (the default). Without it the book is still never seen half-written, since it appears
    /// only by the rename, but a power cut soon after could lose it; a book build, which can be
    /// run again, skips the wait unless asked (`polybook build --fsync`).
    pub fn sync(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    /// Appends one entry.
    pub fn write(&mut self, entry: &Entry) -> Result<(), BookError> {
        self.count += 1;
        self.out
            .write_all(&entry.to_bytes())
            .map_err(|source| BookError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Appends `count` entries already in the book's byte format ([`Entry::to_bytes`], in book
    /// order), e.g. encoded on other threads.
    pub fn write_encoded(&mut self, bytes: &[u8], count: u64) -> Result<(), BookError> {
        debug_assert_eq!(bytes.len() as u64, count * ENTRY_SIZE as u64);
        self.count += count;
        self.out
            .write_all(bytes)
            .map_err(|source| BookError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// How many entries have been written.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Flushes, syncs (see [`BookWriter::sync`]) and renames the temporary file onto the target
    /// path.
    pub fn finish(self) -> Result<(), BookError> {
        let path = self.path;
        let io_err = |source| BookError::Write {
            path: path.clone(),
            source,
        };
        let tmp = self.out.into_inner().map_err(|e| io_err(e.into_error()))?;
        tmp.commit(self.sync).map_err(io_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::{Book, Key, RawMove};

    #[test]
    fn writes_sorted_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        let e = |key, weight| Entry {
            key: Key(key),
            mv: RawMove(weight),
            weight,
            learn: 0,
        };
        let mut entries = vec![e(5, 1), e(2, 3), e(5, 9), e(2, 3), e(1, 0)];
        write_book(&path, &mut entries).unwrap();
        let book = Book::open(&path).unwrap();
        let got: Vec<(u64, u16)> = book.entries().map(|e| (e.key.0, e.weight)).collect();
        assert_eq!(got, vec![(1, 0), (2, 3), (2, 3), (5, 9), (5, 1)]);
        // Only the book is left in the folder: no temporary file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_unfinished_writer_leaves_the_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        std::fs::write(&path, b"old").unwrap();
        let mut w = BookWriter::create(&path).unwrap();
        w.write(&Entry::default()).unwrap();
        drop(w);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
