//! `polybook probe`: the book moves of one position, or of every position in an EPD file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use clap::ArgGroup;
use polybook::book::{Book, Probe};
use polybook::position::parse_fen;
use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use super::board::diagram;
use super::position::parse_position;
use super::{CliError, CliResult, open_book};

#[derive(clap::Args)]
#[command(group(ArgGroup::new("what").args(["epd"]).conflicts_with_all(["fen", "moves"])))]
pub struct Args {
    /// The Polyglot book (.bin).
    book: PathBuf,
    /// The position, in FEN (default: the start position).
    #[arg(long)]
    fen: Option<String>,
    /// Moves to play first, in SAN or UCI, from the start or from --fen (e.g. "e4 e5 Nf3").
    #[arg(long)]
    moves: Option<String>,
    /// Probe every position of a file: one FEN or EPD a line (EPD operations are ignored; blank
    /// lines and lines starting with # are skipped).
    #[arg(long, value_name = "FILE")]
    epd: Option<PathBuf>,
    /// Print JSON: one object for a position, one object a line (JSON Lines) with --epd.
    #[arg(long)]
    json: bool,
    /// Leave out the board diagram.
    #[arg(long)]
    no_board: bool,
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
    let book = open_book(&args.book)?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = match &args.epd {
        Some(path) => probe_epd(&book, path, &args, &mut out),
        None => {
            let pos = parse_position(args.fen.as_deref(), args.moves.as_deref())?;
            print_position(&book, &pos, &args, !args.no_board, &mut out).map_err(write_error)
        }
    };
    out.flush().map_err(write_error)?;
    result
}

fn write_error(e: io::Error) -> CliError {
    CliError::data(format!("cannot write the output: {e}"))
}

/// Probes each position of an EPD file. A line that is not a position is reported on stderr with
/// its number (and, with --json, as `{"line": N, "error": "..."}` so that output lines stay aligned
/// with input positions); the rest are still probed, and the exit code says that something failed.
fn probe_epd(book: &Book, path: &PathBuf, args: &Args, out: &mut impl Write) -> CliResult {
    let file = File::open(path).map_err(|e| CliError::data(format!("{}: {e}", path.display())))?;
    let mut bad = 0usize;
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|e| CliError::data(format!("{}:{number}: {e}", path.display())))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_fen(position_part(line)) {
            Ok(pos) => print_position(book, &pos, args, false, out).map_err(write_error)?,
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

/// The position part of a FEN or EPD line: six fields when the fifth and sixth are a FEN's move
/// counters, else the four fields an EPD line starts with (its operations follow).
fn position_part(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut field_ends = (1..=bytes.len()).filter(|&i| {
        !bytes[i - 1].is_ascii_whitespace() && (i == bytes.len() || bytes[i].is_ascii_whitespace())
    });
    let fourth = field_ends.nth(3).unwrap_or(bytes.len());
    let sixth = field_ends.nth(1).unwrap_or(bytes.len());
    let counters: Vec<&str> = line[fourth..sixth].split_whitespace().collect();
    if counters.len() == 2 && counters.iter().all(|f| f.parse::<u32>().is_ok()) {
        &line[..sixth]
    } else {
        &line[..fourth]
    }
}

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

/// SAN with `+` or `#`; mate is looked for only after a check, where it can be.
fn san_string(pos: &Chess, m: Move) -> String {
    let mut s = String::with_capacity(8);
    San::from_move(pos, m).append_to_string(&mut s);
    let mut after = pos.clone();
    after.play_unchecked(m);
    if after.is_check() {
        s.push(if after.legal_moves().is_empty() {
            '#'
        } else {
            '+'
        });
    }
    s
}

fn to_json(pos: &Chess, probe: &Probe) -> ProbeJson {
    let total = probe.total_weight();
    ProbeJson {
        fen: fen_string(pos),
        key: probe.key.to_string(),
        entries: probe
            .legal
            .iter()
            .map(|m| EntryJson {
                uci: uci_string(m.mv),
                san: san_string(pos, m.mv),
                raw: m.entry.mv.to_string(),
                weight: m.entry.weight,
                learn: m.entry.learn,
                share: if total == 0 {
                    0.0
                } else {
                    f64::from(m.entry.weight) / total as f64
                },
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

/// One position as a compact JSON object, written directly: the same text `serde_json` would
/// write (and written by it when a string would need escaping), without its per-character work.
/// `probe --epd` prints thousands of these.
fn write_json_line(json: &ProbeJson, out: &mut impl Write) -> io::Result<()> {
    let plain = |t: &str| !t.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
    let all_plain = plain(&json.fen)
        && json
            .entries
            .iter()
            .all(|e| plain(&e.uci) && plain(&e.san) && plain(&e.raw))
        && json.illegal.iter().all(|e| plain(&e.raw));
    if !all_plain {
        return serde_json::to_writer(&mut *out, json).map_err(io::Error::from);
    }
    write!(
        out,
        r#"{{"fen":"{}","key":"{}","entries":["#,
        json.fen, json.key
    )?;
    for (i, e) in json.entries.iter().enumerate() {
        let comma = if i == 0 { "" } else { "," };
        write!(
            out,
            r#"{comma}{{"uci":"{}","san":"{}","raw":"{}","weight":{},"learn":{},"share":{}}}"#,
            e.uci,
            e.san,
            e.raw,
            e.weight,
            e.learn,
            serde_json::Number::from_f64(e.share)
                .map_or_else(|| "0".to_string(), |n| n.to_string())
        )?;
    }
    write!(out, r#"],"illegal":["#)?;
    for (i, e) in json.illegal.iter().enumerate() {
        let comma = if i == 0 { "" } else { "," };
        write!(
            out,
            r#"{comma}{{"raw":"{}","weight":{},"learn":{}}}"#,
            e.raw, e.weight, e.learn
        )?;
    }
    write!(out, "]}}")
}

fn print_position(
    book: &Book,
    pos: &Chess,
    args: &Args,
    board: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let probe = book.probe(pos);
    let json = to_json(pos, &probe);
    if args.json {
        if args.epd.is_some() {
            write_json_line(&json, out)?;
        } else {
            serde_json::to_writer_pretty(&mut *out, &json)?;
        }
        return writeln!(out);
    }
    if board {
        write!(out, "{}", diagram(pos, false))?;
        writeln!(out)?;
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

    #[test]
    fn the_direct_json_line_is_what_serde_writes() {
        let json = ProbeJson {
            fen: "8/8/8/8/8/8/8/K6k w - - 0 1".into(),
            key: "0123456789abcdef".into(),
            entries: vec![
                EntryJson {
                    uci: "e1g1".into(),
                    san: "O-O+".into(),
                    raw: "e1h1".into(),
                    weight: 7,
                    learn: 3,
                    share: 0.7,
                },
                EntryJson {
                    uci: "a7a8q".into(),
                    san: "a8=Q#".into(),
                    raw: "a7a8q".into(),
                    weight: 3,
                    learn: 0,
                    share: 1.0 / 3.0,
                },
            ],
            illegal: vec![IllegalJson {
                raw: "e1a1".into(),
                weight: 1,
                learn: 0,
            }],
        };
        let mut direct = Vec::new();
        write_json_line(&json, &mut direct).unwrap();
        assert_eq!(
            String::from_utf8(direct).unwrap(),
            serde_json::to_string(&json).unwrap()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::position_part;

    #[test]
    fn position_part_of_fen_and_epd_lines() {
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(position_part(fen), fen);
        assert_eq!(position_part(&format!("{fen} ; comment")), fen);
        let epd = "r1b1k2r/pp2qppp/2n5/8/8/8/PP3PPP/R3KB1R w KQkq - bm Qe2; id \"x\";";
        assert_eq!(
            position_part(epd),
            "r1b1k2r/pp2qppp/2n5/8/8/8/PP3PPP/R3KB1R w KQkq -"
        );
        assert_eq!(
            position_part("8/8/8/8/8/8/8/8  w   -  -  hmvc 3;"),
            "8/8/8/8/8/8/8/8  w   -  -"
        );
        assert_eq!(position_part("8/8 w"), "8/8 w");
    }
}
