//! The `go` command: its parameters, read from the words after `go`, and the time plan and
//! search limits they give.

use std::time::Duration;

use shakmaty::{Chess, Color, Move, Position};

use crate::engine::Limits;
use crate::engine::time::{TimeLeft, TimePlan};
use crate::position::parse_move;
use crate::text::quote;

/// The `go` command's parameters.
#[derive(Clone, Debug, Default)]
pub(super) struct Go {
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movestogo: Option<u32>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime: Option<u64>,
    pub mate: Option<u32>,
    pub infinite: bool,
    pub ponder: bool,
    /// The `searchmoves`, legal in the position (as sent).
    pub searchmoves: Vec<String>,
}

impl Go {
    /// Reads the words after `go` for the position `pos`. What is not understood is ignored,
    /// with a word to `warn` about it.
    pub(super) fn parse(words: &[&str], pos: &Chess, warn: &mut dyn FnMut(String)) -> Go {
        let mut go = Go::default();
        let mut i = 0;
        fn num<T: std::str::FromStr>(w: Option<&&str>) -> Option<T> {
            w.and_then(|w| w.parse().ok())
        }
        while i < words.len() {
            let w = words[i];
            let next = words.get(i + 1);
            let mut takes = true;
            // A number that isn't one: say so (the parameter is then ignored).
            let bad = match w {
                "wtime" | "btime" | "winc" | "binc" | "movetime" => num::<i64>(next).is_none(),
                "movestogo" | "depth" | "mate" => num::<u32>(next).is_none(),
                "nodes" => num::<u64>(next).is_none(),
                _ => false,
            };
            if bad {
                warn(format!(
                    "go: '{w}' expects a number, got {} (ignored)",
                    quote(next.copied().unwrap_or(""))
                ));
            }
            match w {
                "wtime" => go.wtime = num::<i64>(next).map(|t| t.max(0) as u64),
                "btime" => go.btime = num::<i64>(next).map(|t| t.max(0) as u64),
                "winc" => go.winc = num::<i64>(next).map(|t| t.max(0) as u64),
                "binc" => go.binc = num::<i64>(next).map(|t| t.max(0) as u64),
                "movestogo" => go.movestogo = num(next),
                "depth" => go.depth = num(next),
                "nodes" => go.nodes = num(next),
                "movetime" => go.movetime = num::<i64>(next).map(|t| t.max(0) as u64),
                "mate" => go.mate = num(next),
                "infinite" => {
                    go.infinite = true;
                    takes = false;
                }
                "ponder" => {
                    go.ponder = true;
                    takes = false;
                }
                "searchmoves" => {
                    takes = false;
                    while let Some(m) = words.get(i + 1) {
                        if parse_move(pos, m).is_err() {
                            break;
                        }
                        go.searchmoves.push(m.to_string());
                        i += 1;
                    }
                }
                other => {
                    warn(format!("go: ignoring {}", quote(other)));
                    takes = false;
                }
            }
            i += if takes { 2 } else { 1 };
        }
        go
    }

    /// The root moves to consider in `pos`: the `searchmoves` (each once, in the order given),
    /// or every legal move.
    pub(super) fn root_moves(&self, pos: &Chess) -> Vec<Move> {
        if self.searchmoves.is_empty() {
            return pos.legal_moves().iter().copied().collect();
        }
        let mut moves: Vec<Move> = self
            .searchmoves
            .iter()
            .filter_map(|m| parse_move(pos, m).ok())
            .collect();
        let mut seen = Vec::new();
        moves.retain(|m| {
            let new = !seen.contains(m);
            seen.push(*m);
            new
        });
        moves
    }

    /// Is this an analysis rather than a move of a game? No clock (`wtime`, `btime` or
    /// `movetime`) and a limit an analysis sets (`depth`, `nodes`, `mate` or `infinite`): what
    /// GUIs and analysis clients send, and they want the search's scores, so the book is not
    /// played. A `go` with a clock (a game) plays from the book.
    pub(super) fn analysis(&self) -> bool {
        let clock = self.wtime.is_some() || self.btime.is_some() || self.movetime.is_some();
        let limit =
            self.depth.is_some() || self.nodes.is_some() || self.mate.is_some() || self.infinite;
        limit && !clock
    }

    /// `side`'s clock and increment in milliseconds (the increment 0 when not sent); `None`
    /// without a clock.
    pub(super) fn clock_of(&self, side: Color) -> Option<(u64, u64)> {
        let (time, inc) = match side {
            Color::White => (self.wtime, self.winc),
            Color::Black => (self.btime, self.binc),
        };
        Some((time?, inc.unwrap_or(0)))
    }

    /// Does `bestmove` wait for `stop` (or `ponderhit`)?
    pub(super) fn waits(&self) -> bool {
        self.infinite || self.ponder
    }

    /// How long to think for `side`: a fixed `movetime` less the overhead (but never all of
    /// it), or a plan from the clock; `None` without either.
    pub(super) fn time_plan(&self, side: Color, overhead: Duration) -> Option<TimePlan> {
        let (time, inc) = match side {
            Color::White => (self.wtime, self.winc),
            Color::Black => (self.btime, self.binc),
        };
        match (self.movetime, time) {
            (Some(mt), _) => {
                let t = Duration::from_millis(mt);
                let t = t.saturating_sub(overhead).max(t / 2);
                Some(TimePlan { soft: t, hard: t })
            }
            (None, Some(t)) => Some(TimePlan::new(
                TimeLeft {
                    time: Duration::from_millis(t),
                    inc: Duration::from_millis(inc.unwrap_or(0)),
                    movestogo: self.movestogo,
                },
                overhead,
            )),
            (None, None) => None,
        }
    }

    /// The engine's limits. The clock is kept by the search thread's watchdog; a mate search is
    /// told its time too (`plan`'s hard limit), so that it can leave half of it to the normal
    /// search (see `Limits::mate`). `root_moves`: the moves allowed at the root when they are
    /// fewer than the legal ones.
    pub(super) fn limits(&self, plan: Option<&TimePlan>, root_moves: Option<Vec<Move>>) -> Limits {
        Limits {
            depth: self.depth,
            movetime: match (self.mate, plan) {
                (Some(_), Some(p)) if !self.waits() => Some(p.hard),
                _ => None,
            },
            nodes: self.nodes,
            mate: self.mate,
            root_moves,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_analysis_has_an_analysis_limit_and_no_clock() {
        let analysis = |words: &str| {
            let words: Vec<&str> = words.split_whitespace().collect();
            Go::parse(&words, &Chess::default(), &mut |_| {}).analysis()
        };
        for go in [
            "depth 10",
            "nodes 5000",
            "mate 3",
            "infinite",
            "depth 5 searchmoves e2e4",
            "winc 100 binc 100 depth 4",
        ] {
            assert!(analysis(go), "{go}");
        }
        for go in [
            "",
            "searchmoves e2e4",
            "wtime 1000 btime 1000",
            "btime 1000 depth 5",
            "movetime 100",
            "depth 8 movetime 500",
            "nodes 5000 wtime 0",
        ] {
            assert!(!analysis(go), "{go}");
        }
    }
}
