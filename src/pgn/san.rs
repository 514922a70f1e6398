//! SAN to the move it names, as every PGN reader of polybook reads it: [`play_san`] tries the
//! fast path, then shakmaty's reading, then the lenient readings other readers accept.
//!
//! The fast path: shakmaty's `San::to_move` generates the legal moves to the target square and
//! filters them; that was a third of a build's time. Most SAN moves have exactly one piece of the
//! named kind that can reach the target, and the move is legal unless it uncovers the king (only
//! possible when the piece stood on a line through it) or leaves a check unanswered. [`resolve`]
//! settles those, and castling, with a few small tables; it answers `None` for everything else
//! (en passant, double check, ambiguity before the legality test, illegal or malformed SAN), which
//! the caller hands to shakmaty. So every answer is the one shakmaty gives: the tests below
//! compare the two on every legal move of random games and on illegal ones.

use shakmaty::san::{San, SanError};
use shakmaty::uci::UciMove;
use shakmaty::{Bitboard, CastlingSide, Chess, Color, Move, Position, Rank, Role, Square, attacks};

/// The move `san` names in `pos`, as the build reads it: the common cases settled cheaply, then
/// shakmaty's reading, then the lenient readings other readers accept (see [`lenient`]).
#[inline]
pub fn play_san(san: San, pos: &Chess) -> Result<Move, SanError> {
    match resolve(&san, pos) {
        Some(m) => Ok(m),
        None => san.to_move(pos).or_else(|err| lenient(san, pos).ok_or(err)),
    }
}

/// Readings of a move that is not legal as written SAN, as other readers (python-chess) accept:
/// a capture written without `x` or a move with a wrong `x` (`Raf8` for `Raxf8`), and UCI
/// coordinates (`g1f3`, `e1g1`, `e7e8q`), which read as a pawn move with a full origin square.
fn lenient(san: San, pos: &Chess) -> Option<Move> {
    let mut flipped = san;
    if let San::Normal { capture, .. } = &mut flipped {
        *capture = !*capture;
        if let Ok(m) = flipped.to_move(pos) {
            return Some(m);
        }
    }
    match san {
        San::Normal {
            role: Role::Pawn,
            file: Some(file),
            rank: Some(rank),
            to,
            promotion,
            ..
        } => UciMove::Normal {
            from: Square::from_coords(file, rank),
            to,
            promotion,
        }
        .to_move(pos)
        .ok(),
        _ => None,
    }
}

/// The move `san` names in `pos` if it is a common case settled cheaply, else `None`.
fn resolve(san: &San, pos: &Chess) -> Option<Move> {
    let San::Normal {
        role,
        file,
        rank,
        capture,
        to,
        promotion,
    } = *san
    else {
        return match *san {
            San::Castle(side) => castle(pos, side),
            _ => None,
        };
    };
    if pos.us().contains(to) {
        return None;
    }
    let board = pos.board();
    let captured = board.role_at(to);
    if capture != captured.is_some() {
        return None;
    }
    let turn = pos.turn();
    let occupied = board.occupied();
    let mut origins = match role {
        Role::Pawn => pawn_origin(pos, to, capture, file, promotion)?,
        Role::King => {
            if promotion.is_some() {
                return None;
            }
            attacks::king_attacks(to) & pos.our(Role::King)
        }
        _ => {
            if promotion.is_some() {
                return None;
            }
            let ours = pos.our(role);
            match role {
                Role::Knight => attacks::knight_attacks(to) & ours,
                Role::Bishop => seeing(to, Bitboard::EMPTY, ours, occupied),
                Role::Rook => seeing(to, ours, Bitboard::EMPTY, occupied),
                _ => seeing(to, ours, ours, occupied),
            }
        }
    };
    if let Some(f) = file {
        origins &= Bitboard::from_file(f);
    }
    if let Some(r) = rank {
        origins &= Bitboard::from_rank(r);
    }
    let from = origins.single_square()?;
    let m = Move::Normal {
        role,
        from,
        capture: captured,
        to,
        promotion,
    };
    let king = board.king_of(turn)?;
    let checkers = checkers(pos, king);
    let legal = if role == Role::King {
        // The king must not step onto an attacked square (seen through its own square).
        board
            .attacks_to(to, !turn, occupied.without(from))
            .is_empty()
    } else if checkers.is_empty() && attacks::ray(king, from).is_empty() {
        // Not in check, and the piece leaves no line through the king: nothing is uncovered.
        true
    } else {
        // In check, the move must take the one checker or step between it and the king.
        if let Some(checker) = checkers.first()
            && (checkers.more_than_one()
                || !(attacks::between(king, checker).contains(to) || checker == to))
        {
            return None;
        }
        // No slider (the checker included, unless taken or blocked) may see the king after it.
        let after = occupied.without(from).with(to);
        let their = |r: Role| pos.their(r).without(to);
        let queens = their(Role::Queen);
        seeing(
            king,
            their(Role::Rook) | queens,
            their(Role::Bishop) | queens,
            after,
        )
        .is_empty()
    };
    legal.then_some(m)
}

/// Castling on `side`, if legal: shakmaty's rules (the rook still has its right, the squares
/// between are empty, the king neither is in check nor passes or lands on an attacked square),
/// tested with [`attacked`].
fn castle(pos: &Chess, side: CastlingSide) -> Option<Move> {
    let turn = pos.turn();
    let castles = pos.castles();
    let rook = castles.rook(turn, side)?;
    let occupied = pos.board().occupied();
    if (castles.path(turn, side) & occupied).any() {
        return None;
    }
    let king = pos.board().king_of(turn)?;
    let king_to = side.king_to(turn);
    if attacked(pos, king_to, occupied ^ king ^ rook ^ side.rook_to(turn)) {
        return None;
    }
    for sq in attacks::between(king, king_to).with(king) {
        if attacked(pos, sq, occupied ^ king) {
            return None;
        }
    }
    Some(Move::Castle { king, rook })
}

/// Whether the side not to move attacks `sq`, sliders seeing over `occupied`.
fn attacked(pos: &Chess, sq: Square, occupied: Bitboard) -> bool {
    let queens = pos.their(Role::Queen);
    (attacks::knight_attacks(sq) & pos.their(Role::Knight)).any()
        || (attacks::pawn_attacks(pos.turn(), sq) & pos.their(Role::Pawn)).any()
        || (attacks::king_attacks(sq) & pos.their(Role::King)).any()
        || seeing(
            sq,
            pos.their(Role::Rook) | queens,
            pos.their(Role::Bishop) | queens,
            occupied,
        )
        .any()
}

/// The pieces giving check to the side to move, whose king is on `king` (as shakmaty's
/// `checkers`).
fn checkers(pos: &Chess, king: Square) -> Bitboard {
    let queens = pos.their(Role::Queen);
    (attacks::knight_attacks(king) & pos.their(Role::Knight))
        | (attacks::pawn_attacks(pos.turn(), king) & pos.their(Role::Pawn))
        | seeing(
            king,
            pos.their(Role::Rook) | queens,
            pos.their(Role::Bishop) | queens,
            pos.board().occupied(),
        )
}

/// Which of the sliders `straight` (moving along ranks and files) and `diagonal` (along
/// diagonals) see `sq` over `occupied`.
///
/// A board has few sliders, so each one on a line through `sq` is tested by the squares between
/// (two small tables that stay in cache) rather than by shakmaty's attack lookups, whose large
/// tables are a build's costliest cache misses.
fn seeing(sq: Square, straight: Bitboard, diagonal: Bitboard, occupied: Bitboard) -> Bitboard {
    let i = usize::from(sq);
    let mut candidates = (straight & Bitboard(LINES[0][i])) | (diagonal & Bitboard(LINES[1][i]));
    let mut found = Bitboard::EMPTY;
    while let Some(s) = candidates.pop_front() {
        if (attacks::between(sq, s) & occupied).is_empty() {
            found.add(s);
        }
    }
    found
}

/// For each square, the squares on its rank and file (`LINES[0]`) and on its diagonals
/// (`LINES[1]`), itself excluded.
const LINES: [[u64; 64]; 2] = [lines(false), lines(true)];

const fn lines(diagonal: bool) -> [u64; 64] {
    let mut out = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (file, rank) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut t = 0;
        while t < 64 {
            let (df, dr) = ((t % 8) as i32 - file, (t / 8) as i32 - rank);
            let on = if diagonal {
                df.abs() == dr.abs()
            } else {
                df == 0 || dr == 0
            };
            if on && t != sq {
                out[sq] |= 1 << t;
            }
            t += 1;
        }
        sq += 1;
    }
    out
}

/// The square a pawn move to `to` comes from, as a one-square set (empty if none can).
fn pawn_origin(
    pos: &Chess,
    to: Square,
    capture: bool,
    file: Option<shakmaty::File>,
    promotion: Option<Role>,
) -> Option<Bitboard> {
    let turn = pos.turn();
    let (back, last, double_target) = match turn {
        Color::White => (-8, Rank::Eighth, Rank::Fourth),
        Color::Black => (8, Rank::First, Rank::Fifth),
    };
    // A promotion exactly on the last rank, to a piece.
    if (to.rank() == last) != promotion.is_some()
        || matches!(promotion, Some(Role::Pawn | Role::King))
    {
        return None;
    }
    let pawns = pos.our(Role::Pawn);
    if capture {
        // `exd5`: the file is written; the pawn stands one rank back on it.
        let f = file?;
        if (i32::from(f) - i32::from(to.file())).abs() != 1 {
            return None;
        }
        let from = Square::from_coords(f, to.rank()).offset(back)?;
        return Some(pawns & Bitboard::from_square(from));
    }
    let one = to.offset(back)?;
    if pawns.contains(one) {
        return Some(Bitboard::from_square(one));
    }
    if to.rank() == double_target && !pos.board().occupied().contains(one) {
        let two = one.offset(back)?;
        return Some(pawns & Bitboard::from_square(two));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use shakmaty::san::San;

    /// Every way of writing a move that a PGN might hold: shakmaty's SAN, the fully
    /// disambiguated form, no disambiguation, a wrong capture mark, and the other promotions.
    fn spellings(pos: &Chess, m: Move) -> Vec<San> {
        let mut out = vec![San::from_move(pos, m)];
        if let Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } = m
        {
            for (file, rank) in [
                (Some(from.file()), Some(from.rank())),
                (None, None),
                (Some(from.file()), None),
                (None, Some(from.rank())),
            ] {
                for marked in [capture.is_some(), capture.is_none()] {
                    for promotion in [promotion, None, Some(Role::Knight), Some(Role::King)] {
                        out.push(San::Normal {
                            role,
                            file,
                            rank,
                            capture: marked,
                            to,
                            promotion,
                        });
                    }
                }
            }
        }
        out
    }

    fn every_piece_to_every_square(pos: &Chess) -> Vec<San> {
        let mut out = vec![
            San::Castle(CastlingSide::KingSide),
            San::Castle(CastlingSide::QueenSide),
        ];
        for to in Square::ALL {
            let capture = pos.board().occupied().contains(to);
            for role in Role::ALL {
                let files: Vec<Option<shakmaty::File>> = if role == Role::Pawn && capture {
                    [to.file().offset(-1), to.file().offset(1)].to_vec()
                } else {
                    vec![None]
                };
                for file in files {
                    out.push(San::Normal {
                        role,
                        file,
                        rank: None,
                        capture,
                        to,
                        promotion: None,
                    });
                }
            }
        }
        out
    }

    /// How often [`resolve`] answered while random games were compared with shakmaty.
    #[derive(Default)]
    struct Answers {
        asked: u64,
        fast: u64,
        in_check: u64,
        castles: u64,
    }

    /// Plays random games of up to 200 plies from `start` and, in every position, compares
    /// [`resolve`] with shakmaty on every spelling of every legal move and on moves that are not
    /// legal; also checks the helper tables against shakmaty's, and that more than one answer in
    /// ten took the fast path.
    fn compare_random_games(
        rng: &mut StdRng,
        games: usize,
        start: impl Fn(&mut StdRng) -> Chess,
    ) -> Answers {
        let mut answers = Answers::default();
        for _ in 0..games {
            let mut pos = start(rng);
            for _ in 0..200 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for &m in &moves {
                    for san in spellings(&pos, m) {
                        answers.asked += 1;
                        if let Some(got) = resolve(&san, &pos) {
                            answers.fast += 1;
                            answers.in_check += u64::from(pos.is_check());
                            answers.castles += u64::from(matches!(san, San::Castle(_)));
                            assert_eq!(
                                san.to_move(&pos),
                                Ok(got),
                                "{san} in {}",
                                shakmaty::fen::Fen::from_position(
                                    &pos,
                                    shakmaty::EnPassantMode::Legal
                                )
                            );
                        }
                    }
                    // The SAN a PGN writer gives is almost always settled on the fast path.
                }
                if let Some(king) = pos.board().king_of(pos.turn()) {
                    assert_eq!(checkers(&pos, king), pos.checkers());
                }
                let board = pos.board();
                let occupied = board.occupied();
                let (straight, diagonal) = (board.rooks_and_queens(), board.bishops_and_queens());
                for sq in Square::ALL {
                    let magic = (attacks::rook_attacks(sq, occupied) & straight)
                        | (attacks::bishop_attacks(sq, occupied) & diagonal);
                    assert_eq!(seeing(sq, straight, diagonal, occupied), magic);
                }
                // Moves that are not legal: every piece kind to every square (pawns also
                // capturing from either side), in check and in a sample of other positions.
                if pos.is_check() || rng.random_range(0..8) == 0 {
                    for san in every_piece_to_every_square(&pos) {
                        if let Some(got) = resolve(&san, &pos) {
                            assert_eq!(san.to_move(&pos), Ok(got), "{san} in {pos:?}");
                        }
                    }
                }
                let m = moves[rng.random_range(0..moves.len())];
                pos.play_unchecked(m);
            }
        }
        assert!(
            answers.fast * 10 > answers.asked,
            "fast path used for {} of {}",
            answers.fast,
            answers.asked
        );
        answers
    }

    #[test]
    fn agrees_with_shakmaty_on_random_games() {
        let mut rng = StdRng::seed_from_u64(2026);
        let a = compare_random_games(&mut rng, 400, |_| Chess::default());
        // Evasions of check take the fast path too (and are compared above).
        assert!(a.in_check > 1000, "{} answers in check", a.in_check);
        assert!(a.castles > 10, "{} castlings", a.castles);
    }

    /// The back rank of Chess960 start position `n` (0..960) in Scharnagl's numbering, white's
    /// pieces from the a-file to the h-file.
    fn chess960_back_rank(n: usize) -> String {
        const KNIGHTS: [(usize, usize); 10] = [
            (0, 1),
            (0, 2),
            (0, 3),
            (0, 4),
            (1, 2),
            (1, 3),
            (1, 4),
            (2, 3),
            (2, 4),
            (3, 4),
        ];
        let mut rank = [' '; 8];
        rank[n % 4 * 2 + 1] = 'B';
        rank[n / 4 % 4 * 2] = 'B';
        let free =
            |rank: &[char; 8]| -> Vec<usize> { (0..8).filter(|&i| rank[i] == ' ').collect() };
        rank[free(&rank)[n / 16 % 6]] = 'Q';
        let (a, b) = KNIGHTS[n / 96];
        let f = free(&rank);
        rank[f[a]] = 'N';
        rank[f[b]] = 'N';
        for (square, piece) in free(&rank).into_iter().zip(['R', 'K', 'R']) {
            rank[square] = piece;
        }
        rank.iter().collect()
    }

    /// The Chess960 start position `n`, both castlings of each side allowed.
    fn chess960_start(n: usize) -> Chess {
        let white = chess960_back_rank(n);
        let fen = format!(
            "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w KQkq - 0 1",
            white.to_lowercase()
        );
        fen.parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Chess960)
            .unwrap()
    }

    #[test]
    fn chess960_numbering_is_scharnagls() {
        // Known positions: 518 is the standard start, 0 and 959 the ends of the table.
        assert_eq!(chess960_back_rank(518), "RNBQKBNR");
        assert_eq!(chess960_back_rank(0), "BBQNNRKR");
        assert_eq!(chess960_back_rank(959), "RKRNNQBB");
    }

    /// Castling in Chess960 (the king may stay put or jump over its rook, the rook may pass the
    /// king's square) is settled as shakmaty settles it, on random games from random setups.
    #[test]
    fn agrees_with_shakmaty_on_random_chess960_games() {
        let mut rng = StdRng::seed_from_u64(960);
        let a = compare_random_games(&mut rng, 300, |rng| {
            chess960_start(rng.random_range(0..960))
        });
        assert!(a.castles > 100, "{} castlings", a.castles);
    }

    #[test]
    fn the_usual_san_takes_the_fast_path() {
        let mut pos = Chess::default();
        let mut fast = 0;
        let line = "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7";
        for text in line.split_whitespace() {
            let san: San = text.parse().unwrap();
            let expected = san.to_move(&pos).unwrap();
            if let Some(m) = resolve(&san, &pos) {
                assert_eq!(m, expected);
                fast += 1;
            }
            pos.play_unchecked(expected);
        }
        assert_eq!(fast, 20, "every move, the two castlings included");
    }
}
