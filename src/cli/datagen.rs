//! `polybook datagen`: positions of real games labelled by the engine's own search, for `train`.

use std::path::PathBuf;
use std::time::Instant;

use polybook::pgn::input::expand;
use polybook::training::data::{
    BLOCK, LabelHeader, PositionFilter, enumerate, label_all, label_options,
};
use polybook::training::labels::LabelWriter;

use super::progress::Bar;
use super::{CliError, CliResult};

/// Label positions of GAMES with the engine's own search, for `polybook train`.
///
/// The quiet positions of finished standard games past the first plies, each position once,
/// one in --every (chosen by its key), are searched to --nodes nodes each; the label file keeps
/// two bytes per position (the score for the side to move) and, with the same games, rebuilds
/// the data set. Positions are labelled in blocks of 1,024: Ctrl-C, SIGTERM or a kill loses at
/// most the blocks in progress, and running the same command again goes on from there.
#[derive(clap::Args)]
pub struct Args {
    /// PGN files or folders (plain or compressed), read in the order given.
    #[arg(required = true, value_name = "GAMES")]
    games: Vec<PathBuf>,
    /// The label file: made, or resumed if it holds labels of the same positions.
    #[arg(short, long, value_name = "LABELS")]
    output: PathBuf,
    /// Nodes per search.
    #[arg(long, default_value_t = 5000, value_name = "N")]
    nodes: u32,
    /// Keep one candidate position in N.
    #[arg(long, default_value_t = 4, value_name = "N")]
    every: u32,
    /// Which of the --every parts of the candidates to keep, from 0: `--every 2 --part 1` labels
    /// the positions that `--every 2` leaves out.
    #[arg(long, default_value_t = 0, value_name = "K")]
    part: u32,
    /// Plies at the start of each game that are not candidates.
    #[arg(long, default_value_t = 8, value_name = "N")]
    skip_plies: u32,
    /// Stop once this many positions are labelled (whole blocks; default: all).
    #[arg(long, value_name = "N")]
    positions: Option<u64>,
    /// Label with searches on the hand-crafted evaluation instead of the net (the labels of
    /// nets/selfplay-1.labels and nets/selfplay-2.labels were made so: resume them with it).
    #[arg(long)]
    no_nnue: bool,
    /// Search threads, one position each (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: Args) -> CliResult {
    if args.nodes == 0 || args.every == 0 {
        return Err(CliError::usage("--nodes and --every must be at least 1"));
    }
    if args.part >= args.every {
        return Err(CliError::usage(format!(
            "--part {} with --every {}: the parts are 0 to {}",
            args.part,
            args.every,
            args.every - 1
        )));
    }
    // Games with a FEN tag are read from it, unless the file being resumed left them out.
    let fen = LabelWriter::reads_fen(&args.output);
    let selection = PositionFilter {
        skip_plies: args.skip_plies,
        every: args.every,
        part: args.part,
        fen,
    };
    let inputs = expand(&args.games).map_err(CliError::data)?;
    let stop = super::interrupt::flag();
    let terminal = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total: Option<u64> = inputs.iter().map(|i| i.size()).sum();
    let bar = Bar::new(terminal, total);
    let read = enumerate(&inputs, selection, &bar, &stop);
    bar.finish();
    let (positions, fingerprint, report) = read.map_err(|e| match e {
        polybook::training::data::DataError::Stopped => {
            CliError::interrupted("stopped while reading the games; nothing written")
        }
        e => CliError::data(e),
    })?;
    if positions.is_empty() {
        return Err(CliError::data(
            polybook::training::data::DataError::NoPositions,
        ));
    }
    let header = LabelHeader {
        nodes: args.nodes,
        selection,
        positions: positions.len() as u64,
        fingerprint,
    };

    // Made, or resumed from its last whole block.
    let name = args.output.display().to_string();
    let prepared = LabelWriter::prepare(&args.output, header).map_err(CliError::data)?;
    if let Some(block) = prepared.damaged_block {
        eprintln!(
            "polybook: warning: {name}: block {block} (positions {} to {}) is damaged (wrong checksum): labelled again from there",
            block * BLOCK,
            ((block + 1) * BLOCK).min(positions.len()) - 1
        );
    }
    if prepared.unchecked() {
        eprintln!(
            "{name}: a label file of the first format (no checksums): written again in the current one"
        );
    }
    let mut out = prepared.open().map_err(CliError::data)?;
    let done = out.done();

    let target = args
        .positions
        .map_or(positions.len(), |n| (n as usize).min(positions.len()));
    eprintln!(
        "{} games read, {} used: {} candidate positions, {} kept; {} labelled, {} to label at {} nodes",
        report.games,
        report.games_used,
        report.candidates,
        positions.len(),
        done,
        target.saturating_sub(done),
        args.nodes
    );
    if done >= target {
        return Ok(());
    }
    let progress = super::progress::positions(terminal, target as u64);
    progress.set_position(done as u64);
    let threads = args
        .threads
        .unwrap_or_else(polybook::engine::options::max_threads)
        .max(1);
    let started = Instant::now();
    let mut written = done;
    let mut last_line = Instant::now();
    let result = label_all(
        &positions[..target],
        done,
        u64::from(args.nodes),
        threads,
        &label_options(!args.no_nnue),
        &stop,
        &mut |index, labels| {
            out.write(index, labels)?;
            written += labels.len();
            progress.set_position(written as u64);
            if !terminal && !args.quiet && last_line.elapsed().as_secs() >= 60 {
                last_line = Instant::now();
                eprintln!("{written} of {target} positions labelled");
            }
            Ok(())
        },
    );
    progress.finish_and_clear();
    result.map_err(|e| CliError::data(out.write_error(e)))?;
    out.sync().map_err(CliError::data)?;
    let seconds = started.elapsed().as_secs_f64();
    if stop.load(std::sync::atomic::Ordering::Relaxed) && written < target {
        return Err(CliError::interrupted(format!(
            "stopped: {written} of {target} positions labelled in {name}; the same command goes on from there"
        )));
    }
    if !args.quiet {
        eprintln!(
            "{name}: {written} positions labelled ({:.0} a second)",
            (written - done) as f64 / seconds.max(1e-9)
        );
    }
    Ok(())
}
