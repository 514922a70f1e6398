#!/usr/bin/env python3
"""How many bad moves a book makes an engine play, judged by a stronger engine.

Walks BOOK by weighted choice (as an engine plays from it: python-chess's weighted_choice, minimum
weight 1) to a random ply from 2 to 14, WALKS times, and judges every legal book move of each
position reached with Stockfish at --depth (one thread, a cleared hash for each position): a move's
loss is the position's best score minus the move's (centipawns, from the mover's view; mates as
±10000). Prints the share of weighted picks that lose at least 50 and at least 100 centipawns (each
move of a position weighted by its share of the position's weight), and the book's entries.

usage: bench/judge_book.py BOOK [--walks 150] [--depth 14] [--seed 1] [--stockfish /usr/games/stockfish]
"""
import argparse
import random

import chess
import chess.engine
import chess.polyglot

p = argparse.ArgumentParser()
p.add_argument("book")
p.add_argument("--walks", type=int, default=150)
p.add_argument("--depth", type=int, default=14)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--stockfish", default="/usr/games/stockfish")
a = p.parse_args()

rng = random.Random(a.seed)
reader = chess.polyglot.open_reader(a.book)
engine = chess.engine.SimpleEngine.popen_uci(a.stockfish)
engine.configure({"Threads": 1, "Hash": 64})

positions = {}
for _ in range(a.walks):
    board = chess.Board()
    plies = rng.randint(2, 14)
    for _ in range(plies):
        entries = [e for e in reader.find_all(board) if e.weight > 0]
        if not entries:
            break
        positions[board.fen()] = entries
        total = sum(e.weight for e in entries)
        ticket = rng.randrange(total)
        for e in entries:
            if ticket < e.weight:
                board.push(e.move)
                break
            ticket -= e.weight


def cp(score):
    return score.score(mate_score=10000)


picks = lose50 = lose100 = 0.0
for i, (fen, entries) in enumerate(sorted(positions.items())):
    board = chess.Board(fen)
    best = engine.analyse(board, chess.engine.Limit(depth=a.depth), game=("b", i))
    best_cp = cp(best["score"].relative)
    total = sum(e.weight for e in entries)
    for j, e in enumerate(entries):
        board.push(e.move)
        after = engine.analyse(board, chess.engine.Limit(depth=a.depth - 1), game=("m", i, j))
        board.pop()
        loss = best_cp - (-cp(after["score"].relative))
        share = e.weight / total
        picks += share
        lose50 += share * (loss >= 50)
        lose100 += share * (loss >= 100)
engine.quit()
print(
    f"{a.book}: {len(reader)} entries, {len(positions)} positions judged at depth {a.depth}: "
    f"{100 * lose50 / picks:.1f} % of picks lose >= 50 cp, {100 * lose100 / picks:.1f} % >= 100 cp"
)
