//! Where a command's text goes: standard output, or a file that appears only when complete.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::CliError;
use polybook::atomic::AtomicFile;
use polybook::text::{quote_path, reason};

/// Text output: standard output, or a file that appears at its path only when complete
/// ([`Output::finish`]; an interrupted command never leaves half a file there). A target that is
/// not a regular file (`/dev/null`, a FIFO) is written in place.
pub enum Output {
    Stdout(BufWriter<io::Stdout>),
    File {
        path: PathBuf,
        out: BufWriter<AtomicFile>,
    },
}

impl Output {
    /// Standard output, or a new file at `path`.
    pub fn create(path: Option<&Path>) -> Result<Output, CliError> {
        let Some(path) = path else {
            return Ok(Output::Stdout(BufWriter::with_capacity(
                1 << 16,
                io::stdout(),
            )));
        };
        let tmp = AtomicFile::create(path).map_err(|e| cannot_write(path, &e))?;
        Ok(Output::File {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, tmp),
        })
    }

    /// Flushes; for a file, syncs it and renames it onto the target path.
    pub fn finish(self) -> Result<(), CliError> {
        match self {
            Output::Stdout(mut out) => out.flush().map_err(write_error),
            Output::File { path, out } => {
                let tmp = out
                    .into_inner()
                    .map_err(|e| cannot_write(&path, e.error()))?;
                tmp.commit(true).map_err(|e| cannot_write(&path, &e))
            }
        }
    }
}

/// `text()` when `cond` holds, else nothing: a clause a summary line has only sometimes.
pub fn clause(cond: bool, text: impl FnOnce() -> String) -> String {
    if cond { text() } else { String::new() }
}

/// The error for an output file that could not be written: `cannot write 'x.txt': No space left
/// on device`.
pub fn cannot_write(path: &Path, e: &io::Error) -> CliError {
    CliError::data(format!("cannot write {}: {}", quote_path(path), reason(e)))
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(out) => out.write(buf),
            Output::File { out, .. } => out.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(out) => out.write_all(buf),
            Output::File { out, .. } => out.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(out) => out.flush(),
            Output::File { out, .. } => out.flush(),
        }
    }
}

/// A failed write to standard output, as the error that ends the command. A reader that went away
/// (`polybook dump book.bin | head`) is not a failure: the command stops quietly (exit 0, no
/// message); any other error (`> /dev/full`) is one line and exit 1.
pub fn write_result(result: io::Result<()>) -> Result<(), CliError> {
    result.map_err(write_error)
}

/// The error that ends a command whose standard output failed (see [`write_result`]).
pub fn write_error(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::closed_pipe()
    } else {
        CliError::data(format!("cannot write to standard output: {e}"))
    }
}

/// Writes to standard output: the one way commands print their results (`outln!`), so that a
/// failed write ends the command as [`write_result`] says instead of panicking as `println!` does.
pub fn print(args: std::fmt::Arguments) -> Result<(), CliError> {
    io::stdout().lock().write_fmt(args).map_err(write_error)
}
