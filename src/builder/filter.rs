//! The game filters of a build: `--min-elo`/`--max-elo`, `--since`/`--until`, `--time-control`,
//! `--player`/`--color` and `--skip-unknown-results` (with `--max-ply` and `--chess960`, which the
//! game visitor applies as it plays the moves).
//!
//! A filter sees only a game's tags: [`GameFilter::read_tag`] keeps the tags some filter asks
//! for, and [`GameFilter::admit`] decides, before the first move, whether the game counts and
//! whose moves in it do. A game left out is counted under its [`Reason`], not reported as a
//! problem.

use pgn_reader::RawTag;
use shakmaty::Color;

use super::Reason;
use crate::pgn::tags::{Speed, parse_date};

/// A player whose moves alone make the book (`--player`, repeated for one person's accounts),
/// optionally with one colour.
#[derive(Clone, Debug, Default)]
pub struct PlayerFilter {
    /// The player's names: a side is the player's when its tag is any of them.
    pub names: Vec<String>,
    pub color: Option<Color>,
    /// Record both sides' moves of the player's games, not only the player's (`repertoire
    /// --player`, which needs the opponents' replies too).
    pub both_sides: bool,
}

impl PlayerFilter {
    /// Whether a `White` or `Black` tag names the player: it is one of the names, surrounding
    /// spaces aside, in any case (lower-cased character by character, as `explore --player`
    /// compares).
    pub fn matches(&self, tag: &str) -> bool {
        let lower = |s: &str| -> String { s.trim().chars().flat_map(char::to_lowercase).collect() };
        let tag = lower(tag);
        self.names.iter().any(|name| lower(name) == tag)
    }
}

/// What decides which games and plies are counted.
#[derive(Clone, Debug)]
pub struct GameFilter {
    pub max_ply: usize,
    pub chess960: bool,
    pub skip_unknown_results: bool,
    pub min_elo: Option<u32>,
    pub max_elo: Option<u32>,
    /// Inclusive bounds as `(year, month, day)`; unknown parts of a game's date count as the lowest.
    pub since: Option<(u32, u32, u32)>,
    pub until: Option<(u32, u32, u32)>,
    pub speeds: Vec<Speed>,
    pub player: Option<PlayerFilter>,
    /// Not a filter: each game's ratings and date are kept with its plies (`tally --ratings`).
    pub ratings: bool,
    /// Not a filter: the moves of the games' variations count too, each move of the tree once
    /// (`--variations`, for repertoire files).
    pub variations: bool,
    /// Not a filter: a move's points are those of its annotation
    /// ([`super::game::nag_points`]) instead of the game's result (`--weights nag`).
    pub nags: bool,
}

impl Default for GameFilter {
    fn default() -> Self {
        GameFilter {
            max_ply: 1024,
            chess960: false,
            skip_unknown_results: false,
            min_elo: None,
            max_elo: None,
            since: None,
            until: None,
            speeds: Vec::new(),
            player: None,
            ratings: false,
            variations: false,
            nags: false,
        }
    }
}

/// The tags the filters read, kept only when some filter asks for them.
#[derive(Default)]
pub struct FilterTags {
    white_elo: Option<u32>,
    black_elo: Option<u32>,
    date: Option<(u32, u32, u32)>,
    utc_date: Option<(u32, u32, u32)>,
    time_control: Option<Vec<u8>>,
    white: Option<Vec<u8>>,
    black: Option<Vec<u8>>,
}

impl GameFilter {
    /// Keeps the value of tag `name` in `tags` if a filter asks for it.
    pub fn read_tag(&self, tags: &mut FilterTags, name: &[u8], value: RawTag<'_>) {
        let elo = self.min_elo.is_some() || self.max_elo.is_some();
        let dates = self.since.is_some() || self.until.is_some();
        match name {
            b"WhiteElo" if elo => tags.white_elo = parse_u32(value),
            b"BlackElo" if elo => tags.black_elo = parse_u32(value),
            b"Date" | b"UTCDate" if dates => {
                let date = std::str::from_utf8(value.as_bytes())
                    .ok()
                    .and_then(parse_date);
                if name == b"Date" {
                    tags.date = date;
                } else {
                    tags.utc_date = date;
                }
            }
            b"TimeControl" if !self.speeds.is_empty() => {
                tags.time_control = Some(value.decode().into_owned())
            }
            b"White" if self.player.is_some() => tags.white = Some(value.decode().into_owned()),
            b"Black" if self.player.is_some() => tags.black = Some(value.decode().into_owned()),
            _ => {}
        }
    }

    /// Applies the game-level filters to a game's tags (`result_unknown`: its result is `*` or
    /// missing). `Ok` says whose moves count (White's, Black's); `Err` why the game is skipped.
    pub fn admit(
        &self,
        tags: &FilterTags,
        result_unknown: bool,
    ) -> Result<(bool, bool), (Reason, String)> {
        if result_unknown && self.skip_unknown_results {
            return Err((Reason::UnknownResult, "result is unknown".into()));
        }
        if self.min_elo.is_some() || self.max_elo.is_some() {
            for elo in [tags.white_elo, tags.black_elo] {
                let Some(elo) = elo else {
                    return Err((Reason::Elo, "a player has no Elo".into()));
                };
                if self.min_elo.is_some_and(|m| elo < m) || self.max_elo.is_some_and(|m| elo > m) {
                    return Err((Reason::Elo, format!("Elo {elo} out of range")));
                }
            }
        }
        if self.since.is_some() || self.until.is_some() {
            let Some(date) = tags.utc_date.or(tags.date) else {
                return Err((Reason::Date, "no known date".into()));
            };
            if self.since.is_some_and(|s| date < s) || self.until.is_some_and(|u| date > u) {
                return Err((Reason::Date, "date out of range".into()));
            }
        }
        if !self.speeds.is_empty() {
            let speed = tags
                .time_control
                .as_deref()
                .and_then(|tc| std::str::from_utf8(tc).ok())
                .map_or(Speed::Unknown, Speed::of_time_control);
            if !self.speeds.contains(&speed) {
                return Err((Reason::TimeControl, "time control not selected".into()));
            }
        }
        let (mut white, mut black) = (true, true);
        if let Some(p) = &self.player {
            let is = |name: &Option<Vec<u8>>| {
                name.as_deref()
                    .is_some_and(|n| p.matches(&String::from_utf8_lossy(n)))
            };
            white = is(&tags.white) && p.color != Some(Color::Black);
            black = is(&tags.black) && p.color != Some(Color::White);
            if !white && !black {
                return Err((Reason::Player, "player not in the game".into()));
            }
            if p.both_sides {
                (white, black) = (true, true);
            }
        }
        Ok((white, black))
    }
}

/// A date given on the command line (`--since`, `--until`): `YYYY`, `YYYY.MM`, `YYYY.MM.DD`,
/// `YYYY-MM` or `YYYY-MM-DD`, a date that exists (`2020-13-45` does not). The parts not given are
/// `fill` (0 for the start of a year or month, 99 for its end).
pub fn parse_date_arg(text: &str, fill: u32) -> Option<(u32, u32, u32)> {
    let text = text.trim();
    let sep = if text.contains('-') { '-' } else { '.' };
    let parts: Vec<&str> = text.split(sep).collect();
    let number = |s: &str, digits: std::ops::RangeInclusive<usize>| {
        (digits.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let year = number(parts.first()?, 4..=4)?;
    let month = match parts.get(1) {
        Some(m) => Some(number(m, 1..=2).filter(|m| (1..=12).contains(m))?),
        None => None,
    };
    let day = match (parts.get(2), month) {
        (Some(d), Some(m)) => {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            let days = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            Some(number(d, 1..=2).filter(|d| (1..=days).contains(d))?)
        }
        _ => None,
    };
    if parts.len() > 3 {
        return None;
    }
    Some((year, month.unwrap_or(fill), day.unwrap_or(fill)))
}

fn parse_u32(value: RawTag<'_>) -> Option<u32> {
    std::str::from_utf8(value.as_bytes())
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_on_the_command_line() {
        assert_eq!(parse_date_arg("2020", 0), Some((2020, 0, 0)));
        assert_eq!(parse_date_arg("2020", 99), Some((2020, 99, 99)));
        assert_eq!(parse_date_arg("2020.05", 99), Some((2020, 5, 99)));
        assert_eq!(parse_date_arg("2020.05.31", 0), Some((2020, 5, 31)));
        assert_eq!(parse_date_arg("2020-05-31", 0), Some((2020, 5, 31)));
        assert_eq!(parse_date_arg("2020-02-29", 0), Some((2020, 2, 29)));
        for bad in [
            "2020-13-45",
            "2020-02-30",
            "2019.02.29",
            "1900-02-29",
            "2020-00-10",
            "2020.05.00",
            "20",
            "2020.5.5.5",
            "2020-05.01",
            "yesterday",
            "",
        ] {
            assert_eq!(parse_date_arg(bad, 0), None, "{bad}");
        }
    }
}
