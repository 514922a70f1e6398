//! Opening suites from a book: `polybook export --epd/--pgn --plies A-B` (`--ply N` is `N-N`).
//!
//! The positions that lines of book moves reach from the start position at any ply from `first_ply`
//! to `last_ply`, each once, for match runners (fastchess and cutechess `-openings file=…
//! format=epd|pgn`) as suites such as UHO are made. Lines follow the moves that count (weight 1 or
//! more) and pass `min_share` (the share rule of [`ChooseOptions::shares`]), heaviest first and
//! stored order among equals; a position is listed where the first such line (depth first, the
//! position before the positions below it) reaches it, so the order is stable: the same book gives
//! the same suite. A position is one whatever the move order and the ply: two lines that reach
//! the same Polyglot key and the same four EPD fields give one opening, the first line's.
//!
//! On a book with scores (`polybook analyse`), a position's evaluation is the score of the book
//! move that leads to it, turned to White's view: after the back-up every move into a position
//! carries minus its value, so the line does not matter. `min_eval`/`max_eval` keep the positions
//! whose evaluation lies in the window (both ends included), `draw_rate` those whose draw rate by
//! a WDL model ([`super::wdl`]) lies in its window; a position reached only by moves without a
//! score has no evaluation and is left out when either window is asked for. `material` keeps the
//! positions with at least the pieces it names ([`Material`]), and a popularity callback (the
//! games of a tally through the position) keeps those seen in at least `min_games` games.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use shakmaty::fen::Epd;
use shakmaty::{ByColor, ByRole, Chess, Color, EnPassantMode, Move, Position, Role};

use super::wdl::WdlModel;
use crate::book::{Book, ChooseOptions, Key, MoveScore};

/// Which positions a suite holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuiteOptions {
    /// The first ply from the start position at which positions are listed.
    pub first_ply: u32,
    /// The last ply (at least `first_ply`); lines are followed no further.
    pub last_ply: u32,
    /// Follow only the moves whose share, in percent, is at least this.
    pub min_share: f64,
    /// Keep the positions whose evaluation (centipawns, White's view) is at least this.
    pub min_eval: Option<i32>,
    /// Keep the positions whose evaluation (centipawns, White's view) is at most this.
    pub max_eval: Option<i32>,
    /// Keep the positions whose draw rate by `draw_model`, in percent, lies in this window (both
    /// ends included).
    pub draw_rate: Option<(f64, f64)>,
    /// The WDL model of `draw_rate` (default: [`WdlModel::SELFPLAY`]).
    pub draw_model: WdlModel,
    /// Keep the positions with at least these pieces.
    pub material: Option<Material>,
    /// Keep the positions whose popularity (see [`opening_suite_with`]) is at least this.
    pub min_games: Option<u64>,
}

/// A material filter: at least so many pieces of each colour and kind (`--material`).
///
/// Written as piece letters as in FEN, each letter one piece that must be on the board (white in
/// upper case, black in lower case; a letter twice: two of them), or `queens` for `Qq` (both
/// queens on the board, as testers' suites often require). `Qq` keeps the positions with a
/// white queen and a black queen; `RRrr` those with both rooks of each side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Material {
    /// The least count of each piece, by colour and role.
    least: ByColor<ByRole<u8>>,
    spec: String,
}

impl Material {
    /// Whether `pos` has at least the pieces required.
    pub fn allows(&self, pos: &Chess) -> bool {
        let board = pos.board();
        Color::ALL.iter().all(|&color| {
            Role::ALL.iter().all(|&role| {
                let n = (board.by_color(color) & board.by_role(role)).count();
                n >= usize::from(*self.least.get(color).get(role))
            })
        })
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec)
    }
}

impl FromStr for Material {
    type Err = String;

    fn from_str(spec: &str) -> Result<Material, String> {
        let letters = if spec == "queens" { "Qq" } else { spec };
        let mut least: ByColor<ByRole<u8>> = ByColor::default();
        for c in letters.chars() {
            let piece = shakmaty::Piece::from_char(c).ok_or_else(|| {
                format!(
                    "unknown --material {spec:?}: give piece letters as in FEN (Qq: a queen each, RRrr: two rooks each) or 'queens'"
                )
            })?;
            let n = least.get_mut(piece.color).get_mut(piece.role);
            *n = n.saturating_add(1);
        }
        if letters.is_empty() {
            return Err(
                "unknown --material \"\": give piece letters as in FEN (Qq: a queen each) or 'queens'"
                    .to_string(),
            );
        }
        Ok(Material {
            least,
            spec: spec.to_string(),
        })
    }
}

/// One opening of a suite: a position in the suite's plies and the line that reaches it (not the
/// lichess name of an opening, [`crate::openings::Opening`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteOpening {
    /// The first line of book moves that reaches it.
    pub line: Vec<Move>,
    pub position: Chess,
    /// The score of the book move into it, centipawns from White's view (`None`: no score).
    pub eval: Option<i32>,
    /// Its popularity when a popularity was asked for (`min_games`), else `None`.
    pub games: Option<u64>,
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
    /// Distinct positions in the plies, before the filters.
    pub positions_at_ply: u64,
    /// Left out: an evaluation outside the window.
    pub outside_window: u64,
    /// Left out: no evaluation to judge by (only with a window).
    pub unscored: u64,
    /// Left out: a draw rate outside `draw_rate`'s window.
    #[serde(skip_serializing_if = "is_zero")]
    pub outside_draw_rate: u64,
    /// Left out: fewer pieces than `material` requires.
    #[serde(skip_serializing_if = "is_zero")]
    pub material: u64,
    /// Left out: fewer games than `min_games`.
    #[serde(skip_serializing_if = "is_zero")]
    pub fewer_games: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The suite of `book` at `options`' plies, in its stable order (no popularity filter).
pub fn opening_suite(book: &Book, options: &SuiteOptions) -> (Vec<SuiteOpening>, SuiteReport) {
    opening_suite_with(book, options, &mut |_| 0)
}

/// The suite of `book` at `options`' plies, in its stable order; `games(pos)` is a position's
/// popularity, asked only with `min_games` and only of the positions that passed the other
/// filters.
pub fn opening_suite_with(
    book: &Book,
    options: &SuiteOptions,
    games: &mut dyn FnMut(&Chess) -> u64,
) -> (Vec<SuiteOpening>, SuiteReport) {
    let mut walk = SuiteWalk {
        book,
        options,
        games,
        choose: ChooseOptions::default(),
        expanded: HashSet::new(),
        seen: HashSet::new(),
        line: Vec::new(),
        openings: Vec::new(),
        report: SuiteReport::default(),
    };
    let start = Chess::default();
    let eval = (options.first_ply == 0)
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
    games: &'a mut dyn FnMut(&Chess) -> u64,
    choose: ChooseOptions,
    /// (key, ply) pairs already walked below: their subtrees are the same whatever the line.
    expanded: HashSet<(u64, u32)>,
    /// The positions already listed: Polyglot key and EPD.
    seen: HashSet<(u64, String)>,
    line: Vec<Move>,
    openings: Vec<SuiteOpening>,
    report: SuiteReport,
}

impl SuiteWalk<'_> {
    /// `pos` at `ply`, reached with `eval` (White's view).
    fn visit(&mut self, pos: &Chess, ply: u32, eval: Option<i32>) {
        if ply >= self.options.first_ply {
            self.list(pos, eval);
        }
        if ply >= self.options.last_ply {
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
        let mut opening = SuiteOpening {
            line: self.line.clone(),
            position: pos.clone(),
            eval,
            games: None,
        };
        if !self.seen.insert((Key::of(pos).0, opening.epd())) {
            return;
        }
        let options = self.options;
        self.report.positions_at_ply += 1;
        let window = options.min_eval.is_some() || options.max_eval.is_some();
        if window || options.draw_rate.is_some() {
            let Some(e) = eval else {
                self.report.unscored += 1;
                return;
            };
            if options.min_eval.is_some_and(|lo| e < lo)
                || options.max_eval.is_some_and(|hi| e > hi)
            {
                self.report.outside_window += 1;
                return;
            }
            if let Some((lo, hi)) = options.draw_rate {
                let draw = 100.0 * options.draw_model.draw(f64::from(e));
                if draw < lo || draw > hi {
                    self.report.outside_draw_rate += 1;
                    return;
                }
            }
        }
        if options.material.as_ref().is_some_and(|m| !m.allows(pos)) {
            self.report.material += 1;
            return;
        }
        if let Some(least) = options.min_games {
            let games = (self.games)(pos);
            if games < least {
                self.report.fewer_games += 1;
                return;
            }
            opening.games = Some(games);
        }
        self.openings.push(opening);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_specs() {
        let queens: Material = "queens".parse().unwrap();
        assert_eq!(
            queens,
            Material {
                spec: "queens".into(),
                ..("Qq".parse().unwrap())
            }
        );
        let start = Chess::default();
        assert!(queens.allows(&start));
        assert!("RRrrQq".parse::<Material>().unwrap().allows(&start));
        assert!(!"QQ".parse::<Material>().unwrap().allows(&start));
        let no_black_queen: Chess = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        assert!(!queens.allows(&no_black_queen));
        assert!("Q".parse::<Material>().unwrap().allows(&no_black_queen));
        for bad in ["", "queen", "Qx", "both"] {
            let e = bad.parse::<Material>().unwrap_err();
            assert!(e.starts_with("unknown --material"), "{e}");
        }
    }
}
