//! The search thread: the engine searches on its own thread while the command loop keeps
//! reading, so that `isready`, `stop` and `ponderhit` are answered at once. A watchdog thread
//! stops the search at the time plan's hard limit; the search itself stops at the soft limit
//! after an iteration (the soft limit scaled by how settled the best move is). Infinite and ponder searches hold their `bestmove` until told to answer.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shakmaty::{CastlingMode, Chess, Move};

use crate::engine::time::{Stability, TimePlan};
use crate::engine::{Engine, Iteration, Limits};

/// A writer shared between the command loop and the search thread, one whole line at a time.
pub(super) struct Output {
    inner: Mutex<Box<dyn Write + Send>>,
}

impl Output {
    pub(super) fn new(output: impl Write + Send + 'static) -> Output {
        Output {
            inner: Mutex::new(Box::new(output)),
        }
    }

    /// Writes one line and flushes it (a GUI waits for whole lines). A closed output is not an
    /// error worth dying for: the GUI has gone, and EOF on the input will follow.
    pub(super) fn line(&self, text: &str) {
        let mut w = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = writeln!(w, "{text}");
        let _ = w.flush();
    }
}

/// What the command loop and the running search share.
pub(super) struct Control {
    /// Set to stop the search (by `stop`, a time limit or the end of input).
    pub stop: Arc<AtomicBool>,
    /// `stop` was asked for (by the GUI or the end of input), not a time limit.
    pub stop_requested: AtomicBool,
    /// `go ponder` until `ponderhit`.
    pub pondering: AtomicBool,
    /// `go infinite`: `bestmove` waits for `stop`.
    infinite: bool,
    /// When the clock started for this move (the `go`, or the `ponderhit`), with the plan.
    deadlines: Mutex<Option<(Instant, TimePlan)>>,
    /// The plan to start at `ponderhit`.
    pub ponder_plan: Option<TimePlan>,
    pub finished: AtomicBool,
}

impl Control {
    /// The control of a search that starts now: `plan` is how long to think from `received`
    /// (for a ponder search, from `ponderhit`; an infinite one has none).
    pub(super) fn new(
        plan: Option<TimePlan>,
        received: Instant,
        ponder: bool,
        infinite: bool,
    ) -> Control {
        Control {
            stop: Arc::new(AtomicBool::new(false)),
            stop_requested: AtomicBool::new(false),
            pondering: AtomicBool::new(ponder),
            infinite,
            deadlines: Mutex::new(if ponder || infinite {
                None
            } else {
                plan.map(|p| (received, p))
            }),
            ponder_plan: if ponder { plan } else { None },
            finished: AtomicBool::new(false),
        }
    }

    pub(super) fn deadlines(&self) -> MutexGuard<'_, Option<(Instant, TimePlan)>> {
        self.deadlines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Past the soft limit, stretched or shrunk by `scale` (see `Stability`)?
    fn past_soft(&self, scale: f64) -> bool {
        self.deadlines()
            .is_some_and(|(start, plan)| start.elapsed() >= plan.soft_scaled(scale))
    }

    fn past_hard(&self) -> bool {
        self.deadlines()
            .is_some_and(|(start, plan)| start.elapsed() >= plan.hard)
    }

    /// `bestmove` may be sent: not pondering, and not infinite unless stopped.
    fn may_answer(&self) -> bool {
        self.stop_requested.load(Ordering::Relaxed)
            || !(self.infinite || self.pondering.load(Ordering::Relaxed))
    }
}

/// A search running on its thread, which gives the engine back when it ends.
pub(super) struct Running {
    pub handle: JoinHandle<Engine>,
    pub control: Arc<Control>,
}

/// Starts searching `pos` (after the positions `past`) on a new thread, writing `info` lines
/// and finally `bestmove` to `out`, castling spelled as `mode` says (see [`uci`]). With `search`
/// false (no root move to search) the thread only waits for its turn to answer `bestmove 0000`.
#[allow(clippy::too_many_arguments)]
pub(super) fn spawn(
    mut engine: Engine,
    pos: Chess,
    past: Vec<u64>,
    limits: Limits,
    search: bool,
    control: Arc<Control>,
    out: Arc<Output>,
    mode: CastlingMode,
) -> Running {
    let c = control.clone();
    let handle = std::thread::spawn(move || {
        // The watchdog: the hard limit, wherever the search is.
        let watch = c.clone();
        let watchdog = std::thread::spawn(move || {
            while !watch.finished.load(Ordering::Acquire) {
                if watch.past_hard() {
                    watch.stop.store(true, Ordering::Relaxed);
                }
                // Woken at once when the search ends, so that joining it costs nothing.
                std::thread::park_timeout(Duration::from_millis(1));
            }
        });
        let (best, ponder) = if search {
            let mut stability = Stability::new();
            let result = engine.search(&pos, &past, &limits, c.stop.clone(), &mut |it| {
                out.line(&info_line(it, mode));
                if c.past_soft(stability.scale(it.depth, it.pv.first(), it.best_share)) {
                    c.stop.store(true, Ordering::Relaxed);
                }
            });
            (result.best_move, result.pv.get(1).copied())
        } else {
            (None, None)
        };
        // Infinite and ponder searches answer only once told to.
        // (`stop` and `ponderhit` wake this thread.)
        while !c.may_answer() {
            std::thread::park_timeout(Duration::from_millis(1));
        }
        out.line(&bestmove_line(best.as_ref(), ponder.as_ref(), mode));
        c.finished.store(true, Ordering::Release);
        watchdog.thread().unpark();
        let _ = watchdog.join();
        engine
    });
    Running { handle, control }
}

/// A move in UCI: castling as the king's two-square step (`e1g1`) in standard chess, as
/// king-takes-rook (`e1h1`, `g1h1`) in Chess960 (`UCI_Chess960`), as the protocol says.
pub(super) fn uci(m: &Move, mode: CastlingMode) -> String {
    m.to_uci(mode).to_string()
}

/// The `info` line of an iteration, with `multipv 1` as GUIs expect.
fn info_line(it: &Iteration, mode: CastlingMode) -> String {
    let mut s = format!(
        "info depth {} seldepth {} multipv 1 score {} nodes {} nps {} hashfull {} time {} pv",
        it.depth,
        it.seldepth,
        it.score,
        it.nodes,
        it.nps(),
        it.hashfull,
        it.time.as_millis()
    );
    for m in &it.pv {
        s.push(' ');
        s.push_str(&uci(m, mode));
    }
    s
}

/// The `bestmove` line, castling spelled as `mode` says.
pub(super) fn bestmove_line(
    best: Option<&Move>,
    ponder: Option<&Move>,
    mode: CastlingMode,
) -> String {
    match (best, ponder) {
        (Some(b), Some(p)) => format!("bestmove {} ponder {}", uci(b, mode), uci(p, mode)),
        (Some(b), None) => format!("bestmove {}", uci(b, mode)),
        (None, _) => "bestmove 0000".to_string(),
    }
}
