//! Static evaluation: a tapered (middlegame/endgame) score from the side to move's point of view.
//!
//! Material and piece-square tables come from PeSTO; on top of them a few classical terms:
//! mobility, pawn structure (passed, isolated, doubled pawns), king safety (pawn shield and
//! attackers near the king), the bishop pair, and a "mop-up" term that drives a lone king to the
//! edge so that mates like KRvK are found by the search rather than stumbled upon.
//!
//! Every weight lives in [`Params`], one parameter set that a tuner can change later.

use shakmaty::attacks::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};
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

const FILE_A: u64 = 0x0101_0101_0101_0101;

/// The files adjacent to each file, for isolated and passed pawns.
const ADJACENT_FILES: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        if f > 0 {
            t[f] |= FILE_A << (f - 1);
        }
        if f < 7 {
            t[f] |= FILE_A << (f + 1);
        }
        f += 1;
    }
    t
};

/// For each colour and square, the squares in front of a pawn there on its own and the adjacent
/// files: an enemy pawn in this span can stop it; none there means the pawn is passed.
const PASSED_SPAN: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let file = sq % 8;
        let rank = sq / 8;
        let files = ADJACENT_FILES[file] | FILE_A << file;
        let mut r = 0;
        while r < 8 {
            let rank_bb = 0xffu64 << (8 * r);
            if r > rank {
                t[1][sq] |= files & rank_bb; // White (index of Color::White is 1)
            }
            if r < rank {
                t[0][sq] |= files & rank_bb;
            }
            r += 1;
        }
        sq += 1;
    }
    t
};

/// All squares attacked by the given pawns, by shifting the whole set at once.
fn pawn_attack_span(color: Color, pawns: Bitboard) -> Bitboard {
    let p = pawns.0;
    let not_a = !FILE_A;
    let not_h = !(FILE_A << 7);
    Bitboard(match color {
        Color::White => ((p & not_a) << 7) | ((p & not_h) << 9),
        Color::Black => ((p & not_a) >> 9) | ((p & not_h) >> 7),
    })
}

fn adjacent_files(file: u32) -> Bitboard {
    Bitboard(ADJACENT_FILES[file as usize])
}

fn passed_span(color: Color, sq: Square) -> Bitboard {
    Bitboard(PASSED_SPAN[color as usize][sq as usize])
}

/// The static evaluation of `pos` in centipawns, from the side to move's point of view.
pub fn evaluate(pos: &Chess, params: &Params) -> i32 {
    let board = pos.board();
    let mut mg = [0i32; 2];
    let mut eg = [0i32; 2];
    let mut phase = 0;

    // Material and piece-square tables.
    // (By colour and role, straight from the bitboards: cheaper than asking each square.)
    for color in Color::ALL {
        let c = color as usize;
        let flip = match color {
            Color::White => 56,
            Color::Black => 0,
        };
        let ours = board.by_color(color);
        for role in Role::ALL {
            let r = role_index(role);
            for sq in board.by_role(role) & ours {
                let idx = sq as usize ^ flip;
                mg[c] += MG_VALUE[r] + MG_TABLE[r][idx];
                eg[c] += EG_VALUE[r] + EG_TABLE[r][idx];
                phase += PHASE_INC[r];
            }
        }
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
    let pawn_guard = pawn_attack_span(them, their_pawns);
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
        let n = (our_pawns & Bitboard(FILE_A << file)).count() as i32;
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
    fn pawn_spans_match_shakmaty() {
        use shakmaty::attacks::pawn_attacks;
        for color in Color::ALL {
            for sq in Square::ALL {
                let one = Bitboard::from_square(sq);
                assert_eq!(
                    pawn_attack_span(color, one),
                    pawn_attacks(color, sq),
                    "{sq:?}"
                );
            }
        }
        // A white pawn on e4 is stopped by a black pawn on d5, not by one on d3.
        assert!(passed_span(Color::White, Square::E4).contains(Square::D5));
        assert!(!passed_span(Color::White, Square::E4).contains(Square::D3));
        assert!(passed_span(Color::Black, Square::E4).contains(Square::F2));
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
