//! Arena (ABK) books: `tests/data/books/libra8.abk` read by every command that reads a book,
//! checked against a decoding written here in Python from the layout of `docs/formats.md`
//! (python-chess for the positions), and `convert`'s round trip Polyglot → ABK → Polyglot
//! against python-chess reading both Polyglot books.

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode};

use polybook::book::Book;
use polybook::book::formats::abk::read_abk;

use crate::common::{self, bestmoves, data, polybook, polybook_ok, python, uci_session};

fn libra8() -> std::path::PathBuf {
    data("books/libra8.abk")
}

/// An independent decoding: the 28-byte records read with `struct`, the tree walked from record
/// 900 with python-chess, the weights by the documented rule (games × priority / 5 summed over
/// transpositions, then scaled to 65535 per position). Prints the live records read, then for
/// each position of `argv[2:]` (FENs) its moves `uci:weight`, sorted, one line per position.
const PY_DECODE: &str = r#"
import struct, sys, chess, chess.polyglot
data = open(sys.argv[1], 'rb').read()
live = 0
sums = {}
stack = [(900, chess.Board())]
while stack:
    i, board = stack.pop()
    frm, to, promo, prio, games, won, lost, flags, reply, sib = struct.unpack_from('<BBbBiiiiii', data, i * 28)
    if sib >= 0:
        stack.append((sib, board.copy()))
    move = chess.Move(frm, to, [None, chess.ROOK, chess.KNIGHT, chess.BISHOP, chess.QUEEN][abs(promo)])
    assert board.is_legal(move), (i, move)
    if flags == 0:
        live += 1
        key = chess.polyglot.zobrist_hash(board)
        per = sums.setdefault(key, {})
        per[move.uci()] = per.get(move.uci(), 0) + max(games, 1) * prio
    if reply > 0:
        after = board.copy()
        after.push(move)
        stack.append((reply, after))
print(live)
for fen in sys.argv[2:]:
    board = chess.Board(fen)
    raw = sums.get(chess.polyglot.zobrist_hash(board), {})
    w = {m: (r + 2) // 5 if r else 0 for m, r in raw.items()}
    w = {m: (max(1, v) if raw[m] else 0) for m, v in w.items()}
    top = max(w.values(), default=0)
    if top > 65535:
        w = {m: (max(1, v * 65535 // top) if v else 0) for m, v in w.items()}
    print(' '.join(sorted(f'{m}:{v}' for m, v in w.items())))
"#;

/// The moves polybook reads for `pos` from `book`, in python's spelling (castling e1g1).
fn moves_of(book: &Book, pos: &Chess) -> String {
    let mut moves: Vec<String> = book
        .probe(pos)
        .legal
        .iter()
        .map(|m| format!("{}:{}", m.mv.to_uci(CastlingMode::Standard), m.entry.weight))
        .collect();
    moves.sort();
    moves.join(" ")
}

#[test]
fn libra8_reads_as_python_decodes_it() {
    let lines = [
        &[][..],
        &["e2e4"],
        &["d2d4", "g8f6"],
        &["e2e4", "c7c5", "g1f3"],
        &["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"],
        &["d2d4", "g8f6", "c2c4", "e7e6", "g1f3"],
        &["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5"],
    ];
    let positions: Vec<Chess> = lines.iter().map(|l| common::position_after(l)).collect();
    let fens: Vec<String> = positions
        .iter()
        .map(|p| Fen::from_position(p, EnPassantMode::Legal).to_string())
        .collect();
    let mut args = vec![libra8().display().to_string()];
    args.extend(fens.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = python(PY_DECODE, &args);
    let mut out = out.lines();
    // The header's move count: every record not flagged deleted.
    assert_eq!(out.next(), Some("139747"));
    let book = Book::open(libra8()).unwrap();
    let mut nonempty = 0;
    for ((pos, fen), want) in positions.iter().zip(&fens).zip(out) {
        assert_eq!(moves_of(&book, pos), want, "{fen}");
        nonempty += usize::from(!want.is_empty());
    }
    assert!(nonempty >= 5, "too few positions in the book to compare");

    let abk = read_abk(&std::fs::read(libra8()).unwrap()).unwrap();
    assert_eq!(abk.header.moves, 139_747);
    assert_eq!((abk.live_moves, abk.deleted_moves), (139_747, 1_040));
    assert_eq!(abk.header.depth, 16);
}

#[test]
fn every_command_reads_an_abk_book() {
    let book = libra8().display().to_string();
    let probe = polybook_ok(&["probe", &book]);
    for m in ["e2e4", "d2d4", "c2c4", "g1f3"] {
        assert!(probe.contains(m), "{probe}");
    }
    let info = polybook_ok(&["info", &book]);
    assert!(info.contains("62289"), "{info}");
    assert!(!polybook_ok(&["lines", &book, "--color", "white"]).is_empty());
    assert!(polybook_ok(&["dump", &book]).lines().count() > 80_000);
    // The UCI engine plays its first move from it.
    let out = uci_session(&format!(
        "uci\nsetoption name BookFile value {book}\nisready\nposition startpos\ngo depth 1 wtime 60000 btime 60000\nquit\n"
    ));
    assert!(out.contains("info string book move"), "{out}");
    assert!(
        ["e2e4", "d2d4", "c2c4", "g1f3"].contains(&bestmoves(&out)[0]),
        "{out}"
    );
}

#[test]
fn a_file_that_is_not_abk_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = common::write_file(&dir, "bad.abk", b"not a book at all");
    let err = common::polybook_fails(
        &["probe", bad.to_str().unwrap()],
        1,
        "not an Arena (ABK) book",
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // A cycle in the links.
    let mut data = std::fs::read(libra8()).unwrap();
    data[900 * 28 + 24..900 * 28 + 28].copy_from_slice(&900i32.to_le_bytes());
    let cyc = common::write_file(&dir, "cycle.abk", &data);
    let err = common::polybook_fails(&["probe", cyc.to_str().unwrap()], 1, "cycle");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// Rodent III's micro book → .abk → .bin: every position reachable from the start keeps its
/// moves and weights (the weights are the games at the default priority), as python-chess reads them.
#[test]
fn convert_round_trips_a_polyglot_book_through_abk() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("books/rodent3_micro.bin");
    let abk = dir.path().join("micro.abk");
    let back = dir.path().join("back.bin");
    let s = |p: &std::path::Path| p.display().to_string();
    polybook_ok(&[
        "convert",
        &s(&src),
        "-o",
        &s(&abk),
        "--comment",
        "rodent3 micro",
    ]);
    polybook_ok(&["convert", &s(&abk), "-o", &s(&back)]);
    let verify = polybook(&["verify", &s(&back)]);
    assert!(verify.status.success(), "{verify:?}");
    let want = common::python_reachable(&src, &[]);
    let got = common::python_reachable(&back, &[]);
    assert!(want.lines().count() > 500, "{}", want.lines().count());
    assert_eq!(got, want);
    // The header as Arena reads it.
    let bytes = std::fs::read(&abk).unwrap();
    assert_eq!(&bytes[..4], b"\x03ABK");
    assert_eq!(read_abk(&bytes).unwrap().header.comment, "rodent3 micro");
    // And the PGN, as `export --pgn` writes it.
    let pgn = dir.path().join("micro.pgn");
    polybook_ok(&["convert", &s(&abk), "-o", &s(&pgn)]);
    let exported = dir.path().join("export.pgn");
    polybook_ok(&["export", &s(&abk), "--pgn", "-o", &s(&exported)]);
    assert_eq!(
        std::fs::read(&pgn).unwrap(),
        std::fs::read(&exported).unwrap()
    );
}
