//! Walks over a whole book: its lines per colour, its statistics, and its verification.
//!
//! - [`write_lines`]: the lines for one colour, as `polyglot dump-book` writes them.
//! - [`book_info`]: entries, positions, maximum weight, and the numbers `polyglot info-book` prints.
//! - [`verify()`]: every problem of a file that should be a book (size, order, duplicates, move codes).

mod info;
mod lines;
mod polyglot_order;
mod verify;

pub use info::{BookInfo, book_info};
pub use lines::write_lines;
pub use verify::{Problem, ProblemKind, VerifyReport, impossible_move, verify};
