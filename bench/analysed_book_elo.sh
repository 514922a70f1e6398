#!/usr/bin/env bash
# What an analysed book is worth in play: polybook's engine playing from a book that `polybook
# analyse` scored, with the `score` selection, against the same engine playing from the raw book by
# weight — the same binary and search on both sides, no opening from the match: each side's book
# decides its own opening moves (the weighted side's random picks give the variety).
# Usage: bench/analysed_book_elo.sh [MATCH ARGUMENTS...]   (from the repository's root)
#   PGN=tests/data/pgn/lichess_magnus_2018-2022.pgn.xz  the games the book is built from
#   BUILD="--min-games 1 --max-ply 24"  `polybook build` options (every move played, 12 moves deep)
#   NODES=20000 MAX_LOSS=50             `analyse` settings; GAMES=1000 TC=1+0.01 CONCURRENCY=2
#   ANALYSE="--expand --max-ply 20"     more `analyse` options, e.g. to grow the book as well
#   SCORED=scored                       the analysed book's name in WORK (one per ANALYSE setting: a
#                                       first run's cache, copied to NAME.bin.analysis, is resumed)
#   WORK=bench/out/analysed-book        where the books, the analysis cache and the PGN go
#   BIN=target/release/polybook         the binary (a copy keeps a long match safe from rebuilds)
#   AGAINST=cmd:/usr/games/toga2        instead, play each book in turn against this engine (no book of
#                                       its own: OwnBook=false), e.g. Toga II 3.0 at TC=10+0.1
# Run again, it reuses the books and the analysis (analyse --resume); the match starts afresh, its
# games appended to the PGN already there.
set -euo pipefail
bin=${BIN:-target/release/polybook}
work=${WORK:-bench/out/analysed-book}
mkdir -p "$work"
raw=$work/raw.bin scored=$work/${SCORED:-scored}.bin
set -x
[ -f "$raw" ] || $bin build "${PGN:-tests/data/pgn/lichess_magnus_2018-2022.pgn.xz}" -o "$raw" ${BUILD:---min-games 1 --max-ply 24}
[ -f "$scored" ] || $bin analyse "$raw" -o "$scored" --nodes "${NODES:-20000}" --max-loss "${MAX_LOSS:-50}" \
  --concurrency "${CONCURRENCY:-2}" --resume ${ANALYSE:-}
scored_engine="Scored=builtin:BookFile=$(realpath "$scored"),BookSelection=score"
raw_engine="Raw=builtin:BookFile=$(realpath "$raw"),BookSelection=weighted"
play() { # two engines, a PGN name, more arguments
  $bin match --engine "$1" --engine "$2" \
    --each Hash=64 --games "${GAMES:-1000}" --tc "${TC:-1+0.01}" --concurrency "${CONCURRENCY:-2}" \
    --resign score=800,moves=4 --draw movenumber=40,score=10,moves=8 --pgn "$work/$3" "${@:4}"
}
if [ -z "${AGAINST:-}" ]; then
  play "$scored_engine" "$raw_engine" match.pgn "$@"
else
  name=$(basename "${AGAINST#cmd:}")
  play "$scored_engine" "$name=$AGAINST" "scored-vs-$name.pgn" --option 2:OwnBook=false "$@"
  play "$raw_engine" "$name=$AGAINST" "raw-vs-$name.pgn" --option 2:OwnBook=false "$@"
fi
