//! `uci_session`: random UCI sessions, some mangled, run through the UCI loop in process.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::{common, fen_seeds, fuzz, mutate};

/// A random UCI session: commands a GUI sends, in any order, some mangled.
fn uci_stream(rng: &mut StdRng, fens: &[Vec<u8>], book: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.random_range(1..40) {
        let line = match rng.random_range(0..16) {
            0 => "uci".to_string(),
            1 => "isready".to_string(),
            2 => "ucinewgame".to_string(),
            3 => "position startpos".to_string(),
            4 => "position startpos moves e2e4 e7e5 g1f3 b8c6 f1b5".to_string(),
            5 => format!(
                "position fen {} moves e2e4",
                String::from_utf8_lossy(&fens[rng.random_range(0..fens.len())])
            ),
            6 => format!("go depth {}", rng.random_range(0..5)),
            7 => format!("go nodes {}", rng.random_range(0..3000)),
            8 => format!("go movetime {}", rng.random_range(0..20)),
            9 => format!(
                "go wtime {} btime {} winc 0 binc 0",
                rng.random_range(0..200),
                rng.random_range(0..200)
            ),
            10 => "go infinite".to_string(),
            11 => "stop".to_string(),
            12 => format!("setoption name Hash value {}", rng.random_range(0..32)),
            13 => format!("setoption name BookFile value {}", book.display()),
            14 => "setoption name OwnBook value true".to_string(),
            _ => format!("go mate {}", rng.random_range(0..4)),
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    if rng.random_ratio(1, 3) {
        out = mutate(
            rng,
            &[out],
            &[
                b" ",
                b"\n",
                b"go ",
                b"position ",
                b"moves ",
                b"fen ",
                b"\0",
                b"\r",
            ],
            16 << 10,
        );
    }
    out
}

/// Random UCI sessions: the loop never panics or hangs, and always ends when its input ends.
#[test]
fn uci_session() {
    let fens = fen_seeds();
    let book = common::data("books/gm2001.bin");
    fuzz(
        "uci_session",
        150,
        Duration::from_secs(60),
        |rng| uci_stream(rng, &fens, &book),
        |input| {
            let output = Shared::default();
            polybook::uci::run(std::io::Cursor::new(input.to_vec()), output.clone());
            let text = output.0.lock().unwrap();
            assert!(
                text.len() < 1 << 24,
                "the engine printed {} bytes",
                text.len()
            );
        },
    );
}

/// Output collected from the UCI loop's threads.
#[derive(Clone, Default)]
struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
