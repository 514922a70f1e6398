//! `match_log`: `match --pgn LOG` while another process truncates, overwrites, replaces, deletes
//! or appends junk to the log between games.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{assert_one_line, common, fuzz, run_in, said};

/// What the other process does to the log after a game was appended.
const MEDDLING: &[&str] = &[
    "nothing",
    "truncate",
    "cut",
    "overwrite",
    "junk_line",
    "junk",
    "junk_no_newline",
    "replace",
    "delete",
];

/// The first tag of each game the match writes.
const GAME_START: &[u8] = b"[Event \"polybook match\"]";

/// Does `what` to the log at `path`, open as `file`, whose lock the caller holds (as a careful
/// program holds it while it changes the file). Returns the log's length right after. (Text
/// junk: python-chess reads the file as UTF-8.)
fn meddle(file: &mut std::fs::File, path: &Path, what: &str, rng: &mut StdRng) -> u64 {
    let junk: String = (0..rng.random_range(1..200))
        .map(|_| {
            // No parentheses: python-chess fails on a `)` that closes no variation.
            let chars = b"abcxyz019 []\"{}.*-/%;\t";
            chars[rng.random_range(0..chars.len())] as char
        })
        .collect();
    let size = file.metadata().map_or(0, |m| m.len());
    match what {
        "truncate" => file.set_len(0).unwrap(),
        "cut" => file.set_len(rng.random_range(0..=size)).unwrap(),
        "overwrite" => {
            use std::io::Seek;
            file.seek(std::io::SeekFrom::Start(0)).unwrap();
            file.write_all(junk.as_bytes()).unwrap();
        }
        "junk_line" | "junk" | "junk_no_newline" => {
            let text = match what {
                "junk_line" => format!("{junk}\n"),
                "junk" => format!("[Event \"{junk}\"]\n\n1. e4 {junk}"),
                _ => junk,
            };
            use std::io::Seek;
            file.seek(std::io::SeekFrom::End(0)).unwrap();
            file.write_all(text.as_bytes()).unwrap();
        }
        "replace" => {
            let other = path.with_extension("new");
            std::fs::write(&other, format!("{junk}\n")).unwrap();
            std::fs::rename(&other, path).unwrap();
        }
        "delete" => std::fs::remove_file(path).unwrap(),
        _ => {}
    }
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// A match of 4 short games between two builtin engines (movetime 10, adjudicated as a draw
/// early) at concurrency 1, logged to `games.pgn` (missing, empty, or holding a game without a
/// blank line after it), while a thread watches the log: after each game appended (the file
/// grew), now and then it truncates, cuts, overwrites, replaces or deletes the file, or appends
/// junk to it (a line, a game cut short, text without a line end), under the file's lock as a
/// careful program does (one that takes none can collide with a game in the instant it is
/// written, which no writer can rule out); the games are counted by their first tag. The
/// match ends and exits 0 (or 1 with one line); what it appended after the last meddling starts
/// after a blank line (not glued to what was there), and holds the games played since, each whole
/// as python-chess reads it: the match's Event and players, every move (as many as PlyCount says),
/// a Termination, a result that follows from the end.
#[test]
fn match_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The games are checked with python-chess (tests/match_check.py): missing, it fails first.
    common::python_chess();
    fuzz(
        "match_log",
        4,
        Duration::from_secs(120),
        |rng| {
            // The seed of the meddling, then what is done after each game.
            let mut input = rng.random::<u64>().to_le_bytes().to_vec();
            for _ in 0..4 {
                input.push(rng.random_range(0..MEDDLING.len() as u8));
            }
            input.push(rng.random_range(0..3));
            input
        },
        |input| {
            let mut rng = StdRng::seed_from_u64(u64::from_le_bytes(input[..8].try_into().unwrap()));
            let plan: Vec<&str> = input[8..12]
                .iter()
                .map(|&i| MEDDLING[usize::from(i) % MEDDLING.len()])
                .collect();
            let log = d.join("games.pgn");
            let _ = std::fs::remove_file(&log);
            // A log that exists before the match: empty, or a game without a blank line after it.
            match input[12] {
                0 => {}
                1 => std::fs::write(&log, "").unwrap(),
                _ => std::fs::write(&log, "[Event \"earlier\"]\n\n1. e4 *").unwrap(),
            }
            let initial = std::fs::metadata(&log).map_or(0, |m| m.len());
            let done = Arc::new(AtomicBool::new(false));
            // The watcher: counts the games appended, meddles after some; returns the games seen
            // before the last meddling and the log's length right after it.
            let watcher = {
                let (done, log, plan) = (done.clone(), log.clone(), plan.clone());
                let mut rng = StdRng::seed_from_u64(rng.random());
                std::thread::spawn(move || {
                    let mut seen = 0usize;
                    let mut mark = (0usize, None::<u64>);
                    let mut last = std::fs::metadata(&log).map_or(0, |m| m.len());
                    while !done.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(2));
                        let len = std::fs::metadata(&log).map_or(0, |m| m.len());
                        if len <= last {
                            continue;
                        }
                        std::thread::sleep(Duration::from_millis(rng.random_range(0..20)));
                        // Under the log's lock no game is half written: the games appended
                        // since `last` are counted by their first tag (the watcher may have
                        // slept through several under load), then the file is meddled with.
                        let Ok(mut file) = std::fs::OpenOptions::new()
                            .read(true)
                            .write(true)
                            .open(&log)
                        else {
                            continue;
                        };
                        file.lock().unwrap();
                        let bytes = std::fs::read(&log).unwrap_or_default();
                        let new = bytes[(last as usize).min(bytes.len())..]
                            .windows(GAME_START.len())
                            .filter(|w| *w == GAME_START)
                            .count();
                        seen += new;
                        last = bytes.len() as u64;
                        let what = plan.get(seen.wrapping_sub(1)).copied().unwrap_or("nothing");
                        if new > 0 && what != "nothing" {
                            last = meddle(&mut file, &log, what, &mut rng);
                            mark = (seen, Some(last));
                        }
                    }
                    mark
                })
            };
            let args = [
                "match",
                "--engine",
                "a=builtin:Hash=4",
                "--engine",
                "b=builtin:Hash=4",
                "--movetime",
                "10",
                "--games",
                "4",
                "--draw",
                "movenumber=12,score=100000,moves=1",
                "--seed",
                "7",
                "--json",
                "--pgn",
                "games.pgn",
            ];
            let ran = run_in(d, &args, Duration::from_secs(60), &[]);
            done.store(true, Ordering::Relaxed);
            let (before, mark) = watcher.join().unwrap();
            let told = said(&ran.stderr);
            assert!(!ran.stderr.contains("panicked"), "match panics: {told}");
            match ran.code {
                Some(0) => {}
                Some(1) => {
                    assert_one_line(ran.stderr.lines().last().unwrap_or(""));
                    return;
                }
                code => panic!("match ends with {code:?}: {told}"),
            }
            let report: serde_json::Value = serde_json::from_slice(&ran.stdout)
                .unwrap_or_else(|e| panic!("match --json prints no JSON ({e})"));
            let played = report["games"].as_u64().expect("the games played") as usize;
            let after = played.saturating_sub(before);
            if after == 0 && !log.exists() {
                return; // Deleted after the last game.
            }
            let text = std::fs::read(&log).unwrap_or_default();
            // What the match appended after the last meddling (after the file as it was before the
            // match, when none): a separator, then the games, the first one at the start of a
            // line after a blank line (not glued to what was there).
            let mark = mark.unwrap_or(initial) as usize;
            assert!(
                text.len() >= mark,
                "the log is shorter than after the last meddling ({plan:?})"
            );
            let tail = &text[mark..];
            if after == 0 {
                assert!(tail.is_empty(), "text after the last game ({plan:?})");
                return;
            }
            let first = mark + tail.iter().take_while(|&&b| b == b'\n').count();
            assert!(
                text[first..].starts_with(b"[Event \"polybook match\"]")
                    && (first == 0 || text[..first].ends_with(b"\n\n")),
                "a game glued to what was in the log before ({plan:?}; mark {mark}, {:?} | {:?}): {told}",
                String::from_utf8_lossy(&text[first.saturating_sub(40)..first]),
                String::from_utf8_lossy(&text[first..(first + 40).min(text.len())]),
            );
            let games_file = d.join("tail.pgn");
            std::fs::write(&games_file, &text[first..]).unwrap();
            let games = common::match_check(&games_file, None);
            assert!(
                games.len() == after,
                "{} games appended after the last meddling, not {after} ({plan:?})",
                games.len()
            );
            for g in &games {
                assert!(
                    g["event"] == "polybook match"
                        && g["white"] != g["black"]
                        && ["a", "b"].contains(&g["white"].as_str().unwrap_or(""))
                        && ["a", "b"].contains(&g["black"].as_str().unwrap_or(""))
                        && g["errors"].as_array().is_some_and(|e| e.is_empty())
                        && g["consistent"] == true
                        && g["termination"].as_str().is_some_and(|t| !t.is_empty())
                        && g["plycount"].as_u64()
                            == Some(g["moves"].as_array().unwrap().len() as u64),
                    "a game of the log is damaged ({plan:?}): {g}"
                );
            }
        },
    );
}
