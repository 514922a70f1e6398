//! Opening names (lichess's table in `assets/openings/`) against python-chess: each named position,
//! the naming of lines (the last named position along them, transpositions included), and the
//! names in `probe`, `lines`, `export` and a tally's `probe`.

use crate::common::path_str as s;
use crate::common::*;

/// Python that reads the table with python-chess: `NAMES`, a position's EPD → "ECO Name", and
/// `line_name(board)`, the name of the line that led to `board` (its move stack played back from
/// the end until a named position is found), `None` if none is.
const TABLE: &str = r#"
import csv, glob, os, sys, chess
OPENINGS = sys.argv.pop()  # the table's folder, given last
NAMES = {}
LINES = []
for path in sorted(glob.glob(os.path.join(OPENINGS, "?.tsv"))):
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            board = chess.Board()
            for token in row["pgn"].split():
                if not token[0].isdigit():
                    board.push_san(token)
            assert board.epd() not in NAMES, row
            NAMES[board.epd()] = row["eco"] + " " + row["name"]
            LINES.append((board, row["eco"] + " " + row["name"]))

def line_name(board):
    board = board.copy()
    while True:
        if board.epd() in NAMES:
            return NAMES[board.epd()]
        if not board.move_stack:
            return None
        board.pop()
"#;

/// Runs a Python script after [`TABLE`] (which takes the table's folder as its last argument).
fn python_names(script: &str, args: &[&str]) -> String {
    let dir = root().join("assets/openings");
    let args: Vec<&str> = args.iter().copied().chain([s(&dir)]).collect();
    python(&format!("{TABLE}{script}"), &args)
}

/// `"ECO Name"` from a JSON object's `eco` and `opening` fields, `None` when they are null.
fn name_of(v: &serde_json::Value) -> Option<String> {
    match (v["eco"].as_str(), v["opening"].as_str()) {
        (Some(eco), Some(name)) => Some(format!("{eco} {name}")),
        (None, None) => None,
        other => panic!("eco and opening disagree: {other:?} in {v}"),
    }
}

#[test]
fn every_named_position_of_the_table_is_named_by_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let epd = dir.path().join("table.epd");
    // python-chess plays every line of the table and writes its final position; it prints the name
    // each position must get.
    let expected = python_names(
        r#"
with open(sys.argv[1], "w") as out:
    for board, name in LINES:
        out.write(board.epd() + "\n")
        print(name)
"#,
        &[s(&epd)],
    );
    let expected: Vec<&str> = expected.lines().collect();
    assert_eq!(expected.len(), 3807);
    let empty = data("books/empty.bin");
    let out = polybook_ok(&["probe", s(&empty), "--epd", s(&epd), "--json"]);
    let got: Vec<Option<String>> = out
        .lines()
        .map(|l| name_of(&serde_json::from_str(l).unwrap()))
        .collect();
    assert_eq!(got.len(), expected.len());
    for (i, (got, want)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(got.as_deref(), Some(*want), "table line {}", i + 1);
    }
}

#[test]
fn lines_of_real_games_and_their_book_moves_are_named_as_python_chess_names_them() {
    // Lines of real lichess games cut at plies 1 to 16, and a transposition: 1. Nf3 d5 2. d4
    // reaches the table's 1. d4 d5 2. Nf3. For each: the line's name, then each book move's
    // name (the line with the move played), by python-chess.
    let cases = python_names(
        r#"
import chess.pgn, chess.polyglot, lzma, json
games = lzma.open(sys.argv[1], "rt", errors="replace")
book = chess.polyglot.open_reader(sys.argv[2])
lines = [["g1f3", "d7d5", "d2d4"], ["e2e4", "c7c5", "d1h5", "h7h6"]]
while len(lines) < 62:
    game = chess.pgn.read_game(games)
    if game.headers.get("Variant", "Standard") != "Standard" or "FEN" in game.headers:
        continue
    moves = [m.uci() for m in game.mainline_moves()]
    lines.append(moves[: 1 + len(lines) % 16])
for moves in lines:
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    after = {}
    for e in book.find_all(board):
        board.push(e.move)
        after[e.move.uci()] = line_name(board)
        board.pop()
    print(json.dumps({"moves": " ".join(moves), "name": line_name(board), "after": after}))
"#,
        &[
            s(&data("pgn/lichess_magnus_2018-2022.pgn.xz")),
            s(&gnuchess_book()),
        ],
    );
    let mut named = 0;
    let mut book_moves = 0;
    for case in cases.lines() {
        let case: serde_json::Value = serde_json::from_str(case).unwrap();
        let moves = case["moves"].as_str().unwrap();
        let got = polybook_json(&["probe", s(&gnuchess_book()), "--moves", moves, "--json"]);
        assert_eq!(
            name_of(&got),
            case["name"].as_str().map(String::from),
            "{moves}"
        );
        named += usize::from(case["name"].is_string());
        let entries = got["entries"].as_array().unwrap();
        assert_eq!(
            entries.len(),
            case["after"].as_object().unwrap().len(),
            "{moves}"
        );
        for e in entries {
            let want = &case["after"][e["uci"].as_str().unwrap()];
            assert_eq!(name_of(e), want.as_str().map(String::from), "{moves} {e}");
            book_moves += 1;
        }
    }
    assert!(named > 50 && book_moves > 100, "{named} {book_moves}");
    // The transposition, by name.
    let got = polybook_ok(&["probe", s(&gnuchess_book()), "--moves", "Nf3 d5 d4"]);
    assert_contains(
        &got,
        "\nopening  D02 Queen's Pawn Game: Zukertort Variation\n",
    );
}

#[test]
fn lines_and_export_name_each_line_as_python_chess_does() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/gm2001.bin");
    let lines = dir.path().join("lines.txt");
    let suite = dir.path().join("suite.pgn");
    let tree = dir.path().join("tree.pgn");
    // Without --openings, `lines` is polyglot's dump: no name.
    let plain = polybook_ok(&["lines", s(&book), "--color", "black"]);
    assert!(!plain.contains("Defense}"), "{plain}");
    polybook_ok(&[
        "lines",
        s(&book),
        "--color",
        "black",
        "--openings",
        "-o",
        s(&lines),
    ]);
    polybook_ok(&["export", s(&book), "--pgn", "--ply", "7", "-o", s(&suite)]);
    polybook_ok(&[
        "export",
        s(&book),
        "--pgn",
        "--max-ply",
        "10",
        "-o",
        s(&tree),
    ]);
    let counts = python_names(
        r#"
import re, chess.pgn
# lines: "N: 1. e4 c5{80%} ... {trans: ...} {ECO Name}", the name last.
checked = 0
for text in open(sys.argv[1]).read().splitlines()[1:]:
    body = text.split(": ", 1)[1]
    m = re.search(r" ?\{([A-E]\d\d [^{}]*)\}$", body)
    name = m.group(1) if m else None
    if m:
        body = body[: m.start()]
    board = chess.Board()
    for token in re.sub(r"\{[^}]*\}", " ", body).split():
        if not token[0].isdigit():
            board.push_san(token)
    assert name == line_name(board), (text, line_name(board))
    checked += 1
# the suite: one game per opening, ECO and Opening tags for its line.
games = 0
with open(sys.argv[2]) as f:
    while (game := chess.pgn.read_game(f)) is not None:
        board = game.end().board()
        tags = (game.headers.get("ECO"), game.headers.get("Opening"))
        want = line_name(board)
        assert tags == ((want[:3], want[4:]) if want else (None, None)), (tags, want)
        games += 1
# the tree: a move's comment names the position it leads to when the table names it.
moves = 0
def visit(node):
    global moves
    for child in node.variations:
        want = NAMES.get(child.board().epd())
        assert child.comment.endswith(", " + want) if want else not re.search(r"[A-E]\d\d ", child.comment), (child.comment, want)
        moves += want is not None
        visit(child)
visit(chess.pgn.read_game(open(sys.argv[3])))
print(checked, games, moves)
"#,
        &[s(&lines), s(&suite), s(&tree)],
    );
    let counts: Vec<u64> = counts
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(
        counts[0] > 100 && counts[1] > 100 && counts[2] > 100,
        "{counts:?}"
    );
}

#[test]
fn a_tally_names_its_positions_and_moves_as_a_book_does() {
    let dir = tempfile::tempdir().unwrap();
    let tally = dir.path().join("t.parquet");
    let book = dir.path().join("b.bin");
    let pgn = data("pgn/lichess_magnus_analysed.pgn.xz");
    polybook_ok(&["tally", s(&pgn), "-o", s(&tally)]);
    polybook_ok(&["build", s(&pgn), "-o", s(&book), "--min-games", "1"]);
    let moves = "e4 c5";
    let t = polybook_json(&["probe", s(&tally), "--moves", moves, "--json"]);
    let b = polybook_json(&["probe", s(&book), "--moves", moves, "--json"]);
    assert_eq!(name_of(&t).as_deref(), Some("B20 Sicilian Defense"));
    assert_eq!(name_of(&t), name_of(&b));
    let by_move = |v: &serde_json::Value, list: &str| -> Vec<(String, Option<String>)> {
        let mut moves: Vec<_> = v[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["uci"].as_str().unwrap().to_string(), name_of(m)))
            .collect();
        moves.sort();
        moves
    };
    // Every book move is a move of the tally (the book leaves out moves that only lost), named
    // alike.
    let (t_moves, b_moves) = (by_move(&t, "moves"), by_move(&b, "entries"));
    assert!(b_moves.len() > 3, "{b_moves:?}");
    for m in &b_moves {
        assert!(t_moves.contains(m), "{m:?} not in {t_moves:?}");
    }
    let text = polybook_ok(&["probe", s(&tally), "--moves", moves]);
    assert_contains(&text, "\nopening  B20 Sicilian Defense\n");
}
