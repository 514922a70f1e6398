//! The Spark job (`spark/build_book.py`) for real: Apache Spark on `local[2]`, and on a standalone
//! cluster of a master and two workers (separate JVMs, started from pyspark's own `spark-class`,
//! the job submitted with `spark-submit` and the binary shipped with `--files`), tallies real
//! lichess games in 5 files, and the book `polybook book` makes from its dataset is byte for byte
//! the book `polybook build` makes from the same files, and its tally the single-machine one.

use crate::common;
use common::{data, duckdb, polybook_ok, python, root, stderr};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::path_str as s;

/// Panics with the install hint unless pyspark (and pyarrow, which the job's map needs) import.
fn spark_installed() {
    let spark = Command::new("python3")
        .args(["-c", "import pyspark, pyarrow, pandas"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        spark,
        "reference tool missing: pyspark, pyarrow or pandas (pip install pyspark pyarrow pandas), or run ./test.sh"
    );
}

/// Magnus Carlsen's lichess games (10,024), cut at game boundaries into 4 plain PGN files in
/// `dir`, and his analysed games as they are (xz): 5 inputs.
fn inputs(dir: &Path) -> Vec<String> {
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
        &[s(&data("pgn/lichess_magnus_2018-2022.pgn.xz")), s(dir)],
    );
    let mut inputs: Vec<String> = (0..4)
        .map(|i| s(&dir.join(format!("magnus_{i}.pgn"))).to_string())
        .collect();
    inputs.push(s(&data("pgn/lichess_magnus_analysed.pgn.xz")).to_string());
    inputs
}

/// Where the job runs: `local[2]` in the driver's JVM, or a standalone cluster's master URL.
enum Master<'a> {
    Local,
    Cluster(&'a str),
}

/// The Spark job over `inputs` into the dataset `output`, with `options`.
fn spark_job(inputs: &[String], output: &Path, options: &[&str], master: Master) {
    let bin = env!("CARGO_BIN_EXE_polybook");
    let mut cmd = match master {
        Master::Local => {
            let mut c = Command::new("python3");
            c.arg(root().join("spark/build_book.py")).args([
                "--master",
                "local[2]",
                "--polybook",
                bin,
            ]);
            c
        }
        // As on a real cluster: submitted, the binary shipped to the executors with --files.
        Master::Cluster(url) => {
            let mut c = Command::new(pyspark_bin("spark-submit"));
            c.args(["--master", url, "--conf", "spark.ui.enabled=false"])
                .args(["--conf", "spark.executor.memory=1g", "--files", bin])
                .arg(root().join("spark/build_book.py"))
                .args(["--polybook", "polybook"]);
            c
        }
    };
    let out = cmd
        .args(options)
        .args(inputs)
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
}

/// `polybook book` of a dataset (every move of a game or more, weighted by games): its bytes.
fn book_of(dataset: &Path, book: &Path) -> Vec<u8> {
    polybook_ok(&[
        "book",
        "-q",
        s(dataset),
        "-o",
        s(book),
        "--weights",
        "games",
        "--min-games",
        "1",
    ]);
    std::fs::read(book).unwrap()
}

/// `polybook build` of the inputs, as `book_of` weighs them: its bytes.
fn build_of(inputs: &[String], book: &Path) -> Vec<u8> {
    let mut a = vec!["build", "-q", "-o", s(book)];
    a.extend(inputs.iter().map(String::as_str));
    a.extend(["--weights", "games", "--min-games", "1"]);
    polybook_ok(&a);
    std::fs::read(book).unwrap()
}

/// The single-machine tally of the inputs (with `options`) against `dataset` merged into one
/// file: the rows of each that the other lacks, then the `summary` columns of the single one.
fn compare(
    dir: &Path,
    inputs: &[String],
    dataset: &Path,
    options: &[&str],
    summary: &str,
) -> (Vec<u64>, String) {
    let name = dataset.file_name().unwrap().to_str().unwrap();
    let single = dir.join(format!("single-{name}.parquet"));
    let mut a = vec!["tally", "-q", "-o", s(&single)];
    a.extend_from_slice(options);
    a.extend(inputs.iter().map(String::as_str));
    polybook_ok(&a);
    let merged = dir.join(format!("merged-{name}.parquet"));
    polybook_ok(&["tally", "-q", "--merge", s(dataset), "-o", s(&merged)]);
    rows_differ(&single, &merged, summary)
}

/// The rows of tally `a` that `b` lacks and those of `b` that `a` lacks (DuckDB's `EXCEPT ALL`),
/// then the `summary` columns of `a`; and the text they were read from.
fn rows_differ(a: &Path, b: &Path, summary: &str) -> (Vec<u64>, String) {
    let diff = duckdb(
        r#"
import sys
a, b, summary = sys.argv[1], sys.argv[2], sys.argv[3]
one = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{a}' EXCEPT ALL SELECT * FROM '{b}')").fetchall()[0][0]
two = duckdb.sql(f"SELECT count(*) FROM (SELECT * FROM '{b}' EXCEPT ALL SELECT * FROM '{a}')").fetchall()[0][0]
print(one, two, *duckdb.sql(f"SELECT {summary} FROM '{a}'").fetchall()[0])
"#,
        &[s(a), s(b), summary],
    );
    let f: Vec<u64> = diff
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    (f, diff)
}

/// The job's own count of its map (`_polybook_job.json` beside the parts): each piece tallied
/// exactly once.
fn assert_mapped_once(dataset: &Path) {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dataset.join("_polybook_job.json")).unwrap())
            .unwrap();
    assert_eq!(report["pieces_tallied"], report["pieces"], "{report}");
    assert!(report["pieces"].as_u64().unwrap() >= 5, "{report}");
}

#[test]
fn the_spark_job_makes_the_single_machine_book() {
    spark_installed();
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs(dir.path());

    // The plain files cut into byte ranges of a million bytes (`tally --range`), in 2 tasks.
    let dataset = dir.path().join("tally");
    spark_job(
        &inputs,
        &dataset,
        &["--split-size", "1000000"],
        Master::Local,
    );
    assert_mapped_once(&dataset);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dataset.join("_polybook_job.json")).unwrap())
            .unwrap();
    assert!(report["pieces"].as_u64().unwrap() > 20, "{report}");
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

    let build_bytes = build_of(&inputs, &dir.path().join("build.bin"));
    assert!(build_bytes.len() > 100_000);
    assert!(
        build_bytes == book_of(&dataset, &dir.path().join("spark.bin")),
        "the books differ"
    );

    // The single-machine tally has the same rows as the Spark dataset merged into one file.
    let (f, diff) = compare(dir.path(), &inputs, &dataset, &[], "count(*)");
    assert_eq!(&f[..2], &[0, 0], "rows differ: {diff}");
    assert!(f[2] > 500_000, "{diff}");

    // With --ratings: the rating sums summed and the latest dates kept are the single-machine
    // `tally --ratings`'s, column for column.
    let rated = dir.path().join("rated");
    spark_job(&inputs, &rated, &["--ratings"], Master::Local);
    let (f, diff) = compare(
        dir.path(),
        &inputs,
        &rated,
        &["--ratings"],
        "sum(rated_games), max(last_date)",
    );
    assert_eq!(&f[..2], &[0, 0], "rows with ratings differ: {diff}");
    assert!(f[2] > 100_000 && f[3] > 20_000_000, "{diff}");
    // The book ignores the columns: the same book as from the dataset without them.
    assert!(build_bytes == book_of(&rated, &dir.path().join("spark-rated.bin")));
}

/// A program of pyspark's own Spark distribution (`bin/spark-class`, `bin/spark-submit`).
fn pyspark_bin(name: &str) -> PathBuf {
    let home = python(
        "import os, pyspark\nprint(os.path.dirname(pyspark.__file__))",
        &[],
    );
    PathBuf::from(home.trim()).join("bin").join(name)
}

/// A free port on loopback (free when asked: the cluster takes it a moment later).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A standalone Spark cluster on loopback: a master and two workers of one core each, separate
/// JVMs, each started in the foreground by `spark-class`. Dropped, it stops them all (SIGTERM,
/// then SIGKILL for any still there after 20 s).
struct Cluster {
    url: String,
    dir: PathBuf,
    processes: Vec<Child>,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let class = pyspark_bin("spark-class");
        let port = free_port();
        let url = format!("spark://127.0.0.1:{port}");
        let spawn = |args: &[&str], log: &str| {
            Command::new(&class)
                .args(args)
                .env("SPARK_LOCAL_IP", "127.0.0.1")
                .env("SPARK_NO_DAEMONIZE", "1")
                .env("SPARK_WORKER_DIR", dir)
                .env("PYSPARK_PYTHON", "python3")
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.join(log)).unwrap())
                .spawn()
                .expect("run spark-class")
        };
        let mut cluster = Cluster {
            url: url.clone(),
            dir: dir.to_path_buf(),
            processes: Vec::new(),
        };
        let port = port.to_string();
        cluster.processes.push(spawn(
            &[
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                &port,
                "--webui-port",
                "0",
            ],
            "master.log",
        ));
        cluster.wait_for("master.log", "I have been elected leader");
        for i in 1..=2 {
            let work = dir.join(format!("work-{i}"));
            cluster.processes.push(spawn(
                &[
                    "org.apache.spark.deploy.worker.Worker",
                    &url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "1g",
                    "--webui-port",
                    "0",
                    "--work-dir",
                    s(&work),
                ],
                &format!("worker-{i}.log"),
            ));
        }
        for i in 1..=2 {
            cluster.wait_for(
                &format!("worker-{i}.log"),
                "Successfully registered with master",
            );
        }
        cluster
    }

    /// Waits (up to 90 s) until the log `name` says `what`.
    fn wait_for(&self, name: &str, what: &str) {
        let end = Instant::now() + Duration::from_secs(90);
        loop {
            let log = std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
            if log.contains(what) {
                return;
            }
            assert!(
                Instant::now() < end,
                "{name} never said {what:?}: {}",
                log.lines().rev().take(20).collect::<Vec<_>>().join("\n")
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Stops the workers, then the master; each within 20 s or killed.
    fn stop(&mut self) {
        for mut child in self.processes.drain(..).rev() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let end = Instant::now() + Duration::from_secs(20);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The processes still running whose command line names `what`.
fn running(what: &str) -> Vec<String> {
    let out = Command::new("pgrep").args(["-af", what]).output().unwrap();
    common::text(&out.stdout)
        .lines()
        .filter(|l| !l.contains("pgrep"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_spark_job_runs_on_a_standalone_cluster() {
    spark_installed();
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs(dir.path());
    let mut cluster = Cluster::start(dir.path());
    let dataset = dir.path().join("tally");
    spark_job(&inputs, &dataset, &[], Master::Cluster(&cluster.url));
    assert_mapped_once(&dataset);
    // The executors ran in the workers' folders: the job went through the cluster.
    for i in 1..=2 {
        let apps = std::fs::read_dir(dir.path().join(format!("work-{i}")))
            .map(|d| d.count())
            .unwrap_or(0);
        assert!(apps >= 1, "worker {i} ran no executor");
    }
    let build_bytes = build_of(&inputs, &dir.path().join("build.bin"));
    assert!(
        build_bytes == book_of(&dataset, &dir.path().join("spark.bin")),
        "the books differ"
    );
    let (f, diff) = compare(dir.path(), &inputs, &dataset, &[], "count(*)");
    assert_eq!(&f[..2], &[0, 0], "rows differ: {diff}");

    // Stopped, it leaves nothing running: no master, worker or executor.
    cluster.stop();
    let port = cluster.url.rsplit(':').next().unwrap().to_string();
    let left: Vec<String> = [format!("--port {port}"), cluster.url.clone()]
        .iter()
        .chain([&s(dir.path()).to_string()])
        .flat_map(|what| running(what))
        .collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

/// A dataset that grows month by month: each month's games tallied alone (one of them by the
/// Spark job, a folder), and the tallies of all the months, oldest first, make the book that
/// `build` makes from all the games, and sum to the rows of one tally of them all.
#[test]
fn the_tallies_of_months_make_the_book_of_all_games() {
    spark_installed();
    let dir = tempfile::tempdir().unwrap();
    // Magnus Carlsen's lichess games, one file per month (`Date`), in the file's order.
    let months = python(
        r#"
import sys, lzma, os, re
games = lzma.open(sys.argv[1], "rt").read().split("\n\n[Event ")
by_month = {}
for i, g in enumerate(games):
    text = ("[Event " if i else "") + g.rstrip("\n") + "\n\n"
    month = re.search(r'\[Date "(\d{4})\.(\d{2})', text)
    by_month.setdefault(f"{month[1]}-{month[2]}", []).append(text)
for month, texts in sorted(by_month.items()):
    os.makedirs(f"{sys.argv[2]}/{month}")
    with open(f"{sys.argv[2]}/{month}/games.pgn", "w") as f:
        f.write("".join(texts))
    print(month)
"#,
        &[
            s(&data("pgn/lichess_magnus_2018-2022.pgn.xz")),
            s(&dir.path().join("games")),
        ],
    );
    let months: Vec<&str> = months.lines().collect();
    assert!(months.len() >= 20, "{months:?}");
    let games_of = |m: &str| dir.path().join("games").join(m).join("games.pgn");
    let tallies = dir.path().join("tallies");
    let mut tally_paths = Vec::new();
    for (i, m) in months.iter().enumerate() {
        // The latest month through the Spark job (a folder of parts), the others alone.
        let tally = if i == months.len() - 1 {
            let folder = tallies.join(m);
            spark_job(&[s(&games_of(m)).to_string()], &folder, &[], Master::Local);
            folder
        } else {
            let file = tallies.join(format!("{m}.parquet"));
            std::fs::create_dir_all(&tallies).unwrap();
            polybook_ok(&["tally", "-q", s(&games_of(m)), "-o", s(&file)]);
            file
        };
        tally_paths.push(s(&tally).to_string());
    }
    let all_games: Vec<String> = months.iter().map(|m| s(&games_of(m)).to_string()).collect();
    let build_bytes = build_of(&all_games, &dir.path().join("build.bin"));
    let book = dir.path().join("months.bin");
    let mut a = vec![
        "book",
        "-q",
        "-o",
        s(&book),
        "--weights",
        "games",
        "--min-games",
        "1",
    ];
    a.extend(tally_paths.iter().map(String::as_str));
    polybook_ok(&a);
    assert!(
        build_bytes == std::fs::read(&book).unwrap(),
        "the book of the months differs from build's"
    );
    // Summed, the months are one tally of all the games, row for row.
    let summed = dir.path().join("summed.parquet");
    let mut a = vec!["tally", "-q", "--merge", "-o", s(&summed)];
    a.extend(tally_paths.iter().map(String::as_str));
    polybook_ok(&a);
    let whole = dir.path().join("whole.parquet");
    let mut a = vec!["tally", "-q", "-o", s(&whole)];
    a.extend(all_games.iter().map(String::as_str));
    polybook_ok(&a);
    let (f, diff) = rows_differ(&whole, &summed, "count(*)");
    assert_eq!(&f[..2], &[0, 0], "rows differ: {diff}");
    assert!(f[2] > 300_000, "{diff}");
}
