#!/bin/sh
# The strength ladder: polybook's built-in engine against Stockfish limited to UCI_Elo 1500,
# 2000, 2400 and 2800, GAMES games each at 10+0.1 from the GNU Chess book in tests/data, two games at a time.
# Each match's PGN goes to ladder-ELO.pgn and its JSON report to ladder-ELO.json.
#
#   bench/ladder.sh [GAMES] [ELO...]      (default: 100 games, all four levels)
set -eu
GAMES=${1:-100}
[ $# -gt 0 ] && shift
LEVELS=${*:-1500 2000 2400 2800}
POLYBOOK=${POLYBOOK:-target/release/polybook}
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
for elo in $LEVELS; do
    "$POLYBOOK" match \
        --engine builtin:Hash=16 \
        --engine "cmd:$STOCKFISH" \
        --option 2:UCI_LimitStrength=true --option "2:UCI_Elo=$elo" \
        --option 2:Hash=16 --option 2:Threads=1 \
        --book tests/data/books/gnuchess.bin --book-plies 16 \
        --games "$GAMES" --tc 10+0.1 --concurrency 2 --seed "$elo" \
        --event "polybook ladder vs Stockfish UCI_Elo $elo" \
        --pgn "ladder-$elo.pgn" --json > "ladder-$elo.json"
    python3 - "$elo" "ladder-$elo.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
elo = r["elo"]
err = r["elo_error95"]
print(f"UCI_Elo {sys.argv[1]}: {r['games']} games, +{r['wins']} ={r['draws']} -{r['losses']}, "
      f"score {100 * r['score']:.1f}%, Elo diff {'%+.0f' % elo if elo is not None else 'n/a'}"
      f" ± {'%.0f' % err if err is not None else 'n/a'}, LOS {100 * r['los']:.1f}%, "
      f"terminations {r['terminations']}, {r['seconds']:.0f} s")
PY
done
