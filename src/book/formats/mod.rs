//! Books in formats other than Polyglot's, and which format a book file is in: the one place that
//! maps a file to a format, so that every command opens every format through
//! [`crate::book::Book::open`], which converts the book in memory into sorted Polyglot entries.
//!
//! - [`abk`]: Arena's books (a tree of 28-byte records), and [`abk_write`] to write one.
//! - [`ctg`]: ChessBase's books (`.ctg` pages with a `.cto` index and `.ctb` bounds).
//! - [`obk`]: Chessmaster's books (a depth-first tree of 2-byte move records).
//! - [`exp`]: the experience files of BrainLearn, ShashChess and SugaR (`.exp`), whose scores come
//!   out in the learn fields (ProDeo's layout, [`crate::book::LearnLayout::Scored`]).
//!
//! The content decides; the extension is a hint only where the content is ambiguous or broken (a
//! file named `.abk` without the ABK magic is read as ABK, to fail with the ABK reader's reason).
//! A CTG book is the exception: it is three files found by name, so its extension decides.
//! Another format is one more [`BookFormat`] variant, one more test in [`detect`] and one more
//! arm where `Book::open` converts it.

pub mod abk;
pub mod abk_write;
pub mod ctg;
pub mod exp;
pub mod obk;

use std::io::Read;
use std::path::Path;

use abk::looks_like_abk;
use obk::looks_like_obk;

use crate::book::{BookError, Entry, Key, LearnLayout, RawMove, open_file, sort_entries};

/// The formats a book file can be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BookFormat {
    /// Polyglot's 16-byte big-endian entries (the format every command works on).
    Polyglot,
    /// Arena's tree of 28-byte records ([`abk`]), converted to Polyglot when opened.
    Abk,
    /// ChessBase's hashed pages ([`ctg`]), walked from the start position when opened.
    Ctg,
    /// Chessmaster's tree of 2-byte moves ([`obk`]), converted to Polyglot when opened.
    Obk,
    /// BrainLearn's, ShashChess's and SugaR's experience files ([`exp`]), walked from the start
    /// position when opened; scores and depths in the learn fields.
    Exp,
}

/// Whether `path` names a file of a CTG book (`.ctg`, `.cto` or `.ctb`, in any case): the book is
/// then read from its three files by name ([`ctg::read_ctg`]), whatever the content.
pub fn is_ctg_name(path: &Path) -> bool {
    ["ctg", "cto", "ctb"]
        .iter()
        .any(|ext| has_extension(path, ext))
}

/// How many bytes from a file's start [`detect`] looks at.
pub const HEAD_SIZE: usize = 64;

/// The format of a book from its first bytes (`head`, up to [`HEAD_SIZE`]) and its size, with
/// `path`'s extension as a hint.
///
/// - CTG: the name ([`is_ctg_name`]).
/// - ABK: the magic (`\x03ABK`) and the shape of a 25,200-byte header with whole 28-byte records
///   after it, or the `.abk` extension (then the ABK reader says what is wrong, if anything). A
///   Polyglot book whose first key happened to start with the magic and whose size had ABK's
///   shape would be taken for ABK: one chance in 2^32 for a random first key.
/// - OBK: a magic (`BOO!` or `UGWS`) and a size that holds the move records the header counts,
///   or the `.obk` extension (then the OBK reader says what is wrong, if anything).
/// - EXP: a SugaR/ShashChess signature with whole 24-byte records after it, or the `.exp`
///   extension (BrainLearn's files have no header; the EXP reader says what is wrong, if anything).
/// - Polyglot: anything else.
pub fn detect(head: &[u8], size: u64, path: &Path) -> BookFormat {
    if is_ctg_name(path) {
        BookFormat::Ctg
    } else if looks_like_abk(head, size) || has_extension(path, "abk") {
        BookFormat::Abk
    } else if looks_like_obk(head, size) || has_extension(path, "obk") {
        BookFormat::Obk
    } else if exp::looks_like_exp(head, size) || has_extension(path, "exp") {
        BookFormat::Exp
    } else {
        BookFormat::Polyglot
    }
}

/// The format of the book file at `path` ([`detect`] on its first bytes); a CTG book is told by
/// its name without opening it.
pub fn detect_file(path: &Path) -> Result<BookFormat, BookError> {
    if is_ctg_name(path) {
        return Ok(BookFormat::Ctg);
    }
    let (file, size) = open_file(path)?;
    let mut head = Vec::with_capacity(HEAD_SIZE);
    file.take(HEAD_SIZE as u64)
        .read_to_end(&mut head)
        .map_err(|source| BookError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(detect(&head, size, path))
}

impl BookFormat {
    /// The format's name in messages: "Polyglot", "Arena (ABK)", "ChessBase (CTG)",
    /// "Chessmaster (OBK)", "BrainLearn experience (EXP)".
    pub fn name(self) -> &'static str {
        match self {
            BookFormat::Polyglot => "Polyglot",
            BookFormat::Abk => "Arena (ABK)",
            BookFormat::Ctg => "ChessBase (CTG)",
            BookFormat::Obk => "Chessmaster (OBK)",
            BookFormat::Exp => "BrainLearn experience (EXP)",
        }
    }

    /// How the learn fields of a book converted from this format are to be read: ProDeo's layout
    /// for an experience file (its scores and depths), PolyGlot's otherwise.
    pub fn learn_layout(self) -> LearnLayout {
        match self {
            BookFormat::Exp => LearnLayout::Scored,
            _ => LearnLayout::Polyglot,
        }
    }

    /// The entries of the book at `path` in this format (not Polyglot), converted: sorted, one
    /// per (position, move). `data` is the file's content where the format is read from memory
    /// (ABK, OBK); CTG reads its three files itself.
    pub fn convert(self, path: &Path, data: &[u8]) -> Result<Vec<Entry>, BookError> {
        // The in-memory readers say why in one sentence; the error names the file.
        let named = |reason: String| BookError::Format {
            path: path.to_path_buf(),
            reason,
        };
        match self {
            BookFormat::Polyglot => unreachable!("a Polyglot book is not converted"),
            BookFormat::Abk => abk::read_abk(data)
                .map(|b| b.entries)
                .map_err(|e| named(e.0)),
            BookFormat::Ctg => ctg::read_ctg_entries(path),
            BookFormat::Obk => obk::read_obk(data)
                .map(|b| b.entries)
                .map_err(|e| named(e.0)),
            BookFormat::Exp => exp::read_exp(data)
                .map(|b| b.entries)
                .map_err(|e| named(e.0)),
        }
    }
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// Sorted Polyglot entries from (key, move, weight, learn) rows with one row per (key, move) and
/// weights of any size: where a position's largest weight exceeds 65,535, its weights are scaled
/// down in proportion (a weight above 0 stays at least 1), so that the shares of its moves hold.
pub(crate) fn entries_from_weights(mut rows: Vec<(Key, RawMove, u64, u32)>) -> Vec<Entry> {
    rows.sort_unstable_by_key(|r| (r.0, r.1));
    let mut out = Vec::with_capacity(rows.len());
    for group in rows.chunk_by(|a, b| a.0 == b.0) {
        let max = group.iter().map(|r| r.2).max().unwrap_or(0);
        for &(key, mv, w, learn) in group {
            let weight = if max <= u64::from(u16::MAX) || w == 0 {
                w
            } else {
                (u128::from(w) * u128::from(u16::MAX) / u128::from(max)).max(1) as u64
            };
            out.push(Entry {
                key,
                mv,
                weight: weight as u16,
                learn,
            });
        }
    }
    sort_entries(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_decides_and_the_extension_hints() {
        let abk = abk::ABK_MAGIC;
        let size = (abk::ABK_HEADER_SIZE + abk::ABK_RECORD_SIZE) as u64;
        assert_eq!(detect(&abk, size, Path::new("x.bin")), BookFormat::Abk);
        assert_eq!(detect(&abk, size, Path::new("x.abk")), BookFormat::Abk);
        // Wrong shape: ABK only with the extension.
        assert_eq!(detect(&abk, 40, Path::new("x.bin")), BookFormat::Polyglot);
        assert_eq!(detect(&abk, 40, Path::new("x.ABK")), BookFormat::Abk);
        assert_eq!(detect(&[1u8; 32], 32, Path::new("x.abk")), BookFormat::Abk);
        assert_eq!(
            detect(&[1u8; 32], 32, Path::new("x.bin")),
            BookFormat::Polyglot
        );
        // CTG by name, whatever the content.
        for name in ["b.ctg", "b.CTO", "b.ctb"] {
            assert_eq!(detect(&abk, size, Path::new(name)), BookFormat::Ctg);
        }
        assert!(!is_ctg_name(Path::new("ctg")));
    }

    #[test]
    fn obk_by_its_magic_and_size_or_its_extension() {
        // Version 2: 12 bytes of header, 1 move (2 bytes); version 1: 8 bytes, 1 move.
        let v2 = *b"BOO!\x01\0\0\0\0\0\0\0";
        let v1 = *b"UGWS\x01\0\0\0";
        assert_eq!(detect(&v2, 14, Path::new("x.bin")), BookFormat::Obk);
        assert_eq!(detect(&v1, 10, Path::new("x")), BookFormat::Obk);
        // Too short for its move count: OBK only with the extension.
        assert_eq!(detect(&v2, 13, Path::new("x.bin")), BookFormat::Polyglot);
        assert_eq!(detect(&v2, 13, Path::new("x.OBK")), BookFormat::Obk);
        assert_eq!(detect(&[1u8; 32], 32, Path::new("x.obk")), BookFormat::Obk);
        assert_eq!(BookFormat::Obk.name(), "Chessmaster (OBK)");
    }

    #[test]
    fn experience_files_by_signature_or_extension() {
        let v2 = exp::EXP_V2_SIGNATURE;
        let size = (v2.len() + exp::EXP_ENTRY_SIZE) as u64;
        assert_eq!(detect(v2, size, Path::new("x.bin")), BookFormat::Exp);
        // A signature without whole records after it: EXP by extension only.
        assert_eq!(
            detect(v2, size + 1, Path::new("x.bin")),
            BookFormat::Polyglot
        );
        assert_eq!(detect(&[1u8; 48], 48, Path::new("x.EXP")), BookFormat::Exp);
        assert_eq!(
            detect(&[1u8; 48], 48, Path::new("x.bin")),
            BookFormat::Polyglot
        );
        assert_eq!(BookFormat::Exp.learn_layout(), LearnLayout::Scored);
        assert_eq!(BookFormat::Abk.learn_layout(), LearnLayout::Polyglot);
    }

    #[test]
    fn weights_too_large_are_scaled_per_position() {
        let (a, b) = (Key(1), Key(2));
        let (m1, m2) = (RawMove(1), RawMove(2));
        let out = entries_from_weights(vec![
            (b, m1, 7, 0),
            (a, m1, 200_000, 9),
            (a, m2, 100_000, 0),
            (b, m2, 0, 0),
        ]);
        let got: Vec<_> = out
            .iter()
            .map(|e| (e.key, e.mv, e.weight, e.learn))
            .collect();
        assert_eq!(
            got,
            vec![
                (a, m1, 65_535, 9),
                (a, m2, 32_767, 0),
                (b, m1, 7, 0),
                (b, m2, 0, 0)
            ]
        );
    }
}
