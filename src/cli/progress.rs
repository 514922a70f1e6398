//! The progress bars on standard error (indicatif), shown only on a terminal: the bytes of input
//! read ([`Bar::new`], for the commands that read games), the positions analysed
//! ([`Bar::analysis`], `analyse`) and the positions labelled ([`positions`], `datagen`).

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar shown only on a terminal (`None`: not shown): of the bytes of input read
/// (games/s, ETA), or of `analyse`'s positions.
pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// The bar of the bytes of `inputs` read, shown unless `quiet` or standard error is not a
    /// terminal.
    pub fn over_inputs(inputs: &[polybook::pgn::input::Input], quiet: bool) -> Bar {
        let total = inputs.iter().map(|i| i.size()).sum::<Option<u64>>();
        Bar::new(
            !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
            total,
        )
    }

    /// The bar of the bytes of input read (of `total`, if known), or none when `show` is false.
    pub fn new(show: bool, total: Option<u64>) -> Bar {
        if !show {
            return Bar(None);
        }
        let bar = match total {
            Some(t) => ProgressBar::new(t).with_style(
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg} ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {bytes} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        Bar(Some(bar))
    }

    /// The bar of `analyse` over the positions to analyse, those from the cache already counted,
    /// or none when `show` is false.
    pub fn analysis(show: bool) -> Bar {
        Bar(show.then(|| {
            ProgressBar::new(0).with_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} positions {per_sec} ETA {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            )
        }))
    }

    /// Does `f` to the bar if it is shown.
    fn with(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(b) = &self.0 {
            f(b);
        }
    }

    pub fn finish(&self) {
        self.with(ProgressBar::finish_and_clear);
    }
}

impl polybook::pgn::Progress for Bar {
    fn update(&self, bytes: u64, games: u64) {
        self.with(|b| {
            b.set_position(bytes);
            let secs = b.elapsed().as_secs_f64().max(1e-3);
            b.set_message(format!("{games} games, {:.0} games/s", games as f64 / secs));
        });
    }
}

impl polybook::analysis::Progress for Bar {
    fn start(&self, total: u64, cached: u64) {
        self.with(|b| {
            b.set_length(total);
            b.set_position(cached);
            b.reset_eta();
        });
    }
    fn advance(&self) {
        self.with(|b| b.inc(1));
    }
}

/// The bar of `datagen` over the `len` positions to label (hidden when `show` is false).
pub fn positions(show: bool, len: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    ProgressBar::new(len).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} positions {per_sec} ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    )
}
