//! One position's statistics from a tally, for people and programs: each move's games and
//! results from the mover's view, as `probe TALLY.parquet --json` prints them (and, with a book
//! beside, each move's book weight; with a tally made with `--ratings`, the players' average
//! ratings and the latest date, as the lichess explorer shows them).

use serde::Serialize;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Move, Position};

use crate::book::{Key, Probe, RawMove};
use crate::builder::PairCount;
use crate::openings::{LineName, Opening, OpeningJson};
use crate::position::fen_of;

/// One position's statistics, as `probe --json` prints them for a tally.
#[derive(Clone, Debug, Serialize)]
pub struct TallyJson {
    pub fen: String,
    /// The Polyglot key, 16 hex digits.
    pub key: String,
    /// The opening's ECO code and name (lichess's table), as `probe --json` gives them for a book.
    #[serde(flatten)]
    pub name: OpeningJson,
    /// Games that reached the position and went on with a move of the tally.
    pub games: u64,
    /// The legal moves, by games played (most first; ties in order of first appearance), then
    /// the book's moves the tally never saw.
    pub moves: Vec<MoveStats>,
    /// Pairs under the key whose move is not legal here (a key collision or a broken tally).
    pub illegal: Vec<IllegalStats>,
    /// The tally has the ratings' columns: each move has the three fields below.
    #[serde(skip)]
    pub ratings: bool,
}

/// One move's statistics.
#[derive(Clone, Debug, Serialize)]
pub struct MoveStats {
    pub uci: String,
    pub san: String,
    /// The opening of the line with this move played.
    #[serde(flatten)]
    pub name: OpeningJson,
    /// Games in which the move was played, and their results for the side that played it.
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// The move's share of the position's games (0 to 1).
    pub share: f64,
    /// The mover's score: (wins + draws / 2) / games (0 to 1; 0 without games).
    pub score: f64,
    /// The book's weight for the move (only with a book; `null` if the book does not have it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<Option<u16>>,
    /// Only from a tally made with `--ratings`: the games in which both players were rated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rated_games: Option<u64>,
    /// Only from a tally made with `--ratings`: the average rating of the side that played the
    /// move and of its opponent over the games where both were rated, rounded to the nearest
    /// (halves up); `null` when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_rating: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_opponent_rating: Option<Option<u64>>,
    /// Only from a tally made with `--ratings`: the latest date of its games, `YYYY.MM.DD` as in
    /// PGN (`??` for an unknown month or day); `null` when none had a date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_date: Option<Option<String>>,
}

/// `sum / n` rounded to the nearest whole number, halves up; `None` when `n` is 0.
pub fn average(sum: u64, n: u64) -> Option<u64> {
    (n > 0).then(|| ((u128::from(sum) * 2 + u128::from(n)) / (2 * u128::from(n))) as u64)
}

/// A date kept as `yyyymmdd` in PGN's spelling (`2019.??.??` for 20190000); `None` for 0.
pub fn pgn_date(date: u32) -> Option<String> {
    if date == 0 {
        return None;
    }
    let part = |n: u32| {
        if n == 0 {
            "??".to_string()
        } else {
            format!("{n:02}")
        }
    };
    Some(format!(
        "{:04}.{}.{}",
        date / 10000,
        part(date / 100 % 100),
        part(date % 100)
    ))
}

#[derive(Clone, Debug, Serialize)]
pub struct IllegalStats {
    /// The move in Polyglot's spelling (castling as the king taking its rook).
    pub raw: String,
    pub games: u64,
}

/// The opening of the line `line` (ending in `pos`) with `m` played.
fn opening_after(line: &LineName, pos: &Chess, m: Move) -> Option<Opening> {
    let mut after = pos.clone();
    after.play_unchecked(m);
    line.after(Key::of(&after))
}

fn uci_of(m: Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

fn san_of(pos: &Chess, m: Move) -> String {
    let mut s = San::from_move(pos, m).to_string();
    let mut after = pos.clone();
    after.play_unchecked(m);
    if after.is_check() {
        s.push(if after.legal_moves().is_empty() {
            '#'
        } else {
            '+'
        });
    }
    s
}

/// The statistics of `pos` from its `pairs` in a tally (all under its key), and, with `book`,
/// each move's weight in that book's probe of the same position; with `ratings` (the tally has
/// the ratings' columns), each move's average ratings and latest date.
pub fn position_stats(
    pos: &Chess,
    line: &LineName,
    pairs: &[PairCount],
    book: Option<&Probe>,
    ratings: bool,
) -> TallyJson {
    let key = Key::of(pos);
    let mut sorted: Vec<&PairCount> = pairs.iter().collect();
    sorted.sort_by(|a, b| b.games.cmp(&a.games).then(a.first.cmp(&b.first)));
    let mut moves = Vec::new();
    let mut illegal = Vec::new();
    let mut seen: Vec<Move> = Vec::new();
    for p in sorted {
        let raw = RawMove(p.mv);
        match raw.to_move(pos) {
            Some(m) if p.black == (pos.turn() == shakmaty::Color::Black) => {
                let weight = book.map(|b| {
                    b.legal
                        .iter()
                        .find(|bm| bm.mv == m)
                        .map(|bm| bm.entry.weight)
                });
                seen.push(m);
                let named = opening_after(line, pos, m);
                moves.push(MoveStats {
                    uci: uci_of(m),
                    san: san_of(pos, m),
                    name: named.into(),
                    games: p.games,
                    wins: p.wins,
                    draws: p.draws,
                    losses: p.losses,
                    share: 0.0,
                    score: (p.wins as f64 + p.draws as f64 / 2.0) / p.games.max(1) as f64,
                    weight,
                    rated_games: ratings.then_some(p.rating.rated_games),
                    avg_rating: ratings.then(|| average(p.rating.mover_sum, p.rating.rated_games)),
                    avg_opponent_rating: ratings
                        .then(|| average(p.rating.opponent_sum, p.rating.rated_games)),
                    last_date: ratings.then(|| pgn_date(p.rating.last_date)),
                });
            }
            _ => illegal.push(IllegalStats {
                raw: raw.to_string(),
                games: p.games,
            }),
        }
    }
    if let Some(book) = book {
        for bm in book.legal.iter().filter(|bm| !seen.contains(&bm.mv)) {
            let named = opening_after(line, pos, bm.mv);
            moves.push(MoveStats {
                uci: uci_of(bm.mv),
                san: san_of(pos, bm.mv),
                name: named.into(),
                games: 0,
                wins: 0,
                draws: 0,
                losses: 0,
                share: 0.0,
                score: 0.0,
                weight: Some(Some(bm.entry.weight)),
                rated_games: ratings.then_some(0),
                avg_rating: ratings.then_some(None),
                avg_opponent_rating: ratings.then_some(None),
                last_date: ratings.then_some(None),
            });
        }
    }
    let games: u64 = moves.iter().map(|m| m.games).sum();
    for m in &mut moves {
        m.share = if games > 0 {
            m.games as f64 / games as f64
        } else {
            0.0
        };
    }
    TallyJson {
        fen: fen_of(pos),
        key: key.to_string(),
        name: line.name().into(),
        games,
        moves,
        illegal,
        ratings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_round_halves_up_and_dates_read_as_in_pgn() {
        assert_eq!(average(3001, 2), Some(1501));
        assert_eq!(average(3000, 2), Some(1500));
        assert_eq!(average(4000, 3), Some(1333));
        assert_eq!(average(0, 0), None);
        assert_eq!(pgn_date(20240131).as_deref(), Some("2024.01.31"));
        assert_eq!(pgn_date(20190000).as_deref(), Some("2019.??.??"));
        assert_eq!(pgn_date(0), None);
    }
}
