"""An independent reading of a CTG book (docs/formats.md, "ChessBase books (CTG)"), for the test
`formats::simple_ctg_matches_an_independent_reading`: every record of every page of the .ctg is
decoded, then the book is walked from the start position with python-chess, looking each position
up by its encoding. Prints one line per reached position, sorted:
`KEY MOVES GAMES WINS LOSSES DRAWS` (KEY the Polyglot key in hex, MOVES uci moves joined by commas
or `-`). Usage: ctg_check.py BOOK.ctg"""

import sys

import chess
import chess.polyglot

# Move codes of the documented table that this reading knows: (piece, number, files, ranks).
MOVES = {
    0x5F: ("P", 4, 0, 2),
    0xE6: ("P", 3, 0, 2),
    0xDB: ("P", 0, 0, 2),
    0x62: ("P", 1, 0, 2),
    0x9B: ("P", 2, 0, 2),
    0xB1: ("P", 5, 0, 2),
    0xC8: ("P", 6, 0, 2),
    0x4A: ("P", 7, 0, 2),
    0x34: ("N", 0, 1, 2),
    0x36: ("N", 0, 2, 1),
    0x4C: ("N", 1, 1, 2),
    0xF3: ("N", 1, -1, 2),
}

CODES = {"P": "11", "N": "1001", "B": "1010", "R": "1011", "Q": "10001", "K": "10000"}


def squares():
    for f in range(8):
        for r in range(8):
            yield chess.square(f, r)


def stored(board):
    """The board as the book stores it (White to move), and whether it was flipped/mirrored."""
    b = board.copy(stack=False)
    flipped = b.turn == chess.BLACK
    if flipped:
        b = b.mirror()  # python-chess: colours swapped, ranks reversed, turn switched
    mirrored = not b.castling_rights and chess.square_file(b.king(chess.WHITE)) < 4
    if mirrored:
        b = b.transform(chess.flip_horizontal)
    return b, flipped, mirrored


def encode(b):
    bits = "00000000"
    for sq in squares():
        p = b.piece_at(sq)
        if p is None:
            bits += "0"
        else:
            bits += CODES[p.symbol().upper()] + ("0" if p.color == chess.WHITE else "1")
    tail = ""
    ep = b.ep_square if b.has_legal_en_passant() else None
    if ep is not None:
        tail += format(chess.square_file(ep), "03b")
    if b.castling_rights:
        for sq in (chess.H8, chess.A8, chess.H1, chess.A1):
            tail += "1" if b.castling_rights & chess.BB_SQUARES[sq] else "0"
    if not tail:
        bits += "0"
    while (len(bits) + len(tail)) % 8:
        bits += "0"
    bits += tail
    out = bytearray(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))
    out[0] = len(out) | (0x20 if ep is not None else 0) | (0x40 if b.castling_rights else 0)
    return bytes(out)


def records(ctg):
    found = {}
    for start in range(4096, len(ctg) - 4095, 4096):
        page = ctg[start : start + 4096]
        count = int.from_bytes(page[0:2], "big")
        at = 4
        for _ in range(count):
            n = page[at] & 31
            key = bytes(page[at : at + n])
            m = page[at + n]
            moves = [(page[at + n + 1 + 2 * i], page[at + n + 2 + 2 * i]) for i in range((m - 1) // 2)]
            st = page[at + n + m : at + n + m + 33]
            u24 = lambda o: int.from_bytes(st[o : o + 3], "big")
            found[key] = (moves, u24(0), u24(3), u24(6), u24(9))
            at += n + m + 33
    return found


def main():
    ctg = open(sys.argv[1], "rb").read()
    book = records(ctg)
    seen = set()
    queue = [chess.Board()]
    lines = []
    while queue:
        board = queue.pop(0)
        b, flipped, mirrored = stored(board)
        rec = book.get(encode(b))
        if rec is None:
            continue
        moves, games, wins, losses, draws = rec
        ucis = []
        for code, _annotation in moves:
            piece, number, df, dr = MOVES[code]
            own = [sq for sq in squares() if b.piece_at(sq) == chess.Piece.from_symbol(piece)]
            frm = own[number]
            to = chess.square((chess.square_file(frm) + df) % 8, (chess.square_rank(frm) + dr) % 8)
            if mirrored:
                frm, to = frm ^ 7, to ^ 7  # file a <-> h
            if flipped:
                frm, to = chess.square_mirror(frm), chess.square_mirror(to)
            move = chess.Move(frm, to)
            assert move in board.legal_moves, move
            ucis.append(move.uci())
            child = board.copy(stack=False)
            child.push(move)
            key = chess.polyglot.zobrist_hash(child)
            if key not in seen:
                seen.add(key)
                queue.append(child)
        key = chess.polyglot.zobrist_hash(board)
        lines.append(f"{key:016x} {','.join(ucis) or '-'} {games} {wins} {losses} {draws}")
    assert len(lines) == len(book), f"{len(lines)} positions reached, {len(book)} records"
    print("\n".join(sorted(lines)))


main()
