//! `polybook explore`: its JSON API over HTTP (against `polybook probe --json`), what it refuses to
//! serve, how it stands many requests, slow and silent clients, oversized and pipelined requests
//! and more connections than it takes at once, how it stops, and its page in a real browser
//! (headless Debian Chromium driven by selenium: `tests/explore_browser.py`, which also checks the
//! page's moves against python-chess's `chess.polyglot`; `tests/explore_games_browser.py` for the
//! games explorer's page).

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use polybook::explore::{Explorer, Limits, Server};

use common::{BIN, gnuchess_book, piped, polybook, stderr, stdout, text};

/// A running `polybook explore`, stopped with Ctrl-C (SIGINT) when dropped.
pub(crate) struct Served {
    child: Option<Child>,
    /// `127.0.0.1:PORT`.
    addr: String,
    pub(crate) url: String,
    _stdout: BufReader<ChildStdout>,
}

impl Served {
    /// Starts `polybook explore ARGS --port 0` and reads the URL it prints.
    pub(crate) fn start(args: &[&str]) -> Served {
        Served::start_with(piped(), args)
    }

    /// [`Served::start`] from `command` (the binary with an environment of its own).
    pub(crate) fn start_with(mut command: Command, args: &[&str]) -> Served {
        let mut child = command
            .arg("explore")
            .args(args)
            .args(["--port", "0"])
            .spawn()
            .expect("run polybook explore");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut url = String::new();
        out.read_line(&mut url).unwrap();
        let url = url.trim().to_string();
        let addr = url
            .strip_prefix("http://")
            .and_then(|u| u.strip_suffix('/'))
            .unwrap_or_else(|| panic!("explore printed {url:?}, not a URL"))
            .to_string();
        Served {
            child: Some(child),
            addr,
            url,
            _stdout: out,
        }
    }

    pub(crate) fn get(&self, target: &str) -> Reply {
        request(&self.addr, "GET", target)
    }

    /// `kill -9`: the server ends at once, without a chance to write anything more.
    pub(crate) fn kill(mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().expect("kill polybook explore");
        let _ = child.wait();
    }

    /// Ctrl-C: the server's exit status and standard error.
    pub(crate) fn interrupt(mut self) -> Output {
        let child = self.child.take().unwrap();
        interrupt(&child);
        child.wait_with_output().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            interrupt(&child);
            let _ = child.wait();
        }
    }
}

fn interrupt(child: &Child) {
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
}

/// An HTTP answer.
pub(crate) struct Reply {
    pub(crate) status: u16,
    headers: String,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&self.body)))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The status and the `Connection` header.
    fn status_and_connection(&self) -> (u16, Option<&str>) {
        (self.status, self.header("Connection"))
    }

    /// Asserts that the body contains `what`.
    pub(crate) fn assert_says(&self, what: &str) {
        let body = text(&self.body);
        assert!(body.contains(what), "{body}");
    }
}

/// One HTTP/1.1 request on its own connection, the target sent exactly as given (no
/// normalisation of `..` or `%2e`, as a hostile client would send it).
fn request(addr: &str, method: &str, target: &str) -> Reply {
    request_to(addr, addr, method, target)
}

/// [`request`] with `host` in its `Host` header.
fn request_to(addr: &str, host: &str, method: &str, target: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).expect("connect to explore");
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP answer: {}", text(&raw)));
    let headers = text(&raw[..split]);
    let status = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {headers}"));
    Reply {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// A query parameter's value, percent-encoded.
pub(crate) fn encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

use common::path_str as path;

/// A book of the start position's moves with one entry that is not legal there (e1h1, castling
/// through pieces: a key collision or a broken book), as `probe` lists apart.
fn book_with_an_illegal_entry(dir: &Path) -> PathBuf {
    const START: u64 = 0x463b_9618_1691_fc9c;
    // Polyglot moves: to file, to row << 3, from file << 6, from row << 9.
    let entries: [(u16, u16, u32); 3] = [(796, 40, 0), (263, 9, 7), (731, 20, 3)];
    let mut bytes = Vec::new();
    for (mv, weight, learn) in entries {
        bytes.extend_from_slice(&START.to_be_bytes());
        bytes.extend_from_slice(&mv.to_be_bytes());
        bytes.extend_from_slice(&weight.to_be_bytes());
        bytes.extend_from_slice(&learn.to_be_bytes());
    }
    common::write_file(dir, "collision.bin", bytes)
}

/// `/api/probe` answers with `probe --json`'s object for each book: with one book, its object
/// plus the `book` field; with several, exactly the lines `probe --json` prints, as one array.
#[test]
fn the_api_answers_what_probe_json_prints() {
    let dir = tempfile::tempdir().unwrap();
    let collision = book_with_an_illegal_entry(dir.path());
    let gnuchess = gnuchess_book();
    let positions: [(Option<&str>, Option<&str>); 5] = [
        (None, None),
        (None, Some("e4 e5 Nf3 Nc6 Bb5")),
        (
            Some("rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"),
            None,
        ),
        // Off the book, and an en-passant square no pawn can use (dropped from the FEN).
        (Some("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"), Some("Kd2")),
        (Some("8/8/8/8/8/8/8/k6K w - - 0 1"), None),
    ];
    let single = Served::start(&[path(&gnuchess)]);
    let both = Served::start(&[path(&gnuchess), path(&collision)]);
    for (fen, moves) in positions {
        let mut query = Vec::new();
        let mut args = vec!["probe".to_string()];
        if let Some(fen) = fen {
            query.push(format!("fen={}", encode(fen)));
            args.extend(["--fen".to_string(), fen.to_string()]);
        }
        if let Some(moves) = moves {
            query.push(format!("moves={}", encode(moves)));
            args.extend(["--moves".to_string(), moves.to_string()]);
        }
        let target = format!("/api/probe?{}", query.join("&"));

        // One book.
        let cli = polybook(&[&args[..], &[path(&gnuchess).into(), "--json".into()]].concat());
        assert!(cli.status.success(), "{}", stderr(&cli));
        let mut expected: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
        let reply = single.get(&target);
        assert_eq!(reply.status, 200, "{target}: {}", text(&reply.body));
        assert_eq!(
            reply.header("Content-Type"),
            Some("application/json; charset=utf-8")
        );
        let mut answer = reply.json();
        let object = answer[0].as_object_mut().unwrap();
        assert_eq!(object.remove("book"), Some(path(&gnuchess).into()));
        expected = serde_json::Value::Array(vec![expected]);
        assert_eq!(answer, expected, "{target}");

        // Two books: the very bytes of probe --json's lines.
        let cli = polybook(
            &[
                &args[..],
                &[
                    path(&gnuchess).into(),
                    path(&collision).into(),
                    "--json".into(),
                ],
            ]
            .concat(),
        );
        let lines: Vec<String> = stdout(&cli).lines().map(str::to_string).collect();
        assert_eq!(lines.len(), 2, "{args:?}: {}", stderr(&cli));
        let reply = both.get(&target);
        assert_eq!(
            text(&reply.body),
            format!("[{}]", lines.join(",")),
            "{target}"
        );
    }
    // The illegal entry is listed apart, at the start.
    let start = both.get("/api/probe").json();
    assert_eq!(start[1]["entries"].as_array().unwrap().len(), 2);
    assert_eq!(start[1]["illegal"][0]["raw"], "e1h1");
    assert_eq!(start[1]["illegal"][0]["learn"], 7);

    // The books and the start position.
    let books = both.get("/api/books").json();
    assert_eq!(
        books,
        serde_json::json!({
            "books": [path(&gnuchess), path(&collision)],
            "tally": null,
            "games": null,
            "practice": null,
            "start": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        })
    );
}

/// A scored book (`polybook analyse`) shows scores and depths, not PolyGlot's learn statistics,
/// as `probe --json` does, with the scores the learn fields hold.
#[test]
fn the_api_shows_a_scored_book_s_scores() {
    let dir = tempfile::tempdir().unwrap();
    let scored = dir.path().join("scored.bin");
    let book = common::data("books/rodent3_guide.bin");
    common::polybook_ok(&[
        "analyse",
        path(&book),
        "-o",
        path(&scored),
        "--nodes",
        "300",
        "-q",
    ]);
    let served = Served::start(&[path(&scored)]);
    for moves in ["", "e4", "d4 Nf6"] {
        let cli = polybook(&["probe", path(&scored), "--moves", moves, "--json"]);
        let expected: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
        let mut answer = served
            .get(&format!("/api/probe?moves={}", encode(moves)))
            .json();
        answer[0].as_object_mut().unwrap().remove("book");
        assert_eq!(answer[0], expected, "{moves}");
        let entries = expected["entries"].as_array().unwrap();
        assert!(!entries.is_empty(), "{moves}");
        for e in entries {
            let learn = e["learn"].as_u64().unwrap() as u32;
            assert_eq!(
                e["score"].as_i64(),
                Some(i64::from((learn >> 16) as u16 as i16))
            );
            assert_eq!(e["depth"].as_u64(), Some(u64::from((learn >> 8) & 0xff)));
            assert!(
                e.get("learn_games").is_none() && e.get("learn_score").is_none(),
                "{e}"
            );
        }
    }
}

/// `--fen` and `--moves` give the page's start position, and the API's default one.
#[test]
fn the_start_position_comes_from_fen_and_moves() {
    let book = gnuchess_book();
    let served = Served::start(&[
        path(&book),
        "--fen",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
        "--moves",
        "c5",
    ]);
    let after = "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    assert_eq!(served.get("/api/books").json()["start"], after);
    assert_eq!(served.get("/api/probe").json()[0]["fen"], after);
    let moved = served.get("/api/probe?moves=Nf3").json();
    assert_eq!(
        moved[0]["fen"],
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
    );
}

/// Only the page's own files and the API: every other path is a 404 with a JSON error, however
/// it tries to climb out; a bad FEN or move is a 400 with the command line's message; the server
/// goes on answering.
#[test]
fn the_server_serves_nothing_else_and_refuses_bad_input() {
    let book = gnuchess_book();
    let served = Served::start(&[path(&book)]);

    let page = served.get("/");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("Content-Type"),
        Some("text/html; charset=utf-8")
    );
    assert!(text(&page.body).contains("<script src=\"/explore.js\">"));
    for (asset, file) in [
        ("/explore.js", "explore.js"),
        ("/explore.css", "explore.css"),
    ] {
        let reply = served.get(asset);
        assert_eq!(reply.status, 200);
        let on_disk = std::fs::read(common::root().join("assets/explore").join(file)).unwrap();
        assert!(
            reply.body == on_disk,
            "{asset} is not assets/explore/{file}"
        );
    }
    // The page may load nothing from elsewhere.
    assert!(
        page.header("Content-Security-Policy")
            .unwrap()
            .starts_with("default-src 'self'")
    );

    for target in [
        "/nope",
        "/index.html",
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/%2e%2e/",
        "/assets/../../etc/passwd",
        "/assets/explore/explore.js",
        "/..%2f..%2fetc%2fpasswd",
        "//etc/passwd",
        "/explore.js/../../Cargo.toml",
        "/tests/data/books/gnuchess.bin",
        "/api",
        "/api/probe/../../Cargo.toml",
        "http://127.0.0.1/../Cargo.toml",
    ] {
        let reply = served.get(target);
        assert_eq!(reply.status, 404, "{target}: {}", text(&reply.body));
        let error = reply.json()["error"].as_str().unwrap().to_string();
        assert!(error.starts_with("no such page: "), "{target}: {error}");
        let body = text(&reply.body);
        assert!(
            !body.contains("[package]") && !body.contains("root:"),
            "{body}"
        );
    }

    // A bad FEN: the same message as `polybook probe --fen`, as JSON.
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8 w KQkq - 0 1",
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "not a fen",
        "",
    ] {
        let reply = served.get(&format!("/api/probe?fen={}", encode(fen)));
        assert_eq!(reply.status, 400, "{fen}");
        assert_eq!(
            reply.header("Content-Type"),
            Some("application/json; charset=utf-8")
        );
        let cli = polybook(&["probe", path(&book), "--fen", fen]);
        assert_eq!(cli.status.code(), Some(1));
        let message = stderr(&cli)
            .trim()
            .strip_prefix("polybook: error: ")
            .unwrap()
            .to_string();
        assert_eq!(reply.json(), serde_json::json!({ "error": message }));
    }
    let illegal = served.get("/api/probe?moves=e4+e5+Ke3");
    assert_eq!(illegal.status, 400);
    assert!(
        illegal.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("move 3 'Ke3' is illegal in ")
    );
    let unknown = served.get("/api/probe?fen=x&depth=20");
    assert_eq!(unknown.status, 400);
    assert_eq!(
        unknown.json()["error"],
        "unknown parameter 'depth' (the parameters are fen and moves)"
    );
    assert_eq!(
        served.get("/api/probe?moves=e4&moves=d4").json()["error"],
        "parameter 'moves' given twice"
    );
    // A percent-encoding that is not UTF-8 is a bad FEN, not a crash.
    assert_eq!(served.get("/api/probe?fen=%ff%fe").status, 400);
    // It only reads.
    for method in ["POST", "PUT", "DELETE"] {
        let reply = request(&served.addr, method, "/api/probe");
        assert_eq!(reply.status, 405, "{method}");
    }
    // A page elsewhere whose name was pointed at 127.0.0.1 (DNS rebinding) reads nothing.
    let port = served.addr.rsplit(':').next().unwrap();
    let books_as =
        |host: &str| request_to(&served.addr, &format!("{host}:{port}"), "GET", "/api/books");
    let rebound = books_as("evil.example");
    assert_eq!(rebound.status, 403);
    assert_eq!(
        rebound.json()["error"],
        format!(
            "host 'evil.example:{port}' not served: this server answers only 127.0.0.1, localhost and [::1]"
        )
    );
    let local = books_as("localhost");
    assert_eq!(local.status, 200);
    // And it is still there.
    assert_eq!(served.get("/api/probe?moves=d4").status, 200);
}

/// 1,000 requests in a row and 50 at once: every one answered, with the same answer.
#[test]
fn many_requests_are_all_answered() {
    let book = gnuchess_book();
    let served = Served::start(&[path(&book)]);
    let target = "/api/probe?moves=e4+c5";
    let first = served.get(target);
    assert_eq!(first.status, 200);
    for i in 0..1000 {
        let reply = served.get(target);
        assert_eq!(reply.status, 200, "request {i}");
        assert!(
            reply.body == first.body,
            "request {i}: {}",
            text(&reply.body)
        );
    }
    let start = Arc::new(Barrier::new(50));
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let (addr, start) = (served.addr.clone(), start.clone());
            // Half the page's script, half probes.
            let target = if i % 2 == 0 { "/explore.js" } else { target };
            std::thread::spawn(move || {
                start.wait();
                request(&addr, "GET", target)
            })
        })
        .collect();
    for (i, thread) in threads.into_iter().enumerate() {
        let reply = thread.join().unwrap();
        assert_eq!(reply.status, 200, "concurrent request {i}");
        if i % 2 == 1 {
            assert!(reply.body == first.body, "{}", text(&reply.body));
        }
    }
    let out = served.interrupt();
    assert_eq!(out.status.code(), Some(130));
}

/// A browser keeps its connection open: many requests on one connection, each answered whole
/// (its Content-Length) and in turn.
#[test]
fn one_kept_alive_connection_carries_many_requests() {
    let book = gnuchess_book();
    let served = Served::start(&[path(&book)]);
    let mut stream = TcpStream::connect(&served.addr).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    for (i, target) in ["/api/probe?moves=e4", "/nope", "/api/probe?fen=x", "/"]
        .iter()
        .cycle()
        .take(200)
        .enumerate()
    {
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: {}\r\n\r\n",
            served.addr
        )
        .unwrap();
        let (mut status, mut length) = (String::new(), None);
        reader.read_line(&mut status).unwrap();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.expect("a Content-Length")];
        reader.read_exact(&mut body).unwrap();
        let expected = match i % 4 {
            0 => "200",
            1 => "404",
            2 => "400",
            _ => "200",
        };
        assert_eq!(
            status.split_whitespace().nth(1),
            Some(expected),
            "{i}: {status}"
        );
    }
}

/// Ctrl-C stops it cleanly: exit code 130, nothing on standard error but the line that said
/// where it was serving.
#[test]
fn ctrl_c_stops_it_with_130() {
    let book = gnuchess_book();
    let served = Served::start(&[path(&book)]);
    assert!(served.url.starts_with("http://127.0.0.1:"));
    assert_eq!(served.get("/api/books").status, 200);
    let out = served.interrupt();
    assert_eq!(out.status.code(), Some(130));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("polybook: serving 1 book at http://127.0.0.1:"));
}

/// Listening beyond loopback is warned about (and works).
#[test]
fn a_host_other_than_loopback_is_warned_about() {
    let book = gnuchess_book();
    let served = Served::start(&[path(&book), "--host", "0.0.0.0"]);
    assert!(served.url.starts_with("http://0.0.0.0:"), "{}", served.url);
    let port = served.addr.rsplit(':').next().unwrap();
    let reply = request(&format!("127.0.0.1:{port}"), "GET", "/api/books");
    assert_eq!(reply.status, 200);
    // Reachable by any name: that was asked for.
    let named = request_to(&format!("127.0.0.1:{port}"), "my-laptop.lan", "GET", "/");
    assert_eq!(named.status, 200);
    let out = served.interrupt();
    assert!(
        stderr(&out).starts_with(
            "polybook: warning: listening on 0.0.0.0, not on loopback: anyone who can reach this machine can read the books\n"
        ),
        "{}",
        stderr(&out)
    );
}

/// `--open` hands the URL to the desktop's opener (`xdg-open`; here a stand-in that writes down
/// what it was given), and the server goes on.
#[cfg(target_os = "linux")]
#[test]
fn open_hands_the_url_to_the_browser() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let opened = dir.path().join("opened");
    let opener = common::write_file(
        dir.path(),
        "xdg-open",
        format!("#!/bin/sh\necho \"$@\" > {}\n", opened.display()),
    );
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path_var = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap()
    );
    let book = gnuchess_book();
    let mut child = piped()
        .env("PATH", path_var)
        .args(["explore", path(&book), "--port", "0", "--open"])
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let written = common::wait_for_text(&opened, 200, std::time::Duration::from_millis(20));
    assert_eq!(written, url);
    let addr = url
        .trim()
        .trim_start_matches("http://")
        .trim_end_matches('/');
    assert_eq!(request(addr, "GET", "/api/books").status, 200);
    interrupt(&child);
    assert_eq!(child.wait().unwrap().code(), Some(130));
}

/// What cannot start gets one line and a non-zero exit: a missing book, a bad position, a port
/// in use, a host that is no address.
#[test]
fn bad_arguments_get_one_line() {
    let book = gnuchess_book();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let cases: [(&[&str], i32, &str); 4] = [
        (
            &["explore", "no-such.bin"],
            1,
            "polybook: error: cannot open book 'no-such.bin': ",
        ),
        (
            &[
                "explore",
                path(&book),
                "--fen",
                "8/8/8 w - - 0 1",
                "--port",
                "0",
            ],
            1,
            "polybook: error: invalid FEN '8/8/8 w - - 0 1': ",
        ),
        (
            &["explore", path(&book), "--port", &port],
            1,
            "polybook: error: cannot listen on 127.0.0.1:",
        ),
        (
            &["explore", path(&book), "--host", "my.example"],
            2,
            "polybook: error: invalid value 'my.example' for '--host <HOST>': not an IP address",
        ),
    ];
    for (args, code, start) in cases {
        let out = Command::new(BIN).args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.starts_with(start), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(stdout(&out).is_empty());
    }
    drop(taken);
}

/// A port another program listens on: one line that says so and how to choose another.
#[test]
fn a_port_in_use_suggests_another() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = Command::new(BIN)
        .args([
            "explore",
            path(&gnuchess_book()),
            "--port",
            &port.to_string(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "polybook: error: cannot listen on 127.0.0.1:{port}: Address already in use; \
             give another --port, or --port 0 for any free port\n"
        )
    );
    assert!(stdout(&out).is_empty());
    drop(taken);
}

/// `--tally`: `/api/tally` gives a position's games from the tallies, summed (a file and a folder
/// of part files as Spark writes them), as python-chess counts them in the same games; without a
/// tally it is a 404; tallies made with different options are refused in one line.
#[test]
fn the_tally_api_counts_what_python_chess_counts() {
    let dir = tempfile::tempdir().unwrap();
    let first = "tests/data/pgn/tcec/TCEC_Season_7_-_Superfinal.pgn.xz";
    let second = "tests/data/pgn/tcec/TCEC_Season_5_-_Superfinal.pgn.xz";
    let a = dir.path().join("a.parquet");
    let folder = dir.path().join("b");
    std::fs::create_dir(&folder).unwrap();
    let b = folder.join("part-00000.parquet");
    for (pgn, out) in [(first, &a), (second, &b)] {
        let made = polybook(&["tally", pgn, "-o", path(out)]);
        assert!(made.status.success(), "{}", stderr(&made));
    }
    std::fs::write(folder.join("_SUCCESS"), "").unwrap();

    let served = Served::start(&["--tally", path(&a), "--tally", path(&folder)]);
    let books = served.get("/api/books").json();
    assert_eq!(books["books"], serde_json::json!([]));
    assert_eq!(
        books["tally"],
        format!("{} + {}", path(&a), path(&folder)).as_str()
    );
    for moves in ["", "d4", "d4 Nf6 c4", "e4 c5", "h4 h5"] {
        let want = common::python(&common::python_position_stats(), &[moves, first, second]);
        let reply = served.get(&format!("/api/tally?moves={}", encode(moves)));
        assert_eq!(reply.status, 200, "{moves}: {}", text(&reply.body));
        let answer = reply.json();
        let got: String = answer["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let n = |f: &str| m[f].as_u64().unwrap();
                format!(
                    "{} {} {} {} {} {}\n",
                    m["uci"].as_str().unwrap(),
                    m["san"].as_str().unwrap(),
                    n("games"),
                    n("wins"),
                    n("draws"),
                    n("losses")
                )
            })
            .collect();
        assert_eq!(got, want, "after {moves:?}");
        let games: u64 = want
            .lines()
            .map(|l| l.split(' ').nth(2).unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(answer["games"], games);
        if moves.is_empty() {
            assert!(games > 100, "{games}");
        }
        if moves == "h4 h5" {
            assert_eq!(got, "");
        }
    }
    // `probe` reads the folder too, with the same statistics for its own games.
    let cli = polybook(&["probe", path(&folder), "--moves", "d4", "--json"]);
    assert!(cli.status.success(), "{}", stderr(&cli));
    let probed: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    let want = common::python(&common::python_position_stats(), &["d4", second]);
    assert_eq!(
        probed["moves"].as_array().unwrap().len(),
        want.lines().count()
    );
    let bad = served.get("/api/tally?fen=8%2F8");
    assert_eq!(bad.status, 400);
    bad.assert_says("invalid FEN");

    // Without a tally.
    let plain = Served::start(&[path(&gnuchess_book())]);
    let reply = plain.get("/api/tally");
    assert_eq!(reply.status, 404);
    reply.assert_says("no tally");
    assert_eq!(
        plain.get("/api/books").json()["tally"],
        serde_json::Value::Null
    );

    // Tallies made with other options are not summed: one line, exit 1.
    let short = dir.path().join("short.parquet");
    let made = polybook(&["tally", second, "--max-ply", "10", "-o", path(&short)]);
    assert!(made.status.success(), "{}", stderr(&made));
    let out = Command::new(BIN)
        .args([
            "explore",
            "--tally",
            path(&a),
            "--tally",
            path(&short),
            "--port",
            "0",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("different options"), "{err}");
    // Neither a book nor a tally: a usage error.
    let out = Command::new(BIN).args(["explore"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// The page in headless Chromium: the start position's moves are probe --json's (and
/// python-chess's), a book move clicked and one played on the board, back and forward with the
/// keys, flip, a pasted FEN and move list, a bad FEN and an illegal move shown as errors while the
/// page goes on, the line copied as PGN (read back by python-chess), the tally's games (`probe
/// TALLY --json`'s, turned to white / draw / black) and a move played from them, the line kept in
/// the address (a link, a reload, a bad one), the promotion box, phone width, nothing loaded from
/// elsewhere. The screenshots go to `target/explore-screenshots/`.
#[test]
fn the_page_works_in_a_real_browser() {
    // Paths relative to the repository (where tests run), as a person would type them: the page
    // shows them as the books' names.
    let shots = Path::new("target/explore-screenshots");
    std::fs::create_dir_all(shots).unwrap();
    let collision = book_with_an_illegal_entry(shots);
    let books = [
        "books/bundled.bin",
        "tests/data/books/gnuchess.bin",
        path(&collision),
    ];
    // A tally of Magnus Carlsen's lichess games, for the games panel.
    let tally = shots.join("magnus.parquet");
    let made = polybook(&[
        "tally",
        "tests/data/pgn/lichess_magnus_2018-2022.pgn.xz",
        "-o",
        path(&tally),
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let served = Served::start(&[&books[..], &["--tally", path(&tally)]].concat());
    let args = [
        &[served.url.as_str(), path(shots), BIN, path(&tally)][..],
        &books[..],
    ]
    .concat();
    let out = common::python(
        &[
            include_str!("../browser.py"),
            include_str!("../explore_browser.py"),
        ]
        .concat(),
        &args,
    );
    eprintln!("{out}");
    assert!(out.ends_with("ok\n"), "{out}");
    assert!(shots.join("1-start.png").exists());
}

/// The games explorer's page in headless Chromium (`tests/explore_games_browser.py`), over Magnus
/// Carlsen's lichess games seen from his side: the games panel's moves are `/api/games`'s for the
/// same position and filters, each filter widget (colour, speed, mode, rating, months, result,
/// opponent) makes the page ask and show that filter, the filters survive a reload and step back
/// and forward with the browser, filters the server refuses are shown in the error box, a top game is replayed at the position (python-chess's) and
/// stepped through, "back" and "explore from here" leave it, the games say where they left the
/// `--repertoire` book (in the list and the replay's header), phone width does not overflow. The
/// screenshots go to `target/explore-games-screenshots/`.
#[test]
fn the_games_page_works_in_a_real_browser() {
    let shots = Path::new("target/explore-games-screenshots");
    std::fs::create_dir_all(shots).unwrap();
    let served = Served::start(&[
        "tests/data/pgn/lichess_magnus_2018-2022.pgn.xz",
        "--player",
        "DrNykterstein",
        "--repertoire",
        "tests/data/books/gm2001.bin",
    ]);
    let out = common::python(
        &[
            include_str!("../browser.py"),
            include_str!("../explore_games_browser.py"),
        ]
        .concat(),
        &[served.url.as_str(), path(shots)],
    );
    eprintln!("{out}");
    assert!(out.ends_with("ok\n"), "{out}");
    assert!(shots.join("4-desktop.png").exists());
}

/// 100 slow clients, each holding a connection with half a request, and 20 more that send theirs
/// a byte at a time, do not keep the server from answering others at once, on new connections and
/// on a kept-alive one; when they go, the server is as before.
#[test]
fn slow_clients_do_not_block_the_others() {
    let served = Served::start(&[path(&gnuchess_book())]);
    let held: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut s = TcpStream::connect(&served.addr).unwrap();
            s.write_all(b"GET /api/books HTTP/1.1\r\nHost: 127.0.0.1")
                .unwrap();
            s
        })
        .collect();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tricklers: Vec<_> = (0..20)
        .map(|_| {
            let (addr, done) = (served.addr.clone(), done.clone());
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&addr).unwrap();
                for byte in b"GET /api/books HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    .iter()
                    .cycle()
                {
                    if done.load(std::sync::atomic::Ordering::Relaxed)
                        || s.write_all(&[*byte]).is_err()
                    {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            })
        })
        .collect();
    let mut kept = TcpStream::connect(&served.addr).unwrap();
    let mut kept_reader = BufReader::new(kept.try_clone().unwrap());
    for i in 0..20 {
        let start = std::time::Instant::now();
        let reply = served.get("/api/probe");
        assert_eq!(reply.status, 200, "request {i}");
        assert!(text(&reply.body).contains("e2e4"));
        write!(
            kept,
            "GET /api/probe?moves=e4 HTTP/1.1\r\nHost: {}\r\n\r\n",
            served.addr
        )
        .unwrap();
        let reply = read_reply(&mut kept_reader, false);
        assert_eq!(reply.status, 200, "kept-alive request {i}");
        assert!(
            start.elapsed().as_secs_f64() < 2.0,
            "request {i}: {:?}",
            start.elapsed()
        );
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in tricklers {
        t.join().unwrap();
    }
    drop(held);
    // And the server is still well after they went.
    assert_eq!(served.get("/api/books").status, 200);
    let out = served.interrupt();
    assert_eq!(out.status.code(), Some(130));
}

/// Reads one answer from a kept-alive connection: its status line and headers, then as many
/// bytes of body as its `Content-Length` says (none for an answer to `HEAD`).
fn read_reply(reader: &mut impl BufRead, to_head: bool) -> Reply {
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    assert!(
        status_line.starts_with("HTTP/1.1 ") && status_line.ends_with("\r\n"),
        "{status_line:?}"
    );
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {status_line:?}"));
    let mut headers = status_line.trim_end().to_string();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.ends_with("\r\n"), "{line:?}");
        if line == "\r\n" {
            break;
        }
        headers.push('\n');
        headers.push_str(line.trim_end());
    }
    let mut reply = Reply {
        status,
        headers,
        body: Vec::new(),
    };
    if !to_head {
        let length: usize = reply
            .header("Content-Length")
            .expect("a Content-Length")
            .parse()
            .unwrap();
        reply.body = vec![0; length];
        reader.read_exact(&mut reply.body).unwrap();
    }
    reply
}

/// An explore server in this process, on the GNU Chess book, within `limits`.
fn in_process(limits: Limits) -> Server {
    let book = gnuchess_book();
    let mut books = polybook::book::Books::new();
    books.push(path(&book), polybook::book::Book::open(&book).unwrap());
    let explorer = Explorer {
        books,
        tally: None,
        games: None,
        practice: None,
        start: shakmaty::Chess::default(),
    };
    Server::start_with(explorer, "127.0.0.1:0".parse().unwrap(), limits).unwrap()
}

/// Stops `server`, which takes less than a second.
fn stop_at_once(server: Server) {
    let start = Instant::now();
    server.stop();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
}

/// Sends `bytes` on a new connection to `addr`; all the server sends back until it closes.
fn exchange(addr: &str, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(bytes).unwrap();
    until_closed(&mut stream).0
}

/// Everything the server sends on `stream` until it closes, and how long that took.
fn until_closed(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let start = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    stream
        .read_to_end(&mut got)
        .unwrap_or_else(|e| panic!("not closed ({e}) after {:?}", start.elapsed()));
    (got, start.elapsed())
}

/// A request head over 16 KiB is a 431 (a request line over 8 KiB a 414), with a one-line
/// JSON body, and the connection closes; the server goes on.
#[test]
fn a_head_over_the_limit_is_refused_in_one_line() {
    let served = Served::start(&[path(&gnuchess_book())]);
    let big_header = format!(
        "GET /api/books HTTP/1.1\r\nHost: {}\r\nX-Big: {}\r\n\r\n",
        served.addr,
        "a".repeat(20 << 10)
    );
    let long_url = format!(
        "GET /api/probe?moves={} HTTP/1.1\r\nHost: {}\r\n\r\n",
        "e4+".repeat(4 << 10),
        served.addr
    );
    let many_headers = format!(
        "GET / HTTP/1.1\r\nHost: {}\r\n{}\r\n",
        served.addr,
        "X-A: b\r\n".repeat(100)
    );
    for (request, status) in [(big_header, 431), (long_url, 414), (many_headers, 431)] {
        let mut stream = TcpStream::connect(&served.addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let reply = read_reply(&mut reader, false);
        assert_eq!(reply.status, status, "{}", reply.headers);
        assert_eq!(reply.header("Connection"), Some("close"));
        let body = text(&reply.body);
        assert_eq!(body.lines().count(), 1, "{body}");
        assert!(reply.json()["error"].is_string(), "{body}");
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{}", text(&rest));
    }
    assert_eq!(served.get("/api/books").status, 200);
}

/// A client that sends nothing is closed once the head's deadline passes, one that sends half a
/// head gets a 408 then, and a kept-alive connection is closed when idle too long: none holds a
/// thread for ever.
#[test]
fn silent_and_idle_clients_are_closed_after_their_deadlines() {
    let server = in_process(Limits {
        head_timeout: Duration::from_millis(400),
        idle_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let addr = server.addr();
    let mut silent = TcpStream::connect(addr).unwrap();
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"GET /api/books HTTP/1.1\r\nHo").unwrap();
    let mut idle = TcpStream::connect(addr).unwrap();
    write!(idle, "GET /api/books HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();

    let (got, took) = until_closed(&mut silent);
    assert!(got.is_empty(), "{}", text(&got));
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );

    let (got, took) = until_closed(&mut half);
    assert!(took < Duration::from_secs(3), "{took:?}");
    let reply = read_reply(&mut &got[..], false);
    assert_eq!(reply.status, 408);
    assert_eq!(reply.header("Connection"), Some("close"));

    let (got, _) = until_closed(&mut idle);
    let mut got = &got[..];
    let reply = read_reply(&mut got, false);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("Connection"), None);
    assert!(got.is_empty(), "{}", text(got));

    // The server is still there, and stops at once.
    let fresh = request(&addr.to_string(), "GET", "/api/books");
    assert_eq!(fresh.status, 200);
    stop_at_once(server);
}

/// More connections than the server takes at once: each of the others gets an answer or a 503
/// (`Connection: close`, one line), and when the first ones go the server answers as before.
#[test]
fn more_connections_than_the_cap_get_an_answer_or_a_503() {
    let server = in_process(Limits {
        connections: 8,
        head_timeout: Duration::from_secs(30),
        ..Limits::default()
    });
    let addr = server.addr().to_string();
    let held: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    // Each of the 8 is being served before the rest come.
    std::thread::sleep(Duration::from_millis(200));
    let start = Arc::new(Barrier::new(40));
    let others: Vec<_> = (0..40)
        .map(|_| {
            let (addr, start) = (addr.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                request(&addr, "GET", "/api/probe")
            })
        })
        .collect();
    for other in others {
        let reply = other.join().unwrap();
        assert_eq!(reply.status, 503, "{}", reply.headers);
        assert_eq!(reply.header("Connection"), Some("close"));
        assert_eq!(text(&reply.body).lines().count(), 1);
    }
    drop(held);
    // Their threads end as they see the connections close.
    let mut reply = request(&addr, "GET", "/api/probe");
    for _ in 0..100 {
        if reply.status == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        reply = request(&addr, "GET", "/api/probe");
    }
    assert_eq!(reply.status, 200);
    assert!(text(&reply.body).contains("e2e4"));
    // All 8 places again, once the connection just answered has ended on the server's side too.
    let all_eight = || {
        let kept: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(&addr).unwrap()).collect();
        kept.into_iter().all(|mut stream| {
            write!(stream, "GET /api/books HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
            read_reply(&mut BufReader::new(stream), false).status == 200
        })
    };
    assert!((0..50).any(|_| all_eight() || {
        std::thread::sleep(Duration::from_millis(20));
        false
    }));
    server.stop();
}

/// Requests sent one after another without waiting (pipelined) are answered in order on the one
/// connection; a `HEAD` gets the `GET`'s headers and no body; a body with a Content-Length is
/// read past; `Connection: close` ends it after its answer, as HTTP/1.0 does.
#[test]
fn pipelined_requests_are_answered_in_order() {
    let served = Served::start(&[path(&gnuchess_book())]);
    let host = &served.addr;
    let mut stream = TcpStream::connect(host).unwrap();
    let requests = format!(
        "GET /api/probe?moves=e4 HTTP/1.1\r\nHost: {host}\r\n\r\n\
         HEAD / HTTP/1.1\r\nHost: {host}\r\n\r\n\
         GET /nope HTTP/1.1\r\nHost: {host}\r\n\r\n\
         POST /api/books HTTP/1.1\r\nHost: {host}\r\nContent-Length: 11\r\n\r\nGET / HTTP/\
         HEAD /api/books HTTP/1.1\r\nHost: {host}\r\n\r\n\
         GET /api/books HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n\
         GET / HTTP/1.1\r\nHost: {host}\r\n\r\n"
    );
    stream.write_all(requests.as_bytes()).unwrap();
    let (got, _) = until_closed(&mut stream);
    let mut got = &got[..];
    let e4 = read_reply(&mut got, false);
    assert_eq!(e4.status, 200);
    assert!(e4.body == served.get("/api/probe?moves=e4").body);
    let head = read_reply(&mut got, true);
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("Content-Type"),
        Some("text/html; charset=utf-8")
    );
    let page = served.get("/");
    assert_eq!(head.header("Content-Length"), page.header("Content-Length"));
    assert_eq!(read_reply(&mut got, false).status, 404);
    let post = read_reply(&mut got, false);
    assert_eq!(post.status, 405);
    assert_eq!(post.header("Allow"), Some("GET, HEAD"));
    let head = read_reply(&mut got, true);
    assert_eq!(head.status, 200);
    let books = read_reply(&mut got, false);
    assert_eq!(books.status, 200);
    assert_eq!(
        head.header("Content-Length"),
        books.header("Content-Length")
    );
    assert_eq!(books.header("Connection"), Some("close"));
    assert_eq!(books.json(), served.get("/api/books").json());
    // The request after `Connection: close` is not answered.
    assert!(got.is_empty(), "{}", text(got));

    // HTTP/1.0: closed after the answer, unless it asks to keep the connection.
    // Each request, and the answers it gets: whether to a HEAD, and their Connection header.
    type Replies<'a> = &'a [(bool, &'a str)];
    let cases: [(&[u8], Replies); 2] = [
        (
            b"GET /api/books HTTP/1.0\r\n\r\nGET /api/books HTTP/1.0\r\n\r\n",
            &[(false, "close")],
        ),
        (
            b"GET /api/books HTTP/1.0\r\nConnection: keep-alive\r\n\r\nHEAD / HTTP/1.0\r\n\r\n",
            &[(false, "keep-alive"), (true, "close")],
        ),
    ];
    for (request, replies) in cases {
        let answer = exchange(host, request);
        let mut got = &answer[..];
        for &(to_head, connection) in replies {
            let reply = read_reply(&mut got, to_head);
            assert_eq!(reply.status_and_connection(), (200, Some(connection)));
        }
        assert!(got.is_empty(), "{}", text(got));
    }
}

/// What is not HTTP/1.x, or not a request, gets a 400 (or 505, 413) in one line and the
/// connection closes; the server goes on.
#[test]
fn bad_requests_get_one_line_and_a_close() {
    let served = Served::start(&[path(&gnuchess_book())]);
    let cases: [(&[u8], u16); 8] = [
        (b"GET / HTTP/2.0\r\n\r\n", 505),
        (b"GET /\xff\xfe HTTP/1.1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nBad Header\r\n\r\n", 400),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n", 413),
        (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: 127.0", 400),
    ];
    for (request, status) in cases {
        let mut stream = TcpStream::connect(&served.addr).unwrap();
        stream.write_all(request).unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        let (got, _) = until_closed(&mut stream);
        let mut got = &got[..];
        let reply = read_reply(&mut got, false);
        assert_eq!(reply.status, status, "{}", text(request));
        assert_eq!(
            reply.header("Connection"),
            Some("close"),
            "{}",
            text(request)
        );
        assert_eq!(text(&reply.body).lines().count(), 1);
        assert!(got.is_empty(), "{}", text(got));
    }
    assert_eq!(served.get("/api/probe").status, 200);
}

/// A request line that is not `METHOD TARGET HTTP/1.x` is refused with what is wrong with it: a
/// space in the target is a 400 that says so (not a 505, as if `e5 HTTP/1.1` were its version), a
/// version that is no HTTP version a 400 that names it, an HTTP version other than 1.0 and 1.1 a
/// 505.
#[test]
fn a_bad_request_line_is_named() {
    let served = Served::start(&[path(&gnuchess_book())]);
    let cases: [(&[u8], u16, &str); 6] = [
        (
            b"GET /api/probe?moves=e4 e5 HTTP/1.1\r\n\r\n",
            400,
            "bad request line: a space in the request target '/api/probe?moves=e4 e5' \
             (a space is written %20, or + in a query)",
        ),
        (
            b"GET / HTTX/1.1\r\n\r\n",
            400,
            "bad request line: 'HTTX/1.1' is not an HTTP version (HTTP/1.1 or HTTP/1.0)",
        ),
        (
            b"GET / HTTP/1.1x\r\nHost: a\r\n\r\n",
            400,
            "bad request line: 'HTTP/1.1x' is not an HTTP version (HTTP/1.1 or HTTP/1.0)",
        ),
        (
            b"GET /  HTTP/1.1\r\n\r\n",
            400,
            "bad request line: 'GET /  HTTP/1.1': its method, target and version are separated by \
             one space each",
        ),
        (
            b"GET / HTTP/1.1 please\r\n\r\n",
            400,
            "bad request line: 'GET / HTTP/1.1 please' is not METHOD TARGET HTTP/1.1",
        ),
        (
            b"GET / HTTP/2.0\r\n\r\n",
            505,
            "HTTP version 'HTTP/2.0' not supported: this server speaks HTTP/1.0 and HTTP/1.1",
        ),
    ];
    for (request, status, error) in cases {
        let answer = exchange(&served.addr, request);
        let mut got = &answer[..];
        let reply = read_reply(&mut got, false);
        assert_eq!(reply.status, status, "{}", text(request));
        assert_eq!(reply.json()["error"], error, "{}", text(request));
        assert_eq!(reply.header("Connection"), Some("close"));
        assert!(got.is_empty(), "{}", text(got));
    }
    assert_eq!(served.get("/api/books").status, 200);
}

/// A request with a chunked body (legal, even on a GET) has its body read and dropped, chunk by
/// chunk, extensions and trailer fields included: the request after it on the connection is
/// answered. A chunked body over the limit is a 413, a broken one a 400, a `Transfer-Encoding`
/// that does not end in `chunked` or comes with a `Content-Length` a 400; each closes.
#[test]
fn a_chunked_body_is_read_past() {
    let server = in_process(Limits {
        max_body: 100,
        ..Limits::default()
    });
    let addr = server.addr().to_string();
    let pipelined = format!(
        "GET /api/probe?moves=e4 HTTP/1.1\r\nHost: {addr}\r\nTransfer-Encoding: chunked\r\n\r\n\
         5\r\nhello\r\n7;name=value\r\n, world\r\n0\r\nX-Checksum: 1\r\n\r\n\
         GET /api/books HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    let answer = exchange(&addr, pipelined.as_bytes());
    let mut got = &answer[..];
    let probe = read_reply(&mut got, false);
    assert_eq!(probe.status_and_connection(), (200, None));
    assert!(probe.body == request(&addr, "GET", "/api/probe?moves=e4").body);
    let books = read_reply(&mut got, false);
    assert_eq!(books.status_and_connection(), (200, Some("close")));
    assert!(books.json()["books"].is_array());
    assert!(got.is_empty(), "{}", text(got));

    let chunked =
        |body: &str| format!("GET /api/books HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{body}");
    let cases = [
        (
            chunked(&format!("{:x}\r\n{}\r\n0\r\n\r\n", 101, "a".repeat(101))),
            413,
            "chunked request body over 100 bytes: this server takes none larger",
        ),
        (
            chunked(&"1\r\na\r\n".repeat(20)),
            413,
            "chunked request body over 100 bytes: this server takes none larger",
        ),
        (
            chunked("zz\r\nhello\r\n0\r\n\r\n"),
            400,
            "bad request: a bad chunk size line in the chunked body",
        ),
        (
            chunked("\r\n"),
            400,
            "bad request: a bad chunk size line in the chunked body",
        ),
        (
            chunked("5\r\nhello, world\r\n0\r\n\r\n"),
            400,
            "bad request: a chunk longer than its size in the chunked body",
        ),
        (
            "GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nabc".to_string(),
            400,
            "bad request: a Transfer-Encoding that does not end in chunked (where does the body end?)",
        ),
        (
            "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"
                .to_string(),
            400,
            "bad request: both Transfer-Encoding and Content-Length (where does the body end?)",
        ),
    ];
    for (request, status, error) in cases {
        let answer = exchange(&addr, request.as_bytes());
        let mut got = &answer[..];
        let reply = read_reply(&mut got, false);
        assert_eq!(reply.status, status, "{request}");
        assert_eq!(reply.json()["error"], error, "{request}");
        assert_eq!(reply.header("Connection"), Some("close"));
        assert!(got.is_empty(), "{}", text(got));
    }
    stop_at_once(server);
}

/// `stop` ends the server within a second, with connections open and half-sent requests.
#[test]
fn stop_ends_within_a_second() {
    let server = in_process(Limits::default());
    let addr = server.addr();
    let mut held: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(addr).unwrap()).collect();
    for s in &mut held[..10] {
        s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    }
    assert_eq!(request(&addr.to_string(), "GET", "/api/books").status, 200);
    std::thread::sleep(Duration::from_millis(100));
    stop_at_once(server);
    for s in &mut held {
        let (got, _) = until_closed(s);
        assert!(got.is_empty(), "{}", text(&got));
    }
    assert!(TcpStream::connect(addr).is_err());
}
