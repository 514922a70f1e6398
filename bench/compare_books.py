#!/usr/bin/env python3
"""Compare two Polyglot books entry by entry: which (key, move) pairs each has, and how the
weights and learn fields of the shared pairs differ.

    python3 bench/compare_books.py A.bin B.bin [--examples N]

Reads the 16-byte entries directly (no python-chess needed); a pair present twice in one book
is reported. Used for docs/formats.md's comparison of `polybook convert` with jja's.
"""
import argparse
import collections
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    if len(data) % 16:
        sys.exit(f"{path}: {len(data)} bytes, not a whole number of entries")
    entries = {}
    dups = 0
    for off in range(0, len(data), 16):
        key, mv, weight, learn = struct.unpack_from(">QHHI", data, off)
        if (key, mv) in entries:
            dups += 1
        entries[(key, mv)] = (weight, learn)
    return len(data) // 16, entries, dups


def uci(mv):
    files = "abcdefgh"
    to, fr, promo = mv & 63, (mv >> 6) & 63, (mv >> 12) & 7
    s = f"{files[fr & 7]}{fr // 8 + 1}{files[to & 7]}{to // 8 + 1}"
    return s + ("", "n", "b", "r", "q")[promo] if promo < 5 else s + "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--examples", type=int, default=5)
    args = ap.parse_args()
    na, a, da = read(args.a)
    nb, b, db = read(args.b)
    print(f"A {args.a}: {na} entries, {len(a)} distinct (key, move), {len({k for k, _ in a})} keys, {da} repeated")
    print(f"B {args.b}: {nb} entries, {len(b)} distinct (key, move), {len({k for k, _ in b})} keys, {db} repeated")
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    both = sorted(set(a) & set(b))
    print(f"in both: {len(both)}; only in A: {len(only_a)}; only in B: {len(only_b)}")
    for name, rows, book in (("only in A", only_a, a), ("only in B", only_b, b)):
        for key, mv in rows[: args.examples]:
            w, l = book[(key, mv)]
            print(f"  {name}: key {key:016x} {uci(mv)} weight {w} learn {l:#x}")
    same_w = sum(1 for p in both if a[p][0] == b[p][0])
    same_l = sum(1 for p in both if a[p][1] == b[p][1])
    print(f"shared pairs: weight equal {same_w}, learn equal {same_l}")
    wa = collections.Counter(a[p][0] for p in both)
    wb = collections.Counter(b[p][0] for p in both)
    la = collections.Counter(a[p][1] for p in both)
    lb = collections.Counter(b[p][1] for p in both)
    print(f"A's commonest weights {wa.most_common(4)}; learns {la.most_common(3)}")
    print(f"B's commonest weights {wb.most_common(4)}; learns {lb.most_common(3)}")
    # Does B order the moves of a position as A does (by weight)? Count positions where the
    # heaviest move differs.
    best = {}
    for name, book in (("A", a), ("B", b)):
        top = {}
        for (key, mv), (w, _) in book.items():
            if (key, mv) in a and (key, mv) in b and (key not in top or w > top[key][0]):
                top[key] = (w, mv)
        best[name] = top
    differ = sum(1 for k in best["A"] if best["B"].get(k, (0, None))[1] != best["A"][k][1])
    print(f"positions whose heaviest shared move differs: {differ} of {len(best['A'])}")
    for p in both[: args.examples]:
        print(f"  both: key {p[0]:016x} {uci(p[1])} A ({a[p][0]}, {a[p][1]:#x}) B ({b[p][0]}, {b[p][1]:#x})")


if __name__ == "__main__":
    main()
