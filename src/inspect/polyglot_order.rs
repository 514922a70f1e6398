//! Polyglot's move order: a position together with the piece lists polyglot's own board keeps,
//! so that a walk over a book (`lines`) visits moves in the order `polyglot dump-book` does.
//!
//! polyglot generates moves piece by piece from a piece list per colour (the king first, then the
//! other pieces from a1 to h8 in the start position), and keeps that list in a particular order
//! as moves are made: a moving, castling or promoting piece keeps its place, and a captured piece's
//! place is taken by the last piece of its list. Within a piece, moves come in the order of its
//! direction table (on polyglot's 16-column board: −17 −16 −15 −1 +1 +15 +16 +17 for the king and
//! the sliders, nearest square first; −33 −31 −18 −14 +14 +18 +31 +33 for the knight), pawns capture
//! towards the a-file, then towards the h-file, then push one and two squares, promotions in the
//! order N, B, R, Q, and castling comes last, short before long.
//!
//! The legal moves themselves come from shakmaty; this only puts them in polyglot's order.

use shakmaty::{CastlingSide, Chess, Color, Move, Position, Role, Square};

use crate::book::{Key, RawMove};

/// The squares of one side's pieces, in polyglot's piece-list order.
#[derive(Clone, Copy, Debug)]
struct PieceList {
    squares: [Square; 16],
    len: u8,
}

impl PieceList {
    fn as_slice(&self) -> &[Square] {
        &self.squares[..usize::from(self.len)]
    }

    fn index_of(&self, sq: Square) -> Option<usize> {
        self.as_slice().iter().position(|&s| s == sq)
    }

    fn replace(&mut self, from: Square, to: Square) {
        if let Some(i) = self.index_of(from) {
            self.squares[i] = to;
        }
    }

    /// Removes a captured piece: the last piece takes its place.
    fn remove(&mut self, sq: Square) {
        if let Some(i) = self.index_of(sq) {
            let last = usize::from(self.len) - 1;
            self.squares[i] = self.squares[last];
            self.len -= 1;
        }
    }
}

/// A legal position with its Polyglot key and polyglot's piece lists.
#[derive(Clone, Debug)]
pub struct OrderedPosition {
    pub pos: Chess,
    pub key: Key,
    lists: [PieceList; 2],
}

impl OrderedPosition {
    /// The start position, with the piece lists polyglot builds for it.
    pub fn start() -> OrderedPosition {
        let pos = Chess::default();
        let board = pos.board();
        let list_of = |color: Color| {
            let mut list = PieceList {
                squares: [Square::A1; 16],
                len: 0,
            };
            let ours = board.by_color(color);
            let king = board.king_of(color).into_iter();
            let others = (0..64u32)
                .map(Square::new)
                .filter(|&sq| ours.contains(sq) && board.role_at(sq) != Some(Role::King));
            for sq in king.chain(others).take(16) {
                list.squares[usize::from(list.len)] = sq;
                list.len += 1;
            }
            list
        };
        let lists = [list_of(Color::White), list_of(Color::Black)];
        OrderedPosition {
            key: Key::of(&pos),
            pos,
            lists,
        }
    }

    fn list_index(color: Color) -> usize {
        match color {
            Color::White => 0,
            Color::Black => 1,
        }
    }

    /// The position after a legal move, with the piece lists updated as polyglot updates them.
    pub fn play(&self, m: Move) -> OrderedPosition {
        let me = self.pos.turn();
        let (mine, theirs) = (Self::list_index(me), Self::list_index(!me));
        let mut lists = self.lists;
        match m {
            Move::Normal {
                from, to, capture, ..
            } => {
                if capture.is_some() {
                    lists[theirs].remove(to);
                }
                lists[mine].replace(from, to);
            }
            Move::EnPassant { from, to } => {
                lists[theirs].remove(Square::from_coords(to.file(), from.rank()));
                lists[mine].replace(from, to);
            }
            Move::Castle { king, rook } => {
                let side = CastlingSide::from_king_side(rook.file() > king.file());
                lists[mine].replace(king, side.king_to(me));
                lists[mine].replace(rook, side.rook_to(me));
            }
            Move::Put { .. } => {}
        }
        let mut pos = self.pos.clone();
        pos.play_unchecked(m);
        OrderedPosition {
            key: Key::of(&pos),
            pos,
            lists,
        }
    }

    /// Where polyglot's move generator puts a move among the moves of this position, given the
    /// place of each square in the mover's piece list.
    fn order(places: &[u8; 64], m: Move) -> (u8, i32, u32) {
        if let Move::Castle { king, rook } = m {
            return (16, if rook.file() > king.file() { 0 } else { 1 }, 0);
        }
        let (from, to) = (m.from().unwrap_or(Square::A1), m.to());
        let place = places[from.to_usize()];
        let df = to.file().to_u32() as i32 - from.file().to_u32() as i32;
        let dr = to.rank().to_u32() as i32 - from.rank().to_u32() as i32;
        match m.role() {
            Role::Pawn => {
                let kind = if df < 0 {
                    0
                } else if df > 0 {
                    1
                } else if dr.abs() == 1 {
                    2
                } else {
                    3
                };
                let promotion = RawMove::from_move(m).map_or(0, |r| r.promotion_code());
                (place, kind, u32::from(promotion))
            }
            Role::Knight | Role::King => (place, dr * 16 + df, 0),
            _ => {
                let steps = df.abs().max(dr.abs());
                (place, dr.signum() * 16 + df.signum(), steps as u32)
            }
        }
    }

    /// The legal moves in the order polyglot's `gen_legal_moves` lists them.
    pub fn legal_moves_in_order(&self) -> Vec<Move> {
        let mut places = [16u8; 64];
        let list = &self.lists[Self::list_index(self.pos.turn())];
        for (i, sq) in list.as_slice().iter().enumerate() {
            places[sq.to_usize()] = i as u8;
        }
        let mut moves: Vec<((u8, i32, u32), Move)> = self
            .pos
            .legal_moves()
            .into_iter()
            .map(|m| (Self::order(&places, m), m))
            .collect();
        moves.sort_unstable_by_key(|&(order, _)| order);
        moves.into_iter().map(|(_, m)| m).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    fn uci(board: &OrderedPosition, s: &str) -> Move {
        s.parse::<UciMove>().unwrap().to_move(&board.pos).unwrap()
    }

    #[test]
    fn start_position_order() {
        let b = OrderedPosition::start();
        let order: Vec<String> = b
            .legal_moves_in_order()
            .iter()
            .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
            .collect();
        // King first (no moves), then a1 … h1 (knights: b1 then g1), then the pawns a2 … h2.
        assert_eq!(order[..6], ["b1a3", "b1c3", "g1f3", "g1h3", "a2a3", "a2a4"]);
        assert_eq!(order.len(), 20);
    }

    #[test]
    fn a_capture_moves_the_last_piece_into_the_gap() {
        let mut b = OrderedPosition::start();
        for m in ["e2e4", "d7d5", "e4d5"] {
            let mv = uci(&b, m);
            b = b.play(mv);
        }
        // Black's d7 pawn (index 4: king, a7, b7, c7, d7) was taken; h8 (the last) took its place.
        assert_eq!(b.lists[1].squares[4], Square::H8);
        assert_eq!(b.lists[1].len, 15);
        assert_eq!(b.lists[0].squares[12], Square::D5);
    }
}
