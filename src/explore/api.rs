//! The JSON API the page reads, documented in the README for scripts too:
//!
//! - `GET /api/books`: `{"books":[NAME…],"tally":NAME|null,"games":…,"practice":COLOUR|null,
//!   "start":FEN}`, the books in the order given on the command line, the tally (`--tally`; `null`
//!   without one), the side practised (`--practice`: `white` or `black`) and the position the
//!   page starts from (`--fen`, or the standard start).
//! - `GET /api/probe?fen=FEN&moves=MOVES`: the position `fen` (default: the start position) after
//!   `moves` (SAN or UCI, separated by spaces; move numbers skipped), and for each book, in order,
//!   exactly the object `probe --json` prints for it with several books: `{"book":NAME,"fen":…,
//!   "key":…,"entries":[…],"illegal":[…]}`. The answer is a JSON array of these objects.
//! - `GET /api/tally?fen=FEN&moves=MOVES`: the same position's games in the tally, exactly the
//!   object `probe TALLY.parquet --json` prints: `{"fen":…,"key":…,"games":N,"moves":[{"uci":…,
//!   "san":…,"games":…,"wins":…,"draws":…,"losses":…,"share":…,"score":…}…],"illegal":[…]}`
//!   (results from the mover's view). Without a tally: `404`.
//!
//! - `GET /api/games?fen=FEN&moves=MOVES&color=…&speed=…&mode=…&rating=…&since=…&until=…&result=…&opponent=…`:
//!   the position's moves in the games given to `explore` (with `--player`, that player's games)
//!   that pass the filters, every one optional (an empty value is none):
//!   `color` `white|black|both` (the player's colour; only with `--player`), `speed` a list of
//!   `ultrabullet,bullet,blitz,rapid,classical,correspondence,unknown` (from `TimeControl`:
//!   initial + 40 × increment under 30 s, 180, 480, 1500, 21600 seconds, else correspondence; `-`
//!   is correspondence), `mode` `rated|casual|all` (rated: `Event` starts with `Rated` or the game
//!   has a `WhiteRatingDiff`/`BlackRatingDiff` tag; casual: `Event` starts with `Casual`),
//!   `rating` `MIN-MAX` (either may be left out: the opponent's rating, or without `--player` the
//!   average of both players'), `since`/`until` `YYYY-MM` (inclusive; `Date`, else `UTCDate`),
//!   `result` a list of `win,draw,loss` (the player's view; White's without `--player`),
//!   `opponent` a part of the opponent's name, any case (without `--player`: of either player's).
//!   A filter on a rating or a date leaves out the games without one. The answer:
//!   `{"fen","key","eco","opening","games","white","draws","black","moves":[{"uci","san","eco",
//!   "opening","games","white","draws","black","score","performance","rating","last","top":[GAME…],
//!   "recent":[GAME…]}…]}`: `eco`/`opening` a move's name is the position it leads to; `score` the
//!   player's points per game (White's without `--player`); `performance` the linear performance
//!   rating, average opponent + 400 × (wins − losses) / games over the games whose opponent is
//!   rated (`null` if none); `rating` the average opponent (without `--player`: the average of
//!   both players' average); `last` the latest month played; `top` up to 3 games with the highest
//!   average rating, `recent` the 3 latest; a GAME is `{"id","white","black","whiteElo",
//!   "blackElo","result","date","speed","rated","site","uci","san"}`, and with `--repertoire
//!   REP.bin` `"repertoire":{"game","who","ply","move"}`, where the game left the book, exactly
//!   `polybook check --json`'s line for the game (absent for a game `check` leaves out). Moves:
//!   most games first. Without games: `404`.
//! - `GET /api/game?id=N&fen=FEN&moves=MOVES`: game `N` whole: a GAME's fields, `event`,
//!   `timeControl`, `start` (its first position's FEN), `moves` (`[{"uci","san"}…]`, every move)
//!   and `ply`, the first ply at which it reaches the position of `fen` and `moves` (by Polyglot
//!   key; 0 its start, `null` never). `N` is written in plain decimal digits (no sign, space or
//!   leading zero: [`plain_number`], the rule of every number of the API); no `id`, or one not so
//!   written: `400`; no such game: `404`.
//!
//! - `GET /api/practice/state?fen=FEN&moves=MOVES` (with `--practice`; else `404`): the practice
//!   at that position (the line so far): `{"color","book","progress","today","turn","move",
//!   "card","repertoire"}`: `turn` `user` (the user's colour to move and the book has a move),
//!   `opponent` (then `move` is the opponent's book move, `{"uci","san","weight"}`, chosen as
//!   [`practice`](super::practice) says) or `end` (the book has no move for the side to move: the
//!   line is done); `card` the position's SM-2 card when it is the user's and has been answered
//!   (`{"ease","interval","repetitions","due","reviews","lapses","last"}`, else `null`);
//!   `repertoire` `{"positions","due","new"}`: the user's positions in the book from the start
//!   position, those due today (new ones included), those never answered.
//! - `POST /api/practice/answer` with `Content-Type: application/json` and the body
//!   `{"fen":FEN,"moves":MOVES,"move":UCI,"retry":BOOL}` (`fen` optional, `retry` default
//!   `false`): the user's `move` in that position, which must be the user's to move with book
//!   moves. The answer: `{"right","graded","book":[{"uci","san","weight"}…],"card"}`; unless
//!   `retry`, it is graded and the progress file written before the answer is sent (a write
//!   that fails is a `500`, and the answer is not kept).
//!
//! A bad FEN, a move that cannot be played, an unknown or repeated parameter, a bad number is an
//! [`ApiError`]: the reply is `400` and `{"error":"…"}`, with the same message the command line
//! gives.

use serde::Serialize;
use shakmaty::{Chess, Position};
use thiserror::Error;

use super::{Explorer, practice};
use crate::inspect::{BookProbeJson, fen_string, probe_json_in};
use crate::openings::{LineName, name_moves};
use crate::position::{PositionError, parse_fen};
use crate::repertoire::query::plain_number;
use crate::repertoire::{FilterError, Filters};
use crate::tally::position_stats;
use crate::text::quote;

/// Why an API request was refused (a `400` reply).
#[derive(Debug, Error)]
pub enum ApiError {
    #[error("unknown parameter {} (the parameters are fen and moves)", quote(.0))]
    UnknownParameter(String),
    #[error("parameter {} given twice", quote(.0))]
    Repeated(String),
    #[error(transparent)]
    Position(#[from] PositionError),
    #[error("{0}")]
    Tally(String),
    #[error(transparent)]
    Filter(#[from] FilterError),
    #[error("id={}: not a game (the games are numbered from 0 to {last})", quote(.id))]
    NoGame { id: String, last: usize },
    #[error(
        "id={}: not a game's number (a number from 0 to {last} in plain digits, without sign, space or leading zero)",
        quote(.id)
    )]
    BadId { id: String, last: usize },
    #[error("no id: /api/game?id=N names a game (numbered from 0 to {last})")]
    NoId { last: usize },
    #[error("bad answer: {0}")]
    BadAnswer(String),
    #[error("{0}")]
    Progress(String),
}

/// The body of an error reply: `{"error":"…"}`.
pub fn error_json(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

/// `/api/books`' answer.
pub fn books(explorer: &Explorer) -> String {
    #[derive(Serialize)]
    struct BooksJson<'a> {
        books: Vec<&'a str>,
        tally: Option<&'a str>,
        games: Option<GamesJson<'a>>,
        /// The side practised (`--practice`), or `null`.
        practice: Option<String>,
        start: String,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct GamesJson<'a> {
        name: &'a str,
        player: Option<Vec<String>>,
        games: usize,
        plies: usize,
        max_ply: usize,
    }
    let answer = BooksJson {
        books: explorer.books.iter().map(|(name, _)| name).collect(),
        tally: explorer.tally.as_ref().map(|(name, _)| name.as_str()),
        games: explorer.games.as_ref().map(|(name, index)| GamesJson {
            name,
            player: index.player.as_ref().map(|p| p.describe()),
            games: index.games(),
            plies: index.plies(),
            max_ply: index.max_ply,
        }),
        practice: explorer.practice.as_ref().map(|p| p.color.to_string()),
        start: fen_string(&explorer.start),
    };
    serde_json::to_string(&answer).expect("serializing strings cannot fail")
}

/// `/api/probe`'s answer for the query string `query` (what follows `?`, percent-encoded).
pub fn probe(explorer: &Explorer, query: &str) -> Result<String, ApiError> {
    let (pos, line) = position(explorer, query)?;
    let answer: Vec<BookProbeJson> = explorer
        .books
        .iter()
        .map(|(book, reader)| BookProbeJson {
            book,
            probe: probe_json_in(&pos, &reader.probe(&pos), &line, reader.learn_layout()),
        })
        .collect();
    Ok(serde_json::to_string(&answer).expect("serializing strings and numbers cannot fail"))
}

/// `/api/tally`'s answer for the query string `query`; `None` when the explorer has no tally.
pub fn tally(explorer: &Explorer, query: &str) -> Option<Result<String, ApiError>> {
    let (_, lookup) = explorer.tally.as_ref()?;
    Some((|| {
        let (pos, line) = position(explorer, query)?;
        let key = crate::book::Key::of(&pos).0;
        // A lookup reads the file: one request at a time (another waits micro- to milliseconds).
        let (pairs, ratings) = {
            let mut lookup = lookup
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let pairs = lookup
                .find(key)
                .map_err(|e| ApiError::Tally(e.to_string()))?;
            (pairs, lookup.has_ratings())
        };
        let stats = position_stats(&pos, &line, &pairs, None, ratings);
        Ok(serde_json::to_string(&stats).expect("serializing strings and numbers cannot fail"))
    })())
}

/// `/api/games`' answer for the query string `query`; `None` when the explorer has no games.
pub fn games(explorer: &Explorer, query: &str) -> Option<Result<String, ApiError>> {
    let (_, index) = explorer.games.as_ref()?;
    Some((|| {
        let (pos, _, rest) = position_and(explorer, query, None)?;
        let filters = Filters::parse(
            rest.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            index.player.is_some(),
        )?;
        let answer = index.query(&pos, &filters);
        Ok(serde_json::to_string(&answer).expect("serializing strings and numbers cannot fail"))
    })())
}

/// `/api/game`'s answer for the query string `query`; `None` when the explorer has no games.
pub fn game(explorer: &Explorer, query: &str) -> Option<Result<String, ApiError>> {
    let (_, index) = explorer.games.as_ref()?;
    Some((|| {
        let (pos, _, rest) = position_and(explorer, query, Some(&["id"]))?;
        let last = index.games().saturating_sub(1);
        let id = rest
            .first()
            .map(|(_, v)| v.as_str())
            .ok_or(ApiError::NoId { last })?;
        let n = plain_number(id).ok_or_else(|| ApiError::BadId {
            id: id.to_string(),
            last,
        })?;
        let no_game = || ApiError::NoGame {
            id: id.to_string(),
            last,
        };
        let n = u32::try_from(n).map_err(|_| no_game())?;
        let answer = index.game(n, &pos).ok_or_else(no_game)?;
        Ok(serde_json::to_string(&answer).expect("serializing strings and numbers cannot fail"))
    })())
}

/// `/api/practice/state`'s answer for the query string `query`; `None` when not practising.
pub fn practice_state(explorer: &Explorer, query: &str) -> Option<Result<String, ApiError>> {
    let practice = explorer.practice.as_ref()?;
    let (name, book) = explorer.books.iter().next()?;
    Some((|| {
        let (pos, _) = position(explorer, query)?;
        let has_moves = !book.probe(&pos).legal.is_empty();
        let turn = match (has_moves, pos.turn() == practice.color) {
            (false, _) => "end",
            (true, true) => "user",
            (true, false) => "opponent",
        };
        let mv = if turn == "opponent" {
            let mut rng = rand::rng();
            practice.opponent_move(book, &pos, &mut |n| rand::Rng::random_range(&mut rng, 0..n))
        } else {
            None
        };
        let card = if turn == "user" {
            practice.card(&pos).map(|c| card_json(&c))
        } else {
            None
        };
        let repertoire = practice.ahead(book, &explorer.start);
        let answer = serde_json::json!({
            "color": practice.color.to_string(),
            "book": name,
            "progress": practice.path.display().to_string(),
            "today": practice::date_text(practice.today()),
            "turn": turn,
            "move": mv,
            "card": card,
            "repertoire": repertoire,
        });
        Ok(answer.to_string())
    })())
}

/// The JSON of an SM-2 card (dates `YYYY-MM-DD`, the ease as SM-2 writes it: 2.5).
fn card_json(card: &practice::Card) -> serde_json::Value {
    serde_json::json!({
        "ease": f64::from(card.ease) / 100.0,
        "interval": card.interval,
        "repetitions": card.repetitions,
        "due": practice::date_text(card.due),
        "reviews": card.reviews,
        "lapses": card.lapses,
        "last": practice::date_text(card.last),
    })
}

/// `/api/practice/answer`'s answer for the JSON `body`; `None` when not practising.
pub fn practice_answer(explorer: &Explorer, body: &[u8]) -> Option<Result<String, ApiError>> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AnswerJson {
        fen: Option<String>,
        #[serde(default)]
        moves: String,
        #[serde(rename = "move")]
        mv: String,
        #[serde(default)]
        retry: bool,
    }
    let practice = explorer.practice.as_ref()?;
    let (_, book) = explorer.books.iter().next()?;
    Some((|| {
        let bad = |why: String| ApiError::BadAnswer(why);
        let asked: AnswerJson = serde_json::from_slice(body).map_err(|e| {
            bad(format!(
                "the body is not {{\"fen\":FEN,\"moves\":MOVES,\"move\":UCI,\"retry\":BOOL}} ({e})"
            ))
        })?;
        let (pos, _) = position_of(explorer, asked.fen.as_deref(), Some(asked.moves.as_str()))?;
        if pos.turn() != practice.color {
            return Err(bad(format!(
                "it is {}'s move here, and the practice is {}'s",
                pos.turn(),
                practice.color
            )));
        }
        if book.probe(&pos).legal.is_empty() {
            return Err(bad(
                "the book has no move here: the line is over, nothing to answer".to_string(),
            ));
        }
        let mv = practice::legal_move(&pos, &asked.mv).ok_or_else(|| {
            bad(format!(
                "{} is not a legal move here (a move in UCI, e.g. e2e4)",
                quote(&asked.mv)
            ))
        })?;
        let answer = practice
            .answer(book, &pos, &mv, !asked.retry)
            .map_err(|e| ApiError::Progress(e.to_string()))?;
        let json = serde_json::json!({
            "right": answer.right,
            "graded": answer.graded,
            "book": answer.book,
            "card": answer.card.as_ref().map(card_json),
        });
        Ok(json.to_string())
    })())
}

/// The position a probe query names: `fen` (default: the start position) after `moves`, with the
/// name of that line.
fn position(explorer: &Explorer, query: &str) -> Result<(Chess, LineName), ApiError> {
    let (pos, line, _) = position_and(explorer, query, Some(&[]))?;
    Ok((pos, line))
}

/// A query's parameters other than `fen` and `moves`, in order.
type Params = Vec<(String, String)>;

/// The position of a query's `fen` and `moves`, and its other parameters (each at most once):
/// with `only` `None`, any other (for the caller to check); else only those named in `only`.
fn position_and(
    explorer: &Explorer,
    query: &str,
    only: Option<&[&str]>,
) -> Result<(Chess, LineName, Params), ApiError> {
    let (mut fen, mut moves) = (None, None);
    let mut rest: Vec<(String, String)> = Vec::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let slot = match name.as_ref() {
            "fen" => &mut fen,
            "moves" => &mut moves,
            other if only.is_none_or(|only| only.contains(&other)) => {
                if rest.iter().any(|(n, _)| n == other) {
                    return Err(ApiError::Repeated(name.into_owned()));
                }
                rest.push((name.into_owned(), value.into_owned()));
                continue;
            }
            _ => return Err(ApiError::UnknownParameter(name.into_owned())),
        };
        if slot.replace(value).is_some() {
            return Err(ApiError::Repeated(name.into_owned()));
        }
    }
    let (pos, line) = position_of(explorer, fen.as_deref(), moves.as_deref())?;
    Ok((pos, line, rest))
}

fn position_of(
    explorer: &Explorer,
    fen: Option<&str>,
    moves: Option<&str>,
) -> Result<(Chess, LineName), ApiError> {
    let pos = match fen {
        Some(fen) => parse_fen(fen)?,
        None => explorer.start.clone(),
    };
    Ok(name_moves(pos, moves.unwrap_or(""))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::{Book, Books};

    fn explorer() -> Explorer {
        let mut books = Books::new();
        books.push(
            "empty.bin",
            Book::from_bytes("empty.bin", Vec::new()).unwrap(),
        );
        Explorer {
            books,
            tally: None,
            games: None,
            practice: None,
            start: Chess::default(),
        }
    }

    #[test]
    fn a_query_names_a_position() {
        let e = explorer();
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(fen_string(&position(&e, "").unwrap().0), start);
        let (after, line) = position(&e, "moves=1.e4+e5+Nf3").unwrap();
        assert_eq!(
            fen_string(&after),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
        );
        assert_eq!(
            line.name().map(|o| o.to_string()).as_deref(),
            Some("C40 King's Knight Opening")
        );
        let fen = "fen=8%2F8%2F8%2F8%2F8%2F8%2F8%2Fk6K+w+-+-+0+1";
        assert_eq!(
            fen_string(&position(&e, fen).unwrap().0),
            "8/8/8/8/8/8/8/k6K w - - 0 1"
        );
    }

    #[test]
    fn bad_queries_are_refused_with_a_reason() {
        let e = explorer();
        let message = |q: &str| position(&e, q).unwrap_err().to_string();
        assert!(message("fen=xyz").starts_with("invalid FEN 'xyz'"));
        assert!(message("moves=e4+e4").starts_with("move 2 'e4' is illegal"));
        assert_eq!(
            message("depth=3"),
            "unknown parameter 'depth' (the parameters are fen and moves)"
        );
        assert_eq!(message("fen=&fen="), "parameter 'fen' given twice");
    }
}
