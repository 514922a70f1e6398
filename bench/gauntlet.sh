#!/usr/bin/env bash
# A gauntlet of a polybook binary against real engines from Debian: Glaurung 2.2, Toga II 3.0,
# Ethereal 12, and Stockfish limited to UCI_Elo 2400 and 2800 (UCI_LimitStrength), one thread and
# 64 MB of hash each, at 10+0.1, openings walked 16 plies from the GNU Chess book of tests/data and
# played twice with the colours swapped. Prints the ranking and the table of pairings (W-D-L,
# score, pentanomial), each engine's Elo with its 95% error bar.
# Usage: bench/gauntlet.sh BINARY [GAMES]   (from the repository's root; GAMES a pairing, default 100)
#   TC=10+0.1, CONCURRENCY=2, SEED=1, PGN=gauntlet.pgn (environment); more arguments go to `match`.
# Installs the engines that are missing (apt-get, as root or with sudo).
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,8p "$0"; exit 2; }
bin=$(realpath "$1"); shift
[ -x "$bin" ] || { echo "gauntlet.sh: $bin is not an executable" >&2; exit 2; }
games=100
if [ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]]; then games=$1; shift; fi

need_apt=()
[ -x /usr/games/glaurung ] || need_apt+=(glaurung)
[ -x /usr/games/toga2 ] || need_apt+=(toga2)
[ -x /usr/games/ethereal-chess ] || need_apt+=(ethereal-chess)
[ -x /usr/games/stockfish ] || need_apt+=(stockfish)
"$(dirname "$0")"/apt-install.sh gauntlet.sh "${need_apt[@]+"${need_apt[@]}"}"

# Glaurung starts with 2 threads and both Glaurung and Toga with their own book: one thread, no book.
set -x
"$bin" match --tournament gauntlet \
  --engine "polybook=cmd:$bin uci" \
  --engine Glaurung=cmd:/usr/games/glaurung \
  --engine Toga=cmd:/usr/games/toga2 \
  --engine Ethereal=cmd:/usr/games/ethereal-chess \
  --engine SF2400=cmd:/usr/games/stockfish \
  --engine SF2800=cmd:/usr/games/stockfish \
  --each Hash=64 \
  --option 2:Threads=1 --option 2:OwnBook=false --option 3:OwnBook=false \
  --option 5:UCI_LimitStrength=true --option 5:UCI_Elo=2400 \
  --option 6:UCI_LimitStrength=true --option 6:UCI_Elo=2800 \
  --book tests/data/books/gnuchess.bin --games "$games" --tc "${TC:-10+0.1}" \
  --concurrency "${CONCURRENCY:-2}" --seed "${SEED:-1}" --pgn "${PGN:-gauntlet.pgn}" "$@"
