#!/usr/bin/env python3
"""The games explorer's speed and size: `polybook explore GAMES` against `polybook build` on the
same games, then its queries through loopback with every filter on.

- Start-up: the games (decompressed once, COPIES plain copies of the file in a folder: 1 copy of
  the GNU Chess collection is 145,716 games, 7 copies about a million) are read by `polybook build`
  (its default options, and `--max-ply 50`) and by `polybook explore` (until it prints its URL),
  alternated RUNS times; the ratio is explore's games/s over build's, in the same run.
- Memory: what explore says its index holds, and its resident set (VmRSS, VmHWM) once serving,
  per game and per game-ply indexed.
- Queries: positions from random walks down the games' own moves (weighted by games, 0 to 16
  plies deep, seeded), each asked with every filter on, over one kept-alive connection; the round
  trip's p50, p99 and max, and the start position (every game) apart.

    cargo build --release
    python3 bench/explore_games.py                         # 145,716 GNU Chess games
    python3 bench/explore_games.py --copies 7 --runs 1     # about a million
    python3 bench/explore_games.py --games tests/data/pgn/lichess_magnus_2018-2022.pgn.xz --player DrNykterstein
"""

import argparse
import http.client
import lzma
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.parse


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", default="tests/data/pgn/gnuchess-book_1.02.pgn.xz")
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--player")
    ap.add_argument("--bin", default="target/release/polybook")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="explore-games-", ignore_cleanup_errors=True) as work:
        first = os.path.join(work, "games-1.pgn")
        opener = lzma.open if args.games.endswith(".xz") else open
        with opener(args.games, "rb") as src, open(first, "wb") as dst:
            shutil.copyfileobj(src, dst)
        for i in range(2, args.copies + 1):
            os.link(first, os.path.join(work, f"games-{i}.pgn"))
        player = ["--player", args.player] if args.player else []

        builds, builds50, explores = [], [], []
        for run in range(args.runs):
            builds.append(timed([args.bin, "build", work, "-o", os.path.join(work, "b.bin"), "-q"]))
            builds50.append(timed([args.bin, "build", work, "-o", os.path.join(work, "b.bin"), "-q",
                                   "--max-ply", "50"]))
            start = time.perf_counter()
            server = subprocess.Popen([args.bin, "explore", work, "--port", "0", "--quiet", *player],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            url = server.stdout.readline().strip()
            explores.append(time.perf_counter() - start)
            said = server.stderr.readline().strip()
            if run < args.runs - 1:
                server.terminate()
                server.wait()
        print(f"explore said: {said}")
        m = re.search(r"([\d,]+) games indexed \(([\d,]+) plies, (\d+) MiB\)", said)
        games, plies, mib = int(m[1].replace(",", "")), int(m[2].replace(",", "")), int(m[3])
        read = None
        out = subprocess.run([args.bin, "build", work, "-o", os.path.join(work, "b.bin")],
                             capture_output=True, text=True, check=True)
        out = out.stdout + out.stderr
        read = int(re.search(r"games: (\d+) read", out)[1])
        b, b50, e = statistics.median(builds), statistics.median(builds50), statistics.median(explores)
        print(f"games: {read} read by build, {games} indexed by explore ({plies} plies)")
        print(f"build: {b:.2f} s ({read / b:,.0f} games/s); build --max-ply 50: {b50:.2f} s "
              f"({read / b50:,.0f} games/s); explore to its URL: {e:.2f} s ({read / e:,.0f} games/s)")
        print(f"explore/build games/s: {b / e:.2f} (default build), {b50 / e:.2f} (--max-ply 50); "
              f"runs: {', '.join(f'{x:.2f}/{y:.2f}/{z:.2f}' for x, y, z in zip(builds, builds50, explores))}")
        rss, hwm = status_kb(server.pid, "VmRSS"), status_kb(server.pid, "VmHWM")
        print(f"memory: index {mib} MiB = {mib * 2**20 / plies:.1f} bytes per game-ply, "
              f"{mib * 2**20 / games:.0f} per game; VmRSS {rss // 1024} MiB "
              f"({rss * 1024 / plies:.1f} bytes per game-ply), VmHWM {hwm // 1024} MiB")

        host = urllib.parse.urlparse(url).netloc
        conn = http.client.HTTPConnection(host, timeout=30)

        def get(params):
            conn.request("GET", "/api/games?" + urllib.parse.urlencode(params))
            reply = conn.getresponse()
            body = reply.read()
            assert reply.status == 200, body
            return body

        import json
        rng = random.Random(20261126)
        positions = []
        while len(positions) < 200:
            line = []
            for _ in range(rng.randint(0, 16)):
                moves = json.loads(get({"moves": " ".join(line)}))["moves"]
                if not moves:
                    break
                pick = rng.choices(moves, weights=[m["games"] for m in moves])[0]
                line.append(pick["uci"])
            positions.append(" ".join(line))
        filters = {"speed": "bullet,blitz,rapid,classical,unknown", "mode": "all",
                   "rating": "2000-2900", "since": "1800-01", "until": "2030-12",
                   "result": "win,draw", "opponent": "an"}
        if args.player:
            filters["color"] = "white"
        times = []
        for i in range(args.requests):
            params = {"moves": positions[i % len(positions)], **filters}
            start = time.perf_counter()
            get(params)
            times.append((time.perf_counter() - start) * 1000)
        starts = []
        for _ in range(50):
            start = time.perf_counter()
            answer = get(filters)
            starts.append((time.perf_counter() - start) * 1000)
        answer = json.loads(answer)
        print(f"queries, every filter on ({args.requests}, 200 positions): p50 {quantile(times, 0.5):.2f} ms, "
              f"p99 {quantile(times, 0.99):.2f} ms, max {max(times):.2f} ms")
        print(f"the start position ({answer['games']} games pass the filters): "
              f"p50 {quantile(starts, 0.5):.2f} ms, max {max(starts):.2f} ms")
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
