//! Reading PGN: the one way every command that reads games reads them (`build`, `tally`, `learn`,
//! `split`, the games explorer, `datagen`/`train`, `tune`), so that they agree on what a game is.
//!
//! ```text
//! files, folders, stdin ─► input ─► chunks of whole games ─► read ─► a ChunkVisitor per chunk
//!   (plain, gz, zst, bz2, xz)          (cut at game starts)     (game by game)
//! ```
//!
//! Where each part lives:
//! - `input`: the inputs (files, folders, stdin; compressed or not) and the rule of where a game
//!   starts ([`input::next_game_start`]), by which they are cut into chunks of whole games.
//! - `read`: the games of a chunk read one by one through a [`read::ChunkVisitor`], so that a
//!   game reads the same whatever chunk holds it and whatever its neighbours are.
//! - `san`: SAN to the move it names, with the lenient readings other readers accept
//!   ([`san::play_san`]).
//! - `tags`: what the readers read in the tags alike: the variant rule, the date.
//! - `main_line`: each game's main line played move by move for a reader of positions
//!   (`datagen`/`train`, `tune`), which keeps what it wants of it.
//! - `reorder`: results of parallel workers put back in input order.
//! - `split`: an input cut into zstd-compressed parts of N games at the same game starts
//!   (`polybook split`).
//!
//! What a reader does with a game (which games count, what it keeps of them) is its own: the
//! build's visitor lives in `builder`, the index's in `repertoire`, and so on.

pub mod input;
pub mod main_line;
pub mod read;
pub mod reorder;
pub mod san;
pub mod split;
pub mod tags;

/// Progress as games are read: raw input bytes read so far, games parsed so far.
pub trait Progress: Sync {
    fn update(&self, bytes: u64, games: u64);
}

impl Progress for () {
    fn update(&self, _bytes: u64, _games: u64) {}
}
