//! An OBK (Chessmaster) encoder for the tests only, written from the layout in `docs/formats.md`:
//! polybook reads OBK books and writes none, and no real one is at hand, so the tests and the
//! fuzz target `obk_reader` make theirs here (a hand-made tree, or a Polyglot book's tree from
//! the start position).

use std::collections::HashSet;

use shakmaty::{CastlingMode, Chess, Position, Role};

use polybook::book::{Book, Key};

/// One move of a tree to encode: its UCI squares (castling as the king's two-square move), its
/// weight code (0-3) and the moves after it.
#[derive(Clone, Debug)]
pub struct Node {
    pub uci: String,
    pub code: u8,
    pub children: Vec<Node>,
}

pub fn node(uci: &str, code: u8, children: Vec<Node>) -> Node {
    Node {
        uci: uci.to_string(),
        code,
        children,
    }
}

/// A square's number in the layout: a1 = 0, b1 = 1, …, h8 = 63.
pub fn square(s: &[u8]) -> u8 {
    (s[0] - b'a') + 8 * (s[1] - b'1')
}

/// The records of `siblings` and their subtrees, depth first: byte 0 is the from-square with bit
/// 6 set on the last move of its position and bit 7 on a move without replies; byte 1 is the
/// to-square with the weight code in bits 6-7.
pub fn records(siblings: &[Node], out: &mut Vec<u8>) {
    for (i, n) in siblings.iter().enumerate() {
        let b = n.uci.as_bytes();
        let last_at_level = i + 1 == siblings.len();
        let last_in_line = n.children.is_empty();
        out.push(square(&b[0..2]) | u8::from(last_at_level) << 6 | u8::from(last_in_line) << 7);
        out.push(square(&b[2..4]) | n.code << 6);
        records(&n.children, out);
    }
}

pub fn count(siblings: &[Node]) -> u32 {
    siblings.iter().map(|n| 1 + count(&n.children)).sum()
}

/// A text note of a version-2 book: the index of the move it belongs to, its type (80 a
/// variation's name, 81 a move's annotation, 82 an ECO code) and its text.
pub struct Note<'a>(pub u32, pub u8, pub &'a str);

/// An OBK file of `roots` (White's first moves): version 1 (`UGWS`, the move count, the moves) or
/// version 2 (`BOO!`, the move count, the note count, the moves, then each note as its move's
/// index (u32), its length (u8), its type (u8) and its text). Integers are little-endian.
pub fn encode(version: u8, roots: &[Node], notes: &[Note]) -> Vec<u8> {
    assert!(version == 2 || notes.is_empty(), "version 1 has no notes");
    let mut out = if version == 1 {
        b"UGWS".to_vec()
    } else {
        b"BOO!".to_vec()
    };
    out.extend_from_slice(&count(roots).to_le_bytes());
    if version == 2 {
        out.extend_from_slice(&(notes.len() as u32).to_le_bytes());
    }
    records(roots, &mut out);
    for Note(index, kind, text) in notes {
        out.extend_from_slice(&index.to_le_bytes());
        out.push(text.len() as u8);
        out.push(*kind);
        out.extend_from_slice(text.as_bytes());
    }
    out
}

/// A weight's code: 3 above half the position's largest weight, 2 above a quarter, 1 for any
/// other weight above 0, 0 for 0 (read back as 100, 50, 25 and 1).
pub fn code_of(weight: u16, largest: u16) -> u8 {
    let (w, top) = (u32::from(weight), u32::from(largest));
    match w {
        0 => 0,
        _ if 2 * w > top => 3,
        _ if 4 * w > top => 2,
        _ => 1,
    }
}

/// The tree of a Polyglot book from the start position: each position's legal moves in the
/// book's order (underpromotions left out: the format has none), a position's moves written once,
/// under the first line that reaches it (later lines end at the move that reaches it again).
pub fn tree_of(book: &Book) -> Vec<Node> {
    fn grow(book: &Book, pos: &Chess, seen: &mut HashSet<Key>) -> Vec<Node> {
        if !seen.insert(Key::of(pos)) {
            return Vec::new();
        }
        let probe = book.probe(pos);
        let largest = probe
            .legal
            .iter()
            .map(|m| m.entry.weight)
            .max()
            .unwrap_or(0);
        let mut out = Vec::new();
        for m in &probe.legal {
            if m.mv.promotion().is_some_and(|r| r != Role::Queen) {
                continue;
            }
            let uci = m.mv.to_uci(CastlingMode::Standard).to_string();
            let mut after = pos.clone();
            after.play_unchecked(m.mv);
            let children = grow(book, &after, seen);
            out.push(node(&uci[..4], code_of(m.entry.weight, largest), children));
        }
        out
    }
    grow(book, &Chess::default(), &mut HashSet::new())
}
