#!/usr/bin/env bash
# Compares two polybook binaries in the same run, alternating them so that the machine's load falls
# on both alike: the `bench` signature and speed, and `build` on real PGN (wall and user CPU time,
# peak memory), checking that both write the same book. For changes that must not alter behaviour
# or speed (refactors): copy the old binary aside first.
# Usage: bench/old_vs_new.sh OLD_BINARY NEW_BINARY [ROUNDS]   (from the repository's root)
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,6p "$0"; exit 2; }
old=$1 new=$2 rounds=${3:-5}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
xz -dc tests/data/pgn/gnuchess-book_1.02.pgn.xz > "$work/gnuchess.pgn"
xz -dc tests/data/pgn/lichess_magnus_2018-2022.pgn.xz > "$work/lichess.pgn"

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo "bench (depth 10, 34 positions), $rounds rounds, alternating:"
for i in $(seq "$rounds"); do
  for which in old new; do
    bin=${!which}
    "$bin" bench 2>/dev/null | tail -1 | awk -v w="$which" '{print w, $1, $3}' >> "$work/bench"
  done
done
for which in old new; do
  nodes=$(awk -v w="$which" '$1==w {print $2}' "$work/bench" | sort -u | tr '\n' ' ')
  nps=$(awk -v w="$which" '$1==w {print $3}' "$work/bench" | median)
  echo "  $which: nodes $nodes median $nps nps"
done

# name | arguments after `build INPUT -o OUT`
cases=("gnuchess (defaults)|gnuchess.pgn|" "gnuchess --memory 16M (spills)|gnuchess.pgn|--memory 16M"
       "gnuchess --max-ply 30|gnuchess.pgn|--max-ply 30" "lichess (magnus 2018-2022)|lichess.pgn|")
for c in "${cases[@]}"; do
  IFS='|' read -r name input extra <<< "$c"
  : > "$work/times"
  for i in $(seq "$rounds"); do
    for which in old new; do
      bin=${!which}
      # shellcheck disable=SC2086
      /usr/bin/time -f "$which %e %U %M" -a -o "$work/times" \
        "$bin" build "$work/$input" -o "$work/$which.bin" $extra 2>/dev/null
    done
  done
  same=no; cmp -s "$work/old.bin" "$work/new.bin" && same=yes
  echo "build $name, $rounds rounds, same book: $same"
  for which in old new; do
    wall=$(awk -v w="$which" '$1==w {print $2}' "$work/times" | median)
    user=$(awk -v w="$which" '$1==w {print $3}' "$work/times" | median)
    rss=$(awk -v w="$which" '$1==w {print $4}' "$work/times" | median)
    echo "  $which: median wall $wall s, user $user s, peak $((${rss%.*} / 1024)) MB"
  done
done
