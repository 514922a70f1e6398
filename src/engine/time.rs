//! Time management: how long to think from the clock, the increment and the moves to go.
//!
//! The engine's side of the clock: a [`TimeLeft`] reading (what UCI's `go wtime … winc …
//! movestogo …` says, or the arena's clock for a built-in player) goes in, a [`TimePlan`] comes
//! out. The clock that runs during a game is `arena::clock::Clock`.
//!
//! Two limits come out of a clock: a *soft* one, after which no new iteration of iterative
//! deepening is started, and a *hard* one, at which the search is stopped wherever it is. The
//! hard limit already leaves the Move Overhead (the time the GUI and the pipes take) on the
//! clock, so the move reaches the GUI before the flag falls.
//!
//! The soft limit follows the search ([`Stability`]): after each iteration it is stretched when
//! the best move has just changed or shares the effort with other moves, and shrunk when the
//! same move has stayed best and took most of the nodes. The hard limit never moves.

use std::time::Duration;

use shakmaty::Move;

use super::parameters::{TIME_MOVES, TIME_SOFT_PERCENT};

/// A reading of the side to move's clock: the clock part of a `go` command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeLeft {
    /// Time left on the clock.
    pub time: Duration,
    /// Increment per move.
    pub inc: Duration,
    /// Moves to the next time control (`None`: sudden death).
    pub movestogo: Option<u32>,
}

/// How long to think about one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimePlan {
    /// Don't start a new iteration after this.
    pub soft: Duration,
    /// Stop the search at this point, whatever it is doing.
    pub hard: Duration,
}

impl TimePlan {
    /// The plan for the time left on `clock`, keeping `overhead` on the clock for the GUI.
    ///
    /// ```
    /// use std::time::Duration;
    /// use polybook::engine::time::{TimeLeft, TimePlan};
    ///
    /// let ms = Duration::from_millis;
    /// let clock = TimeLeft { time: ms(10_000), inc: ms(100), movestogo: None };
    /// let plan = TimePlan::new(clock, ms(30));
    /// assert!(plan.soft < plan.hard && plan.hard < ms(10_000 - 30));
    /// // Almost no time left: the plan still never exceeds what the clock holds.
    /// let plan = TimePlan::new(TimeLeft { time: ms(20), ..clock }, ms(30));
    /// assert!(plan.hard <= ms(1));
    /// ```
    pub fn new(clock: TimeLeft, overhead: Duration) -> TimePlan {
        let available = clock.time.saturating_sub(overhead);
        let most_moves = TIME_MOVES.get().max(1) as u32;
        let moves = clock.movestogo.unwrap_or(most_moves).clamp(1, most_moves);
        // The share of the clock for this move, plus most of the increment (it comes back).
        let target = available / moves + clock.inc * 3 / 4;
        // Never more than a fraction of what is left: all but a margin on the last move before
        // the time control, a few moves' worth otherwise.
        let cap = if moves == 1 {
            available * 4 / 5
        } else {
            available * 2 / 5
        };
        let hard = (target * 3).min(cap);
        // An iteration typically takes as long as all the ones before it: a soft limit near
        // half the target (`TIME_SOFT_PERCENT`) lets the last one mostly end within the target.
        // The iterations then move it (see `Stability`).
        let soft = (target * TIME_SOFT_PERCENT.get().max(1) as u32 / 100).min(hard);
        TimePlan {
            soft,
            hard: hard
                .max(Duration::from_millis(1))
                .min(available.max(Duration::from_millis(1))),
        }
    }

    /// The soft limit times `scale` (from [`Stability::scale`]), never past the hard limit. A
    /// plan whose soft limit is its hard one (UCI's `go movetime`: think exactly that long) is
    /// not scaled.
    pub fn soft_scaled(&self, scale: f64) -> Duration {
        if self.soft >= self.hard {
            return self.hard;
        }
        self.soft.mul_f64(scale.max(0.0)).min(self.hard)
    }
}

/// The soft limit's scale for each number of iterations the best move has stayed the same
/// (0, 1, 2, 3, 4 or more): a new best move deserves a closer look, a settled one less.
const STABILITY_SCALE: [f64; 5] = [2.5, 1.2, 0.9, 0.8, 0.75];

/// Below this depth the iterations take a few milliseconds and their best moves change for
/// little reason: the soft limit stays as planned.
const STEER_FROM_DEPTH: u32 = 6;

/// What the iterations so far say about how settled the best move is: it turns each finished
/// iteration into a scale for the soft limit ([`TimePlan::soft_scaled`]).
///
/// Two measures, multiplied: how many iterations in a row the best move has stayed the same,
/// and the share of the root's nodes it took (a move whose rivals were all refuted at once took
/// nearly all of them). The scale runs from about 0.5 (the same move for 4 iterations, with
/// nearly all the nodes) to about 5 (a new move that took few of them).
#[derive(Clone, Debug, Default)]
pub struct Stability {
    best: Option<Move>,
    /// Iterations in a row that ended with `best` (0: it has just changed).
    stable: usize,
}

impl Stability {
    pub fn new() -> Stability {
        Stability::default()
    }

    /// The soft limit's scale after an iteration to `depth` that ended with `best` as its best
    /// move, which took `best_share` (0 to 1) of the root's nodes so far (`Iteration::best_share`).
    pub fn scale(&mut self, depth: u32, best: Option<&Move>, best_share: f64) -> f64 {
        let best = best.cloned();
        if best.is_some() && best == self.best {
            self.stable += 1;
        } else {
            self.best = best;
            self.stable = 0;
        }
        if depth < STEER_FROM_DEPTH {
            return 1.0;
        }
        let stability = STABILITY_SCALE[self.stable.min(STABILITY_SCALE.len() - 1)];
        let effort = (1.5 - best_share.clamp(0.0, 1.0)) * 1.35;
        stability * effort
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_hard_limit_keeps_the_overhead_on_the_clock() {
        for time in [0, 5, 31, 50, 100, 1000, 60_000, 3_600_000] {
            for inc in [0, 10, 100, 2000] {
                for movestogo in [None, Some(1), Some(2), Some(40)] {
                    let clock = TimeLeft {
                        time: ms(time),
                        inc: ms(inc),
                        movestogo,
                    };
                    let plan = TimePlan::new(clock, ms(30));
                    assert!(plan.soft <= plan.hard, "{clock:?} {plan:?}");
                    if time > 31 {
                        assert!(plan.hard <= ms(time - 30), "{clock:?} {plan:?}");
                    } else {
                        assert_eq!(plan.hard, ms(1), "{clock:?} {plan:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn more_time_means_longer_thinking() {
        let plan = |t| {
            TimePlan::new(
                TimeLeft {
                    time: ms(t),
                    inc: ms(0),
                    movestogo: None,
                },
                ms(10),
            )
        };
        assert!(plan(1_000).soft < plan(60_000).soft);
        assert!(plan(60_000).hard <= ms(60_000 * 2 / 5));
    }

    /// `stability`'s scale after an iteration to `depth` ending with `best` (UCI, from the start).
    fn after(stability: &mut Stability, depth: u32, best: &str, best_share: f64) -> f64 {
        use shakmaty::Chess;
        use shakmaty::uci::UciMove;
        let mv = best
            .parse::<UciMove>()
            .unwrap()
            .to_move(&Chess::default())
            .unwrap();
        stability.scale(depth, Some(&mv), best_share)
    }

    #[test]
    fn a_settled_best_move_shrinks_the_soft_limit_and_a_new_one_stretches_it() {
        let mut stability = Stability::new();
        // Shallow iterations leave the plan as it is, whatever they say.
        assert_eq!(after(&mut stability, 1, "e2e4", 0.1), 1.0);
        assert_eq!(after(&mut stability, 5, "d2d4", 0.9), 1.0);
        // The same move, iteration after iteration, with most of the nodes: less time.
        let mut last = f64::MAX;
        for depth in 6..12 {
            let scale = after(&mut stability, depth, "d2d4", 0.95);
            assert!(scale <= last, "depth {depth}: {scale} after {last}");
            last = scale;
        }
        assert!(last < 0.6, "{last}");
        // A new best move that shares the nodes with others: more time than planned.
        let changed = after(&mut stability, 12, "e2e4", 0.4);
        assert!(changed > 2.0, "{changed}");
        // And never past the hard limit.
        let plan = TimePlan {
            soft: ms(100),
            hard: ms(250),
        };
        assert_eq!(plan.soft_scaled(changed), ms(250));
        assert_eq!(plan.soft_scaled(0.5), ms(50));
        // A fixed time (`go movetime`) is thought for whole, however settled the move.
        let fixed = TimePlan {
            soft: ms(1000),
            hard: ms(1000),
        };
        assert_eq!(fixed.soft_scaled(0.5), ms(1000));
    }
}
