//! From PGN games to plies: the pgn-reader visitor that plays each game and records, for every
//! ply it keeps, the position's key, the move and the game's result from the mover's view.
//!
//! Games that are not standard chess, that a filter rejects or whose start position is broken are
//! skipped; an illegal or ambiguous move ends its game (the plies before it count).

use std::ops::ControlFlow;

use pgn_reader::{Nag, RawTag, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError};
use shakmaty::{CastlingMode, Chess, Color, Position};

use super::Reason;
use super::filter::{FilterTags, GameFilter};
use crate::book::{Key, KeyUpdate, RawMove};
use crate::pgn::san::play_san;
use crate::pgn::tags::{Outcome, VariantKind, classify_variant, parse_date};
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
    /// With `tally --ratings`: the game's place in its chunk's [`ChunkOutput::games_rated`] (its
    /// ratings and date); 0 otherwise. It fills what would be padding: a ply stays 16 bytes.
    pub game: u32,
}

/// What one reading of a move adds to its weight with `--weights nag`, by its move assessment
/// NAG ($1 `!`, $2 `?`, $3 `!!`, $4 `??`, $5 `!?`, $6 `?!`, $7 forced, $8 only move);
/// `None` is a move without one (other NAGs, such as $14 "White is slightly better", are not
/// assessments of the move). Each class is worth twice the one below it.
pub fn nag_points(nag: Option<u8>) -> u8 {
    match nag {
        Some(3 | 7 | 8) => 16,
        Some(1) => 8,
        Some(5) => 4,
        None => 2,
        Some(6) => 1,
        Some(2 | 4) => 0,
        Some(_) => 2,
    }
}

/// What `tally --ratings` keeps of a game besides its moves: both players' ratings (both 0
/// unless `WhiteElo` and `BlackElo` are both whole numbers above 0) and its `Date` as
/// `yyyymmdd` (unknown month or day as 00; 0 without a usable year).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GameRatings {
    pub white: u32,
    pub black: u32,
    pub date: u32,
}

impl GameRatings {
    /// Whether both players are rated.
    pub fn rated(&self) -> bool {
        self.white > 0 && self.black > 0
    }

    /// Keeps what `tally --ratings` reads from tag `name` (its value `value`).
    fn read_tag(&mut self, name: &[u8], value: &[u8]) {
        let elo = || {
            let text = std::str::from_utf8(value).ok()?.trim();
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            text.parse::<u32>().ok()
        };
        match name {
            b"WhiteElo" => self.white = elo().unwrap_or(0),
            b"BlackElo" => self.black = elo().unwrap_or(0),
            b"Date" => {
                self.date =
                    std::str::from_utf8(value)
                        .ok()
                        .and_then(parse_date)
                        .map_or(0, |(y, m, d)| {
                            if !(1..=9999).contains(&y) {
                                return 0;
                            }
                            let m = if (1..=12).contains(&m) { m } else { 0 };
                            let d = if (1..=31).contains(&d) { d } else { 0 };
                            y * 10000 + m * 100 + d
                        })
            }
            _ => {}
        }
    }
}

/// Bit 15 of [`Ply::mv`]: the mover is Black.
pub const BLACK_MOVED: u16 = 0x8000;

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
    /// With `tally --ratings`: each used game's ratings and date (its plies' [`Ply::game`]).
    pub games_rated: Vec<GameRatings>,
    pub games: u64,
    pub used: u64,
    pub incidents: Vec<Incident>,
}

/// The tags a game needs, gathered before its moves.
#[derive(Default)]
pub struct Tags {
    /// Whether the game had any tag at all.
    any: bool,
    /// The `Result` tag (the only source, as in polyglot); unknown counts as a draw unless
    /// `--skip-unknown-results`.
    result: Outcome,
    fen: Option<Vec<u8>>,
    variant: Option<Vec<u8>>,
    /// The tags the filters read.
    for_filters: FilterTags,
    /// The ratings and date (`tally --ratings`).
    ratings: GameRatings,
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
    /// Its place in [`ChunkOutput::games_rated`] (`tally --ratings`), else 0.
    game: u32,
    /// With `--variations`: the place before the last move played (where a variation of that
    /// move starts), and for each variation being read, innermost last, the place it left its
    /// line at (`None` for a variation skipped: one before any move).
    before_last: Option<Place>,
    lines: Vec<Option<(Place, Option<Place>)>>,
    /// With `--weights nag`: the ply the last move read was recorded as, and whether an
    /// assessment of it was read yet.
    annotated: Option<(usize, bool)>,
}

/// Where a line stands: its position, key and ply, and whether it ended early.
#[derive(Clone)]
struct Place {
    pos: Chess,
    key: u64,
    ply: usize,
    stopped: bool,
}

impl Movetext {
    fn place(&self) -> Place {
        Place {
            pos: self.pos.clone(),
            key: self.key,
            ply: self.ply,
            stopped: self.stopped,
        }
    }

    fn go_to(&mut self, place: Place) {
        self.pos = place.pos;
        self.key = place.key;
        self.ply = place.ply;
        self.stopped = place.stopped;
    }
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
    games_rated: usize,
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
            games_rated: self.out.games_rated.len(),
        }
    }

    /// Forgets every game read since `mark`, to read their text again.
    pub fn rewind(&mut self, mark: Mark) {
        self.out.games = mark.games;
        self.out.used = mark.used;
        self.out.plies.truncate(mark.plies);
        self.out.incidents.truncate(mark.incidents);
        self.out.games_rated.truncate(mark.games_rated);
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
            b"Result" => tags.result = Outcome::of_tag(value.as_bytes()),
            b"FEN" => tags.fen = Some(value.decode().into_owned()),
            b"Variant" => tags.variant = Some(value.decode().into_owned()),
            _ => {
                if f.ratings {
                    tags.ratings.read_tag(name, value.as_bytes());
                }
                f.read_tag(&mut tags.for_filters, name, value)
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<(), Movetext> {
        self.in_tags = false;
        let unknown = tags.result == Outcome::Unknown;
        let (record_white, record_black) = match self.filter.admit(&tags.for_filters, unknown) {
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
        let white_points = tags.result.white_points().unwrap_or(1);
        let key = if tags.fen.is_none() {
            START_KEY
        } else {
            Key::of(&pos).0
        };
        let mut game = 0;
        if self.filter.ratings {
            let mut ratings = tags.ratings;
            if !ratings.rated() {
                (ratings.white, ratings.black) = (0, 0);
            }
            game = self.out.games_rated.len() as u32;
            self.out.games_rated.push(ratings);
        }
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
            game,
            before_last: None,
            lines: Vec::new(),
            annotated: None,
        })
    }

    fn san(&mut self, game: &mut Movetext, san_plus: SanPlus) -> ControlFlow<()> {
        game.annotated = None;
        if game.stopped {
            if self.filter.variations {
                // A variation of a move not played (past the end of its line) is not read either.
                game.before_last = Some(game.place());
            }
            return ControlFlow::Continue(());
        }
        let mv = match play_san(san_plus.san, &game.pos) {
            Ok(m) => m,
            Err(err) => {
                self.bad_move(game, san_plus, err);
                if self.filter.variations {
                    // The variations of the move that ended the line are not read either.
                    game.before_last = Some(game.place());
                }
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
            let (colour_bit, mut points) = match turn {
                Color::White => (0, game.white_points),
                Color::Black => (BLACK_MOVED, 2 - game.white_points),
            };
            if self.filter.nags {
                points = nag_points(None);
                game.annotated = Some((self.out.plies.len(), false));
            }
            self.out.plies.push(Ply {
                key: game.key,
                mv: raw | colour_bit,
                points,
                game: game.game,
            });
        }
        if self.filter.variations {
            game.before_last = Some(game.place());
        }
        game.ply += 1;
        if game.ply >= self.filter.max_ply {
            // Plies past --max-ply are neither played nor checked (nor is the last one played):
            // skip the rest of the line (of the movetext, unless variations are read).
            game.stopped = true;
            return if self.filter.variations {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            };
        }
        let update = KeyUpdate::new(Key(game.key), &game.pos, mv);
        game.pos.play_unchecked(mv);
        game.key = update.finish(&game.pos).0;
        ControlFlow::Continue(())
    }

    /// A variation is another move instead of the last one played: with `--variations` it is
    /// read from the place before that move, and its line is left again at its end.
    fn begin_variation(&mut self, game: &mut Movetext) -> ControlFlow<(), Skip> {
        game.annotated = None;
        if !self.filter.variations {
            return ControlFlow::Continue(Skip(true));
        }
        let Some(start) = game.before_last.clone() else {
            game.lines.push(None);
            return ControlFlow::Continue(Skip(true));
        };
        game.lines
            .push(Some((game.place(), game.before_last.take())));
        game.go_to(start);
        ControlFlow::Continue(Skip(false))
    }

    fn end_variation(&mut self, game: &mut Movetext) -> ControlFlow<()> {
        game.annotated = None;
        if let Some(Some((place, before_last))) = game.lines.pop() {
            game.go_to(place);
            game.before_last = before_last;
        }
        ControlFlow::Continue(())
    }

    /// With `--weights nag`, the assessment of a recorded move ($1–$8, or `!`, `?`, … after
    /// it) gives its points; a move given several counts with the least of them.
    fn nag(&mut self, game: &mut Movetext, nag: Nag) -> ControlFlow<()> {
        if (1..=8).contains(&nag.0)
            && let Some((i, assessed)) = game.annotated.as_mut()
        {
            let ply = &mut self.out.plies[*i];
            let points = nag_points(Some(nag.0));
            ply.points = if *assessed {
                ply.points.min(points)
            } else {
                points
            };
            *assessed = true;
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: Movetext) {
        self.in_movetext = false;
        if game.tagless && game.ply == 0 {
            self.incident(Reason::NotPgn, "neither tags nor moves".into());
        }
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
    use crate::builder::filter::PlayerFilter;

    fn run(pgn: &str, filter: &GameFilter) -> ChunkOutput {
        let mut visitor = GameVisitor::new(filter);
        crate::pgn::read::read_games(pgn.as_bytes(), &mut visitor);
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
    fn ratings_and_dates_are_read_only_when_asked() {
        let pgn = "[WhiteElo \"2500\"]\n[BlackElo \"2400\"]\n[Date \"2019.??.??\"]\n\n1. e4 e5 *\n\n\
                   [WhiteElo \"?\"]\n[BlackElo \"2400\"]\n[Date \"2020.13.40\"]\n\n1. d4 *\n\n\
                   [WhiteElo \" 1500 \"]\n[BlackElo \"0\"]\n[Date \"????.??.??\"]\n\n1. c4 *\n";
        let filter = GameFilter {
            ratings: true,
            ..GameFilter::default()
        };
        let out = run(pgn, &filter);
        let rated = |white, black, date| GameRatings { white, black, date };
        // Both players rated, or neither counts; unknown or impossible months and days are 00.
        assert_eq!(
            out.games_rated,
            [
                rated(2500, 2400, 20190000),
                rated(0, 0, 20200000),
                rated(0, 0, 0)
            ]
        );
        let games: Vec<u32> = out.plies.iter().map(|p| p.game).collect();
        assert_eq!(games, [0, 0, 1, 2]);
        // Without --ratings nothing of them is kept.
        let out = run(pgn, &GameFilter::default());
        assert!(out.games_rated.is_empty() && out.plies.iter().all(|p| p.game == 0));
        assert_eq!(std::mem::size_of::<Ply>(), 16);
    }

    #[test]
    fn with_nags_a_move_s_points_are_its_assessment_s() {
        // !! 16, ! 8, !? 4, none 2, ?! 1, ? 0, ?? 0; $-numbers as the glyphs; of `$1 $2` the least;
        // a NAG that is not a move assessment ($14) leaves it at none's; the result is ignored.
        let pgn = "[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n\
                   1. e4!! e5! 2. Nf3!? Nc6?! 3. Bb5? a6?? 4. Ba4 $1 $2 Nf6 $14 1-0\n";
        let filter = GameFilter {
            nags: true,
            ..GameFilter::default()
        };
        let points: Vec<u8> = run(pgn, &filter).out_points();
        assert_eq!(points, [16, 8, 4, 1, 0, 0, 0, 2]);
        // Without them, the result's points: White won.
        let points = run(pgn, &GameFilter::default()).out_points();
        assert_eq!(points, [2, 0, 2, 0, 2, 0, 2, 0]);
        // A side not recorded (--player) takes no annotation, nor gives it to another move.
        let filter = GameFilter {
            nags: true,
            player: Some(PlayerFilter {
                names: vec!["B".into()],
                color: None,
                both_sides: false,
            }),
            ..GameFilter::default()
        };
        assert_eq!(run(pgn, &filter).out_points(), [8, 1, 0, 2]);
    }

    impl ChunkOutput {
        fn out_points(&self) -> Vec<u8> {
            self.plies.iter().map(|p| p.points).collect()
        }
    }

    #[test]
    fn variations_count_each_move_of_the_tree_once() {
        // A repertoire: 1. e4 with 1. d4 (and inside it 1... Nf6) as alternatives, 2. f4 for 2. Nf3;
        // a variation before any move and an illegal move in a variation end only themselves.
        let pgn = "( 1. c4 ) 1. e4 ( 1. d4 d5 ( 1... Nf6 2. c4 ) 2. Ke8 2... Nc6 ) e5 \
                   2. Nf3 ( 2. f4 exf4 ) 2... Nc6 *\n";
        let sans = |out: &ChunkOutput| -> Vec<String> {
            out.plies
                .iter()
                .map(|p| RawMove(p.mv & !BLACK_MOVED).to_string())
                .collect()
        };
        let out = run(pgn, &GameFilter::default());
        assert_eq!(sans(&out), ["e2e4", "e7e5", "g1f3", "b8c6"]);
        let filter = GameFilter {
            variations: true,
            ..GameFilter::default()
        };
        let out = run(pgn, &filter);
        assert_eq!(
            sans(&out),
            [
                "e2e4", "d2d4", "d7d5", "g8f6", "c2c4", "e7e5", "g1f3", "f2f4", "e5f4", "b8c6"
            ]
        );
        // Each move from the position it is played in.
        let start = Key::of(&Chess::default()).0;
        assert_eq!(out.plies[1].key, start);
        assert_eq!(out.plies[3].key, out.plies[2].key);
        // 2... Nc6 after the variation: in the main line, after 2. Nf3.
        let pos = crate::position::play_moves(Chess::default(), "e2e4 e7e5 g1f3").unwrap();
        assert_eq!(out.plies[9].key, Key::of(&pos).0);
        assert_eq!(out.incidents.len(), 1, "{:?}", out.incidents);
        // The variations of a move that cannot be played are not read (they would start from
        // the place before the last move that was played).
        assert_eq!(sans(&run("1. d4 Ke7 ( 1... d5 ) *\n", &filter)), ["d2d4"]);
        // --max-ply ends each line, not the game.
        let filter = GameFilter {
            variations: true,
            max_ply: 1,
            ..GameFilter::default()
        };
        assert_eq!(sans(&run(pgn, &filter)), ["e2e4", "d2d4"]);
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
}
