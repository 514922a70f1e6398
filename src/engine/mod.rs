//! The chess engine: perft, evaluation, search, and test suites.
//!
//! It knows positions (shakmaty's `Chess`), not books. The search is stoppable through an
//! `Arc<AtomicBool>` and reports each completed iteration through a callback, so that a UCI loop
//! on another thread can drive it.
//!
//! - [`perft`]: move-generation counts.
//! - [`eval`] (with the [`pesto`] tables): the static evaluation.
//! - [`see`]: static exchange evaluation.
//! - [`tt`]: the transposition table.
//! - [`search`]: iterative deepening, PVS, pruning, quiescence; [`search::SearchOptions`] holds
//!   the switches and [`search::Limits`] when to stop.
//! - [`mate`]: the mate search (`go mate N`): is there a mate within N moves?
//! - [`tablebase`]: KQvK and KRvK with distance to mate, generated on first use.
//! - [`suite`]: EPD and PGN test suites (bm, am, dm, matetrack's `bm #N`, mate puzzles).

pub mod eval;
pub mod mate;
pub mod perft;
pub mod pesto;
pub mod search;
pub mod see;
pub mod suite;
pub mod tablebase;
pub mod tt;

pub use search::{Engine, Iteration, Limits, Score, SearchOptions, SearchResult};
