#!/usr/bin/env python3
"""A misbehaving UCI engine for the match runner's tests, on python-chess.

    fake_engine.py MODE [N]

MODE:
  random     plays a random legal move at once (seeded by the position, so repeatable),
             reporting `score cp N`
  illegal    plays random moves, then an illegal one as its N-th move
  crash      plays random moves, then exits (code 3) when asked for its N-th move
  hang       plays random moves, then never answers its N-th `go` (nor `stop`)
  silent     never says `uciok`
  flood      plays random moves, then answers its N-th `go` (and `stop`) with `info` lines
             without end, never `bestmove`
  chatty     answers `uci` with `id` lines without end, never `uciok`
  forks      starts a child process that sleeps (its command line ends with the marker N), then
             plays random moves, then never answers its N-th `go`
  longlines  plays random moves, each after an `info string` line of N KiB
"""
import random
import sys

import chess

mode = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
if mode == "forks":
    import subprocess
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", str(n)])
    n = 2
board = chess.Board()
moves_made = 0


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    cmd = words[0]
    if cmd == "uci":
        if mode == "chatty":
            while True:
                sys.stdout.write("id author Fake\n" * 1000)
                sys.stdout.flush()
        say("id name Fake " + mode)
        say("option name Hash type spin default 16 min 1 max 1024")
        if mode != "silent":
            say("uciok")
    elif cmd == "isready":
        say("readyok")
    elif cmd == "position":
        if words[1] == "startpos":
            board = chess.Board()
            rest = words[2:]
        else:
            board = chess.Board(" ".join(words[2:8]))
            rest = words[8:]
        if rest and rest[0] == "moves":
            for m in rest[1:]:
                board.push_uci(m)
    elif cmd == "go":
        moves_made += 1
        if moves_made >= n and mode == "crash":
            sys.exit(3)
        if moves_made >= n and mode in ("hang", "forks"):
            continue
        if moves_made >= n and mode == "flood":
            while True:
                sys.stdout.write("info depth 1 score cp 0 nodes 1\n" * 1000)
                sys.stdout.flush()
        if moves_made >= n and mode == "illegal":
            say("info depth 1 score cp 0")
            empty = next(s for s in chess.SQUARES if board.piece_at(s) is None)
            say("bestmove " + chess.square_name(empty) + chess.square_name((empty + 8) % 64))
            continue
        if mode == "longlines":
            say("info string " + "x" * (n * 1024))
        rng = random.Random(board.fen())
        move = rng.choice(list(board.legal_moves))
        say(f"info depth 1 score cp {n if mode == 'random' else -50} pv {move.uci()}")
        say("bestmove " + move.uci())
    elif cmd == "quit":
        break
