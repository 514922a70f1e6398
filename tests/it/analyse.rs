//! `polybook analyse` against the references: the back-up against a negamax written with
//! python-chess over the same engine scores (`tests/analyse_check.py`, which also decodes the learn
//! fields in ProDeo's layout from the raw bytes), the scores of a UCI engine against Stockfish's own
//! through python-chess, runs killed with `kill -9` and resumed against an uninterrupted one, and
//! the `score` selection in UCI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{BIN, data, polybook, polybook_fails, polybook_ok, python, stderr, stdout};

use common::path_str as s;

const CHECK: &str = include_str!("../analyse_check.py");

/// A real book from `tests/data` with a repetition added: after 1.d4 Nf6 the knights go out and
/// back (2.Nf3 Ng8 3.Ng1), which leads back to the position after 1.d4.
fn book_with_a_repetition(dir: &Path) -> PathBuf {
    let (a, b, c) = (dir.join("a.bin"), dir.join("b.bin"), dir.join("c.bin"));
    let book = data("books/rodent3_guide.bin");
    polybook_ok(&[
        "edit",
        s(&book),
        "-o",
        s(&a),
        "--moves",
        "d4 Nf6",
        "--add",
        "Nf3=1",
    ]);
    polybook_ok(&[
        "edit",
        s(&a),
        "-o",
        s(&b),
        "--moves",
        "d4 Nf6 Nf3",
        "--add",
        "Ng8=1",
    ]);
    polybook_ok(&[
        "edit",
        s(&b),
        "-o",
        s(&c),
        "--moves",
        "d4 Nf6 Nf3 Ng8",
        "--add",
        "Ng1=1",
    ]);
    c
}

/// `moves N positions M repetitions R transpositions T` from the check script.
fn counts(line: &str) -> Vec<u64> {
    line.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// Runs `polybook analyse BOOK -o OUT --nodes NODES -q` with the `more` arguments, which must
/// succeed.
fn analyse(book: &Path, out: &Path, nodes: &str, more: &[&str]) {
    polybook_ok(&common::analyse_args(book, out, nodes, more));
}

/// Rodent's guide book, and that book scored by [`analyse`] at `nodes` (with `more`) as
/// `scored.bin` in `dir`.
fn scored_guide(dir: &Path, nodes: &str, more: &[&str]) -> (PathBuf, PathBuf) {
    let book = data("books/rodent3_guide.bin");
    let out = dir.join("scored.bin");
    analyse(&book, &out, nodes, more);
    (book, out)
}

#[test]
fn the_back_up_is_python_chess_s_negamax_over_the_same_scores() {
    let dir = tempfile::tempdir().unwrap();
    let cycle = book_with_a_repetition(dir.path());
    for (book, nodes) in [(cycle, "3000"), (data("books/rodent3_micro.bin"), "1000")] {
        let out = dir.path().join("scored.bin");
        let json = dir.path().join("scored.jsonl");
        let _ = std::fs::remove_file(cache(&out));
        analyse(&book, &out, nodes, &["--json", s(&json)]);
        let line = python(CHECK, &[s(&book), s(&out), s(&json)]);
        let c = counts(&line);
        assert!(c[0] > 150 && c[1] > 100, "{line}");
        if book.ends_with("c.bin") {
            assert!(c[2] >= 1, "the repetition was not met: {line}");
        } else {
            assert!(c[3] >= 10, "no transposition: {line}");
        }
        // Every book polybook writes passes verify, mark and all.
        let verify = polybook_ok(&["verify", s(&out)]);
        common::assert_contains(&verify, ": OK:");
        let _ = std::fs::remove_file(cache(&out));
    }
}

/// The cache of an output, as `analyse` names it.
pub fn cache(out: &Path) -> PathBuf {
    PathBuf::from(format!("{}.analysis", out.display()))
}

/// Python-chess's Polyglot reader passes over the mark: the scored book's moves are the input's.
#[test]
fn python_chess_reads_a_scored_book_as_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let (book, out) = scored_guide(dir.path(), "500", &[]);
    let script = r#"
import sys, chess, chess.polyglot
a, b = (chess.polyglot.open_reader(p) for p in sys.argv[1:3])
n = 0
def walk(board, depth):
    global n
    moves = sorted((e.move.uci(), e.weight) for e in a.find_all(board))
    assert moves == sorted((e.move.uci(), e.weight) for e in b.find_all(board)), board.fen()
    n += 1
    if depth < 6:
        for m, _ in moves:
            board.push_uci(m); walk(board, depth + 1); board.pop()
walk(chess.Board(), 0)
print(n)
"#;
    let n: u64 = python(script, &[s(&book), s(&out)]).trim().parse().unwrap();
    assert!(n > 50, "{n}");
}

#[test]
fn a_uci_engine_s_scores_are_stockfish_s_own() {
    let stockfish = common::stockfish();
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_guide.bin");
    let out = dir.path().join("scored.bin");
    let json = dir.path().join("scored.jsonl");
    analyse(
        &book,
        &out,
        "3000",
        &[
            "--engine",
            &format!("cmd:{stockfish}"),
            "--option",
            "Threads=1",
            "--option",
            "Hash=16",
            "--concurrency",
            "2",
            "--json",
            s(&json),
        ],
    );
    let script = r#"
import json, sys, chess, chess.engine, chess.polyglot
MATE = 32000
reader = chess.polyglot.open_reader(sys.argv[2])
engine = chess.engine.SimpleEngine.popen_uci(sys.argv[3])
engine.configure({"Threads": 1, "Hash": 16})
n = 0
for i, line in enumerate(open(sys.argv[1])):
    o = json.loads(line)
    board = chess.Board(o["fen"])
    root = None
    if o["in_book"]:
        book = {e.move for e in reader.find_all(board, minimum_weight=0)}
        root = [m for m in board.legal_moves if m not in book]
    info = engine.analyse(board, chess.engine.Limit(nodes=3000), root_moves=root, game=i)
    score = info["score"].relative
    if score.is_mate():
        m = score.mate()
        want = MATE - (2 * m - 1) if m > 0 else -(MATE + 2 * m)
    else:
        want = score.score()
    assert (o["score"], o["depth"]) == (want, info["depth"]), (o, want, info["depth"])
    n += 1
engine.quit()
print(n)
"#;
    let n: u64 = python(script, &[s(&json), s(&book), stockfish])
        .trim()
        .parse()
        .unwrap();
    assert!(n > 100, "{n}");
}

/// `analyse` of `book` at 3000 nodes a position, with the `more` arguments.
fn analyse_cmd(book: &Path, out: &Path, concurrency: &str, resume: bool, more: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(common::analyse_args(book, out, "3000", &[]))
        .args(["--concurrency", concurrency])
        .args(more)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if resume {
        c.arg("--resume");
    }
    c
}

/// Runs of `analyse book` (with `more`) killed with SIGKILL at each of `waits` (in thousandths of
/// the uninterrupted run's time at one engine, so that a faster engine or machine kills at the
/// same points of the work), each resuming the one before, at two engines, then finished: the
/// book is byte for byte the uninterrupted run's.
fn killed_runs_resume_to_the_same_bytes(book: &Path, more: &[&str], waits: &[u32]) {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.bin");
    let started = Instant::now();
    let status = analyse_cmd(book, &whole, "1", false, more)
        .status()
        .unwrap();
    assert!(status.success());
    let whole_time = started.elapsed();
    let out = dir.path().join("killed.bin");
    let mut kills = 0;
    for &wait in waits {
        let mut child = analyse_cmd(book, &out, "2", true, more).spawn().unwrap();
        std::thread::sleep(whole_time * wait / 1000);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
            child.wait().unwrap();
            assert!(!out.exists(), "a killed run left a book");
        } else {
            child.wait().unwrap();
        }
    }
    assert!(
        kills + 1 >= waits.len(),
        "only {kills} runs were still going when killed"
    );
    let status = analyse_cmd(book, &out, "2", true, more).status().unwrap();
    assert!(status.success());
    assert!(
        std::fs::read(&whole).unwrap() == std::fs::read(&out).unwrap(),
        "the resumed book differs from the uninterrupted one"
    );
}

#[test]
fn runs_killed_at_random_moments_resume_to_the_uninterrupted_bytes() {
    // Moments spread over the run (about 5.5 s at 3000 nodes and one engine, half that at two):
    // a fixed list, so that a failure can be run again as it was. Together they stay well within
    // the two-engine runs' share of the work, so that every run but the last is killed.
    killed_runs_resume_to_the_same_bytes(
        &data("books/rodent3_micro.bin"),
        &[],
        &[20, 50, 80, 40, 70, 50],
    );
}

/// The grown guide book of the expansion tests: a few rounds, each adding moves.
const EXPAND: [&str; 9] = [
    "--expand",
    "--max-ply",
    "6",
    "--expand-depth",
    "2",
    "--expand-positions",
    "100000",
    "--expand-width",
    "2",
];

/// `analyse --expand` killed in any round resumes, replays the finished rounds from the cache and
/// grows the same book as a run never interrupted.
#[test]
fn expanding_runs_killed_at_random_moments_resume_to_the_uninterrupted_bytes() {
    // About 3.6 s at one engine, half that at two: 13 rounds.
    let more = [
        "--expand",
        "--max-ply",
        "12",
        "--expand-depth",
        "3",
        "--expand-positions",
        "1200",
    ];
    killed_runs_resume_to_the_same_bytes(
        &data("books/rodent3_guide.bin"),
        &more,
        &[40, 100, 70, 90, 50],
    );
}

/// The grown book is what python-chess finds: the back-up over the grown book agrees move for
/// move, and no position within the ply limit is left where the engine's move outside the book
/// beats the book's best by the margin, or where the book has fewer good moves than the width.
/// The book passes verify, and `--concurrency 64` changes nothing.
#[test]
fn expand_grows_the_book_until_python_chess_finds_no_thin_or_wrong_position() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_guide.bin");
    let (out, json) = (dir.path().join("grown.bin"), dir.path().join("grown.jsonl"));
    let mut args = common::analyse_args(&book, &out, "2000", &EXPAND);
    args.extend(["--json", s(&json)]);
    let said = stderr(&polybook(&args));
    let added: u64 = said
        .split("expanded: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(added >= 50, "{said}");
    assert!(!said.contains("--expand-positions reached"), "{said}");
    let grown = std::fs::read(&out).unwrap();
    let input = std::fs::read(&book).unwrap();
    // The mark, the input's entries and the added ones.
    assert_eq!(
        grown.len(),
        16 + input.len() + 16 * added as usize,
        "{said}"
    );
    let line = python(
        CHECK,
        &[s(&out), s(&out), s(&json), "--expand", "30", "2", "6"],
    );
    let checked: u64 = line
        .split("checked ")
        .nth(1)
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(checked >= 50, "{line}");
    let moves = counts(&line)[0];
    assert!(moves >= 150 + added, "{line}");
    let verify = polybook_ok(&["verify", s(&out)]);
    common::assert_contains(&verify, ": OK:");
    // Two engines at once grow the same book.
    let two = dir.path().join("two.bin");
    let mut args = common::analyse_args(&book, &two, "2000", &EXPAND);
    args.extend(["--concurrency", "2"]);
    polybook_ok(&args);
    assert!(
        std::fs::read(&two).unwrap() == grown,
        "--concurrency 2 grew another book"
    );
}

/// The budget holds: `--expand-positions N` adds N moves at most and says when it ran out; the
/// expansion options need `--expand`.
#[test]
fn expand_stops_at_its_budget_and_its_options_need_it() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_guide.bin");
    let out = dir.path().join("ten.bin");
    let o = polybook(&common::analyse_args(
        &book,
        &out,
        "1000",
        &["--expand", "--expand-positions", "10"],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    common::assert_contains(&stderr(&o), "expanded: 10 moves added");
    common::assert_contains(&stderr(&o), "--expand-positions reached");
    let input = std::fs::read(&book).unwrap().len();
    assert_eq!(std::fs::read(&out).unwrap().len(), 16 + input + 160);
    let o = polybook(&["analyse", s(&book), "-o", s(&out), "--expand-width", "3"]);
    common::failed(&o, 2, "required arguments were not provided: --expand");
}

/// `--expand-priority reach` grows within the same budget a book that `verify` accepts, and not
/// the book Lincke's order grows (it takes the positions a game reaches first, and the book's ends).
#[test]
fn expand_by_reach_stays_in_its_budget_and_grows_another_book() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_guide.bin");
    let grown = |name: &str, priority: &str| {
        let out = dir.path().join(name);
        let o = polybook(&common::analyse_args(
            &book,
            &out,
            "1000",
            &[
                "--expand",
                "--expand-positions",
                "10",
                "--expand-priority",
                priority,
            ],
        ));
        assert!(o.status.success(), "{}", stderr(&o));
        common::assert_contains(&stderr(&o), "expanded: 10 moves added");
        let verify = polybook_ok(&["verify", s(&out)]);
        common::assert_contains(&verify, ": OK:");
        std::fs::read(&out).unwrap()
    };
    assert_ne!(grown("reach.bin", "reach"), grown("lincke.bin", "lincke"));
}

#[test]
fn sigterm_stops_a_run_at_once_and_keeps_its_work() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_micro.bin");
    let out = dir.path().join("out.bin");
    let child = Command::new(BIN)
        .args(common::analyse_args(&book, &out, "50000", &[]))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Signalled once it has kept some work (on a loaded machine that takes longer than usual).
    let waiting = Instant::now();
    let lines = || {
        std::fs::read_to_string(cache(&out))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    while lines() <= 10 && waiting.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = Instant::now();
    common::send_signal(child.id(), "TERM");
    let result = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(result.status.code(), Some(130));
    let err = stderr(&result);
    assert!(
        err.contains("interrupted") && err.contains("--resume"),
        "{err}"
    );
    assert!(!out.exists());
    let kept = std::fs::read_to_string(cache(&out))
        .unwrap()
        .lines()
        .count();
    assert!(kept > 10, "{kept}");
    // Without --resume the cache is not thrown away.
    let err = polybook_fails(
        &["analyse", s(&book), "-o", s(&out), "--nodes", "50000"],
        1,
        "analysed by an earlier run",
    );
    common::assert_contains(&err, "--resume");
    // Other settings: refused, naming what differs.
    let err = polybook_fails(
        &[
            "analyse",
            s(&book),
            "-o",
            s(&out),
            "--nodes",
            "7",
            "--resume",
        ],
        1,
        "the analysis cache of another run",
    );
    common::assert_contains(&err, "limits");
}

#[test]
fn corrupt_books_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin");
    // An impossible move code (from e2 to g5) in a copy of a real book.
    let mut bytes = std::fs::read(data("books/rodent3_guide.bin")).unwrap();
    bytes[16 * 3 + 8..16 * 3 + 10].copy_from_slice(&((12u16 << 6) | 38).to_be_bytes());
    let bad = common::write_file(dir.path(), "bad.bin", bytes);
    let err = polybook_fails(
        &["analyse", s(&bad), "-o", s(&out)],
        1,
        "impossible move codes",
    );
    common::assert_contains(&err, "polybook sort");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let trailing = data("books/invalid/gnuchess-smallbook-trailing-byte.bin");
    let err = polybook_fails(
        &["analyse", s(&trailing), "-o", s(&out)],
        1,
        "not a multiple of 16",
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!out.exists());
}

#[test]
fn the_score_selection_plays_the_best_scored_move_in_uci() {
    let dir = tempfile::tempdir().unwrap();
    let (book, out) = scored_guide(dir.path(), "2000", &[]);
    // The best-scored move of the start and after 1.e4, decoded by python-chess from the learn
    // fields (ties to the heavier, then the first stored).
    let script = r#"
import sys, chess, chess.polyglot
r = chess.polyglot.open_reader(sys.argv[1])
for moves in ([], ["e2e4"]):
    b = chess.Board()
    for m in moves: b.push_uci(m)
    def score(e):
        s = (e.learn >> 16) & 0xFFFF
        return s - 0x10000 if s >= 0x8000 else s
    es = list(r.find_all(b))
    best = max(score(e) for e in es)
    top = [e for e in es if score(e) == best]
    heaviest = max(e.weight for e in top)
    print(next(e for e in top if e.weight == heaviest).move.uci())
"#;
    let want = python(script, &[s(&out)]);
    let want: Vec<&str> = want.split_whitespace().collect();
    let session = format!(
        "uci\nsetoption name BookFile value {}\nsetoption name BookSelection value score\n\
         position startpos\ngo movetime 100\nposition startpos moves e2e4\ngo movetime 100\nquit\n",
        out.display()
    );
    let reply = common::uci_session(&session);
    assert_eq!(common::bestmoves(&reply), want, "{reply}");
    // A book without scores: said once, then picked by weight.
    let session = format!(
        "uci\nsetoption name BookSelection value score\nsetoption name BookFile value {}\n\
         position startpos\ngo movetime 100\nquit\n",
        book.display()
    );
    let reply = common::uci_session(&session);
    assert_eq!(reply.matches("has no scores").count(), 1, "{reply}");
    assert_eq!(common::bestmoves(&reply).len(), 1, "{reply}");
}

#[test]
fn probe_shows_scores_and_depths_of_a_scored_book() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("a.jsonl");
    let (book, out) = scored_guide(dir.path(), "800", &["--json", s(&json)]);
    let text = stdout(&polybook(&["probe", s(&out), "--no-board"]));
    common::assert_contains(&text, "score depth");
    let probe: serde_json::Value =
        serde_json::from_str(&stdout(&polybook(&["probe", s(&out), "--json"]))).unwrap();
    for e in probe["entries"].as_array().unwrap() {
        let learn = e["learn"].as_u64().unwrap() as u32;
        assert_eq!(
            e["score"].as_i64().unwrap(),
            i64::from((learn >> 16) as u16 as i16)
        );
        assert_eq!(e["depth"].as_u64().unwrap(), u64::from((learn >> 8) & 0xff));
    }
    // The unscored input has no such fields; read as prodeo on demand.
    let plain: serde_json::Value =
        serde_json::from_str(&stdout(&polybook(&["probe", s(&book), "--json"]))).unwrap();
    assert!(plain["entries"][0].get("score").is_none());
}

/// `tests/suite_check.py`, after the helpers it shares with the other suite reference.
const SUITE_CHECK: &str = concat!(
    include_str!("../suite_reference.py"),
    include_str!("../suite_check.py")
);

/// A real book from `tests/data` analysed at a few nodes (scores whose values the tests do not
/// depend on, only that the commands read them as the references do).
fn scored_micro(dir: &Path) -> PathBuf {
    let out = dir.join("micro-scored.bin");
    analyse(&data("books/rodent3_micro.bin"), &out, "600", &[]);
    out
}

#[test]
fn export_writes_the_opening_suites_python_chess_finds() {
    let dir = tempfile::tempdir().unwrap();
    let book = scored_micro(dir.path());
    let (epd, pgn) = (dir.path().join("s.epd"), dir.path().join("s.pgn"));
    for (ply, lo, hi) in [
        ("6", "-", "-"),
        ("6", "-25", "25"),
        ("5", "10", "-"),
        ("8", "-", "0"),
    ] {
        let mut window = Vec::new();
        if lo != "-" {
            window.extend(["--min-eval", lo]);
        }
        if hi != "-" {
            window.extend(["--max-eval", hi]);
        }
        for (flag, file) in [("--epd", &epd), ("--pgn", &pgn)] {
            let args = [
                &["export", s(&book), flag, "--ply", ply, "-o", s(file)][..],
                &window,
            ]
            .concat();
            polybook_ok(&args);
        }
        let line = python(
            SUITE_CHECK,
            &["suite", s(&book), ply, lo, hi, s(&epd), s(&pgn)],
        );
        let n: u64 = line.trim().trim_start_matches("openings ").parse().unwrap();
        assert!(n >= 5, "ply {ply} window {lo}..{hi}: {line}");
        // Unique, in a stable order: the same bytes again.
        let first = std::fs::read(&epd).unwrap();
        let args = [
            &["export", s(&book), "--epd", "--ply", ply, "-o", s(&epd)][..],
            &window,
        ]
        .concat();
        polybook_ok(&args);
        assert_eq!(std::fs::read(&epd).unwrap(), first);
    }
    // A window needs scores; an empty window is refused; --epd needs --ply.
    let raw = data("books/rodent3_micro.bin");
    polybook_fails(
        &["export", s(&raw), "--epd", "--ply", "4", "--min-eval", "0"],
        1,
        "has no scores",
    );
    polybook_fails(
        &[
            "export",
            s(&book),
            "--epd",
            "--ply",
            "4",
            "--min-eval",
            "9",
            "--max-eval",
            "0",
        ],
        2,
        "above --max-eval",
    );
    let out = polybook(&["export", s(&book), "--epd"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("polybook: error: ") && stderr(&out).contains("--ply"));
}

#[test]
fn filter_max_loss_keeps_what_python_chess_keeps_and_the_mark() {
    let dir = tempfile::tempdir().unwrap();
    let book = scored_micro(dir.path());
    let out = dir.path().join("cut.bin");
    for cp in ["0", "30"] {
        polybook_ok(&["filter", s(&book), "-o", s(&out), "--max-loss", cp]);
        let line = python(SUITE_CHECK, &["maxloss", s(&book), s(&out), cp]);
        assert!(line.starts_with("kept "), "{line}");
        let verify = polybook_ok(&["verify", s(&out)]);
        common::assert_contains(&verify, ": OK:");
    }
    polybook_fails(
        &[
            "filter",
            s(&data("books/rodent3_micro.bin")),
            "-o",
            s(&out),
            "--max-loss",
            "30",
        ],
        1,
        "has no scores",
    );
}

/// Every command that rewrites a scored book keeps its mark (so its scores stay scores), `dump`
/// shows them as python-chess's bytes hold them, and those that would mix or overwrite them
/// refuse in one line.
#[test]
fn rewriting_a_scored_book_keeps_it_scored() {
    let dir = tempfile::tempdir().unwrap();
    let book = scored_micro(dir.path());
    let mark = std::fs::read(&book).unwrap()[..16].to_vec();
    assert_eq!(&mark[12..], b"pbSD");
    let out = dir.path().join("out.bin");
    let other = dir.path().join("other.bin");
    analyse(&data("books/rodent3_guide.bin"), &other, "300", &[]);
    for args in [
        vec!["sort", s(&book), "-o", s(&out)],
        vec!["filter", s(&book), "-o", s(&out), "--max-ply", "6"],
        vec![
            "edit",
            s(&book),
            "-o",
            s(&out),
            "--moves",
            "e4",
            "--add",
            "a6=1",
        ],
        vec!["merge", s(&book), s(&other), "-o", s(&out)],
    ] {
        polybook_ok(&args);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes[..16], mark[..], "{args:?} dropped the mark");
        let verify = polybook_ok(&["verify", s(&out)]);
        assert!(verify.contains(": OK:"), "{args:?}: {verify}");
    }
    // dump's scores and depths are the learn fields' high bytes, read apart from polybook.
    let dump = stdout(&polybook(&["dump", s(&book), "--json"]));
    let script = r#"
import json, struct, sys
data = open(sys.argv[1], "rb").read()[16:]
rows = [json.loads(l) for l in open(sys.argv[2])]
assert len(rows) == len(data) // 16
scored = 0
for i, row in enumerate(rows):
    key, move, weight, learn = struct.unpack(">QHHI", data[16 * i:16 * i + 16])
    assert row["learn"] == learn and row["weight"] == weight
    depth, score = (learn >> 8) & 0xff, struct.unpack(">h", struct.pack(">H", learn >> 16))[0]
    if depth:
        scored += 1
        assert (row["score"], row["depth"]) == (score, depth), row
    else:
        assert "score" not in row, row
print(scored)
"#;
    let dump_file = common::write_file(dir.path(), "dump.jsonl", dump);
    let scored: u64 = python(script, &[s(&book), s(&dump_file)])
        .trim()
        .parse()
        .unwrap();
    assert!(scored > 1000, "{scored}");
    // Mixing layouts, or learning over scores, is refused.
    let raw = data("books/rodent3_guide.bin");
    polybook_fails(
        &["merge", s(&book), s(&raw), "-o", s(&out)],
        1,
        "refusing to merge",
    );
    let game = common::write_file(dir.path(), "g.pgn", "[Result \"1-0\"]\n\n1. e4 e5 1-0\n");
    polybook_fails(&["learn", s(&book), s(&game)], 1, "would overwrite them");
}

/// A resumed cache's damaged lines (a line spliced from two, a digit changed, a line cut short)
/// are not used: the run says how many, analyses their positions again, and writes the same book
/// as an undamaged run.
#[test]
fn damaged_cache_lines_are_analysed_again_never_used() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_guide.bin");
    let whole = dir.path().join("whole.bin");
    let run = |out: &Path, resume: bool| {
        let mut args = common::analyse_args(&book, out, "300", &[]);
        if resume {
            args.push("--resume");
        }
        let o = polybook(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    run(&whole, false);
    let expected = std::fs::read(&whole).unwrap();
    let text = std::fs::read_to_string(cache(&whole)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 20, "{}", lines.len());
    assert!(lines[0].starts_with("polybook-analysis 3 "), "{}", lines[0]);

    let out = dir.path().join("out.bin");
    // Line 3 spliced from the start of line 3 and the end of line 4 (a score and depth that
    // parse); a digit of line 6's score changed; line 9 cut before its checksum.
    let mut damaged: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let (a, b) = (lines[3], lines[4]);
    damaged[3] = format!("{}{}", &a[..17], &b[17..]);
    let mut six: Vec<char> = lines[6].chars().collect();
    let digit = six.iter().position(|c| *c == ' ').unwrap() + 1;
    six[digit] = if six[digit] == '1' { '2' } else { '1' };
    damaged[6] = six.into_iter().collect();
    damaged[9] = lines[9][..lines[9].len() - 9].to_string();
    assert!(damaged[3] != lines[3] && damaged[6] != lines[6]);
    std::fs::write(cache(&out), damaged.join("\n") + "\n").unwrap();
    let said = run(&out, true);
    assert!(
        said.contains(
            "3 damaged lines (wrong checksum or form) not used: their positions are analysed again"
        ),
        "{said}"
    );
    assert!(
        std::fs::read(&out).unwrap() == expected,
        "a damaged line was used"
    );

    // A cache of the earlier format (lines without checksums) is refused, saying so.
    let old = dir.path().join("old.bin");
    let v1: Vec<String> = std::iter::once(lines[0].replacen(" 3 ", " 1 ", 1))
        .chain(
            lines[1..]
                .iter()
                .map(|l| l.rsplit_once(' ').unwrap().0.to_string()),
        )
        .collect();
    std::fs::write(cache(&old), v1.join("\n") + "\n").unwrap();
    polybook_fails(
        &[
            "analyse",
            s(&book),
            "-o",
            s(&old),
            "--nodes",
            "300",
            "--resume",
        ],
        1,
        "made by another version of polybook (cache format 1, not 3)",
    );
}

/// `path` gzipped, as `path.gz`.
fn gzipped(path: &Path) -> PathBuf {
    use std::io::Write;
    let out = PathBuf::from(format!("{}.gz", path.display()));
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&out).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(&std::fs::read(path).unwrap()).unwrap();
    gz.finish().unwrap();
    out
}

#[test]
fn positions_are_read_from_a_compressed_file_as_from_the_plain_one() {
    let dir = tempfile::tempdir().unwrap();
    let book = data("books/rodent3_micro.bin");
    // The only roots are those of the positions file: the given position is in no book.
    let run = |positions: &Path, out: &Path| {
        let more = [
            "--fen",
            "7k/8/8/8/8/8/8/K7 w - - 0 1",
            "--positions",
            s(positions),
        ];
        let said = polybook(&common::analyse_args(&book, out, "200", &more));
        assert!(said.status.success(), "{}", stderr(&said));
        // The first line says what the walk reached (the last one, how long it took).
        let walk = stderr(&said).lines().next().unwrap().to_string();
        (walk, std::fs::read(out).unwrap())
    };
    let games = common::write_file(
        dir.path(),
        "games.pgn",
        "[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 d5 2. c4 *\n",
    );
    let epd = common::write_file(
        dir.path(),
        "positions.epd",
        "# after 1.e4 and 1.d4\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\n\
         rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - id \"d4\";\n",
    );
    for plain in [&games, &epd] {
        let (walk, bytes) = run(plain, &dir.path().join("plain.bin"));
        assert!(walk.contains(" positions to analyse"), "{walk}");
        let compressed = gzipped(plain);
        let (walk_gz, bytes_gz) = run(&compressed, &dir.path().join("gz.bin"));
        assert_eq!(walk_gz, walk, "{}", compressed.display());
        assert!(bytes_gz == bytes, "{}: another book", compressed.display());
        std::fs::remove_file(dir.path().join("plain.bin.analysis")).unwrap();
        std::fs::remove_file(dir.path().join("gz.bin.analysis")).unwrap();
    }
}
