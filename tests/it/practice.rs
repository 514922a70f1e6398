//! `explore REP.bin --practice white|black`: the practice's API answered directly (right and
//! wrong answers, retries, the progress file written and read back, SM-2's intervals against the
//! published formulas worked out here, the opponent's move steered to the positions due), over
//! HTTP (a `POST` body, its refusals, a kill right after an answer), the refusals of the command
//! line and of a damaged progress file, and the page in headless Chromium
//! (`tests/explore_practice_browser.py`: a line to its end, a mistake, a reload and a restart).

use crate::common;
use crate::explore::Served;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use polybook::book::{Book, Books};
use polybook::explore::{Explorer, Practice, Reply, Request, route, route_request};
use serde_json::{Value, json};
use shakmaty::{Chess, Color};

use common::{BIN, polybook, stderr, stdout};

/// A small White repertoire, as a PGN: five positions where White must move (the start, after
/// 1.e4 e5, after 2.Nf3 Nc6, after 1.e4 c5, after 2.Nf3 d6); the lines end after White's
/// third move. Drawn games, so that both sides' moves are kept.
const REPERTOIRE: &str = "[Event \"r\"]\n[Result \"1/2-1/2\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 1/2-1/2\n\n\
                          [Event \"r\"]\n[Result \"1/2-1/2\"]\n\n1. e4 c5 2. Nf3 d6 3. d4 1/2-1/2\n";

/// The repertoire's book, built by `polybook build` in `dir`.
fn repertoire(dir: &Path) -> PathBuf {
    let pgn = dir.join("rep.pgn");
    std::fs::write(&pgn, REPERTOIRE).unwrap();
    let book = dir.join("rep.bin");
    let out = polybook(&["build", s(&pgn), "-o", s(&book), "--min-games", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    book
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// An explorer practising `book` as White, its progress in `progress`, today the clock's day.
fn practising(book: &Path, progress: &Path, day: &Arc<AtomicI64>) -> Explorer {
    let mut books = Books::new();
    books.push("rep.bin", Book::open(book).unwrap());
    let day = day.clone();
    let practice = Practice::with_clock(
        Color::White,
        progress.to_path_buf(),
        Box::new(move || day.load(Ordering::SeqCst)),
    )
    .unwrap();
    Explorer {
        books,
        tally: None,
        games: None,
        practice: Some(practice),
        start: Chess::default(),
    }
}

fn body(reply: &Reply) -> Value {
    serde_json::from_slice(&reply.body).unwrap()
}

/// `POST /api/practice/answer` with `answer` as its JSON body.
fn answer(e: &Explorer, answer: Value) -> Reply {
    let body = answer.to_string();
    route_request(
        e,
        &Request {
            method: "POST",
            target: "/api/practice/answer",
            content_type: Some("application/json"),
            body: body.as_bytes(),
        },
    )
}

/// The card of a graded answer: (ease, interval, repetitions, due, reviews, lapses).
fn card(reply: &Reply) -> (f64, u64, u64, String, u64, u64) {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let c = &body(reply)["card"];
    (
        c["ease"].as_f64().unwrap(),
        c["interval"].as_u64().unwrap(),
        c["repetitions"].as_u64().unwrap(),
        c["due"].as_str().unwrap().to_string(),
        c["reviews"].as_u64().unwrap(),
        c["lapses"].as_u64().unwrap(),
    )
}

/// SM-2 as published (P. Woźniak, 1990; the usual pseudo-code), worked out here in floating
/// point: after an answer of quality `q`, the new (ease, interval, repetitions).
fn sm2_by_hand(ease: f64, interval: u64, repetitions: u64, q: u8) -> (f64, u64, u64) {
    let (interval, repetitions) = if q >= 3 {
        let i = match repetitions {
            0 => 1,
            1 => 6,
            _ => (interval as f64 * ease).round() as u64,
        };
        (i, repetitions + 1)
    } else {
        (1, 0)
    };
    let d = f64::from(5 - q);
    let ease = (ease + (0.1 - d * (0.08 + d * 0.02))).max(1.3);
    (ease, interval, repetitions)
}

/// The start position's card through right and wrong answers on chosen days: each interval, ease
/// and due date is SM-2's (a right answer is quality 5, a wrong one 1), as worked out by hand and
/// as `sm2_by_hand` gives it; a retry is not graded; the progress file holds the same, and another
/// server reading it answers from it.
#[test]
fn sm2_schedules_each_position_as_published() {
    let dir = tempfile::tempdir().unwrap();
    let book = repertoire(dir.path());
    let progress = dir.path().join("rep.bin.practice.json");
    let day = Arc::new(AtomicI64::new(20_000)); // 2024-10-04
    let e = practising(&book, &progress, &day);
    let right = json!({"moves": "", "move": "e2e4"});
    let wrong = json!({"moves": "", "move": "d2d4"});
    // (day, the answer, quality) → (ease, interval, repetitions, due) worked out by hand:
    // EF' = EF + 0.1 − (5 − q)(0.08 + (5 − q) 0.02): +0.1 for q = 5, −0.54 for q = 1.
    type Step = (i64, bool, u8, (f64, u64, u64, &'static str));
    let steps: [Step; 7] = [
        (20_000, true, 5, (2.6, 1, 1, "2024-10-05")),
        (20_001, true, 5, (2.7, 6, 2, "2024-10-11")),
        // round(6 × 2.7) = round(16.2) = 16.
        (20_007, true, 5, (2.8, 16, 3, "2024-10-27")),
        // A lapse: back to 1 day, the ease down by 0.54.
        (20_023, false, 1, (2.26, 1, 0, "2024-10-28")),
        (20_024, true, 5, (2.36, 1, 1, "2024-10-29")),
        (20_025, true, 5, (2.46, 6, 2, "2024-11-04")),
        // round(6 × 2.46) = round(14.76) = 15.
        (20_031, true, 5, (2.56, 15, 3, "2024-11-19")),
    ];
    let (mut ease, mut interval, mut repetitions) = (2.5, 0, 0);
    let mut lapses = 0;
    for (n, (today, is_right, q, want)) in steps.into_iter().enumerate() {
        day.store(today, Ordering::SeqCst);
        let reply = answer(
            &e,
            if is_right {
                right.clone()
            } else {
                wrong.clone()
            },
        );
        assert_eq!(body(&reply)["right"], is_right);
        assert_eq!(body(&reply)["graded"], true);
        (ease, interval, repetitions) = sm2_by_hand(ease, interval, repetitions, q);
        lapses += u64::from(!is_right);
        let got = card(&reply);
        assert!((got.0 - want.0).abs() < 1e-9, "step {n}: ease {}", got.0);
        assert!((ease - want.0).abs() < 1e-9, "step {n}: by hand {ease}");
        assert_eq!((got.1, got.2), (want.1, want.2), "step {n}");
        assert_eq!((interval, repetitions), (want.1, want.2), "step {n}");
        assert_eq!(got.3, want.3, "step {n}: due");
        assert_eq!((got.4, got.5), (n as u64 + 1, lapses), "step {n}");
        // A retry is checked, not graded.
        let retry = answer(&e, json!({"moves": "", "move": "d2d4", "retry": true}));
        assert_eq!(body(&retry)["graded"], false);
        assert_eq!(body(&retry)["right"], false);
        assert_eq!(card(&retry), got);
    }
    // The ease never goes below 1.3: five lapses from 2.56: 2.02, 1.48, 1.3, 1.3, 1.3.
    for _ in 0..5 {
        card(&answer(&e, wrong.clone()));
    }
    let last = card(&answer(&e, wrong.clone()));
    assert_eq!((last.0, last.1, last.2), (1.3, 1, 0));

    // The file holds the card; another explorer reading it answers from it.
    let saved: Value = serde_json::from_slice(&std::fs::read(&progress).unwrap()).unwrap();
    assert_eq!(saved["format"], "polybook practice");
    let start = &saved["positions"]["463b96181691fc9c"];
    assert_eq!(
        start["fen"],
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    );
    assert_eq!(
        (start["ease"].as_f64(), start["reviews"].as_u64()),
        (Some(1.3), Some(13))
    );
    let again = practising(&book, &progress, &day);
    let state = body(&route(&again, "GET", "/api/practice/state"));
    assert_eq!(state["turn"], "user");
    assert_eq!(state["card"]["reviews"], 13);
    assert_eq!(state["card"]["lapses"], 7);
    assert_eq!(state["card"]["ease"], 1.3);
}

/// Whose move it is along a line, the book's moves after a wrong answer, the end of a line, the
/// opponent's move steered to the reply whose positions are due, and the answers refused.
#[test]
fn the_api_plays_the_opponent_grades_and_steers() {
    let dir = tempfile::tempdir().unwrap();
    let book = repertoire(dir.path());
    let progress = dir.path().join("progress.json");
    let day = Arc::new(AtomicI64::new(20_000));
    let e = practising(&book, &progress, &day);
    let state = |moves: &str| {
        body(&route(
            &e,
            "GET",
            &format!("/api/practice/state?moves={moves}"),
        ))
    };
    let start = state("");
    assert_eq!(start["turn"], "user");
    assert_eq!(start["color"], "white");
    assert_eq!(
        start["repertoire"],
        json!({"positions": 5, "due": 5, "new": 5})
    );
    assert_eq!(start["card"], Value::Null);
    assert!(!progress.exists(), "nothing answered, nothing written");

    // A wrong answer: the book's moves.
    let wrong = body(&answer(&e, json!({"moves": "", "move": "g1f3"})));
    assert_eq!(wrong["right"], false);
    assert_eq!(
        wrong["book"],
        json!([{"uci": "e2e4", "san": "e4", "weight": 2}])
    );
    assert!(progress.exists());

    // After 1. e4 the opponent's move is one of the book's.
    let reply = state("e2e4");
    assert_eq!(reply["turn"], "opponent");
    assert!(["e7e5", "c7c5"].contains(&reply["move"]["uci"].as_str().unwrap()));
    // The line 1. e4 e5 2. Nf3 Nc6 3. Bb5 answered right: it ends there.
    for (moves, mv) in [("e2e4 e7e5", "g1f3"), ("e2e4 e7e5 g1f3 b8c6", "f1b5")] {
        let a = body(&answer(&e, json!({"moves": moves, "move": mv})));
        assert_eq!(
            (a["right"].as_bool(), a["graded"].as_bool()),
            (Some(true), Some(true))
        );
    }
    assert_eq!(state("e2e4+e7e5+g1f3+b8c6+f1b5")["turn"], "end");
    assert_eq!(state("e2e4+e7e5+g1f3+b8c6+f1b5")["move"], Value::Null);
    // Now only 1... c5's positions are due: the opponent plays c5, every time.
    assert_eq!(
        state("")["repertoire"],
        json!({"positions": 5, "due": 2, "new": 2})
    );
    for _ in 0..20 {
        assert_eq!(state("e2e4")["move"]["uci"], "c7c5");
    }
    // Two days later every answered position is due again and c5's are new: still c5. Once
    // c5's are answered too, the least practised is chosen: e5's have one answer each, c5's two.
    day.store(20_002, Ordering::SeqCst);
    assert_eq!(state("e2e4")["move"]["uci"], "c7c5");
    for _ in 0..2 {
        for (moves, mv) in [("e2e4 c7c5", "g1f3"), ("e2e4 c7c5 g1f3 d7d6", "d2d4")] {
            assert_eq!(
                body(&answer(&e, json!({"moves": moves, "move": mv})))["right"],
                true
            );
        }
    }
    day.store(20_100, Ordering::SeqCst);
    for _ in 0..20 {
        assert_eq!(state("e2e4")["move"]["uci"], "e7e5");
    }

    // Refusals: one line each, a 400.
    for (asked, says) in [
        (
            json!({"moves": "e2e4", "move": "e7e5"}),
            "it is black's move here, and the practice is white's",
        ),
        (
            json!({"moves": "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6", "move": "b5a4"}),
            "the book has no move here",
        ),
        (
            json!({"moves": "", "move": "e2e5"}),
            "'e2e5' is not a legal move here",
        ),
        (
            json!({"moves": "e4 e4", "move": "e2e5"}),
            "move 2 'e4' is illegal",
        ),
        (
            json!({"move": "e2e4", "colour": "white"}),
            "the body is not {\"fen\":FEN",
        ),
    ] {
        let reply = answer(&e, asked.clone());
        assert_eq!(reply.status, 400, "{asked}");
        let message = body(&reply)["error"].as_str().unwrap().to_string();
        assert!(message.contains(says), "{asked}: {message}");
    }
    let plain = route_request(
        &e,
        &Request {
            method: "POST",
            target: "/api/practice/answer",
            content_type: Some("text/plain"),
            body: b"{\"move\":\"e2e4\"}",
        },
    );
    assert_eq!(plain.status, 415);
    assert_eq!(route(&e, "GET", "/api/practice/answer").status, 405);
    assert_eq!(route(&e, "POST", "/api/practice/state").status, 405);
    // Without --practice, the practice's routes are 404s.
    let mut books = Books::new();
    books.push("rep.bin", Book::open(&book).unwrap());
    let plain = Explorer {
        books,
        tally: None,
        games: None,
        practice: None,
        start: Chess::default(),
    };
    assert_eq!(route(&plain, "GET", "/api/practice/state").status, 404);
    assert_eq!(answer(&plain, json!({"move": "e2e4"})).status, 404);
    assert_eq!(route(&plain, "GET", "/api/practice/answer").status, 404);
    assert_eq!(
        body(&route(&plain, "GET", "/api/books"))["practice"],
        Value::Null
    );
    assert_eq!(body(&route(&e, "GET", "/api/books"))["practice"], "white");
}

/// One HTTP/1.1 `POST` with a JSON body: the status and the body.
fn post(addr: &str, target: &str, json: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST {target} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    (head[9..12].parse().unwrap(), body.to_string())
}

/// Over HTTP: an answer `POST`ed is written before it is answered (a kill -9 right after loses
/// nothing), a server started again reads it; a body over the limit is a 413.
#[test]
fn an_answer_is_on_disk_before_its_reply() {
    let dir = tempfile::tempdir().unwrap();
    let book = repertoire(dir.path());
    let served = Served::start(&[s(&book), "--practice", "white"]);
    let addr = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let (status, reply) = post(
        addr,
        "/api/practice/answer",
        r#"{"moves":"","move":"e2e4"}"#,
    );
    assert_eq!(status, 200, "{reply}");
    served.kill();
    let progress = dir.path().join("rep.bin.practice.json");
    let saved: Value = serde_json::from_slice(&std::fs::read(&progress).unwrap()).unwrap();
    assert_eq!(saved["positions"]["463b96181691fc9c"]["reviews"], 1);
    let again = Served::start(&[s(&book), "--practice", "white"]);
    let state = again.get("/api/practice/state").json();
    assert_eq!(state["card"]["repetitions"], 1);
    let addr = again
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let (status, _) = post(addr, "/api/practice/answer", &" ".repeat(70_000));
    assert_eq!(status, 413);
}

/// What cannot practise gets one line and a non-zero exit: no book, games instead of a book,
/// several books, a tally, a colour that is none, --progress alone, a damaged progress file
/// (which is left as it was).
#[test]
fn bad_practice_arguments_get_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let book = repertoire(dir.path());
    let pgn = dir.path().join("rep.pgn");
    let damaged = common::write_file(
        &dir,
        "damaged.json",
        "{\"format\":\"polybook practice\",\"version\":1,\"positions\":{",
    );
    let other = common::write_file(
        &dir,
        "other.json",
        "{\"format\":\"something else\",\"version\":1,\"positions\":{}}",
    );
    let b = s(&book);
    let cases: [(&[&str], i32, &str); 8] = [
        (
            &["--practice", "white"],
            2,
            "polybook: error: --practice needs the repertoire book to practise",
        ),
        (
            &[s(&pgn), "--practice", "white"],
            2,
            "polybook: error: --practice practises a repertoire book (.bin), not games: ",
        ),
        (
            &[b, b, "--practice", "black"],
            2,
            "polybook: error: --practice practises one book, and 2 were given",
        ),
        (
            &[b, "--practice", "white", "--tally", "t.parquet"],
            2,
            "polybook: error: --practice shows no tally",
        ),
        (
            &[b, "--practice", "green"],
            2,
            "polybook: error: invalid value 'green' for '--practice <COLOUR>': the side to practise is white or black",
        ),
        (
            &[b, "--progress", "p.json"],
            2,
            "polybook: error: --progress is the file of --practice",
        ),
        (
            &[b, "--practice", "white", "--progress", s(&damaged)],
            1,
            "polybook: error: practice progress '",
        ),
        (
            &[b, "--practice", "white", "--progress", s(&other)],
            1,
            "polybook: error: practice progress '",
        ),
    ];
    for (args, code, start) in cases {
        let out = Command::new(BIN)
            .arg("explore")
            .args(args)
            .args(["--port", "0"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.starts_with(start), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(stdout(&out).is_empty());
        if code == 1 {
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains("is damaged"), "{err}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(&damaged).unwrap(),
        "{\"format\":\"polybook practice\",\"version\":1,\"positions\":{"
    );
}

/// The practice page in headless Chromium (`tests/explore_practice_browser.py`): a mistake shows
/// the book's move, a retry, a line played to its end, the next line steered to the reply not yet
/// practised, a mistake answered with the book's move, the progress file after each, a reload,
/// then a server started again: the progress kept. Screenshots in
/// `target/explore-practice-screenshots/first/` and `…/restarted/`.
#[test]
fn the_practice_page_works_in_a_real_browser() {
    let dir = tempfile::tempdir().unwrap();
    let book = repertoire(dir.path());
    let progress = dir.path().join("rep.bin.practice.json");
    let shots = Path::new("target/explore-practice-screenshots");
    std::fs::create_dir_all(shots).unwrap();
    let script = [
        include_str!("../browser.py"),
        include_str!("../explore_practice_browser.py"),
    ]
    .concat();
    for phase in ["first", "restarted"] {
        let served = Served::start(&[s(&book), "--practice", "white"]);
        // A folder per phase: the script empties its folder of earlier screenshots.
        let folder = shots.join(phase);
        let out = common::python(
            &script,
            &[served.url.as_str(), s(&folder), phase, s(&progress)],
        );
        eprintln!("{out}");
        assert!(out.ends_with("ok\n"), "{phase}: {out}");
        let stopped = served.interrupt();
        assert_eq!(stopped.status.code(), Some(130));
    }
    assert!(shots.join("first/3-mistake-book-move.png").exists());
    assert!(shots.join("restarted/6-restarted.png").exists());
}
