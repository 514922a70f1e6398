//! One book record: 16 bytes, big-endian.

use byteorder::{BigEndian, ByteOrder};

use super::{Key, RawMove};

/// The size of one record in bytes.
pub const ENTRY_SIZE: usize = 16;

/// One record of a Polyglot book: key (u64), move (u16), weight (u16), learn (u32).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Entry {
    pub key: Key,
    pub mv: RawMove,
    pub weight: u16,
    pub learn: u32,
}

impl Entry {
    /// The entry of `key` for a move written in UCI (`e2e4`, `e7e8q`; castling as the king's
    /// move, `e1g1`) with `weight` and learn 0; `None` for text that is no move.
    ///
    /// ```
    /// use polybook::book::{Entry, Key, RawMove};
    /// let e = Entry::from_uci(Key(7), "e2e4", 3).unwrap();
    /// assert_eq!((e.key, e.mv, e.weight, e.learn), (Key(7), RawMove::from_uci_str("e2e4").unwrap(), 3, 0));
    /// assert!(Entry::from_uci(Key(7), "e2", 3).is_none());
    /// ```
    pub fn from_uci(key: Key, uci: &str, weight: u16) -> Option<Entry> {
        Some(Entry {
            key,
            mv: RawMove::from_uci_str(uci)?,
            weight,
            learn: 0,
        })
    }

    /// Decodes a record from the first 16 bytes of `bytes`.
    ///
    /// # Panics
    /// If `bytes` is shorter than [`ENTRY_SIZE`].
    pub fn from_bytes(bytes: &[u8]) -> Entry {
        Entry {
            key: Key(BigEndian::read_u64(&bytes[0..8])),
            mv: RawMove(BigEndian::read_u16(&bytes[8..10])),
            weight: BigEndian::read_u16(&bytes[10..12]),
            learn: BigEndian::read_u32(&bytes[12..16]),
        }
    }

    /// Encodes the record as 16 big-endian bytes.
    pub fn to_bytes(&self) -> [u8; ENTRY_SIZE] {
        let mut out = [0u8; ENTRY_SIZE];
        BigEndian::write_u64(&mut out[0..8], self.key.0);
        BigEndian::write_u16(&mut out[8..10], self.mv.0);
        BigEndian::write_u16(&mut out[10..12], self.weight);
        BigEndian::write_u32(&mut out[12..16], self.learn);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let e = Entry {
            key: Key(0x463b96181691fc9c),
            mv: RawMove(0x031c),
            weight: 17,
            learn: 0xdeadbeef,
        };
        let bytes = e.to_bytes();
        assert_eq!(
            &bytes[0..8],
            &[0x46, 0x3b, 0x96, 0x18, 0x16, 0x91, 0xfc, 0x9c]
        );
        assert_eq!(&bytes[8..12], &[0x03, 0x1c, 0x00, 0x11]);
        assert_eq!(Entry::from_bytes(&bytes), e);
    }
}
