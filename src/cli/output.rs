//! Where a command's text goes: standard output, or a file that appears only when complete.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::CliError;
use polybook::book::{persist, temp_beside};

/// Text output: standard output, or a temporary file beside the target that is renamed onto it
/// by [`Output::finish`] (so an interrupted command never leaves half a file at the target path).
pub enum Output {
    Stdout(BufWriter<io::Stdout>),
    File {
        path: PathBuf,
        out: BufWriter<NamedTempFile>,
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
        if path.is_dir() {
            return Err(CliError::data(format!(
                "{}: is a directory, not a file to write",
                path.display()
            )));
        }
        let tmp = temp_beside(path)
            .map_err(|e| CliError::data(format!("{}: cannot write: {e}", path.display())))?;
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
                let fail =
                    |e: io::Error| CliError::data(format!("{}: cannot write: {e}", path.display()));
                let tmp = out.into_inner().map_err(|e| fail(e.into_error()))?;
                persist(tmp, &path).map_err(fail)
            }
        }
    }
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

/// A failed write to standard output. A reader that went away (`polybook dump book.bin | head`)
/// is not a failure: the command stops quietly.
pub fn write_result(result: io::Result<()>) -> Result<(), CliError> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(write_error(e)),
        Ok(()) => Ok(()),
    }
}

fn write_error(e: io::Error) -> CliError {
    CliError::data(format!("cannot write the output: {e}"))
}
