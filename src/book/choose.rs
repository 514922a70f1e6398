//! Picking a book move: the best, a weighted random or a uniform random one, and the share of
//! each move.
//!
//! This is the one place that decides which book moves may be played and how likely each is: the
//! UCI engine, `play`, `match` and `probe` all go through [`ChooseOptions`] (or [`Book::pick`],
//! which probes and picks in one call). The names follow python-chess's `chess.polyglot`:
//! `find_all`, `weighted_choice`, `minimum_weight`, `exclude_moves`.
//!
//! **The share rule.** The moves that *count* are the legal book moves whose weight is at least
//! the minimum weight and that are not excluded. A move that counts has the share
//! `weight / (sum of the weights of the moves that count)`; a move that does not count has share
//! 0. When the moves that count all weigh 0 (possible only with a minimum weight of 0), a
//! weighted pick is uniform, and so each has the share `1 / (number of moves that count)`. The
//! shares are the probabilities of a weighted pick, as in python-chess's `weighted_choice`.
//!
//! **The `learned` selection** picks at random in proportion to each move's *learned weight*,
//! its weight times its learned score as PolyGlot's `BookLearn` stores it ([`Learn`]), with one
//! drawn game added to every move so that a move without games keeps half its weight and one bad
//! game does not rule a move out:
//!
//! ```text
//! learned weight = weight × (score_sum + 1) / (2 × games + 2)
//! ```
//!
//! (`score_sum` counts 2 a win, 1 a draw; so a move never played weighs `weight × 1/2`, one won
//! in 10 of 10 games `weight × 21/22`, one lost in 10 of 10 `weight × 1/22`.) Which moves count is
//! the same rule; with this selection a move's share is its learned weight over the sum of the
//! learned weights of the moves that count.
//!
//! **Candidates.** Of the moves that count, only the *candidates* may be picked: those whose share
//! is at least [`ChooseOptions::min_share`] percent, and of them the [`ChooseOptions::width`]
//! heaviest (0: all; equal weights keep the stored order). Shares stay the share rule's.
//!
//! **Variety** ([`ChooseOptions::variety`], WinBoard's "Book Variation", 0 to 100) bends the
//! [`Selection::Weighted`] pick: each candidate is drawn in proportion to `weight ^ exponent`,
//!
//! ```text
//! exponent = (100 - variety) / 50   for variety 50..=100   (50: 1, the weights; 100: 0, uniform)
//! exponent = 50 / variety           for variety 1..50      (25: 2, 10: 5, 1: 50)
//! variety 0                         the heaviest candidate (the first stored on ties)
//! ```
//!
//! so that `v` and `100 - v` have reciprocal exponents, and the further below 50, the more the
//! heaviest move dominates. Variety 50 is the plain weighted pick, draw for draw.

use std::collections::HashSet;
use std::str::FromStr;

use rand::Rng;
use shakmaty::{Move, Position};

use super::{Book, BookMove, Key, Learn, LearnLayout, MoveScore};

/// How to pick among a position's book moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Selection {
    /// The highest weight; the first stored on ties.
    Best,
    /// At random, in proportion to weight.
    #[default]
    Weighted,
    /// At random, each eligible move equally likely.
    Uniform,
    /// At random, in proportion to weight times learned score (see the module's overview).
    Learned,
    /// The best-scored move of a scored book (`polybook analyse`; see [`super::MoveScore`]), ties
    /// going to the heavier; with a [`ChooseOptions::max_loss`] above 0, a weighted pick among the
    /// moves within that many centipawns of the best. A book without scores is picked from as
    /// [`Selection::Weighted`].
    Score,
}

/// A move's weight as the `learned` selection sees it: `weight × (score_sum + 1) / (2 × games
/// + 2)`, its weight times its learned score with one drawn game added.
pub fn learned_weight(m: &BookMove) -> f64 {
    let learn = Learn::from_raw(m.entry.learn);
    f64::from(m.entry.weight) * (f64::from(learn.score_sum) + 1.0)
        / (2.0 * f64::from(learn.games) + 2.0)
}

impl FromStr for Selection {
    type Err = String;

    fn from_str(s: &str) -> Result<Selection, String> {
        let quoted = crate::text::quote(s);
        // `best_move`, `weighted_random` and `uniform_random` are the bots' words (lichess-bot's
        // and BotLi's `selection`).
        match s.to_ascii_lowercase().as_str() {
            "best" | "best_move" => Ok(Selection::Best),
            "weighted" | "weight" | "random" | "weighted_random" => Ok(Selection::Weighted),
            "uniform" | "uniform_random" => Ok(Selection::Uniform),
            "learned" | "learn" => Ok(Selection::Learned),
            "score" | "scored" => Ok(Selection::Score),
            _ => Err(format!(
                "unknown book selection {quoted}: expected best, weighted, uniform, learned or score"
            )),
        }
    }
}

/// Which book moves count, and how to pick one of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChooseOptions {
    pub selection: Selection,
    /// Moves with a smaller weight never count (python-chess's `minimum_weight`, default 1).
    pub minimum_weight: u16,
    /// Moves that never count (python-chess's `exclude_moves`).
    pub exclude_moves: Vec<Move>,
    /// With [`Selection::Score`]: the centipawns a move may lose against the best-scored one and
    /// still be picked (UCI `BookMaxLoss`); 0 plays the best.
    pub max_loss: u16,
    /// Only the this many heaviest moves that count are candidates (UCI `BookWidth`); 0: all.
    pub width: usize,
    /// Moves whose share is below this percentage are not candidates (UCI `BookMinShare`).
    pub min_share: u8,
    /// Moves whose weight is below this percentage of the heaviest counting move's are not
    /// candidates (UCI `BookMinPercentOfBest`; lichess-bot's `min_weight` with
    /// `normalization: max`).
    pub min_percent_of_best: u8,
    /// WinBoard's book variation, 0 to 100, for [`Selection::Weighted`] (UCI `BookVariety`; see
    /// the module's overview): 50 is the weights as they are.
    pub variety: u8,
}

/// The variety of the plain weighted pick.
pub const PLAIN_VARIETY: u8 = 50;

impl Default for ChooseOptions {
    fn default() -> Self {
        ChooseOptions {
            selection: Selection::Weighted,
            minimum_weight: 1,
            exclude_moves: Vec::new(),
            max_loss: 0,
            width: 0,
            min_share: 0,
            min_percent_of_best: 0,
            variety: PLAIN_VARIETY,
        }
    }
}

/// The exponent a variety raises the weights to (see the module's overview); `None` for
/// variety 0, the heaviest move alone. Varieties above 100 are 100.
pub fn variety_exponent(variety: u8) -> Option<f64> {
    match variety.min(100) {
        0 => None,
        v if v >= PLAIN_VARIETY => Some(f64::from(100 - v) / 50.0),
        v => Some(50.0 / f64::from(v)),
    }
}

/// A book move picked for a position, with its share (see the module's share rule).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pick {
    pub book_move: BookMove,
    /// The picked move's share, from 0 to 1.
    pub share: f64,
}

impl ChooseOptions {
    /// Whether `m` counts: heavy enough and not excluded.
    pub fn counts(&self, m: &BookMove) -> bool {
        m.entry.weight >= self.minimum_weight && !self.exclude_moves.contains(&m.mv)
    }

    /// The sum of the weights of the moves that count.
    pub fn total_weight(&self, moves: &[BookMove]) -> u64 {
        moves
            .iter()
            .filter(|m| self.counts(m))
            .map(|m| u64::from(m.entry.weight))
            .sum()
    }

    /// The share of each of `moves` (the legal book moves of a position), in order, from 0 to 1:
    /// the one share rule of the module's overview (of the learned weights with
    /// [`Selection::Learned`]).
    pub fn shares(&self, moves: &[BookMove]) -> Vec<f64> {
        match self.selection {
            Selection::Learned => self.shares_by(moves, learned_weight),
            _ => self.shares_by(moves, |m| f64::from(m.entry.weight)),
        }
    }

    /// Each move's `weight` (its book weight, or its learned weight with [`Selection::Learned`])
    /// over the sum of the weights of the moves that count (equal shares when they are all 0; 0
    /// for a move that does not count).
    fn shares_by(&self, moves: &[BookMove], weight: impl Fn(&BookMove) -> f64) -> Vec<f64> {
        let total: f64 = moves.iter().filter(|m| self.counts(m)).map(&weight).sum();
        let counted = moves.iter().filter(|m| self.counts(m)).count();
        moves
            .iter()
            .map(|m| match self.counts(m) {
                false => 0.0,
                true if total == 0.0 => 1.0 / counted as f64,
                true => weight(m) / total,
            })
            .collect()
    }

    /// [`ChooseOptions::pick`] for the moves of a book whose learn fields are read as `layout`:
    /// [`Selection::Score`] picks by score from a scored book (and by weight from another).
    pub fn pick_in<R: Rng + ?Sized>(
        &self,
        moves: &[BookMove],
        layout: LearnLayout,
        rng: &mut R,
    ) -> Option<Pick> {
        if self.selection != Selection::Score || layout != LearnLayout::Scored {
            return self.pick(moves, rng);
        }
        let scored: Vec<(usize, i32)> = self
            .candidates(moves)
            .into_iter()
            .filter_map(|i| {
                MoveScore::from_learn(moves[i].entry.learn).map(|s| (i, i32::from(s.score)))
            })
            .collect();
        let Some(best) = scored.iter().map(|&(_, s)| s).max() else {
            // No move of this position has a score: by weight.
            return self.pick(moves, rng);
        };
        // Among the moves within the margin of the best: the heaviest (no margin) or a weighted
        // pick, by the same rules as the other selections.
        let candidates: Vec<BookMove> = scored
            .iter()
            .filter(|&&(_, s)| s >= best - i32::from(self.max_loss))
            .map(|&(i, _)| moves[i])
            .collect();
        let among = ChooseOptions {
            selection: if self.max_loss == 0 {
                Selection::Best
            } else {
                Selection::Weighted
            },
            minimum_weight: 0,
            ..ChooseOptions::default()
        };
        among.pick(&candidates, rng)
    }

    /// Picks one of `moves` (the legal book moves of a position) with its share, or `None` when
    /// no move counts.
    pub fn pick<R: Rng + ?Sized>(&self, moves: &[BookMove], rng: &mut R) -> Option<Pick> {
        let index = self.pick_index(moves, rng)?;
        Some(Pick {
            book_move: moves[index],
            share: self.shares(moves)[index],
        })
    }

    /// The indices in `moves` of the candidates (see the module's overview), in stored order.
    pub fn candidates(&self, moves: &[BookMove]) -> Vec<usize> {
        let shares = self.weight_shares(moves);
        let heaviest = moves
            .iter()
            .filter(|m| self.counts(m))
            .map(|m| u64::from(m.entry.weight))
            .max()
            .unwrap_or(0);
        let mut candidates: Vec<usize> = (0..moves.len())
            .filter(|&i| self.counts(&moves[i]))
            .filter(|&i| shares[i] * 100.0 >= f64::from(self.min_share))
            .filter(|&i| {
                100 * u64::from(moves[i].entry.weight)
                    >= u64::from(self.min_percent_of_best) * heaviest
            })
            .collect();
        if self.width > 0 && candidates.len() > self.width {
            // The heaviest first (a stable sort keeps the stored order of equal weights), cut
            // to the width, then back in stored order.
            candidates.sort_by_key(|&i| std::cmp::Reverse(moves[i].entry.weight));
            candidates.truncate(self.width);
            candidates.sort_unstable();
        }
        candidates
    }

    /// The share of each move by weight (the share rule without learning), for
    /// [`ChooseOptions::min_share`].
    fn weight_shares(&self, moves: &[BookMove]) -> Vec<f64> {
        ChooseOptions {
            selection: Selection::Weighted,
            ..self.clone()
        }
        .shares(moves)
    }

    /// The index in `moves` of the move [`ChooseOptions::pick`] picks.
    fn pick_index<R: Rng + ?Sized>(&self, moves: &[BookMove], rng: &mut R) -> Option<usize> {
        let eligible = self.candidates(moves);
        if eligible.is_empty() {
            return None;
        }
        let weight = |i: usize| u64::from(moves[i].entry.weight);
        let total: u64 = eligible.iter().map(|&i| weight(i)).sum();
        let bent = self.selection == Selection::Weighted && self.variety != PLAIN_VARIETY;
        match self.selection {
            Selection::Weighted if bent => match variety_exponent(self.variety) {
                None => {
                    let best = eligible.iter().map(|&i| weight(i)).max()?;
                    eligible.into_iter().find(|&i| weight(i) == best)
                }
                Some(exponent) => {
                    // Weights over the heaviest, so that no power overflows.
                    let max = eligible.iter().map(|&i| weight(i)).max()?.max(1) as f64;
                    let bent: Vec<f64> = eligible
                        .iter()
                        .map(|&i| (weight(i) as f64 / max).powf(exponent))
                        .collect();
                    Some(eligible[draw(&bent, rng)])
                }
            },
            Selection::Best => {
                let best = eligible.iter().map(|&i| weight(i)).max()?;
                eligible.into_iter().find(|&i| weight(i) == best)
            }
            Selection::Uniform => Some(eligible[rng.random_range(0..eligible.len())]),
            Selection::Learned => {
                let learned: Vec<f64> = eligible
                    .iter()
                    .map(|&i| learned_weight(&moves[i]))
                    .collect();
                Some(eligible[draw(&learned, rng)])
            }
            // Every move that counts weighs 0: python-chess has nothing to draw from; here
            // (possible only with a minimum weight of 0) the pick is uniform.
            Selection::Weighted | Selection::Score if total == 0 => {
                Some(eligible[rng.random_range(0..eligible.len())])
            }
            // python-chess's `weighted_choice`: a ticket below the total, and the move whose
            // running sum of weights passes it. (A score pick without scores is by weight.)
            Selection::Weighted | Selection::Score => {
                let mut ticket = rng.random_range(0..total);
                eligible.into_iter().find(|&i| {
                    if ticket < weight(i) {
                        true
                    } else {
                        ticket -= weight(i);
                        false
                    }
                })
            }
        }
    }
}

/// The index of a draw in proportion to `weights` (not empty): a ticket below their total, and
/// the one whose running sum passes it (the last if rounding leaves the ticket past them all);
/// uniform when they are all 0.
fn draw<R: Rng + ?Sized>(weights: &[f64], rng: &mut R) -> usize {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 || !total.is_finite() {
        return rng.random_range(0..weights.len());
    }
    let mut ticket = rng.random_range(0.0..total);
    weights
        .iter()
        .position(|&w| {
            if ticket < w {
                true
            } else {
                ticket -= w;
                false
            }
        })
        .unwrap_or(weights.len() - 1)
}

/// Picks one of `moves` (the legal book moves of a position), or `None` when none counts: the
/// move of [`ChooseOptions::pick`] without its share.
pub fn choose<R: Rng + ?Sized>(
    moves: &[BookMove],
    options: &ChooseOptions,
    rng: &mut R,
) -> Option<BookMove> {
    options.pick(moves, rng).map(|p| p.book_move)
}

impl Book {
    /// Probes `pos` and picks one of its legal book moves with `options`, with the move's share;
    /// `None` when no book move counts.
    pub fn pick<P: Position, R: Rng + ?Sized>(
        &self,
        pos: &P,
        options: &ChooseOptions,
        rng: &mut R,
    ) -> Option<Pick> {
        options.pick_in(&self.find_all(pos), self.learn_layout(), rng)
    }

    /// Whether this book holds a line of at least `plies` book moves from `pos` on: each legal
    /// and at least `minimum_weight`, each from the position the one before leads to (UCI
    /// `BookMinLinePlies`). Each position is looked at once per number of plies still wanted.
    pub fn has_line<P: Position + Clone>(&self, pos: &P, plies: u32, minimum_weight: u16) -> bool {
        let mut seen = HashSet::new();
        self.line_from(pos, plies, minimum_weight, &mut seen)
    }

    /// [`Book::has_line`], knowing that the (key, plies) pairs of `failed` have no such line.
    fn line_from<P: Position + Clone>(
        &self,
        pos: &P,
        plies: u32,
        minimum_weight: u16,
        failed: &mut HashSet<(Key, u32)>,
    ) -> bool {
        if plies == 0 {
            return true;
        }
        let key = Key::of(pos);
        if failed.contains(&(key, plies)) {
            return false;
        }
        let found = self
            .find_all(pos)
            .iter()
            .filter(|m| m.entry.weight >= minimum_weight)
            .any(|m| {
                let mut next = pos.clone();
                next.play_unchecked(m.mv);
                self.line_from(&next, plies - 1, minimum_weight, failed)
            });
        if !found {
            failed.insert((key, plies));
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::{Entry, Key, RawMove};
    use rand::SeedableRng;
    use rand::rngs::StdRng;
    use shakmaty::{Chess, Position};

    fn moves(weights: &[u16]) -> Vec<BookMove> {
        let pos = Chess::default();
        pos.legal_moves()
            .iter()
            .zip(weights)
            .map(|(&mv, &weight)| BookMove {
                entry: Entry {
                    key: Key(0),
                    mv: RawMove::from_move(mv).unwrap(),
                    weight,
                    learn: 0,
                },
                mv,
            })
            .collect()
    }

    #[test]
    fn best_takes_the_first_of_equal_weights() {
        let m = moves(&[3, 7, 7, 1]);
        let opts = ChooseOptions {
            selection: Selection::Best,
            ..Default::default()
        };
        assert_eq!(choose(&m, &opts, &mut rand::rng()).unwrap(), m[1]);
        let opts = ChooseOptions {
            exclude_moves: vec![m[1].mv],
            ..opts
        };
        assert_eq!(choose(&m, &opts, &mut rand::rng()).unwrap(), m[2]);
    }

    #[test]
    fn weighted_follows_the_weights() {
        let m = moves(&[1, 3, 0]);
        let mut rng = StdRng::seed_from_u64(7);
        let mut counts = [0; 3];
        for _ in 0..4000 {
            let pick = choose(&m, &ChooseOptions::default(), &mut rng).unwrap();
            counts[m.iter().position(|x| *x == pick).unwrap()] += 1;
        }
        assert_eq!(counts[2], 0, "weight 0 is below the default minimum weight");
        assert!((2700..3300).contains(&counts[1]), "{counts:?}");
    }

    #[test]
    fn shares_count_only_the_moves_that_count() {
        let m = moves(&[1, 3, 0, 4]);
        let opts = ChooseOptions::default();
        assert_eq!(opts.shares(&m), [0.125, 0.375, 0.0, 0.5]);
        let opts = ChooseOptions {
            minimum_weight: 2,
            exclude_moves: vec![m[3].mv],
            ..opts
        };
        assert_eq!(opts.shares(&m), [0.0, 1.0, 0.0, 0.0]);
        let pick = opts.pick(&m, &mut rand::rng()).unwrap();
        assert_eq!((pick.book_move, pick.share), (m[1], 1.0));
        // All weights 0: nothing counts by default; with a minimum weight of 0, equal shares.
        let zero = moves(&[0, 0]);
        assert_eq!(ChooseOptions::default().shares(&zero), [0.0, 0.0]);
        let opts = ChooseOptions {
            minimum_weight: 0,
            ..Default::default()
        };
        assert_eq!(opts.shares(&zero), [0.5, 0.5]);
        assert_eq!(opts.pick(&zero, &mut rand::rng()).unwrap().share, 0.5);
    }

    #[test]
    fn learned_follows_weight_times_learned_score() {
        let mut m = moves(&[10, 10, 10]);
        // 10 wins of 10, never played, 10 losses of 10: 21/22, 1/2 and 1/22 of the weight.
        m[0].entry.learn = Learn {
            games: 10,
            score_sum: 20,
        }
        .to_raw();
        m[2].entry.learn = Learn {
            games: 10,
            score_sum: 0,
        }
        .to_raw();
        assert_eq!(learned_weight(&m[0]), 10.0 * 21.0 / 22.0);
        assert_eq!(learned_weight(&m[1]), 5.0);
        assert_eq!(learned_weight(&m[2]), 10.0 / 22.0);
        let opts = ChooseOptions {
            selection: Selection::Learned,
            ..Default::default()
        };
        let shares = opts.shares(&m);
        let total: f64 = (0..3).map(|i| learned_weight(&m[i])).sum();
        assert!((shares[1] - 5.0 / total).abs() < 1e-12, "{shares:?}");
        let mut rng = StdRng::seed_from_u64(11);
        let mut counts = [0; 3];
        for _ in 0..6000 {
            let pick = opts.pick(&m, &mut rng).unwrap();
            counts[m.iter().position(|x| *x == pick.book_move).unwrap()] += 1;
        }
        for i in 0..3 {
            let expected = 6000.0 * shares[i];
            assert!(
                (f64::from(counts[i]) - expected).abs() < 4.0 * expected.sqrt() + 5.0,
                "{counts:?} {shares:?}"
            );
        }
        assert_eq!("Learned".parse::<Selection>(), Ok(Selection::Learned));
    }

    #[test]
    fn the_variety_curve() {
        // 50 is the weights, 100 uniform, 0 the heaviest alone; v and 100 - v are reciprocal.
        assert_eq!(variety_exponent(50), Some(1.0));
        assert_eq!(variety_exponent(100), Some(0.0));
        assert_eq!(variety_exponent(75), Some(0.5));
        assert_eq!(variety_exponent(25), Some(2.0));
        assert_eq!(variety_exponent(10), Some(5.0));
        assert_eq!(variety_exponent(1), Some(50.0));
        assert_eq!(variety_exponent(0), None);
        assert_eq!(variety_exponent(200), Some(0.0));
        for v in 1..50u8 {
            let (low, high) = (
                variety_exponent(v).unwrap(),
                variety_exponent(100 - v).unwrap(),
            );
            assert!((low * high - 1.0).abs() < 1e-12, "{v}");
            // Falling: more variety, a flatter pick.
            assert!(low > variety_exponent(v + 1).unwrap(), "{v}");
        }
    }

    /// Counts of `picks` picks from `m` by `opts` with a fixed seed.
    fn counts(m: &[BookMove], opts: &ChooseOptions, picks: usize) -> Vec<usize> {
        let mut rng = StdRng::seed_from_u64(5);
        let mut counts = vec![0; m.len()];
        for _ in 0..picks {
            let pick = opts.pick(m, &mut rng).unwrap();
            counts[m.iter().position(|x| *x == pick.book_move).unwrap()] += 1;
        }
        counts
    }

    #[test]
    fn variety_bends_the_weighted_pick() {
        let m = moves(&[1, 4, 9]);
        let with = |variety| ChooseOptions {
            variety,
            ..Default::default()
        };
        // 0: the heaviest alone.
        assert_eq!(counts(&m, &with(0), 200), [0, 0, 200]);
        // 25: the squares, 1 : 16 : 81 of 98; 100: uniform; 75: the roots, 1 : 2 : 3.
        for (variety, expected) in [
            (25, [1.0 / 98.0, 16.0 / 98.0, 81.0 / 98.0]),
            (100, [1.0 / 3.0; 3]),
            (75, [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0]),
        ] {
            let n = 9000;
            let c = counts(&m, &with(variety), n);
            for i in 0..3 {
                let e = n as f64 * expected[i];
                assert!(
                    (c[i] as f64 - e).abs() < 4.0 * e.sqrt() + 5.0,
                    "variety {variety}: {c:?}"
                );
            }
        }
        // 50 is the plain weighted pick, draw for draw.
        assert_eq!(
            counts(&m, &with(50), 500),
            counts(&m, &ChooseOptions::default(), 500)
        );
        // Other selections ignore it.
        let best = ChooseOptions {
            selection: Selection::Best,
            variety: 100,
            ..Default::default()
        };
        assert_eq!(counts(&m, &best, 50), [0, 0, 50]);
    }

    #[test]
    fn width_and_min_share_leave_the_candidates() {
        let m = moves(&[5, 20, 5, 10, 60]);
        let opts = ChooseOptions {
            width: 2,
            ..Default::default()
        };
        assert_eq!(opts.candidates(&m), [1, 4]);
        // Equal weights at the cut: the first stored.
        let opts = ChooseOptions {
            width: 4,
            ..Default::default()
        };
        assert_eq!(opts.candidates(&m), [0, 1, 3, 4]);
        let c = counts(
            &m,
            &ChooseOptions {
                width: 2,
                ..Default::default()
            },
            8000,
        );
        assert_eq!((c[0], c[2], c[3]), (0, 0, 0), "{c:?}");
        // 20 : 60 among the two.
        assert!((c[1] as f64 - 2000.0).abs() < 4.0 * 2000f64.sqrt(), "{c:?}");
        // Shares 5%, 20%, 5%, 10%, 60%: at least 10%.
        let opts = ChooseOptions {
            min_share: 10,
            ..Default::default()
        };
        assert_eq!(opts.candidates(&m), [1, 3, 4]);
        // The shares shown stay the share rule's.
        assert_eq!(opts.shares(&m)[4], 0.6);
        // Nothing left: no pick.
        let opts = ChooseOptions {
            min_share: 61,
            ..Default::default()
        };
        assert!(opts.pick(&m, &mut rand::rng()).is_none());
        // lichess-bot's `normalization: max`: weights 5, 20, 5, 10, 60 are 8%, 33%, 8%, 16.7% and
        // 100% of the heaviest: 16% keeps 20, 10 and 60; 17% leaves 10 out.
        let opts = ChooseOptions {
            min_percent_of_best: 16,
            ..Default::default()
        };
        assert_eq!(opts.candidates(&m), [1, 3, 4]);
        let opts = ChooseOptions {
            min_percent_of_best: 17,
            ..Default::default()
        };
        assert_eq!(opts.candidates(&m), [1, 4]);
    }

    #[test]
    fn the_bots_selection_words() {
        for (word, selection) in [
            ("best_move", Selection::Best),
            ("weighted_random", Selection::Weighted),
            ("uniform_random", Selection::Uniform),
        ] {
            assert_eq!(word.parse::<Selection>(), Ok(selection));
        }
    }

    #[test]
    fn a_line_of_book_moves_below_a_position() {
        use crate::book::{ENTRY_SIZE, sort_entries};
        // 1. e4 e5 2. Nf3 in the book; 1. d4 without an answer.
        let mut entries = Vec::new();
        crate::position::play_moves_each(Chess::default(), "e2e4 e7e5 g1f3", |pos, m| {
            let uci = m.to_uci(shakmaty::CastlingMode::Standard).to_string();
            entries.push(Entry::from_uci(Key::of(pos), &uci, 1).unwrap());
        })
        .unwrap();
        entries.push(Entry::from_uci(Key::of(&Chess::default()), "d2d4", 5).unwrap());
        sort_entries(&mut entries);
        let mut bytes = Vec::with_capacity(entries.len() * ENTRY_SIZE);
        for e in &entries {
            bytes.extend_from_slice(&e.to_bytes());
        }
        let book = Book::from_bytes("line", bytes).unwrap();
        let start = Chess::default();
        assert!(book.has_line(&start, 3, 1));
        assert!(!book.has_line(&start, 4, 1));
        assert!(book.has_line(&start, 0, 1));
        // Weights below the minimum do not make a line.
        assert!(!book.has_line(&start, 1, 6));
    }

    #[test]
    fn nothing_eligible_gives_none() {
        let m = moves(&[1, 2]);
        let opts = ChooseOptions {
            minimum_weight: 3,
            ..Default::default()
        };
        assert!(choose(&m, &opts, &mut rand::rng()).is_none());
        assert!(choose(&[], &ChooseOptions::default(), &mut rand::rng()).is_none());
    }
}
