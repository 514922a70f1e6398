//! `polybook tally`, `tally --merge`, `book` and `probe TALLY.parquet` on real games: books from
//! tallies byte for byte what `polybook build` writes from the same games (whose own books are
//! checked against `polyglot make-book` in tests/build.rs), tallies read by DuckDB and compared
//! with counts python-chess makes from the same PGN, and bad input.

use crate::common;
use common::{data, duckdb, polybook, python, stderr, stdout};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::path_str as s;

/// Runs polybook; panics with its stderr if it fails.
fn ok(args: &[&str]) -> String {
    let o = polybook(args);
    assert!(o.status.success(), "polybook {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// Runs polybook, expecting a failure with exit code 1 and one line on stderr; that line.
fn fails(args: &[&str]) -> String {
    let o = polybook(args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "polybook {args:?}: {}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn tcec(name: &str) -> PathBuf {
    data(&format!("pgn/tcec/{name}.pgn.xz"))
}

/// A few TCEC files of standard games (and one of Chess960, which both commands skip).
fn tcec_files() -> Vec<PathBuf> {
    [
        "TCEC_Match_1",
        "TCEC_Match_5",
        "TCEC_Season_2_-_Division_A",
        "TCEC_Season_5_-_Superfinal",
        "TCEC_Season_6_-_FRC",
        "TCEC_Season_7_-_Superfinal",
    ]
    .map(tcec)
    .to_vec()
}

fn tally(inputs: &[PathBuf], out: &Path, options: &[&str]) -> Vec<u8> {
    common::quietly_written("tally", inputs, out, options)
}

fn build(inputs: &[PathBuf], out: &Path, options: &[&str]) -> Vec<u8> {
    common::quietly_written("build", inputs, out, options)
}

fn book(tallies: &[&Path], out: &Path, options: &[&str]) -> Vec<u8> {
    common::quietly_written("book", tallies, out, options)
}

/// The tally of Debian's GNU Chess game collection (145,716 games), made once for the tests that
/// use it.
fn gnuchess_tally() -> &'static Path {
    static TALLY: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &TALLY
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("gnuchess.parquet");
            tally(&[data("pgn/gnuchess-book_1.02.pgn.xz")], &path, &[]);
            (dir, path)
        })
        .1
}

/// Books made with these entry options from a tally equal build's books from the games.
const RULES: &[&[&str]] = &[
    &["--weights", "games", "--min-games", "1"],
    &["--weights", "games"],
    &["--weights", "wins", "--min-games", "2"],
    &["--weights", "games", "--only-black", "--min-score", "40"],
    &["--weights", "wins", "--only-white", "--uniform"],
];

#[test]
fn books_from_a_tally_are_builds_books() {
    let dir = tempfile::tempdir().unwrap();
    let games = tcec_files();
    // Game options at tally time are the build's game options.
    for game_options in [&[][..], &["--max-ply", "12"], &["--skip-unknown-results"]] {
        let t = dir.path().join("t.parquet");
        tally(&games, &t, game_options);
        for rules in RULES {
            let options: Vec<&str> = game_options.iter().chain(rules.iter()).copied().collect();
            let want = build(&games, &dir.path().join("want.bin"), &options);
            let got = book(&[&t], &dir.path().join("got.bin"), rules);
            assert!(!want.is_empty());
            assert!(want == got, "{game_options:?} {rules:?}: the books differ");
        }
    }
}

/// `book` counts the positions of the book it wrote, as python-chess's reader finds them (one or
/// several tallies), not the tallies' positions.
#[test]
fn book_reports_the_positions_of_its_book() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.parquet");
    tally(&tcec_files(), &t, &[]);
    let out = dir.path().join("b.bin");
    for tallies in [vec![s(&t)], vec![s(&t), s(&t)]] {
        let args = [&["book"][..], &tallies, &["-o", s(&out), "--json"]].concat();
        let report: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
        let keys = common::python(
            "import sys, struct\ndata = open(sys.argv[1], 'rb').read()\nprint(len({data[i:i + 8] for i in range(0, len(data), 16)}))",
            &[s(&out)],
        );
        assert_eq!(report["positions_written"].to_string(), keys.trim());
        assert!(report["positions"].as_u64() > report["positions_written"].as_u64());
        let text = stderr_of(&[&["book"][..], &tallies, &["-o", s(&out)]].concat());
        let files = if tallies.len() == 1 {
            "1 tally file "
        } else {
            "2 tally files "
        };
        assert!(
            text.contains(&format!("{} positions, from {files}", keys.trim())),
            "{text}"
        );
    }
}

fn stderr_of(args: &[&str]) -> String {
    let out = common::polybook(args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    common::stderr(&out)
}

#[test]
fn gnuchess_books_from_a_tally_are_builds_books() {
    let dir = tempfile::tempdir().unwrap();
    let games = [data("pgn/gnuchess-book_1.02.pgn.xz")];
    for rules in [
        &["--weights", "games", "--min-games", "1"][..],
        &["--weights", "wins"],
    ] {
        let want = build(&games, &dir.path().join("want.bin"), rules);
        let got = book(&[gnuchess_tally()], &dir.path().join("got.bin"), rules);
        assert!(want == got, "{rules:?}: the books differ");
    }
}

/// polyglot's weights: the same book as build's while no move of a position reaches 16384 games
/// (polyglot halves a position's counts when one does, in input order, which a tally cannot
/// replay). Past that, the whole position is halved until no move has 16384 games.
#[test]
fn polyglot_weights_from_a_tally() {
    let dir = tempfile::tempdir().unwrap();
    let games = tcec_files();
    let t = dir.path().join("t.parquet");
    tally(&games, &t, &[]);
    for rules in [&[][..], &["--min-games", "1", "--min-score", "50"]] {
        let want = build(&games, &dir.path().join("want.bin"), rules);
        let got = book(&[&t], &dir.path().join("got.bin"), rules);
        assert!(want == got, "{rules:?}: the books differ");
    }
    // GNU Chess: 1.e4 was played in 60,385 games. Its position's counts, read by DuckDB and
    // halved by the rule the README states, are the weights of the book's first position.
    let out = dir.path().join("gnu.bin");
    book(&[gnuchess_tally()], &out, &["--min-games", "1"]);
    let halved = duckdb(
        r#"
import sys
rows = duckdb.sql(f"SELECT move, games, 2 * wins + draws FROM '{sys.argv[1]}' "
                  "WHERE key = ('0x463b96181691fc9c'::UBIGINT::HUGEINT - 9223372036854775808)::BIGINT "
                  "ORDER BY first").fetchall()
while any(n >= 16384 for _, n, _ in rows):
    rows = [(m, (n + 1) // 2, (p + 1) // 2) for m, n, p in rows]
rows = sorted((r for r in rows if r[2] > 0), key=lambda r: -r[2])
print(" ".join(f"{m}:{p}" for m, _, p in rows))
"#,
        &[s(gnuchess_tally())],
    );
    let book = std::fs::read(&out).unwrap();
    let start: Vec<String> = book
        .chunks(16)
        .filter(|e| e[..8] == 0x463b96181691fc9cu64.to_be_bytes())
        .map(|e| {
            let mv = u16::from_be_bytes([e[8], e[9]]);
            let weight = u16::from_be_bytes([e[10], e[11]]);
            format!("{mv}:{weight}")
        })
        .collect();
    assert!(start.len() > 4);
    assert_eq!(start.join(" "), halved.trim());
}

/// The same games give the same file, whatever the threads and memory (spilled runs or not).
#[test]
fn the_tally_does_not_depend_on_threads_or_memory() {
    let dir = tempfile::tempdir().unwrap();
    let games = [data("pgn/lichess_magnus_2018-2022.pgn.xz")];
    let t = |name: &str, options: &[&str]| tally(&games, &dir.path().join(name), options);
    let plain = t("a.parquet", &[]);
    assert!(plain == t("b.parquet", &["--threads", "1"]));
    assert!(plain == t("c.parquet", &["--threads", "3", "--memory", "2M"]));
    assert!(plain == t("d.parquet", &["--threads", "1", "--memory", "1M"]));
}

/// Two tallies of two halves of the games, merged, are the tally of all; and a book from both
/// halves is the book of all.
#[test]
fn tallies_of_halves_add_up_to_the_tally_of_all() {
    let dir = tempfile::tempdir().unwrap();
    let games = tcec_files();
    let (first, second) = games.split_at(3);
    let (a, b, all, merged) = (
        dir.path().join("a.parquet"),
        dir.path().join("b.parquet"),
        dir.path().join("all.parquet"),
        dir.path().join("merged.parquet"),
    );
    tally(first, &a, &[]);
    tally(second, &b, &[]);
    let whole = tally(&games, &all, &[]);
    ok(&["tally", "-q", "--merge", s(&a), s(&b), "-o", s(&merged)]);
    assert!(std::fs::read(&merged).unwrap() == whole);
    for rules in RULES {
        let want = build(&games, &dir.path().join("want.bin"), rules);
        let got = book(&[&a, &b], &dir.path().join("got.bin"), rules);
        assert!(want == got, "{rules:?}: the books differ");
    }
}

/// python-chess's count of every (position, move) of a PGN file, as rows
/// `key move black games wins draws losses first` (the move in Polyglot's encoding); it runs after
/// [`common::PYTHON_STANDARD_GAMES`].
const PYTHON_COUNT: &str = r#"
import sys, collections
import chess.polyglot
counts = collections.OrderedDict()
order = collections.defaultdict(list)
for game, white in standard_games(sys.argv[1:], encoding="utf-8", errors="replace"):
    board = game.board()
    for move in game.mainline_moves():
        key = chess.polyglot.zobrist_hash(board)
        to = move.to_square
        if board.is_castling(move):
            to = chess.square(7 if chess.square_file(to) == 6 else 0, chess.square_rank(to))
        promo = {None: 0, chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4}[move.promotion]
        raw = to | (move.from_square << 6) | (promo << 12)
        black = board.turn == chess.BLACK
        points = 2 - white if black else white
        c = counts.setdefault((key, raw, black), [0, 0, 0, 0])
        if c[0] == 0:
            order[key].append(raw)
        c[0] += 1
        c[1 + {2: 0, 1: 1, 0: 2}[points]] += 1
        board.push(move)
for (key, raw, black), (n, w, d, l) in sorted(counts.items()):
    print(key, raw, int(black), n, w, d, l, order[key].index(raw))
"#;

/// The same rows read from a tally by DuckDB, the key made unsigned again.
const DUCKDB_ROWS: &str = r#"
import sys
for row in duckdb.sql(f"SELECT (key::HUGEINT + 9223372036854775808)::UBIGINT, move, black::INT, "
                      f"games, wins, draws, losses, first FROM '{sys.argv[1]}' ORDER BY 1, 2").fetchall():
    print(*row)
"#;

#[test]
fn duckdb_reads_the_counts_python_chess_makes() {
    let dir = tempfile::tempdir().unwrap();
    let games = [tcec("TCEC_Match_1"), tcec("TCEC_Season_5_-_Superfinal")];
    let t = dir.path().join("t.parquet");
    tally(&games, &t, &[]);
    let paths: Vec<&str> = games.iter().map(|p| s(p)).collect();
    let want = python(
        &format!("{}{PYTHON_COUNT}", common::PYTHON_STANDARD_GAMES),
        &paths,
    );
    let got = duckdb(DUCKDB_ROWS, &[s(&t)]);
    assert!(want.lines().count() > 5000, "{}", want.lines().count());
    assert_eq!(got, want);
}

/// The columns are found by their names: a tally whose columns DuckDB wrote in another order,
/// with a column of its own among them, makes the same book and shows the same statistics.
#[test]
fn columns_are_found_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.parquet");
    tally(&[tcec("TCEC_Match_1")], &t, &[]);
    let shuffled = dir.path().join("shuffled.parquet");
    duckdb(
        r#"
import sys
kv = "KV_METADATA {'polybook.tally': '1', 'polybook.options': '--max-ply 1024'}"
duckdb.sql(f"COPY (SELECT first, losses, 'x' AS note, draws, wins, games, black, move, key "
           f"FROM '{sys.argv[2]}' ORDER BY key, first) TO '{sys.argv[1]}' (FORMAT parquet, {kv})")
"#,
        &[s(&shuffled), s(&t)],
    );
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    let rules = ["--weights", "games", "--min-games", "1"];
    let want = book(&[&t], &a, &rules);
    assert!(want.len() > 16 * 1000, "{}", want.len());
    assert!(book(&[&shuffled], &b, &rules) == want);
    for moves in ["", "e2e4", "d2d4 g8f6"] {
        let probe = |t: &Path| ok(&["probe", s(t), "--moves", moves, "--json"]);
        assert_eq!(probe(&shuffled), probe(&t), "{moves}");
    }
}

/// Damaged tallies, as found by the fuzz target `tally_reader` (tests/fuzz/tally_reader.rs): every command
/// that reads tallies fails at once with one line naming the file, where the parquet crate
/// panicked (exit 101) on the first and read the second for half a minute.
#[test]
fn damaged_tallies_fail_at_once_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let whole = tally(
        &[tcec("TCEC_Match_1")],
        &d("t.parquet"),
        &["--max-ply", "12"],
    );
    let n = whole.len();
    // The first page (the `key` column's) follows the magic; its header ends with two stop
    // bytes, then come its values, delta-encoded, headed by varints (the block's size first).
    let values = 4 + whole[4..].windows(2).position(|w| w == [0, 0]).unwrap() + 2;
    assert_eq!(whole[values..values + 3], [0x80, 0x02, 0x04]);
    let mut overlong = whole.clone();
    overlong[values..values + 12].fill(0xff);
    // The footer (Thrift) with four fields of its own before its stop byte, each a map of
    // 2^31 - 1 booleans in a few bytes, which the crate skipped element by element.
    let footer_len = u32::from_le_bytes(whole[n - 8..n - 4].try_into().unwrap()) as usize;
    let footer_start = n - 8 - footer_len;
    let mut maps = whole[..n - 9].to_vec();
    for id in 100..104u32 {
        let zigzag = 2 * id;
        maps.extend([0x0b, zigzag as u8 | 0x80, (zigzag >> 7) as u8]);
        maps.extend([0xff, 0xff, 0xff, 0xff, 0x07, 0x11]);
    }
    maps.push(0);
    maps.extend(((maps.len() - footer_start) as u32).to_le_bytes());
    maps.extend(b"PAR1");
    // A piece cut out of the middle: the footer places column chunks past the data.
    let cut = [&whole[..1000], &whole[2000..]].concat();
    for (name, bytes, what) in [
        (
            "overlong.parquet",
            &overlong,
            "row group 0: column \"key\": damaged data",
        ),
        (
            "maps.parquet",
            &maps,
            "its footer ends early, or claims more than it holds",
        ),
        ("cut.parquet", &cut, "lies outside the file's data"),
    ] {
        let path = d(name);
        std::fs::write(&path, bytes).unwrap();
        for args in [
            &["book", "-q", "-o", s(&d("out.bin"))][..],
            &["tally", "--merge", "-q", "-o", s(&d("out.parquet"))],
            &["probe", "--no-board"],
            &["probe", "--json", "--moves", "e2e4"],
        ] {
            let mut args = args.to_vec();
            args.push(s(&path));
            let start = std::time::Instant::now();
            let e = fails(&args);
            assert!(e.contains(name) && e.contains(what), "{args:?}: {e}");
            let took = start.elapsed();
            assert!(took.as_secs() < 5, "{args:?} took {took:?}");
        }
    }
    assert!(!d("out.bin").exists() && !d("out.parquet").exists());
}

/// `probe TALLY.parquet --json`: each move's games and results, as python-chess counts them.
#[test]
fn probe_shows_a_positions_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let games = [tcec("TCEC_Season_7_-_Superfinal")];
    let t = dir.path().join("t.parquet");
    tally(&games, &t, &[]);
    for moves in ["", "d4", "d4 Nf6 c4"] {
        let want = python(&common::python_position_stats(), &[moves, s(&games[0])]);
        let json = ok(&["probe", s(&t), "--moves", moves, "--json"]);
        assert_eq!(json.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut got = String::new();
        let mut rows: Vec<&serde_json::Value> = v["moves"].as_array().unwrap().iter().collect();
        // python sorts ties by first appearance too, as polybook does.
        rows.sort_by_key(|m| std::cmp::Reverse(m["games"].as_u64().unwrap()));
        for m in rows {
            got += &format!(
                "{} {} {} {} {} {}\n",
                m["uci"].as_str().unwrap(),
                m["san"].as_str().unwrap(),
                m["games"],
                m["wins"],
                m["draws"],
                m["losses"]
            );
        }
        assert!(!want.is_empty(), "{moves}");
        assert_eq!(got, want, "{moves}");
        assert_eq!(
            v["games"].as_u64().unwrap(),
            v["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["games"].as_u64().unwrap())
                .sum::<u64>()
        );
    }
    // The table for people, and beside a book's weights.
    let text = ok(&["probe", s(&t), "--no-board"]);
    assert!(text.contains("d4 ") && text.contains('%'), "{text}");
    let b = dir.path().join("b.bin");
    build(&games, &b, &["--weights", "games", "--min-games", "5"]);
    let both = ok(&["probe", s(&b), "--tally", s(&t), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&both).unwrap();
    for m in v["moves"].as_array().unwrap() {
        // The book keeps the moves of at least 5 games, weighted by games.
        let games = m["games"].as_u64().unwrap();
        if games >= 5 {
            assert_eq!(m["weight"].as_u64(), Some(games), "{m}");
        } else {
            assert!(m["weight"].is_null(), "{m}");
        }
    }
}

/// The README's DuckDB query over a tally runs as printed there, and agrees with `probe`.
#[test]
fn the_readmes_duckdb_query_runs() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let start = readme
        .find("```sql\n")
        .expect("the README shows a DuckDB query");
    let query = &readme[start + 7..];
    let query = &query[..query.find("```").unwrap()];
    assert!(query.contains("'gnuchess.parquet'"));
    let dir = gnuchess_tally().parent().unwrap();
    let script = format!(
        "{}import sys\nfor r in duckdb.sql(sys.argv[1]).fetchall(): print(*r)\n# {}",
        common::DUCKDB,
        dir.display()
    );
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(&script)
        .arg(query)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = stdout(&out);
    // After 1.e4 in the GNU Chess games, the replies of at least 100 games, by score.
    let json = ok(&["probe", s(gnuchess_tally()), "--moves", "e4", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut want: Vec<(String, u64, f64)> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["games"].as_u64().unwrap() >= 100)
        .map(|m| {
            (
                m["uci"].as_str().unwrap().to_string(),
                m["games"].as_u64().unwrap(),
                m["score"].as_f64().unwrap(),
            )
        })
        .collect();
    want.sort_by(|a, b| b.2.total_cmp(&a.2));
    let got: Vec<(String, u64)> = rows
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[1].parse().unwrap())
        })
        .collect();
    assert!(got.len() >= 5, "{rows}");
    assert_eq!(
        got,
        want.iter()
            .map(|(m, g, _)| (m.clone(), *g))
            .collect::<Vec<_>>()
    );
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    // A DuckDB script on the files `names` of the folder.
    let duckdb_on = |script: &str, names: &[&str]| {
        let paths: Vec<PathBuf> = names.iter().map(|n| d(n)).collect();
        duckdb(script, &paths.iter().map(|p| s(p)).collect::<Vec<_>>())
    };
    let games = [tcec("TCEC_Match_1")];
    tally(&games, &d("a.parquet"), &[]);
    tally(&[tcec("TCEC_Match_5")], &d("b.parquet"), &[]);
    tally(&games, &d("short.parquet"), &["--max-ply", "10"]);
    let out = d("out.bin");

    // Games that are no games: the tally says what it did not write.
    std::fs::write(d("licence.pgn"), "GNU GENERAL PUBLIC LICENSE\nVersion 3\n").unwrap();
    let e = fails(&["tally", s(&d("licence.pgn")), "-o", s(&d("t.parquet"))]);
    assert!(
        e.contains("no usable game") && e.contains("no tally written"),
        "{e}"
    );
    assert!(!d("t.parquet").exists());
    std::fs::remove_file(d("licence.pgn")).unwrap();

    // Parquet files made by DuckDB: not tallies (other columns, and a key as text); the right
    // columns from another writer, without polybook's mark; and with the mark (DuckDB writes it
    // as asked, snappy-compressed as it does by default), rows out of key order, and counts that
    // do not add up.
    duckdb_on(
        r#"
import sys
duckdb.sql(f"COPY (SELECT 1 AS a, 'x' AS b) TO '{sys.argv[1]}' (FORMAT parquet)")
duckdb.sql(f"COPY (SELECT key::VARCHAR AS key, move, black, games, wins, draws, losses, first "
           f"FROM '{sys.argv[6]}') TO '{sys.argv[2]}' (FORMAT parquet)")
duckdb.sql(f"COPY (SELECT * FROM '{sys.argv[6]}') TO '{sys.argv[3]}' (FORMAT parquet)")
kv = "KV_METADATA {'polybook.tally': '1', 'polybook.options': '--max-ply 1024'}"
duckdb.sql(f"COPY (SELECT * FROM '{sys.argv[6]}' ORDER BY key DESC) TO '{sys.argv[4]}' (FORMAT parquet, {kv})")
duckdb.sql(f"COPY (SELECT key, move, black, games + 1 AS games, wins, draws, losses, first "
           f"FROM '{sys.argv[6]}' ORDER BY key) TO '{sys.argv[5]}' (FORMAT parquet, {kv})")
"#,
        &[
            "other.parquet",
            "text_key.parquet",
            "copied.parquet",
            "unsorted.parquet",
            "bad_counts.parquet",
            "a.parquet",
        ],
    );
    let refused: [(&str, &[&str]); 4] = [
        ("other.parquet", &["not a polybook tally", "\"key\""]),
        ("text_key.parquet", &["not a polybook tally", "INT64"]),
        ("copied.parquet", &["polybook.tally"]),
        (
            "unsorted.parquet",
            &["row 2: the keys are not in ascending order"],
        ),
    ];
    for (name, reasons) in refused {
        let e = fails(&["book", s(&d(name)), "-o", s(&out)]);
        assert!(reasons.iter().all(|r| e.contains(r)), "{e}");
    }
    let e = fails(&[
        "tally",
        "--merge",
        s(&d("bad_counts.parquet")),
        "-o",
        s(&out),
    ]);
    assert!(e.contains("row 1: ") && e.contains("games but"), "{e}");

    // A truncated tally, a PGN file, a missing file.
    let whole = std::fs::read(d("a.parquet")).unwrap();
    std::fs::write(d("cut.parquet"), &whole[..whole.len() / 2]).unwrap();
    let e = fails(&["book", s(&d("cut.parquet")), "-o", s(&out)]);
    assert!(e.contains("cut.parquet") && e.contains("truncated"), "{e}");
    let e = fails(&["book", s(&games[0]), "-o", s(&out)]);
    assert!(e.contains("not a polybook tally"), "{e}");
    let e = fails(&["book", s(&d("missing.parquet")), "-o", s(&out)]);
    assert!(
        e.contains("missing.parquet") && e.contains("cannot read"),
        "{e}"
    );
    let e = fails(&["probe", s(&d("cut.parquet"))]);
    assert!(e.contains("truncated"), "{e}");

    // Tallies made with different options are not summed.
    let (a, short) = (d("a.parquet"), d("short.parquet"));
    for cmd in [&["book"][..], &["tally", "--merge"]] {
        let mut args = cmd.to_vec();
        args.extend([s(&a), s(&short), "-o", s(&out)]);
        let e = fails(&args);
        assert!(
            e.contains("--max-ply 10") && e.contains("--max-ply 1024"),
            "{e}"
        );
    }
    assert!(!out.exists());

    // An output that is one of the inputs is refused, and left as it was.
    let e = fails(&["book", s(&d("a.parquet")), "-o", s(&d("a.parquet"))]);
    assert!(e.contains("one of the inputs"), "{e}");
    let e = fails(&[
        "tally",
        "--merge",
        s(&d("a.parquet")),
        s(&d("b.parquet")),
        "-o",
        s(&d("b.parquet")),
    ]);
    assert!(e.contains("one of the inputs"), "{e}");
    let e = fails(&["tally", s(&d("a.parquet")), "-o", s(&d("a.parquet"))]);
    assert!(e.contains("one of the inputs"), "{e}");
    assert!(std::fs::read(d("a.parquet")).unwrap() == whole);
    // Nothing half-written was left in the folder.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a.parquet",
            "b.parquet",
            "bad_counts.parquet",
            "copied.parquet",
            "cut.parquet",
            "other.parquet",
            "short.parquet",
            "text_key.parquet",
            "unsorted.parquet"
        ]
    );
}
