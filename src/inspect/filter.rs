//! Cutting a book down: `polybook filter`.
//!
//! Two kinds of cut, applied in this order and combined:
//!
//! 1. **Per move**, judged on the input book: `min_weight` drops the entries lighter than it;
//!    `min_share` drops the moves whose share of their position (the one share rule of
//!    [`ChooseOptions::shares`], the percentage `probe` shows) is below it; `max_loss`, on a
//!    book with scores (`polybook analyse`), drops the moves whose score is below the best score
//!    of their position's book moves by more than it (moves without a score are kept).
//! 2. **Per position**, judged on what step 1 left:
//!    - `max_ply`: keep the positions that a line of book moves (moves of weight 1 or more,
//!      legal in their position) reaches from the start position in fewer than N plies, so no
//!      line of the result is longer than N moves;
//!    - `only`: walking as `max_ply` does, keep that side's moves, and of the other side's moves
//!      only the replies after which that side still has a book move (a repertoire for one
//!      colour);
//!    - `moves_of`: keep the positions where that side is to move, and nothing else: the book
//!      `build --only-white` (or `--only-black`) makes from the same games. A key does not say
//!      whose move it is, so it is learnt by walking from the start ([`sides_to_move`]); a
//!      position no walk reaches is left out and counted;
//!    - `reachable`: drop the positions on no line of either colour, the ones `info` counts as
//!      isolated (its walk lets the side not in the book play any legal move that leads back into
//!      the book, so books of one side's moves keep their positions).
//!
//! A position a line cannot reach from the start has no position to judge a move's legality
//! in: its share is taken over all its entries of weight 1 or more.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

use shakmaty::{Chess, Color, Position};

use super::lines::Walk;
use crate::book::{Book, BookError, ChooseOptions, Entry, Key, MoveScore, write_book_in};

/// What `polybook filter` keeps (every field `None`/`false`: everything).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FilterOptions {
    /// Keep positions reached in fewer than this many plies from the start.
    pub max_ply: Option<u32>,
    /// Drop entries lighter than this.
    pub min_weight: Option<u16>,
    /// Drop moves whose share, in percent, is below this.
    pub min_share: Option<f64>,
    /// Drop scored moves more than this many centipawns below their position's best book move
    /// (the book must hold scores: [`Book::learn_layout`] is `Scored`).
    pub max_loss: Option<i32>,
    /// Keep only the moves of this side (and the other side's replies that stay in the book).
    pub only: Option<Color>,
    /// Keep only the positions where this side is to move (its moves, and no reply).
    pub moves_of: Option<Color>,
    /// Drop positions on no line from the start (`info`'s isolated ones).
    pub reachable: bool,
}

/// What a filter changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FilterReport {
    pub entries_before: u64,
    pub entries_after: u64,
    pub positions_before: u64,
    pub positions_after: u64,
    /// Positions `moves_of` left out because no walk from the start reaches them, so that whose
    /// move it is there is not known.
    pub side_unknown: u64,
}

impl FilterReport {
    pub fn positions_removed(&self) -> u64 {
        self.positions_before - self.positions_after
    }
}

/// A book's entries grouped by key, each key's entries in stored order.
type Positions = HashMap<u64, Vec<Entry>>;

/// Filters `book` and writes the result to `out` (atomically; it may be the book's own path).
/// When nothing is left the result is the empty book, which is a valid book.
pub fn filter_book(
    book: &Book,
    options: &FilterOptions,
    out: &Path,
) -> Result<FilterReport, BookError> {
    let mut positions: Positions = HashMap::new();
    for e in book.entries_by_key() {
        positions.entry(e.key.0).or_default().push(e);
    }
    let positions_before = positions.len() as u64;
    // Whose move it is, learnt on the whole book (what the cuts below leave is less to walk on).
    let sides = options.moves_of.map(|_| sides_to_move(&positions));

    // 1. Per move, on the input book.
    if let Some(w) = options.min_weight {
        for entries in positions.values_mut() {
            entries.retain(|e| e.weight >= w);
        }
    }
    if let Some(pct) = options.min_share {
        let shares = shares_in(book);
        for entries in positions.values_mut() {
            entries.retain(|e| shares(e) * 100.0 >= pct);
        }
    }
    if let Some(max_loss) = options.max_loss {
        for entries in positions.values_mut() {
            let score = |e: &Entry| MoveScore::from_learn(e.learn).map(|s| i32::from(s.score));
            if let Some(best) = entries.iter().filter_map(score).max() {
                entries.retain(|e| score(e).is_none_or(|s| best - s <= max_loss));
            }
        }
    }
    positions.retain(|_, entries| !entries.is_empty());

    // 2. Per position, on what is left.
    if options.max_ply.is_some() || options.only.is_some() {
        let reached = walk(&positions, options.max_ply);
        positions.retain(|key, _| reached.contains_key(key));
        if let Some(side) = options.only {
            // The other side keeps the replies after which `side` still has a move.
            let keep: Vec<(u64, Vec<Entry>)> = reached
                .iter()
                .filter(|(_, pos)| pos.turn() != side)
                .map(|(&key, pos)| {
                    let replies = positions[&key]
                        .iter()
                        .filter(|e| {
                            e.mv.to_move(pos).is_some_and(|m| {
                                let after = pos.clone().play(m).expect("a legal move");
                                reached
                                    .get(&Key::of(&after).0)
                                    .is_some_and(|p| p.turn() == side)
                            })
                        })
                        .copied()
                        .collect();
                    (key, replies)
                })
                .collect();
            for (key, replies) in keep {
                positions.insert(key, replies);
            }
            positions.retain(|_, entries| !entries.is_empty());
        }
    }
    let mut side_unknown = 0;
    if let (Some(side), Some(sides)) = (options.moves_of, &sides) {
        positions.retain(|key, _| match sides.get(key) {
            Some(&turn) => turn == side,
            None => {
                side_unknown += 1;
                false
            }
        });
    }
    if options.reachable {
        let mut entries = flatten(&positions);
        crate::book::sort_entries(&mut entries);
        let bytes = entries.iter().flat_map(Entry::to_bytes).collect();
        let current = Book::from_bytes(book.path(), bytes)?;
        let on_lines = on_lines(&current);
        positions.retain(|key, _| on_lines.contains(key));
    }

    let mut entries = flatten(&positions);
    write_book_in(out, &mut entries, book.learn_layout())?;
    Ok(FilterReport {
        entries_before: book.len() as u64,
        entries_after: entries.len() as u64,
        positions_before,
        positions_after: positions.len() as u64,
        side_unknown,
    })
}

fn flatten(positions: &Positions) -> Vec<Entry> {
    let mut keys: Vec<u64> = positions.keys().copied().collect();
    keys.sort_unstable();
    keys.iter()
        .flat_map(|k| positions[k].iter().copied())
        .collect()
}

/// The positions a line of book moves reaches from the start in fewer than `max_ply` plies (all
/// of them without a bound), by key: a breadth-first walk, so each is met first at its smallest
/// depth. Book moves are the legal entries of weight 1 or more.
fn walk(positions: &Positions, max_ply: Option<u32>) -> HashMap<u64, Chess> {
    let mut reached = HashMap::new();
    let mut queue = VecDeque::from([(Chess::default(), 0u32)]);
    let mut seen = HashSet::from([Key::of(&Chess::default()).0]);
    while let Some((pos, ply)) = queue.pop_front() {
        if max_ply.is_some_and(|n| ply >= n) {
            continue;
        }
        let key = Key::of(&pos).0;
        let Some(entries) = positions.get(&key) else {
            continue;
        };
        for e in entries.iter().filter(|e| e.weight >= 1) {
            if let Some(m) = e.mv.to_move(&pos) {
                let after = pos.clone().play(m).expect("a legal move");
                if seen.insert(Key::of(&after).0) {
                    queue.push_back((after, ply + 1));
                }
            }
        }
        reached.insert(key, pos);
    }
    reached
}

/// Whose move it is in the positions of the book that a walk from the start reaches, by key: a
/// breadth-first walk that, from a position of the book, plays every legal move and goes on
/// where the move leads to a position of the book, or, where it leads out of the book, from the
/// book's own moves alone, one ply: that position's moves may lead back into it (a book of one
/// side's moves, a book position after a move that fell below `--min-games`). A position no such
/// walk reaches (from a game that started elsewhere, or past a longer gap) is not in the answer.
fn sides_to_move(positions: &Positions) -> HashMap<u64, Color> {
    let mut sides = HashMap::new();
    let start = Chess::default();
    let start_key = Key::of(&start).0;
    if positions.contains_key(&start_key) {
        sides.insert(start_key, start.turn());
    }
    let mut seen = HashSet::from([start_key]);
    let mut queue = VecDeque::from([(start, start_key)]);
    while let Some((pos, key)) = queue.pop_front() {
        // The book's moves here: none for a position out of the book, whose moves only lead back.
        let book_moves: Vec<_> = positions
            .get(&key)
            .into_iter()
            .flatten()
            .filter_map(|e| e.mv.to_move(&pos))
            .collect();
        for m in pos.legal_moves() {
            let mut after = pos.clone();
            after.play_unchecked(m);
            let key = Key::of(&after).0;
            let in_book = positions.contains_key(&key);
            if (in_book || book_moves.contains(&m)) && seen.insert(key) {
                if in_book {
                    sides.insert(key, after.turn());
                }
                queue.push_back((after, key));
            }
        }
    }
    sides
}

/// The keys on a line of either colour: the complement of `info`'s isolated positions.
fn on_lines(book: &Book) -> HashSet<u64> {
    let mut keys = HashSet::new();
    for (color, cleaned) in [(Color::White, false), (Color::Black, true)] {
        let walk = Walk::new(book, color, cleaned, None)
            .run()
            .expect("a walk without output cannot fail to write");
        keys.extend(walk.book_positions);
    }
    keys
}

/// Each entry's share of its position in `book`, from 0 to 1: by the share rule where a line of
/// book moves reaches the position, else over the key's entries of weight 1 or more.
fn shares_in(book: &Book) -> impl Fn(&Entry) -> f64 {
    let choose = ChooseOptions::default();
    let mut positions: Positions = HashMap::new();
    for e in book.entries_by_key() {
        positions.entry(e.key.0).or_default().push(e);
    }
    let mut shares: HashMap<(u64, u16), f64> = HashMap::new();
    let mut reached = HashSet::new();
    for (key, pos) in walk(&positions, None) {
        reached.insert(key);
        let moves = book.find_all(&pos);
        for (m, share) in moves.iter().zip(choose.shares(&moves)) {
            shares.entry((key, m.entry.mv.0)).or_insert(share);
        }
    }
    let totals: HashMap<u64, u64> = positions
        .iter()
        .map(|(&k, es)| {
            let total = es
                .iter()
                .filter(|e| e.weight >= 1)
                .map(|e| u64::from(e.weight))
                .sum();
            (k, total)
        })
        .collect();
    move |e: &Entry| match shares.get(&(e.key.0, e.mv.0)) {
        Some(&share) => share,
        // A move illegal in a position the walk reached has share 0, as in `probe`.
        None if reached.contains(&e.key.0) => 0.0,
        None => match totals[&e.key.0] {
            0 => 0.0,
            _ if e.weight == 0 => 0.0,
            total => f64::from(e.weight) / total as f64,
        },
    }
}
