//! Learning from games (`polybook learn`): the book's learn fields updated from PGN, as PolyGlot's
//! `BookLearn` updates them after each game it plays (the encoding: [`crate::book::Learn`]).
//!
//! Each finished game (result `1-0`, `0-1` or `1/2-1/2`; others are skipped and counted) is played
//! from its start position (its `[FEN]` when it has one) with the same reader that builds books.
//! Every move of the learning side that the book has in that position records the game's result
//! from that side's view: the side whose player is `--player`, or the `--color`, or without
//! either both sides. Moves the book does not have are passed over, as PolyGlot does.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use shakmaty::Color;

use super::game::BLACK_MOVED;
use super::parse::parse_chunk;
use super::{BuildError, GameFilter, PlayerFilter, Reason};
use crate::book::{Book, Key, Learn, LearnResult, Learner, RawMove};
use crate::pgn::input::{Chunks, Input};

/// Whose moves learn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LearnOptions {
    /// Only the moves of this player: of a side whose `White` or `Black` tag is any of these
    /// names (in any case; one person's several accounts). Empty: any player.
    pub player: Vec<String>,
    /// Only the moves of this colour (with `player`: the games in which the player had it).
    pub color: Option<Color>,
}

/// One entry whose learn field changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LearnedMove {
    /// The position's key, in hexadecimal.
    pub key: String,
    /// The move as the book stores it (`e1h1` for White's short castling).
    pub uci: String,
    /// The learn value before and after, as `{games, score_sum}`.
    pub before: Learn,
    pub after: Learn,
}

/// What learning from the games did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LearnReport {
    /// Games in the input.
    pub games_read: u64,
    /// Games played through (finished, standard chess, with the player when `--player`).
    pub games_used: u64,
    /// Games skipped because their result is unknown (`*` or none).
    pub unfinished: u64,
    /// Games skipped for any other reason (a variant, a broken FEN, not the player's game...).
    pub skipped: u64,
    /// Moves of the learning side that were in the book (each updated one learn field).
    pub moves_learned: u64,
    /// Moves of the learning side that were not in the book.
    pub moves_not_in_book: u64,
    /// The changed entries, in the book's order.
    pub changed: Vec<LearnedMove>,
}

/// Updates `book`'s learn fields from the games of `inputs` and writes the result to `out`
/// (which may be the book's own path: it was read whole, and the new one appears atomically).
/// Nothing is written when reading the games fails.
pub fn learn_from_games(
    book: &Book,
    inputs: &[Input],
    options: &LearnOptions,
    out: &Path,
) -> Result<LearnReport, BuildError> {
    let filter = GameFilter {
        skip_unknown_results: true,
        player: (!options.player.is_empty()).then(|| PlayerFilter {
            names: options.player.clone(),
            color: options.color,
            both_sides: false,
        }),
        ..GameFilter::default()
    };
    let mut learner = Learner::new(book);
    let mut report = LearnReport::default();
    for input in inputs {
        let read_error = |e: std::io::Error| BuildError::Input(input.read_error(&e));
        let mut chunks =
            Chunks::open(input, Arc::new(AtomicU64::new(0)), 1 << 20).map_err(read_error)?;
        while let Some(chunk) = chunks.next_chunk().map_err(read_error)? {
            let parsed = parse_chunk(&chunk, &filter);
            report.games_read += parsed.games;
            report.games_used += parsed.used;
            for incident in &parsed.incidents {
                match incident.reason {
                    Reason::UnknownResult => report.unfinished += 1,
                    reason if !reason.truncates() => report.skipped += 1,
                    _ => {}
                }
            }
            for ply in &parsed.plies {
                let colour = if ply.mv & BLACK_MOVED != 0 {
                    Color::Black
                } else {
                    Color::White
                };
                if options.color.is_some_and(|c| c != colour) {
                    continue;
                }
                let Some(result) = LearnResult::from_points(ply.points) else {
                    continue;
                };
                let mv = RawMove(ply.mv & !BLACK_MOVED);
                if learner.record(Key(ply.key), mv, result) {
                    report.moves_learned += 1;
                } else {
                    report.moves_not_in_book += 1;
                }
            }
        }
    }
    learner.write(out)?;
    report.changed = learner
        .changes()
        .map(|c| LearnedMove {
            key: c.before.key.to_string(),
            uci: c.before.mv.to_string(),
            before: Learn::from_raw(c.before.learn),
            after: c.after,
        })
        .collect();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::{ENTRY_SIZE, Entry};
    use shakmaty::{Chess, Position};

    /// A book of the start position's e2e4 and d2d4, and 1. e4's c7c5, in a temporary file.
    fn book(dir: &Path) -> Book {
        let start = Chess::default();
        let mut after_e4 = start.clone();
        after_e4.play_unchecked(
            shakmaty::uci::UciMove::from_ascii(b"e2e4")
                .unwrap()
                .to_move(&start)
                .unwrap(),
        );
        let mut entries = vec![
            (Key::of(&start), "e2e4"),
            (Key::of(&start), "d2d4"),
            (Key::of(&after_e4), "c7c5"),
        ]
        .into_iter()
        .map(|(key, uci)| Entry::from_uci(key, uci, 1).unwrap())
        .collect::<Vec<_>>();
        let path = dir.join("book.bin");
        crate::book::write_book(&path, &mut entries).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            3 * ENTRY_SIZE as u64
        );
        Book::open(&path).unwrap()
    }

    #[test]
    fn each_side_learns_its_result() {
        let dir = tempfile::tempdir().unwrap();
        let book = book(dir.path());
        let pgn = dir.path().join("games.pgn");
        std::fs::write(
            &pgn,
            "[Result \"0-1\"]\n\n1. e4 c5 0-1\n\n[Result \"*\"]\n\n1. d4 *\n",
        )
        .unwrap();
        let out = dir.path().join("out.bin");
        let report = learn_from_games(
            &book,
            &[Input::File(pgn.clone())],
            &LearnOptions::default(),
            &out,
        )
        .unwrap();
        assert_eq!((report.games_read, report.games_used), (2, 1));
        assert_eq!(report.unfinished, 1);
        assert_eq!(report.moves_learned, 2);
        let learned = Book::open(&out).unwrap();
        let raw: Vec<u32> = learned.entries().map(|e| e.learn).collect();
        // e2e4 lost (1 game, 0 points), c7c5 won (1 game, 2 points), d2d4 untouched.
        let e4 = learned
            .entries()
            .position(|e| e.mv == RawMove::from_uci_str("e2e4").unwrap())
            .unwrap();
        let c5 = learned
            .entries()
            .position(|e| e.mv == RawMove::from_uci_str("c7c5").unwrap())
            .unwrap();
        assert_eq!(raw[e4], 0x0001_0000);
        assert_eq!(raw[c5], 0x0001_0002);
        assert_eq!(raw.iter().filter(|&&r| r == 0).count(), 1);
        // Only Black's moves.
        let black = LearnOptions {
            color: Some(Color::Black),
            ..Default::default()
        };
        let report = learn_from_games(&book, &[Input::File(pgn)], &black, &out).unwrap();
        assert_eq!(report.moves_learned, 1);
        assert_eq!(report.changed[0].uci, "c7c5");
    }
}
