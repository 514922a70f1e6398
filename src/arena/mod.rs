//! Games: the rules and clocks, players (an external UCI engine process, or polybook's own
//! engine run the same way), openings from a book, matches with Elo and SPRT, and PGN output.
//!
//! - [`game`]: one game and the rules that end it; [`clock`]: time controls and clocks.
//! - [`pgn`]: PGN text (tags, result, a game's moves) and PGN files.
//! - [`player`]: a UCI engine process; [`opening`]: openings from EPD and PGN files and walked
//!   from a book; [`learn`]: the books learning from a match's games.
//! - [`runner`]: a match's games, played in parallel and reported as data; [`stats`]: the
//!   match's tally, Elo and SPRT.
//! - [`tournament`]: several engines, in a round robin or a gauntlet, played by the same
//!   runner; [`standings`]: its pairings' tallies and the ranking table.
//! - [`session`]: a match or a tournament from start to end (the event loop, the PGN log, book
//!   learning, the SPRT stop, interruption) and its report; [`resume`]: the games a PGN log
//!   already holds of it, which `--resume` does not play again.
//! - [`play`]: the terminal game against a person.
//! - [`suite_stats`]: what each opening of a suite did in a match's games, and the suite refined
//!   by it.

pub mod clock;
pub mod game;
pub mod learn;
pub mod opening;
pub mod pgn;
pub mod play;
pub mod player;
pub mod resume;
pub mod runner;
pub mod session;
pub mod standings;
pub mod stats;
pub mod suite_stats;
pub mod tournament;
