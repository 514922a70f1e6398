//! `suite-stats`: what each opening of a suite did in a real match's games (`polybook match
//! --openings`, two engines at fixed nodes, games played in parallel), recounted game by game by
//! python-chess (`SUITE_STATS`); the refined suite; bad input.

use std::path::Path;

use crate::common;
use common::path_str as s;
use common::{polybook_fails, polybook_ok};

/// python-chess's count of a suite's exits in games: the suite's positions (EPD lines, or the
/// ends of a PGN file's games), each game walked along its main line from its start to the first
/// position whose Polyglot key is an exit; per exit the results, the colour-swapped pairs (a game
/// pairs with the first earlier unpaired one of the same exit the same players played the other
/// way round; points of the first game's White), and the first move's comment after the exit
/// (`+0.36/5 0.02s`: pawns from the mover's view, mates left out) as centipawns from White's view.
/// Prints one JSON object per exit, as `suite-stats --json`.
const SUITE_STATS: &str = r##"
import sys, json, re, chess, chess.pgn, chess.polyglot
suite_path, games_path = sys.argv[1], sys.argv[2]
exits = []
if suite_path.endswith(".pgn"):
    with open(suite_path) as f:
        while (g := chess.pgn.read_game(f)) is not None:
            exits.append(g.end().board())
else:
    for line in open(suite_path):
        line = line.strip()
        if line and not line.startswith("#"):
            exits.append(chess.Board(" ".join(line.split()[:4])))
index = {}
for i, b in enumerate(exits):
    index.setdefault(chess.polyglot.zobrist_hash(b), i)
stats = [dict(games=0, white_wins=0, draws=0, black_wins=0, pentanomial=[0] * 5, pending=[], scores=[]) for _ in exits]
with open(games_path) as f:
    while (g := chess.pgn.read_game(f)) is not None:
        board, node, exit = g.board(), g, None
        while True:
            exit = index.get(chess.polyglot.zobrist_hash(board))
            if exit is not None or not node.variations:
                break
            node = node.variations[0]
            board.push(node.move)
        if exit is None:
            continue
        s = stats[exit]
        points = {"1-0": 2, "1/2-1/2": 1, "0-1": 0}[g.headers["Result"]]
        s["games"] += 1
        s[["black_wins", "draws", "white_wins"][points]] += 1
        w, b = g.headers["White"], g.headers["Black"]
        for p in s["pending"]:
            if p[0] == b and p[1] == w:
                s["pending"].remove(p)
                s["pentanomial"][p[2] + 2 - points] += 1
                break
        else:
            s["pending"].append((w, b, points))
        if node.variations:
            out = node.variations[0]
            m = re.match(r"^([+-]?\d+(\.\d+)?)/", out.comment.strip())
            if m:
                cp = round(float(m.group(1)) * 100)
                s["scores"].append(cp if board.turn == chess.WHITE else -cp)
for i, s in enumerate(stats):
    print(json.dumps({"index": i + 1, "games": s["games"], "white_wins": s["white_wins"], "draws": s["draws"],
                      "black_wins": s["black_wins"], "pentanomial": s["pentanomial"], "unpaired": len(s["pending"]),
                      "average_score": sum(s["scores"]) / len(s["scores"]) if s["scores"] else None}))
"##;

/// The fields python-chess recounts, from `suite-stats --json`'s objects.
fn recounted(line: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    let fields = [
        "index",
        "games",
        "white_wins",
        "draws",
        "black_wins",
        "pentanomial",
        "unpaired",
        "average_score",
    ];
    fields
        .iter()
        .map(|f| (f.to_string(), v[f].clone()))
        .collect()
}

/// A match of two engines (the built-in one at different node counts, so that results differ)
/// from `suite`, two games per opening, two at a time, logged to `pgn`.
fn play_match(suite: &Path, pgn: &Path, games: &str) {
    polybook_ok(&[
        "match",
        "--engine",
        "A=builtin",
        "--engine",
        "B=builtin",
        "--openings",
        s(suite),
        "--games",
        games,
        "--nodes",
        "400",
        "--concurrency",
        "2",
        "--seed",
        "7",
        "--pgn",
        s(pgn),
        "-q",
    ]);
}

/// An EPD suite and a PGN suite at ply 6 of the bundled book, each played in a match: every
/// exit's counts are python-chess's; the refined suite is the suite without the exits outside the
/// window, as its statistics say.
#[test]
fn suite_stats_counts_each_exit_as_python_chess_recounts_the_match() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["epd", "pgn"] {
        let all = dir.path().join(format!("all.{format}"));
        polybook_ok(&[
            "export",
            &format!("--{format}"),
            "--ply",
            "6",
            "books/bundled.bin",
            "-o",
            s(&all),
        ]);
        // The first 6 openings (of a PGN suite, its first 6 games).
        let text = std::fs::read_to_string(&all).unwrap();
        let suite = dir.path().join(format!("suite.{format}"));
        let kept: Vec<&str> = if format == "epd" {
            text.lines().take(6).collect()
        } else {
            text.split("\n\n[Event").take(6).collect()
        };
        let joined = kept.join(if format == "epd" { "\n" } else { "\n\n[Event" });
        std::fs::write(&suite, joined + "\n").unwrap();
        let games = dir.path().join(format!("games-{format}.pgn"));
        play_match(&suite, &games, "12");
        let ours = polybook_ok(&["suite-stats", s(&games), "--suite", s(&suite), "--json"]);
        let theirs = common::python(SUITE_STATS, &[s(&suite), s(&games)]);
        let ours: Vec<serde_json::Value> = ours.lines().map(recounted).collect();
        let theirs: Vec<serde_json::Value> = theirs
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ours.len(), 6, "{format}");
        assert_eq!(ours, theirs, "{format}");
        // Every game reached an exit and found its pair.
        let total: u64 = ours.iter().map(|v| v["games"].as_u64().unwrap()).sum();
        assert_eq!(total, 12, "{format}");
        assert!(ours.iter().all(|v| v["unpaired"] == 0), "{ours:?}");

        // Refined: the exits with a draw rate of at most 50 % stay, in order, as written.
        let refined = dir.path().join(format!("refined.{format}"));
        polybook_ok(&[
            "suite-stats",
            s(&games),
            "--suite",
            s(&suite),
            "-o",
            s(&refined),
            "--prune-draw-rate",
            "0-50",
        ]);
        let full = polybook_ok(&["suite-stats", s(&games), "--suite", s(&suite), "--json"]);
        let keep: Vec<bool> = full
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|v| v["draw_rate"].as_f64().unwrap() <= 0.5)
            .collect();
        let again = polybook_ok(&["suite-stats", s(&games), "--suite", s(&refined), "--json"]);
        assert_eq!(again.lines().count(), keep.iter().filter(|k| **k).count());
        let kept_fens: Vec<String> = full
            .lines()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(l, _)| serde_json::from_str::<serde_json::Value>(l).unwrap()["fen"].to_string())
            .collect();
        let refined_fens: Vec<String> = again
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["fen"].to_string())
            .collect();
        assert_eq!(kept_fens, refined_fens, "{format}");
    }
}

#[test]
fn bad_suite_stats_input_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let suite = common::write_file(
        &dir,
        "suite.epd",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n",
    );
    let games = common::write_file(&dir, "games.pgn", "[Result \"1-0\"]\n\n1. e4 e5 1-0\n");
    let bad = common::write_file(&dir, "bad.epd", "rnbqkbnr/pppppppp/8/8 w\n");
    let missing = dir.path().join("missing.epd");
    let refined = dir.path().join("no-such-dir/refined.epd");
    for (args, code, says) in [
        (vec!["--suite", s(&missing)], 1, "cannot read suite"),
        (vec!["--suite", s(&bad)], 1, "line 1"),
        (vec!["--suite", s(&suite), "-o", s(&refined)], 2, "give one"),
        (
            vec![
                "--suite",
                s(&suite),
                "--prune-draw-rate",
                "80-20",
                "-o",
                "x",
            ],
            2,
            "80 is above 20",
        ),
        (
            vec![
                "--suite",
                s(&suite),
                "--prune-score",
                "0-50",
                "-o",
                s(&refined),
            ],
            1,
            "cannot write",
        ),
    ] {
        let args = [&["suite-stats", s(&games)][..], &args].concat();
        polybook_fails(&args, code, says);
    }
    // The one game reached the exit.
    let out = polybook_ok(&["suite-stats", s(&games), "--suite", s(&suite), "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["games"].as_u64(), v["white_wins"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(v["unpaired"], 1);
}
