//! The JSON API the page reads, documented in the README for scripts too:
//!
//! - `GET /api/books`: `{"books":[NAME…],"tally":NAME|null,"start":FEN}`, the books in the order
//!   given on the command line, the tally (`--tally`; `null` without one) and the position the page
//!   starts from (`--fen`, or the standard start).
//! - `GET /api/probe?fen=FEN&moves=MOVES`: the position `fen` (default: the start position) after
//!   `moves` (SAN or UCI, separated by spaces; move numbers skipped), and for each book, in order,
//!   exactly the object `probe --json` prints for it with several books: `{"book":NAME,"fen":…,
//!   "key":…,"entries":[…],"illegal":[…]}`. The answer is a JSON array of these objects.
//! - `GET /api/tally?fen=FEN&moves=MOVES`: the same position's games in the tally, exactly the
//!   object `probe TALLY.parquet --json` prints: `{"fen":…,"key":…,"games":N,"moves":[{"uci":…,
//!   "san":…,"games":…,"wins":…,"draws":…,"losses":…,"share":…,"score":…}…],"illegal":[…]}`
//!   (results from the mover's view). Without a tally: `404`.
//!
//! A bad FEN, a move that cannot be played, an unknown or repeated parameter is an [`ApiError`]:
//! the reply is `400` and `{"error":"…"}`, with the same message the command line gives.

use serde::Serialize;
use shakmaty::Chess;
use thiserror::Error;

use super::Explorer;
use crate::inspect::{BookProbeJson, fen_string, probe_json_in};
use crate::openings::{LineName, name_moves};
use crate::position::{PositionError, parse_fen};
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
        start: String,
    }
    let answer = BooksJson {
        books: explorer.books.iter().map(|(name, _)| name).collect(),
        tally: explorer.tally.as_ref().map(|(name, _)| name.as_str()),
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

/// The position a probe query names: `fen` (default: the start position) after `moves`, with the
/// name of that line.
fn position(explorer: &Explorer, query: &str) -> Result<(Chess, LineName), ApiError> {
    let (mut fen, mut moves) = (None, None);
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let slot = match name.as_ref() {
            "fen" => &mut fen,
            "moves" => &mut moves,
            _ => return Err(ApiError::UnknownParameter(name.into_owned())),
        };
        if slot.replace(value).is_some() {
            return Err(ApiError::Repeated(name.into_owned()));
        }
    }
    let pos = match fen {
        Some(fen) => parse_fen(&fen)?,
        None => explorer.start.clone(),
    };
    Ok(name_moves(pos, moves.as_deref().unwrap_or(""))?)
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
