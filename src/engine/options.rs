//! What the search may do and when it stops: [`SearchOptions`] (the switches of each technique and
//! the hash size) and [`Limits`] (depth, time, nodes, a mate to find, the root moves allowed).
//!
//! The switches are listed once, in [`SWITCHES`]: each with its name for `polybook search --set`
//! (and [`SearchOptions::set`]), its UCI option name, and the field it sets. The UCI option list,
//! `setoption` and `--set` all read this table, so a new switch is added here and nowhere else.

use std::time::Duration;

use shakmaty::Move;
use thiserror::Error;

/// An unknown option name or value for [`SearchOptions::set`].
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OptionError {
    #[error("unknown search option {} (known: {known})", crate::text::quote(.0), known = SearchOptions::NAMES.join(", "))]
    Unknown(String),
    #[error("bad value {} for search option {name}: expected {expected}", crate::text::quote(.value))]
    BadValue {
        name: String,
        value: String,
        expected: &'static str,
    },
}

/// The switches of the search (each a UCI option too) and the hash size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Mate Distance Pruning.
    pub mdp: bool,
    /// Search one ply deeper when in check.
    pub check_extension: bool,
    /// Null-move pruning.
    pub null_move: bool,
    /// Reverse futility pruning, futility pruning and SEE pruning near the leaves.
    pub futility: bool,
    /// Aggressive futility pruning at frontier nodes of the root's side (experimental).
    pub aggressive_futility: bool,
    /// Late move reductions.
    pub lmr: bool,
    /// Late move pruning.
    pub lmp: bool,
    /// Singular extensions (step 8a of `negamax`): the table's move searched one ply deeper when
    /// no other move comes near it, and multi-cut when several reach beta.
    pub singular_extensions: bool,
    /// H.G. Muller's spite-check analogy (experimental): step 8 of `negamax` (the null move
    /// searched again after a check and its evasion) and the transposition-table "analogy" at
    /// the leaves (see `super::spite_check`).
    pub spite_check: bool,
    /// Mate tasks (`Limits::mate`, UCI `go mate N`) go to the dedicated mate search first
    /// ([`super::mate`]); off, the normal search only stops at the first mate short enough.
    pub mate_search: bool,
    /// The 3-man tablebase (KQvK, KRvK with distance to mate): exact scores for those positions
    /// in the tree, and at the root the table's move without a search.
    pub tablebase: bool,
    /// The neural network evaluation (`super::nnue`); off, the hand-crafted one (`super::eval`).
    pub nnue: bool,
    /// Transposition table size in MB.
    pub hash_mb: usize,
    /// Search threads (Lazy SMP): 1 searches alone; more add helper threads over the same
    /// table, up to [`SearchOptions::MAX_THREADS`] whatever the machine's cores.
    pub threads: usize,
}

/// The default thread counts' ceiling: the machine's cores as the defaults see them
/// ([`crate::cores::cores`]: `POLYBOOK_CORES`, or what the system reports), at least 1.
pub fn max_threads() -> usize {
    crate::cores::cores()
}

/// One on/off switch of the search.
pub struct Switch {
    /// Its name for `--set` and [`SearchOptions::set`] (matched case-insensitively).
    pub name: &'static str,
    /// Its UCI option name (a `check` option).
    pub uci_name: &'static str,
    /// Reads it.
    pub get: fn(&SearchOptions) -> bool,
    /// Sets it.
    pub put: fn(&mut SearchOptions, bool),
}

/// Every switch of the search, in the order the UCI option list shows them.
pub const SWITCHES: [Switch; 12] = [
    Switch {
        name: "MDP",
        uci_name: "MateDistancePruning",
        get: |o| o.mdp,
        put: |o, v| o.mdp = v,
    },
    Switch {
        name: "CheckExtension",
        uci_name: "CheckExtension",
        get: |o| o.check_extension,
        put: |o, v| o.check_extension = v,
    },
    Switch {
        name: "NullMove",
        uci_name: "NullMove",
        get: |o| o.null_move,
        put: |o, v| o.null_move = v,
    },
    Switch {
        name: "Futility",
        uci_name: "Futility",
        get: |o| o.futility,
        put: |o, v| o.futility = v,
    },
    Switch {
        name: "AggressiveFutility",
        uci_name: "AggressiveFutility",
        get: |o| o.aggressive_futility,
        put: |o, v| o.aggressive_futility = v,
    },
    Switch {
        name: "LMR",
        uci_name: "LMR",
        get: |o| o.lmr,
        put: |o, v| o.lmr = v,
    },
    Switch {
        name: "LMP",
        uci_name: "LMP",
        get: |o| o.lmp,
        put: |o, v| o.lmp = v,
    },
    Switch {
        name: "SingularExtensions",
        uci_name: "SingularExtensions",
        get: |o| o.singular_extensions,
        put: |o, v| o.singular_extensions = v,
    },
    Switch {
        name: "SpiteCheck",
        uci_name: "SpiteCheckAnalogy",
        get: |o| o.spite_check,
        put: |o, v| o.spite_check = v,
    },
    Switch {
        name: "MateSearch",
        uci_name: "MateSearch",
        get: |o| o.mate_search,
        put: |o, v| o.mate_search = v,
    },
    Switch {
        name: "Tablebase",
        uci_name: "Tablebase",
        get: |o| o.tablebase,
        put: |o, v| o.tablebase = v,
    },
    Switch {
        name: "NNUE",
        uci_name: "UseNNUE",
        get: |o| o.nnue,
        put: |o, v| o.nnue = v,
    },
];

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            mdp: true,
            check_extension: true,
            null_move: true,
            futility: true,
            aggressive_futility: false,
            lmr: true,
            lmp: true,
            singular_extensions: true,
            spite_check: false,
            mate_search: true,
            tablebase: true,
            // On since the net beat the hand-crafted evaluation in its SPRT (BENCHMARKS.md).
            nnue: true,
            hash_mb: SearchOptions::DEFAULT_HASH_MB,
            threads: 1,
        }
    }
}

impl SearchOptions {
    /// The hash size's option name (a UCI `spin` option too).
    pub const HASH: &'static str = "Hash";
    /// The transposition table's size in MB unless told otherwise.
    pub const DEFAULT_HASH_MB: usize = 64;
    /// The largest table [`SearchOptions::set`] accepts and UCI offers, in MB (32 TB, as other
    /// engines offer): what the machine can give is found out when the table is made (see
    /// `TranspositionTable::try_new`).
    pub const MAX_HASH_MB: usize = 33554432;
    /// The thread count's option name (a UCI `spin` option too).
    pub const THREADS: &'static str = "Threads";
    /// The most threads [`SearchOptions::set`] accepts and UCI offers (as Stockfish does):
    /// GUIs and testers set the count from their own plan, whatever this machine has.
    pub const MAX_THREADS: usize = 1024;

    /// The option names accepted by [`SearchOptions::set`] (case-insensitive): the switches',
    /// then the hash size's and the thread count's.
    pub const NAMES: [&'static str; SWITCHES.len() + 2] = {
        let mut names = [Self::HASH; SWITCHES.len() + 2];
        names[SWITCHES.len() + 1] = Self::THREADS;
        let mut i = 0;
        while i < SWITCHES.len() {
            names[i] = SWITCHES[i].name;
            i += 1;
        }
        names
    };

    /// Sets one option by name, as `--set Name=value` does.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), OptionError> {
        if name.eq_ignore_ascii_case(Self::HASH) {
            let size = "a size in MB from 1 to 33554432";
            self.hash_mb = number_in(name, value, 1..=Self::MAX_HASH_MB, size)?;
            return Ok(());
        }
        if name.eq_ignore_ascii_case(Self::THREADS) {
            let threads = "a number of threads from 1 to 1024";
            self.threads = number_in(name, value, 1..=Self::MAX_THREADS, threads)?;
            return Ok(());
        }
        let switch = SWITCHES
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| OptionError::Unknown(name.to_string()))?;
        let on = match value.to_ascii_lowercase().as_str() {
            "true" | "on" | "1" | "yes" => true,
            "false" | "off" | "0" | "no" => false,
            _ => return Err(OptionError::bad_value(name, value, "true or false")),
        };
        (switch.put)(self, on);
        Ok(())
    }
}

impl OptionError {
    /// `value` is not a value of option `name`, which takes `expected`.
    fn bad_value(name: &str, value: &str, expected: &'static str) -> OptionError {
        OptionError::BadValue {
            name: name.to_string(),
            value: value.to_string(),
            expected,
        }
    }
}

/// `value` read as a whole number in `range`, for option `name` (which takes `expected`).
fn number_in(
    name: &str,
    value: &str,
    range: std::ops::RangeInclusive<usize>,
    expected: &'static str,
) -> Result<usize, OptionError> {
    value
        .parse()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| OptionError::bad_value(name, value, expected))
}

/// When to stop searching, and which root moves to consider; no limit at all means "until
/// stopped" (or the maximum depth).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub depth: Option<u32>,
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
    /// A mate search (UCI `go mate N`): look for a mate in at most this many moves with the
    /// dedicated mate search first (see [`super::mate`]), and stop as soon as one is proven. When
    /// there is none, the normal search runs (to depth `2N + 8` unless a depth was given). With a
    /// `movetime` or `nodes` budget the mate search has half of it, and when it runs out the
    /// normal search has the rest, stopping at the first mate that short.
    pub mate: Option<u32>,
    /// Only these moves at the root (UCI `go searchmoves`); `None` for every legal move. Moves
    /// that are not legal in the position are ignored. With a restriction the root answers from
    /// the search alone: the tablebase's move and the dedicated mate search, which know nothing
    /// of it, are left out.
    pub root_moves: Option<Vec<Move>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_by_name() {
        let mut o = SearchOptions::default();
        o.set("mdp", "off").unwrap();
        assert!(!o.mdp);
        o.set("AggressiveFutility", "true").unwrap();
        assert!(o.aggressive_futility);
        o.set("Hash", "16").unwrap();
        assert_eq!(o.hash_mb, 16);
        o.set("threads", "2").unwrap();
        assert_eq!(o.threads, 2);
        assert!(matches!(
            o.set("Threads", "0"),
            Err(OptionError::BadValue { .. })
        ));
        assert_eq!(o.threads, 2);
        assert!(matches!(o.set("Nope", "1"), Err(OptionError::Unknown(_))));
        assert!(matches!(
            o.set("LMR", "maybe"),
            Err(OptionError::BadValue { .. })
        ));
    }

    #[test]
    fn every_switch_reads_and_sets_its_own_field() {
        assert_eq!(
            SearchOptions::NAMES.join(", "),
            "MDP, CheckExtension, NullMove, Futility, AggressiveFutility, LMR, LMP, \
             SingularExtensions, SpiteCheck, MateSearch, Tablebase, NNUE, Hash, Threads"
        );
        for (i, s) in SWITCHES.iter().enumerate() {
            let mut o = SearchOptions::default();
            let before = (s.get)(&o);
            o.set(s.name, if before { "false" } else { "true" })
                .unwrap();
            assert_eq!((s.get)(&o), !before, "{}", s.name);
            // No other switch moved.
            for (j, other) in SWITCHES.iter().enumerate() {
                if j != i {
                    assert_eq!((other.get)(&o), (other.get)(&SearchOptions::default()));
                }
            }
        }
    }
}
