//! `polybook explore`: the book in the browser. A small local web server that serves one page (a
//! board and, beside it, the book moves of its position) and the JSON API the page reads.
//!
//! - [`assets`]: the page's files (HTML, the bundled script and style sheet), compiled into the
//!   binary: no request ever reaches the filesystem, and nothing is fetched from the internet.
//! - [`api`]: the JSON answers: `/api/books` (the books, the tally and the start position),
//!   `/api/probe?fen=…&moves=…` (for each book, exactly the object `probe --json` prints) and
//!   `/api/tally?fen=…&moves=…` (the position's games from the tally, the object
//!   `probe TALLY.parquet --json` prints), `/api/games?fen=…&moves=…&FILTERS` (the position's moves
//!   in the games that pass the filters: `repertoire`) and `/api/game?id=…` (one game whole);
//!   when practising, `/api/practice/state?fen=…&moves=…` (whose move it is, the opponent's
//!   move, the cards) and `POST /api/practice/answer` (a move graded).
//! - [`practice`]: practising a repertoire book (`--practice white|black`): the opponent's move,
//!   SM-2's schedule per position, the progress file.
//! - [`routes`]: a request's method and path to a reply; every path not listed is a 404; on
//!   loopback, a request addressed to another name is a 403 (no DNS rebinding).
//! - [`server`]: the HTTP server, a connection loop of its own (the request heads parsed by
//!   `httparse`): a thread per connection up to a cap, a deadline on every wait, bounded input,
//!   and a clean stop.
//!
//! Read-only but for the practice: the books and the games are read once, when the command
//! starts, and only they (and the tally's rows, looked up by key) are served; the one file
//! written is the practice's progress file, after each graded answer.

pub mod api;
pub mod assets;
pub mod practice;
pub mod routes;
pub mod server;

pub use practice::Practice;
pub use routes::{Reply, Request, route, route_request};
pub use server::{ExploreError, Limits, Server};

use std::sync::Mutex;

use shakmaty::Chess;

use crate::book::Books;
use crate::repertoire::Index;
use crate::tally::TallyLookup;

/// What the server answers from: the books named on the command line, in order, the tally (its
/// name and the tallies summed), if one was given, the games (their inputs' names and their
/// index), if any were given, the practice (`--practice`: of the first book) and the position
/// the page starts from.
pub struct Explorer {
    pub books: Books,
    pub tally: Option<(String, Mutex<TallyLookup>)>,
    pub games: Option<(String, Index)>,
    pub practice: Option<Practice>,
    pub start: Chess,
}
