//! A player's games: where each left a repertoire book ([`check`], `polybook check`), a
//! repertoire built from them ([`build`], `polybook repertoire`), and the games explorer.
//!
//! The games explorer (`polybook explore GAMES.pgn --player NAME`): a player's games (or any
//! collection) read once into an index that answers a position's moves with filters chosen at
//! query time: colour, speed, rated or casual, the opponent's rating, dates, result, opponent.
//!
//! ```text
//! PGN ─► chunks ─► index_chunk (× --threads) ─► merged in input order ─► partitions sorted by key
//!                                                                         │
//!   query: key ─► its records (binary search) ─► each game's filter word ─┴─► per move: counts,
//!          score, performance, average opponent, last month, top and recent games
//! ```
//!
//! What it holds, per game: a [`Word`] of 8 bytes with everything the filters read (so that a
//! query reads one array in order), a [`game::GameInfo`] (names, event, site, date, where its
//! moves are, its number among all the inputs' games) and every move of the game (2 bytes each, for replaying it); per ply up to
//! `--max-ply`, a [`Record`] of 16 bytes: the position's Polyglot key, the game and the move.
//! The records are kept in [`game::PARTITIONS`] partitions by the key's top bits, each sorted by
//! (key, game), so a position's records are one run found by binary search, in game order.
//!
//! The games are read by the build's reader (`pgn::input`, `pgn::read`): the same chunks
//! of whole games, the same rule for where a game starts, and the same reading of moves
//! (`pgn::san::play_san`). Games are numbered in input order, whatever `--threads`.
//!
//! With a repertoire book (`explore --repertoire`), [`check::check_games`] reads the same inputs
//! once more and [`Index::set_repertoire`] keeps its verdicts by game number, which the games'
//! API objects then carry.

pub mod build;
pub mod check;
pub mod game;
pub mod query;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use thiserror::Error;

use crate::pgn::Progress;
use crate::pgn::input::{self, Chunks, Input};
use crate::pgn::tags::Speed;
use crate::text::{quote, thousands};
use game::{ChunkIndex, Counts, GameInfo, Mode, PARTITIONS, Strings, index_chunk, partition};

pub use query::{
    FilterError, Filters, GameDetail, GameJson, MoveGames, PositionGames, RepertoireJson, Results,
};

/// The highest rating kept (12 bits); higher ones count as this.
pub const MAX_ELO: u32 = 4095;

/// One ply indexed: the position before the move, the game, the move (Polyglot's encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Record {
    pub key: u64,
    pub game: u32,
    pub mv: u16,
}

/// What the filters read of a game, packed in 8 bytes: its result (White's view: 0 win, 1 draw,
/// 2 loss), the player's side (0 none, 1 White, 2 Black), speed, mode, both ratings (12 bits, 0
/// unknown) and the month played (`year × 12 + month − 1`, 0 unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Word(pub u64);

impl Word {
    pub fn new(
        result: u64,
        side: u64,
        speed: Speed,
        mode: Mode,
        white_elo: u32,
        black_elo: u32,
        month: u32,
    ) -> Word {
        Word(
            result
                | side << 2
                | (speed as u64) << 4
                | (mode as u64) << 7
                | u64::from(white_elo.min(MAX_ELO)) << 9
                | u64::from(black_elo.min(MAX_ELO)) << 21
                | u64::from(month & 0x3ffff) << 33,
        )
    }
    /// 0 White won, 1 draw, 2 Black won.
    #[inline]
    pub fn result(self) -> u64 {
        self.0 & 3
    }
    /// 0 no player, 1 the player had White, 2 Black.
    #[inline]
    pub fn side(self) -> u64 {
        self.0 >> 2 & 3
    }
    #[inline]
    pub fn speed(self) -> Speed {
        Speed::from_bits(self.0 >> 4 & 7)
    }
    #[inline]
    pub fn speed_bits(self) -> u64 {
        self.0 >> 4 & 7
    }
    #[inline]
    pub fn mode(self) -> Mode {
        Mode::from_bits(self.0 >> 7 & 3)
    }
    #[inline]
    pub fn white_elo(self) -> u32 {
        (self.0 >> 9 & 0xfff) as u32
    }
    #[inline]
    pub fn black_elo(self) -> u32 {
        (self.0 >> 21 & 0xfff) as u32
    }
    #[inline]
    pub fn month(self) -> u32 {
        (self.0 >> 33 & 0x3ffff) as u32
    }
}

/// Whose games: names (any case) and a regular expression, any of which a `White` or `Black`
/// tag may match.
#[derive(Clone, Debug, Default)]
pub struct Player {
    names: Vec<String>,
    regex: Option<regex::Regex>,
}

impl Player {
    /// `None` when neither names nor a pattern are given (all games). A bad pattern is an error
    /// that says why.
    pub fn new(names: &[String], pattern: Option<&str>) -> Result<Option<Player>, String> {
        let regex = match pattern {
            Some(p) => Some(
                regex::RegexBuilder::new(p)
                    .case_insensitive(true)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| {
                        let why = e.to_string();
                        let last = why.lines().last().unwrap_or("").trim().to_string();
                        format!("--player-regex {}: {last}", quote(p))
                    })?,
            ),
            None => None,
        };
        // Lower case char by char, as `matches` compares.
        let names: Vec<String> = names
            .iter()
            .map(|n| n.trim().chars().flat_map(char::to_lowercase).collect())
            .collect();
        if names.is_empty() && regex.is_none() {
            return Ok(None);
        }
        Ok(Some(Player { names, regex }))
    }

    pub fn matches(&self, name: &str) -> bool {
        let lower = || name.chars().flat_map(char::to_lowercase);
        self.names.iter().any(|n| lower().eq(n.chars()))
            || self.regex.as_ref().is_some_and(|r| r.is_match(name))
    }

    /// How the page and the messages show it: the names, and `/pattern/`.
    pub fn describe(&self) -> Vec<String> {
        let mut out = self.names.clone();
        if let Some(r) = &self.regex {
            out.push(format!("/{}/", r.as_str()));
        }
        out
    }
}

/// How to read the games.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    pub player: Option<Player>,
    /// Positions indexed per game (lichess's explorer: 50).
    pub max_ply: usize,
    pub threads: usize,
    /// The most memory the index may take, in bytes; past it, reading stops with an error.
    pub memory: u64,
}

/// Why the games could not be read.
#[derive(Debug, Error)]
pub enum IndexError {
    #[error(transparent)]
    Input(#[from] crate::pgn::input::InputError),
    #[error("{0}")]
    Inputs(String),
    #[error(
        "the games need more memory than --memory {limit} MiB allows ({games} games indexed by then, in {name}): raise --memory, lower --max-ply, or read fewer games"
    )]
    TooBig {
        limit: u64,
        games: String,
        name: String,
    },
    #[error("interrupted while reading the games")]
    Interrupted,
    #[error("no game to explore in {inputs}: {why}")]
    NoGames { inputs: String, why: String },
}

/// The games, indexed.
pub struct Index {
    /// [`PARTITIONS`] runs of records, each sorted by (key, game).
    parts: Vec<Vec<Record>>,
    words: Vec<Word>,
    games: Vec<GameInfo>,
    moves: Vec<u16>,
    sites: Vec<u8>,
    strings: Strings,
    /// Each string in lower case (the opponent filter's haystack), made once after reading.
    lower: Vec<Box<str>>,
    pub player: Option<Player>,
    pub max_ply: usize,
    pub counts: Counts,
    /// Seconds spent reading and indexing.
    pub seconds: f64,
    /// Where each game left a repertoire book (`explore --repertoire`), by game number
    /// ([`GameInfo::number`]); `None` without a book.
    repertoire: Option<HashMap<u64, RepertoireJson>>,
}

impl Index {
    /// Reads `inputs` (files, folders expanded by [`input::expand`]) into an index.
    pub fn read(
        inputs: &[Input],
        opts: &IndexOptions,
        cancel: &AtomicBool,
        progress: &dyn Progress,
    ) -> Result<Index, IndexError> {
        let started = Instant::now();
        let threads = opts.threads.max(1);
        let bytes = Arc::new(AtomicU64::new(0));
        let (work_tx, work_rx) = sync_channel::<(u64, usize, Vec<u8>)>(threads * 2);
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (done_tx, done_rx) = channel::<(u64, usize, ChunkIndex)>();
        let abort = AtomicBool::new(false);
        let stop = || abort.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed);
        let mut index = Index {
            parts: vec![Vec::new(); PARTITIONS],
            words: Vec::new(),
            games: Vec::new(),
            moves: Vec::new(),
            sites: Vec::new(),
            strings: Strings::default(),
            lower: Vec::new(),
            player: opts.player.clone(),
            max_ply: opts.max_ply,
            counts: Counts::default(),
            seconds: 0.0,
            repertoire: None,
        };
        let result = std::thread::scope(|s| {
            let reader_bytes = bytes.clone();
            let reader = s.spawn(move || -> Result<(), IndexError> {
                let mut n = 0;
                for (source, input) in inputs.iter().enumerate() {
                    let fail = |e: std::io::Error| IndexError::Input(input.read_error(&e));
                    let mut chunks =
                        Chunks::open(input, reader_bytes.clone(), 4 << 20).map_err(fail)?;
                    while let Some(chunk) = chunks.next_chunk().map_err(fail)? {
                        if stop() || work_tx.send((n, source, chunk)).is_err() {
                            return Ok(());
                        }
                        n += 1;
                    }
                }
                Ok(())
            });
            for _ in 0..threads {
                let (work_rx, done_tx) = (work_rx.clone(), done_tx.clone());
                let player = opts.player.as_ref();
                s.spawn(move || {
                    loop {
                        let next = work_rx.lock().map(|rx| rx.recv());
                        let Ok(Ok((n, source, data))) = next else {
                            return;
                        };
                        if stop() {
                            return;
                        }
                        let chunk = index_chunk(&data, player, opts.max_ply);
                        drop(data);
                        if done_tx.send((n, source, chunk)).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            drop(work_rx);
            // Chunks merged in input order, so that game numbers do not depend on the threads.
            let mut waiting = BTreeMap::new();
            let mut next = 0;
            let mut failure = None;
            for (n, source, chunk) in done_rx.iter() {
                if failure.is_some() || cancel.load(Ordering::Relaxed) {
                    abort.store(true, Ordering::Relaxed);
                    continue;
                }
                waiting.insert(n, (source, chunk));
                while let Some((source, chunk)) = waiting.remove(&next) {
                    next += 1;
                    index.merge(chunk);
                    progress.update(bytes.load(Ordering::Relaxed), index.counts.read);
                    if index.bytes() as u64 > opts.memory {
                        failure = Some(IndexError::TooBig {
                            limit: opts.memory >> 20,
                            games: thousands(index.counts.indexed as usize),
                            name: inputs[source].name(),
                        });
                        abort.store(true, Ordering::Relaxed);
                        break;
                    }
                }
            }
            let read = reader.join().unwrap_or(Ok(()));
            match failure {
                Some(f) => Err(f),
                None => read,
            }
        });
        result?;
        if cancel.load(Ordering::Relaxed) {
            return Err(IndexError::Interrupted);
        }
        if index.counts.indexed == 0 {
            return Err(IndexError::NoGames {
                inputs: inputs
                    .iter()
                    .map(Input::name)
                    .collect::<Vec<_>>()
                    .join(", "),
                why: index.why_none(),
            });
        }
        // Each partition sorted on its own thread.
        let parts = std::mem::take(&mut index.parts);
        let parts = Mutex::new(parts.into_iter().enumerate().collect::<Vec<_>>());
        let sorted = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let Some((i, mut part)) = parts.lock().ok().and_then(|mut p| p.pop())
                        else {
                            return;
                        };
                        part.sort_unstable_by_key(|r| (r.key, r.game));
                        part.shrink_to_fit();
                        if let Ok(mut sorted) = sorted.lock() {
                            sorted.push((i, part));
                        }
                    }
                });
            }
        });
        let mut sorted = sorted.into_inner().unwrap_or_default();
        sorted.sort_by_key(|(i, _)| *i);
        index.parts = sorted.into_iter().map(|(_, p)| p).collect();
        index.words.shrink_to_fit();
        index.games.shrink_to_fit();
        index.moves.shrink_to_fit();
        index.sites.shrink_to_fit();
        index.lower = index
            .strings
            .list
            .iter()
            .map(|s| s.to_lowercase().into_boxed_str())
            .collect();
        index.seconds = started.elapsed().as_secs_f64();
        Ok(index)
    }

    /// Keeps where each game left a repertoire book, as [`check::check_games`] found over the same
    /// inputs with the same player: the games' API objects then carry it (`repertoire`).
    pub fn set_repertoire(&mut self, checked: &[check::GameCheck]) {
        self.repertoire = Some(
            checked
                .iter()
                .map(|g| {
                    let json = RepertoireJson {
                        game: g.game,
                        who: g.who,
                        ply: g.ply,
                        mv: g.mv.clone(),
                    };
                    (g.game, json)
                })
                .collect(),
        );
    }

    /// Where game `id` left the repertoire book, if one was given and the game was checked.
    fn repertoire_of(&self, id: u32) -> Option<RepertoireJson> {
        let number = self.games.get(id as usize)?.number;
        self.repertoire.as_ref()?.get(&number).cloned()
    }

    /// Adds a chunk's games after those already merged.
    fn merge(&mut self, chunk: ChunkIndex) {
        let base = self.games.len() as u32;
        let moves_base = self.moves.len() as u64;
        let sites_base = self.sites.len() as u32;
        let read_before = self.counts.read;
        // The chunk's strings to the index's.
        let ids: Vec<u32> = chunk
            .strings
            .list
            .iter()
            .map(|s| self.strings.id(s))
            .collect();
        let id = |i: u32| {
            if i == game::NONE { i } else { ids[i as usize] }
        };
        self.games.extend(chunk.games.iter().map(|g| GameInfo {
            white: id(g.white),
            black: id(g.black),
            event: id(g.event),
            time_control: id(g.time_control),
            start: id(g.start),
            site: if g.site == game::NONE {
                g.site
            } else {
                g.site + sites_base
            },
            moves: g.moves + moves_base,
            number: g.number + read_before,
            ..*g
        }));
        self.words.extend_from_slice(&chunk.words);
        self.moves.extend_from_slice(&chunk.moves);
        self.sites.extend_from_slice(&chunk.sites);
        for (part, records) in self.parts.iter_mut().zip(chunk.records) {
            part.extend(records.into_iter().map(|r| Record {
                game: r.game + base,
                ..r
            }));
        }
        self.counts.add(&chunk.counts);
    }

    /// What the index holds, in bytes (about: the strings' table is estimated).
    pub fn bytes(&self) -> usize {
        let records: usize = self.parts.iter().map(Vec::capacity).sum();
        records * size_of::<Record>()
            + self.words.capacity() * size_of::<Word>()
            + self.games.capacity() * size_of::<GameInfo>()
            + self.moves.capacity() * 2
            + self.sites.capacity()
            + self.strings.bytes()
            + self.lower.iter().map(|s| s.len() + 16).sum::<usize>()
    }

    /// The plies indexed.
    pub fn plies(&self) -> usize {
        self.parts.iter().map(Vec::len).sum()
    }

    /// The games indexed.
    pub fn games(&self) -> usize {
        self.games.len()
    }

    /// Why no game was indexed, for the error.
    fn why_none(&self) -> String {
        let c = &self.counts;
        let mut parts = vec![format!("{} read", thousands(c.read as usize))];
        parts.extend(self.left_out());
        if let (Some(p), true) = (&self.player, c.not_player > 0) {
            parts.push(format!(
                "the player: {}",
                p.describe()
                    .iter()
                    .map(|n| quote(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        parts.join(", ")
    }

    /// The games left out, by reason (`12 not standard chess`), and those cut short at a move
    /// that cannot be played.
    pub fn left_out(&self) -> Vec<String> {
        let c = &self.counts;
        let mut parts = Vec::new();
        for (n, what) in [
            (c.not_player, "without the player"),
            (c.variant, "not standard chess"),
            (c.no_result, "without a result"),
            (c.bad_start, "with a broken FEN"),
            (c.broken, "broken"),
            (c.cut_short, "cut short at a bad move"),
        ] {
            if n > 0 {
                parts.push(format!("{} {what}", thousands(n as usize)));
            }
        }
        parts
    }

    /// The records of the position with Polyglot key `key`, in game order.
    pub fn records(&self, key: u64) -> &[Record] {
        let part = &self.parts[partition(key)];
        let from = part.partition_point(|r| r.key < key);
        let to = from + part[from..].partition_point(|r| r.key == key);
        &part[from..to]
    }
}

/// The inputs of `explore` that are games (not books): a folder, a name ending in `.pgn` (maybe
/// compressed), text, or a compressed stream; `.bin` files and other binary files are books.
pub fn is_games_input(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    let name = path.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".bin") {
        return false;
    }
    if [".pgn", ".pgn.gz", ".pgn.zst", ".pgn.xz", ".pgn.bz2"]
        .iter()
        .any(|ext| name.ends_with(ext))
    {
        return true;
    }
    let mut head = [0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = &head[..n];
    input::Compression::detect(head) != input::Compression::None || input::binary_at(head).is_none()
}
