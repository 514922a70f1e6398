//! `polybook check GAMES --book REP.bin`: where each game left a repertoire, against a
//! python-chess reimplementation of the rules (written out below) on real lichess games; and what
//! it refuses.

use crate::common;
use common::{data, path_str as s, polybook, polybook_fails};

/// The rules of `check`, read again with python-chess: each game (standard chess, the player's
/// with a player named) walked along its main line; the book's moves of a position are
/// `find_all`'s (weight 1 or more, legal); no move for the position: `end`; a move not listed:
/// the mover's (`player`/`opponent`, or `white`/`black`); all listed: `none`. The game number
/// counts every game of the file from 1.
const CHECK: &str = r#"
import sys, io, json, lzma, chess, chess.pgn, chess.polyglot
pgn_path, book_path, player = sys.argv[1], sys.argv[2], sys.argv[3].lower()
book = chess.polyglot.open_reader(book_path)
text = lzma.open(pgn_path, "rt", encoding="utf-8", errors="replace")
n = 0
while (g := chess.pgn.read_game(text)) is not None:
    n += 1
    if g.headers.get("Variant", "Standard").lower() not in ("standard", "chess", "normal", "", "from position"):
        continue
    w, b = g.headers.get("White", "").strip(), g.headers.get("Black", "").strip()
    side = None
    if player:
        if w.lower() == player: side = chess.WHITE
        elif b.lower() == player: side = chess.BLACK
        else: continue
    board = g.board()
    ply, who, move = 0, "none", None
    for mv in g.mainline_moves():
        listed = [e.move for e in book.find_all(board)]
        if not listed:
            who, move = "end", mv.uci(); break
        if mv not in listed:
            if side is None: who = "white" if board.turn == chess.WHITE else "black"
            else: who = "player" if board.turn == side else "opponent"
            move = mv.uci(); break
        board.push(mv); ply += 1
    print(json.dumps({"game": n, "ply": ply, "who": who, "move": move}))
"#;

#[test]
fn check_agrees_with_python_chess_game_by_game_on_lichess_games() {
    let games = common::lichess_magnus();
    let dir = tempfile::tempdir().unwrap();
    // A repertoire for Magnus's account: its own moves as White to 10 plies, and a broad book.
    let rep = dir.path().join("rep.bin");
    common::build_magnus_white_repertoire(&rep);
    for (book, player) in [
        (rep.clone(), "DrNykterstein"),
        (data("books/gm2001.bin"), "drnykterstein"),
        (data("books/gm2001.bin"), ""),
    ] {
        let mut args = vec!["check", s(&games), "--book", s(&book), "--json", "-q"];
        if !player.is_empty() {
            args.extend(["--player", player]);
        }
        let o = polybook(&args);
        assert!(o.status.success(), "{}", common::stderr(&o));
        let lines: Vec<serde_json::Value> = common::stdout(&o)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let (summary, per_game) = lines.split_last().unwrap();
        let ours: Vec<String> = per_game
            .iter()
            .map(|g| format!("{} {} {} {}", g["game"], g["ply"], g["who"], g["move"]))
            .collect();
        let theirs: Vec<String> = common::python(CHECK, &[s(&games), s(&book), player])
            .lines()
            .map(|l| {
                let g: serde_json::Value = serde_json::from_str(l).unwrap();
                format!("{} {} {} {}", g["game"], g["ply"], g["who"], g["move"])
            })
            .collect();
        assert!(theirs.len() > 100, "{}", theirs.len());
        assert_eq!(ours.len(), theirs.len(), "games checked, {player:?}");
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a, b, "book {}, player {player:?}", book.display());
        }
        // Every kind of verdict is exercised somewhere, and the summary adds up.
        let summary = &summary["summary"];
        assert_eq!(summary["checked"], per_game.len());
        let coverage = summary["coverage"].as_array().unwrap();
        assert_eq!(coverage[0], 1.0);
        assert!(
            coverage.windows(2).all(|w| w[0].as_f64() >= w[1].as_f64()),
            "{coverage:?}"
        );
        if player.is_empty() {
            for who in ["white", "black", "end"] {
                assert!(
                    ours.iter().any(|l| l.contains(&format!("\"{who}\""))),
                    "{who}"
                );
            }
        } else {
            for who in ["player", "opponent", "end"] {
                assert!(
                    ours.iter().any(|l| l.contains(&format!("\"{who}\""))),
                    "{who}"
                );
            }
            assert!(!summary["gaps"].as_array().unwrap().is_empty());
        }
    }
}

#[test]
fn check_refuses_bad_inputs_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let games = common::lichess_magnus();
    let book = data("books/gm2001.bin");
    let missing = dir.path().join("missing.pgn");
    polybook_fails(
        &["check", s(&missing), "--book", s(&book)],
        1,
        "missing.pgn",
    );
    polybook_fails(
        &["check", s(&games), "--book", s(&missing)],
        1,
        "missing.pgn",
    );
    let bad = common::write_file(&dir, "bad.bin", [1u8; 17]);
    polybook_fails(&["check", s(&games), "--book", s(&bad)], 1, "bad.bin");
}
