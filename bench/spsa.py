#!/usr/bin/env python3
"""SPSA tuning of the search's numbers by games, as OpenBench tunes them.

Usage (from the repository's root):
  cargo build --release --features spsa && cp target/release/polybook /tmp/polybook-spsa
  bench/spsa.py /tmp/polybook-spsa --state spsa.json [--iterations 2000] [--pairs 4]
      [--nodes 6000 | --tc 2+0.02] [--concurrency N (default: the cores)] [--params REGEX] [--seed 1]

The binary is a build with the `spsa` feature: each number of src/engine/parameters.rs that games
can tune is a UCI spin option there (its name, its default, its range). Each iteration perturbs
every tuned number by +c or -c (a random sign each, the same draw for both sides: one side
gets value + c*flip, the other value - c*flip, integers rounded at random as OpenBench rounds
them), plays --pairs colour-swapped pairs of games between the two (`polybook match`, openings
from books/bundled.bin), and moves each number by r * c * (wins - losses) * flip. c and r shrink
over the iterations by OpenBench's schedule (alpha 0.602, gamma 0.101, A = 0.1 x iterations;
c_end = a twentieth of the range, r_end = 0.002, as OpenBench's usual inputs).

Resumable: the state (every number's value, the iteration, the settings) is written to --state
after each iteration, and the same command goes on from it; Ctrl-C loses only the iteration being
played. --state.csv gets one line per iteration (the games' result and every value). At the end
(or with --report), the values are printed as `NAME = value` lines for parameters.rs and as
`--option` arguments for an SPRT of the tuned values against the defaults.

Without --params every number is tuned except the steps that are off (default 0 at the bottom of
their range, e.g. IIR_MIN_DEPTH: 0 means the step is not taken); --params that names one tunes it.
"""
import argparse
import csv
import json
import math
import os
import random
import re
import subprocess
import sys

ALPHA, GAMMA, A_RATIO, R_END = 0.602, 0.101, 0.1, 0.002


# Every tunable: the spin options in capitals (Hash and Threads are not).
ALL = r"^[A-Z][A-Z0-9_]*$"


def tunables(binary, pattern):
    """The spin options of the binary whose names match `pattern`: name -> (default, min, max)."""
    out = subprocess.run([binary, "uci"], input="uci\nquit\n", capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"option name (\S+) type spin default (-?\d+) min (-?\d+) max (-?\d+)$", line)
        if m and re.search(pattern, m.group(1)):
            found[m.group(1)] = tuple(int(v) for v in m.group(2, 3, 4))
    return found


def new_state(args):
    params = tunables(args.binary, args.params or ALL)
    if args.params is None:
        params = {n: v for n, v in params.items() if not v[0] == v[1] == 0}
    if not params:
        sys.exit(f"spsa.py: {args.binary} offers no spin option matching {args.params or ALL!r}: "
                 "build it with --features spsa")
    state = {"settings": {k: getattr(args, k) for k in
                          ("iterations", "pairs", "nodes", "tc", "seed", "params", "book")},
             "iteration": 0, "params": {}}
    n = args.iterations
    for name, (default, lo, hi) in params.items():
        c_end = max((hi - lo) / 20, 0.5)
        a_end = R_END * c_end ** 2
        state["params"][name] = {
            "value": float(default), "start": default, "min": lo, "max": hi,
            "c": c_end * n ** GAMMA, "a": a_end * (A_RATIO * n + n) ** ALPHA,
        }
    return state


def save(path, state):
    tmp = path + ".part"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def play(args, dev, base, seed):
    """Plays the iteration's pairs; returns (wins, draws, losses) of the `dev` values."""
    limit = ["--nodes", str(args.nodes)] if args.tc is None else ["--tc", args.tc]
    cmd = [args.binary, "match", "--engine", f"Dev=cmd:{args.binary} uci",
           "--engine", f"Base=cmd:{args.binary} uci", "--each", "Hash=16",
           "--book", args.book, "--games", str(2 * args.pairs), *limit,
           "--concurrency", str(args.concurrency), "--seed", str(seed), "--json", "--quiet"]
    for name, v in dev.items():
        cmd += ["--option", f"1:{name}={v}"]
    for name, v in base.items():
        cmd += ["--option", f"2:{name}={v}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode == 130:
        raise KeyboardInterrupt
    if done.returncode != 0:
        sys.exit(f"spsa.py: the match failed: {done.stderr.strip().splitlines()[-1:]}")
    report = json.loads(done.stdout)
    return report["wins"], report["draws"], report["losses"]


def report(state):
    params = state["params"]
    print(f"after {state['iteration']} iterations:")
    for name, p in params.items():
        v = round(p["value"])
        mark = "" if v == p["start"] else f"   (was {p['start']})"
        print(f"  {name} = {v}{mark}")
    options = " ".join(f"--option 1:{n}={round(p['value'])}" for n, p in params.items()
                       if round(p["value"]) != p["start"])
    print(f"SPRT of these against the defaults (one spsa binary):\n  {options or '(no change)'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--state", required=True)
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--nodes", type=int, default=6000)
    ap.add_argument("--tc")
    ap.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--params", help="a regular expression of the names to tune (default: all "
                    "but the steps that are off)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--book", default="books/bundled.bin")
    ap.add_argument("--report", action="store_true", help="print the values so far and stop")
    args = ap.parse_args()
    args.binary = os.path.realpath(args.binary)

    if os.path.exists(args.state):
        with open(args.state) as f:
            state = json.load(f)
        args.iterations = state["settings"]["iterations"]
        print(f"spsa.py: resuming {args.state} at iteration {state['iteration']}", file=sys.stderr)
    else:
        state = new_state(args)
        save(args.state, state)
    if args.report:
        report(state)
        return
    params = state["params"]
    names = list(params)
    log = open(args.state + ".csv", "a", newline="")
    writer = csv.writer(log)
    if log.tell() == 0:
        writer.writerow(["iteration", "wins", "draws", "losses", *names])
    n = args.iterations
    try:
        while state["iteration"] < n:
            k = state["iteration"] + 1
            rng = random.Random(args.seed * 1_000_003 + k)
            dev, base, steps = {}, {}, {}
            for name in names:
                p = params[name]
                c = max(p["c"] / k ** GAMMA, 0.5)
                r = p["a"] / (A_RATIO * n + k) ** ALPHA / c ** 2
                flip = rng.choice((-1, 1))
                u = rng.random()
                dev[name] = min(max(math.floor(p["value"] + flip * c + u), p["min"]), p["max"])
                base[name] = min(max(math.floor(p["value"] - flip * c + u), p["min"]), p["max"])
                steps[name] = (r * c * flip)
            wins, draws, losses = play(args, dev, base, args.seed * 1_000_003 + k)
            for name in names:
                p = params[name]
                p["value"] = min(max(p["value"] + steps[name] * (wins - losses), p["min"]), p["max"])
            state["iteration"] = k
            save(args.state, state)
            writer.writerow([k, wins, draws, losses, *(f"{params[n]['value']:.3f}" for n in names)])
            log.flush()
            print(f"iteration {k}/{n}: {wins}-{draws}-{losses}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"spsa.py: interrupted; {state['iteration']} iterations are in {args.state}",
              file=sys.stderr)
        sys.exit(130)
    report(state)


if __name__ == "__main__":
    main()
