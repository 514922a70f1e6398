//! `polybook play` driven through its stdin: the games' ends and results, bad input, undo, the
//! book output and book moves against python-chess's `chess.polyglot`, the PGN read back by
//! python-chess's `chess.pgn`, draw offers against Stockfish's view of the position, clocks and
//! flag fall, and the errors before a game starts.

use crate::common;
use common::path_str as s;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use common::{gnuchess_book as book, python, text};

/// Runs `polybook play ARGS` in `dir` with `input` on stdin.
fn play_in(dir: &Path, args: &[&str], input: &str) -> Output {
    let args: Vec<&str> = std::iter::once("play")
        .chain(args.iter().copied())
        .collect();
    common::polybook_in(dir, &args, input)
}

/// The PGN files in `dir`.
fn pgn_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = common::sorted_paths(dir);
    files.retain(|p| p.extension().is_some_and(|e| e == "pgn"));
    files
}

/// Runs a game in a new folder and returns its output and the one PGN file it wrote.
fn game(args: &[&str], input: &str) -> (Output, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = play_in(dir.path(), args, input);
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    let files = pgn_files(dir.path());
    assert_eq!(files.len(), 1, "one PGN file: {files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.starts_with("game-20") && name.ends_with(".pgn"),
        "{name}"
    );
    (out, files[0].clone(), dir)
}

/// Runs a session in a new folder that may save no game (one stopped before its first move).
fn session(args: &[&str], input: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = play_in(dir.path(), args, input);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    (out, dir)
}

/// Every game of a PGN file as python-chess reads it: headers, moves (UCI), the comment after
/// each move, the final position and whether it is mate, and the errors it met.
fn read_pgn(path: &Path) -> Vec<Value> {
    let games = common::python_games(
        path,
        r#"{
            "headers": dict(g.headers),
            "moves": [n.move.uci() for n in g.mainline()],
            "comments": [n.comment for n in g.mainline()],
            "fen": g.end().board().fen(),
            "checkmate": g.end().board().is_checkmate(),
            "errors": [str(e) for e in g.errors],
        }"#,
    );
    for g in &games {
        assert_eq!(g["errors"], Value::Array(vec![]), "{g}");
    }
    games
}

fn only_game(path: &Path) -> Value {
    let mut games = read_pgn(path);
    assert_eq!(games.len(), 1, "{}", std::fs::read_to_string(path).unwrap());
    games.remove(0)
}

fn moves(g: &Value) -> Vec<&str> {
    g["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect()
}

/// The FEN printed after "Final position: ".
fn final_fen(stdout: &str) -> &str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Final position: "))
        .expect("a final position line")
}

const MATE_IN_ONE: &str = "7k/8/6K1/8/8/8/8/R7 w - - 0 1";

#[test]
fn mating_in_one_wins_and_writes_the_pgn() {
    let (out, pgn, _dir) = game(
        &["--fen", MATE_IN_ONE, "--depth", "2"],
        "Ra8#\nthis is never read\n",
    );
    let stdout = text(&out.stdout);
    common::assert_contains(&stdout, "Game over: White mates (1-0).");
    assert!(
        text(&out.stdout).contains(&format!(
            "The game is in {}",
            pgn.file_name().unwrap().to_str().unwrap()
        )),
        "{stdout}"
    );
    let g = only_game(&pgn);
    assert_eq!(g["headers"]["Result"], "1-0");
    assert_eq!(g["headers"]["Termination"], "normal");
    assert_eq!(g["headers"]["FEN"], MATE_IN_ONE);
    assert_eq!(g["headers"]["Event"], "polybook play");
    assert_eq!(g["headers"]["White"], "Human");
    assert_eq!(g["headers"]["Black"], "polybook");
    assert_eq!(g["headers"]["TimeControl"], "-");
    assert_eq!(moves(&g), ["a1a8"]);
    assert_eq!(g["checkmate"], true, "python-chess sees the mate");
    assert_eq!(g["fen"].as_str().unwrap(), final_fen(&stdout));
}

#[test]
fn hint_suggests_a_mate_python_chess_confirms() {
    let (out, _dir) = session(&["--fen", MATE_IN_ONE, "--depth", "3"], "hint\nquit\n");
    let stdout = text(&out.stdout);
    let hint = stdout
        .split("hint: ")
        .nth(1)
        .and_then(|h| h.split_whitespace().next())
        .expect("a hint");
    let mates = python(
        r#"
import sys, chess
b = chess.Board(sys.argv[1])
for m in list(b.legal_moves):
    san = b.san(m)
    b.push(m)
    if b.is_checkmate():
        print(san)
    b.pop()
"#,
        &[MATE_IN_ONE],
    );
    assert!(
        mates.lines().any(|m| m == hint),
        "hint {hint}, mates {mates}"
    );
    common::assert_contains(&stdout, "+M1 for you");
}

#[test]
fn bad_moves_and_unknown_commands_get_a_message_and_the_game_goes_on() {
    // Two knights reach d2; the king can't reach e3; there is no queen.
    let fen = "4k3/p7/8/8/8/8/8/1N2KN2 w - - 0 1";
    let (out, pgn, _dir) = game(
        &["--fen", fen, "--depth", "2"],
        "Nd2\nKe3\nfrobnicate\nQd4\nz9z9\n\nNbd2\nquit\n",
    );
    let stdout = text(&out.stdout);
    // python-chess agrees on which is ambiguous and which illegal.
    let verdicts = python(
        r#"
import sys, chess
b = chess.Board(sys.argv[1])
for san in sys.argv[2:]:
    try:
        b.parse_san(san)
        print(san, "ok")
    except chess.AmbiguousMoveError:
        print(san, "ambiguous")
    except chess.IllegalMoveError:
        print(san, "illegal")
    except chess.InvalidMoveError:
        print(san, "invalid")
"#,
        &[fen, "Nd2", "Ke3", "Qd4", "Nbd2"],
    );
    assert_eq!(
        verdicts,
        "Nd2 ambiguous\nKe3 illegal\nQd4 illegal\nNbd2 ok\n"
    );
    common::assert_contains(&stdout, "'Nd2' is ambiguous here: say which, Nbd2 or Nfd2.");
    common::assert_contains(&stdout, "'Ke3' is illegal here.");
    common::assert_contains(&stdout, "'Qd4' is illegal here.");
    assert!(
        stdout.contains(
            "'frobnicate' is neither a move (SAN or UCI, e.g. Nf3 or g1f3) nor a command"
        ),
        "{stdout}"
    );
    common::assert_contains(&stdout, "'z9z9' is neither a move");
    let g = only_game(&pgn);
    let m = moves(&g);
    assert_eq!(m.len(), 2, "Nbd2 and the engine's reply: {m:?}");
    assert_eq!(m[0], "b1d2");
    assert_eq!(g["headers"]["Result"], "*");
    assert_eq!(g["headers"]["Termination"], "unterminated");
    assert_eq!(g["fen"].as_str().unwrap(), final_fen(&stdout));
}

#[test]
fn undo_takes_back_a_move_pair() {
    let (out, pgn, _dir) = game(&["--depth", "1"], "undo\ne4\nundo\nd4\nNf3\nundo\nquit\n");
    let stdout = text(&out.stdout);
    common::assert_contains(&stdout, "Nothing to take back.");
    assert_eq!(stdout.matches("Took back e4 ").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("Took back Nf3 ").count(), 1, "{stdout}");
    let g = only_game(&pgn);
    let m = moves(&g);
    assert_eq!(m.len(), 2, "{m:?}");
    assert_eq!(m[0], "d2d4");
    assert_eq!(g["headers"]["PlyCount"], "2");
    assert_eq!(g["fen"].as_str().unwrap(), final_fen(&stdout));

    // Playing Black, after the engine's first move there is no pair to take back.
    let (out, pgn, _dir) = game(&["--color", "black", "--depth", "1"], "undo\nquit\n");
    assert!(text(&out.stdout).contains("Nothing to take back."));
    assert_eq!(moves(&only_game(&pgn)).len(), 1);
}

#[test]
fn resigning_loses_for_either_colour() {
    let (out, pgn, _dir) = game(&["--depth", "1"], "resign\n");
    assert!(text(&out.stdout).contains("Game over: White resigns (0-1)."));
    let g = only_game(&pgn);
    assert_eq!(g["headers"]["Result"], "0-1");
    assert_eq!(g["headers"]["Termination"], "normal");
    assert_eq!(moves(&g).len(), 0);

    let (out, pgn, _dir) = game(&["--color", "black", "--depth", "1"], "resign\n");
    assert!(text(&out.stdout).contains("Game over: Black resigns (1-0)."));
    let g = only_game(&pgn);
    assert_eq!(g["headers"]["Result"], "1-0");
    assert_eq!(g["headers"]["White"], "polybook");
    assert_eq!(g["headers"]["Black"], "Human");
    assert_eq!(moves(&g).len(), 1, "the engine moved first");
}

/// Stockfish's score (centipawns, White's view) of each FEN, as python-chess reports it.
fn stockfish_scores(fens: &[&str]) -> Vec<i64> {
    common::stockfish();
    let out = python(
        r#"
import sys, chess, chess.engine
with chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish") as sf:
    for fen in sys.argv[1:]:
        info = sf.analyse(chess.Board(fen), chess.engine.Limit(depth=14))
        print(info["score"].white().score(mate_score=100000))
"#,
        fens,
    );
    out.lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn draw_offers_depend_on_the_move_number_and_the_score() {
    // Too early in the game.
    let (out, _dir) = session(&["--depth", "1"], "draw\nquit\n");
    assert!(text(&out.stdout).contains("polybook declines the draw: too early"));

    // At move 40, the person (White) offers: a level rook ending, a queen down, a rook up.
    let level = "3rk3/8/8/8/8/8/8/4KR2 w - - 0 40";
    let queen_down = "4k3/3q4/8/8/8/8/8/4K3 w - - 0 40";
    let winning = "r3k3/8/8/8/8/8/8/4K2R w - - 0 40"; // Rh8+ and Rxa8
    let sf = stockfish_scores(&[level, queen_down, winning]);
    assert!(sf[0].abs() <= 50, "Stockfish sees a level game: {sf:?}");
    assert!(sf[1] <= -500, "Stockfish sees Black winning: {sf:?}");
    assert!(sf[2] >= 300, "Stockfish sees White winning: {sf:?}");

    // Declined where the engine (Black) stands better.
    let (out, _dir) = session(&["--fen", queen_down, "--depth", "4"], "draw\nquit\n");
    common::assert_contains(
        &text(&out.stdout),
        "polybook declines the draw (its score +",
    );
    // Stopped before a move, without a result: no game to keep.
    assert!(text(&out.stdout).contains("no game saved"));

    // Accepted in the level ending (its score at most +0.10) and when it stands worse.
    for fen in [level, winning] {
        let (out, pgn, _dir) = game(&["--fen", fen, "--depth", "4"], "draw\n");
        let stdout = text(&out.stdout);
        let score: f64 = stdout
            .split("polybook accepts the draw (its score ")
            .nth(1)
            .and_then(|s| s.split(')').next())
            // A mate score (the engine sees KRvK mates with its tablebase) is far below -3.
            .and_then(|s| {
                if s.starts_with("-M") {
                    Some(-1000.0)
                } else {
                    s.parse().ok()
                }
            })
            .unwrap_or_else(|| panic!("{stdout}"));
        if fen == level {
            // Accepted because it does not stand better (the rule: a score of at most +0.10).
            assert!(score <= 0.10 && score > -1.0, "{stdout}");
        } else {
            assert!(score < -3.0, "{stdout}");
        }
        assert!(stdout.contains("Game over: Draw by agreement (1/2-1/2)."));
        let g = only_game(&pgn);
        assert_eq!(g["headers"]["Result"], "1/2-1/2");
        assert_eq!(g["headers"]["Termination"], "normal");
    }
}

/// The book moves of the start position as python-chess reads them: SAN, weight, share.
fn python_book_rows() -> Vec<(String, u64, String)> {
    let out = python(
        r#"
import sys, chess, chess.polyglot
b = chess.Board()
with chess.polyglot.open_reader(sys.argv[1]) as r:
    entries = list(r.find_all(b, minimum_weight=0))
total = sum(e.weight for e in entries)
for e in entries:
    print(b.san(e.move), e.weight, "%.1f%%" % (100.0 * e.weight / total))
"#,
        &[s(&book())],
    );
    out.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[2].to_string())
        })
        .collect()
}

#[test]
fn the_book_command_equals_python_chess() {
    let (out, _dir) = session(&["--book", s(&book())], "book\nquit\n");
    let stdout = text(&out.stdout);
    let expected = python_book_rows();
    assert!(expected.len() > 5, "{expected:?}");
    let rows: Vec<(String, u64, String)> = stdout
        .lines()
        .skip_while(|l| !l.contains("move      weight   share"))
        .skip(1)
        .take_while(|l| !l.contains("book moves, total weight"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "{l}");
            (f[0].to_string(), f[1].parse().unwrap(), f[2].to_string())
        })
        .collect();
    assert_eq!(rows, expected);
    let total: u64 = expected.iter().map(|r| r.1).sum();
    common::assert_contains(
        &stdout,
        &format!("{} book moves, total weight {total}", expected.len()),
    );
}

#[test]
fn the_engine_plays_the_heaviest_book_move_with_best() {
    let (out, pgn, _dir) = game(
        &[
            "--book",
            s(&book()),
            "--book-selection",
            "best",
            "--color",
            "black",
        ],
        "quit\n",
    );
    let heaviest = python(
        r#"
import sys, chess, chess.polyglot
with chess.polyglot.open_reader(sys.argv[1]) as r:
    e = max(r.find_all(chess.Board()), key=lambda e: e.weight)
print(e.move.uci(), chess.Board().san(e.move))
"#,
        &[s(&book())],
    );
    let (uci, san) = heaviest.trim().split_once(' ').unwrap();
    let stdout = text(&out.stdout);
    common::assert_contains(
        &stdout,
        &format!("1. {san}   polybook, from the book: {san} "),
    );
    let g = only_game(&pgn);
    assert_eq!(moves(&g), [uci]);
    assert!(
        g["comments"][0].as_str().unwrap().starts_with("book"),
        "{g}"
    );
}

#[test]
fn quit_and_the_end_of_input_write_the_game_python_chess_reads_back() {
    let book = book();
    let args = ["--book", s(&book), "--seed", "11", "--depth", "3"];
    let (out, pgn, _dir) = game(&args, "e4\nNf3\nquit\n");
    let stdout = text(&out.stdout);
    let g = only_game(&pgn);
    let m = moves(&g);
    assert_eq!(m.len(), 4, "{m:?}");
    assert_eq!((m[0], m[2]), ("e2e4", "g1f3"));
    assert_eq!(g["headers"]["PlyCount"], "4");
    assert_eq!(g["headers"]["Result"], "*");
    assert_eq!(g["fen"].as_str().unwrap(), final_fen(&stdout));
    // gnuchess.bin answers 1. e4 and 2. Nf3 from the book.
    assert!(
        g["comments"][1].as_str().unwrap().starts_with("book"),
        "{g}"
    );
    assert!(
        g["comments"][3].as_str().unwrap().starts_with("book"),
        "{g}"
    );

    // The same seed, the same book moves; the input just ends.
    let (out2, pgn2, _dir2) = game(&args, "e4\nNf3\n");
    let g2 = only_game(&pgn2);
    assert_eq!(moves(&g2), m);
    assert_eq!(final_fen(&text(&out2.stdout)), final_fen(&stdout));
}

#[test]
fn save_and_pgn_append_and_default_names_never_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = play_in(
        dir.path(),
        &["--depth", "1"],
        "e4\nsave mid.pgn\nd4\nquit\n",
    );
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("Saved the game so far to mid.pgn."));
    let mid = only_game(&dir.path().join("mid.pgn"));
    assert_eq!(moves(&mid).len(), 2);
    assert_eq!(mid["headers"]["Result"], "*");

    // A second game in the same folder gets a file of its own.
    let out = play_in(dir.path(), &["--depth", "1"], "resign\n");
    assert!(out.status.success());
    let games: Vec<PathBuf> = pgn_files(dir.path())
        .into_iter()
        .filter(|p| p.file_name().unwrap() != "mid.pgn")
        .collect();
    assert_eq!(games.len(), 2, "{games:?}");
    assert_eq!(
        moves(&only_game(&games[0])).len() + moves(&only_game(&games[1])).len(),
        4
    );

    // --pgn adds each game to the file.
    for input in ["e4\nquit\n", "resign\n"] {
        let out = play_in(dir.path(), &["--depth", "1", "--pgn", "all.pgn"], input);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let all = read_pgn(&dir.path().join("all.pgn"));
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["headers"]["Result"], "*");
    assert_eq!(moves(&all[0]).len(), 2);
    assert_eq!(all[1]["headers"]["Result"], "0-1");
}

#[test]
fn clocks_are_shown_and_a_fallen_flag_loses() {
    let (out, _dir) = session(&["--tc", "300+3"], "quit\n");
    assert!(text(&out.stdout).contains("White 5:00.0  Black 5:00.0"));
    let (_, pgn, _dir) = game(&["--tc", "2+1"], "e4\nquit\n");
    assert_eq!(only_game(&pgn)["headers"]["TimeControl"], "2+1");

    // Half a second for the game; the move comes after a second.
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::piped()
        .args(["play", "--tc", "0.5"])
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    stdin.write_all(b"e4\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    common::assert_contains(&stdout, "Game over: White loses on time (0-1).");
    let files = pgn_files(dir.path());
    let g = only_game(&files[0]);
    assert_eq!(g["headers"]["Result"], "0-1");
    assert_eq!(g["headers"]["Termination"], "time forfeit");
    assert_eq!(moves(&g).len(), 0, "the late move is not played");
}

/// A refused start: exit code, one error line, nothing played and no file written.
fn refused(args: &[&str], code: i32, message: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = play_in(dir.path(), args, "e4\nquit\n");
    let stderr = common::one_error_line(&out, code, "polybook: error: ");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
    assert_eq!(text(&out.stdout), "", "no game");
    assert!(pgn_files(dir.path()).is_empty());
}

#[test]
fn bad_input_is_refused_before_the_game() {
    let books = common::data("books");
    refused(&["--book", "/no/such/book.bin"], 1, "/no/such/book.bin");
    let html = books.join("invalid/html-page-saved-as.bin");
    refused(&["--book", s(&html)], 1, "html-page-saved-as.bin");
    refused(&["--fen", "not a fen"], 1, "invalid FEN 'not a fen'");
    refused(
        &["--fen", "8/8/8/8/8/8/8/8 w - - 0 1"],
        1,
        "impossible position",
    );
    // Fool's mate: White is mated already.
    refused(
        &[
            "--fen",
            "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
        ],
        1,
        "the game is over in the --fen position (checkmate)",
    );
    refused(&["--tc", "ten"], 2, "time control 'ten'");
    refused(&["--tc", "0"], 2, "time control '0'");
    refused(&["--depth", "0"], 2, "'--depth <N>': must be at least 1");
    refused(&["--pgn", "/no/such/folder/game.pgn"], 1, "does not exist");
    // Two ways of thinking at once: clap's usage error.
    let dir = tempfile::tempdir().unwrap();
    let out = play_in(dir.path(), &["--tc", "60", "--depth", "3"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(pgn_files(dir.path()).is_empty());
}

#[test]
fn play_with_two_books_takes_each_move_from_the_first_that_has_one() {
    let dir = tempfile::tempdir().unwrap();
    // A small book in front: 1. d4 only. The GNU Chess book behind it.
    let small = dir.path().join("small.bin");
    common::start_book(&small, &[("d2d4", 1)]);
    let (small, big) = (s(&small), book());
    let big = s(&big);
    let heaviest = python(
        r#"
import sys, chess, chess.polyglot
board = chess.Board()
board.push_san("d4")
board.push_san("d5")
with chess.polyglot.open_reader(sys.argv[1]) as r:
    e = max(r.find_all(board), key=lambda e: e.weight)
print(e.move.uci(), board.san(e.move))
"#,
        &[big],
    );
    let (uci, san) = heaviest.trim().split_once(' ').unwrap();
    let args = [
        "--book",
        small,
        "--book",
        big,
        "--book-selection",
        "best",
        "--color",
        "black",
        "--depth",
        "1",
    ];
    let (out, pgn, _dir) = game(&args, "book\nd5\nquit\n");
    let stdout = text(&out.stdout);
    common::assert_contains(&stdout, "books small.bin, gnuchess.bin");
    common::assert_contains(
        &stdout,
        &format!("1. d4   polybook, from the book {small}: d4 100.0%"),
    );
    common::assert_contains(
        &stdout,
        &format!("2. {san}   polybook, from the book {big}: {san} "),
    );
    // The book command (after 1. d4) shows the moves of each book that has some, under its
    // name: only the second book has moves there.
    common::assert_contains(
        &stdout,
        &format!("book {big}\nmove      weight   share\nNf6 "),
    );
    assert!(!stdout.contains(&format!("book {small}\n")), "{stdout}");
    let g = only_game(&pgn);
    assert_eq!(moves(&g)[..3], ["d2d4", "d7d5", uci]);
}

/// A game stopped before its first move is not saved: no PGN file appears.
#[test]
fn a_game_without_a_move_is_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    for input in ["quit\n", ""] {
        let out = play_in(dir.path(), &["--depth", "1"], input);
        assert!(out.status.success(), "{}", text(&out.stderr));
        common::assert_contains(&text(&out.stdout), "no game saved");
        assert!(pgn_files(dir.path()).is_empty());
    }
    let out = play_in(dir.path(), &["--depth", "1"], "e4\nquit\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(pgn_files(dir.path()).len(), 1);
}

/// `--tc` takes units (`5m+3` is 300+3), and a bare `5+3`, five seconds, is named as such.
#[test]
fn time_controls_take_units_and_seconds_are_named() {
    let (out, _dir) = session(&["--tc", "5m+3"], "quit\n");
    common::assert_contains(&text(&out.stdout), "time control 300+3");
    assert!(!text(&out.stderr).contains("note"));
    let (out, _dir) = session(&["--tc", "5+3"], "quit\n");
    common::assert_contains(
        &text(&out.stderr),
        "gives each side 5 seconds; for minutes write e.g. 5m+3",
    );
}

/// A folder where no file can be made (`/proc`, even for root) is refused before the game: the
/// current folder, where the game goes by default, and a `--pgn` file's folder alike.
#[test]
fn a_folder_that_cannot_take_the_game_is_refused_before_it() {
    let out = common::polybook_in(Path::new("/proc"), &["play", "--depth", "1"], "e4\nquit\n");
    let stderr = common::one_error_line(&out, 1, "polybook: error: cannot save the game in '.': ");
    common::assert_contains(&stderr, "--no-pgn");
    assert_eq!(text(&out.stdout), "", "no game");
    refused(
        &["--pgn", "/proc/game.pgn"],
        1,
        "cannot write the game in '/proc'",
    );
}

/// Plays `e4` then `quit` in a folder removed once the game has started (its PGN can't be
/// written there at the end), with `TMPDIR` set to `tmp`: the output.
fn play_in_a_removed_folder(tmp: &Path) -> Output {
    use std::io::Read;
    use std::process::Stdio;
    let gone = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(common::BIN)
        .args(["play", "--depth", "1"])
        .current_dir(gone.path())
        .env("TMPDIR", tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut chunk) {
            all.extend_from_slice(&chunk[..n]);
            let _ = tx.send(());
        }
        all
    });
    // The game has started (the folder was checked): the folder goes.
    rx.recv_timeout(Duration::from_secs(30)).unwrap();
    std::fs::remove_dir(gone.path()).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"e4\nquit\n").unwrap();
    drop(stdin);
    let mut out = child.wait_with_output().unwrap();
    out.stdout = reader.join().unwrap();
    out
}

/// A game that cannot be saved at its end (its folder was removed during the game) is not lost:
/// it goes to the system's temporary folder, or else is printed on standard output, and the one
/// error line says where (exit 1).
#[test]
fn a_game_that_cannot_be_saved_at_its_end_is_kept_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let out = play_in_a_removed_folder(tmp.path());
    let stderr = common::one_error_line(&out, 1, "polybook: error: cannot write the game in '.': ");
    let kept = stderr
        .split("; the game is in ")
        .nth(1)
        .and_then(|rest| rest.trim_end().strip_suffix(" instead"))
        .unwrap_or_else(|| panic!("no file named: {stderr}"));
    assert_eq!(pgn_files(tmp.path()), [PathBuf::from(kept)]);
    assert_eq!(moves(&only_game(Path::new(kept)))[0], "e2e4");

    // No temporary folder either: the PGN is printed.
    let out = play_in_a_removed_folder(&tmp.path().join("missing"));
    let stderr = common::one_error_line(&out, 1, "polybook: error: ");
    common::assert_contains(&stderr, "; the game's PGN is on standard output instead");
    let stdout = text(&out.stdout);
    let printed = &stdout[stdout.rfind("[Event ").expect("the PGN on stdout")..];
    let copy = common::write_file(&tmp, "printed.pgn", printed);
    let g = only_game(&copy);
    assert_eq!(g["headers"]["Event"], "polybook play");
    assert_eq!(moves(&g).len(), 2);
}

/// `--book-profile`: the profile's section for the game's time control and the engine's colour
/// (against a person) gives the engine's books: 3m+2 is blitz (`blitz_white`), 1m bullet, no
/// clock `standard`; as Black, `standard` too.
#[test]
fn a_book_profile_chooses_the_engine_s_books_by_time_control_and_colour() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, mv) in [("d4", "d2d4"), ("c4", "c2c4"), ("e4", "e2e4")] {
        common::start_book(&d.join(format!("{name}.bin")), &[(mv, 1)]);
    }
    let profile = d.join("profile.yml");
    std::fs::write(
        &profile,
        "books:\n  D4: d4.bin\n  C4: c4.bin\n  E4: e4.bin\n\
         opening_books:\n  books:\n    blitz_white:\n      names: [D4]\n    bullet:\n      names: [C4]\n\
         \x20   standard:\n      names: [E4]\n",
    )
    .unwrap();
    for (clock, section, first) in [
        (&["--tc", "3m+2"][..], "blitz_white", "d4"),
        (&["--tc", "1m"][..], "bullet", "c4"),
        (&["--depth", "1"][..], "standard", "e4"),
    ] {
        let mut args = vec![
            "--book-profile",
            s(&profile),
            "--color",
            "black",
            "--no-pgn",
        ];
        args.extend_from_slice(clock);
        let (out, _dir) = session(&args, "quit\n");
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        common::assert_contains(&stderr, &format!("book profile section {section}"));
        common::assert_contains(&stdout, &format!("1. {first}   polybook, from the book"));
    }
}

/// The engine leaves out a book move that would repeat a position of the game (as the UCI
/// engine does), unless --book-allow-repetitions: after 1. Nf3 Nf6 2. Ng1 Ng8 the book's 3. Nf3
/// would bring back the position after 1. Nf3.
#[test]
fn the_engine_s_book_move_never_repeats_a_position_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = common::write_file(
        &dir,
        "shuffle.pgn",
        "1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 1/2-1/2\n",
    );
    let bin = dir.path().join("shuffle.bin");
    common::polybook_ok(&["build", s(&pgn), "-o", s(&bin), "--min-games", "1"]);
    let base = [
        "--book",
        s(&bin),
        "--color",
        "black",
        "--depth",
        "1",
        "--no-pgn",
    ];
    let (out, _dir) = session(&base, "Nf6\nNg8\nquit\n");
    let stdout = text(&out.stdout);
    common::assert_contains(&stdout, "2. Ng1   polybook, from the book");
    assert!(
        !stdout.contains("3. Nf3   polybook, from the book"),
        "{stdout}"
    );
    let mut allowed = base.to_vec();
    allowed.push("--book-allow-repetitions");
    let (out, _dir) = session(&allowed, "Nf6\nNg8\nquit\n");
    common::assert_contains(&text(&out.stdout), "3. Nf3   polybook, from the book");
}
