//! The label file being written by `datagen`: made, or resumed from its last whole block.
//!
//! A run first looks at what is already at the output ([`LabelWriter::prepare`]): nothing (a new
//! file), or a label file of the same positions, labelled at the same node count, whose whole,
//! undamaged blocks are kept. A file of other positions or another node count, or one that is no
//! label file, is refused and left as it is. A block whose checksum is wrong is labelled again,
//! with those after it; a file of the first format (no checksums) is written again in the
//! current one, its labels kept unchecked. The caller can say so, then opens the file
//! ([`Prepared::open`]) and appends the blocks as they are labelled ([`LabelWriter::write`]).
//!
//! The layout is [`super::data`]'s (the header, then each block's labels and its CRC-32).

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::data::{
    BLOCK, DataError, LabelFile, LabelHeader, label_file_size, read_labels, write_labels,
};

/// Why the label file cannot be made or resumed.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// The file there cannot be read, or is no label file.
    #[error(transparent)]
    Read(#[from] DataError),
    /// The file there holds labels of other positions.
    #[error("{name}: {why}; give another --output to label these games")]
    Other { name: String, why: String },
    /// The file there was labelled at another node count.
    #[error("{name}: labelled at --nodes {old}, not {new}")]
    Nodes { name: String, old: u32, new: u32 },
    /// The file cannot be written.
    #[error("{name}: cannot write: {}", crate::text::reason(.error))]
    Write { name: String, error: io::Error },
}

/// What is kept of the file at the output, checked against the run's header, before anything is
/// written: made by [`LabelWriter::prepare`], opened by [`Prepared::open`].
#[derive(Debug)]
pub struct Prepared {
    path: PathBuf,
    header: LabelHeader,
    /// The labels kept: those of the whole, undamaged blocks (all of them when the file holds
    /// every position), 0 for a new file.
    pub done: usize,
    /// The first block whose checksum is wrong: it and those after it are labelled again.
    pub damaged_block: Option<usize>,
    /// The kept labels of a file of the first format, to be written again in the current one.
    rewrite: Option<Vec<i16>>,
}

impl Prepared {
    /// Whether the file is of the first format (no checksums) and is written again in the
    /// current one.
    pub fn unchecked(&self) -> bool {
        self.rewrite.is_some()
    }

    /// Opens the file (made when missing), written again in the current format if it is of the
    /// first one, cut to the kept labels and given the run's header: the next block written is
    /// block `done / BLOCK`.
    pub fn open(self) -> Result<LabelWriter, LabelError> {
        let write_error = |error| LabelError::Write {
            name: self.path.display().to_string(),
            error,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(write_error)?;
        if let Some(labels) = &self.rewrite {
            // The new layout is written over the old one, longer by its checksums: a kill
            // half-way leaves a file whose later blocks fail their checksums, labelled again on
            // resume.
            file.seek(SeekFrom::Start(LabelHeader::SIZE as u64))
                .map_err(write_error)?;
            for (index, block) in labels.chunks(BLOCK).enumerate() {
                write_labels(&mut file, index, block).map_err(write_error)?;
            }
        }
        file.set_len(label_file_size(self.done))
            .map_err(write_error)?;
        file.seek(SeekFrom::Start(0)).map_err(write_error)?;
        file.write_all(&self.header.to_bytes())
            .map_err(write_error)?;
        file.seek(SeekFrom::End(0)).map_err(write_error)?;
        Ok(LabelWriter {
            path: self.path,
            file,
            done: self.done,
        })
    }
}

/// The open label file, its kept labels in place, to which the blocks labelled next are appended.
pub struct LabelWriter {
    path: PathBuf,
    file: File,
    done: usize,
}

impl LabelWriter {
    /// Whether games with a FEN tag are read for the label file at `path`: yes, unless the file
    /// there, to be resumed, was made by the rule that left them out.
    pub fn reads_fen(path: &Path) -> bool {
        match read_labels(path) {
            Ok(old) => old.header.selection.fen,
            Err(_) => true,
        }
    }

    /// What a run of `header` keeps of the file at `path`, checked; nothing is written yet. A
    /// missing file keeps nothing; a file that is no label file, or holds labels of other
    /// positions or of another node count, is an error.
    pub fn prepare(path: &Path, header: LabelHeader) -> Result<Prepared, LabelError> {
        let mut prepared = Prepared {
            path: path.to_path_buf(),
            header,
            done: 0,
            damaged_block: None,
            rewrite: None,
        };
        if !path.exists() {
            return Ok(prepared);
        }
        let name = path.display().to_string();
        let LabelFile {
            header: old,
            labels,
            damaged_block,
            unchecked,
        } = read_labels(path)?;
        if let Some(why) = old.mismatch(&header) {
            return Err(LabelError::Other { name, why });
        }
        if old.nodes != header.nodes {
            return Err(LabelError::Nodes {
                name,
                old: old.nodes,
                new: header.nodes,
            });
        }
        let positions = usize::try_from(header.positions).unwrap_or(usize::MAX);
        prepared.done = if labels.len() == positions {
            labels.len()
        } else {
            labels.len() / BLOCK * BLOCK
        };
        prepared.damaged_block = damaged_block;
        if unchecked {
            prepared.rewrite = Some(labels[..prepared.done].to_vec());
        }
        Ok(prepared)
    }

    /// The labels the file held when opened (its blocks before `done / BLOCK`).
    pub fn done(&self) -> usize {
        self.done
    }

    /// Appends block `index` (the blocks in order, from `done / BLOCK`).
    pub fn write(&mut self, index: usize, labels: &[i16]) -> io::Result<()> {
        write_labels(&mut self.file, index, labels)
    }

    /// The error of a failed write to this file.
    pub fn write_error(&self, error: io::Error) -> LabelError {
        LabelError::Write {
            name: self.path.display().to_string(),
            error,
        }
    }

    /// Waits for the disk.
    pub fn sync(&self) -> Result<(), LabelError> {
        self.file.sync_all().map_err(|e| self.write_error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::training::data::PositionFilter;

    /// The header of a run over `positions` positions.
    fn header(positions: u64) -> LabelHeader {
        LabelHeader {
            nodes: 100,
            selection: PositionFilter::default(),
            positions,
            fingerprint: 0x1234_5678_9abc_def0,
        }
    }

    /// The labels of block `index`: distinct in each block.
    fn block(index: usize, len: usize) -> Vec<i16> {
        (0..len).map(|i| (index * 7 + i % 100) as i16).collect()
    }

    /// A label file of `header` holding its first `blocks` blocks, written as `datagen` does.
    fn write_file(path: &Path, header: LabelHeader, blocks: usize) {
        let mut out = LabelWriter::prepare(path, header).unwrap().open().unwrap();
        let positions = header.positions as usize;
        for b in out.done() / BLOCK..blocks {
            let len = BLOCK.min(positions - b * BLOCK);
            out.write(b, &block(b, len)).unwrap();
        }
        out.sync().unwrap();
    }

    #[test]
    fn a_new_file_holds_the_header_and_the_blocks_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.labels");
        let prepared = LabelWriter::prepare(&path, header(2500)).unwrap();
        assert_eq!((prepared.done, prepared.damaged_block), (0, None));
        assert!(!prepared.unchecked());
        assert!(!path.exists(), "prepare writes nothing");
        write_file(&path, header(2500), 3);
        let file = read_labels(&path).unwrap();
        assert_eq!(file.header, header(2500));
        assert_eq!(file.labels.len(), 2500);
        assert_eq!(file.labels[..BLOCK], block(0, BLOCK)[..]);
        assert_eq!(file.labels[2 * BLOCK..], block(2, 2500 - 2 * BLOCK)[..]);
        assert!(LabelWriter::reads_fen(&path));
    }

    #[test]
    fn a_file_cut_short_is_resumed_from_its_last_whole_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.labels");
        write_file(&path, header(2500), 2);
        // A kill half-way through the third block's write.
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len + 300)
            .unwrap();
        let prepared = LabelWriter::prepare(&path, header(2500)).unwrap();
        assert_eq!((prepared.done, prepared.damaged_block), (2 * BLOCK, None));
        let out = prepared.open().unwrap();
        assert_eq!(out.done(), 2 * BLOCK);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            label_file_size(2 * BLOCK),
            "the torn block is cut off"
        );
        drop(out);
        write_file(&path, header(2500), 3);
        let file = read_labels(&path).unwrap();
        assert_eq!(file.labels.len(), 2500);
        assert_eq!(file.labels[BLOCK..2 * BLOCK], block(1, BLOCK)[..]);
        // A finished file keeps all its labels, the last block short.
        assert_eq!(
            LabelWriter::prepare(&path, header(2500)).unwrap().done,
            2500
        );
    }

    #[test]
    fn a_damaged_block_is_labelled_again_with_those_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged.labels");
        write_file(&path, header(2500), 3);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = label_file_size(BLOCK) as usize + 10; // in block 1
        bytes[at] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let prepared = LabelWriter::prepare(&path, header(2500)).unwrap();
        assert_eq!((prepared.done, prepared.damaged_block), (BLOCK, Some(1)));
        drop(prepared.open().unwrap());
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            label_file_size(BLOCK)
        );
    }

    #[test]
    fn a_file_of_other_positions_or_nodes_or_no_label_file_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.labels");
        write_file(&path, header(2500), 1);
        let before = std::fs::read(&path).unwrap();
        let other = LabelHeader {
            fingerprint: 1,
            ..header(2500)
        };
        let e = LabelWriter::prepare(&path, other).unwrap_err();
        assert!(matches!(e, LabelError::Other { .. }), "{e:?}");
        assert!(
            e.to_string()
                .ends_with("; give another --output to label these games"),
            "{e}"
        );
        let more_nodes = LabelHeader {
            nodes: 200,
            ..header(2500)
        };
        let e = LabelWriter::prepare(&path, more_nodes).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: labelled at --nodes 100, not 200", path.display())
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);

        let foreign = dir.path().join("games.pgn");
        std::fs::write(&foreign, "[Event \"x\"]\n\n1. e4 *\n".repeat(10)).unwrap();
        let e = LabelWriter::prepare(&foreign, header(2500)).unwrap_err();
        assert!(matches!(e, LabelError::Read(_)), "{e:?}");
        assert!(e.to_string().contains("not a polybook label file"), "{e}");
        assert!(LabelWriter::reads_fen(&foreign));
    }

    #[test]
    fn a_file_of_the_first_format_is_written_again_in_the_current_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.labels");
        // The first format: its header, then the labels alone (1.5 blocks of them).
        let mut bytes = header(2500).to_bytes().to_vec();
        bytes[..8].copy_from_slice(LabelHeader::MAGIC_1);
        let labels: Vec<i16> = (0..1536).map(|i| i as i16).collect();
        bytes.extend(labels.iter().flat_map(|l| l.to_le_bytes()));
        std::fs::write(&path, &bytes).unwrap();
        let prepared = LabelWriter::prepare(&path, header(2500)).unwrap();
        assert!(prepared.unchecked());
        assert_eq!(prepared.done, BLOCK);
        drop(prepared.open().unwrap());
        let file = read_labels(&path).unwrap();
        assert!(!file.unchecked);
        assert_eq!(file.labels, labels[..BLOCK]);
    }
}
