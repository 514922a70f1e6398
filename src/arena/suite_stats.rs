//! What each opening of a suite did in games (`polybook suite-stats`): the games that started
//! from it, their results, the pentanomial of their colour-swapped pairs, the engines' first
//! scores out of it; and the suite refined by them (the exits drawn or won too often left out,
//! as Disservin's ana-opening-book and the official-stockfish/books refinements do).
//!
//! An opening's **exit** is the position its line ends in: an EPD suite's positions, a PGN
//! suite's games' last positions (read as `match --openings` reads them). A game belongs to the
//! first exit it reaches, walking its main line from its start (its `FEN` set-up or the usual
//! position): a game played from an EPD suite starts on its exit; one played from a PGN suite's
//! moves reaches it at the line's last move. Exits are matched by Polyglot key, so a game that
//! reaches one by another move order counts for it.
//!
//! The pairs: a match plays each opening twice, colours swapped. Among an exit's games, a game
//! is paired with the first earlier one still unpaired that the same two players played with
//! the colours the other way round (whatever came between: games of a match played in parallel
//! are logged as they end); a pair's points, from the view of its first game's White, fall in
//! one of five classes (0, ½, 1, 1½, 2: LL, LD, DD or WL, WD, WW).
//!
//! The engines' score: the score in the comment of the first move played after the exit
//! (cutechess's and `polybook match`'s `{+0.36/5 0.02s}`, in pawns from the mover's view), turned
//! to centipawns from White's view and averaged over the exit's games; mate scores are left out.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pgn_reader::{RawComment, RawTag, SanPlus, Skip, Visitor};
use shakmaty::san::SanPlus as WrittenSan;
use shakmaty::{Chess, Color, Position};
use thiserror::Error;

use super::opening::{OpeningsError, StartLine, parse_pgn_openings};
use crate::atomic::AtomicFile;
use crate::book::Key;
use crate::pgn::input::{Chunks, Input, InputError, open_text};
use crate::pgn::read::{ChunkVisitor, read_games};
use crate::pgn::san::play_san;
use crate::pgn::tags::{Outcome, PlayerTags};
use crate::position::{EpdLine, fen_of, parse_fen};

/// Why the statistics could not be made.
#[derive(Debug, Error)]
pub enum SuiteStatsError {
    #[error("cannot read suite {path}: {why}")]
    Suite { path: String, why: String },
    #[error("suite {path}: {error}")]
    BadSuite { path: String, error: OpeningsError },
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot write {path}: {why}")]
    Write { path: String, why: String },
    #[error("interrupted")]
    Stopped,
}

/// One opening of the suite.
#[derive(Clone, Debug)]
pub struct Exit {
    /// The exit's Polyglot key.
    pub key: Key,
    /// The exit position's FEN.
    pub fen: String,
    /// How the suite wrote it: an EPD line as it was, or a PGN game (tags for its start, its
    /// moves), for the refined suite.
    pub text: String,
}

/// A suite's openings, in its order.
#[derive(Clone, Debug)]
pub struct Suite {
    pub exits: Vec<Exit>,
    /// Whether it was a PGN file (else EPD): the refined suite is written the same way.
    pub pgn: bool,
}

impl Suite {
    /// Reads a suite: PGN when its name ends in `.pgn` (before any compression extension), else
    /// one FEN or EPD a line (`#` comments and blank lines skipped), as `match --openings` does;
    /// compressed files (.gz, .zst, .bz2, .xz) are read through.
    pub fn read(path: &Path) -> Result<Suite, SuiteStatsError> {
        let name = path.display().to_string();
        let failed = |why: String| SuiteStatsError::Suite {
            path: name.clone(),
            why,
        };
        let mut text = Vec::new();
        open_text(&Input::File(path.to_path_buf()))
            .and_then(|mut r| r.read_to_end(&mut text))
            .map_err(|e| failed(crate::text::reason(&e)))?;
        let bad = |error| SuiteStatsError::BadSuite {
            path: name.clone(),
            error,
        };
        let lower = name.to_ascii_lowercase();
        let stem = [".gz", ".zst", ".bz2", ".xz"]
            .iter()
            .find_map(|ext| lower.strip_suffix(ext))
            .unwrap_or(&lower);
        if stem.ends_with(".pgn") {
            let lines = parse_pgn_openings(&text, None).map_err(bad)?;
            let exits = lines.iter().map(pgn_exit).collect();
            return Ok(Suite { exits, pgn: true });
        }
        let text = String::from_utf8_lossy(&text);
        let mut exits = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let Some(epd) = EpdLine::parse(line) else {
                continue;
            };
            let fen = epd.fields().collect::<Vec<_>>().join(" ");
            let pos = parse_fen(&fen)
                .map_err(|error| bad(OpeningsError::BadLine { line: i + 1, error }))?;
            exits.push(Exit {
                key: Key::of(&pos),
                fen: fen_of(&pos),
                text: line.trim_end().to_string(),
            });
        }
        if exits.is_empty() {
            return Err(bad(OpeningsError::Empty));
        }
        Ok(Suite { exits, pgn: false })
    }
}

/// A PGN suite's opening as its exit, with the game written again (its `FEN` set-up when it
/// has one, its moves in SAN).
fn pgn_exit(line: &StartLine) -> Exit {
    let mut pos = line.start.clone();
    let mut text = String::new();
    if pos != Chess::default() {
        text.push_str(&format!("[SetUp \"1\"]\n[FEN \"{}\"]\n\n", fen_of(&pos)));
    }
    let mut moves = Vec::new();
    for (i, &mv) in line.moves.iter().enumerate() {
        let number = pos.fullmoves();
        match (pos.turn(), i) {
            (Color::White, _) => moves.push(format!("{number}.")),
            (Color::Black, 0) => moves.push(format!("{number}...")),
            _ => {}
        }
        moves.push(WrittenSan::from_move_and_play_unchecked(&mut pos, mv).to_string());
    }
    moves.push("*".to_string());
    text.push_str(&moves.join(" "));
    Exit {
        key: Key::of(&pos),
        fen: fen_of(&pos),
        text,
    }
}

/// What the games of one exit did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ExitStats {
    /// The exit's place in the suite, from 1.
    pub index: usize,
    /// The exit's Polyglot key, in hex.
    pub key: String,
    /// The exit's position, as FEN.
    pub fen: String,
    /// The games with a result (`1-0`, `1/2-1/2`, `0-1`) that reached it.
    pub games: u64,
    /// Of them, won by White.
    pub white_wins: u64,
    /// Drawn.
    pub draws: u64,
    /// Won by Black.
    pub black_wins: u64,
    /// Games that reached it without a result (`*`): not counted above.
    pub unfinished: u64,
    /// The share of draws among `games` (`None` without games).
    pub draw_rate: Option<f64>,
    /// White's score among `games`: (wins + draws / 2) / games.
    pub white_score: Option<f64>,
    /// The colour-swapped pairs by points of the first game's White: 0, ½, 1, 1½, 2.
    pub pentanomial: [u64; 5],
    /// Games left without their pair.
    pub unpaired: u64,
    /// The engines' first score out of the exit, in centipawns from White's view, averaged over
    /// the games that have one (`None`: no game has).
    pub average_score: Option<f64>,
    /// How many games gave that score.
    pub scored: u64,
}

/// The statistics of every exit of a suite, and of the games that reached none.
#[derive(Clone, Debug, Default)]
pub struct SuiteStats {
    /// One per exit, in the suite's order.
    pub exits: Vec<ExitStats>,
    /// Games read, and those that reached no exit (or were not standard chess).
    pub read: u64,
    pub unmatched: u64,
}

/// Reads every game of `inputs` and counts it for the exit of `suite` it reached.
pub fn suite_stats(
    inputs: &[Input],
    suite: &Suite,
    progress: &dyn crate::pgn::Progress,
    stop: &AtomicBool,
) -> Result<SuiteStats, SuiteStatsError> {
    let mut by_key: HashMap<Key, usize> = HashMap::new();
    for (i, exit) in suite.exits.iter().enumerate() {
        // A position twice in a suite: its games count for its first place.
        by_key.entry(exit.key).or_insert(i);
    }
    let mut visitor = StatsVisitor {
        by_key,
        read: 0,
        unmatched: 0,
        finished: Vec::new(),
        exits: suite
            .exits
            .iter()
            .enumerate()
            .map(|(i, exit)| Counting {
                stats: ExitStats {
                    index: i + 1,
                    key: exit.key.to_string(),
                    fen: exit.fen.clone(),
                    ..ExitStats::default()
                },
                pending: Vec::new(),
                score_sum: 0.0,
            })
            .collect(),
    };
    let bytes = Arc::new(AtomicU64::new(0));
    for input in inputs {
        let mut chunks = Chunks::open(input, bytes.clone(), 1 << 22)
            .map_err(|e| SuiteStatsError::Input(input.read_error(&e)))?;
        while let Some(chunk) = chunks
            .next_chunk()
            .map_err(|e| SuiteStatsError::Input(input.read_error(&e)))?
        {
            read_games(&chunk, &mut visitor);
            progress.update(bytes.load(Ordering::Relaxed), visitor.read);
            if stop.load(Ordering::Relaxed) {
                return Err(SuiteStatsError::Stopped);
            }
        }
    }
    let exits = visitor
        .exits
        .into_iter()
        .map(|c| {
            let mut s = c.stats;
            s.unpaired = c.pending.len() as u64;
            if s.games > 0 {
                let n = s.games as f64;
                s.draw_rate = Some(s.draws as f64 / n);
                s.white_score = Some((s.white_wins as f64 + s.draws as f64 / 2.0) / n);
            }
            if s.scored > 0 {
                s.average_score = Some(c.score_sum / s.scored as f64);
            }
            s
        })
        .collect();
    Ok(SuiteStats {
        exits,
        read: visitor.read,
        unmatched: visitor.unmatched,
    })
}

/// An exit's counts while the games are read: the games waiting for their pair (White, Black,
/// White's points 0–2).
struct Counting {
    stats: ExitStats,
    pending: Vec<(String, String, u8)>,
    score_sum: f64,
}

impl Counting {
    fn add(&mut self, game: &Game) {
        let Some(points) = game.result.white_points() else {
            self.stats.unfinished += 1;
            return;
        };
        let s = &mut self.stats;
        s.games += 1;
        match points {
            2 => s.white_wins += 1,
            1 => s.draws += 1,
            _ => s.black_wins += 1,
        }
        let swapped = self
            .pending
            .iter()
            .position(|(w, b, _)| *w == game.black && *b == game.white);
        match swapped {
            Some(i) => {
                let (_, _, first) = self.pending.remove(i);
                // The first game's White played Black in this one.
                s.pentanomial[usize::from(first + (2 - points))] += 1;
            }
            None => self
                .pending
                .push((game.white.clone(), game.black.clone(), points)),
        }
        if let Some(cp) = game.score {
            s.scored += 1;
            self.score_sum += cp;
        }
    }
}

struct StatsVisitor {
    by_key: HashMap<Key, usize>,
    read: u64,
    unmatched: u64,
    /// The games of the chunk being read that reached an exit, counted when it is done (a
    /// chunk's games may be read again, [`ChunkVisitor::rewind`]).
    finished: Vec<(usize, Game)>,
    exits: Vec<Counting>,
}

impl ChunkVisitor for StatsVisitor {
    type Mark = (u64, u64, usize);

    fn mark(&mut self) -> Self::Mark {
        (self.read, self.unmatched, self.finished.len())
    }

    fn rewind(&mut self, (read, unmatched, finished): Self::Mark) {
        self.read = read;
        self.unmatched = unmatched;
        self.finished.truncate(finished);
    }

    /// A game whose tag section broke is skipped, as `build` skips it.
    fn broken(&mut self, _why: &str) -> bool {
        self.unmatched += 1;
        true
    }

    fn finish(&mut self) {
        for (exit, game) in self.finished.drain(..) {
            self.exits[exit].add(&game);
        }
    }
}

struct Game {
    pos: Chess,
    white: String,
    black: String,
    result: Outcome,
    /// The exit reached, once it is.
    exit: Option<usize>,
    /// After the exit: the side that played the first move out of it, until its comment is
    /// read.
    out_mover: Option<Color>,
    /// The engines' first score out of the exit, centipawns from White's view.
    score: Option<f64>,
    /// Nothing more to read in the movetext.
    done: bool,
}

impl Visitor for StatsVisitor {
    type Tags = PlayerTags;
    type Movetext = Game;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), PlayerTags> {
        self.read += 1;
        ControlFlow::Continue(PlayerTags::default())
    }

    fn tag(&mut self, tags: &mut PlayerTags, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        tags.read(name, value);
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: PlayerTags) -> ControlFlow<(), Game> {
        let Some(pos) = tags.start.start(true) else {
            self.unmatched += 1;
            return ControlFlow::Break(());
        };
        let exit = self.by_key.get(&Key::of(&pos)).copied();
        ControlFlow::Continue(Game {
            pos,
            white: tags.white,
            black: tags.black,
            result: tags.start.result,
            exit,
            out_mover: None,
            score: None,
            done: false,
        })
    }

    fn san(&mut self, game: &mut Game, san_plus: SanPlus) -> ControlFlow<()> {
        if game.done {
            return ControlFlow::Continue(());
        }
        if game.exit.is_some() {
            // The first move out of the exit: its comment holds the engine's score.
            game.out_mover = Some(game.pos.turn());
            game.done = true;
            return ControlFlow::Continue(());
        }
        let Ok(mv) = play_san(san_plus.san, &game.pos) else {
            // An illegal move ends the walk where it stands.
            game.done = true;
            return ControlFlow::Continue(());
        };
        game.pos.play_unchecked(mv);
        game.exit = self.by_key.get(&Key::of(&game.pos)).copied();
        ControlFlow::Continue(())
    }

    fn comment(&mut self, game: &mut Game, comment: RawComment<'_>) -> ControlFlow<()> {
        if let Some(mover) = game.out_mover.take() {
            game.score =
                engine_score(&String::from_utf8_lossy(comment.as_bytes())).map(|cp| match mover {
                    Color::White => cp,
                    Color::Black => -cp,
                });
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Game) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: Game) {
        match game.exit {
            Some(i) => self.finished.push((i, game)),
            None => self.unmatched += 1,
        }
    }
}

/// The score of a move's comment as cutechess and `polybook match` write it (`+0.36/5 0.02s`,
/// pawns from the mover's view, then the depth), in centipawns; `None` for a mate (`+M5/12`), a
/// comment without a score (`book`, `0.02s`) or anything else.
pub fn engine_score(comment: &str) -> Option<f64> {
    let (score, _depth) = comment.trim().split_once('/')?;
    let number = score.strip_prefix('+').unwrap_or(score);
    if !number
        .trim_start_matches('-')
        .starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let pawns: f64 = number.parse().ok()?;
    pawns.is_finite().then_some((pawns * 100.0).round())
}

fn write_error(path: &Path, e: &std::io::Error) -> SuiteStatsError {
    SuiteStatsError::Write {
        path: path.display().to_string(),
        why: crate::text::reason(e),
    }
}

/// Which exits a refined suite keeps: those with fewer than `min_games` games (too few to judge)
/// and those whose draw rate and White's score lie in the windows (percent, inclusive).
#[derive(Clone, Copy, Debug)]
pub struct Refine {
    pub min_games: u64,
    pub draw_rate: Option<(f64, f64)>,
    pub white_score: Option<(f64, f64)>,
}

/// How a refinement went: exits kept, dropped, and kept unjudged (fewer games than asked).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Refined {
    pub kept: usize,
    pub dropped: usize,
    pub unjudged: usize,
}

impl Refine {
    /// Whether the exit stays in the refined suite; `None`: it stays unjudged.
    pub fn keeps(&self, s: &ExitStats) -> Option<bool> {
        if s.games < self.min_games.max(1) {
            return None;
        }
        let inside = |window: Option<(f64, f64)>, value: Option<f64>| match (window, value) {
            (Some((lo, hi)), Some(v)) => (lo..=hi).contains(&(v * 100.0)),
            _ => true,
        };
        Some(inside(self.draw_rate, s.draw_rate) && inside(self.white_score, s.white_score))
    }

    /// The refined suite's file, made before the games are read so that a place that cannot be
    /// written is an error at once.
    pub fn create(path: &Path) -> Result<AtomicFile, SuiteStatsError> {
        AtomicFile::create(path).map_err(|e| write_error(path, &e))
    }

    /// Writes the suite without the exits it drops, each kept exit as the suite wrote it, into
    /// `out` (from [`Refine::create`]), which then takes its name.
    pub fn write(
        &self,
        suite: &Suite,
        stats: &SuiteStats,
        mut out: AtomicFile,
    ) -> Result<Refined, SuiteStatsError> {
        let path = out.target().to_path_buf();
        let failed = |e: std::io::Error| write_error(&path, &e);
        let mut text = String::new();
        let mut refined = Refined::default();
        for (exit, s) in suite.exits.iter().zip(&stats.exits) {
            match self.keeps(s) {
                Some(false) => {
                    refined.dropped += 1;
                    continue;
                }
                Some(true) => refined.kept += 1,
                None => refined.unjudged += 1,
            }
            text.push_str(&exit.text);
            text.push_str(if suite.pgn { "\n\n" } else { "\n" });
        }
        out.write_all(text.as_bytes()).map_err(failed)?;
        out.commit(false).map_err(failed)?;
        Ok(refined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_scores_read_as_cutechess_writes_them() {
        assert_eq!(engine_score("+0.36/5 0.02s"), Some(36.0));
        assert_eq!(engine_score("-1.25/14 1.3s"), Some(-125.0));
        assert_eq!(engine_score("0.00/1 0s"), Some(0.0));
        assert_eq!(engine_score("+M5/12 0.5s"), None);
        assert_eq!(engine_score("-M3/9"), None);
        assert_eq!(engine_score("book"), None);
        assert_eq!(engine_score("0.02s"), None);
        assert_eq!(engine_score("a/b"), None);
    }

    #[test]
    fn the_windows_judge_only_exits_with_enough_games() {
        let refine = Refine {
            min_games: 4,
            draw_rate: Some((40.0, 60.0)),
            white_score: None,
        };
        let exit = |games, draws| ExitStats {
            games,
            draws,
            draw_rate: Some(draws as f64 / games as f64),
            white_score: Some(0.5),
            ..ExitStats::default()
        };
        assert_eq!(refine.keeps(&exit(2, 2)), None);
        assert_eq!(refine.keeps(&exit(4, 2)), Some(true));
        assert_eq!(refine.keeps(&exit(4, 3)), Some(false));
        assert_eq!(refine.keeps(&exit(5, 2)), Some(true));
    }
}
