//! Texel's tuning method: the evaluation's weights fitted to the results of real games.
//!
//! Every position of a game that the engine would evaluate "quietly" is labelled with the game's
//! result (1, ½ or 0 for White). The evaluation, squashed by a sigmoid, predicts that result:
//! `sigmoid(K × eval) = 1 / (1 + 10^(-K × eval / 400))`, and the loss is the mean squared error
//! between the two. First K is fitted with the weights fixed (it is the scale between centipawns
//! and winning chances), then the weights by gradient descent (Adam) on the same loss.
//!
//! Positions are read with the build's PGN inputs (plain or compressed files, folders) and its
//! reader (`pgn::read::read_games`: a game whose tag section breaks is skipped). A position
//! is kept when it is past the opening (`skip_plies`), its side to move is not in check, and a
//! quiescence search (captures only) does not change its static score: a position with a capture
//! pending is not what the evaluation is for. A seeded reservoir sample keeps `positions` of them;
//! the games numbered 10, 20, 30 … of the input are held out to measure the loss on positions the
//! weights were not fitted to.
//!
//! The evaluation is linear in its weights: each position is stored as its "trace", how often each
//! weight counts (White's counts minus Black's, [`eval::trace`]), and its phase. An epoch then
//! costs a few multiplications per stored count, not a call to the evaluation.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Chess, Position};

use crate::atomic::AtomicFile;
use crate::engine::eval::{self, Params, Weight, evaluate, index::COUNT, see_value};
use crate::pgn::input::{Chunks, Input};
use crate::pgn::main_line::{MainLineReader, MainLines};
use crate::pgn::tags::StartTags;
use crate::text::{quote_path, reason};

/// What to sample and how long to fit.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// Positions to keep (training and held-out together).
    pub positions: usize,
    /// Passes of gradient descent over the training positions.
    pub epochs: usize,
    /// Plies of each game not sampled (the opening, which books cover).
    pub skip_plies: usize,
    /// Adam's step size, in centipawns.
    pub learning_rate: f64,
    /// The weight of the pull towards the start (L2: λ × (w − start)² per weight, added to the
    /// loss): it keeps weights that the games barely determine near PeSTO's values.
    pub regularization: f64,
    /// The seed of the sample.
    pub seed: u64,
    /// Threads for the gradient.
    pub threads: usize,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            positions: 1_000_000,
            epochs: 1000,
            skip_plies: 16,
            learning_rate: 1.0,
            regularization: 0.0,
            seed: 1,
            threads: crate::cores::cores(),
        }
    }
}

/// Why tuning failed.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error(transparent)]
    Input(#[from] crate::pgn::input::InputError),
    #[error("no usable positions in the games (finished standard games with 1-0, 0-1 or 1/2-1/2)")]
    NoPositions,
    #[error("{path}: cannot write: {why}")]
    Output { path: String, why: String },
}

/// The positions read, before the quiescence filter.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct ReadReport {
    pub games: u64,
    /// Games with a result and the standard start whose positions were candidates.
    pub games_used: u64,
    pub candidates: u64,
    pub sampled: usize,
    /// Sampled positions kept after the quiescence filter, for training and held out.
    pub train: usize,
    pub held_out: usize,
}

/// One position's trace: its counts are `entries[start..start + len]`.
#[derive(Clone, Copy, Debug)]
struct Sample {
    start: u32,
    len: u16,
    /// The middlegame share of the blend, phase / 24.
    mg_share: f32,
    mop_up: i16,
    /// White's result: 1, 0.5, 0.
    result: f32,
}

/// Positions as traces, ready for the loss and its gradient.
#[derive(Default)]
pub struct Dataset {
    samples: Vec<Sample>,
    entries: Vec<(u16, i16)>,
}

impl Dataset {
    fn push(&mut self, pos: &Chess, result: f32) {
        let (trace, blend) = eval::trace(pos);
        let start = self.entries.len() as u32;
        for (i, &n) in trace.count.iter().enumerate() {
            if n != 0 {
                self.entries.push((i as u16, n as i16));
            }
        }
        self.samples.push(Sample {
            start,
            len: (self.entries.len() as u32 - start) as u16,
            mg_share: blend.phase as f32 / 24.0,
            mop_up: blend.mop_up as i16,
            result,
        });
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The evaluation (White's view) of one sample under weights `w` (mg then eg per weight).
    fn eval(&self, s: &Sample, w: &[f64]) -> f64 {
        let mg_share = f64::from(s.mg_share);
        let (mut mg, mut eg) = (0.0, f64::from(s.mop_up));
        for &(i, n) in &self.entries[s.start as usize..(s.start + u32::from(s.len)) as usize] {
            let n = f64::from(n);
            mg += n * w[2 * i as usize];
            eg += n * w[2 * i as usize + 1];
        }
        mg * mg_share + eg * (1.0 - mg_share)
    }

    /// The mean squared error of the prediction `sigmoid(k × eval)` against the results.
    pub fn loss(&self, w: &[f64], k: f64, threads: usize) -> f64 {
        let parts = self.over_chunks(threads, |chunk| {
            chunk
                .iter()
                .map(|s| (f64::from(s.result) - sigmoid(k * self.eval(s, w))).powi(2))
                .sum::<f64>()
        });
        parts.iter().sum::<f64>() / self.len() as f64
    }

    /// The loss's gradient with respect to every weight (mg then eg per weight).
    fn gradient(&self, w: &[f64], k: f64, threads: usize) -> Vec<f64> {
        let parts = self.over_chunks(threads, |chunk| {
            let mut g = vec![0.0; 2 * COUNT];
            for s in chunk {
                let p = sigmoid(k * self.eval(s, w));
                // d/dE (r - p)² = -2 (r - p) p (1 - p) k ln10/400
                let d = -2.0 * (f64::from(s.result) - p) * p * (1.0 - p) * k * LN10_400;
                let mg = d * f64::from(s.mg_share);
                let eg = d - mg;
                let range = s.start as usize..(s.start + u32::from(s.len)) as usize;
                for &(i, n) in &self.entries[range] {
                    let n = f64::from(n);
                    g[2 * i as usize] += n * mg;
                    g[2 * i as usize + 1] += n * eg;
                }
            }
            g
        });
        let mut total = vec![0.0; 2 * COUNT];
        for part in parts {
            for (t, x) in total.iter_mut().zip(part) {
                *t += x / self.len() as f64;
            }
        }
        total
    }

    /// Runs `f` over the samples cut into `threads` pieces, one thread each.
    fn over_chunks<T: Send>(&self, threads: usize, f: impl Fn(&[Sample]) -> T + Sync) -> Vec<T> {
        let size = self.samples.len().div_ceil(threads.max(1)).max(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .samples
                .chunks(size)
                .map(|chunk| scope.spawn(|| f(chunk)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a tuning thread panicked"))
                .collect()
        })
    }
}

const LN10_400: f64 = std::f64::consts::LN_10 / 400.0;

/// The predicted score for White of an evaluation already scaled by K.
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x * LN10_400).exp())
}

/// The weights as floats, mg then eg per weight, for the descent.
fn to_floats(p: &Params) -> Vec<f64> {
    p.w.iter()
        .flat_map(|w| [f64::from(w.mg), f64::from(w.eg)])
        .collect()
}

fn to_params(w: &[f64]) -> Params {
    let mut p = Params::start();
    for (i, weight) in p.w.iter_mut().enumerate() {
        *weight = Weight {
            mg: w[2 * i].round() as i32,
            eg: w[2 * i + 1].round() as i32,
        };
    }
    p
}

/// Reads the games of `inputs` and keeps a seeded sample of quiet positions with their results,
/// split into training and held-out positions. `progress` hears the bytes and games read so far
/// after each chunk of input.
pub fn read_positions(
    inputs: &[Input],
    options: &TuneOptions,
    start: &Params,
    progress: &dyn crate::pgn::Progress,
) -> Result<(Dataset, Dataset, ReadReport), TuneError> {
    let bytes_read = Arc::new(AtomicU64::new(0));
    let rng = StdRng::seed_from_u64(options.seed);
    let mut visitor = MainLines(Sampler {
        options,
        rng: rng.clone(),
        reservoir: Vec::with_capacity(options.positions.min(1 << 24)),
        report: ReadReport::default(),
        rng_at_mark: rng,
        journal: Vec::new(),
    });
    for input in inputs {
        let read_error = |e: std::io::Error| TuneError::Input(input.read_error(&e));
        let mut chunks = Chunks::open(input, bytes_read.clone(), 1 << 22).map_err(read_error)?;
        while let Some(chunk) = chunks.next_chunk().map_err(read_error)? {
            crate::pgn::read::read_games(&chunk, &mut visitor);
            progress.update(
                bytes_read.load(std::sync::atomic::Ordering::Relaxed),
                visitor.0.report.games,
            );
        }
    }
    let MainLines(sampler) = visitor;
    let mut report = sampler.report;
    report.sampled = sampler.reservoir.len();
    let mut sampled = sampler.reservoir;
    // In input order, so that the sample does not depend on the reservoir's order.
    sampled.sort_by_key(|c| c.order);

    // Keep the quiet positions: those whose captures do not change the static score.
    let threads = options.threads.max(1);
    let size = sampled.len().div_ceil(threads).max(1);
    let quiet: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = sampled
            .chunks(size)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|c| quiesce(&c.pos, -INF, INF, start, 8) == evaluate(&c.pos, start))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a tuning thread panicked"))
            .collect()
    });
    let (mut train, mut held_out) = (Dataset::default(), Dataset::default());
    for (c, quiet) in sampled.iter().zip(quiet) {
        if quiet {
            let set = if c.game % 10 == 0 {
                &mut held_out
            } else {
                &mut train
            };
            set.push(&c.pos, c.result);
        }
    }
    report.train = train.len();
    report.held_out = held_out.len();
    if train.is_empty() || held_out.is_empty() {
        return Err(TuneError::NoPositions);
    }
    Ok((train, held_out, report))
}

const INF: i32 = 1 << 20;

/// A captures-only search with "stand pat": the score once the exchanges in progress are over.
fn quiesce(pos: &Chess, mut alpha: i32, beta: i32, params: &Params, depth: u32) -> i32 {
    let stand = evaluate(pos, params);
    if stand >= beta || depth == 0 {
        return stand;
    }
    alpha = alpha.max(stand);
    let mut captures = pos.capture_moves();
    // Most valuable victim first, least valuable attacker first among equals.
    captures.sort_by_key(|m| {
        let victim = m.capture().map_or(0, see_value);
        -(victim * 16 - see_value(m.role()) / 100)
    });
    let mut best = stand;
    for m in captures {
        let mut next = pos.clone();
        next.play_unchecked(m);
        let score = -quiesce(&next, -beta, -alpha, params, depth - 1);
        if score > best {
            best = score;
            if score >= beta {
                break;
            }
            alpha = alpha.max(score);
        }
    }
    best
}

/// A sampled position: where it came from and the game's result for White.
struct Candidate {
    pos: Chess,
    result: f32,
    /// The game's number in the input (1-based), for the held-out split.
    game: u64,
    /// The position's number among all candidates, to put the sample back in input order.
    order: u64,
}

/// The reader of positions ([`MainLineReader`]) that feeds each game's positions to the reservoir.
struct Sampler<'a> {
    options: &'a TuneOptions,
    rng: StdRng,
    reservoir: Vec<Candidate>,
    report: ReadReport,
    /// The generator as it was at the last mark, to go back to if the reader rewinds.
    rng_at_mark: StdRng,
    /// The candidates replaced in the reservoir since the last mark, with their places, to put
    /// back if the reader rewinds.
    journal: Vec<(usize, Candidate)>,
}

/// Where the sample stood at a mark (the generator and the replaced candidates are kept by the
/// sampler itself).
#[derive(Clone, Copy)]
struct SamplerMark {
    reservoir: usize,
    report: ReadReport,
}

/// What the sample keeps of a game while it is read.
struct Game {
    /// White's result: 1, ½ or 0.
    result: f32,
    /// The game's candidates, in order.
    positions: Vec<Chess>,
}

impl MainLineReader for Sampler<'_> {
    type Game = Game;
    type Mark = SamplerMark;

    fn begin_game(&mut self) {
        self.report.games += 1;
    }

    fn start(&mut self, tags: StartTags) -> Option<(Chess, Game)> {
        // White's result: 1, ½ or 0; games from the usual start position only.
        let result = f32::from(tags.result.white_points()?) / 2.0;
        let pos = tags.start(false)?;
        self.report.games_used += 1;
        let positions = Vec::new();
        Some((pos, Game { result, positions }))
    }

    fn after_move(&mut self, game: &mut Game, pos: &Chess, ply: u32) {
        if ply as usize >= self.options.skip_plies && !pos.is_check() {
            game.positions.push(pos.clone());
        }
    }

    fn end_game(&mut self, game: Game) {
        let number = self.report.games;
        for pos in game.positions {
            // Reservoir sampling: every candidate ends up kept with the same chance.
            let order = self.report.candidates;
            self.report.candidates += 1;
            let candidate = Candidate {
                pos,
                result: game.result,
                game: number,
                order,
            };
            if self.reservoir.len() < self.options.positions {
                self.reservoir.push(candidate);
            } else {
                let j = self.rng.random_range(0..=order);
                if (j as usize) < self.options.positions {
                    let old = std::mem::replace(&mut self.reservoir[j as usize], candidate);
                    self.journal.push((j as usize, old));
                }
            }
        }
    }

    fn mark(&mut self) -> SamplerMark {
        self.journal.clear();
        self.rng_at_mark = self.rng.clone();
        SamplerMark {
            reservoir: self.reservoir.len(),
            report: self.report,
        }
    }

    /// The reader reads the games since the mark again (a tag section broke among them): the
    /// sample goes back to where it stood, so that each game counts once and the sample is the
    /// one the games alone give.
    fn rewind(&mut self, mark: SamplerMark) {
        for (place, candidate) in self.journal.drain(..).rev() {
            self.reservoir[place] = candidate;
        }
        self.reservoir.truncate(mark.reservoir);
        self.rng = self.rng_at_mark.clone();
        self.report = mark.report;
    }
}

/// What tuning did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TuneReport {
    pub read: ReadReport,
    /// The fitted scale between centipawns and winning chances.
    pub k: f64,
    pub train_before: f64,
    pub held_out_before: f64,
    pub train_after: f64,
    pub held_out_after: f64,
    pub epochs: usize,
}

/// Fits K for the weights `w`: the scale that minimises the loss (a golden-section search; the
/// loss is unimodal in K).
pub fn fit_k(data: &Dataset, w: &[f64], threads: usize) -> f64 {
    let (mut lo, mut hi) = (0.05f64, 4.0f64);
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..40 {
        let a = hi - ratio * (hi - lo);
        let b = lo + ratio * (hi - lo);
        if data.loss(w, a, threads) < data.loss(w, b, threads) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

/// Fits the weights from `start` on `train` by Adam, reporting each epoch's training loss to
/// `progress` (epoch, loss) every `every` epochs; returns the weights and the report.
pub fn tune(
    train: &Dataset,
    held_out: &Dataset,
    read: ReadReport,
    start: &Params,
    options: &TuneOptions,
    every: usize,
    progress: &mut dyn FnMut(usize, f64),
) -> (Params, TuneReport) {
    let threads = options.threads.max(1);
    let mut w = to_floats(start);
    let w0 = w.clone();
    let k = fit_k(train, &w, threads);
    let train_before = train.loss(&w, k, threads);
    let held_out_before = held_out.loss(&w, k, threads);
    let (beta1, beta2, eps): (f64, f64, f64) = (0.9, 0.999, 1e-8);
    let mut m = vec![0.0; w.len()];
    let mut v = vec![0.0; w.len()];
    for epoch in 1..=options.epochs {
        let mut g = train.gradient(&w, k, threads);
        for ((g, w), w0) in g.iter_mut().zip(&w).zip(&w0) {
            *g += 2.0 * options.regularization * (w - w0);
        }
        let (c1, c2) = (
            1.0 - beta1.powi(epoch as i32),
            1.0 - beta2.powi(epoch as i32),
        );
        for i in 0..w.len() {
            m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
            v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i];
            w[i] -= options.learning_rate * (m[i] / c1) / ((v[i] / c2).sqrt() + eps);
        }
        if every > 0 && (epoch % every == 0 || epoch == options.epochs) {
            progress(epoch, train.loss(&w, k, threads));
        }
    }
    let tuned = to_params(&w);
    let rounded = to_floats(&tuned);
    let report = TuneReport {
        read,
        k,
        train_before,
        held_out_before,
        train_after: train.loss(&rounded, k, threads),
        held_out_after: held_out.loss(&rounded, k, threads),
        epochs: options.epochs,
    };
    (tuned, report)
}

/// Opens the output before the work, so that a path that cannot be written is found at once.
pub fn create_output(path: &Path) -> Result<AtomicFile, TuneError> {
    AtomicFile::create(path).map_err(|e| TuneError::Output {
        path: quote_path(path),
        why: reason(&e),
    })
}

/// Writes a parameter file (`Params::parse` reads it; `src/engine/params.txt` is one) into the
/// file [`create_output`] opened, and puts it in place whole.
pub fn write_params(
    mut file: AtomicFile,
    path: &Path,
    params: &Params,
    header: &str,
) -> Result<(), TuneError> {
    let err = |e: std::io::Error| TuneError::Output {
        path: quote_path(path),
        why: reason(&e),
    };
    for line in header.lines() {
        writeln!(file, "# {line}").map_err(err)?;
    }
    file.write_all(params.to_text().as_bytes()).map_err(err)?;
    file.commit(false).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report (as text) and the traces of the training and held-out positions.
    type Sampled = (String, Vec<(u16, i16)>, Vec<(u16, i16)>);

    /// What is sampled from `text`, one file, by a reservoir smaller than its candidates.
    fn sample(text: &str) -> Sampled {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.pgn");
        std::fs::write(&path, text).unwrap();
        let options = TuneOptions {
            positions: 80,
            skip_plies: 4,
            threads: 1,
            ..TuneOptions::default()
        };
        let (train, held_out, report) =
            read_positions(&[Input::File(path)], &options, &Params::start(), &()).unwrap();
        (format!("{report:?}"), train.entries, held_out.entries)
    }

    #[test]
    fn a_tag_too_long_for_the_reader_changes_nothing_that_is_sampled() {
        // The reader breaks on a tag longer than its buffer (16 KB) and reads the run's games
        // again one by one: the games before it must not count twice, nor move the sample on.
        let lines = [
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7",
            "1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Bd3 d5 6. Nf3 c5 7. O-O Nc6 8. a3 Bxc3 9. bxc3 dxc4 10. Bxc4 Qc7",
            "1. c4 e5 2. Nc3 Nf6 3. Nf3 Nc6 4. g3 d5 5. cxd5 Nxd5 6. Bg2 Nb6 7. O-O Be7 8. d3 O-O 9. a3 Be6 10. b4 f6",
        ];
        let games = |annotator: &str| -> String {
            (0..20)
                .map(|i| {
                    let name = if i == 13 { annotator } else { "A" };
                    let result = ["1-0", "0-1", "1/2-1/2"][i % 3];
                    format!(
                        "[Event \"t\"]\n[Annotator \"{name}\"]\n[Result \"{result}\"]\n\n{} {result}\n\n",
                        lines[i % 3]
                    )
                })
                .collect()
        };
        let expected = sample(&games("B"));
        assert!(expected.0.contains("games: 20,"), "{}", expected.0);
        assert!(!expected.2.is_empty(), "positions are held out");
        let (report, train, held_out) = sample(&games(&"x".repeat(20_000)));
        assert_eq!(report, expected.0);
        assert!(
            train == expected.1 && held_out == expected.2,
            "another sample"
        );
    }
}
