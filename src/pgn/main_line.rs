//! Each game's main line played move by move, for the readers of positions (`datagen`/`train`'s
//! enumeration, `tune`'s sample): they read a game's start the same way ([`StartTags`]), skip its
//! variations and stop it at its first illegal move, and differ only in what they keep.

use std::ops::ControlFlow;

use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use shakmaty::{Chess, Move, Position};

use super::read::ChunkVisitor;
use super::san::play_san;
use super::tags::StartTags;

/// What a reader of positions does with the games [`MainLines`] reads for it.
pub trait MainLineReader {
    /// What the reader keeps of a game while it is read.
    type Game;
    /// Where the reader's output stands ([`ChunkVisitor::Mark`]).
    type Mark: Copy;
    /// A game begins (before its tags).
    fn begin_game(&mut self);
    /// The game's start position and what to keep of it, from its tags; `None` skips the game.
    fn start(&mut self, tags: StartTags) -> Option<(Chess, Self::Game)>;
    /// A move of the main line, `ply` plies into the game, about to be played in `pos`.
    fn before_move(&mut self, _game: &mut Self::Game, _pos: &Chess, _ply: u32, _mv: Move) {}
    /// A move was played: `pos` is the position after it, `ply` plies into the game.
    fn after_move(&mut self, _game: &mut Self::Game, _pos: &Chess, _ply: u32) {}
    /// The game ends (at its last move, or at the move before an illegal one).
    fn end_game(&mut self, game: Self::Game);
    /// [`ChunkVisitor::mark`].
    fn mark(&mut self) -> Self::Mark;
    /// [`ChunkVisitor::rewind`].
    fn rewind(&mut self, mark: Self::Mark);
}

/// The pgn-reader visitor that reads games for a [`MainLineReader`]. A game whose tag section
/// broke is skipped (as `build` skips it).
pub struct MainLines<R>(pub R);

/// A game being read: where its main line stands, and what the reader keeps of it.
pub struct Line<G> {
    pos: Chess,
    ply: u32,
    /// An illegal move was met: the rest of the game is not read.
    stopped: bool,
    game: G,
}

impl<R: MainLineReader> Visitor for MainLines<R> {
    type Tags = StartTags;
    type Movetext = Line<R::Game>;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), StartTags> {
        self.0.begin_game();
        ControlFlow::Continue(StartTags::default())
    }

    fn tag(&mut self, tags: &mut StartTags, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        tags.read(name, value.as_bytes());
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: StartTags) -> ControlFlow<(), Line<R::Game>> {
        match self.0.start(tags) {
            Some((pos, game)) => ControlFlow::Continue(Line {
                pos,
                ply: 0,
                stopped: false,
                game,
            }),
            None => ControlFlow::Break(()),
        }
    }

    fn san(&mut self, line: &mut Line<R::Game>, san_plus: SanPlus) -> ControlFlow<()> {
        if line.stopped {
            return ControlFlow::Continue(());
        }
        let Ok(mv) = play_san(san_plus.san, &line.pos) else {
            // An illegal move ends the game here; the positions before it still count.
            line.stopped = true;
            return ControlFlow::Continue(());
        };
        self.0.before_move(&mut line.game, &line.pos, line.ply, mv);
        line.pos.play_unchecked(mv);
        line.ply += 1;
        self.0.after_move(&mut line.game, &line.pos, line.ply);
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _line: &mut Line<R::Game>) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, line: Line<R::Game>) {
        self.0.end_game(line.game);
    }
}

impl<R: MainLineReader> ChunkVisitor for MainLines<R> {
    type Mark = R::Mark;
    fn mark(&mut self) -> R::Mark {
        self.0.mark()
    }
    fn rewind(&mut self, mark: R::Mark) {
        self.0.rewind(mark);
    }
    fn broken(&mut self, _why: &str) -> bool {
        true
    }
    fn finish(&mut self) {}
}
