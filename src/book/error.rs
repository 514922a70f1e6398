use std::io;
use std::path::PathBuf;

use thiserror::Error;

/// Why a book could not be opened, read or written.
#[derive(Debug, Error)]
pub enum BookError {
    /// The file could not be opened or read.
    #[error(
        "cannot open book {}: {}",
        crate::text::quote_path(path),
        crate::text::reason(source)
    )]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "cannot write book {}: {}",
        crate::text::quote_path(path),
        crate::text::reason(source)
    )]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: is a directory, not a book", path.display())]
    IsDirectory { path: PathBuf },
    #[error("{}: not a Polyglot book: {what}", path.display())]
    NotABook { path: PathBuf, what: &'static str },
    #[error("{}: not a Polyglot book: its size, {size} bytes, is not a multiple of 16{hint}", path.display())]
    BadSize {
        path: PathBuf,
        size: u64,
        hint: String,
    },
    #[error(
        "{}: the file shrank while it was read ({size} bytes when opened, {read} read): is another program writing it?",
        path.display()
    )]
    Shrunk { path: PathBuf, size: u64, read: u64 },
    /// A book in another format (Arena's ABK, ChessBase's CTG, …) that could not be read: the
    /// reason names the format and the record or page at fault.
    #[error("{}: {reason}", path.display())]
    Format { path: PathBuf, reason: String },
    #[error("{}: too large to read into memory ({size} bytes)", path.display())]
    TooLarge { path: PathBuf, size: u64 },
}
