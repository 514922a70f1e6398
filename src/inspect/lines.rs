//! The lines of a book for one colour, walked the way `polyglot dump-book` and `polyglot info-book`
//! walk them.
//!
//! From the start position, the chosen side plays each of its book moves (entries with a non-zero
//! weight whose move is legal, in stored order) and the other side each legal move, in polyglot's
//! move-generation order, after which the chosen side still has a book move. A line ends when the
//! chosen side has no book move left, when a position repeats one earlier on the same line (a
//! cycle), or when a position was already reached by an earlier line (a transposition: polyglot
//! recognises positions by key). Each line is numbered; book moves carry their share of the weight
//! of the book moves of their position, rounded to a whole percent as C's `printf("%.0f")` rounds.
//!
//! Two quirks of polyglot are kept on purpose, so that the output and the counts are the same:
//! an entry whose move is 0 (polyglot's "no move") that comes first under its key hides the key's
//! other moves, and it marks the position as already seen. `info-book` removes such entries before
//! its walk for black (but not before the walk for white); `dump-book` never does.
//!
//! A book whose keys are not sorted is walked as the book a stable sort by key would make of it:
//! every entry under a key is found, in stored order. (polyglot binary-searches such a book and
//! misses the entries that stand out of order, so its dump of it depends on where they stand.)

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use shakmaty::san::SanPlus;
use shakmaty::{Color, Move, Position};

use super::polyglot_order::OrderedPosition;
use crate::book::{Book, Entry, Key, RawMove};
use crate::openings::Openings;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// The chosen side plays its book moves.
    Book,
    /// The other side plays any legal move after which the chosen side has a book move.
    Any,
}

impl Turn {
    fn other(self) -> Turn {
        match self {
            Turn::Book => Turn::Any,
            Turn::Any => Turn::Book,
        }
    }
}

/// A position on the current line whose moves are being tried.
struct Frame {
    turn: Turn,
    position: OrderedPosition,
    children: Vec<(Move, f64)>,
    next: usize,
    lines: u64,
}

enum Entered {
    /// The line ended here (cycle or transposition) and was counted.
    Ended(u64),
    Open(Box<Frame>),
}

/// What a walk found: the number of lines and the keys of the positions where the chosen side was
/// to move and the book had an entry.
pub(crate) struct WalkResult {
    pub lines: u64,
    pub book_positions: HashSet<u64>,
}

pub(crate) struct Walk<'a> {
    book: &'a Book,
    /// Treat entries with move 0 as absent (polyglot's `book_clean`).
    cleaned: bool,
    color: Color,
    out: Option<&'a mut dyn Write>,
    /// The number the next line gets.
    line: u64,
    /// Positions already reached: key → (line number then, ply).
    seen: HashMap<u64, (u64, usize)>,
    /// The keys of the positions on the current line, from the start position on.
    path_keys: Vec<u64>,
    /// The current line as printed, and where each move's text starts in it.
    text: String,
    marks: Vec<usize>,
    book_positions: HashSet<u64>,
    /// Where each key's entries are in a sorted book. A walk looks up many positions that are not
    /// in the book. An unsorted book is searched by [`Book::lookup`], which finds every entry.
    index: Option<KeyIndex>,
    /// End each printed line with its opening's name (`lines --openings`).
    names: bool,
    /// The key of the position entered last: a line's last position when the line ends.
    last_entered: u64,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(
        book: &'a Book,
        color: Color,
        cleaned: bool,
        out: Option<&'a mut dyn Write>,
    ) -> Walk<'a> {
        Walk {
            book,
            cleaned,
            color,
            out,
            line: 1,
            seen: HashMap::new(),
            path_keys: Vec::new(),
            text: String::new(),
            marks: Vec::new(),
            book_positions: HashSet::new(),
            index: book.is_sorted().then(|| KeyIndex::new(book)),
            names: false,
            last_entered: 0,
        }
    }

    /// The entries stored under a key, in stored order.
    fn entries(&self, key: u64) -> impl Iterator<Item = Entry> + '_ {
        let book = self.book;
        let first = self
            .index
            .as_ref()
            .map_or(book.len(), |ix| ix.first(book, key));
        let unsorted = self.index.is_none().then(|| book.lookup(Key(key)));
        (first..book.len())
            .map(move |i| book.entry(i))
            .take_while(move |e| e.key.0 == key)
            .chain(unsorted.into_iter().flatten())
    }

    /// Walks every line from the start position, writing them if an output was given.
    pub(crate) fn run(mut self) -> io::Result<WalkResult> {
        let root_turn = if self.color == Color::White {
            Turn::Book
        } else {
            Turn::Any
        };
        let mut stack: Vec<Box<Frame>> = Vec::new();
        if let Entered::Open(frame) = self.enter(OrderedPosition::start(), root_turn)? {
            stack.push(frame);
        }
        while let Some(top) = stack.last_mut() {
            if top.next < top.children.len() {
                let (m, share) = top.children[top.next];
                top.next += 1;
                let turn = top.turn;
                let child = top.position.play(m);
                self.push_move(&top.position, m, share);
                match self.enter(child, turn.other())? {
                    Entered::Ended(lines) => {
                        let parent = stack.last_mut().expect("a frame is open");
                        self.child_done(parent, lines)?;
                    }
                    Entered::Open(frame) => stack.push(frame),
                }
            } else {
                let done = stack.pop().expect("a frame is open");
                self.path_keys.pop();
                if let Some(parent) = stack.last_mut() {
                    self.child_done(parent, done.lines)?;
                }
            }
        }
        Ok(WalkResult {
            lines: self.line - 1,
            book_positions: self.book_positions,
        })
    }

    fn child_done(&mut self, parent: &mut Frame, mut lines: u64) -> io::Result<()> {
        if lines == 0 && parent.turn == Turn::Book {
            // The book move ends the line.
            self.end_line("")?;
            lines = 1;
        }
        self.pop_move();
        parent.lines += lines;
        Ok(())
    }

    fn enter(&mut self, position: OrderedPosition, turn: Turn) -> io::Result<Entered> {
        let key = position.key.0;
        self.last_entered = key;
        let ply = self.path_keys.len();
        if let Some(earlier) = self.path_keys.iter().position(|&k| k == key) {
            self.end_line(&format!("{{cycle: ply={earlier}}}"))?;
            return Ok(Entered::Ended(1));
        }
        let seen = self.seen.get(&key).copied().or_else(|| {
            // An entry with move 0 under the key looks like polyglot's own "seen" marker; its
            // line and ply are whatever memory held (printed as 0).
            (!self.cleaned && self.entries(key).any(|e| e.mv.0 == 0)).then_some((0, 0))
        });
        if let Some((line, at)) = seen {
            self.end_line(&format!("{{trans: line={line}, ply={at}}}"))?;
            return Ok(Entered::Ended(1));
        }
        self.seen.insert(key, (self.line, ply));
        self.path_keys.push(key);
        let children = match turn {
            Turn::Book => match self.book_moves(&position) {
                None => Vec::new(),
                Some(moves) => {
                    self.book_positions.insert(key);
                    let total: u64 = moves.iter().map(|&(_, w)| u64::from(w)).sum();
                    moves
                        .into_iter()
                        .map(|(m, w)| (m, f64::from(w) / total as f64))
                        .collect()
                }
            },
            Turn::Any => position
                .legal_moves_in_order()
                .into_iter()
                .filter(|&m| {
                    self.book_moves(&position.play(m))
                        .is_some_and(|moves| !moves.is_empty())
                })
                .map(|m| (m, 0.0))
                .collect(),
        };
        Ok(Entered::Open(Box::new(Frame {
            turn,
            position,
            children,
            next: 0,
            lines: 0,
        })))
    }

    /// The book moves of a position as polyglot's `gen_book_moves` finds them: `None` when the key
    /// is not in the book (or its first entry has move 0), else the legal moves of the entries with
    /// a non-zero weight, in stored order, with their weights.
    fn book_moves(&self, position: &OrderedPosition) -> Option<Vec<(Move, u16)>> {
        let mut entries = self
            .entries(position.key.0)
            .filter(|e| !self.cleaned || e.mv.0 != 0)
            .peekable();
        if entries.peek()?.mv.0 == 0 {
            return None;
        }
        let mut legal: Option<Vec<(RawMove, Move)>> = None;
        let mut moves = Vec::new();
        for e in entries {
            if e.weight == 0 || e.mv.0 == 0 {
                continue;
            }
            let legal = legal.get_or_insert_with(|| {
                position
                    .pos
                    .legal_moves()
                    .into_iter()
                    .filter_map(|m| RawMove::from_move(m).map(|r| (r, m)))
                    .collect()
            });
            if let Some(&(_, m)) = legal.iter().find(|(r, _)| *r == e.mv) {
                moves.push((m, e.weight));
            }
        }
        Some(moves)
    }

    fn push_move(&mut self, position: &OrderedPosition, m: Move, share: f64) {
        use std::fmt::Write as _;
        self.marks.push(self.text.len());
        let ply = self.marks.len() - 1;
        if ply.is_multiple_of(2) {
            let _ = write!(self.text, "{}. ", ply / 2 + 1);
        }
        let _ = write!(self.text, "{}", SanPlus::from_move(position.pos.clone(), m));
        let mover = if ply.is_multiple_of(2) {
            Color::White
        } else {
            Color::Black
        };
        if mover == self.color {
            let _ = write!(self.text, "{{{:.0}%}} ", 100.0 * share);
        } else {
            self.text.push(' ');
        }
    }

    fn pop_move(&mut self) {
        if let Some(mark) = self.marks.pop() {
            self.text.truncate(mark);
        }
    }

    fn end_line(&mut self, suffix: &str) -> io::Result<()> {
        if let Some(out) = self.out.as_mut() {
            write!(out, "{}: {}{}", self.line, self.text, suffix)?;
            if self.names {
                // The positions before the line's last one, then that one.
                let keys = self.path_keys.iter().chain([&self.last_entered]);
                if let Some(opening) = Openings::bundled().line(keys.map(|&k| Key(k))) {
                    let space = if suffix.is_empty() { "" } else { " " };
                    write!(out, "{space}{{{opening}}}")?;
                }
            }
            writeln!(out)?;
        }
        self.line += 1;
        Ok(())
    }
}

/// A directory of a sorted book by the leading bits of the key: for each prefix, the index of the
/// first entry with that prefix or a larger one. Zobrist keys are spread evenly, so a bucket holds a
/// few entries next to each other and a lookup touches one or two cache lines of the book, where a
/// search over the whole file would touch many (most positions a walk looks up are not in the
/// book). It costs about one byte per entry of the book.
struct KeyIndex {
    shift: u32,
    starts: Vec<usize>,
}

impl KeyIndex {
    fn new(book: &Book) -> KeyIndex {
        // About eight entries per bucket (two cache lines of the book, one binary search among
        // them), which keeps the directory small enough to stay in the processor's cache.
        let bits = (usize::BITS - (book.len() / 8).max(2).leading_zeros() - 1).clamp(1, 32);
        let shift = 64 - bits;
        let buckets = 1usize << bits;
        let mut starts = Vec::with_capacity(buckets + 1);
        for (i, e) in book.entries().enumerate() {
            let bucket = (e.key.0 >> shift) as usize;
            while starts.len() <= bucket {
                starts.push(i);
            }
        }
        starts.resize(buckets + 1, book.len());
        KeyIndex { shift, starts }
    }

    /// The index of the first entry whose key is `key` or larger (a binary search within the key's
    /// bucket, so even a book of skewed keys costs no more than O(log n)).
    fn first(&self, book: &Book, key: u64) -> usize {
        let bucket = (key >> self.shift) as usize;
        let (mut lo, mut hi) = (self.starts[bucket], self.starts[bucket + 1]);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if book.entry(mid).key.0 < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Writes the lines of `book` for `color` exactly as `polyglot dump-book -bin NAME -color COLOR`
/// writes them into its output file, `name` being the book's name in the first line. Returns the
/// number of lines.
pub fn write_lines(book: &Book, name: &str, color: Color, out: &mut dyn Write) -> io::Result<u64> {
    write_walk(book, name, color, false, out)
}

/// [`write_lines`] with each line's opening at its end, `{ECO Name}` ([`crate::openings`]: the last
/// named position of the line).
pub fn write_named_lines(
    book: &Book,
    name: &str,
    color: Color,
    out: &mut dyn Write,
) -> io::Result<u64> {
    write_walk(book, name, color, true, out)
}

fn write_walk(
    book: &Book,
    name: &str,
    color: Color,
    names: bool,
    out: &mut dyn Write,
) -> io::Result<u64> {
    writeln!(
        out,
        "Dump of \"{name}\" for {}.",
        if color == Color::White {
            "white"
        } else {
            "black"
        }
    )?;
    let mut walk = Walk::new(book, color, false, Some(out));
    walk.names = names;
    Ok(walk.run()?.lines)
}
