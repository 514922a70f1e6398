//! `polybook tune`: the evaluation's weights fitted to real games by Texel's method.

use std::path::PathBuf;

use polybook::engine::eval::Params;
use polybook::pgn::input::expand;
use polybook::tune::{TuneOptions, create_output, read_positions, tune, write_params};

use super::{CliError, CliResult};

/// Fit the evaluation's weights to the results of GAMES (Texel's method): sample quiet positions
/// past the opening, fit the scale K, then the weights by gradient descent (Adam) from PeSTO's
/// start, and write a parameter file (the format of src/engine/params.txt, which the engine is
/// built with). Reports the loss before and after, on the training positions and on positions
/// from held-out games (every tenth game).
#[derive(clap::Args)]
pub struct Args {
    /// PGN files or folders (plain or compressed); `-` reads standard input.
    #[arg(required = true, value_name = "GAMES")]
    games: Vec<PathBuf>,
    /// Where to write the fitted weights.
    #[arg(short, long, value_name = "PARAMS.txt", default_value = "params.txt")]
    output: PathBuf,
    /// Positions to sample (training and held-out together).
    #[arg(long, default_value_t = 1_000_000, value_name = "N")]
    positions: usize,
    /// Passes of gradient descent.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    epochs: usize,
    /// Plies at the start of each game that are not sampled.
    #[arg(long, default_value_t = 16, value_name = "N")]
    skip_plies: usize,
    /// Adam's step size, in centipawns.
    #[arg(long, default_value_t = 1.0, value_name = "CP")]
    learning_rate: f64,
    /// Pull towards the start: λ × (weight − start)² per weight is added to the loss, so that
    /// weights the games barely determine stay near PeSTO's (0: none).
    #[arg(long, default_value_t = 0.0, value_name = "LAMBDA")]
    regularization: f64,
    /// The seed of the sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads for the quiescence filter and the gradient (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Print the training loss every N epochs (on standard error; 0: never).
    #[arg(long, default_value_t = 100, value_name = "N")]
    report_every: usize,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    if args.positions < 10 {
        return Err(CliError::usage("--positions must be at least 10"));
    }
    if !(args.regularization >= 0.0 && args.regularization.is_finite()) {
        return Err(CliError::usage(
            "--regularization must be zero or a positive number",
        ));
    }
    if !(args.learning_rate > 0.0 && args.learning_rate.is_finite()) {
        return Err(CliError::usage("--learning-rate must be a positive number"));
    }
    let mut options = TuneOptions {
        positions: args.positions,
        epochs: args.epochs,
        skip_plies: args.skip_plies,
        learning_rate: args.learning_rate,
        regularization: args.regularization,
        seed: args.seed,
        ..TuneOptions::default()
    };
    if let Some(t) = args.threads {
        options.threads = t.max(1);
    }
    let inputs = expand(&args.games).map_err(CliError::data)?;
    let file = create_output(&args.output).map_err(CliError::data)?;
    let start = Params::start();
    // Reading the games takes a while on big files: a bar, as `build` shows, on a terminal.
    let total: Option<u64> = inputs.iter().map(|i| i.size()).sum();
    let bar =
        super::progress::Bar::new(std::io::IsTerminal::is_terminal(&std::io::stderr()), total);
    let read = read_positions(&inputs, &options, &start, &bar);
    bar.finish();
    let (train, held_out, read) = read.map_err(CliError::data)?;
    eprintln!(
        "{} games read, {} used, {} candidate positions, {} sampled, {} quiet: {} to train, {} held out",
        read.games,
        read.games_used,
        read.candidates,
        read.sampled,
        read.train + read.held_out,
        read.train,
        read.held_out
    );
    let (params, report) = tune(
        &train,
        &held_out,
        read,
        &start,
        &options,
        args.report_every,
        &mut |epoch, loss| eprintln!("epoch {epoch}: training loss {loss:.6}"),
    );
    let header = format!(
        "Written by polybook tune: {} training positions, {} held out, K = {:.4}, {} epochs.\n\
         Loss (training): {:.6} -> {:.6}; loss (held out): {:.6} -> {:.6}.",
        report.read.train,
        report.read.held_out,
        report.k,
        report.epochs,
        report.train_before,
        report.train_after,
        report.held_out_before,
        report.held_out_after
    );
    write_params(file, &args.output, &params, &header).map_err(CliError::data)?;
    if args.json {
        return outln!(
            "{}",
            serde_json::to_string(&report).map_err(CliError::data)?
        );
    }
    outln!("K = {:.4}", report.k)?;
    outln!(
        "loss (training, {} positions): {:.6} -> {:.6}",
        report.read.train,
        report.train_before,
        report.train_after
    )?;
    outln!(
        "loss (held out, {} positions): {:.6} -> {:.6}",
        report.read.held_out,
        report.held_out_before,
        report.held_out_after
    )?;
    outln!("wrote {}", args.output.display())
}
