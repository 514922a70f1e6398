//! `polybook perft`: count the legal move paths of a given length (move generator check).

use std::time::Instant;

use polybook::engine::perft::{divide, perft};
use shakmaty::CastlingMode;

use super::CliResult;
use super::position::PositionArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The number of plies (or --depth N, as `search` takes it).
    #[arg(
        value_name = "DEPTH",
        required_unless_present = "depth_flag",
        conflicts_with = "depth_flag"
    )]
    depth: Option<u32>,
    /// The number of plies (or DEPTH alone).
    #[arg(long = "depth", id = "depth_flag", value_name = "N")]
    depth_flag: Option<u32>,
    #[command(flatten)]
    position: PositionArgs,
    /// Print each root move (UCI) with the count below it.
    #[arg(long)]
    divide: bool,
    /// Chess960: --fen may name the castling rooks by their files (Shredder-FEN, `HFhf`) or as
    /// X-FEN, and --divide writes castling as king takes rook (`g1h1`). Without it, a FEN with
    /// castling rights that only Chess960 has is refused.
    #[arg(long)]
    chess960: bool,
    /// Print the time taken and the speed on stderr.
    #[arg(long)]
    time: bool,
}

pub fn run(args: Args) -> CliResult {
    // clap asks for exactly one of the two.
    let depth = args.depth.or(args.depth_flag).unwrap_or(0);
    let pos = args.position.position_for(args.chess960, "--chess960")?;
    let mode = CastlingMode::from_chess960(args.chess960);
    let start = Instant::now();
    let total = if args.divide && depth > 0 {
        let split = divide(&pos, depth);
        for (m, n) in &split {
            outln!("{}: {n}", m.to_uci(mode))?;
        }
        outln!()?;
        split.iter().map(|(_, n)| n).sum()
    } else {
        perft(&pos, depth)
    };
    let elapsed = start.elapsed();
    if args.time {
        let nps = total as f64 / elapsed.as_secs_f64().max(1e-9);
        eprintln!(
            "perft {depth}: {total} nodes in {:.3} s, {:.0} nodes/s",
            elapsed.as_secs_f64(),
            nps
        );
    }
    outln!("{total}")
}
