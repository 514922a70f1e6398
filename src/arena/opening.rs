//! Openings for a match: start positions from a file of FEN/EPD lines, or lines of moves from
//! the games of a PGN file (cut at a number of plies), put in the order the match plays them; and
//! walks through books from a start position (several books: at each ply the first with a move
//! that counts gives it).

use std::ops::ControlFlow;

use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use shakmaty::san::{San, SanError};
use shakmaty::{Chess, Move, Position};
use thiserror::Error;

use crate::book::{Books, ChooseOptions};
use crate::position::{EpdLine, PositionError, fen_of, parse_fen};

/// Why an openings file gives no start positions.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OpeningsError {
    /// A line (1-based) is not a position.
    #[error("line {line}: {error}")]
    BadLine { line: usize, error: PositionError },
    #[error("no positions (one FEN or EPD a line)")]
    Empty,
    /// A game (1-based) of a PGN file has a `FEN` tag that is not a position, or a move that
    /// cannot be played (within the plies taken).
    #[error("game {game}: {error}")]
    BadGame { game: usize, error: PositionError },
    /// The PGN text cannot be read past some point.
    #[error("game {game}: {why}")]
    BadPgn { game: usize, why: String },
    #[error("no games")]
    NoGames,
}

/// One opening of an openings file: where it starts and the moves played from there (none for
/// a FEN or EPD line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartLine {
    pub start: Chess,
    pub moves: Vec<Move>,
}

impl From<Chess> for StartLine {
    /// A start position with no moves.
    fn from(start: Chess) -> StartLine {
        StartLine {
            start,
            moves: Vec::new(),
        }
    }
}

/// The order a match plays the openings of a file in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// File order.
    #[default]
    Sequential,
    /// A shuffle of the file, seeded by the match's seed.
    Random,
}

/// The openings in the order the match plays them: `Random` shuffles them with `seed` first;
/// then they start from the `first`-th (1-based, counted past the end from the first again) and
/// go on from there, wrapping around, as cutechess's and fastchess's `start=N`.
///
/// ```
/// use polybook::arena::opening::{Order, StartLine, arrange};
/// use shakmaty::{Chess, Position};
///
/// let lines: Vec<StartLine> = (1..=3)
///     .map(|n| {
///         let pos = Chess::default();
///         let m = pos.legal_moves()[n];
///         StartLine { start: pos, moves: vec![m] }
///     })
///     .collect();
/// let from_third = arrange(lines.clone(), Order::Sequential, 3, 0);
/// assert_eq!(from_third, [lines[2].clone(), lines[0].clone(), lines[1].clone()]);
/// // Start 5 of 3 is the second.
/// assert_eq!(arrange(lines.clone(), Order::Sequential, 5, 0)[0], lines[1]);
/// ```
pub fn arrange(mut lines: Vec<StartLine>, order: Order, first: usize, seed: u64) -> Vec<StartLine> {
    if order == Order::Random {
        lines.shuffle(&mut StdRng::seed_from_u64(seed));
    }
    if !lines.is_empty() {
        let skip = first.saturating_sub(1) % lines.len();
        lines.rotate_left(skip);
    }
    lines
}

/// The openings of a PGN file: each game's start (its `FEN` tag, else the standard start) and
/// its first `plies` moves (all of them when `None`); variations and comments are left out. Every
/// game must read and every move taken must be legal: the first that is not is the error, named
/// by its game's number (1-based) and the move's.
pub fn parse_pgn_openings(
    text: &[u8],
    plies: Option<usize>,
) -> Result<Vec<StartLine>, OpeningsError> {
    let mut reader = pgn_reader::Reader::build(text)
        .set_supported_tag_line_length(text.len().max(1))
        .finish();
    let mut visitor = PgnOpenings {
        plies,
        games: 0,
        lines: Vec::new(),
        error: None,
    };
    loop {
        match reader.read_game(&mut visitor) {
            Ok(Some(())) => {}
            Ok(None) => break,
            Err(e) => {
                return Err(OpeningsError::BadPgn {
                    game: visitor.games.max(1),
                    why: e.to_string(),
                });
            }
        }
        if let Some(error) = visitor.error.take() {
            return Err(error);
        }
    }
    if visitor.lines.is_empty() {
        return Err(OpeningsError::NoGames);
    }
    Ok(visitor.lines)
}

/// The pgn-reader visitor of [`parse_pgn_openings`]: a line per game, the first error kept.
struct PgnOpenings {
    plies: Option<usize>,
    /// Games begun so far (the current game's number).
    games: usize,
    lines: Vec<StartLine>,
    error: Option<OpeningsError>,
}

/// A game being read: its line so far, where it stands, and whether it is done (cut at the
/// plies taken, or broken).
struct PgnLine {
    line: StartLine,
    pos: Chess,
    done: bool,
}

impl PgnOpenings {
    /// Keeps the first error, of the current game.
    fn fail(&mut self, error: PositionError) {
        if self.error.is_none() {
            self.error = Some(OpeningsError::BadGame {
                game: self.games,
                error,
            });
        }
    }
}

impl Visitor for PgnOpenings {
    type Tags = Option<String>;
    type Movetext = PgnLine;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), Option<String>> {
        self.games += 1;
        ControlFlow::Continue(None)
    }

    fn tag(&mut self, fen: &mut Option<String>, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        if name == b"FEN" {
            *fen = Some(value.decode_utf8_lossy().into_owned());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, fen: Option<String>) -> ControlFlow<(), PgnLine> {
        let start = match fen.as_deref().map(parse_fen) {
            None => Chess::default(),
            Some(Ok(pos)) => pos,
            Some(Err(e)) => {
                self.fail(e);
                Chess::default()
            }
        };
        ControlFlow::Continue(PgnLine {
            pos: start.clone(),
            line: start.into(),
            done: self.error.is_some(),
        })
    }

    fn san(&mut self, game: &mut PgnLine, san_plus: SanPlus) -> ControlFlow<()> {
        if game.done || self.plies.is_some_and(|p| game.line.moves.len() >= p) {
            game.done = true;
            return ControlFlow::Continue(());
        }
        let played = match san_plus.san {
            San::Null => Err("a null move"),
            san => san.to_move(&game.pos).map_err(|e| match e {
                SanError::AmbiguousSan => "ambiguous",
                SanError::IllegalSan => "illegal",
            }),
        };
        match played {
            Ok(m) => {
                game.pos.play_unchecked(m);
                game.line.moves.push(m);
            }
            Err(why) => {
                game.done = true;
                let error = PositionError::BadMove {
                    number: game.line.moves.len() + 1,
                    text: san_plus.to_string(),
                    why,
                    fen: fen_of(&game.pos),
                };
                self.fail(error);
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut PgnLine) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: PgnLine) {
        if self.error.is_none() {
            self.lines.push(game.line);
        }
    }
}

/// The start positions of an openings file: one FEN or EPD a line (EPD operations ignored,
/// blank lines and `#` comments skipped; see [`EpdLine`]). Every line must be a position.
pub fn parse_openings(text: &str) -> Result<Vec<StartLine>, OpeningsError> {
    let mut starts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(epd) = EpdLine::parse(line) else {
            continue;
        };
        let fen = epd.fields().collect::<Vec<_>>().join(" ");
        let pos = parse_fen(&fen).map_err(|error| OpeningsError::BadLine { line: i + 1, error })?;
        starts.push(pos.into());
    }
    if starts.is_empty() {
        return Err(OpeningsError::Empty);
    }
    Ok(starts)
}

/// Walks `books` from `start` for up to `plies` plies, choosing each move with `options` in the
/// first book that has an eligible move there ([`Books::pick`]); stops early where no book has
/// one (or the game is over).
pub fn book_walk<R: Rng + ?Sized>(
    books: &Books,
    start: &Chess,
    plies: usize,
    options: &ChooseOptions,
    rng: &mut R,
) -> Vec<Move> {
    let mut pos = start.clone();
    let mut moves = Vec::new();
    while moves.len() < plies && !pos.is_game_over() {
        let Some((_, pick)) = books.pick(&pos, options, rng) else {
            break;
        };
        pos.play_unchecked(pick.book_move.mv);
        moves.push(pick.book_move.mv);
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openings_are_fen_or_epd_lines() {
        let text = "# two openings\n\n\
            rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
            8/8/8/8/8/8/8/k6K w - - bm Kg2; id \"x\";\n";
        let starts = parse_openings(text).unwrap();
        assert_eq!(starts.len(), 2);
        assert!(starts[0].start.turn().is_black());
        assert_eq!(parse_openings("# nothing\n"), Err(OpeningsError::Empty));
        let bad = parse_openings("8/8/8/8/8/8/8/k6K w - -\nnot a fen\n").unwrap_err();
        assert!(
            matches!(bad, OpeningsError::BadLine { line: 2, .. }),
            "{bad}"
        );
    }

    #[test]
    fn pgn_openings_are_cut_at_plies_and_start_at_their_fen() {
        let text = b"[Event \"a\"]\n\n1. e4 {a comment} e5 (1... c5) 2. Nf3 Nc6 1-0\n\n\
            [FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\n1. O-O Kd7 *\n";
        let all = parse_pgn_openings(text, None).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].moves.len(), 4);
        assert_eq!(all[1].moves.len(), 2);
        assert_eq!(fen_of(&all[1].start), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        let cut = parse_pgn_openings(text, Some(3)).unwrap();
        assert_eq!(cut[0].moves[..], all[0].moves[..3]);
        assert_eq!(cut[1].moves, all[1].moves);
    }

    #[test]
    fn a_bad_pgn_opening_names_its_game_and_move() {
        let text = b"1. e4 e5 *\n\n1. d4 d5 2. Ke3 Nf6 *\n";
        let e = parse_pgn_openings(text, None).unwrap_err();
        assert!(
            matches!(
                &e,
                OpeningsError::BadGame {
                    game: 2,
                    error: PositionError::BadMove { number: 3, .. }
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("game 2: move 3 'Ke3' is illegal in "),
            "{e}"
        );
        // A bad move past the plies taken is not read.
        assert_eq!(parse_pgn_openings(text, Some(2)).unwrap().len(), 2);
        let bad_fen = parse_pgn_openings(b"[FEN \"8/8/8 w - -\"]\n\n*\n", None).unwrap_err();
        assert!(
            bad_fen.to_string().starts_with("game 1: invalid FEN"),
            "{bad_fen}"
        );
        assert_eq!(parse_pgn_openings(b"\n", None), Err(OpeningsError::NoGames));
    }

    #[test]
    fn random_order_is_a_seeded_shuffle_then_the_start() {
        let lines: Vec<StartLine> = Chess::default()
            .legal_moves()
            .iter()
            .map(|m| StartLine {
                start: Chess::default(),
                moves: vec![*m],
            })
            .collect();
        let shuffled = arrange(lines.clone(), Order::Random, 1, 7);
        assert_eq!(shuffled, arrange(lines.clone(), Order::Random, 1, 7));
        assert_ne!(shuffled, lines, "20 lines in file order after a shuffle");
        let mut sorted = shuffled.clone();
        sorted.sort_by_key(|l| lines.iter().position(|x| x == l));
        assert_eq!(sorted, lines, "a permutation");
        let from_fourth = arrange(lines.clone(), Order::Random, 4 + 20, 7);
        assert_eq!(from_fourth[0], shuffled[3]);
        assert_eq!(from_fourth[17], shuffled[0]);
    }
}
