//! Perft: counting the leaves of the legal move tree, to check move generation against known
//! counts (and to measure its speed).

use shakmaty::{Chess, Move, Position};

/// The number of legal move sequences of length `depth` from `pos`.
///
/// Bulk counting: at depth 1 the answer is the length of the move list, so the last ply is never
/// played out.
pub fn perft(pos: &Chess, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = pos.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut total = 0;
    for &m in &moves {
        let mut child = pos.clone();
        child.play_unchecked(m);
        total += perft(&child, depth - 1);
    }
    total
}

/// Perft split by the first move (`--divide`): each root move with the count below it.
pub fn divide(pos: &Chess, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position() {
        // Counts from the perft suites in tests/data/epd.
        assert_eq!(perft(&Chess::default(), 3), 8902);
        let d = divide(&Chess::default(), 2);
        assert_eq!(d.len(), 20);
        assert_eq!(d.iter().map(|x| x.1).sum::<u64>(), 400);
    }
}
