//! The opening lines a parser has already played, so that a move seen before from the same
//! position costs no chess at all.
//!
//! Most games of a collection begin with the same few hundred lines: at `--max-ply 30` on the
//! GNU Chess collection, three plies in four repeat a (position, move) pair seen before. A
//! [`LineCache`] is a tree of positions reached from the standard start position; each edge is
//! a SAN as written in the PGN, with the move it names and the position it leads to. A game
//! walks the tree while its moves are known edges, recording the keys stored there, and leaves
//! it (materializing the position) at the first move not in it.
//!
//! The tree only grows where games meet: a move is first stored as an edge without a position;
//! the position it leads to is stored when a second game plays that move, so that the many
//! lines played once don't fill the cache. Once the cache is full it stops growing and still
//! serves what it holds.

use shakmaty::san::San;
use shakmaty::{Chess, Move};

/// No node: the edge's position is not stored (yet).
const NONE: u32 = u32::MAX;

/// A position of the tree.
struct Node {
    key: u64,
    pos: Chess,
    /// The first edge out of this position (`NONE`: none yet); the others follow by `next`.
    first: u32,
}

/// A move out of a node, as written.
struct Edge {
    san: San,
    mv: Move,
    /// The move in Polyglot's encoding.
    raw: u16,
    /// The node it leads to, or `NONE`.
    child: u32,
    /// The next edge out of the same node, or `NONE`.
    next: u32,
}

/// What the cache knows of a move from a node.
pub enum Step {
    /// The move and the node it leads to.
    Known { raw: u16, child: u32 },
    /// The move, but not where it leads: play it from the node's position.
    Move { edge: u32, mv: Move, raw: u16 },
    /// Nothing: resolve the SAN in the node's position.
    Unknown,
}

/// The tree of opening lines met so far (one per parser thread).
pub struct LineCache {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    max_nodes: usize,
    max_edges: usize,
}

impl LineCache {
    /// The root: the standard start position.
    pub const ROOT: u32 = 0;

    /// A cache of about `bytes` (at least the root).
    pub fn new(bytes: usize, start_key: u64) -> LineCache {
        // Edges are about a fifth of a node; allow four edges a node.
        let per_node = size_of::<Node>() + 4 * size_of::<Edge>();
        let max_nodes = (bytes / per_node).max(1);
        // Reserved, not touched: memory is used only as the tree grows, and never copied.
        let mut cache = LineCache {
            nodes: Vec::with_capacity(max_nodes),
            edges: Vec::with_capacity(4 * max_nodes),
            max_nodes,
            max_edges: 4 * max_nodes,
        };
        cache.nodes.push(Node {
            key: start_key,
            pos: Chess::default(),
            first: NONE,
        });
        cache
    }

    /// The key of `node`.
    #[inline]
    pub fn key(&self, node: u32) -> u64 {
        self.nodes[node as usize].key
    }

    /// The position of `node`.
    pub fn position(&self, node: u32) -> &Chess {
        &self.nodes[node as usize].pos
    }

    /// Looks `san` up among the moves out of `node`.
    #[inline]
    pub fn step(&self, node: u32, san: &San) -> Step {
        let mut e = self.nodes[node as usize].first;
        while e != NONE {
            let edge = &self.edges[e as usize];
            if edge.san == *san {
                return if edge.child != NONE {
                    Step::Known {
                        raw: edge.raw,
                        child: edge.child,
                    }
                } else {
                    Step::Move {
                        edge: e,
                        mv: edge.mv,
                        raw: edge.raw,
                    }
                };
            }
            e = edge.next;
        }
        Step::Unknown
    }

    /// Stores that `san` names `mv` (Polyglot `raw`) at `node`, if there is room.
    pub fn add_edge(&mut self, node: u32, san: San, mv: Move, raw: u16) {
        if self.edges.len() >= self.max_edges {
            return;
        }
        let id = self.edges.len() as u32;
        let first = &mut self.nodes[node as usize].first;
        self.edges.push(Edge {
            san,
            mv,
            raw,
            child: NONE,
            next: *first,
        });
        *first = id;
    }

    /// Stores the position `edge` leads to, if there is room; returns its node.
    pub fn add_child(&mut self, edge: u32, pos: &Chess, key: u64) -> Option<u32> {
        if self.nodes.len() >= self.max_nodes {
            return None;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            key,
            pos: pos.clone(),
            first: NONE,
        });
        self.edges[edge as usize].child = id;
        Some(id)
    }
}
