//! Which format a book file is in: the one place that maps a file's content to a format, so that
//! every command opens every format through [`super::Book::open`].
//!
//! The content decides; the extension is a hint only where the content is ambiguous or broken (a
//! file named `.abk` without the ABK magic is read as ABK, to fail with the ABK reader's reason).
//! Another format is one more [`BookFormat`] variant, one more test in [`detect`] and one more
//! arm where `Book::open` converts it.

use std::path::Path;

use super::abk::{ABK_HEADER_SIZE, ABK_RECORD_SIZE, looks_like_abk};

/// The formats a book file can be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BookFormat {
    /// Polyglot's 16-byte big-endian entries (the format every command works on).
    Polyglot,
    /// Arena's tree of 28-byte records ([`super::abk`]), converted to Polyglot when opened.
    Abk,
}

/// Whether a file of `size` bytes at `path` could be another format than Polyglot, so that its
/// content has to be read to tell ([`detect`]); `false` means it is read as Polyglot.
pub fn may_be_other_format(path: &Path, size: u64) -> bool {
    has_extension(path, "abk")
        || (size >= ABK_HEADER_SIZE as u64
            && (size - ABK_HEADER_SIZE as u64).is_multiple_of(ABK_RECORD_SIZE as u64))
}

/// The format of a book from its bytes, with `path`'s extension as a hint.
///
/// ABK: the magic (`\x03ABK`) and the shape of a 25,200-byte header with whole 28-byte records
/// after it, or the `.abk` extension (then the ABK reader says what is wrong, if anything).
/// A Polyglot book whose first key happened to start with the magic and whose size had ABK's
/// shape would be taken for ABK: one chance in 2^32 for a random first key.
pub fn detect(data: &[u8], path: &Path) -> BookFormat {
    if looks_like_abk(data) || has_extension(path, "abk") {
        BookFormat::Abk
    } else {
        BookFormat::Polyglot
    }
}

fn has_extension(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_decides_and_the_extension_hints() {
        let mut abk = vec![0u8; ABK_HEADER_SIZE + ABK_RECORD_SIZE];
        abk[..4].copy_from_slice(&super::super::abk::ABK_MAGIC);
        assert_eq!(detect(&abk, Path::new("x.bin")), BookFormat::Abk);
        assert_eq!(detect(&abk, Path::new("x.abk")), BookFormat::Abk);
        // Wrong shape: ABK only with the extension.
        assert_eq!(detect(&abk[..40], Path::new("x.bin")), BookFormat::Polyglot);
        assert_eq!(detect(&abk[..40], Path::new("x.ABK")), BookFormat::Abk);
        assert_eq!(detect(&[1u8; 32], Path::new("x.abk")), BookFormat::Abk);
        assert_eq!(detect(&[1u8; 32], Path::new("x.bin")), BookFormat::Polyglot);
        assert!(may_be_other_format(Path::new("a.abk"), 3));
        assert!(may_be_other_format(Path::new("a.bin"), 25_200 + 28));
        assert!(!may_be_other_format(Path::new("a.bin"), 32));
    }
}
