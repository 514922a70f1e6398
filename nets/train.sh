#!/usr/bin/env bash
# The engine's net, src/engine/net.nnue, from the label files in this folder and the games they
# score (see nets/README.md). Usage: nets/train.sh [OUTPUT] (from the repository's root; default
# src/engine/net.nnue), then `cargo build --release` to build it in.
set -euo pipefail
out=${1:-src/engine/net.nnue}
bin=${POLYBOOK:-target/release/polybook}
pgn=tests/data/pgn
set -x
"$bin" train \
  --data "nets/master.labels=$pgn/gnuchess-book_1.02.pgn.xz,$pgn/tcec,$pgn/lichess_magnus_2018-2022.pgn.xz" \
  --data "nets/selfplay-1.labels=nets/selfplay-1.pgn.xz" \
  --data "nets/selfplay-2.labels=nets/selfplay-2.pgn.xz" \
  --epochs "${EPOCHS:-30}" --seed 1 -o "$out"
