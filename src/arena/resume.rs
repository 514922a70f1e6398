//! `match --resume`: the games a PGN log already holds of a session, so that the same command
//! plays only the others.
//!
//! A session's game is known in its log by its `Event` tag and its `Round` (the game's number in
//! the schedule, plus one), with the players the schedule gives that number and a result. Game
//! `n` of a session always plays the same opening with the same colours (they follow from `n`
//! and the seed), so a session run again with the same settings and seed, skipping the games its
//! log holds, plays exactly the games the first run had left: what it reports counts both.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader};
use std::ops::ControlFlow;
use std::path::Path;

use pgn_reader::{RawTag, Reader, Skip, Visitor};

use super::game::Termination;
use crate::pgn::tags::Outcome;

/// A finished game of the log, as the session's tags name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    /// Its number in the schedule, 0-based (its `Round` less one).
    pub number: usize,
    pub white: String,
    pub black: String,
    /// White's half points: 2, 1 or 0.
    pub white_points: u8,
    /// Its `Termination` tag as [`Termination::tag`] spells it ("normal" when the tag is missing
    /// or unknown).
    pub termination: &'static str,
}

/// The finished games of the log at `path` whose `Event` is `event` and whose `Round` is a
/// number from 1 to `total`, in the log's order; a number the log holds twice counts once (the
/// first). Games of other events, unfinished games (`*`) and other rounds are left out. A log
/// that does not exist holds none.
pub fn logged_games(path: &Path, event: &str, total: usize) -> io::Result<Vec<Logged>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut visitor = LogVisitor {
        event,
        total,
        seen: HashSet::new(),
        games: Vec::new(),
    };
    let mut reader = Reader::new(BufReader::new(file));
    while reader.read_game(&mut visitor)?.is_some() {}
    Ok(visitor.games)
}

/// The games a resumed session skips: their numbers in the schedule, and how many of each
/// opening's games are among them (so that an opening shared by its games is not kept for the
/// skipped ones).
#[derive(Clone, Debug, Default)]
pub struct Done {
    numbers: HashSet<usize>,
    by_opening: HashMap<usize, usize>,
}

impl Done {
    /// The skipped games, as (schedule number, opening number) pairs.
    pub fn new(games: impl IntoIterator<Item = (usize, usize)>) -> Done {
        let mut done = Done::default();
        for (number, opening) in games {
            if done.numbers.insert(number) {
                *done.by_opening.entry(opening).or_default() += 1;
            }
        }
        done
    }

    /// Whether game `number` of the schedule is done.
    pub fn contains(&self, number: usize) -> bool {
        self.numbers.contains(&number)
    }

    /// How many games of opening `opening` are done.
    pub fn of_opening(&self, opening: usize) -> usize {
        self.by_opening.get(&opening).copied().unwrap_or(0)
    }

    /// How many games are done.
    pub fn len(&self) -> usize {
        self.numbers.len()
    }

    /// Whether no game is done.
    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }
}

/// The tags of one game of the log.
#[derive(Default)]
struct Tags {
    event: Option<String>,
    round: Option<String>,
    white: String,
    black: String,
    result: Outcome,
    termination: Option<String>,
}

struct LogVisitor<'a> {
    event: &'a str,
    total: usize,
    seen: HashSet<usize>,
    games: Vec<Logged>,
}

impl Visitor for LogVisitor<'_> {
    type Tags = Tags;
    type Movetext = ();
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), Tags> {
        ControlFlow::Continue(Tags::default())
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        let text = || value.decode_utf8_lossy().trim().to_string();
        match name {
            b"Event" => tags.event = Some(text()),
            b"Round" => tags.round = Some(text()),
            b"White" => tags.white = text(),
            b"Black" => tags.black = text(),
            b"Result" => tags.result = Outcome::of_tag(value.as_bytes()),
            b"Termination" => tags.termination = Some(text()),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<(), ()> {
        let round = tags.round.as_deref().and_then(|r| r.parse::<usize>().ok());
        if let (Some(round), Some(white_points)) = (round, tags.result.white_points())
            && tags.event.as_deref() == Some(self.event)
            && (1..=self.total).contains(&round)
            && self.seen.insert(round - 1)
        {
            self.games.push(Logged {
                number: round - 1,
                white: tags.white,
                black: tags.black,
                white_points,
                termination: termination_tag(tags.termination.as_deref()),
            });
        }
        // The moves are not needed.
        ControlFlow::Break(())
    }

    fn begin_variation(&mut self, _: &mut ()) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, _: ()) {}
}

/// A `Termination` tag's value as the tally counts it: one of [`Termination::TAGS`], or
/// "normal" for a missing or unknown one.
fn termination_tag(value: Option<&str>) -> &'static str {
    let value = value.unwrap_or("normal");
    Termination::TAGS
        .iter()
        .find(|tag| tag.eq_ignore_ascii_case(value))
        .copied()
        .unwrap_or("normal")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(event: &str, round: &str, white: &str, black: &str, result: &str) -> String {
        format!(
            "[Event \"{event}\"]\n[Site \"?\"]\n[Date \"2026.11.29\"]\n[Round \"{round}\"]\n\
             [White \"{white}\"]\n[Black \"{black}\"]\n[Result \"{result}\"]\n\
             [Termination \"time forfeit\"]\n\n1. e4 {{ +0.30/5 }} e5 ( 1... c5 ) {result}\n\n"
        )
    }

    #[test]
    fn the_session_s_finished_games_are_read_and_the_others_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.pgn");
        let text = [
            game("m", "2", "B", "A", "0-1"),
            game("other", "1", "A", "B", "1-0"),
            game("m", "1", "A", "B", "1/2-1/2"),
            game("m", "3", "A", "B", "*"),
            game("m", "2", "B", "A", "1-0"),
            game("m", "x", "A", "B", "1-0"),
            game("m", "9", "A", "B", "1-0"),
            game("m", "0", "A", "B", "1-0"),
        ]
        .concat();
        std::fs::write(&path, text).unwrap();
        let games = logged_games(&path, "m", 8).unwrap();
        let numbers: Vec<(usize, u8)> = games.iter().map(|g| (g.number, g.white_points)).collect();
        assert_eq!(numbers, [(1, 0), (0, 1)]);
        assert_eq!(games[0].white, "B");
        assert_eq!(games[0].termination, "time forfeit");
        assert!(
            logged_games(&dir.path().join("none.pgn"), "m", 8)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn every_termination_tag_reads_back_as_itself() {
        use shakmaty::Color::{Black, White};
        let all = [
            Termination::Checkmate,
            Termination::TimeForfeit(White),
            Termination::IllegalMove(Black, "e9".into()),
            Termination::Crash(White, "exit".into()),
            Termination::Stall(Black),
            Termination::Adjudication("draw".into()),
            Termination::Unterminated,
        ];
        for t in all {
            assert_eq!(termination_tag(Some(t.tag())), t.tag());
        }
        assert_eq!(termination_tag(Some("rules infraction")), "normal");
    }

    #[test]
    fn done_games_count_once_per_opening() {
        let done = Done::new([(0, 0), (1, 0), (1, 0), (5, 2)]);
        assert_eq!(done.len(), 3);
        assert!(done.contains(1) && !done.contains(2));
        assert_eq!((done.of_opening(0), done.of_opening(1)), (2, 0));
    }
}
