//! Polyglot's move encoding.
//!
//! A move is 16 bits: `to | from << 6 | promotion << 12`, squares numbered a1 = 0 … h8 = 63 and
//! promotion pieces N = 1, B = 2, R = 3, Q = 4. Castling is stored as "king takes own rook"
//! (e1h1, e1a1, e8h8, e8a8), so a raw move means something only against a position.

use std::fmt;

use shakmaty::uci::UciMove;
use shakmaty::{Move, Position, Role, Square};

/// A move as Polyglot stores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RawMove(pub u16);

impl RawMove {
    /// Encodes a move: castling becomes king-takes-rook.
    ///
    /// Drops (a Crazyhouse move) have no Polyglot encoding and give `None`.
    pub fn from_move(m: Move) -> Option<RawMove> {
        let (from, to, promotion) = match m {
            Move::Normal {
                from,
                to,
                promotion,
                ..
            } => (from, to, promotion),
            Move::EnPassant { from, to } => (from, to, None),
            Move::Castle { king, rook } => (king, rook, None),
            Move::Put { .. } => return None,
        };
        let promo = match promotion {
            None => 0,
            Some(Role::Knight) => 1,
            Some(Role::Bishop) => 2,
            Some(Role::Rook) => 3,
            Some(Role::Queen) => 4,
            Some(_) => return None,
        };
        Some(RawMove(
            u16::from(to) | (u16::from(from) << 6) | (promo << 12),
        ))
    }

    /// The destination square (for castling: the rook's square).
    pub fn to(self) -> Square {
        Square::new(u32::from(self.0 & 0x3f))
    }

    /// The origin square.
    pub fn from(self) -> Square {
        Square::new(u32::from((self.0 >> 6) & 0x3f))
    }

    /// The promotion code in bits 12–14: 0 none, 1–4 N, B, R, Q; 5–7 are not valid.
    pub fn promotion_code(self) -> u16 {
        (self.0 >> 12) & 0x7
    }

    /// The promotion piece, if the code names one.
    pub fn promotion(self) -> Option<Role> {
        match self.promotion_code() {
            1 => Some(Role::Knight),
            2 => Some(Role::Bishop),
            3 => Some(Role::Rook),
            4 => Some(Role::Queen),
            _ => None,
        }
    }

    /// Whether the bits can name a move at all: a known promotion code, bit 15 clear, and
    /// distinct squares. (Whether the move is legal depends on the position: see [`RawMove::to_move`].)
    pub fn is_well_formed(self) -> bool {
        self.0 & 0x8000 == 0 && self.promotion_code() <= 4 && self.from() != self.to()
    }

    /// Why a move code can be no move at all, if it cannot.
    ///
    /// Code 0 is not reported: it is polyglot's "no move", which some tools write as a terminator
    /// (with key ffffffffffffffff) and which readers skip; `verify` counts such entries apart.
    ///
    /// Possible moves go along a line (rank, file or diagonal) or are a knight's jump, between two
    /// different squares; a promotion is a pawn's step or capture from the 7th to the 8th rank (white)
    /// or from the 2nd to the 1st (black), to a knight, bishop, rook or queen.
    pub fn impossibility(self) -> Option<String> {
        let mv = self;
        let code = mv.0;
        if code == 0 {
            return None;
        }
        if code & 0x8000 != 0 {
            return Some(format!(
                "move code 0x{code:04x} has bit 15 set, which no move uses"
            ));
        }
        if mv.promotion_code() > 4 {
            return Some(format!(
                "move code 0x{code:04x} has promotion code {}, which names no piece",
                mv.promotion_code()
            ));
        }
        let (from, to) = (mv.from(), mv.to());
        if from == to {
            return Some(format!("move {mv}: from and to are the same square"));
        }
        let df = (to.file().to_u32() as i32 - from.file().to_u32() as i32).abs();
        let dr = to.rank().to_u32() as i32 - from.rank().to_u32() as i32;
        if mv.promotion().is_some() {
            let (fr, tr) = (from.rank().to_u32(), to.rank().to_u32());
            let pawn_step = df <= 1 && ((fr == 6 && tr == 7) || (fr == 1 && tr == 0));
            if !pawn_step {
                return Some(format!(
                    "move {mv}: a promotion, but not a pawn's step from the 7th to the 8th rank or \
                     from the 2nd to the 1st"
                ));
            }
        }
        let dr = dr.abs();
        let line = df == 0 || dr == 0 || df == dr;
        let jump = (df == 1 && dr == 2) || (df == 2 && dr == 1);
        if !line && !jump {
            return Some(format!("move {mv}: no piece moves from {from} to {to}"));
        }
        None
    }

    /// The legal move this raw move stands for in `pos`, if any.
    ///
    /// King-takes-own-rook is castling when the king may castle that way; an `e1a1` entry in a
    /// position without that castling right is not a legal move.
    pub fn to_move<P: Position>(self, pos: &P) -> Option<Move> {
        if !self.is_well_formed() {
            return None;
        }
        let uci = UciMove::Normal {
            from: self.from(),
            to: self.to(),
            promotion: self.promotion(),
        };
        uci.to_move(pos).ok()
    }

    /// Parses Polyglot's spelling, which is UCI with king-takes-rook castling (`e2e4`, `e1h1`, `a7a8q`).
    pub fn from_uci_str(s: &str) -> Option<RawMove> {
        match s.parse::<UciMove>().ok()? {
            UciMove::Normal {
                from,
                to,
                promotion,
            } => RawMove::from_move(Move::Normal {
                role: Role::Pawn,
                from,
                capture: None,
                to,
                promotion,
            }),
            _ => None,
        }
    }
}

impl RawMove {
    /// Appends the [`Display`](fmt::Display) spelling to `buf`, without `fmt`'s machinery
    /// (`probe --epd --json` writes thousands).
    pub fn append_ascii_to(self, buf: &mut Vec<u8>) {
        if self.0 & 0x8000 != 0 || self.promotion_code() > 4 {
            buf.extend_from_slice(self.to_string().as_bytes());
            return;
        }
        for sq in [self.from(), self.to()] {
            buf.extend_from_slice(&[sq.file().char() as u8, sq.rank().char() as u8]);
        }
        if let Some(role) = self.promotion() {
            buf.push(role.char() as u8);
        }
    }
}

impl fmt::Display for RawMove {
    /// Polyglot's spelling: from, to and a promotion letter (`e1h1` for white's short castling).
    /// Ill-formed codes print as the raw number in hex, e.g. `0x8000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 & 0x8000 != 0 || self.promotion_code() > 4 {
            return write!(f, "0x{:04x}", self.0);
        }
        write!(f, "{}{}", self.from(), self.to())?;
        if let Some(role) = self.promotion() {
            write!(f, "{}", role.char())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, Chess, fen::Fen};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn encodes_the_spec_examples() {
        // e2e4: to e4 = 28, from e2 = 12.
        assert_eq!(RawMove::from_uci_str("e2e4"), Some(RawMove(28 | 12 << 6)));
        // a7a8q: to a8 = 56, from a7 = 48, queen = 4.
        assert_eq!(
            RawMove::from_uci_str("a7a8q"),
            Some(RawMove(56 | 48 << 6 | 4 << 12))
        );
        assert_eq!(RawMove(56 | 48 << 6 | 1 << 12).to_string(), "a7a8n");
    }

    #[test]
    fn castling_is_king_takes_rook_only_with_the_right() {
        let with_rights = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let raw = RawMove::from_uci_str("e1h1").unwrap();
        let m = raw.to_move(&with_rights).unwrap();
        assert_eq!(
            m,
            Move::Castle {
                king: Square::E1,
                rook: Square::H1
            }
        );
        assert_eq!(RawMove::from_move(m), Some(raw));
        let without = pos("r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1");
        assert_eq!(raw.to_move(&without), None);
        assert_eq!(
            RawMove::from_uci_str("e1a1").unwrap().to_move(&without),
            None
        );
    }

    #[test]
    fn rejects_ill_formed_codes() {
        assert!(!RawMove(0x8000 | 28 | 12 << 6).is_well_formed());
        assert!(!RawMove(28 | 12 << 6 | 5 << 12).is_well_formed());
        assert!(!RawMove(0).is_well_formed());
        assert_eq!(RawMove(0x8000).to_string(), "0x8000");
    }

    #[test]
    fn ascii_spelling_is_the_display_one() {
        for code in 0..=u16::MAX {
            let mut buf = Vec::new();
            RawMove(code).append_ascii_to(&mut buf);
            assert_eq!(buf, RawMove(code).to_string().as_bytes());
        }
    }
}
