#!/usr/bin/env bash
# Nodes per second of Lazy SMP: `polybook search --nodes N` with 1 thread and with 2 (or THREADS)
# on a few positions, alternated in the same run so that the machine's load falls on both alike.
# For each run: wall time and CPU time (user + system, /usr/bin/time), nodes/s of wall time, and
# nodes per CPU second (the threads' own speed, whatever share of the cores the machine gave them).
# Usage: bench/smp_speed.sh [BINARY] [NODES] [ROUNDS]   (from the repository's root; defaults
#   target/release/polybook, 5000000, 3; THREADS=2)
set -euo pipefail
bin=${1:-target/release/polybook} nodes=${2:-5000000} rounds=${3:-3} threads=${THREADS:-2}
fens=("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
      "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10"
      "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19"
      "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for fen in "${fens[@]}"; do
    for t in 1 "$threads"; do
      /usr/bin/time -f "$t %e %U %S" -a -o "$work/times" \
        "$bin" search --fen "$fen" --nodes "$nodes" --threads "$t" --hash 64 > /dev/null
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v n="$nodes" '{ wall[$1] += $2; cpu[$1] += $3 + $4; runs[$1]++ }
  END { for (t in wall) printf "threads %s: %d runs, %.0f nodes/s (wall), %.0f nodes per CPU second, %.2f cores busy\n",
          t, runs[t], n * runs[t] / wall[t], n * runs[t] / cpu[t], cpu[t] / wall[t] }' "$work/times" | sort
