#!/usr/bin/env python3
"""An EPD test suite (bm/am) through UCI, with any engine and UCI options, by python-chess.

Usage: bench/epd_uci.py ENGINE [--movetime 300] [--epd tests/data/epd/wac.epd] [NAME=VALUE ...]
  ENGINE       the engine's command line, e.g. "target/release/polybook uci" or /usr/games/stockfish
  NAME=VALUE   UCI options set before the first position (Hash=64 unless given), e.g. UseNNUE=false,
               or a tunable of the tuning build (`--features spsa`): SE_DOUBLE_MARGIN=20

Each position is a new game (`ucinewgame`), searched for --movetime ms; it counts as solved when the
move played is one of its `bm` moves and none of its `am` moves. Prints `OPTIONS: solved/total`.
Another driver than `polybook solve` (which runs its own search loop): compare figures of one driver.
"""
import argparse
import os
import shlex

import chess
import chess.engine


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine")
    ap.add_argument("options", nargs="*", metavar="NAME=VALUE")
    ap.add_argument("--movetime", type=int, default=300)
    ap.add_argument("--epd", default="tests/data/epd/wac.epd")
    args = ap.parse_intermixed_args()
    options = {"Hash": 64}
    for o in args.options:
        name, sep, value = o.partition("=")
        if not sep:
            ap.error(f"expected NAME=VALUE, got {o!r}")
        options[name] = int(value) if value.lstrip("-").isdigit() else value
    if not os.path.isfile(args.epd):
        ap.error(f"no such EPD file: {args.epd}")
    try:
        engine = chess.engine.SimpleEngine.popen_uci(shlex.split(args.engine))
    except (OSError, chess.engine.EngineError) as e:
        ap.error(f"cannot start the engine {args.engine!r}: {e}")
    try:
        engine.configure(options)
        solved = total = 0
        with open(args.epd) as f:
            for line in f:
                if not line.strip():
                    continue
                board, ops = chess.Board.from_epd(line)
                move = engine.play(board, chess.engine.Limit(time=args.movetime / 1000), game=object()).move
                total += 1
                solved += move in ops.get("bm", [move]) and move not in ops.get("am", [])
    finally:
        engine.quit()
    print(f"{' '.join(args.options) or 'defaults'}: {solved}/{total}")


if __name__ == "__main__":
    main()
