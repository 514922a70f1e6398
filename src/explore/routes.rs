//! A request to a reply. The routes are a fixed list: the embedded assets by their exact paths,
//! `/api/books`, `/api/probe`, `/api/tally`, `/api/games`, `/api/game`, `/api/practice/state`
//! and `/api/practice/answer` (the only `POST`, whose body must be `application/json`: a form
//! another site's page posts cannot be, without a CORS preflight this server never allows). Any
//! other path, however spelled (`/../Cargo.toml`, `/%2e%2e/`, `/explore.js/`), is a 404: paths are
//! compared as sent, never decoded into file names.

use std::borrow::Cow;
use std::net::SocketAddr;

use super::api::ApiError;
use super::{Explorer, api, assets};
use crate::text::quote;

/// What the server sends back for one request.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Cow<'static, [u8]>,
    /// The methods a `405` names in its `Allow` header.
    pub allow: &'static str,
}

/// One request, as [`route_request`] reads it.
pub struct Request<'a> {
    pub method: &'a str,
    /// The request target: a path and maybe `?` and a query.
    pub target: &'a str,
    /// `Content-Type`, if sent.
    pub content_type: Option<&'a str>,
    /// The body (empty without one).
    pub body: &'a [u8],
}

/// The methods of every route but the practice's answer.
const READ: &str = "GET, HEAD";

const JSON: &str = "application/json; charset=utf-8";

impl Reply {
    fn json(status: u16, body: String) -> Reply {
        Reply {
            status,
            content_type: JSON,
            body: Cow::Owned(body.into_bytes()),
            allow: READ,
        }
    }

    /// An error: `{"error":"…"}` (one line).
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::json(status, api::error_json(message))
    }
}

/// The reply to `method` on `url` (the request target: a path and maybe `?` and a query),
/// without a body: [`route_request`].
pub fn route(explorer: &Explorer, method: &str, url: &str) -> Reply {
    route_request(
        explorer,
        &Request {
            method,
            target: url,
            content_type: None,
            body: &[],
        },
    )
}

/// The reply to `request`. `HEAD` is answered as `GET` (the server leaves the body out);
/// `/api/practice/answer` takes only `POST`; other methods get a 405.
pub fn route_request(explorer: &Explorer, request: &Request) -> Reply {
    let (method, url) = (request.method, request.target);
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    if path == "/api/practice/answer" {
        return practice_answer(explorer, request, query);
    }
    if method != "GET" && method != "HEAD" {
        return Reply::error(
            405,
            &format!(
                "method {} not allowed: this server only reads",
                quote(method)
            ),
        );
    }
    match path {
        "/api/probe" => match api::probe(explorer, query) {
            Ok(body) => Reply::json(200, body),
            Err(e) => Reply::error(400, &e.to_string()),
        },
        "/api/tally" => match api::tally(explorer, query) {
            Some(Ok(body)) => Reply::json(200, body),
            Some(Err(ApiError::Tally(e))) => Reply::error(500, &e),
            Some(Err(e)) => Reply::error(400, &e.to_string()),
            None => Reply::error(
                404,
                "no tally is shown (polybook explore --tally TALLY.parquet)",
            ),
        },
        "/api/games" | "/api/game" => {
            let answer = if path == "/api/games" {
                api::games(explorer, query)
            } else {
                api::game(explorer, query)
            };
            match answer {
                Some(Ok(body)) => Reply::json(200, body),
                Some(Err(e @ ApiError::NoGame { .. })) => Reply::error(404, &e.to_string()),
                Some(Err(e)) => Reply::error(400, &e.to_string()),
                None => Reply::error(
                    404,
                    "no games are shown (polybook explore GAMES.pgn [--player NAME])",
                ),
            }
        }
        "/api/practice/state" => match api::practice_state(explorer, query) {
            Some(Ok(body)) => Reply::json(200, body),
            Some(Err(e)) => Reply::error(400, &e.to_string()),
            None => not_practising(),
        },
        "/api/books" => Reply::json(200, api::books(explorer)),
        _ => match assets::asset(path) {
            Some(asset) => Reply {
                status: 200,
                content_type: asset.content_type,
                body: Cow::Borrowed(asset.bytes),
                allow: READ,
            },
            None => Reply::error(404, &format!("no such page: {}", quote(path))),
        },
    }
}

/// The 404 of the practice's routes when `explore` does not practise.
fn not_practising() -> Reply {
    Reply::error(
        404,
        "not practising (polybook explore REP.bin --practice white|black)",
    )
}

/// `POST /api/practice/answer`: a JSON body (`Content-Type: application/json`), no query.
fn practice_answer(explorer: &Explorer, request: &Request, query: &str) -> Reply {
    if explorer.practice.is_none() {
        return not_practising();
    }
    if request.method != "POST" {
        return Reply {
            allow: "POST",
            ..Reply::error(
                405,
                &format!(
                    "method {} not allowed: /api/practice/answer takes a POST",
                    quote(request.method)
                ),
            )
        };
    }
    let json = request.content_type.is_some_and(|t| {
        t.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return Reply::error(
            415,
            "the answer's body must be sent as Content-Type: application/json",
        );
    }
    if !query.is_empty() {
        return Reply::error(
            400,
            "/api/practice/answer takes no query: its parameters are the JSON body's",
        );
    }
    match api::practice_answer(explorer, request.body) {
        None => not_practising(),
        Some(Ok(body)) => Reply::json(200, body),
        Some(Err(ApiError::Progress(e))) => Reply::error(500, &e),
        Some(Err(e)) => Reply::error(400, &e.to_string()),
    }
}

/// Whether a request naming `host` (its `Host` header) is answered by a server listening on
/// `listen`. On loopback, only the loopback names are (`127.0.0.1`, `localhost`, `[::1]`, with the
/// server's port or none): a web page elsewhere that points a name of its own at 127.0.0.1 (DNS
/// rebinding) cannot read the books through its visitor's browser. A request without the header
/// (an HTTP/1.0 client, never a browser) is answered. On any other address, every name is: the
/// server was asked to be reachable.
pub fn host_allowed(listen: SocketAddr, host: Option<&str>) -> bool {
    if !listen.ip().is_loopback() {
        return true;
    }
    let Some(host) = host else {
        return true;
    };
    // `name:port`, `[v6]:port`, or either without the port.
    let (name, port) = match host.rfind(':') {
        Some(colon) if !host[colon..].contains(']') => (&host[..colon], Some(&host[colon + 1..])),
        _ => (host, None),
    };
    let port_ok = port.is_none_or(|p| p.parse() == Ok(listen.port()));
    let name = name.to_ascii_lowercase();
    port_ok && matches!(name.as_str(), "127.0.0.1" | "localhost" | "[::1]")
}

/// The reply to a request whose `Host` is not answered (see [`host_allowed`]).
pub fn host_refused(host: &str) -> Reply {
    Reply::error(
        403,
        &format!(
            "host {} not served: this server answers only 127.0.0.1, localhost and [::1]",
            quote(host)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::Books;
    use shakmaty::Chess;

    #[test]
    fn only_the_listed_paths_are_served() {
        let e = Explorer {
            books: Books::new(),
            tally: None,
            games: None,
            practice: None,
            start: Chess::default(),
        };
        assert_eq!(route(&e, "GET", "/").status, 200);
        assert_eq!(route(&e, "HEAD", "/explore.js").status, 200);
        assert_eq!(route(&e, "GET", "/api/probe?moves=e4").status, 200);
        for path in [
            "/index.html",
            "/../Cargo.toml",
            "/%2e%2e/",
            "/assets/../../etc/passwd",
            "//etc/passwd",
            "/explore.js/",
            "",
        ] {
            assert_eq!(route(&e, "GET", path).status, 404, "{path}");
        }
        assert_eq!(route(&e, "POST", "/api/probe").status, 405);
        assert_eq!(route(&e, "GET", "/api/probe?fen=x").status, 400);
    }

    #[test]
    fn on_loopback_only_the_loopback_names_are_answered() {
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LocalHost",
            "[::1]:8080",
            "[::1]",
        ] {
            assert!(host_allowed(local, Some(host)), "{host}");
        }
        assert!(host_allowed(local, None));
        for host in [
            "evil.example:8080",
            "127.0.0.1:9090",
            "127.0.0.1.evil.example",
            "",
            "[::2]",
        ] {
            assert!(!host_allowed(local, Some(host)), "{host}");
        }
        let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(host_allowed(open, Some("my-laptop.lan:8080")));
    }
}
