#!/usr/bin/env python3
"""Openings for the engine's self-play games (the net's training data): positions after N random
legal moves from the start, one FEN a line, seeded, none of them over (mate, stalemate, a draw
by material). Random moves leave material hanging, so that the games also show the net positions
that real games never reach: a piece or a queen up, a king walked out.

Usage: nets/random_openings.py COUNT PLIES SEED > openings.epd   (needs python-chess)
"""
import random
import sys

import chess


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    count, plies, seed = (int(a) for a in sys.argv[1:])
    rng = random.Random(seed)
    seen = set()
    while len(seen) < count:
        board = chess.Board()
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if board.is_game_over() or board.epd() in seen:
            continue
        seen.add(board.epd())
        print(board.fen())


if __name__ == "__main__":
    main()
