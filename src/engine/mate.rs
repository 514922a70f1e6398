//! The mate search: does the side to move mate within N moves? (UCI `go mate N`,
//! `polybook search --mate N`, and every mate task of `polybook solve`.)
//!
//! The normal search looks for the best move: null-move pruning, late move reductions and
//! futility pruning all assume that a quiet move in a quiet position changes little, which is
//! exactly what a composed mate's key move contradicts, and its evaluation makes it wander down
//! lines that win material instead of lines that mate. This search answers a yes/no question
//! instead, which allows it to be exact and still small:
//!
//! - **Bounded to N moves.** The attacker (the side to move at the root) has `n` moves left at
//!   its nodes, the defender answers with `n - 1` left after its move, so the tree is at most
//!   2N - 1 plies deep. It is the null-window search around the score "mate in n": every node
//!   only asks whether the attacker mates within its remaining moves (a proof) or not (a
//!   disproof); there is no evaluation and no quiescence.
//! - **Iterative deepening on n** (1, 2, …, N), so the first n that succeeds is the exact
//!   distance of the shortest mate, and each iteration starts with the refutations and mating
//!   moves the previous ones stored.
//! - **No unsound pruning.** Every move of both sides is searched: no null move, no reductions,
//!   no futility. The only cut is exact: with one move left, only a checking move can mate, so
//!   the attacker tries checks alone there.
//! - **Move ordering** for a fast proof: the attacker tries the stored mating move, then checks
//!   (fewest replies first), captures, killers, and quiet moves by how few replies they leave
//!   the defender; the defender tries the stored refutation, its killers (a refutation of one
//!   attacking try often refutes the next), captures, then king moves.
//! - **A table** of proofs and disproofs by position: the smallest n known to mate and the
//!   largest n known not to, with the move that did it (a mating move or a refutation).
//!
//! Draws: a position of the game before the root (any repetition of one), the fifty-move rule
//! and an attacker without mating material count as "no mate" (stalemate too, of course).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use shakmaty::{Chess, Move, Position, Role};

use super::eval::{role_index, see_value};
use super::hash::{child_hash, hash_of};
use super::packed_move::PackedMove;
use super::score::MAX_PLY;

/// The longest mate the search accepts (its tree must fit in [`MAX_PLY`]).
pub const MAX_MATE_MOVES: u32 = (MAX_PLY as u32 - 4) / 2;

/// One position's knowledge.
#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    /// The attacking move that mates, or the defence that refutes.
    mv: PackedMove,
    /// The attacker mates within this many moves (0: not known).
    proven: u8,
    /// The attacker does not mate within this many moves (0: not known).
    disproved: u8,
}

/// The mate search's table of proofs and disproofs, kept apart from the main transposition
/// table: "no mate within n moves" is not a bound on the normal search's score.
pub struct MateTable {
    entries: Vec<Entry>,
    mask: usize,
}

impl MateTable {
    /// A table of about `mb` megabytes (a power of two entries).
    pub fn new(mb: usize) -> Self {
        let n = (mb.max(1) * 1024 * 1024 / std::mem::size_of::<Entry>()).next_power_of_two() / 2;
        let n = n.max(1024);
        MateTable {
            entries: vec![Entry::default(); n],
            mask: n - 1,
        }
    }

    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
    }

    fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.entries[key as usize & self.mask];
        (e.key == key).then_some(e)
    }

    /// Records that the attacker mates within `n` moves (`mate`) or does not; `mv` made it so.
    fn store(&mut self, key: u64, n: u32, mate: bool, mv: Option<Move>) {
        let slot = &mut self.entries[key as usize & self.mask];
        if slot.key != key {
            *slot = Entry {
                key,
                ..Entry::default()
            };
        }
        let n = n.min(255) as u8;
        if mate {
            if slot.proven == 0 || n < slot.proven {
                slot.proven = n;
            }
        } else {
            slot.disproved = slot.disproved.max(n);
        }
        if let Some(m) = mv {
            slot.mv = PackedMove::new(m);
        }
    }
}

/// How a mate search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MateOutcome {
    /// The side to move mates in exactly `moves` moves (none shorter exists); `pv` starts with
    /// the mating move (the rest of the line is the table's, best effort).
    Mate { moves: u32, pv: Vec<Move> },
    /// No mate within the moves asked for.
    NoMate,
    /// Stopped by a limit before an answer; `disproved` moves are known not to mate.
    Stopped { disproved: u32 },
}

/// The limits of a mate search.
pub struct MateLimits {
    pub deadline: Option<Instant>,
    pub nodes: u64,
    pub stop: Arc<AtomicBool>,
}

impl MateLimits {
    /// A budget of `nodes` nodes alone: no deadline, and no stop from outside.
    pub fn nodes(nodes: u64) -> MateLimits {
        MateLimits {
            deadline: None,
            nodes,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// Per-ply move lists, reused across nodes.
type Candidates = Vec<(i32, Move, Chess, u64)>;

pub struct MateSearch<'a> {
    table: &'a mut MateTable,
    /// Positions of the game before the root: reaching one again is a draw.
    game: Vec<u64>,
    limits: MateLimits,
    pub nodes: u64,
    pub seldepth: u32,
    stopped: bool,
    killers: Vec<[Option<Move>; 2]>,
    buffers: Vec<Candidates>,
}

fn victim_value(m: Move) -> i32 {
    if m.is_en_passant() {
        see_value(Role::Pawn)
    } else {
        m.capture().map_or(0, see_value)
    }
}

impl<'a> MateSearch<'a> {
    /// A search over `table` (cleared by the caller when it wants a fresh start); `game` holds
    /// the hashes of the positions played before the root.
    pub fn new(table: &'a mut MateTable, game: &[u64], limits: MateLimits) -> Self {
        MateSearch {
            table,
            game: game.to_vec(),
            limits,
            nodes: 0,
            seldepth: 0,
            stopped: false,
            killers: vec![[None; 2]; MAX_PLY + 2],
            buffers: (0..MAX_PLY + 2).map(|_| Vec::new()).collect(),
        }
    }

    /// Looks for the shortest mate of the side to move within `max_moves` moves, trying 1, 2, …
    /// moves in turn. `on_disproof` is told each n found not to mate.
    pub fn run(
        &mut self,
        pos: &Chess,
        max_moves: u32,
        on_disproof: &mut dyn FnMut(u32, &Self),
    ) -> MateOutcome {
        let hash = hash_of(pos);
        let max_moves = max_moves.min(MAX_MATE_MOVES);
        for n in 1..=max_moves {
            let mate = self.attack(pos, hash, n, 0);
            if self.stopped {
                return MateOutcome::Stopped { disproved: n - 1 };
            }
            if mate {
                return MateOutcome::Mate {
                    moves: n,
                    pv: self.principal_variation(pos, n),
                };
            }
            on_disproof(n, self);
        }
        MateOutcome::NoMate
    }

    /// What the table knows of `hash` within `n` moves: a settled answer (`Ok`), or else the
    /// move to try first (`Err`, [`PackedMove::NONE`] for none).
    fn known(&self, hash: u64, n: u32) -> Result<bool, PackedMove> {
        match self.table.probe(hash) {
            Some(e) if e.proven != 0 && u32::from(e.proven) <= n => Ok(true),
            Some(e) if u32::from(e.disproved) >= n => Ok(false),
            Some(e) => Err(e.mv),
            None => Err(PackedMove::NONE),
        }
    }

    fn enter_node(&mut self, ply: usize) -> bool {
        self.nodes += 1;
        if self.nodes & 1023 == 0
            && (self.nodes >= self.limits.nodes
                || self.limits.stop.load(Ordering::Relaxed)
                || self.limits.deadline.is_some_and(|d| Instant::now() >= d))
        {
            self.stopped = true;
        }
        self.seldepth = self.seldepth.max(ply as u32);
        !self.stopped
    }

    /// Is `pos` (or an earlier position of the game, repeated) a draw the defender can claim
    /// before being mated?
    fn is_draw(&self, pos: &Chess, hash: u64) -> bool {
        (pos.halfmoves() >= 100 && !pos.is_checkmate()) || self.game.contains(&hash)
    }

    /// Does the side to move mate within `n` moves (n >= 1)?
    fn attack(&mut self, pos: &Chess, hash: u64, n: u32, ply: usize) -> bool {
        if !self.enter_node(ply) {
            return false;
        }
        // (The root itself may repeat a game position: that is no draw yet.)
        if (ply > 0 && self.is_draw(pos, hash)) || pos.has_insufficient_material(pos.turn()) {
            return false;
        }
        let tt_move = match self.known(hash, n) {
            Ok(answer) => return answer,
            Err(mv) => mv,
        };
        if ply + 2 >= MAX_PLY {
            return false;
        }
        let moves = pos.legal_moves();

        // With one move left only a check can mate: try the checks, nothing else.
        if n == 1 {
            for &m in &moves {
                let mut child = pos.clone();
                child.play_unchecked(m);
                if child.is_check() {
                    self.nodes += 1;
                    if child.legal_moves().is_empty() {
                        self.table.store(hash, 1, true, Some(m));
                        return true;
                    }
                }
            }
            self.table.store(hash, 1, false, None);
            return false;
        }

        // Order: the stored move, a mate at once, checks (fewest replies first), captures,
        // killers, then quiet moves by the defender's replies (fewest first).
        let mut cands = std::mem::take(&mut self.buffers[ply]);
        cands.clear();
        let killers = self.killers[ply];
        for &m in &moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let replies = child.legal_moves().len() as i32;
            if replies == 0 && child.is_check() {
                // Mate in one: within n moves for any n >= 1.
                self.buffers[ply] = cands;
                self.table.store(hash, 1, true, Some(m));
                return true;
            }
            let key = if tt_move.is(m) {
                1 << 30
            } else if child.is_check() {
                (1 << 28) - replies
            } else if m.is_capture() || m.promotion() == Some(Role::Queen) {
                (1 << 26) + (victim_value(m) + m.promotion().map_or(0, see_value)) * 8
                    - role_index(m.role()) as i32
            } else if killers.contains(&Some(m)) {
                1 << 24
            } else {
                -replies
            };
            let h = child_hash(pos, hash, m, &child);
            cands.push((key, m, child, h));
        }
        cands.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));

        let mut mate_move = None;
        for (_, m, child, h) in &cands {
            if self.defend(child, *h, n - 1, ply + 1) {
                mate_move = Some(*m);
                break;
            }
            if self.stopped {
                break;
            }
        }
        cands.clear();
        self.buffers[ply] = cands;
        if self.stopped {
            return false;
        }
        match mate_move {
            Some(m) => {
                self.remember_killer(ply, m);
                self.table.store(hash, n, true, Some(m));
                true
            }
            None => {
                self.table.store(hash, n, false, None);
                false
            }
        }
    }

    /// The defender to move: is it mated within `n` more moves of the attacker, whatever it
    /// plays (n >= 1; checkmated right now counts too)?
    fn defend(&mut self, pos: &Chess, hash: u64, n: u32, ply: usize) -> bool {
        if !self.enter_node(ply) {
            return false;
        }
        let mut moves = pos.legal_moves();
        if moves.is_empty() {
            return pos.is_check();
        }
        if n == 0 || self.is_draw(pos, hash) || pos.has_insufficient_material(!pos.turn()) {
            return false;
        }
        let tt_move = match self.known(hash, n) {
            Ok(answer) => return answer,
            Err(mv) => mv,
        };
        let killers = self.killers[ply];
        let key = |m: &Move| -> i32 {
            if tt_move.is(*m) {
                1 << 30
            } else if killers[0] == Some(*m) {
                1 << 29
            } else if killers[1] == Some(*m) {
                1 << 28
            } else if m.is_capture() {
                (1 << 20) + victim_value(*m) * 8 - role_index(m.role()) as i32
            } else if m.role() == Role::King {
                1 << 10
            } else {
                0
            }
        };
        moves.sort_by_cached_key(|m| std::cmp::Reverse(key(m)));
        for &m in &moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let h = child_hash(pos, hash, m, &child);
            if !self.attack(&child, h, n, ply + 1) {
                if self.stopped {
                    return false;
                }
                self.remember_killer(ply, m);
                self.table.store(hash, n, false, Some(m));
                return false;
            }
        }
        self.table.store(hash, n, true, None);
        true
    }

    fn remember_killer(&mut self, ply: usize, m: Move) {
        let k = &mut self.killers[ply];
        if k[0] != Some(m) {
            k[1] = k[0];
            k[0] = Some(m);
        }
    }

    /// The mating line from the table: the attacker's stored moves, and for the defender the
    /// reply that holds out longest by the table's knowledge.
    fn principal_variation(&self, root: &Chess, n: u32) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut pos = root.clone();
        let mut hash = hash_of(root);
        let mut left = n;
        while left > 0 {
            let Some(e) = self.table.probe(hash) else {
                break;
            };
            let Some(m) = e.mv.unpack(&pos) else {
                break;
            };
            let mut next = pos.clone();
            next.play_unchecked(m);
            hash = child_hash(&pos, hash, m, &next);
            pos = next;
            pv.push(m);
            left -= 1;
            // The defender: the reply after which the attacker needs the most moves.
            let mut best: Option<(u32, Move, Chess, u64)> = None;
            for m in pos.legal_moves() {
                let mut next = pos.clone();
                next.play_unchecked(m);
                let h = child_hash(&pos, hash, m, &next);
                let need = match self.table.probe(h) {
                    Some(e) if e.proven != 0 => u32::from(e.proven),
                    _ => left,
                };
                if best.as_ref().is_none_or(|b| need > b.0) {
                    best = Some((need, m, next, h));
                }
            }
            let Some((need, m, next, h)) = best else {
                break;
            };
            pv.push(m);
            pos = next;
            hash = h;
            left = left.min(need);
        }
        pv
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::parse_fen;

    fn solve(fen: &str, n: u32) -> MateOutcome {
        let pos = parse_fen(fen).unwrap();
        let mut table = MateTable::new(16);
        let mut s = MateSearch::new(&mut table, &[], MateLimits::nodes(10_000_000));
        s.run(&pos, n, &mut |_, _| {})
    }

    #[test]
    fn back_rank_mate_in_one() {
        let r = solve("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 3);
        match r {
            MateOutcome::Mate { moves, pv } => {
                assert_eq!(moves, 1);
                assert_eq!(pv.len(), 1);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_mate_and_stalemate_traps() {
        // KRvK mate in 8 (the seeds' position): no mate within 3 moves.
        assert_eq!(
            solve("8/7K/8/8/8/8/R7/7k w - - 0 1", 3),
            MateOutcome::NoMate
        );
        // Qc8 mates at once: found by the first iteration, whatever N.
        assert!(matches!(
            solve("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1", 2),
            MateOutcome::Mate { moves: 1, .. }
        ));
        // Stalemate is no mate: Black has no move and is not in check.
        assert_eq!(
            solve("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1", 2),
            MateOutcome::NoMate
        );
        // Only a lone king and a knight: never a mate.
        assert_eq!(
            solve("k7/8/1K6/8/8/8/8/2N5 w - - 0 1", 3),
            MateOutcome::NoMate
        );
    }

    #[test]
    fn krvk_mate_in_eight_is_exact() {
        match solve("8/7K/8/8/8/8/R7/7k w - - 0 1", 8) {
            MateOutcome::Mate { moves, pv } => {
                assert_eq!(moves, 8);
                // The whole line, ending in mate.
                assert_eq!(pv.len(), 15);
                let mut pos = parse_fen("8/7K/8/8/8/8/R7/7k w - - 0 1").unwrap();
                for m in pv {
                    assert!(pos.is_legal(m));
                    pos.play_unchecked(m);
                }
                assert!(pos.is_checkmate());
            }
            other => panic!("{other:?}"),
        }
    }
}
