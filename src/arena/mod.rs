//! Games: the rules and clocks, players (an external UCI engine process, or polybook's own
//! engine run the same way), openings from a book, matches with Elo and SPRT, and PGN output.

pub mod clock;
pub mod game;
pub mod opening;
pub mod pgn;
pub mod play;
pub mod player;
pub mod runner;
pub mod stats;
