//! The HTTP server: a connection loop of its own over `std::net`, the request heads parsed by
//! `httparse`, each request answered from [`route`](super::route). The books are shared by the
//! threads, read-only.
//!
//! The design, made so that no client can keep the others waiting:
//!
//! - **One thread accepts**, and gives each connection a thread of its own, up to
//!   [`Limits::connections`] at once. Beyond that, a connection is answered `503` with
//!   `Connection: close` at once (by a thread of a small pool of its own; when that is full too,
//!   accepting pauses until one of them ends, and the system queues the connections); new ones
//!   are served again as soon as a connection ends.
//! - **Every wait has an end.** A request's head (its request line and headers) must arrive whole
//!   within [`Limits::head_timeout`], counted from the connection's start or from the first byte
//!   of a later request; a kept-alive connection waits [`Limits::idle_timeout`] for its next
//!   request; the client must take an answer within [`Limits::write_timeout`]. A slow or silent
//!   client holds only its own thread, and only that long.
//! - **Bounded input.** A head over [`Limits::max_head`] bytes is a `431` (a `414` when its request
//!   line alone is over [`Limits::max_url`]); one that `httparse` refuses is a `400` that says
//!   what is wrong (a request line's fault named: a space in the target, a version that is no
//!   HTTP version), an HTTP version other than 1.0 and 1.1 a `505`. A body up to
//!   [`Limits::max_body`] bytes is read, with a `Content-Length` or chunked (its chunks and
//!   trailer fields; counted as sent), and handed to the route (only the practice's `POST` reads
//!   one; the others drop it), a longer one is a `413`; a `Transfer-Encoding` that does not end
//!   in `chunked`, or comes with a `Content-Length`, is a `400`. `GET` and `HEAD` are served, and
//!   `POST` on the practice's answer (others: [`route`](super::route)'s `405`). Each error has a one-line JSON
//!   body, as the API's errors do.
//! - **HTTP/1.1**: connections are kept alive and requests may be pipelined (answered in order,
//!   one at a time); `Connection: close` closes after the answer. HTTP/1.0 closes after each answer
//!   unless the request asked for `Connection: keep-alive`. Every answer has a `Content-Length`
//!   (`HEAD`: that of the `GET`, and no body). After an error of the protocol the connection
//!   closes; what the client still sends is read and dropped for a moment first, so that it reads
//!   the answer rather than a reset.
//! - **A panic** while answering (a bug) is a `500` for that request, and that connection closes;
//!   the others go on.
//! - **[`Server::stop`]** wakes the accepting thread (by connecting to it), shuts down every live
//!   connection and waits for their threads: within a second.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use socket2::{Domain, Protocol, Socket, Type};
use thiserror::Error;

use super::Explorer;
use super::routes::{Reply, Request, host_allowed, host_refused, route_request};
use crate::text::quote;

/// Why the server could not start.
#[derive(Debug, Error)]
pub enum ExploreError {
    /// `kind` tells what failed: `AddrInUse` when another program has the port.
    #[error("cannot listen on {addr}: {why}")]
    Listen {
        addr: SocketAddr,
        why: String,
        kind: io::ErrorKind,
    },
}

/// What the server allows each connection and request (see the module's overview).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections served at once; more are answered `503`.
    pub connections: usize,
    /// The longest a request's head may take to arrive whole.
    pub head_timeout: Duration,
    /// The longest a kept-alive connection waits for its next request.
    pub idle_timeout: Duration,
    /// The longest the client may take to read one answer.
    pub write_timeout: Duration,
    /// The largest request head (request line and headers), in bytes.
    pub max_head: usize,
    /// The longest request line (method, target and version), in bytes.
    pub max_url: usize,
    /// The largest request body read (and dropped), in bytes.
    pub max_body: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections: 256,
            head_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(30),
            max_head: 16 << 10,
            max_url: 8 << 10,
            max_body: 64 << 10,
        }
    }
}

/// Connections over [`Limits::connections`] being answered `503` at once; beyond, they are closed.
const REFUSING: usize = 32;

/// How long a connection that is being closed is read (and what it sends dropped), at most, so
/// that the client reads the answer before the connection ends.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 1 << 20;

/// A running server. [`Server::stop`] ends it; dropping it leaves it running until the process
/// ends.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: JoinHandle<()>,
}

/// What the threads share.
struct Shared {
    explorer: Explorer,
    /// The address listened on (the `Host` check's).
    addr: SocketAddr,
    limits: Limits,
    stopping: AtomicBool,
    live: Mutex<Live>,
    /// Notified when a connection's thread ends.
    ended: Condvar,
}

/// The connections being served, by number (so that [`Server::stop`] can shut them down), and
/// how many are being refused.
#[derive(Default)]
struct Live {
    next: u64,
    open: HashMap<u64, Arc<TcpStream>>,
    refusing: usize,
}

impl Shared {
    fn live(&self) -> MutexGuard<'_, Live> {
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

impl Server {
    /// Listens on `addr` (port 0: any free port) and serves with the default [`Limits`].
    pub fn start(explorer: Explorer, addr: SocketAddr) -> Result<Server, ExploreError> {
        Server::start_with(explorer, addr, Limits::default())
    }

    /// Listens on `addr` (port 0: any free port) and serves within `limits`.
    pub fn start_with(
        explorer: Explorer,
        addr: SocketAddr,
        limits: Limits,
    ) -> Result<Server, ExploreError> {
        let failed = |e: io::Error| ExploreError::Listen {
            addr,
            why: crate::text::reason(&e),
            kind: e.kind(),
        };
        let listener = listen(addr).map_err(failed)?;
        let addr = listener.local_addr().map_err(failed)?;
        let shared = Arc::new(Shared {
            explorer,
            addr,
            limits,
            stopping: AtomicBool::new(false),
            live: Mutex::new(Live::default()),
            ended: Condvar::new(),
        });
        let acceptor = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("explore-accept".into())
                .spawn(move || accept_loop(&listener, &shared))
                .map_err(failed)?
        };
        Ok(Server {
            addr,
            shared,
            acceptor,
        })
    }

    /// The address it listens on (with the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL: `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops taking connections, ends the live ones (an answer being written is cut short) and
    /// waits for their threads, a second at most.
    pub fn stop(self) {
        let until = Instant::now() + Duration::from_secs(1);
        self.shared.stopping.store(true, Ordering::SeqCst);
        // The accepting thread wakes up with this connection, sees the flag and ends (closing the
        // listener). Should the connection fail, the thread is left to the process's end.
        let here = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let woken = TcpStream::connect_timeout(
            &SocketAddr::new(here, self.addr.port()),
            Duration::from_millis(500),
        );
        if woken.is_ok() {
            let _ = self.acceptor.join();
        }
        let mut live = self.shared.live();
        for stream in live.open.values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        while !(live.open.is_empty() && live.refusing == 0) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            live = match self.shared.ended.wait_timeout(live, left) {
                Ok((live, _)) => live,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

/// A socket listening on `addr` whose connections send each answer at once: `TCP_NODELAY` is set
/// on it (and on each connection it accepts). Without it, an answer written in two pieces (the
/// head, then a large body) waits for the client's delayed acknowledgement of the first: 40 ms a
/// request on a kept-alive connection, as browsers use.
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // As std's `TcpListener::bind` does on Unix: a port just left by a stopped server can be taken again.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.set_tcp_nodelay(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// The accepting thread: each connection to a thread of its own, until the stop.
fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    loop {
        let accepted = listener.accept();
        if shared.stopping() {
            return;
        }
        match accepted {
            Ok((stream, _)) => admit(shared, stream),
            // Out of file descriptors, say: a moment later the next one may work.
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Serves `stream` on a thread of its own, or refuses it (`503`) when [`Limits::connections`]
/// are being served; when [`REFUSING`] are being refused too, waits for one of them to end.
fn admit(shared: &Arc<Shared>, stream: TcpStream) {
    let accepted = Instant::now();
    let _ = stream.set_nodelay(true);
    let stream = Arc::new(stream);
    let id = {
        let mut live = shared.live();
        loop {
            if shared.stopping() {
                return;
            }
            if live.open.len() < shared.limits.connections {
                let id = live.next;
                live.next += 1;
                live.open.insert(id, stream.clone());
                break Some(id);
            }
            if live.refusing < REFUSING {
                live.refusing += 1;
                break None;
            }
            // Both full: no more is accepted (the system queues the connections) until one ends.
            live = match shared.ended.wait_timeout(live, Duration::from_millis(100)) {
                Ok((live, _)) => live,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    };
    let ended = Ended {
        shared: shared.clone(),
        id,
    };
    let spawned = std::thread::Builder::new()
        .name("explore-connection".into())
        .spawn(move || {
            let shared = &ended.shared;
            match ended.id {
                Some(_) => serve(shared, &stream, accepted),
                None => refuse(shared, &stream),
            }
        });
    // No thread (out of memory or of threads): the connection is closed, and `Ended` is dropped
    // with the closure.
    drop(spawned);
}

/// Takes a connection's thread off the live ones when it ends, however it ends.
struct Ended {
    shared: Arc<Shared>,
    /// The connection's number, or none for a refused one.
    id: Option<u64>,
}

impl Drop for Ended {
    fn drop(&mut self) {
        let mut live = self.shared.live();
        match self.id {
            Some(id) => {
                live.open.remove(&id);
            }
            None => live.refusing -= 1,
        }
        drop(live);
        self.shared.ended.notify_all();
    }
}

/// The answer to a connection over the limit: a `503` at once, then the connection closed.
fn refuse(shared: &Shared, stream: &TcpStream) {
    let reply = Reply::error(
        503,
        &format!(
            "too busy: {} connections are being served; try again in a moment",
            shared.limits.connections
        ),
    );
    let until = Instant::now() + LINGER;
    if write_reply(stream, &reply, Answer::closing(), 0.0, until).is_ok() {
        close_gently(stream);
    }
}

/// The parts of a request head the server uses, taken out of the buffer.
struct Head {
    /// The head's length in bytes (where the body starts).
    length: usize,
    method: String,
    target: String,
    /// `Host`.
    host: Option<String>,
    /// `Content-Type` (the practice's `POST` needs `application/json`).
    content_type: Option<String>,
    /// Whether the connection is kept after the answer (the version and `Connection`).
    keep: bool,
    /// HTTP/1.0 with `Connection: keep-alive` (its answer says it is kept).
    keep_alive_1_0: bool,
    body: Body,
}

enum Body {
    Length(u64),
    /// `Transfer-Encoding: chunked`: read chunk by chunk (see [`read_chunked`]).
    Chunked,
}

/// Why reading a head (or a body) stopped without one.
enum NoHead {
    /// The client closed, or was silent until the deadline, before a request began.
    Gone,
    /// An error to answer (then close): its status and message.
    Refuse(u16, String),
}

/// Serves the requests of one connection, in order, until it closes, errs, times out or the
/// server stops.
fn serve(shared: &Shared, stream: &TcpStream, accepted: Instant) {
    let limits = &shared.limits;
    // What was read and not yet used: the start of the next request (pipelining).
    let mut buffer = Vec::new();
    let mut first_byte_by = accepted + limits.head_timeout;
    let mut head_by = Some(first_byte_by);
    while !shared.stopping() {
        let head = match read_head(stream, &mut buffer, first_byte_by, head_by, limits) {
            Ok(head) => head,
            Err(NoHead::Gone) => return,
            Err(NoHead::Refuse(status, message)) => {
                return refuse_and_close(stream, status, &message, limits);
            }
        };
        buffer.drain(..head.length);
        let mut keep = head.keep && !shared.stopping();
        // The body (at most `max_body` bytes), for the routes that read one.
        let mut body = Vec::new();
        match head.body {
            Body::Length(0) => {}
            Body::Length(n) if n > limits.max_body => {
                let message = format!(
                    "request body of {n} bytes: this server takes none over {}",
                    limits.max_body
                );
                return refuse_and_close(stream, 413, &message, limits);
            }
            Body::Length(n) => {
                let deadline = Instant::now() + limits.head_timeout;
                if !read_body(stream, &mut buffer, n, deadline, &mut body) {
                    return;
                }
            }
            Body::Chunked => {
                let deadline = Instant::now() + limits.head_timeout;
                match read_chunked(stream, &mut buffer, limits, deadline, &mut body) {
                    Ok(()) => {}
                    Err(NoHead::Gone) => return,
                    Err(NoHead::Refuse(status, message)) => {
                        return refuse_and_close(stream, status, &message, limits);
                    }
                }
            }
        }
        let started = Instant::now();
        let reply = if host_allowed(shared.addr, head.host.as_deref()) {
            let routed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let request = Request {
                    method: &head.method,
                    target: &head.target,
                    content_type: head.content_type.as_deref(),
                    body: &body,
                };
                route_request(&shared.explorer, &request)
            }));
            routed.unwrap_or_else(|_| {
                keep = false;
                Reply::error(500, "internal error: the server failed on this request")
            })
        } else {
            host_refused(head.host.as_deref().unwrap_or_default())
        };
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        let answer = Answer {
            body: head.method != "HEAD",
            keep,
            keep_alive_1_0: keep && head.keep_alive_1_0,
        };
        let until = Instant::now() + limits.write_timeout;
        if write_reply(stream, &reply, answer, millis, until).is_err() {
            return;
        }
        if !keep {
            return close_gently(stream);
        }
        let now = Instant::now();
        if buffer.is_empty() {
            first_byte_by = now + limits.idle_timeout;
            head_by = None;
        } else {
            first_byte_by = now;
            head_by = Some(now + limits.head_timeout);
        }
    }
}

/// Reads until `buffer` starts with a whole request head, and parses it: the first byte must come
/// by `first_byte_by`, the whole head by `head_by` (or [`Limits::head_timeout`] after its first
/// byte).
fn read_head(
    stream: &TcpStream,
    buffer: &mut Vec<u8>,
    first_byte_by: Instant,
    mut head_by: Option<Instant>,
    limits: &Limits,
) -> Result<Head, NoHead> {
    // Where to look for the head's end (an empty line) in what comes next.
    let mut scanned = 0;
    loop {
        if head_ends(buffer, &mut scanned)
            && let Some(head) = parse_head(buffer, limits)?
        {
            return Ok(head);
        }
        if buffer.len() >= limits.max_head {
            return Err(too_large(buffer, limits));
        }
        let deadline = if buffer.is_empty() {
            first_byte_by
        } else {
            *head_by.get_or_insert_with(|| Instant::now() + limits.head_timeout)
        };
        match read_some(stream, buffer, deadline) {
            Ok(0) if buffer.is_empty() => return Err(NoHead::Gone),
            Ok(0) => {
                return Err(NoHead::Refuse(
                    400,
                    "the request ended within its head".into(),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::TimedOut && !buffer.is_empty() => {
                return Err(NoHead::Refuse(
                    408,
                    format!(
                        "the request's head did not arrive whole within {} s",
                        limits.head_timeout.as_secs_f64()
                    ),
                ));
            }
            Err(_) => return Err(NoHead::Gone),
        }
    }
}

/// Whether `buffer` holds an empty line (`\n\n` or `\n\r\n`) at or after `scanned`, the head's
/// end; `scanned` moves on to where the next search starts.
fn head_ends(buffer: &[u8], scanned: &mut usize) -> bool {
    let from = *scanned;
    *scanned = buffer.len().saturating_sub(2).max(from);
    memchr::memchr_iter(b'\n', &buffer[from..]).any(|i| {
        let rest = &buffer[from + i + 1..];
        rest.starts_with(b"\n") || rest.starts_with(b"\r\n")
    })
}

/// The head at the start of `buffer`, or `None` while it is not whole (an empty line before the
/// request line, which is skipped, looked like its end).
fn parse_head(buffer: &[u8], limits: &Limits) -> Result<Option<Head>, NoHead> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    let length = match request.parse(buffer) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(NoHead::Refuse(
                431,
                format!("more than {} header fields", headers.len()),
            ));
        }
        // The faults of a request line (a token is its method or target).
        Err(e @ (httparse::Error::Version | httparse::Error::NewLine | httparse::Error::Token)) => {
            let (status, message) = request_line_refused(buffer).unwrap_or_else(|| match e {
                httparse::Error::Token => (
                    400,
                    "bad request line: a character not allowed in its method or target".into(),
                ),
                _ => (400, format!("bad request: {e} in the header fields")),
            });
            return Err(NoHead::Refuse(status, message));
        }
        Err(e) => return Err(NoHead::Refuse(400, format!("bad request: {e}"))),
    };
    if length > limits.max_head {
        return Err(too_large(buffer, limits));
    }
    let (Some(method), Some(target), Some(version)) =
        (request.method, request.path, request.version)
    else {
        return Err(NoHead::Refuse(400, "bad request: no request line".into()));
    };
    if method.len() + target.len() + " HTTP/1.1".len() + 1 > limits.max_url {
        return Err(url_too_long(limits));
    }
    let mut host = None;
    let mut content_type = None;
    let (mut close, mut keep_alive) = (false, false);
    let (mut content_length, mut transfer_encoding, mut chunked) = (None::<u64>, false, false);
    for header in request.headers.iter() {
        let value = String::from_utf8_lossy(header.value);
        let value = value.trim();
        if header.name.eq_ignore_ascii_case("host") {
            if host.is_some() {
                return Err(NoHead::Refuse(
                    400,
                    "bad request: several Host fields".into(),
                ));
            }
            host = Some(value.to_string());
        } else if header.name.eq_ignore_ascii_case("content-type") {
            content_type = Some(value.to_string());
        } else if header.name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                close |= token.eq_ignore_ascii_case("close");
                keep_alive |= token.eq_ignore_ascii_case("keep-alive");
            }
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            // The codings in the order applied: the last one frames the body.
            transfer_encoding = true;
            chunked = value
                .rsplit(',')
                .next()
                .is_some_and(|coding| coding.trim().eq_ignore_ascii_case("chunked"));
        } else if header.name.eq_ignore_ascii_case("content-length") {
            let bad = || NoHead::Refuse(400, "bad request: a bad Content-Length".into());
            if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let n = value.parse::<u64>().unwrap_or(u64::MAX);
            if content_length.is_some_and(|m| m != n) {
                return Err(bad());
            }
            content_length = Some(n);
        }
    }
    // Without a chunked framing, or with two, where the body ends is not known (RFC 9112, 6.3).
    if transfer_encoding && content_length.is_some() {
        return Err(NoHead::Refuse(
            400,
            "bad request: both Transfer-Encoding and Content-Length (where does the body end?)"
                .into(),
        ));
    }
    if transfer_encoding && !chunked {
        return Err(NoHead::Refuse(
            400,
            "bad request: a Transfer-Encoding that does not end in chunked (where does the body end?)"
                .into(),
        ));
    }
    let keep = match version {
        1 => !close,
        _ => keep_alive && !close,
    };
    Ok(Some(Head {
        length,
        method: method.to_string(),
        target: target.to_string(),
        host,
        content_type,
        keep,
        keep_alive_1_0: version == 0,
        body: if chunked {
            Body::Chunked
        } else {
            Body::Length(content_length.unwrap_or(0))
        },
    }))
}

/// What is wrong with the request line at the start of `buffer` (after empty lines), which
/// `httparse` refused: its status and message, or `None` when its parts are good (the fault lies
/// in their characters, or in the header fields). A line is `METHOD TARGET VERSION`, one space
/// apart; a version of another HTTP than 1.0 and 1.1 is a `505`, anything else a `400`.
fn request_line_refused(buffer: &[u8]) -> Option<(u16, String)> {
    let start = buffer
        .iter()
        .position(|b| !matches!(b, b'\r' | b'\n'))
        .unwrap_or(buffer.len());
    let rest = &buffer[start..];
    let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
    let line = String::from_utf8_lossy(rest[..end].strip_suffix(b"\r").unwrap_or(&rest[..end]));
    let parts: Vec<&str> = line.split(' ').collect();
    // `HTTP/` and a version number: 2, 2.0, 1.2.
    let http = |part: &str| {
        part.strip_prefix("HTTP/").is_some_and(|number| {
            let (major, minor) = number.split_once('.').unwrap_or((number, "0"));
            [major, minor]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let bad = |why: String| Some((400, format!("bad request line: {why}")));
    let n = parts.len();
    match parts.as_slice() {
        _ if n >= 3 && [1, n - 2, n - 1].iter().any(|&i| parts[i].is_empty()) => bad(format!(
            "{}: its method, target and version are separated by one space each",
            quote(&line)
        )),
        [_, _, "HTTP/1.0" | "HTTP/1.1"] => None,
        [_, _, version] if http(version) => Some((
            505,
            format!(
                "HTTP version {} not supported: this server speaks HTTP/1.0 and HTTP/1.1",
                quote(version)
            ),
        )),
        [_, _, version] => bad(format!(
            "{} is not an HTTP version (HTTP/1.1 or HTTP/1.0)",
            quote(version)
        )),
        [_, target @ .., version] if target.len() > 1 && http(version) => bad(format!(
            "a space in the request target {} (a space is written %20, or + in a query)",
            quote(&target.join(" "))
        )),
        _ => bad(format!("{} is not METHOD TARGET HTTP/1.1", quote(&line))),
    }
}

/// The refusal of a head over [`Limits::max_head`]: a `414` when its request line alone is over
/// [`Limits::max_url`], a `431` otherwise.
fn too_large(buffer: &[u8], limits: &Limits) -> NoHead {
    let line = memchr::memchr(b'\n', buffer).unwrap_or(buffer.len());
    if line > limits.max_url {
        url_too_long(limits)
    } else {
        NoHead::Refuse(431, format!("request head over {} bytes", limits.max_head))
    }
}

fn url_too_long(limits: &Limits) -> NoHead {
    NoHead::Refuse(414, format!("request line over {} bytes", limits.max_url))
}

/// Reads a body of `length` bytes into `into`, the start of which may be in `buffer` (what
/// follows it stays there), by `deadline`; whether it came whole.
fn read_body(
    stream: &TcpStream,
    buffer: &mut Vec<u8>,
    length: u64,
    deadline: Instant,
    into: &mut Vec<u8>,
) -> bool {
    let mut left = length;
    loop {
        let here = usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(buffer.len());
        into.extend(buffer.drain(..here));
        left -= here as u64;
        if left == 0 {
            return true;
        }
        match read_some(stream, buffer, deadline) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
    }
}

/// Reads a chunked body (RFC 9112, 7.1: chunks, each after its size in hex on a line of its own,
/// then the last chunk, of size 0, then trailer fields up to an empty line), its chunks' data into
/// `into`, the start of which may be in `buffer` (what follows it stays there), by `deadline`.
/// The trailer fields are dropped. The body as sent,
/// sizes and trailer fields included, may be [`Limits::max_body`] bytes at most (`413`); a broken
/// one is a `400`; a client that goes or is silent until `deadline` is [`NoHead::Gone`].
fn read_chunked(
    stream: &TcpStream,
    buffer: &mut Vec<u8>,
    limits: &Limits,
    deadline: Instant,
    into: &mut Vec<u8>,
) -> Result<(), NoHead> {
    let too_large = || {
        NoHead::Refuse(
            413,
            format!(
                "chunked request body over {} bytes: this server takes none larger",
                limits.max_body
            ),
        )
    };
    let bad = |what: &str| NoHead::Refuse(400, format!("bad request: {what} in the chunked body"));
    // Reads more into `buffer`, once `taken` bytes of the body and the buffer's are within the limit.
    let more = |buffer: &mut Vec<u8>, taken: u64| {
        if taken.saturating_add(buffer.len() as u64) > limits.max_body {
            return Err(too_large());
        }
        match read_some(stream, buffer, deadline) {
            Ok(0) | Err(_) => Err(NoHead::Gone),
            Ok(_) => Ok(()),
        }
    };
    // The bytes of the body dropped so far.
    let mut taken = 0u64;
    loop {
        let (line, size) = loop {
            match httparse::parse_chunk_size(buffer) {
                // httparse reads a line without digits as size 0.
                _ if buffer.first().is_some_and(|b| !b.is_ascii_hexdigit()) => {
                    return Err(bad("a bad chunk size line"));
                }
                Err(_) => return Err(bad("a bad chunk size line")),
                Ok(httparse::Status::Complete(found)) => break found,
                Ok(httparse::Status::Partial) => more(buffer, taken)?,
            }
        };
        taken = taken.saturating_add(line as u64).saturating_add(size);
        if taken > limits.max_body {
            return Err(too_large());
        }
        buffer.drain(..line);
        if size == 0 {
            break;
        }
        if !read_body(stream, buffer, size, deadline, into) {
            return Err(NoHead::Gone);
        }
        while buffer.len() < 2 {
            more(buffer, taken)?;
        }
        if !buffer.starts_with(b"\r\n") {
            return Err(bad("a chunk longer than its size"));
        }
        buffer.drain(..2);
        taken += 2;
    }
    loop {
        let mut fields = [httparse::EMPTY_HEADER; 64];
        match httparse::parse_headers(buffer, &mut fields) {
            Ok(httparse::Status::Complete((length, _))) => {
                if taken.saturating_add(length as u64) > limits.max_body {
                    return Err(too_large());
                }
                buffer.drain(..length);
                return Ok(());
            }
            Ok(httparse::Status::Partial) => more(buffer, taken)?,
            Err(e) => return Err(bad(&format!("{e} among the trailer fields"))),
        }
    }
}

/// Answers `status` (an error of the protocol) and closes the connection.
fn refuse_and_close(stream: &TcpStream, status: u16, message: &str, limits: &Limits) {
    let reply = Reply::error(status, message);
    let until = Instant::now() + limits.write_timeout.min(LINGER);
    if write_reply(stream, &reply, Answer::closing(), 0.0, until).is_ok() {
        close_gently(stream);
    }
}

/// Reads what comes next into `buffer`, waiting until `deadline` at most: the bytes read (0: the
/// client closed), or `TimedOut`.
fn read_some(stream: &TcpStream, buffer: &mut Vec<u8>, deadline: Instant) -> io::Result<usize> {
    let mut chunk = [0u8; 8 << 10];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_read_timeout(Some(left))?;
        match (&*stream).read(&mut chunk) {
            Ok(n) => {
                buffer.extend_from_slice(&chunk[..n]);
                return Ok(n);
            }
            Err(e) if try_again(&e) => {}
            Err(e) => return Err(e),
        }
    }
}

/// A read or write that timed out or was interrupted before its deadline: try it again.
fn try_again(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Writes all of `bytes` by `deadline`.
fn write_by(stream: &TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match (&*stream).write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if try_again(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Ends the connection after an answer: no more is sent, and what the client still sends is read
/// and dropped (for [`LINGER`] at most) until it closes, so that its system does not discard the
/// answer on a reset.
fn close_gently(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let until = Instant::now() + LINGER;
    let mut dropped = Vec::new();
    let mut total = 0;
    while total < LINGER_BYTES {
        match read_some(stream, &mut dropped, until) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
        dropped.clear();
    }
}

/// How an answer is sent.
#[derive(Clone, Copy)]
struct Answer {
    /// With the body (not for `HEAD`).
    body: bool,
    /// The connection is kept after it (else the answer says `Connection: close`).
    keep: bool,
    /// Kept, to an HTTP/1.0 client that asked (the answer says `Connection: keep-alive`).
    keep_alive_1_0: bool,
}

impl Answer {
    fn closing() -> Answer {
        Answer {
            body: true,
            keep: false,
            keep_alive_1_0: false,
        }
    }
}

/// Writes `reply` with its headers: the time spent making it goes into `Server-Timing`
/// (`app;dur=0.042`, in milliseconds), which browsers show and the benchmark reads.
fn write_reply(
    stream: &TcpStream,
    reply: &Reply,
    answer: Answer,
    millis: f64,
    deadline: Instant,
) -> io::Result<()> {
    use std::fmt::Write as _;
    let mut head = String::with_capacity(512);
    let _ = write!(
        head,
        "HTTP/1.1 {} {}\r\n\
         Date: {}\r\n\
         Content-Type: {}\r\n\
         Content-Length: {}\r\n\
         Server-Timing: app;dur={millis:.3}\r\n\
         Cache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\n",
        reply.status,
        reason(reply.status),
        http_date(SystemTime::now()),
        reply.content_type,
        reply.body.len(),
    );
    // The page may load only what this server serves (and the data URIs of its pieces).
    head.push_str(
        "Content-Security-Policy: default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'\r\n",
    );
    if reply.status == 405 {
        let _ = write!(head, "Allow: {}\r\n", reply.allow);
    }
    if reply.status == 503 {
        head.push_str("Retry-After: 1\r\n");
    }
    if !answer.keep {
        head.push_str("Connection: close\r\n");
    } else if answer.keep_alive_1_0 {
        head.push_str("Connection: keep-alive\r\n");
    }
    head.push_str("\r\n");
    let body: &[u8] = if answer.body { &reply.body } else { &[] };
    // A small answer goes in one piece; a large one (the page's script) is sent from where it lies
    // in the binary, after its head.
    if body.len() <= 16 << 10 {
        let mut whole = head.into_bytes();
        whole.extend_from_slice(body);
        write_by(stream, &whole, deadline)
    } else {
        write_by(stream, head.as_bytes(), deadline)?;
        write_by(stream, body, deadline)
    }
}

/// The reason phrase of each status the server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// `time` as HTTP writes dates: `Sun, 06 Nov 1994 08:49:37 GMT`.
fn http_date(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    let (year, month, day) = crate::text::civil_from_days(days as i64);
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(month - 1) as usize];
    format!(
        "{weekday}, {day:02} {month} {year} {:02}:{:02}:{:02} GMT",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_as_http_writes_them() {
        let at = |secs| http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(at(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(at(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(at(1_798_761_599), "Thu, 31 Dec 2026 23:59:59 GMT");
    }

    #[test]
    fn a_head_ends_at_an_empty_line() {
        let ends = |bytes: &[u8]| head_ends(bytes, &mut 0);
        assert!(ends(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(ends(b"GET / HTTP/1.1\nHost: x\n\n"));
        assert!(!ends(b"GET / HTTP/1.1\r\nHost: x\r\n"));
        assert!(!ends(b"GET / HTTP/1.1\r\nHost: x\r\n\r"));
        // Fed a byte at a time, the end is found once, where it is.
        let whole = b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET";
        let mut scanned = 0;
        let found: Vec<usize> = (1..=whole.len())
            .filter(|&n| head_ends(&whole[..n], &mut scanned))
            .collect();
        assert_eq!(found.first(), Some(&27));
    }

    fn head(bytes: &[u8]) -> Result<Option<Head>, NoHead> {
        parse_head(bytes, &Limits::default())
    }

    fn refused(bytes: &[u8]) -> u16 {
        match head(bytes) {
            Err(NoHead::Refuse(status, message)) => {
                assert!(!message.contains('\n'), "{message}");
                status
            }
            Ok(_) => 0,
            Err(NoHead::Gone) => 1,
        }
    }

    #[test]
    fn heads_are_parsed_and_bad_ones_refused() {
        let h = head(b"GET /api/probe?moves=e4 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc")
            .ok()
            .flatten()
            .unwrap();
        assert_eq!(
            (h.method.as_str(), h.target.as_str()),
            ("GET", "/api/probe?moves=e4")
        );
        assert_eq!((h.host.as_deref(), h.keep), (Some("127.0.0.1"), false));
        assert!(matches!(h.body, Body::Length(3)));
        assert_eq!(h.length, 91, "the body, abc, is not part of the head");
        let h = head(b"HEAD / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
            .ok()
            .flatten()
            .unwrap();
        assert!(h.keep && h.keep_alive_1_0);
        assert!(!head(b"GET / HTTP/1.0\r\n\r\n").ok().flatten().unwrap().keep);
        assert!(head(b"GET / HTTP/1.1\r\n\r\n").ok().flatten().unwrap().keep);
        assert!(head(b"\r\n\r\n").ok().unwrap().is_none());
        assert_eq!(refused(b"GET / HTTP/2.0\r\n\r\n"), 505);
        assert_eq!(refused(b"GET /\xff HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(refused(b"G\0T / HTTP/1.1\r\n\r\n"), 400);
        assert_eq!(
            refused(b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
            400
        );
        assert_eq!(
            refused(b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            400
        );
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(65));
        assert_eq!(refused(many.as_bytes()), 431);
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(9000));
        assert_eq!(refused(long.as_bytes()), 414);
        let chunked = head(b"GET / HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n");
        assert!(matches!(
            chunked.ok().flatten().unwrap().body,
            Body::Chunked
        ));
        assert_eq!(
            refused(b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"),
            400
        );
    }

    #[test]
    fn a_bad_request_line_is_named() {
        let refusal = |bytes: &[u8]| match parse_head(bytes, &Limits::default()) {
            Err(NoHead::Refuse(status, message)) => (status, message),
            _ => panic!("{} is not refused", String::from_utf8_lossy(bytes)),
        };
        for (line, status, says) in [
            (
                "GET /a b HTTP/1.1",
                400,
                "a space in the request target '/a b'",
            ),
            (
                "GET /a b c HTTP/1.0",
                400,
                "a space in the request target '/a b c'",
            ),
            (
                "GET /a b HTTP/2",
                400,
                "a space in the request target '/a b'",
            ),
            ("GET / HTTX/1.1", 400, "'HTTX/1.1' is not an HTTP version"),
            ("GET / HTTP/1.1x", 400, "'HTTP/1.1x' is not an HTTP version"),
            ("GET / HTTP/1.", 400, "'HTTP/1.' is not an HTTP version"),
            ("GET / http/1.1", 400, "'http/1.1' is not an HTTP version"),
            ("GET / HTTP/1.1 ", 400, "separated by one space each"),
            ("GET  / HTTP/1.1", 400, "separated by one space each"),
            (
                "GET / HTTP/1.1 x",
                400,
                "'GET / HTTP/1.1 x' is not METHOD TARGET HTTP/1.1",
            ),
            (
                "GET / HTTP/2.0",
                505,
                "HTTP version 'HTTP/2.0' not supported",
            ),
            (
                "GET / HTTP/1.2",
                505,
                "HTTP version 'HTTP/1.2' not supported",
            ),
            ("GET / HTTP/3", 505, "HTTP version 'HTTP/3' not supported"),
        ] {
            let (got, message) = refusal(format!("\r\n{line}\r\nHost: a\r\n\r\n").as_bytes());
            assert_eq!(got, status, "{line}: {message}");
            assert!(message.contains(says), "{line}: {message}");
        }
        let (got, message) = refusal(b"GET /\xff HTTP/1.1\r\n\r\n");
        assert_eq!(got, 400);
        assert!(
            message.contains("not allowed in its method or target"),
            "{message}"
        );
        // A good request line: the fault lies in the header fields.
        let (got, message) = refusal(b"GET / HTTP/1.1\r\nHost: a\r\n\rb\r\n\r\n");
        assert_eq!(got, 400);
        assert!(message.ends_with("in the header fields"), "{message}");
    }
}
