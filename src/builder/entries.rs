//! From the tally of one position to its book entries: which moves are kept, with what weight,
//! in what order.

use shakmaty::Color;

use super::PairCount;
use super::count_table::{COUNT_MAX, Counts, ExactCounts, Keep, Tallied};
use super::game::BLACK_MOVED;
use crate::book::{Entry, Key, RawMove};

/// What a book entry's weight measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum WeightScheme {
    /// polyglot's: 2 × wins + draws, counted in 16 bits and halved at 16384 games.
    #[default]
    Polyglot,
    /// How often the move was played (popularity).
    Games,
    /// How often the move won.
    Wins,
    /// The moves' annotations in the PGN, for repertoire files: each time a move is read it adds
    /// [`super::game::nag_points`] of its move assessment (`!!` 16, `!` 8, `!?` 4, none 2, `?!`
    /// 1, `?` and `??` 0: kept in the book but never chosen).
    Nag,
}

/// The rules that turn counts into entries (polyglot make-book's options and a few more).
#[derive(Clone, Debug)]
pub struct EntryRules {
    pub min_games: u64,
    /// Percent, as polyglot's `-min-score`.
    pub min_score: f64,
    /// Keep only the moves of this side (`--only-white` / `--only-black`).
    pub side: Option<Color>,
    pub uniform: bool,
    pub weights: WeightScheme,
}

impl EntryRules {
    /// Which moves can be kept at all (before `--min-score` and the side): enough games, and
    /// some points (an annotated `?` with `--weights nag` is kept with weight 0).
    pub fn keep(&self) -> Keep {
        Keep {
            min_games: self.min_games,
            pointless: self.weights == WeightScheme::Nag,
        }
    }
}

impl Default for EntryRules {
    fn default() -> Self {
        EntryRules {
            min_games: 3,
            min_score: 0.0,
            side: None,
            uniform: false,
            weights: WeightScheme::Polyglot,
        }
    }
}

/// polyglot's halving applied after the fact to counts combined from several spilled runs: the
/// position is halved until no move has [`COUNT_MAX`] games. (Exact while a position's games were
/// all counted in memory; an approximation for a position with more than 16384 games of one move
/// split over several runs, whose halving depended on the order of the games.)
pub fn halve_combined(group: &mut [Tallied<ExactCounts>]) {
    while group.iter().any(|t| t.counts.n >= u64::from(COUNT_MAX)) {
        for t in group.iter_mut() {
            t.counts.n = t.counts.n.div_ceil(2);
            t.counts.points = t.counts.points.div_ceil(2);
        }
    }
}

/// Turns exact counts of one position at a time ([`PairCount`]s, as a tally file holds them) into
/// its book entries, by the same rules as a build. With polyglot's weights the counts are halved
/// as polyglot would if it had counted them all at once ([`halve_combined`]).
pub struct PairEntries<'a> {
    maker: EntryMaker<'a>,
    group: Vec<Tallied<ExactCounts>>,
}

impl<'a> PairEntries<'a> {
    pub fn new(rules: &'a EntryRules) -> Self {
        PairEntries {
            maker: EntryMaker::new(rules),
            group: Vec::new(),
        }
    }

    /// Appends to `out` the entries of one position (all of `pairs` has one key), sorted by
    /// weight, ties in order of `first`.
    pub fn append(&mut self, pairs: &[PairCount], out: &mut Vec<Entry>) {
        self.group.clear();
        self.group.extend(pairs.iter().map(|p| p.to_tallied()));
        if self.maker.rules.weights == WeightScheme::Polyglot {
            halve_combined(&mut self.group);
        }
        self.maker.append(&self.group, out);
    }

    /// The entry of a position with one move, `pair` (what [`PairEntries::append`] makes of
    /// `&[pair]`, without its lists): `None` when the rules leave the move out.
    #[inline]
    pub fn single(&self, pair: &PairCount) -> Option<Entry> {
        let mut t = pair.to_tallied();
        if self.maker.rules.weights == WeightScheme::Polyglot {
            halve_combined(std::slice::from_mut(&mut t));
        }
        // Alone in its position, a weight past 16 bits is scaled to the top of them.
        let weight = EntryMaker::weight(self.maker.rules, &t)?.min(u64::from(u16::MAX));
        Some(Entry {
            key: Key(t.key),
            mv: RawMove(t.mv & !BLACK_MOVED),
            weight: weight as u16,
            learn: 0,
        })
    }
}

/// Turns the tally of one position at a time into its book entries.
pub struct EntryMaker<'a> {
    rules: &'a EntryRules,
    /// (weight, first appearance, move) of the moves kept, reused from position to position.
    kept: Vec<(u64, u64, u16)>,
}

impl<'a> EntryMaker<'a> {
    pub fn new(rules: &'a EntryRules) -> Self {
        EntryMaker {
            rules,
            kept: Vec::new(),
        }
    }

    /// The weight of one move of a position by the rules (`None`: the move is left out), before
    /// the position's weights are scaled into 16 bits.
    #[inline]
    fn weight<C: Counts>(rules: &EntryRules, t: &Tallied<C>) -> Option<u64> {
        let (n, points) = (t.counts.n(), t.counts.points());
        if !rules.keep().keeps(n, points) {
            return None;
        }
        // The same floating-point steps as polyglot's keep_entry(), so borderline cases agree
        // (with no --min-score every move with points passes: no division).
        if rules.min_score > 0.0 {
            let score = (points as f64 / n as f64) / 2.0;
            if score < rules.min_score / 100.0 {
                return None;
            }
        }
        let mover = if t.mv & BLACK_MOVED != 0 {
            Color::Black
        } else {
            Color::White
        };
        if rules.side.is_some_and(|side| side != mover) {
            return None;
        }
        let weight = if rules.uniform {
            1
        } else {
            match rules.weights {
                WeightScheme::Polyglot | WeightScheme::Nag => points,
                WeightScheme::Games => n,
                WeightScheme::Wins => t.counts.wins(),
            }
        };
        (weight > 0 || rules.weights == WeightScheme::Nag).then_some(weight)
    }

    /// Appends to `out` the entries of one position (all of `group` has one key), sorted as
    /// polyglot sorts them: weight descending, then in order of first appearance.
    pub fn append<C: Counts>(&mut self, group: &[Tallied<C>], out: &mut Vec<Entry>) {
        let rules = self.rules;
        let kept = &mut self.kept;
        kept.clear();
        for t in group {
            if let Some(weight) = Self::weight(rules, t) {
                kept.push((weight, t.first, t.mv & !BLACK_MOVED));
            }
        }
        // Exact counts can pass 16 bits: scale the position's weights into them, keeping
        // proportions.
        let max = kept.iter().map(|k| k.0).max().unwrap_or(0);
        if max > u64::from(u16::MAX) {
            for k in kept.iter_mut() {
                let scaled = (u128::from(k.0) * u128::from(u16::MAX) + u128::from(max) / 2)
                    / u128::from(max);
                k.0 = (scaled as u64).max(1);
            }
        }
        // First appearances differ, so this order is total.
        if kept.len() > 1 {
            kept.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        }
        let Some(first) = group.first() else {
            return;
        };
        let key = Key(first.key);
        out.extend(kept.iter().map(|&(weight, _, mv)| Entry {
            key,
            mv: RawMove(mv),
            weight: weight as u16,
            learn: 0,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(mv: u16, first: u64, n: u64, points: u64, wins: u64) -> Tallied<ExactCounts> {
        Tallied {
            key: 42,
            mv,
            first,
            counts: ExactCounts { n, points, wins },
        }
    }

    #[test]
    fn polyglot_rules_filter_and_order() {
        let group = [
            rec(1, 0, 3, 3, 0),
            rec(2, 1, 2, 4, 2),               // too few games
            rec(3, 2, 3, 0, 0),               // scored nothing
            rec(4, 3, 5, 3, 0),               // ties with move 1, seen later
            rec(5 | BLACK_MOVED, 4, 9, 9, 0), // a Black move (another key in real life)
        ];
        let mut out = Vec::new();
        EntryMaker::new(&EntryRules::default()).append(&group, &mut out);
        let got: Vec<(u16, u16)> = out.iter().map(|e| (e.mv.0, e.weight)).collect();
        assert_eq!(got, vec![(5, 9), (1, 3), (4, 3)]);
        let mut out = Vec::new();
        let rules = EntryRules {
            side: Some(Color::White),
            min_score: 50.0,
            ..EntryRules::default()
        };
        EntryMaker::new(&rules).append(&group, &mut out);
        let got: Vec<u16> = out.iter().map(|e| e.mv.0).collect();
        assert_eq!(got, vec![1]); // move 4 scores 30 %
    }

    #[test]
    fn exact_weights_are_scaled_into_16_bits() {
        let group = [
            rec(1, 0, 200_000, 1, 0),
            rec(2, 1, 100_000, 1, 0),
            rec(3, 2, 3, 1, 0),
        ];
        let rules = EntryRules {
            weights: WeightScheme::Games,
            ..EntryRules::default()
        };
        let mut out = Vec::new();
        EntryMaker::new(&rules).append(&group, &mut out);
        let got: Vec<u16> = out.iter().map(|e| e.weight).collect();
        assert_eq!(got, vec![65535, 32768, 1]);
    }

    #[test]
    fn halving_combined_counts() {
        let mut group = [rec(1, 0, 20000, 30000, 0), rec(2, 1, 3, 5, 0)];
        halve_combined(&mut group);
        assert_eq!((group[0].counts.n, group[0].counts.points), (10000, 15000));
        assert_eq!((group[1].counts.n, group[1].counts.points), (2, 3));
    }

    #[test]
    fn a_single_move_makes_the_entry_its_position_would() {
        let mut rules_list = Vec::new();
        for weights in [
            WeightScheme::Polyglot,
            WeightScheme::Games,
            WeightScheme::Wins,
        ] {
            for (min_games, min_score, side, uniform) in [
                (1, 0.0, None, false),
                (3, 0.0, None, false),
                (1, 50.0, None, false),
                (1, 0.0, Some(Color::White), false),
                (1, 0.0, Some(Color::Black), true),
            ] {
                rules_list.push(EntryRules {
                    min_games,
                    min_score,
                    side,
                    uniform,
                    weights,
                });
            }
        }
        let mut tried = 0;
        for rules in &rules_list {
            let mut maker = PairEntries::new(rules);
            for (wins, draws, losses) in [
                (0, 0, 1),
                (1, 0, 0),
                (0, 1, 0),
                (1, 1, 1),
                (2, 0, 3),
                (20_000, 5, 7),
                (70_000, 3, 1),
                (1 << 40, 1 << 39, 9),
            ] {
                for black in [false, true] {
                    let pair = PairCount {
                        key: 0x1234_5678_9abc_def0,
                        mv: 0x0b2a,
                        black,
                        first: 7,
                        games: wins + draws + losses,
                        wins,
                        draws,
                        losses,
                        rating: Default::default(),
                    };
                    let mut want = Vec::new();
                    maker.append(&[pair], &mut want);
                    assert_eq!(maker.single(&pair).into_iter().collect::<Vec<_>>(), want);
                    tried += usize::from(!want.is_empty());
                }
            }
        }
        assert!(tried > 100, "{tried}");
    }
}
