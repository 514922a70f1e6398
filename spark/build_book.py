#!/usr/bin/env python3
"""polybook's tally on Apache Spark: many PGN files counted in parallel, summed with a group-by.

    spark-submit --master local[4] spark/build_book.py games/*.pgn.zst --output tally/
    spark-submit --master yarn --files target/release/polybook spark/build_book.py \
        hdfs:///pgn/lichess_db_standard_rated_2024-*.pgn.zst --output hdfs:///tallies/2024
    polybook book tally/ -o book.bin --weights games      # the book, from the dataset

The map: one Spark task per input file (any path Spark reads: local, HDFS, S3) runs
`polybook tally FILE -o - --format tsv` on it and turns its lines into rows (key, move, black,
games, wins, draws, losses, first). The reduce: a group-by on (key, move, black) sums the counts and
keeps the earliest appearance (the input's number, then `first` within it); the moves of each
position are numbered again in that order, as `polybook tally` numbers them. The result is
range-partitioned and sorted by key and written as Parquet (zstd) with polybook's tally schema, so
that its part files, in name order, are one tally: `polybook book DIR` and `polybook tally --merge
DIR` read the folder. The options the counts were made with are stored in the `key` column's
metadata, where polybook looks for them in a file Spark wrote.

With --ratings, each task runs `polybook tally --ratings` and the group-by also sums rated_games,
mover_rating_sum and opponent_rating_sum and keeps the latest last_date, as `polybook tally --merge`
does; the dataset has those four columns too (and `polybook.ratings` in the key's metadata).

Options after the known ones go to `polybook tally` (`--max-ply 20`, `--min-elo 2000`, ...).
Each task holds its input file in memory: split very large files at game boundaries first
(e.g. `pgn-extract -#1000000`).
"""

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile

from pyspark import SparkFiles
from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

ROW = T.StructType(
    [
        T.StructField("key", T.LongType(), False),
        T.StructField("move", T.IntegerType(), False),
        T.StructField("black", T.BooleanType(), False),
        T.StructField("games", T.LongType(), False),
        T.StructField("wins", T.LongType(), False),
        T.StructField("draws", T.LongType(), False),
        T.StructField("losses", T.LongType(), False),
        T.StructField("input", T.IntegerType(), False),
        T.StructField("first", T.LongType(), False),
    ]
)

# The columns `polybook tally --ratings` adds, after the others.
RATING_FIELDS = [
    T.StructField("rated_games", T.LongType(), False),
    T.StructField("mover_rating_sum", T.LongType(), False),
    T.StructField("opponent_rating_sum", T.LongType(), False),
    T.StructField("last_date", T.IntegerType(), False),
]


def polybook_path(name):
    """The polybook binary on this machine: one shipped with --files, else `name` as given."""
    try:
        shipped = SparkFiles.get(os.path.basename(name))
    except Exception:
        shipped = None
    if shipped and os.path.isfile(shipped):
        mode = os.stat(shipped).st_mode
        if not mode & stat.S_IXUSR:
            os.chmod(shipped, mode | stat.S_IXUSR)
        return shipped
    return shutil.which(name) or name


def tally_lines(polybook, flags, data):
    """`polybook tally` on one input's bytes (compressed or not): its options and its rows."""
    with tempfile.NamedTemporaryFile(suffix=".pgn") as f:
        f.write(data)
        f.flush()
        run = subprocess.run(
            [polybook, "tally", f.name, "-o", "-", "--format", "tsv", "--threads", "1", "-q"]
            + flags,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            check=False,
        )
    if run.returncode != 0:
        raise RuntimeError("polybook tally failed: " + run.stderr.decode(errors="replace"))
    lines = run.stdout.decode().splitlines()
    options = lines[0].split("\t", 1)[1]
    return options, lines[2:]


def counts(polybook, flags, numbers):
    """The map of one task: each (path, bytes) it holds, tallied, as rows."""

    def each(item):
        path, data = item
        _, lines = tally_lines(polybook_path(polybook), flags, data)
        number = numbers[path]
        for line in lines:
            key, move, black, games, wins, draws, losses, first, *rated = line.split("\t")
            yield (
                int(key),
                int(move),
                black == "1",
                int(games),
                int(wins),
                int(draws),
                int(losses),
                number,
                int(first),
                *map(int, rated),
            )

    return each


def input_files(spark, inputs):
    """Every file the inputs name (globs and folders expanded by Hadoop's file system, so that
    local, HDFS and S3 paths all work), in the order given, each input's files by name."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    files = []
    for given in inputs:
        path = jvm.org.apache.hadoop.fs.Path(given)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path) or []
        found = []
        for status in statuses:
            if status.isDirectory():
                found += [s.getPath().toString() for s in fs.listStatus(status.getPath()) if s.isFile()]
            else:
                found.append(status.getPath().toString())
        if not found:
            sys.exit(f"build_book.py: {given}: no such file")
        files += sorted(found)
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", help="PGN files, folders or globs (plain or compressed)")
    parser.add_argument("--output", required=True, help="the tally dataset (a folder) to write")
    parser.add_argument("--polybook", default="polybook", help="the polybook binary on the executors")
    parser.add_argument("--master", help="Spark master when not run by spark-submit (local[2])")
    parser.add_argument("--partitions", type=int, default=0, help="part files (default: 2 per input)")
    parser.add_argument(
        "--ratings", action="store_true", help="also the rated games, rating sums and last date"
    )
    args, flags = parser.parse_known_args()
    if args.ratings:
        flags = ["--ratings"] + flags

    builder = SparkSession.builder.appName("polybook tally")
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    sc = spark.sparkContext

    files = input_files(spark, args.inputs)
    numbers = {path: i for i, path in enumerate(files)}
    # The options spelled as polybook spells them (the same flags on one game), for the metadata.
    options, _ = tally_lines(polybook_path(args.polybook), flags, b'[Result "*"]\n\n1. e4 *\n')

    # Map: one task per file, each running polybook on it.
    data = sc.binaryFiles(",".join(files), minPartitions=len(files))
    rows = data.flatMap(counts(args.polybook, flags, numbers))
    schema = T.StructType(ROW.fields + (RATING_FIELDS if args.ratings else []))
    pairs = spark.createDataFrame(rows, schema)

    # Reduce: the counts of each pair summed; its earliest appearance kept (and with --ratings the
    # rating sums summed, the latest date kept).
    rated = [
        F.sum("rated_games").alias("rated_games"),
        F.sum("mover_rating_sum").alias("mover_rating_sum"),
        F.sum("opponent_rating_sum").alias("opponent_rating_sum"),
        F.max("last_date").alias("last_date"),
    ]
    summed = pairs.groupBy("key", "move", "black").agg(
        F.sum("games").alias("games"),
        F.sum("wins").alias("wins"),
        F.sum("draws").alias("draws"),
        F.sum("losses").alias("losses"),
        F.min(F.struct("input", "first")).alias("seen"),
        *(rated if args.ratings else []),
    )
    order = Window.partitionBy("key").orderBy(F.col("seen.input"), F.col("seen.first"))
    ranked = summed.withColumn("first", (F.row_number().over(order) - 1).cast("long"))

    meta = {"polybook.tally": "1", "polybook.options": options}
    rated_columns = []
    if args.ratings:
        meta["polybook.ratings"] = "1"
        rated_columns = [
            F.col("rated_games").cast("long").alias("rated_games"),
            F.col("mover_rating_sum").cast("long").alias("mover_rating_sum"),
            F.col("opponent_rating_sum").cast("long").alias("opponent_rating_sum"),
            F.col("last_date").cast("int").alias("last_date"),
        ]
    out = ranked.select(
        F.col("key").alias("key", metadata=meta),
        F.col("move").cast("int").alias("move"),
        "black",
        F.col("games").cast("long").alias("games"),
        F.col("wins").cast("long").alias("wins"),
        F.col("draws").cast("long").alias("draws"),
        F.col("losses").cast("long").alias("losses"),
        "first",
        *rated_columns,
    )
    partitions = args.partitions or 2 * len(files)
    (
        out.repartitionByRange(partitions, "key")
        .sortWithinPartitions("key", "first")
        .write.mode("overwrite")
        .option("compression", "zstd")
        .parquet(args.output)
    )
    spark.stop()


if __name__ == "__main__":
    main()
