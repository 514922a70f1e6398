//! Test suites: positions with a goal ([`SuiteGoal`]), read from EPD files or from PGN mate puzzles.
//!
//! - EPD: four FEN fields, then operations `opcode operand…;`. `bm` (best moves, SAN), `am`
//!   (moves to avoid), `dm N` (direct mate in N), `id`; matetrack writes `bm #N` (mate in N) and
//!   `bm #-N` (the side to move is mated in N).
//! - PGN puzzles: each game's `[FEN]` is the position, `[Termination "mate in N"]` the task and
//!   the first move of the main line the composer's solution.
//!
//! A line that doesn't parse is reported with its number and skipped; the rest still loads.

use shakmaty::{Chess, Move};
use thiserror::Error;

use super::score::Score;
use super::search::SearchResult;
use crate::position::{EpdLine, parse_fen, parse_move};
use crate::text::quote;

/// What a suite position asks for (its goal): a best move, a move to avoid or a mate. A
/// [`SuiteEntry`] is the position with its goal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SuiteGoal {
    /// Any of these moves solves it.
    pub best: Vec<Move>,
    /// None of these moves may be played.
    pub avoid: Vec<Move>,
    /// A mate in this many moves (negative: the side to move is mated in that many).
    pub mate: Option<i32>,
}

/// One position of a suite.
#[derive(Clone, Debug)]
pub struct SuiteEntry {
    /// The line of the EPD file, or the line where the PGN game starts.
    pub line: usize,
    pub id: Option<String>,
    pub fen: String,
    pub pos: Chess,
    /// What the position asks for.
    pub task: SuiteGoal,
}

/// A line (or game) that was skipped.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("line {line}: {why}")]
pub struct SuiteError {
    pub line: usize,
    pub why: String,
}

/// Splits an EPD operation list into (opcode, operands) pairs, honouring quoted strings.
fn operations(text: &str) -> Vec<(String, Vec<String>)> {
    let mut ops = Vec::new();
    let mut tokens: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_token = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                in_token = true;
            }
            ';' if !quoted => {
                if in_token {
                    tokens.push(std::mem::take(&mut cur));
                    in_token = false;
                }
                if let Some((op, args)) = tokens.split_first() {
                    ops.push((op.clone(), args.to_vec()));
                }
                tokens.clear();
            }
            c if c.is_whitespace() && !quoted => {
                if in_token {
                    tokens.push(std::mem::take(&mut cur));
                    in_token = false;
                }
            }
            c => {
                cur.push(c);
                in_token = true;
            }
        }
    }
    if in_token {
        tokens.push(cur);
    }
    if let Some((op, args)) = tokens.split_first() {
        ops.push((op.clone(), args.to_vec()));
    }
    ops
}

/// Parses one EPD line (`None` for blank lines and `#` comments).
pub fn parse_epd_line(text: &str, line: usize) -> Option<Result<SuiteEntry, SuiteError>> {
    let epd = EpdLine::parse(text)?;
    let err = |why: String| SuiteError { line, why };
    // The position is its four EPD fields (move counters, if the line has them, are not used).
    let fields: Vec<&str> = epd.fields().take(4).collect();
    let rest = epd.operations;
    if fields.len() < 4 {
        return Some(Err(err(format!(
            "expected four FEN fields, found {}",
            fields.len()
        ))));
    }
    let fen = format!("{} 0 1", fields.join(" "));
    let pos = match parse_fen(&fen) {
        Ok(pos) => pos,
        Err(e) => return Some(Err(err(e.to_string()))),
    };
    let mut entry = SuiteEntry {
        line,
        id: None,
        fen: fields.join(" "),
        pos,
        task: SuiteGoal::default(),
    };
    for (op, args) in operations(rest) {
        match op.as_str() {
            "id" => entry.id = args.first().cloned(),
            "dm" => match args.first().and_then(|a| a.parse::<i32>().ok()) {
                Some(n) if n != 0 => entry.task.mate = Some(n),
                _ => {
                    let operand = args.join(" ");
                    return Some(Err(err(format!("bad dm operand {}", quote(&operand)))));
                }
            },
            "bm" | "am" => {
                for a in &args {
                    if let Some(n) = a.strip_prefix('#') {
                        match n.parse::<i32>() {
                            Ok(n) if n != 0 && op == "bm" => entry.task.mate = Some(n),
                            _ => return Some(Err(err(format!("bad mate operand {}", quote(a))))),
                        }
                        continue;
                    }
                    match parse_move(&entry.pos, a) {
                        Ok(m) if op == "bm" => entry.task.best.push(m),
                        Ok(m) => entry.task.avoid.push(m),
                        Err(why) => {
                            return Some(Err(err(format!("{op} move {} is {why}", quote(a)))));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if entry.task == SuiteGoal::default() {
        return Some(Err(err("no bm, am or dm operation".to_string())));
    }
    Some(Ok(entry))
}

/// Parses a whole EPD file: the entries, and the lines that were skipped.
pub fn parse_epd(text: &str) -> (Vec<SuiteEntry>, Vec<SuiteError>) {
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match parse_epd_line(line, i + 1) {
            Some(Ok(e)) => entries.push(e),
            Some(Err(e)) => errors.push(e),
            None => {}
        }
    }
    (entries, errors)
}

/// The value of a PGN tag line `[Name "value"]`, if it is that tag.
fn tag_value<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (tag, value) = inner.split_once(char::is_whitespace)?;
    if !tag.eq_ignore_ascii_case(name) {
        return None;
    }
    Some(value.trim().trim_matches('"'))
}

/// Parses PGN mate puzzles. Each game needs a `[FEN]` tag and a `[Termination "mate in N"]` tag;
/// the first move of its main line is recorded as the composer's solution.
pub fn parse_puzzles(text: &str) -> (Vec<SuiteEntry>, Vec<SuiteError>) {
    struct Game {
        line: usize,
        fen: Option<String>,
        mate: Option<i32>,
        id: Option<String>,
        first_move: Option<String>,
        in_moves: bool,
    }
    let new_game = |line| Game {
        line,
        fen: None,
        mate: None,
        id: None,
        first_move: None,
        in_moves: false,
    };
    let mut games: Vec<Game> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            if games.last().is_none_or(|g| g.in_moves) {
                games.push(new_game(i + 1));
            }
            let Some(g) = games.last_mut() else { continue };
            if let Some(v) = tag_value(line, "FEN") {
                g.fen = Some(v.to_string());
            } else if let Some(v) = tag_value(line, "Termination") {
                g.mate = v
                    .to_ascii_lowercase()
                    .strip_prefix("mate in ")
                    .and_then(|n| n.trim().parse().ok());
            } else if let Some(v) = tag_value(line, "Event") {
                g.id = Some(v.to_string());
            }
            continue;
        }
        let Some(g) = games.last_mut() else { continue };
        g.in_moves = true;
        if g.first_move.is_none() {
            // The first token that is not a move number, comment or result.
            g.first_move = line
                .split_whitespace()
                .map(|t| t.trim_start_matches(|c: char| c.is_ascii_digit()))
                .map(|t| t.trim_start_matches('.'))
                .find(|t| !t.is_empty() && !t.starts_with('{') && !t.starts_with('$'))
                .map(str::to_string);
        }
    }

    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for g in games {
        let err = |why: String| SuiteError { line: g.line, why };
        let Some(fen) = g.fen else {
            errors.push(err("game without a [FEN] tag".to_string()));
            continue;
        };
        let pos = match parse_fen(&fen) {
            Ok(p) => p,
            Err(e) => {
                errors.push(err(e.to_string()));
                continue;
            }
        };
        let Some(mate) = g.mate else {
            errors.push(err("no [Termination \"mate in N\"] tag".to_string()));
            continue;
        };
        let mut task = SuiteGoal {
            mate: Some(mate),
            ..SuiteGoal::default()
        };
        if let Some(m) = g
            .first_move
            .as_deref()
            .and_then(|t| parse_move(&pos, t).ok())
        {
            task.best.push(m);
        }
        entries.push(SuiteEntry {
            line: g.line,
            id: g.id,
            fen,
            pos,
            task,
        });
    }
    (entries, errors)
}

/// Does a search result fulfil the task? A mate task needs a mate of at most that length (for
/// `bm #-N`, being mated in exactly N); otherwise the move must be a best move and not an avoided
/// one.
pub fn is_solved(task: &SuiteGoal, result: &SearchResult) -> bool {
    if let Some(n) = task.mate {
        return match result.score {
            Score::Mate(k) if n > 0 => k > 0 && k <= n,
            Score::Mate(k) => k == n,
            Score::Cp(_) => false,
        };
    }
    let Some(m) = result.best_move else {
        return false;
    };
    (task.best.is_empty() || task.best.contains(&m)) && !task.avoid.contains(&m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epd_operations() {
        let (e, errs) = parse_epd(
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id \"WAC.001\";\n\
             # a comment\n\
             \n\
             8/1k1K4/8/8/6R1/8/8/8 w - - bm #4;\n\
             not a fen at all\n\
             8/8/8/8/8/8/8/8 w - - bm e4;\n\
             4k3/8/8/8/8/8/8/4K2R w K - bm Qh5;\n\
             4k3/8/8/8/8/8/8/4K2R w K - am O-O; dm 3;\n",
        );
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].id.as_deref(), Some("WAC.001"));
        assert_eq!(e[0].task.best.len(), 1);
        assert_eq!(e[1].task.mate, Some(4));
        assert_eq!(e[2].task.avoid.len(), 1);
        assert_eq!(e[2].task.mate, Some(3));
        let lines: Vec<usize> = errs.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![5, 6, 7]);
    }
}
