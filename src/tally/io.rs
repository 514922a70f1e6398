//! A tally's file as the `parquet` crate reads it: at offsets, from several threads at once.

use std::fs::File;
use std::sync::Arc;

use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

/// A file that several threads read at once, each at its own offsets (no shared seek position).
#[derive(Clone)]
pub(super) struct SharedFile {
    file: Arc<File>,
    /// Its length when opened: a read past it is refused before any buffer is made for it.
    len: u64,
}

impl SharedFile {
    pub fn new(file: File) -> std::io::Result<SharedFile> {
        let len = file.metadata()?.len();
        Ok(SharedFile {
            file: Arc::new(file),
            len,
        })
    }

    /// Up to `len` bytes at `at`: fewer where the file ends before.
    pub fn read(&self, at: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let len = usize::try_from(self.len.saturating_sub(at)).map_or(len, |left| len.min(left));
        let mut buf = vec![0u8; len];
        read_exact_at(&self.file, &mut buf, at)?;
        Ok(buf)
    }
}

impl Length for SharedFile {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for SharedFile {
    type T = std::io::BufReader<ReadAt>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(std::io::BufReader::new(ReadAt {
            file: self.file.clone(),
            at: start,
        }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        if start
            .checked_add(length as u64)
            .is_none_or(|end| end > self.len)
        {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "{length} bytes at {start} go past the end of the file ({} bytes)",
                self.len
            )));
        }
        let mut buf = vec![0u8; length];
        read_exact_at(&self.file, &mut buf, start)?;
        Ok(buf.into())
    }
}

/// Reads a file from an offset of its own.
pub(super) struct ReadAt {
    file: Arc<File>,
    at: u64,
}

impl std::io::Read for ReadAt {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = read_at(&self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, at) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                at += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
