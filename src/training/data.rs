//! The net's data: positions from real games, each labelled by the engine's own search.
//!
//! **Positions.** The games are read in input order ([`enumerate`]). A position is a candidate
//! when the game is standard chess (from the usual start or a FEN) and has a result, it is
//! `skip_plies` or more plies into the game, its side to move is not in check and the move the game played from
//! it captures nothing and promotes nothing (a quiet position, as far as the game tells). A
//! position already seen earlier in the input is not a candidate again, and of the candidates one
//! in `every` is kept, chosen by a hash of its key (the hash modulo `every` is `part`, so the
//! `every` parts share the candidates out): the same games always give the same positions in the
//! same order, whatever the machine or thread count.
//!
//! **Labels.** Each kept position is searched to a fixed node count by the engine
//! ([`label_block`]); its label is the score in centipawns for the side to move, two bytes. A
//! position whose best move captures or promotes, or whose score is a mate, is labelled
//! [`SKIP`]: the net learns quiet positions only. Positions are labelled in blocks of
//! [`BLOCK`], each by an engine cleared first, so a block's labels do not depend on which thread
//! labelled it, nor on what was labelled before.
//!
//! **The label file** ([`LabelHeader`]) is the header, then the blocks in order: each block's
//! labels (one `i16` per position) followed by a CRC-32 of the block's number and labels. It holds
//! no position: with the games it was made from it rebuilds the whole data set, at two bytes a
//! position. A file cut short (by Ctrl-C or a kill) is resumed from its last whole block; a block
//! whose checksum is wrong (damaged on disk) is labelled again by `datagen` and refused by `train`,
//! never used. Files of the first format (`PBLABEL1`, no checksums) are still read, unchecked, and
//! `datagen` rewrites one it resumes in the current format.

use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use shakmaty::{Chess, Color, Move, Position};

use super::Sample;
use crate::engine::hash::hash_of;
use crate::engine::{Engine, Limits, Score, SearchOptions};
use crate::pgn::input::{Chunks, Input};
use crate::pgn::main_line::{MainLineReader, MainLines};
use crate::pgn::tags::StartTags;
use crate::text::reason;

/// Positions labelled together by one cleared engine.
pub const BLOCK: usize = 1024;
/// The label of a position left out of training.
pub const SKIP: i16 = i16::MIN;
/// The largest score kept, in centipawns.
pub const MAX_SCORE: i32 = 30000;

/// Which positions of the games are candidates and how many are kept: the selection of training
/// positions (a book's move selection is another thing, `book::Selection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PositionFilter {
    /// Plies at the start of each game that are never candidates.
    pub skip_plies: u32,
    /// One candidate in `every` is kept.
    pub every: u32,
    /// Which one: those whose hash modulo `every` is `part` (below `every`).
    pub part: u32,
    /// Games with a FEN tag are read from it (the label file's rule 2); rule 1 left them out.
    pub fen: bool,
}

impl PositionFilter {
    /// The `datagen` options that make this selection (`--part` only when it is not 0).
    pub fn options(&self) -> String {
        let part = match self.part {
            0 => String::new(),
            k => format!(" --part {k}"),
        };
        format!(
            "--skip-plies {} --every {}{part}",
            self.skip_plies, self.every
        )
    }
}

impl Default for PositionFilter {
    fn default() -> Self {
        PositionFilter {
            skip_plies: 8,
            every: 4,
            part: 0,
            fen: true,
        }
    }
}

/// A kept position, its game's result for White (0 lost, 1 drawn, 2 won) and its game's number in
/// the input (from 1).
pub struct Candidate {
    pub pos: Chess,
    pub result: u8,
    pub game: u32,
}

/// What reading the games found.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct ReadReport {
    pub games: u64,
    /// Games of standard chess from the usual start with a result.
    pub games_used: u64,
    pub candidates: u64,
    pub kept: u64,
}

/// Why the data could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error(transparent)]
    Input(#[from] crate::pgn::input::InputError),
    #[error("{path}: {why}")]
    Labels { path: String, why: String },
    #[error("no position of the games can be labelled (finished games of standard chess)")]
    NoPositions,
    #[error("stopped")]
    Stopped,
}

/// The kept positions of `inputs`, in order, and a fingerprint of them (their keys, mixed).
pub fn enumerate(
    inputs: &[Input],
    selection: PositionFilter,
    progress: &dyn crate::pgn::Progress,
    stop: &AtomicBool,
) -> Result<(Vec<Candidate>, u64, ReadReport), DataError> {
    let bytes_read = Arc::new(AtomicU64::new(0));
    let mut visitor = MainLines(Enumerator::new(selection));
    for input in inputs {
        let read_error = |e: std::io::Error| DataError::Input(input.read_error(&e));
        let mut chunks = Chunks::open(input, bytes_read.clone(), 1 << 22).map_err(read_error)?;
        while let Some(chunk) = chunks.next_chunk().map_err(read_error)? {
            crate::pgn::read::read_games(&chunk, &mut visitor);
            progress.update(bytes_read.load(Ordering::Relaxed), visitor.0.report.games);
            if stop.load(Ordering::Relaxed) {
                return Err(DataError::Stopped);
            }
        }
    }
    let MainLines(mut e) = visitor;
    e.report.kept = e.kept.len() as u64;
    Ok((e.kept, e.fingerprint, e.report))
}

/// splitmix64's finaliser: a well-mixed hash of a word.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

/// The reader of positions ([`MainLineReader`]) that finds the candidates and keeps one in `every`.
struct Enumerator {
    selection: PositionFilter,
    seen: HashSet<u64>,
    /// The keys put in `seen` since the last mark, to take out again if the reader rewinds.
    journal: Vec<u64>,
    kept: Vec<Candidate>,
    report: ReadReport,
    fingerprint: u64,
}

impl Enumerator {
    fn new(selection: PositionFilter) -> Enumerator {
        Enumerator {
            selection,
            seen: HashSet::new(),
            journal: Vec::new(),
            kept: Vec::new(),
            report: ReadReport::default(),
            fingerprint: 0,
        }
    }
}

/// What the enumeration keeps of a game while it is read.
struct Game {
    /// White's points: 2, 1 or 0.
    result: u8,
    /// The game's number in the input (1-based).
    number: u32,
}

/// Where an [`Enumerator`] stood at a mark (the keys seen since are in its journal).
#[derive(Clone, Copy)]
struct EnumeratorMark {
    kept: usize,
    report: ReadReport,
    fingerprint: u64,
}

impl MainLineReader for Enumerator {
    type Game = Game;
    type Mark = EnumeratorMark;

    fn begin_game(&mut self) {
        self.report.games += 1;
    }

    fn start(&mut self, tags: StartTags) -> Option<(Chess, Game)> {
        let result = tags.result.white_points()?;
        let start = tags.start(self.selection.fen)?;
        self.report.games_used += 1;
        let number = self.report.games as u32;
        Some((start, Game { result, number }))
    }

    fn before_move(&mut self, game: &mut Game, pos: &Chess, ply: u32, mv: Move) {
        if ply < self.selection.skip_plies || mv.is_capture() || mv.is_promotion() || pos.is_check()
        {
            return;
        }
        let key = hash_of(pos);
        if self.seen.insert(key) {
            self.journal.push(key);
            self.report.candidates += 1;
            if mix(key) % u64::from(self.selection.every.max(1)) == u64::from(self.selection.part) {
                self.fingerprint = mix(self.fingerprint ^ key);
                self.kept.push(Candidate {
                    pos: pos.clone(),
                    result: game.result,
                    game: game.number,
                });
            }
        }
    }

    fn end_game(&mut self, _game: Game) {}

    fn mark(&mut self) -> EnumeratorMark {
        self.journal.clear();
        EnumeratorMark {
            kept: self.kept.len(),
            report: self.report,
            fingerprint: self.fingerprint,
        }
    }

    /// The reader reads the games since the mark again (a tag section broke among them): they
    /// are forgotten, their positions too, so that each game counts once and its positions keep
    /// their place in the order.
    fn rewind(&mut self, mark: EnumeratorMark) {
        for key in self.journal.drain(..) {
            self.seen.remove(&key);
        }
        self.kept.truncate(mark.kept);
        self.report = mark.report;
        self.fingerprint = mark.fingerprint;
    }
}

/// The label file's header: how the labels were made and of which positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelHeader {
    /// Nodes per search.
    pub nodes: u32,
    pub selection: PositionFilter,
    /// Positions the games give (the labels to come).
    pub positions: u64,
    /// The positions' fingerprint (their keys mixed in order).
    pub fingerprint: u64,
}

impl LabelHeader {
    /// The current format: a CRC-32 after each block.
    pub const MAGIC: &'static [u8; 8] = b"PBLABEL2";
    /// The first format: the labels alone.
    pub const MAGIC_1: &'static [u8; 8] = b"PBLABEL1";
    pub const SIZE: usize = 8 + 4 * 4 + 8 + 8;
    /// The version of the candidate rule above, recorded so that a changed rule refuses old files:
    /// rule 1 left games with a FEN out, rule 2 reads them from their FEN.
    const RULES: [u32; 2] = [1, 2];

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[..8].copy_from_slice(Self::MAGIC);
        b[8..12].copy_from_slice(&self.nodes.to_le_bytes());
        b[12..16].copy_from_slice(&self.selection.skip_plies.to_le_bytes());
        b[16..20].copy_from_slice(&self.selection.every.to_le_bytes());
        // The rule in the low half, the part in the high half (0 in files made before parts).
        let rule = Self::RULES[usize::from(self.selection.fen)] | (self.selection.part << 16);
        b[20..24].copy_from_slice(&rule.to_le_bytes());
        b[24..32].copy_from_slice(&self.positions.to_le_bytes());
        b[32..40].copy_from_slice(&self.fingerprint.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Result<LabelHeader, String> {
        if b.len() < Self::SIZE || (&b[..8] != Self::MAGIC && &b[..8] != Self::MAGIC_1) {
            return Err("not a polybook label file".into());
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let (rule, part) = (u32_at(20) & 0xffff, u32_at(20) >> 16);
        let Some(index) = Self::RULES.iter().position(|&r| r == rule) else {
            return Err(format!(
                "labels of positions chosen by rule {rule}, but this polybook knows rules 1 and 2 only"
            ));
        };
        if part >= u32_at(16).max(1) {
            return Err(format!(
                "labels of part {part} of {} parts: no such part",
                u32_at(16)
            ));
        }
        Ok(LabelHeader {
            nodes: u32_at(8),
            selection: PositionFilter {
                skip_plies: u32_at(12),
                every: u32_at(16),
                part,
                fen: index == 1,
            },
            positions: u64_at(24),
            fingerprint: u64_at(32),
        })
    }

    /// Why labels made under `self` do not fit positions read under `other`, if they don't.
    pub fn mismatch(&self, other: &LabelHeader) -> Option<String> {
        if self.selection != other.selection {
            Some(format!(
                "labelled with {}, not {}",
                self.selection.options(),
                other.selection.options()
            ))
        } else if (self.positions, self.fingerprint) != (other.positions, other.fingerprint) {
            Some(format!(
                "labels of {} other positions (fingerprint {:016x}): these games give {} (fingerprint {:016x})",
                self.positions, self.fingerprint, other.positions, other.fingerprint
            ))
        } else {
            None
        }
    }
}

/// A label file read.
#[derive(Debug)]
pub struct LabelFile {
    pub header: LabelHeader,
    /// The labels of the whole blocks read before the first damaged one (all of them when none
    /// is), in position order.
    pub labels: Vec<i16>,
    /// The first block whose checksum is wrong, if one is: it and what follows are not in
    /// `labels`.
    pub damaged_block: Option<usize>,
    /// Whether the file is of the first format (no checksums: its labels were not checked).
    pub unchecked: bool,
}

/// Bytes of a block's checksum.
const CRC_SIZE: usize = 4;

/// The CRC-32 of block `index` holding `bytes` (its labels, little-endian): the number is in it,
/// so that a block moved to another place is found too.
fn block_crc(index: usize, bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&(index as u64).to_le_bytes());
    h.update(bytes);
    h.finalize()
}

/// A label file read: its header and the labels of its whole, undamaged blocks.
pub fn read_labels(path: &Path) -> Result<LabelFile, DataError> {
    let err = |why: String| DataError::Labels {
        path: crate::text::quote_path(path),
        why,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| err(format!("cannot read: {}", reason(&e))))?;
    let header = LabelHeader::from_bytes(&bytes).map_err(err)?;
    let body = &bytes[LabelHeader::SIZE..];
    let decode = |b: &[u8]| -> Vec<i16> {
        b.chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect()
    };
    let positions = usize::try_from(header.positions).unwrap_or(usize::MAX);
    if &bytes[..8] == LabelHeader::MAGIC_1 {
        let labels = decode(body);
        if labels.len() > positions {
            return Err(err(format!(
                "{} labels for {positions} positions",
                labels.len()
            )));
        }
        return Ok(LabelFile {
            header,
            labels,
            damaged_block: None,
            unchecked: true,
        });
    }
    let mut labels = Vec::new();
    let mut at = 0;
    let mut damaged_block = None;
    for index in 0..positions.div_ceil(BLOCK) {
        let n = BLOCK.min(positions - index * BLOCK);
        let Some(block) = body.get(at..at + 2 * n + CRC_SIZE) else {
            break; // cut short: the labels to come
        };
        let (data, crc) = block.split_at(2 * n);
        if u32::from_le_bytes(crc.try_into().expect("4 bytes")) != block_crc(index, data) {
            damaged_block = Some(index);
            break;
        }
        labels.extend(decode(data));
        at += block.len();
    }
    if damaged_block.is_none() && labels.len() == positions && at < body.len() {
        return Err(err(format!(
            "{} bytes after the labels of all {positions} positions",
            body.len() - at
        )));
    }
    Ok(LabelFile {
        header,
        labels,
        damaged_block,
        unchecked: false,
    })
}

/// The bytes of a label file (current format) that holds the first `labels` labels, a whole
/// number of blocks or all of them.
pub fn label_file_size(labels: usize) -> u64 {
    (LabelHeader::SIZE + 2 * labels + CRC_SIZE * labels.div_ceil(BLOCK)) as u64
}

/// The label of `pos` by a search of `nodes` nodes: its score for the side to move, or [`SKIP`].
pub fn label(engine: &mut Engine, pos: &Chess, nodes: u64, stop: &Arc<AtomicBool>) -> i16 {
    let limits = Limits {
        nodes: Some(nodes),
        ..Limits::default()
    };
    let result = engine.search(pos, &[], &limits, Arc::clone(stop), &mut |_| {});
    match (result.score, result.best_move) {
        (Score::Cp(cp), Some(m)) if !m.is_capture() && !m.is_promotion() => {
            cp.clamp(-MAX_SCORE, MAX_SCORE) as i16
        }
        _ => SKIP,
    }
}

/// The search options of labelling: one thread, a table of 16 MB, the net or the hand-crafted
/// evaluation.
pub fn label_options(nnue: bool) -> SearchOptions {
    SearchOptions {
        hash_mb: 16,
        nnue,
        ..SearchOptions::default()
    }
}

/// Labels one block of positions with an engine cleared first; `None` if stopped.
pub fn label_block(
    engine: &mut Engine,
    positions: &[Candidate],
    nodes: u64,
    stop: &Arc<AtomicBool>,
) -> Option<Vec<i16>> {
    engine.clear();
    let mut out = Vec::with_capacity(positions.len());
    for c in positions {
        let l = label(engine, &c.pos, nodes, stop);
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        out.push(l);
    }
    Some(out)
}

/// Labels positions `from..` of `positions` (a whole number of blocks done before) on `threads`
/// threads, handing each finished block, in order, to `write` with its number. Returns when all
/// are done or `stop` is set (the blocks finished in order by then are written).
pub fn label_all(
    positions: &[Candidate],
    from: usize,
    nodes: u64,
    threads: usize,
    options: &SearchOptions,
    stop: &Arc<AtomicBool>,
    write: &mut dyn FnMut(usize, &[i16]) -> io::Result<()>,
) -> io::Result<()> {
    debug_assert_eq!(from % BLOCK, 0);
    let blocks = positions.len().div_ceil(BLOCK);
    let next = AtomicU64::new((from / BLOCK) as u64);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<i16>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                let mut engine = Engine::new(options.clone());
                loop {
                    let b = next.fetch_add(1, Ordering::Relaxed) as usize;
                    if b >= blocks || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let range = b * BLOCK..((b + 1) * BLOCK).min(positions.len());
                    match label_block(&mut engine, &positions[range], nodes, stop) {
                        Some(labels) => {
                            if tx.send((b, labels)).is_err() {
                                break;
                            }
                        }
                        None => break,
                    }
                }
            });
        }
        drop(tx);
        let mut pending = std::collections::BTreeMap::new();
        let mut want = from / BLOCK;
        let mut result = Ok(());
        for (b, labels) in rx {
            pending.insert(b, labels);
            while let Some(labels) = pending.remove(&want) {
                if result.is_ok() {
                    result = write(want, &labels);
                    if result.is_err() {
                        // Nothing more can be kept: stop the workers.
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                want += 1;
            }
        }
        result
    })
}

/// The training samples of labelled positions: the positions of games numbered 10, 20, 30 …
/// are the validation set, the others the training set. Positions labelled [`SKIP`] and those
/// not labelled yet are left out.
pub fn samples(positions: &[Candidate], labels: &[i16]) -> (Vec<Sample>, Vec<Sample>) {
    let (mut train, mut validation) = (Vec::new(), Vec::new());
    for (c, &l) in positions.iter().zip(labels) {
        if l == SKIP {
            continue;
        }
        let result = if c.pos.turn() == Color::White {
            c.result
        } else {
            2 - c.result
        };
        let sample = Sample::new(&c.pos, l, result);
        if c.game % 10 == 0 {
            validation.push(sample);
        } else {
            train.push(sample);
        }
    }
    (train, validation)
}

/// Appends block `index`, its labels and their checksum, to an open label file.
pub fn write_labels(out: &mut impl Write, index: usize, labels: &[i16]) -> io::Result<()> {
    let mut bytes: Vec<u8> = labels.iter().flat_map(|l| l.to_le_bytes()).collect();
    let crc = block_crc(index, &bytes);
    bytes.extend(crc.to_le_bytes());
    // One write: a kill leaves whole blocks and at most one torn block.
    out.write_all(&bytes)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgn::read::read_games;

    /// What enumerating a text gives: the report, the fingerprint, and each kept position with
    /// its game's number.
    fn read(text: &[u8]) -> (ReadReport, u64, Vec<(String, u32)>) {
        let selection = PositionFilter {
            every: 1,
            ..PositionFilter::default()
        };
        let mut visitor = MainLines(Enumerator::new(selection));
        read_games(text, &mut visitor);
        let e = visitor.0;
        let kept = e
            .kept
            .iter()
            .map(|c| {
                let fen = shakmaty::fen::Fen::from_position(&c.pos, shakmaty::EnPassantMode::Legal);
                (fen.to_string(), c.game)
            })
            .collect();
        (e.report, e.fingerprint, kept)
    }

    #[test]
    fn a_tag_too_long_for_the_reader_changes_nothing_that_is_enumerated() {
        // The reader breaks on a tag longer than its buffer (16 KB) and reads the run's games again
        // one by one: the games before it must not count twice, nor shift the game numbers.
        let game = |annotator: &str, moves: &str| {
            format!(
                "[Event \"t\"]\n[Annotator \"{annotator}\"]\n[Result \"1-0\"]\n\n{moves} 1-0\n\n"
            )
        };
        let a = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7";
        let b = "1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Bd3 d5 6. Nf3 c5 7. O-O Nc6 8. a3 Bxc3 9. bxc3 dxc4 10. Bxc4 Qc7";
        let c = "1. c4 e5 2. Nc3 Nf6 3. Nf3 Nc6 4. g3 d5 5. cxd5 Nxd5 6. Bg2 Nb6 7. O-O Be7 8. d3 O-O 9. a3 Be6 10. b4 f6";
        let long = "x".repeat(20_000);
        let with_long = [game("A", a), game(&long, b), game("C", c)].concat();
        let plain = [game("A", a), game("B", b), game("C", c)].concat();
        let (report, fingerprint, kept) = read(with_long.as_bytes());
        let (expected_report, expected_fingerprint, expected_kept) = read(plain.as_bytes());
        assert_eq!(expected_report.games, 3);
        assert!(expected_kept.iter().any(|(_, g)| *g == 3));
        assert_eq!(report.games, 3, "{report:?}");
        assert_eq!(report.games_used, 3);
        assert_eq!(report.candidates, expected_report.candidates);
        assert_eq!(kept, expected_kept);
        assert_eq!(fingerprint, expected_fingerprint);
    }
}
