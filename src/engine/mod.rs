//! The chess engine: perft, evaluation, search, and test suites.
//!
//! It knows positions (shakmaty's `Chess`), not books. The search is stoppable through an
//! `Arc<AtomicBool>` and reports each completed iteration through a callback, so that a UCI loop
//! on another thread can drive it.
//!
//! The leaves, which use nothing else of the engine:
//! - [`score`]: the score scale (`MATE_CP`, `MATE_BOUND_CP`, `MAX_PLY`), mate distances, the
//!   transposition table's ply adjustment, and [`Score`] as UCI and people read it.
//! - [`hash`]: the position key, for the tables and the repetition rule alike.
//! - [`packed_move`]: a move in 16 bits, as the tables store it.
//! - [`options`]: [`SearchOptions`] (the switches, listed once for UCI and `--set`) and [`Limits`].
//! - [`time`]: time management, how long to think from the clock.
//! - `parameters`: the search's tuned margins, depth limits and reductions, one documented
//!   constant each (read by `negamax` and by `search`'s aspiration windows).
//!
//! Built on them:
//! - [`perft`]: move-generation counts.
//! - [`eval`] (with the [`pesto`] tables): the static evaluation.
//! - [`see`]: static exchange evaluation.
//! - [`tt`]: the transposition table.
//! - `ordering`: move ordering (killers, the history heuristic, the move picker).
//! - `correction`: correction history, the static evaluation corrected by the search's results.
//! - `spite_check`: H.G. Muller's spite-check analogy (experimental).
//! - `movegen`: quiescence's moves (captures and queen promotions) without the quiet ones, and
//!   whether a move gives check, before it is made.
//! - `negamax`: the tree search: PVS with its pruning steps, and quiescence.
//! - [`search`]: the [`Engine`]: iterative deepening with aspiration windows, Lazy SMP's helper
//!   threads (`Threads`), and the root's hand-overs to the tablebase and the mate search.
//! - [`mate`]: the mate search (`go mate N`): is there a mate within N moves?
//! - [`tablebase`]: KQvK and KRvK with distance to mate, generated on first use.
//! - [`suite`]: EPD and PGN test suites (bm, am, dm, matetrack's `bm #N`, mate puzzles).

mod correction;
pub mod eval;
pub mod hash;
pub mod mate;
mod movegen;
mod negamax;
pub mod nnue;
pub mod options;
mod ordering;
pub mod packed_move;
pub mod parameters;
pub mod perft;
pub mod pesto;
pub mod score;
pub mod search;
pub mod see;
mod spite_check;
pub mod suite;
pub mod tablebase;
pub mod time;
pub mod tt;

pub use options::{Limits, SearchOptions};
pub use score::Score;
pub use search::{Engine, Iteration, SearchResult};
