//! Chessmaster's OBK books, read into Polyglot entries.
//!
//! An OBK file (Chessmaster 9000, 10th and 11th editions) is a short header, then one 2-byte
//! record per move: a tree of moves from the start position written depth first, each record
//! saying whether it ends its line and whether it is the last move of its position (the layout,
//! its two versions and the sources: `docs/formats.md`). Version 2 (magic `BOO!`) may end with text
//! notes (opening names, annotations, ECO codes), which have no Polyglot equivalent and are not
//! read; version 1 (magic `UGWS`) has none.
//!
//! [`read_obk`] plays the records in file order from the start position with shakmaty: a record
//! that is not the last of its position leaves its position on a stack, where the line resumes
//! after a record that ends its line. It yields the Polyglot entries (key, move, weight) of the
//! positions it passes, so that every command that reads a Polyglot book reads an OBK book the
//! same way ([`crate::book::Book::open`] converts one in memory). The walk reads each record once,
//! in order, and checks the header's move count against the file's size before it allocates; an
//! illegal move, a record after the tree's end or a tree cut short is one error naming the record.

use std::collections::HashMap;

use byteorder::{ByteOrder, LittleEndian};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position, Rank, Role, Square};
use thiserror::Error;

use crate::book::{Entry, Key, RawMove};

/// The first bytes of a version-2 book (Chessmaster 10th and 11th editions): `BOO!`; a move count
/// and a note count follow.
pub const OBK_V2_MAGIC: [u8; 4] = *b"BOO!";
/// The first bytes of a version-1 book (no notes): `UGWS`; a move count follows.
pub const OBK_V1_MAGIC: [u8; 4] = *b"UGWS";
/// The size of one move record in bytes.
pub const OBK_RECORD_SIZE: usize = 2;
/// The Polyglot weight of each of a record's four weight codes (0 to 3), as jja reads them: the
/// codes 1 to 3 as 25, 50 and 100, and the code 0 as 1 rather than 0, so that the move stays
/// playable (`docs/formats.md` says why).
pub const OBK_WEIGHTS: [u16; 4] = [1, 25, 50, 100];

/// Why an OBK file could not be read: one line, with the record at fault where there is one.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct ObkError(pub String);

/// The header of an OBK file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObkHeader {
    /// 1 (`UGWS`, 8 bytes of header) or 2 (`BOO!`, 12 bytes).
    pub version: u8,
    /// The number of move records after the header.
    pub moves: u32,
    /// Version 2: the number of text notes after the moves (not read); version 1: none.
    pub notes: Option<u32>,
}

impl ObkHeader {
    /// Reads the header at the start of `data`: `None` without one of the two magics or when
    /// `data` is shorter than the header they announce.
    pub fn parse(data: &[u8]) -> Option<ObkHeader> {
        if data.starts_with(&OBK_V2_MAGIC) && data.len() >= 12 {
            Some(ObkHeader {
                version: 2,
                moves: LittleEndian::read_u32(&data[4..]),
                notes: Some(LittleEndian::read_u32(&data[8..])),
            })
        } else if data.starts_with(&OBK_V1_MAGIC) && data.len() >= 8 {
            Some(ObkHeader {
                version: 1,
                moves: LittleEndian::read_u32(&data[4..]),
                notes: None,
            })
        } else {
            None
        }
    }

    /// The header's size in bytes: where the first move record starts.
    pub fn size(&self) -> usize {
        if self.version == 1 { 8 } else { 12 }
    }

    /// The bytes the header and its move records take (the notes, if any, come after them).
    pub fn moves_end(&self) -> u64 {
        self.size() as u64 + OBK_RECORD_SIZE as u64 * u64::from(self.moves)
    }
}

/// One move record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObkRecord {
    /// The squares, a1 = 0, b1 = 1, …, h8 = 63 (castling: the king's two-square move, e1g1).
    pub from: u8,
    pub to: u8,
    /// The weight code, 0 to 3 ([`OBK_WEIGHTS`]).
    pub weight_code: u8,
    /// No other move of this position follows (bit 6 of the first byte): when clear, the next
    /// move of the same position comes after this move's line.
    pub last_at_level: bool,
    /// This move ends its line (bit 7 of the first byte): no reply follows it.
    pub last_in_line: bool,
}

impl ObkRecord {
    /// Decodes a record's two bytes.
    pub fn parse(bytes: [u8; 2]) -> ObkRecord {
        ObkRecord {
            from: bytes[0] & 0x3f,
            to: bytes[1] & 0x3f,
            weight_code: bytes[1] >> 6,
            last_at_level: bytes[0] & 0x40 != 0,
            last_in_line: bytes[0] & 0x80 != 0,
        }
    }

    /// Whether the record is a filler (a1a1, not a move), which the readers skip (jja) or stop at
    /// (CoreChess); polybook skips it.
    pub fn is_filler(&self) -> bool {
        self.from == 0 && self.to == 0
    }

    /// The record's Polyglot weight ([`OBK_WEIGHTS`]).
    pub fn weight(&self) -> u16 {
        OBK_WEIGHTS[usize::from(self.weight_code & 3)]
    }

    /// The move in UCI terms in `pos`: a pawn's move onto the last rank promotes to a queen (the
    /// format has no underpromotion).
    pub fn uci(&self, pos: &Chess) -> UciMove {
        let from = Square::new(u32::from(self.from));
        let to = Square::new(u32::from(self.to));
        let last = pos.turn().fold_wb(Rank::Eighth, Rank::First);
        let promotes = pos.board().role_at(from) == Some(Role::Pawn) && to.rank() == last;
        UciMove::Normal {
            from,
            to,
            promotion: promotes.then_some(Role::Queen),
        }
    }
}

/// An OBK book read whole: its header and its moves as Polyglot entries.
#[derive(Clone, Debug)]
pub struct ObkBook {
    pub header: ObkHeader,
    /// The entries, sorted as a Polyglot book is ([`crate::book::sort_entries`]), one per
    /// (position, move).
    pub entries: Vec<Entry>,
    /// The move records read (a transposition's moves counted each time).
    pub moves_read: u64,
    /// The filler records (a1a1) skipped.
    pub fillers: u64,
}

/// Whether a file starts like an OBK book (one of the magics) and is long enough for the move
/// records its header counts: `head` is the file's first bytes, `size` its size.
pub fn looks_like_obk(head: &[u8], size: u64) -> bool {
    ObkHeader::parse(head).is_some_and(|h| size >= h.moves_end())
}

/// Reads an OBK book: plays its records from the start position into Polyglot entries.
///
/// The weight of a move is its code's weight in [`OBK_WEIGHTS`] (jja's table). A (position, move)
/// stored on several lines (a transposition) gives one entry with the largest of its weights: the
/// code is a class of preference, not a count of games, so two move orders reaching a position
/// do not make its move twice as likely. The learn fields are 0; the notes are not read.
///
/// A filler record (a1a1) is skipped. A file without the magic, shorter than its header and move
/// records, a move that is not legal where it stands, a record after the tree's last line ended,
/// or records that end with lines still open is one error naming the record and its offset.
pub fn read_obk(data: &[u8]) -> Result<ObkBook, ObkError> {
    let Some(header) = ObkHeader::parse(data) else {
        let magic = data.starts_with(&OBK_V1_MAGIC) || data.starts_with(&OBK_V2_MAGIC);
        return Err(ObkError(if magic {
            format!(
                "not a whole Chessmaster (OBK) book: its {} bytes are shorter than the header",
                data.len()
            )
        } else {
            "not a Chessmaster (OBK) book: it does not start with the OBK magic (BOO! or UGWS)"
                .into()
        }));
    };
    if (data.len() as u64) < header.moves_end() {
        let first_missing = (data.len() - header.size()) / OBK_RECORD_SIZE;
        return Err(ObkError(format!(
            "not a whole Chessmaster (OBK) book: its header counts {} moves, {} bytes, but the file has {} bytes: record {first_missing} (offset {}) is past its end",
            header.moves,
            header.moves_end(),
            data.len(),
            header.size() + first_missing * OBK_RECORD_SIZE,
        )));
    }
    let count = header.moves as usize;
    let broken = |i: usize, what: String| {
        ObkError(format!(
            "broken Chessmaster (OBK) book: record {i} (offset {}): {what}",
            header.size() + i * OBK_RECORD_SIZE
        ))
    };

    let mut weights: HashMap<(Key, RawMove), u64> = HashMap::new();
    let (mut moves_read, mut fillers) = (0u64, 0u64);
    let mut pos = Chess::default();
    // The positions whose next move is still to come, the latest on top.
    let mut pending: Vec<Chess> = Vec::new();
    let mut ended = false;
    for i in 0..count {
        let at = header.size() + i * OBK_RECORD_SIZE;
        let r = ObkRecord::parse([data[at], data[at + 1]]);
        if r.is_filler() {
            fillers += 1;
            continue;
        }
        if ended {
            return Err(broken(
                i,
                "it comes after the tree's last line ended".into(),
            ));
        }
        let uci = r.uci(&pos);
        let mv = uci.to_move(&pos).map_err(|_| {
            broken(
                i,
                format!(
                    "its move {uci} is not legal in {}",
                    shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                ),
            )
        })?;
        moves_read += 1;
        let raw = RawMove::from_move(mv).expect("a chess move has a Polyglot encoding");
        let weight = weights.entry((Key::of(&pos), raw)).or_insert(0);
        *weight = (*weight).max(u64::from(r.weight()));
        if !r.last_at_level {
            pending.push(pos.clone());
        }
        if r.last_in_line {
            match pending.pop() {
                Some(next) => pos = next,
                None => ended = true,
            }
        } else {
            pos.play_unchecked(mv);
        }
    }
    if moves_read > 0 && !ended {
        return Err(ObkError(format!(
            "broken Chessmaster (OBK) book: its {count} records end with lines still open ({}): a move not flagged as its line's last, or a next move announced and not given",
            pending.len() + 1
        )));
    }

    let rows = weights
        .into_iter()
        .map(|((key, mv), w)| (key, mv, w, 0))
        .collect();
    Ok(ObkBook {
        header,
        entries: super::entries_from_weights(rows),
        moves_read,
        fillers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's two bytes: `uci`'s squares, the weight code and the two flags.
    fn rec(uci: &str, code: u8, last_at_level: bool, last_in_line: bool) -> [u8; 2] {
        let b = uci.as_bytes();
        let sq = |f: u8, r: u8| (f - b'a') + 8 * (r - b'1');
        [
            sq(b[0], b[1]) | u8::from(last_at_level) << 6 | u8::from(last_in_line) << 7,
            sq(b[2], b[3]) | code << 6,
        ]
    }

    fn v1(records: &[[u8; 2]]) -> Vec<u8> {
        let mut out = OBK_V1_MAGIC.to_vec();
        out.extend_from_slice(&(records.len() as u32).to_le_bytes());
        records.iter().for_each(|r| out.extend_from_slice(r));
        out
    }

    fn moves_at(book: &ObkBook, moves: &[&str]) -> Vec<(String, u16)> {
        let pos = crate::position::play_moves(Chess::default(), &moves.join(" ")).unwrap();
        let key = Key::of(&pos);
        let mut out: Vec<_> = book
            .entries
            .iter()
            .filter(|e| e.key == key)
            .map(|e| (e.mv.to_string(), e.weight))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn records_are_played_depth_first_and_lines_resume_at_the_last_open_position() {
        // 1.e4 e5 (1...c5 2.Nf3) / 1.d4 d5
        let recs = [
            rec("e2e4", 3, false, false), // a sibling (d4) follows e4's subtree
            rec("e7e5", 2, false, true),  // c5 follows; the line ends
            rec("c7c5", 1, true, false),  // last reply to e4
            rec("g1f3", 0, true, true),   // ends; back to the start for d4
            rec("d2d4", 2, true, false),
            rec("d7d5", 3, true, true), // the tree's last line ends
        ];
        let book = read_obk(&v1(&recs)).unwrap();
        assert_eq!(book.moves_read, 6);
        assert_eq!(book.entries.len(), 6);
        assert_eq!(
            moves_at(&book, &[]),
            [("d2d4".into(), 50), ("e2e4".into(), 100)]
        );
        assert_eq!(
            moves_at(&book, &["e2e4"]),
            [("c7c5".into(), 25), ("e7e5".into(), 50)]
        );
        assert_eq!(moves_at(&book, &["e2e4", "c7c5"]), [("g1f3".into(), 1)]);
        assert_eq!(moves_at(&book, &["d2d4"]), [("d7d5".into(), 100)]);
    }

    #[test]
    fn transpositions_keep_the_largest_weight_and_castling_and_promotion_are_read() {
        // 1.Nf3 Nf6 2.c4 e6 and 1.c4 Nf6 2.Nf3 e6: e6 once, code 1 and code 3 → 100.
        let recs = [
            rec("g1f3", 2, false, false),
            rec("g8f6", 2, true, false),
            rec("c2c4", 2, true, false),
            rec("e7e6", 1, true, true),
            rec("c2c4", 2, true, false),
            rec("g8f6", 2, true, false),
            rec("g1f3", 2, true, false),
            rec("e7e6", 3, true, true),
        ];
        let book = read_obk(&v1(&recs)).unwrap();
        assert_eq!(
            moves_at(&book, &["g1f3", "g8f6", "c2c4"]),
            [("e7e6".into(), 100)]
        );
        assert_eq!(book.moves_read, 8);

        // 1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.O-O (stored e1g1, read as Polyglot's e1h1).
        let line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5", "e1g1"];
        let recs: Vec<_> = line
            .iter()
            .enumerate()
            .map(|(i, m)| rec(m, 2, true, i + 1 == line.len()))
            .collect();
        let book = read_obk(&v1(&recs)).unwrap();
        assert_eq!(moves_at(&book, &line[..6]), [("e1h1".into(), 50)]);
        let pos = Chess::default();
        let pawn = ObkRecord::parse(rec("a2a1", 0, true, true));
        assert_eq!(pawn.uci(&pos).to_string(), "a2a1"); // a white pawn: no promotion from a2 to a1
        let seventh: Chess = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let up = ObkRecord::parse(rec("a7a8", 0, true, true));
        assert_eq!(up.uci(&seventh).to_string(), "a7a8q");
    }

    #[test]
    fn fillers_are_skipped_and_version_2_notes_are_not_read() {
        let mut data = OBK_V2_MAGIC.to_vec();
        data.extend_from_slice(&3u32.to_le_bytes());
        data.extend_from_slice(&1u32.to_le_bytes());
        data.extend_from_slice(&rec("e2e4", 3, true, false));
        data.extend_from_slice(&[0, 0]);
        data.extend_from_slice(&rec("e7e5", 3, true, true));
        // A note: move 0, 4 bytes of text, type 80 (a variation's name).
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&[4, 80]);
        data.extend_from_slice(b"Open");
        let book = read_obk(&data).unwrap();
        assert_eq!(book.header.notes, Some(1));
        assert_eq!((book.moves_read, book.fillers), (2, 1));
        assert_eq!(book.entries.len(), 2);
        assert!(looks_like_obk(&data, data.len() as u64));
        assert!(!looks_like_obk(&data, 17));
    }

    #[test]
    fn damaged_files_are_one_error_naming_the_record() {
        let err = |data: &[u8]| read_obk(data).unwrap_err().0;
        assert!(err(b"hello there").contains("magic"));
        assert!(err(b"BOO!\x01").contains("shorter than the header"));
        let ok = v1(&[rec("e2e4", 3, true, true)]);
        assert!(err(&ok[..9]).contains("record 0 (offset 8) is past its end"));
        let e = err(&v1(&[rec("e2e5", 3, true, true)]));
        assert!(
            e.contains("record 0 (offset 8)") && e.contains("not legal"),
            "{e}"
        );
        let e = err(&v1(&[
            rec("e2e4", 3, true, true),
            rec("e7e5", 3, true, true),
        ]));
        assert!(
            e.contains("record 1 (offset 10)") && e.contains("after"),
            "{e}"
        );
        let e = err(&v1(&[rec("e2e4", 3, false, true)]));
        assert!(e.contains("lines still open (1)"), "{e}");
        let e = err(&v1(&[rec("e2e4", 3, true, false)]));
        assert!(e.contains("still open"), "{e}");
        for e in [err(b"hello"), err(&ok[..9])] {
            assert!(!e.contains('\n'));
        }
        // No moves: an empty book.
        assert!(read_obk(&v1(&[])).unwrap().entries.is_empty());
        // A count larger than the file is refused before anything is allocated.
        let mut huge = OBK_V1_MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(err(&huge).contains("past its end"));
    }
}
