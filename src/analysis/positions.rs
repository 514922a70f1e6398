//! Extra roots for the walk: the positions of a file (FEN/EPD lines or PGN games' main lines) that
//! the book holds, for books whose positions cannot all be reached by their own moves.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::Path;

use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Position};

use crate::book::{Book, Key};
use crate::position::parse_fen;

/// The positions of the main lines of the PGN games at `path` that `book` holds, each once, in the
/// order first met. A game with a `FEN` tag starts there; an illegal move ends its game.
pub fn book_positions_of_games(path: &Path, book: &Book) -> std::io::Result<Vec<Chess>> {
    let file = std::fs::File::open(path)?;
    let mut visitor = Positions {
        book,
        seen: HashSet::new(),
        out: Vec::new(),
    };
    let mut reader = pgn_reader::Reader::new(std::io::BufReader::new(file));
    loop {
        match reader.read_game(&mut visitor) {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {}
            Err(e) => return Err(e),
        }
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
