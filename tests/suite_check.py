# References for the commands that read scores from a scored book, written with python-chess alone
# (chess.polyglot for the book, the learn field decoded here in ProDeo's layout from the raw bytes):
#
#   suite_check.py suite BOOK PLY MIN MAX SUITE.epd SUITE.pgn
#       the positions lines of book moves (weight >= 1, heaviest first, stored order among equals)
#       reach in exactly PLY plies, first reach depth first, once each, whose score (the move into
#       them, White's view) lies in [MIN, MAX] ("-" for no bound); compares them with SUITE.epd line
#       by line, and with the last position of each game of SUITE.pgn. Prints "openings N".
#   suite_check.py maxloss BOOK OUT CP
#       the entries of BOOK that `filter --max-loss CP` keeps (scored moves at most CP below the
#       best scored move of their position; unscored moves kept), compared with OUT's entries,
#       which must start with the mark of a scored book. Prints "kept N of M".
# Exits 1 on the first difference. tests/suite_reference.py (fail, walked_moves, same_lines,
# pgn_games) comes before this text.
import struct
import sys

import chess
import chess.pgn
import chess.polyglot

MARK = (0, 0, 0, 0x70625344)


def score_of(learn):
    """(score, depth) in ProDeo's layout, or None when the depth byte is 0."""
    depth = (learn >> 8) & 0xFF
    if depth == 0:
        return None
    score = learn >> 16
    return score - 0x10000 if score >= 0x8000 else score


def suite(book, ply, lo, hi, epd_path, pgn_path):
    reader = chess.polyglot.open_reader(book)
    expected, seen = [], set()

    def visit(board, depth, ev):
        if depth == ply:
            epd = board.epd()
            if epd in seen:
                return
            seen.add(epd)
            if lo is not None or hi is not None:
                if ev is None or (lo is not None and ev < lo) or (hi is not None and ev > hi):
                    return
            expected.append(epd)
            return
        for e in walked_moves(reader, board):
            s = score_of(e.learn)
            if s is not None and board.turn == chess.BLACK:
                s = -s
            board.push(e.move)
            visit(board, depth + 1, s)
            board.pop()

    visit(chess.Board(), 0, None)
    same_lines([line.rstrip("\n") for line in open(epd_path)], expected)
    games = [game.end().board().epd() for game in pgn_games(pgn_path)]
    if games != expected:
        fail(f"pgn: {len(games)} games, their last positions differ from the {len(expected)} expected")
    print(f"openings {len(expected)}")


def entries(path):
    data = open(path, "rb").read()
    return [struct.unpack(">QHHI", data[i:i + 16]) for i in range(0, len(data), 16)]


def maxloss(book, out, cp):
    src = entries(book)
    if src and src[0] == MARK:
        src = src[1:]
    best = {}
    for key, _, _, learn in src:
        s = score_of(learn)
        if s is not None:
            best[key] = max(best.get(key, s), s)
    kept = sorted(
        e for e in src if score_of(e[3]) is None or best[e[0]] - score_of(e[3]) <= cp
    )
    got = entries(out)
    if not got or got[0] != MARK:
        fail("the filtered book does not start with the mark of a scored book")
    if sorted(got[1:]) != kept:
        fail(f"kept: polybook {len(got) - 1} entries, python-chess {len(kept)}")
    print(f"kept {len(kept)} of {len(src)}")


if sys.argv[1] == "suite":
    bound = lambda v: None if v == "-" else int(v)
    suite(sys.argv[2], int(sys.argv[3]), bound(sys.argv[4]), bound(sys.argv[5]), sys.argv[6], sys.argv[7])
elif sys.argv[1] == "maxloss":
    maxloss(sys.argv[2], sys.argv[3], int(sys.argv[4]))
else:
    fail(f"unknown check {sys.argv[1]!r}")
