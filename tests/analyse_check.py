# The reference for `polybook analyse`, written with python-chess alone: reads the input book with
# chess.polyglot, the engine's verdicts from `analyse --json`, backs them up by negamax (the rule of
# src/analysis/backup.rs, written again here), and compares every book move's score and depth with
# the learn fields of the analysed book, decoded here in ProDeo's layout from the raw bytes.
#
# usage: analyse_check.py BOOK SCORED_BOOK ANALYSIS.jsonl [--expand MARGIN WIDTH MAX_PLY]
# prints: "moves N positions M repetitions R transpositions T" when all agree; exits 1 otherwise.
#
# With --expand (BOOK is then the grown book itself, SCORED_BOOK too), it also checks the end of
# `analyse --expand` when its budget was not reached: no book position fewer than MAX_PLY plies from
# the start is left whose best move outside the book (its verdict in the listing) beats the book's
# best by more than MARGIN, or that has fewer than WIDTH book moves within MARGIN of its value while
# the move outside does too; and prints "open 0 checked C" (C positions checked).
import json
import struct
import sys

import chess
import chess.polyglot

MATE, MATE_BOUND = 32000, 31000

book_path, scored_path, json_path = sys.argv[1:4]
expand = None
if sys.argv[4:5] == ["--expand"]:
    expand = tuple(int(a) for a in sys.argv[5:8])
verdicts = {}
for line in open(json_path):
    o = json.loads(line)
    verdicts[int(o["key"], 16)] = (o["score"], o["depth"])

reader = chess.polyglot.open_reader(book_path)


def book_moves(board):
    """The legal book moves in stored order, the first entry of a repeated move only."""
    seen, out = set(), []
    for e in reader.find_all(board, minimum_weight=0):
        if e.move not in seen:
            seen.add(e.move)
            out.append(e)
    return out


def from_parent(v):
    if v > MATE_BOUND:
        v -= 1
    elif v < -MATE_BOUND:
        v += 1
    return -v


values, move_scores = {}, {}
stats = {"repetitions": 0, "transpositions": 0}
on_path = set()


def in_book(board):
    # Any entry under the key, legal or not (as the walk asks of the book).
    key = chess.polyglot.zobrist_hash(board)
    lo, hi = 0, len(reader)
    while lo < hi:
        mid = (lo + hi) // 2
        if reader[mid].key < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(reader) and reader[lo].key == key


def terminal(board):
    if board.legal_moves.count() == 0:
        return (-MATE if board.is_check() else 0, 255)
    return None


def value(board):
    key = chess.polyglot.zobrist_hash(board)
    if key in values:
        stats["transpositions"] += 1
        return values[key]
    on_path.add(key)
    best = verdicts.get(key)
    t = terminal(board)
    if t is not None:
        best = t
    for e in book_moves(board):
        board.push(e.move)
        child_key = chess.polyglot.zobrist_hash(board)
        if child_key in on_path:
            stats["repetitions"] += 1
            child = (0, 0)
        elif in_book(board):
            child = value(board)
        else:
            child = terminal(board) or verdicts.get(child_key)
        board.pop()
        if child is None:
            continue
        score = (from_parent(child[0]), child[1])
        move_scores[(key, e.raw_move)] = score
        if best is None or score[0] > best[0]:
            best = score
    on_path.discard(key)
    if best is not None:
        values[key] = best
    return best


sys.setrecursionlimit(100000)
value(chess.Board())

# The analysed book, raw: 16-byte big-endian entries; the mark first.
data = open(scored_path, "rb").read()
entries = [struct.unpack(">QHHI", data[i:i + 16]) for i in range(0, len(data), 16)]
assert entries[0] == (0, 0, 0, 0x70625344), f"no mark: {entries[0]}"
found = {}
for key, raw, weight, learn in entries[1:]:
    score = (learn >> 16) & 0xFFFF
    if score >= 0x8000:
        score -= 0x10000
    depth = (learn >> 8) & 0xFF
    if depth:
        found[(key, raw)] = (score, depth)

wrong = []
for k, (score, depth) in move_scores.items():
    want = (max(-MATE, min(MATE, score)), max(1, min(255, depth)))
    if found.get(k) != want:
        wrong.append(f"{k[0]:016x} {k[1]:04x}: book {found.get(k)} reference {want}")
extra = set(found) - set(move_scores)
if wrong or extra:
    print("\n".join(wrong[:10]), f"({len(wrong)} differ, {len(extra)} scored only in the book)")
    sys.exit(1)
print(f"moves {len(move_scores)} positions {len(values)} repetitions {stats['repetitions']} "
      f"transpositions {stats['transpositions']}")

if expand:
    margin, width, max_ply = expand
    # The fewest plies from the start to each book position, by its legal book moves.
    plies, frontier = {}, [chess.Board()]
    plies[chess.polyglot.zobrist_hash(frontier[0])] = 0
    depth, open_, checked = 0, [], 0
    while frontier:
        nxt = []
        for board in frontier:
            key = chess.polyglot.zobrist_hash(board)
            if depth < max_ply and key in values:
                checked += 1
                scores = [move_scores[(key, e.raw_move)][0] for e in book_moves(board)
                          if (key, e.raw_move) in move_scores]
                value = values[key][0]
                drop = verdicts.get(key)
                legal_outside = board.legal_moves.count() > len(book_moves(board))
                if drop is not None and legal_outside:
                    better = not scores or drop[0] > max(scores) + margin
                    good = sum(1 for sc in scores if sc >= value - margin)
                    thin = good < width and drop[0] >= value - margin
                    if better or thin:
                        open_.append(f"{board.fen()}: outside {drop[0]}, book {scores}, value {value}")
            for e in book_moves(board):
                board.push(e.move)
                child = chess.polyglot.zobrist_hash(board)
                if child not in plies and in_book(board):
                    plies[child] = depth + 1
                    nxt.append(board.copy())
                board.pop()
        frontier, depth = nxt, depth + 1
    if open_:
        print("\n".join(open_[:10]), f"({len(open_)} positions left thin or wrong)")
        sys.exit(1)
    print(f"open 0 checked {checked}")
