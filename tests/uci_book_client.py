#!/usr/bin/env python3
"""polybook's book options under python-chess, as lichess-bot and BotLi drive it (run by
tests/it/uci_book.rs). It only plays and reports; the test judges.

    python3 tests/uci_book_client.py POLYBOOK OPTIONS POSITIONS [REPEAT]
        OPTIONS is a JSON object of UCI options (engine.configure), POSITIONS a JSON list of move
        lists (UCI) from the start; each position is played REPEAT times (default 1) in order.
    python3 tests/uci_book_client.py POLYBOOK OPTIONS --game COLOUR OPPONENT_MOVES
        a game in which polybook plays COLOUR (white or black) and the opponent the moves of the
        JSON list OPPONENT_MOVES in turn, until they run out.

    Either form may end with --limit JSON (a chess.engine.Limit's fields, e.g. the clocks of a
    3+2 game: {"white_clock": 180, "black_clock": 180, "white_inc": 2, "black_inc": 2}; default:
    0.2 s a move) and --opponent JSON (a chess.engine.Opponent's fields, sent as UCI_Opponent as
    lichess-bot sends it).

Prints one JSON list: for each engine move, {"position": [...], "move": "...", "string": "..."}
("string": the last `info string` before `bestmove`, or "").
"""

import json
import sys

import chess
import chess.engine

LIMIT = chess.engine.Limit(time=0.2)
OPPONENT = None


def play(engine, moves):
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    result = engine.play(board, LIMIT, info=chess.engine.INFO_ALL, opponent=OPPONENT)
    return {"position": moves, "move": result.move.uci(), "string": result.info.get("string", "")}


def take_flag(name):
    """The JSON value after `name` in the arguments (both removed), or None."""
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    value = json.loads(sys.argv[i + 1])
    del sys.argv[i : i + 2]
    return value


def main():
    global LIMIT, OPPONENT
    limit, opponent = take_flag("--limit"), take_flag("--opponent")
    if limit is not None:
        LIMIT = chess.engine.Limit(**limit)
    if opponent is not None:
        OPPONENT = chess.engine.Opponent(
            opponent.get("name"), opponent.get("title"), opponent.get("rating"), opponent.get("is_engine")
        )
    polybook, options = sys.argv[1], json.loads(sys.argv[2])
    engine = chess.engine.SimpleEngine.popen_uci([polybook, "uci"])
    out = []
    try:
        engine.configure(options)
        if sys.argv[3] == "--game":
            colour, opponent = sys.argv[4], json.loads(sys.argv[5])
            moves = []
            if colour == "black":
                moves.append(opponent.pop(0))
            while True:
                answer = play(engine, list(moves))
                out.append(answer)
                moves.append(answer["move"])
                if not opponent:
                    break
                moves.append(opponent.pop(0))
        else:
            positions = json.loads(sys.argv[3])
            repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 1
            for moves in positions:
                for _ in range(repeat):
                    out.append(play(engine, moves))
    finally:
        engine.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
