//! A tournament's standings: each pairing's tally (wins, draws, losses and the colour-swapped
//! pairs, as a two-engine match keeps them) and each engine's score against the field, ranked
//! in a table like cutechess-cli's and fastchess's.
//!
//! An engine's Elo is cutechess's: the Elo difference of its score against all its opponents
//! together, `-400 log10(1/s - 1)`, with the 95% error bar of that score (see
//! [`MatchScore::elo`]); it is a performance against this field, not a rating on a common scale.
//! The pairs are counted per pairing from its first engine's view (pentanomial: the points of
//! two games with the same opening and colours swapped, LL, LD, DD or WL, WD, WW).

use std::fmt::Write as _;

use super::runner::GameReport;
use super::stats::{MatchScore, MatchTally};

/// One pairing's games so far.
#[derive(Clone, Debug)]
pub struct PairingResult {
    /// The engines' numbers: the tally is the first's view.
    pub engines: (usize, usize),
    pub tally: MatchTally,
}

/// One line of the ranking.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// 1-based.
    pub rank: usize,
    /// The engine's number in the tournament (0-based).
    pub engine: usize,
    pub name: String,
    /// Its wins, draws and losses against the whole field, and its pairs (its own view).
    pub score: MatchScore,
}

/// Every pairing's tally, filled as the games end.
#[derive(Clone, Debug)]
pub struct Standings {
    pub names: Vec<String>,
    pub pairings: Vec<PairingResult>,
}

impl Standings {
    /// Empty standings for engines `names` and `pairings` of `games` games each.
    pub fn new(names: &[String], pairings: &[(usize, usize)], games: usize) -> Standings {
        Standings {
            names: names.to_vec(),
            pairings: pairings
                .iter()
                .map(|&engines| PairingResult {
                    engines,
                    tally: MatchTally::new(games, None),
                })
                .collect(),
        }
    }

    /// Records a finished game of `pairing` (the report's half points are the first engine's).
    pub fn record(&mut self, pairing: usize, report: &GameReport) {
        self.pairings[pairing].tally.record(
            report.index,
            report.first_half_points,
            report.termination.tag(),
        );
    }

    /// Games finished in the whole tournament.
    pub fn games(&self) -> u32 {
        self.pairings.iter().map(|p| p.tally.score.games()).sum()
    }

    /// Engine `engine`'s score against all its opponents, from its own view.
    pub fn engine_score(&self, engine: usize) -> MatchScore {
        let mut total = MatchScore::default();
        for p in &self.pairings {
            let s = &p.tally.score;
            let (wins, losses, pairs) = if p.engines.0 == engine {
                (s.wins, s.losses, s.pairs)
            } else if p.engines.1 == engine {
                let mut reversed = s.pairs;
                reversed.reverse();
                (s.losses, s.wins, reversed)
            } else {
                continue;
            };
            total.wins += wins;
            total.draws += s.draws;
            total.losses += losses;
            for (t, n) in total.pairs.iter_mut().zip(pairs) {
                *t += n;
            }
        }
        total
    }

    /// The engines from the best score to the worst (ties in the order they were given).
    pub fn ranking(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = (0..self.names.len())
            .map(|engine| Row {
                rank: 0,
                engine,
                name: self.names[engine].clone(),
                score: self.engine_score(engine),
            })
            .collect();
        rows.sort_by(|a, b| b.score.ratio().total_cmp(&a.score.ratio()));
        for (i, row) in rows.iter_mut().enumerate() {
            row.rank = i + 1;
        }
        rows
    }

    /// The ranking as cutechess-cli prints it: `Rank Name Elo +/- Games Score Draw`, the Elo
    /// and its error rounded to whole points (`inf` when the engine won or lost every game,
    /// `-` when it has no estimate), the score and the draws in percent.
    pub fn table(&self) -> String {
        let rows = self.ranking();
        let width = rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(4);
        let mut out = format!(
            "{:>4} {:<width$} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
            "Rank", "Name", "Elo", "+/-", "Games", "Score", "Draw"
        );
        for row in &rows {
            let s = &row.score;
            let (elo, error) = match s.elo() {
                // `+ 0.0` writes an Elo of -0.0 as 0.
                Some((elo, error)) => (format!("{:.0}", elo + 0.0), format!("{error:.0}")),
                None if s.games() == 0 => ("-".to_string(), "-".to_string()),
                None if s.ratio() >= 1.0 => ("inf".to_string(), "-".to_string()),
                None => ("-inf".to_string(), "-".to_string()),
            };
            let score = percent(s.ratio(), s.games());
            let draws = percent(f64::from(s.draws) / f64::from(s.games()), s.games());
            let _ = writeln!(
                out,
                "{:>4} {:<width$} {elo:>7} {error:>7} {:>7} {score:>7} {draws:>7}",
                row.rank,
                row.name,
                s.games(),
            );
        }
        out
    }

    /// Each pairing's result from its first engine's view: `W-D-L`, the score, and the
    /// pentanomial counts of its colour-swapped pairs (LL, LD, DD/WL, WD, WW).
    pub fn pairing_table(&self) -> String {
        let labels: Vec<String> = self
            .pairings
            .iter()
            .map(|p| format!("{} vs {}", self.names[p.engines.0], self.names[p.engines.1]))
            .collect();
        let results: Vec<String> = self
            .pairings
            .iter()
            .map(|p| {
                let s = &p.tally.score;
                format!("{}-{}-{}", s.wins, s.draws, s.losses)
            })
            .collect();
        let width = labels
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
            .max(7);
        let rw = results.iter().map(String::len).max().unwrap_or(0).max(5);
        let mut out = format!(
            "{:<width$} {:>rw$} {:>7} {:>4} {:>4} {:>5} {:>4} {:>4}\n",
            "Pairing", "W-D-L", "Score", "LL", "LD", "DD/WL", "WD", "WW"
        );
        for ((p, label), result) in self.pairings.iter().zip(&labels).zip(&results) {
            let s = &p.tally.score;
            let [ll, ld, dd, wd, ww] = s.pairs;
            let score = percent(s.ratio(), s.games());
            let _ = writeln!(
                out,
                "{label:<width$} {result:>rw$} {score:>7} {ll:>4} {ld:>4} {dd:>5} {wd:>4} {ww:>4}",
            );
        }
        out
    }
}

/// A ratio in percent to 0.1 (`62.5%`), or `-` with no games.
fn percent(ratio: f64, games: u32) -> String {
    if games == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", ratio * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standings(results: &[(usize, &[u8])]) -> Standings {
        let names: Vec<String> = ["A", "B", "C"].map(String::from).to_vec();
        let mut s = Standings::new(&names, &[(0, 1), (0, 2), (1, 2)], 4);
        for &(pairing, games) in results {
            for (index, &h) in games.iter().enumerate() {
                s.pairings[pairing].tally.record(index, h, "normal");
            }
        }
        s
    }

    #[test]
    fn each_engine_is_scored_against_the_field() {
        // A beats B 2-0 with 2 draws; A and C draw all; B beats C once, loses once, 2 draws.
        let s = standings(&[(0, &[2, 2, 1, 1]), (1, &[1, 1, 1, 1]), (2, &[2, 0, 1, 1])]);
        let a = s.engine_score(0);
        assert_eq!((a.wins, a.draws, a.losses), (2, 6, 0));
        // A's pairs: WW and DD against B, DD and DD against C.
        assert_eq!(a.pairs, [0, 0, 3, 0, 1]);
        let b = s.engine_score(1);
        assert_eq!((b.wins, b.draws, b.losses), (1, 4, 3));
        // B's pairs: LL and DD against A (reversed), WL and DD against C.
        assert_eq!(b.pairs, [1, 0, 3, 0, 0]);
        let ranking = s.ranking();
        let order: Vec<&str> = ranking.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(order, ["A", "C", "B"]);
        // The scores add up to the games played: each game gives one point in all.
        let points: f64 = ranking
            .iter()
            .map(|r| r.score.ratio() * f64::from(r.score.games()))
            .sum();
        assert_eq!(points, f64::from(s.games()));
        let table = s.table();
        assert!(
            table.starts_with("Rank Name     Elo     +/-   Games   Score    Draw\n"),
            "{table}"
        );
        assert!(table.contains("\n   1 A     "), "{table}");
        let pairs = s.pairing_table();
        assert!(
            pairs.contains("A vs B  2-2-0   75.0%    0    0     1    0    1"),
            "{pairs}"
        );
    }
}
