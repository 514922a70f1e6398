//! Reading a book: the whole file read into memory once, then a search by key.
//!
//! Books in the wild are not always sorted (a tool that appended entries to a sorted book, two
//! swapped entries). Such a book is still read whole: the longest run of entries in key order is
//! searched directly, and the few entries outside it through a small index sorted by key, so that
//! a probe finds every entry stored under a key wherever it stands, in stored order.

use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use byteorder::{BigEndian, ByteOrder};
use shakmaty::{Move, Position};

use super::formats::detect_file;
use super::scored::is_mark;
use super::{BookError, BookFormat, ENTRY_SIZE, Entry, Key, LearnLayout, MoveScore};

/// An open Polyglot book.
///
/// The file is read into memory when it is opened (books are at most a few hundred MB): a file
/// that another process truncates or rewrites afterwards cannot change the answers or crash the
/// reader, as a memory map would (SIGBUS). A probe is an interpolation search over the keys.
pub struct Book {
    path: PathBuf,
    data: Vec<u8>,
    /// The longest run of entries in key order (the whole book when it is sorted).
    main: Range<usize>,
    /// The keys and indices of the entries outside `main`, sorted (empty when sorted): the keys
    /// are copied so that a search reads one array.
    rest: Vec<(u64, usize)>,
    disorder: Option<Disorder>,
    /// How its learn fields are to be read: ProDeo's layout when the book starts with the mark
    /// ([`super::SCORED_MARK`], which is then left out of its entries), or when a command says so.
    layout: LearnLayout,
    /// The bytes of the mark at the start of `data` (16 or 0).
    skip: usize,
    /// The format of the file (another than Polyglot's was converted into `data`).
    format: BookFormat,
}

/// How far a book is from being sorted by key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disorder {
    /// The first entry (0-based) whose key is smaller than the key before it.
    pub first: u64,
    /// The fewest entries that must move for the keys to be in order (the entries outside the
    /// longest subsequence of keys in order).
    pub out_of_order: u64,
}

impl Disorder {
    /// The one warning line for a book read in spite of its order, with the repair.
    pub fn warning(&self, path: &Path) -> String {
        format!(
            "{}: {self}; 'polybook sort {} -o sorted.bin' repairs it",
            path.display(),
            path.display()
        )
    }
}

impl std::fmt::Display for Disorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "keys not sorted from entry {} ({} entr{} out of order)",
            self.first,
            self.out_of_order,
            if self.out_of_order == 1 { "y" } else { "ies" }
        )
    }
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
    /// The entries whose move is legal in the position, in stored order (their shares:
    /// [`super::ChooseOptions::shares`]).
    pub legal: Vec<BookMove>,
    /// The entries under the key whose move is not legal there (a key collision or a broken book).
    pub illegal: Vec<Entry>,
}

impl Book {
    /// Opens a book: reads the file whole and checks that its size is a multiple of 16.
    ///
    /// A book whose keys are not sorted is read all the same (see [`Book::disorder`]): every
    /// entry is found. A file that shrinks while it is read is an error naming it.
    pub fn open(path: impl AsRef<Path>) -> Result<Book, BookError> {
        let path = path.as_ref().to_path_buf();
        let format = detect_file(&path)?;
        if format != BookFormat::Polyglot {
            return Book::open_other(path, format);
        }
        let (file, size) = open_file(&path)?;
        if !size.is_multiple_of(ENTRY_SIZE as u64) {
            // Only the start is needed to tell what the file is.
            let mut head = Vec::with_capacity(512);
            file.take(512)
                .read_to_end(&mut head)
                .map_err(|source| BookError::Io {
                    path: path.clone(),
                    source,
                })?;
            let hint = describe_non_book(&head, size);
            return Err(BookError::BadSize { path, size, hint });
        }
        let data = read_whole(&path, file, size)?;
        Book::from_parts(path, data)
    }

    /// Opens a book as [`Book::open`] does, except that a file with stray bytes after its whole
    /// entries (a truncated or padded book, not a file of another kind) is read up to them: the
    /// book of its whole entries, and how many bytes were left out (0 for a well-formed size).
    /// For `sort`, the repair.
    pub fn open_whole_entries(path: impl AsRef<Path>) -> Result<(Book, u64), BookError> {
        let path = path.as_ref().to_path_buf();
        let format = detect_file(&path)?;
        if format != BookFormat::Polyglot {
            return Ok((Book::open_other(path, format)?, 0));
        }
        let (file, size) = open_file(&path)?;
        let stray = size % ENTRY_SIZE as u64;
        if stray == 0 {
            drop(file);
            return Ok((Book::open(&path)?, 0));
        }
        let mut data = read_whole(&path, file, size)?;
        if recognise_container(&data, true)
            .or_else(|| recognise_non_book(&data))
            .is_some()
        {
            let hint = describe_non_book(&data, size);
            return Err(BookError::BadSize { path, size, hint });
        }
        data.truncate(data.len() - stray as usize);
        Ok((Book::from_parts(path, data)?, stray))
    }

    /// A book in another format than Polyglot's, converted in memory into sorted entries
    /// ([`BookFormat::convert`]).
    fn open_other(path: PathBuf, format: BookFormat) -> Result<Book, BookError> {
        let data = if format == BookFormat::Ctg {
            // Read from its three files by the reader itself.
            Vec::new()
        } else {
            let (file, size) = open_file(&path)?;
            read_whole(&path, file, size)?
        };
        let entries = format.convert(&path, &data)?;
        let mut book = Book::from_entries(path, &entries);
        book.format = format;
        book.layout = format.learn_layout();
        Ok(book)
    }

    /// A book of sorted entries, converted from another format or made in memory (`path` names it
    /// in messages).
    pub fn from_entries(path: PathBuf, entries: &[Entry]) -> Book {
        let bytes = entries.iter().flat_map(|e| e.to_bytes()).collect();
        Book::from_whole_entries(path, bytes)
    }

    /// A book held in memory (tests, books read from a pipe). `name` is used in error messages.
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: Vec<u8>) -> Result<Book, BookError> {
        Book::from_parts(name.into(), bytes)
    }

    fn from_parts(path: PathBuf, data: Vec<u8>) -> Result<Book, BookError> {
        if let Some(what) = recognise_container(&data, false) {
            return Err(BookError::NotABook { path, what });
        }
        if !data.len().is_multiple_of(ENTRY_SIZE) {
            let hint = describe_non_book(&data, data.len() as u64);
            return Err(BookError::BadSize {
                path,
                size: data.len() as u64,
                hint,
            });
        }
        Ok(Book::from_whole_entries(path, data))
    }

    /// A book of `data`, whole entries, with no check for other kinds of file.
    fn from_whole_entries(path: PathBuf, data: Vec<u8>) -> Book {
        let mut book = Book {
            path,
            data,
            main: 0..0,
            rest: Vec::new(),
            disorder: None,
            layout: LearnLayout::Polyglot,
            skip: 0,
            format: BookFormat::Polyglot,
        };
        if book.data.len() >= ENTRY_SIZE && is_mark(&Entry::from_bytes(&book.data)) {
            book.layout = LearnLayout::Scored;
            book.skip = ENTRY_SIZE;
        }
        book.index();
        book
    }

    /// Finds the runs of entries in key order: the longest is searched directly, the entries
    /// outside it get an index sorted by key. A sorted book is one run and needs no index.
    fn index(&mut self) {
        let n = self.len();
        let (mut start, mut main, mut first) = (0, 0..n, None);
        if n > 0 {
            main = 0..0;
            for i in 1..=n {
                if i == n || self.key_at(i) < self.key_at(i - 1) {
                    if i < n && first.is_none() {
                        first = Some(i);
                    }
                    if i - start > main.len() {
                        main = start..i;
                    }
                    start = i;
                }
            }
        }
        let Some(first) = first else {
            self.main = 0..n;
            return;
        };
        let mut rest: Vec<(u64, usize)> = (0..main.start)
            .chain(main.end..n)
            .map(|i| (self.key_at(i), i))
            .collect();
        rest.sort_unstable();
        let in_order = longest_run_in_order((0..n).map(|i| self.key_at(i)));
        self.main = main;
        self.rest = rest;
        self.disorder = Some(Disorder {
            first: first as u64,
            out_of_order: (n - in_order) as u64,
        });
    }

    /// `None` for a book sorted by key; else where its order breaks and how many entries are out
    /// of order. Such a book is read whole all the same; `polybook sort` repairs it.
    pub fn disorder(&self) -> Option<Disorder> {
        self.disorder
    }

    /// Whether the keys are in order (a well-formed book).
    pub fn is_sorted(&self) -> bool {
        self.disorder.is_none()
    }

    /// The book's bytes as read from its file, without the mark of a scored book.
    pub(super) fn data(&self) -> &[u8] {
        &self.data[self.skip..]
    }

    /// How the learn fields are to be read: [`LearnLayout::Scored`] for a book that starts with
    /// the mark of `polybook analyse` (or set so by [`Book::set_learn_layout`]).
    pub fn learn_layout(&self) -> LearnLayout {
        self.layout
    }

    /// Whether the book starts with the mark of a scored book.
    pub fn has_mark(&self) -> bool {
        self.skip > 0
    }

    /// Reads the learn fields in `layout` whatever the book's mark says (`--learn prodeo` for a
    /// book from ProDeo's own tool, which has no mark).
    pub fn set_learn_layout(&mut self, layout: LearnLayout) {
        self.layout = layout;
    }

    /// The score and depth of a book move when the book holds them ([`LearnLayout::Scored`] and a
    /// depth above 0).
    pub fn move_score(&self, entry: &Entry) -> Option<MoveScore> {
        match self.layout {
            LearnLayout::Scored => MoveScore::from_learn(entry.learn),
            LearnLayout::Polyglot => None,
        }
    }

    /// The format of the file it was read from (a book in another format is converted).
    pub fn format(&self) -> BookFormat {
        self.format
    }

    /// The book's file.
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

    /// Every entry in key order, entries of one key in stored order: the file order of a sorted
    /// book, and of an unsorted book the order a stable sort by key gives.
    pub fn entries_by_key(&self) -> impl Iterator<Item = Entry> + '_ {
        self.entries_by_key_indexed().map(|(_, e)| e)
    }

    /// [`Book::entries_by_key`] with each entry's index in the file.
    pub fn entries_by_key_indexed(&self) -> impl Iterator<Item = (u64, Entry)> + '_ {
        let (mut main, mut rest) = (self.main.clone().peekable(), self.rest.iter().peekable());
        std::iter::from_fn(move || {
            let next = match (main.peek(), rest.peek()) {
                (Some(&m), Some(&&r)) if r < (self.key_at(m), m) => rest.next().map(|r| r.1),
                (Some(_), _) => main.next(),
                (None, _) => rest.next().map(|r| r.1),
            };
            next.map(|i| (i as u64, self.entry(i)))
        })
    }

    /// The index of the first entry of `range` (a run in key order) whose key is not less than
    /// `key`.
    ///
    /// Zobrist keys are spread uniformly over 64 bits, so a few interpolation steps land next
    /// to the key in a large book (O(log log n) on average); a binary search finishes the job, so
    /// even a book with skewed keys costs no more than O(log n).
    fn lower_bound(&self, range: Range<usize>, key: Key) -> usize {
        // Invariant: every entry before `lo` has a smaller key; every entry from `hi` on does not.
        let (mut lo, mut hi) = (range.start, range.end);
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

    /// The entries stored under `key`, in stored order, wherever they stand in the file.
    pub fn lookup(&self, key: Key) -> impl Iterator<Item = Entry> + '_ {
        self.lookup_indexed(key).map(|(_, entry)| entry)
    }

    /// [`Book::lookup`] with each entry's index in the file.
    pub fn lookup_indexed(&self, key: Key) -> impl Iterator<Item = (usize, Entry)> + '_ {
        let main_start = self.lower_bound(self.main.clone(), key);
        let mut main = (main_start..self.main.end)
            .take_while(move |&i| self.key_at(i) == key.0)
            .peekable();
        // An unsorted book's other entries: one more (small) search.
        let rest_start = if self.rest.is_empty() {
            0
        } else {
            self.rest.partition_point(|&(k, _)| k < key.0)
        };
        let mut rest = self.rest[rest_start..]
            .iter()
            .take_while(move |&&(k, _)| k == key.0)
            .map(|&(_, i)| i)
            .peekable();
        std::iter::from_fn(move || {
            let next = match (main.peek(), rest.peek()) {
                (Some(&m), Some(&r)) if r < m => rest.next(),
                (Some(_), _) => main.next(),
                (None, _) => rest.next(),
            };
            next.map(|i| (i, self.entry(i)))
        })
    }

    /// Whether any entry has this key.
    pub fn contains(&self, key: Key) -> bool {
        self.lookup(key).next().is_some()
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
    /// `minimum_weight=0`). In a book whose keys are not sorted this finds every entry of the key;
    /// python-chess bisects the file and finds them when they lie in its sorted part and its
    /// bisection reads no entry out of order on its way.
    pub fn find_all<P: Position>(&self, pos: &P) -> Vec<BookMove> {
        self.probe(pos).legal
    }
}

/// Reads a book's `size` bytes; fewer means that the file shrank while it was read.
fn read_whole(path: &Path, file: File, size: u64) -> Result<Vec<u8>, BookError> {
    let too_large = || BookError::TooLarge {
        path: path.to_path_buf(),
        size,
    };
    let len = usize::try_from(size).map_err(|_| too_large())?;
    let mut data = Vec::new();
    data.try_reserve_exact(len).map_err(|_| too_large())?;
    file.take(size)
        .read_to_end(&mut data)
        .map_err(|source| BookError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if (data.len() as u64) < size {
        return Err(BookError::Shrunk {
            path: path.to_path_buf(),
            size,
            read: data.len() as u64,
        });
    }
    Ok(data)
}

/// The length of the longest subsequence of `keys` in order (patience sorting, O(n log n)).
fn longest_run_in_order(keys: impl Iterator<Item = u64>) -> usize {
    // tails[k]: the smallest last key of an ordered subsequence of length k + 1 seen so far.
    let mut tails: Vec<u64> = Vec::new();
    for key in keys {
        let at = tails.partition_point(|&t| t <= key);
        if at == tails.len() {
            tails.push(key);
        } else {
            tails[at] = key;
        }
    }
    tails.len()
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
    match recognise_container(data, true).or_else(|| recognise_non_book(data)) {
        Some(what) => format!(" ({what})"),
        None => {
            let stray = size % ENTRY_SIZE as u64;
            format!(
                " ({} whole entries and {stray} stray byte{}: a truncated or padded file; `polybook sort` keeps its whole entries)",
                size / ENTRY_SIZE as u64,
                if stray == 1 { "" } else { "s" }
            )
        }
    }
}

/// What a file is when its first bytes are the magic number of a compressed file or a Parquet
/// file (at least 31 bits that a real book's first key would have to match by chance). With
/// `weak`, gzip's first three bytes alone count too (when the size already shows the file is no
/// book).
pub(crate) fn recognise_container(data: &[u8], weak: bool) -> Option<&'static str> {
    // gzip: the magic, deflate, no reserved flag bits, and an operating system byte RFC 1952 names.
    let gzip = data.starts_with(&[0x1f, 0x8b, 0x08])
        && (weak || (data.len() >= 10 && data[3] & 0xe0 == 0 && (data[9] <= 13 || data[9] == 255)));
    if data.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some(
            "it is an xz-compressed file; books are not compressed: unxz it first, or build a book from the PGN inside with `polybook build`",
        )
    } else if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(
            "it is a zstd-compressed file; books are not compressed: unzstd it first, or build a book from the PGN inside with `polybook build`",
        )
    } else if data.len() >= 10 && data.starts_with(b"BZh") && data[4..10] == *b"1AY&SY" {
        Some(
            "it is a bzip2-compressed file; books are not compressed: bunzip2 it first, or build a book from the PGN inside with `polybook build`",
        )
    } else if data.starts_with(b"PAR1") {
        Some("it is a Parquet file (a tally?): make a book from a tally with `polybook book`")
    } else if gzip {
        Some(
            "it is a gzip-compressed file; books are not compressed: gunzip it first, or build a book from the PGN inside with `polybook build`",
        )
    } else {
        None
    }
}

/// What a file is when its first bytes show it is text of a known kind and not a book (a Git LFS
/// pointer, an HTML page, PGN), else `None`.
pub(crate) fn recognise_non_book(data: &[u8]) -> Option<&'static str> {
    let head = &data[..data.len().min(512)];
    // Text has no control bytes but tabs and line ends; the keys of a book's entries have many.
    if head
        .iter()
        .any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r') || b == 0x7f)
    {
        return None;
    }
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with("version https://git-lfs") {
        Some("it is a Git LFS pointer: fetch the real file with `git lfs pull`")
    } else if text.starts_with("<!doctype html")
        || text.starts_with("<html")
        || text.contains("<head")
    {
        Some("it is an HTML page, probably saved from a browser instead of downloading the file")
    } else if text.starts_with('[') && text.contains('"') {
        Some("it looks like PGN: build a book from it with `polybook build`")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: u64, mv: &str, weight: u16) -> Entry {
        Entry::from_uci(Key(key), mv, weight).unwrap()
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
            assert_eq!(b.lower_bound(0..b.len(), Key(p)), expected, "key {p:x}");
        }
    }

    #[test]
    fn empty_books_and_bad_sizes() {
        assert!(Book::from_bytes("empty.bin", vec![]).unwrap().is_empty());
        let err = Book::from_bytes("odd.bin", vec![0; 17])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("17 bytes"), "{err}");
    }

    /// Every key's entries, in file order, by a linear scan: what a probe must find.
    fn scan(entries: &[Entry], key: u64) -> Vec<Entry> {
        entries.iter().filter(|e| e.key.0 == key).copied().collect()
    }

    #[test]
    fn unsorted_books_are_read_whole() {
        // A sorted book, then the same with a short unsorted tail, two swapped entries, a
        // reversed book and a book of random keys: every lookup finds what a scan finds.
        let sorted: Vec<Entry> = (0..3000u64)
            .map(|i| {
                entry(
                    (i / 3).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1,
                    "e2e4",
                    (i % 3) as u16,
                )
            })
            .collect::<Vec<_>>();
        let mut sorted = sorted;
        sorted.sort_by_key(|e| e.key);
        let mut tail = sorted.clone();
        let moved: Vec<Entry> = [10, 1500, 2990].iter().map(|&i| tail[i]).collect();
        for i in [2990, 1500, 10] {
            tail.remove(i);
        }
        tail.extend(moved);
        let mut swapped = sorted.clone();
        swapped.swap(100, 2000);
        let reversed: Vec<Entry> = sorted.iter().rev().copied().collect();
        let random: Vec<Entry> = (0..2000u64)
            .map(|i| {
                entry(
                    i.wrapping_mul(0xd1b5_4a32_d192_ed03) % 500,
                    "d2d4",
                    i as u16,
                )
            })
            .collect();
        let cases = [
            (&sorted, None),
            (&tail, Some((2997, 3))),
            (&swapped, Some((101, 2))),
            // Keys come three by three: the reversed book has runs of three equal keys.
            (&reversed, Some((3, 2997))),
        ];
        for (entries, disorder) in cases {
            let b = book(entries);
            assert_eq!(b.disorder().map(|d| (d.first, d.out_of_order)), disorder);
            for e in entries.iter().chain(&random) {
                for key in [e.key.0, e.key.0 + 1] {
                    assert_eq!(b.lookup(Key(key)).collect::<Vec<_>>(), scan(entries, key));
                }
            }
            let mut by_key = entries.to_vec();
            by_key.sort_by_key(|e| e.key);
            assert_eq!(b.entries_by_key().collect::<Vec<_>>(), by_key);
        }
        let b = book(&random);
        for key in 0..501 {
            assert_eq!(b.lookup(Key(key)).collect::<Vec<_>>(), scan(&random, key));
        }
        let mut by_key = random.clone();
        by_key.sort_by_key(|e| e.key);
        assert_eq!(b.entries_by_key().collect::<Vec<_>>(), by_key);
    }

    /// Seeded random books, sorted, with tails, swaps or in any order: every lookup finds what a
    /// scan finds, the order in key order is a stable sort's, and the count of entries out of
    /// order is the fewest that must move (checked against a quadratic longest-subsequence count).
    #[test]
    fn random_books_read_like_a_scan() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n.max(1)
        };
        for round in 0..300 {
            let len = next(200) as usize;
            let range = 1 + next(400);
            let mut entries: Vec<Entry> = (0..len)
                .map(|i| entry(next(range), "e2e4", i as u16))
                .collect();
            match round % 4 {
                0 => entries.sort_by_key(|e| e.key),
                1 => {
                    entries.sort_by_key(|e| e.key);
                    let cut = len.saturating_sub(next(5) as usize);
                    entries[cut..].reverse();
                }
                2 => {
                    entries.sort_by_key(|e| e.key);
                    for _ in 0..next(3) {
                        if len > 1 {
                            entries.swap(next(len as u64) as usize, next(len as u64) as usize);
                        }
                    }
                }
                _ => {}
            }
            let b = book(&entries);
            for key in 0..=range {
                assert_eq!(b.lookup(Key(key)).collect::<Vec<_>>(), scan(&entries, key));
            }
            let mut by_key = entries.clone();
            by_key.sort_by_key(|e| e.key);
            assert_eq!(b.entries_by_key().collect::<Vec<_>>(), by_key);
            // The longest subsequence in key order, the slow way.
            let mut best = vec![1usize; len];
            for i in 0..len {
                for j in 0..i {
                    if entries[j].key <= entries[i].key {
                        best[i] = best[i].max(best[j] + 1);
                    }
                }
            }
            let in_order = best.iter().max().copied().unwrap_or(0);
            assert_eq!(
                b.disorder().map_or(0, |d| d.out_of_order),
                (len - in_order) as u64
            );
            assert_eq!(
                b.disorder().map(|d| d.first as usize),
                (1..len).find(|&i| entries[i].key < entries[i - 1].key)
            );
        }
    }

    #[test]
    fn text_files_are_recognised_and_binary_ones_are_not() {
        assert!(recognise_non_book(b"[Event \"x\"]\n[Site \"y\"]\n").is_some());
        assert!(recognise_non_book(b"<!DOCTYPE html>\n<html>").is_some());
        // A book whose first key starts with '[' and holds a '"' is still a book.
        let e = entry(0x5b22_0000_0000_0001, "e2e4", 0x2222);
        assert_eq!(recognise_non_book(&e.to_bytes()), None);
    }

    #[test]
    fn a_file_that_shrinks_while_it_is_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.bin");
        std::fs::write(&path, [0u8; 64]).unwrap();
        let file = File::open(&path).unwrap();
        // The size was taken as 96 bytes; the file holds 64 when it is read.
        let err = read_whole(&path, file, 96).err().unwrap().to_string();
        assert!(
            err.contains("book.bin") && err.contains("shrank") && err.contains("96"),
            "{err}"
        );
    }
}
