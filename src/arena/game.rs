//! One game: its moves, how it ended, and its PGN.
//!
//! A [`Game`] holds the start position and the moves played, knows when the rules end the game
//! (checkmate, stalemate, threefold repetition, the fifty-move rule, insufficient material) and
//! is written as PGN by [`super::pgn`], with the book moves and the engines'
//! evaluations as comments.

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, EnPassantMode, KnownOutcome, Move, Position};

use crate::engine::hash::hash_of;

/// Why a game ended: the PGN `Termination` tag and a sentence for the final comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Termination {
    Checkmate,
    Stalemate,
    Repetition,
    FiftyMoves,
    InsufficientMaterial,
    /// The side ran out of time.
    TimeForfeit(Color),
    /// The side played an illegal move (the text it sent).
    IllegalMove(Color, String),
    /// The side's engine exited or closed its pipes.
    Crash(Color, String),
    /// The side's engine stopped answering.
    Stall(Color),
    /// The side gave up (a human's `resign`, or resign adjudication).
    Resignation(Color),
    /// Adjudicated from the engines' scores.
    Adjudication(String),
    /// Both sides agreed to a draw.
    Agreement,
    /// The game was stopped before it ended (Ctrl-C, a quit).
    Unterminated,
}

impl Termination {
    /// Every value [`Termination::tag`] gives.
    pub const TAGS: [&'static str; 7] = [
        "normal",
        "time forfeit",
        "illegal move",
        "abandoned",
        "stalled connection",
        "adjudication",
        "unterminated",
    ];

    /// The value of the PGN `Termination` tag (the PGN standard's words where one fits).
    pub fn tag(&self) -> &'static str {
        match self {
            Termination::Checkmate
            | Termination::Stalemate
            | Termination::Repetition
            | Termination::FiftyMoves
            | Termination::InsufficientMaterial
            | Termination::Resignation(_)
            | Termination::Agreement => "normal",
            Termination::TimeForfeit(_) => "time forfeit",
            Termination::IllegalMove(..) => "illegal move",
            Termination::Crash(..) => "abandoned",
            Termination::Stall(_) => "stalled connection",
            Termination::Adjudication(_) => "adjudication",
            Termination::Unterminated => "unterminated",
        }
    }

    /// A sentence saying what happened, for people (the PGN's last comment).
    pub fn describe(&self, outcome: Option<KnownOutcome>) -> String {
        let name = |c: &Color| if c.is_white() { "White" } else { "Black" };
        match self {
            Termination::Checkmate => match outcome {
                Some(KnownOutcome::Decisive { winner }) => format!("{} mates", name(&winner)),
                _ => "checkmate".to_string(),
            },
            Termination::Stalemate => "Draw by stalemate".to_string(),
            Termination::Repetition => "Draw by threefold repetition".to_string(),
            Termination::FiftyMoves => "Draw by the fifty-move rule".to_string(),
            Termination::InsufficientMaterial => "Draw by insufficient material".to_string(),
            Termination::TimeForfeit(c) => format!("{} loses on time", name(c)),
            Termination::IllegalMove(c, text) => {
                format!("{} loses by an illegal move: {text}", name(c))
            }
            Termination::Crash(c, why) => format!("{}'s engine crashed: {why}", name(c)),
            Termination::Stall(c) => format!("{}'s engine stopped answering", name(c)),
            Termination::Resignation(c) => format!("{} resigns", name(c)),
            Termination::Adjudication(why) => format!("Adjudication: {why}"),
            Termination::Agreement => "Draw by agreement".to_string(),
            Termination::Unterminated => "Game not finished".to_string(),
        }
    }

    /// The outcome this termination gives, when it decides one by itself (a forfeit or a
    /// resignation: the other side wins).
    pub fn loser(&self) -> Option<Color> {
        match self {
            Termination::TimeForfeit(c)
            | Termination::IllegalMove(c, _)
            | Termination::Crash(c, _)
            | Termination::Stall(c)
            | Termination::Resignation(c) => Some(*c),
            _ => None,
        }
    }
}

/// A move of the game, with what the PGN says about it.
#[derive(Clone, Debug)]
pub struct PlayedMove {
    pub mv: Move,
    /// Its SAN with the check suffix, in the position it was played in.
    pub san: String,
    /// A comment after the move: `book`, or an engine's `+0.35/12 0.52s`.
    pub comment: Option<String>,
}

/// A game in progress or finished.
#[derive(Clone, Debug)]
pub struct Game {
    start: Chess,
    /// The start position's FEN when it is not the standard start (for the `FEN` tag).
    start_fen: Option<String>,
    position: Chess,
    moves: Vec<PlayedMove>,
    /// The key of every position so far, the start included: the same for the same position
    /// under the repetition rule (see [`crate::engine::hash`]).
    hashes: Vec<u64>,
    /// How the game ended, once it has.
    pub end: Option<(Option<KnownOutcome>, Termination)>,
}

impl Game {
    /// A game from `start`.
    pub fn new(start: Chess) -> Game {
        let start_fen = (start != Chess::default())
            .then(|| Fen::from_position(&start, EnPassantMode::Legal).to_string());
        Game {
            hashes: vec![hash_of(&start)],
            position: start.clone(),
            start,
            start_fen,
            moves: Vec::new(),
            end: None,
        }
    }

    /// The position now.
    pub fn position(&self) -> &Chess {
        &self.position
    }

    /// The position the game started from.
    pub fn start(&self) -> &Chess {
        &self.start
    }

    /// The start position's FEN when it is not the standard start.
    pub fn start_fen(&self) -> Option<&str> {
        self.start_fen.as_deref()
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[PlayedMove] {
        &self.moves
    }

    /// The repetition hashes of the positions so far, oldest first (what an engine's search
    /// takes to see repetitions).
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Plays a legal move (the caller has checked it) with an optional comment.
    pub fn play(&mut self, mv: Move, comment: Option<String>) {
        let san = SanPlus::from_move(self.position.clone(), mv).to_string();
        self.position.play_unchecked(mv);
        self.hashes.push(hash_of(&self.position));
        self.moves.push(PlayedMove { mv, san, comment });
    }

    /// Takes back the last move; `false` when there is none.
    pub fn undo(&mut self) -> bool {
        if self.moves.pop().is_none() {
            return false;
        }
        self.hashes.pop();
        let mut pos = self.start.clone();
        for m in &self.moves {
            pos.play_unchecked(m.mv);
        }
        self.position = pos;
        self.end = None;
        true
    }

    /// The moves in UCI, as a `position ... moves` command lists them.
    pub fn uci_moves(&self) -> Vec<String> {
        self.moves
            .iter()
            .map(|m| m.mv.to_uci(shakmaty::CastlingMode::Standard).to_string())
            .collect()
    }

    /// The end the rules give the position now, if any: checkmate, stalemate, insufficient
    /// material, the fifty-move rule, threefold repetition (each applied as soon as it holds).
    pub fn ended_by_rules(&self) -> Option<(Option<KnownOutcome>, Termination)> {
        let pos = &self.position;
        if pos.is_checkmate() {
            let winner = !pos.turn();
            return Some((
                Some(KnownOutcome::Decisive { winner }),
                Termination::Checkmate,
            ));
        }
        if pos.is_stalemate() {
            return Some((Some(KnownOutcome::Draw), Termination::Stalemate));
        }
        if pos.is_insufficient_material() {
            return Some((Some(KnownOutcome::Draw), Termination::InsufficientMaterial));
        }
        if pos.halfmoves() >= 100 {
            return Some((Some(KnownOutcome::Draw), Termination::FiftyMoves));
        }
        if self.repetitions() >= 3 {
            return Some((Some(KnownOutcome::Draw), Termination::Repetition));
        }
        None
    }

    /// How many times the position now has occurred (1 the first time).
    pub fn repetitions(&self) -> usize {
        let now = self.hashes[self.hashes.len() - 1];
        // Only positions since the last capture or pawn move can repeat the one now.
        let reversible = (self.position.halfmoves() as usize).min(self.hashes.len() - 1);
        self.hashes[self.hashes.len() - 1 - reversible..]
            .iter()
            .rev()
            .step_by(2)
            .filter(|&&h| h == now)
            .count()
    }

    /// Ends the game.
    pub fn finish(&mut self, outcome: Option<KnownOutcome>, why: Termination) {
        self.end = Some((outcome, why));
    }

    /// Ends the game by a forfeit or resignation of `why.loser()`.
    pub fn forfeit(&mut self, why: Termination) {
        let outcome = why.loser().map(|c| KnownOutcome::Decisive { winner: !c });
        self.end = Some((outcome, why));
    }

    /// The result string: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn result(&self) -> &'static str {
        result_text(self.end.as_ref().and_then(|(o, _)| *o))
    }
}

/// The PGN result string of an outcome (`*` for none).
pub fn result_text(outcome: Option<KnownOutcome>) -> &'static str {
    match outcome {
        Some(KnownOutcome::Decisive {
            winner: Color::White,
        }) => "1-0",
        Some(KnownOutcome::Decisive {
            winner: Color::Black,
        }) => "0-1",
        Some(KnownOutcome::Draw) => "1/2-1/2",
        None => "*",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{parse_fen, parse_move};

    fn play(game: &mut Game, moves: &str) {
        for text in moves.split_whitespace() {
            let m = parse_move(game.position(), text).unwrap();
            game.play(m, None);
        }
    }

    #[test]
    fn the_rules_end_games() {
        let mut g = Game::new(Chess::default());
        play(&mut g, "f3 e5 g4 Qh4");
        let (o, why) = g.ended_by_rules().unwrap();
        assert_eq!(why, Termination::Checkmate);
        assert_eq!(
            o,
            Some(KnownOutcome::Decisive {
                winner: Color::Black
            })
        );

        // Knights out and back twice: the start position occurs a third time.
        let mut g = Game::new(Chess::default());
        play(&mut g, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1");
        assert_eq!(g.ended_by_rules(), None);
        play(&mut g, "Ng8");
        assert_eq!(g.ended_by_rules().unwrap().1, Termination::Repetition);
        assert!(g.undo());
        assert_eq!(g.ended_by_rules(), None);

        let g = Game::new(parse_fen("8/8/8/4k3/8/8/8/4K1N1 w - - 0 1").unwrap());
        assert_eq!(
            g.ended_by_rules().unwrap().1,
            Termination::InsufficientMaterial
        );
        let g = Game::new(parse_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap());
        assert_eq!(g.ended_by_rules().unwrap().1, Termination::Stalemate);
        let g = Game::new(parse_fen("7k/8/6K1/8/8/8/8/R7 w - - 100 80").unwrap());
        assert_eq!(g.ended_by_rules().unwrap().1, Termination::FiftyMoves);
    }

    #[test]
    fn pgn_from_a_fen_with_comments() {
        let mut g = Game::new(parse_fen("7k/8/6K1/8/8/8/8/R7 b - - 0 40").unwrap());
        play(&mut g, "Kg8");
        let m = parse_move(g.position(), "Ra8").unwrap();
        g.play(m, Some("+M1/1 0.01s".to_string()));
        let end = g.ended_by_rules().unwrap();
        g.finish(end.0, end.1);
        let pgn = crate::arena::pgn::game_text(&g, &[("Event", "Test".to_string())]);
        assert!(
            pgn.contains("[FEN \"7k/8/6K1/8/8/8/8/R7 b - - 0 40\"]"),
            "{pgn}"
        );
        assert!(pgn.contains("[PlyCount \"2\"]"), "{pgn}");
        assert!(
            pgn.contains("40... Kg8 41. Ra8# {+M1/1 0.01s} {White mates} 1-0"),
            "{pgn}"
        );
    }
}
