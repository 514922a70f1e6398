//! One position's book moves as data: the object `probe --json` prints, and the same object
//! written directly into a buffer, fast, for `probe --epd --json`'s thousands of lines.
//!
//! Each legal entry has its move in UCI and SAN (with `+`/`#`), its raw Polyglot code, weight,
//! learn value (raw, and decoded as PolyGlot's `BookLearn` writes it: games and score, see
//! [`Learn`]) and share (by the book's one share rule, [`ChooseOptions::shares`]); entries under
//! the key that are not legal in the position are listed apart. The position and each move carry
//! their opening's name ([`crate::openings`]): the line's name, and the name the line has after the
//! move.

use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use crate::book::{ChooseOptions, Key, Learn, LearnLayout, MoveScore, Probe};
use crate::openings::{LineName, Opening, OpeningJson};

/// One book's moves of one position, as `--json` prints them when there are several books: the
/// book's name, then the fields of [`ProbeJson`].
#[derive(Serialize)]
pub struct BookProbeJson<'a> {
    pub book: &'a str,
    #[serde(flatten)]
    pub probe: ProbeJson,
}

/// One position's book moves, as `--json` prints them.
#[derive(Serialize)]
pub struct ProbeJson {
    pub fen: String,
    pub key: String,
    /// The opening's ECO code and name (lichess's table): of the line that led here, or of the
    /// position alone when no moves were given; null when the table names none of it.
    #[serde(flatten)]
    pub name: OpeningJson,
    pub entries: Vec<EntryJson>,
    pub illegal: Vec<IllegalJson>,
}

#[derive(Serialize)]
pub struct EntryJson {
    pub uci: String,
    pub san: String,
    /// The opening of the line with this move played: the name of the position it leads to, or
    /// the line's name when the table does not name that position.
    #[serde(flatten)]
    pub name: OpeningJson,
    pub raw: String,
    pub weight: u16,
    pub learn: u32,
    /// The games learned with the move (the learn field's high 16 bits); absent in a scored book,
    /// whose learn fields hold scores instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learn_games: Option<u16>,
    /// Their score from 0 to 1 ([`Learn::score`]); `Some(None)` (null) before the first game;
    /// absent in a scored book.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learn_score: Option<Option<f64>>,
    pub share: f64,
    /// In a scored book (ProDeo's learn layout, `polybook analyse`): the move's score in
    /// centipawns from the mover's view (mates beyond ±31000) and its depth; absent otherwise,
    /// and for a move without a score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<i16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u8>,
}

#[derive(Serialize)]
pub struct IllegalJson {
    pub raw: String,
    pub weight: u16,
    pub learn: u32,
    pub learn_games: u16,
    pub learn_score: Option<f64>,
}

// The strings of the JSON output, built into buffers of the right size: `probe --epd` prints
// thousands of positions, and growing strings a character at a time showed up as a third of its time.

pub fn fen_string(pos: &Chess) -> String {
    let mut s = String::with_capacity(96);
    Fen::from_position(pos, EnPassantMode::Legal).append_to_string(&mut s);
    s
}

fn uci_string(m: Move) -> String {
    let mut s = String::with_capacity(5);
    m.to_uci(CastlingMode::Standard).append_to_string(&mut s);
    s
}

/// SAN with `+` or `#` (`after`: the position the move leads to).
fn san_string(pos: &Chess, m: Move, after: &Chess) -> String {
    let mut s = String::with_capacity(8);
    San::from_move(pos, m).append_to_string(&mut s);
    if let Some(suffix) = check_suffix(after) {
        s.push(char::from(suffix));
    }
    s
}

/// `+` or `#` if the move that led to `after` gives check; mate is looked for only after a check,
/// where it can be.
fn check_suffix(after: &Chess) -> Option<u8> {
    after.is_check().then(|| {
        if after.legal_moves().is_empty() {
            b'#'
        } else {
            b'+'
        }
    })
}

/// Each legal entry's share, by the book's one share rule with python-chess's defaults (minimum
/// weight 1, nothing excluded): weight / total weight, 0 when every weight is 0.
fn shares(probe: &Probe) -> Vec<f64> {
    ChooseOptions::default().shares(&probe.legal)
}

/// The position after `m`, and the opening of the line `line` (which ends in `pos`, whose key is
/// `key`) with `m` played. The new key is `key` updated by what the move changed.
fn after_move(pos: &Chess, key: Key, m: Move, line: &LineName) -> (Chess, Option<Opening>) {
    let mut after = pos.clone();
    after.play_unchecked(m);
    let opening = line.after(key.after(pos, m, &after));
    (after, opening)
}

/// One position's moves as `probe --json` prints them; `line` is the line that led to `pos` (for
/// the opening's name), with `pos` pushed last.
pub fn probe_json(pos: &Chess, probe: &Probe, line: &LineName) -> ProbeJson {
    let named = line.name();
    ProbeJson {
        fen: fen_string(pos),
        key: probe.key.to_string(),
        name: named.into(),
        entries: probe
            .legal
            .iter()
            .zip(shares(probe))
            .map(|(m, share)| {
                let (after, opening) = after_move(pos, probe.key, m.mv, line);
                EntryJson {
                    uci: uci_string(m.mv),
                    san: san_string(pos, m.mv, &after),
                    name: opening.into(),
                    raw: m.entry.mv.to_string(),
                    weight: m.entry.weight,
                    learn: m.entry.learn,
                    learn_games: Some(Learn::from_raw(m.entry.learn).games),
                    learn_score: Some(Learn::from_raw(m.entry.learn).score()),
                    share,
                    score: None,
                    depth: None,
                }
            })
            .collect(),
        illegal: probe
            .illegal
            .iter()
            .map(|e| IllegalJson {
                raw: e.mv.to_string(),
                weight: e.weight,
                learn: e.learn,
                learn_games: Learn::from_raw(e.learn).games,
                learn_score: Learn::from_raw(e.learn).score(),
            })
            .collect(),
    }
}

/// [`probe_json`] with each move's score and depth, instead of PolyGlot's learn statistics, when
/// the book's learn fields are read in ProDeo's layout.
pub fn probe_json_in(
    pos: &Chess,
    probe: &Probe,
    line: &LineName,
    layout: LearnLayout,
) -> ProbeJson {
    let mut json = probe_json(pos, probe, line);
    if layout == LearnLayout::Scored {
        for (e, m) in json.entries.iter_mut().zip(&probe.legal) {
            e.learn_games = None;
            e.learn_score = None;
            if let Some(s) = MoveScore::from_learn(m.entry.learn) {
                e.score = Some(s.score);
                e.depth = Some(s.depth);
            }
        }
    }
    json
}

/// One position as a compact JSON line, written directly into `buf`: the same text `serde_json`
/// writes for [`probe_json`]'s object, without the strings of that object or `format!`'s machinery.
/// `probe --epd` prints thousands of these.
///
/// No string needs escaping: `fen` is a FEN as [`parse_fen_and_normalize`](crate::position::parse_fen_and_normalize) writes it (piece
/// letters, digits, `/`, `-` and spaces), and moves and keys are letters and digits.
pub fn write_probe_json_line(
    fen: &str,
    pos: &Chess,
    probe: &Probe,
    line: &LineName,
    buf: &mut Vec<u8>,
) {
    debug_assert!(!fen.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
    let shares = shares(probe);
    buf.extend_from_slice(b"{\"fen\":\"");
    buf.extend_from_slice(fen.as_bytes());
    buf.extend_from_slice(b"\",\"key\":\"");
    push_hex16(buf, probe.key.0);
    buf.push(b'"');
    push_opening(buf, line.name());
    buf.extend_from_slice(b",\"entries\":[");
    for (i, m) in probe.legal.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"uci\":\"");
        m.mv.to_uci(CastlingMode::Standard).append_ascii_to(buf);
        buf.extend_from_slice(b"\",\"san\":\"");
        let (after, opening) = after_move(pos, probe.key, m.mv, line);
        push_san(buf, pos, m.mv, &after);
        buf.push(b'"');
        push_opening(buf, opening);
        buf.extend_from_slice(b",\"raw\":\"");
        m.entry.mv.append_ascii_to(buf);
        buf.extend_from_slice(b"\",\"weight\":");
        push_u32(buf, u32::from(m.entry.weight));
        push_learn(buf, m.entry.learn);
        buf.extend_from_slice(b",\"share\":");
        serde_json::to_writer(&mut *buf, &shares[i]).expect("writing to a Vec cannot fail");
        buf.push(b'}');
    }
    buf.extend_from_slice(b"],\"illegal\":[");
    for (i, e) in probe.illegal.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"raw\":\"");
        e.mv.append_ascii_to(buf);
        buf.extend_from_slice(b"\",\"weight\":");
        push_u32(buf, u32::from(e.weight));
        push_learn(buf, e.learn);
        buf.push(b'}');
    }
    buf.extend_from_slice(b"]}\n");
}

/// The `eco` and `opening` fields, each after a comma. The table's names need no escaping in JSON
/// (no quote, backslash or control character: a test of [`crate::openings`] checks), so they are
/// written as they are, as `serde_json` writes them.
fn push_opening(buf: &mut Vec<u8>, opening: Option<Opening>) {
    match opening {
        Some(o) => {
            buf.extend_from_slice(b",\"eco\":\"");
            buf.extend_from_slice(o.eco.as_bytes());
            buf.extend_from_slice(b"\",\"opening\":\"");
            buf.extend_from_slice(o.name.as_bytes());
            buf.push(b'"');
        }
        None => buf.extend_from_slice(b",\"eco\":null,\"opening\":null"),
    }
}

/// The `learn`, `learn_games` and `learn_score` fields, each after a comma.
fn push_learn(buf: &mut Vec<u8>, raw: u32) {
    let learn = Learn::from_raw(raw);
    buf.extend_from_slice(b",\"learn\":");
    push_u32(buf, raw);
    buf.extend_from_slice(b",\"learn_games\":");
    push_u32(buf, u32::from(learn.games));
    buf.extend_from_slice(b",\"learn_score\":");
    serde_json::to_writer(&mut *buf, &learn.score()).expect("writing to a Vec cannot fail");
}

/// A key as 16 lowercase hex digits.
fn push_hex16(buf: &mut Vec<u8>, key: u64) {
    buf.extend(
        (0..16)
            .rev()
            .map(|i| b"0123456789abcdef"[(key >> (4 * i)) as usize & 0xf]),
    );
}

/// A number in decimal.
fn push_u32(buf: &mut Vec<u8>, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// SAN with `+` or `#`, as [`san_string`] writes it.
fn push_san(buf: &mut Vec<u8>, pos: &Chess, m: Move, after: &Chess) {
    San::from_move(pos, m).append_ascii_to(buf);
    if let Some(suffix) = check_suffix(after) {
        buf.push(suffix);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::{Book, Entry, Key, RawMove};
    use crate::position::parse_fen;

    #[test]
    fn the_direct_json_line_is_what_serde_writes() {
        // Legal and illegal entries, castling, promotions with check and mate, an ill-formed code,
        // zero and extreme weights; moves to named openings (names with `'`, `:` and `,`).
        // (FEN, entries as (move, weight, learn))
        type Case<'a> = (&'a str, &'a [(&'a str, u16, u32)]);
        let cases: [Case; 4] = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                &[
                    ("e2e4", 7, 3),
                    ("e1h1", 9, 0),
                    ("g1f3", 65535, u32::MAX),
                    ("d2d4", 1, 0x000c_000e),
                ],
            ),
            (
                "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
                &[("e1h1", 5, 0), ("e1a1", 4, 0), ("a1a8", 2, 1)],
            ),
            (
                "k7/4P3/1K6/8/8/8/8/8 w - - 0 1",
                &[("e7e8q", 3, 0), ("e7e8r", 1, 0), ("e7e8n", 1, 0)],
            ),
            (
                "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
                &[("e1e2", 0, 0), ("e1d1", 0, 0)],
            ),
        ];
        let mut entries = Vec::new();
        let positions: Vec<Chess> = cases
            .iter()
            .map(|(fen, moves)| {
                let pos = parse_fen(fen).unwrap();
                for &(uci, weight, learn) in *moves {
                    let mv = RawMove::from_uci_str(uci).unwrap();
                    entries.push(Entry {
                        key: Key::of(&pos),
                        mv,
                        weight,
                        learn,
                    });
                }
                entries.push(Entry {
                    key: Key::of(&pos),
                    mv: RawMove(0x8000),
                    weight: 1,
                    learn: 2,
                });
                pos
            })
            .collect();
        entries.sort_by_key(|e| e.key);
        let bytes = entries.iter().flat_map(|e| e.to_bytes()).collect();
        let book = Book::from_bytes("test.bin", bytes).unwrap();
        for pos in &positions {
            let probe = book.probe(pos);
            let mut line = LineName::new();
            line.push(Key::of(pos));
            let mut direct = Vec::new();
            write_probe_json_line(&fen_string(pos), pos, &probe, &line, &mut direct);
            let serde = serde_json::to_string(&probe_json(pos, &probe, &line)).unwrap() + "\n";
            assert_eq!(String::from_utf8(direct).unwrap(), serde);
        }
    }
}
