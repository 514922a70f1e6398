//! A match's score as Elo: the difference, its 95% error bar, the likelihood of superiority,
//! and the sequential probability ratio test (SPRT) that stops a match once it has decided.
//!
//! The formulas are the ones cutechess-cli and fishtest use: the Elo difference of a score `s`
//! is `-400 log10(1/s - 1)`; the error bar comes from the variance of the per-game scores
//! (trinomial: win 1, draw ½, loss 0); the SPRT is the generalized SPRT on the logistic Elo
//! scale, `LLR = N (s1 - s0) (2 s̄ - s0 - s1) / (2 σ²)`, with bounds `ln(β/(1-α))` and
//! `ln((1-β)/α)`. When the games come in colour-swapped pairs, the SPRT uses the pairs'
//! scores (pentanomial), which removes the noise the openings add.

use std::fmt;
use std::str::FromStr;

/// Wins, draws and losses from the first engine's point of view, and the finished pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
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

impl Score {
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

    /// The per-game variance of the score.
    fn variance(&self) -> f64 {
        let n = f64::from(self.games());
        let s = self.ratio();
        (f64::from(self.wins) * (1.0 - s).powi(2)
            + f64::from(self.draws) * (0.5 - s).powi(2)
            + f64::from(self.losses) * s.powi(2))
            / n
    }

    /// The Elo difference and its 95% error bar (half the interval's width), when both are
    /// finite (not with no games, or all won, or all lost).
    pub fn elo(&self) -> Option<(f64, f64)> {
        let n = f64::from(self.games());
        let s = self.ratio();
        if n == 0.0 || s <= 0.0 || s >= 1.0 {
            return None;
        }
        let margin = Z95 * (self.variance() / n).sqrt();
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

    /// The mean and variance of the score per unit: per pair (pentanomial) when there are
    /// finished pairs, else per game (trinomial); and the number of units. As fishtest does, a
    /// count of zero is taken as 0.001, so that a one-sided score (all wins, say) still has a
    /// variance and the test can decide.
    fn units(&self) -> (f64, f64, f64) {
        let pairs: u32 = self.pairs.iter().sum();
        let (counts, n): (Vec<(f64, f64)>, f64) = if pairs > 0 {
            let counts = (0..5).map(|i| (i as f64 / 4.0, f64::from(self.pairs[i])));
            (counts.collect(), f64::from(pairs))
        } else {
            let counts = [(1.0, self.wins), (0.5, self.draws), (0.0, self.losses)];
            let counts = counts.iter().map(|&(s, c)| (s, f64::from(c)));
            (counts.collect(), f64::from(self.games()))
        };
        let counts: Vec<(f64, f64)> = counts
            .into_iter()
            .map(|(s, c)| (s, if c == 0.0 { 1e-3 } else { c }))
            .collect();
        let total: f64 = counts.iter().map(|(_, c)| c).sum();
        let mean = counts.iter().map(|(s, c)| s * c).sum::<f64>() / total;
        let var = counts
            .iter()
            .map(|(s, c)| c * (s - mean).powi(2))
            .sum::<f64>()
            / total;
        (n, mean, var)
    }

    /// The log-likelihood ratio of `elo1` against `elo0` (0 while it is undefined: no games,
    /// or no variance yet).
    pub fn llr(&self, sprt: &Sprt) -> f64 {
        let (n, mean, var) = self.units();
        if n == 0.0 || var <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = (expected_score(sprt.elo0), expected_score(sprt.elo1));
        n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    }
}

impl fmt::Display for Score {
    /// `W-D-L`, the score in percent, Elo ± error bar and the LOS.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{}-{} ({:.1}%)",
            self.wins,
            self.draws,
            self.losses,
            self.ratio() * 100.0
        )?;
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

/// What an SPRT says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// H1 accepted: the difference is at least about `elo1`.
    H1,
    /// H0 accepted: the difference is at most about `elo0`.
    H0,
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

    pub fn verdict(&self, llr: f64) -> Verdict {
        if llr >= self.upper() {
            Verdict::H1
        } else if llr <= self.lower() {
            Verdict::H0
        } else {
            Verdict::Continue
        }
    }
}

impl FromStr for Sprt {
    type Err = String;

    /// `elo0=0,elo1=5,alpha=0.05,beta=0.05` (alpha and beta default to 0.05).
    fn from_str(text: &str) -> Result<Sprt, String> {
        let mut sprt = Sprt {
            elo0: f64::NAN,
            elo1: f64::NAN,
            alpha: 0.05,
            beta: 0.05,
        };
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("--sprt '{text}': '{part}' is not NAME=VALUE"))?;
            let value: f64 = value
                .trim()
                .parse()
                .map_err(|_| format!("--sprt '{text}': '{value}' is not a number"))?;
            match name.trim() {
                "elo0" => sprt.elo0 = value,
                "elo1" => sprt.elo1 = value,
                "alpha" => sprt.alpha = value,
                "beta" => sprt.beta = value,
                other => {
                    return Err(format!(
                        "--sprt '{text}': unknown '{other}' (expected elo0, elo1, alpha, beta)"
                    ));
                }
            }
        }
        if !sprt.elo0.is_finite() || !sprt.elo1.is_finite() {
            return Err(format!("--sprt '{text}': elo0 and elo1 are required"));
        }
        if sprt.elo1 <= sprt.elo0 {
            return Err(format!("--sprt '{text}': elo1 must be greater than elo0"));
        }
        for p in [sprt.alpha, sprt.beta] {
            if !(p > 0.0 && p < 0.5) {
                return Err(format!(
                    "--sprt '{text}': alpha and beta must be between 0 and 0.5"
                ));
            }
        }
        Ok(sprt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(w: u32, d: u32, l: u32) -> Score {
        Score {
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

    #[test]
    fn sprt_bounds_and_verdicts() {
        let sprt: Sprt = "elo0=0,elo1=5,alpha=0.05,beta=0.05".parse().unwrap();
        // ln(0.05 / 0.95) = -2.944; ln(0.95 / 0.05) = 2.944.
        assert!((sprt.lower() + 2.944).abs() < 1e-3);
        assert!((sprt.upper() - 2.944).abs() < 1e-3);
        // A big lead accepts H1, a big deficit H0, an even score sits in between.
        assert_eq!(sprt.verdict(score(600, 200, 200).llr(&sprt)), Verdict::H1);
        assert_eq!(sprt.verdict(score(200, 200, 600).llr(&sprt)), Verdict::H0);
        assert_eq!(
            sprt.verdict(score(10, 10, 10).llr(&sprt)),
            Verdict::Continue
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
        // 30 wins, 40 draws, 30 losses (s = 0.5, variance 0.15) against elo0=0, elo1=10:
        // s0 = 0.5, s1 = 0.51439; LLR = 100 * 0.01439 * (1 - 0.5 - 0.51439) / 0.3 = -0.0690.
        let sprt: Sprt = "elo0=0,elo1=10".parse().unwrap();
        let llr = score(30, 40, 30).llr(&sprt);
        assert!((llr + 0.0690).abs() < 1e-3, "{llr}");
        // The same per pair: 50 pairs, 10 of each result (mean 0.5, variance 0.125):
        // LLR = 50 * 0.01439 * (-0.01439) / 0.25 = -0.0414.
        let mut s = score(0, 0, 0);
        for i in 0..5u8 {
            for _ in 0..10 {
                s.add_pair(i);
            }
        }
        let llr = s.llr(&sprt);
        assert!((llr + 0.0414).abs() < 1e-3, "{llr}");
        // All wins: the zero counts are regularized, so the test decides (H1) at once.
        assert_eq!(sprt.verdict(score(8, 0, 0).llr(&sprt)), Verdict::H1);
        assert_eq!(sprt.verdict(score(0, 0, 0).llr(&sprt)), Verdict::Continue);
    }
}
