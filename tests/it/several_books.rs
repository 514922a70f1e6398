//! Several books, first hit wins: the engine's `BookFile` list, `probe` and `match` with several
//! books. Two small books with different moves for the same positions; python-chess's
//! `chess.polyglot` confirms where each move comes from.

use crate::common;
use common::path_str as s;
use common::position_after as after;

use std::path::{Path, PathBuf};

use polybook::book::{Entry, Key, write_book};
use shakmaty::Chess;

use common::{polybook, polybook_match, polybook_match_ok, python, stderr, stdout};

use common::{bestmoves, uci_session as session};

/// Writes a book of `(moves to the position, move, weight)` rows.
fn book(path: &Path, rows: &[(&[&str], &str, u16)]) {
    let mut entries: Vec<Entry> = rows
        .iter()
        .map(|&(moves, mv, weight)| Entry::from_uci(Key::of(&after(moves)), mv, weight).unwrap())
        .collect();
    write_book(path, &mut entries).unwrap();
}

/// Two books: `first` knows only 1.e4 at the start; `second` knows 1.d4 there and 1...c5 after
/// 1.e4.
fn two_books(dir: &Path) -> (PathBuf, PathBuf) {
    let (first, second) = (dir.join("first.bin"), dir.join("second.bin"));
    book(&first, &[(&[], "e2e4", 5)]);
    book(&second, &[(&[], "d2d4", 7), (&["e2e4"], "c7c5", 3)]);
    (first, second)
}

/// The moves python-chess's `chess.polyglot` finds in `book` after `moves`, in UCI.
fn python_moves(book: &Path, moves: &[&str]) -> Vec<String> {
    let script = "import sys, chess, chess.polyglot\n\
        board = chess.Board()\n\
        for m in sys.argv[2:]: board.push_uci(m)\n\
        with chess.polyglot.open_reader(sys.argv[1]) as r:\n\
        \x20   print(' '.join(e.move.uci() for e in r.find_all(board)))\n";
    let mut args = vec![s(book)];
    args.extend_from_slice(moves);
    python(script, &args)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_engine_plays_from_the_first_book_with_a_move() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = two_books(dir.path());
    let (a, b) = (first.display(), second.display());
    let out = session(&format!(
        "setoption name BookFile value  {a} ; ;{b} \n\
         position startpos\ngo depth 1 wtime 60000 btime 60000\n\
         position startpos moves e2e4\ngo depth 1 wtime 60000 btime 60000\n"
    ));
    assert_eq!(bestmoves(&out), ["e2e4", "c7c5"], "{out}");
    common::assert_contains(&out, &format!("info string book {a} (1 entries)"));
    common::assert_contains(&out, &format!("info string book {b} (2 entries)"));
    // The first book has 1.e4; the second's 1.d4 is not looked at.
    common::assert_contains(
        &out,
        &format!("info string book move e2e4 weight 5 share 100.0% from {a}\n"),
    );
    // After 1.e4 the first book has nothing: the second book's move, which python-chess finds
    // there (and not in the first book).
    common::assert_contains(
        &out,
        &format!("info string book move c7c5 weight 3 share 100.0% from {b}\n"),
    );
    assert_eq!(python_moves(&second, &["e2e4"]), ["c7c5"]);
    assert!(python_moves(&first, &["e2e4"]).is_empty());

    // The other order: the second book comes first at the start.
    let out = session(&format!(
        "setoption name BookFile value {b};{a}\nposition startpos\ngo depth 1 wtime 60000 btime 60000\n"
    ));
    assert_eq!(bestmoves(&out), ["d2d4"], "{out}");
    common::assert_contains(&out, &format!("share 100.0% from {b}\n"));
    assert_eq!(python_moves(&second, &[]), ["d2d4"]);
}

#[test]
fn a_missing_book_in_the_list_is_named_and_the_others_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = two_books(dir.path());
    let missing = dir.path().join("missing.bin");
    let out = session(&format!(
        "setoption name BookFile value {};{};{}\n\
         position startpos\ngo depth 1 wtime 60000 btime 60000\nposition startpos moves e2e4\ngo depth 1 wtime 60000 btime 60000\n",
        first.display(),
        missing.display(),
        second.display()
    ));
    let complaints = common::lines_starting(&out, "info string cannot use BookFile");
    assert_eq!(complaints.len(), 1, "{out}");
    assert!(
        complaints[0].contains(&missing.display().to_string())
            && complaints[0].ends_with("; playing without this book"),
        "{out}"
    );
    assert_eq!(bestmoves(&out), ["e2e4", "c7c5"], "{out}");

    // Every book missing: searched, as with one missing book.
    let out = session(&format!(
        "setoption name BookFile value {0};{0}\nposition startpos\ngo depth 2\n",
        missing.display()
    ));
    assert_eq!(
        common::lines_starting(&out, "info string cannot use BookFile").len(),
        2,
        "{out}"
    );
    assert!(
        !out.contains("book move") && out.contains("info depth 2 "),
        "{out}"
    );
}

#[test]
fn probe_shows_each_book_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = two_books(dir.path());
    let (a, b) = (s(&first), s(&second));
    let out = polybook(&["probe", a, b, "--no-board"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    assert_eq!(
        stdout(&out),
        format!(
            "book {a}\n\
             FEN  {start}\n\
             key  463b96181691fc9c   white to move\n\
             move      uci    weight   share      learn  opening\n\
             e4        e2e4        5  100.0%          -  B00 King's Pawn Game\n\
             1 move, total weight 5\n\
             \n\
             book {b}\n\
             FEN  {start}\n\
             key  463b96181691fc9c   white to move\n\
             move      uci    weight   share      learn  opening\n\
             d4        d2d4        7  100.0%          -  A40 Queen's Pawn Game\n\
             1 move, total weight 7\n"
        )
    );
    // Each book's part is what `probe` prints for that book alone.
    for book in [a, b] {
        let alone = stdout(&polybook(&["probe", book, "--no-board"]));
        assert!(stdout(&out).contains(&alone), "{alone}");
    }
}

#[test]
fn probe_json_with_several_books_is_one_object_per_book() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = two_books(dir.path());
    let (a, b) = (s(&first), s(&second));
    // What one book prints, with `"book":NAME` in front.
    let with_name = |book: &str, line: &str| {
        format!(
            "{{\"book\":{},{}",
            serde_json::to_string(book).unwrap(),
            &line[1..]
        )
    };
    let alone = |book: &str, extra: &[&str]| {
        let mut args = vec!["probe", book, "--json"];
        args.extend_from_slice(extra);
        let out = polybook(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let out = polybook(&["probe", a, b, "--json", "--moves", "e2e4"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (one_a, one_b) = (
        alone(a, &["--moves", "e2e4"]),
        alone(b, &["--moves", "e2e4"]),
    );
    assert_eq!(
        stdout(&out),
        with_name(a, &one_a) + &with_name(b, &one_b),
        "{}",
        stdout(&out)
    );
    // The second book's move after 1.e4, as python-chess reads it.
    let objects: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objects[0]["entries"].as_array().unwrap().len(), 0);
    assert_eq!(objects[1]["book"], b);
    assert_eq!(
        vec![objects[1]["entries"][0]["uci"].as_str().unwrap()],
        python_moves(&second, &["e2e4"])
    );

    // --epd: for each position, one line per book, in the books' order.
    let epd = common::write_file(
        dir.path(),
        "two.epd",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n\
         rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n",
    );
    let epd = s(&epd);
    let out = polybook(&["probe", a, b, "--json", "--epd", epd]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (a_lines, b_lines) = (alone(a, &["--epd", epd]), alone(b, &["--epd", epd]));
    let expected: String = a_lines
        .lines()
        .zip(b_lines.lines())
        .map(|(x, y)| with_name(a, x) + "\n" + &with_name(b, y) + "\n")
        .collect();
    assert_eq!(stdout(&out), expected);
}

#[test]
fn a_missing_book_in_a_list_ends_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _) = two_books(dir.path());
    let missing = dir.path().join("missing.bin");
    let out = polybook(&["probe", s(&first), s(&missing)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        format!(
            "polybook: error: cannot open book '{}': No such file or directory\n",
            missing.display()
        )
    );
    let out = polybook_match(
        &["builtin", "builtin"],
        &["--book", s(&first), "--book", s(&missing)],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "polybook: error: cannot open book '{}': No such file or directory\n",
            missing.display()
        )
    );
}

#[test]
fn match_openings_walk_the_books_first_hit_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = two_books(dir.path());
    // The library's walk: 1.e4 from the first book, 1...c5 from the second.
    let mut books = polybook::book::Books::new();
    for path in [&first, &second] {
        let book = polybook::book::Book::open(path).unwrap();
        books.push(path.display().to_string(), book);
    }
    let options = polybook::book::ChooseOptions::default();
    let walk = polybook::arena::opening::book_walk(
        &books,
        &Chess::default(),
        8,
        &options,
        &mut rand::rng(),
    );
    let walk: Vec<String> = walk
        .iter()
        .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
        .collect();
    assert_eq!(walk, ["e2e4", "c7c5"]);

    // `match --book A --book B`: every game opens 1.e4 c5 from the books (against a random
    // mover, so that the games end soon).
    let random_mover = common::fake_engine("random", 0);
    let pgn = dir.path().join("m.pgn");
    polybook_match_ok(
        &["builtin:Hash=8", &random_mover],
        &[
            "--depth",
            "2",
            "--games",
            "2",
            "--book",
            s(&first),
            "--book",
            s(&second),
            "--pgn",
            s(&pgn),
            "--quiet",
        ],
    );
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(
        text.matches("\n1. e4 {book} c5 {book} 2. ").count(),
        2,
        "{text}"
    );
}
