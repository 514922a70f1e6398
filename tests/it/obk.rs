//! Chessmaster (OBK) books: no real one is at hand, so the books are written by an encoder of the
//! layout in `docs/formats.md` (`tests/common/obk.rs`: versions 1 and 2, with and without notes),
//! used only by the tests. Its bytes are checked against bytes written out by hand from the layout; a real
//! Polyglot book (`gm2001.bin`) goes `.bin → .obk → convert → .bin` and keeps every position and
//! move reachable from the start, as python-chess reads both; every command that reads a book
//! reads one; a damaged file is one error line.

use std::path::{Path, PathBuf};

use shakmaty::CastlingMode;

use polybook::book::Book;

use crate::common::obk::{Node, Note, encode, node, tree_of};
use crate::common::{
    data, path_str, polybook, polybook_fails, polybook_ok, position_after, python_reachable,
};

/// 1.e4 (code 3) e5 (2) 2.Nf3 (1); 1.e4 c5 (0); 1.d4 (2) d5 (3).
fn small_tree() -> Vec<Node> {
    vec![
        node(
            "e2e4",
            3,
            vec![
                node("e7e5", 2, vec![node("g1f3", 1, vec![])]),
                node("c7c5", 0, vec![]),
            ],
        ),
        node("d2d4", 2, vec![node("d7d5", 3, vec![])]),
    ]
}

/// The small tree's six records, written out by hand from the layout's tables: (from | bit 6 for
/// the last move of its position | bit 7 for a move without replies, to | code << 6).
const SMALL_RECORDS: [u8; 12] = [
    0x0c, 0xdc, // e2 = 12, e4 = 28 | 3 << 6; d4 follows, e5 replies
    0x34, 0xa4, // e7 = 52, e5 = 36 | 2 << 6; c5 follows, Nf3 replies
    0xc6, 0x55, // g1 = 6 | 0x40 | 0x80, f3 = 21 | 1 << 6
    0xf2, 0x22, // c7 = 50 | 0x40 | 0x80, c5 = 34 | 0 << 6
    0x4b, 0x9b, // d2 = 11 | 0x40, d4 = 27 | 2 << 6
    0xf3, 0xe3, // d7 = 51 | 0x40 | 0x80, d5 = 35 | 3 << 6
];

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A position's moves as polybook reads them, `uci:weight`, sorted.
fn moves_of(book: &Book, moves: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = book
        .probe(&position_after(moves))
        .legal
        .iter()
        .map(|m| format!("{}:{}", m.mv.to_uci(CastlingMode::Standard), m.entry.weight))
        .collect();
    out.sort();
    out
}

#[test]
fn the_encoder_writes_the_layout_byte_for_byte_and_polybook_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = encode(1, &small_tree(), &[]);
    let mut want = b"UGWS\x06\x00\x00\x00".to_vec();
    want.extend_from_slice(&SMALL_RECORDS);
    assert_eq!(v1, want);

    let v2 = encode(2, &small_tree(), &[]);
    let mut want = b"BOO!\x06\x00\x00\x00\x00\x00\x00\x00".to_vec();
    want.extend_from_slice(&SMALL_RECORDS);
    assert_eq!(v2, want);

    let notes = [Note(0, 80, "King pawn"), Note(4, 82, "D00")];
    let noted = encode(2, &small_tree(), &notes);
    let mut want = b"BOO!\x06\x00\x00\x00\x02\x00\x00\x00".to_vec();
    want.extend_from_slice(&SMALL_RECORDS);
    want.extend_from_slice(b"\x00\x00\x00\x00\x09\x50King pawn");
    want.extend_from_slice(b"\x04\x00\x00\x00\x03\x52D00");
    assert_eq!(noted, want);

    // Each version reads as the same book: the codes 0-3 as 1, 25, 50, 100.
    for (name, bytes) in [("v1.obk", &v1), ("v2.obk", &v2), ("noted.obk", &noted)] {
        let path = write(dir.path(), name, bytes);
        let book = Book::open(&path).unwrap();
        assert_eq!(book.format().name(), "Chessmaster (OBK)");
        assert_eq!(book.len(), 6, "{name}");
        assert_eq!(moves_of(&book, &[]), ["d2d4:50", "e2e4:100"], "{name}");
        assert_eq!(moves_of(&book, &["e2e4"]), ["c7c5:1", "e7e5:50"], "{name}");
        assert_eq!(moves_of(&book, &["e2e4", "e7e5"]), ["g1f3:25"], "{name}");
        assert_eq!(moves_of(&book, &["d2d4"]), ["d7d5:100"], "{name}");
        // Told by its content, whatever its name.
        let plain = write(dir.path(), &format!("{name}.dat"), bytes);
        assert_eq!(Book::open(&plain).unwrap().len(), 6);
    }
}

/// gm2001.bin written as OBK (both versions, one with notes), then `probe`, `verify` and
/// `convert` on it: the converted book passes `verify` and holds every position and move of
/// gm2001.bin reachable from the start, each move's weight its code's.
#[test]
fn a_real_book_survives_obk_and_every_command_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("books/gm2001.bin");
    let tree = tree_of(&Book::open(&src).unwrap());
    let want = python_reachable(&src, &["weight0", "queen", "quantize"]);
    assert!(want.lines().count() > 5_000, "{}", want.lines().count());
    let notes = [Note(0, 80, "King's pawn"), Note(1, 81, "!")];
    for (version, notes) in [(1, &notes[..0]), (2, &notes[..])] {
        let obk = write(dir.path(), "gm2001.obk", &encode(version, &tree, notes));
        let obk = path_str(&obk);
        let probe = polybook_ok(&["probe", obk]);
        for m in ["e2e4", "d2d4", "c2c4", "g1f3"] {
            assert!(probe.contains(m), "{probe}");
        }
        let verify = polybook_ok(&["verify", obk]);
        assert!(verify.contains("OK: Chessmaster (OBK) book"), "{verify}");
        let back = dir.path().join(format!("back{version}.bin"));
        polybook_ok(&["convert", obk, "-o", path_str(&back)]);
        let out = polybook(&["verify", path_str(&back)]);
        assert!(out.status.success(), "{out:?}");
        let got = python_reachable(&back, &["weight0", "queen"]);
        assert_eq!(got, want, "version {version}");
    }
}

#[test]
fn a_damaged_obk_file_is_one_error_line_from_probe_verify_and_convert() {
    let dir = tempfile::tempdir().unwrap();
    let good = encode(2, &small_tree(), &[Note(0, 80, "King pawn")]);
    let fails = |name: &str, bytes: &[u8], what: &str| {
        let path = write(dir.path(), name, bytes);
        for args in [
            &["probe", path_str(&path)][..],
            &["verify", path_str(&path)],
            &[
                "convert",
                path_str(&path),
                "-o",
                path_str(&dir.path().join("out.bin")),
            ],
        ] {
            let err = polybook_fails(args, 1, what);
            assert!(err.contains(name), "{err}");
        }
        assert!(!dir.path().join("out.bin").exists());
    };
    // Cut inside its move records.
    fails(
        "cut.obk",
        &good[..12 + 7],
        "record 3 (offset 18) is past its end",
    );
    // Not an OBK file, though named one.
    fails(
        "magic.obk",
        b"BOX!\x06\0\0\0\0\0\0\0",
        "does not start with the OBK magic",
    );
    // A move count that reaches past the end of the file.
    let mut far = good.clone();
    far[4..8].copy_from_slice(&1_000_000u32.to_le_bytes());
    fails("far.obk", &far, "counts 1000000 moves");
    // A record whose move is not legal where it stands (e5 → e4 for White's Nf3).
    let mut illegal = good.clone();
    illegal[12 + 4] = 0xc0 | 36;
    fails(
        "illegal.obk",
        &illegal,
        "record 2 (offset 16): its move e5f3 is not legal",
    );
    // A record after the tree's last line ended.
    let mut after_end = good[..12 + 12].to_vec();
    after_end[4] = 7;
    after_end.extend_from_slice(&[0xcc, 0x1c]);
    fails(
        "after.obk",
        &after_end,
        "record 6 (offset 24): it comes after",
    );
}
