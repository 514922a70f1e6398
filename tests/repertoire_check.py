# `polybook repertoire` read again with python-chess: the same games counted, the same repertoire
# chosen by the rules written out below (independently of polybook's code), and the result
# compared by the caller (tests/it/repertoire.rs) with the book polybook wrote, read back with
# chess.polyglot, and with its PGN tree, read back with chess.pgn.
#
#   python3 tests/repertoire_check.py GAMES.pgn.xz PLAYER JOBS.json
#
# The games are read once for several repertoires: JOBS is a JSON list of objects with `player`
# (true: PLAYER's games only; false: all games), `color` (white or black), `min_games`, `width`,
# `min_prob` (percent), `max_ply`, `book` (the book polybook wrote) and optionally `tree` (its
# --pgn file). Prints one JSON object per job, a line each: `ours` (this script's entries, [key,
# raw move, weight], sorted), `book` (the book's entries, the same way), `main_line` (this script's
# most likely line, UCI), `positions` (this script's positions with a move), and with a tree `tree`
# (the PGN tree's [key, raw move] pairs, sorted), `tree_main_line` and `tree_errors` (python-
# chess's errors reading it).
#
# The rules:
# - games: standard chess; with a player, those where the White (for white) or Black tag is the
#   player's name (trimmed, any case). Every move of every game counts once per time it is played
#   (transpositions and repetitions included), with the result from the mover's side; a result
#   other than 1-0, 0-1, 1/2-1/2 counts as a draw (as `build` counts it).
# - a move's Polyglot code: to | from << 6 | promotion << 12 (N 1, B 2, R 3, Q 4), castling as the
#   king taking its rook.
# - my moves (my colour to move): those with at least MIN_GAMES games, ranked by the Wilson lower
#   bound at z = 1.96 of (wins + draws / 2) / games, then games, then the lower code; the best
#   WIDTH kept, weights WIDTH, WIDTH - 1, ...; the line's probability does not change.
# - the opponent's moves: each reply's share = its games / the position's games; kept when the
#   line's probability times the share is at least MIN_PROB / 100; weight = games (scaled to fit
#   65535 when the most played is above it).
# - no move at ply MAX_PLY or beyond.
# - positions by Polyglot key, each expanded once, with its most likely line (highest
#   probability, then fewest plies, then found first): settled most likely first (Dijkstra).
# - the main line: from the start, each position's first move (my best; the most played reply,
#   ties to the lower code), while the position after it is settled by that very move.
import heapq
import json
import lzma
import math
import sys

import chess
import chess.pgn
import chess.polyglot

pgn_path, player, jobs = sys.argv[1], sys.argv[2], json.loads(open(sys.argv[3]).read())
player = player.strip().lower()

STANDARD = {"", "standard", "chess", "normal", "from position", "fromposition", "from_position"}


def raw(board, move):
    to = move.to_square
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        to = chess.square(7 if board.is_kingside_castling(move) else 0, rank)
    promo = (move.promotion - 1) if move.promotion else 0
    return to | (move.from_square << 6) | (promo << 12)


# tables[colour][key][code] = [games, wins, draws, losses, move]: the games in which the player
# had that colour; every_game: all games.
tables = {chess.WHITE: {}, chess.BLACK: {}}
every_game = {}
with lzma.open(pgn_path, "rt", encoding="utf-8", errors="replace") as text:
    while (game := chess.pgn.read_game(text)) is not None:
        h = game.headers
        if h.get("Variant", "Standard").strip().lower() not in STANDARD:
            continue
        counted = [every_game] + [
            tables[c] for c, tag in [(chess.WHITE, "White"), (chess.BLACK, "Black")]
            if h.get(tag, "").strip().lower() == player]
        white_points = {"1-0": 2, "0-1": 0, "1/2-1/2": 1}.get(h.get("Result", "*"), 1)
        board = game.board()
        for move in game.mainline_moves():
            points = white_points if board.turn == chess.WHITE else 2 - white_points
            key, code = chess.polyglot.zobrist_hash(board), raw(board, move)
            for counts in counted:
                c = counts.setdefault(key, {}).setdefault(code, [0, 0, 0, 0, move])
                c[0] += 1
                c[1 + (2 - points)] += 1  # points 2: a win, 1: a draw, 0: a loss
            board.push(move)


def wilson(points, n, z=1.96):
    p = points / n
    z2 = z * z
    centre = p + z2 / (2.0 * n)
    margin = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    return (centre - margin) / (1.0 + z2 / n)


def choose(board, key, prob, counts, me, min_games, width, min_prob):
    """[(code, move, weight, prob after)] in the tree's order."""
    here = counts.get(key, {})
    if board.turn == me:
        ranked = []
        for code, (g, w, d, l, mv) in here.items():
            if g >= min_games:
                ranked.append((-wilson((2 * w + d) / 2.0, g), -g, code, mv))
        ranked.sort()
        ranked = ranked[:width]
        return [(code, mv, len(ranked) - i, prob) for i, (_, _, code, mv) in enumerate(ranked)]
    total = sum(c[0] for c in here.values())
    replies = []
    for code, (g, w, d, l, mv) in here.items():
        after = prob * (g / total)
        if after >= min_prob:
            replies.append((-g, code, mv, after))
    replies.sort()
    most = max((-r[0] for r in replies), default=0)
    weight = (lambda g: g) if most <= 65535 else (lambda g: max(1, g * 65535 // most))
    return [(code, mv, weight(-ng), after) for ng, code, mv, after in replies]


def repertoire(job):
    me = chess.WHITE if job["color"] == "white" else chess.BLACK
    counts = tables[me] if job["player"] else every_game
    min_games, width = job["min_games"], job["width"]
    min_prob, max_ply = job["min_prob"] / 100, job["max_ply"]
    start = chess.Board()
    heap = [(-1.0, 0, 0, None, start.fen())]
    seq = 0
    settled = {}  # key -> (parent key, code) or None
    moves_of = {}  # key -> [(code, move, weight, prob after, key after)]
    while heap:
        negprob, ply, _, parent, fen = heapq.heappop(heap)
        board = chess.Board(fen)
        key = chess.polyglot.zobrist_hash(board)
        if key in settled:
            continue
        settled[key] = parent
        chosen = []
        if ply < max_ply:
            chosen = choose(board, key, -negprob, counts, me, min_games, width, min_prob)
        moves_of[key] = []
        for code, mv, weight, after in chosen:
            board.push(mv)
            child = chess.polyglot.zobrist_hash(board)
            moves_of[key].append((code, mv, weight, after, child))
            if child not in settled:
                seq += 1
                heapq.heappush(heap, (-after, ply + 1, seq, (key, code), board.fen()))
            board.pop()

    ours = sorted([key, code, weight] for key, ms in moves_of.items() for code, _, weight, _, _ in ms)

    main_line = []
    key = chess.polyglot.zobrist_hash(start)
    while moves_of.get(key):
        code, mv, _, _, child = moves_of[key][0]
        main_line.append(mv.uci())
        if settled[child] != (key, code):
            break
        key = child

    reader = chess.polyglot.open_reader(job["book"])
    book = sorted([e.key, e.raw_move, e.weight] for e in (reader[i] for i in range(len(reader))))

    out = {
        "ours": ours,
        "book": book,
        "main_line": main_line,
        "positions": sum(1 for ms in moves_of.values() if ms),
    }
    if job.get("tree"):
        with open(job["tree"], encoding="utf-8") as f:
            tree = chess.pgn.read_game(f)
        pairs = set()
        stack = [tree]
        while stack:
            node = stack.pop()
            board = node.board()
            for child in node.variations:
                pairs.add((chess.polyglot.zobrist_hash(board), raw(board, child.move)))
                stack.append(child)
        out["tree"] = sorted(list(p) for p in pairs)
        out["tree_main_line"] = [m.uci() for m in tree.mainline_moves()]
        out["tree_errors"] = [str(e) for e in tree.errors]
    return out


for job in jobs:
    print(json.dumps(repertoire(job)))
