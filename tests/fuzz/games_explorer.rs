//! `games_explorer`: the games explorer of `explore GAMES…` (`/api/games` and `/api/game`) under
//! every filter parameter, with bad, huge, repeated and empty values and odd game ids.

use std::time::Duration;

use polybook::explore::Explorer;
use rand::Rng;
use rand::rngs::StdRng;
use shakmaty::Chess;

use crate::explore_http::{HttpConn, fuzz_limits, probe_promptly};
use crate::{assert_one_line, common, fuzz};

/// An explorer of `games` (and no book), with `player`'s games only when one is named.
fn explorer_of(games: &str, player: Option<&str>) -> Explorer {
    let opts = polybook::repertoire::IndexOptions {
        player: polybook::repertoire::Player::new(
            &player.map(str::to_string).into_iter().collect::<Vec<_>>(),
            None,
        )
        .unwrap(),
        max_ply: 60,
        threads: 2,
        memory: 1 << 30,
    };
    let index = polybook::repertoire::Index::read(
        &[polybook::pgn::input::Input::File(common::data(games))],
        &opts,
        &std::sync::atomic::AtomicBool::new(false),
        &(),
    )
    .unwrap();
    Explorer {
        books: polybook::book::Books::new(),
        tally: None,
        games: Some(("games.pgn".into(), index)),
        practice: None,
        start: Chess::default(),
    }
}

/// Each parameter of `/api/games` and `/api/game`, with values that are good and some that are
/// not.
const PARAMS: &[(&str, &[&str])] = &[
    (
        "fen",
        &[
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "8/8/8/8/8/8/8/k6K w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -",
            "x",
            "8/8/8/8/8/8/8/8 w - - 0 1",
        ],
    ),
    (
        "moves",
        &[
            "e4",
            "e4 c5",
            "1.e4 e5 2.Nf3",
            "d4 Nf6 c4 e6",
            "e2e4 e7e5",
            "e4 e4",
            "Nf3 d5 g3",
            "O-O",
            "1.",
            "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6",
        ],
    ),
    (
        "color",
        &["white", "black", "both", "White", "red", " both "],
    ),
    (
        "speed",
        &[
            "bullet",
            "blitz,rapid",
            "classical,unknown",
            "ultrabullet,correspondence",
            "bullet,,blitz",
            "fast",
            "bullet, blitz",
        ],
    ),
    ("mode", &["rated", "casual", "all", "Rated", "none"]),
    (
        "rating",
        &[
            "2000-",
            "-2500",
            "1500-3000",
            "3000-1500",
            "-",
            "abc",
            "2000",
            "+2000-",
            "99999999999999999999-",
            "0-0",
        ],
    ),
    (
        "since",
        &[
            "2018-01", "2018-02", "2018-13", "2018-00", "18-01", "2018", "9999-12", "0000-01",
        ],
    ),
    (
        "until",
        &[
            "2018-03",
            "2025-12",
            "2017-12",
            "2018-1",
            "2018-02-01",
            "-",
            "2018-02",
        ],
    ),
    (
        "result",
        &[
            "win",
            "draw",
            "loss",
            "win,draw",
            "win,loss,draw",
            "lose",
            "win,",
        ],
    ),
    ("opponent", &["penguin", "kom", "STOCK", "%", "\u{e9}", "x"]),
    (
        "id",
        &[
            "0",
            "1",
            "42",
            "988",
            "989",
            "99",
            "100",
            "-1",
            "01",
            " 1",
            "1e3",
            "0x1",
            "4294967296",
            "18446744073709551616",
            "\u{661}",
            "+1",
        ],
    ),
];

/// Parameter names that are none of these.
const ODD_NAMES: &[&str] = &[
    "", "x", "Color", "depth", "fen ", "moves[]", "%00", "id\u{0}",
];

/// A query value or name percent-encoded (every byte that is not plainly safe).
fn encode(text: &[u8]) -> String {
    let mut out = String::new();
    for &b in text {
        if b.is_ascii_alphanumeric() || b"-._~,".contains(&b) {
            out.push(b as char);
        } else if b == b' ' {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A request target for `/api/games` or `/api/game`: some parameters with good, bad, empty, huge
/// or random values, now and then one twice, an odd name, or odd separators.
fn games_url(rng: &mut StdRng) -> String {
    let path = match rng.random_range(0..10) {
        0..=5 => "/api/games",
        6..=8 => "/api/game",
        _ => ["/api/games/", "/api/Games", "/api/game?", "/api/gamez"][rng.random_range(0..4)],
    };
    let mut params: Vec<String> = Vec::new();
    for _ in 0..rng.random_range(0..7) {
        let (name, values) = PARAMS[rng.random_range(0..PARAMS.len())];
        let name = if rng.random_ratio(1, 12) {
            ODD_NAMES[rng.random_range(0..ODD_NAMES.len())]
        } else {
            name
        };
        let value: Vec<u8> = match rng.random_range(0..12) {
            0 => Vec::new(),
            1 => {
                let v = values[rng.random_range(0..values.len())];
                v.repeat(rng.random_range(100..3000)).into_bytes()
            }
            2 => (0..rng.random_range(1..40)).map(|_| rng.random()).collect(),
            _ => values[rng.random_range(0..values.len())]
                .as_bytes()
                .to_vec(),
        };
        let param = match rng.random_range(0..20) {
            0 => encode(name.as_bytes()),
            1 => format!("{}=", encode(name.as_bytes())),
            _ => format!("{}={}", encode(name.as_bytes()), encode(&value)),
        };
        if rng.random_ratio(1, 8) {
            params.push(param.clone());
        }
        params.push(param);
    }
    let sep = ["&", "&", "&", "&&", ";", "&amp;"][rng.random_range(0..6)];
    let query = params.join(sep);
    if query.is_empty() && rng.random_bool(0.5) {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

/// Checks the in-process answer to `url`: a 200 with well-formed JSON whose counts add up, a 400
/// with a one-line reason, or a 404 (no such page, or no such game).
fn check_answer(explorer: &Explorer, url: &str) {
    let reply = polybook::explore::route(explorer, "GET", url);
    let json: serde_json::Value = serde_json::from_slice(&reply.body)
        .unwrap_or_else(|e| panic!("{url}: an answer that is not JSON ({e})"));
    let path = url.split('?').next().unwrap_or("");
    match reply.status {
        200 => {
            assert!(
                path == "/api/games" || path == "/api/game",
                "{url}: 200 for {path}"
            );
            if path == "/api/games" {
                check_games(&json, url);
                // The same position without its filters has at least as many games, move by move.
                let unfiltered = unfiltered(url);
                let all = polybook::explore::route(explorer, "GET", &unfiltered);
                assert_eq!(all.status, 200, "{unfiltered}: not answered when {url} is");
                let all: serde_json::Value = serde_json::from_slice(&all.body).unwrap();
                assert!(
                    json["games"].as_u64() <= all["games"].as_u64(),
                    "{url}: more games than without its filters"
                );
                for m in json["moves"].as_array().unwrap() {
                    let same = all["moves"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|a| a["uci"] == m["uci"]);
                    assert!(
                        same.is_some_and(|a| m["games"].as_u64() <= a["games"].as_u64()),
                        "{url}: move {} has more games than without its filters",
                        m["uci"]
                    );
                }
            } else {
                let moves = json["moves"].as_array().expect("a game's moves");
                assert!(json["id"].is_u64(), "{url}: no id: {json}");
                assert!(
                    json["ply"].is_null()
                        || json["ply"]
                            .as_u64()
                            .is_some_and(|p| p as usize <= moves.len()),
                    "{url}: ply {} of a game of {} moves",
                    json["ply"],
                    moves.len()
                );
            }
        }
        400 | 404 => {
            let error = json["error"]
                .as_str()
                .unwrap_or_else(|| panic!("{url}: {} without an error: {json}", reply.status));
            assert_one_line(error);
            assert!(!error.is_empty(), "{url}: an empty error");
            match (reply.status, path) {
                (400, "/api/games" | "/api/game") => {}
                (404, "/api/game") => assert!(error.contains("not a game"), "{url}: 404 {error}"),
                (404, _) => assert!(error.contains("no such page"), "{url}: 404 {error}"),
                (status, _) => panic!("{url}: {status} {error}"),
            }
        }
        status => panic!("{url}: status {status}: {json}"),
    }
}

/// An `/api/games` answer's counts: each move's results add up to its games, the moves' games to
/// at most the position's, and each move shows at most 3 top and 3 recent games.
fn check_games(json: &serde_json::Value, url: &str) {
    let games = json["games"].as_u64().expect("games");
    let add = |v: &serde_json::Value| {
        ["white", "draws", "black"]
            .iter()
            .map(|k| v[k].as_u64().expect("a count"))
            .sum::<u64>()
    };
    assert_eq!(add(json), games, "{url}: results that do not add up");
    let mut sum = 0;
    for m in json["moves"].as_array().expect("moves") {
        let n = m["games"].as_u64().expect("a move's games");
        assert!(n > 0, "{url}: a move of no games");
        assert_eq!(add(m), n, "{url}: a move's results do not add up: {m}");
        assert!(
            m["top"]
                .as_array()
                .is_some_and(|t| t.len() <= 3.min(n as usize))
        );
        assert!(
            m["recent"]
                .as_array()
                .is_some_and(|t| t.len() <= 3.min(n as usize))
        );
        sum += n;
    }
    assert!(sum <= games, "{url}: the moves have {sum} games of {games}");
}

/// `url` with only its `fen` and `moves` (the position it asks about).
fn unfiltered(url: &str) -> String {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if name == "fen" || name == "moves" {
            out.append_pair(&name, &value);
        }
    }
    format!("{path}?{}", out.finish())
}

/// `/api/games` and `/api/game` under every filter parameter (good, bad, empty, huge, random and
/// repeated values, odd names and separators) and odd game ids, on an explorer of one player's
/// lichess games and one of all the games of a TCEC superfinal: every answer is JSON; a 200's
/// counts add up (and a filter never adds games), a bad parameter is a 400 with a one-line
/// reason, an unknown game a 404. Over a real server the same requests, on one connection, are
/// answered as well-formed HTTP, and a good `/api/games` after each case is answered at once.
#[test]
fn games_explorer() {
    let magnus = explorer_of("pgn/lichess_magnus_analysed.pgn.xz", Some("DrDrunkenstein"));
    let tcec = explorer_of("pgn/tcec/TCEC_Season_7_-_Superfinal.pgn.xz", None);
    let server = polybook::explore::Server::start_with(
        explorer_of("pgn/lichess_magnus_analysed.pgn.xz", Some("DrDrunkenstein")),
        "127.0.0.1:0".parse().unwrap(),
        fuzz_limits(),
    )
    .unwrap();
    let addr = server.addr();
    let good = "/api/games?moves=e4&speed=bullet";
    let expected = polybook::explore::route(&magnus, "GET", good).body;
    fuzz(
        "games_explorer",
        200,
        Duration::from_secs(60),
        |rng| {
            let urls: Vec<String> = (0..rng.random_range(1..6))
                .map(|_| games_url(rng))
                .collect();
            urls.join("\n").into_bytes()
        },
        |input| {
            let text = String::from_utf8_lossy(input);
            let mut conn = HttpConn::open(addr);
            for url in text.lines() {
                check_answer(&magnus, url);
                check_answer(&tcec, url);
                conn.send(format!("GET {url} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes());
            }
            conn.finish();
            probe_promptly(addr, good, &expected);
        },
    );
    server.stop();
}
