//! `ctg_reader`: mutated CTG books (the bundled `simple.ctg` with its `.cto` and `.ctb`, and a book
//! of eight pages written by the tests' writer from Rodent III's Réti book) read by
//! `polybook::book::formats::ctg` in process: no panic, no hang, errors of one line naming a file of the
//! book, and whatever is read is positions reached by legal moves.

use std::path::Path;
use std::time::Duration;

use polybook::book::formats::ctg;
use polybook::book::{Book, Key};
use rand::Rng;
use rand::rngs::StdRng;

use crate::{assert_one_line, common, fuzz, mutate};

const EXTENSIONS: [&str; 3] = ["ctg", "cto", "ctb"];

/// Bytes that matter to the layout: page numbers and bounds (empty, huge, negative), a page's
/// head, a position's header byte, annotation and recommendation bytes.
const CTG_TOKENS: &[&[u8]] = &[
    b"\xff\xff\xff\xff",
    b"\x7f\xff\xff\xff",
    b"\x7f\xff\xff\xfe",
    b"\x00\x00\x00\x00",
    b"\x00\x00\x00\x01",
    b"\x00\x00\x00\x09",
    b"\x00\x04\x00\xea",
    b"\xff\xff\x10\x00",
    b"\x56",
    b"\x5f\xe0",
    b"\x6b\x01",
    b"\x80",
];

/// The three files packed into one input: each with its length (4 bytes, big-endian) before it.
fn pack(files: &[Vec<u8>; 3]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in files {
        out.extend_from_slice(&(f.len() as u32).to_be_bytes());
        out.extend_from_slice(f);
    }
    out
}

fn unpack(input: &[u8]) -> [Vec<u8>; 3] {
    let mut rest = input;
    std::array::from_fn(|_| {
        let len = rest
            .get(..4)
            .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .min(rest.len().saturating_sub(4));
        let file = rest.get(4..4 + len).unwrap_or_default().to_vec();
        rest = rest.get(4 + len..).unwrap_or_default();
        file
    })
}

/// The three files of a CTG book of several pages: Rodent III's Réti book (430 positions reachable
/// from the start, 8 pages) written by `common::ctg_writer`, its moves' annotations varied (none,
/// `!`, `?`, `??`, `!?`).
fn written_book() -> [Vec<u8>; 3] {
    let book = Book::open(common::data("books/rodent3_players_reti.bin")).unwrap();
    let annotation = |weight: u16| [0x00, 0x01, 0x02, 0x04, 0x05][usize::from(weight) % 5];
    let (records, _) = common::ctg_writer::from_polyglot(&book, annotation);
    let files = common::ctg_writer::write_ctg(&records, records[0].stats.games);
    assert!(files.ctg.len() <= 64 << 10, "{} bytes", files.ctg.len());
    [files.ctg, files.cto, files.ctb]
}

/// Mutated CTG books, the real one and a written one: reading never panics or hangs, its errors
/// are one line naming one of the book's files, and the positions it gives are each once, the
/// first the start position.
#[test]
fn ctg_reader() {
    let simple: [Vec<u8>; 3] = EXTENSIONS
        .map(|ext| std::fs::read(common::data(&format!("books/formats/simple.{ext}"))).unwrap());
    let books = [simple, written_book()];
    for seeds in &books {
        assert!(
            pack(seeds) == pack(&unpack(&pack(seeds))),
            "pack and unpack disagree"
        );
        // Unmutated, each book reads whole.
        let [ctg_bytes, cto, ctb] = seeds.clone();
        assert!(
            ctg::read_ctg_bytes(Path::new("seed.ctg"), ctg_bytes, cto, ctb)
                .unwrap()
                .len()
                >= 4
        );
    }
    fuzz(
        "ctg_reader",
        3000,
        Duration::from_secs(30),
        |rng: &mut StdRng| {
            let seeds = &books[rng.random_range(0..books.len())];
            let mut files = seeds.clone();
            // Mutate one file, sometimes two or all three.
            for _ in 0..rng.random_range(1..=3) {
                let which = rng.random_range(0..3);
                files[which] = mutate(rng, &[seeds[which].clone()], CTG_TOKENS, 64 << 10);
            }
            pack(&files)
        },
        |input| {
            let [ctg_bytes, cto, ctb] = unpack(input);
            // The board decoder on whatever bytes stand where the first record would be.
            if let Some(head) = ctg_bytes.get(4100..4132) {
                let len = usize::from(head[0] & 0x1f).min(head.len());
                let _ = ctg::decode(&head[..len]);
            }
            match ctg::read_ctg_bytes(Path::new("fuzz.ctg"), ctg_bytes, cto, ctb) {
                Ok(positions) => {
                    let mut keys = std::collections::HashSet::new();
                    for p in &positions {
                        assert!(keys.insert(p.key), "position {} read twice", p.key);
                        assert_eq!(p.key, Key::of(&p.position));
                        assert!(p.moves.len() <= 127, "more moves than a record holds");
                    }
                    if let Some(first) = positions.first() {
                        assert_eq!(first.key, Key::of(&shakmaty::Chess::default()));
                    }
                }
                Err(e) => {
                    let message = e.to_string();
                    assert_one_line(&message);
                    assert!(
                        EXTENSIONS
                            .iter()
                            .any(|ext| message.contains(&format!("fuzz.{ext}"))),
                        "an error naming no file of the book: {message}"
                    );
                }
            }
        },
    );
}
