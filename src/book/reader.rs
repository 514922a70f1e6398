//! Reading a book: a memory-mapped file, binary search by key.

use std::fs::File;
use std::path::{Path, PathBuf};

use byteorder::{BigEndian, ByteOrder};
use memmap2::Mmap;
use shakmaty::{Move, Position};

use super::{BookError, ENTRY_SIZE, Entry, Key};

/// An open Polyglot book.
///
/// The file is memory-mapped, so opening costs nothing however large the book is, and a probe is
/// a binary search over the keys: O(log n) page touches.
pub struct Book {
    path: PathBuf,
    bytes: Bytes,
}

enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

/// A book entry whose move is legal in the probed position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BookMove {
    pub entry: Entry,
    /// The move as shakmaty knows it (castling as `Move::Castle`).
    pub mv: Move,
}

/// Everything a book holds for one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub key: Key,
    /// The entries whose move is legal in the position, in stored order.
    pub legal: Vec<BookMove>,
    /// The entries under the key whose move is not legal there (a key collision or a broken book).
    pub illegal: Vec<Entry>,
}

impl Probe {
    /// The sum of the legal entries' weights.
    pub fn total_weight(&self) -> u64 {
        self.legal.iter().map(|m| u64::from(m.entry.weight)).sum()
    }
}

impl Book {
    /// Opens a book and checks that it is one: its size is a multiple of 16 and its keys are sorted.
    pub fn open(path: impl AsRef<Path>) -> Result<Book, BookError> {
        let book = Book::open_unchecked(path)?;
        book.check_sorted()?;
        Ok(book)
    }

    /// Opens a book checking only its size (for `verify`, which reports every problem itself).
    pub fn open_unchecked(path: impl AsRef<Path>) -> Result<Book, BookError> {
        let path = path.as_ref().to_path_buf();
        let (file, size) = open_file(&path)?;
        let io_err = |source| BookError::Io {
            path: path.clone(),
            source,
        };
        let bytes = if size == 0 {
            Bytes::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only; a book changed under a running probe gives wrong answers,
            // not undefined behaviour in this process beyond what reading a file while it is rewritten gives.
            Bytes::Mapped(unsafe { Mmap::map(&file) }.map_err(io_err)?)
        };
        Book::from_parts(path, bytes)
    }

    /// A book held in memory (tests, books read from a pipe). `name` is used in error messages.
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: Vec<u8>) -> Result<Book, BookError> {
        let book = Book::from_parts(name.into(), Bytes::Owned(bytes))?;
        book.check_sorted()?;
        Ok(book)
    }

    fn from_parts(path: PathBuf, bytes: Bytes) -> Result<Book, BookError> {
        let data: &[u8] = match &bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        };
        if !data.len().is_multiple_of(ENTRY_SIZE) {
            let hint = describe_non_book(data, data.len() as u64);
            return Err(BookError::BadSize {
                path,
                size: data.len() as u64,
                hint,
            });
        }
        Ok(Book { path, bytes })
    }

    fn data(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }

    /// The index of the first entry whose key is not sorted, if any.
    pub fn first_unsorted(&self) -> Option<usize> {
        let data = self.data();
        let mut prev = 0u64;
        for (i, record) in data.chunks_exact(ENTRY_SIZE).enumerate() {
            let key = BigEndian::read_u64(record);
            if key < prev {
                return Some(i);
            }
            prev = key;
        }
        None
    }

    fn check_sorted(&self) -> Result<(), BookError> {
        match self.first_unsorted() {
            None => Ok(()),
            Some(index) => Err(BookError::Unsorted {
                path: self.path.clone(),
                index: index as u64,
                key: self.key_at(index),
            }),
        }
    }

    /// The path the book was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.data().len() / ENTRY_SIZE
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key_at(&self, index: usize) -> u64 {
        BigEndian::read_u64(&self.data()[index * ENTRY_SIZE..])
    }

    /// The entry at `index` (0-based).
    ///
    /// # Panics
    /// If `index >= self.len()`.
    pub fn entry(&self, index: usize) -> Entry {
        Entry::from_bytes(&self.data()[index * ENTRY_SIZE..(index + 1) * ENTRY_SIZE])
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = Entry> + '_ {
        self.data().chunks_exact(ENTRY_SIZE).map(Entry::from_bytes)
    }

    /// The index of the first entry whose key is not less than `key`.
    ///
    /// Zobrist keys are spread uniformly over 64 bits, so a few interpolation steps land next
    /// to the key in a large book (O(log log n) on average); a binary search finishes the job, so
    /// even a book with skewed keys costs no more than O(log n).
    pub fn lower_bound(&self, key: Key) -> usize {
        // Invariant: every entry before `lo` has a smaller key; every entry from `hi` on does not.
        let (mut lo, mut hi) = (0, self.len());
        for _ in 0..3 {
            if hi - lo < 64 {
                break;
            }
            let (first, last) = (self.key_at(lo), self.key_at(hi - 1));
            if key.0 <= first {
                return lo;
            }
            if key.0 > last {
                return hi;
            }
            // Guess where the key would stand, then bracket it with a small window around the guess.
            let span = (hi - 1 - lo) as u128;
            let guess =
                lo + ((u128::from(key.0 - first) * span) / u128::from(last - first)) as usize;
            let window = ((hi - lo) as f64).sqrt() as usize + 1;
            let below = guess.saturating_sub(window).max(lo);
            let above = (guess + window).min(hi - 1);
            if self.key_at(below) < key.0 {
                lo = below + 1;
            }
            if self.key_at(above) >= key.0 {
                hi = above;
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key_at(mid) < key.0 {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The entries stored under `key`, in stored order.
    pub fn lookup(&self, key: Key) -> impl Iterator<Item = Entry> + '_ {
        let start = self.lower_bound(key);
        (start..self.len()).map_while(move |i| (self.key_at(i) == key.0).then(|| self.entry(i)))
    }

    /// Whether any entry has this key.
    pub fn contains(&self, key: Key) -> bool {
        let i = self.lower_bound(key);
        i < self.len() && self.key_at(i) == key.0
    }

    /// Everything the book holds for `pos`: its legal entries and the rest.
    pub fn probe<P: Position>(&self, pos: &P) -> Probe {
        let key = Key::of(pos);
        let mut probe = Probe {
            key,
            legal: Vec::new(),
            illegal: Vec::new(),
        };
        for entry in self.lookup(key) {
            match entry.mv.to_move(pos) {
                Some(mv) => probe.legal.push(BookMove { entry, mv }),
                None => probe.illegal.push(entry),
            }
        }
        probe
    }

    /// The entries whose move is legal in `pos`, in stored order (python-chess's `find_all` with
    /// `minimum_weight=0`).
    pub fn find_all<P: Position>(&self, pos: &P) -> Vec<BookMove> {
        self.probe(pos).legal
    }
}

/// Opens a book file for reading and tells its size; a directory or an unreadable file is an error
/// naming the path.
pub(crate) fn open_file(path: &Path) -> Result<(File, u64), BookError> {
    let io_err = |source| BookError::Io {
        path: path.to_path_buf(),
        source,
    };
    if path.is_dir() {
        return Err(BookError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    let file = File::open(path).map_err(io_err)?;
    let size = file.metadata().map_err(io_err)?.len();
    Ok((file, size))
}

/// A guess at what a file that is not a book is, for the error message, from its first bytes and
/// its size.
pub(crate) fn describe_non_book(data: &[u8], size: u64) -> String {
    let stray = size % ENTRY_SIZE as u64;
    let head = &data[..data.len().min(512)];
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with("version https://git-lfs") {
        " (it is a Git LFS pointer: fetch the real file with `git lfs pull`)".to_string()
    } else if text.starts_with("<!doctype html")
        || text.starts_with("<html")
        || text.contains("<head")
    {
        " (it is an HTML page, probably saved from a browser instead of downloading the file)"
            .to_string()
    } else if text.starts_with('[') && text.contains('"') {
        " (it looks like PGN: build a book from it with `polybook build`)".to_string()
    } else {
        format!(
            " ({} whole entries and {stray} stray byte{}: a truncated or padded file)",
            size / ENTRY_SIZE as u64,
            if stray == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::RawMove;

    fn entry(key: u64, mv: &str, weight: u16) -> Entry {
        Entry {
            key: Key(key),
            mv: RawMove::from_uci_str(mv).unwrap(),
            weight,
            learn: 0,
        }
    }

    fn book(entries: &[Entry]) -> Book {
        let bytes = entries.iter().flat_map(|e| e.to_bytes()).collect();
        Book::from_bytes("test.bin", bytes).unwrap()
    }

    #[test]
    fn lookup_finds_every_entry_of_a_key() {
        let b = book(&[
            entry(1, "e2e4", 5),
            entry(3, "d2d4", 9),
            entry(3, "c2c4", 2),
            entry(7, "g1f3", 1),
        ]);
        assert_eq!(
            b.lookup(Key(3)).map(|e| e.weight).collect::<Vec<_>>(),
            vec![9, 2]
        );
        assert_eq!(b.lookup(Key(2)).count(), 0);
        assert_eq!(b.lookup(Key(8)).count(), 0);
        assert!(b.contains(Key(7)) && !b.contains(Key(0)));
    }

    #[test]
    fn lower_bound_agrees_with_a_linear_scan() {
        // Uniform keys, clustered keys and runs of equal keys, probed everywhere in between.
        let mut keys: Vec<u64> = (0..5000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        keys.extend((0..3000u64).map(|i| i / 7));
        keys.extend((0..2000u64).map(|i| u64::MAX - i * i));
        keys.sort();
        let b = book(
            &keys
                .iter()
                .map(|&k| entry(k, "e2e4", 1))
                .collect::<Vec<_>>(),
        );
        let mut probes: Vec<u64> = keys
            .iter()
            .flat_map(|&k| [k, k.wrapping_add(1), k.wrapping_sub(1)])
            .collect();
        probes.extend([0, 1, u64::MAX]);
        for p in probes {
            let expected = keys.iter().position(|&k| k >= p).unwrap_or(keys.len());
            assert_eq!(b.lower_bound(Key(p)), expected, "key {p:x}");
        }
    }

    #[test]
    fn empty_and_unsorted_books() {
        assert!(Book::from_bytes("empty.bin", vec![]).unwrap().is_empty());
        let bytes = [entry(3, "e2e4", 1), entry(1, "e2e4", 1)]
            .iter()
            .flat_map(|e| e.to_bytes())
            .collect();
        let err = Book::from_bytes("bad.bin", bytes)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("bad.bin") && err.contains("not sorted") && err.contains("entry 1"),
            "{err}"
        );
        let err = Book::from_bytes("odd.bin", vec![0; 17])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("17 bytes"), "{err}");
    }
}
