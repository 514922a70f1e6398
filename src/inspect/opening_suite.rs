//! Opening suites from a book: `polybook export --epd/--pgn --ply N`.
//!
//! The positions that lines of book moves reach from the start position in exactly `ply` plies,
//! each once, for match runners (fastchess and cutechess `-openings file=… format=epd|pgn`) as
//! suites such as UHO are made. Lines follow the moves that count (weight 1 or more) and pass
//! `min_share` (the share rule of [`ChooseOptions::shares`]), heaviest first and stored order
//! among equals; a position is listed where the first such line (depth first) reaches it, so the
//! order is stable: the same book gives the same suite.
//!
//! On a book with scores (`polybook analyse`), a position's evaluation is the score of the book
//! move that leads to it, turned to White's view: after the back-up every move into a position
//! carries minus its value, so the line does not matter. `min_eval`/`max_eval` keep the positions
//! whose evaluation lies in the window (both ends included); a position reached only by moves
//! without a score has no evaluation and is left out when a window is asked for.

use std::collections::HashSet;

use shakmaty::fen::Epd;
use shakmaty::{Chess, Color, EnPassantMode, Move, Position};

use crate::book::{Book, ChooseOptions, Key, MoveScore};

/// Which positions a suite holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuiteOptions {
    /// The plies from the start position.
    pub ply: u32,
    /// Follow only the moves whose share, in percent, is at least this.
    pub min_share: f64,
    /// Keep the positions whose evaluation (centipawns, White's view) is at least this.
    pub min_eval: Option<i32>,
    /// Keep the positions whose evaluation (centipawns, White's view) is at most this.
    pub max_eval: Option<i32>,
}

/// One opening of a suite: a position at the suite's ply and the line that reaches it (not the
/// lichess name of an opening, [`crate::openings::Opening`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteOpening {
    /// The first line of book moves that reaches it.
    pub line: Vec<Move>,
    pub position: Chess,
    /// The score of the book move into it, centipawns from White's view (`None`: no score).
    pub eval: Option<i32>,
}

impl SuiteOpening {
    /// The position as EPD: its first four FEN fields.
    pub fn epd(&self) -> String {
        Epd::from_position(&self.position, EnPassantMode::Legal).to_string()
    }
}

/// What a suite holds and what it left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SuiteReport {
    /// The openings in the suite.
    pub openings: u64,
    /// Distinct positions at the ply, before the evaluation window.
    pub positions_at_ply: u64,
    /// Left out: an evaluation outside the window.
    pub outside_window: u64,
    /// Left out: no evaluation to judge by (only with a window).
    pub unscored: u64,
}

/// The suite of `book` at `options.ply`, in its stable order.
pub fn opening_suite(book: &Book, options: &SuiteOptions) -> (Vec<SuiteOpening>, SuiteReport) {
    let mut walk = SuiteWalk {
        book,
        options,
        choose: ChooseOptions::default(),
        expanded: HashSet::new(),
        seen: HashSet::new(),
        line: Vec::new(),
        openings: Vec::new(),
        report: SuiteReport::default(),
    };
    let start = Chess::default();
    let eval = (options.ply == 0)
        .then(|| {
            book.find_all(&start)
                .iter()
                .filter_map(|m| MoveScore::from_learn(m.entry.learn))
                .map(|s| i32::from(s.score))
                .max()
        })
        .flatten();
    walk.visit(&start, 0, eval);
    walk.report.openings = walk.openings.len() as u64;
    (walk.openings, walk.report)
}

struct SuiteWalk<'a> {
    book: &'a Book,
    options: &'a SuiteOptions,
    choose: ChooseOptions,
    /// (key, ply) pairs already walked below: their subtrees are the same whatever the line.
    expanded: HashSet<(u64, u32)>,
    /// The EPDs already listed.
    seen: HashSet<String>,
    line: Vec<Move>,
    openings: Vec<SuiteOpening>,
    report: SuiteReport,
}

impl SuiteWalk<'_> {
    /// `pos` at `ply`, reached with `eval` (White's view).
    fn visit(&mut self, pos: &Chess, ply: u32, eval: Option<i32>) {
        if ply == self.options.ply {
            self.list(pos, eval);
            return;
        }
        if !self.expanded.insert((Key::of(pos).0, ply)) {
            return;
        }
        let moves = self.book.find_all(pos);
        let shares = self.choose.shares(&moves);
        let mut next: Vec<_> = moves
            .iter()
            .zip(shares)
            .filter(|(m, share)| self.choose.counts(m) && share * 100.0 >= self.options.min_share)
            .map(|(m, _)| m)
            .collect();
        next.sort_by_key(|m| std::cmp::Reverse(m.entry.weight));
        for m in next {
            let after = pos.clone().play(m.mv).expect("a legal move");
            let eval = MoveScore::from_learn(m.entry.learn).map(|s| {
                let s = i32::from(s.score);
                if pos.turn() == Color::White { s } else { -s }
            });
            self.line.push(m.mv);
            self.visit(&after, ply + 1, eval);
            self.line.pop();
        }
    }

    fn list(&mut self, pos: &Chess, eval: Option<i32>) {
        let opening = SuiteOpening {
            line: self.line.clone(),
            position: pos.clone(),
            eval,
        };
        if !self.seen.insert(opening.epd()) {
            return;
        }
        self.report.positions_at_ply += 1;
        let window = self.options.min_eval.is_some() || self.options.max_eval.is_some();
        if window {
            let Some(e) = eval else {
                self.report.unscored += 1;
                return;
            };
            if self.options.min_eval.is_some_and(|lo| e < lo)
                || self.options.max_eval.is_some_and(|hi| e > hi)
            {
                self.report.outside_window += 1;
                return;
            }
        }
        self.openings.push(opening);
    }
}
