#!/usr/bin/env bash
# The engine's net, src/engine/net.nnue, from the label files in this folder and the games they
# score (see nets/README.md). Usage: nets/train.sh [OUTPUT] (from the repository's root; default
# src/engine/net.nnue), then `cargo build --release` to build it in.
# The committed net learnt from every label of every file here but generation 7's
# (selfplay-7.*, not yet in a net: SPRT rows 77–78). MASTER1_LABELS=N uses only the
# first N labels of master-1.labels (the net of 4dea8b4 learnt from its first 2,323,456), and
# MASTER_LABELS=N the same for master.labels; MASTER_FILE=PATH takes master.labels' place (another
# labelling of the same games). TRAIN_ARGS adds options to `polybook train` (e.g.
# TRAIN_ARGS="--wdl 0.15" for another blend of score and result). SEED=N trains with another seed
# (the committed net: seed 3; from the same data seed 2 gave a net 20 Elo weaker than the one before,
# SPRT row 57, and from generation 5's data seed 1 one 30 Elo weaker, row 40).
# KING_BUCKETS=mirror|mirror4 for king buckets (the committed net: none; a mirrored net won SPRT
# row 43 at 12,000 nodes and lost row 44 at 20,000).
set -euo pipefail
out=${1:-src/engine/net.nnue}
bin=${POLYBOOK:-target/release/polybook}
pgn=tests/data/pgn
games="$pgn/gnuchess-book_1.02.pgn.xz,$pgn/tcec,$pgn/lichess_magnus_2018-2022.pgn.xz"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The first COUNT labels of a label file (PBLABEL1, as every file here is, or PBLABEL2: a 40-byte
# header and 2 bytes a label, no checksums; a shorter file is used as far as it goes), or
# the whole file for 'all'.
first() {
  local file=$1 count=$2
  if [ "$count" = all ]; then echo "$file"; return; fi
  [[ $count =~ ^[0-9]+$ ]] || { echo "train.sh: a label count must be a number or 'all'" >&2; exit 2; }
  head -c $((40 + 2 * count)) "$file" > "$tmp/$(basename "$file")"
  echo "$tmp/$(basename "$file")"
}
master=$(first "${MASTER_FILE:-nets/master.labels}" "${MASTER_LABELS:-all}")
master1=$(first nets/master-1.labels "${MASTER1_LABELS:-all}")
set -x
"$bin" train \
  --data "$master=$games" \
  --data "$master1=$games" \
  --data "nets/selfplay-1.labels=nets/selfplay-1.pgn.xz" \
  --data "nets/selfplay-2.labels=nets/selfplay-2.pgn.xz" \
  --data "nets/selfplay-1-1.labels=nets/selfplay-1.pgn.xz" \
  --data "nets/selfplay-2-1.labels=nets/selfplay-2.pgn.xz" \
  --data "nets/selfplay-3.labels=nets/selfplay-3.pgn.xz" \
  --data "nets/selfplay-4.labels=nets/selfplay-4.pgn.xz" \
  --data "nets/selfplay-5.labels=nets/selfplay-5.pgn.xz" \
  --data "nets/selfplay-6.labels=nets/selfplay-6.pgn.xz" \
  --epochs "${EPOCHS:-30}" --seed "${SEED:-3}" \
  --king-buckets "${KING_BUCKETS:-none}" ${TRAIN_ARGS:-} -o "$out"
