//! The UCI options: one table of their names, types, defaults, ranges and effects.
//!
//! `uci` lists the options from it, `setoption` finds the option by name in it, reads the value
//! as the option's type says and hands it to the row's setter, and the session's starting values
//! are its defaults: an option of the protocol or the book is one row here. The search's own
//! switches come from the engine's table ([`crate::engine::options::SWITCHES`]), which
//! `polybook search --set` reads too: a search switch is added there.

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;

use shakmaty::Color;

use super::Session;
use crate::book::{PLAIN_VARIETY, Selection};
use crate::engine::SearchOptions;
use crate::engine::options::SWITCHES;

/// An option's type, with its default and range, and what setting it does to the session (the
/// value already read and checked: a spin's clamped into its range with a word, a check's
/// `true` or `false`; a text or combo value as given).
pub(super) enum Kind {
    Check {
        default: bool,
        set: fn(&mut Session, bool),
    },
    Spin(Spin),
    Button(fn(&mut Session)),
    Text {
        default: &'static str,
        set: fn(&mut Session, &str),
    },
    Combo {
        default: &'static str,
        vars: &'static [&'static str],
        set: fn(&mut Session, &str),
    },
}

/// A `spin` option.
pub(super) struct Spin {
    pub default: i64,
    pub min: i64,
    pub max: i64,
    /// The value `uci` shows as the default: the search's value now (which the engine's
    /// defaults start), or with `None` the table's default.
    pub now: Option<fn(&SearchOptions) -> usize>,
    pub set: fn(&mut Session, i64),
}

impl Spin {
    /// The range of values accepted.
    pub(super) fn range(&self) -> (i64, i64) {
        (self.min, self.max)
    }
}

/// A spin option of a fixed range whose `uci` default is the table's.
const fn spin(
    name: &'static str,
    default: i64,
    min: i64,
    max: i64,
    set: fn(&mut Session, i64),
) -> UciOption {
    let kind = Kind::Spin(Spin {
        default,
        min,
        max,
        now: None,
        set,
    });
    UciOption { name, kind }
}

/// A check option.
const fn check(name: &'static str, default: bool, set: fn(&mut Session, bool)) -> UciOption {
    let kind = Kind::Check { default, set };
    UciOption { name, kind }
}

/// A text option whose default is empty (`<empty>`, as `uci` shows it).
const fn text(name: &'static str, set: fn(&mut Session, &str)) -> UciOption {
    let kind = Kind::Text {
        default: "<empty>",
        set,
    };
    UciOption { name, kind }
}

/// One UCI option.
pub(super) struct UciOption {
    pub name: &'static str,
    pub kind: Kind,
}

impl UciOption {
    /// Its `option` line for the `uci` command, with the search's options as they are now.
    fn line(&self, search: &SearchOptions) -> String {
        let name = self.name;
        match &self.kind {
            Kind::Check { default, .. } => {
                format!("option name {name} type check default {default}")
            }
            Kind::Spin(spin) => {
                let default = spin.now.map_or(spin.default, |now| now(search) as i64);
                let (min, max) = spin.range();
                format!("option name {name} type spin default {default} min {min} max {max}")
            }
            Kind::Button(_) => format!("option name {name} type button"),
            Kind::Text { default, .. } => {
                format!("option name {name} type string default {default}")
            }
            Kind::Combo { default, vars, .. } => {
                let mut line = format!("option name {name} type combo default {default}");
                for v in *vars {
                    line.push_str(" var ");
                    line.push_str(v);
                }
                line
            }
        }
    }

    /// Sets it to `value` in `session`: the value read as its type says (a word in an `info
    /// string` when it is not one, or out of range), then the row's setter. `name` is the name
    /// as `setoption` gave it, for those words.
    pub(super) fn apply(&self, session: &mut Session, name: &str, value: &str) {
        match &self.kind {
            Kind::Check { set, .. } => {
                if let Some(on) = session.check(name, value) {
                    set(session, on);
                }
            }
            Kind::Spin(spin) => {
                if let Some(v) = session.spin(name, value, spin.range()) {
                    (spin.set)(session, v);
                }
            }
            Kind::Button(press) => press(session),
            Kind::Text { set, .. } => set(session, value),
            // A combo takes one of the values it lists (in any case), as UCI says: a GUI shows
            // those, and a value it does not list is not a hidden synonym.
            Kind::Combo { vars, set, .. } => {
                match vars.iter().find(|v| v.eq_ignore_ascii_case(value.trim())) {
                    Some(var) => set(session, var),
                    None => session.info(&format!(
                        "option {name}: {} is not one of its values ({}); unchanged",
                        crate::text::quote(value),
                        vars.join(", ")
                    )),
                }
            }
        }
    }

    /// Is this option called `key` (lower case, without spaces, as [`key`] makes it)?
    fn is(&self, key: &str) -> bool {
        self::key(self.name) == key
    }

    /// A spin option's default.
    const fn spin_default(&self) -> i64 {
        match self.kind {
            Kind::Spin(Spin { default, .. }) => default,
            _ => 0,
        }
    }

    /// A check option's default.
    const fn check_default(&self) -> bool {
        match self.kind {
            Kind::Check { default, .. } => default,
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

/// An option's name as `setoption` matches it: case and spaces do not count (`clear hash`,
/// `ClearHash` and `Clear Hash` are one option).
pub(super) fn key(name: &str) -> String {
    name.to_ascii_lowercase().replace(' ', "")
}

/// The option of the table (listed or not) called `name`, whatever its case and spaces.
pub(super) fn find(name: &str) -> Option<&'static UciOption> {
    let key = key(name);
    OPTIONS.iter().chain(&UNLISTED).find(|o| o.is(&key))
}

pub(super) const MOVE_OVERHEAD: UciOption = spin("Move Overhead", 30, 0, 5000, |s, ms| {
    s.options.move_overhead = Duration::from_millis(ms as u64)
});
pub(super) const OWN_BOOK: UciOption = check("OwnBook", true, |s, on| s.options.own_book = on);
pub(super) const BOOK_SELECTION: UciOption = UciOption {
    name: "BookSelection",
    kind: Kind::Combo {
        default: "weighted",
        // The last three are the bots' words for the first three (lichess-bot's and BotLi's
        // `selection`), so that their settings can be passed on as they are.
        vars: &[
            "best",
            "weighted",
            "uniform",
            "learned",
            "score",
            "best_move",
            "weighted_random",
            "uniform_random",
        ],
        set: |s, value| match value.parse::<Selection>() {
            Ok(selection) => {
                s.options.selection = selection;
                s.note_unscored_books();
            }
            Err(e) => s.info(&format!("{e}; keeping {:?}", s.options.selection)),
        },
    },
};
pub(super) const BOOK_MIN_WEIGHT: UciOption = spin("BookMinWeight", 1, 0, 65535, |s, w| {
    s.options.min_weight = w as u16
});
/// With `BookSelection` score: the centipawns a book move may lose against the best-scored one
/// and still be played (0: the best).
pub(super) const BOOK_MAX_LOSS: UciOption = spin("BookMaxLoss", 0, 0, 1000, |s, cp| {
    s.options.max_loss = cp as u16
});
/// Chess960: `position fen` takes Shredder-FEN and X-FEN castling, and castling is written and
/// read as king-takes-rook (`e1h1`). Off, a FEN with castling rights that only Chess960 has is
/// refused.
pub(super) const UCI_CHESS960: UciOption =
    check("UCI_Chess960", false, |s, on| s.options.chess960 = on);
/// In full moves; 0 means no limit.
pub(super) const BOOK_DEPTH: UciOption = spin("BookDepth", 0, 0, 1000, |s, d| {
    s.options.book_depth = d as u32
});

/// Whether a book move may repeat a position of the game.
pub(super) const BOOK_ALLOW_REPETITIONS: UciOption =
    check("BookAllowRepetitions", false, |s, on| {
        s.options.allow_repetitions = on
    });
/// The number of heaviest moves that are candidates; 0 means all.
pub(super) const BOOK_WIDTH: UciOption =
    spin("BookWidth", 0, 0, 256, |s, n| s.options.width = n as usize);
/// In percent of the weight of the moves that count.
pub(super) const BOOK_MIN_SHARE: UciOption = spin("BookMinShare", 0, 0, 100, |s, pct| {
    s.options.min_share = pct as u8
});
/// In percent of the weight of the heaviest move that counts.
pub(super) const BOOK_MIN_PERCENT_OF_BEST: UciOption =
    spin("BookMinPercentOfBest", 0, 0, 100, |s, pct| {
        s.options.min_percent_of_best = pct as u8
    });
/// WinBoard's book variation: 0 the heaviest, 50 by weight, 100 uniform.
pub(super) const BOOK_VARIETY: UciOption =
    spin("BookVariety", PLAIN_VARIETY as i64, 0, 100, |s, v| {
        s.options.variety = v as u8
    });
/// The engine's own moves of a game that may come from the book; 0 means no limit.
pub(super) const BOOK_MAX_MOVES: UciOption = spin("BookMaxMoves", 0, 0, 1000, |s, n| {
    s.options.max_moves = n as u32
});
/// The book moves a line must go on for below a book move for it to be played; 0: no check.
pub(super) const BOOK_MIN_LINE_PLIES: UciOption = spin("BookMinLinePlies", 0, 0, 100, |s, n| {
    s.options.min_line_plies = n as u32
});

/// Every option but the search switches, in the order `uci` lists them.
const OPTIONS: [UciOption; 24] = [
    // The transposition table's size in MB (its default is the engine's). A size the machine
    // cannot give is cut down to what it can, with a word.
    UciOption {
        name: SearchOptions::HASH,
        kind: Kind::Spin(Spin {
            default: SearchOptions::DEFAULT_HASH_MB as i64,
            min: 1,
            max: SearchOptions::MAX_HASH_MB as i64,
            now: Some(|o| o.hash_mb),
            set: |s, mb| s.set_hash(mb as usize),
        }),
    },
    // The search threads (Lazy SMP), from 1 to 1024 whatever the machine (as Stockfish offers:
    // GUIs and testers set it from their own plan); more is cut down to that, with a word.
    UciOption {
        name: SearchOptions::THREADS,
        kind: Kind::Spin(Spin {
            default: 1,
            min: 1,
            max: SearchOptions::MAX_THREADS as i64,
            now: Some(|o| o.threads),
            set: |s, n| {
                s.search_options.threads = n as usize;
                s.search_options_changed();
            },
        }),
    },
    UciOption {
        name: "Clear Hash",
        kind: Kind::Button(|s| {
            if let Some(e) = s.engine.as_mut() {
                e.clear();
            }
        }),
    },
    MOVE_OVERHEAD,
    // `go ponder` says when to ponder: nothing to set.
    check("Ponder", false, |_, _| {}),
    UCI_CHESS960,
    OWN_BOOK,
    // One book, or several separated by `;` (tried in order; a path cannot contain `;`).
    text("BookFile", |s, value| s.set_book(value)),
    // The books of one colour; empty: `BookFile`'s.
    text("BookFileWhite", |s, value| {
        s.set_colour_book(Color::White, value)
    }),
    text("BookFileBlack", |s, value| {
        s.set_colour_book(Color::Black, value)
    }),
    BOOK_SELECTION,
    BOOK_MIN_WEIGHT,
    BOOK_MAX_LOSS,
    BOOK_DEPTH,
    BOOK_MAX_MOVES,
    BOOK_ALLOW_REPETITIONS,
    BOOK_WIDTH,
    BOOK_MIN_SHARE,
    BOOK_MIN_PERCENT_OF_BEST,
    BOOK_VARIETY,
    BOOK_MIN_LINE_PLIES,
    // A book profile (YAML, BotLi's `opening_books` or lichess-bot's `engine.polyglot`): the
    // books and settings by time control, speed, colour and opponent.
    text("BookProfile", |s, value| s.set_profile(value)),
    // `[title] [rating] computer|human NAME` (python-chess's `send_opponent_information`): the
    // opponent's kind, for the profile's `_human` and `_bot` sections.
    text("UCI_Opponent", |s, value| {
        s.options.opponent_human = match value.split_whitespace().nth(2) {
            Some("human") => Some(true),
            Some("computer") => Some(false),
            _ => None,
        }
    }),
    // 0: a new seed from the system; else the book's random picks repeat from this seed.
    spin("BookSeed", 0, 0, 2147483647, |s, seed| {
        s.rng = if seed == 0 {
            StdRng::from_os_rng()
        } else {
            StdRng::seed_from_u64(seed as u64)
        }
    }),
];

/// Options GUIs send whether or not they are offered, accepted without being listed.
const UNLISTED: [UciOption; 2] = [
    check("UCI_AnalyseMode", false, |_, _| {}),
    check("UCI_ShowWDL", false, |_, _| {}),
];

/// The `option` lines of the `uci` command: the table's options, then the search switches, each
/// shown with the value it has now in `search` (the engine's defaults until set).
pub(super) fn option_lines(search: &SearchOptions) -> Vec<String> {
    let mut lines: Vec<String> = OPTIONS.iter().map(|o| o.line(search)).collect();
    lines.extend(
        SWITCHES
            .iter()
            .map(|s| check(s.uci_name, (s.get)(search), |_, _| {}).line(search)),
    );
    // A tuning build's tunable numbers, with the value each has now.
    #[cfg(feature = "spsa")]
    lines.extend(crate::engine::parameters::TUNABLES.iter().map(|t| {
        format!(
            "option name {} type spin default {} min {} max {}",
            t.name,
            t.get(),
            t.min,
            t.max
        )
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
    /// `UCI_Chess960`: positions and moves are Chess960's.
    pub chess960: bool,
    /// `BookFileWhite` and `BookFileBlack` as set (empty: `BookFile`'s books).
    pub book_file_white: String,
    pub book_file_black: String,
    /// The engine's own moves of a game that may come from the book; 0 means no limit.
    pub max_moves: u32,
    pub allow_repetitions: bool,
    /// The heaviest moves that are candidates; 0 means all.
    pub width: usize,
    /// In percent.
    pub min_share: u8,
    /// In percent of the heaviest move's weight.
    pub min_percent_of_best: u8,
    pub variety: u8,
    /// 0: no check.
    pub min_line_plies: u32,
    /// `BookProfile` as set (empty: none).
    pub book_profile: String,
    /// From `UCI_Opponent`: against a person (`Some(true)`), a computer, or not said.
    pub opponent_human: Option<bool>,
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
            chess960: UCI_CHESS960.check_default(),
            book_file_white: String::new(),
            book_file_black: String::new(),
            max_moves: BOOK_MAX_MOVES.spin_default() as u32,
            allow_repetitions: BOOK_ALLOW_REPETITIONS.check_default(),
            width: BOOK_WIDTH.spin_default() as usize,
            min_share: BOOK_MIN_SHARE.spin_default() as u8,
            min_percent_of_best: BOOK_MIN_PERCENT_OF_BEST.spin_default() as u8,
            variety: BOOK_VARIETY.spin_default() as u8,
            min_line_plies: BOOK_MIN_LINE_PLIES.spin_default() as u32,
            book_profile: String::new(),
            opponent_human: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_book_selection_is_a_selection() {
        let Kind::Combo { default, vars, .. } = BOOK_SELECTION.kind else {
            panic!("BookSelection is a combo");
        };
        for var in vars {
            assert!(var.parse::<Selection>().is_ok(), "{var}");
        }
        assert_eq!(Options::default().selection, default.parse().unwrap());
    }

    #[test]
    fn every_option_is_found_by_its_name_alone() {
        let rows: Vec<&UciOption> = OPTIONS.iter().chain(&UNLISTED).collect();
        for o in &rows {
            for name in [o.name.to_string(), o.name.to_ascii_uppercase(), key(o.name)] {
                assert_eq!(find(&name).map(|f| f.name), Some(o.name), "{name}");
            }
        }
        // No two options, the search switches included, answer to one name.
        let mut keys: Vec<String> = rows.iter().map(|o| key(o.name)).collect();
        keys.extend(SWITCHES.iter().map(|s| key(s.uci_name)));
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n);
        assert!(find("NoSuchOption").is_none());
    }

    #[test]
    fn the_option_list_as_uci_shows_it() {
        let lines = option_lines(&SearchOptions::default());
        assert_eq!(
            lines[..4],
            [
                "option name Hash type spin default 64 min 1 max 33554432",
                "option name Threads type spin default 1 min 1 max 1024",
                "option name Clear Hash type button",
                "option name Move Overhead type spin default 30 min 0 max 5000",
            ]
        );
        assert!(lines.contains(&"option name BookFile type string default <empty>".to_string()));
        // Listed, so that clients (python-chess, lichess-bot) know Chess960 is played.
        assert!(lines.contains(&"option name UCI_Chess960 type check default false".to_string()));
        assert!(lines.contains(
            &"option name BookSelection type combo default weighted var best var weighted var uniform var learned var score var best_move var weighted_random var uniform_random"
                .to_string()
        ));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("option name UseNNUE type check default true")
        );
        assert_eq!(lines.len(), OPTIONS.len() + SWITCHES.len());
        // The defaults the session starts from are the table's.
        let o = Options::default();
        assert_eq!(o.move_overhead, Duration::from_millis(30));
        assert!(o.own_book);
        assert_eq!((o.min_weight, o.book_depth), (1, 0));
        assert!(!o.chess960);
        assert!(!o.allow_repetitions);
        assert_eq!((o.width, o.min_share, o.variety), (0, 0, 50));
        assert_eq!((o.max_moves, o.min_line_plies), (0, 0));
    }
}
