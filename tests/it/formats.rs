//! Books in other formats read by `polybook::book::formats`, against independent readings.

use polybook::book::formats::ctg;
use shakmaty::CastlingMode;

use crate::common;

/// `simple.ctg` (a ChessBase book of two games, 1.e4 d5 and 1.d4; tests/data/README.md) read by
/// `formats::ctg` gives the positions, moves and counts that `ctg_check.py`, a reading of
/// docs/formats.md's layout with python-chess's moves and keys, finds: the four positions.
#[test]
fn simple_ctg_matches_an_independent_reading() {
    let book = common::data("books/formats/simple.ctg");
    let expected = common::python(include_str!("../ctg_check.py"), &[book.to_str().unwrap()]);
    let positions = ctg::read_ctg(&book).unwrap();
    let mut lines: Vec<String> = positions
        .iter()
        .map(|p| {
            let moves: Vec<String> = p
                .moves
                .iter()
                .map(|m| m.mv.to_uci(CastlingMode::Standard).to_string())
                .collect();
            let moves = if moves.is_empty() {
                "-".to_string()
            } else {
                moves.join(",")
            };
            let s = &p.stats;
            format!(
                "{:016x} {moves} {} {} {} {}",
                p.key.0, s.games, s.wins, s.losses, s.draws
            )
        })
        .collect();
    lines.sort();
    assert_eq!(lines.join("\n") + "\n", expected);
    assert_eq!(positions.len(), 4);
    assert!(expected.contains(" e2e4,d2d4 2 ") && expected.contains(" d7d5 1 "));
}

/// The moves jja 0.9.1 writes for a few positions of `libra8.abk` and `simple.ctg`
/// (`tests/data/books/formats/jja-0.9.1.txt`: its output, with how it was made) are the moves
/// polybook reads there, but for two that libra8 flags deleted: jja keeps a deleted move when it
/// is the first record it meets for its position (docs/formats.md, "Compared with jja"). The
/// weights are not compared: jja's come from the priority alone (65,520 for nearly every libra8
/// move) or, for simple.ctg, are 0.
#[test]
fn the_moves_match_jja_s_conversion_but_for_its_deleted_ones() {
    use polybook::book::Book;

    // (book, position, move): moves jja writes that libra8 flags deleted.
    let deleted_kept_by_jja = [
        ("libra8.abk", "-", "g2g3"),
        ("libra8.abk", "e2e4,c7c5,g1f3", "g7g6"),
    ];
    let table = std::fs::read_to_string(common::data("books/formats/jja-0.9.1.txt")).unwrap();
    let mut compared = 0;
    let mut dropped = 0;
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split(' ').collect();
        let (book, line_moves) = (fields[0], fields[1]);
        let jja_moves = &fields[2..fields.len() - 1];
        let moves: Vec<&str> = line_moves.split(',').filter(|m| *m != "-").collect();
        let pos = common::position_after(&moves);
        let probe = Book::open(common::data(&format!("books/{book}")))
            .unwrap()
            .probe(&pos);
        let mut ours: Vec<String> = probe
            .legal
            .iter()
            .map(|m| m.mv.to_uci(CastlingMode::Standard).to_string())
            .collect();
        ours.sort();
        let expected: Vec<String> = jja_moves
            .iter()
            .filter(|m| {
                let kept = deleted_kept_by_jja.contains(&(book, line_moves, **m));
                dropped += usize::from(kept);
                !kept
            })
            .map(|m| m.to_string())
            .collect();
        assert_eq!(ours, expected, "{book} after {line_moves}");
        compared += 1;
    }
    assert_eq!((compared, dropped), (8, 2));
}
