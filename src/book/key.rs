//! Polyglot Zobrist keys.
//!
//! shakmaty's Zobrist tables are Polyglot's Random64 array, so the key is shakmaty's 64-bit hash
//! with [`EnPassantMode::PseudoLegal`]: Polyglot hashes the en-passant file whenever a pawn of the
//! side to move stands beside the pawn that just made a double push, whether or not the capture is
//! legal (a pinned pawn still counts).

use std::fmt;
use std::str::FromStr;

use shakmaty::zobrist::Zobrist64;
use shakmaty::{EnPassantMode, Position};

/// The Polyglot key of a position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub u64);

impl Key {
    /// The Polyglot key of `pos`.
    pub fn of<P: Position>(pos: &P) -> Key {
        Key(pos.zobrist_hash::<Zobrist64>(EnPassantMode::PseudoLegal).0)
    }
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
