//! The spite-check analogy (H.G. Muller's proposal, the transposition-table part), behind the
//! experimental switch `SpiteCheck`.
//!
//! A check and its evasion that win no material (a "spite check") change little on the board:
//! the checking piece and the king stand elsewhere, and the opponent's threat is still there,
//! only two plies further, perhaps now over the horizon. The positions below the pair are then
//! analogous to those below the position before it: moving the two pieces back maps one onto
//! the other, and with Zobrist keys that map is an XOR with `shift` = key after the pair XOR key
//! before it. The position before the pair was searched to a greater depth (by its other moves
//! or its null move), so the transposition table often knows the analogous position of a leaf.
//!
//! At a leaf, where quiescence would stand pat on the static evaluation, the table is probed
//! for `key ^ shift`; its stored bound, corrected by `delta` (how much the pair changed the
//! static evaluation), bounds the stand-pat score: an upper bound caps it (the threat that was
//! pushed over the horizon is seen again), a lower bound raises it, an exact score replaces it.
//! A mate score of the analogous position counts as just short of a mate, since the analogy is
//! no proof. The most recent pair below the root is the one in force.
//!
//! The other half, in the search's step 8: after such a pair, a null move that failed high is
//! searched again one ply deeper; if it then fails low, the threat is real, and the non-checking
//! moves below are extended by one ply.

use shakmaty::Chess;

use super::hash::hash_of;
use super::score::MATE_BOUND_CP;
use super::tt::{Bound, TranspositionTable};

/// The analogy in force below a spite check and its evasion (see the module's overview).
#[derive(Clone, Copy, Debug)]
pub(super) struct Analogy {
    /// Key after the check and evasion XOR key before them.
    shift: u64,
    /// Static evaluation after the pair minus before it, for the side to move at `ply`.
    delta: i32,
    /// The ply of the position after the pair.
    ply: usize,
}

impl Analogy {
    /// The analogy of a check and its evasion: `before` is the key of the position before the
    /// check and `check_eval` its static evaluation; `pos` is the position after the evasion, at
    /// `ply`, and `eval` its static evaluation.
    pub(super) fn after_pair(
        before: u64,
        check_eval: i32,
        pos: &Chess,
        eval: i32,
        ply: usize,
    ) -> Analogy {
        Analogy {
            shift: before ^ hash_of(pos),
            delta: eval - check_eval,
            ply,
        }
    }

    /// The stand-pat score at a leaf (the position `hash` at `ply`) bounded by what `tt` knows
    /// of the analogous position `hash ^ shift`.
    pub(super) fn bound_stand_pat(
        self,
        tt: &TranspositionTable,
        stand_pat: i32,
        hash: u64,
        ply: usize,
    ) -> i32 {
        let Some(e) = tt.probe(hash ^ self.shift, ply) else {
            return stand_pat;
        };
        // The pair's change of the evaluation, seen from the side to move here.
        let delta = if (ply - self.ply).is_multiple_of(2) {
            self.delta
        } else {
            -self.delta
        };
        bound_by_analogy(stand_pat, e.score, e.bound, delta)
    }
}

/// The stand-pat score `stand_pat` bounded by the analogous position's stored `score` and
/// `bound`, corrected by `delta`. A mate score counts as just short of a mate.
fn bound_by_analogy(stand_pat: i32, score: i32, bound: Bound, delta: i32) -> i32 {
    let v = if score >= MATE_BOUND_CP {
        MATE_BOUND_CP - 1
    } else if score <= -MATE_BOUND_CP {
        -MATE_BOUND_CP + 1
    } else {
        (score + delta).clamp(-MATE_BOUND_CP + 1, MATE_BOUND_CP - 1)
    };
    match bound {
        Bound::Upper => stand_pat.min(v),
        Bound::Lower => stand_pat.max(v),
        Bound::Exact => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::score::MATE_CP;
    use shakmaty::Position;

    #[test]
    fn spite_check_analogy_maps_positions_by_a_key_shift() {
        use crate::position::{parse_fen, parse_move};
        // P: White to move. The spite check Qe3+ and the evasion Kf7 give P'. Any later quiet
        // move m away from the two pieces leads from P' to a position whose key, XOR the shift,
        // is the key of P followed by m: the analogous position.
        let p = parse_fen("4k3/7p/8/8/8/Q7/1P6/4K3 w - - 0 1").unwrap();
        let play = |pos: &Chess, moves: &[&str]| {
            let mut pos = pos.clone();
            for m in moves {
                let m = parse_move(&pos, m).unwrap();
                pos.play_unchecked(m);
            }
            pos
        };
        let p2 = play(&p, &["Qe3+", "Kf7"]);
        let shift = hash_of(&p) ^ hash_of(&p2);
        let eval = crate::engine::eval::evaluate(&p2, &crate::engine::eval::Params::default());
        let a = Analogy::after_pair(hash_of(&p), 0, &p2, eval, 2);
        assert_eq!(a.shift, shift);
        for m in [["b3", "h6"], ["b4", "h5"]] {
            assert_eq!(hash_of(&play(&p2, &m)) ^ shift, hash_of(&play(&p, &m)));
        }
        // Bounds: an upper bound caps, a lower bound raises, an exact score replaces, each
        // corrected by the evaluation change; mate scores count as just short of a mate.
        assert_eq!(bound_by_analogy(100, 20, Bound::Upper, 10), 30);
        assert_eq!(bound_by_analogy(10, 20, Bound::Upper, 10), 10);
        assert_eq!(bound_by_analogy(10, 20, Bound::Lower, -5), 15);
        assert_eq!(bound_by_analogy(100, 20, Bound::Lower, -5), 100);
        assert_eq!(bound_by_analogy(100, 20, Bound::Exact, 0), 20);
        assert_eq!(
            bound_by_analogy(0, -MATE_CP + 5, Bound::Upper, 50),
            -MATE_BOUND_CP + 1
        );
        assert_eq!(
            bound_by_analogy(0, MATE_CP - 5, Bound::Exact, 50),
            MATE_BOUND_CP - 1
        );
    }
}
