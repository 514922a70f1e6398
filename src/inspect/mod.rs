//! Walks over a whole book: its lines per colour, its statistics, and its verification.
//!
//! - [`write_lines`]: the lines for one colour, as `polyglot dump-book` writes them.
//! - [`book_info`]: entries, positions, maximum weight, and the numbers `polyglot info-book` prints.
//! - [`filter_book`]: a book cut down by depth, weight, share, side or reachability.
//! - [`probe_json`]: one position's book moves as the object `probe --json` prints.
//! - [`export_pgn`]: a book's tree from the start position as one PGN game with variations.
//! - [`opening_suite`]: the positions at a range of plies, once each, as opening suites for match
//!   runners, filtered by score, draw rate ([`wdl`], a WDL model), material and popularity.
//! - [`verify()`]: every problem of a file that should be a book (size, order, duplicates, move codes).

mod export;
mod filter;
mod info;
mod lines;
mod opening_suite;
mod polyglot_order;
mod probe_json;
mod verify;
pub mod wdl;

pub use export::{ExportOptions, ExportReport, export_pgn, write_movetext};
pub use filter::{FilterOptions, FilterReport, filter_book};
pub use info::{BookInfo, book_info};
pub use lines::{write_lines, write_named_lines};
pub use opening_suite::{
    Material, SuiteOpening, SuiteOptions, SuiteReport, opening_suite, opening_suite_with,
};
pub use probe_json::{
    BookProbeJson, EntryJson, IllegalJson, ProbeJson, fen_string, probe_json, probe_json_in,
    write_probe_json_line,
};
pub use verify::{
    Problem, ProblemKind, Repeat, VerifyReport, impossible_move, repeated_entries, verify,
};
