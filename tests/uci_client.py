#!/usr/bin/env python3
"""polybook under python-chess, as a GUI would drive it (run by tests/it/uci.rs).

    python3 tests/uci_client.py book POLYBOOK BOOK      book moves are the book's (polybook probe --json);
                                                        analyses of book positions are searched
    python3 tests/uci_client.py analyse POLYBOOK        an info stream: depths rise, PVs legal, scores
    python3 tests/uci_client.py game POLYBOOK BOOK      a whole game against Stockfish, Skill Level 0
    python3 tests/uci_client.py chess960 POLYBOOK       Chess960 games against Stockfish (UCI_Chess960),
                                                        and castling mates played as king takes rook

Any failed check raises (exit status 1) with what went wrong.
"""

import json
import logging
import os
import subprocess
import sys

import chess
import chess.engine

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import games  # noqa: E402


def probe_moves(polybook, book, board):
    out = subprocess.run([polybook, "probe", book, "--fen", board.fen(), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return {e["uci"] for e in json.loads(out)["entries"]}


def check_book(polybook, book):
    engine = chess.engine.SimpleEngine.popen_uci([polybook, "uci"])
    try:
        assert engine.id.get("name", "").startswith("polybook"), engine.id
        for name in ["Hash", "Move Overhead", "OwnBook", "BookFile", "BookSelection",
                     "BookMinWeight", "BookDepth", "BookSeed", "NullMove", "LMR"]:
            assert name in engine.options, f"option {name} missing"
        engine.configure({"BookFile": book, "BookSelection": "uniform", "Hash": 16})
        lines = [[], ["e4"], ["e4", "e5", "Nf3"], ["d4", "Nf6", "c4"]]
        seen = set()
        for seed in [1, 2, 3, 4, 5]:
            engine.configure({"BookSeed": seed})
            for line in lines:
                board = chess.Board()
                for san in line:
                    board.push_san(san)
                expected = probe_moves(polybook, book, board)
                assert expected, f"{board.fen()} should be in the book"
                result = engine.play(board, chess.engine.Limit(time=2.0), info=chess.engine.INFO_ALL)
                move = result.move.uci()
                assert move in expected, f"{move} is not a book move of {board.fen()} ({expected})"
                assert f"book move {move}" in result.info.get("string", ""), result.info
                seen.add((board.fen(), move))
        assert len(seen) > len(lines), "uniform choices with five seeds were all the same"
        # Analysis of a book position (go depth/nodes, no clock): searched, with a score; a
        # timed move of a game still comes from the book.
        board = chess.Board()
        board.push_san("e4")
        expected = probe_moves(polybook, book, board)
        assert expected
        for limit, key, value in [(chess.engine.Limit(depth=8), "depth", 8),
                                  (chess.engine.Limit(nodes=5000), "pv", None)]:
            info = engine.analyse(board, limit)
            assert "score" in info and info["pv"][0] in board.legal_moves, info
            assert value is None or info[key] == value, info
            assert "book" not in info.get("string", ""), info
        clock = chess.engine.Limit(white_clock=60, black_clock=60, white_inc=1, black_inc=1)
        for limit in [clock, chess.engine.Limit(time=1.0)]:
            result = engine.play(board, limit, info=chess.engine.INFO_ALL)
            assert result.move.uci() in expected, (result, expected)
            assert f"book move {result.move.uci()}" in result.info.get("string", ""), result.info
            assert "score" not in result.info, result.info
        # Out of the book: the engine searches instead.
        board = chess.Board("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9")
        assert not probe_moves(polybook, book, board)
        result = engine.play(board, chess.engine.Limit(depth=6), info=chess.engine.INFO_ALL)
        assert result.move in board.legal_moves and result.info.get("depth") == 6, result
        # OwnBook off: a book position is searched too.
        engine.configure({"OwnBook": False})
        result = engine.play(chess.Board(), chess.engine.Limit(depth=5), info=chess.engine.INFO_ALL)
        assert "book" not in result.info.get("string", "") and result.info.get("depth") == 5, result
        # BookDepth: past it, no book.
        engine.configure({"OwnBook": True, "BookDepth": 1})
        board = chess.Board()
        board.push_san("e4")
        board.push_san("e5")
        assert probe_moves(polybook, book, board)
        result = engine.play(board, chess.engine.Limit(depth=5), info=chess.engine.INFO_ALL)
        assert result.info.get("depth") == 5, result
    finally:
        engine.quit()
    print("book ok")


def check_analyse(polybook):
    engine = chess.engine.SimpleEngine.popen_uci([polybook, "uci"])
    try:
        board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4")
        depths = []
        with engine.analysis(board, chess.engine.Limit(depth=12)) as analysis:
            for info in analysis:
                if "depth" not in info or "pv" not in info:
                    continue
                depths.append(info["depth"])
                assert "score" in info and "nodes" in info and "time" in info, info
                b = board.copy()
                for m in info["pv"]:
                    assert m in b.legal_moves, f"illegal {m} in pv {info['pv']}"
                    b.push(m)
        # One line per iteration, depths 1, 2, 3, ... (the search may end early on a proven mate).
        assert depths == list(range(1, len(depths) + 1)) and len(depths) >= 5, depths
        # The mate in one is found and reported as a mate score.
        assert info["pv"][0] == chess.Move.from_uci("h5f7"), info
        assert info["score"].relative == chess.engine.Mate(1), info
        # Infinite analysis stops on request with a best move.
        with engine.analysis(chess.Board()) as analysis:
            for info in analysis:
                if info.get("depth", 0) >= 6:
                    break
        result = engine.play(chess.Board(), chess.engine.Limit(nodes=20000))
        assert result.move in chess.Board().legal_moves
    finally:
        engine.quit()
    print("analyse ok")


def check_game(polybook, book):
    pb, sf = games.open_engines([polybook, "uci"], book, skill=0)
    try:
        r = games.play_game(pb, sf, True, 3.0, 0.05)
        print(r)
        # polybook must neither lose on time nor play an illegal move. Stockfish losing on time is
        # the machine's load (the tests run side by side on 2 cores), not a fault of polybook's.
        assert not r["forfeit"] and not r["illegal"], r
        assert "illegal" not in r["reason"], r
        if not r["reason"].startswith("stockfish lost on time"):
            assert r["plies"] >= 10, r
    finally:
        pb.quit()
        sf.quit()
    print("game ok")


class Said(logging.Handler):
    """The lines one engine wrote, as python-chess logs them (`<protocol>: >> line`)."""

    def __init__(self, engine):
        super().__init__(logging.DEBUG)
        self.protocol = engine.protocol
        self.lines = []

    def emit(self, record):
        args = record.args if isinstance(record.args, tuple) else ()
        if record.msg == "%s: >> %s" and len(args) == 2 and args[0] is self.protocol:
            self.lines.append(args[1])


def check_chess960(polybook):
    """Chess960 games against Stockfish: python-chess sets UCI_Chess960 on both (polybook must list
    it), sends Shredder-FENs and castling as king takes rook, and pushes every move (an illegal one
    raises). polybook's moves must be spelled as python-chess spells them in Chess960."""
    pb = chess.engine.SimpleEngine.popen_uci([polybook, "uci"])
    sf = chess.engine.SimpleEngine.popen_uci(games.STOCKFISH)
    said = Said(pb)
    logger = logging.getLogger("chess.engine")
    logger.addHandler(said)
    logger.setLevel(logging.DEBUG)
    try:
        assert "UCI_Chess960" in pb.options, "UCI_Chess960 is not listed"
        pb.configure({"Hash": 16})
        sf.configure({"Skill Level": 0, "Threads": 1, "Hash": 16})

        def play(engine, board, limit):
            said.lines.clear()
            result = engine.play(board, limit)
            if engine is pb:
                best = [line.split()[1] for line in said.lines if line.startswith("bestmove ")]
                assert best == [result.move.uci()], (board.fen(), best, result.move.uci())
                bad = [line for line in said.lines if line.startswith("info string")
                       and any(w in line for w in ("invalid", "illegal", "impossible", "keeping"))]
                assert not bad, (board.fen(), bad)
            assert result.move in board.legal_moves, (board.fen(), result.move)
            return result.move

        castles = set()
        for n, polybook_white in [(0, True), (100, False), (518, True), (959, False)]:
            board = chess.Board.from_chess960_pos(n)
            for e in (pb, sf):
                e.protocol.send_line("ucinewgame")
            while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 600:
                polybook_to_move = (board.turn == chess.WHITE) == polybook_white
                engine = pb if polybook_to_move else sf
                move = play(engine, board, chess.engine.Limit(time=0.02))
                if board.is_castling(move):
                    castles.add(("polybook" if polybook_to_move else "stockfish",
                                 "O-O" if board.is_kingside_castling(move) else "O-O-O"))
                board.push(move)
            outcome = board.outcome(claim_draw=True)
            print(f"chess960 position {n}: {board.result(claim_draw=True)} "
                  f"({outcome.termination.name.lower() if outcome else 'move limit'}, "
                  f"{len(board.move_stack)} plies)")
            assert outcome is not None, f"position {n}: no end in {len(board.move_stack)} plies"
        print("castles in the games:", sorted(castles))
        # Castling that mates, each way: the king stays on g1 (O-O), the king steps from b1 to c1
        # (O-O-O); both are written as king takes rook.
        for fen, expected in [("4rkr1/4p1p1/8/8/8/8/6PP/6KR w H - 0 1", "g1h1"),
                              ("2rkr3/2p1p3/8/8/8/8/PP6/RK6 w A - 0 1", "b1a1")]:
            board = chess.Board(fen, chess960=True)
            move = play(pb, board, chess.engine.Limit(depth=3))
            assert move.uci() == expected and board.is_castling(move), (fen, move)
        # After castling each way in the moves of `position`, polybook plays on from there.
        board = chess.Board("1r2k2r/pppppppp/8/8/8/8/PPPPPPPP/1R2K2R w HBhb - 0 1", chess960=True)
        for uci in ["e1h1", "e8b8"]:
            board.push_uci(uci)
        move = play(pb, board, chess.engine.Limit(depth=4))
        assert move in board.legal_moves
    finally:
        logger.removeHandler(said)
        pb.quit()
        sf.quit()
    print("chess960 ok")


if __name__ == "__main__":
    mode, polybook = sys.argv[1], sys.argv[2]
    if mode == "book":
        check_book(polybook, sys.argv[3])
    elif mode == "analyse":
        check_analyse(polybook)
    elif mode == "game":
        check_game(polybook, sys.argv[3])
    elif mode == "chess960":
        check_chess960(polybook)
    else:
        sys.exit(f"unknown mode {mode}")
