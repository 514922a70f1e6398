//! The book as a graph: its positions reached from the roots by its own legal moves, and the
//! positions those moves lead to outside the book (the leaves).

use std::collections::{HashMap, HashSet};

use shakmaty::{Chess, Move, Position};

use crate::book::{Book, Key};

/// A book move of a reached position.
#[derive(Clone, Debug)]
pub struct Edge {
    /// The entry's index among the book's entries (file order).
    pub entry: usize,
    pub mv: Move,
    /// The key of the position it leads to.
    pub child: u64,
}

/// A position of the book reached by the walk.
#[derive(Clone, Debug)]
pub struct Node {
    pub pos: Chess,
    /// Its legal book moves, in stored order.
    pub edges: Vec<Edge>,
}

/// What the walk found.
#[derive(Debug, Default)]
pub struct Graph {
    /// The reached book positions by key.
    pub nodes: HashMap<u64, Node>,
    /// Their keys in the order the walk first reached them.
    pub node_order: Vec<u64>,
    /// Positions a book move leads to that the book has no entry for, by key.
    pub leaves: HashMap<u64, Chess>,
    pub leaf_order: Vec<u64>,
    /// The roots that are book positions, in the order given, without repeats.
    pub roots: Vec<u64>,
    /// The book's distinct keys (for saturation).
    pub book_keys: u64,
}

impl Graph {
    /// Walks `book` depth-first from each root (moves in stored order), visiting each position
    /// once. Roots the book has no entry for are left out.
    pub fn walk(book: &Book, roots: &[Chess]) -> Graph {
        let mut g = Graph {
            book_keys: distinct_keys(book),
            ..Graph::default()
        };
        let mut seen_roots = HashSet::new();
        for root in roots {
            let key = Key::of(root).0;
            if !book.contains(Key(key)) || !seen_roots.insert(key) {
                continue;
            }
            g.roots.push(key);
            let mut stack = vec![(key, root.clone())];
            while let Some((key, pos)) = stack.pop() {
                if g.nodes.contains_key(&key) {
                    continue;
                }
                let mut edges = Vec::new();
                let mut children = Vec::new();
                for (index, entry) in book.lookup_indexed(Key(key)) {
                    let Some(mv) = entry.mv.to_move(&pos) else {
                        continue;
                    };
                    if edges.iter().any(|e: &Edge| e.mv == mv) {
                        continue; // a repeated entry: the first one speaks for the move
                    }
                    let mut after = pos.clone();
                    after.play_unchecked(mv);
                    let child = Key::of(&after).0;
                    edges.push(Edge {
                        entry: index,
                        mv,
                        child,
                    });
                    if book.contains(Key(child)) {
                        children.push((child, after));
                    } else if let std::collections::hash_map::Entry::Vacant(v) =
                        g.leaves.entry(child)
                    {
                        v.insert(after);
                        g.leaf_order.push(child);
                    }
                }
                g.nodes.insert(key, Node { pos, edges });
                g.node_order.push(key);
                // Reversed, so that the first book move is walked first.
                for child in children.into_iter().rev() {
                    if !g.nodes.contains_key(&child.0) {
                        stack.push(child);
                    }
                }
            }
        }
        g
    }

    /// The share of the book's keys the walk reached, from 0 to 1.
    pub fn saturation(&self) -> f64 {
        if self.book_keys == 0 {
            return 0.0;
        }
        self.nodes.len() as f64 / self.book_keys as f64
    }
}

/// The number of distinct keys in a book.
fn distinct_keys(book: &Book) -> u64 {
    let mut n = 0;
    let mut last = None;
    for e in book.entries_by_key() {
        if last != Some(e.key) {
            n += 1;
            last = Some(e.key);
        }
    }
    n
}
