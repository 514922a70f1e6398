//! Writing an Arena (ABK) book from a Polyglot book ([`abk_bytes`]).
//!
//! An ABK book is a tree from the start position, a Polyglot book a table of positions: the tree
//! is grown from the start, breadth first, through the book's legal moves. A position reached
//! again by another move order (a transposition) has its moves written once, under the first
//! line that reaches it; later lines end at the move that transposes (Arena finds the rest with
//! its "use transpositions" setting, and [`super::abk::read_abk`] reads every (position, move)
//! back once). Positions the start does not reach are not written.

use std::collections::HashSet;

use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move, Position, Role};

use super::abk::{ABK_DEFAULT_PRIORITY, ABK_HEADER_RECORDS, ABK_RECORD_SIZE, AbkHeader, AbkRecord};
use crate::book::{Book, Key};

/// Arena's selection settings as written: no minimum, the probability set by the number of
/// games alone (importance 15; the games are the Polyglot weights), the book used up to its depth
/// (filled in by [`abk_bytes`]).
const SETTINGS: [u32; 8] = [0, 0, 0, 0, 0, 15, 0, 0];

/// The bytes of an ABK book holding the moves of `book` reachable from the start position.
///
/// Each legal book move becomes a record: its weight as the number of games, Arena's default
/// priority (5), or priority 0 (never played) for a weight of 0; no wins, losses or flags.
/// Castling is written as the king's two-square move, a promotion with DroidFish's sign
/// (negative for White). The header holds `comment` and `author` (cut to 120 and 80 bytes),
/// the depth of the tree and its number of moves.
pub fn abk_bytes(book: &Book, comment: &str, author: &str) -> Vec<u8> {
    let mut expanded: HashSet<Key> = HashSet::new();
    let mut depth = 0u32;
    let records = tree_records(|pos, ply| {
        if !expanded.insert(Key::of(pos)) {
            return Some(Vec::new());
        }
        let moves = book.probe(pos).legal;
        if !moves.is_empty() {
            depth = depth.max(ply + 1);
        }
        let children = moves.into_iter().filter_map(|m| {
            let UciMove::Normal {
                from,
                to,
                promotion,
            } = m.mv.to_uci(CastlingMode::Standard)
            else {
                return None;
            };
            let promotion = match promotion {
                None => 0,
                Some(Role::Rook) => 1,
                Some(Role::Knight) => 2,
                Some(Role::Bishop) => 3,
                Some(_) => 4,
            } * if pos.turn() == Color::White { -1 } else { 1 };
            let weight = m.entry.weight;
            let record = AbkRecord {
                from: u8::from(from),
                to: u8::from(to),
                promotion,
                priority: if weight == 0 { 0 } else { ABK_DEFAULT_PRIORITY },
                games: u32::from(weight),
                ..AbkRecord::default()
            };
            Some((m.mv, record))
        });
        Some(children.collect())
    });
    let mut settings = SETTINGS;
    settings[7] = depth;
    let header = AbkHeader {
        comment: comment.to_string(),
        author: author.to_string(),
        depth,
        moves: records.len() as u32,
        settings,
    };
    let mut out = header.to_bytes();
    out.reserve(records.len() * ABK_RECORD_SIZE);
    for r in &records {
        out.extend_from_slice(&r.to_bytes());
    }
    out
}

/// A tree of moves from the start position laid out as ABK records, breadth first: each
/// position's moves one after the other (linked by `next_sibling`), its parent's `first_reply`
/// pointing at the first. `moves(pos, ply)` gives the moves of `pos`, `ply` plies from the start,
/// with their records (all but the links, set here); no moves end the line there, `None` ends the
/// whole tree.
pub fn tree_records(
    mut moves: impl FnMut(&Chess, u32) -> Option<Vec<(Move, AbkRecord)>>,
) -> Vec<AbkRecord> {
    let mut records: Vec<AbkRecord> = Vec::new();
    // Breadth first: (position, the record whose replies these are, the ply of its moves).
    let mut queue = std::collections::VecDeque::new();
    queue.push_back((Chess::default(), None::<usize>, 0u32));
    while let Some((pos, parent, ply)) = queue.pop_front() {
        let Some(children) = moves(&pos, ply) else {
            break;
        };
        if children.is_empty() {
            continue;
        }
        let first = ABK_HEADER_RECORDS + records.len();
        match parent {
            Some(p) => records[p].first_reply = first as i32,
            None => debug_assert_eq!(first, ABK_HEADER_RECORDS),
        }
        let count = children.len();
        for (n, (m, record)) in children.into_iter().enumerate() {
            records.push(AbkRecord {
                first_reply: -1,
                next_sibling: if n + 1 < count {
                    (first + n + 1) as i32
                } else {
                    -1
                },
                ..record
            });
            let mut after = pos.clone();
            after.play_unchecked(m);
            queue.push_back((after, Some(records.len() - 1), ply + 1));
        }
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::formats::abk::read_abk;
    use crate::book::{Entry, sort_entries};

    #[test]
    fn a_polyglot_book_comes_back_from_its_abk_tree() {
        let start = Chess::default();
        let k0 = Key::of(&start);
        let play = |pos: &Chess, uci: &str| {
            let mut p = pos.clone();
            p.play_unchecked(uci.parse::<UciMove>().unwrap().to_move(pos).unwrap());
            p
        };
        // 1.e4 / 1.d4 (weights 7, 3); 1.e4 e5 (2); a position off the tree is not written.
        let e4 = play(&start, "e2e4");
        let mut entries = vec![
            Entry::from_uci(k0, "e2e4", 7).unwrap(),
            Entry::from_uci(k0, "d2d4", 3).unwrap(),
            Entry::from_uci(Key::of(&e4), "e7e5", 2).unwrap(),
            Entry::from_uci(Key(12345), "a2a3", 9).unwrap(),
        ];
        sort_entries(&mut entries);
        let bytes = entries.iter().flat_map(|e| e.to_bytes()).collect();
        let book = Book::from_bytes("t.bin", bytes).unwrap();
        let abk = abk_bytes(&book, "a comment", "me");
        assert_eq!(abk.len(), (ABK_HEADER_RECORDS + 3) * ABK_RECORD_SIZE);
        let back = read_abk(&abk).unwrap();
        assert_eq!((back.header.moves, back.header.depth), (3, 2));
        assert_eq!(back.header.comment, "a comment");
        assert_eq!(back.header.author, "me");
        // The default priority: the weights are the games.
        let mut got: Vec<(Key, String, u16)> = back
            .entries
            .iter()
            .map(|e| (e.key, e.mv.to_string(), e.weight))
            .collect();
        got.sort();
        let mut want = vec![
            (k0, "e2e4".to_string(), 7),
            (k0, "d2d4".to_string(), 3),
            (Key::of(&e4), "e7e5".to_string(), 2),
        ];
        want.sort();
        assert_eq!(got, want);
    }
}
