//! `datagen_resume`: `polybook datagen` resuming a damaged label file.

use std::path::PathBuf;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::{assert_one_line, common, fuzz, run_in, said};

/// The options of every `datagen` run here: the first 2 blocks of positions of the games, at few
/// nodes (a block takes a second or two: most of it is not the search).
pub(crate) const DATAGEN: &[&str] = &[
    "--positions",
    "2048",
    "--nodes",
    "20",
    "--no-nnue",
    "--threads",
    "2",
];

/// Bytes of the header of a label file, and of a whole block (1,024 labels and a CRC-32).
const HEADER: usize = 40;
const BLOCK_BYTES: usize = 2 * 1024 + 4;

/// The games labelled, and the label file an undamaged `datagen` run makes of them.
pub(crate) struct Labelled {
    pub(crate) games: PathBuf,
    pub(crate) labels: Vec<u8>,
}

pub(crate) fn labelled() -> &'static Labelled {
    static LABELLED: std::sync::OnceLock<Labelled> = std::sync::OnceLock::new();
    LABELLED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let games = common::data("pgn/lichess_magnus_analysed.pgn.xz");
        let out = dir.path().join("sound.labels");
        let ran = std::process::Command::new(common::BIN)
            .arg("datagen")
            .arg(&games)
            .arg("-o")
            .arg(&out)
            .args(DATAGEN)
            .arg("-q")
            .output()
            .unwrap();
        assert!(ran.status.success(), "{}", common::text(&ran.stderr));
        let labels = std::fs::read(&out).unwrap();
        assert_eq!(labels.len(), HEADER + 2 * BLOCK_BYTES, "2 whole blocks");
        Labelled { games, labels }
    })
}

/// A label file damaged as a disk, a crash or another program leaves it: bytes flipped in the
/// header, a block or a checksum, a run zeroed, cut short (in a block or at its end), junk
/// appended, a block written twice or two swapped.
pub(crate) fn damage_labels(rng: &mut StdRng, labels: &[u8]) -> Vec<u8> {
    let mut b = labels.to_vec();
    for _ in 0..rng.random_range(1..3) {
        let n = b.len();
        if n == 0 {
            break;
        }
        match rng.random_range(0..9) {
            0 if rng.random_ratio(1, 3) => {
                let i = rng.random_range(0..HEADER.min(n));
                b[i] ^= 1 << rng.random_range(0..8);
            }
            0 | 1 => {
                let i = rng.random_range(0..n);
                b[i] ^= 1 << rng.random_range(0..8);
            }
            2 => {
                // A checksum.
                let block = rng.random_range(0..2);
                let i = HEADER + block * BLOCK_BYTES + BLOCK_BYTES - 1 - rng.random_range(0..4);
                if i < n {
                    b[i] = b[i].wrapping_add(rng.random_range(1..=255));
                }
            }
            3 => {
                let i = rng.random_range(0..n);
                let end = (i + rng.random_range(1..64)).min(n);
                b[i..end].fill(0);
            }
            4 => b.truncate(rng.random_range(0..n)),
            5 => b.truncate(HEADER + rng.random_range(0..2) * BLOCK_BYTES),
            6 => {
                let junk: Vec<u8> = (0..rng.random_range(1..300))
                    .map(|_| rng.random())
                    .collect();
                b.extend(junk);
            }
            7 if n >= HEADER + 2 * BLOCK_BYTES => {
                // Block 0's bytes over block 1 (a block in the wrong place: its checksum, which
                // holds its number, is wrong there).
                let first = b[HEADER..HEADER + BLOCK_BYTES].to_vec();
                b[HEADER + BLOCK_BYTES..HEADER + 2 * BLOCK_BYTES].copy_from_slice(&first);
            }
            _ if n > HEADER => {
                let i = rng.random_range(HEADER..n);
                let end = (i + rng.random_range(1..4096)).min(n);
                let piece = b[i..end].to_vec();
                b.splice(end..end, piece);
            }
            _ => {}
        }
    }
    b
}

/// A label file damaged (bytes flipped in the header, the labels or a checksum, zeroed runs, cut
/// short, junk appended, blocks repeated or moved) given back to `datagen` with the same games and
/// options: no panic or hang; it either labels the damaged blocks again and ends with the very
/// file an undamaged run writes (saying which block was damaged when one was), or exits 1 with one
/// line naming the file and leaves the file as it was.
#[test]
fn datagen_resume() {
    let sound = labelled();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let games = sound.games.to_string_lossy().into_owned();
    fuzz(
        "datagen_resume",
        4,
        Duration::from_secs(120),
        |rng| damage_labels(rng, &sound.labels),
        |input| {
            let path = d.join("out.labels");
            std::fs::write(&path, input).unwrap();
            let mut args = vec!["datagen", &games, "-o", "out.labels", "-q"];
            args.extend_from_slice(DATAGEN);
            let ran = run_in(d, &args, Duration::from_secs(60), &[]);
            let told = said(&ran.stderr);
            assert!(!ran.stderr.contains("panicked"), "datagen panics: {told}");
            let now = std::fs::read(&path).unwrap();
            match ran.code {
                Some(0) => {
                    assert!(
                        now == sound.labels,
                        "datagen resumed a damaged file to other labels: {told}"
                    );
                    let same_prefix = input.len() >= sound.labels.len()
                        && input[..sound.labels.len()] == sound.labels[..];
                    if !same_prefix && input.len() >= sound.labels.len() {
                        assert!(
                            ran.stderr.contains("damaged"),
                            "datagen used a damaged block without a word: {told}"
                        );
                    }
                }
                Some(1) => {
                    let last = ran.stderr.lines().last().unwrap_or("");
                    assert!(
                        last.starts_with("polybook: error: "),
                        "datagen fails: {told}"
                    );
                    assert_one_line(last);
                    assert!(
                        last.contains("out.labels"),
                        "an error not naming the file: {told}"
                    );
                    assert!(now == input, "datagen fails and changes the file");
                }
                code => panic!("datagen ends with {code:?}: {told}"),
            }
        },
    );
}
