#!/usr/bin/env python3
"""Reads a match's PGN with python-chess and says, per game, what the tests check.

    match_check.py GAMES.pgn [BOOK.bin]

Prints one JSON object per game: its tags, the moves (UCI), the moves marked {book} and their
plies (0-based), whether each of those is in BOOK for its position (python-chess's polyglot
reader), for every ply whether BOOK has a move in the position before it, and whether the result
agrees with the final position:
  - Termination "normal": a checkmate is won by the side that gave it; a draw is a stalemate,
    insufficient material, the fifty-move rule or a threefold repetition.
  - A forfeit ("time forfeit", "illegal move", "abandoned", "stalled connection"): the side to
    move (the one that failed to make its move) loses.
"""
import json
import sys

import chess
import chess.pgn
import chess.polyglot

pgn_path = sys.argv[1]
book = chess.polyglot.open_reader(sys.argv[2]) if len(sys.argv) > 2 else None

with open(pgn_path) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        board = game.board()
        moves, book_moves, book_plies, in_book, book_has = [], [], [], [], []
        node = game
        while node.variations:
            node = node.variations[0]
            if book is not None:
                book_has.append(any(True for _ in book.find_all(board)))
            if node.comment.strip() == "book":
                book_moves.append(node.move.uci())
                book_plies.append(len(moves))
                if book is not None:
                    in_book.append(any(e.move == node.move for e in book.find_all(board)))
            moves.append(node.move.uci())
            board.push(node.move)
        h = game.headers
        result, term = h.get("Result"), h.get("Termination", "")
        loser_to_move = "0-1" if board.turn == chess.WHITE else "1-0"
        if term == "normal":
            if board.is_checkmate():
                consistent = result == loser_to_move
            else:
                consistent = result == "1/2-1/2" and (
                    board.is_stalemate()
                    or board.is_insufficient_material()
                    or board.halfmove_clock >= 100
                    or board.is_repetition(3)
                )
        elif term in ("time forfeit", "illegal move", "abandoned", "stalled connection"):
            consistent = result == loser_to_move
        else:
            consistent = result in ("1-0", "0-1", "1/2-1/2")
        print(json.dumps({
            "event": h.get("Event"),
            "round": h.get("Round"),
            "white": h.get("White"),
            "black": h.get("Black"),
            "result": result,
            "termination": term,
            "plycount": int(h.get("PlyCount", "-1")),
            "moves": moves,
            "book_moves": book_moves,
            "book_plies": book_plies,
            "in_book": in_book,
            "book_has": book_has,
            "fen": h.get("FEN"),
            "consistent": consistent,
            "errors": [str(e) for e in game.errors],
            "final_comment": node.comment if node is not game else "",
        }))
