//! PGN text and PGN files: the tags, the result string, a game's text, and writing games to
//! files (replaced, appended or new, always atomically).
//!
//! `play` saves a game with [`write_atomic`], [`append_atomic`] or [`write_new`]; `match`
//! appends each finished game to a [`PgnLog`]; both write a game with [`game_text`].

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use shakmaty::Position;

use super::game::Game;
pub use super::game::result_text;
use crate::atomic::AtomicFile;

/// The Seven Tag Roster but the Result (which [`game_text`] adds): Event, Site (`?`), Date
/// (today), Round, White, Black.
pub fn roster(event: &str, round: &str, white: &str, black: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Event", event.to_string()),
        ("Site", "?".to_string()),
        ("Date", pgn_date()),
        ("Round", round.to_string()),
        ("White", white.to_string()),
        ("Black", black.to_string()),
    ]
}

/// A game as PGN. `tags` come first (Event, Site, Date, Round, White, Black in the order
/// given); Result, the FEN tags, `PlyCount` and `Termination` are added here.
pub fn game_text(game: &Game, tags: &[(&str, String)]) -> String {
    let mut out = String::new();
    let result = game.result();
    for (name, value) in tags {
        let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
    }
    let _ = writeln!(out, "[Result \"{result}\"]");
    if let Some(fen) = game.start_fen() {
        let _ = writeln!(out, "[SetUp \"1\"]\n[FEN \"{fen}\"]");
    }
    let _ = writeln!(out, "[PlyCount \"{}\"]", game.moves().len());
    if let Some((_, why)) = &game.end {
        let _ = writeln!(out, "[Termination \"{}\"]", why.tag());
    }
    out.push('\n');

    // Movetext, wrapped at 80 columns.
    let mut tokens: Vec<String> = Vec::new();
    let mut number = game.start().fullmoves().get();
    let mut turn = game.start().turn();
    for (i, m) in game.moves().iter().enumerate() {
        if turn.is_white() {
            tokens.push(format!("{number}."));
        } else if i == 0 {
            tokens.push(format!("{number}..."));
        }
        tokens.push(m.san.clone());
        if let Some(c) = &m.comment {
            tokens.push(format!("{{{}}}", c.replace('}', ")")));
        }
        if turn.is_black() {
            number += 1;
        }
        turn = !turn;
    }
    if let Some((outcome, why)) = &game.end {
        tokens.push(format!("{{{}}}", why.describe(*outcome).replace('}', ")")));
    }
    tokens.push(result.to_string());
    let mut line = String::new();
    for t in tokens {
        if !line.is_empty() && line.len() + 1 + t.len() > 79 {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&t);
    }
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

/// A tag value with its quotes and backslashes escaped.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Today's date as PGN writes it (`YYYY.MM.DD`, UTC).
pub fn pgn_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = crate::text::civil_from_days((secs / 86_400) as i64);
    format!("{y:04}.{m:02}.{d:02}")
}

/// Writes `bytes` to `path` through a temporary file renamed onto it (replacing the file).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = AtomicFile::create(path)?;
    tmp.write_all(bytes)?;
    tmp.commit(true)
}

/// Adds `text` after what `path` holds (a PGN file of several games), atomically: the old
/// content and the new text go to a temporary file renamed onto `path`.
pub fn append_atomic(path: &Path, text: &str) -> io::Result<()> {
    // A FIFO or a device is not read back: the game is written into it (see `AtomicFile`).
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return write_atomic(path, text.as_bytes());
    }
    let mut bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    let separator = separator_after(&bytes[bytes.len().saturating_sub(2)..]);
    bytes.extend_from_slice(separator.as_bytes());
    bytes.extend_from_slice(text.as_bytes());
    write_atomic(path, &bytes)
}

/// Writes `bytes` to a new file in `dir` named `stem.pgn`, or `stem-2.pgn`, `stem-3.pgn`... if
/// that exists: an existing file is never replaced. Returns the path written.
pub fn write_new(dir: &Path, stem: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut tmp = AtomicFile::create_in(dir)?;
    tmp.write_all(bytes)?;
    let names = (1..10_000).map(|n| {
        if n == 1 {
            format!("{stem}.pgn")
        } else {
            format!("{stem}-{n}.pgn")
        }
    });
    let path = tmp.commit_new(names).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{stem}.pgn and 9998 numbered names after it exist"),
        ),
        _ => e,
    })?;
    // Shown as given: `game-….pgn`, not `./game-….pgn`.
    Ok(path
        .strip_prefix(".")
        .map(Path::to_path_buf)
        .unwrap_or(path))
}

/// The default name of a game's PGN file, from the UTC time now: `game-2026-11-23-142501`.
pub fn default_stem() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let date = pgn_date().replace('.', "-");
    let t = secs % 86_400;
    format!("game-{date}-{:02}{:02}{:02}", t / 3600, t / 60 % 60, t % 60)
}

/// A PGN file that games are appended to as they finish (`match --pgn`): opened (created if
/// need be) before the first game, so that a bad path fails early; each game is on disk when
/// [`PgnLog::append`] returns.
///
/// A game appended to a file that does not end with a blank line (written by another program,
/// edited by hand, or appended to or cut by another program between two games) comes after the
/// line breaks it lacks, so that it is not glued to the file's last text. A file moved or
/// deleted while the games are appended (by another process) is created anew at its path for
/// the next game, which [`PgnLog::append`] reports, so that no later game is lost. Each game is
/// written under the file's lock: a program that takes it while it changes the file never
/// collides with a game; one that takes no lock can, only if it writes in the same instant.
pub struct PgnLog {
    path: PathBuf,
    file: File,
}

impl PgnLog {
    /// Opens `path` for appending, creating it if it does not exist.
    pub fn open(path: &Path) -> io::Result<PgnLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(PgnLog {
            path: path.to_path_buf(),
            file,
        })
    }

    /// The path the games are appended to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one game's text and waits until it is on disk; says whether the file had to be
    /// made anew and whether the game went in without the file's lock.
    pub fn append(&mut self, text: &str) -> io::Result<Appended> {
        // Under the file's lock (`flock`), so that a program taking it too (another match
        // logging to the same file, a script under `flock(1)`, a log rotation that locks) changes
        // nothing between the reading of the file's end and the game: it waits, or the game
        // waits. Where the file system has no locks, or a program holds the lock for seconds,
        // the game is appended without it.
        let mut gone = false;
        let mut locked;
        loop {
            locked = lock_briefly(&self.file);
            if !self.gone() {
                break;
            }
            // Moved or deleted (under the lock, by a locking program) before this game: a
            // new file at the path, locked in turn.
            if locked {
                let _ = self.file.unlock();
            }
            *self = PgnLog::open(&self.path)?;
            gone = true;
        }
        let written = self.write_locked(text);
        let _ = self.file.unlock();
        written.map(|()| Appended {
            created_anew: gone,
            unlocked: !locked,
        })
    }

    /// Writes `text` after the line breaks the file's end lacks, and waits until it is on disk.
    fn write_locked(&mut self, text: &str) -> io::Result<()> {
        // The file's end as it is now: another program may have written to it since.
        let separator = separator_after(&last_bytes(&self.path, &self.file));
        self.file
            .write_all(format!("{separator}{text}").as_bytes())?;
        self.file.sync_data()
    }

    /// Whether the open file is no longer the one at the path: the path names nothing, or
    /// another file (the log was moved, or deleted and made again by someone else).
    fn gone(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(open) = self.file.metadata() else {
            return false;
        };
        match std::fs::metadata(&self.path) {
            Ok(at_path) => (at_path.dev(), at_path.ino()) != (open.dev(), open.ino()),
            Err(e) => e.kind() == io::ErrorKind::NotFound,
        }
    }
}

/// What [`PgnLog::append`] met on the way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Appended {
    /// The file was no longer at its path (moved or deleted) and was made anew there for this
    /// game.
    pub created_anew: bool,
    /// The file's lock could not be taken (a program held it for seconds, or the file system
    /// has no locks): the game was appended without it.
    pub unlocked: bool,
}

/// Takes `file`'s exclusive lock, waiting at most five seconds for a program holding it (a
/// lock never let go must not hang the match); false when it was not taken.
fn lock_briefly(file: &File) -> bool {
    for _ in 0..500 {
        match file.try_lock() {
            Ok(()) => return true,
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            Err(std::fs::TryLockError::Error(_)) => return false,
        }
    }
    false
}

/// The last two bytes (or fewer) of the regular file `file` opened at `path`; none for an empty
/// file, or what is not a regular file (a pipe, a terminal: nothing to read back), or a file that
/// cannot be read.
fn last_bytes(path: &Path, file: &File) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => return Vec::new(),
    };
    let n = len.min(2);
    let mut tail = vec![0; n as usize];
    let read = File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(len - n))?;
        f.read_exact(&mut tail)
    });
    if read.is_ok() { tail } else { Vec::new() }
}

/// The line breaks to write after a PGN text ending with `tail` so that the next game starts
/// after a blank line: none after nothing or a blank line, one after a line break, two else.
fn separator_after(tail: &[u8]) -> &'static str {
    if tail.is_empty() || tail.ends_with(b"\n\n") {
        ""
    } else if tail.ends_with(b"\n") {
        "\n"
    } else {
        "\n\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(crate::text::civil_from_days(0), (1970, 1, 1));
        // 2000-03-01 is day 11017; 2026-11-23 is day 20780 (both by Python's datetime).
        assert_eq!(crate::text::civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(crate::text::civil_from_days(20_780), (2026, 11, 23));
    }

    #[test]
    fn new_files_never_replace_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_new(dir.path(), "game", b"one").unwrap();
        let b = write_new(dir.path(), "game", b"two").unwrap();
        assert_eq!(a.file_name().unwrap(), "game.pgn");
        assert_eq!(b.file_name().unwrap(), "game-2.pgn");
        assert_eq!(std::fs::read(&a).unwrap(), b"one");
        append_atomic(&a, "three\n").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"one\n\nthree\n");
        let stem = default_stem();
        assert!(stem.starts_with("game-2") && stem.len() == "game-2026-11-23-142501".len());
    }

    /// Text another program appends to the log between two games (a line without its line
    /// break, or a line) or a cut it makes is followed by a blank line before the next game, as
    /// the file's end is when the log is opened (found by the fuzz target `match_log`: the next
    /// game's first tag was glued to the text, and the game lost its tags).
    #[test]
    fn a_game_after_what_another_program_wrote_starts_after_a_blank_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.pgn");
        let mut log = PgnLog::open(&path).unwrap();
        log.append("[Event \"1\"]\n\n1. e4 *\n\n").unwrap();
        let outside = |text: &str| {
            let mut f = OpenOptions::new().append(true).open(&path).unwrap();
            f.write_all(text.as_bytes()).unwrap();
        };
        outside("junk");
        log.append("[Event \"2\"]\n\n1. d4 *\n\n").unwrap();
        outside("a line\n");
        log.append("[Event \"3\"]\n\n1. c4 *\n\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[Event \"1\"]\n\n1. e4 *\n\njunk\n\n[Event \"2\"]\n\n1. d4 *\n\n\
             a line\n\n[Event \"3\"]\n\n1. c4 *\n\n"
        );
    }

    /// A program holding the log's lock (`flock`) while it writes: the game waits for it and
    /// comes after what it wrote, not in the middle (the race the fuzz target `match_log` found
    /// between the reading of the log's end and the game).
    #[test]
    fn a_game_waits_for_a_program_holding_the_log_s_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.pgn");
        std::fs::write(&path, "[Event \"1\"]\n\n1. e4 *\n\n").unwrap();
        let mut other = OpenOptions::new().append(true).open(&path).unwrap();
        other.lock().unwrap();
        let appending = {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut log = PgnLog::open(&path).unwrap();
                let appended = log.append("[Event \"2\"]\n\n1. d4 *\n\n").unwrap();
                assert!(!appended.unlocked);
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[Event \"1\"]\n\n1. e4 *\n\n",
            "the game was written while another program held the lock"
        );
        other.write_all(b"text without a line end").unwrap();
        other.unlock().unwrap();
        appending.join().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[Event \"1\"]\n\n1. e4 *\n\ntext without a line end\n\n[Event \"2\"]\n\n1. d4 *\n\n"
        );
    }
}
