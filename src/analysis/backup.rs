//! Backing the engine's scores up the book's graph by negamax.
//!
//! **The rule.** Scores are from the view of the side to move, on the internal scale (centipawns;
//! a mate in `n` plies is `MATE_CP - n`, being mated `-(MATE_CP - n)`).
//! - A leaf (a position a book move leads to that the book has no entry for) is worth the
//!   engine's score of it.
//! - A book move is worth minus the value of the position it leads to, a mate one ply further
//!   away; a move back to a position on the line being walked (a repetition) is worth 0, a draw.
//! - A book position is worth the best of its book moves and of the engine's best move outside
//!   the book (its search restricted to the legal moves the book does not hold; none when the book
//!   holds them all). A position with no legal move is worth `-MATE_CP` (mated) or 0 (stalemate).
//! - Each score carries the depth of the search it came from (0 for a repetition).
//!
//! The walk is depth-first from the roots in the order given, moves in stored order, and each
//! position's value is computed once, the first time the walk finishes it; later lines reaching
//! it (transpositions) take that value.

use std::collections::{HashMap, HashSet};

use shakmaty::Position;

use super::Verdict;
use super::graph::Graph;
use crate::score_scale::{MATE_BOUND_CP, MATE_CP};

/// The backed-up values: per reached book position, and per book move (by entry index).
#[derive(Debug, Default)]
pub struct Backup {
    pub values: HashMap<u64, Verdict>,
    pub moves: HashMap<usize, Verdict>,
}

/// A value seen from the position before the move: negated, a mate one ply further.
pub fn from_parent(v: i32) -> i32 {
    let v = if v > MATE_BOUND_CP {
        v - 1
    } else if v < -MATE_BOUND_CP {
        v + 1
    } else {
        v
    };
    -v
}

/// Backs `verdicts` (the engine's, by key: the leaves, and the book positions' best moves outside
/// the book) up `graph`. A leaf without a verdict (an interrupted run) makes its move unscored.
pub fn back_up(graph: &Graph, verdicts: &HashMap<u64, Verdict>) -> Backup {
    let mut b = Backup::default();
    let mut path = HashSet::new();
    for &root in &graph.roots {
        value(root, graph, verdicts, &mut b, &mut path);
    }
    b
}

fn value(
    key: u64,
    graph: &Graph,
    verdicts: &HashMap<u64, Verdict>,
    b: &mut Backup,
    path: &mut HashSet<u64>,
) -> Option<Verdict> {
    if let Some(v) = b.values.get(&key) {
        return Some(*v);
    }
    let Some(node) = graph.nodes.get(&key) else {
        return verdicts.get(&key).copied();
    };
    path.insert(key);
    let mut best: Option<Verdict> = verdicts.get(&key).copied();
    if node.pos.legal_moves().is_empty() {
        best = Some(Verdict::score(
            if node.pos.is_check() { -MATE_CP } else { 0 },
            255,
        ));
    }
    for edge in &node.edges {
        let child = if path.contains(&edge.child) {
            Some(Verdict::score(0, 0))
        } else if graph.nodes.contains_key(&edge.child) {
            value(edge.child, graph, verdicts, b, path)
        } else {
            leaf(edge.child, graph, verdicts)
        };
        let Some(child) = child else { continue };
        let score = Verdict::score(from_parent(child.score), child.depth);
        b.moves.insert(edge.entry, score);
        if best.is_none_or(|v| score.score > v.score) {
            best = Some(score);
        }
    }
    path.remove(&key);
    if let Some(v) = best {
        b.values.insert(key, v);
    }
    best
}

/// A leaf's value: the engine's, or the end of the game when it has no legal move.
fn leaf(key: u64, graph: &Graph, verdicts: &HashMap<u64, Verdict>) -> Option<Verdict> {
    let pos = graph.leaves.get(&key)?;
    if pos.legal_moves().is_empty() {
        return Some(Verdict::score(
            if pos.is_check() { -MATE_CP } else { 0 },
            255,
        ));
    }
    verdicts.get(&key).copied()
}
