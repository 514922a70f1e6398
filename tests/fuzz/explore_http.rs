//! `explore_http`: the HTTP server of `explore`, in process, over real sockets, under mutated
//! requests, many connections, slow writers and resets.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use polybook::book::Book;
use rand::Rng;
use rand::rngs::StdRng;
use shakmaty::Chess;

use crate::{common, fuzz, mutate, tally_seeds};

/// The limits of the server under fuzzing: the defaults, with deadlines short enough that a case
/// can outwait them and a cap that a burst of connections passes.
pub(crate) fn fuzz_limits() -> polybook::explore::Limits {
    polybook::explore::Limits {
        connections: 32,
        head_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(1),
        write_timeout: Duration::from_secs(2),
        ..polybook::explore::Limits::default()
    }
}

/// What `explore` serves in the fuzzing: the GNU Chess book and a small tally.
fn fuzz_explorer() -> polybook::explore::Explorer {
    let book = common::gnuchess_book();
    let mut books = polybook::book::Books::new();
    books.push("gnuchess.bin", Book::open(&book).unwrap());
    let tally = &tally_seeds().files[0].0;
    let lookup = polybook::tally::TallyLookup::open(&[tally.as_path()]).unwrap();
    let games = common::data("pgn/tcec/TCEC_Season_7_-_Superfinal.pgn.xz");
    let opts = polybook::repertoire::IndexOptions {
        player: polybook::repertoire::Player::new(
            &["Stockfish 141214".to_string()],
            Some("^komodo"),
        )
        .unwrap(),
        max_ply: 50,
        threads: 2,
        memory: 1 << 30,
    };
    let index = polybook::repertoire::Index::read(
        &[polybook::pgn::input::Input::File(games)],
        &opts,
        &std::sync::atomic::AtomicBool::new(false),
        &(),
    )
    .unwrap();
    polybook::explore::Explorer {
        books,
        tally: Some(("small.parquet".into(), std::sync::Mutex::new(lookup))),
        games: Some(("tcec.pgn".into(), index)),
        practice: None,
        start: Chess::default(),
    }
}

/// The requests the page makes (and a script might), as a browser sends them, to `host`.
fn http_seeds(host: &str) -> Vec<Vec<u8>> {
    let after_e4 =
        "rnbqkbnr%2Fpppppppp%2F8%2F8%2F4P3%2F8%2FPPPP1PPP%2FRNBQKBNR%20b%20KQkq%20-%200%201";
    let browser = format!(
        "Host: {host}\r\nConnection: keep-alive\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) \
         Chrome/131.0 Safari/537.36\r\nAccept: */*\r\nSec-Fetch-Site: same-origin\r\n\
         Sec-Fetch-Mode: cors\r\nReferer: http://{host}/\r\nAccept-Encoding: gzip, deflate, br\r\n\
         Accept-Language: en-GB,en;q=0.9\r\n"
    );
    let targets = [
        "/".to_string(),
        "/explore.js".into(),
        "/explore.css".into(),
        "/favicon.svg".into(),
        "/api/books".into(),
        "/api/probe".into(),
        format!("/api/probe?fen={after_e4}"),
        format!("/api/tally?fen={after_e4}"),
        "/api/probe?moves=e4+e5+Nf3+Nc6+Bb5".into(),
        "/api/tally?moves=d4%20Nf6%20c4".into(),
        "/api/probe?fen=8%2F8%2F8%2F8%2F8%2F8%2F8%2Fk6K%20w%20-%20-%200%201&moves=Kg2".into(),
        "/api/probe?fen=%ff%fe".into(),
        "/api/games?moves=d4&color=white&speed=classical,unknown&mode=all&rating=3000-&since=2014-01&until=2025-12&result=win,draw&opponent=kom".into(),
        "/api/games?moves=e4+c5&rating=-3200&result=loss".into(),
        "/api/game?id=3&moves=e4".into(),
        "/nope".into(),
    ];
    let mut seeds: Vec<Vec<u8>> = targets
        .iter()
        .map(|t| format!("GET {t} HTTP/1.1\r\n{browser}\r\n").into_bytes())
        .collect();
    seeds.push(format!("HEAD /explore.js HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes());
    seeds.push(b"GET /api/books HTTP/1.0\r\n\r\n".to_vec());
    seeds.push(
        format!("GET /api/probe?moves=d4 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
            .into_bytes(),
    );
    seeds.push(
        format!("POST /api/probe HTTP/1.1\r\nHost: {host}\r\nContent-Length: 7\r\n\r\nmoves=e4")
            .into_bytes(),
    );
    seeds
}

const HTTP_TOKENS: &[&[u8]] = &[
    b"\r\n",
    b"\r\n\r\n",
    b"\n",
    b"\r",
    b" ",
    b"\t",
    b":",
    b"%",
    b"%2",
    b"%ff",
    b"%00",
    b"%zz",
    b"\xff\xfe",
    b"\xc3\x28",
    b"\0",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b"HTTP/2.0",
    b"HTTP/1.1\r\n\r\n",
    b"GET ",
    b"HEAD ",
    b"POST ",
    b"OPTIONS * ",
    b"CONNECT ",
    b"Content-Length: 5\r\n",
    b"Content-Length: 99999999999999999999\r\n",
    b"Content-Length: -1\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Connection: close\r\n",
    b"Connection: keep-alive\r\n",
    b"Host: evil.example\r\n",
    b"Host: ",
    b"Expect: 100-continue\r\n",
    b"?",
    b"&",
    b"=",
    b"fen=",
    b"moves=",
    b"moves=e4+e5",
    b"/api/probe?",
    b"/api/tally?",
    b"/api/books",
    b"/../",
    b"//",
    b"#",
];

/// The request bytes one step sends: a seed (or several, pipelined), mutated or not, or a head
/// over the limits, a random method, random bytes, a truncated request.
fn http_bytes(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let seed = |rng: &mut StdRng| seeds[rng.random_range(0..seeds.len())].clone();
    match rng.random_range(0..12) {
        0..=1 => seed(rng),
        2 => (0..rng.random_range(2..6))
            .flat_map(|_| seed(rng))
            .collect(),
        3..=6 => mutate(rng, seeds, HTTP_TOKENS, 64 << 10),
        7 => {
            // A header, the URL or a body over the limits (16 KiB, 8 KiB, 64 KiB), or near them.
            let mut request = seed(rng);
            let n = rng.random_range(0..40 << 10);
            let after_line = request.windows(2).position(|w| w == b"\r\n").unwrap_or(0) + 2;
            if rng.random_bool(0.3) {
                let at = after_line.min(request.len());
                let header = format!("X-Pad: {}\r\n", "a".repeat(n));
                request.splice(at..at, header.into_bytes());
            } else if rng.random_bool(0.5) {
                // A body of `length` bytes, sent whole, in part or with more after it.
                let length = rng.random_range(0..100 << 10);
                let at = after_line.min(request.len());
                let header = format!("Content-Length: {length}\r\n");
                request.splice(at..at, header.into_bytes());
                let sent = rng.random_range(0..=length + 64);
                request.extend((0..sent).map(|i| b"moves=e4&"[i % 9]));
            } else {
                let at = request.iter().position(|&b| b == b' ').unwrap_or(0) + 1;
                let path = format!("/api/probe?moves={}", "e4+e5+".repeat(n / 6));
                request.splice(at..at, path.into_bytes());
            }
            request
        }
        8 => {
            let method: String = (0..rng.random_range(1..12))
                .map(|_| rng.random_range(b'A'..=b'z') as char)
                .collect();
            let mut request = seed(rng);
            let space = request.iter().position(|&b| b == b' ').unwrap_or(0);
            request.splice(..space, method.into_bytes());
            request
        }
        9 => (0..rng.random_range(1..2048))
            .map(|_| rng.random())
            .collect(),
        _ => {
            let mut request = seed(rng);
            request.truncate(rng.random_range(0..request.len()));
            request
        }
    }
}

/// One step of a case, as the input encodes it.
enum HttpStep {
    /// Writes the bytes on connection `conn` (opened at its first use).
    Send {
        conn: u8,
        bytes: Vec<u8>,
    },
    /// Writes them `chunk` bytes at a time, `pause` ms apart.
    Trickle {
        conn: u8,
        chunk: u8,
        pause: u8,
        bytes: Vec<u8>,
    },
    /// Ends the connection's sending (the server sees the end of its input).
    Shutdown {
        conn: u8,
    },
    /// Closes the connection at once, with a reset, whatever it was doing.
    Reset {
        conn: u8,
    },
    Wait {
        ms: u16,
    },
    /// `count` new connections at once, each sending the bytes.
    Burst {
        count: u8,
        bytes: Vec<u8>,
    },
}

fn encode_steps(steps: &[HttpStep]) -> Vec<u8> {
    let mut out = Vec::new();
    let with_bytes = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    };
    for step in steps {
        match step {
            HttpStep::Send { conn, bytes } => {
                out.extend([0, *conn]);
                with_bytes(&mut out, bytes);
            }
            HttpStep::Trickle {
                conn,
                chunk,
                pause,
                bytes,
            } => {
                out.extend([1, *conn, *chunk, *pause]);
                with_bytes(&mut out, bytes);
            }
            HttpStep::Shutdown { conn } => out.extend([2, *conn]),
            HttpStep::Reset { conn } => out.extend([3, *conn]),
            HttpStep::Wait { ms } => {
                out.push(4);
                out.extend_from_slice(&ms.to_le_bytes());
            }
            HttpStep::Burst { count, bytes } => {
                out.extend([5, *count]);
                with_bytes(&mut out, bytes);
            }
        }
    }
    out
}

fn decode_steps(mut input: &[u8]) -> Vec<HttpStep> {
    fn take<'a>(input: &mut &'a [u8], n: usize) -> &'a [u8] {
        let (head, rest) = input.split_at(n.min(input.len()));
        *input = rest;
        head
    }
    fn bytes(input: &mut &[u8]) -> Vec<u8> {
        let len = take(input, 4);
        let len = u32::from_le_bytes(len.try_into().unwrap_or([0; 4])) as usize;
        take(input, len).to_vec()
    }
    let mut steps = Vec::new();
    while let Some((&kind, rest)) = input.split_first() {
        input = rest;
        let byte = |input: &mut &[u8]| take(input, 1).first().copied().unwrap_or(0);
        steps.push(match kind {
            0 => HttpStep::Send {
                conn: byte(&mut input),
                bytes: bytes(&mut input),
            },
            1 => HttpStep::Trickle {
                conn: byte(&mut input),
                chunk: byte(&mut input),
                pause: byte(&mut input),
                bytes: bytes(&mut input),
            },
            2 => HttpStep::Shutdown {
                conn: byte(&mut input),
            },
            3 => HttpStep::Reset {
                conn: byte(&mut input),
            },
            4 => HttpStep::Wait {
                ms: u16::from_le_bytes([byte(&mut input), byte(&mut input)]),
            },
            _ => HttpStep::Burst {
                count: byte(&mut input),
                bytes: bytes(&mut input),
            },
        });
    }
    steps
}

/// A case: a few steps over up to four connections (and bursts of many).
fn http_case(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let steps: Vec<HttpStep> = (0..rng.random_range(1..=6))
        .map(|_| {
            let conn = rng.random_range(0..4);
            match rng.random_range(0..20) {
                0..=9 => HttpStep::Send {
                    conn,
                    bytes: http_bytes(rng, seeds),
                },
                10..=11 => {
                    let mut bytes = http_bytes(rng, seeds);
                    bytes.truncate(600);
                    HttpStep::Trickle {
                        conn,
                        chunk: rng.random_range(1..=64),
                        pause: rng.random_range(0..=3),
                        bytes,
                    }
                }
                12 => HttpStep::Shutdown { conn },
                13..=14 => HttpStep::Reset { conn },
                15..=16 => HttpStep::Wait {
                    // Now and then past the server's deadlines (a second).
                    ms: if rng.random_ratio(1, 40) {
                        1100
                    } else {
                        rng.random_range(0..20)
                    },
                },
                _ => HttpStep::Burst {
                    count: rng.random_range(2..=80),
                    bytes: if rng.random_bool(0.5) {
                        seeds[rng.random_range(0..seeds.len())].clone()
                    } else {
                        http_bytes(rng, seeds)
                    },
                },
            }
        })
        .collect();
    encode_steps(&steps)
}

/// A client's connection: what it sends, and a thread reading all that comes back.
pub(crate) struct HttpConn {
    stream: Arc<std::net::TcpStream>,
    reader: std::thread::JoinHandle<(Vec<u8>, bool)>,
    /// Reset by the client (what came back may end anywhere).
    reset: bool,
    /// Its sending ended (shut down, or a write failed).
    done: bool,
}

impl HttpConn {
    pub(crate) fn open(addr: std::net::SocketAddr) -> HttpConn {
        let stream = Arc::new(
            std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("cannot connect to the server: {e}")),
        );
        let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let reader = {
            let stream = stream.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut chunk = [0u8; 16 << 10];
                loop {
                    match std::io::Read::read(&mut &*stream, &mut chunk) {
                        Ok(0) => return (got, true),
                        Ok(n) => got.extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e)
                            if e.kind() == std::io::ErrorKind::WouldBlock
                                || e.kind() == std::io::ErrorKind::TimedOut =>
                        {
                            panic!("the server neither answered nor closed in 10 s")
                        }
                        // A reset: the server closed while the client still sent.
                        Err(_) => return (got, false),
                    }
                }
            })
        };
        HttpConn {
            stream,
            reader,
            reset: false,
            done: false,
        }
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        if !self.done && (&*self.stream).write_all(bytes).is_err() {
            // The server closed (after an error's answer): no more to send.
            self.done = true;
        }
    }

    fn reset(&mut self) {
        let _ = socket2::SockRef::from(&*self.stream).set_linger(Some(Duration::ZERO));
        // Wakes the reader with an end of input; the last handle's close sends the reset.
        let _ = self.stream.shutdown(std::net::Shutdown::Read);
        self.reset = true;
        self.done = true;
    }

    /// Ends the connection (the server then closes it) and checks all that came back.
    pub(crate) fn finish(self) {
        if !self.reset {
            let _ = self.stream.shutdown(std::net::Shutdown::Write);
        }
        let (got, clean) = match self.reader.join() {
            Ok(got) => got,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        check_http_answers(&got, clean && !self.reset);
    }
}

/// `got` is a series of well-formed answers: a status line, headers with a Content-Length, that
/// many bytes of body (none after a `HEAD`), a one-line JSON error for a status other than 200,
/// nothing after `Connection: close`. Unless `whole`, the last one may be cut short.
fn check_http_answers(got: &[u8], whole: bool) {
    let mut rest = got;
    let shown = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned();
    while !rest.is_empty() {
        let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") else {
            assert!(!whole, "an answer's head without its end: {}", shown(rest));
            return;
        };
        let head = std::str::from_utf8(&rest[..end])
            .unwrap_or_else(|_| panic!("an answer's head not UTF-8: {}", shown(rest)));
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let status = status_line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("a bad status line: {status_line:?}"));
        assert!(
            [200, 400, 403, 404, 405, 408, 413, 414, 431, 500, 503, 505].contains(&status)
                && status_line.len() > 13,
            "a bad status line: {status_line:?}"
        );
        assert!(status != 500, "a 500: {}", shown(rest));
        let mut headers = std::collections::HashMap::new();
        for line in lines {
            let (name, value) = line
                .split_once(": ")
                .unwrap_or_else(|| panic!("a bad header line {line:?} in {head:?}"));
            assert!(
                headers
                    .insert(name.to_ascii_lowercase(), value.to_string())
                    .is_none(),
                "{name} twice in {head:?}"
            );
        }
        for name in ["content-type", "date", "server-timing", "cache-control"] {
            assert!(headers.contains_key(name), "no {name} in {head:?}");
        }
        let length: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or_else(|| panic!("no Content-Length in {head:?}"));
        let closes = headers.get("connection").map(String::as_str) == Some("close");
        rest = &rest[end + 4..];
        // The answer to a HEAD has no body: the next answer, or the end, follows its head (no
        // body of this server starts as a status line does).
        if rest.is_empty() || rest.starts_with(b"HTTP/1.1 ") {
            if closes {
                assert!(rest.is_empty(), "an answer after Connection: close");
            }
            continue;
        }
        if rest.len() < length {
            assert!(
                !whole,
                "a body of {} bytes, not {length}: {head:?}",
                rest.len()
            );
            return;
        }
        let body = &rest[..length];
        if headers["content-type"].starts_with("application/json") {
            let json: serde_json::Value = serde_json::from_slice(body)
                .unwrap_or_else(|e| panic!("a body that is not JSON ({e}): {}", shown(body)));
            if status != 200 {
                assert!(json["error"].is_string(), "{json}");
                assert!(!body.contains(&b'\n'), "an error of several lines");
            }
        }
        rest = &rest[length..];
        if closes {
            assert!(rest.is_empty(), "an answer after Connection: close");
        }
    }
}

/// Runs a case's steps on the server at `addr`, then ends every connection and checks what each
/// got back.
fn run_http_case(addr: std::net::SocketAddr, steps: Vec<HttpStep>) {
    let mut conns: std::collections::BTreeMap<u8, HttpConn> = Default::default();
    let mut bursts = Vec::new();
    for step in steps {
        match step {
            HttpStep::Send { conn, bytes } => conns
                .entry(conn)
                .or_insert_with(|| HttpConn::open(addr))
                .send(&bytes),
            HttpStep::Trickle {
                conn,
                chunk,
                pause,
                bytes,
            } => {
                let c = conns.entry(conn).or_insert_with(|| HttpConn::open(addr));
                for piece in bytes.chunks(usize::from(chunk.max(1))) {
                    c.send(piece);
                    std::thread::sleep(Duration::from_millis(u64::from(pause)));
                }
            }
            HttpStep::Shutdown { conn } => {
                if let Some(c) = conns.get_mut(&conn) {
                    let _ = c.stream.shutdown(std::net::Shutdown::Write);
                    c.done = true;
                }
            }
            HttpStep::Reset { conn } => {
                if let Some(mut c) = conns.remove(&conn) {
                    c.reset();
                    c.finish();
                }
            }
            HttpStep::Wait { ms } => {
                std::thread::sleep(Duration::from_millis(u64::from(ms.min(2000))))
            }
            HttpStep::Burst { count, bytes } => {
                let bytes = Arc::new(bytes);
                let threads: Vec<_> = (0..count.min(100))
                    .map(|_| {
                        let bytes = bytes.clone();
                        std::thread::spawn(move || {
                            let mut c = HttpConn::open(addr);
                            c.send(&bytes);
                            c
                        })
                    })
                    .collect();
                for t in threads {
                    match t.join() {
                        Ok(c) => bursts.push(c),
                        Err(panic) => std::panic::resume_unwind(panic),
                    }
                }
            }
        }
    }
    for c in conns.into_values().chain(bursts) {
        c.finish();
    }
}

/// A good request for `target` after a case: answered whole and correctly within 2 s (a 503 is
/// allowed while the connections of the case are still ending, within the same 2 s).
pub(crate) fn probe_promptly(addr: std::net::SocketAddr, target: &str, expected: &[u8]) {
    let start = Instant::now();
    loop {
        let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .unwrap_or_else(|e| panic!("the server no longer takes connections: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut stream, &mut got).unwrap_or_else(|e| {
            panic!(
                "no answer to a good probe ({e}) after {:?}",
                start.elapsed()
            )
        });
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "a good probe took {:?}",
            start.elapsed()
        );
        check_http_answers(&got, true);
        if got.starts_with(b"HTTP/1.1 503 ") {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        assert!(
            got.starts_with(b"HTTP/1.1 200 OK\r\n"),
            "a good probe answered {}",
            String::from_utf8_lossy(&got)
        );
        assert!(got.ends_with(expected), "a good probe answered wrong");
        return;
    }
}

/// The explore server under mutated requests (the page's own, and malformed request lines, heads
/// and URLs over the limits, bad percent-encoding, bytes that are not UTF-8, random methods,
/// truncated and pipelined requests), many connections at once, slow writers and resets: every
/// answer is well-formed HTTP, and after each case a good `/api/probe` is answered correctly
/// within 2 s. One server takes all the cases (its connection threads must all end: a leaked one
/// fills the cap of 32, and the probe gets 503s).
#[test]
fn explore_http() {
    let server = polybook::explore::Server::start_with(
        fuzz_explorer(),
        "127.0.0.1:0".parse().unwrap(),
        fuzz_limits(),
    )
    .unwrap();
    let addr = server.addr();
    let seeds = http_seeds(&addr.to_string());
    let expected = polybook::explore::route(&fuzz_explorer(), "GET", "/api/probe?moves=e4").body;
    fuzz(
        "explore_http",
        30,
        Duration::from_secs(60),
        |rng| http_case(rng, &seeds),
        |input| {
            run_http_case(addr, decode_steps(input));
            probe_promptly(addr, "/api/probe?moves=e4", &expected);
        },
    );
    server.stop();
}
