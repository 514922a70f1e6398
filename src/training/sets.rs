//! The labelled data sets `train` reads: each a label file and the games it was made from
//! (`LABELS=GAMES[,GAMES…]`), the games read again as `datagen` read them to rebuild the positions
//! the file scores.
//!
//! A set is opened in two steps, so that every label file is checked before any game is read:
//! [`LabelledSet::open`] reads the label file (refusing one with a damaged block: its labels are
//! not trusted) and finds the games; [`LabelledSet::samples`] reads the games, checks that they
//! give the positions the file was labelled for (their count and fingerprint) and pairs each
//! position with its label.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use super::Sample;
use super::data::{BLOCK, DataError, LabelHeader, enumerate, read_labels, samples};
use crate::pgn::input::{Input, InputError, expand};
use crate::text::quote;

/// Why a labelled data set cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// The set is not of the form `LABELS=GAMES[,GAMES…]` (a usage error).
    #[error("--data expects LABELS=GAMES[,GAMES…], got {}", quote(.0))]
    Form(String),
    /// The label file cannot be read, or a game file cannot be.
    #[error(transparent)]
    Data(#[from] DataError),
    /// A block of the label file is damaged: `datagen` labels it again.
    #[error(
        "{}: block {block} (positions {first} to {last}) is damaged (wrong checksum): run datagen with the same games and options on it to label it again",
        quote(.labels)
    )]
    Damaged {
        labels: String,
        block: usize,
        first: usize,
        last: usize,
    },
    /// A game file or folder cannot be found.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The games do not give the positions the labels are of.
    #[error(
        "--data {}: {why}: give the games it was made from, in the same order",
        quote(.set)
    )]
    Mismatch { set: String, why: String },
    /// The stop flag was set while the games were read.
    #[error("stopped")]
    Stopped,
}

/// A label file read and the games it was made from found, not read yet.
#[derive(Debug)]
pub struct LabelledSet {
    /// The set as given: `LABELS=GAMES[,GAMES…]`.
    pub set: String,
    /// The label file's header.
    pub header: LabelHeader,
    /// The labels so far, in position order (whole blocks, or all of them).
    pub labels: Vec<i16>,
    /// The games, in the order given.
    pub inputs: Vec<Input>,
}

impl LabelledSet {
    /// Reads the label file of `set` (`LABELS=GAMES[,GAMES…]`) and finds its games.
    pub fn open(set: &str) -> Result<LabelledSet, SetError> {
        let (labels, games) = set
            .split_once('=')
            .ok_or_else(|| SetError::Form(set.to_string()))?;
        let games: Vec<PathBuf> = games.split(',').map(PathBuf::from).collect();
        let file = read_labels(labels.as_ref())?;
        if let Some(block) = file.damaged_block {
            return Err(SetError::Damaged {
                labels: labels.to_string(),
                block,
                first: block * BLOCK,
                last: ((block + 1) * BLOCK).min(file.header.positions as usize) - 1,
            });
        }
        Ok(LabelledSet {
            set: set.to_string(),
            header: file.header,
            labels: file.labels,
            inputs: expand(&games)?,
        })
    }

    /// The label file's name, as given.
    pub fn labels_name(&self) -> &str {
        self.set.split_once('=').map_or("", |d| d.0)
    }

    /// The bytes of the games, when known.
    pub fn size(&self) -> Option<u64> {
        self.inputs.iter().map(|i| i.size()).sum()
    }

    /// The games read again and their positions checked against the label file's: the labelled
    /// samples, split as [`samples`] splits them (training, validation).
    pub fn samples(
        &self,
        progress: &dyn crate::pgn::Progress,
        stop: &AtomicBool,
    ) -> Result<(Vec<Sample>, Vec<Sample>), SetError> {
        let (positions, fingerprint, _) =
            enumerate(&self.inputs, self.header.selection, progress, stop).map_err(
                |e| match e {
                    DataError::Stopped => SetError::Stopped,
                    e => SetError::Data(e),
                },
            )?;
        let read = LabelHeader {
            positions: positions.len() as u64,
            fingerprint,
            ..self.header
        };
        if let Some(why) = self.header.mismatch(&read) {
            return Err(SetError::Mismatch {
                set: self.set.clone(),
                why,
            });
        }
        Ok(samples(&positions, &self.labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::training::data::PositionFilter;
    use crate::training::labels::LabelWriter;
    use std::path::Path;

    const GAMES: &str = "[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 1-0\n\n\
[Event \"b\"]\n[Result \"0-1\"]\n\n1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Bd3 d5 6. Nf3 c5 7. O-O Nc6 8. a3 Bxc3 9. bxc3 dxc4 10. Bxc4 Qc7 0-1\n\n";

    const OTHER: &str = "[Event \"c\"]\n[Result \"1/2-1/2\"]\n\n1. c4 e5 2. Nc3 Nf6 3. Nf3 Nc6 4. g3 d5 5. cxd5 Nxd5 6. Bg2 Nb6 7. O-O Be7 8. d3 O-O 9. a3 Be6 10. b4 f6 1/2-1/2\n\n";

    /// Writes `games` and a label file of all their positions (every one labelled 10) beside
    /// them, as `datagen --every 1 --nodes 1` would; the set's text.
    fn labelled(dir: &Path, games: &str) -> String {
        let pgn = dir.join("games.pgn");
        std::fs::write(&pgn, games).unwrap();
        let selection = PositionFilter {
            every: 1,
            ..PositionFilter::default()
        };
        let inputs = expand(std::slice::from_ref(&pgn)).unwrap();
        let (positions, fingerprint, _) =
            enumerate(&inputs, selection, &(), &AtomicBool::new(false)).unwrap();
        assert!(positions.len() > 10);
        let header = LabelHeader {
            nodes: 1,
            selection,
            positions: positions.len() as u64,
            fingerprint,
        };
        let labels = dir.join("games.labels");
        let mut out = LabelWriter::prepare(&labels, header)
            .unwrap()
            .open()
            .unwrap();
        out.write(0, &vec![10; positions.len()]).unwrap();
        format!("{}={}", labels.display(), pgn.display())
    }

    #[test]
    fn a_set_gives_a_sample_per_labelled_position() {
        let dir = tempfile::tempdir().unwrap();
        let set = LabelledSet::open(&labelled(dir.path(), GAMES)).unwrap();
        assert_eq!(
            set.labels_name(),
            dir.path().join("games.labels").display().to_string()
        );
        assert_eq!(set.labels.len() as u64, set.header.positions);
        let (train, validation) = set.samples(&(), &AtomicBool::new(false)).unwrap();
        // Two games, neither a tenth one: all in the training set.
        assert_eq!((train.len(), validation.len()), (set.labels.len(), 0));
        assert!(train.iter().all(|s| s.score == 10));
    }

    #[test]
    fn other_games_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let set = labelled(dir.path(), GAMES);
        std::fs::write(dir.path().join("games.pgn"), [GAMES, OTHER].concat()).unwrap();
        let e = LabelledSet::open(&set)
            .unwrap()
            .samples(&(), &AtomicBool::new(false))
            .unwrap_err();
        assert!(matches!(e, SetError::Mismatch { .. }), "{e:?}");
        assert!(
            e.to_string()
                .ends_with(": give the games it was made from, in the same order"),
            "{e}"
        );
    }

    #[test]
    fn a_damaged_label_file_or_a_set_without_games_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let set = labelled(dir.path(), GAMES);
        let e = LabelledSet::open("games.labels").unwrap_err();
        assert!(matches!(e, SetError::Form(_)), "{e:?}");
        let labels = dir.path().join("games.labels");
        let mut bytes = std::fs::read(&labels).unwrap();
        bytes[LabelHeader::SIZE] ^= 1;
        std::fs::write(&labels, &bytes).unwrap();
        let e = LabelledSet::open(&set).unwrap_err();
        assert!(
            matches!(
                e,
                SetError::Damaged {
                    block: 0,
                    first: 0,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("block 0 (positions 0 to "), "{e}");
    }

    #[test]
    fn a_stop_while_reading_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let set = LabelledSet::open(&labelled(dir.path(), GAMES)).unwrap();
        let e = set.samples(&(), &AtomicBool::new(true)).unwrap_err();
        assert!(matches!(e, SetError::Stopped), "{e:?}");
    }
}
