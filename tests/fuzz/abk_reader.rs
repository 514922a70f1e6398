//! `abk_reader`: Arena (ABK) books, mutated slices of `libra8.abk` and generated trees, opened,
//! probed and converted: never a panic or a hang, an error is one line (exit 1 from the binary).

use polybook::book::formats::abk::{
    ABK_HEADER_RECORDS, ABK_HEADER_SIZE, ABK_RECORD_SIZE, AbkHeader, AbkRecord,
};
use polybook::book::formats::abk_write::tree_records;
use rand::Rng;
use rand::rngs::StdRng;
use shakmaty::{CastlingMode, Move, Position};

use crate::common::data;
use crate::{Records, fuzz_book_format, mutate_records, swap_bytes};

/// The header and the first `records` records of libra8.abk (links past the slice included).
fn libra8_slice(records: usize) -> Vec<u8> {
    let all = std::fs::read(data("books/libra8.abk")).unwrap();
    all[..(ABK_HEADER_SIZE + records * ABK_RECORD_SIZE).min(all.len())].to_vec()
}

/// A random tree of legal moves from the start, written as ABK records (breadth first).
fn generated(rng: &mut StdRng) -> Vec<u8> {
    let mut written = 0;
    let records = tree_records(|pos, ply| {
        if written > 300 || ply > 8 {
            return None;
        }
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return Some(Vec::new());
        }
        let n = rng.random_range(1..=legal.len().min(4));
        let children: Vec<(Move, AbkRecord)> = (0..n)
            .filter_map(|_| {
                let m = legal[rng.random_range(0..legal.len())];
                let shakmaty::uci::UciMove::Normal {
                    from,
                    to,
                    promotion,
                } = m.to_uci(CastlingMode::Standard)
                else {
                    return None;
                };
                let record = AbkRecord {
                    from: u8::from(from),
                    to: u8::from(to),
                    promotion: promotion.map_or(0, |r| r as i8 - 1)
                        * if rng.random() { 1 } else { -1 },
                    priority: rng.random_range(0..10),
                    games: rng.random_range(0..100_000),
                    flags: u32::from(rng.random_ratio(1, 10)),
                    ..AbkRecord::default()
                };
                Some((m, record))
            })
            .collect();
        written += children.len();
        Some(children)
    });
    let mut out = AbkHeader {
        moves: records.len() as u32,
        ..AbkHeader::default()
    }
    .to_bytes();
    for r in &records {
        out.extend_from_slice(&r.to_bytes());
    }
    out
}

/// A mutation of an ABK file: fields of random records (links, squares, promotion, flags) set to
/// random or edge values, records swapped, the file cut or padded.
fn mutate_abk(rng: &mut StdRng, b: Vec<u8>) -> Vec<u8> {
    let records = Records {
        start: 0,
        size: ABK_RECORD_SIZE,
        keep: ABK_HEADER_RECORDS,
    };
    mutate_records(rng, b, records, 6, 60, |rng, b, i, n| {
        match rng.random_range(0..6) {
            0 | 1 => {
                let at = i + [20, 24][rng.random_range(0..2)];
                let v: i32 = match rng.random_range(0..4) {
                    0 => rng.random_range(ABK_HEADER_RECORDS as i32..n as i32),
                    1 => rng.random_range(-2..ABK_HEADER_RECORDS as i32),
                    2 => i32::MAX,
                    _ => (i / ABK_RECORD_SIZE) as i32,
                };
                b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            2 => b[i + rng.random_range(0..4)] = rng.random(),
            3 => b[i + 16] = rng.random(),
            4 => swap_bytes(b, i, records.random(rng, n), ABK_RECORD_SIZE),
            _ => return false,
        }
        true
    })
}

/// Mutated and generated ABK books: `Book::open` gives a book or one line; a book is probed and
/// written back as ABK and read again; now and then the binary's `probe` and `convert` exit 0 or
/// 1 with one line.
#[test]
fn abk_reader() {
    let slices = [libra8_slice(3000), libra8_slice(141_687)];
    fuzz_book_format(
        "abk_reader",
        |rng| {
            let seed = match rng.random_range(0..4) {
                0 => slices[1].clone(),
                1 => slices[0].clone(),
                _ => generated(rng),
            };
            mutate_abk(rng, seed)
        },
        |_| "in.abk",
        |_, _, book| {
            if let Ok(book) = book {
                let again = polybook::book::abk_bytes(book, "", "");
                let back = polybook::book::formats::abk::read_abk(&again).unwrap();
                assert!(back.entries.len() <= book.len());
            }
        },
        |_, _| {},
    );
}
