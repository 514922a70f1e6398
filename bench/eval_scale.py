#!/usr/bin/env python3
"""How wide the net's scores run against the hand-crafted evaluation's: the static evaluation of
both (UCI `eval`, side to move) on positions drawn from games, and the ratio of their scales.

Draws one position a game (a random ply from 12 to 80, not in check; --seed fixes the draw), asks
polybook's `eval` with `UseNNUE` on and off, keeps the positions both score within ±800 cp, and
prints the least-squares slope of the net's scores on the hand-crafted ones (through 0), the mean
absolute scores and the median of their ratio. The search's centipawn margins
(src/engine/parameters.rs, NET_MARGIN_QUARTERS) are stated in the hand-crafted evaluation's scale
and multiplied by about this ratio with the net.

usage: bench/eval_scale.py POLYBOOK GAMES.pgn[.xz] [--games 400] [--seed 1]
"""
import argparse
import lzma
import random
import re
import signal
import statistics
import subprocess

import chess.pgn

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a closed pipe ends quietly

p = argparse.ArgumentParser()
p.add_argument("polybook")
p.add_argument("pgn")
p.add_argument("--games", type=int, default=400)
p.add_argument("--seed", type=int, default=1)
a = p.parse_args()

rng = random.Random(a.seed)
fens = []
opener = lzma.open if a.pgn.endswith(".xz") else open
try:
    f = opener(a.pgn, "rt")
except OSError as e:
    raise SystemExit(f"eval_scale.py: cannot read {a.pgn}: {e.strerror or e}")
with f:
    while len(fens) < a.games:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        moves = list(game.mainline_moves())
        if len(moves) < 14:
            continue
        board = game.board()
        for m in moves[: rng.randint(12, min(80, len(moves) - 1))]:
            board.push(m)
        if not board.is_check():
            fens.append(board.fen())


def static_evals(use_net):
    script = f"uci\nsetoption name UseNNUE value {'true' if use_net else 'false'}\n"
    script += "".join(f"position fen {fen}\neval\n" for fen in fens) + "quit\n"
    out = subprocess.run([a.polybook, "uci"], input=script, capture_output=True, text=True,
                         check=True).stdout
    scores = [int(m.group(1)) for m in re.finditer(r"static eval cp (-?\d+) \(side to move\)", out)]
    assert len(scores) == len(fens), f"{len(scores)} scores for {len(fens)} positions"
    return scores


if not fens:
    raise SystemExit(f"eval_scale.py: no position drawn from {a.pgn}: not a PGN of games?")
pairs = [(n, h) for n, h in zip(static_evals(True), static_evals(False))
         if abs(n) <= 800 and abs(h) <= 800]
slope = sum(n * h for n, h in pairs) / sum(h * h for _, h in pairs)
print(f"{len(pairs)} positions of {len(fens)} (both within ±800 cp)")
print(f"slope of the net's scores on the hand-crafted ones: {slope:.3f}")
print(f"mean |score|: net {statistics.mean(abs(n) for n, _ in pairs):.1f}, "
      f"hand-crafted {statistics.mean(abs(h) for _, h in pairs):.1f}")
print(f"median |net| / |hand-crafted| (both nonzero): "
      f"{statistics.median(abs(n) / abs(h) for n, h in pairs if n and h):.3f}")
