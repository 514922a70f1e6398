//! A book's tree as one PGN game with variations: `polybook export --pgn`.
//!
//! From the start position, the main line plays the heaviest book move of each position (the
//! first stored among equals, as the `best` selection picks); the position's other book moves
//! are variations (PGN's recursive annotation variations, in parentheses), each followed by its
//! own tree. Every move carries a comment with its weight and its share of the position (the
//! share rule of [`ChooseOptions::shares`]), e.g. `{w 120, 35.2%}`, and, when the position it
//! leads to is a named opening ([`crate::openings`]), that name: `{w 120, 35.2%, C40 King's Knight
//! Opening}`. GUIs (Scid, ChessBase,
//! lichess's study import) show such a game as an opening tree.
//!
//! Bounds: no line is longer than `max_ply` plies; moves whose share is below `min_share` are
//! left out; a move that leads back to a position earlier on its own line (a cycle) is written
//! with the comment `cycle` and not followed; and at most `max_moves` moves are written in all,
//! since transpositions can make the tree grow exponentially with depth (the report says when
//! the cap cut it). The cap takes moves best first: the main line to `max_ply`, then the lines
//! that leave it once, then twice, and so on (shallower moves first among equals), so that it
//! cuts the least important variations and never the main line.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Position};

use crate::book::{Book, ChooseOptions, Key};
use crate::openings::Openings;

/// Which part of the tree to write.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportOptions {
    /// The longest line, in plies.
    pub max_ply: u32,
    /// Leave out moves whose share, in percent, is below this.
    pub min_share: f64,
    /// The most moves written in all.
    pub max_moves: u64,
    /// The book's name, for the `Annotator` tag and the opening comment.
    pub name: String,
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExportReport {
    /// Moves written, main line and variations.
    pub moves: u64,
    /// Moves that close a cycle (written, not followed).
    pub cycles: u64,
    /// Whether `max_moves` cut the tree short.
    pub truncated: bool,
}

/// Writes `book`'s tree from the start position as one PGN game.
///
/// ```
/// use polybook::book::{Book, Entry, Key, RawMove};
/// use polybook::inspect::{ExportOptions, export_pgn};
/// use shakmaty::Chess;
///
/// // The start position with 1. e4 (weight 3) and 1. d4 (weight 1).
/// let entry = |uci: &str, weight| Entry {
///     key: Key::of(&Chess::default()),
///     mv: RawMove::from_uci_str(uci).unwrap(),
///     weight,
///     learn: 0,
/// };
/// let bytes = [entry("e2e4", 3), entry("d2d4", 1)].iter().flat_map(Entry::to_bytes).collect();
/// let book = Book::from_bytes("two.bin", bytes).unwrap();
/// let options = ExportOptions { max_ply: 20, min_share: 0.0, max_moves: 100, name: "two.bin".into() };
/// let mut pgn = Vec::new();
/// let report = export_pgn(&book, &options, &mut pgn).unwrap();
/// assert_eq!(report.moves, 2);
/// let pgn = String::from_utf8(pgn).unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
/// let tree = "1. e4 {w 3, 75.0%, B00 King's Pawn Game} ( 1. d4 {w 1, 25.0%, A40 Queen's Pawn Game} ) *";
/// assert!(pgn.contains(tree));
/// ```
pub fn export_pgn(
    book: &Book,
    options: &ExportOptions,
    out: &mut dyn Write,
) -> io::Result<ExportReport> {
    let tag = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"");
    let comment = |v: &str| v.replace('}', ")");
    for (name, value) in [
        ("Event", "polybook export"),
        ("Site", "?"),
        ("Date", "????.??.??"),
        ("Round", "-"),
        ("White", "?"),
        ("Black", "?"),
        ("Result", "*"),
        ("Annotator", &tag(&options.name)),
    ] {
        writeln!(out, "[{name} \"{value}\"]")?;
    }
    writeln!(out)?;
    let mut tree = Tree::grow(book, options);
    tree.tokens.push(format!(
        "{{Book {}: lines up to {} plies, moves with a share of at least {}%}}",
        comment(&options.name),
        options.max_ply,
        options.min_share
    ));
    tree.write(ROOT, &Chess::default());
    tree.tokens.push("*".to_string());
    write_movetext(&tree.tokens, out)?;
    Ok(tree.report)
}

/// Writes a game's movetext tokens in the PGN export format's lines of at most 79 characters,
/// broken between tokens, then the blank line that ends the game.
pub fn write_movetext(tokens: &[String], out: &mut dyn Write) -> io::Result<()> {
    let mut width = 0;
    for token in tokens {
        if width > 0 && width + 1 + token.len() > 79 {
            writeln!(out)?;
            width = 0;
        } else if width > 0 {
            write!(out, " ")?;
            width += 1;
        }
        write!(out, "{token}")?;
        width += token.len();
    }
    writeln!(out)?;
    writeln!(out)
}

/// The index of the start position in [`Tree::nodes`].
const ROOT: usize = 0;

/// One book move of the tree (the root: the start position, no move).
struct Node {
    san: String,
    weight: u16,
    share: f64,
    /// The position after the move.
    after: Chess,
    cycle: bool,
    /// The moves of `after` in the tree, heaviest first.
    children: Vec<usize>,
    /// The move before (the root: itself).
    parent: usize,
}

/// A book move not yet in the tree: taken in the order of its key.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    /// How many times its line leaves the heaviest move of a position (0: the main line).
    deviations: u32,
    ply: u32,
    /// The order in which candidates were found (heaviest first within a position).
    seq: u64,
    parent: usize,
}

struct Tree {
    nodes: Vec<Node>,
    tokens: Vec<String>,
    report: ExportReport,
}

impl Tree {
    /// The tree's moves, taken best first until `max_moves`: the main line (the heaviest move of
    /// each position) to `max_ply`, then the lines that leave it once, then twice, and so on,
    /// shallower moves first among equals. So the cap cuts the least important variations, never
    /// the main line.
    fn grow(book: &Book, options: &ExportOptions) -> Tree {
        let choose = ChooseOptions::default();
        let mut tree = Tree {
            nodes: vec![Node {
                san: String::new(),
                weight: 0,
                share: 0.0,
                after: Chess::default(),
                cycle: false,
                children: Vec::new(),
                parent: ROOT,
            }],
            tokens: Vec::new(),
            report: ExportReport::default(),
        };
        let mut queue = BinaryHeap::new();
        let mut seq = 0;
        let mut push = |queue: &mut BinaryHeap<Reverse<Candidate>>, parent, deviations, ply| {
            queue.push(Reverse(Candidate {
                deviations,
                ply,
                seq,
                parent,
            }));
            seq += 1;
        };
        if options.max_ply > 0 {
            push(&mut queue, ROOT, 0, 0);
        }
        // A candidate stands for the moves of its parent's position: the heaviest is taken with
        // the parent's deviations, the others with one more, each in its turn.
        while let Some(Reverse(c)) = queue.pop() {
            let pos = tree.nodes[c.parent].after.clone();
            let moves = book.find_all(&pos);
            let shares = choose.shares(&moves);
            let mut next: Vec<_> = moves
                .iter()
                .zip(shares)
                .filter(|(m, share)| choose.counts(m) && share * 100.0 >= options.min_share)
                .collect();
            next.sort_by_key(|(m, _)| std::cmp::Reverse(m.entry.weight));
            let taken = tree.nodes[c.parent].children.len();
            let Some((m, share)) = next.get(taken) else {
                continue;
            };
            if tree.report.moves >= options.max_moves {
                tree.report.truncated = true;
                break;
            }
            let after = pos.clone().play(m.mv).expect("a legal move");
            let key = Key::of(&after).0;
            let cycle = tree.line_keys(c.parent).contains(&key);
            let index = tree.nodes.len();
            tree.nodes.push(Node {
                san: SanPlus::from_move(pos, m.mv).to_string(),
                weight: m.entry.weight,
                share: *share,
                after,
                cycle,
                children: Vec::new(),
                parent: c.parent,
            });
            tree.nodes[c.parent].children.push(index);
            tree.report.moves += 1;
            tree.report.cycles += u64::from(cycle);
            // The parent's next move, one deviation further; this move's own moves.
            if taken + 1 < next.len() {
                let deviations = if taken == 0 {
                    c.deviations + 1
                } else {
                    c.deviations
                };
                push(&mut queue, c.parent, deviations, c.ply);
            }
            if !cycle && c.ply + 1 < options.max_ply {
                push(&mut queue, index, c.deviations, c.ply + 1);
            }
        }
        tree
    }

    /// The keys of the positions on the line to `node`, the start position first.
    fn line_keys(&self, node: usize) -> Vec<u64> {
        let mut keys = vec![Key::of(&self.nodes[node].after).0];
        let mut at = node;
        while at != ROOT {
            at = self.nodes[at].parent;
            keys.push(Key::of(&self.nodes[at].after).0);
        }
        keys
    }

    /// Writes the tree below `node` (whose position is `pos`): its first move, the others as
    /// variations each followed by its own tree, then the main line on.
    fn write(&mut self, node: usize, pos: &Chess) {
        let children = self.nodes[node].children.clone();
        let Some((&main, others)) = children.split_first() else {
            return;
        };
        self.write_move(pos, main);
        for &other in others {
            self.tokens.push("(".to_string());
            self.write_move(pos, other);
            let after = self.nodes[other].after.clone();
            self.write(other, &after);
            self.tokens.push(")".to_string());
        }
        let after = self.nodes[main].after.clone();
        self.write(main, &after);
    }

    /// One move with its number and comment.
    fn write_move(&mut self, pos: &Chess, node: usize) {
        let n = &self.nodes[node];
        let number = pos.fullmoves();
        // The number and the move as one token, so that a line break never parts them.
        let mv = match pos.turn() {
            Color::White => format!("{number}. {}", n.san),
            Color::Black => format!("{number}... {}", n.san),
        };
        let cycle = if n.cycle { ", cycle" } else { "" };
        let opening = Openings::bundled()
            .position(&n.after)
            .map_or(String::new(), |o| format!(", {o}"));
        let comment = format!(
            "{{w {}, {:.1}%{cycle}{opening}}}",
            n.weight,
            100.0 * n.share
        );
        self.tokens.push(mv);
        self.tokens.push(comment);
    }
}
