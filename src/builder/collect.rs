//! The collector, on the build's own thread: the parsers' statistics taken in input order, so
//! that a game's number in a message counts from the start of its input; the report's counts;
//! `--strict`; progress and cancellation while the others work.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use super::game::Incident;
use super::{BuildError, BuildReport};
use crate::pgn::Progress;
use crate::pgn::input::Input;
use crate::pgn::reorder::Reorder;

/// The games skipped or cut short that the report names, at most.
const MAX_EXAMPLES: usize = 20;

/// What a parser reports about one chunk (the plies go to the tally threads).
pub struct ChunkStats {
    /// The chunk's number in input order.
    pub index: u64,
    /// The input it was cut from.
    pub source: usize,
    pub games: u64,
    pub used: u64,
    pub plies: u64,
    pub incidents: Vec<Incident>,
}

/// Adds up the chunks' statistics, in input order, into the report.
pub struct Collector<'a> {
    inputs: &'a [Input],
    strict: bool,
    in_order: Reorder<ChunkStats>,
    /// Games read so far from each input.
    games_in_source: HashMap<usize, u64>,
    report: BuildReport,
    /// The first bad game, with `--strict`.
    failure: Option<BuildError>,
}

impl<'a> Collector<'a> {
    pub fn new(inputs: &'a [Input], strict: bool) -> Self {
        Collector {
            inputs,
            strict,
            in_order: Reorder::new(),
            games_in_source: HashMap::new(),
            report: BuildReport::default(),
            failure: None,
        }
    }

    /// Takes statistics until the parsers are all gone, reporting progress as it goes; sets
    /// `abort` at the first bad game with `--strict`, or when `cancel` is set. Returns the
    /// report so far and the `--strict` failure, if any.
    pub fn run(
        mut self,
        rx: Receiver<ChunkStats>,
        progress: &dyn Progress,
        bytes_read: &AtomicU64,
        cancel: &AtomicBool,
        abort: &AtomicBool,
    ) -> (BuildReport, Option<BuildError>) {
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(stats) => {
                    self.in_order.push(stats.index, stats);
                    while let Some(stats) = self.in_order.pop() {
                        if self.add(stats) {
                            abort.store(true, Ordering::Relaxed);
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            progress.update(bytes_read.load(Ordering::Relaxed), self.report.games);
            if cancel.load(Ordering::Relaxed) {
                abort.store(true, Ordering::Relaxed);
            }
        }
        (self.report, self.failure)
    }

    /// Adds the next chunk's statistics; `true` when it holds the first bad game that
    /// `--strict` refuses.
    fn add(&mut self, stats: ChunkStats) -> bool {
        let mut failed = false;
        let report = &mut self.report;
        let before = *self.games_in_source.get(&stats.source).unwrap_or(&0);
        self.games_in_source
            .insert(stats.source, before + stats.games);
        report.games += stats.games;
        report.used += stats.used;
        report.plies += stats.plies;
        for inc in stats.incidents {
            let map = if inc.reason.truncates() {
                &mut report.truncated
            } else if inc.reason.is_filter() {
                &mut report.filtered
            } else {
                &mut report.skipped
            };
            *map.entry(inc.reason.name()).or_insert(0) += 1;
            if inc.reason.is_filter() {
                continue;
            }
            let name = self.inputs[stats.source].name();
            let game = before + inc.game;
            if self.strict && inc.reason.is_defect() && self.failure.is_none() {
                self.failure = Some(BuildError::Strict {
                    name: name.clone(),
                    game,
                    detail: inc.detail.clone(),
                });
                failed = true;
            }
            if report.examples.len() < MAX_EXAMPLES {
                report
                    .examples
                    .push(format!("{name}: game {game}: {}", inc.detail));
            }
        }
        failed
    }
}

/// The error for a build that counted nothing although no filter of the user's left anything
/// out: the inputs are not PGN at all. `None` when some game was used, or filtered, or the input
/// is a range of a file.
pub fn no_usable_game(report: &BuildReport, inputs: &[Input]) -> Option<BuildError> {
    // A range is a piece of a file whose other pieces may hold its usable games: none in it is
    // an empty result, so that the pieces of any cut add up to the whole.
    let piece = inputs.iter().any(|i| matches!(i, Input::Range { .. }));
    if piece || report.used > 0 || !report.filtered.is_empty() {
        return None;
    }
    let skipped = report
        .skipped
        .iter()
        .map(|(k, v)| format!("{v} {}", k.replace('_', " ")))
        .collect::<Vec<_>>()
        .join(", ");
    Some(BuildError::NoUsableGame {
        inputs: match inputs {
            [one] => one.name(),
            [first, rest @ ..] => format!("{} and {} more", first.name(), rest.len()),
            [] => "the inputs".into(),
        },
        read: report.games,
        why: if skipped.is_empty() {
            String::new()
        } else {
            format!(" ({skipped})")
        },
    })
}
