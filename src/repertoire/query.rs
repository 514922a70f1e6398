//! A position's games under filters chosen at query time: the filters read from the page's
//! parameters, the scan of the position's records, and the answers of `/api/games` and
//! `/api/game` (their fields are documented in `explore::api`).
//!
//! The performance rating is the linear one (the "algorithm of 400"): the average rating of the
//! opponents plus 400 × (wins − losses) / games, over the games in which the opponent is rated.

use serde::Serialize;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Move, Position};
use thiserror::Error;

use super::game::{GameInfo, Mode, NONE};
use super::{Index, MAX_ELO, Word};
use crate::book::{Key, RawMove};
use crate::inspect::fen_string;
use crate::openings::{OpeningJson, Openings};
use crate::pgn::tags::Speed;
use crate::text::quote;

/// A parameter the filters refuse.
#[derive(Debug, Error)]
pub enum FilterError {
    #[error("unknown parameter {} (the parameters are {PARAMETERS})", quote(.0))]
    Unknown(String),
    #[error("{name}={}: {why}", quote(.value))]
    Bad {
        name: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("color={}: only with --player (whose colour?)", quote(.0))]
    ColorWithoutPlayer(String),
}

/// The parameters of `/api/games`, for messages.
pub const PARAMETERS: &str =
    "fen, moves, color, speed, mode, rating, since, until, result, opponent";

/// The filters of a query; the default passes every game.
#[derive(Clone, Debug)]
pub struct Filters {
    /// Bit `side` set for the sides that pass (0 no player, 1 White, 2 Black).
    sides: u8,
    /// Bit per [`Speed`].
    speeds: u8,
    /// Bit per [`Mode`].
    modes: u8,
    /// Bit per result from the player's view (0 win, 1 draw, 2 loss).
    results: u8,
    rating: Option<(u32, u32)>,
    months: Option<(u32, u32)>,
    opponent: Option<String>,
}

impl Default for Filters {
    fn default() -> Self {
        Filters {
            sides: 0b111,
            speeds: 0x7f,
            modes: 0b111,
            results: 0b111,
            rating: None,
            months: None,
            opponent: None,
        }
    }
}

fn bad(name: &'static str, value: &str, why: &'static str) -> FilterError {
    FilterError::Bad {
        name,
        value: value.chars().take(100).collect(),
        why,
    }
}

/// A number in a query parameter of `explore`'s API (a game's id, a rating): plain decimal
/// digits, without a sign, a space or a leading zero (`0` itself is a number); `None` for anything
/// else. A number too large for `u64` is `u64::MAX`. The one rule for every number of the API.
///
/// ```
/// use polybook::repertoire::query::plain_number;
/// assert_eq!(plain_number("0"), Some(0));
/// assert_eq!(plain_number("1800"), Some(1800));
/// for bad in ["", "+1", "-1", " 1", "1 ", "01", "1.0", "1e3", "١"] {
///     assert_eq!(plain_number(bad), None, "{bad}");
/// }
/// assert_eq!(plain_number(&"9".repeat(30)), Some(u64::MAX));
/// ```
pub fn plain_number(text: &str) -> Option<u64> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    (digits && (text == "0" || !text.starts_with('0'))).then(|| text.parse().unwrap_or(u64::MAX))
}

/// `YYYY-MM` as a month index (`year × 12 + month − 1`).
fn month(name: &'static str, value: &str) -> Result<u32, FilterError> {
    let why = "a month as YYYY-MM";
    let (y, m) = value.split_once('-').ok_or_else(|| bad(name, value, why))?;
    let digits = |s: &str, n: std::ops::RangeInclusive<usize>| {
        (n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let year = digits(y, 4..=4).filter(|y| *y >= 1);
    let mon = digits(m, 1..=2).filter(|m| (1..=12).contains(m));
    match (year, mon) {
        (Some(y), Some(m)) => Ok(y * 12 + m - 1),
        _ => Err(bad(name, value, why)),
    }
}

impl Filters {
    /// The filters named by `params` (name, value), which must not hold `fen` or `moves`. An
    /// empty value is the same as none.
    pub fn parse<'a>(
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
        has_player: bool,
    ) -> Result<Filters, FilterError> {
        let mut f = Filters::default();
        let (mut since, mut until) = (None, None);
        for (name, raw) in params {
            let value = raw.trim();
            if value.is_empty() {
                if !PARAMETERS.split(", ").any(|p| p == name) {
                    return Err(FilterError::Unknown(name.to_string()));
                }
                continue;
            }
            match name {
                "color" => {
                    f.sides = match value {
                        "white" => 0b010,
                        "black" => 0b100,
                        "both" => 0b111,
                        _ => return Err(bad("color", value, "white, black or both")),
                    };
                    if !has_player && value != "both" {
                        return Err(FilterError::ColorWithoutPlayer(value.to_string()));
                    }
                }
                "speed" => {
                    f.speeds = 0;
                    for s in value.split(',') {
                        let speed = Speed::ALL
                            .into_iter()
                            .find(|k| k.name() == s.trim())
                            .ok_or_else(|| {
                                bad(
                                    "speed",
                                    value,
                                    "a list of ultrabullet, bullet, blitz, rapid, classical, correspondence, unknown",
                                )
                            })?;
                        f.speeds |= 1 << speed as u8;
                    }
                }
                "mode" => {
                    f.modes = match value {
                        "rated" => 1 << Mode::Rated as u8,
                        "casual" => 1 << Mode::Casual as u8,
                        "all" => 0b111,
                        _ => return Err(bad("mode", value, "rated, casual or all")),
                    }
                }
                "result" => {
                    f.results = 0;
                    for r in value.split(',') {
                        f.results |= match r.trim() {
                            "win" => 1,
                            "draw" => 2,
                            "loss" => 4,
                            _ => return Err(bad("result", value, "a list of win, draw, loss")),
                        };
                    }
                }
                "rating" => {
                    // As sent: a space is no part of a number.
                    let value = raw;
                    let why =
                        "MIN-MAX in plain digits, either may be left out (1800-2200, 1800-, -2200)";
                    let (lo, hi) = value
                        .split_once('-')
                        .ok_or_else(|| bad("rating", value, why))?;
                    let number = |s: &str, default: u32| {
                        if s.is_empty() {
                            return Some(default);
                        }
                        plain_number(s)
                            .filter(|_| s.len() <= 5)
                            .and_then(|n| u32::try_from(n).ok())
                    };
                    match (number(lo, 0), number(hi, u32::MAX)) {
                        (Some(lo), Some(hi)) if lo <= hi => f.rating = Some((lo, hi)),
                        (Some(_), Some(_)) => {
                            return Err(bad("rating", value, "its minimum is above its maximum"));
                        }
                        _ => return Err(bad("rating", value, why)),
                    }
                }
                "since" => since = Some(month("since", value)?),
                "until" => until = Some(month("until", value)?),
                "opponent" => {
                    if value.len() > 200 {
                        return Err(bad("opponent", value, "a name of at most 200 bytes"));
                    }
                    f.opponent = Some(value.to_lowercase());
                }
                _ => return Err(FilterError::Unknown(name.to_string())),
            }
        }
        if since.is_some() || until.is_some() {
            let (lo, hi) = (since.unwrap_or(1), until.unwrap_or(u32::MAX));
            if lo > hi {
                return Err(bad("until", &month_text(hi), "it is before since"));
            }
            f.months = Some((lo, hi));
        }
        Ok(f)
    }

    /// Whether a game passes the filters read from its word alone.
    #[inline]
    fn pass(&self, w: Word) -> bool {
        if self.sides >> w.side() & 1 == 0
            || self.speeds >> w.speed_bits() & 1 == 0
            || self.modes >> (w.0 >> 7 & 3) & 1 == 0
            || self.results >> player_result(w) & 1 == 0
        {
            return false;
        }
        if let Some((lo, hi)) = self.rating {
            let r = filter_rating(w);
            if r == 0 || r < lo || r > hi {
                return false;
            }
        }
        if let Some((lo, hi)) = self.months {
            let m = w.month();
            if m == 0 || m < lo || m > hi {
                return false;
            }
        }
        true
    }
}

/// The result from the player's view (White's without a player): 0 win, 1 draw, 2 loss.
#[inline]
fn player_result(w: Word) -> u64 {
    if w.side() == 2 {
        2 - w.result()
    } else {
        w.result()
    }
}

/// The rating the `rating` filter reads: the opponent's, or without a player the average of
/// both (0 if a rating is missing).
#[inline]
fn filter_rating(w: Word) -> u32 {
    match w.side() {
        1 => w.black_elo(),
        2 => w.white_elo(),
        _ if w.white_elo() > 0 && w.black_elo() > 0 => (w.white_elo() + w.black_elo()) / 2,
        _ => 0,
    }
}

/// The opponent's rating for the performance: the player's opponent, or Black without a player.
#[inline]
fn opponent_rating(w: Word) -> u32 {
    if w.side() == 2 {
        w.white_elo()
    } else {
        w.black_elo()
    }
}

/// How high a game ranks among the top games: the average of the ratings it has.
fn game_rating(w: Word) -> u32 {
    match (w.white_elo(), w.black_elo()) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => (a + b) / 2,
    }
}

/// The best `N` games by a rank (ties: the later game first).
#[derive(Clone, Copy, Debug)]
struct Best<const N: usize> {
    items: [(u32, u32); N],
    len: usize,
}

impl<const N: usize> Best<N> {
    fn new() -> Self {
        Best {
            items: [(0, 0); N],
            len: 0,
        }
    }

    #[inline]
    fn offer(&mut self, rank: u32, game: u32) {
        let item = (rank, game);
        if self.len == N && item <= self.items[N - 1] {
            return;
        }
        let mut i = self.len.min(N - 1);
        self.items[i] = item;
        while i > 0 && self.items[i - 1] < item {
            self.items.swap(i - 1, i);
            i -= 1;
        }
        self.len = (self.len + 1).min(N);
    }

    fn games(&self) -> impl Iterator<Item = u32> + '_ {
        self.items[..self.len].iter().map(|&(_, g)| g)
    }
}

/// One move's sums while the records are read.
struct Sums {
    mv: u16,
    results: [u64; 3],
    /// The player's results (0 win, 1 draw, 2 loss).
    player: [u64; 3],
    rating_sum: u64,
    rating_n: u64,
    perf_sum: u64,
    perf_n: u64,
    perf_wl: i64,
    last: u32,
    top: Best<3>,
    recent: Best<3>,
}

impl Sums {
    fn new(mv: u16) -> Sums {
        Sums {
            mv,
            results: [0; 3],
            player: [0; 3],
            rating_sum: 0,
            rating_n: 0,
            perf_sum: 0,
            perf_n: 0,
            perf_wl: 0,
            last: 0,
            top: Best::new(),
            recent: Best::new(),
        }
    }

    #[inline]
    fn add(&mut self, w: Word, game: u32) {
        self.results[w.result() as usize] += 1;
        let pr = player_result(w);
        self.player[pr as usize] += 1;
        let r = filter_rating(w);
        if r > 0 {
            self.rating_sum += u64::from(r);
            self.rating_n += 1;
        }
        let opp = opponent_rating(w);
        if opp > 0 {
            self.perf_sum += u64::from(opp);
            self.perf_n += 1;
            self.perf_wl += match pr {
                0 => 1,
                2 => -1,
                _ => 0,
            };
        }
        self.last = self.last.max(w.month());
        self.top.offer(game_rating(w), game);
        self.recent.offer(w.month(), game);
    }
}

/// A position's moves in the games that pass the filters: `/api/games`'s answer.
#[derive(Debug, Serialize)]
pub struct PositionGames {
    pub fen: String,
    pub key: String,
    #[serde(flatten)]
    pub name: OpeningJson,
    #[serde(flatten)]
    pub results: Results,
    pub moves: Vec<MoveGames>,
}

/// Games and their results for White (wins, draws, losses): of a position in
/// [`PositionGames`], of a move in [`MoveGames`].
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Results {
    pub games: u64,
    pub white: u64,
    pub draws: u64,
    pub black: u64,
}

/// One move of [`PositionGames`].
#[derive(Debug, Serialize)]
pub struct MoveGames {
    pub uci: String,
    pub san: String,
    /// The name of the position the move leads to.
    #[serde(flatten)]
    pub name: OpeningJson,
    #[serde(flatten)]
    pub results: Results,
    /// The player's points per game (White's without a player), 0 to 1.
    pub score: f64,
    pub performance: Option<i64>,
    pub rating: Option<u32>,
    /// The latest month played, `YYYY-MM`.
    pub last: Option<String>,
    pub top: Vec<GameJson>,
    pub recent: Vec<GameJson>,
}

/// A game in a list: who, when, how it ended, and the move it played in the position.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GameJson {
    pub id: u32,
    pub white: Option<String>,
    pub black: Option<String>,
    pub white_elo: Option<u32>,
    pub black_elo: Option<u32>,
    pub result: &'static str,
    pub date: Option<String>,
    pub speed: &'static str,
    pub rated: Option<bool>,
    pub site: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uci: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub san: Option<String>,
    /// Where the game left the repertoire book given to `explore --repertoire` (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repertoire: Option<RepertoireJson>,
}

/// Where a game left a repertoire book: `check --json`'s `game` (the game's number among all the
/// inputs' games, from 1), `who`, `ply` and `move` for the game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepertoireJson {
    pub game: u64,
    pub who: super::check::Left,
    pub ply: u32,
    /// The move played where it left, in UCI (`null` for `none`, or where the game ended).
    #[serde(rename = "move")]
    pub mv: Option<String>,
}

/// One game whole: `/api/game`'s answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GameDetail {
    #[serde(flatten)]
    pub game: GameJson,
    pub event: Option<String>,
    pub time_control: Option<String>,
    /// The FEN the game starts from.
    pub start: String,
    pub moves: Vec<PlyJson>,
    /// The first ply at which the game reaches the position asked about (0: its start).
    pub ply: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct PlyJson {
    pub uci: String,
    pub san: String,
}

fn month_text(m: u32) -> String {
    format!("{:04}-{:02}", m / 12, m % 12 + 1)
}

fn date_text(d: u32) -> Option<String> {
    if d == 0 {
        return None;
    }
    let part = |n: u32, width: usize| {
        if n == 0 {
            "?".repeat(width)
        } else {
            format!("{n:0width$}")
        }
    };
    Some(format!(
        "{}.{}.{}",
        part(d / 10000, 4),
        part(d / 100 % 100, 2),
        part(d % 100, 2)
    ))
}

fn uci_san(pos: &Chess, m: Move) -> (String, String) {
    let uci = m.to_uci(CastlingMode::Standard).to_string();
    let san = SanPlus::from_move(pos.clone(), m).to_string();
    (uci, san)
}

impl Index {
    fn string(&self, id: u32) -> Option<String> {
        (id != NONE)
            .then(|| self.strings.get(id).map(str::to_string))
            .flatten()
    }

    fn info(&self, game: u32) -> Option<&GameInfo> {
        self.games.get(game as usize)
    }

    /// The list entry of game `game`; `played` the move it played in `pos`.
    fn game_json(&self, game: u32, played: Option<(&Chess, u16)>) -> GameJson {
        let w = self.words[game as usize];
        let g = self.games[game as usize];
        let elo = |e: u32| (e > 0).then_some(e);
        let (uci, san) = match played.and_then(|(pos, mv)| Some((pos, RawMove(mv).to_move(pos)?))) {
            Some((pos, m)) => {
                let (u, s) = uci_san(pos, m);
                (Some(u), Some(s))
            }
            None => (None, None),
        };
        let site = (g.site != NONE).then(|| {
            let at = g.site as usize;
            String::from_utf8_lossy(&self.sites[at..at + usize::from(g.site_len)]).into_owned()
        });
        GameJson {
            id: game,
            white: self.string(g.white),
            black: self.string(g.black),
            white_elo: elo(w.white_elo()),
            black_elo: elo(w.black_elo()),
            result: ["1-0", "1/2-1/2", "0-1"][w.result() as usize],
            date: date_text(g.date),
            speed: w.speed().name(),
            rated: match w.mode() {
                Mode::Rated => Some(true),
                Mode::Casual => Some(false),
                Mode::Unknown => None,
            },
            site,
            uci,
            san,
            repertoire: self.repertoire_of(game),
        }
    }

    /// The string ids whose text holds `needle` (lower case), as a bit per id.
    fn matching_names(&self, needle: &str) -> Vec<bool> {
        self.lower.iter().map(|s| s.contains(needle)).collect()
    }

    /// The moves of `pos` in the games that pass `filters`.
    pub fn query(&self, pos: &Chess, filters: &Filters) -> PositionGames {
        let key = Key::of(pos);
        let names = filters.opponent.as_deref().map(|n| self.matching_names(n));
        let name_ok = |g: &GameInfo, side: u64| {
            let Some(names) = &names else { return true };
            let is = |id: u32| id != NONE && names.get(id as usize).copied().unwrap_or(false);
            match side {
                1 => is(g.black),
                2 => is(g.white),
                _ => is(g.white) || is(g.black),
            }
        };
        let mut sums: Vec<Sums> = Vec::new();
        let mut last = 0;
        for r in self.records(key.0) {
            let w = self.words[r.game as usize];
            if !filters.pass(w) || !name_ok(&self.games[r.game as usize], w.side()) {
                continue;
            }
            // Moves repeat: look where the last one was first.
            if sums.get(last).is_none_or(|s| s.mv != r.mv) {
                last = match sums.iter().position(|s| s.mv == r.mv) {
                    Some(i) => i,
                    None => {
                        sums.push(Sums::new(r.mv));
                        sums.len() - 1
                    }
                };
            }
            sums[last].add(w, r.game);
        }
        let openings = Openings::bundled();
        let mut moves: Vec<MoveGames> = sums
            .iter()
            .filter_map(|s| {
                let m = RawMove(s.mv).to_move(pos)?;
                let (uci, san) = uci_san(pos, m);
                let mut after = pos.clone();
                after.play_unchecked(m);
                let name = openings.position(&after);
                let games = s.results.iter().sum::<u64>();
                let points = 2 * s.player[0] + s.player[1];
                let games_json = |b: &Best<3>| {
                    b.games()
                        .map(|g| self.game_json(g, Some((pos, s.mv))))
                        .collect()
                };
                Some(MoveGames {
                    uci,
                    san,
                    name: name.into(),
                    results: Results {
                        games,
                        white: s.results[0],
                        draws: s.results[1],
                        black: s.results[2],
                    },
                    score: points as f64 / (2 * games).max(1) as f64,
                    performance: (s.perf_n > 0).then(|| {
                        let avg = s.perf_sum as f64 / s.perf_n as f64;
                        (avg + 400.0 * s.perf_wl as f64 / s.perf_n as f64).round() as i64
                    }),
                    rating: (s.rating_n > 0)
                        .then(|| (s.rating_sum as f64 / s.rating_n as f64).round() as u32)
                        .map(|r| r.min(MAX_ELO)),
                    last: (s.last > 0).then(|| month_text(s.last)),
                    top: games_json(&s.top),
                    recent: games_json(&s.recent),
                })
            })
            .collect();
        moves.sort_by(|a, b| {
            (b.results.games.cmp(&a.results.games)).then_with(|| a.uci.cmp(&b.uci))
        });
        let name = openings.position(pos);
        let sum = |f: fn(&Results) -> u64| moves.iter().map(|m| f(&m.results)).sum();
        PositionGames {
            fen: fen_string(pos),
            key: format!("{:016x}", key.0),
            name: name.into(),
            results: Results {
                games: sum(|r| r.games),
                white: sum(|r| r.white),
                draws: sum(|r| r.draws),
                black: sum(|r| r.black),
            },
            moves,
        }
    }

    /// Game `id` whole, and the first ply at which it reaches `pos`; `None` for no such game.
    pub fn game(&self, id: u32, pos: &Chess) -> Option<GameDetail> {
        let g = *self.info(id)?;
        let start = match self.string(g.start) {
            Some(fen) => crate::position::parse_fen(&fen).ok()?,
            None => Chess::default(),
        };
        let target = Key::of(pos);
        let mut board = start.clone();
        let mut ply = (Key::of(&board) == target).then_some(0);
        let mut moves = Vec::with_capacity(usize::from(g.plies));
        let from = g.moves as usize;
        for (i, &raw) in self.moves[from..from + usize::from(g.plies)]
            .iter()
            .enumerate()
        {
            let Some(m) = RawMove(raw).to_move(&board) else {
                break;
            };
            let (uci, san) = uci_san(&board, m);
            moves.push(PlyJson { uci, san });
            board.play_unchecked(m);
            if ply.is_none() && Key::of(&board) == target {
                ply = Some(i + 1);
            }
        }
        Some(GameDetail {
            game: self.game_json(id, None),
            event: self.string(g.event),
            time_control: self.string(g.time_control),
            start: fen_string(&start),
            moves,
            ply,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &[(&str, &str)], player: bool) -> Result<Filters, String> {
        Filters::parse(q.iter().copied(), player).map_err(|e| e.to_string())
    }

    #[test]
    fn filters_read_their_parameters_and_refuse_bad_values() {
        assert!(parse(&[("speed", "blitz,bullet"), ("mode", "rated")], false).is_ok());
        assert!(parse(&[("rating", "1800-"), ("since", "2020-03")], true).is_ok());
        assert!(parse(&[("color", "")], false).is_ok());
        for (q, message) in [
            (("speed", "turbo"), "speed='turbo': a list of ultrabullet"),
            (("rating", "abc"), "rating='abc': MIN-MAX"),
            (
                ("rating", "2200-1800"),
                "rating='2200-1800': its minimum is above",
            ),
            (("since", "2020-13"), "since='2020-13': a month as YYYY-MM"),
            (("color", "white"), "color='white': only with --player"),
            (("result", "won"), "result='won': a list of win, draw, loss"),
            (("depth", "3"), "unknown parameter 'depth'"),
        ] {
            let got = parse(&[q], false).unwrap_err();
            assert!(got.starts_with(message), "{got}");
        }
        let got = parse(&[("since", "2021-01"), ("until", "2020-12")], false).unwrap_err();
        assert!(got.contains("before since"), "{got}");
    }

    #[test]
    fn the_best_games_stay_in_order() {
        let mut b = Best::<3>::new();
        for (rank, game) in [(5, 1), (9, 2), (1, 3), (9, 4), (7, 5)] {
            b.offer(rank, game);
        }
        assert_eq!(b.games().collect::<Vec<_>>(), vec![4, 2, 5]);
    }
}
