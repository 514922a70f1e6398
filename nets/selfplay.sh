#!/usr/bin/env bash
# One generation of the net's self-play data: nets/selfplay.sh N [GAMES] (from the repository's
# root) plays GAMES games (default 12,000) of the built-in engine's net against its hand-crafted
# evaluation at 2,000 nodes a move, from GAMES/2 openings of 8 random moves (seed N, each played
# twice with colours swapped), and labels every quiet position of them with the net's search at
# 5,000 nodes (LABEL_NODES=N: at N). It writes nets/selfplay-N.pgn.xz (the games, sorted by
# round, without the engines' comments and dates, so that the file is the same whatever the
# machine, the day and --concurrency) and nets/selfplay-N.labels; then add them to
# nets/train.sh's --data.
#
# Resumable: stopped at any moment (Ctrl-C, a kill), the same command goes on (the match from its
# log, nets/selfplay-N.pgn, with --resume; the labels with datagen's own resume).
# POLYBOOK: the binary (default target/release/polybook); CONCURRENCY: games at once (default:
# the machine's cores); THREADS: labelling threads (default: the machine's cores).
set -euo pipefail
gen=${1:?usage: nets/selfplay.sh N [GAMES]}
games=${2:-12000}
[[ $gen =~ ^[0-9]+$ && $games =~ ^[0-9]+$ && ${LABEL_NODES:-5000} =~ ^[0-9]+$ ]] ||
  { echo "selfplay.sh: N, GAMES and LABEL_NODES are numbers" >&2; exit 2; }
bin=${POLYBOOK:-target/release/polybook}
cores=$(nproc)
log=nets/selfplay-$gen.pgn
games_file=nets/selfplay-$gen.pgn.xz
labels=nets/selfplay-$gen.labels

if [ ! -f "$games_file" ]; then
  openings=$(mktemp)
  trap 'rm -f "$openings"' EXIT
  python3 nets/random_openings.py $(((games + 1) / 2)) 8 "$gen" > "$openings"
  "$bin" match --engine NET=builtin:UseNNUE=true,Hash=16 --engine HCE=builtin:UseNNUE=false,Hash=16 \
    --openings "$openings" --games "$games" --nodes 2000 --concurrency "${CONCURRENCY:-$cores}" \
    --seed "$gen" --resign score=2500,moves=6 --draw movenumber=40,score=5,moves=10 \
    --event "polybook self-play" --pgn "$log" --resume --quiet
  # The games in round order, without comments ({book}, {+0.35/5 0.01s}) or the day's date.
  python3 - "$log" <<'EOF' | xz -9 > "$games_file.part"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
games = [g for g in re.split(r"\n\n(?=\[Event )", text.strip()) if g]
games.sort(key=lambda g: int(re.search(r'\[Round "(\d+)"\]', g).group(1)))
for g in games:
    g = re.sub(r'\[Date "[^"]*"\]', '[Date "????.??.??"]', g)
    g = re.sub(r"\s*\{[^}]*\}", "", g)
    sys.stdout.write(g.strip() + "\n\n")
EOF
  mv "$games_file.part" "$games_file"
fi
"$bin" datagen "$games_file" -o "$labels" --skip-plies 0 --every 1 --nodes "${LABEL_NODES:-5000}" \
  --threads "${THREADS:-$cores}"
echo "selfplay.sh: $games_file and $labels are complete; add --data \"$labels=$games_file\" to nets/train.sh"
