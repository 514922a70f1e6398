#!/usr/bin/env python3
"""Times `polybook probe --epd FILE --json` against python-chess's find_all on the same positions.

Collects N positions breadth first from a book's tree (every position reachable from the start by
book moves), then times
  - python-chess: chess.Board(fen) + list(reader.find_all(board, minimum_weight=0)) per position
    (the reader opened once), and
  - polybook: one `probe --epd FILE --json` process for all of them (start-up and JSON output included),
and prints both with their ratio. Checks that both list the same moves.
Usage: bench/probe_speed.py [BOOK] [--positions 10000] [--polybook target/release/polybook] [--repeat 3]
       bench/probe_speed.py [BOOK] --write-epd POS.epd   (only write the positions)
"""
import argparse, collections, json, resource, subprocess, sys, tempfile, time
import chess, chess.polyglot

ap = argparse.ArgumentParser()
ap.add_argument("book", nargs="?", default="tests/data/books/gnuchess.bin")
ap.add_argument("--positions", type=int, default=10000)
ap.add_argument("--polybook", default="target/release/polybook")
ap.add_argument("--repeat", type=int, default=3)
ap.add_argument("--write-epd", metavar="FILE", help="write the positions to FILE and stop (POS.epd in BENCHMARKS.md)")
a = ap.parse_args()

with chess.polyglot.open_reader(a.book) as reader:
    start = chess.Board()
    seen, fens, queue = {chess.polyglot.zobrist_hash(start)}, [], collections.deque([start])
    while queue and len(fens) < a.positions:
        board = queue.popleft()
        fens.append(board.fen())
        for e in reader.find_all(board, minimum_weight=0):
            child = board.copy(stack=False); child.push(e.move)
            k = chess.polyglot.zobrist_hash(child)
            if k not in seen:
                seen.add(k); queue.append(child)

if a.write_epd:
    with open(a.write_epd, "w") as f:
        f.write("\n".join(fens) + "\n")
    sys.exit(0)

with tempfile.NamedTemporaryFile("w", suffix=".epd", delete=False) as f:
    f.write("\n".join(fens) + "\n"); epd = f.name

def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

# Wall time and CPU time (user + system) of each side; on a busy machine the CPU times are the
# steadier comparison.
best_py = best_pb = cpu_py = cpu_pb = float("inf")
for _ in range(a.repeat):
    with chess.polyglot.open_reader(a.book) as reader:
        t0, c0 = time.perf_counter(), time.process_time()
        expected = [[(e.move.uci(), e.weight, e.learn) for e in reader.find_all(chess.Board(fen), minimum_weight=0)] for fen in fens]
        best_py, cpu_py = min(best_py, time.perf_counter() - t0), min(cpu_py, time.process_time() - c0)
    t0, c0 = time.perf_counter(), child_cpu()
    out = subprocess.run([a.polybook, "probe", a.book, "--epd", epd, "--json"], capture_output=True, text=True, check=True)
    best_pb, cpu_pb = min(best_pb, time.perf_counter() - t0), min(cpu_pb, child_cpu() - c0)

got = [[(e["uci"], e["weight"], e["learn"]) for e in json.loads(l)["entries"]] for l in out.stdout.splitlines()]
same = got == expected
n = len(fens)
print(f"book {a.book}: {n} positions (best of {a.repeat})")
print(f"python-chess find_all: wall {best_py:.3f} s ({best_py * 1e6 / n:.1f} us/position), CPU {cpu_py:.3f} s")
print(f"polybook probe --epd:  wall {best_pb:.3f} s ({best_pb * 1e6 / n:.1f} us/position), CPU {cpu_pb:.3f} s (one process, start-up and JSON output included)")
print(f"ratio (python-chess / polybook): wall {best_py / best_pb:.1f}x, CPU {cpu_py / max(cpu_pb, 1e-6):.1f}x; same answers: {'yes' if same else 'NO'}")
sys.exit(0 if same else 1)
