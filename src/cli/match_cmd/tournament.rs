//! `polybook match` with more than two engines (or `--tournament`): the tournament's final
//! ranking and pairings as text (its progress lines and JSON are the session's).

use polybook::arena::session::TournamentReport;

use crate::cli::CliResult;

/// The ranking, the pairings' table, and the games played of those scheduled.
pub fn print(report: &TournamentReport) -> CliResult {
    outln!("{}", report.standings.table())?;
    outln!("{}", report.standings.pairing_table())?;
    outln!(
        "games {} of {}, {:.0} s",
        report.games,
        report.scheduled,
        report.seconds
    )
}
