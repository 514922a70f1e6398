//! Writes random legal games as PGN, reproducibly from a seed: input for the build benchmarks that
//! need many distinct (position, move) pairs (random games leave the known openings at once).
//!
//! Usage: cargo run --release --example random_pgn -- GAMES [SEED] [MAX_PLIES] > random.pgn

use std::io::{BufWriter, Write};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Position};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| -> u64 {
        args.get(i)
            .map(|a| a.parse().expect("a number"))
            .unwrap_or(default)
    };
    let (games, seed, max_plies) = (arg(0, 1000), arg(1, 1), arg(2, 120) as usize);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for g in 0..games {
        let result = ["1-0", "0-1", "1/2-1/2"][rng.random_range(0..3)];
        writeln!(
            out,
            "[Event \"random {seed}\"]\n[Round \"{}\"]\n[Result \"{result}\"]\n",
            g + 1
        )?;
        let mut pos = Chess::default();
        let mut line = String::new();
        for ply in 0..max_plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.random_range(0..moves.len())];
            if ply % 2 == 0 {
                line.push_str(&format!("{}. ", ply / 2 + 1));
            }
            line.push_str(&SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
            line.push(' ');
        }
        writeln!(out, "{line}{result}\n")?;
    }
    out.flush()
}
