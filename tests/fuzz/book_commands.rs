//! `book_commands`: mutated books and PGN given to the commands that read them and write books
//! or text.

use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use crate::{
    COMMAND_LIMIT, PGN_TOKENS, assert_one_line, book_seeds, fuzz, mutate, mutate_book, pgn_seeds,
    run_in, said, said_short, scored_seed,
};

/// [`mutate_book`], and now and then more of the damage books are found with: a run of entries
/// zeroed, an impossible move code (a square to itself, an unknown promotion), keys out of order.
fn mutate_book_more(rng: &mut StdRng, seeds: &[Vec<u8>]) -> Vec<u8> {
    if rng.random_ratio(1, 8) {
        return seeds[rng.random_range(0..seeds.len())].clone();
    }
    let mut b = mutate_book(rng, seeds);
    let n = b.len() / 16;
    if n >= 2 && rng.random_ratio(1, 3) {
        let i = rng.random_range(0..n);
        match rng.random_range(0..3) {
            0 => {
                let end = (i + rng.random_range(1..8)).min(n);
                b[i * 16..end * 16].fill(0);
            }
            1 => {
                let sq = rng.random_range(0..64u16);
                let code = if rng.random_bool(0.5) {
                    sq << 6 | sq
                } else {
                    rng.random_range(5..8u16) << 12 | rng.random::<u16>() & 0xfff
                };
                b[i * 16 + 8..i * 16 + 10].copy_from_slice(&code.to_be_bytes());
            }
            _ => {
                let j = rng.random_range(0..n);
                b[i * 16..i * 16 + 8].copy_from_slice(&rng.random::<u64>().to_be_bytes());
                b.swap(i * 16, j * 16);
            }
        }
    }
    b
}

/// A case of [`book_commands`]: the command's number, a choice of its options, and its two
/// input files (a book, and a PGN or a second book).
fn encode_case(command: u8, variant: u8, a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![command, variant];
    out.extend((a.len() as u32).to_le_bytes());
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out
}

fn decode_case(input: &[u8]) -> (u8, u8, &[u8], &[u8]) {
    let len = u32::from_le_bytes(input[2..6].try_into().unwrap()) as usize;
    (input[0], input[1], &input[6..6 + len], &input[6 + len..])
}

const BOOK_COMMANDS: &[&str] = &[
    "learn", "edit", "filter", "export", "sort", "merge", "verify", "dump",
];

/// Mutated real books (and the tiny scored one) and PGN given to the commands that read them and
/// write books or text: `learn`, `edit`, `filter`, `export`, `sort`, `merge`, `verify`, `dump`.
/// Each exits 0 or 1 (no panic, abort, signal or hang); on 0 a book written passes `verify` and
/// text written is UTF-8; on 1 it says one short line and leaves no output file (a book changed
/// in place is as it was) and no temporary file behind.
#[test]
fn book_commands() {
    let mut books = book_seeds();
    books.push(scored_seed().clone());
    books.push(scored_seed().clone());
    let pgns = pgn_seeds();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fuzz(
        "book_commands",
        500,
        Duration::from_secs(120),
        |rng| {
            let command = rng.random_range(0..BOOK_COMMANDS.len() as u8);
            let a = mutate_book_more(rng, &books);
            let b = match BOOK_COMMANDS[usize::from(command)] {
                "learn" if rng.random_ratio(1, 6) => pgns[rng.random_range(0..pgns.len())].clone(),
                "learn" => mutate(rng, &pgns, PGN_TOKENS, 32 << 10),
                "merge" => mutate_book_more(rng, &books),
                _ => Vec::new(),
            };
            encode_case(command, rng.random(), &a, &b)
        },
        |input| {
            let (command, variant, a, b) = decode_case(input);
            let command = BOOK_COMMANDS[usize::from(command)];
            for entry in std::fs::read_dir(d).unwrap() {
                std::fs::remove_file(entry.unwrap().path()).unwrap();
            }
            std::fs::write(d.join("a.bin"), a).unwrap();
            let second = if command == "learn" { "b.pgn" } else { "b.bin" };
            if !b.is_empty() || command == "learn" {
                std::fs::write(d.join(second), b).unwrap();
            }
            let pick = |options: &[&[&str]]| -> Vec<String> {
                options[usize::from(variant) % options.len()]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            };
            // The arguments; the book written (and whether over a.bin); the text file written.
            let in_place = variant & 0x80 != 0;
            // A command that writes a book: one of `options`, the `inputs`, then `-o out.bin`, or
            // nothing to write over a.bin.
            let writes_book = |options: &[&[&str]], inputs: &[&str]| {
                let mut args = pick(options);
                args.extend(inputs.iter().map(|s| s.to_string()));
                if in_place {
                    return (args, Some("a.bin"), None);
                }
                args.extend(["-o".into(), "out.bin".into()]);
                (args, Some("out.bin"), None)
            };
            let (mut args, book_out, text_out): (Vec<String>, Option<&str>, Option<&str>) =
                match command {
                    "learn" => writes_book(
                        &[
                            &[],
                            &["--color", "white"],
                            &["--player", "Carlsen"],
                            &["--json"],
                        ],
                        &["a.bin", "b.pgn"],
                    ),
                    "edit" => writes_book(
                        &[
                            &["--add", "e2e4=7"],
                            &["--set", "e2e4=10"],
                            &["--remove", "d2d4"],
                            &["--moves", "e4 e5", "--add", "g1f3=3"],
                            &["--moves", "e4", "--set", "c7c5=0", "--json"],
                            &[
                                "--fen",
                                "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
                                "--add",
                                "e2e4=1",
                            ],
                        ],
                        &["a.bin"],
                    ),
                    "filter" => {
                        let mut args = pick(&[
                            &["--max-ply", "6"],
                            &["--max-loss", "50"],
                            &["--max-loss", "0", "--learn", "prodeo"],
                            &["--min-share", "10", "--reachable"],
                            &["--only-white", "--min-weight", "2"],
                            &["--only-black", "--json"],
                        ]);
                        args.push("a.bin".into());
                        let out = if in_place { "a.bin" } else { "out.bin" };
                        args.extend(["-o".into(), out.into()]);
                        (args, Some(out), None)
                    }
                    "export" => {
                        let (mut args, to_file) = match variant % 5 {
                            0 => (pick(&[&["--pgn"]]), false),
                            1 => (vec!["--pgn".into(), "--max-ply".into(), "8".into()], true),
                            2 => (vec!["--epd".into(), "--ply".into(), "4".into()], true),
                            3 => (vec!["--epd".into(), "--ply".into(), "2".into()], false),
                            _ => (
                                ["--pgn", "--ply", "3", "--min-eval", "-50", "--json"]
                                    .map(String::from)
                                    .to_vec(),
                                true,
                            ),
                        };
                        args.push("a.bin".into());
                        if to_file {
                            args.extend(["-o".into(), "out.txt".into()]);
                        }
                        (args, None, to_file.then_some("out.txt"))
                    }
                    "sort" => (
                        ["a.bin", "-o", "out.bin"].map(String::from).to_vec(),
                        Some("out.bin"),
                        None,
                    ),
                    "merge" => {
                        let mut args: Vec<String> = ["a.bin", "b.bin", "-o", "out.bin"]
                            .map(String::from)
                            .to_vec();
                        if b.is_empty() {
                            args[1] = "a.bin".into();
                        }
                        (args, Some("out.bin"), None)
                    }
                    "verify" => (vec!["a.bin".into()], None, None),
                    _ => {
                        let mut args =
                            pick(&[&[], &["--json"], &["--csv"], &["--learn", "prodeo"]]);
                        args.push("a.bin".into());
                        (args, None, None)
                    }
                };
            args.insert(0, command.into());
            let ran = run_in(d, &args, COMMAND_LIMIT, &[]);
            let line = args.join(" ");
            let told = said(&ran.stderr);
            assert!(
                !ran.stderr.contains("panicked"),
                "polybook {command} panics: {told}"
            );
            // What is in the folder now, less the inputs.
            let mut left: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != "a.bin" && n != second)
                .collect();
            left.sort();
            match ran.code {
                Some(0) => {
                    assert!(
                        ran.stderr.lines().count() <= 20 && ran.stderr.len() <= 4000,
                        "polybook {line} succeeds, saying much: {told}"
                    );
                    if command != "dump" && command != "export" {
                        assert!(
                            ran.stdout.len() <= 1 << 20,
                            "polybook {line} prints {} bytes",
                            ran.stdout.len()
                        );
                    }
                    assert!(
                        std::str::from_utf8(&ran.stdout).is_ok(),
                        "polybook {line} prints what is not UTF-8"
                    );
                    if let Some(text) = text_out {
                        let written = std::fs::read(d.join(text));
                        assert!(
                            written
                                .as_deref()
                                .is_ok_and(|t| std::str::from_utf8(t).is_ok()),
                            "polybook {line} writes no UTF-8 {text}"
                        );
                    }
                    if let Some(book) = book_out {
                        let check = run_in(d, &["verify", book], COMMAND_LIMIT, &[]);
                        assert!(
                            check.code == Some(0),
                            "polybook {command} writes a book verify rejects: {}",
                            said_short(&check)
                        );
                    }
                    let expected: Vec<&str> = [book_out, text_out]
                        .into_iter()
                        .flatten()
                        .filter(|n| *n != "a.bin")
                        .collect();
                    assert!(
                        left.iter().all(|n| expected.contains(&n.as_str())),
                        "polybook {line} leaves {left:?} behind"
                    );
                }
                Some(1) => {
                    // One error line; before it, at most the warnings of a book read in spite
                    // of its order (and of a PGN's bad games: at most ten and a count).
                    let lines: Vec<&str> = ran.stderr.lines().collect();
                    let (error, warnings) = lines.split_last().unwrap_or((&"", &[]));
                    assert!(
                        error.starts_with("polybook: error: ")
                            && warnings.len() <= 12
                            && warnings
                                .iter()
                                .all(|w| w.starts_with("polybook: warning: ")),
                        "polybook {command} fails with {} lines: {told}",
                        lines.len()
                    );
                    for line in &lines {
                        assert_one_line(line);
                    }
                    assert!(
                        left.is_empty(),
                        "polybook {command} fails and leaves {left:?} behind"
                    );
                    assert!(
                        std::fs::read(d.join("a.bin")).unwrap() == a,
                        "polybook {command} fails and changes its book"
                    );
                }
                code => panic!("polybook {command} ends with {code:?}: {told}"),
            }
        },
    );
}
