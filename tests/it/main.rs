//! The integration tests, one crate (one optimised binary to build and link), a module per
//! subject. The fuzz targets are a crate of their own (`tests/fuzz.rs`).
//!
//! Run one subject with `./test.sh --test it -- build::`; `./test.sh --fast` leaves out the
//! tests that need Spark, Chromium or a long engine match.

#[path = "../common/mod.rs"]
mod common;

mod analyse;
mod arena;
mod book_format;
mod book_tools;
mod build;
mod cli;
mod docs;
mod engine;
mod explore;
mod games;
mod inspect;
mod layers;
mod learn;
mod merge;
mod openings;
mod play;
mod positions;
mod several_books;
mod smp;
mod spark;
mod split;
mod tablebase;
mod tally;
mod tally_range;
mod tally_ratings;
mod threads;
mod tournament;
mod training;
mod tune;
mod uci;
mod uci_book;
mod unsorted_books;
