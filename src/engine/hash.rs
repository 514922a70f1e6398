//! Position hashes: one Zobrist key for the search, the transposition table, the mate search and
//! the repetition rule.
//!
//! The key is shakmaty's 64-bit Zobrist hash with the en-passant square counted only when a
//! capture there is legal. That is exactly the repetition rule's notion of "the same position"
//! (same pieces, side to move, castling rights and legal en-passant captures), so the same key
//! serves the transposition table and the repetition check, in the engine and in the arena.
//!
//! Chess960 needs nothing more: castling moves the king and a rook, which shakmaty never updates
//! incrementally (the key is computed afresh), whatever their squares; a castling right is keyed by
//! its colour and side, and within a game the rook it names never changes.

use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Move, Position};

/// The hash of `pos`, and the key two positions share when they are the same for the
/// repetition rule.
#[inline]
pub fn hash_of(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The hash of `child`, the position after `m` in `pos` whose hash is `hash`: updated
/// incrementally, or computed afresh where shakmaty cannot update it.
#[inline]
pub fn child_hash(pos: &Chess, hash: u64, m: Move, child: &Chess) -> u64 {
    match pos.update_zobrist_hash(Zobrist64(hash), m, EnPassantMode::Legal) {
        Some(h) => h.0,
        None => hash_of(child),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{parse_fen, parse_fen_for, parse_move};

    #[test]
    fn the_child_hash_is_the_hash_of_the_child() {
        // Quiet moves, a capture, castling, a double step with and without a legal en passant.
        let pos = parse_fen("r3k2r/ppq1bppp/2n5/3pP3/8/5N2/PPP2PPP/R3K2R w KQkq d6 0 1").unwrap();
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            assert_eq!(child_hash(&pos, hash_of(&pos), m, &child), hash_of(&child));
        }
        let m = parse_move(&pos, "exd6").unwrap();
        assert!(m.is_en_passant());
    }

    #[test]
    fn the_child_hash_follows_chess960_castling() {
        // The king onto its rook's square, king and rook swapping squares, a rook that stays, a
        // king that stays.
        for fen in [
            "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
            "2rk1r2/pppppppp/8/8/8/8/PPPPPPPP/2RK1R2 b FCfc - 0 1",
            "k4r2/8/8/8/8/7p/7P/6KR w H - 0 1",
        ] {
            let pos = parse_fen_for(fen, true).unwrap();
            let castles: Vec<Move> = pos
                .legal_moves()
                .into_iter()
                .filter(|m| m.is_castle())
                .collect();
            assert!(!castles.is_empty(), "{fen}");
            for m in castles {
                let mut child = pos.clone();
                child.play_unchecked(m);
                assert_eq!(child_hash(&pos, hash_of(&pos), m, &child), hash_of(&child));
                // Castled, the rights are gone: never the key of the position before.
                assert_ne!(hash_of(&child), hash_of(&pos));
            }
        }
    }
}
