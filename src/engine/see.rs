//! Static Exchange Evaluation: the material balance of the capture sequence on one square, each
//! side recapturing with its least valuable attacker and free to stop when that would lose.
//!
//! Used to order captures (winning ones first) and to skip captures that lose material in the
//! quiescence search.

use shakmaty::attacks::{bishop_attacks, rook_attacks};
use shakmaty::{Bitboard, Chess, Move, Position, Role};

use super::eval::see_value;

/// Does `m` win at least `threshold` centipawns once all exchanges on its target square are
/// played out? (The threshold form is cheaper than computing the exact value.)
pub fn see_ge(pos: &Chess, m: Move, threshold: i32) -> bool {
    let (from, to) = match m {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => (from, to),
        // Castling and drops exchange nothing.
        _ => return threshold <= 0,
    };
    let captured = match m {
        Move::EnPassant { .. } => see_value(Role::Pawn),
        _ => m.capture().map_or(0, see_value),
    };
    let promo_gain = m
        .promotion()
        .map_or(0, |r| see_value(r) - see_value(Role::Pawn));
    let mut swap = captured + promo_gain - threshold;
    if swap < 0 {
        return false;
    }
    // The piece now standing on `to`, which the opponent may capture.
    let mut on_square = see_value(m.promotion().unwrap_or(m.role()));
    swap = on_square - swap;
    if swap <= 0 {
        return true;
    }

    let board = pos.board();
    let mut occupied = board.occupied() ^ Bitboard::from_square(from) | Bitboard::from_square(to);
    if let Move::EnPassant { .. } = m {
        // The captured pawn stands behind the target square.
        let victim = shakmaty::Square::from_coords(to.file(), from.rank());
        occupied ^= Bitboard::from_square(victim);
    }
    let diagonal = board.bishops_and_queens();
    let straight = board.rooks_and_queens();
    let mut attackers = board.attacks_to(to, shakmaty::Color::White, occupied)
        | board.attacks_to(to, shakmaty::Color::Black, occupied);
    let mut side = !pos.turn();
    let mut result = true;

    loop {
        attackers &= occupied;
        let ours = attackers & board.by_color(side);
        if ours.is_empty() {
            break;
        }
        // A pinned piece may still recapture here; good enough for move ordering and pruning.
        result = !result;
        let mut chosen = None;
        for role in Role::ALL {
            let bb = ours & board.by_role(role);
            if let Some(sq) = bb.first() {
                chosen = Some((role, sq));
                break;
            }
        }
        let Some((role, sq)) = chosen else { break };
        if role == Role::King {
            // The king may only capture last: if the other side still attacks, it can't.
            if (attackers & board.by_color(!side)).any() {
                result = !result;
            }
            break;
        }
        swap = see_value(role) - swap;
        // The side that just captured can stop here if it is already ahead.
        if swap < i32::from(result) {
            break;
        }
        occupied ^= Bitboard::from_square(sq);
        // Discovered sliders behind the piece that just captured join in.
        if matches!(role, Role::Pawn | Role::Bishop | Role::Queen) {
            attackers |= bishop_attacks(to, occupied) & diagonal;
        }
        if matches!(role, Role::Rook | Role::Queen) {
            attackers |= rook_attacks(to, occupied) & straight;
        }
        on_square = see_value(role);
        let _ = on_square;
        side = !side;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{parse_fen, parse_move};

    fn see(fen: &str, mv: &str, threshold: i32) -> bool {
        let pos = parse_fen(fen).unwrap();
        let m = parse_move(&pos, mv).unwrap();
        see_ge(&pos, m, threshold)
    }

    #[test]
    fn exchanges() {
        // A pawn defended by a pawn: knight takes it and is lost.
        let fen = "4k3/8/3p4/4p3/8/5N2/8/4K3 w - - 0 1";
        assert!(!see(fen, "Nxe5", 0));
        assert!(see(fen, "Nxe5", -300));
        // An undefended pawn is simply won.
        let fen = "4k3/8/8/4p3/8/5N2/8/4K3 w - - 0 1";
        assert!(see(fen, "Nxe5", 100));
        assert!(!see(fen, "Nxe5", 101));
        // Rook takes a defended rook: an even trade.
        let fen = "3rk3/8/8/8/8/8/8/3RK3 w - - 0 1";
        assert!(see(fen, "Rxd8+", 0));
    }

    #[test]
    fn castling_exchanges_nothing() {
        // Chess960's castling, the king onto its rook's square and king and rook swapping: no
        // capture, whatever squares the move names.
        for fen in [
            "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
            "2rk1r2/pppppppp/8/8/8/8/PPPPPPPP/2RK1R2 w FCfc - 0 1",
        ] {
            let pos = crate::position::parse_fen_for(fen, true).unwrap();
            for m in pos.legal_moves().into_iter().filter(|m| m.is_castle()) {
                assert!(see_ge(&pos, m, 0) && !see_ge(&pos, m, 1), "{fen} {m}");
            }
        }
    }
}
