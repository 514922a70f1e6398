//! Checking that a file is a well-formed Polyglot book, and listing every problem if it is not.
//!
//! The file is read as a stream of 16-byte records (any size, never all in memory), so a broken
//! file is still examined entry by entry up to its stray bytes, unless it is recognised as
//! something else (a web page, a Git LFS pointer, PGN): then that is the one finding.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::book::{
    Book, BookError, BookFormat, ENTRY_SIZE, Entry, Key, RawMove, describe_non_book, detect_format,
    open_file, recognise_container, recognise_non_book,
};

/// The kinds of problem `verify` looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// The file's size is not a multiple of 16.
    Size,
    /// An entry's key is smaller than the key before it.
    Unsorted,
    /// The same key and move appear in two entries.
    Duplicate,
    /// A move code that no move in any position has.
    ImpossibleMove,
}

impl ProblemKind {
    pub const ALL: [ProblemKind; 4] = [
        ProblemKind::Size,
        ProblemKind::Unsorted,
        ProblemKind::Duplicate,
        ProblemKind::ImpossibleMove,
    ];

    fn index(self) -> usize {
        match self {
            ProblemKind::Size => 0,
            ProblemKind::Unsorted => 1,
            ProblemKind::Duplicate => 2,
            ProblemKind::ImpossibleMove => 3,
        }
    }

    /// A name for summaries: "size", "unsorted keys", …
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::Size => "size",
            ProblemKind::Unsorted => "unsorted keys",
            ProblemKind::Duplicate => "duplicate key and move",
            ProblemKind::ImpossibleMove => "impossible move codes",
        }
    }
}

/// One problem: what and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    /// The entry's index (0-based), if the problem is in an entry.
    pub index: Option<u64>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "entry {i}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// What `verify` found.
#[derive(Clone, Debug)]
pub struct VerifyReport {
    pub path: PathBuf,
    pub size: u64,
    /// Whole entries read.
    pub entries: u64,
    /// Distinct keys among adjacent entries (the positions of a sorted book).
    pub positions: u64,
    /// Entries whose move is 0, polyglot's "no move" (not a problem: readers skip them).
    pub no_moves: u64,
    /// The first problems of each kind, in file order within a kind (at most `limit` of each).
    pub problems: Vec<Problem>,
    /// What the file is when it is recognised as something other than a book (then its size is
    /// the one problem reported).
    pub not_a_book: Option<&'static str>,
    /// Whether the book starts with the mark of a scored book (`polybook analyse`: scores and
    /// depths in the learn fields), which is not counted among its entries.
    pub scored: bool,
    /// The file's format: a book in another format than Polyglot's is checked by reading it
    /// whole into Polyglot entries (its reader refuses a damaged one with the reason), and the
    /// entries are then sorted and unique by construction.
    pub format: BookFormat,
    counts: [u64; 4],
}

impl VerifyReport {
    /// Whether the book is well formed: no problem of any kind.
    pub fn is_ok(&self) -> bool {
        self.not_a_book.is_none() && self.counts.iter().all(|&c| c == 0)
    }

    /// How many problems of a kind were found (listed or not).
    pub fn count(&self, kind: ProblemKind) -> u64 {
        self.counts[kind.index()]
    }

    fn add(&mut self, limit: usize, kind: ProblemKind, index: Option<u64>, message: String) {
        let count = &mut self.counts[kind.index()];
        *count += 1;
        if *count <= limit as u64 {
            self.problems.push(Problem {
                kind,
                index,
                message,
            });
        }
    }
}

/// Why a move code can be no move at all, if it cannot (see [`RawMove::impossibility`]).
pub fn impossible_move(mv: RawMove) -> Option<String> {
    mv.impossibility()
}

/// Reads as many bytes as there are up to `buf.len()`.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Checks the book at `path`, listing at most `limit` problems of each kind (all are counted).
///
/// A missing or unreadable file or a directory is an error; everything wrong with the contents is
/// in the report.
pub fn verify(path: impl AsRef<Path>, limit: usize) -> Result<VerifyReport, BookError> {
    let path = path.as_ref().to_path_buf();
    let format = detect_format(&path)?;
    if format != BookFormat::Polyglot {
        return verify_other(path, format);
    }
    let (file, size) = open_file(&path)?;
    let io_err = |source| BookError::Io {
        path: path.clone(),
        source,
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut report = VerifyReport {
        path: path.clone(),
        size,
        entries: 0,
        positions: 0,
        no_moves: 0,
        problems: Vec::new(),
        not_a_book: None,
        scored: false,
        format: BookFormat::Polyglot,
        counts: [0; 4],
    };
    let mut head = Vec::new();
    let mut previous: Option<Key> = None;
    // The moves of the current run of equal keys, with the entry each was first seen in.
    let mut run: HashMap<RawMove, u64> = HashMap::new();
    let mut record = [0u8; ENTRY_SIZE];
    loop {
        let n = read_full(&mut reader, &mut record).map_err(io_err)?;
        if head.len() < 512 {
            head.extend_from_slice(&record[..n]);
        }
        if n < ENTRY_SIZE {
            break;
        }
        let e = Entry::from_bytes(&record);
        if report.entries == 0 && !report.scored && e == crate::book::SCORED_MARK {
            report.scored = true;
            continue;
        }
        let index = report.entries;
        report.entries += 1;
        match previous {
            Some(p) if p == e.key => {}
            _ => {
                report.positions += 1;
                run.clear();
            }
        }
        if let Some(p) = previous
            && e.key < p
        {
            report.add(
                limit,
                ProblemKind::Unsorted,
                Some(index),
                format!(
                    "key {} is smaller than the key of entry {} ({p}): the book is not sorted",
                    e.key,
                    index - 1
                ),
            );
        }
        if let Some(first) = run.insert(e.mv, index) {
            run.insert(e.mv, first);
            report.add(
                limit,
                ProblemKind::Duplicate,
                Some(index),
                format!("key {} and move {} repeat entry {first}", e.key, e.mv),
            );
        }
        if e.mv.0 == 0 {
            report.no_moves += 1;
        }
        if let Some(why) = impossible_move(e.mv) {
            report.add(
                limit,
                ProblemKind::ImpossibleMove,
                Some(index),
                format!("key {}: {why}", e.key),
            );
        }
        previous = Some(e.key);
    }
    if let Some(what) = recognise_container(&head, false) {
        // A compressed or Parquet file, whatever its size: its entries are noise.
        report.not_a_book = Some(what);
        report.problems.clear();
        report.counts = [0; 4];
    } else if !size.is_multiple_of(ENTRY_SIZE as u64) {
        report.not_a_book = recognise_non_book(&head);
        if report.not_a_book.is_some() {
            // A web page or an LFS pointer read as entries gives only consequences of that one
            // finding (unsorted keys, impossible moves): report the finding alone.
            report.problems.clear();
            report.counts = [0; 4];
        }
        report.add(
            limit,
            ProblemKind::Size,
            None,
            format!(
                "size {size} bytes is not a multiple of 16{}",
                describe_non_book(&head, size)
            ),
        );
    }
    // In a book whose keys are not sorted, entries that repeat need not be side by side, where
    // the stream above looks: the whole file is read to find them (an unsorted book is rare, and
    // `sort`, its repair, reads it whole too).
    if report.counts[ProblemKind::Unsorted.index()] > 0
        && report.not_a_book.is_none()
        && recognise_container(&head, false).is_none()
        && let Some((count, first)) = repeated_entries(&path, report.scored).map_err(io_err)?
        && count as u64 > report.counts[ProblemKind::Duplicate.index()]
    {
        report.add(
            limit,
            ProblemKind::Duplicate,
            Some(first.index as u64),
            format!(
                "{count} entries repeat the key and move of another, apart in the unsorted order (the first in key order: key {} and move {} repeat entry {})",
                first.key, first.mv, first.repeats
            ),
        );
        report.counts[ProblemKind::Duplicate.index()] = count as u64;
    }
    Ok(report)
}

/// An entry that repeats an earlier entry's key and move, wherever the two are in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repeat {
    /// The later entry's index (0-based, the mark of a scored book not counted).
    pub index: usize,
    pub key: Key,
    pub mv: RawMove,
    /// The earlier entry's index.
    pub repeats: usize,
}

/// The entries of the book at `path` that repeat an earlier entry's key and move, wherever they
/// are: in a book whose keys are not sorted they need not be next to each other, where [`verify`]
/// looks, yet the book written sorted would have them side by side. `scored`: the file starts with
/// the mark of a scored book ([`VerifyReport::scored`]), left out. The answer: how many entries
/// repeat one, and the first of them in key order (`None` when none does). The whole file is read
/// into memory.
pub fn repeated_entries(path: &Path, scored: bool) -> io::Result<Option<(usize, Repeat)>> {
    let bytes = std::fs::read(path)?;
    let skip = usize::from(scored);
    let mut entries: Vec<(Entry, usize)> = bytes
        .chunks_exact(ENTRY_SIZE)
        .map(Entry::from_bytes)
        .enumerate()
        .skip(skip)
        .map(|(i, e)| (e, i - skip))
        .collect();
    entries.sort_by_key(|(e, i)| (e.key, e.mv.0, *i));
    let same = |w: &&[(Entry, usize)]| w[0].0.key == w[1].0.key && w[0].0.mv == w[1].0.mv;
    let count = entries.windows(2).filter(same).count();
    Ok(entries.windows(2).find(same).map(|w| {
        (
            count,
            Repeat {
                index: w[1].1,
                key: w[1].0.key,
                mv: w[1].0.mv,
                repeats: w[0].1,
            },
        )
    }))
}

/// [`verify`] for a book in another format than Polyglot's: it is read whole, which fails with the
/// reader's reason on a damaged file; the report gives the entries it converts into.
fn verify_other(path: PathBuf, format: BookFormat) -> Result<VerifyReport, BookError> {
    let book = Book::open(&path)?;
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let entries = book.len() as u64;
    let mut keys: Vec<Key> = book.entries().map(|e| e.key).collect();
    keys.dedup();
    Ok(VerifyReport {
        path,
        size,
        entries,
        positions: keys.len() as u64,
        no_moves: 0,
        problems: Vec::new(),
        not_a_book: None,
        scored: false,
        format,
        counts: [0; 4],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(s: &str) -> RawMove {
        RawMove::from_uci_str(s).unwrap()
    }

    /// The bytes of entries given as (key, move, weight).
    fn book(entries: &[(u64, &str, u16)]) -> Vec<u8> {
        entries
            .iter()
            .flat_map(|&(key, mv, weight)| {
                Entry {
                    key: Key(key),
                    mv: code(mv),
                    weight,
                    learn: 0,
                }
                .to_bytes()
            })
            .collect()
    }

    #[test]
    fn repeats_apart_in_an_unsorted_book_are_found_where_verify_does_not_look() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("unsorted.bin");
        let bytes = book(&[
            (9, "e2e4", 1),
            (3, "d2d4", 1),
            (9, "d2d4", 1),
            (3, "d2d4", 5),
            (9, "e2e4", 2),
            (1, "g1f3", 1),
            (9, "e2e4", 3),
        ]);
        std::fs::write(&path, &bytes).unwrap();
        let report = verify(&path, 10).unwrap();
        // None side by side, three apart: verify reads the whole unsorted book for them.
        assert_eq!(report.count(ProblemKind::Duplicate), 3);
        assert!(report.count(ProblemKind::Unsorted) > 0);
        let said = report
            .problems
            .iter()
            .find(|p| p.kind == ProblemKind::Duplicate)
            .unwrap();
        assert_eq!(said.index, Some(3));
        assert!(
            said.message.starts_with("3 entries repeat"),
            "{}",
            said.message
        );
        let (count, first) = repeated_entries(&path, false).unwrap().unwrap();
        // Key 3's d2d4 once, key 9's e2e4 twice; the first in key order is key 3's.
        assert_eq!(count, 3);
        assert_eq!(
            first,
            Repeat {
                index: 3,
                key: Key(3),
                mv: code("d2d4"),
                repeats: 1,
            }
        );

        // The mark of a scored book is no entry: the indices are those after it.
        let mut marked = crate::book::SCORED_MARK.to_bytes().to_vec();
        marked.extend(&bytes);
        std::fs::write(&path, &marked).unwrap();
        let (_, first) = repeated_entries(&path, true).unwrap().unwrap();
        assert_eq!((first.index, first.repeats), (3, 1));

        let distinct = book(&[(9, "e2e4", 1), (3, "d2d4", 1), (9, "d2d4", 1)]);
        std::fs::write(&path, distinct).unwrap();
        assert_eq!(repeated_entries(&path, false).unwrap(), None);
        assert!(repeated_entries(&dir.path().join("missing.bin"), false).is_err());
    }

    #[test]
    fn possible_and_impossible_moves() {
        for ok in ["e2e4", "e1h1", "e8a8", "g1f3", "a7a8q", "b2a1n", "h1a8"] {
            assert_eq!(impossible_move(code(ok)), None, "{ok}");
        }
        assert_eq!(impossible_move(RawMove(0)), None);
        assert!(
            impossible_move(RawMove(9 | 9 << 6))
                .unwrap()
                .contains("same square")
        );
        assert!(impossible_move(code("a1b4")).unwrap().contains("no piece"));
        assert!(
            impossible_move(code("e2e4q"))
                .unwrap()
                .contains("promotion")
        );
        assert!(impossible_move(code("a7b8r")).is_none());
        assert!(
            impossible_move(code("a7c8q"))
                .unwrap()
                .contains("promotion")
        );
        assert!(
            impossible_move(RawMove(0x8000 | 28 | 12 << 6))
                .unwrap()
                .contains("bit 15")
        );
        assert!(
            impossible_move(RawMove(28 | 12 << 6 | 6 << 12))
                .unwrap()
                .contains("promotion code 6")
        );
    }
}
