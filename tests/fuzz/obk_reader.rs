//! `obk_reader`: Chessmaster (OBK) books written by the tests' encoder (`tests/common/obk.rs`:
//! gm2001.bin's tree cut to a slice, and random trees, as version 1 or 2 with or without notes),
//! mutated, then opened, probed and converted: a book or one error line, never a panic or a hang
//! (exit 1 from the binary).

use polybook::book::Book;
use polybook::book::formats::obk::read_obk;
use rand::Rng;
use rand::rngs::StdRng;
use shakmaty::{CastlingMode, Chess, Position, Role};

use crate::common::data;
use crate::common::obk::{Node, Note, encode, node, tree_of};
use crate::{Records, fuzz_book_format, mutate_records, swap_bytes};

/// A random tree of legal moves from the start (underpromotions left out), at most `budget`
/// moves, `ply` plies deep at most.
fn random_tree(rng: &mut StdRng, pos: &Chess, ply: u32, budget: &mut usize) -> Vec<Node> {
    let legal = pos.legal_moves();
    if legal.is_empty() || ply > 10 || *budget == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for _ in 0..rng.random_range(1..=legal.len().min(3)) {
        if *budget == 0 {
            break;
        }
        let m = legal[rng.random_range(0..legal.len())];
        if m.promotion().is_some_and(|r| r != Role::Queen) {
            continue;
        }
        *budget -= 1;
        let mut after = pos.clone();
        after.play_unchecked(m);
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let children = if rng.random_ratio(2, 3) {
            random_tree(rng, &after, ply + 1, budget)
        } else {
            Vec::new()
        };
        out.push(node(&uci[..4], rng.random_range(0..4), children));
    }
    out
}

/// The first `n` root moves of `tree`, each with at most its first `width` replies at every
/// level below, `depth` plies deep.
fn slice(tree: &[Node], width: usize, depth: u32) -> Vec<Node> {
    if depth == 0 {
        return Vec::new();
    }
    tree.iter()
        .take(width)
        .map(|n| node(&n.uci, n.code, slice(&n.children, width, depth - 1)))
        .collect()
}

/// A mutation of an OBK file: records' bytes set to random or edge values (flags flipped,
/// squares changed, fillers), records swapped, the counts changed, the file cut or padded.
fn mutate_obk(rng: &mut StdRng, b: Vec<u8>) -> Vec<u8> {
    let header = if b.starts_with(b"BOO!") { 12 } else { 8 };
    let records = Records {
        start: header,
        size: 2,
        keep: 0,
    };
    mutate_records(rng, b, records, 5, 40, |rng, b, i, n| {
        match rng.random_range(0..7) {
            0 => b[i] ^= [0x40, 0x80, 0xc0][rng.random_range(0..3)],
            1 => b[i] = (b[i] & 0xc0) | rng.random_range(0..64),
            2 => b[i + 1] = rng.random(),
            3 => {
                b[i] = 0;
                b[i + 1] = 0;
            }
            4 => swap_bytes(b, i, records.random(rng, n), 2),
            5 => {
                let v: u32 = match rng.random_range(0..3) {
                    0 => rng.random_range(0..=n as u32 + 2),
                    1 => u32::MAX,
                    _ => rng.random(),
                };
                let at = [4, 8][rng.random_range(0..2)].min(header - 4);
                b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            _ => return false,
        }
        true
    })
}

/// Mutated OBK books: `Book::open` gives a book or one line, and agrees with `read_obk`; a book
/// is probed; now and then the binary's `probe` and `convert` exit 0 or 1 with one line.
#[test]
fn obk_reader() {
    let gm2001 = tree_of(&Book::open(data("books/gm2001.bin")).unwrap());
    let slices = [slice(&gm2001, 3, 6), slice(&gm2001, 6, 10), gm2001];
    fuzz_book_format(
        "obk_reader",
        |rng| {
            let tree = match rng.random_range(0..8) {
                0 => slices[2].clone(),
                1 | 2 => slices[1].clone(),
                3 | 4 => slices[0].clone(),
                _ => random_tree(rng, &Chess::default(), 0, &mut 400),
            };
            let notes = [
                Note(0, 80, "Opening"),
                Note(1, 81, "!?"),
                Note(2, 82, "C20"),
            ];
            let bytes = match rng.random_range(0..3) {
                0 => encode(1, &tree, &[]),
                1 => encode(2, &tree, &[]),
                _ => encode(2, &tree, &notes[..rng.random_range(1..=3)]),
            };
            mutate_obk(rng, bytes)
        },
        |_| "in.obk",
        |input, _, book| {
            let direct = read_obk(input);
            match book {
                Ok(book) => {
                    let direct = direct.expect("Book::open read what read_obk refuses");
                    assert_eq!(direct.entries.len(), book.len());
                }
                Err(e) => {
                    if let Err(direct) = direct {
                        assert!(e.to_string().contains(&direct.0), "{e} / {direct}");
                    }
                }
            }
        },
        |_, _| {},
    );
}
