#!/usr/bin/env python3
"""Where an engine's decisive games turned, from a match's PGN: who saw it first, and when.

Reads the `{+0.83/16 0.41s}` comments `polybook match` writes (score from the mover's side in
pawns, depth, time). For each decisive game, the turn is the first of the winner's moves from which
its score stays at or above --threshold pawns for three of its moves in a row; the report gives
that ply and the loser's own score on its last move before it (did the loser see it coming?).
Also: the median search depth of each side over its first 20 moves out of the book, and each
side's mean score on its first move out of the book (how each judged where the book left it).

usage: bench/where_games_turn.py GAMES.pgn[.xz] [--engine polybook] [--threshold 1.0]
"""
import argparse
import lzma
import re
import signal
import statistics

import chess.pgn

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a closed pipe ends quietly

p = argparse.ArgumentParser()
p.add_argument("pgn")
p.add_argument("--engine", default="polybook", help="the engine the report is about (its PGN name)")
p.add_argument("--threshold", type=float, default=1.0, help="the winner's score, in pawns")
a = p.parse_args()

COMMENT = re.compile(r"([+-]?M?[\d.]+)/(\d+)")


def score(text):
    """A comment's score in pawns, mates as ±100."""
    if "M" in text:
        return -100.0 if text.startswith("-") else 100.0
    return float(text)


def turn(winner, loser):
    """(ply, the loser's score just before) where the winner's score first stays high, or None."""
    for i in range(len(winner) - 2):
        if all(v >= a.threshold for _, v, _ in winner[i : i + 3]):
            ply = winner[i][0]
            before = [v for q, v, _ in loser if q < ply]
            return ply, (before[-1] if before else None)
    return None


opener = lzma.open if a.pgn.endswith(".xz") else open
try:
    f = opener(a.pgn, "rt")
except OSError as e:
    raise SystemExit(f"where_games_turn.py: cannot read {a.pgn}: {e.strerror or e}")

games = wins = draws = losses = 0
depth = {True: [], False: []}
first = {True: [], False: []}
turns = {"won": [], "lost": []}
with f:
    while (game := chess.pgn.read_game(f)) is not None:
        names = (game.headers.get("White"), game.headers.get("Black"))
        if a.engine not in names:
            continue
        white = names[0] == a.engine
        result = game.headers.get("Result")
        points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(result)
        if points is None:
            continue
        mine = points if white else 1 - points
        games += 1
        wins += mine == 1
        draws += mine == 0.5
        losses += mine == 0
        moves = {True: [], False: []}  # the engine's (True) and the opponent's scored moves
        for ply, node in enumerate(game.mainline(), start=1):
            m = COMMENT.match(node.comment)
            if m:
                ours = (ply % 2 == 1) == white
                moves[ours].append((ply, score(m.group(1)), int(m.group(2))))
        for side in (True, False):
            if moves[side]:
                depth[side].append(statistics.median(d for _, _, d in moves[side][:20]))
                first[side].append(moves[side][0][1])
        if mine == 1:
            t = turn(moves[True], moves[False])
            if t:
                turns["won"].append(t)
        elif mine == 0:
            t = turn(moves[False], moves[True])
            if t:
                turns["lost"].append(t)

if games == 0:
    raise SystemExit(f"where_games_turn.py: no finished game of {a.engine} in {a.pgn}")
print(f"{a.engine}: {games} games, +{wins} ={draws} -{losses}")
for side, who in ((True, a.engine), (False, "opponent")):
    if depth[side]:
        print(
            f"{who}: median depth over its first 20 moves out of the book {statistics.median(depth[side]):.0f},"
            f" mean score on its first move out of the book {statistics.mean(first[side]):+.2f}"
        )
for outcome, loser in (("lost", a.engine), ("won", "the opponent")):
    found = turns[outcome]
    if not found:
        continue
    plies = [ply for ply, _ in found]
    before = [v for _, v in found if v is not None]
    q = statistics.quantiles(plies, n=4) if len(plies) > 1 else [plies[0]] * 3
    seen = (
        f"median {statistics.median(before):+.2f}, >= -0.30 in {sum(v >= -0.3 for v in before)} of {len(before)}"
        if before
        else "none scored"
    )
    print(
        f"games {a.engine} {outcome} ({len(found)} with a turn): the winner's score stays >= +{a.threshold:.1f}"
        f" from ply {statistics.median(plies):.0f} (quartiles {q[0]:.0f}, {q[2]:.0f});"
        f" {loser}'s own score just before: {seen}"
    )
