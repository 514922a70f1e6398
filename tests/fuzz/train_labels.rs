//! `train_labels`: `polybook train` on damaged label files.

use std::time::Duration;

use crate::datagen_resume::{damage_labels, labelled};
use crate::{assert_one_line, fuzz, run_in, said};

/// The options of every `train` run here: one short epoch.
const TRAIN: &[&str] = &["--epochs", "1", "--batch-size", "1024", "--threads", "2"];

/// Damaged label files (as [`damage_labels`] damages them) given to `train`: no panic or hang;
/// it either trains (a file cut short gives the labels of its whole blocks) and writes a whole net,
/// the size of a sound run's, or exits 1 with one line naming the label file and writes no net
/// (no file of it at all, not even a temporary one).
#[test]
fn train_labels() {
    let sound = labelled();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = format!("in.labels={}", sound.games.to_string_lossy());
    let mut args = vec!["train", "--data", &data, "-o", "net.nnue"];
    args.extend_from_slice(TRAIN);
    std::fs::write(d.join("in.labels"), &sound.labels).unwrap();
    let ran = run_in(d, &args, Duration::from_secs(60), &[]);
    assert_eq!(ran.code, Some(0), "{}", said(&ran.stderr));
    let net_size = std::fs::metadata(d.join("net.nnue")).unwrap().len();
    fuzz(
        "train_labels",
        30,
        Duration::from_secs(120),
        |rng| damage_labels(rng, &sound.labels),
        |input| {
            let _ = std::fs::remove_file(d.join("net.nnue"));
            std::fs::write(d.join("in.labels"), input).unwrap();
            let ran = run_in(d, &args, Duration::from_secs(60), &[]);
            let told = said(&ran.stderr);
            assert!(!ran.stderr.contains("panicked"), "train panics: {told}");
            let mut left: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != "in.labels")
                .collect();
            left.sort();
            match ran.code {
                Some(0) => {
                    assert_eq!(left, ["net.nnue"], "train leaves {left:?}");
                    assert_eq!(
                        std::fs::metadata(d.join("net.nnue")).unwrap().len(),
                        net_size,
                        "train writes a net of another size"
                    );
                }
                Some(1) => {
                    let last = ran.stderr.lines().last().unwrap_or("");
                    assert!(last.starts_with("polybook: error: "), "train fails: {told}");
                    assert_one_line(last);
                    assert!(
                        last.contains("in.labels"),
                        "an error not naming the label file: {told}"
                    );
                    assert!(left.is_empty(), "train fails and leaves {left:?}");
                }
                code => panic!("train ends with {code:?}: {told}"),
            }
        },
    );
}
