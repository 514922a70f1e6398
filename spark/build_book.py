#!/usr/bin/env python3
"""polybook's tally on Apache Spark: many PGN files counted in parallel, summed by key range.

    spark-submit --master local[4] spark/build_book.py games/*.pgn.zst --output tally/
    spark-submit --master spark://HOST:7077 --files target/release/polybook spark/build_book.py \
        /shared/pgn/ --output /shared/tallies/2024-01
    polybook book tally/ -o book.bin --weights games      # the book, from the dataset

polybook does the counting and the summing; Spark schedules it and moves the tallies between the
two stages. No row of a tally goes through Python or the JVM one by one.

- The map: the inputs are cut into pieces (a file; a big plain file into byte ranges of
  --split-size, `polybook tally --range`: each range counts the games that start in it), and the
  pieces, in order, into --tasks groups of about the same size (one per core by default). A task runs
  `polybook tally` on its pieces (its whole files in one run, each byte range in a run of its own)
  and sums the runs with `polybook tally --merge` (in their order), then cuts its tally by key into
  --partitions ranges of the key space, and hands each to Spark as one row: (range, group, the
  range's Parquet bytes). These rows are persisted, so each piece is tallied once whatever the later
  stages do (the job counts the pieces tallied, in `_polybook_job.json` beside the parts).
- The reduce: Spark's shuffle brings each range's tallies (one per group) to one task, which sums
  them with `polybook tally --merge`, in the groups' order, into the dataset's part file of that
  range: `part-00000.parquet`, … in key order. A move's `first` is thus numbered in the inputs'
  order, as `polybook tally` numbers it, and the folder is one tally: `polybook book DIR`, `polybook
  tally --merge DIR` and `probe` read it.

With --ratings, each task runs `polybook tally --ratings` (the merge keeps the columns).

Inputs on the local file system (`file:` paths: on a cluster, a folder every worker sees at the same
path) are read by polybook where they are. Other inputs (HDFS, S3) are read by Spark and handed to
polybook whole: split big compressed files first with `polybook split FILE --games N -o DIR/`. The
output is a folder that every worker can write at the same path (local, or shared). Options after the
known ones go to `polybook tally` (`--max-ply 20`, `--min-elo 2000`, ...). Needs pyarrow (and pandas,
which Spark's Arrow functions ask for) on the driver and the workers.
"""

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

from pyspark import SparkFiles, StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

# What one task tallies: consecutive pieces (local paths, each whole or a byte range), or the bytes
# of one remote file; `input` is the number of the first piece (their order).
GROUPS = T.StructType(
    [
        T.StructField("input", T.IntegerType(), False),
        T.StructField("paths", T.ArrayType(T.StringType()), True),
        T.StructField("starts", T.ArrayType(T.LongType()), True),
        T.StructField("ends", T.ArrayType(T.LongType()), True),
    ]
)


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


def run_tally(polybook, args):
    """`polybook tally ARGS -q --threads 1`, or an error with what it said."""
    run = subprocess.run(
        [polybook, "tally", *args, "--threads", "1", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError("polybook tally failed: " + run.stderr.decode(errors="replace").strip())
    return run.stdout


def key_ranges(keys, n):
    """Each key's range among `n` equal ranges of the key space, in key order (a tally stores a key
    minus 2^63, so its signed order is key order)."""
    import numpy as np

    unsigned = keys.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    return ((unsigned >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32)


def tally_groups(polybook, flags, ranges, tallied):
    """The map, for mapInArrow: each group of pieces tallied by polybook (whole files together, a
    byte range alone, the parts summed by `polybook tally --merge` in their order when there are
    several), then cut by key into `ranges` tallies, each handed to Spark as one row (range, group,
    Parquet bytes). `tallied` counts the pieces tallied."""

    def each(batches):
        import pyarrow as pa
        import pyarrow.parquet as pq

        exe = polybook_path(polybook)
        for batch in batches:
            columns = batch.to_pydict()
            contents = columns.get("content") or [None] * batch.num_rows
            for number, paths, starts, ends, content in zip(
                columns["input"], columns["paths"], columns["starts"], columns["ends"], contents
            ):
                with tempfile.TemporaryDirectory(prefix="polybook-") as tmp:
                    if content is not None:
                        paths, starts, ends = [os.path.join(tmp, "input.pgn")], [None], [None]
                        with open(paths[0], "wb") as f:
                            f.write(content)
                    # One run for each stretch of whole files (polybook reads them in order, as
                    # one stream), one for each byte range.
                    runs_of = []
                    for path, start, end in zip(paths, starts, ends):
                        if start is None and runs_of and runs_of[-1][1] is None:
                            runs_of[-1][0].append(path)
                        else:
                            runs_of.append(([path], start, end))
                    parts = []
                    for i, (run_paths, start, end) in enumerate(runs_of):
                        part = os.path.join(tmp, f"part-{i}.parquet")
                        args = [*run_paths, "-o", part, *flags]
                        if start is not None:
                            args += ["--range", f"{start}:{end}"]
                        run_tally(exe, args)
                        tallied.add(len(run_paths))
                        parts.append(part)
                    if len(parts) > 1:
                        merged = os.path.join(tmp, "merged.parquet")
                        run_tally(exe, ["--merge", *parts, "-o", merged])
                        parts = [merged]
                    table = pq.read_table(parts[0])
                # The tally is sorted by key: each range is one slice of it.
                which = key_ranges(table.column("key").to_numpy(), ranges)
                bounds = which.searchsorted(list(range(ranges + 1)))
                for r in range(ranges):
                    piece = table.slice(bounds[r], bounds[r + 1] - bounds[r])
                    if piece.num_rows == 0:
                        continue
                    sink = pa.BufferOutputStream()
                    pq.write_table(piece, sink, compression="none")
                    yield pa.RecordBatch.from_pydict(
                        {"range": [r], "input": [number], "tally": [sink.getvalue().to_pybytes()]},
                        schema=BLOBS_ARROW(),
                    )

    return each


def BLOBS_ARROW():
    import pyarrow as pa

    return pa.schema([("range", pa.int32(), False), ("input", pa.int32(), False), ("tally", pa.binary(), False)])


BLOBS = T.StructType(
    [
        T.StructField("range", T.IntegerType(), False),
        T.StructField("input", T.IntegerType(), False),
        T.StructField("tally", T.BinaryType(), False),
    ]
)


def merge_ranges(polybook, output):
    """The reduce, for mapInArrow over the map's rows sorted by (range, group): each range's
    tallies summed by `polybook tally --merge`, in the groups' order, into the dataset's part file
    of that range; a row (range, rows) for each."""

    def each(batches):
        import pyarrow as pa
        import pyarrow.parquet as pq

        exe = polybook_path(polybook)
        rows = [r for b in batches for r in zip(*(b.column(i).to_pylist() for i in range(3)))]
        by_range = {}
        for r, number, blob in rows:
            by_range.setdefault(r, []).append((number, blob))
        for r, blobs in sorted(by_range.items()):
            with tempfile.TemporaryDirectory(prefix="polybook-") as tmp:
                inputs = []
                for number, blob in sorted(blobs, key=lambda x: x[0]):
                    path = os.path.join(tmp, f"in-{number}.parquet")
                    with open(path, "wb") as f:
                        f.write(blob)
                    inputs.append(path)
                target = os.path.join(output, f"part-{r:05d}.parquet")
                run_tally(exe, ["--merge", *inputs, "-o", target])
                n = pq.ParquetFile(target).metadata.num_rows
            yield pa.RecordBatch.from_pydict(
                {"range": [r], "rows": [n]}, schema=pa.schema([("range", pa.int32()), ("rows", pa.int64())])
            )

    return each


def input_files(spark, inputs):
    """Every file the inputs name (globs and folders expanded by Hadoop's file system, so that
    local, HDFS and S3 paths all work), in the order given, each input's files by name, with their
    sizes."""
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
                found += [
                    (s.getPath().toString(), s.getLen()) for s in fs.listStatus(status.getPath()) if s.isFile()
                ]
            else:
                found.append((status.getPath().toString(), status.getLen()))
        if not found:
            sys.exit(f"build_book.py: {given}: no such file")
        files += sorted(found)
    return files


def local_path(uri):
    """The local path of a `file:` URI, else None."""
    if uri.startswith("file:"):
        path = uri[len("file:"):]
        while path.startswith("//"):
            path = path[1:]
        return path
    return None


def is_plain(path):
    """Whether a local file is plain text (not compressed: the magic bytes polybook knows)."""
    with open(path, "rb") as f:
        head = f.read(6)
    magics = [b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"BZh", b"\xfd7zXZ\x00"]
    return not any(head.startswith(m) for m in magics)


def pieces_of(files, split_size):
    """The pieces to tally, in input order, as (local, path, start, end, bytes): local plain files
    cut into byte ranges of `split_size` (0: never), other local files whole, remote files (read by
    Spark, whole) by their URI."""
    pieces = []
    for uri, size in files:
        path = local_path(uri)
        if path is None:
            pieces.append((False, uri, None, None, size))
        elif split_size and size > split_size and is_plain(path):
            for s in range(0, size, split_size):
                pieces.append((True, path, s, min(s + split_size, size), min(split_size, size - s)))
        else:
            pieces.append((True, path, None, None, size))
    return pieces


def groups_of(pieces, tasks):
    """The pieces in about `tasks` groups of consecutive pieces of about the same size, a remote
    file alone in its group: (number of the first piece, [pieces])."""
    total = sum(p[4] for p in pieces) or 1
    groups, current, filled = [], [], 0
    for i, piece in enumerate(pieces):
        local = piece[0]
        full = filled >= total * (len(groups) + 1) / tasks
        if current and (not local or not current[-1][1][0] or full):
            groups.append(current)
            current = []
        current.append((i, piece))
        filled += piece[4]
    if current:
        groups.append(current)
    return [(g[0][0], [p for _, p in g]) for g in groups]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", help="PGN files, folders or globs (plain or compressed)")
    parser.add_argument("--output", required=True, help="the tally dataset (a folder) to write")
    parser.add_argument("--polybook", default="polybook", help="the polybook binary on the executors")
    parser.add_argument("--master", help="Spark master when not run by spark-submit (local[2])")
    parser.add_argument(
        "--partitions", type=int, default=0, help="key ranges, the part files (default: 2 per task, at most 200)"
    )
    parser.add_argument(
        "--tasks",
        type=int,
        default=0,
        help="map tasks: the pieces in this many groups, each tallied by one polybook "
        "(default: Spark's default parallelism, one per core)",
    )
    parser.add_argument(
        "--split-size",
        type=int,
        default=64 << 20,
        help="cut local plain PGN files into byte ranges of this many bytes (0: never); default 64 MiB",
    )
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
    pieces = pieces_of(files, args.split_size)
    groups = groups_of(pieces, args.tasks or sc.defaultParallelism)
    output = local_path(args.output) if "://" in args.output or args.output.startswith("file:") else args.output
    if output is None:
        sys.exit(f"build_book.py: --output {args.output}: the output must be a folder on a file system that every worker sees at that path")

    # The groups as a DataFrame, one per task: local pieces by path (and range), a remote file
    # with its bytes, read by Spark.
    local = [
        (n, [p[1] for p in g], [p[2] for p in g], [p[3] for p in g]) for n, g in groups if g[0][0]
    ]
    remote = {g[0][1]: n for n, g in groups if not g[0][0]}
    frames = []
    if local:
        frames.append(
            spark.createDataFrame(local, GROUPS)
            .repartition(len(local))
            .withColumn("content", F.lit(None).cast("binary"))
        )
    if remote:
        numbers = F.create_map(*[x for uri, n in remote.items() for x in (F.lit(uri), F.lit(n))])
        frames.append(
            spark.read.format("binaryFile")
            .load(list(remote))
            .repartition(len(remote))
            .select(
                numbers[F.col("path")].cast("int").alias("input"),
                F.lit(None).cast("array<string>").alias("paths"),
                F.lit(None).cast("array<bigint>").alias("starts"),
                F.lit(None).cast("array<bigint>").alias("ends"),
                "content",
            )
        )
    work = frames[0]
    for other in frames[1:]:
        work = work.unionByName(other)

    # Map: each group tallied once, cut into key ranges (persisted: the later stages read the
    # ranges, never tally again).
    tallied = sc.accumulator(0)
    ranges = args.partitions or max(2, min(200, 2 * len(groups)))
    blobs = work.mapInArrow(tally_groups(args.polybook, flags, ranges, tallied), BLOBS)
    blobs = blobs.persist(StorageLevel.MEMORY_AND_DISK)

    # Reduce: each range's tallies (one per group) summed by polybook into the dataset's part file
    # of that range, written where the output is: no row of a tally goes through the JVM or Python.
    os.makedirs(output, exist_ok=True)
    for old in os.listdir(output):
        if old.startswith("part-") or old == "_SUCCESS":
            os.remove(os.path.join(output, old))
    written = (
        blobs.repartitionByRange(ranges, "range")
        .sortWithinPartitions("range", "input")
        .mapInArrow(merge_ranges(args.polybook, output), "range int, rows long")
        .collect()
    )
    # What the job did, beside the dataset (a name starting with `_`: not a part of it).
    report = {
        "pieces": len(pieces),
        "tasks": len(groups),
        "pieces_tallied": tallied.value,
        "parts": len(written),
        "rows": sum(r.rows for r in written),
    }
    with open(os.path.join(output, "_polybook_job.json"), "w") as f:
        json.dump(report, f)
    open(os.path.join(output, "_SUCCESS"), "w").close()
    print(
        f"build_book.py: {report['rows']} rows in {report['parts']} part files; "
        f"{report['pieces_tallied']} pieces tallied of {report['pieces']}, in {report['tasks']} tasks",
        file=sys.stderr,
        flush=True,
    )
    spark.stop()


if __name__ == "__main__":
    main()
