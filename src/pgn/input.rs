//! The PGN inputs: files (plain or compressed), folders of them, or standard input, read
//! as one stream of chunks that each end at a game boundary, so that chunks can be parsed apart.
//!
//! Where a game starts is decided here, once, by [`next_game_start`]: the chunks are cut there,
//! and the game reader ([`super::read::read_games`]) never lets pgn-reader read across such a place
//! either (see [`run_end`]). So a game is read the same way whatever chunk it falls in, and the
//! book does not depend on `--threads` or `--memory`.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

/// One input: a file, the games of a plain file that start in a byte range, or standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    File(PathBuf),
    /// The bytes `start..end` of a plain (uncompressed) file, both game starts by the rule of
    /// [`next_game_start`]: made by [`Input::range`], so that the ranges of any cut of a file
    /// hold each of its games once.
    Range {
        path: PathBuf,
        start: u64,
        end: u64,
    },
    Stdin,
}

impl Input {
    /// The name used in messages.
    pub fn name(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Range { path, start, end } => {
                format!("{} (bytes {start} to {end})", path.display())
            }
            Input::Stdin => "<stdin>".to_string(),
        }
    }

    /// The file read, if it is one (not standard input).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Input::File(p) | Input::Range { path: p, .. } => Some(p),
            Input::Stdin => None,
        }
    }

    /// The size in bytes, when known (for the progress bar).
    pub fn size(&self) -> Option<u64> {
        match self {
            Input::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            Input::Range { start, end, .. } => Some(end - start),
            Input::Stdin => None,
        }
    }

    /// The games of the plain file `path` that start in the bytes `from..to` (`to` past the end,
    /// or `None`: to the end), as an input: it reads from the first game start at or after
    /// `from` up to the first game start at or after `to`, past `to` as far as the last game
    /// needs (as Hadoop reads the lines of a split). A game starts at offset 0 and wherever
    /// [`next_game_start`] says, so the ranges of any cut of a file into consecutive pieces
    /// read each of its games once, as a whole read of the file does; a range in which no game
    /// starts reads nothing.
    ///
    /// The caller checks that the file is plain ([`compression_of`]); `to` must not be less
    /// than `from`.
    pub fn range(path: &Path, from: u64, to: Option<u64>) -> io::Result<Input> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let to = to.unwrap_or(u64::MAX);
        if to < from {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the range {from}:{to} ends before it starts"),
            ));
        }
        let start = game_start_at(&mut file, len, from, SCAN_BLOCK, 1 << 16)?;
        let end = game_start_at(&mut file, len, to, SCAN_BLOCK, 1 << 16)?;
        Ok(Input::Range {
            path: path.to_path_buf(),
            start,
            end: end.max(start),
        })
    }
}

/// The compression of a file, told by its first bytes (as [`open`] tells it).
pub fn compression_of(path: &Path) -> io::Result<Compression> {
    let mut head = Vec::with_capacity(8);
    File::open(path)?.take(8).read_to_end(&mut head)?;
    Ok(Compression::detect(&head))
}

/// How many bytes [`game_start_at`] reads at a time when it looks back for a line's start.
const SCAN_BLOCK: usize = 1 << 16;

/// The first game start at or after `at` in `file` (of `len` bytes), or `len` if none.
///
/// Whether a line starts a game depends on the line before it ([`starts_game`]), so the search
/// begins at the start of the line that holds byte `at - 1` (found by reading back `block`
/// bytes at a time): the chunker, fed from there, sees the first candidate (the next line, at
/// or after `at`) with the line before it, and cuts only at game starts of the whole file (see
/// [`Chunker`]). `target` is the chunker's first read.
fn game_start_at(
    file: &mut File,
    len: u64,
    at: u64,
    block: usize,
    target: usize,
) -> io::Result<u64> {
    if at == 0 || at >= len {
        return Ok(at.min(len));
    }
    // The start of the line that holds byte `at - 1`: after the last line break before it.
    let mut line = 0;
    let mut end = at - 1;
    let mut buf = vec![0; block];
    while end > 0 {
        let from = end.saturating_sub(block as u64);
        let part = &mut buf[..(end - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(part)?;
        if let Some(nl) = memchr::memrchr(b'\n', part) {
            line = from + nl as u64 + 1;
            break;
        }
        end = from;
    }
    file.seek(SeekFrom::Start(line))?;
    let mut chunker = Chunker::new(file.take(len - line), target);
    let Some(first) = chunker.next_chunk()? else {
        return Ok(len);
    };
    // The line at `line` itself lies before `at`: the first game start after it is the answer,
    // in the first chunk or where the chunker cut it.
    Ok(match next_game_start(&first, 0) {
        Some(g) => line + g as u64,
        None if chunker.next_chunk()?.is_some() => line + first.len() as u64,
        None => len,
    })
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

/// An input that cannot be read: its name and why. Every reader of games reports a failed read
/// with it ([`Input::read_error`]).
#[derive(Debug, Error)]
#[error("{name}: cannot read: {why}")]
pub struct InputError {
    pub name: String,
    pub why: String,
}

impl Input {
    /// The error of a failed read of this input.
    pub fn read_error(&self, e: &std::io::Error) -> InputError {
        InputError {
            name: self.name(),
            why: crate::text::reason(e),
        }
    }
}

/// Expands the command-line inputs: `-` is standard input, a folder gives every PGN file below it
/// (sorted by path, so the order is reproducible), a file is itself. Each must exist.
pub fn expand(args: &[PathBuf]) -> Result<Vec<Input>, InputError> {
    let mut out = Vec::new();
    for arg in args {
        if arg.as_os_str() == "-" {
            out.push(Input::Stdin);
            continue;
        }
        let meta = std::fs::metadata(arg).map_err(|e| InputError {
            name: arg.display().to_string(),
            why: crate::text::reason(&e),
        })?;
        if meta.is_dir() {
            let mut files = Vec::new();
            walk(arg, &mut files).map_err(|e| InputError {
                name: arg.display().to_string(),
                why: crate::text::reason(&e),
            })?;
            if files.is_empty() {
                return Err(InputError {
                    name: arg.display().to_string(),
                    why: "a folder with no PGN files (*.pgn, *.pgn.gz, .zst, .bz2, .xz)".into(),
                });
            }
            files.sort();
            out.extend(files.into_iter().map(Input::File));
        } else {
            File::open(arg).map_err(|e| InputError {
                name: arg.display().to_string(),
                why: crate::text::reason(&e),
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

/// Counts the bytes read from the raw (possibly compressed) input: in `count`, shared by the
/// inputs, for progress; in `own`, this input's alone, for where a cut lies ([`Truncated`]).
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
    own: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        self.own.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A compressed input that stops before the end of its stream (a download cut short): its
/// decompressor ran out of bytes. [`Chunks`] hands out the games read whole before the cut, then
/// returns this (inside an `io::Error` of kind `UnexpectedEof`; [`Truncated::of`] finds it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("truncated: the compressed data stops at byte {at}, before the end of its stream")]
pub struct Truncated {
    /// The input's compressed bytes read, all there were: where the cut is.
    pub at: u64,
}

impl Truncated {
    /// The cut an error of [`Chunks::next_chunk`] reports, if it is one.
    pub fn of(e: &io::Error) -> Option<&Truncated> {
        e.get_ref()?.downcast_ref::<Truncated>()
    }
}

impl From<Truncated> for io::Error {
    fn from(t: Truncated) -> io::Error {
        io::Error::new(io::ErrorKind::UnexpectedEof, t)
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

/// The text of an input, its compression undone (told by its first bytes, as for games): for
/// readers of text that is not games (`analyse --positions`' FEN and EPD lines).
pub fn open_text(input: &Input) -> io::Result<Box<dyn Read + Send>> {
    open(input, Arc::default(), Arc::default()).map(|(stream, _)| stream)
}

/// Opens an input and undoes its compression (told by magic bytes, whatever the file is called),
/// which it returns with the stream. The raw bytes read are added to `count` and to `own` (see
/// `Counting`).
fn open(
    input: &Input,
    count: Arc<AtomicU64>,
    own: Arc<AtomicU64>,
) -> io::Result<(Box<dyn Read + Send>, Compression)> {
    let raw: Box<dyn Read + Send> = match input {
        Input::File(p) => {
            let file = File::open(p)?;
            let meta = file.metadata()?;
            if meta.is_file() {
                Box::new(WholeFile {
                    file,
                    size: meta.len(),
                    read: 0,
                })
            } else {
                Box::new(file)
            }
        }
        Input::Range { path, start, end } => {
            // Plain text from a game start: read as it is, whatever its first bytes look like.
            let mut file = File::open(path)?;
            file.seek(SeekFrom::Start(*start))?;
            let size = end - start;
            let raw = WholeFile {
                file: file.take(size),
                size,
                read: 0,
            };
            let counted = Counting {
                inner: raw,
                count,
                own,
            };
            let stream = BufReader::with_capacity(1 << 16, counted);
            return Ok((Box::new(stream), Compression::None));
        }
        Input::Stdin => Box::new(io::stdin()),
    };
    let counted = Counting {
        inner: raw,
        count,
        own,
    };
    let mut buffered = BufReader::with_capacity(1 << 16, counted);
    let compression = Compression::detect(buffered.fill_buf()?);
    let stream: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(buffered),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Zstd => Box::new(zstd::Decoder::with_buffer(buffered)?),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(buffered)),
        Compression::Xz => Box::new(xz2::bufread::XzDecoder::new_multi_decoder(buffered)),
    };
    Ok((stream, compression))
}

/// A raw input file that must yield as many bytes as it had when it was opened: a file that
/// shrinks while it is read (truncated by another program) is an error, not a silent short read.
struct WholeFile<F = File> {
    file: F,
    size: u64,
    read: u64,
}

impl<F: Read> Read for WholeFile<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read += n as u64;
        if n == 0 && !buf.is_empty() && self.read < self.size {
            return Err(io::Error::other(format!(
                "the file shrank while it was read ({} of its {} bytes were there)",
                self.read, self.size
            )));
        }
        Ok(n)
    }
}

/// An input cut into chunks that each start at a game (see [`next_game_start`]), read as a
/// stream: plain files are read, not mapped, so that a file truncated while it is read is an
/// error that names it rather than a crash (mapping was about 2 % faster, within noise).
///
/// PGN is text: an input whose first [`HEAD`] bytes are binary data (an executable, a book, a
/// Parquet file, random bytes; see [`binary_at`]) is refused with an error rather than read as
/// games of garbage. A range of a file is judged by the file's first bytes, as the whole file is,
/// so that the ranges of a file read what the whole file reads; offsets are the file's.
///
/// A compressed input that stops before the end of its stream ([`Truncated`]) gives the games
/// read whole before the cut (the game the cut falls in is left out), then the error.
pub struct Chunks {
    chunker: Chunker<Box<dyn Read + Send>>,
    /// Whether the input is compressed: only a compressed stream tells that it was cut short.
    compressed: bool,
    /// This input's raw bytes read so far.
    own: Arc<AtomicU64>,
    /// The cut found: the error of every call after the games before it.
    truncated: Option<Truncated>,
}

impl Chunks {
    pub fn open(input: &Input, count: Arc<AtomicU64>, target: usize) -> io::Result<Chunks> {
        let own = Arc::new(AtomicU64::new(0));
        let (stream, compression) = open(input, count, own.clone())?;
        let chunker = match input {
            Input::Range { path, .. } => {
                let mut head = Vec::with_capacity(HEAD);
                File::open(path)?.take(HEAD as u64).read_to_end(&mut head)?;
                refuse_binary(&head)?;
                Chunker::new(stream, target)
            }
            _ => Chunker::checking(stream, target),
        };
        Ok(Chunks {
            chunker,
            compressed: compression != Compression::None,
            own,
            truncated: None,
        })
    }

    /// The next chunk, or `None` at the end of the input.
    pub fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        if let Some(cut) = &self.truncated {
            return Err(cut.clone().into());
        }
        match self.chunker.next_chunk() {
            Err(e) if self.compressed && e.kind() == io::ErrorKind::UnexpectedEof => {
                // The decompressor ran out of bytes: the games before the last game start read
                // are whole, the rest is the game the cut falls in.
                let mut rest = self.chunker.take_rest()?;
                rest.truncate(last_game_start(&rest).unwrap_or(0));
                let cut = Truncated {
                    at: self.own.load(Ordering::Relaxed),
                };
                self.truncated = Some(cut.clone());
                match rest.is_empty() {
                    true => Err(cut.into()),
                    false => Ok(Some(rest)),
                }
            }
            other => other,
        }
    }
}

/// How much of a stream's start [`binary_at`] judges.
pub const HEAD: usize = 1 << 16;

/// Refuses a stream whose start `head` is binary data (see [`binary_at`]), saying where its
/// control bytes start and, for UTF-16 text, how to convert it.
fn refuse_binary(head: &[u8]) -> io::Result<()> {
    let Some(at) = binary_at(head) else {
        return Ok(());
    };
    let what = if head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]) {
        "UTF-16 text: convert it to UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)".to_string()
    } else {
        format!("binary data, not PGN text (control bytes from byte {at} on)")
    };
    Err(io::Error::new(io::ErrorKind::InvalidData, what))
}

/// Whether the start of a file is binary data rather than text: at least one byte in twenty of its
/// first [`HEAD`] bytes is a control byte (not a tab, line end, form feed or DOS end-of-file), as
/// in executables, books, Parquet files, compressed data or UTF-16 text. A damaged PGN file with a
/// few stray NUL bytes is still text. The answer is the offset of the first control byte.
pub fn binary_at(head: &[u8]) -> Option<usize> {
    let head = &head[..head.len().min(HEAD)];
    let control = |b: &u8| *b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1a);
    let count = head.iter().filter(|b| control(b)).count();
    (count > 0 && count * 20 >= head.len())
        .then(|| head.iter().position(control))
        .flatten()
}

/// Cuts a stream of PGN into chunks of about `target` bytes, each ending just before a game's
/// first tag line, so that no game is split between two chunks.
pub struct Chunker<R> {
    input: R,
    carry: Vec<u8>,
    target: usize,
    eof: bool,
    /// Whether the stream's first [`HEAD`] bytes are still to be judged (see [`binary_at`]).
    check_head: bool,
}

impl<R: Read> Chunker<R> {
    pub fn new(input: R, target: usize) -> Self {
        Chunker {
            input,
            carry: Vec::new(),
            target,
            eof: false,
            check_head: false,
        }
    }

    /// [`Chunker::new`] for a stream refused if its start is binary data: the first read takes
    /// at least [`HEAD`] bytes, so that the verdict does not depend on `target`.
    fn checking(input: R, target: usize) -> Self {
        Chunker {
            check_head: true,
            ..Chunker::new(input, target)
        }
    }

    /// The bytes read and not handed out: after a read error, those read before it (judged as
    /// the first chunk would have been, if none was handed out).
    fn take_rest(&mut self) -> io::Result<Vec<u8>> {
        let rest = std::mem::take(&mut self.carry);
        if std::mem::take(&mut self.check_head) {
            refuse_binary(&rest)?;
        }
        Ok(rest)
    }

    /// The next chunk, or `None` at the end of the stream.
    pub fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut buf = std::mem::take(&mut self.carry);
        let mut want = match self.check_head {
            true => self.target.max(HEAD),
            false => self.target,
        };
        loop {
            if !self.eof && buf.len() < want {
                // Read straight into the buffer's spare room (no zero-filling first).
                let room = want - buf.len();
                buf.reserve_exact(room);
                match (&mut self.input).take(room as u64).read_to_end(&mut buf) {
                    Ok(n) => self.eof = n < room,
                    Err(e) => {
                        // What was read before the error is kept for `take_rest`.
                        self.carry = buf;
                        return Err(e);
                    }
                }
            }
            if std::mem::take(&mut self.check_head) {
                refuse_binary(&buf)?;
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

/// Whether the line at `line` (which follows a line break) starts a game, given that the line
/// before it starts at `prev`: it is a tag line (`[Name "…`) and the line before is not one (does
/// not start with `[`).
///
/// This is the one rule for where games start, and it holds even inside a comment or a variation
/// that was never closed: such a comment or variation ends there, and its game is counted as cut
/// short. (A comment may span lines and hold `[%clk …]` lines, which are not tag lines; a comment
/// line that reads exactly like a tag after a line that does not start with `[` would be taken
/// as a new game.) A line that starts with a UTF-8 byte-order mark and then `[` counts as
/// starting with `[`: pgn-reader skips the mark before a game and reads the tags after it as the
/// same game's.
fn starts_game(buf: &[u8], prev: usize, line: usize) -> bool {
    let before = &buf[prev..];
    let before = before.strip_prefix(b"\xef\xbb\xbf").unwrap_or(before);
    before.first() != Some(&b'[') && looks_like_tag(&buf[line..])
}

/// The offset of the first game start after `from`, which must be the start of a line (or of the
/// text); `None` if no game starts after it.
pub fn next_game_start(buf: &[u8], from: usize) -> Option<usize> {
    let mut line = from;
    loop {
        let next = line + buf[line..].iter().position(|&b| b == b'\n')? + 1;
        if starts_game(buf, line, next) {
            return Some(next);
        }
        line = next;
    }
}

/// The end of the games from `from` (a line start) that pgn-reader may read in one go: the first
/// game start after `from` at which a reader could still be inside something that began before it
/// (see below), or the end of `buf`.
///
/// Reading each game's text alone (cut at every [`next_game_start`]) is the rule; this is a
/// shortcut to it. pgn-reader ends a game's moves at a line starting with `[`, but it reads on
/// across such a line
/// - inside a `{` comment (the only construct of movetext that runs across lines; variations stop
///   there): counting braces byte by byte from `from` (a `{` opens, the next `}` closes, whatever
///   else surrounds them) finds where one may be open;
/// - inside a tag that its line does not close (a quoted value left open, a `[Name` without its
///   `]`);
/// - in a tag section that blank lines interrupt (`[Variant "Standard"]`, a blank line, then more
///   tags): until a line of movetext, the next tags are the same game's for pgn-reader.
///
/// A run ends at the first game start where any of these may hold. So the text up to that point
/// reads the same in one go as game by game, and one reader does it without stopping at every
/// game's end.
pub fn run_end(buf: &[u8], from: usize) -> usize {
    let (mut open, mut tag_open, mut in_tags) = (false, false, false);
    let mut line = from;
    for i in memchr::memchr3_iter(b'\n', b'{', b'}', &buf[from..]) {
        let i = from + i;
        match buf[i] {
            b'{' => open = true,
            b'}' => open = false,
            _ => {
                match buf[line..i].iter().find(|b| !b.is_ascii_whitespace()) {
                    Some(b'[') => {
                        in_tags = true;
                        tag_open |= buf[line] != b'[' || !closes_its_tags(&buf[line..i]);
                    }
                    // A blank line, a `;` comment or a `%` escaped line: not movetext.
                    None | Some(b';' | b'%') => {}
                    Some(_) => in_tags = false,
                }
                if (open || tag_open || in_tags) && starts_game(buf, line, i + 1) {
                    return i + 1;
                }
                line = i + 1;
            }
        }
    }
    buf.len()
}

/// Whether a line that starts with `[` closes what it opens: every quoted value closed (`\"` and
/// `\\` escaped) and a `]` at its end.
fn closes_its_tags(line: &[u8]) -> bool {
    let (mut quoted, mut escaped) = (false, false);
    for &b in line {
        if escaped {
            escaped = false;
        } else if quoted && b == b'\\' {
            escaped = true;
        } else if b == b'"' {
            quoted = !quoted;
        }
    }
    !quoted && line.trim_ascii_end().last() == Some(&b']')
}

/// The offset of the last game start in `buf` (after offset 0), by the rule of
/// [`next_game_start`]; `None` if there is none.
fn last_game_start(buf: &[u8]) -> Option<usize> {
    let mut end = buf.len();
    while let Some(nl) = buf[..end].iter().rposition(|&b| b == b'\n') {
        let line = nl + 1;
        let prev = buf[..nl]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        if starts_game(buf, prev, line) {
            return Some(line);
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
    fn a_file_that_shrinks_while_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.pgn");
        let game = "[Event \"x\"]\n\n1. e4 e5 1-0\n\n";
        std::fs::write(&path, game.repeat(10_000)).unwrap();
        let input = Input::File(path.clone());
        let mut chunks = Chunks::open(&input, Arc::new(AtomicU64::new(0)), 1 << 16).unwrap();
        assert!(chunks.next_chunk().unwrap().is_some());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(1000)
            .unwrap();
        let err = loop {
            match chunks.next_chunk() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the shrinking went unnoticed"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(err.contains("shrank"), "{err}");
    }

    #[test]
    fn games_without_blank_lines_between_them() {
        let text = "[Event \"a\"]\n1. e4 *\n[Event \"b\"]\n1. d4 *\n";
        assert_eq!(last_game_start(text.as_bytes()), Some(20));
        assert_eq!(next_game_start(text.as_bytes(), 0), Some(20));
        assert_eq!(next_game_start(text.as_bytes(), 20), None);
        // A tag line after a tag line, or after a `[%clk …]` comment line, starts nothing.
        let text = "[Event \"a\"]\n[Site \"b\"]\n\n1. e4 {\n[%clk 0:01]\n[Event \"c\"]\n} *\n";
        assert_eq!(next_game_start(text.as_bytes(), 0), None);
        assert_eq!(last_game_start(text.as_bytes()), None);
        // Nor does a tag line after one that starts with a byte-order mark and a tag.
        let text = "\u{feff}[Event \"a\"]\n[Site \"b\"]\n\n1. e4 *\n";
        assert_eq!(next_game_start(text.as_bytes(), 0), None);
    }

    /// The game starts of `text` by the definition: offset 0, and every line that starts a
    /// game by [`starts_game`] given the line before it.
    fn game_starts(text: &[u8]) -> Vec<usize> {
        let mut starts = vec![0];
        for g in 1..text.len() {
            if text[g - 1] == b'\n' {
                let prev = text[..g - 1]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                if starts_game(text, prev, g) {
                    starts.push(g);
                }
            }
        }
        starts
    }

    #[test]
    fn a_range_starts_at_the_first_game_start_at_or_after_its_offset() {
        let texts = [
            "[Event \"a\"]\n\n1. e4 { [%clk 0:01]\n[%clk 0:02]\n[Event \"no\"] } e5 1-0\n\n[Event \"b\"]\n1. d4 *\n",
            "[Event \"a\"]\r\n[Site \"x\"]\r\n\r\n1. e4 *\r\n[Event \"b\"]\r\n1. d4 *\r\n",
            "1. e4 e5 *\n[Event \"a\"]\n1. d4 *\n[Event\n\"split\"]\n1. c4 *\n[Event \"end\"]",
            "no line break at all",
            "\n\n[A \"1\"]\n\n\n[B \"2\"]\n",
            "\u{feff}[Event \"a\"]\n[Site \"b\"]\n\n1. e4 *\n\u{feff}[Event \"c\"]\n[Site \"d\"]\n1. d4 *\n",
        ];
        let dir = tempfile::tempdir().unwrap();
        for text in texts {
            let path = dir.path().join("t.pgn");
            std::fs::write(&path, text).unwrap();
            let starts = game_starts(text.as_bytes());
            let len = text.len() as u64;
            for at in 0..=len + 2 {
                let want = starts
                    .iter()
                    .map(|&g| g as u64)
                    .find(|&g| g >= at)
                    .unwrap_or(len);
                for (block, target) in [(1, 1), (2, 3), (5, 8), (SCAN_BLOCK, 1 << 16)] {
                    let mut file = File::open(&path).unwrap();
                    let got = game_start_at(&mut file, len, at, block, target).unwrap();
                    assert_eq!(
                        got, want,
                        "{text:?} at {at}, block {block}, target {target}"
                    );
                }
            }
        }
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
