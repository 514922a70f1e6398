//! Opening books in formats other than Polyglot's, read into polybook's terms (Polyglot keys,
//! shakmaty moves):
//!
//! - [`ctg`]: ChessBase's books (`.ctg` with its `.cto` index and `.ctb` bounds).

pub mod ctg;
