//! The analysis cache: every verdict appended to a text file beside the output as soon as it
//! comes, so that an interruption (Ctrl-C, `kill -9`, a crash) loses only the positions in flight.
//!
//! ```text
//! polybook-analysis 3 book=5f0e3c1a9b2d4e77 engine=builtin limits=nodes 20000
//! 463b96181691fc9c 25 11 e7e5 5d3c0e8a
//! 0e2a1f7c3b9d8a10 -18 10 g1f3 0b61f2d7
//! ```
//!
//! The first line names what the verdicts depend on: the book's bytes (a hash), the engine and the
//! limits. A later run resumes only with the same line; anything else is an error naming what
//! differs. Each further line is a search's identity ([`super::Task::id`]: the position's key, mixed
//! with the moves left out when the search was restricted to the moves outside the book), its score
//! (internal scale, the side to move's view), the depth, the engine's move in Polyglot's spelling
//! (`-` for none) and the CRC-32 of what comes before it on the line (8 hex digits). A line
//! whose checksum or form is wrong (a last line cut short by a kill, a line damaged on disk or
//! spliced by an editor) is not used: its position is analysed again, and the run says how many.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{AnalysisLimits, EngineChoice, Verdict};
use crate::book::{Book, RawMove};

/// The cache of the analysed book written to `output`: beside it, `OUT.bin.analysis`.
pub fn cache_path(output: &Path) -> PathBuf {
    let mut s = output.as_os_str().to_owned();
    s.push(".analysis");
    PathBuf::from(s)
}

/// The cache's first line for a run: what makes a cache belong to it (the format's version, a
/// hash of the book's entries, the engine, the limits). A cache with another first line is
/// another run's ([`Cache::open`] refuses it, naming what differs).
pub fn cache_header(book: &Book, engine: &EngineChoice, limits: &AnalysisLimits) -> String {
    format!(
        "polybook-analysis 3 book={:016x} engine={} limits={}",
        book_hash(book),
        engine.label().replace(char::is_whitespace, "_"),
        limits.uci().replace(' ', ":")
    )
}

/// A hash of the book's entries (FNV-1a over their bytes), naming the book in the cache.
fn book_hash(book: &Book) -> u64 {
    fnv1a(book.entries().flat_map(|e| e.to_bytes()))
}

/// FNV-1a (64 bits) over `bytes`: the cache's hashes of a book and of a set of book moves.
pub(super) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The open cache: what it held, and the file to append to.
pub struct Cache {
    path: PathBuf,
    file: File,
    /// The verdicts by search identity ([`super::Task::id`]).
    pub verdicts: HashMap<u64, Verdict>,
    /// Whole lines read back whose checksum or form was wrong: not used, their positions are
    /// analysed again.
    pub damaged: usize,
}

/// Why the cache cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{}: {}", .0.display(), crate::text::reason(.1))]
    Io(PathBuf, io::Error),
    #[error(
        "{}: the analysis cache of another run ({what}); remove it or choose another output",
        .path.display()
    )]
    Other { path: PathBuf, what: String },
    #[error(
        "{}: {} positions analysed by an earlier run: add --resume to carry on, or remove it to start again",
        .path.display(), .count
    )]
    Exists { path: PathBuf, count: usize },
}

impl Cache {
    /// Opens the cache at `path` for `header`: created when missing; with `resume`, its verdicts
    /// read (a torn last line cut off); without, an existing cache with verdicts is an error.
    pub fn open(path: &Path, header: &str, resume: bool) -> Result<Cache, CacheError> {
        let io_err = |e| CacheError::Io(path.to_path_buf(), e);
        let mut verdicts = HashMap::new();
        let text = match std::fs::read(path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(e)),
        };
        let mut keep = 0usize;
        let mut damaged = 0;
        if let Some(bytes) = &text {
            // Only whole lines count: a kill can leave the last one cut short.
            let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let body = String::from_utf8_lossy(&bytes[..whole]);
            let mut lines = body.lines();
            match lines.next() {
                None => {}
                Some(first) if first == header => {
                    for line in lines {
                        match parse_line(line) {
                            Some((key, verdict)) => {
                                verdicts.insert(key, verdict);
                            }
                            None => damaged += 1,
                        }
                    }
                    keep = whole;
                }
                Some(first) => {
                    return Err(CacheError::Other {
                        path: path.to_path_buf(),
                        what: differs(first, header),
                    });
                }
            }
            if !resume && !verdicts.is_empty() {
                return Err(CacheError::Exists {
                    path: path.to_path_buf(),
                    count: verdicts.len(),
                });
            }
            if !resume {
                verdicts.clear();
                keep = 0;
                damaged = 0;
            }
        }
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(path)
            .map_err(io_err)?;
        file.set_len(keep as u64).map_err(io_err)?;
        use std::io::Seek;
        file.seek(io::SeekFrom::End(0)).map_err(io_err)?;
        if keep == 0 {
            writeln!(file, "{header}").map_err(io_err)?;
        }
        Ok(Cache {
            path: path.to_path_buf(),
            file,
            verdicts,
            damaged,
        })
    }

    /// Appends one verdict, under its search's identity (one `write`: a kill leaves whole lines
    /// and at most one torn line).
    pub fn add(&mut self, id: u64, v: Verdict) -> Result<(), CacheError> {
        let best = v.best.map_or("-".to_string(), |m| m.to_string());
        let body = format!("{id:016x} {} {} {best}", v.score, v.depth);
        let line = format!("{body} {:08x}\n", crc32fast::hash(body.as_bytes()));
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| CacheError::Io(self.path.clone(), e))?;
        self.verdicts.insert(id, v);
        Ok(())
    }

    /// Waits for the disk.
    pub fn sync(&self) -> Result<(), CacheError> {
        self.file
            .sync_data()
            .map_err(|e| CacheError::Io(self.path.clone(), e))
    }
}

/// A verdict line: its key and verdict when its form and checksum are right.
fn parse_line(line: &str) -> Option<(u64, Verdict)> {
    let (body, crc) = line.rsplit_once(' ')?;
    if crc.len() != 8 || u32::from_str_radix(crc, 16).ok()? != crc32fast::hash(body.as_bytes()) {
        return None;
    }
    let mut w = body.split(' ');
    let key = u64::from_str_radix(w.next()?, 16).ok()?;
    let score = w.next()?.parse().ok()?;
    let depth = w.next()?.parse().ok()?;
    let best = match w.next()? {
        "-" => None,
        m => Some(RawMove::from_uci_str(m)?),
    };
    w.next()
        .is_none()
        .then_some((key, Verdict { score, depth, best }))
}

/// What differs between a cache's first line and this run's: the fields that are not equal.
fn differs(found: &str, wanted: &str) -> String {
    if !found.starts_with("polybook-analysis ") {
        return "its first line is not an analysis cache's".to_string();
    }
    let version = |s: &str| s.split_whitespace().nth(1).map(str::to_string);
    if version(found) != version(wanted) {
        return format!(
            "made by another version of polybook (cache format {}, not {})",
            version(found).unwrap_or_default(),
            version(wanted).unwrap_or_default()
        );
    }
    let fields = |s: &str| -> Vec<(String, String)> {
        s.split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (f, w) = (fields(found), fields(wanted));
    let mut out = Vec::new();
    for (k, v) in &w {
        match f.iter().find(|(fk, _)| fk == k) {
            Some((_, fv)) if fv == v => {}
            Some((_, fv)) => out.push(format!("{k} {fv}, not {v}")),
            None => out.push(format!("no {k}")),
        }
    }
    if out.is_empty() {
        format!("made with other settings: {found}")
    } else {
        out.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::player::EngineSpec;

    /// A book of entries given as (key, move, weight).
    fn book(entries: &[(u64, u16, u16)]) -> Book {
        let bytes = entries
            .iter()
            .flat_map(|&(key, mv, weight)| {
                let mut b = key.to_be_bytes().to_vec();
                b.extend(mv.to_be_bytes());
                b.extend(weight.to_be_bytes());
                b.extend(0u32.to_be_bytes());
                b
            })
            .collect();
        Book::from_bytes("test.bin", bytes).unwrap()
    }

    fn nodes(n: u64) -> AnalysisLimits {
        AnalysisLimits {
            nodes: Some(n),
            depth: None,
            movetime: None,
        }
    }

    #[test]
    fn the_cache_lies_beside_the_output() {
        assert_eq!(
            cache_path(Path::new("out/guide.bin")),
            Path::new("out/guide.bin.analysis")
        );
    }

    #[test]
    fn the_header_names_the_book_the_engine_and_the_limits() {
        let a = book(&[
            (0x463b_9618_1691_fc9c, 0x031c, 10),
            (0x823c_9b50_fd11_4196, 0x0a6b, 5),
        ]);
        let builtin = EngineChoice::Builtin { hash_mb: 16 };
        let header = cache_header(&a, &builtin, &nodes(20_000));
        assert!(header.starts_with("polybook-analysis 3 book="), "{header}");
        assert!(
            header.ends_with(" engine=builtin limits=nodes:20000"),
            "{header}"
        );
        // The table size is no part of it: the scores do not depend on it.
        let bigger = EngineChoice::Builtin { hash_mb: 64 };
        assert_eq!(cache_header(&a, &bigger, &nodes(20_000)), header);
        // Another weight is another book; other limits or another engine another run.
        let b = book(&[
            (0x463b_9618_1691_fc9c, 0x031c, 11),
            (0x823c_9b50_fd11_4196, 0x0a6b, 5),
        ]);
        assert_ne!(cache_header(&b, &builtin, &nodes(20_000)), header);
        assert_ne!(cache_header(&a, &builtin, &nodes(20_001)), header);
        let exe = Path::new("polybook");
        let uci = EngineChoice::Uci(EngineSpec::parse("cmd:stockfish -x", exe).unwrap());
        let other = cache_header(&a, &uci, &nodes(20_000));
        assert_ne!(other, header);
        // Its label's spaces are not: the line stays five fields.
        assert!(other.contains(" engine=cmd:stockfish_-x "), "{other}");
    }
}
