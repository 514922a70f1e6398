//! The documents that must not drift from the code: the command reference, generated from the
//! same clap definitions `--help` prints, and the links between the documents.

use crate::common;
use common::{polybook_ok, root};

/// `docs/reference.md` is what `polybook reference` prints today.
#[test]
fn the_command_reference_is_what_the_code_prints() {
    let generated = polybook_ok(&["reference"]);
    let committed = std::fs::read_to_string(root().join("docs/reference.md")).unwrap();
    assert!(
        generated == committed,
        "docs/reference.md differs from the code's help: run \
         `cargo run --release -- reference > docs/reference.md` and commit it"
    );
    // Every command is in it, with its options as --help lists them.
    for name in ["build", "probe", "analyse", "export", "match", "uci"] {
        let help = polybook_ok(&[name, "--help"]);
        let heading = format!("## polybook {name}\n\n```text\n");
        let at = committed.find(&heading).expect(name) + heading.len();
        let first = help.lines().next().unwrap();
        assert!(committed[at..].starts_with(first), "{name}");
    }
}

/// Every relative link of the Markdown documents leads to a file of the repository.
#[test]
fn the_documents_link_to_files_that_exist() {
    let mut docs = vec![
        root().join("README.md"),
        root().join("BENCHMARKS.md"),
        root().join("ARCHITECTURE.md"),
    ];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    let mut broken = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty()
                || target.contains("://")
                || target.starts_with("mailto:")
                || target.contains(' ')
            {
                continue;
            }
            if !doc.parent().unwrap().join(target).exists() {
                broken.push(format!(
                    "{}: {target}",
                    doc.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// One shell command of a document's ```sh blocks, with what its comment says of it.
struct DocCommand {
    /// `README.md:91`: where the command starts.
    place: String,
    /// The command as bash runs it (continuation lines joined).
    line: String,
    /// Why it is not run: set-up, the network, hours (from the comment before it, or its kind).
    skip: Option<String>,
    /// The exit status its comment promises (`# exit 1: …`), 0 otherwise.
    status: i32,
    /// A value its comment says it prints (`# 83bf25e378cb17d0`, `# 4865609 …`).
    prints: Option<String>,
}

/// Where the `#` of a trailing comment starts, outside quotes (None: no comment).
fn comment_start(line: &str) -> Option<usize> {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && (i == 0 || bytes[i - 1] == b' ') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Commands that prepare a machine rather than use polybook: the documents show them, the test
/// runs on a machine that has them done.
fn set_up(line: &str) -> Option<&'static str> {
    let kinds: [(&str, &'static str); 9] = [
        ("cargo install", "set-up: installs polybook"),
        ("cargo build", "set-up: builds polybook"),
        ("cargo test", "the tests themselves"),
        ("./test.sh", "the tests themselves"),
        ("apt-get ", "set-up: installs packages"),
        ("pip ", "set-up: installs packages"),
        ("curl ", "needs the network"),
        ("cd web/explore && npm", "needs the network (npm)"),
        ("spark-submit", "needs a Spark cluster"),
    ];
    kinds
        .iter()
        .find(|(start, _)| line.starts_with(start))
        .map(|(_, why)| *why)
}

/// The shell commands of a Markdown document's ```sh blocks, in order. A comment line that begins
/// with `# needs` or `# takes` marks the commands after it, up to the next blank line, as not run
/// (the network, hours); in a block that shows a session (`$ ` prompts), only the prompted lines
/// are commands, the rest is their output.
fn doc_commands(doc: &str) -> Vec<DocCommand> {
    let text = std::fs::read_to_string(root().join(doc)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut commands = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```sh" {
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap();
        let block = &lines[i + 1..end];
        let session = block.iter().any(|l| l.starts_with("$ "));
        let mut skip: Option<String> = None;
        let mut j = 0;
        while j < block.len() {
            let first = j;
            let raw = block[j].trim();
            j += 1;
            if raw.is_empty() {
                skip = None;
                continue;
            }
            if raw.starts_with('#') {
                if raw.starts_with("# needs") || raw.starts_with("# takes") {
                    skip = Some(raw.trim_start_matches("# ").to_string());
                }
                continue;
            }
            let raw = if session {
                match raw.strip_prefix("$ ") {
                    Some(command) => command,
                    None => continue, // the output of the command before
                }
            } else {
                raw
            };
            // Continuation lines.
            let mut line = raw.to_string();
            while line.ends_with('\\') && j < block.len() {
                line.pop();
                line.push(' ');
                line.push_str(block[j].trim());
                j += 1;
            }
            let comment = comment_start(&line).map(|at| line[at + 1..].trim().to_string());
            let status = match &comment {
                Some(c) if c.starts_with("exit 1") => 1,
                _ => 0,
            };
            let prints = comment.as_ref().and_then(|c| {
                let word = c.split_whitespace().next()?;
                (word.len() >= 5 && word.chars().all(|ch| ch.is_ascii_hexdigit()))
                    .then(|| word.to_string())
            });
            let line = line.replace("cargo run --release --", "polybook");
            commands.push(DocCommand {
                place: format!("{doc}:{}", i + 2 + first),
                skip: skip.clone().or_else(|| set_up(&line).map(str::to_string)),
                line,
                status,
                prints,
            });
        }
        i = end + 1;
    }
    commands
}

/// `NAME=value` alone on its line (a quoted value may hold spaces): a variable for the commands
/// after it.
fn is_assignment(line: &str) -> bool {
    let Some((name, _)) = line.split_once('=') else {
        return false;
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return false;
    }
    let line = match comment_start(line) {
        Some(at) => line[..at].trim_end(),
        None => line,
    };
    let mut quoted = None;
    for c in line.chars() {
        match (quoted, c) {
            (None, '\'' | '"') => quoted = Some(c),
            (Some(q), c) if c == q => quoted = None,
            (None, ' ') => return false,
            _ => {}
        }
    }
    true
}

/// Copies a folder of the repository into `to`.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Runs one command in `dir` with `polybook` on the path; None when it ended as its comment says,
/// else why not. `explore` serves until Ctrl-C: it must print its URL, then stop on SIGINT.
fn run_doc_command(dir: &std::path::Path, env: &str, command: &DocCommand) -> Option<String> {
    use std::io::BufRead;
    use std::time::{Duration, Instant};
    let path = format!(
        "{}:{}",
        dir.join("target/release").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let serves = command.line.starts_with("polybook explore");
    let script = if serves {
        format!("{env}exec {}", command.line)
    } else {
        format!("{env}{}", command.line)
    };
    let mut child = std::process::Command::new("bash")
        .args(["-o", "pipefail", "-c", &script])
        .current_dir(dir)
        .env("PATH", path)
        .env("BROWSER", "true")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<(bool, String)>();
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send((true, l));
        }
    });
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx2.send((false, l));
        }
    });
    let limit = Duration::from_secs(if serves { 30 } else { 600 });
    let start = Instant::now();
    let (mut out, mut err) = (String::new(), String::new());
    let mut served = false;
    let status = loop {
        while let Ok((is_out, l)) = rx.try_recv() {
            if serves && l.contains("http://") && !served {
                served = true;
                unsafe { libc::kill(pid, libc::SIGINT) };
            }
            let to = if is_out { &mut out } else { &mut err };
            to.push_str(&l);
            to.push('\n');
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Some(format!("still running after {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // What the readers still hold.
    std::thread::sleep(Duration::from_millis(50));
    while let Ok((is_out, l)) = rx.try_recv() {
        let to = if is_out { &mut out } else { &mut err };
        to.push_str(&l);
        to.push('\n');
    }
    let last = err.lines().last().unwrap_or_default().to_string();
    if serves {
        return (!served).then(|| format!("never printed its URL; stderr: {last}"));
    }
    let code = status.code().unwrap_or(-1);
    if code != command.status {
        return Some(format!("exit {code} (expected {}): {last}", command.status));
    }
    if let Some(value) = &command.prints
        && !out.contains(value.as_str())
    {
        return Some(format!("its comment says it prints {value}; it did not"));
    }
    None
}

/// Every command of the README and the guide runs as written, in order, from a copy of the
/// repository's files (the bundled games and book, the Spark job; the test data read where it
/// lies), with `polybook` the binary built here: it ends with the status its comment says (0
/// unless `# exit 1`), prints the value its comment names, and `explore` serves then stops on
/// Ctrl-C. Set-up commands (installs, the tests themselves) and the examples marked `# needs …`
/// (the network, a cluster) or `# takes …` (hours) are listed, not run.
#[test]
fn every_command_of_the_readme_and_the_guide_runs() {
    let mut failures = Vec::new();
    let (mut ran, mut skipped) = (0, Vec::new());
    for doc in ["README.md", "docs/guide.md"] {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["pgn", "books", "spark"] {
            copy_tree(&root().join(folder), &dir.path().join(folder));
        }
        std::os::unix::fs::symlink(root().join("tests"), dir.path().join("tests")).unwrap();
        std::fs::create_dir_all(dir.path().join("target/release")).unwrap();
        std::os::unix::fs::symlink(common::BIN, dir.path().join("target/release/polybook"))
            .unwrap();
        let mut env = String::new();
        for command in doc_commands(doc) {
            if let Some(why) = &command.skip {
                skipped.push(format!("{} ({why}): {}", command.place, command.line));
                continue;
            }
            // A variable the document sets is there for the commands after it.
            if is_assignment(&command.line) {
                env.push_str(&command.line);
                env.push_str("; ");
                continue;
            }
            let started = std::time::Instant::now();
            let failed = run_doc_command(dir.path(), &env, &command);
            eprintln!(
                "{:6.1} s  {}  {}",
                started.elapsed().as_secs_f64(),
                command.place,
                if failed.is_some() { "FAILED" } else { "ok" }
            );
            if let Some(why) = failed {
                failures.push(format!("{}: `{}`: {why}", command.place, command.line));
            }
            ran += 1;
        }
    }
    eprintln!("ran {ran} commands; not run:\n  {}", skipped.join("\n  "));
    assert!(ran > 60, "only {ran} commands found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
