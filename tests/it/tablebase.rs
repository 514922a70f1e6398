//! The 3-man tablebase against references: every position of KRvK1000.epd (whose `bm #N` come
//! from a real tablebase), a brute-force mate search with python-chess on a sample of KQvK and
//! KRvK positions, and `polybook solve` on the whole KRvK file.

use crate::common;

use std::process::Command;

use polybook::engine::suite::parse_epd;
use polybook::engine::tablebase::{Value, probe};
use polybook::position::parse_fen;

use common::epd as data;

#[test]
fn every_krvk1000_line_agrees() {
    let bytes = std::fs::read(data("KRvK1000.epd")).expect("the test data is present (tests/data)");
    let (entries, errors) = parse_epd(&String::from_utf8_lossy(&bytes));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(entries.len(), 1000);
    let mut wins = 0;
    for e in &entries {
        let n = e.task.mate.expect("bm #N");
        let v = probe(&e.pos).expect("a KRvK position");
        assert_eq!(v.mate_moves(), Some(n), "line {}: {} {v:?}", e.line, e.fen);
        wins += usize::from(n > 0);
    }
    assert!(wins > 0 && wins < 1000, "both sides to move: {wins} wins");
}

fn fen_of(squares: [(u64, char); 3], white_to_move: bool) -> String {
    let mut board = [['1'; 8]; 8];
    for (sq, piece) in squares {
        board[7 - (sq / 8) as usize][(sq % 8) as usize] = piece;
    }
    let ranks: Vec<String> = board.iter().map(|r| r.iter().collect()).collect();
    let placement = ranks.join("/");
    // Collapse runs of empty squares.
    let mut out = String::new();
    let mut empty = 0;
    for c in placement.chars() {
        if c == '1' {
            empty += 1;
        } else {
            if empty > 0 {
                out.push_str(&empty.to_string());
                empty = 0;
            }
            out.push(c);
        }
    }
    if empty > 0 {
        out.push_str(&empty.to_string());
    }
    format!("{out} {} - - 0 1", if white_to_move { 'w' } else { 'b' })
}

#[test]
fn short_mates_agree_with_python_chess_brute_force() {
    // Random legal positions of KQvK and KRvK, either colour strong, either side to move, until
    // each (piece, value) bucket holds a few: wins in 1, 3, 5 plies, losses in 0, 2, 4, draws.
    let buckets = [
        Value::Win { plies: 1 },
        Value::Win { plies: 3 },
        Value::Win { plies: 5 },
        Value::Loss { plies: 0 },
        Value::Loss { plies: 2 },
        Value::Loss { plies: 4 },
        Value::Draw,
    ];
    let per_bucket = 6;
    let mut counts = [[0; 7]; 2];
    let mut lines = String::new();
    let mut rng = common::XorShift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..2_000_000 {
        if counts.iter().flatten().all(|&c| c >= per_bucket) {
            break;
        }
        let queen = rng.below(2) == 0;
        let white_strong = rng.below(2) == 0;
        let piece = match (queen, white_strong) {
            (true, true) => 'Q',
            (true, false) => 'q',
            (false, true) => 'R',
            (false, false) => 'r',
        };
        let (sk, wk) = if white_strong { ('K', 'k') } else { ('k', 'K') };
        let squares = [
            (rng.below(64), sk),
            (rng.below(64), piece),
            (rng.below(64), wk),
        ];
        let fen = fen_of(squares, rng.below(2) == 0);
        let Ok(pos) = parse_fen(&fen) else {
            continue; // touching kings, or the side not to move in check
        };
        if squares[0].0 == squares[1].0 || squares[1].0 == squares[2].0 {
            continue; // one piece on another
        }
        let v = probe(&pos).expect("covered");
        let Some(b) = buckets.iter().position(|&b| b == v) else {
            continue;
        };
        let slot = &mut counts[usize::from(queen)][b];
        if *slot >= per_bucket {
            continue;
        }
        *slot += 1;
        let value = match v {
            Value::Win { plies } => format!("win {plies}"),
            Value::Loss { plies } => format!("loss {plies}"),
            Value::Draw => "draw".to_string(),
        };
        lines.push_str(&format!("{fen}\t{value}\n"));
    }
    assert!(
        counts.iter().flatten().all(|&c| c >= per_bucket),
        "{counts:?}"
    );

    let mut python = Command::new(common::python_chess());
    python.arg(common::root().join("tests/tablebase_check.py"));
    let out = common::run_with_input(&mut python, lines.as_bytes());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::assert_contains(&text, &format!("checked {}", 2 * 7 * per_bucket));
}

#[test]
fn solve_finds_every_krvk1000_mate_at_once() {
    let out = Command::new(env!("CARGO_BIN_EXE_polybook"))
        .arg("solve")
        .arg(data("KRvK1000.epd"))
        .args(["--movetime", "1000", "--quiet"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    common::assert_contains(&text, "solved 1000/1000");
}
