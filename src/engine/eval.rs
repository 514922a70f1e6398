//! Static evaluation: a tapered (middlegame/endgame) score from the side to move's point of view.
//!
//! Material and piece-square tables come from PeSTO; on top of them a few classical terms:
//! mobility, pawn structure (passed, isolated, doubled pawns), king safety (pawn shield and
//! attackers near the king), the bishop pair, and a "mop-up" term that drives a lone king to the
//! edge so that mates like KRvK are found by the search rather than stumbled upon.
//!
//! Every weight lives in [`Params`], one parameter set that a tuner can change later.

use shakmaty::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use shakmaty::{Bitboard, Board, Chess, Color, Position, Role, Square};

use super::pesto::{EG_TABLE, EG_VALUE, MG_TABLE, MG_VALUE, PHASE_INC};

/// A middlegame/endgame pair of weights.
#[derive(Clone, Copy, Debug)]
pub struct Weight {
    pub mg: i32,
    pub eg: i32,
}

const fn w(mg: i32, eg: i32) -> Weight {
    Weight { mg, eg }
}

/// The evaluation's tunable weights (centipawns).
#[derive(Clone, Debug)]
pub struct Params {
    /// Per attacked square not occupied by our own pieces nor guarded by an enemy pawn, minus a
    /// baseline, for knight, bishop, rook, queen.
    pub mobility: [Weight; 4],
    pub mobility_base: [i32; 4],
    /// Passed pawn bonus by relative rank (0 = own back rank).
    pub passed: [Weight; 8],
    pub isolated: Weight,
    pub doubled: Weight,
    pub bishop_pair: Weight,
    /// Middlegame bonus per own pawn in front of the king (the shield).
    pub king_shield: i32,
    /// Middlegame penalty per enemy piece attacking the squares around our king.
    pub king_attackers: i32,
    pub tempo: i32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            mobility: [w(4, 4), w(5, 5), w(2, 4), w(1, 2)],
            mobility_base: [4, 6, 6, 12],
            passed: [
                w(0, 0),
                w(2, 10),
                w(5, 15),
                w(10, 25),
                w(20, 45),
                w(35, 75),
                w(60, 120),
                w(0, 0),
            ],
            isolated: w(-10, -12),
            doubled: w(-8, -20),
            bishop_pair: w(25, 45),
            king_shield: 10,
            king_attackers: 12,
            tempo: 10,
        }
    }
}

/// Index of a role in the PeSTO arrays (pawn = 0 … king = 5).
#[inline]
pub fn role_index(role: Role) -> usize {
    role as usize - 1
}

/// The plain material value of a role (middlegame PeSTO value, king large) for SEE and ordering.
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20000];

#[inline]
pub fn see_value(role: Role) -> i32 {
    SEE_VALUE[role_index(role)]
}

/// Files adjacent to each file, for isolated and passed pawns.
fn adjacent_files(file: u32) -> Bitboard {
    let mut bb = Bitboard::EMPTY;
    if file > 0 {
        bb |= Bitboard::from_file(shakmaty::File::new(file - 1));
    }
    if file < 7 {
        bb |= Bitboard::from_file(shakmaty::File::new(file + 1));
    }
    bb
}

/// The squares in front of a pawn on its own and adjacent files (where an enemy pawn stops it).
fn passed_span(color: Color, sq: Square) -> Bitboard {
    let file = u32::from(sq.file());
    let files = adjacent_files(file) | Bitboard::from_file(sq.file());
    let rank = u32::from(sq.rank());
    let mut ahead = Bitboard::EMPTY;
    match color {
        Color::White => {
            for r in rank + 1..8 {
                ahead |= Bitboard::from_rank(shakmaty::Rank::new(r));
            }
        }
        Color::Black => {
            for r in 0..rank {
                ahead |= Bitboard::from_rank(shakmaty::Rank::new(r));
            }
        }
    }
    files & ahead
}

/// The static evaluation of `pos` in centipawns, from the side to move's point of view.
pub fn evaluate(pos: &Chess, params: &Params) -> i32 {
    let board = pos.board();
    let mut mg = [0i32; 2];
    let mut eg = [0i32; 2];
    let mut phase = 0;

    // Material and piece-square tables.
    for (sq, piece) in board.iter() {
        let r = role_index(piece.role);
        let c = piece.color as usize;
        let idx = match piece.color {
            Color::White => sq as usize ^ 56,
            Color::Black => sq as usize,
        };
        mg[c] += MG_VALUE[r] + MG_TABLE[r][idx];
        eg[c] += EG_VALUE[r] + EG_TABLE[r][idx];
        phase += PHASE_INC[r];
    }

    for color in Color::ALL {
        let (m, e) = side_terms(board, color, params);
        mg[color as usize] += m;
        eg[color as usize] += e;
    }

    let phase = phase.min(24);
    let white = Color::White as usize;
    let black = Color::Black as usize;
    let mg_score = mg[white] - mg[black];
    let eg_score = eg[white] - eg[black] + mop_up(board);
    let score = (mg_score * phase + eg_score * (24 - phase)) / 24;
    let score = match pos.turn() {
        Color::White => score,
        Color::Black => -score,
    };
    score + params.tempo
}

/// Mobility, pawn structure, king safety and the bishop pair for one side.
fn side_terms(board: &Board, us: Color, p: &Params) -> (i32, i32) {
    let them = !us;
    let occupied = board.occupied();
    let ours = board.by_color(us);
    let our_pawns = board.pawns() & ours;
    let their_pawns = board.pawns() & board.by_color(them);
    let mut mg = 0;
    let mut eg = 0;

    // Squares guarded by enemy pawns are poor posts: don't count them as mobility.
    let mut pawn_guard = Bitboard::EMPTY;
    for sq in their_pawns {
        pawn_guard |= pawn_attacks(them, sq);
    }
    let safe = !ours & !pawn_guard;
    let their_king_zone = board
        .king_of(them)
        .map(|k| king_attacks(k) | Bitboard::from_square(k))
        .unwrap_or(Bitboard::EMPTY);
    let mut attackers = 0;

    for (i, role) in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
        .into_iter()
        .enumerate()
    {
        for sq in board.by_role(role) & ours {
            let attacks = match role {
                Role::Knight => knight_attacks(sq),
                Role::Bishop => bishop_attacks(sq, occupied),
                Role::Rook => rook_attacks(sq, occupied),
                _ => bishop_attacks(sq, occupied) | rook_attacks(sq, occupied),
            };
            let n = (attacks & safe).count() as i32 - p.mobility_base[i];
            mg += n * p.mobility[i].mg;
            eg += n * p.mobility[i].eg;
            if attacks.intersects(their_king_zone) {
                attackers += 1;
            }
        }
    }
    // King safety (middlegame): attackers near the enemy king count for us.
    mg += attackers * attackers * p.king_attackers / 2;

    // The pawn shield: own pawns on the three squares in front of our king.
    if let Some(k) = board.king_of(us) {
        let ahead = match us {
            Color::White => k.rank().offset(1),
            Color::Black => k.rank().offset(-1),
        };
        if let Some(rank) = ahead {
            let front = king_attacks(k) & Bitboard::from_rank(rank);
            mg += (front & our_pawns).count() as i32 * p.king_shield;
        }
    }

    // Pawn structure.
    for sq in our_pawns {
        let file = u32::from(sq.file());
        if !adjacent_files(file).intersects(our_pawns) {
            mg += p.isolated.mg;
            eg += p.isolated.eg;
        }
        if !passed_span(us, sq).intersects(their_pawns) {
            let rel_rank = match us {
                Color::White => u32::from(sq.rank()),
                Color::Black => 7 - u32::from(sq.rank()),
            } as usize;
            // Only the rearmost pawn of a doubled pair is passed in earnest; the front one is
            // counted too, which is fine for a first evaluation.
            mg += p.passed[rel_rank].mg;
            eg += p.passed[rel_rank].eg;
        }
    }
    for file in 0..8 {
        let n = (our_pawns & Bitboard::from_file(shakmaty::File::new(file))).count() as i32;
        if n > 1 {
            mg += (n - 1) * p.doubled.mg;
            eg += (n - 1) * p.doubled.eg;
        }
    }

    if (board.bishops() & ours).more_than_one() {
        mg += p.bishop_pair.mg;
        eg += p.bishop_pair.eg;
    }
    (mg, eg)
}

/// In a pawnless ending where one side has only its king, reward the stronger side for driving
/// that king to the edge and bringing its own king close: the technique of every basic mate.
/// Returned from White's point of view.
fn mop_up(board: &Board) -> i32 {
    if board.pawns().any() {
        return 0;
    }
    for strong in Color::ALL {
        let weak = !strong;
        if board.by_color(weak).count() == 1 && board.by_color(strong).count() > 1 {
            let (Some(wk), Some(sk)) = (board.king_of(weak), board.king_of(strong)) else {
                return 0;
            };
            let f = u32::from(wk.file()) as i32;
            let r = u32::from(wk.rank()) as i32;
            let center = (3 - f).max(f - 4) + (3 - r).max(r - 4);
            let kd = (u32::from(wk.file()) as i32 - u32::from(sk.file()) as i32).abs()
                + (u32::from(wk.rank()) as i32 - u32::from(sk.rank()) as i32).abs();
            let bonus = 10 * center + 4 * (14 - kd) + 200;
            return match strong {
                Color::White => bonus,
                Color::Black => -bonus,
            };
        }
    }
    0
}

/// Does the side to move have a piece other than pawns and king? (Null move is unsafe in pawn
/// endings, where zugzwang is common.)
pub fn has_non_pawn_material(pos: &Chess) -> bool {
    let b = pos.board();
    ((b.knights() | b.bishops() | b.rooks() | b.queens()) & pos.us()).any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::parse_fen;

    #[test]
    fn the_start_position_evaluates_to_the_tempo() {
        let p = Params::default();
        assert_eq!(evaluate(&Chess::default(), &p), p.tempo);
    }

    #[test]
    fn a_queen_up_is_winning() {
        let p = Params::default();
        let pos = parse_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1").unwrap();
        assert!(evaluate(&pos, &p) > 800);
        let pos = parse_fen("4k3/8/8/8/8/8/8/3QK3 b - - 0 1").unwrap();
        assert!(evaluate(&pos, &p) < -800);
    }
}
