//! A book's tree as one PGN game with variations: `polybook export --pgn`.
//!
//! From the start position, the main line plays the heaviest book move of each position (the
//! first stored among equals, as the `best` selection picks); the position's other book moves
//! are variations (PGN's recursive annotation variations, in parentheses), each followed by its
//! own tree. Every move carries a comment with its weight and its share of the position (the
//! share rule of [`ChooseOptions::shares`]), e.g. `{w 120, 35.2%}`. GUIs (Scid, ChessBase,
//! lichess's study import) show such a game as an opening tree.
//!
//! Bounds: no line is longer than `max_ply` plies; moves whose share is below `min_share` are
//! left out; a move that leads back to a position earlier on its own line (a cycle) is written
//! with the comment `cycle` and not followed; and at most `max_moves` moves are written in all,
//! since transpositions can make the tree grow exponentially with depth (the report says when
//! the cap cut it).

use std::io::{self, Write};

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Position};

use crate::book::{Book, ChooseOptions, Key};

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
/// assert!(pgn.contains("1. e4 {w 3, 75.0%} ( 1. d4 {w 1, 25.0%} ) *"));
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
    let mut tree = Tree {
        book,
        options,
        choose: ChooseOptions::default(),
        path: vec![Key::of(&Chess::default()).0],
        tokens: Vec::new(),
        report: ExportReport::default(),
    };
    tree.tokens.push(format!(
        "{{Book {}: lines up to {} plies, moves with a share of at least {}%}}",
        comment(&options.name),
        options.max_ply,
        options.min_share
    ));
    tree.line(&Chess::default(), 0);
    tree.tokens.push("*".to_string());
    // The PGN export format's lines of at most 79 characters, broken between tokens.
    let mut width = 0;
    for token in &tree.tokens {
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
    writeln!(out)?;
    Ok(tree.report)
}

/// One book move of a position, ready to write.
struct Child {
    san: String,
    weight: u16,
    share: f64,
    after: Chess,
    cycle: bool,
}

struct Tree<'a> {
    book: &'a Book,
    options: &'a ExportOptions,
    choose: ChooseOptions,
    /// The keys of the positions on the current line, the start position first.
    path: Vec<u64>,
    tokens: Vec<String>,
    report: ExportReport,
}

impl Tree<'_> {
    /// The book moves of `pos` that count and pass `min_share`, heaviest first (stored order
    /// among equals).
    fn children(&self, pos: &Chess) -> Vec<Child> {
        let moves = self.book.find_all(pos);
        let shares = self.choose.shares(&moves);
        let mut children: Vec<Child> = moves
            .iter()
            .zip(shares)
            .filter(|(m, share)| self.choose.counts(m) && share * 100.0 >= self.options.min_share)
            .map(|(m, share)| {
                let after = pos.clone().play(m.mv).expect("a legal move");
                Child {
                    san: SanPlus::from_move(pos.clone(), m.mv).to_string(),
                    weight: m.entry.weight,
                    share,
                    cycle: self.path.contains(&Key::of(&after).0),
                    after,
                }
            })
            .collect();
        children.sort_by_key(|c| std::cmp::Reverse(c.weight));
        children
    }

    /// Writes the tree below `pos` (at `ply` from the start): its heaviest move, the others as
    /// variations, then the main line on.
    fn line(&mut self, pos: &Chess, ply: u32) {
        if ply >= self.options.max_ply {
            return;
        }
        let children = self.children(pos);
        let Some((main, others)) = children.split_first() else {
            return;
        };
        if !self.write_move(pos, main) {
            return;
        }
        for other in others {
            if self.report.moves >= self.options.max_moves {
                self.report.truncated = true;
                break;
            }
            self.tokens.push("(".to_string());
            self.write_move(pos, other);
            self.follow(other, ply);
            self.tokens.push(")".to_string());
        }
        self.follow(main, ply);
    }

    /// Goes on after `child` unless it closes a cycle.
    fn follow(&mut self, child: &Child, ply: u32) {
        if child.cycle {
            return;
        }
        self.path.push(Key::of(&child.after).0);
        self.line(&child.after, ply + 1);
        self.path.pop();
    }

    /// Writes one move with its number and comment; `false` when the cap was reached.
    fn write_move(&mut self, pos: &Chess, child: &Child) -> bool {
        if self.report.moves >= self.options.max_moves {
            self.report.truncated = true;
            return false;
        }
        let number = pos.fullmoves();
        // The number and the move as one token, so that a line break never parts them.
        self.tokens.push(match pos.turn() {
            Color::White => format!("{number}. {}", child.san),
            Color::Black => format!("{number}... {}", child.san),
        });
        let cycle = if child.cycle { ", cycle" } else { "" };
        self.tokens.push(format!(
            "{{w {}, {:.1}%{cycle}}}",
            child.weight,
            100.0 * child.share
        ));
        self.report.moves += 1;
        if child.cycle {
            self.report.cycles += 1;
        }
        true
    }
}
