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
    // The Spark job over the inputs into the dataset `output`, with `options`.
    let spark_job = |output: &Path, options: &[&str]| {
        let out = Command::new("python3")
            .arg(root().join("spark/build_book.py"))
            .args([
                "--master",
                "local[2]",
                "--polybook",
                env!("CARGO_BIN_EXE_polybook"),
            ])
            .args(options)
            .args(&inputs)
            .args(["--output", s(output)])
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
    };
    // `polybook book` of a dataset (every move of a game or more, weighted by games): its bytes.
    let book_of = |dataset: &Path, name: &str| {
        let book = dir.path().join(name);
        polybook_ok(&[
            "book",
            "-q",
            s(dataset),
            "-o",
            s(&book),
            "--weights",
            "games",
            "--min-games",
            "1",
        ]);
        std::fs::read(&book).unwrap()
    };
    // The single-machine tally of the inputs (with `options`) against `dataset` merged into one
    // file: the rows of each that the other lacks, then the `summary` columns of the single one.
    let compare = |dataset: &Path, options: &[&str], summary: &str| {
        let name = dataset.file_name().unwrap().to_str().unwrap();
        let single = dir.path().join(format!("single-{name}.parquet"));
        let mut a = vec!["tally", "-q", "-o", s(&single)];
        a.extend_from_slice(options);
        a.extend(inputs.iter().map(String::as_str));
        polybook_ok(&a);
        let merged = dir.path().join(format!("merged-{name}.parquet"));
        polybook_ok(&["tally", "-q", "--merge", s(dataset), "-o", s(&merged)]);
        let diff = duckdb(
            r#"
import sys
a, b, summary = sys.argv[1], sys.argv[2], sys.argv[3]
one = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{a}' EXCEPT ALL SELECT * FROM '{b}')").fetchall()[0][0]
two = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{b}' EXCEPT ALL SELECT * FROM '{a}')").fetchall()[0][0]
print(one, two, *duckdb.sql(f"SELECT {summary} FROM '{a}'").fetchall()[0])
"#,
            &[s(&single), s(&merged), summary],
        );
        let f: Vec<u64> = diff
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        (f, diff)
    };

    let dataset = dir.path().join("tally");
    spark_job(&dataset, &[]);
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

    let build = dir.path().join("build.bin");
    let mut a = vec!["build", "-q", "-o", s(&build)];
    a.extend(inputs.iter().map(String::as_str));
    a.extend(["--weights", "games", "--min-games", "1"]);
    polybook_ok(&a);
    let build_bytes = std::fs::read(&build).unwrap();
    assert!(build_bytes.len() > 100_000);
    assert!(
        build_bytes == book_of(&dataset, "spark.bin"),
        "the books differ"
    );

    // The single-machine tally has the same rows as the Spark dataset merged into one file.
    let (f, diff) = compare(&dataset, &[], "count(*)");
    assert_eq!(&f[..2], &[0, 0], "rows differ: {diff}");
    assert!(f[2] > 500_000, "{diff}");

    // With --ratings: the rating sums summed and the latest dates kept by Spark's group-by are
    // the single-machine `tally --ratings`'s, column for column.
    let rated = dir.path().join("rated");
    spark_job(&rated, &["--ratings"]);
    let (f, diff) = compare(&rated, &["--ratings"], "sum(rated_games), max(last_date)");
    assert_eq!(&f[..2], &[0, 0], "rows with ratings differ: {diff}");
    assert!(f[2] > 100_000 && f[3] > 20_000_000, "{diff}");
    // The book ignores the columns: the same book as from the dataset without them.
    assert!(build_bytes == book_of(&rated, "spark-rated.bin"));
}
