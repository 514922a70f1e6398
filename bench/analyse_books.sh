#!/usr/bin/env bash
# `polybook analyse` on every real book in tests/data/books: for each, its entries, the saturation
# (book positions the walk reached), the positions analysed, the time, what --max-loss pruned, and
# the root's value, as one Markdown table row.
# Usage: bench/analyse_books.sh   (from the repository's root)
#   NODES=2000 MAX_LOSS=50 CONCURRENCY=1 WORK=bench/out/analyse-books BIN=target/release/polybook
# The analyses are resumable: run it again after an interruption and finished books are reused.
set -euo pipefail
bin=${BIN:-target/release/polybook}
work=${WORK:-bench/out/analyse-books}
mkdir -p "$work"
echo "| book | entries | saturation | positions analysed | time | s/1000 positions | kept after --max-loss ${MAX_LOSS:-50} | root value |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for book in tests/data/books/*.bin; do
  name=$(basename "$book" .bin)
  size=$(stat -c %s "$book")
  [ "$size" -ge 32 ] || continue # the empty and one-entry books
  out=$work/$name.bin
  log=$work/$name.log
  if [ ! -f "$out" ]; then
    "$bin" analyse "$book" -o "$out" --nodes "${NODES:-2000}" --max-loss "${MAX_LOSS:-50}" \
      --concurrency "${CONCURRENCY:-1}" --resume --quiet > "$log" 2>&1 || { echo "| $name | failed: $(tail -1 "$log") |"; continue; }
  fi
  python3 - "$name" "$((size / 16))" "$log" <<'PY'
import re, sys
name, entries, log = sys.argv[1], int(sys.argv[2]), open(sys.argv[3]).read()
sat = re.search(r"reached (\d+) of its (\d+) positions \(saturation ([\d.]+) %\)", log)
done = re.search(r"(\d+) entries, (\d+) scored, (\d+) pruned by --max-loss; (\d+) positions analysed \((\d+) from the cache\) in ([\d.]+) s; the root's value (\S+)", log)
kept, analysed, secs = int(done[1]), int(done[4]), float(done[6])
print(f"| {name} | {entries:,} | {sat[3]} % ({int(sat[1]):,} of {int(sat[2]):,}) | {analysed:,} | {secs:.1f} s | {1000 * secs / max(analysed, 1):.2f} | {kept:,} ({int(done[3]):,} pruned) | {done[7]} |")
PY
done
