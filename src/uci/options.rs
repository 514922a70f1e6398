//! The UCI options: one table of their names, types, defaults and ranges.
//!
//! `uci` lists the options from it, `setoption` takes the ranges from it, and the session's
//! starting values are its defaults. The search's own options come from the engine's table
//! ([`crate::engine::options::SWITCHES`] and the hash size), which `polybook search --set` reads
//! too: a search switch is added there, an option of the protocol or the book here.

use std::time::Duration;

use crate::book::Selection;
use crate::engine::SearchOptions;
use crate::engine::options::{SWITCHES, max_threads};

/// An option's type, with its default and range.
pub(super) enum Kind {
    Check(bool),
    Spin {
        default: i64,
        min: i64,
        max: i64,
    },
    Button,
    Text(&'static str),
    Combo {
        default: &'static str,
        vars: &'static [&'static str],
    },
}

/// One UCI option.
pub(super) struct UciOption {
    pub name: &'static str,
    pub kind: Kind,
}

impl UciOption {
    /// Its `option` line for the `uci` command.
    fn line(&self) -> String {
        let name = self.name;
        match &self.kind {
            Kind::Check(default) => format!("option name {name} type check default {default}"),
            Kind::Spin { default, min, max } => {
                format!("option name {name} type spin default {default} min {min} max {max}")
            }
            Kind::Button => format!("option name {name} type button"),
            Kind::Text(default) => format!("option name {name} type string default {default}"),
            Kind::Combo { default, vars } => {
                let mut line = format!("option name {name} type combo default {default}");
                for v in *vars {
                    line.push_str(" var ");
                    line.push_str(v);
                }
                line
            }
        }
    }

    /// A spin option's range.
    pub(super) const fn range(&self) -> (i64, i64) {
        match self.kind {
            Kind::Spin { min, max, .. } => (min, max),
            _ => (0, 0),
        }
    }

    /// A spin option's default.
    const fn spin_default(&self) -> i64 {
        match self.kind {
            Kind::Spin { default, .. } => default,
            _ => 0,
        }
    }

    /// A check option's default.
    const fn check_default(&self) -> bool {
        match self.kind {
            Kind::Check(default) => default,
            _ => false,
        }
    }

    /// A combo option's default.
    const fn combo_default(&self) -> &'static str {
        match self.kind {
            Kind::Combo { default, .. } => default,
            _ => "",
        }
    }
}

/// The transposition table's size in MB (its default is the engine's). The largest offered is
/// smaller than what `--set Hash` accepts: the machines this runs on are shared.
pub(super) const HASH: UciOption = UciOption {
    name: SearchOptions::HASH,
    kind: Kind::Spin {
        default: SearchOptions::DEFAULT_HASH_MB as i64,
        min: 1,
        max: 1024,
    },
};
/// The search threads (Lazy SMP), from 1 to the machine's cores: the range is the machine's, so
/// the `uci` list and `setoption` take it from [`threads_range`].
pub(super) const THREADS: UciOption = UciOption {
    name: SearchOptions::THREADS,
    kind: Kind::Spin {
        default: 1,
        min: 1,
        max: 1,
    },
};

/// The range of `Threads` on this machine: 1 to its cores.
pub(super) fn threads_range() -> (i64, i64) {
    (1, max_threads() as i64)
}
pub(super) const MOVE_OVERHEAD: UciOption = UciOption {
    name: "Move Overhead",
    kind: Kind::Spin {
        default: 30,
        min: 0,
        max: 5000,
    },
};
pub(super) const OWN_BOOK: UciOption = UciOption {
    name: "OwnBook",
    kind: Kind::Check(true),
};
pub(super) const BOOK_SELECTION: UciOption = UciOption {
    name: "BookSelection",
    kind: Kind::Combo {
        default: "weighted",
        vars: &["best", "weighted", "uniform", "learned", "score"],
    },
};
pub(super) const BOOK_MIN_WEIGHT: UciOption = UciOption {
    name: "BookMinWeight",
    kind: Kind::Spin {
        default: 1,
        min: 0,
        max: 65535,
    },
};
/// With `BookSelection` score: the centipawns a book move may lose against the best-scored one
/// and still be played (0: the best).
pub(super) const BOOK_MAX_LOSS: UciOption = UciOption {
    name: "BookMaxLoss",
    kind: Kind::Spin {
        default: 0,
        min: 0,
        max: 1000,
    },
};
pub(super) const BOOK_DEPTH: UciOption = UciOption {
    name: "BookDepth",
    kind: Kind::Spin {
        default: 0,
        min: 0,
        max: 1000,
    },
};
pub(super) const BOOK_SEED: UciOption = UciOption {
    name: "BookSeed",
    kind: Kind::Spin {
        default: 0,
        min: 0,
        max: 2147483647,
    },
};

/// Every option but the search switches, in the order `uci` lists them.
const OPTIONS: [UciOption; 12] = [
    HASH,
    THREADS,
    UciOption {
        name: "Clear Hash",
        kind: Kind::Button,
    },
    MOVE_OVERHEAD,
    UciOption {
        name: "Ponder",
        kind: Kind::Check(false),
    },
    OWN_BOOK,
    // One book, or several separated by `;` (tried in order; a path cannot contain `;`).
    UciOption {
        name: "BookFile",
        kind: Kind::Text("<empty>"),
    },
    BOOK_SELECTION,
    BOOK_MIN_WEIGHT,
    BOOK_MAX_LOSS,
    BOOK_DEPTH,
    BOOK_SEED,
];

/// The `option` lines of the `uci` command: the table's options, then the search switches, each
/// shown with the value it has now in `search` (the engine's defaults until set).
pub(super) fn option_lines(search: &SearchOptions) -> Vec<String> {
    let mut lines: Vec<String> = OPTIONS
        .iter()
        .map(|o| match o.name {
            SearchOptions::HASH => UciOption {
                name: o.name,
                kind: Kind::Spin {
                    default: search.hash_mb as i64,
                    min: o.range().0,
                    max: o.range().1,
                },
            }
            .line(),
            SearchOptions::THREADS => UciOption {
                name: o.name,
                kind: Kind::Spin {
                    default: search.threads as i64,
                    min: threads_range().0,
                    max: threads_range().1,
                },
            }
            .line(),
            _ => o.line(),
        })
        .collect();
    lines.extend(SWITCHES.iter().map(|s| {
        UciOption {
            name: s.uci_name,
            kind: Kind::Check((s.get)(search)),
        }
        .line()
    }));
    lines
}

/// The values of the options that are not the search's, as set by `setoption`.
#[derive(Clone, Debug)]
pub(super) struct Options {
    pub move_overhead: Duration,
    pub own_book: bool,
    pub book_file: String,
    pub selection: Selection,
    pub min_weight: u16,
    pub max_loss: u16,
    /// In full moves; 0 means no limit.
    pub book_depth: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            move_overhead: Duration::from_millis(MOVE_OVERHEAD.spin_default() as u64),
            own_book: OWN_BOOK.check_default(),
            book_file: String::new(),
            selection: BOOK_SELECTION
                .combo_default()
                .parse()
                .unwrap_or(Selection::Weighted),
            min_weight: BOOK_MIN_WEIGHT.spin_default() as u16,
            max_loss: BOOK_MAX_LOSS.spin_default() as u16,
            book_depth: BOOK_DEPTH.spin_default() as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_book_selection_is_a_selection() {
        let Kind::Combo { default, vars } = BOOK_SELECTION.kind else {
            panic!("BookSelection is a combo");
        };
        for var in vars {
            assert!(var.parse::<Selection>().is_ok(), "{var}");
        }
        assert_eq!(Options::default().selection, default.parse().unwrap());
    }

    #[test]
    fn the_option_list_as_uci_shows_it() {
        let lines = option_lines(&SearchOptions::default());
        assert_eq!(
            lines[..4],
            [
                "option name Hash type spin default 64 min 1 max 1024",
                &format!(
                    "option name Threads type spin default 1 min 1 max {}",
                    max_threads()
                ),
                "option name Clear Hash type button",
                "option name Move Overhead type spin default 30 min 0 max 5000",
            ]
        );
        assert!(lines.contains(&"option name BookFile type string default <empty>".to_string()));
        assert!(lines.contains(
            &"option name BookSelection type combo default weighted var best var weighted var uniform var learned var score"
                .to_string()
        ));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("option name Tablebase type check default true")
        );
        assert_eq!(lines.len(), OPTIONS.len() + SWITCHES.len());
        // The defaults the session starts from are the table's.
        let o = Options::default();
        assert_eq!(o.move_overhead, Duration::from_millis(30));
        assert!(o.own_book);
        assert_eq!((o.min_weight, o.book_depth), (1, 0));
    }
}
