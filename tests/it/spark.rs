//! The Spark job (`spark/build_book.py`) for real: Apache Spark on `local[2]` tallies real
//! lichess games in 5 files, and the book `polybook book` makes from its dataset is byte for byte
//! the book `polybook build` makes from the same files, and its tally the single-machine one.

use crate::common;
use common::{data, duckdb, polybook_ok, python, root, stderr};

use std::path::Path;
use std::process::Command;

use common::path_str as s;

#[test]
fn the_spark_job_makes_the_single_machine_book() {
    let spark = Command::new("python3")
        .args(["-c", "import pyspark"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        spark,
        "reference tool missing: pyspark (pip install pyspark), or run ./test.sh"
    );
    let dir = tempfile::tempdir().unwrap();
    // Magnus Carlsen's lichess games (10,024), cut at game boundaries into 4 plain PGN files,
    // and his analysed games as they are (xz): 5 inputs.
    python(
        r#"
import sys, lzma
games = lzma.open(sys.argv[1], "rt").read().split("\n\n[Event ")
n = len(games)
for i in range(4):
    part = "\n\n[Event ".join(games[i * n // 4:(i + 1) * n // 4])
    with open(f"{sys.argv[2]}/magnus_{i}.pgn", "w") as f:
        f.write(("[Event " if i else "") + part.rstrip("\n") + "\n")
"#,
        &[
            s(&data("pgn/lichess_magnus_2018-2022.pgn.xz")),
            s(dir.path()),
        ],
    );
    let mut inputs: Vec<String> = (0..4)
        .map(|i| s(&dir.path().join(format!("magnus_{i}.pgn"))).to_string())
        .collect();
    inputs.push(s(&data("pgn/lichess_magnus_analysed.pgn.xz")).to_string());
    let dataset = dir.path().join("tally");
    let out = Command::new("python3")
        .arg(root().join("spark/build_book.py"))
        .args([
            "--master",
            "local[2]",
            "--polybook",
            env!("CARGO_BIN_EXE_polybook"),
        ])
        .args(&inputs)
        .args(["--output", s(&dataset)])
        // Spark on this machine only: no name lookup of the host, no network.
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .env("PYSPARK_PYTHON", "python3")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the Spark job failed: {}",
        stderr(&out)
    );
    let parts = std::fs::read_dir(&dataset)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "parquet")
        })
        .count();
    assert!(parts >= 2, "{parts} part files");

    let args = |cmd: &str, out: &Path| {
        let mut a = vec![cmd.to_string(), "-q".into(), "-o".into(), s(out).into()];
        a.extend(inputs.iter().cloned());
        a.extend(["--weights", "games", "--min-games", "1"].map(String::from));
        a
    };
    let build = dir.path().join("build.bin");
    let a = args("build", &build);
    polybook_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let from_spark = dir.path().join("spark.bin");
    polybook_ok(&[
        "book",
        "-q",
        s(&dataset),
        "-o",
        s(&from_spark),
        "--weights",
        "games",
        "--min-games",
        "1",
    ]);
    let build_bytes = std::fs::read(&build).unwrap();
    assert!(build_bytes.len() > 100_000);
    assert!(
        build_bytes == std::fs::read(&from_spark).unwrap(),
        "the books differ"
    );

    // The single-machine tally has the same rows as the Spark dataset merged into one file.
    let single = dir.path().join("single.parquet");
    let mut a = vec!["tally", "-q", "-o", s(&single)];
    a.extend(inputs.iter().map(String::as_str));
    polybook_ok(&a);
    let merged = dir.path().join("merged.parquet");
    polybook_ok(&["tally", "-q", "--merge", s(&dataset), "-o", s(&merged)]);
    let diff = duckdb(
        r#"
import sys
a, b = sys.argv[1], sys.argv[2]
one = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{a}' EXCEPT ALL SELECT * FROM '{b}')").fetchall()[0][0]
two = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{b}' EXCEPT ALL SELECT * FROM '{a}')").fetchall()[0][0]
rows = duckdb.sql(f"SELECT count(*) FROM '{a}'").fetchall()[0][0]
print(one, two, rows)
"#,
        &[s(&single), s(&merged)],
    );
    let f: Vec<u64> = diff
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(&f[..2], &[0, 0], "rows differ: {diff}");
    assert!(f[2] > 500_000, "{diff}");

    // With --ratings: the rating sums summed and the latest dates kept by Spark's group-by are
    // the single-machine `tally --ratings`'s, column for column.
    let rated = dir.path().join("rated");
    let out = Command::new("python3")
        .arg(root().join("spark/build_book.py"))
        .args([
            "--master",
            "local[2]",
            "--polybook",
            env!("CARGO_BIN_EXE_polybook"),
            "--ratings",
        ])
        .args(&inputs)
        .args(["--output", s(&rated)])
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .env("PYSPARK_PYTHON", "python3")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the Spark job failed: {}",
        stderr(&out)
    );
    let single = dir.path().join("single-rated.parquet");
    let mut a = vec!["tally", "-q", "--ratings", "-o", s(&single)];
    a.extend(inputs.iter().map(String::as_str));
    polybook_ok(&a);
    let merged = dir.path().join("merged-rated.parquet");
    polybook_ok(&["tally", "-q", "--merge", s(&rated), "-o", s(&merged)]);
    let diff = duckdb(
        r#"
import sys
a, b = sys.argv[1], sys.argv[2]
one = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{a}' EXCEPT ALL SELECT * FROM '{b}')").fetchall()[0][0]
two = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{b}' EXCEPT ALL SELECT * FROM '{a}')").fetchall()[0][0]
rated = duckdb.sql(f"SELECT sum(rated_games), max(last_date) FROM '{a}'").fetchall()[0]
print(one, two, *rated)
"#,
        &[s(&single), s(&merged)],
    );
    let f: Vec<u64> = diff
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(&f[..2], &[0, 0], "rows with ratings differ: {diff}");
    assert!(f[2] > 100_000 && f[3] > 20_000_000, "{diff}");
    // The book ignores the columns: the same book as from the dataset without them.
    let rated_book = dir.path().join("spark-rated.bin");
    polybook_ok(&[
        "book",
        "-q",
        s(&rated),
        "-o",
        s(&rated_book),
        "--weights",
        "games",
        "--min-games",
        "1",
    ]);
    assert!(build_bytes == std::fs::read(&rated_book).unwrap());
}
