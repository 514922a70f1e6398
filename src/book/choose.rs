//! Choosing a book move: the best, a weighted random or a uniform random one.

use std::str::FromStr;

use rand::Rng;
use shakmaty::Move;

use super::BookMove;

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
}

impl FromStr for Selection {
    type Err = String;

    fn from_str(s: &str) -> Result<Selection, String> {
        let quoted = crate::text::quote(s);
        match s.to_ascii_lowercase().as_str() {
            "best" => Ok(Selection::Best),
            "weighted" | "weight" | "random" => Ok(Selection::Weighted),
            "uniform" => Ok(Selection::Uniform),
            _ => Err(format!(
                "unknown book selection {quoted}: expected best, weighted or uniform"
            )),
        }
    }
}

/// What makes a book move eligible, and how to pick one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChooseOptions {
    pub selection: Selection,
    /// Moves with a smaller weight are never chosen (python-chess's `minimum_weight`, default 1).
    pub min_weight: u16,
    /// Moves never chosen (python-chess's `exclude_moves`).
    pub exclude: Vec<Move>,
}

impl Default for ChooseOptions {
    fn default() -> Self {
        ChooseOptions {
            selection: Selection::Weighted,
            min_weight: 1,
            exclude: Vec::new(),
        }
    }
}

/// Picks one of `moves` (the legal book moves of a position), or `None` when none is eligible.
///
/// A weighted choice gives each move a chance proportional to its weight, so with a minimum
/// weight of 0 a weight-0 move is eligible but never drawn unless every eligible weight is 0, in
/// which case the choice is uniform.
pub fn choose<R: Rng + ?Sized>(
    moves: &[BookMove],
    options: &ChooseOptions,
    rng: &mut R,
) -> Option<BookMove> {
    let eligible: Vec<&BookMove> = moves
        .iter()
        .filter(|m| m.entry.weight >= options.min_weight && !options.exclude.contains(&m.mv))
        .collect();
    if eligible.is_empty() {
        return None;
    }
    let total: u64 = eligible.iter().map(|m| u64::from(m.entry.weight)).sum();
    let picked = match options.selection {
        Selection::Best => {
            let best = eligible.iter().map(|m| m.entry.weight).max()?;
            eligible.iter().find(|m| m.entry.weight == best)?
        }
        Selection::Uniform => eligible[rng.random_range(0..eligible.len())],
        Selection::Weighted if total == 0 => eligible[rng.random_range(0..eligible.len())],
        Selection::Weighted => {
            let mut ticket = rng.random_range(0..total);
            eligible
                .iter()
                .find(|m| {
                    let w = u64::from(m.entry.weight);
                    if ticket < w {
                        true
                    } else {
                        ticket -= w;
                        false
                    }
                })
                .copied()?
        }
    };
    Some(*picked)
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
            exclude: vec![m[1].mv],
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
    fn nothing_eligible_gives_none() {
        let m = moves(&[1, 2]);
        let opts = ChooseOptions {
            min_weight: 3,
            ..Default::default()
        };
        assert!(choose(&m, &opts, &mut rand::rng()).is_none());
        assert!(choose(&[], &ChooseOptions::default(), &mut rand::rng()).is_none());
    }
}
