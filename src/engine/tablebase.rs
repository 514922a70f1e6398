//! A 3-man endgame tablebase with distance to mate (DTM), for king and queen or king and rook
//! against a lone king, with either colour strong and either side to move.
//!
//! Each table is generated in memory by retrograde analysis the first time a position of its
//! material is probed (once per process; a search that only meets KRvK never builds KQvK) and
//! takes about 512 KB:
//!
//! 1. Every legal position with the weak side to move is classified: checkmate (distance 0),
//!    stalemate or a legal capture of the piece (a draw: the weak side is never mated), or else
//!    the number of its legal king moves is kept as a counter.
//! 2. From the positions lost in `d` plies, the strong side's moves are played backwards: every
//!    predecessor not yet known is a win in `d + 1` (the first found is the shortest).
//! 3. From those wins, the weak king's moves are played backwards, each decrementing the
//!    predecessor's counter; a counter that reaches zero means every move loses, the last one
//!    found at `d + 1`: a loss in `d + 2` (the longest resistance).
//! 4. Repeat until nothing new is found; everything left is a draw.
//!
//! A position is indexed by (strong king, strong piece, weak king, side to move) with the strong
//! side as White; a position with Black strong is probed with the colours swapped (without pawns
//! the rules don't care which colour is which). Distances are in plies and ignore the fifty-move
//! rule; positions with castling rights are not covered.
//!
//! ```
//! use polybook::engine::tablebase::{probe, Value};
//! use polybook::position::parse_fen;
//!
//! let pos = parse_fen("8/1k1K4/8/8/6R1/8/8/8 w - - 0 1").unwrap();
//! assert_eq!(probe(&pos), Some(Value::Win { plies: 7 })); // mate in 4
//! ```

use std::sync::OnceLock;

use shakmaty::attacks::{king_attacks, queen_attacks, rook_attacks};
use shakmaty::{Bitboard, Chess, Move, Position, Role, Square};

use super::score::{mate_in, mated_in};

/// What a position is worth with best play, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// The side to move mates in this many plies (odd).
    Win {
        plies: u32,
    },
    /// The side to move is mated after this many plies (even; 0: it is checkmated now).
    Loss {
        plies: u32,
    },
    Draw,
}

impl Value {
    /// The search's score of this value at `ply` (mates counted from the root as the search
    /// counts them, see [`super::score`]). A mate that the fifty-move rule would come before,
    /// with best defence, is a draw: `halfmoves` is the position's fifty-move counter.
    pub fn search_score(self, ply: usize, halfmoves: u32) -> i32 {
        match self {
            Value::Win { plies } if halfmoves + plies <= 100 => mate_in(ply) - plies as i32,
            Value::Loss { plies } if halfmoves + plies <= 100 => mated_in(ply) + plies as i32,
            _ => 0,
        }
    }

    /// Mate in moves as UCI counts it: positive when the side to move mates, negative when it
    /// is mated, `None` for a draw.
    pub fn mate_moves(self) -> Option<i32> {
        match self {
            Value::Win { plies } => Some(plies.div_ceil(2) as i32),
            Value::Loss { plies } => Some(-((plies / 2) as i32)),
            Value::Draw => None,
        }
    }

    /// The value for the side that moved into a position worth `self`.
    fn parent(self) -> Value {
        match self {
            Value::Win { plies } => Value::Loss { plies: plies + 1 },
            Value::Loss { plies } => Value::Win { plies: plies + 1 },
            Value::Draw => Value::Draw,
        }
    }

    /// An ordering key: higher is better for the side to move (the shortest win first, the
    /// longest loss last but one, draws between).
    fn rank(self) -> i64 {
        match self {
            Value::Win { plies } => 1_000_000 - i64::from(plies),
            Value::Draw => 0,
            Value::Loss { plies } => -1_000_000 + i64::from(plies),
        }
    }
}

/// No mate with best play (or not a legal position).
const DRAW: u8 = u8::MAX;
/// A weak-side position that can never be lost (it can capture the piece, or is stalemate).
const SAFE: u8 = u8::MAX;
const SIDES: usize = 2;
const STRONG_TO_MOVE: usize = 0;
const WEAK_TO_MOVE: usize = 1;

/// The strong side's extra piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    Queen,
    Rook,
}

impl Piece {
    fn attacks(self, sq: Square, occupied: Bitboard) -> Bitboard {
        match self {
            Piece::Queen => queen_attacks(sq, occupied),
            Piece::Rook => rook_attacks(sq, occupied),
        }
    }
}

/// One material signature's distances in plies (or [`DRAW`]), by [`index`].
struct Table {
    dtm: Vec<u8>,
}

fn index(strong_king: Square, piece: Square, weak_king: Square, side: usize) -> usize {
    ((usize::from(strong_king) * 64 + usize::from(piece)) * 64 + usize::from(weak_king)) * SIDES
        + side
}

fn squares(i: usize) -> (Square, Square, Square) {
    let sq = |n: usize| Square::new((n % 64) as u32);
    (sq(i / 4096), sq(i / 64), sq(i))
}

impl Table {
    /// Retrograde analysis for king and `piece` against king (see the module documentation).
    fn generate(piece: Piece) -> Table {
        const N: usize = 64 * 64 * 64;
        let mut dtm = vec![DRAW; N * SIDES];
        // For each weak-to-move position (by index / 2): its legal moves not yet known to lose.
        let mut counter = vec![SAFE; N];
        let mut frontier: Vec<u32> = Vec::new();

        for i in 0..N {
            let (sk, p, wk) = squares(i);
            if sk == p || sk == wk || p == wk || king_attacks(sk).contains(wk) {
                continue;
            }
            let occupied = Bitboard::from(sk) | Bitboard::from(p) | Bitboard::from(wk);
            let attacked = piece.attacks(p, occupied ^ Bitboard::from(wk)) | king_attacks(sk);
            let in_check = piece.attacks(p, occupied).contains(wk);
            let targets = king_attacks(wk) & !attacked;
            if targets.contains(p) {
                continue; // the piece hangs: a draw at worst for the weak side
            }
            let moves = targets.count() as u8;
            if moves > 0 {
                counter[i] = moves;
            } else if in_check {
                dtm[i * SIDES + WEAK_TO_MOVE] = 0;
                frontier.push(i as u32);
            }
        }

        let mut plies = 0u8;
        let mut wins: Vec<u32> = Vec::new();
        while !frontier.is_empty() {
            // The strong side's moves into a loss in `plies`: wins in `plies + 1`.
            wins.clear();
            for &i in &frontier {
                let (sk, p, wk) = squares(i as usize);
                let occupied = Bitboard::from(sk) | Bitboard::from(p) | Bitboard::from(wk);
                let mut win = |sk: Square, p: Square| {
                    let j = index(sk, p, wk, STRONG_TO_MOVE);
                    if dtm[j] == DRAW {
                        dtm[j] = plies + 1;
                        wins.push((j / SIDES) as u32);
                    }
                };
                for from in king_attacks(sk) & !occupied & !king_attacks(wk) {
                    let before = Bitboard::from(from) | Bitboard::from(p) | Bitboard::from(wk);
                    // Before the move the weak side was not in check.
                    if !piece.attacks(p, before).contains(wk) {
                        win(from, p);
                    }
                }
                for from in piece.attacks(p, occupied) & !occupied {
                    let before = Bitboard::from(sk) | Bitboard::from(from) | Bitboard::from(wk);
                    if !piece.attacks(from, before).contains(wk) {
                        win(sk, from);
                    }
                }
            }
            // The weak king's moves into those wins: a position all of whose moves lose is
            // lost in `plies + 2`.
            frontier.clear();
            for &i in &wins {
                let (sk, p, wk) = squares(i as usize);
                let occupied = Bitboard::from(sk) | Bitboard::from(p);
                for from in king_attacks(wk) & !occupied & !king_attacks(sk) {
                    let j = index(sk, p, from, WEAK_TO_MOVE) / SIDES;
                    if counter[j] == SAFE || counter[j] == 0 {
                        continue;
                    }
                    counter[j] -= 1;
                    if counter[j] == 0 {
                        dtm[j * SIDES + WEAK_TO_MOVE] = plies + 2;
                        frontier.push(j as u32);
                    }
                }
            }
            plies += 2;
        }
        Table { dtm }
    }
}

static QUEEN: OnceLock<Table> = OnceLock::new();
static ROOK: OnceLock<Table> = OnceLock::new();

/// The table of king and `piece` against king, generated on first use.
fn table(piece: Piece) -> &'static Table {
    let cell = match piece {
        Piece::Queen => &QUEEN,
        Piece::Rook => &ROOK,
    };
    cell.get_or_init(|| Table::generate(piece))
}

/// Generates both tables now (each is generated on its first probe otherwise).
pub fn init() {
    table(Piece::Queen);
    table(Piece::Rook);
}

/// Is this material (count of pieces and roles) one the tables cover? Cheap: no generation.
pub fn covers(pos: &Chess) -> bool {
    let board = pos.board();
    board.occupied().count() == 3
        && board.rooks_and_queens().count() == 1
        && pos.castles().is_empty()
}

/// The value of `pos` with best play, ignoring the fifty-move rule; `None` when the position is
/// not king and queen or king and rook against a lone king (or has castling rights).
pub fn probe(pos: &Chess) -> Option<Value> {
    if !covers(pos) {
        return None;
    }
    let board = pos.board();
    let (p, role) = if let Some(sq) = board.queens().first() {
        (sq, Role::Queen)
    } else {
        (board.rooks().first()?, Role::Rook)
    };
    let strong = board.color_at(p)?;
    let sk = board.king_of(strong)?;
    let wk = board.king_of(!strong)?;
    let table = table(if role == Role::Queen {
        Piece::Queen
    } else {
        Piece::Rook
    });
    let side = if pos.turn() == strong {
        STRONG_TO_MOVE
    } else {
        WEAK_TO_MOVE
    };
    let d = table.dtm[index(sk, p, wk, side)];
    Some(match (d, side) {
        (DRAW, _) => Value::Draw,
        (d, STRONG_TO_MOVE) => Value::Win {
            plies: u32::from(d),
        },
        (d, _) => Value::Loss {
            plies: u32::from(d),
        },
    })
}

/// The value of the position after a move, for the side that moved: the table's, or a draw when
/// the lone kings remain. `None` when the position after the move is not covered.
fn value_after(pos: &Chess, m: Move) -> Option<Value> {
    let mut child = pos.clone();
    child.play_unchecked(m);
    if child.board().occupied().count() == 2 {
        return Some(Value::Draw);
    }
    probe(&child).map(Value::parent)
}

/// The best move of a covered position and its value: the shortest mate for the winner, the
/// longest resistance for the loser, any drawing move otherwise. `None` when the position is not
/// covered or has no legal move.
pub fn best_move(pos: &Chess) -> Option<(Move, Value)> {
    probe(pos)?;
    let mut best: Option<(Move, Value)> = None;
    for m in pos.legal_moves() {
        let v = value_after(pos, m)?;
        if best.is_none_or(|(_, b)| v.rank() > b.rank()) {
            best = Some((m, v));
        }
    }
    best
}

/// The principal variation of a covered position: best moves for both sides until mate (or, for
/// a draw, at most `max_plies` moves).
pub fn principal_variation(pos: &Chess, max_plies: usize) -> Vec<Move> {
    let mut line = Vec::new();
    let mut pos = pos.clone();
    while line.len() < max_plies {
        let Some((m, _)) = best_move(&pos) else {
            break;
        };
        line.push(m);
        pos.play_unchecked(m);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::parse_fen;

    fn value(fen: &str) -> Option<Value> {
        probe(&parse_fen(fen).unwrap())
    }

    #[test]
    fn mates_and_draws() {
        let lost_now = Some(Value::Loss { plies: 0 });
        let mate_in_one = Some(Value::Win { plies: 1 });
        for (fen, expected) in [
            // Checkmated now, either colour.
            ("R5k1/8/6K1/8/8/8/8/8 b - - 0 1", lost_now),
            ("8/8/8/8/8/6k1/8/r5K1 w - - 0 1", lost_now),
            // Mate in one, either colour.
            ("6k1/8/6K1/8/8/8/8/R7 w - - 0 1", mate_in_one),
            ("r7/8/8/8/8/6k1/8/6K1 b - - 0 1", mate_in_one),
            ("6k1/8/5QK1/8/8/8/8/8 w - - 0 1", mate_in_one),
            // Stalemate, and the king takes the undefended queen.
            ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Some(Value::Draw)),
            ("7k/6Q1/8/8/8/8/8/K7 b - - 0 1", Some(Value::Draw)),
            // Black to move, must move into a mate in one: lost in two plies.
            (
                "7k/8/6K1/8/8/8/8/R7 b - - 0 1",
                Some(Value::Loss { plies: 2 }),
            ),
            // Not covered.
            ("8/8/8/8/8/6k1/8/4K2R w K - 0 1", None),
            ("8/8/8/8/8/6k1/8/4K2B w - - 0 1", None),
            ("8/8/8/8/8/6k1/6P1/4K3 w - - 0 1", None),
        ] {
            assert_eq!(value(fen), expected, "{fen}");
        }
    }

    #[test]
    fn longest_mates_are_the_known_ones() {
        // KQK: mate in at most 10 moves; KRK: at most 16 (Ströhlein, 1970).
        let longest = |t: &Table| {
            t.dtm
                .iter()
                .step_by(SIDES)
                .filter(|&&d| d != DRAW)
                .max()
                .copied()
        };
        assert_eq!(longest(table(Piece::Queen)), Some(19));
        assert_eq!(longest(table(Piece::Rook)), Some(31));
    }

    #[test]
    fn best_move_and_line() {
        let pos = parse_fen("8/1k1K4/8/8/6R1/8/8/8 w - - 0 1").unwrap();
        let (_, v) = best_move(&pos).unwrap();
        assert_eq!(v, Value::Win { plies: 7 });
        let line = principal_variation(&pos, 100);
        assert_eq!(line.len(), 7);
        let mut end = pos.clone();
        for m in line {
            end.play_unchecked(m);
        }
        assert!(end.is_checkmate());
        // The loser resists as long as it can.
        let pos = parse_fen("7k/8/6K1/8/8/8/8/R7 b - - 0 1").unwrap();
        assert_eq!(best_move(&pos).unwrap().1, Value::Loss { plies: 2 });
        assert_eq!(Value::Loss { plies: 2 }.mate_moves(), Some(-1));
        assert_eq!(Value::Win { plies: 7 }.mate_moves(), Some(4));
    }
}
