//! `match --openings`: the openings file and its settings, as polybook writes them (`--openings
//! FILE plies=8`) or as cutechess-cli and fastchess do (`-openings file=FILE format=pgn
//! order=random plies=8 start=3`), read into the lines the match plays, in their order.

use std::path::{Path, PathBuf};

use polybook::arena::opening::{
    OpeningsError, Order, StartLine, arrange, parse_openings, parse_pgn_openings,
};
use polybook::text::quote;

use crate::cli::CliError;

/// The keys `--openings` takes after its file (or with `file=`).
const KEYS: &str = "file, format, order, plies, start, policy";

/// How the openings file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One FEN or EPD a line.
    Epd,
    /// Games, each an opening of its moves.
    Pgn,
}

/// The settings of `--openings`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpeningsSpec {
    pub file: PathBuf,
    /// `None`: from the file's extension (`.pgn` is PGN, anything else EPD).
    pub format: Option<Format>,
    pub order: Order,
    /// The plies of each PGN game taken (`None`: all of them).
    pub plies: Option<usize>,
    /// The opening played first, 1-based (wrapping around past the end).
    pub start: usize,
}

impl OpeningsSpec {
    /// Reads `--openings`'s words: a file and `KEY=VALUE` settings, or `file=FILE` among them.
    pub fn parse(words: &[String]) -> Result<OpeningsSpec, CliError> {
        let all = words.join(" ");
        let bad = |why: String| CliError::usage(format!("--openings {}: {why}", quote(&all)));
        let mut file = None;
        let mut spec = OpeningsSpec {
            file: PathBuf::new(),
            format: None,
            order: Order::Sequential,
            plies: None,
            start: 1,
        };
        let mut seen = Vec::new();
        for word in words {
            let Some((key, value)) = word.split_once('=') else {
                if file.is_some() {
                    return Err(bad(format!(
                        "{} is a second file (one openings file, then {KEYS}=...)",
                        quote(word)
                    )));
                }
                file = Some(PathBuf::from(word));
                continue;
            };
            if seen.contains(&key) || (key == "file" && file.is_some()) {
                return Err(bad(format!("{} is given twice", quote(key))));
            }
            seen.push(key);
            let number = |min: usize| match value.parse::<usize>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(bad(format!(
                    "{key}={}: expected a whole number of at least {min}",
                    quote(value)
                ))),
            };
            match key {
                "file" => file = Some(PathBuf::from(value)),
                "format" => {
                    spec.format = Some(match value.to_ascii_lowercase().as_str() {
                        "epd" | "fen" => Format::Epd,
                        "pgn" => Format::Pgn,
                        _ => {
                            return Err(bad(format!(
                                "format={}: expected epd or pgn",
                                quote(value)
                            )));
                        }
                    })
                }
                "order" => {
                    spec.order = match value.to_ascii_lowercase().as_str() {
                        "sequential" => Order::Sequential,
                        "random" => Order::Random,
                        _ => {
                            return Err(bad(format!(
                                "order={}: expected sequential or random",
                                quote(value)
                            )));
                        }
                    }
                }
                "plies" => spec.plies = Some(number(1)?),
                "start" => spec.start = number(1)?,
                // cutechess's opening shift: every pairing of a tournament plays opening k in its
                // k-th pair of games, which is `round` (and `default` with `-repeat`); in a
                // match of two engines all three policies are the same.
                "policy" => match value.to_ascii_lowercase().as_str() {
                    "default" | "round" => {}
                    "encounter" => {
                        return Err(bad(
                            "policy=encounter: polybook gives every pairing the same openings, in the same order (policy=round)".to_string(),
                        ));
                    }
                    _ => {
                        return Err(bad(format!(
                            "policy={}: expected default, round or encounter",
                            quote(value)
                        )));
                    }
                },
                _ => {
                    return Err(bad(format!(
                        "unknown key {} (the keys are {KEYS}; a file whose name has '=' is given as file=PATH)",
                        quote(key)
                    )));
                }
            }
        }
        spec.file = file.ok_or_else(|| bad("no file (give FILE or file=FILE)".to_string()))?;
        Ok(spec)
    }

    /// The file's format: as given, else from its extension.
    pub fn format(&self) -> Format {
        self.format.unwrap_or_else(|| {
            let pgn = self
                .file
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("pgn"));
            if pgn { Format::Pgn } else { Format::Epd }
        })
    }

    /// The openings of the file, in the order the match plays them (see [`arrange`]).
    pub fn read(&self, seed: u64) -> Result<Vec<StartLine>, CliError> {
        let lines = read_lines(&self.file, self.format(), self.plies)?;
        Ok(arrange(lines, self.order, self.start, seed))
    }
}

/// The openings of the file at `path`, in file order.
fn read_lines(
    path: &Path,
    format: Format,
    plies: Option<usize>,
) -> Result<Vec<StartLine>, CliError> {
    let what = "read openings";
    let lines = match format {
        Format::Epd => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| crate::cli::file_error(what, path, &e))?;
            parse_openings(&text)
        }
        Format::Pgn => {
            let data = std::fs::read(path).map_err(|e| crate::cli::file_error(what, path, &e))?;
            parse_pgn_openings(&data, plies)
        }
    };
    lines.map_err(|e| match e {
        OpeningsError::Empty | OpeningsError::NoGames => {
            CliError::data(format!("{}: {e}", path.display()))
        }
        e => CliError::data(format!("{} {e}", path.display())),
    })
}
