//! Positions from user input: FEN strings and move lists in SAN or UCI.
//!
//! Shared by every command that takes a position, so that they accept and refuse the same things
//! with the same messages.

use shakmaty::fen::{Fen, ParseFenError};
use shakmaty::san::{San, SanError};
use shakmaty::uci::UciMove;
use shakmaty::{
    Bitboard, Board, ByColor, ByRole, CastlingMode, CastlingSide, Chess, Color, EnPassantMode,
    FromSetup, Move, Piece, Position, PositionError as SetupError, Role, Setup, Square,
};
use thiserror::Error;

/// Why a position or a move list was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PositionError {
    #[error("invalid FEN {}: {why}", crate::text::quote(fen))]
    BadFen { fen: String, why: String },
    #[error("impossible position {}: {why}", crate::text::quote(fen))]
    Illegal { fen: String, why: String },
    #[error("move {number} {} is {why} in {fen}", crate::text::quote(text))]
    BadMove {
        number: usize,
        text: String,
        why: &'static str,
        fen: String,
    },
}

/// The position of a setup, if it can be played: the one rule for every position polybook reads
/// (FEN and EPD arguments, `position fen` in UCI, `[FEN]` tags in PGN).
///
/// shakmaty's strict check also refuses setups that are playable chess, which lichess ("From
/// Position" games), python-chess and PolyGlot accept. They are accepted here:
/// - more pieces than promotions could have made (`nnnnknnn/pppppppp/…`);
/// - a check that no last move could have given (three checkers, two aligned sliders): the side
///   to move must still get out of check, and move generation handles any number of checkers;
/// - castling rights without the king and rook on their squares: those rights are dropped;
/// - an en-passant square that no pawn can have just crossed: it is dropped.
///
/// Refused, because the game has no defined rules: an empty board, a side without a king or with
/// two, pawns on the first or last rank, and the side not to move in check.
pub fn playable(setup: Setup, mode: CastlingMode) -> Result<Chess, Unplayable> {
    Chess::from_setup(setup, mode)
        .or_else(SetupError::ignore_too_much_material)
        .or_else(SetupError::ignore_impossible_check)
        .or_else(SetupError::ignore_invalid_castling_rights)
        .or_else(SetupError::ignore_invalid_ep_square)
        .map_err(|e| Unplayable(e.to_string()))
}

/// Why a setup cannot be played, in shakmaty's words (`illegal position: missing king`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct Unplayable(pub String);

/// Parses a FEN (or the first four or more fields of an EPD line) into a standard-chess position
/// that can be played (see [`playable`]). A FEN that does not parse is refused with the field
/// that is wrong ([`fen_field_error`]).
pub fn parse_fen(fen: &str) -> Result<Chess, PositionError> {
    let fen = fen.trim();
    playable(parse_setup(fen)?, CastlingMode::Standard).map_err(|e| illegal(fen, e))
}

/// Parses the FEN of a game of standard chess or, with `chess960`, of Chess960 (UCI's
/// `UCI_Chess960`, `perft --chess960`) into a position that can be played (see [`playable`]).
///
/// In Chess960 the castling field names the castling rooks by their files (Shredder-FEN, `HFhf`)
/// or as `KQkq` for the outermost rooks, with a file letter for an inner one (X-FEN); a standard
/// FEN is a Chess960 position too. In standard chess, castling rights that only Chess960 has (a
/// king or rook off its standard square) are refused, where [`parse_fen`] drops them: a Chess960
/// position played as standard chess would lose its castling without a word.
pub fn parse_fen_for(fen: &str, chess960: bool) -> Result<Chess, PositionError> {
    let fen = fen.trim();
    let setup = parse_setup(fen)?;
    if chess960 {
        return playable(setup, CastlingMode::Chess960).map_err(|e| illegal(fen, e));
    }
    let pos = playable(setup.clone(), CastlingMode::Standard).map_err(|e| illegal(fen, e))?;
    let rights = pos.castles().castling_rights();
    if playable(setup, CastlingMode::Chess960)
        .is_ok_and(|p| p.castles().castling_rights() != rights)
    {
        let fields: Vec<&str> = fen.split([' ', '_']).filter(|f| !f.is_empty()).collect();
        return Err(PositionError::BadFen {
            fen: fen.to_string(),
            why: field_text(
                &fields,
                2,
                "castling",
                "castling rights of Chess960 (a king or rook off its standard square), not of \
                 standard chess",
            ),
        });
    }
    Ok(pos)
}

/// The setup a FEN describes, or the field that is wrong ([`fen_field_error`]).
fn parse_setup(fen: &str) -> Result<Setup, PositionError> {
    let parsed: Fen = fen
        .parse()
        .map_err(|e: ParseFenError| PositionError::BadFen {
            fen: fen.to_string(),
            why: fen_field_error(fen, e),
        })?;
    Ok(parsed.into_setup())
}

/// `fen` refused as a position that cannot be played, for `why`.
fn illegal(fen: &str, why: Unplayable) -> PositionError {
    PositionError::Illegal {
        fen: fen.to_string(),
        why: why.to_string(),
    }
}

/// Which field of `fen` shakmaty's error `e` is about, with its text and what it should be
/// (`field 2, the side to move, 'x': not w or b`). The fields are split as shakmaty splits them,
/// at spaces and underscores.
fn fen_field_error(fen: &str, e: ParseFenError) -> String {
    let fields: Vec<&str> = fen.split([' ', '_']).filter(|f| !f.is_empty()).collect();
    let field = |i: usize, name: &str, rule: &str| field_text(&fields, i, name, rule);
    match e {
        ParseFenError::InvalidFen if fields.is_empty() => "it is empty".to_string(),
        ParseFenError::InvalidFen => format!(
            "{} fields, more than a FEN's six (board, side to move, castling, en passant, \
             halfmove clock, fullmove number)",
            fields.len()
        ),
        ParseFenError::InvalidBoard | ParseFenError::InvalidPocket => field(
            0,
            "the board",
            "not 8 ranks of 8 squares split by '/' (pieces PNBRQKpnbrqk, digits 1-8 for empty ones)",
        ),
        ParseFenError::InvalidTurn => field(1, "the side to move", "not w or b"),
        ParseFenError::InvalidCastling => field(
            2,
            "castling",
            "not - or letters of KQkq (or rook files, A-H and a-h)",
        ),
        ParseFenError::InvalidEpSquare => field(3, "en passant", "not - or a square such as e3"),
        ParseFenError::InvalidHalfmoveClock => {
            field(4, "the halfmove clock", "not a whole number from 0")
        }
        ParseFenError::InvalidFullmoves => {
            field(5, "the fullmove number", "not a whole number from 1")
        }
        e => e.to_string(),
    }
}

/// Field `i` (from 0) of a FEN split into `fields`, called `name`, and what is wrong with it
/// (`field 2, the side to move, 'x': not w or b`). The field's text is shown when it is short and
/// printable; the whole FEN is quoted beside the message anyway, so that the line stays short
/// whatever was given.
fn field_text(fields: &[&str], i: usize, name: &str, rule: &str) -> String {
    match fields.get(i) {
        Some(f) if f.chars().count() <= 16 && !f.chars().any(char::is_control) => {
            format!("field {}, {name}, {}: {rule}", i + 1, crate::text::quote(f))
        }
        _ => format!("field {}, {name}: {rule}", i + 1),
    }
}

/// [`parse_fen`], also appending the position's FEN as [`fen_of`] writes it to `fen_out`.
///
/// A FEN already spelled the way `fen_of` spells it (single spaces, castling as a subset of `KQkq`
/// in that order, no leading zeros; its counters may be missing, as in EPD) is read by a short
/// path and echoed, with only the en-passant square recomputed: `probe --epd` reads thousands, and
/// shakmaty's general parser and writer were most of its time. Anything else goes the long way.
pub fn parse_fen_and_normalize(fen: &str, fen_out: &mut String) -> Result<Chess, PositionError> {
    let fen = fen.trim();
    if let Some(pos) = parse_canonical_fen(fen, fen_out) {
        return Ok(pos);
    }
    let pos = parse_fen(fen)?;
    Fen::from_position(&pos, EnPassantMode::Legal).append_to_string(fen_out);
    Ok(pos)
}

/// The short path of [`parse_fen_and_normalize`]: `None` for any FEN it does not take (which
/// includes every FEN that is not a legal position, so that errors come from one place).
fn parse_canonical_fen(fen: &str, fen_out: &mut String) -> Option<Chess> {
    let bytes = fen.as_bytes();
    // One bitboard per piece letter, in BOARD_CHAR's order.
    let mut pieces = [0u64; 12];
    let mut i = 0;
    // The board: eight ranks from the eighth, each adding up to eight files, digits never side by side.
    for rank in (0..8).rev() {
        let (mut file, mut after_digit) = (0u32, false);
        while file < 8 {
            let code = BOARD_CHAR[usize::from(*bytes.get(i)?)];
            i += 1;
            match code {
                1..=8 if !after_digit => {
                    file += u32::from(code);
                    after_digit = true;
                }
                PIECE..=u8::MAX => {
                    pieces[usize::from(code - PIECE)] |= 1 << (8 * rank + file);
                    file += 1;
                    after_digit = false;
                }
                _ => return None,
            }
        }
        if file != 8 || (rank > 0 && bytes.get(i) != Some(&b'/')) {
            return None;
        }
        i += usize::from(rank > 0);
    }
    let bb = |i: usize| Bitboard(pieces[i]);
    let by_role = ByRole {
        pawn: bb(0) | bb(6),
        knight: bb(1) | bb(7),
        bishop: bb(2) | bb(8),
        rook: bb(3) | bb(9),
        queen: bb(4) | bb(10),
        king: bb(5) | bb(11),
    };
    let by_color = ByColor {
        white: pieces[..6]
            .iter()
            .fold(Bitboard(0), |all, &b| all | Bitboard(b)),
        black: pieces[6..]
            .iter()
            .fold(Bitboard(0), |all, &b| all | Bitboard(b)),
    };
    let mut setup = Setup::empty();
    setup.board = Board::try_from_bitboards(by_role, by_color).ok()?;

    // The other fields, each after exactly one space.
    let mut field = || next_field(bytes, &mut i);
    setup.turn = match field()?.1 {
        b"w" => Color::White,
        b"b" => Color::Black,
        _ => return None,
    };
    let (castling_start, castling) = field()?;
    let echoed = castling_start + castling.len(); // board, turn and castling
    if castling != b"-" {
        // K, Q, k, q at most once each and in that order; each names the corner rook, as
        // shakmaty's parser reads them when the position is legal.
        let mut last = None;
        for &c in castling {
            let index = b"KQkq".iter().position(|&k| k == c)?;
            if last.is_some_and(|l| l >= index) {
                return None;
            }
            last = Some(index);
            setup
                .castling_rights
                .add([Square::H1, Square::A1, Square::H8, Square::A8][index]);
        }
        last?;
    }
    setup.ep_square = match field()?.1 {
        b"-" => None,
        &[f @ b'a'..=b'h', r @ b'1'..=b'8'] => {
            Some(Square::new(u32::from(r - b'1') * 8 + u32::from(f - b'a')))
        }
        _ => return None,
    };
    let counters = match field() {
        None => None, // at the end: EPD's four fields
        Some((half_start, half)) => {
            let (full_start, full) = field()?;
            if field().is_some() {
                return None;
            }
            setup.halfmoves = canonical_number(half)?;
            setup.fullmoves = std::num::NonZeroU32::new(canonical_number(full)?)?;
            Some((half_start, full_start + full.len()))
        }
    };
    let castling_rights = setup.castling_rights;
    let pos = Chess::from_setup(setup, CastlingMode::Standard).ok()?;
    if pos.castles().castling_rights() != castling_rights {
        return None;
    }

    fen_out.push_str(&fen[..echoed]);
    fen_out.push(' ');
    match pos.ep_square(EnPassantMode::Legal) {
        Some(sq) => {
            fen_out.push(sq.file().char());
            fen_out.push(sq.rank().char());
        }
        None => fen_out.push('-'),
    }
    fen_out.push(' ');
    fen_out.push_str(counters.map_or("0 1", |(start, end)| &fen[start..end]));
    Some(pos)
}

/// The field after the space at `*i`, with where it starts; `*i` moves to its end.
fn next_field<'a>(bytes: &'a [u8], i: &mut usize) -> Option<(usize, &'a [u8])> {
    if bytes.get(*i) != Some(&b' ') {
        return None;
    }
    let start = *i + 1;
    *i = bytes[start..]
        .iter()
        .position(|&b| b == b' ')
        .map_or(bytes.len(), |n| start + n);
    Some((start, &bytes[start..*i]))
}

/// What each byte is in a FEN's board: 0 nothing, 1 to 8 a digit, `PIECE + i` the letter
/// `PIECE_LETTERS[i]` (white's pawn, knight, bishop, rook, queen and king, then black's).
const BOARD_CHAR: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut d = 1;
    while d <= 8 {
        table[(b'0' + d) as usize] = d;
        d += 1;
    }
    let letters = b"PNBRQKpnbrqk";
    let mut i = 0;
    while i < letters.len() {
        table[letters[i] as usize] = PIECE + i as u8;
        i += 1;
    }
    table
};
const PIECE: u8 = 16;

/// A number as a FEN writer spells it: digits without leading zeros, small enough not to overflow.
fn canonical_number(s: &[u8]) -> Option<u32> {
    let ok = (1..=9).contains(&s.len())
        && s.iter().all(u8::is_ascii_digit)
        && (s == b"0" || s[0] != b'0');
    ok.then(|| s.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0')))
}

/// The FEN of a position, with the en-passant square only where a capture is legal.
pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string()
}

/// The pieces a move of standard chess takes off the board and puts on it, one call of `each` a
/// piece: `each(piece, square, false)` for one taken off `square` (the mover from where it stood,
/// a captured piece), `each(piece, square, true)` for one put on it (the mover where it lands, as
/// promoted). `us` is the side that moves. A drop (`Move::Put`, no move of standard chess) calls
/// nothing and gives `false`, for the caller to start again from the position after it.
#[inline(always)]
pub fn for_each_piece_moved(us: Color, m: Move, mut each: impl FnMut(Piece, Square, bool)) -> bool {
    match m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            each(role.of(us), from, false);
            each(promotion.unwrap_or(role).of(us), to, true);
            if let Some(captured) = capture {
                each(captured.of(!us), to, false);
            }
        }
        Move::EnPassant { from, to } => {
            each(Role::Pawn.of(us), from, false);
            each(Role::Pawn.of(us), to, true);
            let captured = Square::from_coords(to.file(), from.rank());
            each(Role::Pawn.of(!us), captured, false);
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_king_side(king < rook);
            each(Role::King.of(us), king, false);
            each(Role::Rook.of(us), rook, false);
            each(Role::King.of(us), side.king_to(us), true);
            each(Role::Rook.of(us), side.rook_to(us), true);
        }
        Move::Put { .. } => return false,
    }
    true
}

/// Why a null move is refused: a position's moves are real moves (no book holds a null move).
pub const NULL_MOVE: &str = "a null move (polybook plays none)";

/// Whether a move's text is a null move: UCI's `0000`, or `--` or `Z0` as PGN writers spell it
/// (a check or annotation mark after it aside).
pub fn is_null_move(text: &str) -> bool {
    matches!(
        text.trim_end_matches(['+', '#', '!', '?']),
        "0000" | "--" | "Z0"
    )
}

/// Reads one move in UCI (`e2e4`, `e1g1`, `e7e8q`) or SAN (`e4`, `O-O`, `exd8=Q+`). A null move
/// ([`is_null_move`]) is refused as [`NULL_MOVE`].
pub fn parse_move(pos: &Chess, text: &str) -> Result<Move, &'static str> {
    if is_null_move(text) {
        return Err(NULL_MOVE);
    }
    if let Ok(m) = text
        .parse::<UciMove>()
        .map_err(drop)
        .and_then(|uci| uci.to_move(pos).map_err(drop))
    {
        return Ok(m);
    }
    let san = San::from_ascii(text.trim_end_matches(['+', '#', '!', '?']).as_bytes())
        .map_err(|_| "not a move in SAN or UCI")?;
    san.to_move(pos).map_err(|e| match e {
        SanError::AmbiguousSan => "ambiguous",
        SanError::IllegalSan => "illegal",
    })
}

/// Plays a whitespace-separated list of moves; move numbers (`1.`, `12...`) and a trailing
/// result are skipped. A null move (`0000`, `--`, `Z0`) is refused, named with its number, as
/// any move that cannot be played.
pub fn play_moves(pos: Chess, moves: &str) -> Result<Chess, PositionError> {
    play_moves_each(pos, moves, |_, _| {})
}

/// [`play_moves`], calling `each` with the position before every move and the move.
pub fn play_moves_each(
    mut pos: Chess,
    moves: &str,
    mut each: impl FnMut(&Chess, Move),
) -> Result<Chess, PositionError> {
    let mut number = 0;
    for token in moves.split_whitespace() {
        // A result as written (before a move number's digits are taken off it, which would make
        // `1-0` a move `-0`), and `0000`, a move (a null one), not a move number.
        if matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*") {
            continue;
        }
        let token = match is_null_move(token) {
            true => token,
            false => token
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start_matches('.'),
        };
        if token.is_empty() {
            continue;
        }
        number += 1;
        let m = parse_move(&pos, token).map_err(|why| PositionError::BadMove {
            number,
            text: token.to_string(),
            why,
            fen: fen_of(&pos),
        })?;
        each(&pos, m);
        pos.play_unchecked(m);
    }
    Ok(pos)
}

/// One line of a FEN or EPD file, split into its position and its operations.
///
/// An EPD line is the first four FEN fields (board, side to move, castling, en passant) and then
/// operations (`bm Nf3; id "x";`); a FEN line has six fields, the last two the move counters.
/// The line is read as a FEN when its fifth and sixth fields are both numbers, else as EPD. This
/// is the one rule for every file of positions polybook reads (`probe --epd`, `match
/// --openings`, the `solve` suites).
///
/// ```
/// use polybook::position::EpdLine;
///
/// let epd = EpdLine::parse("8/8/8/8/8/8/8/k6K w - - bm Kg2; id \"x\";").unwrap();
/// assert_eq!(epd.fen, "8/8/8/8/8/8/8/k6K w - -");
/// assert_eq!(epd.operations, " bm Kg2; id \"x\";");
/// let fen = EpdLine::parse("8/8/8/8/8/8/8/k6K w - - 0 1").unwrap();
/// assert_eq!((fen.fen, fen.operations), ("8/8/8/8/8/8/8/k6K w - - 0 1", ""));
/// assert!(EpdLine::parse("  # a comment").is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpdLine<'a> {
    /// The position as written: four fields, or six with the move counters (fewer when the line
    /// is short).
    pub fen: &'a str,
    /// What follows the position: EPD operations, empty for a FEN.
    pub operations: &'a str,
}

impl<'a> EpdLine<'a> {
    /// Splits a line (surrounding whitespace ignored); `None` for a blank line or a `#` comment.
    pub fn parse(line: &'a str) -> Option<EpdLine<'a>> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        // Where the first six fields end (the line's end for missing ones), in one pass:
        // `probe --epd` reads thousands of lines.
        let bytes = line.as_bytes();
        let mut ends = [bytes.len(); 6];
        let mut i = 0;
        for end in &mut ends {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i == bytes.len() {
                break;
            }
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            *end = i;
        }
        let (fourth, sixth) = (ends[3], ends[5]);
        let mut counters = line[fourth..sixth].split_whitespace();
        let end = match (counters.next(), counters.next(), counters.next()) {
            (Some(half), Some(full), None)
                if half.parse::<u32>().is_ok() && full.parse::<u32>().is_ok() =>
            {
                sixth
            }
            _ => fourth,
        };
        Some(EpdLine {
            fen: &line[..end],
            operations: &line[end..],
        })
    }

    /// The fields of the position part.
    pub fn fields(&self) -> std::str::SplitWhitespace<'a> {
        self.fen.split_whitespace()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chess960_fens_are_read_in_chess960_and_refused_in_standard_chess() {
        use Square::{A1, A8, B1, B8, H1, H8};
        let rights = |fen: &str, chess960: bool| {
            parse_fen_for(fen, chess960)
                .unwrap()
                .castles()
                .castling_rights()
        };
        // Shredder-FEN and X-FEN of one Chess960 position: the rooks on b1 and h1.
        let shredder = "1r2k2r/pppppppp/8/8/8/8/PPPPPPPP/1R2K2R w HBhb - 0 1";
        let xfen = "1r2k2r/pppppppp/8/8/8/8/PPPPPPPP/1R2K2R w KQkq - 0 1";
        let b_and_h = Bitboard::from_iter([B1, H1, B8, H8]);
        assert_eq!(rights(shredder, true), b_and_h);
        assert_eq!(rights(xfen, true), b_and_h);
        // A standard FEN, and its Shredder-FEN, in both.
        for fen in [
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
            "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1",
        ] {
            assert_eq!(rights(fen, true), Bitboard::from_iter([A1, H1, A8, H8]));
            assert_eq!(rights(fen, false), Bitboard::from_iter([A1, H1, A8, H8]));
        }
        // Standard chess refuses the b-file rights (parse_fen drops them), naming the field.
        for fen in [shredder, xfen] {
            let e = parse_fen_for(fen, false).unwrap_err();
            assert!(matches!(e, PositionError::BadFen { .. }), "{e}");
            let text = e.to_string();
            assert!(
                text.contains("field 3, castling,") && text.contains("castling rights of Chess960"),
                "{text}"
            );
            let dropped = parse_fen(fen).unwrap();
            assert_eq!(
                dropped.castles().castling_rights(),
                Bitboard::from_iter([H1, H8])
            );
        }
        // Rights without a rook to castle with are dropped in both, as parse_fen drops them.
        let no_rooks = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/QQQQKQQQ w KQkq - 0 1";
        assert_eq!(rights(no_rooks, false), Bitboard::from_iter([A8, H8]));
        assert_eq!(rights(no_rooks, true), Bitboard::from_iter([A8, H8]));
        // Other errors are the same in both.
        for chess960 in [false, true] {
            assert!(matches!(
                parse_fen_for("8/8/8/8/8/8/8/8 w - - 0 1", chess960),
                Err(PositionError::Illegal { .. })
            ));
            assert!(matches!(
                parse_fen_for("not a fen", chess960),
                Err(PositionError::BadFen { .. })
            ));
        }
    }

    #[test]
    fn epd_lines_split_into_position_and_operations() {
        let part = |line: &str| EpdLine::parse(line).unwrap().fen.to_string();
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(part(fen), fen);
        assert_eq!(part(&format!("{fen} ; comment")), fen);
        let epd = "r1b1k2r/pp2qppp/2n5/8/8/8/PP3PPP/R3KB1R w KQkq - bm Qe2; id \"x\";";
        assert_eq!(
            part(epd),
            "r1b1k2r/pp2qppp/2n5/8/8/8/PP3PPP/R3KB1R w KQkq -"
        );
        assert_eq!(
            EpdLine::parse(epd).unwrap().operations,
            " bm Qe2; id \"x\";"
        );
        assert_eq!(
            part("8/8/8/8/8/8/8/8  w   -  -  hmvc 3;"),
            "8/8/8/8/8/8/8/8  w   -  -"
        );
        assert_eq!(part("  8/8 w  "), "8/8 w");
        assert_eq!(EpdLine::parse("8/8 w").unwrap().fields().count(), 2);
        assert!(EpdLine::parse("").is_none());
        assert!(EpdLine::parse(" \t").is_none());
        assert!(EpdLine::parse("# x").is_none());
    }

    #[test]
    fn moves_in_san_and_uci_and_with_numbers() {
        let a = play_moves(Chess::default(), "1. e4 e5 2. Nf3").unwrap();
        let b = play_moves(Chess::default(), "e2e4 e7e5 g1f3").unwrap();
        assert_eq!(fen_of(&a), fen_of(&b));
    }

    #[test]
    fn bad_input_is_named() {
        let err = play_moves(Chess::default(), "e4 e5 Ke3")
            .unwrap_err()
            .to_string();
        assert!(err.contains("move 3 'Ke3' is illegal"), "{err}");
        let pos = parse_fen("4k3/8/8/8/8/8/8/R3K2R w - - 0 1").unwrap();
        assert!(play_moves(pos.clone(), "Rd1").is_ok());
        let pos = parse_fen("4k3/8/8/8/8/8/8/R3K1NR w - - 0 1").unwrap();
        assert!(play_moves(pos, "Nf3 Ke7 Ng1 Ke8 Rg1").is_err());
        assert!(matches!(
            parse_fen("8/8/8/8/8/8/8/8 w - - 0 1"),
            Err(PositionError::Illegal { .. })
        ));
        assert!(matches!(
            parse_fen("not a fen"),
            Err(PositionError::BadFen { .. })
        ));
    }

    #[test]
    fn the_short_fen_path_agrees_with_the_long_one() {
        // Positions two plies from a few roots (castling, en passant, promotions), each written
        // several ways, and odd spellings.
        let roots = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
        ];
        let mut fens: Vec<String> = Vec::new();
        for root in roots {
            let root = parse_fen(root).unwrap();
            for m in root.legal_moves() {
                let child = root.clone().play(m).unwrap();
                for m in child.legal_moves() {
                    let pos = child.clone().play(m).unwrap();
                    let fen = fen_of(&pos);
                    let always = Fen::from_position(&pos, EnPassantMode::Always).to_string();
                    let epd: Vec<&str> = fen.split(' ').take(4).collect();
                    // What fen_of writes takes the short path.
                    assert!(
                        parse_canonical_fen(&fen, &mut String::new()).is_some(),
                        "{fen}"
                    );
                    fens.extend([fen.clone(), always, epd.join(" "), format!("{fen} ")]);
                }
            }
        }
        for odd in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w QKkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 00 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 4294967296",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 x",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR  w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1",
            "rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/8 w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b - - 0 1",
            "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
            "4k3/8/8/8/8/8/8/4KR2 w K - 0 1",
            "4k3/8/8/8/8/8/4K3/7R w K - 0 1",
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "4k3/8/8/8/8/8/8/4K3 x - - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - i3 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1 +3+3",
            "4k3/8/8/8/8/8/8/4K3 w - - 99 999999999",
            "4k3/8/8/8/8/8/8/4K3 w - - 1234567890 1",
            "4Q~k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "",
            "not a fen",
        ] {
            fens.push(odd.to_string());
        }
        for fen in &fens {
            let mut short = String::new();
            let got = parse_fen_and_normalize(fen, &mut short);
            match parse_fen(fen) {
                Ok(pos) => {
                    assert_eq!(short, fen_of(&pos), "{fen}");
                    assert_eq!(fen_of(&got.unwrap()), short, "{fen}");
                }
                Err(e) => assert_eq!(got.err(), Some(e), "{fen}"),
            }
        }
    }
}
