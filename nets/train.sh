#!/usr/bin/env bash
# The engine's net, src/engine/net.nnue, from the label files in this folder and the games they
# score (see nets/README.md). Usage: nets/train.sh [OUTPUT] (from the repository's root; default
# src/engine/net.nnue), then `cargo build --release` to build it in.
# The committed net learnt from the first 1,753,088 labels of master.labels, which has grown since:
# MASTER_LABELS=N uses the first N, MASTER_LABELS=all every label so far.
set -euo pipefail
out=${1:-src/engine/net.nnue}
bin=${POLYBOOK:-target/release/polybook}
pgn=tests/data/pgn
master=nets/master.labels
count=${MASTER_LABELS:-1753088}
if [ "$count" != all ]; then
  [[ $count =~ ^[0-9]+$ ]] || { echo "train.sh: MASTER_LABELS must be a count or 'all'" >&2; exit 2; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # A label file is a 40-byte header and 2 bytes a label; a shorter file is used as far as it goes.
  head -c $((40 + 2 * count)) "$master" > "$tmp/master.labels"
  master=$tmp/master.labels
fi
set -x
"$bin" train \
  --data "$master=$pgn/gnuchess-book_1.02.pgn.xz,$pgn/tcec,$pgn/lichess_magnus_2018-2022.pgn.xz" \
  --data "nets/selfplay-1.labels=nets/selfplay-1.pgn.xz" \
  --data "nets/selfplay-2.labels=nets/selfplay-2.pgn.xz" \
  --epochs "${EPOCHS:-30}" --seed 1 -o "$out"
