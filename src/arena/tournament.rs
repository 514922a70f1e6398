//! A tournament of several UCI engines: who plays whom (a round robin or a gauntlet), in which
//! order, and the games played on a few workers at once.
//!
//! Every pairing plays the same games a two-engine match would: `games` games, the openings in
//! colour-swapped pairs. The openings are shared by the whole tournament (cutechess's `-repeat`):
//! opening k is the same for every pairing, so no engine meets an easier set of positions than
//! another. The schedule goes opening by opening, each pairing playing its two games of that
//! opening in turn, so a tournament stopped early has played every pairing about as often.
//!
//! Each worker keeps the processes of the engines it has used and passes the two of a game's
//! pairing to the match runner ([`super::runner`]), which plays it exactly as in a match.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::thread;

use super::player::{EngineError, EngineSpec, UciEngine};
use super::resume::Done;
use super::runner::{
    self, Event, GameReport, MatchConfig, OpeningCache, games_of_pair, opening_for,
};

/// Who plays whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Every engine against every other.
    RoundRobin,
    /// The first engine against each of the others (the others never meet).
    Gauntlet,
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(text: &str) -> Result<Kind, String> {
        match text.to_ascii_lowercase().as_str() {
            "round-robin" | "roundrobin" => Ok(Kind::RoundRobin),
            "gauntlet" => Ok(Kind::Gauntlet),
            _ => Err(format!(
                "{}: expected round-robin or gauntlet",
                crate::text::quote(text)
            )),
        }
    }
}

impl Kind {
    /// The name used on the command line and in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::RoundRobin => "round-robin",
            Kind::Gauntlet => "gauntlet",
        }
    }

    /// The pairings of `n` engines, as (first, second) engine numbers (0-based): the first has
    /// White in the even games of the pairing. Round robin: (0,1), (0,2), ..., (1,2), ...;
    /// gauntlet: (0,1), (0,2), ..., (0,n-1).
    ///
    /// ```
    /// use polybook::arena::tournament::Kind;
    ///
    /// assert_eq!(Kind::RoundRobin.pairings(3), [(0, 1), (0, 2), (1, 2)]);
    /// assert_eq!(Kind::Gauntlet.pairings(4), [(0, 1), (0, 2), (0, 3)]);
    /// ```
    pub fn pairings(self, n: usize) -> Vec<(usize, usize)> {
        match self {
            Kind::RoundRobin => (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .collect(),
            Kind::Gauntlet => (1..n).map(|b| (0, b)).collect(),
        }
    }
}

/// One game of the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheduled {
    /// Its place in the whole tournament, 0-based (the PGN `Round` tag is this plus one).
    pub number: usize,
    /// Which pairing (an index into [`Tournament::pairings`]).
    pub pairing: usize,
    /// Its number within the pairing, 0-based: games `2k` and `2k + 1` play opening k, the
    /// pairing's first engine White in the even one.
    pub index: usize,
}

/// Everything a tournament needs.
#[derive(Clone)]
pub struct Tournament {
    /// The engines, at least two.
    pub engines: Vec<EngineSpec>,
    pub kind: Kind,
    /// What every game shares (book, openings, limits, adjudication, concurrency, seed, event);
    /// `games` is the number of games of each pairing, and `engines` is replaced by each
    /// pairing's two.
    pub settings: MatchConfig,
}

impl Tournament {
    /// The pairings, as (first, second) engine numbers.
    pub fn pairings(&self) -> Vec<(usize, usize)> {
        self.kind.pairings(self.engines.len())
    }

    /// Games in the whole tournament.
    pub fn total_games(&self) -> usize {
        self.pairings().len().saturating_mul(self.settings.games)
    }

    /// The games in the order they are started: opening by opening, each pairing's game with
    /// that opening's first colours, then the one with colours swapped (see [`scheduled`]).
    ///
    /// ```
    /// # use polybook::arena::tournament::{Kind, Scheduled};
    /// // 3 engines in a round robin, 3 games a pairing: openings 0 and 1, the second one played
    /// // once per pairing.
    /// let order: Vec<(usize, usize)> = polybook::arena::tournament::schedule(3, 3)
    ///     .map(|s| (s.pairing, s.index))
    ///     .collect();
    /// assert_eq!(
    ///     order,
    ///     [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
    /// );
    /// ```
    pub fn schedule(&self) -> impl Iterator<Item = Scheduled> {
        schedule(self.pairings().len(), self.settings.games)
    }

    /// The settings of one pairing's games: the tournament's, with its two engines.
    fn pairing_config(&self, (a, b): (usize, usize)) -> MatchConfig {
        MatchConfig {
            engines: [self.engines[a].clone(), self.engines[b].clone()],
            ..self.settings.clone()
        }
    }
}

/// The schedule of `pairings` pairings of `games` games each (see [`Tournament::schedule`]),
/// each game worked out as it is asked for.
pub fn schedule(pairings: usize, games: usize) -> impl Iterator<Item = Scheduled> {
    (0..).map_while(move |number| scheduled(pairings, games, number))
}

/// Game `number` of the schedule of `pairings` pairings of `games` games each (see
/// [`Tournament::schedule`]), or `None` past its end. Worked out from the number alone, so that
/// a tournament keeps nothing per scheduled game.
///
/// ```
/// use polybook::arena::tournament::{Scheduled, scheduled};
///
/// // 2 pairings of 3 games: openings 0 (two games a pairing) and 1 (one game a pairing).
/// let order: Vec<Option<(usize, usize)>> = (0..7)
///     .map(|n| scheduled(2, 3, n).map(|s: Scheduled| (s.pairing, s.index)))
///     .collect();
/// let expected = [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (1, 2)];
/// assert_eq!(order[..6], expected.map(Some));
/// assert_eq!(order[6], None);
/// // A billion games a pairing: the last one is worked out at once.
/// let last = scheduled(3, 1_000_000_000, 2_999_999_999).unwrap();
/// assert_eq!((last.pairing, last.index), (2, 999_999_999));
/// assert_eq!(scheduled(3, 1_000_000_000, 3_000_000_000), None);
/// ```
pub fn scheduled(pairings: usize, games: usize, number: usize) -> Option<Scheduled> {
    // The openings played twice by every pairing come first, 2 * pairings games each; then,
    // for an odd number of games, the last opening once by every pairing.
    let per_opening = pairings.checked_mul(2)?;
    if per_opening == 0 {
        return None;
    }
    let (full, opening) = (games / 2, number / per_opening);
    let (pairing, index) = if opening < full {
        let rest = number % per_opening;
        (rest / 2, 2 * opening + rest % 2)
    } else {
        // `number` is past the full openings' games, so their count does not overflow.
        let rest = number - full * per_opening;
        if games.is_multiple_of(2) || rest >= pairings {
            return None;
        }
        (rest, games - 1)
    };
    Some(Scheduled {
        number,
        pairing,
        index,
    })
}

/// What the tournament tells its caller.
#[derive(Clone, Debug)]
pub enum TournamentEvent {
    /// A game of `pairing` ended; `report.index` is its number within the pairing, and
    /// `first_half_points` are the pairing's first engine's.
    GameFinished {
        pairing: usize,
        number: usize,
        report: GameReport,
    },
    /// Engine `engine` (its number in the tournament) crashed or hung and was started again.
    Restarted(usize, String),
    /// An engine could not be started again; that worker stops.
    Failed(String),
}

/// Starts each engine once to check that it runs, answers and has the options asked for;
/// returns the names the PGN and the table give them: the user's name if the spec has one, else
/// the engine's `id name`, numbered `NAME (1)`, `NAME (2)`... where several engines share it.
/// Nothing is played if this fails.
pub fn check_engines(tournament: &Tournament) -> Result<Vec<String>, EngineError> {
    let timeout = tournament.settings.handshake_timeout;
    let mut names = Vec::new();
    for spec in &tournament.engines {
        let engine = UciEngine::start(spec, timeout)?;
        names.push(engine.name.clone());
        engine.quit();
    }
    Ok(distinct_names(&names))
}

/// `names` with each one that occurs several times numbered by its place among them.
///
/// ```
/// use polybook::arena::tournament::distinct_names;
///
/// let names = ["A", "B", "A"].map(String::from);
/// assert_eq!(distinct_names(&names), ["A (1)", "B", "A (2)"]);
/// ```
pub fn distinct_names(names: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    names
        .iter()
        .map(|name| {
            let total = names.iter().filter(|n| *n == name).count();
            if total == 1 {
                return name.clone();
            }
            let k = seen.entry(name).or_default();
            *k += 1;
            format!("{name} ({k})")
        })
        .collect()
}

/// Plays the tournament: its schedule on `settings.concurrency` workers (no more than there are
/// games), each game reported through `events` as it ends, except the games `done` holds (a
/// resumed tournament's). Workers stop taking new games once `stop` is set; `abort` also ends
/// the games being played (they are not reported). `names` are [`check_engines`]'s.
pub fn run(
    tournament: &Tournament,
    names: &[String],
    stop: &AtomicBool,
    abort: &AtomicBool,
    events: Sender<TournamentEvent>,
    done: &Done,
) {
    let pairings = tournament.pairings();
    let configs: Vec<MatchConfig> = pairings
        .iter()
        .map(|&p| tournament.pairing_config(p))
        .collect();
    let pair_names: Vec<[String; 2]> = pairings
        .iter()
        .map(|&(a, b)| [names[a].clone(), names[b].clone()])
        .collect();
    let (count, games) = (pairings.len(), tournament.settings.games);
    let next = AtomicUsize::new(0);
    // Opening k, walked once and shared by every pairing's games of it.
    let openings = OpeningCache::default();
    let n = tournament.engines.len();
    let workers = tournament
        .settings
        .concurrency
        .clamp(1, tournament.total_games().max(1));
    thread::scope(|scope| {
        for _ in 0..workers {
            let events = events.clone();
            let (pairings, configs, pair_names) = (&pairings, &configs, &pair_names);
            let (next, openings) = (&next, &openings);
            scope.spawn(move || {
                // This worker's engine processes, by engine number, started when first needed.
                let mut processes: Vec<Option<UciEngine>> = (0..n).map(|_| None).collect();
                loop {
                    if stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed) {
                        break;
                    }
                    let number = next.fetch_add(1, Ordering::Relaxed);
                    let Some(game) = scheduled(count, games, number) else {
                        break;
                    };
                    if done.contains(number) {
                        continue;
                    }
                    let (a, b) = pairings[game.pairing];
                    let k = game.index / 2;
                    // Every pairing plays opening k's games (but those done).
                    let uses = count * games_of_pair(games, k) - done.of_opening(k);
                    let opening = openings.take(k, uses, || opening_for(&tournament.settings, k));
                    let mut pair = [processes[a].take(), processes[b].take()];
                    let (tx, rx) = channel();
                    let go_on = runner::play_game(
                        &configs[game.pairing],
                        &pair_names[game.pairing],
                        &mut pair,
                        game.index,
                        game.number + 1,
                        &opening,
                        tx,
                        abort,
                    );
                    let [pa, pb] = pair;
                    (processes[a], processes[b]) = (pa, pb);
                    // The runner's events name the pairing's engines 0 and 1: say which they are.
                    for event in rx.try_iter() {
                        let event = match event {
                            Event::GameFinished(report) => TournamentEvent::GameFinished {
                                pairing: game.pairing,
                                number: game.number,
                                report,
                            },
                            Event::Restarted(which, why) => {
                                TournamentEvent::Restarted([a, b][which], why)
                            }
                            Event::Failed(why) => TournamentEvent::Failed(why),
                        };
                        let _ = events.send(event);
                    }
                    if !go_on {
                        break;
                    }
                }
                for engine in processes.into_iter().flatten() {
                    engine.quit();
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pairing_plays_every_opening_with_both_colours() {
        for (kind, n) in [(Kind::RoundRobin, 4), (Kind::Gauntlet, 5)] {
            let pairings = kind.pairings(n);
            let expected = match kind {
                Kind::RoundRobin => n * (n - 1) / 2,
                Kind::Gauntlet => n - 1,
            };
            assert_eq!(pairings.len(), expected);
            for games in [1, 2, 5, 6] {
                let s: Vec<Scheduled> = schedule(pairings.len(), games).collect();
                assert_eq!(s.len(), pairings.len() * games);
                for (i, g) in s.iter().enumerate() {
                    assert_eq!(g.number, i);
                }
                for p in 0..pairings.len() {
                    let mine: Vec<usize> = s
                        .iter()
                        .filter(|g| g.pairing == p)
                        .map(|g| g.index)
                        .collect();
                    assert_eq!(mine, (0..games).collect::<Vec<_>>());
                }
            }
        }
    }

    #[test]
    fn tournament_kinds_by_name() {
        assert_eq!("Round-Robin".parse(), Ok(Kind::RoundRobin));
        assert_eq!("gauntlet".parse(), Ok(Kind::Gauntlet));
        assert!("swiss".parse::<Kind>().unwrap_err().contains("round-robin"));
    }
}
