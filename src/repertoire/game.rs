//! From PGN to the index's pieces: the pgn-reader visitor that reads a chunk of games into a
//! [`ChunkIndex`], what it keeps of each game's tags, and the classes the filters ask about
//! (speed by lichess's rule, [`Speed`], rated or casual).

use std::collections::HashMap;
use std::ops::ControlFlow;

use pgn_reader::{RawTag, SanPlus, Skip, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

use super::{Player, Record, Word};
use crate::book::{Key, KeyUpdate, RawMove};
use crate::pgn::read::ChunkVisitor;
use crate::pgn::san::play_san;
use crate::pgn::tags::{Outcome, Speed, is_standard_variant, parse_date};
use crate::position::playable;

/// The index's partitions: records go to one of these by their key's top bits, so that each
/// can be sorted on its own thread.
pub const PARTITIONS: usize = 16;

/// The partition of a position's key.
#[inline]
pub fn partition(key: u64) -> usize {
    (key >> 60) as usize
}

/// Rated or casual: lichess writes `Rated …` or `Casual …` in `Event`, and a rating change
/// (`WhiteRatingDiff`) only for rated games, tournament games included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Unknown = 0,
    Rated = 1,
    Casual = 2,
}

impl Mode {
    pub fn from_bits(bits: u64) -> Mode {
        match bits {
            1 => Mode::Rated,
            2 => Mode::Casual,
            _ => Mode::Unknown,
        }
    }
}

/// What the index keeps of a game besides its filter word and its plies: who, where, when, and
/// where its moves are.
#[derive(Clone, Copy, Debug)]
pub struct GameInfo {
    /// String ids (see [`Strings`]); `NONE` when the tag is missing.
    pub white: u32,
    pub black: u32,
    pub event: u32,
    pub time_control: u32,
    /// The FEN it starts from, or `NONE` for the standard start.
    pub start: u32,
    /// `yyyymmdd`, unknown parts 0; 0 without a year.
    pub date: u32,
    /// Its `Site` in the sites' bytes (`NONE`: none).
    pub site: u32,
    pub site_len: u16,
    /// The number of moves the game has (every move played, not only those indexed).
    pub plies: u16,
    /// Where its moves start in the moves' array.
    pub moves: u64,
    /// The game's number among all the inputs' games, from 1, games left out counted (`check`'s
    /// `game`); within a chunk, among the chunk's games until the merge.
    pub number: u64,
}

/// The id of a missing string.
pub const NONE: u32 = u32::MAX;

/// Strings kept once each: names, events, time controls, FENs.
#[derive(Default)]
pub struct Strings {
    pub list: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
}

impl Strings {
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.list.len() as u32;
        self.list.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    pub fn get(&self, id: u32) -> Option<&str> {
        self.list.get(id as usize).map(|s| &**s)
    }

    /// Bytes held, about.
    pub fn bytes(&self) -> usize {
        self.list.iter().map(|s| 2 * s.len() + 64).sum()
    }
}

/// What one chunk of PGN gave: its games, with ids and offsets of its own (the merge makes them
/// global), and its records by partition.
#[derive(Default)]
pub struct ChunkIndex {
    pub games: Vec<GameInfo>,
    pub words: Vec<Word>,
    pub records: Vec<Vec<Record>>,
    pub moves: Vec<u16>,
    pub sites: Vec<u8>,
    pub strings: Strings,
    pub counts: Counts,
}

/// Games read and why some were left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub read: u64,
    pub indexed: u64,
    pub variant: u64,
    pub no_result: u64,
    pub not_player: u64,
    pub bad_start: u64,
    pub broken: u64,
    /// Games cut short at a move that cannot be played (the moves before it are kept).
    pub cut_short: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.read += o.read;
        self.indexed += o.indexed;
        self.variant += o.variant;
        self.no_result += o.no_result;
        self.not_player += o.not_player;
        self.bad_start += o.bad_start;
        self.broken += o.broken;
        self.cut_short += o.cut_short;
    }
}

/// The tags a game needs, gathered before its moves.
#[derive(Default)]
pub struct Tags {
    white: Option<String>,
    black: Option<String>,
    white_elo: u32,
    black_elo: u32,
    event: Option<String>,
    site: Option<String>,
    time_control: Option<String>,
    date: Option<(u32, u32, u32)>,
    utc_date: Option<(u32, u32, u32)>,
    result: Outcome,
    fen: Option<String>,
    variant_ok: bool,
    variant_seen: bool,
    rating_diff: bool,
}

/// A game being read.
pub struct Movetext {
    pos: Chess,
    key: u64,
    ply: usize,
    game: u32,
    stopped: bool,
}

/// Reads a chunk's games (see [`crate::pgn::read::read_games`]).
pub struct IndexVisitor<'a> {
    player: Option<&'a Player>,
    max_ply: usize,
    pub out: ChunkIndex,
    in_tags: bool,
}

#[derive(Clone, Copy)]
pub struct Mark {
    games: usize,
    records: [usize; PARTITIONS],
    moves: usize,
    sites: usize,
    counts: Counts,
}

impl<'a> IndexVisitor<'a> {
    pub fn new(player: Option<&'a Player>, max_ply: usize) -> Self {
        let out = ChunkIndex {
            records: vec![Vec::new(); PARTITIONS],
            ..ChunkIndex::default()
        };
        IndexVisitor {
            player,
            max_ply,
            out,
            in_tags: false,
        }
    }
}

fn elo(value: &[u8]) -> u32 {
    let text = String::from_utf8_lossy(value);
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    text.parse::<u32>().map_or(0, |e| e.min(super::MAX_ELO))
}

fn date(value: &[u8]) -> Option<(u32, u32, u32)> {
    let (y, m, d) = parse_date(&String::from_utf8_lossy(value))?;
    (1..=9999)
        .contains(&y)
        .then_some((y, if m <= 12 { m } else { 0 }, if d <= 31 { d } else { 0 }))
}

impl Visitor for IndexVisitor<'_> {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<(), Tags> {
        self.in_tags = true;
        self.out.counts.read += 1;
        ControlFlow::Continue(Tags {
            variant_ok: true,
            ..Tags::default()
        })
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<()> {
        let text = || value.decode_utf8_lossy().trim().to_string();
        match name {
            b"White" => tags.white = Some(text()),
            b"Black" => tags.black = Some(text()),
            b"WhiteElo" => tags.white_elo = elo(value.as_bytes()),
            b"BlackElo" => tags.black_elo = elo(value.as_bytes()),
            b"Event" => tags.event = Some(text()),
            b"Site" => tags.site = Some(text()),
            b"TimeControl" => tags.time_control = Some(text()),
            b"Date" => tags.date = date(value.as_bytes()),
            b"UTCDate" => tags.utc_date = date(value.as_bytes()),
            b"WhiteRatingDiff" | b"BlackRatingDiff" => tags.rating_diff = true,
            b"Result" => tags.result = Outcome::of_tag(value.as_bytes()),
            b"FEN" => tags.fen = Some(text()),
            b"Variant" => {
                tags.variant_seen = true;
                tags.variant_ok = is_standard_variant(value.as_bytes());
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<(), Movetext> {
        self.in_tags = false;
        let counts = &mut self.out.counts;
        if !tags.variant_ok {
            counts.variant += 1;
            return ControlFlow::Break(());
        }
        // The word's result: 0 White won, 1 draw, 2 Black won.
        let Some(result) = tags.result.white_points().map(|p| u64::from(2 - p)) else {
            counts.no_result += 1;
            return ControlFlow::Break(());
        };
        let side = match self.player {
            None => 0,
            Some(p) => {
                let is = |n: &Option<String>| n.as_deref().is_some_and(|n| p.matches(n));
                if is(&tags.white) {
                    1
                } else if is(&tags.black) {
                    2
                } else {
                    counts.not_player += 1;
                    return ControlFlow::Break(());
                }
            }
        };
        let pos = match &tags.fen {
            None => Chess::default(),
            Some(fen) => match Fen::from_ascii(fen.as_bytes())
                .ok()
                .and_then(|f| playable(f.into_setup(), CastlingMode::Standard).ok())
            {
                Some(p) => p,
                None => {
                    counts.bad_start += 1;
                    return ControlFlow::Break(());
                }
            },
        };
        counts.indexed += 1;
        let out = &mut self.out;
        let mut id = |s: &Option<String>| s.as_deref().map_or(NONE, |s| out.strings.id(s));
        let (white, black) = (id(&tags.white), id(&tags.black));
        let (event, time_control) = (id(&tags.event), id(&tags.time_control));
        let start = id(&tags.fen);
        let when = tags.date.or(tags.utc_date);
        let site = tags.site.as_deref().filter(|s| !s.is_empty() && *s != "?");
        let (site_at, site_len) = match site {
            Some(s) => {
                let s = &s.as_bytes()[..s.len().min(1000)];
                let at = out.sites.len() as u32;
                out.sites.extend_from_slice(s);
                (at, s.len() as u16)
            }
            None => (NONE, 0),
        };
        let speed = tags
            .time_control
            .as_deref()
            .map_or(Speed::Unknown, Speed::of_time_control);
        let event_text = tags.event.as_deref().unwrap_or("");
        let mode = if event_text.starts_with("Rated") || tags.rating_diff {
            Mode::Rated
        } else if event_text.starts_with("Casual") {
            Mode::Casual
        } else {
            Mode::Unknown
        };
        let month = when.map_or(0, |(y, m, _)| y * 12 + m.max(1) - 1);
        let word = Word::new(
            result,
            side,
            speed,
            mode,
            tags.white_elo,
            tags.black_elo,
            month,
        );
        let game = out.games.len() as u32;
        out.games.push(GameInfo {
            white,
            black,
            event,
            time_control,
            start,
            date: when.map_or(0, |(y, m, d)| y * 10000 + m * 100 + d),
            site: site_at,
            site_len,
            plies: 0,
            moves: out.moves.len() as u64,
            number: out.counts.read,
        });
        out.words.push(word);
        let key = Key::of(&pos).0;
        ControlFlow::Continue(Movetext {
            pos,
            key,
            ply: 0,
            game,
            stopped: false,
        })
    }

    fn san(&mut self, game: &mut Movetext, san_plus: SanPlus) -> ControlFlow<()> {
        if game.stopped {
            return ControlFlow::Continue(());
        }
        let Ok(mv) = play_san(san_plus.san, &game.pos) else {
            self.out.counts.cut_short += 1;
            game.stopped = true;
            return ControlFlow::Continue(());
        };
        // Every legal move of standard chess has a Polyglot encoding.
        let raw = RawMove::from_move(mv).map_or(0, |r| r.0);
        self.out.moves.push(raw);
        if game.ply < self.max_ply {
            self.out.records[partition(game.key)].push(Record {
                key: game.key,
                game: game.game,
                mv: raw,
            });
            let update = KeyUpdate::new(Key(game.key), &game.pos, mv);
            game.pos.play_unchecked(mv);
            game.key = update.finish(&game.pos).0;
        } else {
            game.pos.play_unchecked(mv);
        }
        game.ply += 1;
        if game.ply >= u16::MAX as usize {
            game.stopped = true;
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _game: &mut Movetext) -> ControlFlow<(), Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, game: Movetext) {
        if let Some(info) = self.out.games.get_mut(game.game as usize) {
            info.plies = game.ply as u16;
        }
    }
}

impl ChunkVisitor for IndexVisitor<'_> {
    type Mark = Mark;

    fn mark(&mut self) -> Mark {
        let mut records = [0; PARTITIONS];
        for (r, part) in records.iter_mut().zip(&self.out.records) {
            *r = part.len();
        }
        Mark {
            games: self.out.games.len(),
            records,
            moves: self.out.moves.len(),
            sites: self.out.sites.len(),
            counts: self.out.counts,
        }
    }

    fn rewind(&mut self, mark: Mark) {
        let out = &mut self.out;
        out.games.truncate(mark.games);
        out.words.truncate(mark.games);
        for (part, &len) in out.records.iter_mut().zip(&mark.records) {
            part.truncate(len);
        }
        out.moves.truncate(mark.moves);
        out.sites.truncate(mark.sites);
        out.counts = mark.counts;
        self.in_tags = false;
    }

    fn broken(&mut self, _why: &str) -> bool {
        if std::mem::take(&mut self.in_tags) {
            self.out.counts.broken += 1;
            return true;
        }
        false
    }

    fn finish(&mut self) {
        if std::mem::take(&mut self.in_tags) {
            self.out.counts.broken += 1;
        }
    }
}

/// A chunk of whole games read into its index.
pub fn index_chunk(data: &[u8], player: Option<&Player>, max_ply: usize) -> ChunkIndex {
    let mut visitor = IndexVisitor::new(player, max_ply);
    visitor.out.moves.reserve(data.len() / 8);
    crate::pgn::read::read_games(data, &mut visitor);
    visitor.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_keeps_its_games_and_their_plies() {
        let pgn = b"[Event \"Rated Blitz game\"]\n[White \"a\"]\n[Black \"B\"]\n[Result \"1-0\"]\n[TimeControl \"180+2\"]\n[Date \"2020.03.04\"]\n\n1. e4 e5 2. Nf3 1-0\n\n[White \"c\"]\n[Black \"d\"]\n[Result \"*\"]\n\n1. d4 *\n\n[White \"x\"]\n[Black \"y\"]\n[Variant \"Atomic\"]\n[Result \"1-0\"]\n\n1. e4 1-0\n";
        let out = index_chunk(pgn, None, 2);
        assert_eq!(out.counts.read, 3);
        assert_eq!(out.counts.indexed, 1);
        assert_eq!(out.counts.no_result, 1);
        assert_eq!(out.counts.variant, 1);
        assert_eq!(out.games[0].plies, 3);
        assert_eq!(out.moves.len(), 3);
        let records: usize = out.records.iter().map(Vec::len).sum();
        assert_eq!(records, 2, "--max-ply 2 indexes two plies");
        let w = out.words[0];
        assert_eq!(w.speed(), Speed::Blitz);
        assert_eq!(w.mode(), Mode::Rated);
        assert_eq!(w.month(), 2020 * 12 + 2);
    }
}
