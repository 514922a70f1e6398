//! A ChessBase (CTG) book writer for the tests: the three files of a book (`.ctg`, `.cto`, `.ctb`)
//! from a list of positions, each with its moves and statistics, laid out as docs/formats.md
//! ("ChessBase books (CTG)") says. polybook only reads CTG; this writer exists so that its reader
//! can be tried on books of any size and content, and on round trips from Polyglot books.
//!
//! What the writer takes from the library: the encoding of a position ([`ctg::encode`]), its
//! hash ([`ctg::ctg_hash`], whose 64-number table every reader shares), and the move codes (found
//! by trying each code of [`ctg::MOVE_TABLE`] with [`ctg::decode_move`]). What it writes on its
//! own, from the documented layout: the stored view (White to move, mirrored), the records, the
//! pages, the `.cto` index and the `.ctb` bounds.
//!
//! The index: every position goes to slot `(h & m) + m` of one level `m = 2^k − 1` (the least
//! `k` at which each slot's records fit in a page), so a reader finds it at the first level
//! it does not skip (the `.ctb`'s lower bound is the lowest slot in use, its upper bound the
//! highest). A slot's records lie in one page, slots fill pages in slot order. The `.cto` holds
//! every slot up to `4m + 2`, the last of the next level, empty (`-1`) where unused: a reader
//! reads the next level's slot before it tests the upper bound, and a `.cto` ending earlier would
//! be short for a position the book lacks.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use polybook::book::formats::ctg;
use polybook::book::{Book, Key};
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, File, Move, Position, Setup};

/// The size of a page of the `.ctg`.
pub const PAGE: usize = 4096;

/// A position's statistics as the book stores them, from the side to move's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Games that reached the position.
    pub games: u32,
    /// Games the side to move won (the first counter, bytes 3–6).
    pub wins: u32,
    /// Games the side to move lost (bytes 6–9).
    pub losses: u32,
    /// Drawn games (bytes 9–12).
    pub draws: u32,
    /// The recommendation byte (30): `0x80` green, `0x40` red, 0 neither.
    pub recommendation: u8,
}

impl Stats {
    /// `games` games of no known result.
    pub fn games(games: u32) -> Stats {
        Stats {
            games,
            ..Stats::default()
        }
    }

    /// The 33 bytes: games, wins, losses, draws (3 bytes each), 4 unknown bytes (0), rated games
    /// (3) and their sum (4), performance games (3) and their sum (4), all 0, the recommendation,
    /// an unknown byte (0) and the commentary (0).
    pub fn bytes(&self) -> [u8; 33] {
        let mut out = [0u8; 33];
        for (at, v) in [
            (0, self.games),
            (3, self.wins),
            (6, self.losses),
            (9, self.draws),
        ] {
            assert!(v < 1 << 24, "a count of {v} does not fit in 3 bytes");
            out[at..at + 3].copy_from_slice(&v.to_be_bytes()[1..]);
        }
        out[30] = self.recommendation;
        out
    }
}

/// A position of the book to write: the real position (either side to move), its moves with
/// their annotation bytes, and its statistics.
#[derive(Clone, Debug)]
pub struct Record {
    pub position: Chess,
    pub moves: Vec<(Move, u8)>,
    pub stats: Stats,
}

/// The position as the book stores it: White to move (colours flipped when Black is to move),
/// then mirrored (files reversed) when nobody may castle and the king stands on files a–d.
/// Returns the stored setup, and whether it was flipped and mirrored.
pub fn stored(pos: &Chess) -> (Setup, bool, bool) {
    let mut setup = pos.to_setup(EnPassantMode::Legal);
    let flipped = pos.turn() == Color::Black;
    if flipped {
        setup = ctg::flip_colours(setup);
    }
    let mirrored = setup.castling_rights.is_empty()
        && setup
            .board
            .king_of(Color::White)
            .is_some_and(|k| k.file() <= File::D);
    if mirrored {
        setup = ctg::mirror_files(setup);
    }
    (setup, flipped, mirrored)
}

/// The one-byte code of `mv` in `pos` (castling as the king's two-file step), or `None` for a
/// move the format cannot hold (an underpromotion, a third knight, a ninth pawn…).
pub fn move_code(pos: &Chess, mv: Move) -> Option<u8> {
    let (setup, flipped, mirrored) = stored(pos);
    let uci = mv.to_uci(CastlingMode::Standard).to_string();
    if uci.len() == 5 && !uci.ends_with('q') {
        return None;
    }
    let square = |s: &str| {
        let mut sq: shakmaty::Square = s.parse().unwrap();
        if flipped {
            sq = sq.flip_vertical();
        }
        if mirrored {
            sq = sq.flip_horizontal();
        }
        sq
    };
    let (from, to) = (square(&uci[0..2]), square(&uci[2..4]));
    ctg::MOVE_TABLE
        .iter()
        .map(|m| m.0)
        .find(|&code| ctg::decode_move(&setup.board, code) == Some((from, to)))
}

/// The bytes of one position record: the encoding, the moves' length byte (counting itself) and
/// two bytes a move (code, annotation), then the 33 bytes of statistics.
pub fn record_bytes(r: &Record) -> Vec<u8> {
    let mut out = ctg::encode(&stored(&r.position).0);
    out.push(1 + 2 * r.moves.len() as u8);
    for &(mv, annotation) in &r.moves {
        let code = move_code(&r.position, mv)
            .unwrap_or_else(|| panic!("{mv} cannot be written in a CTG book"));
        out.extend([code, annotation]);
    }
    out.extend(r.stats.bytes());
    out
}

/// A CTG book's three files, in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtgFiles {
    pub ctg: Vec<u8>,
    pub cto: Vec<u8>,
    pub ctb: Vec<u8>,
}

impl CtgFiles {
    /// Writes the files as `base.ctg`, `base.cto` and `base.ctb` (`base` with any extension);
    /// returns the `.ctg`'s path.
    pub fn save(&self, base: &Path) -> PathBuf {
        for (ext, bytes) in [("ctg", &self.ctg), ("cto", &self.cto), ("ctb", &self.ctb)] {
            std::fs::write(base.with_extension(ext), bytes).unwrap();
        }
        base.with_extension("ctg")
    }

    /// The number of data pages (the header page not counted).
    pub fn pages(&self) -> usize {
        self.ctg.len() / PAGE - 1
    }
}

/// Writes a book of `records`; `games` goes to the header page (offset 28). Panics on two records
/// of one stored position (the same encoding).
pub fn write_ctg(records: &[Record], games: u32) -> CtgFiles {
    let mut seen = HashSet::new();
    let mut entries: Vec<(u32, Vec<u8>)> = Vec::with_capacity(records.len());
    for r in records {
        let bytes = record_bytes(r);
        let encoded = ctg::encode(&stored(&r.position).0);
        assert!(
            seen.insert(encoded.clone()),
            "two records of one stored position"
        );
        assert!(bytes.len() + 4 <= PAGE, "a record larger than a page");
        entries.push((ctg::ctg_hash(&encoded), bytes));
    }
    // The level: the least k at which every slot's records fit in one page, starting where the
    // records would fill the slots' pages about half.
    let total: usize = entries.iter().map(|e| e.1.len()).sum();
    let mut k = 0u32;
    while (1usize << k) * (PAGE / 2) < total {
        k += 1;
    }
    let slots = loop {
        let m = (1u32 << k) - 1;
        let mut slots: Vec<Vec<usize>> = vec![Vec::new(); 1 << k];
        for (i, e) in entries.iter().enumerate() {
            slots[(e.0 & m) as usize].push(i);
        }
        let fits = slots
            .iter()
            .all(|s| 4 + s.iter().map(|&i| entries[i].1.len()).sum::<usize>() <= PAGE);
        if fits {
            break slots;
        }
        k += 1;
    };
    let m = (1u32 << k) - 1;

    // The header page: the game count at offset 28, the rest 0.
    let mut ctg = vec![0u8; PAGE];
    ctg[28..32].copy_from_slice(&games.to_be_bytes());
    // The index: every slot up to the next level's last one, -1 (empty) unless given a page.
    let index_len = 4 * m as usize + 3;
    let mut index = vec![-1i32; index_len];
    let mut page: Vec<u8> = Vec::new();
    let mut count = 0u16;
    let mut pages = 0i32;
    let flush = |ctg: &mut Vec<u8>, page: &mut Vec<u8>, count: &mut u16, pages: &mut i32| {
        let used = 4 + page.len();
        let mut bytes = Vec::with_capacity(PAGE);
        bytes.extend(count.to_be_bytes());
        bytes.extend((used as u16).to_be_bytes());
        bytes.append(page);
        bytes.resize(PAGE, 0);
        ctg.extend(bytes);
        *count = 0;
        *pages += 1;
    };
    let (mut low, mut high) = (None, 0u32);
    for (s, members) in slots.iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        let slot = s as u32 + m;
        let size: usize = members.iter().map(|&i| entries[i].1.len()).sum();
        if 4 + page.len() + size > PAGE {
            flush(&mut ctg, &mut page, &mut count, &mut pages);
        }
        for &i in members {
            page.extend_from_slice(&entries[i].1);
            count += 1;
        }
        index[slot as usize] = pages;
        low.get_or_insert(slot);
        high = slot;
    }
    if count > 0 || pages == 0 {
        flush(&mut ctg, &mut page, &mut count, &mut pages);
    }
    // The .cto: a 16-byte head (not read by any reader; 0 here), then the slots.
    let mut cto = vec![0u8; 16];
    for p in index {
        cto.extend(p.to_be_bytes());
    }
    // The .ctb: 4 bytes (not read; 0 here), the lower bound, the upper bound.
    let mut ctb = vec![0u8; 4];
    ctb.extend(low.unwrap_or(m).to_be_bytes());
    ctb.extend(high.max(low.unwrap_or(m)).to_be_bytes());
    CtgFiles { ctg, cto, ctb }
}

/// The positions of a Polyglot book reachable from the start by its legal moves, breadth first,
/// each once (by its stored position: two positions the book stores alike — mirror images, or
/// keys that differ only by an en-passant square no capture can use — become one record, the
/// first reached), as CTG records:
///
/// - a position's moves are its book moves (the format's codes allow; a move it cannot hold,
///   such as an underpromotion, is left out), with annotation `annotation(weight)`;
/// - every position a book move leads to has a record, with no moves when the Polyglot book has
///   none there, and as statistics `games` = the weight of the first move reaching it, results
///   unknown: polybook reads a move's weight as `2 × wins + draws` plus the games of no known
///   result, so each move weighs what it weighed in the Polyglot book unless a transposition
///   reaches its position by another move of another weight first;
/// - the start position's games are the sum of its moves' weights.
///
/// Returns the records, and the (key, move, weight) triples written.
pub fn from_polyglot(
    book: &Book,
    annotation: impl Fn(u16) -> u8,
) -> (Vec<Record>, Vec<(Key, Move, u16)>) {
    let start = Chess::default();
    let mut games: HashMap<Key, u32> = HashMap::new();
    let mut seen_keys = HashSet::from([Key::of(&start)]);
    let mut seen_stored = HashSet::new();
    let mut queue = VecDeque::from([start.clone()]);
    let mut records = Vec::new();
    let mut written = Vec::new();
    let start_games: u32 = book
        .find_all(&start)
        .iter()
        .map(|m| u32::from(m.entry.weight))
        .sum();
    games.insert(Key::of(&start), start_games);
    while let Some(pos) = queue.pop_front() {
        let key = Key::of(&pos);
        if !seen_stored.insert(ctg::encode(&stored(&pos).0)) {
            continue;
        }
        let mut moves = Vec::new();
        let mut codes = HashSet::new();
        for bm in book.find_all(&pos) {
            // A code once a position (two entries of one move: the first).
            let Some(code) = move_code(&pos, bm.mv) else {
                continue;
            };
            if !codes.insert(code) {
                continue;
            }
            moves.push((bm.mv, annotation(bm.entry.weight)));
            written.push((key, bm.mv, bm.entry.weight));
            let child = pos.clone().play(bm.mv).unwrap();
            let child_key = Key::of(&child);
            games.entry(child_key).or_insert(u32::from(bm.entry.weight));
            if seen_keys.insert(child_key) {
                queue.push_back(child);
            }
        }
        records.push(Record {
            position: pos,
            moves,
            stats: Stats::games(games[&key]),
        });
    }
    (records, written)
}
