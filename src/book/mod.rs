//! The Polyglot book format and nothing more.
//!
//! A Polyglot book is a file of 16-byte big-endian records ([`Entry`]): the Zobrist [`Key`] of a
//! position, a move in Polyglot's encoding ([`RawMove`]), a weight and a learn value, sorted by key
//! (a [`Book`] reads unsorted ones too, and says so: [`Book::disorder`]). [`Books`] tries several
//! books in order, the first with a move for the position giving it. [`Learner`] updates the learn
//! fields as PolyGlot's `BookLearn` does ([`Learn`]). Books in other formats ([`formats`]: Arena's ABK,
//! ChessBase's CTG) are read too: [`Book::open`] tells the format ([`detect_format`]) and converts
//! the book in memory into a sorted Polyglot book, so every command reads one.
//!
//! ```
//! use polybook::book::{Key, RawMove};
//! use shakmaty::Chess;
//!
//! let start = Chess::default();
//! assert_eq!(Key::of(&start).to_string(), "463b96181691fc9c");
//! // e2e4: to = e4 (28), from = e2 (12)
//! assert_eq!(RawMove::from_uci_str("e2e4").unwrap().0, 28 | (12 << 6));
//! ```

mod books;
mod choose;
mod edit;
mod entry;
mod error;
pub mod formats;
mod key;
mod learn;
mod mv;
mod reader;
mod scored;
mod writer;

pub use books::{BOOK_LIST_SEPARATOR, Books, book_paths};
pub use choose::{
    ChooseOptions, PLAIN_VARIETY, Pick, Selection, choose, learned_weight, variety_exponent,
};
pub use edit::{EditAction, EditError, EditReport, edit_book};
pub use entry::{ENTRY_SIZE, Entry};
pub use error::BookError;
pub use formats::abk_write::abk_bytes;
pub use formats::{BookFormat, detect_file as detect_format};
pub use key::{Key, KeyUpdate};
pub use learn::{Learn, LearnChange, LearnResult, Learner};
pub use mv::RawMove;
pub use reader::{Book, BookMove, Disorder, Probe};
pub(crate) use reader::{describe_non_book, open_file, recognise_container, recognise_non_book};
pub use scored::{LearnLayout, MoveScore, SCORED_MARK, score_text};
pub use writer::{BookWriter, sort_entries, write_book, write_book_in};
