//! `filter`, `edit` and `export --pgn`, checked against python-chess's `chess.polyglot` and
//! `chess.pgn`: every book written passes `verify`, python-chess probes the changes, and it reads
//! the exported PGN back, every move of it a book move.

use crate::common;

use std::path::{Path, PathBuf};

use common::{gnuchess_book, polybook, polybook_fails, polybook_ok, python, stderr, stdout};

/// The python-chess functions shared by the scripts below: the keys stored in a book file, and a
/// breadth-first walk of a book's moves (weight 1 or more) from the start position.
const WALK: &str = r#"
import collections, struct, sys
import chess, chess.polyglot

def keys_of(path):
    data = open(path, "rb").read()
    return {struct.unpack(">Q", data[i:i + 8])[0] for i in range(0, len(data), 16)}

def entries(reader, board):
    return [(e.raw_move, e.weight) for e in reader.find_all(board, minimum_weight=0)]

def walk(path, max_ply=None):
    """key -> board of the positions in the book that its moves reach in fewer than max_ply plies"""
    stored = keys_of(path)
    reached = {}
    with chess.polyglot.open_reader(path) as reader:
        start = chess.Board()
        seen = {chess.polyglot.zobrist_hash(start)}
        queue = collections.deque([(start, 0)])
        while queue:
            board, ply = queue.popleft()
            key = chess.polyglot.zobrist_hash(board)
            if (max_ply is not None and ply >= max_ply) or key not in stored:
                continue
            reached[key] = board
            for e in reader.find_all(board):
                after = board.copy()
                after.push(e.move)
                k = chess.polyglot.zobrist_hash(after)
                if k not in seen:
                    seen.add(k)
                    queue.append((after, ply + 1))
    return reached
"#;

fn script(body: &str) -> String {
    format!("{WALK}\n{body}")
}

use common::path_str as s;

fn verify(book: &Path) {
    let out = polybook_ok(&["verify", s(book)]);
    assert!(out.contains(": OK:"), "{out}");
}

/// `filter BOOK -o DIR/NAME OPTIONS`, whose output `verify` accepts: that output and the summary
/// line.
fn filter(dir: &Path, book: &Path, name: &str, options: &[&str]) -> (PathBuf, String) {
    let out = dir.join(name);
    let mut args = vec!["filter", s(book), "-o", s(&out)];
    args.extend_from_slice(options);
    let line = polybook_ok(&args);
    verify(&out);
    (out, line)
}

/// Asserts one `polybook: error:` line and exit 1.
fn fails(args: &[&str], what: &str) {
    let err = polybook_fails(args, 1, what);
    assert!(err.starts_with("polybook: error: "), "{err}");
}

fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("book.bin");
    std::fs::copy(gnuchess_book(), &book).unwrap();
    (dir, book)
}

#[test]
fn filter_max_ply_keeps_exactly_what_the_moves_reach() {
    let (dir, book) = temp();
    for n in ["1", "4", "7"] {
        let (out, line) = filter(dir.path(), &book, &format!("ply{n}.bin"), &["--max-ply", n]);
        assert!(line.contains("entries →"), "{line}");
        let result = python(
            &script(
                r#"
n = int(sys.argv[3])
inp, out = walk(sys.argv[1], n), walk(sys.argv[2], n)
assert set(out) == keys_of(sys.argv[2]), "a position of the output is not reached within n plies"
assert set(inp) == set(out), "a position reached within n plies is missing"
with chess.polyglot.open_reader(sys.argv[1]) as a, chess.polyglot.open_reader(sys.argv[2]) as b:
    for board in inp.values():
        assert sorted(entries(a, board)) == sorted(entries(b, board)), board.fen()
print(len(out))
"#,
            ),
            &[s(&book), s(&out), n],
        );
        assert!(result.trim().parse::<u64>().unwrap() > 0, "{result}");
    }
}

#[test]
fn filter_min_weight_and_min_share_as_python_chess_sees_them() {
    let (dir, book) = temp();
    let (heavy, _) = filter(dir.path(), &book, "heavy.bin", &["--min-weight", "50"]);
    python(
        &script(
            r#"
import struct
data = open(sys.argv[2], "rb").read()
weights = [struct.unpack(">H", data[i + 10:i + 12])[0] for i in range(0, len(data), 16)]
assert weights and min(weights) >= 50, "an entry lighter than 50 is left"
src = open(sys.argv[1], "rb").read()
assert len(weights) == sum(1 for i in range(0, len(src), 16) if struct.unpack(">H", src[i + 10:i + 12])[0] >= 50)
with chess.polyglot.open_reader(sys.argv[1]) as a, chess.polyglot.open_reader(sys.argv[2]) as b:
    for board in walk(sys.argv[1], 6).values():
        want = [(e.raw_move, e.weight) for e in a.find_all(board, minimum_weight=50)]
        assert sorted(want) == sorted(entries(b, board)), board.fen()
"#,
        ),
        &[s(&book), s(&heavy)],
    );

    let (shared, _) = filter(dir.path(), &book, "shared.bin", &["--min-share", "25"]);
    python(
        &script(
            r#"
with chess.polyglot.open_reader(sys.argv[1]) as a, chess.polyglot.open_reader(sys.argv[2]) as b:
    for board in walk(sys.argv[1], 6).values():
        moves = list(a.find_all(board))
        total = sum(e.weight for e in moves)
        want = [(e.raw_move, e.weight) for e in moves if 100 * e.weight / total >= 25]
        assert sorted(want) == sorted(entries(b, board)), board.fen()
"#,
        ),
        &[s(&book), s(&shared)],
    );
}

#[test]
fn filter_one_side_and_reachable() {
    let (dir, book) = temp();
    let white = dir.path().join("white.bin");
    polybook_ok(&[
        "filter",
        s(&book),
        "-o",
        s(&white),
        "--only-white",
        "--max-ply",
        "10",
    ]);
    verify(&white);
    python(
        &script(
            r#"
reached = walk(sys.argv[1])
assert set(reached) == keys_of(sys.argv[1])
with chess.polyglot.open_reader(sys.argv[1]) as r:
    for board in reached.values():
        if board.turn == chess.BLACK:
            for e in r.find_all(board, minimum_weight=0):
                after = board.copy(); after.push(e.move)
                assert any(True for _ in r.find_all(after)), "a black reply leaves the book"
"#,
        ),
        &[s(&white)],
    );

    let (reachable, line) = filter(dir.path(), &book, "reachable.bin", &["--reachable"]);
    assert!(line.contains("removed"), "{line}");
    let info = polybook_ok(&["info", s(&reachable)]);
    let isolated = info.lines().find(|l| l.starts_with("isolated")).unwrap();
    assert!(isolated.ends_with(" 0"), "{info}");
    let before = polybook_ok(&["info", s(&book)]);
    let count = |text: &str, what: &str| -> String {
        text.lines()
            .find(|l| l.starts_with(what))
            .unwrap()
            .split_whitespace()
            .last()
            .unwrap()
            .to_string()
    };
    // The lines are the same: only the isolated positions went.
    for what in [
        "lines for white",
        "lines for black",
        "positions on lines for white",
    ] {
        assert_eq!(count(&before, what), count(&info, what), "{what}");
    }
}

#[test]
fn filter_that_leaves_nothing_writes_the_empty_book_with_a_warning() {
    let (dir, book) = temp();
    let out = dir.path().join("none.bin");
    let run = polybook(&["filter", s(&book), "-o", s(&out), "--min-weight", "65535"]);
    assert_eq!(run.status.code(), Some(0));
    assert!(
        stderr(&run).starts_with("polybook: warning: "),
        "{}",
        stderr(&run)
    );
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 0);
    verify(&out);
}

#[test]
fn edit_set_remove_add_as_python_chess_sees_them() {
    let (_dir, book) = temp();
    let probe = |moves: &str, uci: &str| -> String {
        python(
            r#"
import sys, chess, chess.polyglot
board = chess.Board()
for m in sys.argv[2].split():
    board.push_san(m)
with chess.polyglot.open_reader(sys.argv[1]) as r:
    print([e.weight for e in r.find_all(board, minimum_weight=0) if e.move.uci() == sys.argv[3]])
"#,
            &[s(&book), moves, uci],
        )
        .trim()
        .to_string()
    };
    let line = polybook_ok(&["edit", s(&book), "--set", "e2e4=7"]);
    assert!(line.contains("→ 7"), "{line}");
    verify(&book);
    assert_eq!(probe("", "e2e4"), "[7]");
    polybook_ok(&["edit", s(&book), "--remove", "e4"]);
    verify(&book);
    assert_eq!(probe("", "e2e4"), "[]");
    polybook_ok(&["edit", s(&book), "--add", "e4=9"]);
    verify(&book);
    assert_eq!(probe("", "e2e4"), "[9]");
    // Castling in SAN finds Polyglot's king-takes-rook entry; -o leaves the book as it is.
    let ruy = "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6";
    let out = book.with_file_name("out.bin");
    let before = std::fs::read(&book).unwrap();
    polybook_ok(&[
        "edit",
        s(&book),
        "--moves",
        ruy,
        "--set",
        "O-O=5",
        "-o",
        s(&out),
    ]);
    assert_eq!(std::fs::read(&book).unwrap(), before);
    verify(&out);
    std::fs::copy(&out, &book).unwrap();
    assert_eq!(probe(ruy, "e1g1"), "[5]");
}

#[test]
fn edit_refusals_leave_the_book_untouched() {
    let (_dir, book) = temp();
    let before = std::fs::read(&book).unwrap();
    let b = s(&book);
    fails(&["edit", b, "--set", "e5=3"], "illegal");
    fails(&["edit", b, "--remove", "Ke2"], "illegal");
    fails(&["edit", b, "--set", "h4=3"], "not in the book");
    fails(&["edit", b, "--remove", "h2h4"], "not in the book");
    fails(&["edit", b, "--add", "e4=3"], "use --set");
    fails(&["edit", b, "--set", "e4=65536"], "0 to 65535");
    fails(&["edit", b, "--add", "h4=-1"], "0 to 65535");
    fails(&["edit", b, "--set", "e4"], "MOVE=WEIGHT");
    assert_eq!(std::fs::read(&book).unwrap(), before);
}

#[test]
fn export_pgn_reads_back_in_python_chess_every_move_a_book_move() {
    let (dir, book) = temp();
    let pgn = dir.path().join("tree.pgn");
    for (ply, share) in [("8", "0"), ("14", "10")] {
        let line = polybook_ok(&[
            "export",
            s(&book),
            "--pgn",
            "-o",
            s(&pgn),
            "--max-ply",
            ply,
            "--min-share",
            share,
        ]);
        assert!(line.contains("moves written"), "{line}");
        let moves = python(
            r#"
import re, sys, chess, chess.pgn, chess.polyglot
game = chess.pgn.read_game(open(sys.argv[2]))
assert not game.errors, game.errors
assert game.headers["Event"] == "polybook export" and game.headers["Result"] == "*"
assert "book.bin" in game.headers["Annotator"]
max_ply, min_share = int(sys.argv[3]), float(sys.argv[4])
count = 0
with chess.polyglot.open_reader(sys.argv[1]) as r:
    def visit(node, ply):
        global count
        board = node.board()
        moves = list(r.find_all(board))
        total = sum(e.weight for e in moves)
        if node.variations:
            assert ply < max_ply
            heaviest = max(e.weight for e in moves)
            main = next(e for e in moves if e.weight == heaviest)
            assert node.variations[0].move == main.move, board.fen()
        for child in node.variations:
            count += 1
            e = next(e for e in moves if e.move == child.move)
            share = 100 * e.weight / total
            assert share >= min_share
            # The weight and share, then the opening the move leads to (checked against
            # python-chess in openings.rs).
            assert re.fullmatch(r"w %d, %.1f%%(, cycle)?(, [A-E][0-9][0-9] .+)?" % (e.weight, share), child.comment), child.comment
            visit(child, ply + 1)
    visit(game, 0)
print(count)
"#,
            &[s(&book), s(&pgn), ply, share],
        );
        let moves: u64 = moves.trim().parse().unwrap();
        assert!(moves > 10, "{moves}");
        assert!(line.contains(&format!("{moves} moves written")), "{line}");
    }
}

#[test]
fn export_pgn_is_capped_by_max_moves() {
    let book = gnuchess_book();
    let out = polybook(&[
        "export",
        s(&book),
        "--pgn",
        "--max-ply",
        "30",
        "--max-moves",
        "100",
    ]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("100 moves written (cut at --max-moves 100)"),
        "{}",
        stderr(&out)
    );
    let moves = python(
        r#"
import sys, io, chess.pgn
game = chess.pgn.read_game(io.StringIO(sys.argv[1]))
assert not game.errors
n = 0
stack = [game]
while stack:
    node = stack.pop()
    n += len(node.variations)
    stack.extend(node.variations)
print(n)
"#,
        &[&stdout(&out)],
    );
    assert_eq!(moves.trim(), "100");
    // The cap cuts variations, never the main line: it is the heaviest line to --max-ply, as
    // python-chess walks it (the first stored move among equal weights).
    let plies = python(
        r#"
import sys, io, chess, chess.pgn, chess.polyglot
game = chess.pgn.read_game(io.StringIO(sys.argv[1]))
main = list(game.mainline_moves())
board, heaviest = chess.Board(), []
with chess.polyglot.open_reader(sys.argv[2]) as r:
    while len(heaviest) < 30:
        moves = [e for e in r.find_all(board) if e.weight > 0]
        if not moves:
            break
        top = max(e.weight for e in moves)
        e = next(e for e in moves if e.weight == top)
        heaviest.append(e.move)
        board.push(e.move)
assert main == heaviest, (len(main), len(heaviest))
print(len(main))
"#,
        &[&stdout(&out), s(&book)],
    );
    assert_eq!(plies.trim(), "30");
}

/// Every book polybook writes passes `verify`: given a corrupt book (an impossible move code, a
/// repeated entry), `filter`, `edit` and `learn` refuse it in one line pointing to `sort`, and write
/// nothing; an unsorted one is written sorted by `filter` and `edit`, and refused by `learn`, which
/// changes learn fields in place.
#[test]
fn commands_that_write_books_never_write_a_corrupt_one() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read(common::data("books/rodent3_guide.bin")).unwrap();
    let entry = |i: usize| original[16 * i..16 * i + 16].to_vec();
    // An impossible move code (from e2 to g5) in entry 3.
    let mut impossible = original.clone();
    impossible[16 * 3 + 8..16 * 3 + 10].copy_from_slice(&((12u16 << 6) | 38).to_be_bytes());
    // Entry 5 twice.
    let mut repeated = original.clone();
    repeated.splice(16 * 5..16 * 5, entry(5));
    // The first and the last entries swapped.
    let mut unsorted = original.clone();
    let n = original.len() / 16;
    unsorted[..16].copy_from_slice(&entry(n - 1));
    unsorted[16 * (n - 1)..].copy_from_slice(&entry(0));
    let game = common::write_file(dir.path(), "g.pgn", "[Result \"1-0\"]\n\n1. e4 e5 1-0\n");
    let out = dir.path().join("out.bin");
    for (name, bytes, sortable) in [
        ("impossible", &impossible, false),
        ("repeated", &repeated, false),
        ("unsorted", &unsorted, true),
    ] {
        let book = common::write_file(dir.path(), format!("{name}.bin"), bytes);
        let b = s(&book);
        let runs = [
            (vec!["filter", b, "-o", s(&out), "--max-ply", "6"], sortable),
            (
                vec!["edit", b, "-o", s(&out), "--moves", "e4", "--add", "a6=1"],
                sortable,
            ),
            (vec!["learn", b, s(&game), "-o", s(&out)], false),
        ];
        for (args, writes) in runs {
            let _ = std::fs::remove_file(&out);
            let o = polybook(&args);
            let err = stderr(&o);
            if writes {
                assert!(o.status.success(), "{args:?}: {err}");
                let verify = common::polybook_ok(&["verify", s(&out)]);
                assert!(verify.contains(": OK:"), "{args:?}: {verify}");
            } else {
                assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
                assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
                assert!(err.contains("polybook sort"), "{args:?}: {err}");
                assert!(!out.exists(), "{args:?}");
            }
        }
        assert_eq!(
            &std::fs::read(&book).unwrap(),
            bytes,
            "{name}: the input changed"
        );
    }
}

/// `filter --moves-of white` cuts from a whole book the book `build --only-white` makes from the
/// same games (and black alike): the positions where that side is to move and no other. With
/// `--min-games 1` every position lies on a line from the start, and the two are the same bytes;
/// with 3, the positions no walk from the start reaches are left out and counted, and the rest is
/// build's. `--only-white` keeps its old meaning (black's replies stay), and the two do not
/// combine.
#[test]
fn filter_moves_of_one_side_is_builds_only_side() {
    let dir = tempfile::tempdir().unwrap();
    let games = common::bundled("dortmund.pgn");
    // A book's entries, 16 bytes each, and its keys.
    let entries = |path: &Path| -> Vec<Vec<u8>> {
        std::fs::read(path)
            .unwrap()
            .chunks(16)
            .map(<[u8]>::to_vec)
            .collect()
    };
    let keys = |entries: &[Vec<u8>]| -> std::collections::BTreeSet<Vec<u8>> {
        entries.iter().map(|e| e[..8].to_vec()).collect()
    };
    for min_games in ["1", "3"] {
        let built = |name: &str, extra: &[&str]| {
            let out = dir.path().join(name);
            let mut args = vec![
                "build",
                "-q",
                s(&games),
                "-o",
                s(&out),
                "--min-games",
                min_games,
            ];
            args.extend_from_slice(extra);
            polybook_ok(&args);
            out
        };
        let full = built("full.bin", &[]);
        for (side, flag) in [("white", "--only-white"), ("black", "--only-black")] {
            let want = entries(&built("side.bin", &[flag]));
            let cut = dir.path().join("cut.bin");
            let report: serde_json::Value = serde_json::from_str(&polybook_ok(&[
                "filter",
                s(&full),
                "-o",
                s(&cut),
                "--moves-of",
                side,
                "--json",
            ]))
            .unwrap();
            verify(&cut);
            let got = entries(&cut);
            let unknown = report["side_unknown"].as_u64().unwrap();
            assert!(want.len() > 50, "{side}");
            let what = format!("--min-games {min_games} --moves-of {side}");
            if min_games == "1" {
                assert_eq!(unknown, 0, "{what}");
                assert!(
                    got == want,
                    "{what}: {} entries, build's {}",
                    got.len(),
                    want.len()
                );
            } else {
                // Build's entries, less the positions left out.
                let left_out = keys(&want).difference(&keys(&got)).count() as u64;
                assert!(
                    unknown > 0 && left_out <= unknown,
                    "{what}: {left_out} of {unknown}"
                );
                let got_keys = keys(&got);
                let kept: Vec<Vec<u8>> = want
                    .iter()
                    .filter(|e| got_keys.contains(&e[..8]))
                    .cloned()
                    .collect();
                assert!(got == kept, "{what}");
            }
            // The old meaning keeps some of the other side's replies.
            let (old, _) = filter(dir.path(), &full, "old.bin", &[flag]);
            let old = entries(&old);
            assert!(!keys(&old).is_subset(&keys(&want)), "{what}: {flag}");
        }
    }
    let book = dir.path().join("full.bin");
    let out = dir.path().join("x.bin");
    let o = polybook(&[
        "filter",
        s(&book),
        "-o",
        s(&out),
        "--moves-of",
        "white",
        "--only-black",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = polybook(&["filter", s(&book), "-o", s(&out), "--moves-of", "green"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!out.exists());
}
