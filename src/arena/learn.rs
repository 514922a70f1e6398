//! Book learning after a match game (`match --book-learn`): the opening's book moves learn the
//! game's result, in the book files they came from.
//!
//! In a match both sides play the book moves of the opening, so each book move learns for the
//! side that played it: a move White played learns the result from White's view, a move Black
//! played from Black's (PolyGlot's `BookLearn` learns the moves its own engine played, the same
//! rule for one side). With several books, each move learns in the book that gave it, the first
//! in order with a move that counts there ([`Books::first_with_move`], the rule of the walk).
//!
//! The book files are read again before each update, so the games of a match add up; the books
//! the openings are walked in stay as they were when the match started.

use std::path::PathBuf;

use shakmaty::{Chess, KnownOutcome, Move, Position};

use crate::book::{Book, BookError, Books, ChooseOptions, Key, LearnResult, Learner, RawMove};

/// The learn fields changed in one book by one game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BookUpdate {
    /// The book's index among the books.
    pub book: usize,
    /// Learn fields updated (a move played twice in the opening counts twice).
    pub moves: usize,
}

/// Records `outcome` for each book move of an opening (`moves` played from `start`) in the book
/// file it came from (`paths[i]` is the file of `books`'s book `i`), and writes each book that
/// learned, atomically. A move that no book has (the walk's books changed since) is passed over.
pub fn learn_opening(
    books: &Books,
    paths: &[PathBuf],
    options: &ChooseOptions,
    start: &Chess,
    moves: &[Move],
    outcome: KnownOutcome,
) -> Result<Vec<BookUpdate>, BookError> {
    // (book, key, move, result) of every book move, in order.
    let mut plies = Vec::new();
    let mut pos = start.clone();
    for &m in moves {
        if let (Some(book), Some(raw)) =
            (books.first_with_move(&pos, options), RawMove::from_move(m))
        {
            let result = LearnResult::for_side(outcome, pos.turn());
            plies.push((book, Key::of(&pos), raw, result));
        }
        pos.play_unchecked(m);
    }
    let mut updates = Vec::new();
    for (index, path) in paths.iter().enumerate().take(books.len()) {
        let mine: Vec<_> = plies.iter().filter(|p| p.0 == index).collect();
        if mine.is_empty() {
            continue;
        }
        let book = Book::open(path)?;
        let mut learner = Learner::new(&book);
        let learned = mine
            .iter()
            .filter(|&&&(_, key, raw, result)| learner.record(key, raw, result))
            .count();
        if learned > 0 {
            learner.write(path)?;
            updates.push(BookUpdate {
                book: index,
                moves: learned,
            });
        }
    }
    Ok(updates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::{Entry, Learn, write_book};
    use shakmaty::Color;
    use shakmaty::uci::UciMove;

    fn mv(pos: &Chess, uci: &str) -> Move {
        UciMove::from_ascii(uci.as_bytes())
            .unwrap()
            .to_move(pos)
            .unwrap()
    }

    #[test]
    fn each_move_learns_for_its_side_in_the_book_that_gave_it() {
        let dir = tempfile::tempdir().unwrap();
        let start = Chess::default();
        let e4 = mv(&start, "e2e4");
        let mut after = start.clone();
        after.play_unchecked(e4);
        let c5 = mv(&after, "c7c5");
        // The first book has 1. e4, the second 1. e4 and 1... c5: e4 learns in the first only.
        let entry = |pos: &Chess, m: Move| Entry {
            key: Key::of(pos),
            mv: RawMove::from_move(m).unwrap(),
            weight: 1,
            learn: 0,
        };
        let paths = [dir.path().join("a.bin"), dir.path().join("b.bin")];
        write_book(&paths[0], &mut [entry(&start, e4)]).unwrap();
        write_book(&paths[1], &mut [entry(&start, e4), entry(&after, c5)]).unwrap();
        let mut books = Books::new();
        for p in &paths {
            books.push(p.display().to_string(), Book::open(p).unwrap());
        }
        let white_won = KnownOutcome::Decisive {
            winner: Color::White,
        };
        let options = ChooseOptions::default();
        for _ in 0..2 {
            let updates =
                learn_opening(&books, &paths, &options, &start, &[e4, c5], white_won).unwrap();
            assert_eq!(
                updates,
                [
                    BookUpdate { book: 0, moves: 1 },
                    BookUpdate { book: 1, moves: 1 }
                ]
            );
        }
        let learn = |path: &PathBuf| -> Vec<Learn> {
            Book::open(path)
                .unwrap()
                .entries()
                .map(|e| Learn::from_raw(e.learn))
                .collect()
        };
        // Two games: e4 won twice (in a.bin), c5 lost twice (in b.bin); b.bin's e4 untouched.
        assert_eq!(
            learn(&paths[0]),
            [Learn {
                games: 2,
                score_sum: 4
            }]
        );
        let b = learn(&paths[1]);
        assert!(
            b.contains(&Learn {
                games: 2,
                score_sum: 0
            }),
            "{b:?}"
        );
        assert!(b.contains(&Learn::default()), "{b:?}");
    }
}
