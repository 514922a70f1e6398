//! A board diagram for people: Unicode pieces, ranks and files, white at the bottom unless flipped.
//!
//! `probe` prints it above a position's book moves and `play` after every move.
//!
//! ```
//! use polybook::diagram::diagram;
//!
//! let board = diagram(&shakmaty::Chess::default(), false);
//! assert!(board.starts_with(" 8  ♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜"), "{board}");
//! assert!(board.ends_with("    a b c d e f g h\n"));
//! ```

use shakmaty::{Chess, Color, File, Position, Rank, Square};

/// The position as eight lines of Unicode pieces with rank numbers and a file line.
pub fn diagram(pos: &Chess, flipped: bool) -> String {
    let board = pos.board();
    let mut out = String::new();
    let ranks: Vec<Rank> = if flipped {
        Rank::ALL.to_vec()
    } else {
        Rank::ALL.iter().rev().copied().collect()
    };
    let files: Vec<File> = if flipped {
        File::ALL.iter().rev().copied().collect()
    } else {
        File::ALL.to_vec()
    };
    for rank in &ranks {
        out.push_str(&format!(" {} ", rank.char()));
        for file in &files {
            let sq = Square::from_coords(*file, *rank);
            let c = match board.piece_at(sq) {
                Some(piece) => piece_char(piece.color, piece.role.upper_char()),
                None if (u32::from(*file) + u32::from(*rank)) % 2 == 0 => '·',
                None => ' ',
            };
            out.push(' ');
            out.push(c);
        }
        out.push('\n');
    }
    out.push_str("   ");
    for file in &files {
        out.push(' ');
        out.push(file.char());
    }
    out.push('\n');
    out
}

fn piece_char(color: Color, role: char) -> char {
    let (white, black) = match role {
        'K' => ('♔', '♚'),
        'Q' => ('♕', '♛'),
        'R' => ('♖', '♜'),
        'B' => ('♗', '♝'),
        'N' => ('♘', '♞'),
        _ => ('♙', '♟'),
    };
    color.fold_wb(white, black)
}
