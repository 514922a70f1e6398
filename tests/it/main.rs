//! The integration tests, one crate (one optimised binary to build and link), a module per
//! subject. The fuzz targets are a crate of their own (`tests/fuzz/`, a file per target).
//!
//! The tiers: `./test.sh` runs everything (CI); `./test.sh --fast` leaves out the tests that need
//! Spark or Chromium and the run of every documented command; `./test.sh --test it -- build::`
//! runs one subject.

#[path = "../common/mod.rs"]
mod common;

mod abk; // Arena (ABK) books: libra8.abk against a Python decoding, `convert` round trips
mod analyse; // `analyse`: the negamax back-up, the cache and resume, scored books against Stockfish
mod arena; // `match` with real engines (Stockfish, crashes, hangs, clocks, the PGN log, SPRT)
mod book_format; // the Polyglot format against the spec's key vectors and python-chess's probe
mod book_tools; // `filter`, `edit`, `export` against python-chess
mod build; // `build` byte for byte against `polyglot make-book`, every option, bad input
mod check; // `check`: where games left a repertoire book, against python-chess game by game
mod cli; // the command line as a whole: closed pipes, signals, exit codes, messages
mod ctg_roundtrip; // CTG books written from docs/formats.md's layout: bytes, round trips, weights, `verify`
mod docs; // the documents against the code: the reference, every README and guide command run
mod engine; // the engine on perft suites, mates, draws, test suites, `bench`
mod exp; // BrainLearn/SugaR experience files: Stockfish's keys against Stockfish, a book through `.exp` and back
mod explore; // `explore`'s JSON API and page over HTTP, and in a real browser
mod formats; // CTG books read by `formats::ctg` against a python-chess reading of the layout
mod games; // `explore GAMES.pgn`: the games explorer's counts against python-chess
mod inspect; // `lines`, `info`, `dump`, `probe`, `verify` against polyglot and python-chess
mod layers; // ARCHITECTURE.md's table of the layers against the uses in `src/`
mod learn; // `learn` against PolyGlot's own book learning
mod match_openings; // `match --openings` (PGN, EPD, order, start) and engines' own books played by the runner
mod match_resume; // `match --resume`: a match and a round robin killed mid-way end as an uninterrupted run
mod merge; // `merge` against `polyglot merge-book`
mod obk; // Chessmaster (OBK) books written by a test encoder: the layout byte for byte, gm2001 round trip, damage
mod openings; // opening names against python-chess and lichess's table
mod play; // `play` driven through its stdin
mod positions; // positions as lichess allows them (setups, odd FENs)
mod practice; // `explore REP.bin --practice`: SM-2 by hand, the API, the progress file, the page in a real browser
mod repertoire; // `repertoire`: books and PGN trees from lichess games against python-chess, tallies, bad input
mod several_books; // several books, first hit wins: `BookFile` lists, `probe`, `match`
mod smp; // Lazy SMP in `search` and UCI; the `bench` signature
mod spark; // the Spark job on `local[2]` and a standalone cluster
mod split; // `split` into parts, each game whole and once
mod spsa; // the tuning build (`--features spsa`): the tunables as UCI options; bench/spsa.py's iterations and resume
mod suite_stats; // `suite-stats`: a match's games per opening of its suite, recounted by python-chess
mod suites; // `export` suites as testers make them: plies, popularity, material, draw rate, shuffle, zip, against python-chess
mod tablebase; // the 3-man tablebase against KRvK1000.epd
mod tally; // `tally`, `tally --merge`, `book`, `probe TALLY` against DuckDB and `build`
mod tally_range; // `tally --range`: the ranges of any cut sum to the whole
mod tally_ratings; // `tally --ratings` against a python-chess recount
mod threads; // every command at 1 to 256 threads and cores: the same output
mod tournament; // `match` with more than two engines
mod training; // `datagen` and `train`: the same labels and net at any thread count, resume
mod tune; // `tune` on real games against a python-chess count
mod uci; // `uci` with real clients (python-chess) and bad input
mod uci_book; // the bots' book options through python-chess (a book per colour, repetitions, width, variety)
mod unsorted_books; // books with keys not fully sorted, as found in the wild
