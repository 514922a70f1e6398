//! The HTTP server: `tiny_http` accepts connections and parses requests; a few worker threads
//! take requests from it and answer each from [`route`](super::route). The books are shared by
//! the threads, read-only.

use std::io::{self, Cursor};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};
use thiserror::Error;
use tiny_http::{Header, Response, StatusCode};

use super::routes::{host_allowed, host_refused};
use super::{Explorer, route};

/// Why the server could not start.
#[derive(Debug, Error)]
pub enum ExploreError {
    #[error("cannot listen on {addr}: {why}")]
    Listen { addr: SocketAddr, why: String },
}

/// A running server. [`Server::stop`] ends it; dropping it leaves the worker threads running
/// until the process ends.
pub struct Server {
    http: Arc<tiny_http::Server>,
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
}

impl Server {
    /// Listens on `addr` (port 0: any free port) and answers with `workers` threads.
    pub fn start(
        explorer: Explorer,
        addr: SocketAddr,
        workers: usize,
    ) -> Result<Server, ExploreError> {
        let listener = listen(addr).map_err(|e| ExploreError::Listen {
            addr,
            why: crate::text::reason(&e),
        })?;
        let http =
            tiny_http::Server::from_listener(listener, None).map_err(|e| ExploreError::Listen {
                addr,
                why: e.to_string(),
            })?;
        let addr = http.server_addr().to_ip().unwrap_or(addr);
        let http = Arc::new(http);
        let explorer = Arc::new(explorer);
        let stopping = Arc::new(AtomicBool::new(false));
        let workers = (0..workers.max(1))
            .map(|_| {
                let (http, explorer, stopping) = (http.clone(), explorer.clone(), stopping.clone());
                std::thread::spawn(move || {
                    while !stopping.load(Ordering::Relaxed) {
                        match http.recv() {
                            Ok(request) => answer(&explorer, addr, request),
                            // The stop (below), or a failed accept (out of file descriptors, say):
                            // a moment later the next one may work.
                            Err(_) => std::thread::sleep(Duration::from_millis(10)),
                        }
                    }
                })
            })
            .collect();
        Ok(Server {
            http,
            addr,
            stopping,
            workers,
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

    /// Stops taking requests, lets each worker finish the one it is answering, and waits for them.
    pub fn stop(self) {
        self.stopping.store(true, Ordering::Relaxed);
        for _ in &self.workers {
            self.http.unblock();
        }
        for worker in self.workers {
            let _ = worker.join();
        }
    }
}

/// A socket listening on `addr` whose connections send each answer at once: `TCP_NODELAY` is set
/// on it, and Linux gives it to the connections it accepts. Without it, an answer that `tiny_http`
/// writes in two pieces (headers, then a body over its 1 KiB buffer) waits for the client's delayed
/// acknowledgement of the first: 40 ms a request on a kept-alive connection, as browsers use.
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // As std's `TcpListener::bind` does on Unix: a port just left by a stopped server can be taken again.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.set_tcp_nodelay(true)?;
    socket.bind(&addr.into())?;
    socket.listen(128)?;
    Ok(socket.into())
}

/// Answers one request to the server listening on `listen`. The time spent making the answer goes into a `Server-Timing` header
/// (`app;dur=0.042`, in milliseconds), which browsers show and the benchmark reads.
fn answer(explorer: &Explorer, listen: SocketAddr, request: tiny_http::Request) {
    let started = Instant::now();
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str());
    let reply = if host_allowed(listen, host) {
        route(explorer, request.method().as_str(), request.url())
    } else {
        host_refused(host.unwrap_or_default())
    };
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    let headers = [
        ("Content-Type", reply.content_type.to_string()),
        ("Server-Timing", format!("app;dur={millis:.3}")),
        ("Cache-Control", "no-store".to_string()),
        ("X-Content-Type-Options", "nosniff".to_string()),
        // The page may load only what this server serves (and the data URIs of its pieces).
        (
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'"
                .to_string(),
        ),
    ];
    let headers = headers
        .iter()
        .filter_map(|(name, value)| Header::from_bytes(name.as_bytes(), value.as_bytes()).ok())
        .collect();
    let length = reply.body.len();
    // The embedded assets are sent from where they lie in the binary, not copied.
    let body = Cursor::new(reply.body);
    // Always a Content-Length, never chunks: every answer is whole before it is sent.
    let response = Response::new(StatusCode(reply.status), headers, body, Some(length), None)
        .with_chunked_threshold(usize::MAX);
    // A client that went away is no concern of the others.
    let _ = request.respond(response);
}
