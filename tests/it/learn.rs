//! `polybook learn` against PolyGlot itself: Debian's `polyglot` runs as an xboard adapter with
//! `BookLearn=true` around `polybook uci`, plays two games from a copy of the GNU Chess book and
//! writes its learn fields; `polybook learn` on the same games writes the same bytes. python-chess
//! reads the learn fields back, and computes on real games what each field must hold.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

use common::{
    gnuchess_book, polybook_fails, polybook_match, polybook_match_ok, polybook_ok, python, stderr,
};

use common::path_str as s;

/// A writable copy of the GNU Chess book in a new folder.
fn temp_book() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("book.bin");
    std::fs::copy(gnuchess_book(), &book).unwrap();
    (dir, book)
}

/// [`temp_book`], with the games `pgn` written to `name` beside the book.
fn temp_book_and_games(name: &str, pgn: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (dir, book) = temp_book();
    let games = common::write_file(dir.path(), name, pgn);
    (dir, book, games)
}

/// Moves in UCI from the start position as SAN movetext (`1. e4 c5 2. Nf3`).
fn movetext(moves: &[String]) -> String {
    let mut pos = Chess::default();
    let mut out = Vec::new();
    for (ply, uci) in moves.iter().enumerate() {
        let m = UciMove::from_ascii(uci.as_bytes())
            .unwrap()
            .to_move(&pos)
            .unwrap();
        if ply % 2 == 0 {
            out.push(format!("{}.", ply / 2 + 1));
        }
        out.push(San::from_move(&pos, m).to_string());
        pos.play_unchecked(m);
    }
    out.join(" ")
}

/// An xboard session with polyglot: lines sent, `move` lines awaited.
struct Xboard {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Xboard {
    fn start(dir: &Path) -> Xboard {
        let mut child = Command::new(common::polyglot())
            .arg("learn.ini")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run polyglot");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut xb = Xboard { child, lines };
        xb.send("xboard\nprotover 2");
        xb.wait_for(|l| l == "feature done=1");
        xb
    }

    fn send(&mut self, text: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{text}").unwrap();
        stdin.flush().unwrap();
    }

    fn wait_for(&self, want: impl Fn(&str) -> bool) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("polyglot answers within a minute");
            if want(&line) {
                return line;
            }
        }
    }

    /// The engine's next move, in UCI.
    fn engine_move(&self) -> String {
        let line = self.wait_for(|l| l.starts_with("move "));
        line["move ".len()..].trim().to_string()
    }

    fn quit(mut self) {
        self.send("quit");
        drop(self.child.stdin.take());
        // polyglot ends once its engine has quit.
        for _ in 0..100 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// python-chess's reading of a book's learn values along three lines (1.e4 c5 2.Nf3, 1.d4 Nf6
/// 2.c4, 1.e4 e5), one line of hex values each.
const LEARN_OF_THREE_LINES: &str = r#"
import sys, chess, chess.polyglot
with chess.polyglot.open_reader(sys.argv[1]) as reader:
    for line in ("e2e4 c7c5 g1f3", "d2d4 g8f6 c2c4", "e2e4 e7e5"):
        board, out = chess.Board(), []
        for uci in line.split():
            move = chess.Move.from_uci(uci)
            out.append(hex(next(e.learn for e in reader.find_all(board, minimum_weight=0) if e.move == move)))
            board.push(move)
        print(" ".join(out))
"#;

/// Learns `pgn`'s games into `book` with `options`, written to `out`: the report, and
/// [`LEARN_OF_THREE_LINES`] of `out`.
fn learn_three_lines(book: &Path, pgn: &Path, options: &[&str], out: &Path) -> (String, String) {
    let mut args = vec!["learn", s(book), s(pgn)];
    args.extend(options);
    args.extend(["-o", s(out)]);
    let report = polybook_ok(&args);
    (report, python(LEARN_OF_THREE_LINES, &[s(out)]))
}

/// Three games along those three lines: Alice beats Bob as White and (as `alice`) as Black;
/// Carol and Bob draw.
const THREE_GAMES: &str = "[White \"Alice\"]\n[Black \"Bob\"]\n[Result \"1-0\"]\n\n1. e4 c5 2. Nf3 1-0\n\n\
     [White \"Bob\"]\n[Black \"alice\"]\n[Result \"0-1\"]\n\n1. d4 Nf6 2. c4 0-1\n\n\
     [White \"Carol\"]\n[Black \"Bob\"]\n[Result \"1/2-1/2\"]\n\n1. e4 e5 1/2-1/2\n";

#[test]
fn polyglot_book_learn_writes_what_polybook_learn_writes() {
    let (dir, original) = temp_book();
    let dir = dir.path();
    let learned_by_polyglot = dir.join("polyglot.bin");
    std::fs::copy(&original, &learned_by_polyglot).unwrap();
    // BookLearn before BookFile: polyglot opens the book for writing only if learning is on
    // by then.
    std::fs::write(
        dir.join("learn.ini"),
        format!(
            "[PolyGlot]\nEngineCommand = {} uci\nEngineDir = .\nBookLearn = true\nBook = true\n\
             BookFile = polyglot.bin\nBookRandom = false\n[Engine]\n",
            common::BIN
        ),
    )
    .unwrap();
    let mut xb = Xboard::start(dir);

    // Game 1: polyglot has Black (its default after `new`) and wins.
    xb.send("new\nst 1");
    let mut game1 = Vec::new();
    for ours in ["e2e4", "g1f3", "d2d4"] {
        xb.send(&format!("usermove {ours}"));
        game1.push(ours.to_string());
        game1.push(xb.engine_move());
    }
    xb.send("result 0-1 {Black wins}");

    // Game 2: polyglot has White (`go` at the start) and draws.
    xb.send("new\nst 1\ngo");
    let mut game2 = vec![xb.engine_move()];
    for ours in ["c7c5", "d7d6"] {
        xb.send(&format!("usermove {ours}"));
        game2.push(ours.to_string());
        game2.push(xb.engine_move());
    }
    xb.send("result 1/2-1/2 {Draw agreed}");
    // A `ping` answered means that the result line was handled before quitting.
    xb.send("ping 7");
    xb.wait_for(|l| l == "pong 7");
    xb.quit();

    let pgn = common::write_file(
        dir,
        "games.pgn",
        format!(
            "[White \"Human\"]\n[Black \"polybook\"]\n[Result \"0-1\"]\n\n{} 0-1\n\n\
             [White \"polybook\"]\n[Black \"Human\"]\n[Result \"1/2-1/2\"]\n\n{} 1/2-1/2\n",
            movetext(&game1),
            movetext(&game2)
        ),
    );
    let ours = dir.join("ours.bin");
    let report = polybook_ok(&[
        "learn",
        s(&original),
        s(&pgn),
        "--player",
        "polybook",
        "-o",
        s(&ours),
    ]);
    common::assert_contains(&report, "2 games read, 2 used");
    let theirs = std::fs::read(&learned_by_polyglot).unwrap();
    assert_ne!(
        theirs,
        std::fs::read(&original).unwrap(),
        "polyglot learned nothing"
    );
    assert!(
        std::fs::read(&ours).unwrap() == theirs,
        "polybook learn and polyglot's BookLearn differ on {game1:?} and {game2:?}"
    );

    // python-chess reads polyglot's fields: games in the high half, points (win 2, draw 1) low.
    let script = r#"
import sys, chess, chess.polyglot
book, game1, game2 = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
with chess.polyglot.open_reader(book) as reader:
    for moves, side, expected in ((game1, chess.BLACK, 0x00010002), (game2, chess.WHITE, 0x00010001)):
        board = chess.Board()
        for uci in moves:
            move = chess.Move.from_uci(uci)
            if board.turn == side:
                hits = [e for e in reader.find_all(board, minimum_weight=0) if e.move == move]
                print(uci, hex(hits[0].learn) if hits else "none", hex(expected))
            board.push(move)
"#;
    let out = python(
        script,
        &[s(&learned_by_polyglot), &game1.join(" "), &game2.join(" ")],
    );
    let mut in_book = 0;
    for line in out.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f[1] != "none" {
            assert_eq!(f[1], f[2], "{out}");
            in_book += 1;
        }
    }
    assert!(in_book >= 4, "polyglot played few book moves: {out}");
}

#[test]
fn learn_from_real_games_as_python_chess_computes_it() {
    // A game set up from a [FEN] (the Sicilian after 2. Nf3) is learned from its position.
    let (_dir, book, fen_game) = temp_book_and_games(
        "fen.pgn",
        "[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n[SetUp \"1\"]\n\
         [FEN \"rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2\"]\n\n\
         2... d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 1-0\n",
    );
    let dortmund = common::bundled("dortmund.pgn");
    let before = std::fs::read(&book).unwrap();
    let report = polybook_ok(&["learn", s(&book), s(&dortmund), s(&fen_game), "--json"]);
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let (used, changed) = (
        report["games_used"].as_u64().unwrap(),
        report["changed"].as_array().unwrap().len(),
    );
    assert!(
        used > 300 && changed > 1000,
        "{used} games used, {changed} changed"
    );
    // Only the learn fields changed, and the book is still a valid sorted book.
    let after = std::fs::read(&book).unwrap();
    assert_eq!(before.len(), after.len());
    for (a, b) in before.chunks(16).zip(after.chunks(16)) {
        assert_eq!(a[..12], b[..12]);
    }
    assert!(polybook_ok(&["verify", s(&book)]).contains(": OK:"));

    // python-chess plays every finished game and adds its result, from the mover's view, to the
    // first entry of the position with the move played (PolyGlot's rule).
    let script = r#"
import struct, sys, chess, chess.pgn, chess.polyglot
original, learned, pgns = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(original, "rb").read()
first = {}
for i in range(0, len(data), 16):
    key, raw = struct.unpack(">QH", data[i:i + 10])
    first.setdefault((key, raw), i // 16)
expected = {}
points = {"1-0": (2, 0), "0-1": (0, 2), "1/2-1/2": (1, 1)}
with chess.polyglot.open_reader(original) as reader:
    for path in pgns:
        with open(path, encoding="latin-1") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                result = game.headers.get("Result")
                if result not in points:
                    continue
                board = game.board()
                for move in game.mainline_moves():
                    key = chess.polyglot.zobrist_hash(board)
                    for e in reader.find_all(board, minimum_weight=0):
                        if e.move == move:
                            index = first[(key, e.raw_move)]
                            n, s = expected.get(index, (0, 0))
                            expected[index] = (n + 1, s + points[result][0 if board.turn else 1])
                            break
                    board.push(move)
out = open(learned, "rb").read()
wrong = 0
for i in range(0, len(out), 16):
    learn = struct.unpack(">I", out[i + 12:i + 16])[0]
    n, s = expected.get(i // 16, (0, 0))
    if learn != (n << 16) | s:
        wrong += 1
print(len(expected), wrong)
"#;
    let out = python(
        script,
        &[s(&gnuchess_book()), s(&book), s(&dortmund), s(&fen_game)],
    );
    let counts: Vec<usize> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
    assert_eq!(
        counts[0],
        report["changed"].as_array().unwrap().len(),
        "{out}"
    );
    assert_eq!(counts[1], 0, "entries whose learn field differs: {out}");
}

#[test]
fn player_and_color_choose_the_learning_side() {
    let (dir, book, pgn) = temp_book_and_games("alice.pgn", THREE_GAMES);
    let out = dir.path().join("out.bin");
    // python-chess reads the learn field of each move of the three games, in order.
    let fields = |options: &[&str]| learn_three_lines(&book, &pgn, options, &out);
    // Alice's moves: her wins as White and as Black (any case of her name).
    assert_eq!(
        fields(&["--player", "ALICE"]).1,
        "0x10002 0x0 0x10002\n0x0 0x10002 0x0\n0x10002 0x0\n"
    );
    // Alice's moves as White only.
    // (1. e4 of the third game is the same entry as the first game's.)
    assert_eq!(
        fields(&["--player", "alice", "--color", "white"]).1,
        "0x10002 0x0 0x10002\n0x0 0x0 0x0\n0x10002 0x0\n"
    );
    // Every game's Black moves: a loss, a win, a draw.
    assert_eq!(
        fields(&["--color", "black"]).1,
        "0x0 0x10000 0x0\n0x0 0x10002 0x0\n0x0 0x10001\n"
    );
    // Both sides: 1. e4 was played twice (a win and a draw).
    let (report, learned) = fields(&[]);
    assert_eq!(
        learned,
        "0x20003 0x10000 0x10002\n0x10000 0x10002 0x10000\n0x20003 0x10001\n"
    );
    common::assert_contains(&report, "3 games read, 3 used");
    common::assert_contains(&report, "7 entries changed");
    common::assert_contains(&report, "463b96181691fc9c e2e4: - -> 2g 75%");
}

#[test]
fn learning_twice_adds_up_and_in_place_is_atomic() {
    let (dir, book, pgn) =
        temp_book_and_games("g.pgn", "[Result \"1/2-1/2\"]\n\n1. e4 e5 1/2-1/2\n");
    // In place (no -o), then with -o naming the book itself.
    polybook_ok(&["learn", s(&book), s(&pgn)]);
    let report = polybook_ok(&["learn", s(&book), s(&pgn), "-o", s(&book)]);
    common::assert_contains(&report, "463b96181691fc9c e2e4: 1g 50% -> 2g 50%");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "a temporary file was left: {names:?}");
    let probe = polybook_ok(&["probe", s(&book), "--json"]);
    let probe: serde_json::Value = serde_json::from_str(&probe).unwrap();
    let e4 = common::json_find(&probe["entries"], "uci", "e2e4");
    assert_eq!(e4["learn"], 0x0002_0002);
    assert_eq!(e4["learn_games"], 2);
    assert_eq!(e4["learn_score"], 0.5);
    // Moves without games: learn 0, no score.
    let d4 = common::json_find(&probe["entries"], "uci", "d2d4");
    assert_eq!(
        (&d4["learn_games"], &d4["learn_score"]),
        (&0.into(), &serde_json::Value::Null)
    );
    // The table shows the decoded value.
    let table = polybook_ok(&["probe", s(&book), "--no-board"]);
    // The learn column: after move, uci, weight and share, 10 wide (the opening's name follows).
    let learn = |san: &str| {
        let row = table.lines().find(|l| l.starts_with(san)).unwrap();
        row[32..42].trim().to_string()
    };
    assert_eq!(learn("e4 "), "2g 50%", "{table}");
    assert_eq!(learn("d4 "), "-", "{table}");
}

#[test]
fn games_that_never_touch_the_book_change_nothing() {
    let (dir, book, pgn) = temp_book_and_games(
        "endgame.pgn",
        "[Result \"1-0\"]\n[SetUp \"1\"]\n[FEN \"7k/8/5K2/8/8/8/8/6R1 w - - 0 1\"]\n\n1. Rg7 Kh7 1-0\n\n\
         [Result \"*\"]\n\n1. e4 e5 *\n",
    );
    let out = dir.path().join("out.bin");
    let report = polybook_ok(&["learn", s(&book), s(&pgn), "-o", s(&out)]);
    common::assert_contains(&report, "0 entries changed");
    common::assert_contains(&report, "1 without a result");
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&book).unwrap());
}

#[test]
fn bad_learn_input_is_one_line() {
    let (dir, book) = temp_book();
    let d = dir.path();
    let pgn = common::write_file(d, "g.pgn", "[Result \"1-0\"]\n\n1. e4 1-0\n");
    let before = std::fs::read(&book).unwrap();
    polybook_fails(
        &["learn", s(&d.join("missing.bin")), s(&pgn)],
        1,
        "cannot open book",
    );
    polybook_fails(
        &["learn", s(&book), s(&d.join("missing.pgn"))],
        1,
        "missing.pgn",
    );
    let empty_dir = d.join("nothing");
    std::fs::create_dir(&empty_dir).unwrap();
    polybook_fails(&["learn", s(&book), s(&empty_dir)], 1, "no PGN files");
    polybook_fails(
        &["learn", s(&book), s(&pgn), "-o", s(&empty_dir)],
        1,
        "is a directory",
    );
    polybook_fails(
        &["learn", s(&book), s(&pgn), "--color", "green"],
        2,
        "not a colour",
    );
    // A book that is not one.
    polybook_fails(&["learn", s(&pgn), s(&pgn)], 1, "not a Polyglot book");
    assert_eq!(
        std::fs::read(&book).unwrap(),
        before,
        "a refusal wrote the book"
    );
}

/// A book of the start position's e2e4 and d2d4, weight 1 each, in `dir`.
fn two_move_book(dir: &Path) -> PathBuf {
    let path = dir.join("two.bin");
    common::start_book(&path, &[("e2e4", 1), ("d2d4", 1)]);
    path
}

/// How often the engine plays e2e4 from the start in `n` games from `book`, with `selection`.
fn e4_count(book: &Path, selection: &str, n: usize) -> usize {
    let mut input = format!(
        "setoption name BookFile value {}\nsetoption name BookSelection value {selection}\n\
         setoption name BookSeed value 12345\n",
        book.display()
    );
    for _ in 0..n {
        input.push_str("position startpos\ngo depth 1 wtime 60000 btime 60000\n");
    }
    input.push_str("isready\n");
    let out = common::uci_session(&input);
    let moves = common::bestmoves(&out);
    assert_eq!(moves.len(), n, "{out}");
    moves.iter().filter(|&&m| m == "e2e4").count()
}

#[test]
fn the_learned_selection_prefers_the_move_that_won() {
    let dir = tempfile::tempdir().unwrap();
    let book = two_move_book(dir.path());
    // 1. e4 won 10 games, 1. d4 lost 10.
    let mut pgn = String::new();
    for _ in 0..10 {
        pgn.push_str("[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n[Result \"0-1\"]\n\n1. d4 d5 0-1\n\n");
    }
    let games = common::write_file(dir.path(), "games.pgn", pgn);
    polybook_ok(&["learn", s(&book), s(&games), "--color", "white"]);
    let table = polybook_ok(&["probe", s(&book), "--no-board"]);
    assert!(
        table.contains("10g 100%") && table.contains("10g 0%"),
        "{table}"
    );
    // Weights alone: even. Learned: e4 has 21/22 of the learned weight (1 × 21/22 against
    // 1 × 1/22).
    let n = 400;
    let weighted = e4_count(&book, "weighted", n);
    let learned = e4_count(&book, "learned", n);
    assert!(
        (150..=250).contains(&weighted),
        "weighted: e4 {weighted} of {n}"
    );
    assert!(learned >= 360, "learned: e4 {learned} of {n}");
    // The same seed gives the same picks.
    assert_eq!(e4_count(&book, "learned", n), learned);
}

#[test]
fn match_book_learn_updates_the_book_each_move_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A small book in front (1. e4 only), the GNU Chess book behind it.
    let small = d.join("small.bin");
    common::start_book(&small, &[("e2e4", 1)]);
    let big = d.join("big.bin");
    std::fs::copy(gnuchess_book(), &big).unwrap();
    let (small_before, big_before) = (std::fs::read(&small).unwrap(), std::fs::read(&big).unwrap());
    let pgn = d.join("match.pgn");
    let out = polybook_match_ok(
        &["builtin:Hash=8", "builtin:Hash=8"],
        &[
            "--nodes",
            "300",
            "--games",
            "2",
            "--book",
            s(&small),
            "--book",
            s(&big),
            "--book-plies",
            "6",
            "--book-learn",
            "--seed",
            "7",
            "--pgn",
            s(&pgn),
        ],
    );
    common::assert_contains(&stderr(&out), "book learning: 2 learn field updates in");
    // Only learn fields changed, both books stay valid.
    for (path, before) in [(&small, small_before), (&big, big_before)] {
        let after = std::fs::read(path).unwrap();
        assert_eq!(after.len(), before.len());
        assert!(
            before
                .chunks(16)
                .zip(after.chunks(16))
                .all(|(a, b)| a[..12] == b[..12])
        );
        assert!(polybook_ok(&["verify", s(path)]).contains(": OK:"));
    }
    // python-chess reads the games back: each move marked `book` learns the game's result for
    // its side, in the first book with a move (weight 1 or more) in the position.
    let script = r#"
import struct, sys, chess, chess.pgn, chess.polyglot
small, big, original, pgn = sys.argv[1:5]
books = [small, original]
expected = [{}, {}]
points = {"1-0": (2, 0), "0-1": (0, 2), "1/2-1/2": (1, 1)}
readers = [chess.polyglot.open_reader(b) for b in books]
with open(pgn) as f:
    while (game := chess.pgn.read_game(f)) is not None:
        result = game.headers["Result"]
        board = game.board()
        for node in game.mainline():
            if node.comment.strip() == "book" and result in points:
                which = next(i for i, r in enumerate(readers) if any(True for _ in r.find_all(board)))
                entry = next(e for e in readers[which].find_all(board, minimum_weight=0) if e.move == node.move)
                k = (entry.key, entry.raw_move)
                n, s = expected[which].get(k, (0, 0))
                expected[which][k] = (n + 1, s + points[result][0 if board.turn else 1])
            board.push(node.move)
bad = 0
for path, exp in ((small, expected[0]), (big, expected[1])):
    data = open(path, "rb").read()
    seen = set()
    for i in range(0, len(data), 16):
        key, raw, weight, learn = struct.unpack(">QHHI", data[i:i + 16])
        n, s = exp.get((key, raw), (0, 0)) if (key, raw) not in seen else (0, 0)
        seen.add((key, raw))
        if learn != (n << 16) | s:
            bad += 1
print(sum(n for n, _ in expected[0].values()), sum(n for n, _ in expected[1].values()), bad)
"#;
    let out = python(script, &[s(&small), s(&big), s(&gnuchess_book()), s(&pgn)]);
    let counts: Vec<usize> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
    // 1. e4 of both games learned in the small book; the other book moves in the big one.
    assert_eq!(counts[0], 2, "{out}");
    assert!(counts[1] >= 2, "{out}");
    assert_eq!(counts[2], 0, "entries whose learn field differs: {out}");
}

#[test]
fn match_book_learn_needs_a_book() {
    let out = polybook_match(&["builtin", "builtin"], &["--book-learn"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_tournament_learns_too() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("e4.bin");
    common::start_book(&book, &[("e2e4", 1)]);
    let pgn = dir.path().join("t.pgn");
    polybook_match_ok(
        &["A=builtin:Hash=8", "B=builtin:Hash=8", "C=builtin:Hash=8"],
        &[
            "--nodes",
            "300",
            "--games",
            "2",
            "--book",
            s(&book),
            "--book-learn",
            "--seed",
            "3",
            "--pgn",
            s(&pgn),
        ],
    );
    // Every finished game opened 1. e4 from the book: White's result, that many times.
    let script = r#"
import sys, chess, chess.pgn, chess.polyglot
games = points = 0
with open(sys.argv[2]) as f:
    while (game := chess.pgn.read_game(f)) is not None:
        result = game.headers["Result"]
        if result in ("1-0", "0-1", "1/2-1/2"):
            games += 1
            points += {"1-0": 2, "0-1": 0, "1/2-1/2": 1}[result]
with chess.polyglot.open_reader(sys.argv[1]) as reader:
    learn = next(reader.find_all(chess.Board())).learn
print(games, points, learn >> 16, learn & 0xffff)
"#;
    let out = python(script, &[s(&book), s(&pgn)]);
    let n: Vec<u32> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
    assert_eq!(n[0], 6, "three pairings of two games: {out}");
    assert_eq!((n[2], n[3]), (n[0], n[1]), "{out}");
}

/// `--player` repeated: the moves of a side whose tag is any of the names learn (one person's
/// accounts), any case; the others' do not.
#[test]
fn several_player_names_learn_together() {
    let (dir, book, pgn) = temp_book_and_games("accounts.pgn", THREE_GAMES);
    let out = dir.path().join("out.bin");
    let options = ["--player", "ALICE", "--player", "carol"];
    // 1. e4: Alice's win and Carol's draw (2 games, 3 points); Alice's other moves: wins; Bob's
    // moves: nothing.
    assert_eq!(
        learn_three_lines(&book, &pgn, &options, &out).1,
        "0x20003 0x0 0x10002\n0x0 0x10002 0x0\n0x20003 0x0\n"
    );
}
