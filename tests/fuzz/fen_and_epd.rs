//! `fen_and_epd`: mutated real FENs and EPD lines parsed, keyed, walked, searched and played on.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use polybook::book::Key;
use polybook::engine::perft::perft;
use polybook::engine::suite::parse_epd_line;
use polybook::engine::{Engine, Limits, SearchOptions};
use polybook::position::{parse_fen, play_moves};
use shakmaty::Position;

use crate::{assert_one_line, fen_seeds, fuzz, mutate};

const FEN_TOKENS: &[&[u8]] = &[
    b"/",
    b"8",
    b"1",
    b"K",
    b"k",
    b"Q",
    b"q",
    b"P",
    b"p",
    b"N",
    b"n",
    b" w ",
    b" b ",
    b"KQkq",
    b"-",
    b" - ",
    b"e3",
    b"e6",
    b" 0 1",
    b" 99 ",
    b" bm ",
    b"; ",
    b"id \"x\"",
    b" dm 3;",
    b" ",
    b"\t",
    b"8/8/8/8/8/8/8/8",
    b"pppppppp",
    b"QQQQQQQQ",
    b"AHah",
    b" moves ",
];

/// Mutated real FENs and EPD lines: parsing never panics and errors are one short line; a position
/// that parses can be keyed, walked to depth 2, evaluated by a short search and played on.
#[test]
fn fen_and_epd() {
    let seeds = fen_seeds();
    fuzz(
        "fen_and_epd",
        3000,
        Duration::from_secs(60),
        |rng| mutate(rng, &seeds, FEN_TOKENS, 4 << 10),
        |input| {
            let text = String::from_utf8_lossy(input);
            if let Some(Err(e)) = parse_epd_line(&text, 1) {
                assert_one_line(&e.to_string());
            }
            let pos = match parse_fen(&text) {
                Ok(pos) => pos,
                Err(e) => return assert_one_line(&e.to_string()),
            };
            Key::of(&pos);
            perft(&pos, 2);
            let mut engine = Engine::new(SearchOptions {
                hash_mb: 1,
                ..SearchOptions::default()
            });
            let limits = Limits {
                nodes: Some(300),
                ..Limits::default()
            };
            engine.search(
                &pos,
                &[],
                &limits,
                Arc::new(AtomicBool::new(false)),
                &mut |_| {},
            );
            let moves: Vec<String> = pos
                .legal_moves()
                .iter()
                .take(3)
                .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
                .collect();
            if let Err(e) = play_moves(pos, &moves.join(" ")) {
                assert_one_line(&e.to_string());
            }
        },
    );
}
