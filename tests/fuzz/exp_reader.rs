//! `exp_reader`: experience files (`.exp`) of BrainLearn and SugaR, generated from random games
//! and mutated (fields set to edge values, records swapped, keys and moves of other positions,
//! the file cut or padded), opened, probed and converted: never a panic or a hang, an error is one
//! line (exit 1 from the binary), and a book read has a score in every entry.

use polybook::book::formats::exp::{
    EXP_ENTRY_SIZE, EXP_V1_SIGNATURE, EXP_V2_SIGNATURE, stockfish_key, stockfish_move,
};
use polybook::book::{LearnLayout, MoveScore};
use rand::Rng;
use rand::rngs::StdRng;
use shakmaty::{Chess, Position};

use crate::{COMMAND_LIMIT, Records, fuzz_book_format, mutate_records, run_in, swap_bytes};

/// A record in one of the three layouts (0 BrainLearn, 1 SugaR v1, 2 SugaR v2).
fn record(layout: u8, key: u64, mv: u16, score: i32, depth: i32) -> Vec<u8> {
    let mut b = key.to_le_bytes().to_vec();
    if layout == 0 {
        b.extend(depth.to_le_bytes());
        b.extend(score.to_le_bytes());
        b.extend(u32::from(mv).to_le_bytes());
        b.extend(100i32.to_le_bytes());
    } else {
        b.extend(u32::from(mv).to_le_bytes());
        b.extend(score.to_le_bytes());
        b.extend(depth.to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend([0, 0]);
    }
    b
}

/// Random games from the start, a record for each move (several now and then, at other depths),
/// in a random layout, with records of positions no game reaches mixed in.
fn generated(rng: &mut StdRng) -> Vec<u8> {
    let layout = rng.random_range(0..3u8);
    let mut out = match layout {
        0 => Vec::new(),
        1 => EXP_V1_SIGNATURE.to_vec(),
        _ => EXP_V2_SIGNATURE.to_vec(),
    };
    for _ in 0..rng.random_range(1..12) {
        let mut pos = Chess::default();
        for _ in 0..rng.random_range(1..40) {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.random_range(0..legal.len())];
            for _ in 0..rng.random_range(1..3) {
                let score = match rng.random_range(0..10) {
                    0 => 32_000 - rng.random_range(1..100),
                    1 => -32_000 + rng.random_range(1..100),
                    2 => rng.random(),
                    _ => rng.random_range(-300..300),
                };
                let depth = rng.random_range(-2..80);
                out.extend(record(
                    layout,
                    stockfish_key(&pos),
                    stockfish_move(&m).unwrap(),
                    score,
                    depth,
                ));
            }
            pos.play_unchecked(m);
        }
        if rng.random_ratio(1, 3) {
            out.extend(record(layout, rng.random(), rng.random(), 0, 10));
        }
    }
    out
}

/// A mutation: fields of random records (moves, scores, depths, keys) set to random or edge
/// values, records swapped, the file cut or padded.
fn mutate_exp(rng: &mut StdRng, b: Vec<u8>) -> Vec<u8> {
    let header = if b.starts_with(EXP_V2_SIGNATURE) {
        EXP_V2_SIGNATURE.len()
    } else if b.starts_with(EXP_V1_SIGNATURE) {
        EXP_V1_SIGNATURE.len()
    } else {
        0
    };
    let records = Records {
        start: header,
        size: EXP_ENTRY_SIZE,
        keep: 0,
    };
    mutate_records(rng, b, records, 6, 60, |rng, b, i, n| {
        match rng.random_range(0..6) {
            0 => {
                let at = i + rng.random_range(8..EXP_ENTRY_SIZE - 3);
                let v: i32 = [i32::MIN, i32::MAX, 0, -1, rng.random()][rng.random_range(0..5)];
                b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            1 => b[i + rng.random_range(0..8)] = rng.random(),
            2 => swap_bytes(b, i, records.random(rng, n), 8),
            3 => swap_bytes(b, i, records.random(rng, n), EXP_ENTRY_SIZE),
            _ => return false,
        }
        true
    })
}

/// Generated and mutated experience files: `Book::open` gives a book with a score in every entry
/// or one line; a book is probed; now and then the binary's `probe` and `convert` exit 0 or 1 with
/// one line, and what `convert` writes passes `verify`.
#[test]
fn exp_reader() {
    fuzz_book_format(
        "exp_reader",
        |rng| {
            let seed = generated(rng);
            mutate_exp(rng, seed)
        },
        // Mostly by extension; now and then by signature alone.
        |count| if count % 7 == 3 { "in.bin" } else { "in.exp" },
        |_, name, book| {
            if let Ok(book) = book
                && name == "in.exp"
            {
                assert_eq!(book.learn_layout(), LearnLayout::Scored);
                for e in book.entries() {
                    assert!(MoveScore::from_learn(e.learn).is_some(), "{e:?}");
                    assert!(e.weight <= 1000, "{e:?}");
                }
            }
        },
        |dir, name| {
            if name == "in.exp" && dir.join("out.bin").exists() {
                let ran = run_in(dir, &["verify", "out.bin"], COMMAND_LIMIT, &[]);
                assert_eq!(ran.code, Some(0), "verify: {}", ran.stderr);
            }
        },
    );
}
