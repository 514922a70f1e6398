//! A WDL model: the chances of a win, a draw and a loss from a score in centipawns, for
//! `export --draw-rate` (the "4852" suites of official-stockfish/books keep the openings whose
//! draw rate lies in 48–52 %).
//!
//! The model is Stockfish's logistic one with constant parameters: for a score `cp` of the side to
//! move (or White's, the model is symmetric),
//!
//! ```text
//! P(win | cp)  = 1 / (1 + exp((a - cp) / b))
//! P(loss | cp) = 1 / (1 + exp((a + cp) / b))
//! P(draw | cp) = 1 - P(win | cp) - P(loss | cp)
//! ```
//!
//! so `a` is the score at which a win is as likely as not, and `b` how fast the chances turn with
//! the score. [`WdlModel::SELFPLAY`] is fitted by maximum likelihood ([`fit`]) to the engine's own
//! games and scores shipped in `nets/` (docs/analyse.md says how; `polybook fit-wdl` redoes it).

use std::collections::BTreeMap;

/// The parameters of the logistic WDL model, in centipawns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WdlModel {
    /// The score at which a win is as likely as not.
    pub a: f64,
    /// The spread: how many centipawns change the odds by a factor e.
    pub b: f64,
}

impl Default for WdlModel {
    fn default() -> Self {
        WdlModel::SELFPLAY
    }
}

impl WdlModel {
    /// The model fitted by `polybook fit-wdl` (its default data: the labels `nets/selfplay-1.labels`,
    /// `nets/selfplay-1-1.labels`, `nets/selfplay-2.labels`, `nets/selfplay-2-1.labels` with the
    /// games `nets/selfplay-1.pgn.xz` and `nets/selfplay-2.pgn.xz` they score), rounded to two
    /// decimals. The test `suites::the_wdl_model_is_the_fit_of_the_shipped_games` fits it again.
    pub const SELFPLAY: WdlModel = WdlModel {
        a: 149.67,
        b: 237.40,
    };

    /// The chance of a win for the side whose score is `cp`.
    pub fn win(&self, cp: f64) -> f64 {
        logistic((cp - self.a) / self.b)
    }

    /// The chance of a loss for the side whose score is `cp`.
    pub fn loss(&self, cp: f64) -> f64 {
        logistic((-cp - self.a) / self.b)
    }

    /// The chance of a draw at a score of `cp` (either side's: the model is symmetric).
    pub fn draw(&self, cp: f64) -> f64 {
        (1.0 - self.win(cp) - self.loss(cp)).max(0.0)
    }

    /// The log-likelihood of `counts` (score → games lost, drawn, won, for the side of the score)
    /// and its gradient in (a, b).
    fn log_likelihood(&self, counts: &BTreeMap<i32, [u64; 3]>) -> (f64, [f64; 2]) {
        let (mut ll, mut grad) = (0.0, [0.0; 2]);
        for (&cp, n) in counts {
            let cp = f64::from(cp);
            let (u, v) = ((cp - self.a) / self.b, (-cp - self.a) / self.b);
            let (w, l) = (logistic(u), logistic(v));
            let d = 1.0 - w - l;
            // The derivatives of the win and loss chances in a and b.
            let dw = [-w * (1.0 - w) / self.b, -w * (1.0 - w) * u / self.b];
            let dl = [-l * (1.0 - l) / self.b, -l * (1.0 - l) * v / self.b];
            let tiny = 1e-300;
            for (k, (p, dp)) in [(l, dl), (d, [-dw[0] - dl[0], -dw[1] - dl[1]]), (w, dw)]
                .into_iter()
                .enumerate()
            {
                if n[k] == 0 {
                    continue;
                }
                let games = n[k] as f64;
                let p = p.max(tiny);
                ll += games * p.ln();
                grad[0] += games * dp[0] / p;
                grad[1] += games * dp[1] / p;
            }
        }
        (ll, grad)
    }
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The model of greatest likelihood for `samples`: (score in centipawns for a side, that side's
/// result: 0 lost, 1 drawn, 2 won). Newton's method on the log-likelihood (its Hessian from
/// differences of the exact gradient), each step halved until the likelihood grows, from
/// a = 100, b = 100; it stops when a step moves neither parameter by 0.0001 centipawn.
pub fn fit(samples: impl IntoIterator<Item = (i32, u8)>) -> WdlModel {
    let mut counts: BTreeMap<i32, [u64; 3]> = BTreeMap::new();
    for (cp, result) in samples {
        counts.entry(cp).or_default()[usize::from(result.min(2))] += 1;
    }
    let mut model = WdlModel { a: 100.0, b: 100.0 };
    let (mut ll, mut grad) = model.log_likelihood(&counts);
    for _ in 0..200 {
        let h = 1e-4;
        let (_, ga) = WdlModel {
            a: model.a + h,
            ..model
        }
        .log_likelihood(&counts);
        let (_, gb) = WdlModel {
            b: model.b + h,
            ..model
        }
        .log_likelihood(&counts);
        // The Hessian [[haa, hab], [hab, hbb]], symmetrised.
        let haa = (ga[0] - grad[0]) / h;
        let hbb = (gb[1] - grad[1]) / h;
        let hab = 0.5 * ((ga[1] - grad[1]) / h + (gb[0] - grad[0]) / h);
        let det = haa * hbb - hab * hab;
        // Newton's step where the Hessian is negative definite, else a gradient step.
        let mut step = if haa < 0.0 && det > 0.0 {
            [
                -(hbb * grad[0] - hab * grad[1]) / det,
                -(haa * grad[1] - hab * grad[0]) / det,
            ]
        } else {
            let norm = grad[0].hypot(grad[1]).max(1e-12);
            [grad[0] / norm, grad[1] / norm]
        };
        let mut moved = false;
        for _ in 0..60 {
            let next = WdlModel {
                a: model.a + step[0],
                b: model.b + step[1],
            };
            if next.a > 0.0 && next.b > 0.0 {
                let (next_ll, next_grad) = next.log_likelihood(&counts);
                if next_ll >= ll {
                    model = next;
                    (ll, grad) = (next_ll, next_grad);
                    moved = true;
                    break;
                }
            }
            step = [step[0] / 2.0, step[1] / 2.0];
        }
        if !moved || (step[0].abs() < 1e-4 && step[1].abs() < 1e-4) {
            break;
        }
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_finds_the_model_that_made_the_results() {
        // Results drawn in proportion from a known model: the fit gives it back.
        let truth = WdlModel { a: 150.0, b: 60.0 };
        let mut samples = Vec::new();
        for cp in (-600..=600).step_by(5) {
            let cp_f = f64::from(cp);
            for (result, p) in [
                (0, truth.loss(cp_f)),
                (1, truth.draw(cp_f)),
                (2, truth.win(cp_f)),
            ] {
                let n = (p * 2000.0).round() as usize;
                samples.extend(std::iter::repeat_n((cp, result), n));
            }
        }
        let fitted = fit(samples);
        assert!((fitted.a - truth.a).abs() < 1.0, "{fitted:?}");
        assert!((fitted.b - truth.b).abs() < 1.0, "{fitted:?}");
    }

    #[test]
    fn draws_are_likeliest_at_equal_scores() {
        let m = WdlModel { a: 150.0, b: 60.0 };
        assert!(m.draw(0.0) > m.draw(100.0) && m.draw(100.0) > m.draw(300.0));
        assert!((m.draw(80.0) - m.draw(-80.0)).abs() < 1e-12);
        assert!((m.win(0.0) + m.draw(0.0) + m.loss(0.0) - 1.0).abs() < 1e-12);
    }
}
