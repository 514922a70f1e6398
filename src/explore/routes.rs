//! A request to a reply. The routes are a fixed list: the embedded assets by their exact paths,
//! `/api/books` and `/api/probe`. Any other path, however spelled (`/../Cargo.toml`, `/%2e%2e/`,
//! `/explore.js/`), is a 404: paths are compared as sent, never decoded into file names.

use std::borrow::Cow;

use super::{Explorer, api, assets};
use crate::text::quote;

/// What the server sends back for one request.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Cow<'static, [u8]>,
}

const JSON: &str = "application/json; charset=utf-8";

impl Reply {
    fn json(status: u16, body: String) -> Reply {
        Reply {
            status,
            content_type: JSON,
            body: Cow::Owned(body.into_bytes()),
        }
    }

    fn error(status: u16, message: &str) -> Reply {
        Reply::json(status, api::error_json(message))
    }
}

/// The reply to `method` on `url` (the request target: a path and maybe `?` and a query).
/// `HEAD` is answered as `GET` (the server leaves the body out); other methods get a 405.
pub fn route(explorer: &Explorer, method: &str, url: &str) -> Reply {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
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
        "/api/books" => Reply::json(200, api::books(explorer)),
        _ => match assets::asset(path) {
            Some(asset) => Reply {
                status: 200,
                content_type: asset.content_type,
                body: Cow::Borrowed(asset.bytes),
            },
            None => Reply::error(404, &format!("no such page: {}", quote(path))),
        },
    }
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
}
