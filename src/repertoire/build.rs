//! A player's opening repertoire built from games (`polybook repertoire`): for one colour, the
//! moves to play and the opponents' replies to be ready for, as a book and as a PGN tree.
//!
//! The counts are the build's: every (position, move) of the games with the mover's wins, draws
//! and losses, read from PGN by the build's pipeline ([`crate::builder::count_pairs`], kept in
//! memory) or looked up in tallies ([`crate::tally::TallyLookup`]); a tally of the same games
//! gives the same repertoire. From the start position:
//!
//! - at **my** moves (the side of [`RepertoireOptions::color`]) the moves with at least
//!   `min_games` games (and, with an analysed book, not refuted by it: see [`ScoreLimit`]) are
//!   ranked by the Wilson lower bound ([`wilson_lower`], 95 %) on their score from my side,
//!   `(wins + draws / 2) / games`; the best `width` are kept. The line goes on with each, its
//!   probability unchanged;
//! - at the **opponent's** moves every reply is kept whose line probability (the product of the
//!   opponent's reply frequencies along the line, each `games of the reply / games of the
//!   position`) is at least `min_prob`;
//! - no move is chosen at ply `max_ply` or beyond.
//!
//! Transpositions: positions are told apart by their Polyglot key, and each is expanded once,
//! with the most likely line that reaches it (the highest line probability; among equally likely
//! lines, the shortest). The positions are settled in that order, most likely first (Dijkstra's
//! algorithm on the line probability, which only falls along a line), so a position's choice does
//! not depend on which line the walk happened to see first, and no line loops.

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BinaryHeap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Move, Position};
use thiserror::Error;

use crate::book::{Book, Entry, Key, LearnLayout, RawMove};
use crate::builder::{
    BuildError, BuildOptions, BuildReport, GameFilter, PairCount, PlayerFilter, PositionSink,
    count_pairs,
};
use crate::inspect::write_movetext;
use crate::pgn::Progress;
use crate::pgn::input::Input;
use crate::tally::{TallyError, TallyLookup};
use crate::text::quote_path;

/// The `z` of the 95 % confidence bound on a move's score.
pub const Z95: f64 = 1.96;

/// Why a repertoire could not be built.
#[derive(Debug, Error)]
pub enum RepertoireError {
    #[error("{0}")]
    Build(#[from] BuildError),
    #[error("{0}")]
    Tally(#[from] TallyError),
    #[error("no games of {0} with {1}")]
    NoGamesOfPlayer(String, &'static str),
    #[error("no games read from the input")]
    NoGames,
    #[error(
        "{0}: made with --player, so it holds only that player's moves; a repertoire needs the opponents' replies too (make the tally without --player)"
    )]
    PlayerTally(String),
    #[error(
        "{0}: holds no engine scores (make it with 'polybook analyse'); --scores needs an analysed book"
    )]
    NotScored(String),
}

/// What decides the repertoire's moves.
#[derive(Clone, Debug)]
pub struct RepertoireOptions {
    /// My side: my moves are chosen, the opponent's are followed.
    pub color: Color,
    /// A move of mine needs at least this many games to be chosen.
    pub min_games: u64,
    /// My moves kept per position (the best by the bound).
    pub width: usize,
    /// The lowest line probability followed, as a fraction (0.005 for 0.5 %).
    pub min_prob: f64,
    /// No move is chosen at this ply or beyond: lines are at most this long.
    pub max_ply: u32,
}

/// An analysed book's limit on my moves (`--scores BOOK --max-loss CP`): in a position where the
/// book has scored moves, a move it scores more than `max_loss` centipawns below its best scored
/// move is refused. Moves it does not score are allowed: it has not refuted them (a book analysed
/// from a tree of book moves seldom holds every move players tried).
pub struct ScoreLimit {
    pub book: Book,
    pub max_loss: i32,
}

impl ScoreLimit {
    /// The limit of an analysed book; a book without scores is refused.
    pub fn new(book: Book, max_loss: i32) -> Result<ScoreLimit, RepertoireError> {
        if book.learn_layout() != LearnLayout::Scored {
            return Err(RepertoireError::NotScored(quote_path(book.path())));
        }
        Ok(ScoreLimit { book, max_loss })
    }

    /// The moves of position `key` it refuses, among `moves`.
    fn refused(&self, key: u64, moves: &[RawMove]) -> Vec<RawMove> {
        let scores: Vec<(RawMove, i32)> = self
            .book
            .lookup(Key(key))
            .filter_map(|e| self.book.move_score(&e).map(|s| (e.mv, i32::from(s.score))))
            .collect();
        let Some(best) = scores.iter().map(|&(_, s)| s).max() else {
            return Vec::new();
        };
        moves
            .iter()
            .copied()
            .filter(|mv| {
                scores
                    .iter()
                    .any(|&(m, s)| m == *mv && s < best - self.max_loss)
            })
            .collect()
    }
}

/// One move's games in a position, from the mover's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveCount {
    pub mv: RawMove,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl MoveCount {
    fn of(p: &PairCount) -> MoveCount {
        MoveCount {
            mv: RawMove(p.mv),
            games: p.games,
            wins: p.wins,
            draws: p.draws,
            losses: p.losses,
        }
    }

    /// The mover's score, `(wins + draws / 2) / games`.
    pub fn score(&self) -> f64 {
        (2 * self.wins + self.draws) as f64 / 2.0 / self.games as f64
    }
}

/// The Wilson score interval's lower bound of a score `points / games` at `z` (1.96 for 95 %):
/// the score the move can be trusted to keep. Few games pull it down (one win in one game: 0.21;
/// 60 % in 100 games: 0.50), so a move with a high score in a handful of games does not beat a
/// slightly lower score over hundreds. 0 without games.
///
/// ```
/// use polybook::repertoire::build::wilson_lower;
/// assert!((wilson_lower(1.0, 1, 1.96) - 0.2065).abs() < 1e-4);
/// assert!((wilson_lower(60.0, 100, 1.96) - 0.5020).abs() < 1e-4);
/// ```
pub fn wilson_lower(points: f64, games: u64, z: f64) -> f64 {
    if games == 0 {
        return 0.0;
    }
    let n = games as f64;
    let p = points / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let margin = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    (centre - margin) / (1.0 + z2 / n)
}

/// Where a position's moves are counted: games read into memory, or tallies.
pub enum Counts {
    /// Each position's moves, from games.
    Games(HashMap<u64, Vec<MoveCount>>),
    /// Tallies, read a position at a time.
    Tallies(TallyLookup),
}

/// Collects the pipeline's pairs by key.
struct Collect(HashMap<u64, Vec<MoveCount>>);

impl PositionSink for Collect {
    fn position(&mut self, pairs: &[PairCount]) -> Result<(), BuildError> {
        if let Some(first) = pairs.first() {
            self.0
                .entry(first.key)
                .or_default()
                .extend(pairs.iter().map(MoveCount::of));
        }
        Ok(())
    }
}

impl Counts {
    /// Reads PGN games as `build` does (every ply, standard chess, `FEN` set-ups too) and counts
    /// each (position, move) in memory. With `player`, only the games in which the player (any of
    /// the names, any case) had `color`, both sides' moves. Refuses an input without games (of
    /// the player).
    pub fn from_games(
        inputs: &[Input],
        player: &[String],
        color: Color,
        cancel: &AtomicBool,
        progress: &dyn Progress,
    ) -> Result<(Counts, BuildReport), RepertoireError> {
        let filter = GameFilter {
            player: (!player.is_empty()).then(|| PlayerFilter {
                names: player.iter().map(|n| n.trim().to_string()).collect(),
                color: Some(color),
                both_sides: true,
            }),
            ..GameFilter::default()
        };
        let opts = BuildOptions {
            filter,
            ..BuildOptions::default()
        };
        let mut sink = Collect(HashMap::new());
        let report = count_pairs(inputs, &mut sink, &opts, cancel, progress)?;
        if report.used == 0 {
            return Err(match player.first() {
                Some(name) => RepertoireError::NoGamesOfPlayer(
                    crate::text::quote(name),
                    if color == Color::White {
                        "White"
                    } else {
                        "Black"
                    },
                ),
                None => RepertoireError::NoGames,
            });
        }
        Ok((Counts::Games(sink.0), report))
    }

    /// Opens tallies (files or folders, made with the same options); a tally made with
    /// `--player` is refused, since it lacks the opponents' moves.
    pub fn from_tallies(paths: &[PathBuf]) -> Result<Counts, RepertoireError> {
        let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let lookup = TallyLookup::open(&paths)?;
        if lookup.options().contains("--player") {
            return Err(RepertoireError::PlayerTally(
                paths
                    .iter()
                    .map(|p| quote_path(p))
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        Ok(Counts::Tallies(lookup))
    }

    /// The games counted (tallies: as their metadata says).
    pub fn games(&self) -> Option<u64> {
        match self {
            Counts::Games(_) => None,
            Counts::Tallies(t) => Some(t.games()),
        }
    }

    /// The moves counted in position `key`.
    pub fn moves(&mut self, key: u64) -> Result<Vec<MoveCount>, RepertoireError> {
        Ok(match self {
            Counts::Games(map) => map.get(&key).cloned().unwrap_or_default(),
            Counts::Tallies(t) => t.find(key)?.iter().map(MoveCount::of).collect(),
        })
    }
}

/// A move of the repertoire.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub mv: Move,
    pub raw: RawMove,
    pub count: MoveCount,
    /// My moves: the Wilson lower bound of the score; replies: the reply's frequency.
    pub value: f64,
    /// The line's probability after the move.
    pub prob: f64,
    /// The book entry's weight.
    pub weight: u16,
    /// The position after it, an index into [`Repertoire::nodes`].
    pub child: usize,
}

/// A position of the repertoire, reached by its most likely line.
#[derive(Clone, Debug)]
pub struct Node {
    pub key: u64,
    pub pos: Chess,
    pub ply: u32,
    /// The most likely line's probability.
    pub prob: f64,
    /// The position and move that line came from (none for the start).
    pub parent: Option<(usize, RawMove)>,
    /// The repertoire's moves here, in the PGN tree's order: my moves best first; replies most
    /// frequent first (ties: the lower Polyglot move code first).
    pub moves: Vec<Chosen>,
    /// My position where no move had enough games (or all were refused): the line ends early.
    pub no_move: bool,
}

/// The repertoire: its positions, from the start, in the order they were settled.
#[derive(Clone, Debug, Default)]
pub struct Repertoire {
    pub color: Option<Color>,
    pub nodes: Vec<Node>,
    /// My moves refused by the analysed book (`--scores`), over all positions.
    pub refused: u64,
}

/// What the summary says of a repertoire.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Positions with a move in the book.
    pub positions: u64,
    /// Of them, my positions.
    pub my_positions: u64,
    pub my_moves: u64,
    pub replies: u64,
    /// The longest line, in plies.
    pub depth: u32,
    /// My positions where the line ends before --max-ply for lack of a move with enough games
    /// (or one the analysed book allows).
    pub ends_early: u64,
    /// My moves refused by the analysed book.
    pub refused: u64,
    /// The most likely line, in SAN.
    pub main_line: Vec<String>,
}

/// A candidate on the walk's frontier: a position and the line that reaches it.
struct Candidate {
    prob: f64,
    ply: u32,
    /// Order of discovery, the last tie-break (earlier first).
    seq: u64,
    parent: Option<(usize, RawMove)>,
    pos: Chess,
    key: u64,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// The heap's greatest is the most likely, then the shortest, then the first found.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        self.prob
            .total_cmp(&other.prob)
            .then(other.ply.cmp(&self.ply))
            .then(other.seq.cmp(&self.seq))
    }
}

/// Builds the repertoire from `counts`, my moves limited by `scores` when given.
pub fn build_repertoire(
    counts: &mut Counts,
    options: &RepertoireOptions,
    scores: Option<&ScoreLimit>,
) -> Result<Repertoire, RepertoireError> {
    let mut rep = Repertoire {
        color: Some(options.color),
        ..Repertoire::default()
    };
    let mut settled: HashMap<u64, usize> = HashMap::new();
    let mut heap = BinaryHeap::new();
    let mut seq = 0;
    let start = Chess::default();
    heap.push(Candidate {
        prob: 1.0,
        ply: 0,
        seq,
        parent: None,
        key: Key::of(&start).0,
        pos: start,
    });
    // Each chosen move's position after it, by key, resolved once all are settled.
    let mut pending: Vec<(usize, usize, u64)> = Vec::new();
    while let Some(c) = heap.pop() {
        if settled.contains_key(&c.key) {
            continue;
        }
        let index = rep.nodes.len();
        settled.insert(c.key, index);
        let mut node = Node {
            key: c.key,
            pos: c.pos,
            ply: c.ply,
            prob: c.prob,
            parent: c.parent,
            moves: Vec::new(),
            no_move: false,
        };
        if c.ply < options.max_ply {
            let (moves, refused, no_move) = choose(counts.moves(c.key)?, &node, options, scores);
            rep.refused += refused;
            node.no_move = no_move;
            node.moves = moves;
        }
        for (i, chosen) in node.moves.iter().enumerate() {
            let mut after = node.pos.clone();
            after.play_unchecked(chosen.mv);
            let key = Key::of(&after).0;
            pending.push((index, i, key));
            if !settled.contains_key(&key) {
                seq += 1;
                heap.push(Candidate {
                    prob: chosen.prob,
                    ply: c.ply + 1,
                    seq,
                    parent: Some((index, chosen.raw)),
                    pos: after,
                    key,
                });
            }
        }
        rep.nodes.push(node);
    }
    for (node, i, key) in pending {
        rep.nodes[node].moves[i].child = settled[&key];
    }
    Ok(rep)
}

/// The repertoire's moves in one position, the number of my moves the analysed book refused, and
/// whether my line ends here for want of a move.
fn choose(
    counted: Vec<MoveCount>,
    node: &Node,
    options: &RepertoireOptions,
    scores: Option<&ScoreLimit>,
) -> (Vec<Chosen>, u64, bool) {
    // Legal moves only (a tally's key could in principle collide).
    let legal: Vec<(Move, MoveCount)> = counted
        .into_iter()
        .filter(|c| c.games > 0)
        .filter_map(|c| c.mv.to_move(&node.pos).map(|m| (m, c)))
        .collect();
    let chosen = |(mv, count): (Move, MoveCount), value: f64, prob: f64| Chosen {
        mv,
        raw: count.mv,
        count,
        value,
        prob,
        weight: 0,
        child: usize::MAX,
    };
    if node.pos.turn() == options.color {
        let mut candidates: Vec<(Move, MoveCount)> = legal
            .into_iter()
            .filter(|(_, c)| c.games >= options.min_games)
            .collect();
        let mut refused = 0;
        if let Some(limit) = scores {
            let raws: Vec<RawMove> = candidates.iter().map(|(_, c)| c.mv).collect();
            let out = limit.refused(node.key, &raws);
            refused = out.len() as u64;
            candidates.retain(|(_, c)| !out.contains(&c.mv));
        }
        let mut ranked: Vec<Chosen> = candidates
            .into_iter()
            .map(|(m, c)| {
                let bound = wilson_lower((2 * c.wins + c.draws) as f64 / 2.0, c.games, Z95);
                chosen((m, c), bound, node.prob)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.value
                .total_cmp(&a.value)
                .then(b.count.games.cmp(&a.count.games))
                .then(a.raw.cmp(&b.raw))
        });
        ranked.truncate(options.width);
        let width = ranked.len();
        for (rank, c) in ranked.iter_mut().enumerate() {
            c.weight = (width - rank) as u16;
        }
        let no_move = ranked.is_empty();
        (ranked, refused, no_move)
    } else {
        let total: u64 = legal.iter().map(|(_, c)| c.games).sum();
        let mut replies: Vec<Chosen> = legal
            .into_iter()
            .filter_map(|(m, c)| {
                let share = c.games as f64 / total as f64;
                let prob = node.prob * share;
                (prob >= options.min_prob).then(|| chosen((m, c), share, prob))
            })
            .collect();
        replies.sort_by(|a, b| b.count.games.cmp(&a.count.games).then(a.raw.cmp(&b.raw)));
        let most = replies.iter().map(|c| c.count.games).max().unwrap_or(0);
        for c in &mut replies {
            c.weight = reply_weight(c.count.games, most);
        }
        (replies, 0, false)
    }
}

/// A reply's weight: its games, scaled so the position's most played reply fits in 16 bits
/// (`games × 65535 / most`, at least 1) when it would not.
pub fn reply_weight(games: u64, most: u64) -> u16 {
    if most <= u64::from(u16::MAX) {
        games as u16
    } else {
        (u128::from(games) * u128::from(u16::MAX) / u128::from(most)).max(1) as u16
    }
}

impl Repertoire {
    /// The book's entries (unsorted): my chosen moves weighted by rank (with `width` N, the best
    /// N, the next N − 1, …, 1), the replies by games.
    pub fn entries(&self) -> Vec<Entry> {
        self.nodes
            .iter()
            .flat_map(|n| {
                n.moves.iter().map(move |c| Entry {
                    key: Key(n.key),
                    mv: c.raw,
                    weight: c.weight,
                    learn: 0,
                })
            })
            .collect()
    }

    /// Whether position `node` is mine to move.
    fn mine(&self, node: &Node) -> bool {
        Some(node.pos.turn()) == self.color
    }

    /// The summary's numbers.
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            refused: self.refused,
            ..Summary::default()
        };
        for n in &self.nodes {
            if !n.moves.is_empty() {
                s.positions += 1;
                if self.mine(n) {
                    s.my_positions += 1;
                    s.my_moves += n.moves.len() as u64;
                } else {
                    s.replies += n.moves.len() as u64;
                }
            }
            if n.no_move {
                s.ends_early += 1;
            }
            if n.parent.is_some() {
                s.depth = s.depth.max(n.ply);
            }
        }
        s.main_line = self
            .main_line()
            .into_iter()
            .map(|(node, c)| SanPlus::from_move(self.nodes[node].pos.clone(), c.mv).to_string())
            .collect();
        s
    }

    /// The most likely line: from the start, the first move of each position (my best move; the
    /// opponent's most frequent reply), as long as the position after it is settled by this line
    /// (not a transposition into a line written elsewhere).
    pub fn main_line(&self) -> Vec<(usize, &Chosen)> {
        let mut line = Vec::new();
        let mut at = 0;
        while let Some(first) = self.nodes.get(at).and_then(|n| n.moves.first()) {
            line.push((at, first));
            if self.nodes[first.child].parent != Some((at, first.raw)) {
                break;
            }
            at = first.child;
        }
        line
    }

    /// Writes the repertoire as one PGN game with variations (`player`, if not empty, named as
    /// my side): the main line is the most likely
    /// line, each position's other moves are variations, in the order of [`Node::moves`]. A
    /// position reached again by transposition is written once, under its most likely line;
    /// elsewhere its move carries the comment `{transposes}` and the variation stops. Comments
    /// give each of my moves its games, score and bound, each reply its share and the line's
    /// probability.
    pub fn write_pgn(&self, name: &str, player: &str, out: &mut dyn Write) -> io::Result<()> {
        let tag = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"");
        let me = if player.is_empty() {
            "?".to_string()
        } else {
            tag(player)
        };
        let (white, black) = match self.color {
            Some(Color::White) => (me, "?".to_string()),
            _ => ("?".to_string(), me),
        };
        for (t, value) in [
            ("Event", "polybook repertoire".to_string()),
            ("Site", "?".into()),
            ("Date", "????.??.??".into()),
            ("Round", "-".into()),
            ("White", white),
            ("Black", black),
            ("Result", "*".into()),
            ("Annotator", tag(name)),
        ] {
            writeln!(out, "[{t} \"{value}\"]")?;
        }
        writeln!(out)?;
        let mut tokens = Vec::new();
        if !self.nodes.is_empty() {
            self.write_node(0, &mut tokens);
        }
        tokens.push("*".to_string());
        write_movetext(&tokens, out)
    }

    /// The movetext from position `at` on.
    fn write_node(&self, at: usize, tokens: &mut Vec<String>) {
        let node = &self.nodes[at];
        let Some((first, rest)) = node.moves.split_first() else {
            return;
        };
        self.write_move(node, first, tokens);
        for other in rest {
            tokens.push("(".to_string());
            self.write_move(node, other, tokens);
            self.write_after(at, other, tokens);
            tokens.push(")".to_string());
        }
        self.write_after(at, first, tokens);
    }

    /// The line after move `c` of position `at`: its subtree, or `{transposes}`.
    fn write_after(&self, at: usize, c: &Chosen, tokens: &mut Vec<String>) {
        if self.nodes[c.child].parent == Some((at, c.raw)) {
            self.write_node(c.child, tokens);
        } else {
            tokens.push("{transposes}".to_string());
        }
    }

    /// One move with its number (`1.`, or `1...` for Black's: every move follows a comment or
    /// a variation's start) and its comment.
    fn write_move(&self, node: &Node, c: &Chosen, tokens: &mut Vec<String>) {
        let n = node.ply / 2 + 1;
        let san = SanPlus::from_move(node.pos.clone(), c.mv).to_string();
        tokens.push(match node.pos.turn() {
            Color::White => format!("{n}."),
            Color::Black => format!("{n}..."),
        });
        tokens.push(san);
        let comment = if self.mine(node) {
            format!(
                "{{{} games, score {:.1}%, bound {:.1}%}}",
                c.count.games,
                c.count.score() * 100.0,
                c.value * 100.0
            )
        } else {
            format!(
                "{{{} games, {:.1}% here, line {:.2}%}}",
                c.count.games,
                c.value * 100.0,
                c.prob * 100.0
            )
        };
        tokens.push(comment);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    /// A position's moves as `(uci, games, wins, draws)` for the mover.
    type Moves = &'static [(&'static str, u64, u64, u64)];

    /// The counts of positions, each reached by its line (UCI moves from the start).
    fn counts(positions: &[(&[&str], Moves)]) -> Counts {
        let mut map = HashMap::new();
        for (line, moves) in positions {
            let mut pos = Chess::default();
            for uci in *line {
                let mv = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(mv);
            }
            let list = moves
                .iter()
                .map(|&(uci, games, wins, draws)| {
                    let mv = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
                    MoveCount {
                        mv: RawMove::from_move(mv).unwrap(),
                        games,
                        wins,
                        draws,
                        losses: games - wins - draws,
                    }
                })
                .collect();
            map.insert(Key::of(&pos).0, list);
        }
        Counts::Games(map)
    }

    fn options(min_games: u64, min_prob: f64) -> RepertoireOptions {
        RepertoireOptions {
            color: Color::White,
            min_games,
            width: 1,
            min_prob,
            max_ply: 30,
        }
    }

    /// The repertoire's moves as `uci weight` after the lines that reach them.
    fn moves(rep: &Repertoire) -> Vec<String> {
        let mut out: Vec<String> = rep
            .nodes
            .iter()
            .flat_map(|n| {
                n.moves
                    .iter()
                    .map(|c| format!("{} {}", UciMove::from_standard(c.mv), c.weight))
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_bound_prefers_more_games_until_min_games_says_otherwise() {
        // 1. e4 scored 60 % in 10 games (bound 0.31), 1. d4 100 % in 3 (bound 0.44).
        let start: Moves = &[("e2e4", 10, 6, 0), ("d2d4", 3, 3, 0)];
        let after_e4: Moves = &[("e7e5", 6, 2, 2), ("c7c5", 3, 1, 0), ("a7a6", 1, 0, 0)];
        let mut c = counts(&[(&[], start), (&["e2e4"], after_e4)]);
        let rep = build_repertoire(&mut c, &options(3, 0.2), None).unwrap();
        assert_eq!(moves(&rep), ["d2d4 1"]);
        // With 5 games required, 1. e4; of the replies, a6 (10 % of the games) is below 20 %.
        let rep = build_repertoire(&mut c, &options(5, 0.2), None).unwrap();
        assert_eq!(moves(&rep), ["c7c5 3", "e2e4 1", "e7e5 6"]);
        let summary = rep.summary();
        assert_eq!(
            (summary.my_moves, summary.replies, summary.depth),
            (1, 2, 2)
        );
        assert_eq!(summary.main_line, ["e4", "e5"]);
    }

    #[test]
    fn a_transposition_is_expanded_once_with_its_most_likely_line() {
        // 1. Nf3 d5 2. d4 Nf6 and 1. Nf3 Nf6 2. d4 d5 reach one position: the second order is
        // the more likely (40 % against 60 % × 50 %), so 3. c4 is written under it once, and the
        // first order's 2... Nf6 ends with {transposes}.
        let m = |list: Moves| list;
        let mut c = counts(&[
            (&[], m(&[("g1f3", 9, 5, 0)])),
            (&["g1f3"], m(&[("d7d5", 6, 3, 0), ("g8f6", 4, 2, 0)])),
            (&["g1f3", "d7d5"], m(&[("d2d4", 6, 3, 0)])),
            (&["g1f3", "g8f6"], m(&[("d2d4", 6, 3, 0)])),
            (
                &["g1f3", "d7d5", "d2d4"],
                m(&[("g8f6", 5, 2, 0), ("c8g4", 5, 2, 0)]),
            ),
            (&["g1f3", "g8f6", "d2d4"], m(&[("d7d5", 4, 2, 0)])),
            (&["g1f3", "g8f6", "d2d4", "d7d5"], m(&[("c2c4", 6, 3, 0)])),
        ]);
        let rep = build_repertoire(&mut c, &options(5, 0.0), None).unwrap();
        let keys: std::collections::HashSet<u64> = rep.nodes.iter().map(|n| n.key).collect();
        assert_eq!(keys.len(), rep.nodes.len(), "a position twice");
        assert_eq!(
            moves(&rep).iter().filter(|m| m.starts_with("c2c4")).count(),
            1
        );
        let mut pgn = Vec::new();
        rep.write_pgn("t.bin", "", &mut pgn).unwrap();
        let pgn = String::from_utf8(pgn).unwrap();
        let pgn = pgn.split_whitespace().collect::<Vec<_>>().join(" ");
        // The main line: the most played replies, ties to the lower move code (Bg4 before Nf6).
        assert!(pgn.contains("1. Nf3 {9 games, score 55.6%"), "{pgn}");
        assert!(pgn.contains("2... Bg4 {5 games, 50.0% here, line 30.00%} ( 2... Nf6 {5 games, 50.0% here, line 30.00%} {transposes} )"), "{pgn}");
        assert!(
            pgn.contains("( 1... Nf6 {4 games, 40.0% here, line 40.00%} 2. d4"),
            "{pgn}"
        );
        assert_eq!(pgn.matches("3. c4").count(), 1, "{pgn}");
        assert_eq!(rep.summary().main_line, ["Nf3", "d5", "d4", "Bg4"]);
    }
}
