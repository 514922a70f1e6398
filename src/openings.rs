//! Opening names: lichess's public-domain opening table (`assets/openings/`, 3,807 named lines),
//! embedded, and the rule that names a position or a line of moves by it.
//!
//! - A **position** is named by the table's line that ends in it, found by its Polyglot key: a
//!   position reached by another move order (a transposition) gets the same name.
//! - A **line** of moves is named by the last named position along it, the start included: lichess's
//!   rule (play the moves back until a named position is found). After `1. e4 c5 2. Qh5`, which the
//!   table does not hold, the line is still `B20 Sicilian Defense`.
//!
//! The table is read on first use (a few milliseconds) and kept for the process.
//!
//! ```
//! use polybook::openings::Openings;
//! use polybook::position::play_moves;
//! let pos = play_moves(shakmaty::Chess::default(), "Nf3 d5 d4").unwrap();
//! let named = Openings::bundled().position(&pos).unwrap();
//! assert_eq!((named.eco, named.name), ("D02", "Queen's Pawn Game: Zukertort Variation"));
//! ```

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Serialize;
use shakmaty::Chess;

use crate::book::Key;
use crate::position::play_moves;

/// The table's files, in ECO order.
const TABLE: [&str; 5] = [
    include_str!("../assets/openings/a.tsv"),
    include_str!("../assets/openings/b.tsv"),
    include_str!("../assets/openings/c.tsv"),
    include_str!("../assets/openings/d.tsv"),
    include_str!("../assets/openings/e.tsv"),
];

/// One named opening: the table's `eco` and `name` columns, verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Opening {
    pub eco: &'static str,
    pub name: &'static str,
}

impl std::fmt::Display for Opening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.eco, self.name)
    }
}

/// The named positions, by Polyglot key.
pub struct Openings {
    by_key: HashMap<Key, Opening>,
}

impl Openings {
    /// The embedded table, read once.
    pub fn bundled() -> &'static Openings {
        static TABLE_READ: OnceLock<Openings> = OnceLock::new();
        TABLE_READ.get_or_init(|| Openings::from_tsv(TABLE.iter().copied()))
    }

    /// A table from TSV texts with a header line and the columns `eco`, `name`, `pgn`. The
    /// embedded files are checked by the tests; a line that does not read is a bug there.
    fn from_tsv(files: impl Iterator<Item = &'static str>) -> Openings {
        let mut by_key = HashMap::new();
        for file in files {
            for line in file.lines().skip(1).filter(|l| !l.is_empty()) {
                let mut columns = line.split('\t');
                let (Some(eco), Some(name), Some(pgn)) =
                    (columns.next(), columns.next(), columns.next())
                else {
                    panic!("opening table line without three columns: {line}");
                };
                let pos = play_moves(Chess::default(), pgn)
                    .unwrap_or_else(|e| panic!("opening table line {line}: {e}"));
                // Every line ends in its own position; were two to meet, the first (the lower
                // ECO code, then the table's order) would keep it.
                by_key.entry(Key::of(&pos)).or_insert(Opening { eco, name });
            }
        }
        Openings { by_key }
    }

    /// How many positions are named.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// The name of the position with key `key`, if the table ends a line there.
    pub fn get(&self, key: Key) -> Option<Opening> {
        self.by_key.get(&key).copied()
    }

    /// The name of `pos`, if the table ends a line there.
    pub fn position(&self, pos: &Chess) -> Option<Opening> {
        self.get(Key::of(pos))
    }

    /// The name of a line given by its positions' keys in the order played (the first position's
    /// included): the last that is named.
    pub fn line(&self, keys: impl IntoIterator<Item = Key>) -> Option<Opening> {
        keys.into_iter().filter_map(|k| self.get(k)).last()
    }
}

/// Names along a line as it is played: [`LineName::push`] each position in turn, the start first;
/// [`LineName::name`] is the line's name so far, and [`LineName::after`] the name the line would
/// have after one more position, without playing it.
#[derive(Clone, Copy, Default, Debug)]
pub struct LineName {
    current: Option<Opening>,
}

impl LineName {
    pub fn new() -> LineName {
        LineName::default()
    }

    /// A line of one position, `pos`: its own name.
    pub fn of_position(pos: &Chess) -> LineName {
        let mut line = LineName::new();
        line.push(Key::of(pos));
        line
    }

    /// The line's name so far.
    pub fn name(&self) -> Option<Opening> {
        self.current
    }

    /// Takes in the next position of the line.
    pub fn push(&mut self, key: Key) {
        self.current = self.after(key);
    }

    /// The name of the line with one more position, `key`.
    pub fn after(&self, key: Key) -> Option<Opening> {
        Openings::bundled().get(key).or(self.current)
    }
}

/// The name of the line from `start` through `moves` (SAN or UCI, as
/// [`play_moves`](crate::position::play_moves) reads them), with the position it ends in.
pub fn name_moves(
    start: Chess,
    moves: &str,
) -> Result<(Chess, LineName), crate::position::PositionError> {
    let mut line = LineName::new();
    let end = crate::position::play_moves_each(start, moves, |pos, _| line.push(Key::of(pos)))?;
    line.push(Key::of(&end));
    Ok((end, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_the_table_reads_and_ends_in_its_own_position() {
        let lines: usize = TABLE
            .iter()
            .map(|f| f.lines().skip(1).filter(|l| !l.is_empty()).count())
            .sum();
        assert_eq!(lines, 3807);
        assert_eq!(Openings::bundled().len(), lines);
    }

    #[test]
    fn a_line_is_named_by_its_last_named_position() {
        let name = |moves: &str| {
            name_moves(Chess::default(), moves)
                .unwrap()
                .1
                .name()
                .map(|o| o.to_string())
        };
        assert_eq!(name(""), None);
        assert_eq!(name("e4").as_deref(), Some("B00 King's Pawn Game"));
        assert_eq!(name("e4 c5").as_deref(), Some("B20 Sicilian Defense"));
        // 2. Qh5 is not in the table, nor is 2...h6 after it: the line keeps its name.
        assert_eq!(
            name("e4 c5 Qh5 h6").as_deref(),
            Some("B20 Sicilian Defense")
        );
        assert_eq!(
            name("e4 c5 a3 h6").as_deref(),
            Some("B20 Sicilian Defense: Mengarini Variation")
        );
    }
}
