#!/usr/bin/env python3
"""Where a book leaves its engine: the position at which both sides of a match are out of book,
judged by Stockfish, from the view of one side.

Reads the PGN a `polybook match` wrote (book moves carry a bare time comment, `{0.00s}`; searched
moves a score, `{+0.17/9 0.12s}`), plays each game to its first searched move, and scores that
position with Stockfish at --depth (one thread). Prints the mean and median from SIDE's view
(SIDE: an engine name as the PGN's White/Black tags spell it), the shares of games SIDE leaves the
book 50 cp or more ahead and behind, and how many plies the books lasted. Both sides play both
colours, so the first move's edge cancels out: a mean far from 0 is what the books made.

usage: bench/book_exit_eval.py MATCH.pgn SIDE [--games 400] [--depth 12] [--stockfish /usr/games/stockfish]
"""
import argparse
import statistics

import chess
import chess.engine
import chess.pgn

p = argparse.ArgumentParser()
p.add_argument("pgn")
p.add_argument("side")
p.add_argument("--games", type=int, default=400)
p.add_argument("--depth", type=int, default=12)
p.add_argument("--stockfish", default="/usr/games/stockfish")
a = p.parse_args()

engine = chess.engine.SimpleEngine.popen_uci(a.stockfish)
engine.configure({"Threads": 1, "Hash": 16})
values, plies = [], []
with open(a.pgn) as f:
    while len(values) < a.games:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        if a.side not in (game.headers["White"], game.headers["Black"]):
            raise SystemExit(f"{a.pgn}: no engine named {a.side!r} in a game")
        board, node = game.board(), game
        while node.variations and "/" not in node.variations[0].comment:
            node = node.variations[0]
            board.push(node.move)
        # A new game object for each position: python-chess sends ucinewgame (a cleared hash).
        info = engine.analyse(board, chess.engine.Limit(depth=a.depth), game=object())
        cp = max(-1000, min(1000, info["score"].white().score(mate_score=1000)))
        values.append(cp if game.headers["White"] == a.side else -cp)
        plies.append(board.ply())
engine.quit()
n = len(values)
print(f"{n} games: {a.side} leaves the books {statistics.mean(values):+.1f} cp on average "
      f"(median {statistics.median(values):+.1f}, sd {statistics.pstdev(values):.1f}), "
      f"{100 * sum(v >= 50 for v in values) / n:.1f} % of games 50 cp or more ahead, "
      f"{100 * sum(v <= -50 for v in values) / n:.1f} % behind; the books lasted {statistics.mean(plies):.1f} plies")
