# The reference for `export --epd/--pgn --plies A-B` and its filters, written with python-chess
# alone (chess.polyglot for the book):
#
#   suites_check.py suite BOOK A B MATERIAL GAMES.pgn MIN SUITE.epd SUITE.pgn
#       the positions lines of book moves (weight >= 1, heaviest first, stored order among equals)
#       reach at any ply from A to B, first reach depth first (a position before the positions
#       below it), once each whatever the move order (Polyglot key and EPD); kept when MATERIAL
#       ("-" or "queens") holds and when GAMES.pgn's games played at least MIN moves from it ("-":
#       no such filter; the moves counted once per game and (position, move), as `tally` counts
#       them). SUITE.epd (written with --opcodes) must list them in this order, or in another
#       order when "shuffled" is given after SUITE.pgn; each line's `c0` line must reach its
#       position from the start, its `games` must be GAMES.pgn's count, its `id` must be its
#       number; SUITE.pgn's games must end at the same positions in the same order.
#       Prints "openings N". MATERIAL is "-", "queens" or FEN letters, as `--material` takes them.
#   suites_check.py drawrate FULL.epd KEPT.epd A B LO HI
#       KEPT.epd (--draw-rate LO-HI) must be the lines of FULL.epd (the same suite without it,
#       both with --opcodes) whose score (c0's "score") gives a draw rate from LO to HI percent
#       by the logistic model with parameters A and B, in the same order. Prints "kept N of M".
# Exits 1 on the first difference. tests/suite_reference.py (fail, walked_moves, same_lines,
# pgn_games) comes before this text.
import sys

import chess
import chess.pgn
import chess.polyglot


def popularity(games_path):
    """Polyglot key -> games that played a move from it, summed over its moves."""
    counts = {}
    with open(games_path) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            board = game.board()
            pairs = set()
            for move in game.mainline_moves():
                pairs.add((chess.polyglot.zobrist_hash(board), move.uci()))
                board.push(move)
            for key, _ in pairs:
                counts[key] = counts.get(key, 0) + 1
    return counts


def expected_suite(book, first, last, material, counts, least):
    reader = chess.polyglot.open_reader(book)
    expected, seen, expanded = [], set(), set()

    letters = "Qq" if material == "queens" else ("" if material == "-" else material)

    def keep(board):
        for letter in set(letters):
            piece = chess.Piece.from_symbol(letter)
            if len(board.pieces(piece.piece_type, piece.color)) < letters.count(letter):
                return False
        if least is not None and counts.get(chess.polyglot.zobrist_hash(board), 0) < least:
            return False
        return True

    def visit(board, depth):
        key = chess.polyglot.zobrist_hash(board)
        if depth >= first and (key, board.epd()) not in seen:
            seen.add((key, board.epd()))
            if keep(board):
                expected.append((board.epd(), depth, None if least is None else counts.get(key)))
        if depth >= last or (key, depth) in expanded:
            return
        expanded.add((key, depth))
        for e in walked_moves(reader, board):
            board.push(e.move)
            visit(board, depth + 1)
            board.pop()

    visit(chess.Board(), 0)
    return expected


def parse_epd_line(line):
    board = chess.Board()
    ops = board.set_epd(line)
    c0 = ops["c0"]
    sans, games = c0.split(",")[0].split(), None
    for part in c0.split(",")[1:]:
        name, value = part.split()
        if name == "games":
            games = int(value)
    moves = [t for t in sans if not t.endswith(".")]
    return board.epd(), moves, games, ops["id"]


def suite(book, first, last, material, games_path, least, epd_path, pgn_path, shuffled):
    counts = popularity(games_path) if games_path != "-" else {}
    expected = expected_suite(book, first, last, material, counts, least)
    got = []
    for i, line in enumerate(open(epd_path)):
        epd, moves, games, number = parse_epd_line(line)
        if str(number) != str(i + 1):
            fail(f"epd line {i + 1}: id {number!r}")
        board = chess.Board()
        for san in moves:
            board.push_san(san)
        if board.epd() != epd:
            fail(f"epd line {i + 1}: its c0 line reaches {board.epd()}, not {epd}")
        if not first <= len(moves) <= last:
            fail(f"epd line {i + 1}: {len(moves)} plies, not {first}-{last}")
        if least is not None and games != counts.get(chess.polyglot.zobrist_hash(board)):
            fail(f"epd line {i + 1}: games {games}, python-chess {counts.get(chess.polyglot.zobrist_hash(board))}")
        got.append((epd, len(moves), games))
    if len(set(e for e, _, _ in got)) != len(got):
        fail("epd: a position listed twice")
    if shuffled:
        if sorted(got) != sorted(expected):
            fail(f"epd: polybook {len(got)} openings, python-chess {len(expected)} (as sets)")
        if got == expected and len(got) > 2:
            fail("epd: --shuffle left the order as it was")
    else:
        same_lines(got, expected)
    ends = []
    for game in pgn_games(pgn_path):
        if game.headers["Round"] != str(len(ends) + 1):
            fail(f"pgn game {len(ends) + 1}: Round {game.headers['Round']}")
        ends.append(game.end().board().epd())
    if ends != [e for e, _, _ in got]:
        fail(f"pgn: {len(ends)} games, not the {len(got)} positions of the EPD in its order")
    print(f"openings {len(got)}")


def score_of(line):
    c0 = chess.Board().set_epd(line)["c0"]
    for part in c0.split(",")[1:]:
        name, value = part.split()
        if name == "score" and value.startswith("#"):
            return 100000 if value[1] == "+" else -100000
        if name == "score":
            return round(float(value) * 100)
    return None


def drawrate(full, kept, a, b, lo, hi):
    import math

    def draw(cp):
        win = 1 / (1 + math.exp((a - cp) / b))
        loss = 1 / (1 + math.exp((a + cp) / b))
        return 100 * max(0.0, 1 - win - loss)

    lines = [line.split(" c0 ")[0] for line in open(full)
             if score_of(line) is not None and lo <= draw(score_of(line)) <= hi]
    got = [line.split(" c0 ")[0] for line in open(kept)]
    if got != lines:
        fail(f"drawrate: polybook kept {len(got)}, python {len(lines)}")
    print(f"kept {len(got)} of {sum(1 for _ in open(full))}")


if sys.argv[1] == "drawrate":
    a = sys.argv[2:]
    drawrate(a[0], a[1], float(a[2]), float(a[3]), float(a[4]), float(a[5]))
elif sys.argv[1] == "suite":
    a = sys.argv[2:]
    suite(a[0], int(a[1]), int(a[2]), a[3], a[4], None if a[5] == "-" else int(a[5]), a[6], a[7], a[8:] == ["shuffled"])
else:
    fail(f"unknown check {sys.argv[1]!r}")
