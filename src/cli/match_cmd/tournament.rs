//! `polybook match` with more than two engines (or `--tournament`): the tournament's progress
//! lines, its PGN, and the final ranking and pairings, as text or JSON.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::time::Instant;

use polybook::arena::pgn::PgnLog;
use polybook::arena::player::EngineSpec;
use polybook::arena::runner::MatchConfig;
use polybook::arena::standings::Standings;
use polybook::arena::stats::MatchScore;
use polybook::arena::tournament::{self, Kind, Tournament, TournamentEvent};
use serde_json::{Value, json};

use super::{Args, learn_from_game, learning_summary, limit_text};
use crate::cli::{CliError, CliResult, file_error};

/// Plays the tournament of `specs` with `settings` (`settings.games` a pairing) and reports it.
pub fn run(args: &Args, specs: Vec<EngineSpec>, settings: MatchConfig) -> CliResult {
    if args.sprt.is_some() {
        return Err(CliError::usage(format!(
            "--sprt tests the difference between two engines: it needs a match of two, not a tournament of {}",
            specs.len()
        )));
    }
    let tournament = Tournament {
        engines: specs,
        kind: args.tournament.unwrap_or(Kind::RoundRobin),
        settings,
    };
    let names = tournament::check_engines(&tournament).map_err(CliError::data)?;
    // Opened before any game, so that a bad path fails before the tournament starts.
    let mut pgn: Option<PgnLog> = match &args.pgn {
        Some(path) => Some(PgnLog::open(path).map_err(|e| file_error("write PGN", path, &e))?),
        None => None,
    };
    let pairings = tournament.pairings();
    let total = tournament.total_games();
    let log = !args.quiet;
    if log {
        eprintln!(
            "{} of {} engines ({}): {} pairings of {} games, {total} games, {}, seed {}",
            tournament.kind.name(),
            names.len(),
            names.join(", "),
            pairings.len(),
            tournament.settings.games,
            limit_text(&tournament.settings.limit),
            tournament.settings.seed
        );
    }

    let stop = AtomicBool::new(false);
    let abort = Arc::new(AtomicBool::new(false));
    {
        let abort = Arc::clone(&abort);
        let _ = ctrlc::set_handler(move || abort.store(true, Ordering::Relaxed));
    }
    let (tx, rx) = channel();
    let started = Instant::now();
    let mut standings = Standings::new(&names, &pairings, tournament.settings.games);
    let mut failure: Option<String> = None;
    let mut pgn_error: Option<String> = None;
    // `--book-learn`: the learn fields updated in each book, and the first failure.
    let mut learned = vec![0usize; args.book.len()];
    let mut learn_error: Option<String> = None;

    std::thread::scope(|scope| {
        let (tournament, names, stop, abort) = (&tournament, &names, &stop, &*abort);
        scope.spawn(move || tournament::run(tournament, names, stop, abort, tx));
        for event in rx {
            match event {
                TournamentEvent::GameFinished {
                    pairing,
                    number,
                    report,
                } => {
                    if let Some(file) = pgn.as_mut()
                        && let Err(e) = file.append(&report.pgn)
                    {
                        pgn_error = Some(e.to_string());
                        abort.store(true, Ordering::Relaxed);
                    }
                    if args.book_learn
                        && let Err(e) =
                            learn_from_game(&tournament.settings, &args.book, &report, &mut learned)
                    {
                        learn_error = Some(e.to_string());
                        abort.store(true, Ordering::Relaxed);
                    }
                    standings.record(pairing, &report);
                    if log {
                        let (a, b) = pairings[pairing];
                        eprintln!(
                            "game {}/{total}: {} - {} {} ({}) | {} vs {}: {}",
                            number + 1,
                            report.white,
                            report.black,
                            report.result(),
                            report.termination.describe(None).to_lowercase(),
                            names[a],
                            names[b],
                            standings.pairings[pairing].tally.score
                        );
                    }
                }
                TournamentEvent::Restarted(which, why) => {
                    if log {
                        eprintln!("engine {} ({}) restarted: {why}", which + 1, names[which]);
                    }
                }
                TournamentEvent::Failed(why) => {
                    failure.get_or_insert(why);
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    });

    let elapsed = started.elapsed();
    let interrupted = abort.load(Ordering::Relaxed) && pgn_error.is_none() && learn_error.is_none();
    if args.json {
        let ranking: Vec<Value> = standings
            .ranking()
            .iter()
            .map(|row| {
                let mut entry = score_json(&row.score);
                entry["rank"] = json!(row.rank);
                entry["name"] = json!(row.name);
                entry["engine"] = json!(row.engine + 1);
                entry
            })
            .collect();
        let pairing_results: Vec<Value> = standings
            .pairings
            .iter()
            .map(|p| {
                let mut entry = score_json(&p.tally.score);
                entry["engines"] = json!([names[p.engines.0], names[p.engines.1]]);
                entry["terminations"] = json!(p.tally.terminations);
                entry
            })
            .collect();
        let report = json!({
            "tournament": tournament.kind.name(),
            "engines": names,
            "games": standings.games(),
            "scheduled": total,
            "games_per_pairing": tournament.settings.games,
            "ranking": ranking,
            "pairings": pairing_results,
            "seed": tournament.settings.seed,
            "seconds": elapsed.as_secs_f64(),
            "interrupted": interrupted,
        });
        outln!("{report}")?;
    } else {
        outln!("{}", standings.table())?;
        outln!("{}", standings.pairing_table())?;
        outln!(
            "games {} of {total}, {:.0} s",
            standings.games(),
            elapsed.as_secs_f64()
        )?;
    }
    let _ = std::io::stdout().flush();
    learning_summary(args, &learned, learn_error, "tournament")?;
    if let Some(e) = pgn_error {
        return Err(CliError::data(format!(
            "writing the PGN failed: {e}; the tournament was stopped"
        )));
    }
    if let Some(why) = failure {
        return Err(CliError::data(format!("tournament stopped: {why}")));
    }
    if interrupted {
        return Err(CliError {
            code: 130,
            message: "interrupted; the games that finished are in the PGN".to_string(),
        });
    }
    Ok(())
}

/// A score's JSON fields, as the two-engine match's report has them: games, wins, draws,
/// losses, score (0 to 1), draw ratio, Elo and its 95% error (null when there is no estimate),
/// and the pentanomial counts [LL, LD, DD/WL, WD, WW].
fn score_json(score: &MatchScore) -> Value {
    let (elo, err) = score
        .elo()
        .map_or((None, None), |(e, m)| (Some(e), Some(m)));
    let games = score.games();
    json!({
        "games": games,
        "wins": score.wins,
        "draws": score.draws,
        "losses": score.losses,
        "score": score.ratio(),
        "draw_ratio": if games == 0 { 0.0 } else { f64::from(score.draws) / f64::from(games) },
        "elo": elo,
        "elo_error95": err,
        "pentanomial": score.pairs,
    })
}
