//! Time controls and the clocks the runner keeps.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How much time each side gets: `[MOVES/]BASE[+INC]`, in seconds (BASE may be `M:SS`; either may
/// carry a unit: `5m+3`, `90s`, `1h+30`).
///
/// ```
/// use polybook::arena::clock::TimeControl;
///
/// let tc: TimeControl = "10+0.1".parse().unwrap();
/// assert_eq!(tc.base.as_millis(), 10_000);
/// assert_eq!(tc.increment.as_millis(), 100);
/// assert_eq!("40/2:00".parse::<TimeControl>().unwrap().moves, Some(40));
/// assert_eq!("5m+3".parse::<TimeControl>().unwrap(), "300+3".parse().unwrap());
/// assert!("ten".parse::<TimeControl>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Moves per period (`None`: the whole game).
    pub moves: Option<u32>,
    pub base: Duration,
    pub increment: Duration,
}

/// A budget for each move without clocks: every limit given applies, and the first one reached
/// ends the move, as UCI's `go depth 8 movetime 1000` does.
///
/// ```
/// use std::time::Duration;
/// use polybook::arena::clock::PerMove;
///
/// let both = PerMove { depth: Some(8), movetime: Some(Duration::from_millis(500)), nodes: None };
/// assert_eq!(both.go_command(), "go depth 8 movetime 500");
/// assert_eq!(both.to_string(), "depth 8 or 500 ms a move");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerMove {
    pub depth: Option<u32>,
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
}

impl PerMove {
    /// The engine's limits for one move.
    pub fn limits(&self) -> crate::engine::Limits {
        crate::engine::Limits {
            depth: self.depth,
            movetime: self.movetime,
            nodes: self.nodes,
            mate: None,
            root_moves: None,
        }
    }

    /// The UCI `go` command for one move.
    pub fn go_command(&self) -> String {
        let mut go = "go".to_string();
        if let Some(d) = self.depth {
            go.push_str(&format!(" depth {d}"));
        }
        if let Some(n) = self.nodes {
            go.push_str(&format!(" nodes {n}"));
        }
        if let Some(t) = self.movetime {
            go.push_str(&format!(" movetime {}", t.as_millis()));
        }
        go
    }
}

impl fmt::Display for PerMove {
    /// `depth 8`, `500 ms a move`, `depth 8 or 500 ms a move`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(d) = self.depth {
            parts.push(format!("depth {d}"));
        }
        if let Some(n) = self.nodes {
            parts.push(format!("{n} nodes"));
        }
        if let Some(t) = self.movetime {
            parts.push(format!("{} ms", t.as_millis()));
        }
        let text = parts.join(" or ");
        if self.movetime.is_some() || self.nodes.is_some() {
            write!(f, "{text} a move")
        } else {
            f.write_str(&text)
        }
    }
}

/// Seconds, with an optional fraction, as a duration (`0.1`, `10`, `2:30`), or with a unit: `5m`,
/// `1.5m`, `90s`, `1h`.
fn seconds(text: &str) -> Option<Duration> {
    for (unit, scale) in [('h', 3600.0), ('m', 60.0), ('s', 1.0)] {
        if let Some(n) = text.strip_suffix(unit) {
            let n: f64 = n.parse().ok()?;
            let s = n * scale;
            return (s.is_finite() && (0.0..=1e7).contains(&s)).then(|| Duration::from_secs_f64(s));
        }
    }
    let (minutes, secs) = match text.split_once(':') {
        Some((m, s)) => (m.parse::<u64>().ok()?, s),
        None => (0, text),
    };
    let s: f64 = secs.parse().ok()?;
    if !s.is_finite() || !(0.0..=1e7).contains(&s) {
        return None;
    }
    Some(Duration::from_secs(minutes * 60) + Duration::from_secs_f64(s))
}

impl FromStr for TimeControl {
    type Err = String;

    fn from_str(text: &str) -> Result<TimeControl, String> {
        let quoted = crate::text::quote(text);
        let bad = || {
            format!(
                "time control {quoted}: expected [MOVES/]SECONDS[+INCREMENT], e.g. 10+0.1, 60, 40/120+1, 5:00+3 or 5m+3"
            )
        };
        let (moves, rest) = match text.split_once('/') {
            Some((m, rest)) => (Some(m.parse::<u32>().map_err(|_| bad())?), rest),
            None => (None, text),
        };
        let (base, inc) = match rest.split_once('+') {
            Some((b, i)) => (b, Some(i)),
            None => (rest, None),
        };
        let base = seconds(base).ok_or_else(bad)?;
        let increment = match inc {
            Some(i) => seconds(i).ok_or_else(bad)?,
            None => Duration::ZERO,
        };
        if base.is_zero() && increment.is_zero() || moves == Some(0) {
            return Err(bad());
        }
        Ok(TimeControl {
            moves,
            base,
            increment,
        })
    }
}

impl fmt::Display for TimeControl {
    /// The PGN `TimeControl` tag's form: `[MOVES/]SECONDS[+INC]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(m) = self.moves {
            write!(f, "{m}/")?;
        }
        write!(f, "{}", trim(self.base.as_secs_f64()))?;
        if !self.increment.is_zero() {
            write!(f, "+{}", trim(self.increment.as_secs_f64()))?;
        }
        Ok(())
    }
}

/// A number of seconds without needless decimals.
fn trim(s: f64) -> String {
    let text = format!("{s:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One side's clock under a time control.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    tc: TimeControl,
    /// Time left; negative once the flag fell.
    left_ms: i64,
    /// Moves made by this side.
    moves_made: u32,
}

impl Clock {
    pub fn new(tc: TimeControl) -> Clock {
        Clock {
            tc,
            left_ms: tc.base.as_millis() as i64,
            moves_made: 0,
        }
    }

    /// Time left (zero once the flag fell).
    pub fn left(&self) -> Duration {
        Duration::from_millis(self.left_ms.max(0) as u64)
    }

    /// The increment per move.
    pub fn increment(&self) -> Duration {
        self.tc.increment
    }

    /// Moves to the next time control, for `go movestogo`.
    pub fn moves_to_go(&self) -> Option<u32> {
        self.tc.moves.map(|m| m - self.moves_made % m)
    }

    /// Charges a move that took `used`; `false` if the flag fell (more than the time left,
    /// plus `margin` of grace). Otherwise adds the increment, and a new period's time at each
    /// time control.
    pub fn spend(&mut self, used: Duration, margin: Duration) -> bool {
        self.left_ms -= used.as_millis() as i64;
        if self.left_ms + (margin.as_millis() as i64) < 0 {
            return false;
        }
        self.left_ms = self.left_ms.max(0) + self.tc.increment.as_millis() as i64;
        self.moves_made += 1;
        if let Some(m) = self.tc.moves
            && self.moves_made.is_multiple_of(m)
        {
            self.left_ms += self.tc.base.as_millis() as i64;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        for (text, shown) in [
            ("10+0.1", "10+0.1"),
            ("60", "60"),
            ("40/120+1", "40/120+1"),
            ("5:00+3", "300+3"),
            ("0+1", "0+1"),
        ] {
            let tc: TimeControl = text.parse().unwrap();
            assert_eq!(tc.to_string(), shown);
        }
        for bad in ["", "x", "10+", "+1", "0", "0/10", "-5", "10+-1", "1e99"] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_clock_runs() {
        let ms = Duration::from_millis;
        let mut c = Clock::new("1+0.1".parse().unwrap());
        assert!(c.spend(ms(400), ms(0)));
        assert_eq!(c.left(), ms(700));
        assert!(!c.spend(ms(701), ms(0)));
        let mut c = Clock::new("1+0.1".parse().unwrap());
        assert!(c.spend(ms(1050), ms(100)), "within the margin");
        assert_eq!(c.left(), ms(100));

        let mut c = Clock::new("2/1".parse().unwrap());
        assert_eq!(c.moves_to_go(), Some(2));
        assert!(c.spend(ms(300), ms(0)));
        assert_eq!(c.moves_to_go(), Some(1));
        assert!(c.spend(ms(300), ms(0)));
        assert_eq!(c.left(), ms(1400), "a new period's time");
        assert_eq!(c.moves_to_go(), Some(2));
    }
}
