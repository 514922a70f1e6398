#!/usr/bin/env python3
"""An independent book builder on python-chess, for testing `polybook build` where polyglot cannot
be the judge (games from a [FEN], variants, bad moves, UCI-coordinate moves).

It follows the rules polybook documents: the result comes from the Result tag (1-0, 0-1, anything
else a draw), games start from their [FEN] when it can be played (any material, any check on the side to move), variants other than standard chess are skipped, a game
ends at its first illegal move (the plies before it count), each ply gives its mover 2/1/0 points,
a position's moves are halved when one reaches 16384 games, an entry is kept with at least
--min-games games and some points, sorted by key, weight descending, then first appearance.
Keys and moves come from python-chess (chess.polyglot.zobrist_hash), the reference for the format.

Usage: reference_book.py OUT.bin PGN[.xz]... [--min-games N] [--max-ply N]
"""
import argparse
import lzma
import struct

import chess
import chess.pgn
import chess.polyglot

# What makes a setup unplayable (polybook refuses these; anything else from a [FEN] is played).
UNPLAYABLE = (chess.STATUS_EMPTY | chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING
              | chess.STATUS_TOO_MANY_KINGS | chess.STATUS_PAWNS_ON_BACKRANK | chess.STATUS_OPPOSITE_CHECK)

STANDARD = {"", "standard", "chess", "normal", "from position", "fromposition", "from_position"}


def encode(board, move):
    to = move.to_square
    if board.is_castling(move):
        rook_file = 7 if chess.square_file(move.to_square) > chess.square_file(move.from_square) else 0
        to = chess.square(rook_file, chess.square_rank(move.from_square))
    promo = {None: 0, chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4}[move.promotion]
    return to | (move.from_square << 6) | (promo << 12)


def games(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                return
            yield game


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("pgn", nargs="+")
    ap.add_argument("--min-games", type=int, default=3)
    ap.add_argument("--max-ply", type=int, default=1024)
    a = ap.parse_args()

    table = {}  # (key, move) -> [n, sum, first]
    moves_of = {}  # key -> [(key, move)]
    order = 0
    for path in a.pgn:
        for game in games(path):
            if game.headers.get("Variant", "").strip().lower() not in STANDARD:
                continue
            board = game.board()
            status = board.status()
            if status & UNPLAYABLE:
                continue
            # Playable setups that no game can reach are read as lichess reads them: impossible
            # castling rights and en-passant squares are dropped, extra material and odd checks stay.
            board.castling_rights = board.clean_castling_rights()
            if status & chess.STATUS_INVALID_EP_SQUARE:
                board.ep_square = None
            result = game.headers.get("Result", "*").strip()
            white_points = 2 if result == "1-0" else 0 if result == "0-1" else 1
            for ply, move in enumerate(game.mainline_moves()):
                if ply >= a.max_ply or not move:
                    break  # polybook ends a game at a null move
                key = chess.polyglot.zobrist_hash(board)
                mv = encode(board, move)
                points = white_points if board.turn == chess.WHITE else 2 - white_points
                entry = table.get((key, mv))
                if entry is None:
                    entry = table[(key, mv)] = [0, 0, order]
                    moves_of.setdefault(key, []).append((key, mv))
                    order += 1
                entry[0] += 1
                entry[1] += points
                if entry[0] >= 16384:
                    for km in moves_of[key]:
                        table[km][0] = (table[km][0] + 1) // 2
                        table[km][1] = (table[km][1] + 1) // 2
                board.push(move)

    kept = [(key, -s, first, mv, s) for (key, mv), (n, s, first) in table.items() if n >= a.min_games and s > 0]
    kept.sort()
    with open(a.out, "wb") as out:
        for key, _, _, mv, weight in kept:
            out.write(struct.pack(">QHHI", key, mv, weight, 0))
    print(f"{len(kept)} entries")


if __name__ == "__main__":
    main()
