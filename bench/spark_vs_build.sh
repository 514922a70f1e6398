#!/usr/bin/env bash
# The Spark job (spark/build_book.py, --master local[2]) against polybook build on the same files:
# wall times, and the books compared. Also one core's tally rate on the same games.
#   bench/spark_vs_build.sh FILE.pgn...
set -euo pipefail
bin=$(realpath "${POLYBOOK:-target/release/polybook}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
opts=(--weights games --min-games 1)
start=$(date +%s.%N)
SPARK_LOCAL_IP=127.0.0.1 python3 "$(dirname "$0")/../spark/build_book.py" --master 'local[2]' --polybook "$bin" \
  "$@" --output "$dir/tally" >/dev/null 2>"$dir/spark.log"
"$bin" book "$dir/tally" -o "$dir/spark.bin" -q "${opts[@]}"
spark=$(echo "$(date +%s.%N) - $start" | bc)
start=$(date +%s.%N)
"$bin" build "$@" -o "$dir/build.bin" -q "${opts[@]}"
build=$(echo "$(date +%s.%N) - $start" | bc)
cmp "$dir/spark.bin" "$dir/build.bin" && echo "the books are identical"
printf 'spark job + book: %.1f s; build: %.2f s; ratio %.0f\n' "$spark" "$build" "$(echo "$spark / $build" | bc -l)"

/usr/bin/time -f 'one core: %e s wall, %U s user' "$bin" tally "$@" -o "$dir/one.parquet" --threads 1 --json -q |
  sed 's/.*"games":\([0-9]*\).*"plies":\([0-9]*\).*/games \1, plies \2/'
