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
use shakmaty::san::San;
use shakmaty::{Chess, Position};

use crate::book::Key;

/// The table's files, in ECO order.
const TABLE: [&str; 5] = [
    include_str!("../assets/openings/a.tsv"),
    include_str!("../assets/openings/b.tsv"),
    include_str!("../assets/openings/c.tsv"),
    include_str!("../assets/openings/d.tsv"),
    include_str!("../assets/openings/e.tsv"),
];

/// The Polyglot key of each line's final position, in the table's order, 8 bytes big-endian each:
/// what [`play_table`] computes, kept so that a command does not play 3,807 lines of SAN each time
/// it starts (a test checks it; `cargo run --release --example opening_keys` writes it again).
const KEYS: &[u8] = include_bytes!("../assets/openings/keys.bin");

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

/// A position's or a line's opening as the JSON reports give it (`probe --json`, a tally's
/// statistics, the games explorer): `eco` and `opening` fields in the report's object (with
/// `#[serde(flatten)]`), null when the table names none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpeningJson {
    pub eco: Option<&'static str>,
    pub opening: Option<&'static str>,
}

impl From<Option<Opening>> for OpeningJson {
    fn from(named: Option<Opening>) -> OpeningJson {
        OpeningJson {
            eco: named.map(|o| o.eco),
            opening: named.map(|o| o.name),
        }
    }
}

/// The table's lines: `eco`, `name` and `pgn` (its moves from the start, in SAN).
fn table_lines() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    TABLE
        .iter()
        .flat_map(|file| file.lines().skip(1).filter(|l| !l.is_empty()))
        .map(|line| {
            let mut columns = line.split('\t');
            match (columns.next(), columns.next(), columns.next()) {
                (Some(eco), Some(name), Some(pgn)) => (eco, name, pgn.trim()),
                _ => panic!("opening table line without three columns: {line}"),
            }
        })
}

/// Plays every line of the table: the key of each line's final position, in the table's order.
/// Most lines extend another by a move or two, so each is played from the longest of its prefixes
/// played before.
#[doc(hidden)]
pub fn play_table() -> Vec<Key> {
    // A line's movetext (a prefix of a `pgn` column, ending before a space) → its position.
    let mut played: HashMap<&'static str, Chess> = HashMap::with_capacity(4096);
    let mut keys = Vec::with_capacity(4096);
    for (_, _, pgn) in table_lines() {
        let (mut pos, mut from) = (Chess::default(), 0);
        let mut end = pgn.len();
        while let Some(space) = pgn[..end].rfind(' ') {
            end = space;
            if let Some(prefix) = played.get(&pgn[..end]) {
                (pos, from) = (prefix.clone(), end);
                break;
            }
        }
        for token in pgn[from..].split_whitespace() {
            if token.ends_with('.') {
                continue; // a move number
            }
            let m = San::from_ascii(token.trim_end_matches(['+', '#']).as_bytes())
                .ok()
                .and_then(|san| san.to_move(&pos).ok())
                .unwrap_or_else(|| panic!("opening table: {pgn}: move {token}"));
            pos.play_unchecked(m);
        }
        keys.push(Key::of(&pos));
        played.insert(pgn, pos);
    }
    keys
}

/// The named positions, sorted by Polyglot key.
pub struct Openings {
    by_key: Vec<(Key, Opening)>,
}

impl Openings {
    /// The embedded table, read once (its keys from `keys.bin`).
    pub fn bundled() -> &'static Openings {
        static TABLE_READ: OnceLock<Openings> = OnceLock::new();
        TABLE_READ.get_or_init(|| {
            let keys = KEYS
                .chunks_exact(8)
                .map(|b| Key(u64::from_be_bytes(b.try_into().expect("8 bytes"))));
            Openings::new(
                table_lines()
                    .zip(keys)
                    .map(|((eco, name, _), key)| (key, Opening { eco, name })),
            )
        })
    }

    /// A table of named positions. Every line of lichess's table ends in its own position; were
    /// two to meet, the first (the lower ECO code, then the table's order) would keep it.
    fn new(named: impl Iterator<Item = (Key, Opening)>) -> Openings {
        let mut by_key: Vec<(Key, Opening)> = named.collect();
        by_key.sort_by_key(|&(key, _)| key); // stable: the first of equal keys stays first
        by_key.dedup_by_key(|&mut (key, _)| key);
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
        self.by_key
            .binary_search_by_key(&key, |&(k, _)| k)
            .ok()
            .map(|i| self.by_key[i].1)
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
        LineName::of_key(Key::of(pos))
    }

    /// A line of one position, the one with key `key`.
    pub fn of_key(key: Key) -> LineName {
        let mut line = LineName::new();
        line.push(key);
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
        assert_eq!(table_lines().count(), 3807);
        assert_eq!(Openings::bundled().len(), 3807);
        // `probe --json` writes the names without escaping them.
        for (eco, name, _) in table_lines() {
            let text = format!("{eco}{name}");
            assert!(
                !text.contains(['"', '\\']) && !text.chars().any(char::is_control),
                "{text}"
            );
        }
    }

    #[test]
    fn the_kept_keys_are_the_table_played() {
        let kept: Vec<u8> = play_table()
            .iter()
            .flat_map(|k| k.0.to_be_bytes())
            .collect();
        assert!(
            kept == KEYS,
            "assets/openings/keys.bin is not the table played: \
             cargo run --release --example opening_keys"
        );
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
