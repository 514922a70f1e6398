#!/usr/bin/env python3
"""How long `polybook uci` takes to answer `isready`, over a random stream of UCI commands.

Sends N random commands (positions, searches of every kind, stop, ponderhit, ucinewgame,
setoption, garbage), each followed by `isready`, and times each `readyok` from the moment the
`isready` line was written. Prints p50, p99 and max, and the commands before the slowest answers.

    cargo build --release
    python3 bench/isready_latency.py                       # 1,000 commands, seed 1
    python3 bench/isready_latency.py --commands 5000 --seed 7 --binary target/release/polybook

A `setoption name Hash` or `ucinewgame` may legitimately delay the next `readyok` (the table
is cleared); the report lists the slowest answers with what came before them.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import threading
import queue
import time

FENS = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
    "8/8/8/8/k2Pp2Q/8/8/4K3 b - d3 0 1",
    "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
]
MOVES = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"]


def random_command(rng):
    r = rng.random()
    if r < 0.20:
        if rng.random() < 0.5:
            n = rng.randrange(len(MOVES) + 1)
            return "position startpos" + (" moves " + " ".join(MOVES[:n]) if n else "")
        return "position fen " + rng.choice(FENS)
    if r < 0.45:
        kind = rng.randrange(7)
        if kind == 0:
            return f"go depth {rng.randint(1, 30)}"
        if kind == 1:
            return f"go movetime {rng.randint(1, 500)}"
        if kind == 2:
            return f"go nodes {rng.randint(1, 2_000_000)}"
        if kind == 3:
            return "go infinite"
        if kind == 4:
            return f"go ponder wtime {rng.randint(100, 60000)} btime {rng.randint(100, 60000)}"
        if kind == 5:
            return f"go mate {rng.randint(1, 6)}"
        return f"go wtime {rng.randint(10, 60000)} btime {rng.randint(10, 60000)} winc 100 binc 100"
    if r < 0.60:
        return "stop"
    if r < 0.65:
        return "ponderhit"
    if r < 0.72:
        return "ucinewgame"
    if r < 0.80:
        option = rng.choice(
            [
                f"Hash value {rng.choice([1, 16, 64, 256, 1024])}",
                "Clear Hash",
                f"NullMove value {rng.choice(['true', 'false'])}",
                f"Move Overhead value {rng.randint(0, 100)}",
                "OwnBook value false",
            ]
        )
        return "setoption name " + option
    if r < 0.85:
        return rng.choice(["d", "eval", "debug on", "uci"])
    return rng.choice(["", "xyzzy", "go depth", "position fen nonsense", "setoption", "isready"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default="target/release/polybook")
    ap.add_argument("--commands", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=8, help="slowest answers to list")
    args = ap.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"{args.binary}: not found; run `cargo build --release` first")

    rng = random.Random(args.seed)
    engine = subprocess.Popen(
        [args.binary, "uci"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    ready = queue.Queue()

    def reader():
        for line in engine.stdout:
            if line.strip() == "readyok":
                ready.put(time.perf_counter())
        ready.put(None)

    threading.Thread(target=reader, daemon=True).start()

    def send(line):
        engine.stdin.write(line + "\n")
        engine.stdin.flush()

    send("uci")
    samples = []
    history = []
    for _ in range(args.commands):
        cmd = random_command(rng)
        history.append(cmd)
        send(cmd)
        # An `isready` among the random commands is answered too: count it.
        extra = cmd.strip() == "isready"
        t0 = time.perf_counter()
        send("isready")
        for _ in range(1 + extra):
            t1 = ready.get(timeout=30)
            if t1 is None:
                sys.exit("polybook exited")
        samples.append((t1 - t0, list(history[-3:])))
    send("quit")
    engine.wait(timeout=30)

    times = sorted(s for s, _ in samples)
    # The answers right after a command that clears or reallocates the hash table, which may
    # legitimately wait for it; the others should not wait for anything.
    clears = ("ucinewgame", "setoption name Hash", "setoption name Clear Hash")
    others = sorted(s for s, before in samples if not before[-1].startswith(clears))
    ms = lambda s: f"{s * 1000:.1f} ms"
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"{len(times)} isready answers: p50 {ms(statistics.median(times))}, p99 {ms(p99)}, max {ms(times[-1])}")
    print(f"{len(others)} of them not right after a hash clear or resize: max {ms(others[-1])}")
    print("slowest, with the commands before them:")
    for s, before in sorted(samples, key=lambda x: -x[0])[: args.show]:
        print(f"  {ms(s):>9}  after {' | '.join(before)}")
    print("slowest not right after a hash clear or resize:")
    rest = [x for x in samples if not x[1][-1].startswith(clears)]
    for s, before in sorted(rest, key=lambda x: -x[0])[: args.show]:
        print(f"  {ms(s):>9}  after {' | '.join(before)}")


if __name__ == "__main__":
    main()
