//! Growing a book where it is thin or wrong (`analyse --expand`): Lincke's drop-out expansion.
//!
//! The analysis already searches, at every book position, the best move *outside* the book (the
//! drop-out move). Expansion adds such moves to the book, in rounds:
//!
//! 1. The book is walked, its positions analysed (the cache keeps every verdict) and the scores
//!    backed up, as without `--expand`.
//! 2. **Lines go on**: each move added in the round before leads to a position outside the book,
//!    which that round's analysis searched over all its moves; its best move is added too, until a
//!    new line has `depth` moves after the one that started it.
//! 3. **Where the book is wrong or thin**, a position fewer than `max_ply` plies from the root
//!    gets its drop-out move, when that move scores more than `margin` above the book's best move
//!    (*better*), or when fewer than `width` book moves lie within `margin` of the position's value
//!    and the drop-out move does too (*thin*).
//! 4. The candidates are taken in order of Lincke's expansion priority, the lowest first: the cost
//!    of the cheapest line from the root to the position, each move costing `margin` plus what it
//!    loses against its position's value, plus the same for the drop-out move itself. Positions
//!    near the root and on the lines the book's best moves follow come first; a candidate as good
//!    as its position's best costs one ply. A round takes at most [`ROUND`] of them.
//! 5. The book with the added moves is analysed again (only the new searches run), and so on, until
//!    no candidate is left or `positions` moves have been added.
//!
//! Everything chosen depends on the verdicts alone, which the cache holds, so an interrupted run
//! resumed replays the finished rounds from the cache and goes on where it stopped; with `nodes` or
//! `depth` limits and the builtin engine, the book written is the same whatever `--concurrency`.
//!
//! Sources: T. R. Lincke, *Strategies for the Automatic Construction of Opening Books* (Computers
//! and Games 2000, LNCS 2063), the drop-out expansion and its priority; Buro's *Toward opening book
//! learning* (ICCA Journal 22, 1999) for the book's negamax over its drop-out values.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use shakmaty::Position;

use super::{AnalyseError, Backup, Cache, Graph, Progress, RunOptions, Task, Verdicts};
use crate::book::{Book, Entry, Key, RawMove, sort_entries};
use std::sync::atomic::AtomicBool;

/// The most drop-out moves one round adds (besides the lines it continues): a constant, so that
/// what is chosen does not depend on the machine.
pub const ROUND: usize = 32;

/// How a book is grown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpandOptions {
    /// Centipawns: how much a drop-out move must beat the book's best by (*better*), and the window
    /// below a position's value in which moves count as good (*thin*).
    pub margin: i32,
    /// The fewest good moves a book position should have.
    pub width: usize,
    /// Only positions fewer than this many plies from the root get new moves.
    pub max_ply: u32,
    /// How many moves of the engine's follow each added drop-out move.
    pub depth: u32,
    /// The most moves added in all.
    pub positions: usize,
    /// Which candidates come first.
    pub priority: Priority,
}

/// The order in which the drop-out candidates are taken (step 4 of the module's overview).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Priority {
    /// Lincke's expansion priority: the cheapest line from the root first, both sides assumed to
    /// play the book's best moves.
    #[default]
    Lincke,
    /// The candidates a game from the book most likely reaches, weighted by what they gain: the
    /// side to move plays the book's best-scored move (as `BookSelection=score` does), the other
    /// side picks among the book's own moves by weight (an opponent playing the raw book). Its
    /// candidates include the positions where the book ends (its leaves).
    Reach,
}

/// What the expansion did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpandReport {
    /// Drop-out moves that beat the book's best by more than the margin.
    pub better: u64,
    /// Drop-out moves added where the book had too few good moves.
    pub thin: u64,
    /// Moves that carry the new lines on.
    pub continued: u64,
    /// Rounds of analysis run (the first one included).
    pub rounds: u64,
    /// Whether it stopped at the `positions` budget rather than for want of candidates.
    pub budget_spent: bool,
}

impl ExpandReport {
    /// The moves added in all.
    pub fn added(&self) -> u64 {
        self.better + self.thin + self.continued
    }
}

/// The grown book and its last round's analysis.
pub struct Grown {
    pub book: Book,
    pub graph: Graph,
    pub tasks: Vec<Task>,
    pub verdicts: Verdicts,
    pub backup: Backup,
    pub report: ExpandReport,
}

/// Grows `base` from `roots` as the module overview says, analysing on `opts`'s engines and
/// keeping every verdict in `cache`. An interruption or an engine's failure ends it with the
/// error, the verdicts so far kept in the cache.
pub fn grow(
    base: &Book,
    roots: &[shakmaty::Chess],
    cache: &mut Cache,
    opts: &RunOptions,
    expand: &ExpandOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<Grown, AnalyseError> {
    let mut added: Vec<Entry> = Vec::new();
    // The lines to carry on: the key of the position the last move leads to, and the moves
    // still to add after it (ordered, so that the choices do not depend on a hash's order).
    let mut lines: BTreeMap<u64, u32> = BTreeMap::new();
    let mut report = ExpandReport::default();
    let mut book = with_entries(base, &[]);
    loop {
        let graph = Graph::walk(&book, roots);
        let tasks = super::tasks(&graph);
        super::run_tasks(&tasks, cache, opts, cancel, progress)?;
        report.rounds += 1;
        let verdicts = super::verdicts_by_key(&tasks, cache);
        let backup = super::back_up(&graph, &verdicts);
        let room = expand.positions.saturating_sub(added.len());
        let chosen = if room == 0 {
            report.budget_spent = !lines.is_empty() || report.added() > 0;
            Vec::new()
        } else {
            choose(
                &book,
                &graph,
                &verdicts,
                &backup,
                expand,
                &mut lines,
                &added.iter().map(|e| (e.key.0, e.mv)).collect(),
                room,
                &mut report,
            )
        };
        if chosen.is_empty() {
            return Ok(Grown {
                book,
                graph,
                tasks,
                verdicts,
                backup,
                report,
            });
        }
        added.extend(chosen);
        book = with_entries(base, &added);
    }
}

/// `base` with `added` entries, sorted as books are.
fn with_entries(base: &Book, added: &[Entry]) -> Book {
    let mut entries: Vec<Entry> = base.entries().chain(added.iter().copied()).collect();
    sort_entries(&mut entries);
    Book::from_entries(base.path().to_path_buf(), &entries)
}

/// One round's new entries: the lines carried on, then the drop-out candidates by priority, at
/// most `room` in all.
#[allow(clippy::too_many_arguments)]
fn choose(
    book: &Book,
    graph: &Graph,
    verdicts: &Verdicts,
    backup: &Backup,
    x: &ExpandOptions,
    lines: &mut BTreeMap<u64, u32>,
    added: &HashSet<(u64, RawMove)>,
    room: usize,
    report: &mut ExpandReport,
) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut next_lines = BTreeMap::new();
    // 2. Lines go on, while they lead out of the book.
    for (&key, &left) in lines.iter() {
        if out.len() >= room {
            break;
        }
        let (Some(pos), Some(best)) = (
            graph.leaves.get(&key),
            verdicts.get(&key).and_then(|v| v.best),
        ) else {
            continue;
        };
        let Some(mv) = best.to_move(pos) else {
            continue;
        };
        out.push(Entry {
            key: Key(key),
            mv: best,
            weight: 100,
            learn: 0,
        });
        report.continued += 1;
        if left > 1 {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            next_lines.insert(Key::of(&after).0, left - 1);
        }
    }
    // 3 and 4. The drop-out candidates, by priority.
    let unit = i64::from(x.margin.max(1));
    let cost = line_costs(graph, backup, unit);
    let plies = plies(graph);
    let odds = match x.priority {
        Priority::Lincke => HashMap::new(),
        Priority::Reach => reach(graph, backup, &plies, |key, e| {
            if added.contains(&(key, book.entry(e.entry).mv)) {
                0
            } else {
                book.entry(e.entry).weight
            }
        }),
    };
    // The book's positions, then (by reach only) the positions where it ends.
    let leaves = match x.priority {
        Priority::Lincke => &[][..],
        Priority::Reach => &graph.leaf_order[..],
    };
    let mut candidates = Vec::new();
    for (order, key) in graph.node_order.iter().chain(leaves).enumerate() {
        // A leaf's ply is known where a game reaches it.
        let ply = match graph.nodes.contains_key(key) {
            true => plies.get(key).copied(),
            false => odds.get(key).map(|r| r.1),
        };
        if ply.is_none_or(|p| p >= x.max_ply) {
            continue;
        }
        let (Some(drop), Some(value)) = (
            verdicts.get(key),
            backup
                .values
                .get(key)
                .map(|v| v.score)
                .or(verdicts.get(key).map(|v| v.score)),
        ) else {
            continue;
        };
        let Some(best) = drop.best else { continue };
        let edges = graph.nodes.get(key).map_or(&[][..], |n| &n.edges[..]);
        let scores: Vec<i32> = edges
            .iter()
            .filter_map(|e| backup.moves.get(&e.entry).map(|v| v.score))
            .collect();
        let best_book = scores.iter().copied().max();
        // A leaf has no book move to beat: it can only be thin.
        let leaf = !graph.nodes.contains_key(key);
        let better = !leaf && best_book.is_none_or(|b| drop.score > b.saturating_add(x.margin));
        let good = scores
            .iter()
            .filter(|&&s| s >= value.saturating_sub(x.margin))
            .count();
        let thin = good < x.width && drop.score >= value.saturating_sub(x.margin);
        if !(better || thin) {
            continue;
        }
        let loss = i64::from(value.saturating_sub(drop.score).max(0));
        let priority = match x.priority {
            // The lowest cost first.
            Priority::Lincke => cost
                .get(key)
                .map_or(f64::INFINITY, |&c| (c + unit + loss) as f64),
            // The highest expected gain first: the chance of reaching the position with it to
            // move, times the centipawns the move gains over the book's best (at least `unit`).
            Priority::Reach => {
                let gain = best_book.map_or(0, |b| i64::from(drop.score.saturating_sub(b).max(0)));
                let chance = odds.get(key).map_or(0.0, |r| r.0);
                -(chance * (gain + unit) as f64)
            }
        };
        candidates.push((priority, order, *key, best, better, loss));
    }
    candidates.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (_, _, key, best, better, loss) in candidates.into_iter().take(ROUND) {
        if out.len() >= room {
            break;
        }
        let (pos, edges) = match graph.nodes.get(&key) {
            Some(node) => (&node.pos, &node.edges[..]),
            None => (&graph.leaves[&key], &[][..]),
        };
        let Some(mv) = best.to_move(pos) else {
            continue;
        };
        // As heavy as the book's heaviest move here, less by what it loses (as `--weights
        // score` weighs), at least 1.
        let heaviest = edges
            .iter()
            .map(|e| book.entry(e.entry).weight)
            .max()
            .filter(|&w| w > 0)
            .unwrap_or(100);
        let share = super::WeightRule::Score { margin: x.margin }.weight(loss as i32, 0);
        let weight = ((u64::from(heaviest) * u64::from(share) + 50) / 100).max(1) as u16;
        out.push(Entry {
            key: Key(key),
            mv: best,
            weight,
            learn: 0,
        });
        if better {
            report.better += 1;
        } else {
            report.thin += 1;
        }
        if x.depth > 0 {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            let child = Key::of(&after).0;
            if !graph.nodes.contains_key(&child) {
                next_lines.insert(child, x.depth);
            }
        }
    }
    *lines = next_lines;
    out
}

/// Each reached book position's fewest plies from a root.
fn plies(graph: &Graph) -> HashMap<u64, u32> {
    let mut ply = HashMap::new();
    let mut queue = std::collections::VecDeque::new();
    for &r in &graph.roots {
        if ply.insert(r, 0).is_none() {
            queue.push_back(r);
        }
    }
    while let Some(key) = queue.pop_front() {
        let next = ply[&key] + 1;
        for e in &graph.nodes[&key].edges {
            if graph.nodes.contains_key(&e.child) && !ply.contains_key(&e.child) {
                ply.insert(e.child, next);
                queue.push_back(e.child);
            }
        }
    }
    ply
}

/// The chance that a game from the book reaches each position (book positions and leaves) with
/// its side to move on the side playing the book's best-scored move (the first of equals), the
/// other side picking among the moves by `weight(key, edge)` (0: never played); each root counts
/// 1 for each colour. Positions are taken by ply, so a move back to a position no further from
/// the root (a transposition that loses a tempo) carries no chance. With each leaf's ply.
fn reach(
    graph: &Graph,
    backup: &Backup,
    plies: &HashMap<u64, u32>,
    weight: impl Fn(u64, &super::graph::Edge) -> u16,
) -> HashMap<u64, (f64, u32)> {
    let mut order: Vec<(u32, usize, u64)> = graph
        .node_order
        .iter()
        .enumerate()
        .filter_map(|(i, k)| plies.get(k).map(|&p| (p, i, *k)))
        .collect();
    order.sort_unstable();
    let mut out: HashMap<u64, (f64, u32)> = HashMap::new();
    for us in [shakmaty::Color::White, shakmaty::Color::Black] {
        let mut chance: HashMap<u64, f64> = graph.roots.iter().map(|&r| (r, 1.0)).collect();
        for &(ply, _, key) in &order {
            let Some(&here) = chance.get(&key) else {
                continue;
            };
            let node = &graph.nodes[&key];
            let turn = node.pos.turn();
            if turn == us {
                out.entry(key).or_insert((0.0, ply)).0 += here;
            }
            let onward = |child: u64| {
                graph.leaves.contains_key(&child) || plies.get(&child).is_some_and(|&p| p > ply)
            };
            let mut give = |child: u64, c: f64, chance: &mut HashMap<u64, f64>| {
                if !onward(child) || c <= 0.0 {
                    return;
                }
                if graph.leaves.contains_key(&child) {
                    if turn != us {
                        out.entry(child).or_insert((0.0, ply + 1)).0 += c;
                    }
                } else {
                    *chance.entry(child).or_insert(0.0) += c;
                }
            };
            if turn == us {
                let best = node
                    .edges
                    .iter()
                    .filter_map(|e| backup.moves.get(&e.entry).map(|v| (v.score, e.child)))
                    .fold(None, |acc: Option<(i32, u64)>, m| match acc {
                        Some(a) if a.0 >= m.0 => Some(a),
                        _ => Some(m),
                    });
                if let Some((_, child)) = best {
                    give(child, here, &mut chance);
                }
            } else {
                let total: u64 = node.edges.iter().map(|e| u64::from(weight(key, e))).sum();
                if total == 0 {
                    continue;
                }
                for e in &node.edges {
                    let w = weight(key, e);
                    give(e.child, here * f64::from(w) / total as f64, &mut chance);
                }
            }
        }
    }
    out
}

/// Each reached book position's cost from a root (Dijkstra): the cheapest line to it, a move
/// costing `unit` plus the centipawns it loses against its position's backed-up value.
fn line_costs(graph: &Graph, backup: &Backup, unit: i64) -> HashMap<u64, i64> {
    let mut cost: HashMap<u64, i64> = HashMap::new();
    let mut heap = BinaryHeap::new();
    for &r in &graph.roots {
        heap.push(Reverse((0i64, r)));
    }
    while let Some(Reverse((c, key))) = heap.pop() {
        if cost.contains_key(&key) {
            continue;
        }
        cost.insert(key, c);
        let value = backup.values.get(&key).map(|v| v.score);
        for e in &graph.nodes[&key].edges {
            if !graph.nodes.contains_key(&e.child) || cost.contains_key(&e.child) {
                continue;
            }
            let loss = match (value, backup.moves.get(&e.entry)) {
                (Some(v), Some(m)) => i64::from(v.saturating_sub(m.score).max(0)),
                _ => 0,
            };
            heap.push(Reverse((c + unit + loss, e.child)));
        }
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{AnalysisLimits, EngineChoice, Verdict, cache::cache_header};
    use shakmaty::Chess;
    use std::time::Duration;

    /// Whether `mv` is a legal move of the position a key stands for, in `graph` (for tests).
    fn legal_at(graph: &Graph, key: u64, mv: RawMove) -> bool {
        graph
            .nodes
            .get(&key)
            .map(|n| &n.pos)
            .or_else(|| graph.leaves.get(&key))
            .is_some_and(|p| mv.to_move(p).is_some())
    }

    struct Quiet;
    impl Progress for Quiet {
        fn start(&self, _: u64, _: u64) {}
        fn advance(&self) {}
    }

    /// A book of 1. e4 alone (weight 10).
    fn e4_book() -> Book {
        let e = Entry::from_uci(Key::of(&Chess::default()), "e2e4", 10).unwrap();
        Book::from_entries("e4.bin".into(), &[e])
    }

    /// The expansion's options with a margin of 30, a width of 2 and lines of 2 moves.
    fn options(max_ply: u32, positions: usize) -> ExpandOptions {
        ExpandOptions {
            margin: 30,
            width: 2,
            max_ply,
            depth: 2,
            positions,
            priority: Priority::Lincke,
        }
    }

    fn run(x: ExpandOptions, dir: &std::path::Path) -> Grown {
        let book = e4_book();
        let engine = EngineChoice::Builtin { hash_mb: 4 };
        let limits = AnalysisLimits {
            nodes: Some(300),
            depth: None,
            movetime: None,
        };
        let header = cache_header(&book, &engine, &limits);
        let mut cache = Cache::open(&dir.join("c.analysis"), &header, true).unwrap();
        let opts = RunOptions {
            engine,
            limits,
            concurrency: 1,
            timeout: Duration::from_secs(60),
        };
        grow(
            &book,
            &[Chess::default()],
            &mut cache,
            &opts,
            &x,
            &AtomicBool::new(false),
            &Quiet,
        )
        .unwrap()
    }

    #[test]
    fn a_one_move_book_grows_answers_and_lines_within_its_budget() {
        for priority in [Priority::Lincke, Priority::Reach] {
            grows_within_its_budget(ExpandOptions {
                priority,
                ..options(2, 12)
            });
        }
    }

    fn grows_within_its_budget(x: ExpandOptions) {
        let dir = tempfile::tempdir().unwrap();
        let g = run(x, dir.path());
        // The start position had one move: a second within the margin (or a better one) was
        // added, and the lines after each added move carried on.
        assert!(g.report.added() > 1, "{:?}", g.report);
        assert!(g.report.added() <= 12, "{:?}", g.report);
        assert!(g.report.continued >= 1, "{:?}", g.report);
        assert_eq!(g.book.len() as u64, 1 + g.report.added());
        // Every added entry is a legal move of a position the walk reached.
        for e in g.book.entries() {
            assert!(legal_at(&g.graph, e.key.0, e.mv), "{e:?}");
        }
        // The same run again (all from the cache) chooses the same.
        let again = run(x, dir.path());
        assert_eq!(
            again.book.entries().collect::<Vec<_>>(),
            g.book.entries().collect::<Vec<_>>()
        );
        assert_eq!(again.report, g.report);
    }

    #[test]
    fn nothing_is_added_beyond_the_ply_limit_or_with_no_budget() {
        let dir = tempfile::tempdir().unwrap();
        let g = run(options(0, 100), dir.path());
        assert_eq!(g.report.added(), 0);
        assert_eq!(g.book.len(), 1);
        assert_eq!(run(options(4, 0), dir.path()).report.added(), 0);
    }

    #[test]
    fn reach_follows_the_best_scored_move_for_one_side_and_the_weights_for_the_other() {
        // 1. e4 (weight 3, score 10) or 1. d4 (1, 20); after 1. e4: e5 (1, 0) or c5 (1, 15);
        // after 1. d4: d5 (2, 0); after 1. e4 e5: Nf3 (1, 5) or Bc4 (1, 30).
        let start = Chess::default();
        let play = |moves: &[&str]| {
            let mut p = start.clone();
            for m in moves {
                let m = m
                    .parse::<shakmaty::uci::UciMove>()
                    .unwrap()
                    .to_move(&p)
                    .unwrap();
                p.play_unchecked(m);
            }
            p
        };
        let table: &[(&[&str], &str, u16, i32)] = &[
            (&[], "e2e4", 3, 10),
            (&[], "d2d4", 1, 20),
            (&["e2e4"], "e7e5", 1, 0),
            (&["e2e4"], "c7c5", 1, 15),
            (&["d2d4"], "d7d5", 2, 0),
            (&["e2e4", "e7e5"], "g1f3", 1, 5),
            (&["e2e4", "e7e5"], "f1c4", 1, 30),
        ];
        let entries: Vec<Entry> = table
            .iter()
            .map(|(line, mv, w, _)| Entry::from_uci(Key::of(&play(line)), mv, *w).unwrap())
            .collect();
        let mut sorted = entries.clone();
        sort_entries(&mut sorted);
        let book = Book::from_entries("t.bin".into(), &sorted);
        let graph = Graph::walk(&book, std::slice::from_ref(&start));
        let mut backup = Backup::default();
        for node in graph.nodes.values() {
            for e in &node.edges {
                let (_, _, _, score) = table
                    .iter()
                    .find(|(line, mv, _, _)| {
                        Key::of(&play(line)) == Key::of(&node.pos)
                            && shakmaty::uci::UciMove::from_standard(e.mv).to_string() == *mv
                    })
                    .unwrap();
                backup.moves.insert(e.entry, Verdict::score(*score, 1));
            }
        }
        let plies = plies(&graph);
        let r = reach(&graph, &backup, &plies, |_, e| book.entry(e.entry).weight);
        let at = |line: &[&str]| r.get(&Key::of(&play(line)).0).copied();
        // White to move at the start, every game (as White).
        assert_eq!(at(&[]), Some((1.0, 0)));
        // As Black: 1. e4 three games in four, 1. d4 one in four.
        assert_eq!(at(&["e2e4"]), Some((0.75, 1)));
        assert_eq!(at(&["d2d4"]), Some((0.25, 1)));
        // As White the book plays 1. d4 (the better score), so 1. e4 e5 is never reached.
        assert_eq!(at(&["e2e4", "e7e5"]), None);
        // After 1. d4 d5 the book ends, with White to move, every game as White.
        assert_eq!(at(&["d2d4", "d7d5"]), Some((1.0, 2)));
        // As Black the book answers 1. e4 with c5 (its best), so that end is White's own: not
        // counted for White, who never plays 1. e4.
        assert_eq!(at(&["e2e4", "c7c5"]), None);
    }
}
