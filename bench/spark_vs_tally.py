#!/usr/bin/env python3
"""The Spark job (spark/build_book.py) against `polybook tally --threads 2` on the same files, in
the same run: wall and CPU time, on `local[2]` and on a standalone cluster of two one-core workers
(separate JVMs, from pyspark's own spark-class), less the job's fixed start-up (its wall time on a
one-game input); the shuffle's bytes per (position, move) pair written; and the book checked
against `polybook build`.

    cargo build --release
    python3 bench/spark_vs_tally.py                       # 145,716 GNU Chess games in 8 files, 7 times: 1,020,012 games
    python3 bench/spark_vs_tally.py --copies 1            # the 145,716 games alone
    python3 bench/spark_vs_tally.py --random 1000000      # examples/random_pgn: distinct games
"""

import argparse
import glob
import json
import lzma
import os
import socket
import subprocess
import tempfile
import time

import pyspark

SPARK_BIN = os.path.join(os.path.dirname(pyspark.__file__), "bin")
ENV = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON="python3")


def timed(cmd, **kw):
    """Runs cmd; its wall time and its CPU time (user + system, children included)."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, **kw)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def shuffle_bytes(log_dir):
    """Shuffle bytes written, from the newest Spark event log in log_dir."""
    logs = sorted(glob.glob(os.path.join(log_dir, "*", "events_*")) + glob.glob(os.path.join(log_dir, "*.*")),
                  key=os.path.getmtime)
    total = 0
    with open(logs[-1]) as f:
        for line in f:
            e = json.loads(line)
            if e["Event"] == "SparkListenerTaskEnd" and e.get("Task Metrics"):
                total += e["Task Metrics"]["Shuffle Write Metrics"]["Shuffle Bytes Written"]
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", default="tests/data/pgn/gnuchess-book_1.02.pgn.xz")
    ap.add_argument("--files", type=int, default=8, help="the games cut into this many files")
    ap.add_argument("--copies", type=int, default=7, help="the files repeated this many times")
    ap.add_argument("--random", type=int, default=0, help="instead, this many distinct random games")
    ap.add_argument("--bin", default="target/release/polybook")
    ap.add_argument("--no-cluster", action="store_true")
    args = ap.parse_args()
    polybook = os.path.abspath(args.bin)
    with tempfile.TemporaryDirectory(prefix="spark-vs-tally-", ignore_cleanup_errors=True) as work:
        games_dir = os.path.join(work, "games")
        os.makedirs(games_dir)
        if args.random:
            per = args.random // args.files
            for i in range(args.files):
                with open(os.path.join(games_dir, f"random_{i}.pgn"), "wb") as f:
                    subprocess.run(["cargo", "run", "-q", "--release", "--example", "random_pgn", "--",
                                    str(per), str(i + 1)], stdout=f, check=True)
        else:
            text = (lzma.open if args.games.endswith(".xz") else open)(args.games, "rb").read()
            games = text.split(b"\n\n[Event ")
            n = len(games)
            for i in range(args.files):
                part = b"\n\n[Event ".join(games[i * n // args.files:(i + 1) * n // args.files])
                first = os.path.join(games_dir, f"games_{i}_0.pgn")
                with open(first, "wb") as f:
                    f.write((b"[Event " if i else b"") + part.rstrip(b"\n") + b"\n")
                for c in range(1, args.copies):
                    os.link(first, os.path.join(games_dir, f"games_{i}_{c}.pgn"))
        one = os.path.join(work, "one.pgn")
        with open(one, "w") as f:
            f.write('[Result "1-0"]\n\n1. e4 e5 1-0\n')
        size = sum(os.path.getsize(p) for p in glob.glob(games_dir + "/*"))
        logs = os.path.join(work, "logs")
        os.makedirs(logs)

        def job(master, inputs, out, extra=()):
            cmd = [os.path.join(SPARK_BIN, "spark-submit"), "--master", master,
                   "--conf", "spark.ui.enabled=false", "--conf", "spark.eventLog.enabled=true",
                   "--conf", "spark.eventLog.compress=false", "--conf", f"spark.eventLog.dir=file://{logs}",
                   *extra, "spark/build_book.py", *inputs, "--output", out]
            cmd += ["--polybook", "polybook" if master.startswith("spark:") else polybook]
            return timed(cmd)

        out = subprocess.run([polybook, "tally", games_dir, "-o", os.path.join(work, "t.parquet"), "--json",
                              "--threads", "2", "-q"], capture_output=True, text=True, check=True).stdout
        report = json.loads(out)
        print(f"input: {size / 2**20:.0f} MiB in {len(os.listdir(games_dir))} files; tally: {report}")
        tally = timed([polybook, "tally", games_dir, "-o", os.path.join(work, "t.parquet"), "--threads", "2", "-q"])
        local_one = job("local[2]", [one], os.path.join(work, "one"))
        local = job("local[2]", [games_dir], os.path.join(work, "local"))
        shuffled = shuffle_bytes(logs)
        with open(os.path.join(work, "local", "_polybook_job.json")) as f:
            done = json.load(f)
        rows = done["rows"]
        weights = ["--weights", "games", "--min-games", "1"]
        subprocess.run([polybook, "book", os.path.join(work, "local"), "-o", os.path.join(work, "s.bin"), "-q",
                        *weights], check=True)
        subprocess.run([polybook, "build", games_dir, "-o", os.path.join(work, "b.bin"), "-q", *weights], check=True)
        same = open(os.path.join(work, "s.bin"), "rb").read() == open(os.path.join(work, "b.bin"), "rb").read()
        tally2 = timed([polybook, "tally", games_dir, "-o", os.path.join(work, "t.parquet"), "--threads", "2", "-q"])
        t = min(tally[0], tally2[0])
        print(f"polybook tally --threads 2: {tally[0]:.2f} s, {tally2[0]:.2f} s wall (CPU {tally[1]:.2f} s)")
        print(f"job, local[2], one game: {local_one[0]:.1f} s wall (the start-up)")
        print(f"job, local[2]: {local[0]:.1f} s wall, CPU {local[1]:.1f} s; less the start-up {local[0] - local_one[0]:.1f} s "
              f"= {(local[0] - local_one[0]) / t:.1f}x tally; {done}")
        print(f"shuffle: {shuffled / 2**20:.1f} MiB written, {shuffled / rows:.1f} bytes per pair of the dataset; "
              f"the book {'is' if same else 'is NOT'} build's")
        if args.no_cluster:
            return
        port = socket.socket()
        port.bind(("127.0.0.1", 0))
        master_port = port.getsockname()[1]
        port.close()
        url = f"spark://127.0.0.1:{master_port}"
        env = dict(ENV, SPARK_NO_DAEMONIZE="1")
        cls = os.path.join(SPARK_BIN, "spark-class")
        procs = [subprocess.Popen([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                                   str(master_port), "--webui-port", "0"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        time.sleep(5)
        for i in range(2):
            procs.append(subprocess.Popen([cls, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                           "--cores", "1", "--memory", "2g", "--webui-port", "0",
                                           "--work-dir", os.path.join(work, f"w{i}")], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(8)
        try:
            files = ["--files", polybook, "--conf", "spark.executor.memory=2g"]
            cluster_one = job(url, [one], os.path.join(work, "cone"), files)
            cluster = job(url, [games_dir], os.path.join(work, "cluster"), files)
            print(f"job, 2-worker cluster, one game: {cluster_one[0]:.1f} s wall")
            print(f"job, 2-worker cluster: {cluster[0]:.1f} s wall (driver CPU {cluster[1]:.1f} s); less the start-up "
                  f"{cluster[0] - cluster_one[0]:.1f} s = {(cluster[0] - cluster_one[0]) / t:.1f}x tally")
        finally:
            for p in reversed(procs):
                p.terminate()
                p.wait()


if __name__ == "__main__":
    main()
