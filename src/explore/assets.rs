//! The page's files, compiled into the binary (`include_bytes!`): `cargo build` needs no Node,
//! and no request path reaches the filesystem.
//!
//! `explore.js` and `explore.css` are built from `web/explore/` (the page's script with
//! chessground and chessops, the lichess board and its chess rules, bundled by esbuild; the board's
//! colours and the cburnett piece set are data URIs inside the style sheet). Rebuild them with
//! `cd web/explore && npm ci && npm run build`; the bundles are committed in `assets/explore/`.

/// One embedded file: the URL path it is served under, its media type and its bytes.
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

/// Every file the page needs, and nothing else.
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../../assets/explore/index.html"),
    },
    Asset {
        path: "/explore.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../assets/explore/explore.js"),
    },
    Asset {
        path: "/explore.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../../assets/explore/explore.css"),
    },
    Asset {
        path: "/favicon.svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("../../assets/explore/favicon.svg"),
    },
];

/// The embedded file served under `path` (exactly: no decoding, no normalisation).
pub fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}
