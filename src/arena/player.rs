//! A UCI engine in its own process: started, greeted, set up, asked for moves, restarted when
//! it crashes, and never trusted to answer in time.
//!
//! polybook's own engine is played the same way (its own binary run as `polybook uci`), so a
//! crash or a hang of either side is caught alike and can't take the match down with it.

use std::io::{BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::thread;
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::book::Books;
use crate::engine::Score;

/// How to run an engine: the program, its arguments and the UCI options to set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Options sent with `setoption` after the handshake, in order.
    pub options: Vec<(String, String)>,
    /// The spec as the user wrote it, for messages.
    pub label: String,
    /// The name the user gave it (`NAME=SPEC`), shown instead of its `id name`.
    pub name: Option<String>,
    /// The engine's own opening book, whose moves the runner plays for it (cutechess's
    /// `book=FILE bookdepth=N`).
    pub book: Option<EngineBook>,
}

/// An engine's own books, played by the runner for it: while the game is within `depth` and a
/// book has a move for the position, the runner picks one (as the match's book walk picks, from
/// the match's seed) instead of asking the engine.
#[derive(Clone)]
pub struct EngineBook {
    /// In priority order: the first with a move that counts gives it.
    pub books: Arc<Books>,
    /// The most full moves from the game's start in which the book is asked (cutechess's
    /// `bookdepth`): while fewer than twice as many plies have been played. `None`: as long as it
    /// has a move.
    pub depth: Option<usize>,
}

impl PartialEq for EngineBook {
    /// The same books (the same loaded files, not equal contents) and depth.
    fn eq(&self, other: &EngineBook) -> bool {
        Arc::ptr_eq(&self.books, &other.books) && self.depth == other.depth
    }
}

impl Eq for EngineBook {}

impl std::fmt::Debug for EngineBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.books.iter().map(|(name, _)| name).collect();
        f.debug_struct("EngineBook")
            .field("books", &names)
            .field("depth", &self.depth)
            .finish()
    }
}

impl EngineSpec {
    /// Parses `builtin`, `builtin:Name=Value,...` or `cmd:PROGRAM [ARGS]`; `builtin` runs
    /// `polybook_exe uci`. Any of them may be named: `NAME=SPEC` (the name shown in the PGN and
    /// the reports instead of the engine's `id name`).
    ///
    /// ```
    /// use polybook::arena::player::EngineSpec;
    ///
    /// let s = EngineSpec::parse("builtin:Hash=16,Move Overhead=50", "/bin/polybook".as_ref()).unwrap();
    /// assert_eq!(s.args, ["uci"]);
    /// assert_eq!(s.options[1], ("Move Overhead".to_string(), "50".to_string()));
    /// let s = EngineSpec::parse("cmd:/usr/games/stockfish", "/bin/polybook".as_ref()).unwrap();
    /// assert_eq!(s.program.to_str(), Some("/usr/games/stockfish"));
    /// let e = EngineSpec::parse("stockfish", "/bin/polybook".as_ref()).unwrap_err();
    /// assert!(e.ends_with("did you mean 'cmd:stockfish'?"), "{e}");
    /// let s = EngineSpec::parse("SF 16=cmd:/usr/games/stockfish", "/bin/polybook".as_ref()).unwrap();
    /// assert_eq!(s.name.as_deref(), Some("SF 16"));
    /// ```
    pub fn parse(text: &str, polybook_exe: &std::path::Path) -> Result<EngineSpec, String> {
        let quoted = crate::text::quote(text);
        let is_spec =
            |t: &str| t == "builtin" || t.starts_with("builtin:") || t.starts_with("cmd:");
        if !is_spec(text)
            && let Some((name, spec)) = text.split_once('=')
            && is_spec(spec.trim_start())
        {
            let name = name.trim();
            if name.is_empty() {
                return Err(format!("engine {quoted}: no name before '='"));
            }
            let mut parsed = EngineSpec::parse(spec.trim_start(), polybook_exe)
                .map_err(|e| e.replace(&crate::text::quote(spec.trim_start()), &quoted))?;
            parsed.name = Some(name.to_string());
            parsed.label = text.to_string();
            return Ok(parsed);
        }
        if text == "builtin" || text.starts_with("builtin:") {
            let mut options = Vec::new();
            if let Some(list) = text.strip_prefix("builtin:") {
                for part in list.split(',').filter(|p| !p.trim().is_empty()) {
                    options.push(parse_option(part).map_err(|e| format!("engine {quoted}: {e}"))?);
                }
            }
            return Ok(EngineSpec {
                program: polybook_exe.to_path_buf(),
                args: vec!["uci".to_string()],
                options,
                label: text.to_string(),
                name: None,
                book: None,
            });
        }
        if let Some(command) = text.strip_prefix("cmd:") {
            let mut words = command.split_whitespace();
            let program = words
                .next()
                .ok_or_else(|| format!("engine {quoted}: no program after 'cmd:'"))?;
            return Ok(EngineSpec {
                program: PathBuf::from(program),
                args: words.map(str::to_string).collect(),
                options: Vec::new(),
                label: text.to_string(),
                name: None,
                book: None,
            });
        }
        // A bare program name or path is the usual slip: say what was meant.
        let hint = if !text.trim().is_empty() && !text.contains(':') {
            format!(
                "; did you mean {}?",
                crate::text::quote(&format!("cmd:{}", text.trim()))
            )
        } else {
            String::new()
        };
        Err(format!(
            "engine {}: expected 'builtin', 'builtin:Name=Value,...' or 'cmd:PROGRAM [ARGS]'{hint}",
            crate::text::quote(text)
        ))
    }
}

/// `Name=Value` as an option pair.
pub fn parse_option(text: &str) -> Result<(String, String), String> {
    let quoted = crate::text::quote(text);
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("option {quoted} is not Name=Value"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("option {quoted} has no name"));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// What went wrong with an engine.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum EngineError {
    #[error("engine {}: cannot start {}: {why}", crate::text::quote(.engine), crate::text::quote(.program))]
    Spawn {
        engine: String,
        program: String,
        why: String,
    },
    #[error("engine {}: no '{expected}' within {seconds} s", crate::text::quote(.engine))]
    Timeout {
        engine: String,
        expected: &'static str,
        seconds: f64,
    },
    #[error("engine {} exited ({why})", crate::text::quote(.engine))]
    Exited { engine: String, why: String },
    #[error("engine {} has no option {} (it has: {known})", crate::text::quote(.engine), crate::text::quote(.name))]
    UnknownOption {
        engine: String,
        name: String,
        known: String,
    },
}

/// A score an engine reported, from its own side's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineScore {
    Cp(i32),
    /// Mate in this many moves (negative: being mated).
    Mate(i32),
}

impl EngineScore {
    /// Centipawns, with mates as ±(100000 − moves) so they compare right.
    pub fn centipawns(self) -> i32 {
        match self {
            EngineScore::Cp(cp) => cp,
            EngineScore::Mate(n) if n > 0 => 100_000 - n,
            EngineScore::Mate(n) => -100_000 - n,
        }
    }

    /// As cutechess writes it in PGN comments: `+0.35`, `-1.20`, `+M3`, `-M2` (see
    /// [`Score::text`]).
    pub fn pgn(self) -> String {
        Score::from(self).text()
    }
}

impl From<EngineScore> for Score {
    fn from(s: EngineScore) -> Score {
        match s {
            EngineScore::Cp(cp) => Score::Cp(cp),
            EngineScore::Mate(n) => Score::Mate(n),
        }
    }
}

/// An engine's answer to `go`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The move as sent (checked by the caller).
    pub bestmove: String,
    /// The last score and depth of its `info` lines.
    pub score: Option<EngineScore>,
    pub depth: Option<u32>,
    /// From `go` to `bestmove`, as the runner saw it.
    pub elapsed: Duration,
}

/// Why `go` gave no move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoError {
    /// No `bestmove` by the deadline.
    Timeout(Duration),
    /// The run was stopped (Ctrl-C, SIGTERM) while the engine thought; it was sent `stop`.
    Aborted,
    /// The engine exited or closed its output.
    Crashed(String),
}

/// A running UCI engine.
pub struct UciEngine {
    spec: EngineSpec,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The name from `id name` (the spec's label if it sent none).
    pub name: String,
    /// The names of the options it declared.
    pub option_names: Vec<String>,
}

impl UciEngine {
    /// Starts the engine, does the `uci`/`uciok` handshake, sets the spec's options and waits
    /// for `readyok`, each within `timeout`. An option the engine did not declare is an error.
    pub fn start(spec: &EngineSpec, timeout: Duration) -> Result<UciEngine, EngineError> {
        // Its own process group: a Ctrl-C in the terminal stops the runner, which then ends the
        // engines itself, instead of killing them mid-game.
        let mut child = Command::new(&spec.program)
            .args(&spec.args)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| EngineError::Spawn {
                engine: spec.label.clone(),
                program: spec.program.display().to_string(),
                why: crate::text::reason(&e),
            })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        // Lines of at most MAX_LINE bytes, and at most MAX_QUEUED waiting: an engine that floods
        // its output is slowed down to the pace lines are read, and costs bounded memory.
        let (tx, lines) = sync_channel(MAX_QUEUED);
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match crate::bounded_lines::read_bounded_line(&mut reader, &mut buf, MAX_LINE) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf).trim().to_string();
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut engine = UciEngine {
            spec: spec.clone(),
            child,
            stdin,
            lines,
            name: spec.label.clone(),
            option_names: Vec::new(),
        };
        let started = engine.handshake(timeout);
        if started.is_err() {
            engine.kill();
        }
        started.map(|()| engine)
    }

    fn handshake(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("uci")?;
        let deadline = Instant::now() + timeout;
        loop {
            let line = self.next_line(deadline, "uciok", timeout)?;
            if let Some(name) = line.strip_prefix("id name ") {
                self.name = name.trim().to_string();
            } else if let Some(rest) = line.strip_prefix("option name ") {
                let name = rest.split(" type ").next().unwrap_or(rest).trim();
                self.option_names.push(name.to_string());
            } else if line == "uciok" {
                break;
            }
        }
        if let Some(name) = &self.spec.name {
            self.name = name.clone();
        }
        for (name, value) in self.spec.options.clone() {
            if !self
                .option_names
                .iter()
                .any(|known| known.eq_ignore_ascii_case(&name))
            {
                return Err(EngineError::UnknownOption {
                    engine: self.spec.label.clone(),
                    name,
                    known: self.option_names.join(", "),
                });
            }
            self.send(&format!("setoption name {name} value {value}"))?;
        }
        self.sync(timeout)
    }

    /// Sends `isready` and waits for `readyok`.
    pub fn sync(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("isready")?;
        let deadline = Instant::now() + timeout;
        while self.next_line(deadline, "readyok", timeout)? != "readyok" {}
        Ok(())
    }

    /// Starts a new game: `ucinewgame`, then `isready`.
    pub fn new_game(&mut self, timeout: Duration) -> Result<(), EngineError> {
        self.send("ucinewgame")?;
        self.sync(timeout)
    }

    /// Sends `position` and `go` and waits for `bestmove` until `deadline` (none: forever), or
    /// until `abort` is set: then the engine is sent `stop` (and given [`ABORT_GRACE`] to answer)
    /// and the answer is [`GoError::Aborted`], so that Ctrl-C stops a run within a second however
    /// long the engine would think.
    pub fn go(
        &mut self,
        position: &str,
        go: &str,
        deadline: Option<Instant>,
        abort: Option<&AtomicBool>,
    ) -> Result<Reply, GoError> {
        let crashed = |e: EngineError| GoError::Crashed(e.to_string());
        self.send(position).map_err(crashed)?;
        let start = Instant::now();
        self.send(go).map_err(crashed)?;
        let mut score = None;
        let mut depth = None;
        loop {
            // Wait in slices, to see `abort` in time.
            let slice = Instant::now() + ABORT_POLL;
            let until = deadline.map_or(slice, |d| d.min(slice));
            let line = match self
                .lines
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    if abort.is_some_and(|a| a.load(Ordering::Relaxed)) {
                        self.stop_and_drain(ABORT_GRACE);
                        return Err(GoError::Aborted);
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err(GoError::Timeout(start.elapsed()));
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(GoError::Crashed(self.exit_reason()));
                }
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("bestmove") => {
                    return Ok(Reply {
                        bestmove: words.next().unwrap_or("").to_string(),
                        score,
                        depth,
                        elapsed: start.elapsed(),
                    });
                }
                Some("info") => {
                    let words: Vec<&str> = words.collect();
                    let mut i = 0;
                    while i < words.len() {
                        match words[i] {
                            "depth" => {
                                depth = words.get(i + 1).and_then(|w| w.parse().ok()).or(depth)
                            }
                            "score" => {
                                let value = words.get(i + 2).and_then(|w| w.parse().ok());
                                score = match (words.get(i + 1), value) {
                                    (Some(&"cp"), Some(v)) => Some(EngineScore::Cp(v)),
                                    (Some(&"mate"), Some(v)) => Some(EngineScore::Mate(v)),
                                    _ => score,
                                };
                            }
                            "pv" | "string" => break,
                            _ => {}
                        }
                        i += 1;
                    }
                }
                _ => {}
            }
            // An engine that talks without end is stopped and timed out as a silent one is.
            if abort.is_some_and(|a| a.load(Ordering::Relaxed)) {
                self.stop_and_drain(ABORT_GRACE);
                return Err(GoError::Aborted);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(GoError::Timeout(start.elapsed()));
            }
        }
    }

    /// After a timeout: sends `stop` and waits up to `wait` for the late `bestmove`, so the
    /// engine is ready for the next game. `false` if it never came (the engine hangs).
    pub fn stop_and_drain(&mut self, wait: Duration) -> bool {
        if self.send("stop").is_err() {
            return false;
        }
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) if line.starts_with("bestmove") => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// The next line before `deadline`; a timeout or an exit is an error naming `expected`.
    fn next_line(
        &mut self,
        deadline: Instant,
        expected: &'static str,
        timeout: Duration,
    ) -> Result<String, EngineError> {
        // Past the deadline, lines still queued don't count (an engine may talk without end).
        let received = if Instant::now() >= deadline {
            Err(RecvTimeoutError::Timeout)
        } else {
            self.lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        };
        match received {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(EngineError::Timeout {
                engine: self.spec.label.clone(),
                expected,
                seconds: timeout.as_secs_f64(),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(EngineError::Exited {
                engine: self.spec.label.clone(),
                why: self.exit_reason(),
            }),
        }
    }

    fn send(&mut self, line: &str) -> Result<(), EngineError> {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|_| EngineError::Exited {
                engine: self.spec.label.clone(),
                why: self.exit_reason(),
            })
    }

    /// How the process ended, or that it closed its pipes.
    fn exit_reason(&mut self) -> String {
        // The process may still be closing: give it a moment to report its status.
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.to_string();
            }
            thread::sleep(Duration::from_millis(10));
        }
        "it closed its output".to_string()
    }

    /// The process id (for tests that kill an engine mid-match).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Asks the engine to quit, and kills it if it hasn't within a second.
    pub fn quit(mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline && !self.exited() {
            thread::sleep(Duration::from_millis(10));
        }
        // Whether it quit or not: what it left running in its group goes with it.
        self.kill();
    }

    /// Whether the process has ended (or was reaped): see [`UciEngine::ended`].
    fn exited(&self) -> bool {
        self.ended() != Some(false)
    }

    /// Whether the process has ended, found without reaping it (until it is reaped, its pid and
    /// so its process group's id can't be taken by another process); `None` once it is reaped.
    fn ended(&self) -> Option<bool> {
        // SAFETY: waitid(2) writes only into `info`, a zeroed siginfo_t owned here.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(
                libc::P_PID,
                self.child.id(),
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            (r == 0).then(|| info.si_pid() != 0)
        }
    }

    /// Kills the engine's whole process group (it has its own: a wrapper script's children, or a
    /// process the engine started, go too), then reaps the engine.
    fn kill(&mut self) {
        if self.ended().is_some()
            && let Ok(group) = libc::pid_t::try_from(self.child.id())
        {
            // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How often a search that may be aborted looks at its flag.
const ABORT_POLL: Duration = Duration::from_millis(50);
/// How much of one line of an engine's is kept (the rest of a longer line is skipped).
const MAX_LINE: usize = 1 << 16;
/// How many of an engine's lines may wait to be read.
const MAX_QUEUED: usize = 1 << 12;
/// How long an aborted engine is given to answer `stop` before it is left (and killed on drop).
const ABORT_GRACE: Duration = Duration::from_millis(300);

impl Drop for UciEngine {
    fn drop(&mut self) {
        self.kill();
    }
}
