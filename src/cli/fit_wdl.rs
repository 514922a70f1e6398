//! `polybook fit-wdl` (hidden): fits the WDL model of `export --draw-rate`
//! ([`polybook::inspect::wdl`]) by maximum likelihood to labelled games, by default the engine's
//! own games and scores shipped in `nets/`; its output is the constants of
//! `WdlModel::SELFPLAY`.

use polybook::inspect::wdl::{WdlModel, fit};
use polybook::training::sets::{LabelledSet, SetError};

use super::{CliError, CliResult};

/// The data sets of `WdlModel::SELFPLAY`: every label file of the self-play games in `nets/`.
const SELFPLAY_SETS: [&str; 4] = [
    "nets/selfplay-1.labels=nets/selfplay-1.pgn.xz",
    "nets/selfplay-1-1.labels=nets/selfplay-1.pgn.xz",
    "nets/selfplay-2.labels=nets/selfplay-2.pgn.xz",
    "nets/selfplay-2-1.labels=nets/selfplay-2.pgn.xz",
];

/// Fit the WDL model of `export --draw-rate` to labelled games (`LABELS=GAMES`, as `train` reads
/// them; default: the self-play sets of nets/, run from the repository's root) and print its
/// parameters, rounded to two decimals as `WdlModel::SELFPLAY` records them.
#[derive(clap::Args)]
pub struct Args {
    /// Labelled data sets, LABELS=GAMES[,GAMES…].
    #[arg(value_name = "LABELS=GAMES")]
    data: Vec<String>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> CliResult {
    let data: Vec<String> = if args.data.is_empty() {
        SELFPLAY_SETS.iter().map(|s| s.to_string()).collect()
    } else {
        args.data.clone()
    };
    let set_error = |e: SetError| match e {
        SetError::Form(_) => CliError::usage(e),
        SetError::Stopped => CliError::interrupted("stopped"),
        e => CliError::data(e),
    };
    let stop = super::interrupt::flag();
    let mut samples = Vec::new();
    for set in &data {
        let set = LabelledSet::open(set).map_err(set_error)?;
        let (train, validation) = set.samples(&(), &stop).map_err(set_error)?;
        samples.extend(
            train
                .iter()
                .chain(&validation)
                .map(|s| (i32::from(s.score), s.result)),
        );
    }
    let mut results = [0u64; 3];
    for &(_, r) in &samples {
        results[usize::from(r.min(2))] += 1;
    }
    let model = fit(samples.iter().copied());
    let round = |x: f64| (x * 100.0).round() / 100.0;
    let WdlModel { a, b } = model;
    if args.json {
        let json = serde_json::json!({
            "a": round(a),
            "b": round(b),
            "positions": samples.len(),
            "wins": results[2],
            "draws": results[1],
            "losses": results[0],
        });
        return outln!("{json}");
    }
    outln!(
        "a {:.2} b {:.2} ({} positions: {} won, {} drawn, {} lost by the side to move)",
        a,
        b,
        samples.len(),
        results[2],
        results[1],
        results[0]
    )
}
