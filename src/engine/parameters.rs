//! The search's tuned numbers in one place: every margin, depth limit and reduction of the tree
//! search ([`super::negamax`]), of its correction history ([`super::correction`]) and of its
//! aspiration windows ([`super::search`]), and the clock's shares ([`super::time`]), each with what
//! it does and the step of `negamax` that reads it.
//!
//! Margins are on the centipawn scale of [`crate::score_scale`]; depths and reductions are in
//! plies. Changing one changes the search, and so `polybook bench`'s node signature: each value
//! here is the one the search was measured with (BENCHMARKS.md's SPRT rows, where a change had
//! one). Where an SPRT measured a value or a step, its row of the full table
//! (docs/benchmarks-log.md, "Every SPRT (the full table)") is named.
//!
//! The whole numbers that games can tune are [`Tunable`]s, read with `.get()`, each with the
//! range a tuner may move it in; [`TUNABLES`] lists them. In a normal build each is a constant.
//! Built with the `spsa` feature (`cargo build --release --features spsa`), each is a UCI `spin`
//! option of its name that `setoption` changes, so that `bench/spsa.py` can play games between
//! two sets of values, as OpenBench's SPSA does; such a build is for tuning only.
//!
//! A tunable whose default is 0, the bottom of its range, is a step the search does not take yet
//! ([`IIR_MIN_DEPTH`], [`TT_EVAL`], [`RFP_BLEND`], [`RAZOR_MARGIN`], [`SE_DOUBLE_MARGIN`],
//! [`SE_NEGATIVE_EXTENSION`], [`LMR_TT_CAPTURE`], [`LMR_DEEPER_MARGIN`], [`FAIL_HIGH_BLEND`]): the
//! tuning build can switch it on for an SPRT (`--option 1:IIR_MIN_DEPTH=5`) against the same binary
//! without it; `bench/spsa.py` leaves such steps alone unless `--params` names them.

/// One of the search's whole numbers that games can tune (see the module's overview).
pub struct Tunable {
    /// Its name: the constant's, and the UCI option's in an `spsa` build.
    pub name: &'static str,
    /// The value the search uses (in an `spsa` build, until `setoption` changes it).
    pub default: i32,
    /// The range a tuner may move it in.
    pub min: i32,
    pub max: i32,
    #[cfg(feature = "spsa")]
    value: std::sync::atomic::AtomicI32,
}

impl Tunable {
    const fn new(name: &'static str, default: i32, min: i32, max: i32) -> Tunable {
        Tunable {
            name,
            default,
            min,
            max,
            #[cfg(feature = "spsa")]
            value: std::sync::atomic::AtomicI32::new(default),
        }
    }

    /// The value the search uses now.
    #[inline(always)]
    pub fn get(&self) -> i32 {
        #[cfg(feature = "spsa")]
        {
            self.value.load(std::sync::atomic::Ordering::Relaxed)
        }
        #[cfg(not(feature = "spsa"))]
        {
            self.default
        }
    }

    /// Sets it, clamped into its range (an `spsa` build's `setoption`).
    #[cfg(feature = "spsa")]
    pub fn set(&self, value: i32) {
        let value = value.clamp(self.min, self.max);
        self.value
            .store(value, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Declares [`Tunable`]s, each `NAME = default, min..=max;` under its doc comment: a constant in a
/// normal build, a static whose value `setoption` changes in an `spsa` build.
macro_rules! tunable {
    ($($(#[$doc:meta])* $name:ident = $value:literal, $min:literal ..= $max:literal;)+) => {$(
        $(#[$doc])*
        #[cfg(not(feature = "spsa"))]
        pub const $name: Tunable = Tunable::new(stringify!($name), $value, $min, $max);
        $(#[$doc])*
        #[cfg(feature = "spsa")]
        pub static $name: Tunable = Tunable::new(stringify!($name), $value, $min, $max);
    )+};
}

/// The centipawn margins here (reverse futility, futility, the null move's evaluation divisor, delta
/// pruning, the aspiration window's first half-width) are stated in the hand-crafted evaluation's
/// centipawns, which they were measured with. The net's scores run wider: on 1,000 positions of the
/// shipped Magnus Carlsen games, its static evaluation averages 1.2 times the hand-crafted one in
/// size (`bench/eval_scale.py`: mean |score| 136 against 113 cp, median ratio 1.22). With the net,
/// the search multiplies those margins by this many quarters, rounded (5/4: SPRT rows 48 and 49, and
/// row 51 for the window; 6/4 lost, row 50; at 2+0.02 the margins and the window together measured
/// only +6.2 ± 14.7, row 54). SEE's margins are in material and are not scaled.
pub const NET_MARGIN_QUARTERS: i32 = 5;

// Step 1: check extension.

/// A check is extended only on lines no longer than this many times the iteration's depth, so
/// that long series of checks can't blow the tree up.
pub const CHECK_EXTENSION_MAX_PLY_PER_DEPTH: i32 = 2;

// Step 4a: internal iterative reduction.

tunable! {
    /// From this depth on, a node the table knows no move for is searched one ply shallower
    /// (0: never). It had not helped at 12,000 nodes (SPRT row 6), nor with the net at 2+0.02 (row
    /// 62).
    IIR_MIN_DEPTH = 0, 0..=12;
}

// Step 4b: the table's score as a sharper static evaluation.

tunable! {
    /// 1: where the table's bound says its score is nearer the truth than the static evaluation
    /// (exact, a lower bound above it, an upper bound below it), the pruning steps use that score
    /// (0: the static evaluation alone). At 1, SPRT at 2+0.02: −33.4 ± 21.8, H0 (row 68): the
    /// margins were set for the static evaluation.
    TT_EVAL = 0, 0..=1;
}

// Step 5: reverse futility pruning.

tunable! {
    /// Reverse futility pruning applies at this depth and below.
    RFP_MAX_DEPTH = 7, 3..=12;
    /// The margin above beta the static evaluation must clear, per ply of depth.
    RFP_MARGIN_PER_DEPTH = 80, 30..=160;
    /// Added to the static evaluation when it is improving (above its value two plies before).
    RFP_IMPROVING_BONUS = 40, 0..=120;
    /// 1: a pruned node returns the average of its static evaluation and beta, a score nearer
    /// the window than the evaluation alone (0: the evaluation).
    RFP_BLEND = 0, 0..=1;
}

// Step 5a: razoring.

tunable! {
    /// Razoring applies at this depth and below.
    RAZOR_MAX_DEPTH = 3, 1..=6;
    /// A node whose static evaluation is below alpha by more than this per ply of depth is
    /// settled by quiescence if quiescence too stays at or below alpha (0: no razoring).
    RAZOR_MARGIN = 0, 0..=600;
}

// Step 6: aggressive futility pruning (off by default; SPRT row 15: on, −47.3 ± 27.3 Elo, H0).

/// A frontier node of the root's side is pruned when its static evaluation is at least this
/// much below alpha.
pub const AGGRESSIVE_FUTILITY_MARGIN: i32 = 50;

// Step 7: null-move pruning.

tunable! {
    /// The null move is tried at this depth and above.
    NMP_MIN_DEPTH = 3, 1..=6;
    /// The null move's reduction: this many plies ...
    NMP_BASE_REDUCTION = 3, 1..=6;
    /// ... plus one per this many plies of depth ...
    NMP_DEPTH_DIVISOR = 4, 2..=8;
    /// ... plus one per this many centipawns of static evaluation above beta ...
    NMP_EVAL_DIVISOR = 200, 80..=400;
    /// ... of which at most this many plies.
    NMP_EVAL_MAX_REDUCTION = 3, 0..=6;
    /// Step 7b: from this depth on, a null-move cutoff is confirmed by a real reduced search first
    /// (the zugzwang guard).
    NMP_VERIFY_DEPTH = 10, 6..=20;
}

// Step 7c: ProbCut (at 12,000 nodes, SPRT row 22: +3.8 ± 23.6 Elo over 641 games, stopped; at
// 2+0.02, with capture history and the table in quiescence, row 67: +20.5 ± 14.0, H1).

tunable! {
    /// ProbCut is tried at this depth and above (0: never).
    PROBCUT_MIN_DEPTH = 5, 0..=10;
    /// A capture must score this much above beta, searched four plies shallower.
    PROBCUT_MARGIN = 200, 50..=500;
}

// Step 8a: singular extensions (SPRT row 59 at 2+0.02: +26.1 ± 17.1 Elo, H1; at 12,000 nodes
// rows 11 and 23 had lost, −35.4 and −10.6).

tunable! {
    /// The table's move may be extended from this depth on ...
    SE_MIN_DEPTH = 7, 4..=12;
    /// ... when the table's result is at most this many plies shallower than the node ...
    SE_TT_DEPTH_MARGIN = 3, 1..=6;
    /// ... and every other move fails low at half depth against its score less this many
    /// centipawns per ply of depth.
    SE_MARGIN_PER_DEPTH = 2, 1..=8;
    /// Outside PV nodes, a move so singular that the others fail low by this many centipawns more
    /// is extended by two plies instead of one (0: never). At 20, SPRT at 2+0.02: −2.3 ± 10.3,
    /// H0 (row 60).
    SE_DOUBLE_MARGIN = 0, 0..=100;
    /// When the others do not fail low but the table's result is at or above beta (the table's
    /// move is not the only good one), the table's move is searched this many plies shallower.
    /// At 1, SPRT at 2+0.02: −22.0 ± 18.9, H0 (row 61).
    SE_NEGATIVE_EXTENSION = 0, 0..=2;
}

// Step 9: late move pruning.

tunable! {
    /// Late move pruning applies at this depth and below (depth 8 was tried: SPRT row 13,
    /// −9.6 ± 28.0 Elo, dropped).
    LMP_MAX_DEPTH = 4, 1..=10;
    /// After `LMP_BASE + depth²` quiet moves (divided by [`LMP_NOT_IMPROVING_DIVISOR`] when the
    /// evaluation is not improving) the rest are pruned.
    LMP_BASE = 3, 0..=10;
}
/// See [`LMP_BASE`].
pub const LMP_NOT_IMPROVING_DIVISOR: usize = 2;

// Step 10: futility pruning.

tunable! {
    /// Futility pruning applies at this depth and below.
    FUTILITY_MAX_DEPTH = 3, 1..=8;
    /// A quiet move is futile when the static evaluation plus this ...
    FUTILITY_BASE = 100, 0..=300;
    /// ... plus this per ply of depth stays at or below alpha.
    FUTILITY_PER_DEPTH = 120, 30..=300;
}

// Step 10a: SEE pruning (SPRT row 5: +56.2 ± 24.6 Elo, H1).

tunable! {
    /// SEE pruning applies at this depth and below.
    SEE_PRUNING_MAX_DEPTH = 8, 2..=14;
    /// A quiet move that loses more than this times depth² by SEE is pruned.
    SEE_QUIET_MARGIN = 20, 5..=80;
    /// A capture that loses more than this times depth by SEE is pruned.
    SEE_CAPTURE_MARGIN = 100, 30..=250;
}

// Step 11: late move reductions.

tunable! {
    /// Moves are reduced at this depth and above ...
    LMR_MIN_DEPTH = 3, 1..=6;
}
/// ... from this move on (counting the move itself).
pub const LMR_MIN_MOVES: usize = 3;
/// The reduction's formula: `LMR_BASE + ln(depth) · ln(moves) / LMR_DIVISOR` plies, rounded down.
pub const LMR_BASE: f32 = 0.75;
/// See [`LMR_BASE`].
pub const LMR_DIVISOR: f32 = 2.25;
tunable! {
    /// A quiet move's ordering key (its histories) changes its reduction by one ply per this much ...
    LMR_HISTORY_DIVISOR = 8192, 2048..=32768;
    /// ... within ± this much of it (so at most two plies either way).
    LMR_HISTORY_CLAMP = 16384, 4096..=65536;
    /// A move of a node expected to fail high (a cut node: see `negamax`) is reduced this many
    /// plies more (0: no more than elsewhere). 1 against 0, SPRT at 2+0.02: +10.7 ± 8.6 Elo over
    /// 2,992 games, H1 (row 63).
    LMR_CUT_NODE = 1, 0..=3;
    /// A quiet move of a node whose table move (searched first) is a capture is reduced this many
    /// plies more (0: no more than elsewhere).
    LMR_TT_CAPTURE = 0, 0..=2;
    /// A late capture that loses material by the static exchange evaluation (ordered after the
    /// quiet moves), or an under-promotion, is reduced this many plies (less one in a PV node; 0:
    /// never reduced). 2 against 0, SPRT at 2+0.02: +19.5 ± 13.5 Elo over 1,104 games, H1
    /// (row 71).
    LMR_BAD_CAPTURE = 2, 0..=3;
    /// When a reduced move beats alpha, its search at full depth goes one ply deeper if its
    /// score beat the node's best so far by more than this margin plus 2 per ply, and one ply
    /// shallower (no search again if that is the reduced depth) if it beat it by less than a
    /// tenth of the margin (0: always the full depth).
    LMR_DEEPER_MARGIN = 0, 0..=200;
}

// The history heuristic: a move's cutoff.

tunable! {
    /// The bonus of a quiet move that refutes a position, and the malus of the quiet moves tried
    /// before it: `min(depth², HISTORY_BONUS_MAX_DEPTH_SQUARED) · HISTORY_BONUS_SCALE`.
    HISTORY_BONUS_MAX_DEPTH_SQUARED = 400, 100..=1600;
    /// See [`HISTORY_BONUS_MAX_DEPTH_SQUARED`].
    HISTORY_BONUS_SCALE = 8, 2..=32;
    /// Captures are ordered by MVV-LVA plus their capture history times this over 16 (0: no
    /// capture history, neither kept nor read). A capture that refutes a position gains the
    /// quiet moves' bonus; the captures tried before any refutation lose it. At 2, SPRT at
    /// 2+0.02: +6.9 ± 9.0 over 2,887 games, no decision (row 64); with `QS_TT` and ProbCut,
    /// +20.5 ± 14.0, H1 (row 67).
    CAPTURE_HISTORY_SHARE = 2, 0..=8;
}

// Step 12: the node's score and the correction history (`super::correction`; SPRT rows 20 and 21:
// +62.0 ± 25.8 and +56.9 ± 27.0 Elo, H1).

tunable! {
    /// No entry of the correction history corrects the static evaluation by more than this many
    /// centipawns.
    CORRECTION_MAX = 32, 16..=128;
    /// 1: a node that fails high returns `(best · depth + beta) / (depth + 1)` instead of its
    /// best score (0: the best score, fail-soft).
    FAIL_HIGH_BLEND = 0, 0..=1;
}

// Quiescence.

tunable! {
    /// Delta pruning: a capture is skipped when the stand-pat score plus the victim's value plus
    /// this margin stays at or below alpha.
    DELTA_MARGIN = 200, 50..=500;
    /// 1: quiescence probes and stores the transposition table (0: it does not). SPRT at 2+0.02:
    /// +4.9 ± 11.7 over 1,501 games, no decision (row 65); with capture history and ProbCut,
    /// +20.5 ± 14.0, H1 (row 67).
    QS_TT = 1, 0..=1;
}

// Aspiration windows (`super::search`; SPRT row 12, "aspiration windows from ±15 cp":
// +59.5 ± 26.2 Elo, H1).

tunable! {
    /// Depths from this on are searched with a window around the last depth's score.
    ASPIRATION_MIN_DEPTH = 5, 2..=10;
    /// The window's first half-width, in centipawns; it grows by half at each failure.
    ASPIRATION_DELTA = 15, 5..=60;
    /// Once the half-width has grown beyond this, the side that failed is opened to infinity.
    ASPIRATION_OPEN_DELTA = 500, 150..=2000;
    /// After a fail high the next try searches one ply shallower, down to at most this many plies
    /// below the iteration's depth.
    ASPIRATION_MAX_FAIL_HIGH_REDUCTION = 3, 0..=6;
}

// Time management (`super::time`): how much of the clock one move gets.

tunable! {
    /// A clock without moves to go (sudden death, with or without increment) is shared out over
    /// this many moves (and `movestogo` is never counted as more).
    TIME_MOVES = 30, 10..=60;
    /// The soft limit (no new iteration after it) as a percentage of the move's share; the
    /// iterations then stretch or shrink it (`super::time::Stability`).
    TIME_SOFT_PERCENT = 60, 30..=150;
}

/// Every [`Tunable`], in the order of the steps that read them.
pub static TUNABLES: [&Tunable; 49] = [
    &IIR_MIN_DEPTH,
    &TT_EVAL,
    &RFP_MAX_DEPTH,
    &RFP_MARGIN_PER_DEPTH,
    &RFP_IMPROVING_BONUS,
    &RFP_BLEND,
    &RAZOR_MAX_DEPTH,
    &RAZOR_MARGIN,
    &NMP_MIN_DEPTH,
    &NMP_BASE_REDUCTION,
    &NMP_DEPTH_DIVISOR,
    &NMP_EVAL_DIVISOR,
    &NMP_EVAL_MAX_REDUCTION,
    &NMP_VERIFY_DEPTH,
    &PROBCUT_MIN_DEPTH,
    &PROBCUT_MARGIN,
    &SE_MIN_DEPTH,
    &SE_TT_DEPTH_MARGIN,
    &SE_MARGIN_PER_DEPTH,
    &SE_DOUBLE_MARGIN,
    &SE_NEGATIVE_EXTENSION,
    &LMP_MAX_DEPTH,
    &LMP_BASE,
    &FUTILITY_MAX_DEPTH,
    &FUTILITY_BASE,
    &FUTILITY_PER_DEPTH,
    &SEE_PRUNING_MAX_DEPTH,
    &SEE_QUIET_MARGIN,
    &SEE_CAPTURE_MARGIN,
    &LMR_MIN_DEPTH,
    &LMR_HISTORY_DIVISOR,
    &LMR_HISTORY_CLAMP,
    &LMR_CUT_NODE,
    &LMR_TT_CAPTURE,
    &LMR_BAD_CAPTURE,
    &LMR_DEEPER_MARGIN,
    &HISTORY_BONUS_MAX_DEPTH_SQUARED,
    &HISTORY_BONUS_SCALE,
    &CAPTURE_HISTORY_SHARE,
    &CORRECTION_MAX,
    &FAIL_HIGH_BLEND,
    &DELTA_MARGIN,
    &QS_TT,
    &ASPIRATION_MIN_DEPTH,
    &ASPIRATION_DELTA,
    &ASPIRATION_OPEN_DELTA,
    &ASPIRATION_MAX_FAIL_HIGH_REDUCTION,
    &TIME_MOVES,
    &TIME_SOFT_PERCENT,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tunable_starts_inside_its_range_under_a_name_of_its_own() {
        let mut names: Vec<&str> = TUNABLES.iter().map(|t| t.name).collect();
        for t in TUNABLES {
            assert!(
                t.min < t.max && (t.min..=t.max).contains(&t.default),
                "{}",
                t.name
            );
            assert_eq!(t.get(), t.default, "{}", t.name);
            // A divisor's range leaves out zero.
            if t.name.contains("DIVISOR") {
                assert!(t.min > 0, "{}", t.name);
            }
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TUNABLES.len());
    }
}
