//! A match or a tournament from start to end: the engines checked, the PGN log opened, then the
//! games played by [`runner`] (two engines) or [`tournament`] (more), each finished game
//! appended to the log, learned by the books (`--book-learn`) and counted, the SPRT stop, the
//! stop on interruption, and the final [`Report`].
//!
//! The session prints nothing: each progress line (the plan, each finished game, a restarted
//! engine) goes to the caller as a [`SessionEvent`] (a line of progress), whose `Display` is the line `polybook match`
//! prints. Interruption is a flag the caller hands in (a signal handler sets it): the games
//! being played then end at once and are not counted, the finished ones stay counted and in the
//! log.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::thread;
use std::time::Instant;

use serde::Serialize;
use thiserror::Error;

use super::learn::learn_opening;
use super::pgn::PgnLog;
use super::player::{EngineError, EngineSpec};
use super::resume::{self, Done};
use super::runner::{self, Event, GameReport, MatchConfig, MoveLimit};
use super::standings::Standings;
use super::stats::{MatchScore, MatchTally, Sprt, SprtVerdict};
use super::tournament::{self, Kind, Tournament, TournamentEvent};
use crate::book::BookError;

/// Everything a session needs.
#[derive(Clone)]
pub struct SessionConfig {
    /// The engines: two play a match; more (or two with `tournament`) a tournament.
    pub engines: Vec<EngineSpec>,
    /// The tournament's kind; `None` is a match with two engines and a round robin with more.
    pub tournament: Option<Kind>,
    /// The games' settings: openings and books, games (of each pairing in a tournament),
    /// time control, concurrency, seed, adjudication, PGN event. Its `engines` are not read:
    /// the session's are `engines` above.
    pub settings: MatchConfig,
    /// The PGN file each finished game is appended to (created if need be).
    pub pgn: Option<PathBuf>,
    /// Book learning: the files of `settings.book`'s books, in the same order; after each
    /// finished game the opening's book moves learn its result there.
    pub learn: Option<Vec<PathBuf>>,
    /// A sequential test that stops a match once it decides (not for a tournament).
    pub sprt: Option<Sprt>,
    /// Resume from the PGN log: the session's games it already holds (see [`super::resume`])
    /// are counted, not played again. Needs `pgn`.
    pub resume: bool,
}

/// Why a session cannot start (nothing has been played).
#[derive(Debug, Error)]
pub enum SessionError {
    #[error("two engines are needed, {0} given")]
    TooFewEngines(usize),
    #[error(
        "an SPRT tests the difference between two engines: it needs a match of two, not a tournament of {0}"
    )]
    SprtInTournament(usize),
    /// An engine did not start, answer, or take its options.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The PGN log cannot be opened for appending.
    #[error("cannot write PGN {}: {}", crate::text::quote_path(.path), crate::text::reason(.source))]
    Pgn { path: PathBuf, source: io::Error },
    /// The PGN log to resume from cannot be read.
    #[error("cannot read PGN {}: {}", crate::text::quote_path(.path), crate::text::reason(.source))]
    ResumeRead { path: PathBuf, source: io::Error },
    /// A game of the log to resume from has this session's event and round but other players.
    #[error(
        "cannot resume from {}: its game of round {round} (event {event:?}) is {found}, but this session's game {round} is {expected}: give the engines, --games and --event the log was played with",
        crate::text::quote_path(.path)
    )]
    ResumeMismatch {
        path: PathBuf,
        event: String,
        round: usize,
        found: String,
        expected: String,
    },
}

/// What the games are: a match of two engines, or a tournament.
enum Plan {
    Match(MatchConfig),
    Tournament(Tournament),
}

/// A session whose engines answered and whose PGN log is open, ready to [`run`](Session::run).
pub struct Session {
    plan: Plan,
    names: Vec<String>,
    pgn: Option<PgnLog>,
    learn: Option<Vec<PathBuf>>,
    sprt: Option<Sprt>,
    /// The games the log already holds (a resumed session's), counted before the others.
    resumed: Vec<Resumed>,
}

/// A game of the PGN log that a resumed session counts without playing it.
struct Resumed {
    /// Its number in the schedule.
    number: usize,
    pairing: usize,
    /// Its number within the pairing.
    index: usize,
    /// The pairing's first engine's half points.
    first_half_points: u8,
    termination: &'static str,
}

/// What happens in a session, as it happens (a progress line, not the reading progress of
/// `pgn::Progress`); its `Display` is the line `polybook match`
/// prints on standard error.
#[derive(Clone, Copy, Debug)]
pub enum SessionEvent<'a> {
    /// Before the first game: the engines' names and the plan.
    Started {
        names: &'a [String],
        /// `None` for a match.
        tournament: Option<Kind>,
        pairings: usize,
        /// Games of each pairing.
        games: usize,
        /// Games in the whole schedule.
        total: usize,
        limit: MoveLimit,
        seed: u64,
    },
    /// A resumed session's games found in its PGN log (counted, not played again), before the
    /// first game played.
    Resumed {
        path: &'a Path,
        games: usize,
        total: usize,
    },
    /// A game ended (it is in the PGN log and counted).
    Game {
        /// 0-based, in the whole schedule (a match's game index).
        number: usize,
        total: usize,
        /// Whether the session is a tournament (its line names the pairing).
        tournament: bool,
        /// The pairing's engines' names (a match's two).
        engines: [&'a str; 2],
        report: &'a GameReport,
        /// The pairing's tally after this game, from its first engine's view.
        tally: &'a MatchTally,
    },
    /// The PGN log was moved or deleted (by another process) and was created anew at its path
    /// for game `number` (0-based, as in [`SessionEvent::Game`]), which is in it with the games
    /// after it. `polybook match` prints this line as a warning, even with `--quiet`.
    PgnCreatedAnew { path: &'a Path, number: usize },
    /// Game `number` went into the PGN log without the file's lock (another program held it
    /// for seconds, or the file system has no locks). Printed as a warning, even with `--quiet`.
    PgnUnlocked { path: &'a Path, number: usize },
    /// Engine `engine` (its number in the session, 0-based) crashed or hung and was restarted.
    Restarted {
        engine: usize,
        name: &'a str,
        why: &'a str,
    },
}

impl fmt::Display for SessionEvent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SessionEvent::Started {
                names,
                tournament: None,
                games,
                limit,
                seed,
                ..
            } => write!(
                f,
                "{} vs {}: {games} games, {limit}, seed {seed}",
                names[0], names[1]
            ),
            SessionEvent::Started {
                names,
                tournament: Some(kind),
                pairings,
                games,
                total,
                limit,
                seed,
            } => write!(
                f,
                "{} of {} engines ({}): {pairings} pairings of {games} games, {total} games, {limit}, seed {seed}",
                kind.name(),
                names.len(),
                names.join(", ")
            ),
            SessionEvent::Game {
                number,
                total,
                tournament,
                engines,
                report,
                tally,
            } => {
                write!(
                    f,
                    "game {}/{total}: {} - {} {} ({}) | ",
                    number + 1,
                    report.white,
                    report.black,
                    report.result(),
                    report.termination.describe(None).to_lowercase()
                )?;
                if tournament {
                    write!(f, "{} vs {}: {}", engines[0], engines[1], tally.score)
                } else {
                    write!(f, "{}: {}", engines[0], tally.score)?;
                    match tally.sprt {
                        Some(s) => write!(
                            f,
                            ", LLR {:.2} ({:.2}, {:.2})",
                            tally.score.llr(&s),
                            s.lower(),
                            s.upper()
                        ),
                        None => Ok(()),
                    }
                }
            }
            SessionEvent::Resumed { path, games, total } => write!(
                f,
                "resumed: {games} of the {total} games are in {}; playing the other {}",
                crate::text::quote_path(path),
                total - games
            ),
            SessionEvent::PgnCreatedAnew { path, number } => write!(
                f,
                "the PGN log {} was moved or deleted: it is written anew from game {} on",
                crate::text::quote_path(path),
                number + 1
            ),
            SessionEvent::PgnUnlocked { path, number } => write!(
                f,
                "game {} went into the PGN log {} without its lock (held by another program, or the file system has none)",
                number + 1,
                crate::text::quote_path(path)
            ),
            SessionEvent::Restarted { engine, name, why } => {
                write!(f, "engine {} ({name}) restarted: {why}", engine + 1)
            }
        }
    }
}

/// A session's end: the report, and what stopped it other than an interruption.
#[derive(Debug)]
pub struct Finished {
    pub report: Report,
    /// With book learning: the learn fields updated in each book, in the books' order.
    pub learned: Vec<usize>,
    /// A game could not be appended to the PGN log (the session was stopped at once).
    pub pgn_error: Option<io::Error>,
    /// Book learning failed (the session was stopped at once).
    pub learn_error: Option<BookError>,
    /// An engine could not be started again (no new games were started).
    pub failure: Option<String>,
}

/// The final report (`polybook match --json`): a match's or a tournament's.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Report {
    Match(Box<MatchReport>),
    Tournament(TournamentReport),
}

impl Report {
    /// Whether an interruption ended the session (the games being played were not counted).
    pub fn interrupted(&self) -> bool {
        match self {
            Report::Match(r) => r.interrupted,
            Report::Tournament(r) => r.interrupted,
        }
    }
}

/// A match of two engines, from the first engine's view.
#[derive(Clone, Debug, Serialize)]
pub struct MatchReport {
    /// The two engines' names, the first one's view first.
    pub engines: Vec<String>,
    /// The first engine's score, in the fields a tournament's pairing has too.
    #[serde(flatten)]
    pub score: ScoreReport,
    /// Likelihood of superiority.
    pub los: f64,
    /// Games by their PGN `Termination` tag.
    pub terminations: BTreeMap<&'static str, u32>,
    pub sprt: Option<SprtReport>,
    pub seed: u64,
    pub seconds: f64,
    pub interrupted: bool,
    /// The tally the fields above come from (for a text report).
    #[serde(skip)]
    pub tally: MatchTally,
}

/// The SPRT of a match.
#[derive(Clone, Debug, Serialize)]
pub struct SprtReport {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub llr: f64,
    /// The bounds of the LLR.
    pub lower: f64,
    pub upper: f64,
    /// `H0`, `H1` or `none`.
    pub verdict: &'static str,
    /// The games played and the LLR when the LLR first crossed a bound.
    pub decided_at_game: Option<u32>,
    pub decided_llr: Option<f64>,
}

/// A tournament: its ranking and each pairing's score.
#[derive(Clone, Debug, Serialize)]
pub struct TournamentReport {
    /// `round-robin` or `gauntlet`.
    pub tournament: &'static str,
    pub engines: Vec<String>,
    /// Games played.
    pub games: u32,
    /// Games in the schedule.
    pub scheduled: usize,
    pub games_per_pairing: usize,
    /// Best first.
    pub ranking: Vec<RankedEngine>,
    /// In schedule order.
    pub pairings: Vec<PairingReport>,
    pub seed: u64,
    pub seconds: f64,
    pub interrupted: bool,
    /// The standings the fields above come from (for the text tables).
    #[serde(skip)]
    pub standings: Standings,
}

/// An engine's line of a tournament's ranking: its score against the field, its own view.
#[derive(Clone, Debug, Serialize)]
pub struct RankedEngine {
    pub rank: usize,
    pub name: String,
    /// Its number on the command line, 1-based.
    pub engine: usize,
    #[serde(flatten)]
    pub score: ScoreReport,
}

/// A pairing of a tournament, from its first engine's view.
#[derive(Clone, Debug, Serialize)]
pub struct PairingReport {
    pub engines: [String; 2],
    #[serde(flatten)]
    pub score: ScoreReport,
    pub terminations: BTreeMap<&'static str, u32>,
}

/// A score's fields in a match's or a tournament's report, from one engine's view.
#[derive(Clone, Debug, Serialize)]
pub struct ScoreReport {
    /// Games played: the wins, draws and losses.
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Points per game, 0 to 1.
    pub score: f64,
    /// The share of draws among the games (0 without games).
    pub draw_ratio: f64,
    /// The Elo difference and its 95% error bar (the pairs' when the games were paired, see
    /// [`MatchScore::elo`]); `None` without an estimate.
    pub elo: Option<f64>,
    pub elo_error95: Option<f64>,
    /// The colour-swapped pairs by the engine's points in them: [0, ½, 1, 1½, 2], i.e.
    /// [LL, LD, DD/WL, WD, WW].
    pub pentanomial: [u32; 5],
}

impl ScoreReport {
    fn of(score: &MatchScore) -> ScoreReport {
        let (elo, elo_error95) = split_elo(score);
        let games = score.games();
        ScoreReport {
            games,
            wins: score.wins,
            draws: score.draws,
            losses: score.losses,
            score: score.ratio(),
            draw_ratio: if games == 0 {
                0.0
            } else {
                f64::from(score.draws) / f64::from(games)
            },
            elo,
            elo_error95,
            pentanomial: score.pairs,
        }
    }
}

fn split_elo(score: &MatchScore) -> (Option<f64>, Option<f64>) {
    score
        .elo()
        .map_or((None, None), |(elo, err)| (Some(elo), Some(err)))
}

impl Session {
    /// Checks the session: each engine is started once (it must run, answer and have the
    /// options asked for) and the PGN log is opened, so that a bad engine or path fails before
    /// any game.
    pub fn new(config: SessionConfig) -> Result<Session, SessionError> {
        let SessionConfig {
            engines,
            tournament: kind,
            mut settings,
            pgn,
            learn,
            sprt,
            resume,
        } = config;
        if engines.len() < 2 {
            return Err(SessionError::TooFewEngines(engines.len()));
        }
        let (plan, names) = if engines.len() == 2 && kind.is_none() {
            settings.engines = [engines[0].clone(), engines[1].clone()];
            let names = runner::check_engines(&settings)?;
            (Plan::Match(settings), names.to_vec())
        } else {
            if sprt.is_some() {
                return Err(SessionError::SprtInTournament(engines.len()));
            }
            let tournament = Tournament {
                engines,
                kind: kind.unwrap_or(Kind::RoundRobin),
                settings,
            };
            let names = tournament::check_engines(&tournament)?;
            (Plan::Tournament(tournament), names)
        };
        let resumed = match (&pgn, resume) {
            (Some(path), true) => resumed_games(&plan, &names, path)?,
            _ => Vec::new(),
        };
        let pgn = match pgn {
            Some(path) => Some(open_log(&path)?),
            None => None,
        };
        Ok(Session {
            plan,
            names,
            pgn,
            learn,
            sprt,
            resumed,
        })
    }

    /// The engines' names, as the PGN and the report give them.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The games' settings (a tournament's pairings differ only in their engines).
    pub fn settings(&self) -> &MatchConfig {
        match &self.plan {
            Plan::Match(config) => config,
            Plan::Tournament(t) => &t.settings,
        }
    }

    /// Plays the session and reports it; `progress` is told each step (see [`SessionEvent`]).
    ///
    /// `abort` interrupts it: the games being played end at once and are not counted, and the
    /// report says `interrupted`. The session sets `abort` itself when a finished game cannot
    /// be logged or learned (then it is no interruption: [`Finished`] says what failed).
    pub fn run(
        self,
        abort: &Arc<AtomicBool>,
        mut progress: impl FnMut(&SessionEvent<'_>),
    ) -> Finished {
        let Session {
            plan,
            names,
            mut pgn,
            learn,
            sprt,
            resumed,
        } = self;
        let (settings, pairings, kind) = match &plan {
            Plan::Match(config) => (config, vec![(0, 1)], None),
            Plan::Tournament(t) => (&t.settings, t.pairings(), Some(t.kind)),
        };
        let total = pairings.len().saturating_mul(settings.games);
        progress(&SessionEvent::Started {
            names: &names,
            tournament: kind,
            pairings: pairings.len(),
            games: settings.games,
            total,
            limit: settings.limit,
            seed: settings.seed,
        });

        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let mut standings = Standings::new(&names, &pairings, settings.games);
        standings.pairings[0].tally = MatchTally::new(settings.games, sprt);
        let mut failure: Option<String> = None;
        let mut pgn_error: Option<io::Error> = None;
        let mut learn_error: Option<BookError> = None;
        let mut learned = vec![0usize; learn.as_ref().map_or(0, Vec::len)];
        if let Some(file) = pgn.as_ref().filter(|_| !resumed.is_empty()) {
            progress(&SessionEvent::Resumed {
                path: file.path(),
                games: resumed.len(),
                total,
            });
        }
        for game in &resumed {
            let tally = &mut standings.pairings[game.pairing].tally;
            tally.record(game.index, game.first_half_points, game.termination);
            if tally.decided() {
                stop.store(true, Ordering::Relaxed);
            }
        }
        let done = Done::new(resumed.iter().map(|game| (game.number, game.index / 2)));

        thread::scope(|scope| {
            let (names, stop, done) = (&names, &stop, &done);
            // A match's events are a tournament's with one pairing.
            let events: Box<dyn Iterator<Item = TournamentEvent>> = match &plan {
                Plan::Match(config) => {
                    let (tx, rx) = channel();
                    let pair = [names[0].clone(), names[1].clone()];
                    scope.spawn(move || runner::run(config, &pair, stop, abort, tx, done));
                    Box::new(rx.into_iter().map(match_event))
                }
                Plan::Tournament(t) => {
                    let (tx, rx) = channel();
                    scope.spawn(move || tournament::run(t, names, stop, abort, tx, done));
                    Box::new(rx.into_iter())
                }
            };
            for event in events {
                match event {
                    TournamentEvent::GameFinished {
                        pairing,
                        number,
                        report,
                    } => {
                        if let Some(file) = pgn.as_mut() {
                            match file.append(&report.pgn) {
                                Ok(appended) => {
                                    if appended.created_anew {
                                        progress(&SessionEvent::PgnCreatedAnew {
                                            path: file.path(),
                                            number,
                                        });
                                    }
                                    if appended.unlocked {
                                        progress(&SessionEvent::PgnUnlocked {
                                            path: file.path(),
                                            number,
                                        });
                                    }
                                }
                                Err(e) => {
                                    pgn_error = Some(e);
                                    abort.store(true, Ordering::Relaxed);
                                }
                            }
                        }
                        if let Some(paths) = &learn
                            && let Err(e) = learn_from_game(settings, paths, &report, &mut learned)
                        {
                            learn_error = Some(e);
                            abort.store(true, Ordering::Relaxed);
                        }
                        standings.record(pairing, &report);
                        let result = &standings.pairings[pairing];
                        let (a, b) = result.engines;
                        progress(&SessionEvent::Game {
                            number,
                            total,
                            tournament: kind.is_some(),
                            engines: [&names[a], &names[b]],
                            report: &report,
                            tally: &result.tally,
                        });
                        if result.tally.decided() {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    TournamentEvent::Restarted(engine, why) => progress(&SessionEvent::Restarted {
                        engine,
                        name: &names[engine],
                        why: &why,
                    }),
                    TournamentEvent::Failed(why) => {
                        failure.get_or_insert(why);
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        });

        let seconds = started.elapsed().as_secs_f64();
        let interrupted =
            abort.load(Ordering::Relaxed) && pgn_error.is_none() && learn_error.is_none();
        let report = match &plan {
            Plan::Match(config) => {
                let tally = standings.pairings.swap_remove(0).tally;
                Report::Match(Box::new(match_report(
                    names,
                    tally,
                    config.seed,
                    seconds,
                    interrupted,
                )))
            }
            Plan::Tournament(t) => Report::Tournament(TournamentReport {
                tournament: t.kind.name(),
                games: standings.games(),
                scheduled: total,
                games_per_pairing: t.settings.games,
                ranking: standings
                    .ranking()
                    .into_iter()
                    .map(|row| RankedEngine {
                        rank: row.rank,
                        name: row.name,
                        engine: row.engine + 1,
                        score: ScoreReport::of(&row.score),
                    })
                    .collect(),
                pairings: standings
                    .pairings
                    .iter()
                    .map(|p| PairingReport {
                        engines: [names[p.engines.0].clone(), names[p.engines.1].clone()],
                        score: ScoreReport::of(&p.tally.score),
                        terminations: p.tally.terminations.clone(),
                    })
                    .collect(),
                engines: names,
                seed: t.settings.seed,
                seconds,
                interrupted,
                standings,
            }),
        };
        Finished {
            report,
            learned,
            pgn_error,
            learn_error,
            failure,
        }
    }
}

/// The games of the log at `path` that belong to the session of `plan` (see
/// [`super::resume`]), each checked against the players the schedule gives its number.
fn resumed_games(plan: &Plan, names: &[String], path: &Path) -> Result<Vec<Resumed>, SessionError> {
    let (settings, pairings) = match plan {
        Plan::Match(config) => (config, vec![(0, 1)]),
        Plan::Tournament(t) => (&t.settings, t.pairings()),
    };
    let total = pairings.len().saturating_mul(settings.games);
    let logged = resume::logged_games(path, &settings.event, total).map_err(|source| {
        SessionError::ResumeRead {
            path: path.to_path_buf(),
            source,
        }
    })?;
    let mut resumed = Vec::with_capacity(logged.len());
    for game in logged {
        let Some(scheduled) = tournament::scheduled(pairings.len(), settings.games, game.number)
        else {
            continue;
        };
        let (a, b) = pairings[scheduled.pairing];
        let first_white = scheduled.index.is_multiple_of(2);
        let (white, black) = if first_white { (a, b) } else { (b, a) };
        if game.white != names[white] || game.black != names[black] {
            return Err(SessionError::ResumeMismatch {
                path: path.to_path_buf(),
                event: settings.event.clone(),
                round: game.number + 1,
                found: format!("{} - {}", game.white, game.black),
                expected: format!("{} - {}", names[white], names[black]),
            });
        }
        resumed.push(Resumed {
            number: game.number,
            pairing: scheduled.pairing,
            index: scheduled.index,
            first_half_points: if first_white {
                game.white_points
            } else {
                2 - game.white_points
            },
            termination: game.termination,
        });
    }
    Ok(resumed)
}

/// The PGN log at `path`, opened for appending.
fn open_log(path: &Path) -> Result<PgnLog, SessionError> {
    PgnLog::open(path).map_err(|source| SessionError::Pgn {
        path: path.to_path_buf(),
        source,
    })
}

/// A match's runner event as a tournament's of one pairing (the engines are numbered alike).
fn match_event(event: Event) -> TournamentEvent {
    match event {
        Event::GameFinished(report) => TournamentEvent::GameFinished {
            pairing: 0,
            number: report.index,
            report,
        },
        Event::Restarted(which, why) => TournamentEvent::Restarted(which, why),
        Event::Failed(why) => TournamentEvent::Failed(why),
    }
}

/// A match's report from its tally.
fn match_report(
    engines: Vec<String>,
    tally: MatchTally,
    seed: u64,
    seconds: f64,
    interrupted: bool,
) -> MatchReport {
    let score = &tally.score;
    let sprt = tally.sprt.map(|s| SprtReport {
        elo0: s.elo0,
        elo1: s.elo1,
        alpha: s.alpha,
        beta: s.beta,
        llr: score.llr(&s),
        lower: s.lower(),
        upper: s.upper(),
        verdict: match tally.verdict {
            SprtVerdict::H0 => "H0",
            SprtVerdict::H1 => "H1",
            SprtVerdict::Continue => "none",
        },
        decided_at_game: tally.decided_at.map(|(games, _)| games),
        decided_llr: tally.decided_at.map(|(_, llr)| llr),
    });
    MatchReport {
        engines,
        score: ScoreReport::of(score),
        los: score.los(),
        terminations: tally.terminations.clone(),
        sprt,
        seed,
        seconds,
        interrupted,
        tally,
    }
}

/// Book learning after one game: the book moves of its opening learn its result (an unfinished
/// game teaches nothing); `learned` counts the updates per book.
fn learn_from_game(
    settings: &MatchConfig,
    paths: &[PathBuf],
    report: &GameReport,
    learned: &mut [usize],
) -> Result<(), BookError> {
    let (Some(books), Some(outcome)) = (&settings.book, report.outcome) else {
        return Ok(());
    };
    // The moves of the openings file came from no book: only the book walk learns.
    let opening = runner::opening_for(settings, report.index / 2);
    let (start, moves) = opening.book_part();
    let updates = learn_opening(books, paths, &settings.choose, &start, moves, outcome)?;
    for update in updates {
        learned[update.book] += update.moves;
    }
    Ok(())
}
