#!/usr/bin/env bash
# polybook tally and book against polybook build on the same games, alternated RUNS times:
# wall time, CPU time and peak memory of each, the tally's size, and the ratios of each run.
#   bench/tally_vs_build.sh GAMES.pgn[.xz] [RUNS]
set -euo pipefail
games=$1
runs=${2:-3}
bin=${POLYBOOK:-target/release/polybook}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
case $games in
  *.xz) xz -dc "$games" > "$dir/games.pgn" ;;
  *) cp "$games" "$dir/games.pgn" ;;
esac
measure() { # label, command...: prints "label wall_s cpu_s peak_kb"
  local label=$1; shift
  /usr/bin/time -f "$label %e %U %S %M" "$@" 2>&1 >/dev/null | tail -1 |
    awk '{printf "%s %.2f %.2f %d\n", $1, $2, $3 + $4, $5}'
}
opts=(--weights games --min-games 1)
echo "run  build(s wall, cpu, KB)  tally(s wall, cpu, KB)  book(s wall, cpu, KB)  tally/build  build/book"
for r in $(seq "$runs"); do
  b=$(measure build "$bin" build "$dir/games.pgn" -o "$dir/build.bin" -q "${opts[@]}")
  t=$(measure tally "$bin" tally "$dir/games.pgn" -o "$dir/t.parquet" -q)
  k=$(measure book "$bin" book "$dir/t.parquet" -o "$dir/book.bin" -q "${opts[@]}")
  cmp -s "$dir/build.bin" "$dir/book.bin" || { echo "the books differ" >&2; exit 1; }
  read -r _ bw bc bm <<< "$b"; read -r _ tw tc tm <<< "$t"; read -r _ kw kc km <<< "$k"
  echo "$r  $bw $bc $bm  $tw $tc $tm  $kw $kc $km  $(echo "scale=2; $tw / $bw" | bc)  $(echo "scale=1; $bw / $kw" | bc)"
done
pairs=$("$bin" tally "$dir/games.pgn" -o "$dir/t.parquet" --json -q | sed 's/.*"entries":\([0-9]*\).*/\1/')
size=$(stat -c %s "$dir/t.parquet")
echo "tally: $size bytes, $pairs pairs, $(echo "scale=2; $size / $pairs" | bc) bytes a pair"
for mem in 64M 128M 256M; do
  m=$(measure "memory-$mem" "$bin" tally "$dir/games.pgn" -o "$dir/m.parquet" -q --memory "$mem")
  cmp -s "$dir/t.parquet" "$dir/m.parquet" || { echo "--memory $mem: another tally" >&2; exit 1; }
  echo "--memory $mem: $m (wall s, cpu s, peak KB)"
done
