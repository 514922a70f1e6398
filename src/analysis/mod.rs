//! Books that know chess: a book's positions scored by an engine, the scores backed up its tree,
//! and written into the learn fields in ProDeo's layout (`polybook analyse`).
//!
//! ```text
//! book ─► graph::Graph::walk (positions reached from the roots, leaves) ─► tasks
//! tasks ─► workers (engines::Analyser, one per --concurrency) ─► cache (appended as they come)
//! cache ─► backup::back_up (negamax over the graph) ─► scored entries ─► the book, with the mark
//! ```
//!
//! - [`graph`]: the walk over the book's own legal moves.
//! - [`engines`]: polybook's search in this process, or a UCI engine in its own.
//! - [`cache`]: the append-only file that makes a run resumable.
//! - [`positions`]: extra roots, the book positions of a file of FEN/EPD lines or games
//!   (`--positions`), read through [`crate::pgn`]'s inputs and reader.
//! - [`backup`]: the negamax rule (stated there).
//! - [`expand`]: `--expand`, the book grown where it is thin or wrong, in rounds of the above.
//!
//! The positions analysed: every leaf (all its moves), and every reached book position whose
//! legal moves are not all in the book (the moves outside the book only). Each is analysed once,
//! from a cleared engine, so that with `nodes` or `depth` limits and the builtin engine the scores,
//! and the book written, depend on nothing else: not on `--concurrency`, nor on the order the
//! positions are handed out, nor on interruptions.

pub mod backup;
pub mod cache;
pub mod engines;
pub mod expand;
pub mod graph;
pub mod positions;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use shakmaty::{Chess, Move, Position};

use crate::book::{
    Book, BookError, BookWriter, Entry, LearnLayout, MoveScore, RawMove, sort_entries,
};

pub use backup::{Backup, back_up};
pub use cache::{Cache, CacheError};
pub use engines::{AnalysisLimits, EngineChoice, Running, Verdict, make_analyser};
pub use expand::{ExpandOptions, ExpandReport, Grown, Priority, grow};
pub use graph::Graph;

/// One position to analyse.
#[derive(Clone, Debug)]
pub struct Task {
    /// The search's identity in the cache: the position's key for a search over all its moves;
    /// for one restricted to the moves outside the book, the key mixed with the book's moves (so
    /// that when `--expand` adds a move, the position is searched again without it).
    pub id: u64,
    pub key: u64,
    pub pos: Chess,
    /// The moves to search (`searchmoves`); empty for all of them.
    pub moves: Vec<Move>,
    /// A book position (its moves outside the book) rather than a leaf.
    pub in_book: bool,
}

/// The positions to analyse, in a stable order: the book positions as the walk reached them, then
/// the leaves.
pub fn tasks(graph: &Graph) -> Vec<Task> {
    let mut out = Vec::new();
    for key in &graph.node_order {
        let node = &graph.nodes[key];
        let legal = node.pos.legal_moves();
        let outside: Vec<Move> = legal
            .iter()
            .filter(|m| !node.edges.iter().any(|e| e.mv == **m))
            .copied()
            .collect();
        if !outside.is_empty() {
            // All of them: an empty list would mean every move.
            out.push(Task {
                id: restricted_id(*key, node.edges.iter().map(|e| e.mv)),
                key: *key,
                pos: node.pos.clone(),
                moves: if outside.len() == legal.len() {
                    Vec::new()
                } else {
                    outside
                },
                in_book: true,
            });
        }
    }
    for key in &graph.leaf_order {
        let pos = &graph.leaves[key];
        if !pos.legal_moves().is_empty() {
            out.push(Task {
                id: *key,
                key: *key,
                pos: pos.clone(),
                moves: Vec::new(),
                in_book: false,
            });
        }
    }
    out
}

/// The identity of a search of position `key` restricted to the moves outside `book_moves`: the key
/// when there are none (a search of every move), else the key mixed with a hash of the moves
/// (FNV-1a over their Polyglot codes, sorted, so that the order they are stored in does not count).
pub fn restricted_id(key: u64, book_moves: impl Iterator<Item = Move>) -> u64 {
    let mut codes: Vec<u16> = book_moves
        .filter_map(RawMove::from_move)
        .map(|m| m.0)
        .collect();
    if codes.is_empty() {
        return key;
    }
    codes.sort_unstable();
    key ^ cache::fnv1a(codes.iter().flat_map(|c| c.to_be_bytes()))
}

/// The verdicts of `tasks` the cache holds, by position key (what [`back_up`] reads).
pub fn verdicts_by_key(tasks: &[Task], cache: &Cache) -> Verdicts {
    tasks
        .iter()
        .filter_map(|t| cache.verdicts.get(&t.id).map(|v| (t.key, *v)))
        .collect()
}

/// What goes wrong in an analysis.
#[derive(Debug, thiserror::Error)]
pub enum AnalyseError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error(transparent)]
    Book(#[from] BookError),
    #[error("{0}")]
    Engine(String),
    #[error("interrupted")]
    Interrupted,
}

/// How the run goes, for a progress bar.
pub trait Progress: Sync {
    /// `total` positions to analyse, of which `cached` are in the cache already.
    fn start(&self, total: u64, cached: u64);
    /// One more analysed.
    fn advance(&self);
}

/// How the positions are analysed.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub engine: EngineChoice,
    pub limits: AnalysisLimits,
    pub concurrency: usize,
    /// The most one position may take before a UCI engine counts as hung.
    pub timeout: Duration,
}

/// Analyses the tasks the cache does not hold yet on `concurrency` engines, appending each verdict
/// to the cache as it comes. `cancel` (Ctrl-C) stops it within a moment: the engines are stopped
/// (a UCI engine killed), the positions in flight dropped, and [`AnalyseError::Interrupted`]
/// returned; what is in the cache stays.
pub fn run_tasks(
    tasks: &[Task],
    cache: &mut Cache,
    opts: &RunOptions,
    cancel: &AtomicBool,
    progress: &dyn Progress,
) -> Result<(), AnalyseError> {
    let pending: Vec<&Task> = tasks
        .iter()
        .filter(|t| !cache.verdicts.contains_key(&t.id))
        .collect();
    progress.start(tasks.len() as u64, (tasks.len() - pending.len()) as u64);
    if pending.is_empty() {
        return Ok(());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let running: Running = Arc::new(Mutex::new(Default::default()));
    let queue = Mutex::new(pending.into_iter());
    let (tx, rx) = mpsc::channel::<Result<(u64, Verdict), String>>();
    let mut failure: Option<AnalyseError> = None;
    std::thread::scope(|s| {
        for _ in 0..opts.concurrency.max(1) {
            let tx = tx.clone();
            let (stop, running, queue) = (stop.clone(), running.clone(), &queue);
            let (engine, limits, timeout) = (&opts.engine, opts.limits, opts.timeout);
            std::thread::Builder::new()
                .stack_size(16 << 20)
                .spawn_scoped(s, move || {
                    let mut analyser =
                        make_analyser(engine, limits, stop.clone(), running, timeout);
                    loop {
                        let next = queue.lock().unwrap().next();
                        let Some(task) = next else { break };
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let result = analyser
                            .analyse(&task.pos, &task.moves)
                            .map(|v| (task.id, v));
                        if stop.load(Ordering::Relaxed) || tx.send(result).is_err() {
                            break;
                        }
                    }
                })
                .expect("a worker thread starts");
        }
        drop(tx);
        let halt = |why: Option<AnalyseError>, failure: &mut Option<AnalyseError>| {
            stop.store(true, Ordering::Relaxed);
            kill_all(&running);
            if failure.is_none() {
                *failure = why;
            }
        };
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Ok((id, v))) if failure.is_none() => {
                    if let Err(e) = cache.add(id, v) {
                        halt(Some(e.into()), &mut failure);
                    } else {
                        progress.advance();
                    }
                }
                Ok(Ok(_)) => {}
                Ok(Err(why)) => halt(Some(AnalyseError::Engine(why)), &mut failure),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if cancel.load(Ordering::Relaxed) && failure.is_none() {
                halt(Some(AnalyseError::Interrupted), &mut failure);
            }
        }
    });
    cache.sync()?;
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Ends the running UCI engines at once.
fn kill_all(running: &Running) {
    for &pid in running.lock().unwrap().iter() {
        #[cfg(target_os = "linux")]
        // SAFETY: kill(2) on a child process id of ours; no memory is involved.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = pid;
    }
}

/// How the written book's weights are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightRule {
    /// As in the input book.
    Keep,
    /// From the scores: a move that loses nothing against its position's value weighs 100, one
    /// that loses `loss` centipawns `round(100 × (1 − loss / margin))` (at least 1) up to the
    /// margin, and 0 beyond it (refuted: never picked by a weighted choice).
    Score { margin: i32 },
}

impl WeightRule {
    /// The weight of a move that loses `loss` centipawns against its position's value.
    pub fn weight(self, loss: i32, old: u16) -> u16 {
        match self {
            WeightRule::Keep => old,
            WeightRule::Score { margin } => {
                let loss = loss.max(0);
                if loss > margin {
                    0
                } else if margin == 0 {
                    100
                } else {
                    let w = (100.0 * (1.0 - f64::from(loss) / f64::from(margin))).round();
                    (w as u16).max(1)
                }
            }
        }
    }
}

/// What the written book holds.
#[derive(Clone, Debug, Default)]
pub struct WriteReport {
    /// Entries written (without the mark).
    pub entries: u64,
    /// Entries given a score.
    pub scored: u64,
    /// Entries left out by `--max-loss`.
    pub pruned: u64,
    /// Entries whose weight changed.
    pub reweighted: u64,
}

/// The book's entries with the backed-up scores in their learn fields (ProDeo's layout; entries
/// the walk did not score get 0, no score), weights set by `rule`, moves that lose more than
/// `max_loss` against their position's value left out; sorted as books are.
pub fn scored_entries(
    book: &Book,
    backup: &Backup,
    rule: WeightRule,
    max_loss: Option<i32>,
) -> (Vec<Entry>, WriteReport) {
    let mut out = Vec::with_capacity(book.len());
    let mut report = WriteReport::default();
    for (i, mut e) in book.entries().enumerate() {
        match backup.moves.get(&i) {
            Some(v) => {
                let value = backup.values.get(&e.key.0).map_or(v.score, |p| p.score);
                let loss = value.saturating_sub(v.score).max(0);
                if max_loss.is_some_and(|m| loss > m) {
                    report.pruned += 1;
                    continue;
                }
                let weight = rule.weight(loss, e.weight);
                if weight != e.weight {
                    report.reweighted += 1;
                }
                e.weight = weight;
                e.learn = MoveScore::new(v.score, v.depth).to_learn();
                report.scored += 1;
            }
            None => e.learn = 0,
        }
        out.push(e);
    }
    sort_entries(&mut out);
    report.entries = out.len() as u64;
    (out, report)
}

/// Writes a scored book: the mark, then `entries` (in book order), atomically.
pub fn write_scored_book(path: &Path, entries: &[Entry]) -> Result<(), BookError> {
    let mut w = BookWriter::create_in(path, LearnLayout::Scored)?;
    for e in entries {
        w.write(e)?;
    }
    w.finish()
}

/// The engine verdicts by key, for the JSON listing and the back-up.
pub type Verdicts = HashMap<u64, Verdict>;
