//! `polybook probe`: the book moves of one position, or of every position in an EPD file.
//!
//! With several books, each book's moves are shown in turn (in the order given), each under a
//! header naming the book; with `--json`, one object per book per position, with a `book` field
//! first. With one book the output is the same as it always was (no header, no `book` field).

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use clap::ArgGroup;
use polybook::book::{Book, Books, ChooseOptions, Probe};
use polybook::diagram::diagram;
use polybook::position::{EpdLine, parse_fen_and_normalize};
use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use super::output::write_error;
use super::position::PositionArgs;
use super::{CliError, CliResult, open_book};

#[derive(clap::Args)]
#[command(group(ArgGroup::new("what").args(["epd"]).conflicts_with_all(["fen", "moves"])))]
pub struct Args {
    /// The Polyglot book (.bin); several books are shown one after the other.
    #[arg(required = true, value_name = "BOOK")]
    books: Vec<PathBuf>,
    #[command(flatten)]
    position: PositionArgs,
    /// Probe every position of a file: one FEN or EPD a line (EPD operations are ignored; blank
    /// lines and lines starting with # are skipped).
    #[arg(long, value_name = "FILE")]
    epd: Option<PathBuf>,
    /// Print JSON: one object for a position, one object a line (JSON Lines) with --epd. With
    /// several books, one object per book per position, its `book` field naming the book.
    #[arg(long)]
    json: bool,
    /// Leave out the board diagram.
    #[arg(long)]
    no_board: bool,
}

/// One book's moves of one position, as `--json` prints them when there are several books: the
/// book's name, then the fields of [`ProbeJson`].
#[derive(Serialize)]
struct BookProbeJson<'a> {
    book: &'a str,
    #[serde(flatten)]
    probe: ProbeJson,
}

/// One position's book moves, as `--json` prints them.
#[derive(Serialize)]
struct ProbeJson {
    fen: String,
    key: String,
    entries: Vec<EntryJson>,
    illegal: Vec<IllegalJson>,
}

#[derive(Serialize)]
struct EntryJson {
    uci: String,
    san: String,
    raw: String,
    weight: u16,
    learn: u32,
    share: f64,
}

#[derive(Serialize)]
struct IllegalJson {
    raw: String,
    weight: u16,
    learn: u32,
}

pub fn run(args: Args) -> CliResult {
    // Each book is opened before anything is printed: a missing one ends the command.
    let mut books = Books::new();
    for path in &args.books {
        books.push(path.display().to_string(), open_book(path)?);
    }
    let stdout = io::stdout();
    // Large buffers: `--epd` writes megabytes, and each flush is a system call (and, into a pipe,
    // a wake-up of the reader).
    let mut out = BufWriter::with_capacity(IO_BUFFER, stdout.lock());
    let result = match &args.epd {
        Some(path) => probe_epd(&books, path, &args, &mut out),
        None => {
            let pos = args.position.position()?;
            print_books(&books, &pos, &args, !args.no_board, &mut out).map_err(write_error)
        }
    };
    out.flush().map_err(write_error)?;
    result
}

/// The size of the input and output buffers.
const IO_BUFFER: usize = 64 * 1024;

/// Probes each position of an EPD file. A line that is not a position is reported on stderr with
/// its number (and, with --json, as `{"line": N, "error": "..."}` so that output lines stay aligned
/// with input positions); the rest are still probed, and the exit code says that something failed.
fn probe_epd(books: &Books, path: &PathBuf, args: &Args, out: &mut impl Write) -> CliResult {
    let file = File::open(path).map_err(|e| super::file_error("open EPD file", path, &e))?;
    let mut reader = BufReader::with_capacity(IO_BUFFER, file);
    // One buffer for every input line and one for every JSON line, reused.
    let (mut bytes, mut json, mut fen) = (Vec::new(), Vec::new(), String::new());
    let mut bad = 0usize;
    let mut number = 0usize;
    loop {
        bytes.clear();
        let read = reader.read_until(b'\n', &mut bytes);
        number += 1;
        let read = read.map_err(|e| CliError::data(format!("{}:{number}: {e}", path.display())))?;
        if read == 0 {
            break;
        }
        // What `BufRead::lines` gives: the line without its `\n`, and an error if it is not UTF-8.
        let line =
            std::str::from_utf8(bytes.strip_suffix(b"\n").unwrap_or(&bytes)).map_err(|_| {
                CliError::data(format!(
                    "{}:{number}: stream did not contain valid UTF-8",
                    path.display()
                ))
            })?;
        let Some(epd) = EpdLine::parse(line) else {
            continue;
        };
        fen.clear();
        match parse_fen_and_normalize(epd.fen, &mut fen) {
            Ok(pos) if args.json => {
                for (name, book) in books.iter() {
                    json.clear();
                    if books.len() > 1 {
                        // `{"book":NAME,` and the rest of the object.
                        json.extend_from_slice(b"{\"book\":");
                        serde_json::to_writer(&mut json, name)
                            .expect("writing to a Vec cannot fail");
                        json.push(b',');
                    }
                    let start = json.len();
                    json_line(&fen, &pos, &book.probe(&pos), &mut json);
                    if books.len() > 1 {
                        json.remove(start);
                    }
                    out.write_all(&json).map_err(write_error)?;
                }
            }
            Ok(pos) => print_books(books, &pos, args, false, out).map_err(write_error)?,
            Err(e) => {
                bad += 1;
                eprintln!("polybook: error: {}:{number}: {e}", path.display());
                if args.json {
                    let obj = serde_json::json!({ "line": number, "error": e.to_string() });
                    writeln!(out, "{obj}").map_err(write_error)?;
                }
            }
        }
    }
    if bad > 0 {
        return Err(CliError::data(format!(
            "{}: {bad} line(s) were not positions",
            path.display()
        )));
    }
    Ok(())
}

// The strings of the JSON output, built into buffers of the right size: `probe --epd` prints
// thousands of positions, and growing strings a character at a time showed up as a third of its time.

fn fen_string(pos: &Chess) -> String {
    let mut s = String::with_capacity(96);
    Fen::from_position(pos, EnPassantMode::Legal).append_to_string(&mut s);
    s
}

fn uci_string(m: Move) -> String {
    let mut s = String::with_capacity(5);
    m.to_uci(CastlingMode::Standard).append_to_string(&mut s);
    s
}

/// SAN with `+` or `#`.
fn san_string(pos: &Chess, m: Move) -> String {
    let mut s = String::with_capacity(8);
    San::from_move(pos, m).append_to_string(&mut s);
    if let Some(suffix) = check_suffix(pos, m) {
        s.push(char::from(suffix));
    }
    s
}

/// `+` or `#` if the move gives check; mate is looked for only after a check, where it can be.
fn check_suffix(pos: &Chess, m: Move) -> Option<u8> {
    let mut after = pos.clone();
    after.play_unchecked(m);
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

fn to_json(pos: &Chess, probe: &Probe) -> ProbeJson {
    ProbeJson {
        fen: fen_string(pos),
        key: probe.key.to_string(),
        entries: probe
            .legal
            .iter()
            .zip(shares(probe))
            .map(|(m, share)| EntryJson {
                uci: uci_string(m.mv),
                san: san_string(pos, m.mv),
                raw: m.entry.mv.to_string(),
                weight: m.entry.weight,
                learn: m.entry.learn,
                share,
            })
            .collect(),
        illegal: probe
            .illegal
            .iter()
            .map(|e| IllegalJson {
                raw: e.mv.to_string(),
                weight: e.weight,
                learn: e.learn,
            })
            .collect(),
    }
}

/// One position as a compact JSON line, written directly into `buf`: the same text `serde_json`
/// writes for [`to_json`]'s object, without the strings of that object or `format!`'s machinery.
/// `probe --epd` prints thousands of these.
///
/// No string needs escaping: `fen` is a FEN as [`parse_fen_and_normalize`] writes it (piece
/// letters, digits, `/`, `-` and spaces), and moves and keys are letters and digits.
fn json_line(fen: &str, pos: &Chess, probe: &Probe, buf: &mut Vec<u8>) {
    debug_assert!(!fen.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
    let shares = shares(probe);
    buf.extend_from_slice(b"{\"fen\":\"");
    buf.extend_from_slice(fen.as_bytes());
    buf.extend_from_slice(b"\",\"key\":\"");
    push_hex16(buf, probe.key.0);
    buf.extend_from_slice(b"\",\"entries\":[");
    for (i, m) in probe.legal.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"uci\":\"");
        m.mv.to_uci(CastlingMode::Standard).append_ascii_to(buf);
        buf.extend_from_slice(b"\",\"san\":\"");
        push_san(buf, pos, m.mv);
        buf.extend_from_slice(b"\",\"raw\":\"");
        m.entry.mv.append_ascii_to(buf);
        buf.extend_from_slice(b"\",\"weight\":");
        push_u32(buf, u32::from(m.entry.weight));
        buf.extend_from_slice(b",\"learn\":");
        push_u32(buf, m.entry.learn);
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
        buf.extend_from_slice(b",\"learn\":");
        push_u32(buf, e.learn);
        buf.push(b'}');
    }
    buf.extend_from_slice(b"]}\n");
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
fn push_san(buf: &mut Vec<u8>, pos: &Chess, m: Move) {
    San::from_move(pos, m).append_ascii_to(buf);
    if let Some(suffix) = check_suffix(pos, m) {
        buf.push(suffix);
    }
}

/// Prints `pos`'s moves in each book: the board (if `board`) once, then each book's moves, under
/// a header naming the book when there are several.
fn print_books(
    books: &Books,
    pos: &Chess,
    args: &Args,
    board: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    if board && !args.json {
        write!(out, "{}", diagram(pos, false))?;
        writeln!(out)?;
    }
    for (i, (name, book)) in books.iter().enumerate() {
        let name = (books.len() > 1).then_some(name);
        if name.is_some() && i > 0 && !args.json && args.epd.is_none() {
            writeln!(out)?;
        }
        print_position(book, name, pos, args, out)?;
    }
    Ok(())
}

/// Prints `pos`'s moves in `book`; `name` (with several books) is printed first.
fn print_position(
    book: &Book,
    name: Option<&str>,
    pos: &Chess,
    args: &Args,
    out: &mut impl Write,
) -> io::Result<()> {
    let probe = book.probe(pos);
    let json = to_json(pos, &probe);
    if args.json {
        // One compact line, as with --epd: `jq` and line-based tools read it as it is.
        match name {
            Some(book) => serde_json::to_writer(&mut *out, &BookProbeJson { book, probe: json })?,
            None => serde_json::to_writer(&mut *out, &json)?,
        }
        return writeln!(out);
    }
    if let Some(name) = name {
        writeln!(out, "book {name}")?;
    }
    writeln!(out, "FEN  {}", json.fen)?;
    writeln!(out, "key  {}   {} to move", json.key, pos.turn())?;
    if json.entries.is_empty() {
        writeln!(out, "no book moves")?;
    } else {
        writeln!(
            out,
            "{:<9} {:<6} {:>6} {:>7} {:>10}",
            "move", "uci", "weight", "share", "learn"
        )?;
        for e in &json.entries {
            writeln!(
                out,
                "{:<9} {:<6} {:>6} {:>6.1}% {:>10}",
                e.san,
                e.uci,
                e.weight,
                e.share * 100.0,
                e.learn
            )?;
        }
        let moves = json.entries.len();
        let total: u64 = json.entries.iter().map(|e| u64::from(e.weight)).sum();
        writeln!(
            out,
            "{moves} move{}, total weight {total}",
            if moves == 1 { "" } else { "s" }
        )?;
    }
    if !json.illegal.is_empty() {
        writeln!(
            out,
            "{} entr{} under this key {} not legal here (a key collision or a broken book):",
            json.illegal.len(),
            if json.illegal.len() == 1 { "y" } else { "ies" },
            if json.illegal.len() == 1 { "is" } else { "are" }
        )?;
        for e in &json.illegal {
            writeln!(
                out,
                "  raw {:<8} weight {:>6} learn {:>10}",
                e.raw, e.weight, e.learn
            )?;
        }
    }
    if args.epd.is_some() {
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod json_tests {
    use super::*;
    use polybook::book::{Entry, Key, RawMove};
    use polybook::position::parse_fen;

    #[test]
    fn the_direct_json_line_is_what_serde_writes() {
        // Legal and illegal entries, castling, promotions with check and mate, an ill-formed code,
        // zero and extreme weights.
        // (FEN, entries as (move, weight, learn))
        type Case<'a> = (&'a str, &'a [(&'a str, u16, u32)]);
        let cases: [Case; 4] = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                &[("e2e4", 7, 3), ("e1h1", 9, 0), ("g1f3", 65535, u32::MAX)],
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
            let mut direct = Vec::new();
            json_line(&fen_string(pos), pos, &probe, &mut direct);
            let serde = serde_json::to_string(&to_json(pos, &probe)).unwrap() + "\n";
            assert_eq!(String::from_utf8(direct).unwrap(), serde);
        }
    }
}
