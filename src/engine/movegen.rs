//! Quiescence's moves: the captures and queen promotions of a position not in check, generated
//! without its quiet moves.
//!
//! shakmaty generates every legal move; for standard chess it has no captures-only generator
//! (its `capture_moves` filters the full list). Quiescence searches only captures and queen
//! promotions, so it generated, then threw away, about three moves in four. [`noisy_moves`] is
//! the list quiescence kept, in the same order as `legal_moves` gives it (the order decides which
//! of two equal moves the search tries first, and so the `bench` signature): en passant, pawn
//! captures toward the a-file then toward the h-file (every promotion), pawn pushes that promote
//! to a queen, then the knights', bishops', rooks', queens' and king's captures, each piece by
//! square and each capture by square. [`has_legal_move`] answers the one other question
//! quiescence asks of the full list: is the side to move stalemated?
//!
//! The legality rules are shakmaty's own (a pinned piece moves along its pin, the king steps
//! only onto squares no enemy piece attacks, en passant as shakmaty checks it), and the tests
//! compare both functions with `legal_moves` on random games and the perft positions.
//!
//! [`Checks`] answers the search's other question of every move it reaches, before making it:
//! does it give check? It reads, once per node, the squares from which each of our pieces would
//! attack their king and which of our pieces block one of our sliders' lines to it; each move is
//! then a lookup or two (Stockfish's "check squares" and "discovered check candidates").
//! Promotions, en passant and castling take [`gives_check`]'s slower way, from a copy of the
//! board.

use shakmaty::{
    Bitboard, ByRole, CastlingSide, Chess, Color, Move, MoveList, Position, Role, Square, attacks,
};

/// The captures (en passant and capture-promotions included) and the quiet queen promotions of
/// `pos`, which must not be in check, in the order `pos.legal_moves()` lists them.
pub(super) fn noisy_moves(pos: &Chess) -> MoveList {
    debug_assert!(!pos.is_check());
    // En passant first, as shakmaty lists it (its own legality check included).
    let mut moves = pos.en_passant_moves();
    let board = pos.board();
    let us = pos.turn();
    let them_bb = pos.them();
    let occupied = board.occupied();
    let king = board.king_of(us).expect("a king in standard chess");
    let pinned = pinned(pos, king);
    let safe =
        |from: Square, to: Square| !pinned.contains(from) || attacks::aligned(from, to, king);

    // Pawn captures, toward the a-file then toward the h-file, every promotion of each.
    let pawns = pos.our(Role::Pawn);
    let (west, east) = match us {
        Color::White => (7, 9),
        Color::Black => (-9, -7),
    };
    let not_a = !Bitboard::from(shakmaty::File::A);
    let not_h = !Bitboard::from(shakmaty::File::H);
    for (shift, from_mask) in [(west, not_a), (east, not_h)] {
        let captures = (pawns & from_mask).shift(shift) & them_bb;
        for to in captures & !Bitboard::BACKRANKS {
            let from = offset(to, -shift);
            if safe(from, to) {
                moves.push(pawn_move(from, to, board.role_at(to), None));
            }
        }
        for to in captures & Bitboard::BACKRANKS {
            let from = offset(to, -shift);
            if safe(from, to) {
                for role in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                    moves.push(pawn_move(from, to, board.role_at(to), Some(role)));
                }
            }
        }
    }
    // Pushes that promote: to a queen only.
    let forward = match us {
        Color::White => 8,
        Color::Black => -8,
    };
    for to in pawns.shift(forward) & !occupied & Bitboard::BACKRANKS {
        let from = offset(to, -forward);
        if safe(from, to) {
            moves.push(pawn_move(from, to, None, Some(Role::Queen)));
        }
    }

    // The pieces' captures.
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for from in pos.our(role) {
            let reach = match role {
                Role::Knight => attacks::knight_attacks(from),
                Role::Bishop => attacks::bishop_attacks(from, occupied),
                Role::Rook => attacks::rook_attacks(from, occupied),
                _ => attacks::queen_attacks(from, occupied),
            };
            for to in reach & them_bb {
                if safe(from, to) {
                    moves.push(Move::Normal {
                        role,
                        from,
                        capture: board.role_at(to),
                        to,
                        promotion: None,
                    });
                }
            }
        }
    }
    for to in attacks::king_attacks(king) & them_bb {
        if board.attacks_to(to, !us, occupied).is_empty() {
            moves.push(Move::Normal {
                role: Role::King,
                from: king,
                capture: board.role_at(to),
                to,
                promotion: None,
            });
        }
    }
    moves
}

/// Has the side to move, not in check, any legal move? The cheap moves are looked for first (a
/// pawn's push, a knight's step, the king's step, none of them pinned), then the whole list.
pub(super) fn has_legal_move(pos: &Chess) -> bool {
    debug_assert!(!pos.is_check());
    let board = pos.board();
    let us = pos.turn();
    let occupied = board.occupied();
    let Some(king) = board.king_of(us) else {
        return !pos.legal_moves().is_empty();
    };
    let pinned = pinned(pos, king);
    let forward = match us {
        Color::White => 8,
        Color::Black => -8,
    };
    if ((pos.our(Role::Pawn) & !pinned).shift(forward) & !occupied).any() {
        return true;
    }
    // A pinned knight never moves; any other knight has a legal step if it has a step at all.
    if (pos.our(Role::Knight) & !pinned)
        .into_iter()
        .any(|from| (attacks::knight_attacks(from) & !pos.us()).any())
    {
        return true;
    }
    if (attacks::king_attacks(king) & !pos.us())
        .into_iter()
        .any(|to| board.attacks_to(to, !us, occupied).is_empty())
    {
        return true;
    }
    !pos.legal_moves().is_empty()
}

/// What makes a move of the side to move give check, read once per node: for each of our
/// pieces, the squares from which it would attack their king, and our pieces that stand alone
/// between one of our sliders and their king (moving one off that line uncovers a check).
#[derive(Clone, Copy)]
pub(super) struct Checks {
    /// Their king (`None` in a position without one: no move gives check).
    king: Option<Square>,
    squares: ByRole<Bitboard>,
    discoverers: Bitboard,
}

impl Checks {
    pub(super) fn new(pos: &Chess) -> Checks {
        let board = pos.board();
        let us = pos.turn();
        let Some(king) = board.king_of(!us) else {
            return Checks {
                king: None,
                squares: ByRole::default(),
                discoverers: Bitboard(0),
            };
        };
        let occupied = board.occupied();
        let bishop = attacks::bishop_attacks(king, occupied);
        let rook = attacks::rook_attacks(king, occupied);
        let squares = ByRole {
            pawn: attacks::pawn_attacks(!us, king),
            knight: attacks::knight_attacks(king),
            bishop,
            rook,
            queen: bishop | rook,
            king: Bitboard(0),
        };
        Checks {
            king: Some(king),
            squares,
            discoverers: line_blockers(board, king, pos.us()) & pos.us(),
        }
    }

    /// Does `m`, a legal move in `pos` (the position these checks were read from), give check?
    #[inline(always)]
    pub(super) fn gives_check(&self, pos: &Chess, m: Move) -> bool {
        let Some(king) = self.king else {
            return false;
        };
        match m {
            Move::Normal {
                role,
                from,
                to,
                promotion: None,
                ..
            } => {
                self.squares.get(role).contains(to)
                    || (self.discoverers.contains(from) && !attacks::aligned(from, to, king))
            }
            _ => gives_check(pos, m),
        }
    }
}

/// Does `m` give check? The same answer as playing it and asking the child, from a copy of the
/// board alone (a few bitboards, against the whole position and its check and pin masks).
#[inline(never)]
pub(super) fn gives_check(pos: &Chess, m: Move) -> bool {
    let us = pos.turn();
    let mut board = pos.board().clone();
    let Some(king) = board.king_of(!us) else {
        return false;
    };
    match m {
        Move::Normal {
            role,
            from,
            to,
            promotion,
            ..
        } => {
            board.discard_piece_at(from);
            board.set_piece_at(to, promotion.unwrap_or(role).of(us));
        }
        Move::EnPassant { from, to } => {
            board.discard_piece_at(from);
            board.discard_piece_at(Square::from_coords(to.file(), from.rank()));
            board.set_piece_at(to, Role::Pawn.of(us));
        }
        Move::Castle { king: k, rook } => {
            let side = CastlingSide::from_queen_side(rook < k);
            board.discard_piece_at(k);
            board.discard_piece_at(rook);
            board.set_piece_at(side.rook_to(us), Role::Rook.of(us));
            board.set_piece_at(side.king_to(us), Role::King.of(us));
        }
        Move::Put { .. } => {
            let mut child = pos.clone();
            child.play_unchecked(m);
            return child.is_check();
        }
    }
    board.attacks_to(king, us, board.occupied()).any()
}

/// Our pieces that stand alone between our king and an enemy slider (shakmaty's "slider
/// blockers" for our side: a piece of theirs alone on such a line is never ours to move).
fn pinned(pos: &Chess, king: Square) -> Bitboard {
    line_blockers(pos.board(), king, pos.them()) & pos.us()
}

/// The pieces, of either side, that stand alone between `king` and a slider among `sliders`
/// that would attack it along that line.
fn line_blockers(board: &shakmaty::Board, king: Square, sliders: Bitboard) -> Bitboard {
    let snipers = ((attacks::rook_attacks(king, Bitboard(0)) & board.rooks_and_queens())
        | (attacks::bishop_attacks(king, Bitboard(0)) & board.bishops_and_queens()))
        & sliders;
    let mut blockers = Bitboard(0);
    for sniper in snipers {
        let between = attacks::between(king, sniper) & board.occupied();
        if !between.more_than_one() {
            blockers |= between;
        }
    }
    blockers
}

fn offset(sq: Square, by: i32) -> Square {
    Square::new((i32::from(sq) + by) as u32)
}

fn pawn_move(from: Square, to: Square, capture: Option<Role>, promotion: Option<Role>) -> Move {
    Move::Normal {
        role: Role::Pawn,
        from,
        capture,
        to,
        promotion,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use shakmaty::CastlingMode;
    use shakmaty::fen::Fen;

    /// What quiescence kept of the full list before: captures and queen promotions, in order.
    fn noisy_of_legal(pos: &Chess) -> Vec<Move> {
        pos.legal_moves()
            .into_iter()
            .filter(|m| m.is_capture() || m.promotion() == Some(Role::Queen))
            .collect()
    }

    fn check(pos: &Chess, seen: &mut (usize, usize)) {
        if pos.is_check() {
            return;
        }
        let fen = Fen::from_position(pos, shakmaty::EnPassantMode::Always);
        assert_eq!(noisy_moves(pos).to_vec(), noisy_of_legal(pos), "{fen}");
        assert_eq!(has_legal_move(pos), !pos.legal_moves().is_empty(), "{fen}");
        seen.0 += 1;
        seen.1 += usize::from(!noisy_moves(pos).is_empty());
    }

    #[test]
    fn the_noisy_moves_are_the_legal_lists_captures_and_queen_promotions_in_order() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut seen = (0, 0);
        // The perft suite's tricky positions (pins, en passant that uncovers a check,
        // promotions), then random games from each: random play soon captures, promotes and
        // pins, and it stalemates now and then.
        let fens = include_str!("../../tests/data/epd/perftsuite.epd");
        for fen in fens
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let fen = fen.split(';').next().unwrap().trim();
            let start: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .or_else(shakmaty::PositionError::ignore_impossible_check)
                .unwrap();
            for _ in 0..5 {
                let mut pos = start.clone();
                for _ in 0..150 {
                    check(&pos, &mut seen);
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
                }
            }
        }
        assert!(seen.0 > 10_000 && seen.1 > 3_000, "{seen:?}");
    }

    #[test]
    fn a_stalemate_has_no_legal_move_and_its_neighbours_have() {
        for (fen, any) in [
            ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", false),
            ("k7/P7/K7/8/8/8/8/8 b - - 0 1", false),
            ("8/8/8/8/8/1k6/1p6/1K6 w - - 0 1", false),
            ("k7/8/K7/8/8/8/8/1R6 b - - 0 1", false),
            ("k7/8/K7/8/8/8/8/2R5 b - - 0 1", true),
            // Only a bishop can move: the full list answers.
            ("k7/2Q5/K7/8/8/8/8/7b b - - 0 1", true),
            ("7k/8/5Q2/8/8/8/8/6K1 b - - 0 1", true),
        ] {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            assert_eq!(pos.legal_moves().is_empty(), !any, "{fen}");
            assert_eq!(has_legal_move(&pos), any, "{fen}");
        }
    }

    /// `gives_check` and [`Checks`] answer as the position does after the move is played: every legal move
    /// along random games (captures, promotions, castling, en passant among them), and crafted
    /// discovered, promotion and castling checks, Chess960 castling included.
    #[test]
    fn gives_check_agrees_with_playing_the_move() {
        let check_all = |pos: &Chess, seen: &mut [usize; 2]| {
            let checks = Checks::new(pos);
            for m in pos.legal_moves() {
                let mut child = pos.clone();
                child.play_unchecked(m);
                assert_eq!(gives_check(pos, m), child.is_check(), "{m:?} in {pos:?}");
                assert_eq!(
                    checks.gives_check(pos, m),
                    child.is_check(),
                    "{m:?} in {pos:?}"
                );
                seen[usize::from(child.is_check())] += 1;
            }
        };
        let mut seen = [0; 2];
        let mut rng = StdRng::seed_from_u64(11);
        let starts = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
                CastlingMode::Chess960,
            ),
        ];
        for (fen, mode) in starts {
            let start: Chess = fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
            for _ in 0..300 {
                let mut pos = start.clone();
                for _ in 0..120 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    check_all(&pos, &mut seen);
                    pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
                }
            }
        }
        assert!(seen[1] > 10_000, "{seen:?}");
        // A discovered check by en passant, a promotion's check, a castling rook's check, and
        // discovered checks by ordinary moves.
        let crafted = [
            ("8/8/8/R2pP2k/8/8/8/4K3 w - d6 0 1", "e5d6", true),
            ("2k5/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8q", true),
            ("2k5/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8n", false),
            ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", true),
            // Discovered checks: a knight, the king off the rook's file, the king along it.
            ("4k3/8/8/8/8/8/4N3/4R1K1 w - - 0 1", "e2c3", true),
            ("4k3/8/8/8/8/8/4K3/4R3 w - - 0 1", "e2d2", true),
            ("4k3/8/8/8/8/8/4K3/4R3 w - - 0 1", "e2e3", false),
        ];
        for (fen, uci, checks) in crafted {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            let m = uci
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&pos)
                .unwrap();
            assert_eq!(gives_check(&pos, m), checks, "{uci} in {fen}");
            assert_eq!(
                Checks::new(&pos).gives_check(&pos, m),
                checks,
                "{uci} in {fen}"
            );
            check_all(&pos, &mut seen);
        }
    }
}
