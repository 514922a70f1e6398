//! `polybook train`: the net fitted to positions labelled by `polybook datagen`.

use std::io::Write;
use std::path::PathBuf;

use polybook::atomic::AtomicFile;
use polybook::engine::nnue::KingBuckets;
use polybook::training::sets::{LabelledSet, SetError};
use polybook::training::trainer::{TrainOptions, train};

use super::progress::Bar;
use super::{CliError, CliResult};

/// Train the engine's neural network on positions labelled by `polybook datagen`.
///
/// Each --data gives a label file and the games it was made from: the games are read again, as
/// `datagen` read them, to rebuild the positions the file scores (its fingerprint must match).
/// The positions of every tenth game are held out to measure the validation loss. The net
/// (768 → 256×2 → 1 with eight output buckets, SCReLU; 768 inputs per king bucket with
/// --king-buckets) learns a blend of the search's
/// score and the game's result, by AdamW in shuffled batches, seeded: the same labels, games and
/// options give the same net, whatever the thread count. The engine plays with
/// src/engine/net.nnue.
#[derive(clap::Args)]
pub struct Args {
    /// A label file written by `polybook datagen` and the PGN files or folders it was made from,
    /// in the same order: `LABELS=GAMES[,GAMES…]` (repeatable; all the labels so far are used).
    #[arg(long, required = true, value_name = "LABELS=GAMES,…")]
    data: Vec<String>,
    /// Where to write the net.
    #[arg(short, long, value_name = "NET", default_value = "net.nnue")]
    output: PathBuf,
    /// Passes over the training positions.
    #[arg(long, default_value_t = 10, value_name = "N")]
    epochs: usize,
    /// Positions per step.
    #[arg(long, default_value_t = 16384, value_name = "N")]
    batch_size: usize,
    /// AdamW's step size at the start (it falls along a cosine to 5 % of it).
    #[arg(long, default_value_t = 0.001, value_name = "LR")]
    learning_rate: f32,
    /// The weight of the game's result in the target (the search's score has the rest).
    #[arg(long, default_value_t = 0.05, value_name = "W")]
    wdl: f32,
    /// The seed of the initial weights and the shuffles.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// King buckets: `none` (one set of inputs), `mirror` (one set, each side's board mirrored
    /// left–right when its king is on files e–h), `mirror4` (mirrored, four sets by the king's
    /// square: a1–b1, c1–d1, the second rank, further up).
    #[arg(long, default_value = "none", value_name = "LAYOUT",
          value_parser = clap::builder::PossibleValuesParser::new(["none", "mirror", "mirror4"]))]
    king_buckets: String,
    /// Threads (default: all cores); the net does not depend on it.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    if args.epochs == 0 || args.batch_size == 0 {
        return Err(CliError::usage(
            "--epochs and --batch-size must be at least 1",
        ));
    }
    if !(args.learning_rate > 0.0 && args.learning_rate.is_finite()) {
        return Err(CliError::usage("--learning-rate must be a positive number"));
    }
    if !(0.0..=1.0).contains(&args.wdl) {
        return Err(CliError::usage("--wdl must be between 0 and 1"));
    }
    let stopped = || CliError::interrupted("stopped; no net written");
    let output_error = |e: std::io::Error| {
        CliError::data(format!(
            "{}: cannot write: {}",
            polybook::text::quote_path(&args.output),
            polybook::text::reason(&e)
        ))
    };
    let set_error = |e: SetError| match e {
        SetError::Form(_) => CliError::usage(e),
        SetError::Stopped => stopped(),
        e => CliError::data(e),
    };
    let sets = args
        .data
        .iter()
        .map(|data| LabelledSet::open(data).map_err(set_error))
        .collect::<Result<Vec<_>, _>>()?;
    let mut file = AtomicFile::create(&args.output).map_err(output_error)?;
    let stop = super::interrupt::flag();
    let (mut train_set, mut validation) = (Vec::new(), Vec::new());
    for set in sets {
        let bar = Bar::new(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            set.size(),
        );
        let read = set.samples(&bar, &stop);
        bar.finish();
        let (t, v) = read.map_err(set_error)?;
        eprintln!(
            "{}: {} of {} positions labelled at {} nodes: {} to train on, {} held out",
            set.labels_name(),
            set.labels.len(),
            set.header.positions,
            set.header.nodes,
            t.len(),
            v.len()
        );
        train_set.extend(t);
        validation.extend(v);
    }
    if train_set.is_empty() || validation.is_empty() {
        let files: Vec<String> = args
            .data
            .iter()
            .map(|d| polybook::text::quote(d.split_once('=').map_or(d.as_str(), |d| d.0)))
            .collect();
        return Err(CliError::data(format!(
            "{}: too few labelled positions to train on: {} and {} held out (label more games with datagen)",
            files.join(", "),
            train_set.len(),
            validation.len()
        )));
    }
    let options = TrainOptions {
        epochs: args.epochs,
        batch_size: args.batch_size,
        learning_rate: args.learning_rate,
        final_learning_rate: args.learning_rate * 0.05,
        wdl: args.wdl,
        seed: args.seed,
        threads: args
            .threads
            .unwrap_or_else(polybook::engine::options::max_threads)
            .max(1),
        kings: KingBuckets::named(&args.king_buckets).expect("one of the possible values"),
    };
    let (net, report) = train(&train_set, &validation, &options, &stop, &mut |e| {
        eprintln!(
            "epoch {}: training loss {:.6}, validation loss {:.6}, {:.0} positions/s, {:.1} s",
            e.epoch, e.train_loss, e.validation_loss, e.positions_per_second, e.seconds
        )
    })
    .map_err(|_| stopped())?;
    file.write_all(&net.to_bytes()).map_err(output_error)?;
    file.commit(false).map_err(output_error)?;
    if args.json {
        return outln!(
            "{}",
            serde_json::to_string(&report).map_err(CliError::data)?
        );
    }
    outln!(
        "validation loss {:.6} (quantised net {:.6}); wrote {}",
        report.epochs.last().map_or(0.0, |e| e.validation_loss),
        report.validation_loss_quantised,
        args.output.display()
    )
}
