//! Arena's ABK books, read into Polyglot entries.
//!
//! An ABK file is an array of 28-byte little-endian records (the layout and its sources:
//! `docs/formats.md`). The first 900 records are the header ([`AbkHeader`]); the tree starts at
//! record 900, White's first moves as a chain of siblings. Each record is one move
//! ([`AbkRecord`]) with the index of its next sibling (another move in the same position) and of
//! its first reply (the first move of the position after it).
//!
//! [`read_abk`] walks the tree from the start position, plays each move with shakmaty and yields
//! the Polyglot entries (key, move, weight) of the positions it passes, so that every command that
//! reads a Polyglot book reads an ABK book the same way ([`crate::book::Book::open`] converts one in
//! memory). The walk is bounded: every record is visited at most once, and a link out of range,
//! a record linked twice (a cycle) or a move that is not legal where it stands is one error.

use std::collections::HashMap;

use byteorder::{ByteOrder, LittleEndian};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position, Role, Square};
use thiserror::Error;

use crate::book::{Entry, Key, RawMove};

/// The size of one ABK record in bytes.
pub const ABK_RECORD_SIZE: usize = 28;
/// The records taken by the header: the tree's first record is this one.
pub const ABK_HEADER_RECORDS: usize = 900;
/// The header's size in bytes (900 records).
pub const ABK_HEADER_SIZE: usize = ABK_RECORD_SIZE * ABK_HEADER_RECORDS;
/// The first bytes of every ABK file: the Pascal string "ABK" (a length byte, 3, then the text).
pub const ABK_MAGIC: [u8; 4] = [3, b'A', b'B', b'K'];
/// The priority Arena gives a move by default (0 means "never play it", 9 is the highest).
pub const ABK_DEFAULT_PRIORITY: u8 = 5;

/// The header's fields at their byte offsets (`docs/formats.md`).
const COMMENT_AT: usize = 0x0c;
const COMMENT_LEN: usize = 120;
const AUTHOR_AT: usize = 0x85;
const AUTHOR_LEN: usize = 80;
const DEPTH_AT: usize = 0xd6;
const MOVES_AT: usize = 0xda;
const SETTINGS_AT: usize = 0xde;

/// Why an ABK file could not be read: one line, with the record at fault where there is one.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct AbkError(pub String);

/// The header of an ABK file: its description and Arena's settings for choosing a book move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AbkHeader {
    /// A free comment (at most 120 bytes, Latin-1 as Arena writes it on Windows).
    pub comment: String,
    /// The book's author (at most 80 bytes).
    pub author: String,
    /// The longest line in plies, as Arena counts it.
    pub depth: u32,
    /// The number of moves in the tree, deleted ones not counted.
    pub moves: u32,
    /// Arena's selection settings, in file order: minimum games, minimum won games, minimum win
    /// percentage for White and for Black, then the importance (0-15) of the priority, of the
    /// number of games and of the win percentage, then the last ply the book is used for.
    pub settings: [u32; 8],
}

impl AbkHeader {
    /// Reads the header from the first [`ABK_HEADER_SIZE`] bytes of `data`.
    ///
    /// # Panics
    /// If `data` is shorter than the header.
    pub fn parse(data: &[u8]) -> AbkHeader {
        let mut settings = [0u32; 8];
        for (i, s) in settings.iter_mut().enumerate() {
            *s = LittleEndian::read_u32(&data[SETTINGS_AT + 4 * i..]);
        }
        AbkHeader {
            comment: pascal_string(&data[COMMENT_AT..COMMENT_AT + 1 + COMMENT_LEN]),
            author: pascal_string(&data[AUTHOR_AT..AUTHOR_AT + 1 + AUTHOR_LEN]),
            depth: LittleEndian::read_u32(&data[DEPTH_AT..]),
            moves: LittleEndian::read_u32(&data[MOVES_AT..]),
            settings,
        }
    }

    /// The header as [`ABK_HEADER_SIZE`] bytes: the magic, the strings (cut to their room), the
    /// counts and the settings, zeros elsewhere.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; ABK_HEADER_SIZE];
        out[..4].copy_from_slice(&ABK_MAGIC);
        put_pascal_string(&mut out[COMMENT_AT..], &self.comment, COMMENT_LEN);
        put_pascal_string(&mut out[AUTHOR_AT..], &self.author, AUTHOR_LEN);
        LittleEndian::write_u32(&mut out[DEPTH_AT..], self.depth);
        LittleEndian::write_u32(&mut out[MOVES_AT..], self.moves);
        for (i, s) in self.settings.iter().enumerate() {
            LittleEndian::write_u32(&mut out[SETTINGS_AT + 4 * i..], *s);
        }
        out
    }
}

/// A Pascal string: a length byte, then that many bytes (Latin-1), cut to the room there is.
fn pascal_string(field: &[u8]) -> String {
    let len = usize::from(field[0]).min(field.len() - 1);
    field[1..1 + len].iter().map(|&b| char::from(b)).collect()
}

fn put_pascal_string(field: &mut [u8], text: &str, room: usize) {
    let bytes: Vec<u8> = text
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .take(room)
        .collect();
    field[0] = bytes.len() as u8;
    field[1..1 + bytes.len()].copy_from_slice(&bytes);
}

/// One record of the tree: a move and its statistics, and the links to the rest of the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbkRecord {
    /// The squares, a1 = 0 … h8 = 63 (castling: the king's two-square move, e1g1).
    pub from: u8,
    pub to: u8,
    /// 0 for none, else ±1 rook, ±2 knight, ±3 bishop, ±4 queen (readers disagree on the sign:
    /// it is ignored when read, the side to move gives the colour).
    pub promotion: i8,
    /// Arena's priority: 0 never played, 5 the default, 9 the highest.
    pub priority: u8,
    /// Games played with the move, won and lost (from White's side).
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    /// 0 for a live move; anything else marks it deleted (Arena writes 1, some readers test
    /// 0x01000000).
    pub flags: u32,
    /// The first reply's record, or none (0 or negative).
    pub first_reply: i32,
    /// The next sibling's record, or none (negative).
    pub next_sibling: i32,
}

impl AbkRecord {
    /// Decodes the first [`ABK_RECORD_SIZE`] bytes of `bytes`.
    ///
    /// # Panics
    /// If `bytes` is shorter than a record.
    pub fn parse(bytes: &[u8]) -> AbkRecord {
        AbkRecord {
            from: bytes[0],
            to: bytes[1],
            promotion: bytes[2] as i8,
            priority: bytes[3],
            games: LittleEndian::read_u32(&bytes[4..]),
            wins: LittleEndian::read_u32(&bytes[8..]),
            losses: LittleEndian::read_u32(&bytes[12..]),
            flags: LittleEndian::read_u32(&bytes[16..]),
            first_reply: LittleEndian::read_i32(&bytes[20..]),
            next_sibling: LittleEndian::read_i32(&bytes[24..]),
        }
    }

    /// The record as 28 little-endian bytes.
    pub fn to_bytes(&self) -> [u8; ABK_RECORD_SIZE] {
        let mut out = [0u8; ABK_RECORD_SIZE];
        out[0] = self.from;
        out[1] = self.to;
        out[2] = self.promotion as u8;
        out[3] = self.priority;
        LittleEndian::write_u32(&mut out[4..], self.games);
        LittleEndian::write_u32(&mut out[8..], self.wins);
        LittleEndian::write_u32(&mut out[12..], self.losses);
        LittleEndian::write_u32(&mut out[16..], self.flags);
        LittleEndian::write_i32(&mut out[20..], self.first_reply);
        LittleEndian::write_i32(&mut out[24..], self.next_sibling);
        out
    }

    /// Whether the move was deleted in Arena (it and the moves after it are not read).
    pub fn is_deleted(&self) -> bool {
        self.flags != 0
    }

    /// The move in UCI terms (castling as the king's two-square move, which shakmaty reads as
    /// castling), `None` for a square or promotion code out of range.
    pub fn uci(&self) -> Option<UciMove> {
        let promotion = match self.promotion.unsigned_abs() {
            0 => None,
            1 => Some(Role::Rook),
            2 => Some(Role::Knight),
            3 => Some(Role::Bishop),
            4 => Some(Role::Queen),
            _ => return None,
        };
        Some(UciMove::Normal {
            from: Square::try_from(self.from).ok()?,
            to: Square::try_from(self.to).ok()?,
            promotion,
        })
    }

    /// The weight before the division by the default priority and the position's scaling:
    /// priority × games (a move without games counts as one game).
    fn raw_weight(&self) -> u64 {
        u64::from(self.priority) * u64::from(self.games.max(1))
    }
}

/// An ABK book read whole: its header and its moves as Polyglot entries.
#[derive(Clone, Debug)]
pub struct AbkBook {
    pub header: AbkHeader,
    /// The entries, sorted as a Polyglot book is ([`crate::book::sort_entries`]), one per (position, move).
    pub entries: Vec<Entry>,
    /// The live moves the walk read (records not flagged deleted, transpositions counted each
    /// time).
    pub live_moves: u64,
    /// The records flagged deleted that the walk met (their subtrees are not read).
    pub deleted_moves: u64,
}

/// Whether `data` starts like an ABK file (the magic) and has its shape: a whole header and whole
/// records after it.
pub fn looks_like_abk(head: &[u8], size: u64) -> bool {
    head.starts_with(&ABK_MAGIC)
        && size >= ABK_HEADER_SIZE as u64
        && (size - ABK_HEADER_SIZE as u64).is_multiple_of(ABK_RECORD_SIZE as u64)
}

/// Reads an ABK book: walks its tree from the start position into Polyglot entries.
///
/// The weight of a move is its number of games scaled by its priority relative to Arena's
/// default (games × priority / 5, rounded; a move without games counts one game; priority 0
/// gives 0, any other move weighs at least 1): the two of Arena's factors stored per move, in a
/// form that gives the games themselves in the usual book (all moves at the default priority),
/// so that a Polyglot book written as ABK reads back with its weights.
///
/// A move is stored once per line that reaches it; the records of one (position, move) reached
/// by several move orders (transpositions) are merged: their priority × games are summed (the
/// games through the position, whatever the order). Each position's weights are then scaled down
/// proportionally when the largest exceeds 65535 (a non-zero weight stays at least 1).
///
/// A move flagged deleted has no entry, but the moves after it are read: the header's move count
/// counts them (in `tests/data/books/libra8.abk` it is the number of records not flagged, the
/// moves under deleted ones included), and their positions may be reached by another move
/// order. The learn fields are 0.
pub fn read_abk(data: &[u8]) -> Result<AbkBook, AbkError> {
    if !data.starts_with(&ABK_MAGIC) {
        return Err(AbkError(
            "not an Arena (ABK) book: it does not start with the ABK magic (\\x03ABK)".into(),
        ));
    }
    if data.len() < ABK_HEADER_SIZE
        || !(data.len() - ABK_HEADER_SIZE).is_multiple_of(ABK_RECORD_SIZE)
    {
        return Err(AbkError(format!(
            "not a whole Arena (ABK) book: its size, {} bytes, is not a {ABK_HEADER_SIZE}-byte header and 28-byte records",
            data.len()
        )));
    }
    let header = AbkHeader::parse(data);
    let count = data.len() / ABK_RECORD_SIZE;
    let record = |i: usize| AbkRecord::parse(&data[i * ABK_RECORD_SIZE..]);
    // A link: `None` for the end of a chain, an error for a record outside the tree.
    let link = |from: usize,
                what: &str,
                to: i32,
                none_at_zero: bool|
     -> Result<Option<usize>, AbkError> {
        if to < 0 || (to == 0 && none_at_zero) {
            return Ok(None);
        }
        let to = to as usize;
        if to < ABK_HEADER_RECORDS || to >= count {
            return Err(AbkError(format!(
                "broken Arena (ABK) book: record {from}: its {what} link, {to}, is outside the tree (records {ABK_HEADER_RECORDS} to {})",
                count - 1
            )));
        }
        Ok(Some(to))
    };

    let mut visited = vec![false; count];
    let mut weights: HashMap<(Key, RawMove), u64> = HashMap::new();
    let (mut live_moves, mut deleted_moves) = (0u64, 0u64);
    // Depth first, each stacked record with the position it is a move in.
    let mut stack: Vec<(usize, Chess)> = Vec::new();
    if count > ABK_HEADER_RECORDS {
        stack.push((ABK_HEADER_RECORDS, Chess::default()));
    }
    while let Some((i, pos)) = stack.pop() {
        if std::mem::replace(&mut visited[i], true) {
            return Err(AbkError(format!(
                "broken Arena (ABK) book: record {i} is linked to twice: the tree's links make a cycle"
            )));
        }
        let r = record(i);
        if let Some(sibling) = link(i, "next-sibling", r.next_sibling, false)? {
            stack.push((sibling, pos.clone()));
        }
        let mv = r.uci().and_then(|uci| uci.to_move(&pos).ok());
        if r.is_deleted() {
            deleted_moves += 1;
            // Its replies are read: they are moves of the book (the header counts them) and
            // their positions may be reached by another move order. A deleted record whose move
            // is not legal ends its line.
            if let (Some(mv), Some(reply)) = (mv, link(i, "first-reply", r.first_reply, true)?) {
                let mut after = pos;
                after.play_unchecked(mv);
                stack.push((reply, after));
            }
            continue;
        }
        live_moves += 1;
        let mv = mv.ok_or_else(|| {
                AbkError(format!(
                    "broken Arena (ABK) book: record {i}: its move (from {}, to {}, promotion {}) is not legal in {}",
                    r.from,
                    r.to,
                    r.promotion,
                    shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                ))
            })?;
        let raw = RawMove::from_move(mv).expect("a chess move has a Polyglot encoding");
        let weight = weights.entry((Key::of(&pos), raw)).or_insert(0);
        *weight = weight.saturating_add(r.raw_weight());
        if let Some(reply) = link(i, "first-reply", r.first_reply, true)? {
            let mut after = pos;
            after.play_unchecked(mv);
            stack.push((reply, after));
        }
    }

    let rows = weights
        .into_iter()
        .map(|((key, mv), raw)| (key, mv, weight_of(raw), 0))
        .collect();
    let out = super::entries_from_weights(rows);
    Ok(AbkBook {
        header,
        entries: out,
        live_moves,
        deleted_moves,
    })
}

/// A move's weight from its summed raw weights (priority × games): the games scaled by the
/// priority relative to Arena's default, rounded, so that a move at the default priority weighs
/// its number of games, priority 0 weighs 0 and any other move at least 1.
fn weight_of(raw: u64) -> u64 {
    let d = u64::from(ABK_DEFAULT_PRIORITY);
    if raw == 0 {
        0
    } else {
        ((raw + d / 2) / d).max(1)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record of `uci`'s squares with the links given (-1 for none).
    pub(crate) fn rec(uci: &str, games: u32, reply: i32, sibling: i32) -> AbkRecord {
        let b = uci.as_bytes();
        let sq = |f: u8, r: u8| (f - b'a') + 8 * (r - b'1');
        AbkRecord {
            from: sq(b[0], b[1]),
            to: sq(b[2], b[3]),
            priority: ABK_DEFAULT_PRIORITY,
            games,
            first_reply: reply,
            next_sibling: sibling,
            ..AbkRecord::default()
        }
    }

    pub(crate) fn file(records: &[AbkRecord]) -> Vec<u8> {
        let mut data = AbkHeader {
            moves: records.len() as u32,
            ..AbkHeader::default()
        }
        .to_bytes();
        for r in records {
            data.extend_from_slice(&r.to_bytes());
        }
        data
    }

    fn moves_at(book: &AbkBook, pos: &Chess) -> Vec<(String, u16)> {
        let key = Key::of(pos);
        book.entries
            .iter()
            .filter(|e| e.key == key)
            .map(|e| (e.mv.to_string(), e.weight))
            .collect()
    }

    #[test]
    fn a_small_tree_becomes_entries_with_castling_as_king_takes_rook() {
        // 1.e4 (e5 2.Nf3) / 1.d4; then 2...Nc6 … and a castling line: 1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.O-O
        let recs = [
            rec("e2e4", 10, 902, 901), // 900
            rec("d2d4", 4, -1, -1),    // 901
            rec("e7e5", 7, 903, -1),   // 902
            rec("g1f3", 7, 904, -1),   // 903
            rec("b8c6", 7, 905, -1),   // 904
            rec("f1c4", 7, 906, -1),   // 905
            rec("f8c5", 7, 907, -1),   // 906
            rec("e1g1", 7, 0, -1),     // 907
        ];
        let book = read_abk(&file(&recs)).unwrap();
        assert_eq!(book.live_moves, 8);
        let start = Chess::default();
        let mut got = moves_at(&book, &start);
        got.sort();
        assert_eq!(got, [("d2d4".into(), 4), ("e2e4".into(), 10)]);
        let pos = crate::position::play_moves(start, "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5").unwrap();
        assert_eq!(moves_at(&book, &pos), [("e1h1".into(), 7)]);
    }

    #[test]
    fn promotions_are_read_with_either_sign() {
        // A position is not needed: a tree from the start cannot promote at once, so check the
        // decoding of the record itself.
        for (code, role) in [
            (4i8, Role::Queen),
            (-4, Role::Queen),
            (2, Role::Knight),
            (-1, Role::Rook),
            (-3, Role::Bishop),
        ] {
            let r = AbkRecord {
                from: 48,
                to: 56,
                promotion: code,
                ..AbkRecord::default()
            };
            let Some(UciMove::Normal { promotion, .. }) = r.uci() else {
                panic!("no move for {code}")
            };
            assert_eq!(promotion, Some(role));
        }
        let bad = AbkRecord {
            from: 48,
            to: 56,
            promotion: 5,
            ..AbkRecord::default()
        };
        assert_eq!(bad.uci(), None);
    }

    #[test]
    fn deleted_moves_are_left_out_and_the_moves_after_them_read() {
        let mut e4 = rec("e2e4", 3, 902, 901);
        e4.flags = 1;
        let recs = [e4, rec("d2d4", 4, -1, -1), rec("e7e5", 3, -1, -1)];
        let book = read_abk(&file(&recs)).unwrap();
        assert_eq!((book.live_moves, book.deleted_moves), (2, 1));
        let start = Chess::default();
        assert_eq!(moves_at(&book, &start), [("d2d4".into(), 4)]);
        let mut e4 = start.clone();
        e4.play_unchecked("e2e4".parse::<UciMove>().unwrap().to_move(&start).unwrap());
        assert_eq!(moves_at(&book, &e4), [("e7e5".into(), 3)]);
    }

    #[test]
    fn transpositions_are_summed_and_large_weights_scaled() {
        // 1.Nf3 Nf6 2.c4 and 1.c4 Nf6 2.Nf3 reach one position; both continue with 2...e6.
        let recs = [
            rec("g1f3", 1, 902, 901),     // 900
            rec("c2c4", 1, 904, -1),      // 901
            rec("g8f6", 1, 903, -1),      // 902
            rec("c2c4", 1, 906, -1),      // 903
            rec("g8f6", 1, 905, -1),      // 904
            rec("g1f3", 1, 907, -1),      // 905
            rec("e7e6", 40_000, -1, 908), // 906
            rec("e7e6", 30_000, -1, -1),  // 907
            rec("g7g6", 700, -1, -1),     // 908
        ];
        let book = read_abk(&file(&recs)).unwrap();
        let weight = |mv: &str| {
            book.entries
                .iter()
                .find(|e| e.mv.to_string() == mv)
                .unwrap()
                .weight
        };
        // 40,000 + 30,000 games > 65,535: scaled to 65,535, g7g6's 700 to 655.
        assert_eq!(weight("e7e6"), 65_535);
        assert_eq!(weight("g7g6"), 655);
    }

    #[test]
    fn broken_links_and_other_files_are_one_error() {
        let cycle = [rec("e2e4", 1, -1, 900)];
        let err = read_abk(&file(&cycle)).unwrap_err();
        assert!(err.0.contains("cycle"), "{err}");
        let out = [rec("e2e4", 1, 5000, -1)];
        let err = read_abk(&file(&out)).unwrap_err();
        assert!(err.0.contains("outside the tree"), "{err}");
        let header = [rec("e2e4", 1, 3, -1)];
        assert!(read_abk(&file(&header)).is_err());
        let illegal = [rec("e2e5", 1, -1, -1)];
        let err = read_abk(&file(&illegal)).unwrap_err();
        assert!(err.0.contains("not legal"), "{err}");
        assert!(read_abk(b"hello").unwrap_err().0.contains("magic"));
        let mut short = file(&[rec("e2e4", 1, -1, -1)]);
        short.pop();
        assert!(read_abk(&short).unwrap_err().0.contains("size"));
        // A header alone is an empty book.
        assert!(read_abk(&file(&[])).unwrap().entries.is_empty());
    }
}
