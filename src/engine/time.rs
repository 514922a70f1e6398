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

use std::time::Duration;

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

/// The moves a sudden-death clock is shared out over.
const SUDDEN_DEATH_MOVES: u32 = 30;

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
        let moves = clock
            .movestogo
            .unwrap_or(SUDDEN_DEATH_MOVES)
            .clamp(1, SUDDEN_DEATH_MOVES);
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
        // An iteration typically takes as long as all the ones before it: starting one after
        // half the target would mostly overshoot it.
        let soft = (target / 2).min(hard);
        TimePlan {
            soft,
            hard: hard
                .max(Duration::from_millis(1))
                .min(available.max(Duration::from_millis(1))),
        }
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
}
