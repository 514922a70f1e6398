# What the references for opening suites share (tests/suite_check.py, tests/suites_check.py), written
# with python-chess alone: the book's moves in the order a suite walks them, the comparison of the
# EPD lines and the reading of the PGN games. tests/it/analyse.rs and tests/it/suites.rs put this
# text before each script's own.
import sys

import chess
import chess.pgn
import chess.polyglot


def fail(msg):
    print(msg)
    sys.exit(1)


def walked_moves(reader, board):
    """The book's entries of `board` a suite walks: weight >= 1, each move once (its first entry),
    heaviest first, stored order among equals."""
    moves, once = [], set()
    for e in reader.find_all(board, minimum_weight=1):
        if e.move not in once:
            once.add(e.move)
            moves.append(e)
    return sorted(moves, key=lambda e: -e.weight)


def same_lines(got, expected):
    """Fails at the first line where polybook's `got` and python-chess's `expected` differ."""
    if got != expected:
        for i, (g, x) in enumerate(zip(got, expected)):
            if g != x:
                fail(f"epd line {i + 1}: polybook {g!r}, python-chess {x!r}")
        fail(f"epd: polybook {len(got)} lines, python-chess {len(expected)}")


def pgn_games(pgn_path):
    """The games of the PGN file `pgn_path`; fails at the first that python-chess reads with an
    error."""
    games = []
    with open(pgn_path) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            if game.errors:
                fail(f"pgn game {len(games) + 1}: {game.errors[0]}")
            games.append(game)
    return games
