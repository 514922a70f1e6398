//! Text for messages: user input quoted at a readable length, I/O errors as plain reasons, numbers
//! with separators, and the calendar date of a day count (for PGN, HTTP and the practice page).
//!
//! Every message that echoes what the user gave (a FEN, a move, a path, a UCI line) quotes it with
//! [`quote`], so that a 10,000-character argument or a 1 MB tag is not printed back whole.

use std::io;
use std::path::Path;

/// The most characters of the input a message shows whole: the longest FEN fits.
pub const QUOTED: usize = 92;

/// `text` in single quotes; when longer than [`QUOTED`] characters, its start, an ellipsis and
/// its length: `'rnbqkbnr/pp…' (10,240 characters)`. Control characters are shown escaped (`\n`,
/// `\u{0}`), so that a message stays one line whatever the input held.
///
/// ```
/// use polybook::text::quote;
/// assert_eq!(quote("e4"), "'e4'");
/// let long = "x".repeat(10_240);
/// assert_eq!(quote(&long), format!("'{}…' (10,240 characters)", "x".repeat(72)));
/// assert_eq!(quote("e4\nd4"), "'e4\\nd4'");
/// ```
pub fn quote(text: &str) -> String {
    let count = text.chars().count();
    if count <= QUOTED {
        return format!("'{}'", printable(text.chars()));
    }
    let shown = printable(text.chars().take(QUOTED - 20));
    format!("'{shown}…' ({} characters)", thousands(count))
}

fn printable(chars: impl Iterator<Item = char>) -> String {
    let mut out = String::new();
    for c in chars {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A path quoted as [`quote`] quotes text.
pub fn quote_path(path: &Path) -> String {
    quote(&path.to_string_lossy())
}

/// `n` with a comma every three digits: `10,240`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An I/O error as the reason a message gives: the system's words without the
/// ` (os error N)` that `io::Error` adds (`No such file or directory`).
pub fn reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}

/// The calendar date (year, month, day) of a day count since 1970-01-01, UTC (Howard Hinnant's
/// `civil_from_days`): for PGN's `Date`, HTTP's `Date` and the practice's due days.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_quoted_whole_and_long_text_cut() {
        let exactly = "a".repeat(QUOTED);
        assert_eq!(quote(&exactly), format!("'{exactly}'"));
        let over = "é".repeat(QUOTED + 1);
        assert_eq!(
            quote(&over),
            format!("'{}…' (93 characters)", "é".repeat(72))
        );
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn reasons_drop_the_error_number() {
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(reason(&e), "No such file or directory");
        let e = io::Error::other("custom");
        assert_eq!(reason(&e), "custom");
    }
}
