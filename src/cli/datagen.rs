//! `polybook datagen`: positions of real games labelled by the engine's own search, for `train`.

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use polybook::pgn::input::expand;
use polybook::training::data::{
    BLOCK, LabelFile, LabelHeader, PositionFilter, enumerate, label_all, label_file_size,
    label_options, read_labels, write_labels,
};

use super::build::Bar;
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
    /// nets/master.labels and nets/selfplay-*.labels were made so: resume them with it).
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
    let fen = match read_labels(&args.output) {
        Ok(old) => old.header.selection.fen,
        Err(_) => true,
    };
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
        polybook::training::data::DataError::Stopped => CliError {
            code: 130,
            message: "stopped while reading the games; nothing written".into(),
        },
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
    let write_error = |e: std::io::Error| {
        CliError::data(format!(
            "{name}: cannot write: {}",
            polybook::text::reason(&e)
        ))
    };
    let mut done = 0usize;
    // A file of the first format is written again in the current one (its labels, unchecked,
    // kept); one with a damaged block is labelled again from that block.
    let mut rewrite: Option<Vec<i16>> = None;
    if args.output.exists() {
        let LabelFile {
            header: old,
            labels,
            damaged_block,
            unchecked,
        } = read_labels(&args.output).map_err(CliError::data)?;
        if let Some(why) = old.mismatch(&header) {
            return Err(CliError::data(format!(
                "{name}: {why}; give another --output to label these games"
            )));
        }
        if old.nodes != header.nodes {
            return Err(CliError::data(format!(
                "{name}: labelled at --nodes {}, not {}",
                old.nodes, header.nodes
            )));
        }
        done = if labels.len() == positions.len() {
            labels.len()
        } else {
            labels.len() / BLOCK * BLOCK
        };
        if let Some(block) = damaged_block {
            eprintln!(
                "polybook: warning: {name}: block {block} (positions {} to {}) is damaged (wrong checksum): labelled again from there",
                block * BLOCK,
                ((block + 1) * BLOCK).min(positions.len()) - 1
            );
        }
        if unchecked {
            eprintln!(
                "{name}: a label file of the first format (no checksums): written again in the current one"
            );
            rewrite = Some(labels[..done].to_vec());
        }
    }
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&args.output)
        .map_err(write_error)?;
    if let Some(labels) = &rewrite {
        // The new layout is written over the old one, longer by its checksums: a kill half-way
        // leaves a file whose later blocks fail their checksums, labelled again on resume.
        file.seek(SeekFrom::Start(LabelHeader::SIZE as u64))
            .map_err(write_error)?;
        for (index, block) in labels.chunks(BLOCK).enumerate() {
            write_labels(&mut file, index, block).map_err(write_error)?;
        }
    }
    file.set_len(label_file_size(done)).map_err(write_error)?;
    file.seek(SeekFrom::Start(0)).map_err(write_error)?;
    file.write_all(&header.to_bytes()).map_err(write_error)?;
    file.seek(SeekFrom::End(0)).map_err(write_error)?;

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
    let progress = if terminal {
        ProgressBar::new(target as u64).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} positions {per_sec} ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        )
    } else {
        ProgressBar::hidden()
    };
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
            write_labels(&mut file, index, labels)?;
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
    result.map_err(write_error)?;
    file.sync_all().map_err(write_error)?;
    let seconds = started.elapsed().as_secs_f64();
    if stop.load(std::sync::atomic::Ordering::Relaxed) && written < target {
        return Err(CliError {
            code: 130,
            message: format!(
                "stopped: {written} of {target} positions labelled in {name}; the same command goes on from there"
            ),
        });
    }
    if !args.quiet {
        eprintln!(
            "{name}: {written} positions labelled ({:.0} a second)",
            (written - done) as f64 / seconds.max(1e-9)
        );
    }
    Ok(())
}
