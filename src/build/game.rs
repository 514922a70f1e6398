//! From PGN games to plies: the pgn-reader visitor that plays each game and records, for every
//! ply it keeps, the position's key, the move and the game's result from the mover's view.
//!
//! Games that are not standard chess, that a filter rejects or whose start position is broken are
//! skipped; an illegal or ambiguous move ends its game (the plies before it count).

use std::ops::ControlFlow;

use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move, Position, Role, Square};

use crate::book::{Key, KeyUpdate, RawMove};
use crate::position::playable;
use crate::text::quote;

/// The Polyglot key of the standard start position (the format's first test vector).
const START_KEY: u64 = 0x463b_9618_1691_fc9c;

/// One ply to count: the position before the move, the move, and the points the mover scored
/// (2 win, 1 draw, 0 loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ply {
    pub key: u64,
    /// The Polyglot move in bits 0–14; bit 15 set when Black made it.
    pub mv: u16,
    pub points: u8,
}

/// Bit 15 of [`Ply::mv`]: the mover is Black.
pub const BLACK_MOVED: u16 = 0x8000;

/// Which game results count and how (the `Result` tag is the only source, as in polyglot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GameResult {
    WhiteWins,
    BlackWins,
    Draw,
    /// `*`, a missing tag or anything else: a draw unless `--skip-unknown-results`.
    Unknown,
}

/// The lichess speed classes, by estimated duration: base + 40 × increment, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Speed {
    Bullet,
    Blitz,
    Rapid,
    Classical,
}

impl Speed {
    /// The class of a `TimeControl` tag (`180+2`, `600`, `40/7200:3600`); `None` when unknown (`-`, `?`).
    pub fn of_time_control(tc: &str) -> Option<Speed> {
        let first = tc.split(':').next()?.trim();
        // `moves/seconds` stages are classical-style controls: estimate from the seconds.
        let first = first.rsplit('/').next()?;
        let (base, inc) = match first.split_once('+') {
            Some((b, i)) => (b.trim().parse::<f64>().ok()?, i.trim().parse::<f64>().ok()?),
            None => (first.parse::<f64>().ok()?, 0.0),
        };
        let estimate = base + 40.0 * inc;
        Some(if estimate < 179.0 {
            Speed::Bullet
        } else if estimate < 479.0 {
            Speed::Blitz
        } else if estimate < 1499.0 {
            Speed::Rapid
        } else {
            Speed::Classical
        })
    }
}

/// A player whose moves alone make the book (`--player`), optionally with one colour.
#[derive(Clone, Debug, Default)]
pub struct PlayerFilter {
    pub name: String,
    pub color: Option<Color>,
}

/// What decides which games and plies are counted.
#[derive(Clone, Debug)]
pub struct GameFilter {
    pub max_ply: usize,
    pub chess960: bool,
    pub skip_unknown_results: bool,
    pub min_elo: Option<u32>,
    pub max_elo: Option<u32>,
    /// Inclusive bounds as `(year, month, day)`; unknown parts of a game's date count as the lowest.
    pub since: Option<(u32, u32, u32)>,
    pub until: Option<(u32, u32, u32)>,
    pub speeds: Vec<Speed>,
    pub player: Option<PlayerFilter>,
}

impl Default for GameFilter {
    fn default() -> Self {
        GameFilter {
            max_ply: 1024,
            chess960: false,
            skip_unknown_results: false,
            min_elo: None,
            max_elo: None,
            since: None,
            until: None,
            speeds: Vec::new(),
            player: None,
        }
    }
}

/// Why a game was left out, or cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// Skipped: a variant other than standard chess.
    Variant,
    /// Skipped: a `[FEN]` that does not parse or is not a playable position.
    BadFen,
    /// Skipped: the result is `*` or missing (with `--skip-unknown-results`).
    UnknownResult,
    /// Skipped by `--min-elo` / `--max-elo`.
    Elo,
    /// Skipped by `--since` / `--until`.
    Date,
    /// Skipped by `--time-control`.
    TimeControl,
    /// Skipped by `--player` / `--color`.
    Player,
    /// Cut short: an illegal move (its earlier plies count).
    IllegalMove,
    /// Cut short: an ambiguous move.
    AmbiguousMove,
    /// Cut short: a null move (`--`, `Z0`) or a piece drop.
    NullMove,
    /// Skipped: text with neither tags nor moves (binary garbage, stray text between games).
    NotPgn,
    /// Skipped: the game's tag section is broken (an unterminated tag, or the text ends in it).
    BadTags,
    /// Cut short: the movetext cannot go on (a comment still open where the next game starts,
    /// or at the end of the text).
    Unfinished,
}

impl Reason {
    /// The name used in the summary and its JSON.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Variant => "variant",
            Reason::BadFen => "bad_fen",
            Reason::UnknownResult => "unknown_result",
            Reason::Elo => "elo_filter",
            Reason::Date => "date_filter",
            Reason::TimeControl => "time_control_filter",
            Reason::Player => "player_filter",
            Reason::IllegalMove => "illegal_move",
            Reason::AmbiguousMove => "ambiguous_move",
            Reason::NullMove => "null_move",
            Reason::NotPgn => "not_pgn",
            Reason::BadTags => "bad_tags",
            Reason::Unfinished => "unfinished",
        }
    }

    /// Whether the game was still used (cut short) rather than skipped whole.
    pub fn truncates(self) -> bool {
        matches!(
            self,
            Reason::IllegalMove | Reason::AmbiguousMove | Reason::NullMove | Reason::Unfinished
        )
    }

    /// Whether the user's own options left the game out (`--min-elo`, `--since`, `--player`, …):
    /// counted, but not a problem to report.
    pub fn is_filter(self) -> bool {
        matches!(
            self,
            Reason::UnknownResult
                | Reason::Elo
                | Reason::Date
                | Reason::TimeControl
                | Reason::Player
        )
    }

    /// Whether this is a defect in the data (what `--strict` refuses), rather than a filter.
    pub fn is_defect(self) -> bool {
        matches!(
            self,
            Reason::BadFen
                | Reason::IllegalMove
                | Reason::AmbiguousMove
                | Reason::NullMove
                | Reason::Unfinished
        )
    }
}

/// A game that was skipped or cut short, for the report.
#[derive(Clone, Debug)]
pub struct Incident {
    /// The game's number within its chunk (1-based); the caller makes it global.
    pub game: u64,
    pub reason: Reason,
    pub detail: String,
}

/// What parsing one piece of PGN produced.
#[derive(Debug, Default)]
pub struct ChunkOutput {
    pub plies: Vec<Ply>,
    pub games: u64,
    pub used: u64,
    pub incidents: Vec<Incident>,
}

/// The tags a game needs, gathered before its moves.
#[derive(Default)]
pub struct Tags {
    /// Whether the game had any tag at all.
    any: bool,
    result: Option<GameResult>,
    fen: Option<Vec<u8>>,
    variant: Option<Vec<u8>>,
    white_elo: Option<u32>,
    black_elo: Option<u32>,
    date: Option<(u32, u32, u32)>,
    utc_date: Option<(u32, u32, u32)>,
    time_control: Option<Vec<u8>>,
    white: Option<Vec<u8>>,
    black: Option<Vec<u8>>,
}

/// The state of a game while its moves are read.
pub struct Movetext {
    pos: Chess,
    key: u64,
    ply: usize,
    /// Points for White (2, 1, 0); Black's are 2 minus this.
    white_points: u8,
    /// Which colours' moves are recorded (`--player`).
    record_white: bool,
    record_black: bool,
    /// Set when the game ended early; the rest of the movetext is ignored.
    stopped: bool,
    /// A game without tags counts as used only once a move was read: text that is not PGN at all
    /// (binary garbage) reads as tagless, moveless "games".
    tagless: bool,
}

/// The pgn-reader visitor: feed it a chunk of PGN with [`pgn_reader::Reader`].
pub struct GameVisitor<'a> {
    filter: &'a GameFilter,
    /// The last game's tags began but its movetext never did (yet).
    in_tags: bool,
    /// The last game's movetext began and has not ended (yet).
    in_movetext: bool,
    pub out: ChunkOutput,
}

/// Where a [`GameVisitor`]'s output stood, to go back to (see [`GameVisitor::rewind`]).
#[derive(Clone, Copy)]
pub struct Mark {
    games: u64,
    used: u64,
    plies: usize,
    incidents: usize,
}

impl<'a> GameVisitor<'a> {
    pub fn new(filter: &'a GameFilter) -> Self {
        GameVisitor {
            filter,
            in_tags: false,
            in_movetext: false,
            out: ChunkOutput::default(),
        }
    }

    /// Call after the last game: a game whose text ended inside its tags is counted as skipped.
    pub fn finish(&mut self) {
        self.in_movetext = false;
        if std::mem::take(&mut self.in_tags) {
            self.incident(Reason::BadTags, "the text ends inside its tags".into());
        }
    }

    /// Call when the reader gives up on a game (`why`: its error): a broken tag section skips
    /// the game (`true` is returned), a movetext that cannot go on (a comment never closed
    /// before the next game) cuts it short.
    pub fn broken(&mut self, why: &str) -> bool {
        if std::mem::take(&mut self.in_tags) {
            self.incident(Reason::BadTags, format!("broken tags: {why}"));
            return true;
        }
        if std::mem::take(&mut self.in_movetext) {
            self.incident(Reason::Unfinished, format!("cut short: {why}"));
        }
        false
    }

    /// Where the output stands now.
    pub fn mark(&self) -> Mark {
        Mark {
            games: self.out.games,
            used: self.out.used,
            plies: self.out.plies.len(),
            incidents: self.out.incidents.len(),
        }
    }

    /// Forgets every game read since `mark`, to read their text again.
    pub fn rewind(&mut self, mark: Mark) {
        self.out.games = mark.games;
        self.out.used = mark.used;
        self.out.plies.truncate(mark.plies);
        self.out.incidents.truncate(mark.incidents);
        self.in_tags = false;
        self.in_movetext = false;
    }

    fn incident(&mut self, reason: Reason, detail: String) {
        self.out.incidents.push(Incident {
            game: self.out.games,
            reason,
            detail,
        });
    }

    /// Ends the game at a move that cannot be played, and says why.
    fn bad_move(&mut self, game: &mut Movetext, san_plus: SanPlus, err: SanError) {
        let reason = match (err, san_plus.san) {
            (_, San::Null | San::Put { .. }) => Reason::NullMove,
            (SanError::AmbiguousSan, _) => Reason::AmbiguousMove,
            (SanError::IllegalSan, _) => Reason::IllegalMove,
        };
        let number = game.pos.fullmoves().get();
        let dots = if game.pos.turn() == Color::White {
            "."
        } else {
            "..."
        };
        self.incident(
            reason,
            format!("move {number}{dots} {san_plus} is {}", reason_word(reason)),
        );
        game.stopped = true;
    }

    /// Applies the game-level filters; `Err` names why the game is skipped.
    fn admit(&self, tags: &Tags) -> Result<(bool, bool), (Reason, String)> {
        let f = self.filter;
        let unknown = matches!(tags.result, None | Some(GameResult::Unknown));
        if unknown && f.skip_unknown_results {
            return Err((Reason::UnknownResult, "result is unknown".into()));
        }
        if f.min_elo.is_some() || f.max_elo.is_some() {
            for elo in [tags.white_elo, tags.black_elo] {
                let Some(elo) = elo else {
                    return Err((Reason::Elo, "a player has no Elo".into()));
                };
                if f.min_elo.is_some_and(|m| elo < m) || f.max_elo.is_some_and(|m| elo > m) {
                    return Err((Reason::Elo, format!("Elo {elo} out of range")));
                }
            }
        }
        if f.since.is_some() || f.until.is_some() {
            let Some(date) = tags.utc_date.or(tags.date) else {
                return Err((Reason::Date, "no known date".into()));
            };
            if f.since.is_some_and(|s| date < s) || f.until.is_some_and(|u| date > u) {
                return Err((Reason::Date, "date out of range".into()));
            }
        }
        if !f.speeds.is_empty() {
            let speed = tags
                .time_control
                .as_deref()
                .and_then(|tc| std::str::from_utf8(tc).ok())
                .and_then(Speed::of_time_control);
            if !speed.is_some_and(|s| f.speeds.contains(&s)) {
                return Err((Reason::TimeControl, "time control not selected".into()));
            }
        }
        let (mut white, mut black) = (true, true);
        if let Some(p) = &f.player {
            let is = |name: &Option<Vec<u8>>| {
                name.as_deref().is_some_and(|n| {
                    String::from_utf8_lossy(n)
                        .trim()
                        .eq_ignore_ascii_case(&p.name)
                })
            };
            white = is(&tags.white) && p.color != Some(Color::Black);
            black = is(&tags.black) && p.color != Some(Color::White);
            if !white && !black {
                return Err((Reason::Player, "player not in the game".into()));
            }
        }
        Ok((white, black))
    }

    /// The start position, or why the game must be skipped.
    fn start_position(&self, tags: &Tags) -> Result<Chess, (Reason, String)> {
        let mode = match tags.variant.as_deref().map(classify_variant) {
            None | Some(VariantKind::Standard) => CastlingMode::Standard,
            Some(VariantKind::Chess960) if self.filter.chess960 => CastlingMode::Chess960,
            Some(_) => {
                let name = String::from_utf8_lossy(tags.variant.as_deref().unwrap_or_default());
                return Err((Reason::Variant, format!("variant {}", quote(&name))));
            }
        };
        let Some(fen) = &tags.fen else {
            if mode == CastlingMode::Chess960 {
                return Err((Reason::BadFen, "a Chess960 game without a [FEN]".into()));
            }
            return Ok(Chess::default());
        };
        let bad = |why: String| {
            (
                Reason::BadFen,
                format!("FEN {}: {why}", quote(&String::from_utf8_lossy(fen))),
            )
        };
        let parsed = Fen::from_ascii(fen.trim_ascii()).map_err(|e| bad(e.to_string()))?;
        playable(parsed.into_setup(), mode).map_err(|e| bad(e.to_string()))
    }
}

enum VariantKind {
    Standard,
    Chess960,
    Other,
}

fn classify_variant(name: &[u8]) -> VariantKind {
    let name = String::from_utf8_lossy(name).trim().to_ascii_lowercase();
    match name.as_str() {
        "" | "standard" | "chess" | "normal" | "from position" | "fromposition"
        | "from_position" => VariantKind::Standard,
        "chess960" | "chess 960" | "fischerandom" | "fischer random" | "fischerrandom" | "frc"
        | "960" => VariantKind::Chess960,
        _ => VariantKind::Other,
    }
}

/// A PGN date `YYYY.MM.DD` with `??` parts (unknown parts count as 0); `None` if the year is unknown.
pub fn parse_date(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().split(['.', '-', '/']);
    let year = parts.next()?.parse().ok()?;
    let month = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let day = parts.next().and_then(|d| d.parse().ok()).unwrap_or(0);
    Some((year, month, day))
}

/// A date given on the command line (`--since`, `--until`): `YYYY`, `YYYY.MM`, `YYYY.MM.DD`,
/// `YYYY-MM` or `YYYY-MM-DD`, a date that exists (`2020-13-45` does not). The parts not given are
/// `fill` (0 for the start of a year or month, 99 for its end).
pub fn parse_date_arg(text: &str, fill: u32) -> Option<(u32, u32, u32)> {
    let text = text.trim();
    let sep = if text.contains('-') { '-' } else { '.' };
    let parts: Vec<&str> = text.split(sep).collect();
    let number = |s: &str, digits: std::ops::RangeInclusive<usize>| {
        (digits.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let year = number(parts.first()?, 4..=4)?;
    let month = match parts.get(1) {
        Some(m) => Some(number(m, 1..=2).filter(|m| (1..=12).contains(m))?),
        None => None,
    };
    let day = match (parts.get(2), month) {
        (Some(d), Some(m)) => {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            let days = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            Some(number(d, 1..=2).filter(|d| (1..=days).contains(d))?)
        }
        _ => None,
    };
    if parts.len() > 3 {
        return None;
    }
    Some((year, month.unwrap_or(fill), day.unwrap_or(fill)))
}

fn parse_u32(value: RawTag<'_>) -> Option<u32> {
    std::str::from_utf8(value.as_bytes())
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl Visitor for GameVisitor<'_> {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), Tags> {
        self.finish();
        self.in_tags = true;
        self.out.games += 1;
        ControlFlow::Continue(Tags::default())
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        let f = self.filter;
        tags.any = true;
        match name {
            b"Result" => {
                tags.result = Some(match value.as_bytes().trim_ascii() {
                    b"1-0" => GameResult::WhiteWins,
                    b"0-1" => GameResult::BlackWins,
                    b"1/2-1/2" => GameResult::Draw,
                    _ => GameResult::Unknown,
                })
            }
            b"FEN" => tags.fen = Some(value.decode().into_owned()),
            b"Variant" => tags.variant = Some(value.decode().into_owned()),
            b"WhiteElo" if f.min_elo.is_some() || f.max_elo.is_some() => {
                tags.white_elo = parse_u32(value)
            }
            b"BlackElo" if f.min_elo.is_some() || f.max_elo.is_some() => {
                tags.black_elo = parse_u32(value)
            }
            b"Date" | b"UTCDate" if f.since.is_some() || f.until.is_some() => {
                let date = std::str::from_utf8(value.as_bytes())
                    .ok()
                    .and_then(parse_date);
                if name == b"Date" {
                    tags.date = date;
                } else {
                    tags.utc_date = date;
                }
            }
            b"TimeControl" if !f.speeds.is_empty() => {
                tags.time_control = Some(value.decode().into_owned())
            }
            b"White" if f.player.is_some() => tags.white = Some(value.decode().into_owned()),
            b"Black" if f.player.is_some() => tags.black = Some(value.decode().into_owned()),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<(), Movetext> {
        self.in_tags = false;
        let (record_white, record_black) = match self.admit(&tags) {
            Ok(sides) => sides,
            Err((reason, detail)) => {
                self.incident(reason, detail);
                return ControlFlow::Break(());
            }
        };
        let pos = match self.start_position(&tags) {
            Ok(p) => p,
            Err((reason, detail)) => {
                self.incident(reason, detail);
                return ControlFlow::Break(());
            }
        };
        if self.filter.max_ply == 0 {
            self.out.used += 1;
            return ControlFlow::Break(());
        }
        if tags.any {
            self.out.used += 1;
        }
        let white_points = match tags.result {
            Some(GameResult::WhiteWins) => 2,
            Some(GameResult::BlackWins) => 0,
            _ => 1,
        };
        let key = if tags.fen.is_none() {
            START_KEY
        } else {
            Key::of(&pos).0
        };
        self.in_movetext = true;
        ControlFlow::Continue(Movetext {
            pos,
            key,
            ply: 0,
            white_points,
            record_white,
            record_black,
            stopped: false,
            tagless: !tags.any,
        })
    }

    fn san(&mut self, game: &mut Movetext, san_plus: SanPlus) -> ControlFlow<()> {
        if game.stopped {
            return ControlFlow::Continue(());
        }
        let resolved = match super::resolve::resolve(&san_plus.san, &game.pos) {
            Some(m) => Ok(m),
            None => san_plus
                .san
                .to_move(&game.pos)
                .or_else(|err| lenient(san_plus.san, &game.pos).ok_or(err)),
        };
        let mv = match resolved {
            Ok(m) => m,
            Err(err) => {
                self.bad_move(game, san_plus, err);
                return ControlFlow::Continue(());
            }
        };
        if game.tagless && game.ply == 0 {
            self.out.used += 1;
        }
        let turn = game.pos.turn();
        let record = match turn {
            Color::White => game.record_white,
            Color::Black => game.record_black,
        };
        if record {
            // Every legal move of standard chess has a Polyglot encoding.
            let raw = RawMove::from_move(mv).map_or(0, |r| r.0);
            let (colour_bit, points) = match turn {
                Color::White => (0, game.white_points),
                Color::Black => (BLACK_MOVED, 2 - game.white_points),
            };
            self.out.plies.push(Ply {
                key: game.key,
                mv: raw | colour_bit,
                points,
            });
        }
        game.ply += 1;
        if game.ply >= self.filter.max_ply {
            // Plies past --max-ply are neither played nor checked (nor is the last one played):
            // skip the rest of the movetext.
            game.stopped = true;
            return ControlFlow::Break(());
        }
        let update = KeyUpdate::new(Key(game.key), &game.pos, mv);
        game.pos.play_unchecked(mv);
        game.key = update.finish(&game.pos).0;
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Movetext) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: Movetext) {
        self.in_movetext = false;
        if game.tagless && game.ply == 0 {
            self.incident(Reason::NotPgn, "neither tags nor moves".into());
        }
    }
}

/// Readings of a move that is not legal as written SAN, as other readers (python-chess) accept:
/// a capture written without `x` or a move with a wrong `x` (`Raf8` for `Raxf8`), and UCI
/// coordinates (`g1f3`, `e1g1`, `e7e8q`), which read as a pawn move with a full origin square.
fn lenient(san: San, pos: &Chess) -> Option<Move> {
    if let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = san
    {
        let flipped = San::Normal {
            role,
            file,
            rank,
            capture: !capture,
            to,
            promotion,
        };
        if let Ok(m) = flipped.to_move(pos) {
            return Some(m);
        }
    }
    match san {
        San::Normal {
            role: Role::Pawn,
            file: Some(file),
            rank: Some(rank),
            to,
            promotion,
            ..
        } => UciMove::Normal {
            from: Square::from_coords(file, rank),
            to,
            promotion,
        }
        .to_move(pos)
        .ok(),
        _ => None,
    }
}

fn reason_word(reason: Reason) -> &'static str {
    match reason {
        Reason::AmbiguousMove => "ambiguous",
        Reason::NullMove => "a null move or a drop",
        _ => "illegal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pgn: &str, filter: &GameFilter) -> ChunkOutput {
        let mut visitor = GameVisitor::new(filter);
        super::super::read_games(pgn.as_bytes(), &mut visitor);
        visitor.out
    }

    #[test]
    fn points_follow_the_result_tag_from_the_movers_view() {
        let out = run(
            "[Result \"0-1\"]\n\n1. e4 e5 2. Nf3 1-0\n",
            &GameFilter::default(),
        );
        let points: Vec<u8> = out.plies.iter().map(|p| p.points).collect();
        assert_eq!(points, vec![0, 2, 0]);
        assert_eq!(out.plies[0].key, 0x463b96181691fc9c);
        assert_eq!(out.plies[1].mv & BLACK_MOVED, BLACK_MOVED);
    }

    #[test]
    fn an_illegal_move_ends_the_game_and_keeps_what_came_before() {
        let out = run(
            "[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 Nc6 1-0\n\n[Result \"1-0\"]\n\n1. d4 1-0\n",
            &GameFilter::default(),
        );
        assert_eq!(out.plies.len(), 3);
        assert_eq!(out.games, 2);
        assert_eq!(out.used, 2);
        assert_eq!(out.incidents.len(), 1);
        assert_eq!(out.incidents[0].reason, Reason::IllegalMove);
        assert!(
            out.incidents[0].detail.contains("2. Ke3"),
            "{:?}",
            out.incidents
        );
    }

    #[test]
    fn variants_are_skipped_and_fen_games_start_from_their_fen() {
        let pgn = "[Variant \"Atomic\"]\n\n1. e4 *\n\n\
                   [Variant \"From Position\"]\n[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\n1. O-O *\n";
        let out = run(pgn, &GameFilter::default());
        assert_eq!(out.incidents[0].reason, Reason::Variant);
        assert_eq!(out.plies.len(), 1);
        // Castling is stored as king takes rook: e1h1.
        assert_eq!(out.plies[0].mv, RawMove::from_uci_str("e1h1").unwrap().0);
    }

    #[test]
    fn a_capture_written_without_x_is_read() {
        let out = run("1. e4 d5 2. ed5 *\n", &GameFilter::default());
        assert_eq!(out.plies.len(), 3);
        assert!(out.incidents.is_empty(), "{:?}", out.incidents);
    }

    #[test]
    fn moves_in_uci_coordinates_are_read() {
        let out = run("1. g1f3 d7d5 2. e2e4 d5e4 *\n", &GameFilter::default());
        assert_eq!(out.plies.len(), 4);
        assert!(out.incidents.is_empty(), "{:?}", out.incidents);
    }

    #[test]
    fn the_start_key_is_the_start_positions() {
        assert_eq!(Key::of(&Chess::default()).0, START_KEY);
    }

    #[test]
    fn max_ply_stops_before_checking() {
        let filter = GameFilter {
            max_ply: 2,
            ..GameFilter::default()
        };
        let out = run("1. e4 e5 2. Ke8 *\n", &filter);
        assert_eq!(out.plies.len(), 2);
        assert!(out.incidents.is_empty());
    }

    #[test]
    fn garbage_is_counted_apart() {
        let out = run(
            "\x01\x02 garbage !! \n\n[Result \"1-0\"]\n\n1. e4 1-0\n",
            &GameFilter::default(),
        );
        assert_eq!((out.games, out.used, out.plies.len()), (2, 1, 1));
        assert_eq!(out.incidents[0].reason, Reason::NotPgn);
        let out = run(
            "[Result \"1-0\"]\n\n1. e4 1-0\n\n[Event \"cut",
            &GameFilter::default(),
        );
        assert_eq!((out.games, out.used), (2, 1));
        assert_eq!(out.incidents[0].reason, Reason::BadTags);
        // A broken tag in the middle: that game is skipped, the reading goes on.
        let long = format!(
            "[Event \"x{}\n\n1. d4 *\n\n[Result \"1-0\"]\n\n1. e4 1-0\n",
            "y".repeat(5000)
        );
        let out = run(&long, &GameFilter::default());
        assert_eq!(out.plies.len(), 2, "{:?}", out.incidents);
        // Moves without tags are a game.
        let out = run("1. e4 e5 *\n", &GameFilter::default());
        assert_eq!((out.games, out.used, out.plies.len()), (1, 1, 2));
    }

    #[test]
    fn dates_on_the_command_line() {
        assert_eq!(parse_date_arg("2020", 0), Some((2020, 0, 0)));
        assert_eq!(parse_date_arg("2020", 99), Some((2020, 99, 99)));
        assert_eq!(parse_date_arg("2020.05", 99), Some((2020, 5, 99)));
        assert_eq!(parse_date_arg("2020.05.31", 0), Some((2020, 5, 31)));
        assert_eq!(parse_date_arg("2020-05-31", 0), Some((2020, 5, 31)));
        assert_eq!(parse_date_arg("2020-02-29", 0), Some((2020, 2, 29)));
        for bad in [
            "2020-13-45",
            "2020-02-30",
            "2019.02.29",
            "1900-02-29",
            "2020-00-10",
            "2020.05.00",
            "20",
            "2020.5.5.5",
            "2020-05.01",
            "yesterday",
            "",
        ] {
            assert_eq!(parse_date_arg(bad, 0), None, "{bad}");
        }
    }

    #[test]
    fn time_control_classes() {
        assert_eq!(Speed::of_time_control("60+0"), Some(Speed::Bullet));
        assert_eq!(Speed::of_time_control("180+2"), Some(Speed::Blitz));
        assert_eq!(Speed::of_time_control("600+5"), Some(Speed::Rapid));
        assert_eq!(Speed::of_time_control("1800+20"), Some(Speed::Classical));
        assert_eq!(
            Speed::of_time_control("40/7200:3600"),
            Some(Speed::Classical)
        );
        assert_eq!(Speed::of_time_control("-"), None);
    }
}
