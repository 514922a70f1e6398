//! The page's files, compiled into the binary (`include_bytes!`): `cargo build` needs no Node,
//! and no request path reaches the filesystem.
//!
//! `index.html` and `favicon.svg` are written here, in `assets/explore/`; `explore.js` and
//! `explore.css` are built from `web/explore/` (the page's script with
//! chessground and chessops, the lichess board and its chess rules, bundled by esbuild; the board's
//! colours and the cburnett piece set are data URIs inside the style sheet). Rebuild them with
//! `cd web/explore && npm ci && npm run build`; the bundles are committed in `assets/explore/`.

/// One embedded file: the URL path it is served under, its media type and its bytes.
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

/// The [`Asset`] of the file NAME of `assets/explore/`, served under PATH as TYPE.
macro_rules! embed {
    ($path:literal, $name:literal, $type:literal) => {
        Asset {
            path: $path,
            content_type: $type,
            bytes: include_bytes!(concat!("../../assets/explore/", $name)),
        }
    };
}

/// Every file the page needs, and nothing else.
pub const ASSETS: &[Asset] = &[
    embed!("/", "index.html", "text/html; charset=utf-8"),
    embed!(
        "/explore.js",
        "explore.js",
        "text/javascript; charset=utf-8"
    ),
    embed!("/explore.css", "explore.css", "text/css; charset=utf-8"),
    embed!("/favicon.svg", "favicon.svg", "image/svg+xml"),
];

/// The embedded file served under `path` (exactly: no decoding, no normalisation).
pub fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}
