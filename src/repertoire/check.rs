//! Games checked against a repertoire book (`polybook check`): for each game, where it left the
//! book and whose move it was, and over all games the biggest gaps (positions reached often where
//! the book has no answer) and the coverage (the share of games still in the book at each ply).
//!
//! A game is walked from its start (the usual position or its `FEN` set-up) along its main line.
//! The book's moves of a position are its entries of weight 1 or more whose move is legal there
//! (the moves a book would play: python-chess's `find_all` with its default minimum weight):
//!
//! - a position with no such move is where the book **ends**;
//! - a move the book does not list for its position is a deviation, by the **player** or the
//!   **opponent** (with a player named; else by **white** or **black**);
//! - a game whose moves all stay in the book never left it (**none**).
//!
//! Transpositions count as the book's own: positions are looked up by their Polyglot key.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Color, EnPassantMode, Position};
use thiserror::Error;

use super::Player;
use crate::book::{Book, Key};
use crate::pgn::input::{Chunks, Input, InputError};
use crate::pgn::read::{ChunkVisitor, read_games};
use crate::pgn::san::play_san;
use crate::pgn::tags::PlayerTags;

/// Who left the book, or how a game ended in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Left {
    /// Every move of the game is a book move.
    None,
    /// The book has no move for the position reached.
    End,
    /// The named player played a move the book does not list.
    Player,
    /// The player's opponent did: the book has no answer prepared for it.
    Opponent,
    /// Without a player named: White played a move the book does not list.
    White,
    /// Without a player named: Black did.
    Black,
}

/// Where one game left the book.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct GameCheck {
    /// The game's number among all the inputs' games, from 1 (skipped games count).
    pub game: u64,
    pub white: String,
    pub black: String,
    /// The moves played before the point where it left (all of them for [`Left::None`]).
    pub ply: u32,
    pub who: Left,
    /// The move played there, in UCI (`None` for [`Left::None`], or where the game ended as the
    /// book did).
    #[serde(rename = "move")]
    pub mv: Option<String>,
    /// The position there (before `move`).
    pub fen: String,
    /// The gap the game reached, if any: where it left the book, the position in which the book
    /// had no answer for the side to move (the player's, with a player named).
    #[serde(skip)]
    pub gap: Option<GapSeen>,
}

/// A gap one game reached: the position and the move played there (`None`: the game ended).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GapSeen {
    pub key: Key,
    pub fen: String,
    pub mv: Option<String>,
}

/// A position reached where the book has no answer for the side to move, over all games.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Gap {
    pub key: String,
    pub fen: String,
    /// The games that reached it.
    pub games: u64,
    /// The moves played there, most frequent first (ties in UCI order): (UCI, games).
    pub moves: Vec<(String, u64)>,
}

/// What `check` found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CheckReport {
    /// Each game checked, in input order.
    #[serde(skip)]
    pub games: Vec<GameCheck>,
    /// Games read, checked, and left out (another variant, a broken set-up, not the player's).
    pub read: u64,
    pub checked: u64,
    pub skipped: u64,
    /// The gaps, most games first (ties by key).
    pub gaps: Vec<Gap>,
    /// `coverage[n]`: the share of the games checked still in the book after `n` moves (a game
    /// that ended in the book counts as in it at every later ply).
    pub coverage: Vec<f64>,
}

/// Why the games could not be checked.
#[derive(Debug, Error)]
pub enum CheckError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("interrupted")]
    Stopped,
}

/// Checks every game of `inputs` against `book` (one thread: the walk is cheap beside the book's
/// lookups). With `player`, only that player's games, from that player's side.
pub fn check_games(
    inputs: &[Input],
    book: &Book,
    player: Option<&Player>,
    progress: &dyn crate::pgn::Progress,
    stop: &AtomicBool,
) -> Result<CheckReport, CheckError> {
    let bytes = Arc::new(AtomicU64::new(0));
    let mut visitor = CheckVisitor {
        book,
        player,
        read: 0,
        checked: Vec::new(),
    };
    for input in inputs {
        let mut chunks = Chunks::open(input, bytes.clone(), 1 << 22)
            .map_err(|e| CheckError::Input(input.read_error(&e)))?;
        while let Some(chunk) = chunks
            .next_chunk()
            .map_err(|e| CheckError::Input(input.read_error(&e)))?
        {
            read_games(&chunk, &mut visitor);
            progress.update(bytes.load(Ordering::Relaxed), visitor.read);
            if stop.load(Ordering::Relaxed) {
                return Err(CheckError::Stopped);
            }
        }
    }
    Ok(visitor.report())
}

struct CheckVisitor<'a> {
    book: &'a Book,
    player: Option<&'a Player>,
    read: u64,
    checked: Vec<GameCheck>,
}

struct Game {
    pos: Chess,
    ply: u32,
    white: String,
    black: String,
    /// The player's colour, with a player named.
    side: Option<Color>,
    /// Where it left the book, once it has.
    left: Option<(u32, Left, Option<String>, String)>,
    /// The gap reached, its move still to be read while `mv` is `None` and the game goes on.
    gap: Option<GapSeen>,
    stopped: bool,
}

impl CheckVisitor<'_> {
    fn report(self) -> CheckReport {
        let checked = self.checked.len() as u64;
        let deepest = self.checked.iter().map(|g| g.ply).max().unwrap_or(0) as usize;
        let coverage = (0..=deepest)
            .map(|n| {
                let still = self
                    .checked
                    .iter()
                    .filter(|g| g.who == Left::None || g.ply as usize >= n)
                    .count();
                still as f64 / checked.max(1) as f64
            })
            .collect();
        let mut counts: HashMap<Key, (String, u64, HashMap<String, u64>)> = HashMap::new();
        for seen in self.checked.iter().filter_map(|g| g.gap.as_ref()) {
            let count = counts
                .entry(seen.key)
                .or_insert_with(|| (seen.fen.clone(), 0, HashMap::new()));
            count.1 += 1;
            if let Some(mv) = &seen.mv {
                *count.2.entry(mv.clone()).or_insert(0) += 1;
            }
        }
        let mut gaps: Vec<Gap> = counts
            .into_iter()
            .map(|(key, (fen, games, moves))| {
                let mut moves: Vec<(String, u64)> = moves.into_iter().collect();
                moves.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                Gap {
                    key: key.to_string(),
                    fen,
                    games,
                    moves,
                }
            })
            .collect();
        gaps.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| a.key.cmp(&b.key)));
        CheckReport {
            read: self.read,
            checked,
            skipped: self.read - checked,
            games: self.checked,
            gaps,
            coverage,
        }
    }

    /// Whether the side to move in `pos` is the one the book answers for at a gap: the player
    /// (with a player named), else either side.
    fn answers_for(game: &Game, pos: &Chess) -> bool {
        game.side.is_none_or(|side| side == pos.turn())
    }

    /// Marks the game's position as a gap if the book answers for its side to move there.
    fn note_gap(game: &mut Game) {
        if Self::answers_for(game, &game.pos) {
            game.gap = Some(GapSeen {
                key: Key::of(&game.pos),
                fen: Fen::from_position(&game.pos, EnPassantMode::Legal).to_string(),
                mv: None,
            });
        }
    }
}

impl Visitor for CheckVisitor<'_> {
    type Tags = PlayerTags;
    type Movetext = Game;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), PlayerTags> {
        self.read += 1;
        ControlFlow::Continue(PlayerTags::default())
    }

    fn tag(&mut self, tags: &mut PlayerTags, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        tags.read(name, value);
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: PlayerTags) -> ControlFlow<(), Game> {
        let side = match self.player {
            None => None,
            Some(p) if p.matches(&tags.white) => Some(Color::White),
            Some(p) if p.matches(&tags.black) => Some(Color::Black),
            Some(_) => return ControlFlow::Break(()),
        };
        let Some(pos) = tags.start.start(true) else {
            return ControlFlow::Break(());
        };
        ControlFlow::Continue(Game {
            pos,
            ply: 0,
            white: tags.white,
            black: tags.black,
            side,
            left: None,
            gap: None,
            stopped: false,
        })
    }

    fn san(&mut self, game: &mut Game, san_plus: SanPlus) -> ControlFlow<()> {
        if game.stopped {
            return ControlFlow::Continue(());
        }
        let Ok(mv) = play_san(san_plus.san, &game.pos) else {
            // An illegal move ends the game where it stands.
            game.stopped = true;
            return ControlFlow::Continue(());
        };
        let uci = UciMove::from_standard(mv).to_string();
        if let Some(gap) = game.gap.as_mut() {
            // The move played at the gap: what the games did where the book is silent.
            gap.mv = Some(uci);
            game.stopped = true;
            return ControlFlow::Continue(());
        }
        if game.left.is_none() {
            let book_moves = self.book.find_all(&game.pos);
            let listed = book_moves
                .iter()
                .filter(|m| m.entry.weight > 0)
                .map(|m| m.mv)
                .collect::<Vec<_>>();
            let fen = Fen::from_position(&game.pos, EnPassantMode::Legal).to_string();
            let who = if listed.is_empty() {
                Some(Left::End)
            } else if !listed.contains(&mv) {
                Some(match (game.side, game.pos.turn()) {
                    (Some(side), turn) if side == turn => Left::Player,
                    (Some(_), _) => Left::Opponent,
                    (None, Color::White) => Left::White,
                    (None, Color::Black) => Left::Black,
                })
            } else {
                None
            };
            if let Some(who) = who {
                game.left = Some((game.ply, who, Some(uci.clone()), fen));
                if who == Left::End {
                    // The book is silent here: this move is the one played at the gap.
                    Self::note_gap(game);
                    if let Some(gap) = game.gap.as_mut() {
                        gap.mv = Some(uci);
                    }
                    game.stopped = true;
                    return ControlFlow::Continue(());
                }
                game.pos.play_unchecked(mv);
                if who == Left::Opponent || game.side.is_none() {
                    // The book's answer to the deviation is missing: a gap, if the book does
                    // not hold the position reached (a transposition back into it is no gap).
                    if self
                        .book
                        .find_all(&game.pos)
                        .iter()
                        .all(|m| m.entry.weight == 0)
                    {
                        Self::note_gap(game);
                    }
                }
                if game.gap.is_none() {
                    game.stopped = true;
                }
                return ControlFlow::Continue(());
            }
        }
        game.pos.play_unchecked(mv);
        game.ply += 1;
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Game) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: Game) {
        let (ply, who, mv, fen) = game.left.unwrap_or_else(|| {
            let fen = Fen::from_position(&game.pos, EnPassantMode::Legal).to_string();
            (game.ply, Left::None, None, fen)
        });
        self.checked.push(GameCheck {
            game: self.read,
            white: game.white,
            black: game.black,
            ply,
            who,
            mv,
            fen,
            gap: game.gap,
        });
    }
}

impl ChunkVisitor for CheckVisitor<'_> {
    type Mark = (u64, usize);

    fn mark(&mut self) -> (u64, usize) {
        (self.read, self.checked.len())
    }

    fn rewind(&mut self, (read, checked): (u64, usize)) {
        self.read = read;
        self.checked.truncate(checked);
    }

    /// A game whose tag section broke is skipped, as `build` skips it.
    fn broken(&mut self, _why: &str) -> bool {
        true
    }

    fn finish(&mut self) {}
}
