#!/usr/bin/env bash
# Self-play SPRT of a new polybook binary against an old one, as engine projects test every change
# (OpenBench, fishtest): `polybook match --sprt` plays colour-swapped pairs from the bundled book's
# openings until the log-likelihood ratio accepts one of the hypotheses "the new binary is ELO0
# Elo stronger" or "ELO1 Elo stronger" (logistic Elo, alpha = beta = 0.05).
# Usage: bench/sprt.sh OLD_BINARY NEW_BINARY [ELO0 ELO1] [MATCH ARGUMENTS...]   (from the repository's root)
#   ELO0 ELO1   the bounds: 0 5 (the default) for a change that should gain, -5 0 for a simplification
#   TC=5+0.05   the time control (environment); LIMIT="--nodes 20000" replaces it by a fixed budget
#   CONCURRENCY=2, GAMES=20000 (the most games before the test gives up), SEED (default: random)
# Further arguments go to `polybook match` (e.g. --pgn sprt.pgn, --book other.bin).
# Copy the old binary aside before building the new one: cp target/release/polybook /tmp/polybook-old
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,11p "$0"; exit 2; }
old=$(realpath "$1") new=$(realpath "$2"); shift 2
for b in "$old" "$new"; do [ -x "$b" ] || { echo "sprt.sh: $b is not an executable" >&2; exit 2; }; done
elo0=0 elo1=5
number='^-?[0-9]+([.][0-9]+)?$'
if [ $# -ge 2 ] && [[ $1 =~ $number ]] && [[ $2 =~ $number ]]; then elo0=$1 elo1=$2; shift 2; fi
limit=(${LIMIT:---tc ${TC:-5+0.05}})
seed=()
[ -n "${SEED:-}" ] && seed=(--seed "$SEED")
set -x
"$new" match --engine "New=cmd:$new uci" --engine "Old=cmd:$old uci" --each Hash=64 \
  --book books/bundled.bin --games "${GAMES:-20000}" "${limit[@]}" --concurrency "${CONCURRENCY:-2}" \
  --sprt "elo0=$elo0,elo1=$elo1,alpha=0.05,beta=0.05" "${seed[@]}" "$@"
