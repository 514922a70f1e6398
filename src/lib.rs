//! polybook: a Polyglot opening-book toolkit.
//!
//! - [`book`]: the Polyglot format: keys, the move codec, entries, reading, writing and choosing a
//!   move; books in other formats (ABK, CTG) converted into it.
//! - [`pgn`]: reading PGN games: files, folders, compression, stdin, chunks of whole games, the
//!   game-by-game reader, SAN with its lenient readings, the variant rule, `polybook split`.
//! - [`builder`]: PGN games to a book, as `polyglot make-book` does and more.
//! - [`tally`]: exact counts per (position, move) as Parquet files; books and statistics from them.
//! - [`inspect`]: walks over a whole book: lines per colour, statistics, verification.
//! - [`openings`]: opening names (ECO code and name) from lichess's table, by position and by line.
//! - [`position`]: positions and moves from user input (FEN, SAN, UCI, EPD lines).
//! - [`diagram`]: a board drawn for people.
//! - [`engine`]: perft, evaluation, search and test suites.
//! - [`uci`]: the UCI protocol loop around the engine and the book.
//! - [`atomic`]: output files that appear whole, and devices and FIFOs written in place.
//! - [`score_scale`]: the centipawn scale's mate scores, shared by the engine and scored books.
//! - [`text`]: user input quoted in messages, and I/O errors as reasons.
//! - [`cores`]: the core count the default thread counts see (`POLYBOOK_CORES` or the system's).
//! - [`bounded_lines`]: input read one bounded line at a time (the UCI loop, the terminal game).
//! - [`explore`]: the local web server of `polybook explore`: the page, its assets and its JSON API.
//! - [`arena`]: games between engines or against a person: rules, clocks, openings, matches, PGN.
//! - [`analysis`]: a book scored by an engine, the scores backed up its tree (`polybook analyse`).
//! - [`tune`]: Texel's tuning of the evaluation from PGN games.
//! - [`training`]: the net's data (positions labelled by the engine's own search) and its trainer.
//!
//! ARCHITECTURE.md, at the repository's root, is the map: the layers (each module uses only the
//! ones below it), where each command's work lives, and the invariants.

pub mod analysis;
pub mod arena;
pub mod atomic;
pub mod book;
pub mod bounded_lines;
pub mod builder;
pub mod cores;
pub mod diagram;
pub mod engine;
pub mod explore;
pub mod inspect;
pub mod openings;
pub mod pgn;
pub mod position;
pub mod repertoire;
pub mod score_scale;
pub mod tally;
pub mod text;
pub mod training;
pub mod tune;
pub mod uci;
