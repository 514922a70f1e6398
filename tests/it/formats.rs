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
