//! The PGN inputs of a build: files (plain or compressed), folders of them, or standard input, read
//! as one stream of chunks that each end at a game boundary, so that chunks can be parsed apart.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{Mmap, MmapOptions};

use super::BuildError;

/// One input: a file or standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    File(PathBuf),
    Stdin,
}

impl Input {
    /// The name used in messages.
    pub fn name(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Stdin => "<stdin>".to_string(),
        }
    }

    /// The size in bytes, when known (for the progress bar).
    pub fn size(&self) -> Option<u64> {
        match self {
            Input::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            Input::Stdin => None,
        }
    }
}

/// Whether a file name looks like PGN, plain or compressed.
fn is_pgn_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = ["gz", "zst", "bz2", "xz"]
        .iter()
        .find_map(|ext| name.strip_suffix(&format!(".{ext}")))
        .unwrap_or(&name);
    name.ends_with(".pgn")
}

/// Expands the command-line inputs: `-` is standard input, a folder gives every PGN file below it
/// (sorted by path, so the order is reproducible), a file is itself. Each must exist.
pub fn expand(args: &[PathBuf]) -> Result<Vec<Input>, BuildError> {
    let mut out = Vec::new();
    for arg in args {
        if arg.as_os_str() == "-" {
            out.push(Input::Stdin);
            continue;
        }
        let meta = std::fs::metadata(arg).map_err(|e| BuildError::Input {
            name: arg.display().to_string(),
            why: e.to_string(),
        })?;
        if meta.is_dir() {
            let mut files = Vec::new();
            walk(arg, &mut files).map_err(|e| BuildError::Input {
                name: arg.display().to_string(),
                why: e.to_string(),
            })?;
            if files.is_empty() {
                return Err(BuildError::Input {
                    name: arg.display().to_string(),
                    why: "a folder with no PGN files (*.pgn, *.pgn.gz, .zst, .bz2, .xz)".into(),
                });
            }
            files.sort();
            out.extend(files.into_iter().map(Input::File));
        } else {
            File::open(arg).map_err(|e| BuildError::Input {
                name: arg.display().to_string(),
                why: e.to_string(),
            })?;
            out.push(Input::File(arg.clone()));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, files)?;
        } else if is_pgn_name(&path) {
            files.push(path);
        }
    }
    Ok(())
}

/// Counts the bytes read from the raw (possibly compressed) input, for progress.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The compression of a stream, told by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
    Bzip2,
    Xz,
}

impl Compression {
    pub fn detect(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }
}

/// Opens an input and undoes its compression (told by magic bytes, whatever the file is called).
pub fn open(input: &Input, count: Arc<AtomicU64>) -> io::Result<Box<dyn Read + Send>> {
    let raw: Box<dyn Read + Send> = match input {
        Input::File(p) => Box::new(File::open(p)?),
        Input::Stdin => Box::new(io::stdin()),
    };
    let mut buffered = BufReader::with_capacity(1 << 16, Counting { inner: raw, count });
    let head = buffered.fill_buf()?;
    Ok(match Compression::detect(head) {
        Compression::None => Box::new(buffered),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Zstd => Box::new(zstd::Decoder::with_buffer(buffered)?),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(buffered)),
        Compression::Xz => Box::new(xz2::bufread::XzDecoder::new_multi_decoder(buffered)),
    })
}

/// The bytes of one chunk: read into memory, or the start of a mapped piece of a file.
pub enum ChunkData {
    Owned(Vec<u8>),
    /// The chunk is the first `len` bytes of the map (the map may go on into the next game).
    Mapped(Mmap, usize),
}

impl Deref for ChunkData {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            ChunkData::Owned(v) => v,
            ChunkData::Mapped(map, len) => &map[..*len],
        }
    }
}

/// An input cut into chunks that each end at a game boundary. A plain file is mapped into memory
/// a chunk at a time (no copy; each piece is unmapped once parsed, so the file never counts in
/// full towards the memory used); anything else is read as a stream and cut by a [`Chunker`].
pub enum Chunks {
    Mapped {
        file: File,
        size: u64,
        pos: u64,
        target: usize,
        count: Arc<AtomicU64>,
    },
    Stream(Chunker<Box<dyn Read + Send>>),
}

impl Chunks {
    pub fn open(input: &Input, count: Arc<AtomicU64>, target: usize) -> io::Result<Chunks> {
        if let Input::File(path) = input
            && let Some((file, size)) = plain_file(path)?
        {
            return Ok(Chunks::Mapped {
                file,
                size,
                pos: 0,
                target: target.max(1),
                count,
            });
        }
        Ok(Chunks::Stream(Chunker::new(open(input, count)?, target)))
    }

    /// The next chunk, or `None` at the end of the input.
    pub fn next_chunk(&mut self) -> io::Result<Option<ChunkData>> {
        match self {
            Chunks::Stream(chunker) => Ok(chunker.next_chunk()?.map(ChunkData::Owned)),
            Chunks::Mapped {
                file,
                size,
                pos,
                target,
                count,
            } => {
                let chunk = next_mapped(file, *size, *pos, *target)?;
                if let Some(chunk) = &chunk {
                    *pos += chunk.len() as u64;
                    count.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
                Ok(chunk)
            }
        }
    }
}

/// The chunk of `file` (of `size` bytes) from `pos`: about `target` bytes, ending just before a
/// game's first tag line, or at the end of the file.
fn next_mapped(file: &File, size: u64, pos: u64, target: usize) -> io::Result<Option<ChunkData>> {
    if pos >= size {
        return Ok(None);
    }
    let mut want = target as u64;
    loop {
        let len = want.min(size - pos);
        // SAFETY: the map is only read. As with any program that maps its input, a file
        // truncated by another program while it is being read can end the process (SIGBUS);
        // polybook never writes to its inputs, and refuses to write its book over one.
        let map = unsafe { MmapOptions::new().offset(pos).len(len as usize).map(file)? };
        let cut = if pos + len == size {
            Some(map.len())
        } else {
            last_game_start(&map)
        };
        if let Some(cut) = cut {
            return Ok(Some(ChunkData::Mapped(map, cut)));
        }
        // One game longer than the chunk: map more.
        want *= 2;
    }
}

/// The file and its size if it is a regular, non-empty, uncompressed file, which can be mapped;
/// `None` for anything else (which is then read as a stream).
fn plain_file(path: &Path) -> io::Result<Option<(File, u64)>> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() == 0 {
        return Ok(None);
    }
    let mut head = [0u8; 8];
    let n = file.read(&mut head)?;
    if Compression::detect(&head[..n]) != Compression::None {
        return Ok(None);
    }
    Ok(Some((file, meta.len())))
}

/// Cuts a stream of PGN into chunks of about `target` bytes, each ending just before a game's
/// first tag line, so that no game is split between two chunks.
pub struct Chunker<R> {
    input: R,
    carry: Vec<u8>,
    target: usize,
    eof: bool,
}

impl<R: Read> Chunker<R> {
    pub fn new(input: R, target: usize) -> Self {
        Chunker {
            input,
            carry: Vec::new(),
            target,
            eof: false,
        }
    }

    /// The next chunk, or `None` at the end of the stream.
    pub fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut buf = std::mem::take(&mut self.carry);
        let mut want = self.target;
        loop {
            if !self.eof && buf.len() < want {
                // Read straight into the buffer's spare room (no zero-filling first).
                let room = want - buf.len();
                buf.reserve_exact(room);
                let n = (&mut self.input).take(room as u64).read_to_end(&mut buf)?;
                self.eof = n < room;
            }
            if self.eof {
                return Ok((!buf.is_empty()).then_some(buf));
            }
            if let Some(cut) = last_game_start(&buf) {
                self.carry = buf[cut..].to_vec();
                buf.truncate(cut);
                return Ok(Some(buf));
            }
            // One game longer than the chunk: read on.
            want = buf.len() * 2;
        }
    }
}

/// The offset of the last line that starts a game's tags: a tag line (`[Name "`) whose previous
/// line is not one. `None` if there is none after offset 0.
fn last_game_start(buf: &[u8]) -> Option<usize> {
    let mut end = buf.len();
    while let Some(nl) = buf[..end].iter().rposition(|&b| b == b'\n') {
        let line = nl + 1;
        if looks_like_tag(&buf[line..]) {
            let prev_start = buf[..nl]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            if buf.get(prev_start) != Some(&b'[') && line > 0 {
                return Some(line);
            }
        }
        end = nl;
    }
    None
}

fn looks_like_tag(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"[") else {
        return false;
    };
    let name_len = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    name_len > 0 && rest[name_len..].trim_ascii_start().starts_with(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_at_game_boundaries() {
        let game =
            "[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 { [%clk 0:01:00]\n[%eval 0.3] } e5 1-0\n\n";
        let text = game.repeat(50);
        let mut chunker = Chunker::new(text.as_bytes(), 100);
        let mut total = String::new();
        while let Some(chunk) = chunker.next_chunk().unwrap() {
            let chunk = String::from_utf8(chunk).unwrap();
            assert!(chunk.starts_with("[Event"), "{chunk:?}");
            assert_eq!(chunk.matches("[Event").count() * game.len(), chunk.len());
            total.push_str(&chunk);
        }
        assert_eq!(total, text);
    }

    #[test]
    fn a_mapped_file_is_cut_at_game_boundaries_too() {
        let game =
            "[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 { [%clk 0:01:00]\n[%eval 0.3] } e5 1-0\n\n";
        let long = format!("[Event \"y\"]\n\n1. d4 {{ {} }} *\n\n", "z".repeat(700));
        let text = format!("{}{long}{}", game.repeat(30), game.repeat(20));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.pgn");
        std::fs::write(&path, &text).unwrap();
        let count = Arc::new(AtomicU64::new(0));
        let mut chunks = Chunks::open(&Input::File(path), count.clone(), 100).unwrap();
        assert!(matches!(chunks, Chunks::Mapped { .. }));
        let mut total = String::new();
        while let Some(chunk) = chunks.next_chunk().unwrap() {
            let chunk = std::str::from_utf8(&chunk).unwrap();
            assert!(chunk.starts_with("[Event"), "{chunk:?}");
            assert!(chunk.ends_with("\n\n"), "{chunk:?}");
            total.push_str(chunk);
        }
        assert_eq!(total, text);
        assert_eq!(count.load(Ordering::Relaxed), text.len() as u64);
    }

    #[test]
    fn games_without_blank_lines_between_them() {
        let text = "[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n1. d4 *\n";
        assert_eq!(last_game_start(text.as_bytes()), Some(20));
    }

    #[test]
    fn compression_by_magic() {
        assert_eq!(Compression::detect(b"\x1f\x8b\x08"), Compression::Gzip);
        assert_eq!(Compression::detect(b"\xfd7zXZ\x00"), Compression::Xz);
        assert_eq!(Compression::detect(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::detect(b"(\xb5/\xfd"), Compression::Zstd);
        assert_eq!(Compression::detect(b"[Event"), Compression::None);
    }
}
