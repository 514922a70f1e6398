"""Checks tablebase distances to mate by brute force with python-chess.

Reads lines `FEN<TAB>VALUE` from stdin, VALUE being `win N` (the side to move mates in N plies),
`loss N` (it is mated after N plies) or `draw`. A win in 2k-1 plies must be a forced mate in k
moves and no mate in k-1; a loss in 2k plies: every move allows a mate in k, and some move allows
no mate in k-1 (k = 0: checkmate now); a draw: no mate in 2 moves either way and, for the side
to move, not checkmated. Prints one line per disagreement, then `checked N`; exits 1 on any.
"""

import sys

import chess


def mates_within(board, n):
    """Can the side to move force checkmate within n moves?"""
    if n <= 0:
        return False
    for move in board.legal_moves:
        board.push(move)
        ok = board.is_checkmate() or (n > 1 and loses_within(board, n - 1))
        board.pop()
        if ok:
            return True
    return False


def loses_within(board, n):
    """Is the side to move checkmated now, or within n moves of the opponent whatever it does?"""
    if board.is_checkmate():
        return True
    moves = list(board.legal_moves)
    if not moves:
        return False  # stalemate
    for move in moves:
        board.push(move)
        ok = mates_within(board, n)
        board.pop()
        if not ok:
            return False
    return True


def check(board, value):
    kind, _, n = value.partition(" ")
    if kind == "win":
        k = (int(n) + 1) // 2
        return mates_within(board, k) and not mates_within(board, k - 1)
    if kind == "loss":
        k = int(n) // 2
        return loses_within(board, k) and (k == 0 or not loses_within(board, k - 1))
    return not board.is_checkmate() and not mates_within(board, 2) and not loses_within(board, 2)


def main():
    bad = 0
    checked = 0
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        fen, value = line.split("\t")
        checked += 1
        if not check(chess.Board(fen), value):
            bad += 1
            print(f"disagree: {fen} {value}")
    print(f"checked {checked}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
