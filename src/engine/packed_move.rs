//! A move in 16 bits, as the transposition table and the mate search's table store it.
//!
//! Bits 0–5 hold the from square, 6–11 the to square, 12–14 the promotion piece, and bit 15 is
//! set for every real move, so that the all-zero word means "no move" (an empty slot). A packed
//! move is compared with the moves of a position rather than unpacked: it names a move only in
//! the position it was stored for.

use shakmaty::{Chess, Move, Position};

/// A move packed into 16 bits: from, to and promotion (see the module's overview).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PackedMove(u16);

impl PackedMove {
    /// No move.
    pub const NONE: PackedMove = PackedMove(0);

    /// `m` packed.
    #[inline]
    pub fn new(m: Move) -> PackedMove {
        let from = m.from().map_or(0, |s| s as u16);
        let to = m.to() as u16;
        let promo = m.promotion().map_or(0, |r| r as u16);
        // Never 0 for a real move: from == to is impossible, so set a marker bit.
        PackedMove(from | to << 6 | promo << 12 | 1 << 15)
    }

    /// `m` packed, or [`PackedMove::NONE`].
    #[inline]
    pub fn from_option(m: Option<Move>) -> PackedMove {
        m.map_or(PackedMove::NONE, PackedMove::new)
    }

    /// The stored word back (the table's bits).
    #[inline]
    pub const fn from_bits(bits: u16) -> PackedMove {
        PackedMove(bits)
    }

    /// The word to store.
    #[inline]
    pub const fn bits(self) -> u16 {
        self.0
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    /// Is this `m`, packed?
    #[inline]
    pub fn is(self, m: Move) -> bool {
        PackedMove::new(m) == self
    }

    /// The legal move of `pos` this stands for, if any.
    pub fn unpack(self, pos: &Chess) -> Option<Move> {
        if self.is_none() {
            return None;
        }
        pos.legal_moves().into_iter().find(|&m| self.is(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_move_packs_apart_and_back() {
        let pos: Chess = crate::position::parse_fen("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1")
            .expect("a valid FEN");
        let moves = pos.legal_moves();
        for &m in &moves {
            let p = PackedMove::new(m);
            assert!(!p.is_none());
            assert_eq!(p.unpack(&pos), Some(m));
            assert_eq!(moves.iter().filter(|&&o| p.is(o)).count(), 1);
            assert_eq!(PackedMove::from_bits(p.bits()), p);
        }
        assert_eq!(PackedMove::NONE.unpack(&pos), None);
    }

    /// Chess960's castling is packed as king-takes-rook, which no other move is: a king that
    /// castles onto its rook's square, swaps squares with it or stays where it is still packs apart
    /// from its plain king moves.
    #[test]
    fn chess960_castling_packs_apart_and_back() {
        for fen in [
            "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
            "2rk1r2/pppppppp/8/8/8/8/PPPPPPPP/2RK1R2 w FCfc - 0 1",
            "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1",
            "k4r2/8/8/8/8/7p/7P/6KR w H - 0 1",
        ] {
            let pos = crate::position::parse_fen_for(fen, true).expect("a valid FEN");
            let moves = pos.legal_moves();
            assert!(moves.iter().any(|m| m.is_castle()), "{fen}");
            for &m in &moves {
                let p = PackedMove::new(m);
                assert_eq!(p.unpack(&pos), Some(m), "{fen} {m}");
                assert_eq!(moves.iter().filter(|&&o| p.is(o)).count(), 1, "{fen} {m}");
            }
        }
    }
}
