//! Extra roots for the walk (`analyse --positions`): the positions of a file (FEN/EPD lines or PGN
//! games' main lines) that the book holds, for books whose positions cannot all be reached by
//! their own moves.
//!
//! The file is read through `pgn`'s inputs, so it may be compressed (gzip, zstd, bzip2, xz: told by
//! its first bytes). It holds games when its first line (blank lines and `%` escapes left out)
//! starts a tag or `1.`; its games are then read by `pgn`'s reader, game by game as `build` reads
//! them (a game whose tag section breaks is skipped; bad movetext costs that game's rest).
//! Otherwise each line (blank ones and `#` comments left out) is a FEN or an EPD line.

use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Position};

use crate::book::{Book, Key};
use crate::pgn::input::{Chunks, Input};
use crate::position::{EpdLine, parse_fen};
use crate::text::{quote, quote_path, reason};

/// Why the positions file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum PositionsError {
    #[error("cannot open positions file {}: {}", quote_path(.0), reason(.1))]
    Open(PathBuf, io::Error),
    #[error("cannot read positions file {}: {}", quote_path(.0), reason(.1))]
    Read(PathBuf, io::Error),
    /// A line (numbered from 1) that is neither FEN nor EPD.
    #[error("{}: line {line}: not a FEN or EPD line: {}", .path.display(), quote(.text))]
    Line {
        path: PathBuf,
        line: usize,
        text: String,
    },
}

/// The positions of the file at `path` that `book` holds, in file order: each of its FEN or EPD
/// lines, or (a file of games) each position of its games' main lines, once, in the order first
/// met. A game with a `FEN` tag starts there; an illegal move ends its game.
pub fn book_positions(path: &Path, book: &Book) -> Result<Vec<Chess>, PositionsError> {
    let input = Input::File(path.to_path_buf());
    let read_error = |e| PositionsError::Read(path.to_path_buf(), e);
    let mut text = crate::pgn::input::open_text(&input)
        .map_err(|e| PositionsError::Open(path.to_path_buf(), e))?;
    let mut head = Vec::new();
    (&mut text)
        .take(4096)
        .read_to_end(&mut head)
        .map_err(read_error)?;
    if holds_games(&head) {
        return book_positions_of_games(&input, book).map_err(read_error);
    }
    let mut out = Vec::new();
    let lines = BufReader::new(io::Cursor::new(head).chain(text)).lines();
    for (i, line) in lines.enumerate() {
        let line = line.map_err(read_error)?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let pos = EpdLine::parse(t)
            .and_then(|epd| parse_fen(epd.fen).ok())
            .ok_or_else(|| PositionsError::Line {
                path: path.to_path_buf(),
                line: i + 1,
                text: t.to_string(),
            })?;
        if book.contains(Key::of(&pos)) {
            out.push(pos);
        }
    }
    Ok(out)
}

/// Whether a text starting with `head` holds PGN games: its first line that is neither blank nor
/// a `%` escape starts a tag or the first move.
fn holds_games(head: &[u8]) -> bool {
    String::from_utf8_lossy(head)
        .lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with('%'))
        .is_some_and(|l| l.starts_with('[') || l.starts_with("1."))
}

/// The positions of the main lines of the games of `input` that `book` holds, each once, in the
/// order first met.
fn book_positions_of_games(input: &Input, book: &Book) -> io::Result<Vec<Chess>> {
    let mut visitor = Positions {
        book,
        seen: HashSet::new(),
        out: Vec::new(),
    };
    let mut chunks = Chunks::open(input, Default::default(), 1 << 22)?;
    while let Some(chunk) = chunks.next_chunk()? {
        crate::pgn::read::read_games(&chunk, &mut visitor);
    }
    Ok(visitor.out)
}

struct Positions<'a> {
    book: &'a Book,
    seen: HashSet<u64>,
    out: Vec<Chess>,
}

impl Positions<'_> {
    fn keep(&mut self, pos: &Chess) {
        let key = Key::of(pos);
        if self.book.contains(key) && self.seen.insert(key.0) {
            self.out.push(pos.clone());
        }
    }
}

/// A game being read: its position, or `None` once it stopped (a bad FEN, an illegal move).
type Game = Option<Chess>;

impl Visitor for Positions<'_> {
    type Tags = Game;
    type Movetext = Game;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), Game> {
        ControlFlow::Continue(Some(Chess::default()))
    }

    fn tag(&mut self, game: &mut Game, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        if name == b"FEN" {
            *game = parse_fen(&value.decode_utf8_lossy()).ok();
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, game: Game) -> ControlFlow<(), Game> {
        if let Some(pos) = &game {
            self.keep(pos);
        }
        ControlFlow::Continue(game)
    }

    fn san(&mut self, game: &mut Game, san_plus: SanPlus) -> ControlFlow<()> {
        if let Some(pos) = game {
            match san_plus.san.to_move(pos) {
                Ok(mv) => {
                    pos.play_unchecked(mv);
                    let pos = pos.clone();
                    self.keep(&pos);
                }
                Err(_) => *game = None,
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Game) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, _game: Game) {}
}

impl crate::pgn::read::ChunkVisitor for Positions<'_> {
    /// The positions kept so far.
    type Mark = usize;
    fn mark(&mut self) -> usize {
        self.out.len()
    }
    /// The games since the mark are read again: their positions are forgotten (each position
    /// kept is in `seen` and `out` alike).
    fn rewind(&mut self, mark: usize) {
        for pos in self.out.drain(mark..) {
            self.seen.remove(&Key::of(&pos).0);
        }
    }
    fn broken(&mut self, _why: &str) -> bool {
        true
    }
    fn finish(&mut self) {}
}
