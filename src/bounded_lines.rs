//! Reading input one line at a time with a bound on what is kept: the UCI loop's commands and
//! the terminal game's moves come from a person or a program that may send anything, including a
//! line without end.

use std::io::{self, BufRead};

/// Appends one line of `input` to `buf` (its end consumed but not kept), keeping at most `max`
/// bytes in `buf` and skipping the rest of a longer line; returns the bytes consumed (0 at the
/// end of the input). An interrupted read is retried.
///
/// ```
/// let mut input = "go depth 3\nquit".as_bytes();
/// let mut buf = Vec::new();
/// assert_eq!(polybook::bounded_lines::read_bounded_line(&mut input, &mut buf, 5).unwrap(), 11);
/// assert_eq!(buf, b"go de");
/// ```
pub fn read_bounded_line<R: BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(total);
        }
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let keep = used.min(max.saturating_sub(buf.len()));
        buf.extend_from_slice(&chunk[..keep]);
        input.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}
