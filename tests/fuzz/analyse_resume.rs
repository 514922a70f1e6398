//! `analyse_resume`: `polybook analyse --resume` on a damaged analysis cache.

use std::path::Path;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::{assert_one_line, common, fuzz, mutate, run_in, said};

/// The book analysed, the limit per position, and what an undamaged run makes of it: the book
/// written and the cache beside it.
struct Analysed {
    book: std::path::PathBuf,
    expected: Vec<u8>,
    cache: Vec<u8>,
}

const NODES: &str = "200";

fn analysed(dir: &Path) -> Analysed {
    let book = common::data("books/rodent3_guide.bin");
    let out = dir.join("whole.bin");
    let ran = std::process::Command::new(common::BIN)
        .args(["analyse", "-q", "--nodes", NODES, "-o"])
        .arg(&out)
        .arg(&book)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", common::text(&ran.stderr));
    Analysed {
        expected: std::fs::read(&out).unwrap(),
        cache: std::fs::read(dir.join("whole.bin.analysis")).unwrap(),
        book,
    }
}

/// The cache damaged as a crash, a disk or another program leaves it: bytes flipped, cut short,
/// lines repeated, swapped, dropped or joined, line ends made CRLF, junk appended (a line of
/// it, or bytes without a line end), and the byte-level mutations.
fn damage(rng: &mut StdRng, cache: &[u8]) -> Vec<u8> {
    let text = cache.to_vec();
    let mut lines: Vec<Vec<u8>> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let n = lines.len();
    for _ in 0..rng.random_range(1..4) {
        // Line 0 is the header: it is damaged only now and then.
        let i = if rng.random_ratio(1, 20) || n < 2 {
            0
        } else {
            rng.random_range(1..n)
        };
        // A line that earlier damage emptied, or a cache cut to its header, is left as it is.
        if i >= lines.len() || lines[i].is_empty() || lines.len() < 2 {
            continue;
        }
        match rng.random_range(0..9) {
            0 => {
                let line = &mut lines[i];
                let j = rng.random_range(0..line.len());
                line[j] ^= 1 << rng.random_range(0..8);
            }
            1 => {
                let line = lines[i].clone();
                let to = rng.random_range(0..=lines.len());
                lines.insert(to, line);
            }
            2 => {
                let j = rng.random_range(1..lines.len().max(2)).min(lines.len() - 1);
                lines.swap(i, j);
            }
            3 => {
                lines.remove(i);
            }
            4 if i + 1 < lines.len() => {
                let next = lines.remove(i + 1);
                let cut = rng.random_range(0..lines[i].len());
                lines[i].truncate(cut);
                lines[i].extend_from_slice(&next[rng.random_range(0..=next.len())..]);
            }
            5 => lines[i].push(b'\r'),
            6 => {
                let cut = rng.random_range(0..lines[i].len());
                lines[i].truncate(cut);
            }
            7 => {
                let at = rng.random_range(0..=lines[i].len());
                lines[i].insert(at, b' ');
            }
            _ => {
                let j = rng.random_range(0..lines[i].len());
                lines[i][j] = rng.random_range(b'0'..=b'f');
            }
        }
    }
    let mut out: Vec<u8> = lines.join(&b'\n');
    out.push(b'\n');
    match rng.random_range(0..6) {
        0 => {
            let junk: Vec<u8> = (0..rng.random_range(1..200))
                .map(|_| rng.random())
                .collect();
            out.extend(junk);
        }
        1 => out.extend_from_slice(b"0123456789abcdef 12 3 deadbeef\n"),
        2 => {
            let cut = rng.random_range(0..=out.len());
            out.truncate(cut);
        }
        3 => out = mutate(rng, &[out], &[b"\n", b" ", b"\r\n", b"0"], 1 << 20),
        _ => {}
    }
    out
}

/// The lines of a cache after its header that a run may use, each without a trailing `\r` and
/// in lower case (its hexadecimal numbers are read in either case).
fn body_lines(cache: &[u8]) -> Vec<Vec<u8>> {
    let whole = cache.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    cache[..whole]
        .split(|&b| b == b'\n')
        .skip(1)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_ascii_lowercase())
        .filter(|l| !l.is_empty())
        .collect()
}

/// An analysis cache damaged (bytes flipped, cut short, lines repeated, swapped, dropped, joined,
/// CRLF line ends, junk appended) resumed by `analyse --resume`: no panic or hang; the run
/// either writes the very book an undamaged run writes, saying that damaged lines were analysed
/// again when the cache has a line that is none of the undamaged run's, or (the header line
/// damaged) exits 1 with one line naming the cache and writes no book.
#[test]
fn analyse_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sound = analysed(d);
    let good_lines = body_lines(&sound.cache);
    let book = sound.book.to_string_lossy().into_owned();
    fuzz(
        "analyse_resume",
        40,
        Duration::from_secs(120),
        |rng| damage(rng, &sound.cache),
        |input| {
            let (out, cache) = (d.join("out.bin"), d.join("out.bin.analysis"));
            let _ = std::fs::remove_file(&out);
            std::fs::write(&cache, input).unwrap();
            let args = [
                "analyse", &book, "-o", "out.bin", "--nodes", NODES, "--resume", "-q",
            ];
            let ran = run_in(d, &args, Duration::from_secs(60), &[]);
            let told = said(&ran.stderr);
            assert!(!ran.stderr.contains("panicked"), "analyse panics: {told}");
            match ran.code {
                Some(0) => {
                    assert!(
                        std::fs::read(&out).is_ok_and(|b| b == sound.expected),
                        "the resumed book differs from an undamaged run's"
                    );
                    let header = sound.cache.split(|&b| b == b'\n').next().unwrap();
                    let used_header = input.split(|&b| b == b'\n').next().unwrap();
                    let damaged = used_header == header
                        && body_lines(input).iter().any(|l| !good_lines.contains(l));
                    if damaged {
                        assert!(
                            ran.stderr.contains("damaged lines")
                                || ran.stderr.contains("damaged line"),
                            "damaged lines used without a word: {told}"
                        );
                    }
                }
                Some(1) => {
                    let last = ran.stderr.lines().last().unwrap_or("");
                    assert!(
                        ran.stderr.lines().count() == 1,
                        "analyse fails saying: {told}"
                    );
                    assert_one_line(last);
                    assert!(
                        last.contains("out.bin.analysis"),
                        "an error not naming the cache: {told}"
                    );
                    assert!(!out.exists(), "analyse fails and writes a book");
                }
                code => panic!("analyse ends with {code:?}: {told}"),
            }
        },
    );
}
