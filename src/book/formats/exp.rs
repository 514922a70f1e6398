//! Experience files of BrainLearn, ShashChess and SugaR (`.exp`), read into Polyglot entries whose
//! learn fields hold the engines' scores in ProDeo's layout ([`crate::book::MoveScore`]).
//!
//! These Stockfish derivatives remember the moves their searches chose: an experience file is an
//! array of 24-byte little-endian records, each a position's key, a move, its score and the depth
//! of the search that gave it (the layouts and their sources: `docs/formats.md`). Three variants:
//!
//! - BrainLearn (and ShashChess's learning, the same layout): no header; key, depth, score, move,
//!   performance.
//! - SugaR/ShashChess version 1: the 5 bytes `SugaR`, then key, move, score, depth, 4 bytes unused.
//! - SugaR/ShashChess version 2: the 26 bytes `SugaR Experience version 2`, then key, move, score,
//!   depth, a count and 2 bytes unused.
//!
//! The keys are Stockfish's Zobrist keys, not Polyglot's, and the moves are in Stockfish's
//! encoding. A key cannot be turned back into a position, so [`read_exp`] walks from the start
//! position as the CTG reader does: it computes each position's Stockfish key
//! ([`stockfish_key`]), finds its records, plays their moves, and goes on from the positions
//! reached, each once. A position of the file that no line of its moves reaches from the start
//! (a game from a set-up position, an analysed middlegame) is counted in
//! [`ExpBook::unreachable`] and left out; a move that is not legal where its key was found (a key
//! collision) is counted in [`ExpBook::illegal`] and left out.
//!
//! Records of one (key, move) are merged as BrainLearn merges them on loading: the deepest wins,
//! and at equal depth the higher score. Each move then gets its score and depth in the learn field
//! and a weight from its score ([`weight_of`]): the best move of a position weighs
//! [`BEST_WEIGHT`], a move [`WEIGHT_WINDOW`] or more below the best weighs 0.

use std::collections::{HashMap, HashSet, VecDeque};

use byteorder::{ByteOrder, LittleEndian};
use shakmaty::{CastlingSide, Chess, Color, EnPassantMode, Move, Position, Role, Square};
use thiserror::Error;

use crate::book::{Entry, Key, MoveScore, RawMove};
use crate::score_scale::{MATE_BOUND_CP, MATE_CP};

/// The size of one record of every variant, in bytes.
pub const EXP_ENTRY_SIZE: usize = 24;
/// The first bytes of a SugaR/ShashChess version 2 file.
pub const EXP_V2_SIGNATURE: &[u8] = b"SugaR Experience version 2";
/// The first bytes of a SugaR version 1 file.
pub const EXP_V1_SIGNATURE: &[u8] = b"SugaR";
/// The weight of a position's best move.
pub const BEST_WEIGHT: u16 = 1000;
/// How far below the best score (in the engine's units) a move's weight falls to 0.
pub const WEIGHT_WINDOW: i32 = 100;
/// Stockfish's smallest score of a mate (`VALUE_MATE - MAX_PLY`, 32000 - 246): a score at least
/// this far from 0 is a mate in `32000 - |score|` plies.
const MATE_IN_MAX_PLY: i32 = MATE_CP - 246;

/// Why an experience file could not be read: one line.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct ExpError(pub String);

/// The variants of the format, told apart by their header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpVariant {
    /// No header; key, depth, score, move, performance.
    BrainLearn,
    /// `SugaR`, then key, move, score, depth, 4 unused bytes.
    SugarV1,
    /// `SugaR Experience version 2`, then key, move, score, depth, count, 2 unused bytes.
    SugarV2,
}

impl ExpVariant {
    /// The variant of a file from its first bytes and size: a signature followed by whole records,
    /// or BrainLearn's header-less layout.
    pub fn of(head: &[u8], size: u64) -> ExpVariant {
        let whole = |header: &[u8]| {
            head.starts_with(header)
                && size >= header.len() as u64
                && (size - header.len() as u64).is_multiple_of(EXP_ENTRY_SIZE as u64)
        };
        if whole(EXP_V2_SIGNATURE) {
            ExpVariant::SugarV2
        } else if whole(EXP_V1_SIGNATURE) {
            ExpVariant::SugarV1
        } else {
            ExpVariant::BrainLearn
        }
    }

    /// The size of the header before the first record.
    pub fn header_size(self) -> usize {
        match self {
            ExpVariant::BrainLearn => 0,
            ExpVariant::SugarV1 => EXP_V1_SIGNATURE.len(),
            ExpVariant::SugarV2 => EXP_V2_SIGNATURE.len(),
        }
    }
}

/// Whether `head`, a file's first bytes, and its size are those of a SugaR/ShashChess experience
/// file (a signature followed by whole records); a BrainLearn file has no header to tell it by.
pub fn looks_like_exp(head: &[u8], size: u64) -> bool {
    ExpVariant::of(head, size) != ExpVariant::BrainLearn
}

/// One record of an experience file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExpRecord {
    /// Stockfish's key of the position ([`stockfish_key`]).
    pub key: u64,
    /// The move in Stockfish's 16-bit encoding ([`stockfish_move`]); the bytes above it unused.
    pub mv: u16,
    /// The search's score for the side that plays the move, in the engine's internal units
    /// (mates as `±(32000 - plies)`).
    pub score: i32,
    /// The search's depth in plies.
    pub depth: i32,
    /// SugaR version 2: how often the move was played (scaled by the engine); 1 otherwise.
    pub count: u16,
    /// BrainLearn: the move's "performance" (100 by default); 0 otherwise.
    pub performance: i32,
}

impl ExpRecord {
    /// Decodes the first [`EXP_ENTRY_SIZE`] bytes of `bytes` in `variant`'s layout.
    ///
    /// # Panics
    /// If `bytes` is shorter than a record.
    pub fn parse(bytes: &[u8], variant: ExpVariant) -> ExpRecord {
        let key = LittleEndian::read_u64(bytes);
        let int = |at: usize| LittleEndian::read_i32(&bytes[at..]);
        match variant {
            ExpVariant::BrainLearn => ExpRecord {
                key,
                depth: int(8),
                score: int(12),
                mv: LittleEndian::read_u16(&bytes[16..]),
                count: 1,
                performance: int(20),
            },
            ExpVariant::SugarV1 | ExpVariant::SugarV2 => ExpRecord {
                key,
                mv: LittleEndian::read_u16(&bytes[8..]),
                score: int(12),
                depth: int(16),
                count: match variant {
                    ExpVariant::SugarV2 => LittleEndian::read_u16(&bytes[20..]),
                    _ => 1,
                },
                performance: 0,
            },
        }
    }
}

/// An experience file read from the start position.
#[derive(Clone, Debug, Default)]
pub struct ExpBook {
    /// The Polyglot entries, sorted, one per (position, move), learn fields in ProDeo's layout.
    pub entries: Vec<Entry>,
    /// The records in the file.
    pub records: usize,
    /// The distinct keys (positions) in the file.
    pub positions: usize,
    /// Of those, the ones that no line of the file's moves reaches from the start: left out.
    pub unreachable: usize,
    /// Moves not legal in the position their key was found for (collisions): left out.
    pub illegal: usize,
}

/// A move of a position after its records were merged.
#[derive(Clone, Copy, Debug)]
struct Merged {
    mv: u16,
    score: i32,
    depth: i32,
}

/// Reads an experience file of any variant (the whole file in `data`).
///
/// Errors (one line): a size that is not the header plus whole records. Everything else is read:
/// a record whose key no line reaches, or whose move is not legal, is counted and left out.
pub fn read_exp(data: &[u8]) -> Result<ExpBook, ExpError> {
    let variant = ExpVariant::of(data, data.len() as u64);
    let body = &data[variant.header_size()..];
    if !body.len().is_multiple_of(EXP_ENTRY_SIZE) {
        return Err(ExpError(format!(
            "not an experience file: {} bytes are not whole {EXP_ENTRY_SIZE}-byte records \
             ({} bytes left over)",
            body.len(),
            body.len() % EXP_ENTRY_SIZE
        )));
    }
    let mut by_key: HashMap<u64, Vec<Merged>> = HashMap::new();
    for chunk in body.chunks_exact(EXP_ENTRY_SIZE) {
        let r = ExpRecord::parse(chunk, variant);
        let moves = by_key.entry(r.key).or_default();
        let new = Merged {
            mv: r.mv,
            score: r.score,
            depth: r.depth,
        };
        match moves.iter_mut().find(|m| m.mv == r.mv) {
            Some(old) => {
                if (new.depth, new.score) > (old.depth, old.score) {
                    *old = new;
                }
            }
            None => moves.push(new),
        }
    }
    let mut book = ExpBook {
        records: body.len() / EXP_ENTRY_SIZE,
        positions: by_key.len(),
        ..ExpBook::default()
    };
    let mut reached: HashSet<u64> = HashSet::new();
    let mut seen: HashSet<Key> = HashSet::new();
    let mut rows = Vec::new();
    let start = Chess::default();
    seen.insert(Key::of(&start));
    let mut queue = VecDeque::from([start]);
    while let Some(pos) = queue.pop_front() {
        let moves = moves_of(&pos, &by_key, &mut reached);
        let legal = pos.legal_moves();
        let mut found: Vec<(Move, Merged)> = Vec::new();
        for m in moves {
            match legal.iter().find(|l| stockfish_move(l) == Some(m.mv)) {
                Some(&l) => found.push((l, m)),
                None => book.illegal += 1,
            }
        }
        let best = found.iter().map(|(_, m)| m.score).max().unwrap_or(0);
        let key = Key::of(&pos);
        for (mv, m) in found {
            let Some(raw) = RawMove::from_move(mv) else {
                continue;
            };
            let learn = MoveScore::new(polybook_score(m.score), m.depth.max(1) as u32).to_learn();
            rows.push((key, raw, u64::from(weight_of(m.score, best)), learn));
            let mut child = pos.clone();
            child.play_unchecked(mv);
            if has_records(&child, &by_key) && seen.insert(Key::of(&child)) {
                queue.push_back(child);
            }
        }
    }
    book.unreachable = book.positions - reached.len();
    book.entries = super::entries_from_weights(rows);
    Ok(book)
}

/// The merged moves of `pos`: under its Stockfish key, and under the key with the 50-move
/// counter mixed in where the engine's `key()` does so ([`stockfish_keys`]); the keys found are
/// added to `reached`.
fn moves_of(
    pos: &Chess,
    by_key: &HashMap<u64, Vec<Merged>>,
    reached: &mut HashSet<u64>,
) -> Vec<Merged> {
    let mut out: Vec<Merged> = Vec::new();
    for key in stockfish_keys(pos).into_iter().flatten() {
        let Some(moves) = by_key.get(&key) else {
            continue;
        };
        reached.insert(key);
        for &m in moves {
            match out.iter_mut().find(|o| o.mv == m.mv) {
                Some(o) if (m.depth, m.score) > (o.depth, o.score) => *o = m,
                Some(_) => {}
                None => out.push(m),
            }
        }
    }
    out
}

fn has_records(pos: &Chess, by_key: &HashMap<u64, Vec<Merged>>) -> bool {
    stockfish_keys(pos)
        .into_iter()
        .flatten()
        .any(|k| by_key.contains_key(&k))
}

/// The weight of a move scored `score` in a position whose best move scores `best` (both in
/// the engine's units): [`BEST_WEIGHT`] for the best, falling in a straight line to 0 at
/// [`WEIGHT_WINDOW`] below it, and 0 beyond; a move within the window weighs at least 1.
///
/// An experience file holds the moves the engine searched, refutations included: a move far
/// below the best is one the engine learned to avoid, kept in the book (its score is worth
/// seeing) but never played.
///
/// ```
/// use polybook::book::formats::exp::weight_of;
/// assert_eq!(weight_of(40, 40), 1000);
/// assert_eq!(weight_of(-10, 40), 500);
/// assert_eq!(weight_of(-60, 40), 0);
/// ```
pub fn weight_of(score: i32, best: i32) -> u16 {
    let gap = i64::from(best) - i64::from(score);
    let window = i64::from(WEIGHT_WINDOW);
    if gap >= window {
        0
    } else {
        (i64::from(BEST_WEIGHT) * (window - gap.max(0)) / window).max(1) as u16
    }
}

/// A score of the engine's as polybook's scale holds it: mates (beyond ±31754) kept as
/// `±(32000 - plies)`, which is polybook's own mate scale; any other score kept as it is, in the
/// engine's units, and held within ±31000 so that it never reads as a mate.
fn polybook_score(score: i32) -> i32 {
    if score.unsigned_abs() >= MATE_IN_MAX_PLY as u32 {
        score.clamp(-MATE_CP, MATE_CP)
    } else {
        score.clamp(-MATE_BOUND_CP, MATE_BOUND_CP)
    }
}

// ---- Stockfish's keys and moves -----------------------------------------------------------------

/// Stockfish's pseudo-random generator (xorshift64*), as its `PRNG` class.
const fn next_random(s: u64) -> (u64, u64) {
    let mut s = s;
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    (s, s.wrapping_mul(2_685_821_657_736_338_717))
}

/// Stockfish's Zobrist numbers, drawn as its `Position::init` draws them from the seed 1070372:
/// 64 squares for each of the 12 pieces (White's pawn to king, then Black's), 8 en-passant files,
/// 16 sets of castling rights, the side to move.
struct Zobrist {
    psq: [[u64; 64]; 12],
    enpassant: [u64; 8],
    castling: [u64; 16],
    side: u64,
}

const ZOBRIST: Zobrist = {
    let mut z = Zobrist {
        psq: [[0; 64]; 12],
        enpassant: [0; 8],
        castling: [0; 16],
        side: 0,
    };
    let mut s = 1_070_372u64;
    let mut piece = 0;
    while piece < 12 {
        s = draw_randoms(s, &mut z.psq[piece]);
        piece += 1;
    }
    s = draw_randoms(s, &mut z.enpassant);
    s = draw_randoms(s, &mut z.castling);
    z.side = next_random(s).1;
    z
};

/// Fills `out` with the next numbers of the generator whose state is `s`, in order; the state
/// after them.
const fn draw_randoms(mut s: u64, out: &mut [u64]) -> u64 {
    let mut i = 0;
    while i < out.len() {
        let (next, r) = next_random(s);
        s = next;
        out[i] = r;
        i += 1;
    }
    s
}

/// Stockfish's key of `pos` (its `st->key`), as Stockfish 11 and later compute it: the pieces, the
/// castling rights (one number per set of rights, the empty set included), the en-passant file
/// when a pawn of the side to move attacks the square (whether or not the capture is legal), and
/// the side when Black is to move.
pub fn stockfish_key(pos: &Chess) -> u64 {
    let z = &ZOBRIST;
    let mut key = 0;
    for (sq, piece) in pos.board().iter() {
        let role = match piece.role {
            Role::Pawn => 0,
            Role::Knight => 1,
            Role::Bishop => 2,
            Role::Rook => 3,
            Role::Queen => 4,
            Role::King => 5,
        };
        let index = role + if piece.color == Color::White { 0 } else { 6 };
        key ^= z.psq[index][usize::from(sq)];
    }
    if let Some(ep) = pos.ep_square(EnPassantMode::PseudoLegal) {
        key ^= z.enpassant[usize::from(ep.file())];
    }
    // Stockfish's rights: 1 White short, 2 White long, 4 Black short, 8 Black long.
    let mut cr = 0;
    for (bit, color, side) in [
        (1, Color::White, CastlingSide::KingSide),
        (2, Color::White, CastlingSide::QueenSide),
        (4, Color::Black, CastlingSide::KingSide),
        (8, Color::Black, CastlingSide::QueenSide),
    ] {
        if pos.castles().has(color, side) {
            cr |= bit;
        }
    }
    key ^= z.castling[cr];
    if pos.turn() == Color::Black {
        key ^= z.side;
    }
    key
}

/// The keys an engine may have stored for `pos`: [`stockfish_key`], and where 14 or more plies
/// passed without a capture or pawn move, that key with the 50-move counter mixed in, as
/// Stockfish 14 and 15's `Position::key()` gives it (later versions dropped it).
pub fn stockfish_keys(pos: &Chess) -> [Option<u64>; 2] {
    let key = stockfish_key(pos);
    let rule50 = u64::from(pos.halfmoves());
    let adjusted = (rule50 >= 14).then(|| {
        key ^ ((rule50 - 14) / 8)
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407)
    });
    [Some(key), adjusted]
}

/// A move in Stockfish's 16-bit encoding: the destination in bits 0-5, the origin in bits 6-11
/// (squares a1 = 0 … h8 = 63), the promotion piece in bits 12-13 (knight 0 … queen 3) and the
/// kind in bits 14-15 (1 promotion, 2 en passant, 3 castling, which is "king takes own rook").
/// `None` for a drop, which chess has not.
pub fn stockfish_move(mv: &Move) -> Option<u16> {
    let squares = |from: Square, to: Square| (u16::from(from) << 6) | u16::from(to);
    Some(match *mv {
        Move::Normal {
            from,
            to,
            promotion: None,
            ..
        } => squares(from, to),
        Move::Normal {
            from,
            to,
            promotion: Some(role),
            ..
        } => {
            let piece = match role {
                Role::Knight => 0,
                Role::Bishop => 1,
                Role::Rook => 2,
                _ => 3,
            };
            (1 << 14) | (piece << 12) | squares(from, to)
        }
        Move::EnPassant { from, to } => (2 << 14) | squares(from, to),
        Move::Castle { king, rook } => (3 << 14) | squares(king, rook),
        Move::Put { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    fn play(moves: &[&str]) -> Chess {
        crate::position::play_moves(Chess::default(), &moves.join(" ")).unwrap()
    }

    /// A record's bytes in a variant's layout, written here field by field.
    fn record(variant: ExpVariant, key: u64, mv: u16, score: i32, depth: i32) -> Vec<u8> {
        let mut b = key.to_le_bytes().to_vec();
        match variant {
            ExpVariant::BrainLearn => {
                b.extend(depth.to_le_bytes());
                b.extend(score.to_le_bytes());
                b.extend(u32::from(mv).to_le_bytes());
                b.extend(100i32.to_le_bytes());
            }
            _ => {
                b.extend(u32::from(mv).to_le_bytes());
                b.extend(score.to_le_bytes());
                b.extend(depth.to_le_bytes());
                b.extend([7, 0, 0, 0]);
            }
        }
        b
    }

    #[test]
    fn stockfish_keys_of_known_positions() {
        // Printed by Stockfish 15.1's `d` (tests/it/exp.rs checks more against the binary).
        assert_eq!(stockfish_key(&Chess::default()), 0x8F8F_01D4_562F_59FB);
    }

    #[test]
    fn moves_in_stockfish_encoding() {
        let pos = play(&[
            "e2e4", "d7d5", "e4e5", "f7f5", "g1f3", "g8f6", "f1e2", "b8c6",
        ]);
        let find = |uci: &str| {
            let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            stockfish_move(&m).unwrap()
        };
        assert_eq!(find("e1g1"), (3 << 14) | (4 << 6) | 7);
        assert_eq!(find("e5f6"), (36 << 6) | 45);
        assert_eq!(find("e2d3"), (12 << 6) | 19);
        let ep = play(&["e2e4", "a7a6", "e4e5", "d7d5"]);
        let m = "e5d6".parse::<UciMove>().unwrap().to_move(&ep).unwrap();
        assert_eq!(stockfish_move(&m), Some((2 << 14) | (36 << 6) | 43));
        let promo: Chess = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let m = "b7b8n".parse::<UciMove>().unwrap().to_move(&promo).unwrap();
        assert_eq!(stockfish_move(&m), Some((1 << 14) | (49 << 6) | 57));
    }

    #[test]
    fn the_variants_decode_as_their_layouts() {
        let start = stockfish_key(&Chess::default());
        let e2e4 = (12 << 6) | 28;
        for variant in [
            ExpVariant::BrainLearn,
            ExpVariant::SugarV1,
            ExpVariant::SugarV2,
        ] {
            let mut data = match variant {
                ExpVariant::BrainLearn => Vec::new(),
                ExpVariant::SugarV1 => EXP_V1_SIGNATURE.to_vec(),
                ExpVariant::SugarV2 => EXP_V2_SIGNATURE.to_vec(),
            };
            data.extend(record(variant, start, e2e4, 35, 20));
            assert_eq!(ExpVariant::of(&data, data.len() as u64), variant);
            let r = ExpRecord::parse(&data[variant.header_size()..], variant);
            assert_eq!((r.key, r.mv, r.score, r.depth), (start, e2e4, 35, 20));
            let book = read_exp(&data).unwrap();
            assert_eq!(book.entries.len(), 1);
            let e = book.entries[0];
            assert_eq!(e.key, Key::of(&Chess::default()));
            assert_eq!(e.mv, RawMove::from_uci_str("e2e4").unwrap());
            assert_eq!(e.weight, BEST_WEIGHT);
            let s = MoveScore::from_learn(e.learn).unwrap();
            assert_eq!((s.score, s.depth), (35, 20));
        }
    }

    #[test]
    fn records_merge_deepest_first_and_unreachable_positions_are_counted() {
        let start = stockfish_key(&Chess::default());
        let after = stockfish_key(&play(&["e2e4"]));
        let (e2e4, d2d4, e7e5) = ((12 << 6) | 28, (11 << 6) | 27, (52 << 6) | 36);
        let v = ExpVariant::BrainLearn;
        let data: Vec<u8> = [
            record(v, start, e2e4, 10, 12),
            record(v, start, e2e4, 90, 8), // shallower: loses
            record(v, start, d2d4, -150, 15),
            record(v, after, e7e5, 5, 10),
            record(v, 12345, e7e5, 5, 10), // no line reaches it
            record(v, after, 0, 5, 10),    // no move
        ]
        .concat();
        let book = read_exp(&data).unwrap();
        assert_eq!((book.records, book.positions), (6, 3));
        assert_eq!((book.unreachable, book.illegal), (1, 1));
        let got: Vec<_> = book
            .entries
            .iter()
            .map(|e| {
                let s = MoveScore::from_learn(e.learn).unwrap();
                (e.mv.to_string(), e.weight, s.score, s.depth)
            })
            .collect();
        assert!(got.contains(&("e2e4".into(), 1000, 10, 12)), "{got:?}");
        assert!(got.contains(&("d2d4".into(), 0, -150, 15)), "{got:?}");
        assert!(got.contains(&("e7e5".into(), 1000, 5, 10)), "{got:?}");
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn damaged_sizes_are_one_line_errors() {
        for data in [vec![0u8; 25], EXP_V2_SIGNATURE[..20].to_vec(), vec![1; 7]] {
            let e = read_exp(&data).unwrap_err();
            assert!(!e.0.contains('\n') && e.0.contains("24-byte"), "{e}");
        }
        assert!(read_exp(&[]).unwrap().entries.is_empty());
    }

    #[test]
    fn mates_keep_their_distance_and_other_scores_never_read_as_mates() {
        assert_eq!(polybook_score(31_995), 31_995);
        assert_eq!(polybook_score(-31_990), -31_990);
        assert_eq!(polybook_score(31_500), MATE_BOUND_CP);
        assert_eq!(polybook_score(i32::MIN), -MATE_CP);
        assert_eq!(weight_of(i32::MIN, i32::MAX), 0);
    }
}
