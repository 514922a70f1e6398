//! `polybook tally --ratings`: the rated games, rating sums and latest date of every (position,
//! move), compared with python-chess's own reading of the same real games (lichess games, where
//! both players are rated, and a sample of Debian's GNU Chess collection, where most games have
//! no rating and dates like `1951.??.??`); the same file whatever the threads and memory; merged
//! tallies; books that ignore the columns; tallies with and without them refused together.

use crate::common;
use common::{data, duckdb, polybook, polybook_fails, polybook_ok, python};

use std::path::{Path, PathBuf};

use common::path_str as s;

fn tally(inputs: &[PathBuf], out: &Path, options: &[&str]) -> Vec<u8> {
    common::quietly_written("tally", inputs, out, options)
}

/// python-chess's reading of the games of the files `argv[3:]`, up to `argv[1]` plies, at the
/// positions `argv[2]` (move lists in SAN, `|` between them; an empty one is the start): for each
/// position and move, `INDEX UCI GAMES RATED AVG AVG_OPP DATE`. As polybook: a game is rated when
/// both WhiteElo and BlackElo are whole numbers above 0; its date is the Date tag's year (1 to
/// 9999; else no date), month (1 to 12) and day (1 to 31), an unknown part as 00; averages are
/// rounded to the nearest, halves up; games of other variants are left out.
const PYTHON_RATINGS: &str = r#"
import sys, lzma, io, re
import chess, chess.pgn, chess.polyglot
max_ply = int(sys.argv[1])
targets = {}
for i, moves in enumerate(sys.argv[2].split("|")):
    board = chess.Board()
    for san in moves.split():
        board.push_san(san)
    targets[chess.polyglot.zobrist_hash(board)] = i

def number(text, low, high):
    text = text.strip()
    if re.fullmatch(r"[0-9]+", text) and low <= int(text) <= high:
        return int(text)
    return 0

def date(tag):
    parts = re.split(r"[.\-/]", tag.strip())
    year = number(parts[0], 1, 9999)
    if year == 0:
        return 0
    month = number(parts[1], 1, 12) if len(parts) > 1 else 0
    day = number(parts[2], 1, 31) if len(parts) > 2 else 0
    return year * 10000 + month * 100 + day

stats = {}
for path in sys.argv[3:]:
    opener = lzma.open if path.endswith(".xz") else open
    text = io.StringIO(opener(path, "rt", encoding="utf-8", errors="replace").read())
    while (game := chess.pgn.read_game(text)) is not None:
        h = game.headers
        if h.get("Variant", "Standard").lower() not in ("standard", "normal", "chess"):
            continue
        white = number(h.get("WhiteElo", ""), 1, 2**32 - 1)
        black = number(h.get("BlackElo", ""), 1, 2**32 - 1)
        rated = white > 0 and black > 0
        day = date(h.get("Date", ""))
        board = game.board()
        for ply, move in enumerate(game.mainline_moves()):
            if ply >= max_ply:
                break
            index = targets.get(chess.polyglot.zobrist_hash(board))
            if index is not None:
                c = stats.setdefault((index, move.uci()), [0, 0, 0, 0, 0])
                c[0] += 1
                if rated:
                    mover, opponent = (black, white) if board.turn == chess.BLACK else (white, black)
                    c[1] += 1
                    c[2] += mover
                    c[3] += opponent
                c[4] = max(c[4], day)
            board.push(move)

def average(total, n):
    return (2 * total + n) // (2 * n) if n else "null"

def pgn_date(d):
    if d == 0:
        return "null"
    part = lambda n: "??" if n == 0 else "%02d" % n
    return "%04d.%s.%s" % (d // 10000, part(d // 100 % 100), part(d % 100))

for (index, uci), (n, rated, mover, opponent, day) in sorted(stats.items()):
    print(index, uci, n, rated, average(mover, rated), average(opponent, rated), pgn_date(day))
"#;

/// The same lines from `probe TALLY --json` at each of `positions`.
fn probed(t: &Path, positions: &[&str]) -> String {
    let mut rows = Vec::new();
    for (i, moves) in positions.iter().enumerate() {
        let json = polybook_ok(&["probe", s(t), "--moves", moves, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        for m in v["moves"].as_array().unwrap() {
            let text = |f: &str| match &m[f] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            rows.push((
                i,
                text("uci"),
                format!(
                    "{} {} {} {} {}",
                    m["games"],
                    m["rated_games"],
                    text("avg_rating"),
                    text("avg_opponent_rating"),
                    text("last_date")
                ),
            ));
        }
    }
    rows.sort();
    rows.iter()
        .map(|(i, uci, rest)| format!("{i} {uci} {rest}\n"))
        .collect()
}

const POSITIONS: &[&str] = &["", "e4", "d4", "e4 c5", "d4 Nf6 c4"];

/// Every 25th game of the GNU Chess collection (a plain PGN file): old games, a few with
/// ratings, most dated only by their year.
fn gnuchess_sample(dir: &Path) -> PathBuf {
    let out = dir.join("gnuchess-sample.pgn");
    let script = r#"
import sys, lzma
games, game = [], []
for line in lzma.open(sys.argv[1], "rt", encoding="utf-8", errors="replace"):
    if line.startswith("[Event ") and game:
        games.append("".join(game))
        game = []
    game.append(line)
games.append("".join(game))
open(sys.argv[2], "w").write("".join(games[::25]))
"#;
    python(
        script,
        &[s(&data("pgn/gnuchess-book_1.02.pgn.xz")), s(&out)],
    );
    out
}

#[test]
fn the_ratings_are_python_chess_s_on_lichess_games() {
    let dir = tempfile::tempdir().unwrap();
    let games = [data("pgn/lichess_magnus_2018-2022.pgn.xz")];
    let t = dir.path().join("t.parquet");
    tally(&games, &t, &["--ratings", "--max-ply", "12"]);
    let want = python(PYTHON_RATINGS, &["12", &POSITIONS.join("|"), s(&games[0])]);
    let got = probed(&t, POSITIONS);
    assert!(want.lines().count() > 40, "{want}");
    assert_eq!(got, want);
}

#[test]
fn unrated_games_and_unknown_days_are_python_chess_s_on_old_games() {
    let dir = tempfile::tempdir().unwrap();
    let games = [gnuchess_sample(dir.path())];
    let t = dir.path().join("t.parquet");
    tally(&games, &t, &["--ratings", "--max-ply", "8"]);
    let want = python(PYTHON_RATINGS, &["8", &POSITIONS.join("|"), s(&games[0])]);
    // The sample has moves with no rated game, moves with some, and year-only dates.
    assert!(want.contains(" 0 null null "), "{want}");
    assert!(
        want.lines()
            .any(|l| l.split(' ').nth(3).is_some_and(|r| r != "0")),
        "{want}"
    );
    assert!(want.contains(".??.??"), "{want}");
    assert_eq!(probed(&t, POSITIONS), want);
    // The table for people shows the same columns.
    let text = polybook_ok(&["probe", s(&t), "--moves", "e4", "--no-board"]);
    assert!(
        text.contains("avg rating") && text.contains("last date"),
        "{text}"
    );
}

/// The file is the same whatever the threads and memory (spilled runs of the wider entries or
/// not), and the columns as DuckDB reads them are the file's own schema.
#[test]
fn the_rated_tally_does_not_depend_on_threads_or_memory() {
    let dir = tempfile::tempdir().unwrap();
    let games = [data("pgn/lichess_magnus_2018-2022.pgn.xz")];
    let t = |name: &str, options: &[&str]| {
        let mut all = vec!["--ratings"];
        all.extend_from_slice(options);
        tally(&games, &dir.path().join(name), &all)
    };
    let plain = t("a.parquet", &["--memory", "1G"]);
    assert!(plain == t("b.parquet", &["--threads", "1"]));
    assert!(plain == t("c.parquet", &["--threads", "2", "--memory", "64M"]));
    assert!(plain == t("d.parquet", &["--threads", "2", "--memory", "2M"]));
    assert!(plain == t("e.parquet", &["--threads", "1", "--memory", "1M"]));
    let types = duckdb(
        "import sys\nfor r in duckdb.sql(f\"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{sys.argv[1]}')\").fetchall():\n    print(*r)\n",
        &[s(&dir.path().join("a.parquet"))],
    );
    assert!(
        types.ends_with(
            "rated_games BIGINT\nmover_rating_sum BIGINT\nopponent_rating_sum BIGINT\nlast_date INTEGER\n"
        ),
        "{types}"
    );
}

/// Two tallies of halves merged are the tally of all (sums added, the later date kept); a book
/// is the same with and without the columns; tallies with and without are not merged.
#[test]
fn merged_books_and_mixed_tallies() {
    let dir = tempfile::tempdir().unwrap();
    let tcec = |name: &str| data(&format!("pgn/tcec/{name}.pgn.xz"));
    let games = [
        tcec("TCEC_Match_1"),
        tcec("TCEC_Season_5_-_Superfinal"),
        tcec("TCEC_Season_7_-_Superfinal"),
        data("pgn/lichess_magnus_analysed.pgn.xz"),
    ];
    let (first, second) = games.split_at(2);
    let path = |name: &str| dir.path().join(name);
    let (a, b, b_plain) = (
        path("a.parquet"),
        path("b.parquet"),
        path("b-plain.parquet"),
    );
    tally(first, &a, &["--ratings"]);
    tally(second, &b, &["--ratings"]);
    let whole = tally(&games, &path("all.parquet"), &["--ratings"]);
    let merged = path("merged.parquet");
    polybook_ok(&["tally", "-q", "--merge", s(&a), s(&b), "-o", s(&merged)]);
    assert!(std::fs::read(&merged).unwrap() == whole);

    // A book ignores the columns: the same bytes from tallies with and without, or both mixed.
    tally(&games, &path("plain.parquet"), &[]);
    tally(second, &b_plain, &[]);
    for rules in [
        &["--weights", "games", "--min-games", "1"][..],
        &["--weights", "wins", "--min-games", "2"],
        &[],
    ] {
        let book = |tallies: &[&str], out: &str| {
            let out = path(out);
            let mut args = vec!["book", "-q", "-o", s(&out)];
            args.extend_from_slice(tallies);
            args.extend_from_slice(rules);
            polybook_ok(&args);
            std::fs::read(&out).unwrap()
        };
        let plain = book(&[s(&path("plain.parquet"))], "plain.bin");
        assert!(!plain.is_empty());
        assert!(
            plain == book(&[s(&path("all.parquet"))], "rated.bin"),
            "{rules:?}"
        );
        assert!(
            plain == book(&[s(&a), s(&b_plain)], "mixed.bin"),
            "{rules:?}"
        );
    }

    // Merging tallies with and without the columns: one line, exit 1, nothing written.
    let out = path("never.parquet");
    let err = polybook_fails(
        &["tally", "--merge", s(&a), s(&b_plain), "-o", s(&out)],
        1,
        "--ratings",
    );
    assert!(
        err.contains("a.parquet") && err.contains("b-plain.parquet"),
        "{err}"
    );
    assert!(!out.exists());
    // Nor looked up together.
    let folder = path("mixed");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(&a, folder.join("part-0.parquet")).unwrap();
    std::fs::copy(&b_plain, folder.join("part-1.parquet")).unwrap();
    polybook_fails(&["probe", s(&folder), "--json"], 1, "--ratings");
    // --ratings is for counting.
    let o = polybook(&[
        "tally",
        "--merge",
        "--ratings",
        s(&path("a.parquet")),
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());

    // A tally without the columns has none of the fields.
    let json = polybook_ok(&["probe", s(&path("plain.parquet")), "--json"]);
    assert!(
        !json.contains("avg_rating") && !json.contains("last_date"),
        "{json}"
    );
}

/// `--format tsv --ratings` (the Spark job's map step): the four columns last, the same values.
#[test]
fn the_text_tally_has_the_columns_too() {
    let games = data("pgn/lichess_magnus_analysed.pgn.xz");
    let text = polybook_ok(&[
        "tally",
        "-q",
        "--ratings",
        "--format",
        "tsv",
        "-o",
        "-",
        s(&games),
    ]);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("#options\t"));
    assert_eq!(
        lines.next().unwrap(),
        "key\tmove\tblack\tgames\twins\tdraws\tlosses\tfirst\trated_games\tmover_rating_sum\topponent_rating_sum\tlast_date"
    );
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split('\t').skip(3).map(|v| v.parse().unwrap()).collect())
        .collect();
    assert!(rows.iter().all(|r| r.len() == 9 && r[5] <= r[0]));
    assert!(rows.iter().any(|r| r[5] > 0 && r[8] > 20000000));
}
