//! `polybook split`: one PGN input (plain or compressed, or standard input) cut into
//! zstd-compressed parts of N games each, `part-00000.pgn.zst`, `part-00001.pgn.zst`, …
//!
//! The input is read as the build reads it, in chunks of whole games ([`Chunks`]), and cut only
//! where a game starts by the build's one rule ([`next_game_start`]). Each part is a run of the
//! input's bytes that starts at a game start, so it reads as the same games (a part's first
//! byte starts a game, and every game start inside it is one in the input): the tally of the
//! parts, read in name order, is the tally of the input. Memory stays at a chunk or two and
//! the compressor's window, whatever the input's size.
//!
//! Each part is written through an [`AtomicFile`]: a part has its final name only once it is
//! complete, so an interruption or a kill leaves complete parts and no half one.

use std::io::{BufWriter, Write};
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use thiserror::Error;

use super::Progress;
use super::input::{Chunks, Input, next_game_start};
use crate::atomic::AtomicFile;
use crate::text::{quote_path, reason};

/// Why a split stopped.
#[derive(Debug, Error)]
pub enum SplitError {
    #[error(transparent)]
    Input(#[from] crate::pgn::input::InputError),
    #[error("{dir}: {why}")]
    Folder { dir: String, why: String },
    #[error("{path}: cannot write: {why}")]
    Write { path: String, why: String },
    #[error("interrupted; {parts} complete parts ({games} games) left in {dir}")]
    Interrupted { dir: String, parts: u64, games: u64 },
}

/// How to split.
#[derive(Clone, Debug)]
pub struct SplitOptions {
    /// Games per part; the last part may have fewer.
    pub games: NonZeroU64,
    /// The zstd level of the parts.
    pub level: i32,
    /// Wait for each part to reach the disk before it takes its name.
    pub fsync: bool,
}

/// What a split wrote.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SplitReport {
    /// Games read (and written): the pieces of text that start at game starts.
    pub games: u64,
    /// Parts written.
    pub parts: u64,
    /// Bytes of PGN read (after decompression).
    pub bytes: u64,
    /// The parts' paths, in order.
    pub paths: Vec<PathBuf>,
}

/// The name of part `index` with at least `width` digits.
fn part_name(index: u64, width: usize) -> String {
    format!("part-{index:0width$}.pgn.zst")
}

/// The fewest digits of a part's number: enough for 100,000 parts. Past that every name so far
/// is given one more digit, so that the names sort in the parts' order.
const MIN_WIDTH: usize = 5;

/// The part being written.
struct Part {
    encoder: zstd::Encoder<'static, BufWriter<AtomicFile>>,
    path: PathBuf,
    games: u64,
}

/// Splits `input` into parts of `opts.games` games in the folder `dir`, which must be missing
/// (it is made) or empty: parts left from another split would be read with these. `cancel`
/// stops it between two games: the parts written so far stay, whole; the one being written is
/// dropped.
pub fn split_pgn(
    input: &Input,
    dir: &Path,
    opts: &SplitOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<SplitReport, SplitError> {
    check_folder(dir)?;
    let read_err = |e: std::io::Error| SplitError::Input(input.read_error(&e));
    let raw_bytes = Arc::new(AtomicU64::new(0));
    let mut chunks = Chunks::open(input, raw_bytes.clone(), 1 << 20).map_err(read_err)?;
    // The first chunk before the folder: an input that is not PGN leaves nothing behind.
    let mut next = chunks.next_chunk().map_err(read_err)?;
    std::fs::create_dir_all(dir).map_err(|e| SplitError::Folder {
        dir: quote_path(dir),
        why: format!("cannot make it: {}", reason(&e)),
    })?;
    let mut report = SplitReport::default();
    let mut width = MIN_WIDTH;
    let mut part: Option<Part> = None;
    while let Some(chunk) = next.take() {
        report.bytes += chunk.len() as u64;
        // The chunk starts at a game start, and so does every piece cut here.
        let mut at = 0;
        while at < chunk.len() {
            if cancel.load(Ordering::Relaxed) {
                return Err(SplitError::Interrupted {
                    dir: quote_path(dir),
                    parts: report.parts,
                    games: report.games - part.map_or(0, |p| p.games),
                });
            }
            let next = next_game_start(&chunk, at).unwrap_or(chunk.len());
            let text = &chunk[at..next];
            let mut current = match part.take() {
                Some(p) => p,
                None => {
                    if report.parts == 10u64.pow(width as u32) {
                        widen(dir, &mut report.paths, &mut width)?;
                    }
                    new_part(dir.join(part_name(report.parts, width)), opts.level)?
                }
            };
            current
                .encoder
                .write_all(text)
                .map_err(|e| SplitError::Write {
                    path: quote_path(&current.path),
                    why: reason(&e),
                })?;
            // Only the text before the first game can be blank (lines before the first tag):
            // it goes with the first game, and counts as none.
            if !text.iter().all(u8::is_ascii_whitespace) {
                current.games += 1;
                report.games += 1;
            }
            if current.games == opts.games.get() {
                report.paths.push(finish(current, opts.fsync)?);
                report.parts += 1;
            } else {
                part = Some(current);
            }
            at = next;
        }
        progress.update(raw_bytes.load(Ordering::Relaxed), report.games);
        next = chunks.next_chunk().map_err(read_err)?;
    }
    if let Some(last) = part.take() {
        report.paths.push(finish(last, opts.fsync)?);
        report.parts += 1;
    }
    Ok(report)
}

/// Checks that the folder is missing or empty.
fn check_folder(dir: &Path) -> Result<(), SplitError> {
    let err = |why: String| SplitError::Folder {
        dir: quote_path(dir),
        why,
    };
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Ok(false) => Err(err(
            "not empty; split writes its parts into a new or empty folder (parts of another \
             split would be read with them)"
                .into(),
        )),
        Ok(true) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if dir.exists() && !dir.is_dir() => Err(err(
            "not a folder; split writes its parts into a folder".into(),
        )),
        Err(e) => Err(err(format!("cannot read it: {}", reason(&e)))),
    }
}

fn new_part(path: PathBuf, level: i32) -> Result<Part, SplitError> {
    let write_err = |e: std::io::Error| SplitError::Write {
        path: quote_path(&path),
        why: reason(&e),
    };
    let file = AtomicFile::create(&path).map_err(write_err)?;
    let encoder =
        zstd::Encoder::new(BufWriter::with_capacity(1 << 16, file), level).map_err(write_err)?;
    Ok(Part {
        encoder,
        path,
        games: 0,
    })
}

/// Ends a part's compressed stream and gives the part its name.
fn finish(part: Part, fsync: bool) -> Result<PathBuf, SplitError> {
    let write_err = |e: std::io::Error| SplitError::Write {
        path: quote_path(&part.path),
        why: reason(&e),
    };
    let buffered = part.encoder.finish().map_err(write_err)?;
    let file = buffered
        .into_inner()
        .map_err(|e| write_err(e.into_error()))?;
    file.commit(fsync).map_err(write_err)?;
    Ok(part.path)
}

/// Gives every part so far one more digit (`part-99999` becomes `part-099999`), so that the names
/// still sort in the parts' order once `part-100000` comes.
fn widen(dir: &Path, paths: &mut [PathBuf], width: &mut usize) -> Result<(), SplitError> {
    *width += 1;
    for (index, path) in paths.iter_mut().enumerate() {
        let wider = dir.join(part_name(index as u64, *width));
        std::fs::rename(&*path, &wider).map_err(|e| SplitError::Write {
            path: quote_path(&wider),
            why: reason(&e),
        })?;
        *path = wider;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder's parts, decompressed, in name order.
    fn parts(dir: &Path) -> Vec<String> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| {
                String::from_utf8(zstd::decode_all(std::fs::File::open(p).unwrap()).unwrap())
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn parts_hold_n_games_and_add_up_to_the_input() {
        let games: Vec<String> = (0..23)
            .map(|i| format!("[Event \"{i}\"]\n\n1. e4 {{ [%clk 0:01]\n[%clk 0:02] }} e5 *\n\n"))
            .collect();
        let text = format!("\n\n{}", games.concat());
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.pgn");
        std::fs::write(&input, &text).unwrap();
        let out = dir.path().join("parts");
        let opts = SplitOptions {
            games: NonZeroU64::new(5).unwrap(),
            level: 3,
            fsync: false,
        };
        let report = split_pgn(
            &Input::File(input),
            &out,
            &opts,
            &AtomicBool::new(false),
            &(),
        )
        .unwrap();
        assert_eq!((report.games, report.parts), (23, 5));
        let got = parts(&out);
        assert_eq!(got.concat(), text);
        for (i, part) in got.iter().enumerate() {
            assert_eq!(part.matches("[Event ").count(), if i < 4 { 5 } else { 3 });
        }
        assert_eq!(part_name(7, MIN_WIDTH), "part-00007.pgn.zst");
        // Widening keeps the order of the names.
        let mut paths = report.paths.clone();
        let mut width = MIN_WIDTH;
        widen(&out, &mut paths, &mut width).unwrap();
        assert!(paths[4].ends_with("part-000004.pgn.zst"), "{paths:?}");
        assert_eq!(parts(&out).concat(), text);
    }
}
