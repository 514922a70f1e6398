# The games explorer (`polybook explore GAMES --player NAME`) against python-chess: every game
# read again with python-chess, its positions keyed by `chess.polyglot.zobrist_hash`, and each
# position's moves counted under a filter set by the rules written out below; then the same
# questions asked of the running server (`/api/games`), and the answers compared field by field.
# Run by tests/it/games.rs:
#
#   python3 tests/games_check.py URL PGN.xz PLAYER|- MAX_PLY
#
# URL is a running `polybook explore PGN.xz [--player PLAYER]`. Prints `checked N` (the
# (position, filters) pairs compared) and `ok`.
#
# The rules, as the issue and lichess state them (written here independently of polybook's code):
# - speed: TimeControl "INITIAL+INC", estimated seconds = INITIAL + 40 × INC; under 30
#   ultrabullet, 180 bullet, 480 blitz, 1500 rapid, 21600 classical, else correspondence; "-"
#   correspondence; anything else unknown.
# - rated: Event starts with "Rated", or a WhiteRatingDiff/BlackRatingDiff tag; casual: Event
#   starts with "Casual".
# - month: Date, else UTCDate (a usable year); a missing month counts as January.
# - rating filter: the opponent's rating (without a player: the mean of both, whole numbers
#   rounded down).
# - performance (the "algorithm of 400"): mean opponent rating + 400 × (wins − losses) / n over
#   the n games whose opponent is rated, rounded to the nearest whole number (halves up).
import json
import lzma
import math
import random
import sys
import urllib.error
import urllib.parse
import urllib.request

import chess
import chess.pgn
import chess.polyglot

url, pgn_path, player, max_ply = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], int(sys.argv[4])
player = None if player == "-" else player.lower()

STANDARD = {"", "standard", "chess", "normal", "from position", "fromposition", "from_position"}


def speed_of(tc):
    tc = (tc or "").strip()
    if tc == "-":
        return "correspondence"
    try:
        base, _, inc = tc.partition("+")
        seconds = int(base) + 40 * int(inc or "0")
    except ValueError:
        return "unknown"
    for bound, name in [(30, "ultrabullet"), (180, "bullet"), (480, "blitz"), (1500, "rapid"),
                        (21600, "classical")]:
        if seconds < bound:
            return name
    return "correspondence"


def month_of(headers):
    for tag in ["Date", "UTCDate"]:
        parts = headers.get(tag, "").split(".")
        if parts and parts[0].isdigit() and 1 <= int(parts[0]) <= 9999:
            year = int(parts[0])
            month = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() and 1 <= int(parts[1]) <= 12 else 1
            return year * 12 + month - 1
    return 0


def elo(headers, tag):
    value = headers.get(tag, "").strip()
    return min(int(value), 4095) if value.isdigit() else 0


games = []  # dicts
positions = {}  # key -> list of (game index, uci, san, fen)
with lzma.open(pgn_path, "rt", encoding="utf-8", errors="replace") as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        h = game.headers
        if h.get("Variant", "").strip().lower() not in STANDARD:
            continue
        result = {"1-0": 0, "1/2-1/2": 1, "0-1": 2}.get(h.get("Result", "").strip())
        if result is None:
            continue
        side = 0
        if player is not None:
            if h.get("White", "").strip().lower() == player:
                side = 1
            elif h.get("Black", "").strip().lower() == player:
                side = 2
            else:
                continue
        event = h.get("Event", "")
        rated = event.startswith("Rated") or "WhiteRatingDiff" in h or "BlackRatingDiff" in h
        mode = "rated" if rated else "casual" if event.startswith("Casual") else "unknown"
        g = dict(id=len(games), side=side, result=result, speed=speed_of(h.get("TimeControl")),
                 mode=mode, white_elo=elo(h, "WhiteElo"), black_elo=elo(h, "BlackElo"),
                 month=month_of(h), white=h.get("White", ""), black=h.get("Black", ""),
                 moves=[m.uci() for m in game.mainline_moves()], start=game.board().fen())
        games.append(g)
        board = game.board()
        for ply, move in enumerate(game.mainline_moves()):
            if ply >= max_ply:
                break
            key = chess.polyglot.zobrist_hash(board)
            positions.setdefault(key, []).append((g["id"], move.uci(), board.fen()))
            board.push(move)

print(f"python-chess: {len(games)} games, {len(positions)} positions", file=sys.stderr)


def player_result(g):
    return 2 - g["result"] if g["side"] == 2 else g["result"]


def filter_rating(g):
    if g["side"] == 1:
        return g["black_elo"]
    if g["side"] == 2:
        return g["white_elo"]
    if g["white_elo"] and g["black_elo"]:
        return (g["white_elo"] + g["black_elo"]) // 2
    return 0


def opponent_rating(g):
    return g["white_elo"] if g["side"] == 2 else g["black_elo"]


def passes(g, f):
    if "color" in f and f["color"] != "both" and g["side"] != {"white": 1, "black": 2}[f["color"]]:
        return False
    if "speed" in f and g["speed"] not in f["speed"].split(","):
        return False
    if f.get("mode", "all") != "all" and g["mode"] != f["mode"]:
        return False
    if "result" in f and ["win", "draw", "loss"][player_result(g)] not in f["result"].split(","):
        return False
    if "rating" in f:
        lo, hi = f["rating"].split("-")
        r = filter_rating(g)
        if r == 0 or (lo and r < int(lo)) or (hi and r > int(hi)):
            return False
    if "since" in f or "until" in f:
        m = g["month"]
        month = lambda s: int(s[:4]) * 12 + int(s[5:]) - 1
        if m == 0 or ("since" in f and m < month(f["since"])) or ("until" in f and m > month(f["until"])):
            return False
    if "opponent" in f:
        needle = f["opponent"].lower()
        if g["side"] == 1:
            names = [g["black"]]
        elif g["side"] == 2:
            names = [g["white"]]
        else:
            names = [g["white"], g["black"]]
        if not any(needle in n.lower() for n in names):
            return False
    return True


def half_up(x):
    """Rounded to the nearest whole number, halves up (Python's round() rounds halves to even)."""
    return math.floor(x + 0.5)


def expected(key, f):
    moves = {}
    for gid, uci, _ in positions.get(key, []):
        g = games[gid]
        if not passes(g, f):
            continue
        m = moves.setdefault(uci, dict(games=0, results=[0, 0, 0], player=[0, 0, 0], opp=[], last=0))
        m["games"] += 1
        m["results"][g["result"]] += 1
        m["player"][player_result(g)] += 1
        if opponent_rating(g):
            m["opp"].append((opponent_rating(g), player_result(g)))
        m["last"] = max(m["last"], g["month"])
        m.setdefault("ratings", [])
        if filter_rating(g):
            m["ratings"].append(filter_rating(g))
    out = {}
    for uci, m in moves.items():
        n = len(m["opp"])
        perf = None
        if n:
            wins = sum(1 for _, r in m["opp"] if r == 0)
            losses = sum(1 for _, r in m["opp"] if r == 2)
            perf = half_up(sum(o for o, _ in m["opp"]) / n + 400 * (wins - losses) / n)
        ratings = m.get("ratings", [])
        out[uci] = dict(
            games=m["games"], white=m["results"][0], draws=m["results"][1], black=m["results"][2],
            score=(2 * m["player"][0] + m["player"][1]) / (2 * m["games"]),
            performance=perf,
            rating=half_up(sum(ratings) / len(ratings)) if ratings else None,
            last=f"{m['last'] // 12:04d}-{m['last'] % 12 + 1:02d}" if m["last"] else None)
    return out


def ask(path, params):
    query = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{url}{path}?{query}", timeout=30) as reply:
        return json.load(reply)


if player is not None:
    filter_sets = [
        {},
        {"color": "white"},
        {"color": "black"},
        {"speed": "bullet"},
        {"speed": "blitz,ultrabullet"},
        {"mode": "rated"},
        {"mode": "casual"},
        {"rating": "3000-"},
        {"rating": "2800-3100", "color": "white"},
        {"rating": "-2900"},
        {"since": "2021-01"},
        {"until": "2020-06"},
        {"since": "2020-03", "until": "2021-06", "speed": "bullet"},
        {"result": "win"},
        {"result": "draw,loss", "color": "black"},
        {"opponent": "rebecca"},
        {"opponent": "z", "mode": "rated", "rating": "2900-", "speed": "bullet,blitz",
         "since": "2019-01", "result": "win,draw", "color": "white"},
    ]
else:
    filter_sets = [{}, {"speed": "bullet"}, {"rating": "3000-"}, {"result": "draw"},
                   {"opponent": "drnyk", "since": "2021-06"}, {"mode": "rated", "until": "2021-01"}]

# The positions: the most played, and a seeded sample of the rest (deep ones, transpositions).
rng = random.Random(20261126)
by_count = sorted(positions, key=lambda k: (-len(positions[k]), k))
chosen = by_count[:40] + rng.sample(by_count[40:], 40)
checked = 0
for i, key in enumerate(chosen):
    fen = positions[key][0][2]
    for f in ([filter_sets[i % len(filter_sets)], {}] if i >= 10 else filter_sets):
        want = expected(key, f)
        got = ask("/api/games", dict(fen=fen, **f))
        assert got["key"] == f"{key:016x}", (got["key"], key)
        got_moves = {m["uci"]: m for m in got["moves"]}
        assert set(got_moves) == set(want), (fen, f, sorted(got_moves), sorted(want))
        for uci, w in want.items():
            g = got_moves[uci]
            for field in ["games", "white", "draws", "black", "performance", "rating", "last"]:
                assert g[field] == w[field], (fen, f, uci, field, g[field], w[field])
            assert abs(g["score"] - w["score"]) < 1e-9, (fen, f, uci, g["score"], w["score"])
            for listed in g["top"] + g["recent"]:
                assert passes(games[listed["id"]], f), (fen, f, listed)
                assert listed["uci"] == uci
            # The most recent game is the one with the latest month (and of those, the last read).
            recent = [(games[gid]["month"], gid) for gid, u, _ in positions[key]
                      if u == uci and passes(games[gid], f)]
            assert [x["id"] for x in g["recent"]] == [gid for _, gid in sorted(recent, reverse=True)[:3]], \
                (fen, f, uci, g["recent"])
        assert got["games"] == sum(w["games"] for w in want.values())
        checked += 1

# A game whole, and where it reaches the position asked about (a transposition counts).
for key in chosen[:20]:
    gid, uci, fen = positions[key][-1]
    got = ask("/api/game", {"id": gid, "fen": fen})
    g = games[gid]
    assert [m["uci"] for m in got["moves"]] == g["moves"], gid
    board = chess.Board(got["start"])
    assert board.fen() == g["start"]
    first = 0 if chess.polyglot.zobrist_hash(board) == key else None
    for ply, move in enumerate(g["moves"]):
        board.push_uci(move)
        if first is None and chess.polyglot.zobrist_hash(board) == key:
            first = ply + 1
    assert got["ply"] == first, (gid, got["ply"], first)
    board = chess.Board(got["start"])
    for m in got["moves"][:30]:
        assert board.san(chess.Move.from_uci(m["uci"])) == m["san"], m
        board.push_uci(m["uci"])

print("checked", checked)
print("ok")
