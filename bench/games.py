#!/usr/bin/env python3
"""Fast games between polybook (UCI) and Stockfish, to check that polybook never loses on time.

The clocks are kept here, with the wall time each engine takes to answer (pipes included): a
move that arrives after its side's clock ran out is a time forfeit. Any illegal move fails too.

    python3 bench/games.py --games 100 --tc 10+0.1 target/release/polybook
    python3 bench/games.py --games 100 --tc 1+0.01 target/release/polybook

Prints one line per game and a summary; exits 1 if polybook forfeited on time or played an
illegal move.
"""

import argparse
import sys
import time

import chess
import chess.engine

STOCKFISH = "/usr/games/stockfish"


def play_game(polybook, stockfish, polybook_white, base, inc, max_plies=400):
    """Plays one game; returns a dict: result, reason, plies, polybook's least clock left (s)."""
    board = chess.Board()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    least_left = base
    engines = {
        chess.WHITE: polybook if polybook_white else stockfish,
        chess.BLACK: stockfish if polybook_white else polybook,
    }
    polybook_color = chess.WHITE if polybook_white else chess.BLACK
    for e in (polybook, stockfish):
        e.protocol.send_line("ucinewgame")
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < max_plies:
        side = board.turn
        limit = chess.engine.Limit(
            white_clock=clocks[chess.WHITE],
            black_clock=clocks[chess.BLACK],
            white_inc=inc,
            black_inc=inc,
        )
        start = time.monotonic()
        result = engines[side].play(board, limit)
        used = time.monotonic() - start
        clocks[side] -= used
        who = "polybook" if side == polybook_color else "stockfish"
        if clocks[side] < 0:
            return {"result": "0-1" if side == chess.WHITE else "1-0",
                    "reason": f"{who} lost on time ({used * 1000:.0f} ms for the move)",
                    "plies": len(board.move_stack), "least_left": least_left,
                    "forfeit": who == "polybook", "illegal": False}
        if result.move is None or result.move not in board.legal_moves:
            return {"result": "0-1" if side == chess.WHITE else "1-0",
                    "reason": f"{who} played an illegal move {result.move}",
                    "plies": len(board.move_stack), "least_left": least_left,
                    "forfeit": False, "illegal": who == "polybook"}
        clocks[side] += inc
        if side == polybook_color:
            least_left = min(least_left, clocks[side] - inc)
        board.push(result.move)
    outcome = board.outcome(claim_draw=True)
    return {"result": outcome.result() if outcome else "1/2-1/2",
            "reason": outcome.termination.name.lower() if outcome else "move limit",
            "plies": len(board.move_stack), "least_left": least_left,
            "forfeit": False, "illegal": False}


def open_engines(polybook_cmd, book=None, skill=0):
    polybook = chess.engine.SimpleEngine.popen_uci(polybook_cmd)
    options = {"Hash": 16}
    if book:
        options.update({"BookFile": book, "OwnBook": True})
    polybook.configure(options)
    stockfish = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
    stockfish.configure({"Skill Level": skill, "Threads": 1, "Hash": 16})
    return polybook, stockfish


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("polybook", help="the polybook binary")
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--tc", default="10+0.1", help="base+increment in seconds")
    ap.add_argument("--book", default=None, help="a Polyglot book for polybook (BookFile)")
    ap.add_argument("--skill", type=int, default=0, help="Stockfish's Skill Level")
    args = ap.parse_args()
    base, inc = (float(x) for x in args.tc.split("+"))
    polybook, stockfish = open_engines([args.polybook, "uci"], args.book, args.skill)
    score = {"win": 0, "draw": 0, "loss": 0}
    forfeits = illegal = 0
    least = base
    try:
        for g in range(args.games):
            white = g % 2 == 0
            r = play_game(polybook, stockfish, white, base, inc)
            mine = "1-0" if white else "0-1"
            key = "draw" if r["result"] == "1/2-1/2" else ("win" if r["result"] == mine else "loss")
            score[key] += 1
            forfeits += r["forfeit"]
            illegal += r["illegal"]
            least = min(least, r["least_left"])
            print(f"game {g + 1}: polybook {'white' if white else 'black'} {r['result']} "
                  f"({r['reason']}, {r['plies']} plies, polybook's least clock "
                  f"{r['least_left'] * 1000:.0f} ms)", flush=True)
    finally:
        polybook.quit()
        stockfish.quit()
    print(f"tc {args.tc}: {args.games} games, polybook +{score['win']} ={score['draw']} "
          f"-{score['loss']}, time forfeits {forfeits}, illegal moves {illegal}, "
          f"least clock left {least * 1000:.0f} ms")
    sys.exit(1 if forfeits or illegal else 0)


if __name__ == "__main__":
    main()
