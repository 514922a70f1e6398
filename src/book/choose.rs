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

use std::str::FromStr;

use rand::Rng;
use shakmaty::{Move, Position};

use super::{Book, BookMove, Learn, LearnLayout, MoveScore};

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
        match s.to_ascii_lowercase().as_str() {
            "best" => Ok(Selection::Best),
            "weighted" | "weight" | "random" => Ok(Selection::Weighted),
            "uniform" => Ok(Selection::Uniform),
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
}

impl Default for ChooseOptions {
    fn default() -> Self {
        ChooseOptions {
            selection: Selection::Weighted,
            minimum_weight: 1,
            exclude_moves: Vec::new(),
            max_loss: 0,
        }
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
        if self.selection == Selection::Learned {
            return self.learned_shares(moves);
        }
        let total = self.total_weight(moves);
        let counted = moves.iter().filter(|m| self.counts(m)).count();
        moves
            .iter()
            .map(|m| match self.counts(m) {
                false => 0.0,
                true if total == 0 => 1.0 / counted as f64,
                true => f64::from(m.entry.weight) / total as f64,
            })
            .collect()
    }

    /// The shares of [`Selection::Learned`]: learned weight over the sum of the learned weights
    /// of the moves that count (equal shares when they are all 0).
    fn learned_shares(&self, moves: &[BookMove]) -> Vec<f64> {
        let total: f64 = moves
            .iter()
            .filter(|m| self.counts(m))
            .map(learned_weight)
            .sum();
        let counted = moves.iter().filter(|m| self.counts(m)).count();
        moves
            .iter()
            .map(|m| match self.counts(m) {
                false => 0.0,
                true if total == 0.0 => 1.0 / counted as f64,
                true => learned_weight(m) / total,
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
        let scored: Vec<(usize, i32)> = (0..moves.len())
            .filter(|&i| self.counts(&moves[i]))
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
            exclude_moves: Vec::new(),
            max_loss: 0,
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

    /// The index in `moves` of the move [`ChooseOptions::pick`] picks.
    fn pick_index<R: Rng + ?Sized>(&self, moves: &[BookMove], rng: &mut R) -> Option<usize> {
        let eligible: Vec<usize> = (0..moves.len())
            .filter(|&i| self.counts(&moves[i]))
            .collect();
        if eligible.is_empty() {
            return None;
        }
        let weight = |i: usize| u64::from(moves[i].entry.weight);
        let total: u64 = eligible.iter().map(|&i| weight(i)).sum();
        match self.selection {
            Selection::Best => {
                let best = eligible.iter().map(|&i| weight(i)).max()?;
                eligible.into_iter().find(|&i| weight(i) == best)
            }
            Selection::Uniform => Some(eligible[rng.random_range(0..eligible.len())]),
            Selection::Learned => {
                let total: f64 = eligible.iter().map(|&i| learned_weight(&moves[i])).sum();
                if total <= 0.0 {
                    return Some(eligible[rng.random_range(0..eligible.len())]);
                }
                // A ticket below the total, and the move whose running sum passes it (the last
                // one if rounding leaves the ticket past them all).
                let mut ticket = rng.random_range(0.0..total);
                let last = *eligible.last()?;
                Some(
                    eligible
                        .into_iter()
                        .find(|&i| {
                            let w = learned_weight(&moves[i]);
                            if ticket < w {
                                true
                            } else {
                                ticket -= w;
                                false
                            }
                        })
                        .unwrap_or(last),
                )
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
