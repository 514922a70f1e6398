//! ChessBase opening books (CTG): the `.ctg` file of 4,096-byte pages, its `.cto` index and its
//! `.ctb` page bounds, read into polybook's terms.
//!
//! A CTG book is a hash table of positions, not a list: a position is found by encoding it
//! (always with White to move: a Black-to-move position is stored colour-flipped, and a position
//! where nobody can castle and the king to move stands on files a–d is mirrored left–right),
//! hashing the encoding, and looking the hash up in the `.cto` index, which gives the page of the
//! `.ctg` that holds it. So "every position of the book" means every position reachable from the
//! start: [`read_ctg`] probes the start position, plays each book move, probes the result, and so
//! on (each position once, by its Polyglot key).
//!
//! The layout is written out in docs/formats.md ("CTG"), with its sources: the format's
//! unofficial specification (public domain), chessprogramming.org's CTG page, and the readers of
//! DroidFish (`CtgBook.java`), Daydreamer (`ctg.c`) and Stockfish's book module, read for facts.
//!
//! Every error is one sentence naming the file ([`BookError`]); a damaged book never panics,
//! never loops, and allocates no more than its files' size.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use shakmaty::uci::UciMove;
use shakmaty::{
    Bitboard, Board, Chess, Color, EnPassantMode, File as BoardFile, Move, Piece, Position, Rank,
    Role, Setup, Square,
};

use crate::book::{BookError, Entry, Key, RawMove};

/// The size of a `.ctg` page; the first page is the file's header, page `n` starts at
/// `(n + 1) * PAGE_SIZE`.
pub const PAGE_SIZE: usize = 4096;

/// The size of a position's statistics after its moves: games, two result counters, draws (3
/// bytes each), 4 unknown bytes, rated games (3) and their rating sum (4), performance games (3)
/// and their sum (4), the recommendation, one unknown byte and the commentary (1 each).
pub const STATS_SIZE: usize = 33;

/// Whether the first of the two result counters (bytes 3..6 of the statistics) counts the wins of
/// the side to move, and the second (bytes 6..9) its losses. Readers disagree: DroidFish
/// (`getOpponentScore`), Stockfish's book module (`get_stats`) and the format's unofficial
/// specification read wins first; Daydreamer (`ctg.c`, copied by ctgexporter) reads losses first.
/// polybook follows the specification and the two readers that agree with it (the majority, and
/// the ones whose book play depends on the order); the bundled `simple.ctg` cannot settle it, its
/// games having no result (both counters are 0). The test `win_loss_order_is_pinned` pins it.
pub const WINS_BEFORE_LOSSES: bool = true;

/// A CTG book file whose content contradicts the layout: [`BookError::Format`] naming the file.
fn damaged(path: &Path, what: impl std::fmt::Display) -> BookError {
    BookError::Format {
        path: path.to_path_buf(),
        reason: format!("damaged CTG book file: {what}"),
    }
}

/// A read of a CTG book file that failed.
fn io_error(path: &Path) -> impl FnOnce(io::Error) -> BookError + '_ {
    move |source| BookError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A move's annotation, as ChessBase shows it beside the move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Annotation {
    /// No annotation (byte 0x00).
    None,
    /// `!` (0x01).
    Good,
    /// `?` (0x02).
    Mistake,
    /// `!!` (0x03).
    Brilliant,
    /// `??` (0x04).
    Blunder,
    /// `!?` (0x05).
    Interesting,
    /// `?!` (0x06).
    Dubious,
    /// `□`, the only move (0x08).
    Only,
    /// Zugzwang (0x16).
    Zugzwang,
    /// A byte of no documented meaning, kept as it is.
    Other(u8),
}

impl Annotation {
    /// The annotation of a move's second byte.
    pub fn from_byte(b: u8) -> Annotation {
        match b {
            0x00 => Annotation::None,
            0x01 => Annotation::Good,
            0x02 => Annotation::Mistake,
            0x03 => Annotation::Brilliant,
            0x04 => Annotation::Blunder,
            0x05 => Annotation::Interesting,
            0x06 => Annotation::Dubious,
            0x08 => Annotation::Only,
            0x16 => Annotation::Zugzwang,
            other => Annotation::Other(other),
        }
    }

    /// The symbol written after the move (`!`, `?`, `!!`, `??`, `!?`, `?!`, `□`, `⨀`), or `""`.
    pub fn symbol(self) -> &'static str {
        match self {
            Annotation::Good => "!",
            Annotation::Mistake => "?",
            Annotation::Brilliant => "!!",
            Annotation::Blunder => "??",
            Annotation::Interesting => "!?",
            Annotation::Dubious => "?!",
            Annotation::Only => "□",
            Annotation::Zugzwang => "⨀",
            Annotation::None | Annotation::Other(_) => "",
        }
    }
}

/// The colour ChessBase gives a position (the move leading to it): green, recommended; red, not
/// for play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recommendation {
    /// Neither (0x00).
    None,
    /// Red, a move not to play (bit 0x40).
    Red,
    /// Green, a main line (bit 0x80).
    Green,
    /// Another byte, kept as it is.
    Other(u8),
}

impl Recommendation {
    /// The recommendation of the statistics' byte 30.
    pub fn from_byte(b: u8) -> Recommendation {
        match b {
            0x00 => Recommendation::None,
            0x40 => Recommendation::Red,
            0x80 => Recommendation::Green,
            other => Recommendation::Other(other),
        }
    }
}

/// A position's statistics, from the side to move's point of view (see [`WINS_BEFORE_LOSSES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtgStats {
    /// The games that reached the position.
    pub games: u32,
    /// The games the side to move won from here.
    pub wins: u32,
    /// The games the side to move lost from here.
    pub losses: u32,
    /// The drawn games.
    pub draws: u32,
    /// The games with a rating.
    pub rated_games: u32,
    /// The sum of those games' ratings (their mean: `rating_sum / rated_games`).
    pub rating_sum: u32,
    /// The games with a performance rating.
    pub performance_games: u32,
    /// The sum of those games' performances.
    pub performance_sum: u32,
    /// Green, red or neither.
    pub recommendation: Recommendation,
    /// The commentary byte (a position evaluation symbol such as `=` or `+-`), raw.
    pub commentary: u8,
}

impl CtgStats {
    /// The statistics in their 33 bytes (`bytes.len() >= STATS_SIZE`).
    pub fn from_bytes(bytes: &[u8]) -> CtgStats {
        let u24 = |at: usize| u32::from_be_bytes([0, bytes[at], bytes[at + 1], bytes[at + 2]]);
        let u32_at = |at: usize| {
            u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let (first, second) = (u24(3), u24(6));
        let (wins, losses) = if WINS_BEFORE_LOSSES {
            (first, second)
        } else {
            (second, first)
        };
        CtgStats {
            games: u24(0),
            wins,
            losses,
            draws: u24(9),
            rated_games: u24(16),
            rating_sum: u32_at(19),
            performance_games: u24(23),
            performance_sum: u32_at(26),
            recommendation: Recommendation::from_byte(bytes[30]),
            commentary: bytes[32],
        }
    }
}

/// One book move of a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtgMove {
    /// The move, legal in the position.
    pub mv: Move,
    /// Its annotation.
    pub annotation: Annotation,
    /// Its code in the book (the first of its two bytes), for messages and tests.
    pub code: u8,
}

impl CtgMove {
    /// The move as a Polyglot entry of the position `key`, with `weight`.
    pub fn entry(&self, key: Key, weight: u16) -> Entry {
        Entry {
            key,
            // A CTG move is never a drop, the one move Polyglot cannot encode.
            mv: RawMove::from_move(self.mv).unwrap_or(RawMove(0)),
            weight,
            learn: 0,
        }
    }
}

/// A position of the book with its moves and statistics.
#[derive(Clone, Debug)]
pub struct CtgPosition {
    /// The position (as reached from the start by book moves).
    pub position: Chess,
    /// Its Polyglot key ([`Key::of`]).
    pub key: Key,
    /// Its book moves, in the book's order.
    pub moves: Vec<CtgMove>,
    /// Move codes of the record that name no legal move here (a damaged or foreign record).
    pub unreadable_moves: usize,
    /// Its statistics.
    pub stats: CtgStats,
}

/// Reads every position of the CTG book at `path` (any of its three files) reachable from the
/// start position by its own moves, in breadth-first order.
pub fn read_ctg(path: &Path) -> Result<Vec<CtgPosition>, BookError> {
    let mut book = CtgBook::open(path)?;
    book.walk()
}

/// The Polyglot entries of a CTG book's positions (as [`read_ctg`] gives them): one per book move.
///
/// A CTG book keeps its statistics per position, so a move's are those of the position it leads
/// to (its side to move is the mover's opponent), transpositions included: every move order
/// reaching a position shares its counts, as the book does.
///
/// - **Weight**: PolyGlot `make-book`'s points from the mover's view, `2 × wins + draws`, with a
///   game of no recorded result counted as a draw (so a book of unfinished or result-less games
///   weighs its moves by games); a move whose position the book lacks counts one such game. A
///   move ChessBase marks not to play — annotated `?` or `??`, or leading to a red position —
///   weighs 0: it stays in the book (`probe` and `dump` show it) and is never picked. Weights
///   above 65,535 are scaled per position.
/// - **Learn**: the move's results in PolyGlot's learn layout ([`crate::book::Learn`]): games
///   with a result and their points (both halved together until they fit).
pub fn ctg_entries(positions: &[CtgPosition]) -> Vec<Entry> {
    let stats: std::collections::HashMap<Key, &CtgStats> =
        positions.iter().map(|p| (p.key, &p.stats)).collect();
    let mut rows = Vec::new();
    for p in positions {
        for m in &p.moves {
            let mut child = p.position.clone();
            child.play_unchecked(m.mv);
            let after = stats.get(&Key::of(&child));
            let (weight, learn) = match after {
                Some(s) => {
                    // The child's side to move is the mover's opponent.
                    let (won, lost, drawn) = (s.losses, s.wins, s.draws);
                    let decided = u64::from(won) + u64::from(lost) + u64::from(drawn);
                    let unknown = u64::from(s.games).saturating_sub(decided);
                    let points = 2 * u64::from(won) + u64::from(drawn);
                    (points + unknown, learn_of(decided, points))
                }
                None => (1, 0),
            };
            let refuted = matches!(m.annotation, Annotation::Mistake | Annotation::Blunder)
                || after.is_some_and(|s| s.recommendation == Recommendation::Red);
            let weight = if refuted { 0 } else { weight };
            let raw = m.entry(p.key, 0).mv;
            rows.push((p.key, raw, weight, learn));
        }
    }
    super::entries_from_weights(rows)
}

/// `games` results worth `points` (loss 0, draw 1, win 2) as a learn field, both halved together
/// until the games fit in 15 bits (so the points fit in 16).
fn learn_of(mut games: u64, mut points: u64) -> u32 {
    while games > u64::from(u16::MAX / 2) {
        games /= 2;
        points /= 2;
    }
    crate::book::Learn {
        games: games as u16,
        score_sum: points as u16,
    }
    .to_raw()
}

/// The CTG book at `path` (any of its three files) as Polyglot entries ([`ctg_entries`]).
pub fn read_ctg_entries(path: &Path) -> Result<Vec<Entry>, BookError> {
    Ok(ctg_entries(&read_ctg(path)?))
}

/// Reads every reachable position of a CTG book given as the bytes of its three files (the
/// `.ctg`, `.cto` and `.ctb`); `name` stands for the book's path in messages. For tests and fuzzing.
pub fn read_ctg_bytes(
    name: &Path,
    ctg: Vec<u8>,
    cto: Vec<u8>,
    ctb: Vec<u8>,
) -> Result<Vec<CtgPosition>, BookError> {
    let mut book = CtgBook {
        ctg: Blob::Memory(ctg),
        cto: Blob::Memory(cto),
        ctg_path: name.with_extension("ctg"),
        cto_path: name.with_extension("cto"),
        bounds: (0, 0),
    };
    book.bounds = read_bounds(&mut Blob::Memory(ctb), &name.with_extension("ctb"))?;
    book.walk()
}

// ---- the files ----------------------------------------------------------------------------------

/// A file of the book, read at offsets: in memory, or on disk (a book can be large).
enum Blob {
    Memory(Vec<u8>),
    Disk(File, u64),
}

impl Blob {
    fn open(path: &Path) -> Result<Blob, BookError> {
        let file = File::open(path).map_err(io_error(path))?;
        let meta = file.metadata().map_err(io_error(path))?;
        if meta.is_dir() {
            return Err(BookError::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        Ok(Blob::Disk(file, meta.len()))
    }

    fn len(&self) -> u64 {
        match self {
            Blob::Memory(bytes) => bytes.len() as u64,
            Blob::Disk(_, len) => *len,
        }
    }

    /// Fills `buf` from `offset`; `Ok(false)` when the file ends first.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<bool> {
        if offset
            .checked_add(buf.len() as u64)
            .is_none_or(|end| end > self.len())
        {
            return Ok(false);
        }
        match self {
            Blob::Memory(bytes) => {
                let at = offset as usize;
                buf.copy_from_slice(&bytes[at..at + buf.len()]);
                Ok(true)
            }
            Blob::Disk(file, _) => {
                file.seek(SeekFrom::Start(offset))?;
                match file.read_exact(buf) {
                    Ok(()) => Ok(true),
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// The `.ctb`'s page bounds: bytes 4..8 the lower, 8..12 the upper (big-endian).
fn read_bounds(ctb: &mut Blob, path: &Path) -> Result<(u32, u32), BookError> {
    let mut buf = [0u8; 12];
    let whole = ctb.read_at(0, &mut buf).map_err(io_error(path))?;
    if !whole {
        return Err(damaged(
            path,
            format!("{} bytes, fewer than the 12 of its page bounds", ctb.len()),
        ));
    }
    let low = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]);
    let high = u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]);
    if low > high || high >= 0x7fff_ffff {
        return Err(damaged(
            path,
            format!("its page bounds ({low}, {high}) are not a range"),
        ));
    }
    Ok((low, high))
}

struct CtgBook {
    ctg: Blob,
    cto: Blob,
    ctg_path: PathBuf,
    cto_path: PathBuf,
    bounds: (u32, u32),
}

/// A position's record found in a page: its moves' bytes and its statistics.
struct Record {
    moves: Vec<(u8, u8)>,
    stats: CtgStats,
}

impl CtgBook {
    fn open(path: &Path) -> Result<CtgBook, BookError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("ctg" | "cto" | "ctb")) {
            return Err(BookError::Format {
                path: path.to_path_buf(),
                reason: "not a CTG book: the name must end in .ctg, .cto or .ctb".into(),
            });
        }
        // The companions share the name; their extension's case follows the given file's.
        let upper = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.chars().all(|c| c.is_ascii_uppercase()));
        let companion = |ext: &str| {
            path.with_extension(if upper {
                ext.to_ascii_uppercase()
            } else {
                ext.to_string()
            })
        };
        let (ctg_path, cto_path, ctb_path) = (companion("ctg"), companion("cto"), companion("ctb"));
        for file in [&ctg_path, &cto_path, &ctb_path] {
            if !file.exists() {
                return Err(BookError::Format {
                    path: path.to_path_buf(),
                    reason: format!(
                        "a ChessBase (CTG) book is three files side by side (.ctg, .cto, .ctb), and {} is missing",
                        crate::text::quote_path(file)
                    ),
                });
            }
        }
        let bounds = read_bounds(&mut Blob::open(&ctb_path)?, &ctb_path)?;
        Ok(CtgBook {
            ctg: Blob::open(&ctg_path)?,
            cto: Blob::open(&cto_path)?,
            ctg_path,
            cto_path,
            bounds,
        })
    }

    fn damaged_ctg(&self, what: String) -> BookError {
        damaged(&self.ctg_path, what)
    }

    /// The page the `.cto` gives for index `index`: `None` for an empty slot (a negative number).
    fn cto_page(&mut self, index: u32) -> Result<Option<u32>, BookError> {
        let mut buf = [0u8; 4];
        let offset = 16 + 4 * u64::from(index);
        let whole = self
            .cto
            .read_at(offset, &mut buf)
            .map_err(io_error(&self.cto_path))?;
        if !whole {
            return Err(damaged(
                &self.cto_path,
                format!(
                    "index entry {index} lies past its end ({} bytes), though the .ctb's bounds reach it",
                    self.cto.len()
                ),
            ));
        }
        let page = i32::from_be_bytes(buf);
        Ok(u32::try_from(page).ok())
    }

    /// The record of the encoded position `encoded` in page `page`, if it is there.
    fn find_in_page(&mut self, page: u32, encoded: &[u8]) -> Result<Option<Record>, BookError> {
        let mut buf = vec![0u8; PAGE_SIZE];
        let offset = (u64::from(page) + 1) * PAGE_SIZE as u64;
        let pages = (self.ctg.len() / PAGE_SIZE as u64).saturating_sub(1);
        let whole = self
            .ctg
            .read_at(offset, &mut buf)
            .map_err(io_error(&self.ctg_path))?;
        if !whole {
            return Err(self.damaged_ctg(format!(
                "the index names page {page}, but the file holds {pages} whole pages"
            )));
        }
        let count = usize::from(u16::from_be_bytes([buf[0], buf[1]]));
        let used = usize::from(u16::from_be_bytes([buf[2], buf[3]]));
        if !(4..=PAGE_SIZE).contains(&used) {
            return Err(self.damaged_ctg(format!("page {page} says it uses {used} bytes")));
        }
        let mut at = 4;
        for i in 0..count {
            let damaged = |what: &str| format!("page {page}, position {i}: {what}");
            let len = usize::from(buf[at.min(used - 1)] & 0x1f);
            if at >= used || len == 0 || at + len + 1 > used {
                return Err(self.damaged_ctg(damaged("runs past the page's used bytes")));
            }
            let moves_len = usize::from(buf[at + len]);
            if moves_len == 0 || at + len + moves_len + STATS_SIZE > used {
                return Err(self.damaged_ctg(damaged("its moves run past the page's used bytes")));
            }
            if &buf[at..at + len] == encoded {
                let moves = buf[at + len + 1..at + len + moves_len]
                    .chunks_exact(2)
                    .map(|pair| (pair[0], pair[1]))
                    .collect();
                let stats = CtgStats::from_bytes(&buf[at + len + moves_len..]);
                return Ok(Some(Record { moves, stats }));
            }
            at += len + moves_len + STATS_SIZE;
        }
        Ok(None)
    }

    /// The record of a position stored as `encoded` (already flipped and mirrored).
    fn probe_encoded(&mut self, encoded: &[u8]) -> Result<Option<Record>, BookError> {
        let hash = ctg_hash(encoded);
        let (low, high) = self.bounds;
        let mut mask: u32 = 0;
        while mask < 0x7fff_ffff {
            let index = (hash & mask) + mask;
            if index >= low {
                if let Some(page) = self.cto_page(index)?
                    && let Some(record) = self.find_in_page(page, encoded)?
                {
                    return Ok(Some(record));
                }
                if index >= high {
                    break;
                }
            }
            mask = 2 * mask + 1;
        }
        Ok(None)
    }

    /// The book's record of `pos`, its moves made legal moves of `pos`.
    fn probe(&mut self, pos: &Chess) -> Result<Option<CtgPosition>, BookError> {
        let stored = StoredView::of(pos);
        let encoded = encode(&stored.setup);
        let Some(record) = self.probe_encoded(&encoded)? else {
            return Ok(None);
        };
        let mut moves = Vec::new();
        let mut unreadable_moves = 0;
        for (code, annotation) in record.moves {
            match decode_move(&stored.setup.board, code)
                .and_then(|(from, to)| stored.real_move(pos, from, to))
            {
                Some(mv) => moves.push(CtgMove {
                    mv,
                    annotation: Annotation::from_byte(annotation),
                    code,
                }),
                None => unreadable_moves += 1,
            }
        }
        Ok(Some(CtgPosition {
            position: pos.clone(),
            key: Key::of(pos),
            moves,
            unreadable_moves,
            stats: record.stats,
        }))
    }

    /// Every position reachable from the start by book moves, each once (by Polyglot key):
    /// bounded by the book's own records, since only positions found in the book are expanded.
    fn walk(&mut self) -> Result<Vec<CtgPosition>, BookError> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([Chess::default()]);
        seen.insert(Key::of(&Chess::default()));
        while let Some(pos) = queue.pop_front() {
            let Some(found) = self.probe(&pos)? else {
                continue;
            };
            for m in &found.moves {
                let mut child = pos.clone();
                child.play_unchecked(m.mv);
                if seen.insert(Key::of(&child)) {
                    queue.push_back(child);
                }
            }
            out.push(found);
        }
        Ok(out)
    }
}

// ---- the position's encoding --------------------------------------------------------------------

/// A position as the book stores it (White to move) and how it was made from the real one.
struct StoredView {
    setup: Setup,
    /// Colours swapped and ranks reversed (the real position has Black to move).
    flipped: bool,
    /// Files reversed (nobody can castle and the king to move is on files a–d).
    mirrored: bool,
}

impl StoredView {
    fn of(pos: &Chess) -> StoredView {
        let mut setup = pos.to_setup(EnPassantMode::Legal);
        let flipped = pos.turn() == Color::Black;
        if flipped {
            setup = flip_colours(setup);
        }
        let king_on_left = setup
            .board
            .king_of(Color::White)
            .is_some_and(|k| k.file() < BoardFile::E);
        let mirrored = setup.castling_rights.is_empty() && king_on_left;
        if mirrored {
            setup = mirror_files(setup);
        }
        StoredView {
            setup,
            flipped,
            mirrored,
        }
    }

    /// A stored square back in the real position's frame.
    fn real_square(&self, mut sq: Square) -> Square {
        if self.mirrored {
            sq = sq.flip_horizontal();
        }
        if self.flipped {
            sq = sq.flip_vertical();
        }
        sq
    }

    /// The legal move of `pos` that the stored move `from`→`to` stands for (a pawn reaching the
    /// last rank promotes to a queen: CTG has no underpromotions; a king's two-square step castles).
    fn real_move(&self, pos: &Chess, from: Square, to: Square) -> Option<Move> {
        let (from, to) = (self.real_square(from), self.real_square(to));
        let promotion = (pos.board().role_at(from) == Some(Role::Pawn)
            && matches!(to.rank(), Rank::First | Rank::Eighth))
        .then_some(Role::Queen);
        let uci = UciMove::Normal {
            from,
            to,
            promotion,
        };
        uci.to_move(pos).ok()
    }
}

/// `setup` with the colours swapped and the ranks reversed: Black's move as White's.
pub fn flip_colours(mut setup: Setup) -> Setup {
    setup.board.flip_vertical();
    setup.board.swap_colors();
    setup.turn = !setup.turn;
    setup.castling_rights = setup.castling_rights.flip_vertical();
    setup.ep_square = setup.ep_square.map(Square::flip_vertical);
    setup
}

/// `setup` with the files reversed (a ↔ h).
pub fn mirror_files(mut setup: Setup) -> Setup {
    setup.board.flip_horizontal();
    setup.castling_rights = setup.castling_rights.flip_horizontal();
    setup.ep_square = setup.ep_square.map(Square::flip_horizontal);
    setup
}

/// The squares in the order of the board's encoding and of the move table's piece numbers:
/// file by file from a to h, each from rank 1 to rank 8.
fn squares_in_ctg_order() -> impl Iterator<Item = Square> {
    (0..8u32)
        .flat_map(|f| (0..8u32).map(move |r| Square::from_coords(BoardFile::new(f), Rank::new(r))))
}

/// A piece's code in the board's encoding: (bits, how many).
fn piece_code(piece: Piece) -> (u32, u32) {
    let colour = u32::from(piece.color == Color::Black);
    match piece.role {
        Role::Pawn => (0b110 | colour, 3),
        Role::Knight => (0b10010 | colour, 5),
        Role::Bishop => (0b10100 | colour, 5),
        Role::Rook => (0b10110 | colour, 5),
        Role::Queen => (0b100010 | colour, 6),
        Role::King => (0b100000 | colour, 6),
    }
}

struct Bits {
    bytes: Vec<u8>,
    len: usize,
}

impl Bits {
    fn push(&mut self, value: u32, count: u32) {
        for i in (0..count).rev() {
            if self.len.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if value >> i & 1 == 1 {
                *self.bytes.last_mut().unwrap() |= 0x80 >> (self.len % 8);
            }
            self.len += 1;
        }
    }

    /// The bits left in the last byte.
    fn free(&self) -> usize {
        (8 - self.len % 8) % 8
    }
}

/// The bytes a stored (White to move) position is looked up by: a header byte (the length in its
/// low 5 bits, 0x20 when an en-passant file follows, 0x40 when castling rights follow), the board,
/// padding, then the en-passant file (3 bits) and the castling rights (4 bits: h8, a8, h1, a1),
/// ending on a byte's end.
pub fn encode(setup: &Setup) -> Vec<u8> {
    let mut bits = Bits {
        bytes: Vec::with_capacity(32),
        len: 0,
    };
    bits.push(0, 8);
    for sq in squares_in_ctg_order() {
        match setup.board.piece_at(sq) {
            None => bits.push(0, 1),
            Some(piece) => {
                let (code, count) = piece_code(piece);
                bits.push(code, count);
            }
        }
    }
    let ep = setup.ep_square;
    let rights = setup.castling_rights;
    let castles = !rights.is_empty();
    if ep.is_none() && !castles {
        bits.push(0, 1);
    }
    let special = if ep.is_some() { 3 } else { 0 } + if castles { 4 } else { 0 };
    while bits.free() != special {
        bits.push(0, 1);
    }
    if let Some(ep) = ep {
        bits.push(u32::from(ep.file()), 3);
    }
    if castles {
        for sq in [Square::H8, Square::A8, Square::H1, Square::A1] {
            bits.push(u32::from(rights.contains(sq)), 1);
        }
    }
    let mut header = bits.bytes.len() as u8;
    if ep.is_some() {
        header |= 0x20;
    }
    if castles {
        header |= 0x40;
    }
    bits.bytes[0] = header;
    bits.bytes
}

/// The stored position of encoded bytes (White to move), or `None` when they are not an encoding.
/// The inverse of [`encode`].
pub fn decode(bytes: &[u8]) -> Option<Setup> {
    let header = *bytes.first()?;
    if usize::from(header & 0x1f) != bytes.len() || header & 0x80 != 0 {
        return None;
    }
    let bit = |i: usize| bytes.get(i / 8).map(|b| b >> (7 - i % 8) & 1);
    let mut at = 8;
    let read = |count: usize, at: &mut usize| -> Option<u32> {
        let mut v = 0;
        for _ in 0..count {
            v = v << 1 | u32::from(bit(*at)?);
            *at += 1;
        }
        Some(v)
    };
    let mut board = Board::empty();
    for sq in squares_in_ctg_order() {
        if read(1, &mut at)? == 0 {
            continue;
        }
        // 11c: a pawn; 10 then 01, 10, 11: a knight, bishop, rook; 10 00 then 1 or 0: a queen or
        // a king; c, the last bit, is the colour (1: Black).
        let role = if read(1, &mut at)? == 1 {
            Role::Pawn
        } else {
            match read(2, &mut at)? {
                0b01 => Role::Knight,
                0b10 => Role::Bishop,
                0b11 => Role::Rook,
                _ if read(1, &mut at)? == 1 => Role::Queen,
                _ => Role::King,
            }
        };
        let piece = Piece {
            color: Color::from_white(read(1, &mut at)? == 0),
            role,
        };
        board.set_piece_at(sq, piece);
    }
    let total = bytes.len() * 8;
    let ep_bits = if header & 0x20 != 0 { 3 } else { 0 };
    let castle_bits = if header & 0x40 != 0 { 4 } else { 0 };
    let mut tail = total.checked_sub(ep_bits + castle_bits)?;
    if tail < at {
        return None;
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = Color::White;
    if ep_bits > 0 {
        let file = read(3, &mut tail)?;
        setup.ep_square = Some(Square::from_coords(BoardFile::new(file), Rank::Sixth));
    }
    if castle_bits > 0 {
        let mut rights = Bitboard::EMPTY;
        for sq in [Square::H8, Square::A8, Square::H1, Square::A1] {
            if read(1, &mut tail)? == 1 {
                rights.add(sq);
            }
        }
        setup.castling_rights = rights;
    }
    Some(setup)
}

/// The hash that places an encoded position in the `.cto`: two steps per byte (its low nibble,
/// then its high nibble) through a running index into [`HASH_TABLE`].
pub fn ctg_hash(encoded: &[u8]) -> u32 {
    let mut hash: u32 = 0;
    let mut index: u32 = 0;
    for &byte in encoded {
        let b = u32::from(byte);
        index = index.wrapping_add(((0x0f - (b & 0x0f)) << 2) + 1);
        hash = hash.wrapping_add(HASH_TABLE[(index & 0x3f) as usize]);
        index = index.wrapping_add(((0xf0 - (b & 0xf0)) >> 2) + 1);
        hash = hash.wrapping_add(HASH_TABLE[(index & 0x3f) as usize]);
    }
    hash
}

/// The 64 numbers of the `.cto` hash (the same in every reader of the format).
const HASH_TABLE: [u32; 64] = [
    0x3100d2bf, 0x3118e3de, 0x34ab1372, 0x2807a847, 0x1633f566, 0x2143b359, 0x26d56488, 0x3b9e6f59,
    0x37755656, 0x3089ca7b, 0x18e92d85, 0x0cd0e9d8, 0x1a9e3b54, 0x3eaa902f, 0x0d9bfaae, 0x2f32b45b,
    0x31ed6102, 0x3d3c8398, 0x146660e3, 0x0f8d4b76, 0x02c77a5f, 0x146c8799, 0x1c47f51f, 0x249f8f36,
    0x24772043, 0x1fbc1e4d, 0x1e86b3fa, 0x37df36a6, 0x16ed30e4, 0x02c3148e, 0x216e5929, 0x0636b34e,
    0x317f9f56, 0x15f09d70, 0x131026fb, 0x38c784b1, 0x29ac3305, 0x2b485dc5, 0x3c049ddc, 0x35a9fbcd,
    0x31d5373b, 0x2b246799, 0x0a2923d3, 0x08a96e9d, 0x30031a9f, 0x08f525b5, 0x33611c06, 0x2409db98,
    0x0ca4feb2, 0x1000b71e, 0x30566e32, 0x39447d31, 0x194e3752, 0x08233a95, 0x0f38fe36, 0x29c7cd57,
    0x0f7b3a39, 0x328e8a16, 0x1e7d1388, 0x0fba78f5, 0x274c7e7c, 0x1e8be65c, 0x2fa0b0bb, 0x1eb6c371,
];

// ---- the moves ----------------------------------------------------------------------------------

/// The stored move of `code` on the stored board (White to move): its from and to squares.
///
/// A code names a piece of White's (its role and its number among White's pieces of that role,
/// counted in the board's order: files a to h, ranks 1 to 8) and a displacement, added to its file
/// and rank modulo 8 (so `+7` files is one file left). `None` for a code the table lacks or a
/// piece the board lacks.
pub fn decode_move(board: &Board, code: u8) -> Option<(Square, Square)> {
    let &(_, role, number, dx, dy) = MOVE_TABLE.iter().find(|m| m.0 == code)?;
    let piece = Piece {
        color: Color::White,
        role,
    };
    let from = squares_in_ctg_order()
        .filter(|&sq| board.piece_at(sq) == Some(piece))
        .nth(usize::from(number))?;
    let file = (i32::from(from.file()) + i32::from(dx)).rem_euclid(8) as u32;
    let rank = (i32::from(from.rank()) + i32::from(dy)).rem_euclid(8) as u32;
    Some((
        from,
        Square::from_coords(BoardFile::new(file), Rank::new(rank)),
    ))
}

/// The move codes: (code, role, piece number, files, ranks). Castling is the king's step of two
/// files (0x6b short, 0xf6 long); a pawn's step onto the last rank promotes to a queen.
pub const MOVE_TABLE: [(u8, Role, u8, i8, i8); 166] = [
    (0x00, Role::Pawn, 4, 1, 1),
    (0x01, Role::Knight, 1, -2, -1),
    (0x03, Role::Queen, 1, 2, 0),
    (0x04, Role::Pawn, 1, 0, 1),
    (0x05, Role::Queen, 0, 0, 1),
    (0x06, Role::Pawn, 3, -1, 1),
    (0x08, Role::Queen, 1, 4, 0),
    (0x09, Role::Bishop, 1, 6, 6),
    (0x0a, Role::King, 0, 0, -1),
    (0x0c, Role::Pawn, 0, -1, 1),
    (0x0d, Role::Bishop, 0, 3, 3),
    (0x0e, Role::Rook, 1, 3, 0),
    (0x0f, Role::Knight, 0, -2, -1),
    (0x12, Role::Bishop, 0, 7, 7),
    (0x13, Role::King, 0, 0, 1),
    (0x14, Role::Pawn, 7, 1, 1),
    (0x15, Role::Bishop, 0, 5, 5),
    (0x18, Role::Pawn, 6, 0, 1),
    (0x1a, Role::Queen, 1, 0, 6),
    (0x1b, Role::Bishop, 0, -1, 1),
    (0x1d, Role::Bishop, 1, 7, 7),
    (0x21, Role::Rook, 1, 7, 0),
    (0x22, Role::Bishop, 1, -2, 2),
    (0x23, Role::Queen, 1, 6, 6),
    (0x24, Role::Pawn, 7, -1, 1),
    (0x26, Role::Bishop, 0, -7, 7),
    (0x27, Role::Pawn, 2, -1, 1),
    (0x28, Role::Queen, 0, 5, 5),
    (0x29, Role::Queen, 0, 6, 0),
    (0x2a, Role::Knight, 1, 1, -2),
    (0x2d, Role::Pawn, 5, 1, 1),
    (0x2e, Role::Bishop, 0, 1, 1),
    (0x2f, Role::Queen, 0, 1, 0),
    (0x30, Role::Knight, 1, -1, -2),
    (0x31, Role::Queen, 0, 3, 0),
    (0x32, Role::Bishop, 1, 5, 5),
    (0x34, Role::Knight, 0, 1, 2),
    (0x36, Role::Knight, 0, 2, 1),
    (0x37, Role::Queen, 0, 0, 4),
    (0x38, Role::Queen, 1, -4, 4),
    (0x39, Role::Queen, 0, 5, 0),
    (0x3a, Role::Bishop, 0, 6, 6),
    (0x3b, Role::Queen, 1, -5, 5),
    (0x3c, Role::Bishop, 0, -5, 5),
    (0x41, Role::Queen, 1, 5, 5),
    (0x42, Role::Queen, 0, -7, 7),
    (0x44, Role::King, 0, 1, -1),
    (0x45, Role::Queen, 0, 3, 3),
    (0x4a, Role::Pawn, 7, 0, 2),
    (0x4b, Role::Queen, 0, -5, 5),
    (0x4c, Role::Knight, 1, 1, 2),
    (0x4d, Role::Queen, 1, 0, 1),
    (0x50, Role::Rook, 0, 0, 6),
    (0x52, Role::Rook, 0, 6, 0),
    (0x54, Role::Bishop, 1, -1, 1),
    (0x55, Role::Pawn, 2, 0, 1),
    (0x5c, Role::Pawn, 6, 1, 1),
    (0x5f, Role::Pawn, 4, 0, 2),
    (0x61, Role::Queen, 0, 6, 6),
    (0x62, Role::Pawn, 1, 0, 2),
    (0x63, Role::Queen, 1, -7, 7),
    (0x66, Role::Bishop, 0, -3, 3),
    (0x67, Role::King, 0, 1, 1),
    (0x69, Role::Rook, 1, 0, 7),
    (0x6a, Role::Bishop, 0, 4, 4),
    (0x6b, Role::King, 0, 2, 0),
    (0x6e, Role::Rook, 0, 5, 0),
    (0x6f, Role::Queen, 1, 7, 7),
    (0x72, Role::Bishop, 1, -7, 7),
    (0x74, Role::Queen, 0, 2, 0),
    (0x79, Role::Bishop, 1, -6, 6),
    (0x7a, Role::Rook, 0, 0, 3),
    (0x7b, Role::Rook, 1, 0, 6),
    (0x7c, Role::Pawn, 2, 1, 1),
    (0x7d, Role::Rook, 1, 0, 1),
    (0x7e, Role::Queen, 0, -3, 3),
    (0x7f, Role::Rook, 0, 1, 0),
    (0x80, Role::Queen, 0, -6, 6),
    (0x81, Role::Rook, 0, 0, 1),
    (0x82, Role::Pawn, 5, -1, 1),
    (0x85, Role::Knight, 0, -1, 2),
    (0x86, Role::Rook, 0, 7, 0),
    (0x87, Role::Rook, 0, 0, 5),
    (0x8a, Role::Knight, 0, 1, -2),
    (0x8b, Role::Pawn, 0, 1, 1),
    (0x8c, Role::King, 0, -1, -1),
    (0x8e, Role::Queen, 1, -2, 2),
    (0x8f, Role::Queen, 0, 7, 0),
    (0x92, Role::Queen, 1, 1, 1),
    (0x94, Role::Queen, 0, 0, 3),
    (0x96, Role::Pawn, 1, 1, 1),
    (0x97, Role::King, 0, -1, 0),
    (0x98, Role::Rook, 0, 3, 0),
    (0x99, Role::Rook, 0, 0, 4),
    (0x9a, Role::Queen, 0, 0, 6),
    (0x9b, Role::Pawn, 2, 0, 2),
    (0x9d, Role::Queen, 0, 0, 2),
    (0x9f, Role::Bishop, 1, -4, 4),
    (0xa0, Role::Queen, 1, 0, 3),
    (0xa2, Role::Queen, 0, 2, 2),
    (0xa3, Role::Pawn, 7, 0, 1),
    (0xa5, Role::Rook, 1, 0, 5),
    (0xa9, Role::Rook, 1, 2, 0),
    (0xab, Role::Queen, 1, -6, 6),
    (0xad, Role::Rook, 1, 4, 0),
    (0xae, Role::Queen, 1, 3, 3),
    (0xb0, Role::Queen, 1, 0, 4),
    (0xb1, Role::Pawn, 5, 0, 2),
    (0xb2, Role::Bishop, 0, -6, 6),
    (0xb5, Role::Rook, 1, 5, 0),
    (0xb7, Role::Queen, 0, 0, 5),
    (0xb9, Role::Bishop, 1, 3, 3),
    (0xbb, Role::Pawn, 4, 0, 1),
    (0xbc, Role::Queen, 1, 5, 0),
    (0xbd, Role::Queen, 1, 0, 2),
    (0xbe, Role::King, 0, 1, 0),
    (0xc1, Role::Bishop, 0, 2, 2),
    (0xc2, Role::Bishop, 1, 2, 2),
    (0xc3, Role::Bishop, 0, -2, 2),
    (0xc4, Role::Rook, 1, 1, 0),
    (0xc5, Role::Rook, 1, 0, 4),
    (0xc6, Role::Queen, 1, 0, 5),
    (0xc7, Role::Pawn, 6, -1, 1),
    (0xc8, Role::Pawn, 6, 0, 2),
    (0xc9, Role::Queen, 1, 0, 7),
    (0xca, Role::Bishop, 1, -3, 3),
    (0xcb, Role::Pawn, 5, 0, 1),
    (0xcc, Role::Bishop, 1, -5, 5),
    (0xcd, Role::Rook, 0, 2, 0),
    (0xcf, Role::Pawn, 3, 0, 1),
    (0xd1, Role::Pawn, 1, -1, 1),
    (0xd2, Role::Knight, 1, 2, 1),
    (0xd3, Role::Knight, 1, -2, 1),
    (0xd7, Role::Queen, 0, -1, 1),
    (0xd8, Role::Rook, 1, 6, 0),
    (0xd9, Role::Queen, 0, -2, 2),
    (0xda, Role::Knight, 0, -1, -2),
    (0xdb, Role::Pawn, 0, 0, 2),
    (0xde, Role::Pawn, 4, -1, 1),
    (0xdf, Role::King, 0, -1, 1),
    (0xe0, Role::Knight, 1, 2, -1),
    (0xe1, Role::Rook, 0, 0, 7),
    (0xe3, Role::Rook, 1, 0, 3),
    (0xe5, Role::Queen, 0, 4, 0),
    (0xe6, Role::Pawn, 3, 0, 2),
    (0xe7, Role::Queen, 0, 4, 4),
    (0xe8, Role::Rook, 0, 0, 2),
    (0xe9, Role::Knight, 0, 2, -1),
    (0xeb, Role::Pawn, 3, 1, 1),
    (0xec, Role::Pawn, 0, 0, 1),
    (0xed, Role::Queen, 0, 7, 7),
    (0xee, Role::Queen, 1, -1, 1),
    (0xef, Role::Rook, 0, 4, 0),
    (0xf0, Role::Queen, 1, 7, 0),
    (0xf1, Role::Queen, 0, 1, 1),
    (0xf3, Role::Knight, 1, -1, 2),
    (0xf4, Role::Rook, 1, 0, 2),
    (0xf5, Role::Bishop, 1, 1, 1),
    (0xf6, Role::King, 0, -2, 0),
    (0xf7, Role::Knight, 0, -2, 1),
    (0xf8, Role::Queen, 1, 1, 0),
    (0xf9, Role::Queen, 1, 0, 6),
    (0xfa, Role::Queen, 1, 3, 0),
    (0xfb, Role::Queen, 1, 2, 2),
    (0xfd, Role::Queen, 0, 0, 7),
    (0xfe, Role::Queen, 1, -3, 3),
];

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/books/formats")
            .join(name)
    }

    fn setup(fen: &str) -> Setup {
        fen.parse::<Fen>().unwrap().into_setup()
    }

    fn chess(fen: &str) -> Chess {
        setup(fen)
            .position(shakmaty::CastlingMode::Standard)
            .unwrap()
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// An encoder written apart from [`encode`], from docs/formats.md's table: each square's code
    /// as a string of bits, file by file, rank by rank.
    fn test_encode(s: &Setup) -> Vec<u8> {
        let mut bits = String::from("00000000");
        for f in 0..8 {
            for r in 0..8 {
                let sq = Square::from_coords(BoardFile::new(f), Rank::new(r));
                bits += match s.board.piece_at(sq) {
                    None => "0",
                    Some(p) => match (p.color, p.role) {
                        (Color::White, Role::Pawn) => "110",
                        (Color::Black, Role::Pawn) => "111",
                        (Color::White, Role::Knight) => "10010",
                        (Color::Black, Role::Knight) => "10011",
                        (Color::White, Role::Bishop) => "10100",
                        (Color::Black, Role::Bishop) => "10101",
                        (Color::White, Role::Rook) => "10110",
                        (Color::Black, Role::Rook) => "10111",
                        (Color::White, Role::Queen) => "100010",
                        (Color::Black, Role::Queen) => "100011",
                        (Color::White, Role::King) => "100000",
                        (Color::Black, Role::King) => "100001",
                    },
                };
            }
        }
        let mut tail = String::new();
        if let Some(ep) = s.ep_square {
            tail += &format!("{:03b}", u32::from(ep.file()));
        }
        if !s.castling_rights.is_empty() {
            for sq in [Square::H8, Square::A8, Square::H1, Square::A1] {
                tail += if s.castling_rights.contains(sq) {
                    "1"
                } else {
                    "0"
                };
            }
        }
        if tail.is_empty() {
            bits += "0";
        }
        while !(bits.len() + tail.len()).is_multiple_of(8) {
            bits += "0";
        }
        bits += &tail;
        let mut bytes: Vec<u8> = (0..bits.len() / 8)
            .map(|i| u8::from_str_radix(&bits[i * 8..i * 8 + 8], 2).unwrap())
            .collect();
        bytes[0] = bytes.len() as u8
            | if s.ep_square.is_some() { 0x20 } else { 0 }
            | if s.castling_rights.is_empty() {
                0
            } else {
                0x40
            };
        bytes
    }

    const FENS: [&str; 5] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "8/5k2/8/3pP3/8/8/8/4K3 w - d6 0 1",
        "r3k2r/8/8/8/8/8/8/R3K3 w Qkq - 0 1",
        "8/8/3k4/8/8/8/1Q6/6K1 w - - 0 1",
    ];

    #[test]
    fn the_encoding_matches_an_independent_encoder_and_decodes_back() {
        for fen in FENS {
            let s = setup(fen);
            assert_eq!(hex(&encode(&s)), hex(&test_encode(&s)), "{fen}");
            let back = decode(&test_encode(&s)).expect(fen);
            assert_eq!(back.board, s.board, "{fen}");
            assert_eq!(back.ep_square, s.ep_square, "{fen}");
            assert_eq!(back.castling_rights, s.castling_rights, "{fen}");
        }
    }

    #[test]
    fn the_start_position_encodes_as_the_book_stores_it() {
        // The record of simple.ctg's start position (its moves are e4 and d4), byte for byte.
        assert_eq!(
            hex(&encode(&Chess::default().to_setup(EnPassantMode::Legal))),
            "56b60f7960f3a60f58b078e0c1e1a60f5960f3b60f7f"
        );
    }

    #[test]
    fn decode_refuses_what_is_no_encoding() {
        assert!(decode(&[]).is_none());
        assert!(decode(&[0x05, 0, 0]).is_none(), "length byte disagrees");
        assert!(decode(&[0x02, 0xff]).is_none(), "board runs out");
    }

    #[test]
    fn black_to_move_is_stored_colour_flipped() {
        let pos = chess("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        let view = StoredView::of(&pos);
        assert!(view.flipped && !view.mirrored);
        let expected = setup("rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert_eq!(view.setup.board, expected.board);
        assert_eq!(view.setup.castling_rights, expected.castling_rights);
        assert_eq!(view.real_square(Square::D2), Square::D7);
    }

    #[test]
    fn a_king_on_files_a_to_d_without_castling_is_mirrored() {
        let pos = chess("8/8/3k4/8/8/8/1Q6/2K5 w - - 0 1");
        let view = StoredView::of(&pos);
        assert!(view.mirrored && !view.flipped);
        assert_eq!(
            view.setup.board,
            setup("8/8/4k3/8/8/8/6Q1/5K2 w - - 0 1").board
        );
        assert_eq!(view.real_square(Square::F1), Square::C1);
        // Castling rights forbid the mirror, whatever the king's file.
        let castling = chess("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1");
        assert!(!StoredView::of(&castling).mirrored);
        // Black's king counts when Black is to move (it is White's after the flip).
        let black = chess("8/8/1k6/8/8/8/8/6K1 b - - 0 1");
        let view = StoredView::of(&black);
        assert!(view.flipped && view.mirrored);
        assert_eq!(view.real_square(Square::G3), Square::B6);
    }

    #[test]
    fn the_move_table_names_moves_each_piece_can_make() {
        let mut codes = HashSet::new();
        let mut meanings = std::collections::HashMap::new();
        let mut aliases = Vec::new();
        for &(code, role, n, dx, dy) in &MOVE_TABLE {
            assert!(codes.insert(code), "code {code:#04x} twice");
            if let Some(first) = meanings.insert((role, n, dx, dy), code) {
                aliases.push((first, code));
            }
            let (ax, ay) = (dx.rem_euclid(8), dy.rem_euclid(8));
            // A displacement modulo 8 as the smallest step either way.
            let short = |d: i8| if d > 4 { d - 8 } else { d };
            let (sx, sy) = (short(ax), short(ay));
            let ok = match role {
                Role::Pawn => n < 8 && matches!((dx, dy), (0, 1) | (0, 2) | (1, 1) | (-1, 1)),
                Role::Knight => n < 2 && sx.abs() * sy.abs() == 2,
                Role::Bishop => n < 2 && sx.abs() == sy.abs() && ax != 0,
                Role::Rook => n < 2 && (ax == 0) != (ay == 0),
                Role::Queen => {
                    n < 2 && (sx.abs() == sy.abs() || ax == 0 || ay == 0) && (ax, ay) != (0, 0)
                }
                Role::King => {
                    n == 0 && (sx.abs() <= 1 && sy.abs() <= 1 || (dx.abs() == 2 && dy == 0))
                }
            };
            assert!(ok, "{code:#04x}: {role:?} #{n} by ({dx}, {dy})");
        }
        // One pair of codes means the same move (queen #1 six ranks up) in every reader's table.
        assert_eq!(aliases, [(0x1a, 0xf9)]);
        let start = Chess::default();
        let mv = |code| decode_move(start.board(), code);
        assert_eq!(mv(0x5f), Some((Square::E2, Square::E4)));
        assert_eq!(mv(0xe6), Some((Square::D2, Square::D4)));
        assert_eq!(
            mv(0x34),
            Some((Square::B1, Square::C3)),
            "Nb1-c3: knight #0, +1 +2"
        );
        assert_eq!(mv(0x02), None, "a code of no move");
        let castle = setup("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
        assert_eq!(
            decode_move(&castle.board, 0x6b),
            Some((Square::E1, Square::G1))
        );
        assert_eq!(
            decode_move(&castle.board, 0xf6),
            Some((Square::E1, Square::C1))
        );
        // A rook's +7 files wraps to one file left.
        assert_eq!(
            decode_move(&castle.board, 0x21),
            Some((Square::H1, Square::G1))
        );
    }

    #[test]
    fn moves_come_back_to_the_real_frame() {
        // Black's king on b6 mirrored and flipped: its stored step g3-g4 ("+0 +1") is b6-b5.
        let pos = chess("8/8/1k6/8/8/8/8/6K1 b - - 0 1");
        let view = StoredView::of(&pos);
        let (from, to) = decode_move(&view.setup.board, 0x13).unwrap();
        let m = view.real_move(&pos, from, to).unwrap();
        assert_eq!(
            m.to_uci(shakmaty::CastlingMode::Standard).to_string(),
            "b6b5"
        );
        // Castling short, stored and real.
        let pos = chess("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        let view = StoredView::of(&pos);
        let (from, to) = decode_move(&view.setup.board, 0x6b).unwrap();
        assert!(view.real_move(&pos, from, to).unwrap().is_castle());
        // A pawn reaching the last rank promotes to a queen.
        let pos = chess("4k3/8/8/8/8/8/p7/4K3 b - - 0 1");
        let view = StoredView::of(&pos);
        let (from, to) = decode_move(&view.setup.board, 0xec).unwrap();
        let m = view.real_move(&pos, from, to).unwrap();
        assert_eq!(
            m.to_uci(shakmaty::CastlingMode::Standard).to_string(),
            "a2a1q"
        );
    }

    #[test]
    fn win_loss_order_is_pinned() {
        // games 10, first counter 7, second counter 2, draws 1.
        let mut bytes = [0u8; STATS_SIZE];
        bytes[2] = 10;
        bytes[5] = 7;
        bytes[8] = 2;
        bytes[11] = 1;
        bytes[30] = 0x80;
        let stats = CtgStats::from_bytes(&bytes);
        const { assert!(WINS_BEFORE_LOSSES) };
        assert_eq!(
            (stats.games, stats.wins, stats.losses, stats.draws),
            (10, 7, 2, 1)
        );
        assert_eq!(stats.recommendation, Recommendation::Green);
    }

    #[test]
    fn annotations_read_as_their_symbols() {
        let symbols: Vec<&str> = (0..=8).map(|b| Annotation::from_byte(b).symbol()).collect();
        assert_eq!(symbols, ["", "!", "?", "!!", "??", "!?", "?!", "", "□"]);
        assert_eq!(Annotation::from_byte(0xe0), Annotation::Other(0xe0));
    }

    #[test]
    fn simple_ctg_holds_its_four_positions() {
        let positions = read_ctg(&data("simple.ctg")).unwrap();
        let lines: Vec<String> = positions
            .iter()
            .map(|p| {
                let moves: Vec<String> = p
                    .moves
                    .iter()
                    .map(|m| m.mv.to_uci(shakmaty::CastlingMode::Standard).to_string())
                    .collect();
                format!("{} {} {}", p.key, moves.join(","), p.stats.games)
            })
            .collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[0].ends_with(" e2e4,d2d4 2"), "{lines:?}");
        assert_eq!(positions[0].key, Key::of(&Chess::default()));
        // A move as a Polyglot entry of its position.
        let e4 = positions[0].moves[0].entry(positions[0].key, 3);
        assert_eq!(Some(e4), Entry::from_uci(positions[0].key, "e2e4", 3));
        // Any of the three files names the book.
        assert_eq!(read_ctg(&data("simple.cto")).unwrap().len(), 4);
    }

    fn copy_book(dir: &Path) -> PathBuf {
        for ext in ["ctg", "cto", "ctb"] {
            std::fs::copy(data(&format!("simple.{ext}")), dir.join(format!("b.{ext}"))).unwrap();
        }
        dir.join("b.ctg")
    }

    #[test]
    fn a_missing_companion_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let book = copy_book(dir.path());
        std::fs::remove_file(dir.path().join("b.cto")).unwrap();
        let e = read_ctg(&book).unwrap_err().to_string();
        assert!(e.contains("b.cto") && !e.contains('\n'), "{e}");
        let e = read_ctg(&dir.path().join("b.bin")).unwrap_err().to_string();
        assert!(e.contains("not a CTG book"), "{e}");
    }

    #[test]
    fn damaged_companions_are_named() {
        let bytes = |ext: &str| std::fs::read(data(&format!("simple.{ext}"))).unwrap();
        let name = Path::new("x.ctg");
        // A .ctb too short for its bounds.
        let e = read_ctg_bytes(name, bytes("ctg"), bytes("cto"), vec![0; 8]).unwrap_err();
        assert!(e.to_string().starts_with("x.ctb: damaged"), "{e}");
        // A .cto that names a page past the .ctg's end.
        let mut cto = bytes("cto");
        cto[19] = 9;
        let e = read_ctg_bytes(name, bytes("ctg"), cto, bytes("ctb")).unwrap_err();
        assert!(e.to_string().contains("page 9"), "{e}");
        // A .cto shorter than the .ctb's bounds say.
        let e = read_ctg_bytes(
            name,
            bytes("ctg"),
            bytes("cto")[..16].to_vec(),
            bytes("ctb"),
        );
        assert!(e.unwrap_err().to_string().starts_with("x.cto: damaged"));
        // A .ctg page whose records run past its used bytes.
        let mut ctg = bytes("ctg");
        ctg[4096 + 3] = 40;
        let e = read_ctg_bytes(name, ctg, bytes("cto"), bytes("ctb")).unwrap_err();
        assert!(e.to_string().starts_with("x.ctg: damaged"), "{e}");
    }
}
