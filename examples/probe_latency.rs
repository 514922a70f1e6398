//! Probe latency on a book read into memory: the key lookup alone (interpolation search) and a full probe
//! (lookup + legality of each entry), averaged over the positions of an EPD file.
//!
//! Usage: cargo run --release --example probe_latency -- BOOK EPD [ROUNDS]

use std::hint::black_box;
use std::time::Instant;

use polybook::book::{Book, Key};
use polybook::position::parse_fen;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: probe_latency BOOK EPD [ROUNDS]");
        std::process::exit(2);
    }
    let book = Book::open(&args[1])?;
    let rounds: usize = args.get(3).map(|r| r.parse()).transpose()?.unwrap_or(20);
    let positions: Vec<_> = std::fs::read_to_string(&args[2])?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_fen)
        .collect::<Result<_, _>>()?;
    let keys: Vec<Key> = positions.iter().map(Key::of).collect();

    let t = Instant::now();
    let mut found = 0usize;
    for _ in 0..rounds {
        for &key in &keys {
            found += black_box(book.lookup(black_box(key))).count();
        }
    }
    let lookup_ns = t.elapsed().as_nanos() as f64 / (rounds * keys.len()) as f64;

    let t = Instant::now();
    let mut legal = 0usize;
    for _ in 0..rounds {
        for pos in &positions {
            legal += black_box(book.probe(black_box(pos))).legal.len();
        }
    }
    let probe_ns = t.elapsed().as_nanos() as f64 / (rounds * positions.len()) as f64;

    println!(
        "book {} ({} entries), {} positions x {rounds} rounds",
        args[1],
        book.len(),
        keys.len()
    );
    println!("key lookup (search + entries read): {lookup_ns:.0} ns/probe ({found} entries found)");
    println!(
        "full probe (key + lookup + legality of each entry): {probe_ns:.0} ns/position ({legal} legal entries)"
    );
    Ok(())
}
