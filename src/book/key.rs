//! Polyglot Zobrist keys.
//!
//! shakmaty's Zobrist tables are Polyglot's Random64 array, so the key is shakmaty's 64-bit hash
//! with [`EnPassantMode::PseudoLegal`]: Polyglot hashes the en-passant file whenever a pawn of the
//! side to move stands beside the pawn that just made a double push, whether or not the capture is
//! legal (a pinned pawn still counts).

use std::fmt;
use std::str::FromStr;

use shakmaty::zobrist::{Zobrist64, ZobristValue};
use shakmaty::{Bitboard, Castles, CastlingSide, Chess, Color, EnPassantMode, Move, Position};

use crate::position::for_each_piece_moved;

/// The Polyglot key of a position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub u64);

impl Key {
    /// The Polyglot key of `pos`.
    pub fn of<P: Position>(pos: &P) -> Key {
        Key(pos.zobrist_hash::<Zobrist64>(EnPassantMode::PseudoLegal).0)
    }

    /// The key of `after`, the position `mv` leads to from `before`, whose key is `self`:
    /// only what the move changed is hashed again (a fraction of [`Key::of`]'s work).
    pub fn after(self, before: &Chess, mv: Move, after: &Chess) -> Key {
        KeyUpdate::new(self, before, mv).finish(after)
    }
}

/// A key being carried across one move without copying the position: [`KeyUpdate::new`] reads
/// what it needs before the move is played, [`KeyUpdate::finish`] the rest after.
pub struct KeyUpdate {
    z: Zobrist64,
    /// The castling rights before the move, and their part of the key.
    rights: Bitboard,
    rights_z: Zobrist64,
    /// Not a move of standard chess: the key is computed afresh.
    afresh: bool,
}

impl KeyUpdate {
    /// Starts the key after `mv` from the key of `before` (the position `mv` is played in).
    #[inline]
    pub fn new(key: Key, before: &Chess, mv: Move) -> KeyUpdate {
        type Z = Zobrist64;
        let mut z = Zobrist64(key.0);
        z ^= Z::zobrist_for_white_turn();
        if let Some(sq) = before.ep_square(EnPassantMode::PseudoLegal) {
            z ^= Z::zobrist_for_en_passant_file(sq.file());
        }
        // A piece's part of the key is the same whether it is put on its square or taken off.
        let afresh = !for_each_piece_moved(before.turn(), mv, |piece, sq, _| {
            z ^= Z::zobrist_for_piece(sq, piece);
        });
        let castles = before.castles();
        KeyUpdate {
            z,
            rights: castles.castling_rights(),
            rights_z: castling_key(castles),
            afresh,
        }
    }

    /// The key of `after`, the position the move led to.
    #[inline]
    pub fn finish(self, after: &Chess) -> Key {
        type Z = Zobrist64;
        if self.afresh {
            return Key::of(after);
        }
        let mut z = self.z;
        let castles = after.castles();
        if castles.castling_rights() != self.rights {
            z ^= self.rights_z;
            z ^= castling_key(castles);
        }
        if let Some(sq) = after.ep_square(EnPassantMode::PseudoLegal) {
            z ^= Z::zobrist_for_en_passant_file(sq.file());
        }
        Key(z.0)
    }
}

/// The part of a key that the castling rights make.
#[inline]
fn castling_key(castles: &Castles) -> Zobrist64 {
    let mut z = Zobrist64(0);
    if castles.castling_rights().is_empty() {
        return z;
    }
    for color in Color::ALL {
        for side in CastlingSide::ALL {
            if castles.has(color, side) {
                z ^= Zobrist64::zobrist_for_castling_right(color, side);
            }
        }
    }
    z
}

impl fmt::Display for Key {
    /// 16 lowercase hex digits, as `polyglot` and python-chess print keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl FromStr for Key {
    type Err = std::num::ParseIntError;

    /// Hex digits, with or without a leading `0x`.
    fn from_str(s: &str) -> Result<Key, Self::Err> {
        let s = s.trim();
        let s = s.strip_prefix("0x").unwrap_or(s);
        u64::from_str_radix(s, 16).map(Key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    /// Every legal move of `pos`: the key after it, updated, is the key computed afresh.
    fn check_every_move(pos: &Chess) -> usize {
        let key = Key::of(pos);
        let moves = pos.legal_moves();
        for &m in &moves {
            let mut after = pos.clone();
            after.play_unchecked(m);
            assert_eq!(
                key.after(pos, m, &after),
                Key::of(&after),
                "{m:?} in {pos:?}"
            );
        }
        moves.len()
    }

    #[test]
    fn updated_keys_equal_fresh_ones() {
        // Castling both ways with rights lost and kept, en passant (also with a pinned pawn),
        // promotions with and without capture, rook captures that take away castling rights.
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/8/8/K2pP2q/8/8/8/7k w - d6 0 1",
            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        ] {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            assert!(check_every_move(&pos) > 0);
        }
        let mut rng = StdRng::seed_from_u64(7);
        let mut checked = 0;
        for _ in 0..200 {
            let mut pos = Chess::default();
            for _ in 0..150 {
                checked += check_every_move(&pos);
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
            }
        }
        assert!(checked > 100_000, "{checked}");
    }
}
