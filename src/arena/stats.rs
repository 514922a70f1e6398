//! A match's score as Elo: the difference, its 95% error bar, the likelihood of superiority,
//! and the sequential probability ratio test (SPRT) that stops a match once it has decided.
//!
//! The formulas are the ones cutechess-cli and fishtest use: the Elo difference of a score `s`
//! is `-400 log10(1/s - 1)`; the error bar comes from the variance of the per-game scores
//! (trinomial: win 1, draw ½, loss 0), or, when the games come in colour-swapped pairs, from the
//! variance of the pairs' scores (pentanomial, as fastchess reports it), which leaves out the
//! noise the openings add; the SPRT is the generalized SPRT on the logistic Elo scale (fishtest's
//! and fastchess's "logistic" model), with bounds `ln(β/(1-α))` and `ln((1-β)/α)`, on the pairs'
//! scores too when there are pairs.
//!
//! A [`MatchTally`] records a match as its games finish: the score, the pairs, how the games
//! ended, and the SPRT's verdict after each game.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Wins, draws and losses from the first engine's point of view, and the finished pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchScore {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Finished pairs by the first engine's points in the pair, in half points: 0, ½, 1, 1½, 2.
    pub pairs: [u32; 5],
}

/// The expected score of an Elo difference.
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The Elo difference of an expected score (±infinity at 1 and 0).
pub fn elo_of(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The error function (Abramowitz and Stegun 7.1.26, error below 1.5e-7).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    if x >= 0.0 { y } else { -y }
}

/// The 97.5% quantile of the standard normal distribution (a two-sided 95% interval).
const Z95: f64 = 1.959_963_985;

impl MatchScore {
    /// Records a game result from the first engine's view: 1, ½ or 0 (as 2, 1, 0 half points).
    pub fn add(&mut self, half_points: u8) {
        match half_points {
            2 => self.wins += 1,
            1 => self.draws += 1,
            _ => self.losses += 1,
        }
    }

    /// Records a finished pair: the first engine's half points over both games (0..=4).
    pub fn add_pair(&mut self, half_points: u8) {
        self.pairs[usize::from(half_points.min(4))] += 1;
    }

    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// The first engine's score, 0 to 1 (½ with no games).
    pub fn ratio(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            return 0.5;
        }
        (f64::from(self.wins) + f64::from(self.draws) / 2.0) / f64::from(n)
    }

    /// The variance of the mean score: per game (trinomial), or per finished pair (pentanomial,
    /// each pair scoring its points over 2) when there are pairs whose scores differ; until
    /// then (no pairs, or all alike, e.g. a win and a loss each) the per-game one.
    fn variance_of_mean(&self) -> f64 {
        let per_unit = |counts: &[(f64, u32)]| {
            let n: f64 = counts.iter().map(|&(_, c)| f64::from(c)).sum();
            let mean = counts.iter().map(|&(x, c)| x * f64::from(c)).sum::<f64>() / n;
            let spread = counts
                .iter()
                .map(|&(x, c)| f64::from(c) * (x - mean).powi(2))
                .sum::<f64>()
                / n;
            spread / n
        };
        if self.pairs.iter().filter(|&&c| c > 0).count() > 1 {
            let pairs: [(f64, u32); 5] = std::array::from_fn(|i| (i as f64 / 4.0, self.pairs[i]));
            per_unit(&pairs)
        } else {
            let games = [(0.0, self.losses), (0.5, self.draws), (1.0, self.wins)];
            per_unit(&games)
        }
    }

    /// The Elo difference and its 95% error bar (half the interval's width), when both are
    /// finite (not with no games, or all won, or all lost). The difference is that of the score
    /// over all games; the error bar is the pentanomial one when finished pairs differ (see
    /// [`Self::variance_of_mean`]), else the per-game one.
    pub fn elo(&self) -> Option<(f64, f64)> {
        let n = f64::from(self.games());
        let s = self.ratio();
        if n == 0.0 || s <= 0.0 || s >= 1.0 {
            return None;
        }
        let margin = Z95 * self.variance_of_mean().sqrt();
        let (lo, hi) = ((s - margin).max(1e-9), (s + margin).min(1.0 - 1e-9));
        Some((elo_of(s), (elo_of(hi) - elo_of(lo)) / 2.0))
    }

    /// The likelihood of superiority: the chance that the first engine is the stronger, from
    /// wins and losses (draws carry no information on it).
    pub fn los(&self) -> f64 {
        let (w, l) = (f64::from(self.wins), f64::from(self.losses));
        if w + l == 0.0 {
            return 0.5;
        }
        0.5 * (1.0 + erf((w - l) / (2.0 * (w + l)).sqrt()))
    }

    /// The observed distribution of the score per unit: per pair (pentanomial, the points of a
    /// pair over 2) when there are finished pairs, else per game (trinomial). As (score, count)
    /// with a count of zero taken as 0.001 (as fishtest and fastchess do), so that the maximum
    /// likelihood estimates below exist for any sample.
    fn distribution(&self) -> Vec<(f64, f64)> {
        let pairs: u32 = self.pairs.iter().sum();
        let counts: Vec<(f64, u32)> = if pairs > 0 {
            (0..5).map(|i| (i as f64 / 4.0, self.pairs[i])).collect()
        } else {
            vec![(0.0, self.losses), (0.5, self.draws), (1.0, self.wins)]
        };
        counts
            .into_iter()
            .map(|(s, c)| (s, if c == 0 { 1e-3 } else { f64::from(c) }))
            .collect()
    }

    /// The log-likelihood ratio of H1 (Elo difference `elo1`) against H0 (`elo0`): the
    /// generalized SPRT on the logistic Elo scale. Each hypothesis is the distribution of the
    /// sample's outcomes that is most likely under the constraint that its mean score is
    /// s0 = E(elo0) or s1 = E(elo1) (M. Van den Bergh, "Comments on Normalized Elo",
    /// proposition 1.1): p_i = p̂_i / (1 + θ (a_i − s)), θ solving Σ p̂_i (a_i − s) / (1 + θ (a_i − s)) = 0.
    /// 0 with no games.
    pub fn llr(&self, sprt: &Sprt) -> f64 {
        if self.games() == 0 && self.pairs.iter().all(|&n| n == 0) {
            return 0.0;
        }
        let dist = self.distribution();
        let total: f64 = dist.iter().map(|(_, c)| c).sum();
        let observed: Vec<(f64, f64)> = dist.iter().map(|&(a, c)| (a, c / total)).collect();
        let p0 = most_likely_with_mean(&observed, expected_score(sprt.elo0));
        let p1 = most_likely_with_mean(&observed, expected_score(sprt.elo1));
        total
            * observed
                .iter()
                .zip(p0.iter().zip(&p1))
                .map(|(&(_, q), (a, b))| q * (b.ln() - a.ln()))
                .sum::<f64>()
    }
}

/// The distribution on the scores of `observed` ((score, frequency) pairs, every frequency
/// above 0) that is most likely to have produced it among those whose mean is `s`.
fn most_likely_with_mean(observed: &[(f64, f64)], s: f64) -> Vec<f64> {
    let lo = observed.iter().map(|o| o.0).fold(f64::INFINITY, f64::min);
    let hi = observed
        .iter()
        .map(|o| o.0)
        .fold(f64::NEG_INFINITY, f64::max);
    // f(θ) = Σ p̂_i (a_i − s) / (1 + θ (a_i − s)) falls from +∞ to −∞ as θ goes over the
    // interval where every 1 + θ (a_i − s) is positive: bisect it.
    let f = |theta: f64| -> f64 {
        observed
            .iter()
            .map(|&(a, q)| q * (a - s) / (1.0 + theta * (a - s)))
            .sum()
    };
    let (mut a, mut b) = (-1.0 / (hi - s), -1.0 / (lo - s));
    for _ in 0..200 {
        let mid = (a + b) / 2.0;
        if f(mid) > 0.0 {
            a = mid;
        } else {
            b = mid;
        }
    }
    let theta = (a + b) / 2.0;
    observed
        .iter()
        .map(|&(a, q)| q / (1.0 + theta * (a - s)))
        .collect()
}

impl fmt::Display for MatchScore {
    /// `W-D-L`, the score in percent, Elo ± error bar and the LOS.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.games() == 0 {
            return f.write_str("0-0-0, no game finished yet");
        }
        write!(
            f,
            "{}-{}-{} ({:.1}%)",
            self.wins,
            self.draws,
            self.losses,
            self.ratio() * 100.0
        )?;
        if self.wins + self.losses == 0 {
            return f.write_str(", no decisive game yet: no Elo estimate");
        }
        match self.elo() {
            Some((elo, err)) => write!(f, ", Elo {elo:+.1} ± {err:.1}")?,
            None if self.games() > 0 => write!(
                f,
                ", Elo {}",
                if self.ratio() >= 1.0 { "+inf" } else { "-inf" }
            )?,
            None => {}
        }
        write!(f, ", LOS {:.1}%", self.los() * 100.0)
    }
}

/// An SPRT: H0 says the Elo difference is `elo0`, H1 that it is `elo1`; the error rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// What an SPRT says so far (`analysis::engines::Verdict` is another thing: an engine's verdict on
/// a book position).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtVerdict {
    /// H1 accepted: the difference is at least about `elo1`.
    H1,
    /// H0 accepted: the difference is at most about `elo0`.
    H0,
    /// Neither yet: play on.
    Continue,
}

impl Sprt {
    /// The lower bound: below it, H0 is accepted.
    pub fn lower(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// The upper bound: above it, H1 is accepted.
    pub fn upper(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    pub fn verdict(&self, llr: f64) -> SprtVerdict {
        if llr >= self.upper() {
            SprtVerdict::H1
        } else if llr <= self.lower() {
            SprtVerdict::H0
        } else {
            SprtVerdict::Continue
        }
    }
}

impl FromStr for Sprt {
    type Err = String;

    /// `elo0=0,elo1=5,alpha=0.05,beta=0.05` (alpha and beta default to 0.05).
    fn from_str(text: &str) -> Result<Sprt, String> {
        let quoted = crate::text::quote(text);
        let mut sprt = Sprt {
            elo0: f64::NAN,
            elo1: f64::NAN,
            alpha: 0.05,
            beta: 0.05,
        };
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("--sprt {quoted}: '{part}' is not NAME=VALUE"))?;
            let value: f64 = value
                .trim()
                .parse()
                .map_err(|_| format!("--sprt {quoted}: '{value}' is not a number"))?;
            match name.trim() {
                "elo0" => sprt.elo0 = value,
                "elo1" => sprt.elo1 = value,
                "alpha" => sprt.alpha = value,
                "beta" => sprt.beta = value,
                other => {
                    return Err(format!(
                        "--sprt {quoted}: unknown '{other}' (expected elo0, elo1, alpha, beta)"
                    ));
                }
            }
        }
        if !sprt.elo0.is_finite() || !sprt.elo1.is_finite() {
            return Err(format!("--sprt {quoted}: elo0 and elo1 are required"));
        }
        if sprt.elo1 <= sprt.elo0 {
            return Err(format!("--sprt {quoted}: elo1 must be greater than elo0"));
        }
        for p in [sprt.alpha, sprt.beta] {
            if !(p > 0.0 && p < 0.5) {
                return Err(format!(
                    "--sprt {quoted}: alpha and beta must be between 0 and 0.5"
                ));
            }
        }
        Ok(sprt)
    }
}

/// A match as its games finish, in any order: the first engine's score, the colour-swapped pairs
/// (games `2k` and `2k + 1` share an opening), how many games ended each way, and what the SPRT
/// (if any) says after the latest game.
#[derive(Clone, Debug)]
pub struct MatchTally {
    pub score: MatchScore,
    /// Games by their PGN `Termination` tag.
    pub terminations: BTreeMap<&'static str, u32>,
    pub sprt: Option<Sprt>,
    /// The SPRT's verdict: `Continue` until the LLR first crosses a bound (or without an SPRT),
    /// then that bound's hypothesis for good. The games still being played at that moment are
    /// counted in the score when they end, but an SPRT decides at its first crossing: they can
    /// move the LLR back inside the bounds without taking the verdict back.
    pub verdict: SprtVerdict,
    /// The games played and the LLR when the verdict was reached.
    pub decided_at: Option<(u32, f64)>,
    /// The pairs whose first game has finished while the other is still playing: the half
    /// points of that game, by pair number. Only the pairs in progress are kept, so that the
    /// tally grows with the games being played, not with the match's length.
    pending_pairs: BTreeMap<usize, u8>,
    /// The pairs in the match (a last odd game is a pair that never finishes).
    pairs: usize,
}

impl MatchTally {
    /// A tally for a match of `games` games.
    pub fn new(games: usize, sprt: Option<Sprt>) -> MatchTally {
        MatchTally {
            score: MatchScore::default(),
            terminations: BTreeMap::new(),
            sprt,
            verdict: SprtVerdict::Continue,
            decided_at: None,
            pending_pairs: BTreeMap::new(),
            pairs: games.div_ceil(2),
        }
    }

    /// Records game `index` (0-based): the first engine's half points (2 a win, 1 a draw, 0 a
    /// loss) and how it ended (its PGN `Termination` tag); the verdict follows the new score.
    pub fn record(&mut self, index: usize, first_half_points: u8, termination: &'static str) {
        self.score.add(first_half_points);
        let pair = index / 2;
        if pair < self.pairs {
            match self.pending_pairs.remove(&pair) {
                Some(other) => self.score.add_pair(other + first_half_points),
                None => {
                    self.pending_pairs.insert(pair, first_half_points);
                }
            }
        }
        *self.terminations.entry(termination).or_default() += 1;
        if let Some(s) = self.sprt
            && self.verdict == SprtVerdict::Continue
        {
            let llr = self.score.llr(&s);
            self.verdict = s.verdict(llr);
            if self.verdict != SprtVerdict::Continue {
                self.decided_at = Some((self.score.games(), llr));
            }
        }
    }

    /// Whether the SPRT has decided (the match may stop).
    pub fn decided(&self) -> bool {
        self.verdict != SprtVerdict::Continue
    }

    /// The SPRT's log-likelihood ratio now, if there is an SPRT.
    pub fn llr(&self) -> Option<f64> {
        self.sprt.map(|s| self.score.llr(&s))
    }
}

#[cfg(test)]
mod tests {
    /// The first crossing decides: games that end afterwards (they were already being played)
    /// count in the score but do not take the verdict back.
    #[test]
    fn the_first_crossing_decides() {
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 10.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let mut tally = MatchTally::new(2000, Some(sprt));
        let mut index = 0;
        while !tally.decided() {
            // Wins and draws: the first engine is much stronger.
            tally.record(index, if index % 3 == 0 { 1 } else { 2 }, "normal");
            index += 1;
            assert!(index < 2000);
        }
        assert_eq!(tally.verdict, SprtVerdict::H1);
        let (games, llr) = tally.decided_at.unwrap();
        assert_eq!(games, index as u32);
        assert!(llr >= sprt.upper(), "{llr}");
        // Two games still being played end in losses: the LLR falls below the bound.
        tally.record(index, 0, "normal");
        tally.record(index + 1, 0, "normal");
        assert!(tally.llr().unwrap() < sprt.upper());
        assert_eq!(tally.verdict, SprtVerdict::H1);
        assert_eq!(tally.decided_at, Some((games, llr)));
    }

    use super::*;

    /// The report line before any decisive game: no Elo of ±0 or infinity, no LOS of 50 %.
    #[test]
    fn the_score_line_says_when_there_is_no_estimate_yet() {
        assert_eq!(score(0, 0, 0).to_string(), "0-0-0, no game finished yet");
        assert_eq!(
            score(0, 4, 0).to_string(),
            "0-4-0 (50.0%), no decisive game yet: no Elo estimate"
        );
        let one = score(1, 3, 0).to_string();
        assert!(one.starts_with("1-3-0 (62.5%), Elo +"), "{one}");
    }

    #[test]
    fn a_tally_pairs_games_in_any_order() {
        let sprt: Sprt = "elo0=0,elo1=5".parse().unwrap();
        let mut tally = MatchTally::new(5, Some(sprt));
        tally.record(1, 2, "normal");
        tally.record(3, 1, "adjudication");
        assert_eq!(tally.score.pairs, [0; 5]);
        tally.record(0, 1, "normal");
        tally.record(4, 0, "time forfeit");
        tally.record(2, 0, "normal");
        assert_eq!(
            (tally.score.wins, tally.score.draws, tally.score.losses),
            (1, 2, 2)
        );
        // Pair 0: 1 + 2 half points; pair 1: 1 + 0; game 4 has no partner.
        assert_eq!(tally.score.pairs, [0, 1, 0, 1, 0]);
        assert_eq!(tally.terminations["normal"], 3);
        assert_eq!(tally.llr(), Some(tally.score.llr(&sprt)));
        assert!(!tally.decided());
    }

    fn score(w: u32, d: u32, l: u32) -> MatchScore {
        MatchScore {
            wins: w,
            draws: d,
            losses: l,
            pairs: [0; 5],
        }
    }

    #[test]
    fn elo_of_a_score() {
        // 75%: -400 log10(1/3) = 190.85 Elo.
        assert!((elo_of(0.75) - 190.848).abs() < 1e-3);
        assert_eq!(elo_of(0.5), 0.0);
        assert!((expected_score(190.848) - 0.75).abs() < 1e-6);
        assert!((erf(1.0) - 0.842_700_79).abs() < 1e-6);
    }

    #[test]
    fn error_bar_and_los() {
        // 60 wins, 20 draws, 20 losses: s = 0.7; the per-game variance is
        // (60 * 0.09 + 20 * 0.04 + 20 * 0.49) / 100 = 0.16, so the 95% interval is
        // 0.7 ± 1.96 * 0.04 = [0.6216, 0.7784]: Elo 147.2 (86.5 .. 218.3).
        let s = score(60, 20, 20);
        let (elo, err) = s.elo().unwrap();
        assert!((elo - 147.19).abs() < 0.01, "{elo}");
        assert!((err - 65.9).abs() < 0.2, "{err}");
        // LOS with 60 wins and 20 losses: Phi(40 / sqrt(80)) = Phi(4.47), all but certain.
        assert!(s.los() > 0.9999);
        assert!((score(10, 5, 10).los() - 0.5).abs() < 1e-6);
        assert_eq!(score(0, 0, 0).elo(), None);
        assert_eq!(score(3, 0, 0).elo(), None);
    }

    /// With colour-swapped pairs the error bar is the pairs' (pentanomial): pairs that split a
    /// win and a loss say the engines are level more surely than 16 independent games would.
    #[test]
    fn the_error_bar_of_paired_games_is_the_pairs_one() {
        // 8 wins, 8 losses: s = 0.5. Per game: variance 0.25 over 16 games, 0.5 ± 1.96 · 0.125
        // = [0.255, 0.745]: ±186.2 Elo. Paired as one lost pair, six split pairs and one won pair
        // (pair scores 0, 0.5 × 6, 1): variance (0.25 + 0.25) / 8 = 0.0625 over 8 pairs,
        // 0.5 ± 1.96 · 0.0884 = [0.3268, 0.6732]: ±125.6 Elo.
        let mut s = score(8, 0, 8);
        let (elo, err) = s.elo().unwrap();
        assert_eq!(elo, 0.0);
        assert!((err - 186.24).abs() < 0.01, "{err}");
        s.pairs = [1, 0, 6, 0, 1];
        let (elo, err) = s.elo().unwrap();
        assert_eq!(elo, 0.0);
        assert!((err - 125.57).abs() < 0.01, "{err}");
        // Pairs all alike (each a win and a loss) tell no spread yet: the per-game bar.
        s.pairs = [0, 0, 8, 0, 0];
        assert!((s.elo().unwrap().1 - 186.24).abs() < 0.01);
        // A real 1,000-game book match (BENCHMARKS.md's grown book, 2026-12-06): +57.5, ± 14.7
        // per game, ± 14.4 from its 500 pairs (the pairs' variance worked out apart from this code).
        let mut s = score(315, 534, 151);
        assert!((s.elo().unwrap().1 - 14.7).abs() < 0.05);
        s.pairs = [10, 79, 196, 167, 48];
        let (elo, err) = s.elo().unwrap();
        assert!(
            (elo - 57.50).abs() < 0.01 && (err - 14.42).abs() < 0.01,
            "{elo} {err}"
        );
    }

    #[test]
    fn sprt_bounds_and_verdicts() {
        let sprt: Sprt = "elo0=0,elo1=5,alpha=0.05,beta=0.05".parse().unwrap();
        // ln(0.05 / 0.95) = -2.944; ln(0.95 / 0.05) = 2.944.
        assert!((sprt.lower() + 2.944).abs() < 1e-3);
        assert!((sprt.upper() - 2.944).abs() < 1e-3);
        // A big lead accepts H1, a big deficit H0, an even score sits in between.
        assert_eq!(
            sprt.verdict(score(600, 200, 200).llr(&sprt)),
            SprtVerdict::H1
        );
        assert_eq!(
            sprt.verdict(score(200, 200, 600).llr(&sprt)),
            SprtVerdict::H0
        );
        assert_eq!(
            sprt.verdict(score(10, 10, 10).llr(&sprt)),
            SprtVerdict::Continue
        );
        for bad in [
            "",
            "elo0=5,elo1=0",
            "elo0=0",
            "elo0=0,elo1=5,alpha=2",
            "x=1",
        ] {
            assert!(bad.parse::<Sprt>().is_err(), "{bad}");
        }
    }

    #[test]
    fn llr_by_hand() {
        // On a large even sample the exact LLR is close to its normal approximation
        // N (s1 - s0) (2 s - s0 - s1) / (2 var).
        // 30 wins, 40 draws, 30 losses (s = 0.5, variance 0.15) against elo0=0, elo1=10:
        // s0 = 0.5, s1 = 0.51439; LLR = 100 * 0.01439 * (1 - 0.5 - 0.51439) / 0.3 = -0.0690.
        let sprt: Sprt = "elo0=0,elo1=10".parse().unwrap();
        let llr = score(30, 40, 30).llr(&sprt);
        assert!((llr + 0.0690).abs() < 2e-3, "{llr}");
        // The same per pair: 50 pairs, 10 of each result (mean 0.5, variance 0.125):
        // LLR = 50 * 0.01439 * (-0.01439) / 0.25 = -0.0414.
        let mut s = score(0, 0, 0);
        for i in 0..5u8 {
            for _ in 0..10 {
                s.add_pair(i);
            }
        }
        let llr = s.llr(&sprt);
        assert!((llr + 0.0414).abs() < 2e-3, "{llr}");
        assert_eq!(score(0, 0, 0).llr(&sprt), 0.0);
    }

    #[test]
    fn llr_of_one_sided_samples() {
        // Only wins: the most likely distributions with means s0 and s1 put s0 and s1 on a win,
        // so the LLR is the binomial one, n ln(s1 / s0). elo1=200: s1 = 0.75975, so each win
        // adds ln(1.5195) = 0.4184; 7 wins (2.93) don't reach the bound 2.944, 8 (3.35) do.
        let sprt: Sprt = "elo0=0,elo1=200".parse().unwrap();
        let llr = score(8, 0, 0).llr(&sprt);
        assert!(
            (llr - 8.0 * (expected_score(200.0) / 0.5).ln()).abs() < 0.01,
            "{llr}"
        );
        assert_eq!(
            sprt.verdict(score(7, 0, 0).llr(&sprt)),
            SprtVerdict::Continue
        );
        assert_eq!(sprt.verdict(llr), SprtVerdict::H1);
        // One loss decides nothing: ln((1 - s1) / (1 - s0)) with s0 = E(-10), s1 = 0.5.
        let sprt: Sprt = "elo0=-10,elo1=0".parse().unwrap();
        let llr = score(0, 0, 1).llr(&sprt);
        let expected = (0.5 / (1.0 - expected_score(-10.0))).ln();
        assert!((llr - expected).abs() < 0.01, "{llr} vs {expected}");
    }
}
