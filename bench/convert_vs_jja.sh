#!/usr/bin/env bash
# `polybook convert BIG.abk -o OUT.bin` against jja's conversion of the same Arena book
# (`jja edit BIG.abk -o OUT.bin`), alternated RUNS times: wall time, CPU time and peak memory of
# each, entries written and entries a second, then the medians and the ratio jja / polybook.
#   bench/convert_vs_jja.sh [SOURCE] [RUNS]
# SOURCE: a Polyglot book (default tests/data/books/gnuchess.bin), or PGN games (.pgn or .pgn.xz)
# built into one with `build --weights games --min-games 1`. The Arena book is
# `polybook convert SOURCE -o big.abk`. Mind jja's memory: 2.4 GB for gnuchess.bin's 142,776
# records; on the 5.4 M-entry book of GNU Chess's games (tests/data/pgn/gnuchess-book_1.02.pgn.xz,
# 2.89 M records) it passed 14 GB without finishing (docs/benchmarks-log.md).
# POLYBOOK names polybook's binary (default target/release/polybook), JJA jja's (default `jja`);
# without jja only polybook is timed.
set -euo pipefail
src=${1:-tests/data/books/gnuchess.bin}
runs=${2:-3}
bin=${POLYBOOK:-target/release/polybook}
jja=${JJA:-jja}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
case $src in
  *.pgn.xz) xz -dc "$src" > "$dir/games.pgn" ;;
  *.pgn) cp "$src" "$dir/games.pgn" ;;
  *) cp "$src" "$dir/big.bin" ;;
esac
if [ -f "$dir/games.pgn" ]; then
  "$bin" build "$dir/games.pgn" -o "$dir/big.bin" -q --weights games --min-games 1
  rm "$dir/games.pgn"
fi
"$bin" convert "$dir/big.bin" -o "$dir/big.abk" >/dev/null
records=$(( ($(stat -c %s "$dir/big.abk") - 25200) / 28 ))
echo "source: $(( $(stat -c %s "$dir/big.bin") / 16 )) entries; big.abk: $records records, $(stat -c %s "$dir/big.abk") bytes"
have_jja=0
command -v "$jja" >/dev/null 2>&1 && have_jja=1
[ $have_jja = 1 ] || echo "no jja ($jja): timing polybook alone"

measure() { # label, command...: prints "wall_s cpu_s peak_kb"
  /usr/bin/time -f "%e %U %S %M" "$@" 2>&1 >/dev/null | tail -1 |
    awk '{printf "%.2f %.2f %d\n", $1, $2 + $3, $4}'
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "run  polybook(s wall, cpu, KB)  jja(s wall, cpu, KB)  jja/polybook wall, cpu"
pw=(); pc=(); jw=(); jc=()
for r in $(seq "$runs"); do
  rm -f "$dir/p.bin" "$dir/j.bin"
  read -r a b c <<< "$(measure "$bin" convert "$dir/big.abk" -o "$dir/p.bin")"
  pw+=("$a"); pc+=("$b"); line="$r  $a $b $c"
  if [ $have_jja = 1 ]; then
    # jja refuses an existing output file, hence the rm above; its progress bar goes to stderr.
    read -r d e f <<< "$(measure "$jja" edit "$dir/big.abk" -o "$dir/j.bin")"
    jw+=("$d"); jc+=("$e")
    line="$line  $d $e $f  $(echo "scale=2; $d / $a" | bc) $(echo "scale=2; $e / $b" | bc)"
  fi
  echo "$line"
done
pe=$(( $(stat -c %s "$dir/p.bin") / 16 ))
mpw=$(printf '%s\n' "${pw[@]}" | median); mpc=$(printf '%s\n' "${pc[@]}" | median)
echo "polybook: $pe entries written; median $mpw s wall, $mpc s CPU; $(echo "$records / $mpw" | bc) records/s wall"
if [ $have_jja = 1 ]; then
  je=$(( $(stat -c %s "$dir/j.bin") / 16 ))
  mjw=$(printf '%s\n' "${jw[@]}" | median); mjc=$(printf '%s\n' "${jc[@]}" | median)
  echo "jja: $je entries written; median $mjw s wall, $mjc s CPU; $(echo "$records / $mjw" | bc) records/s wall"
  echo "jja / polybook, medians: wall $(echo "scale=2; $mjw / $mpw" | bc), CPU $(echo "scale=2; $mjc / $mpc" | bc)"
fi
