//! The search's tuned numbers in one place: every margin, depth limit and reduction of the tree
//! search ([`super::negamax`]) and of its aspiration windows ([`super::search`]), each with what it
//! does and the step of `negamax` that reads it.
//!
//! Margins are on the centipawn scale of [`crate::score_scale`]; depths and reductions are in
//! plies. Changing one changes the search, and so `polybook bench`'s node signature: each value
//! here is the one the search was measured with (BENCHMARKS.md's SPRT rows, where a change had
//! one). Where an SPRT measured a value or a step, its row of the full table
//! (docs/benchmarks-log.md, "Every SPRT (the full table)") is named.

// Step 1: check extension.

/// A check is extended only on lines no longer than this many times the iteration's depth, so
/// that long series of checks can't blow the tree up.
pub const CHECK_EXTENSION_MAX_PLY_PER_DEPTH: i32 = 2;

// Step 5: reverse futility pruning.

/// Reverse futility pruning applies at this depth and below.
pub const RFP_MAX_DEPTH: i32 = 7;
/// The margin above beta the static evaluation must clear, per ply of depth.
pub const RFP_MARGIN_PER_DEPTH: i32 = 80;
/// Added to the static evaluation when it is improving (above its value two plies before).
pub const RFP_IMPROVING_BONUS: i32 = 40;

// Step 6: aggressive futility pruning (off by default; SPRT row 15: on, −47.3 ± 27.3 Elo, H0).

/// A frontier node of the root's side is pruned when its static evaluation is at least this
/// much below alpha.
pub const AGGRESSIVE_FUTILITY_MARGIN: i32 = 50;

// Step 7: null-move pruning.

/// The null move is tried at this depth and above.
pub const NMP_MIN_DEPTH: i32 = 3;
/// The null move's reduction: this many plies ...
pub const NMP_BASE_REDUCTION: i32 = 3;
/// ... plus one per this many plies of depth ...
pub const NMP_DEPTH_DIVISOR: i32 = 4;
/// ... plus one per this many centipawns of static evaluation above beta ...
pub const NMP_EVAL_DIVISOR: i32 = 200;
/// ... of which at most this many plies.
pub const NMP_EVAL_MAX_REDUCTION: i32 = 3;
/// Step 7b: from this depth on, a null-move cutoff is confirmed by a real reduced search first
/// (the zugzwang guard).
pub const NMP_VERIFY_DEPTH: i32 = 10;

// Step 9: late move pruning.

/// Late move pruning applies at this depth and below (depth 8 was tried: SPRT row 13,
/// −9.6 ± 28.0 Elo, dropped).
pub const LMP_MAX_DEPTH: i32 = 4;
/// After `LMP_BASE + depth²` quiet moves (divided by [`LMP_NOT_IMPROVING_DIVISOR`] when the
/// evaluation is not improving) the rest are pruned.
pub const LMP_BASE: i32 = 3;
/// See [`LMP_BASE`].
pub const LMP_NOT_IMPROVING_DIVISOR: usize = 2;

// Step 10: futility pruning.

/// Futility pruning applies at this depth and below.
pub const FUTILITY_MAX_DEPTH: i32 = 3;
/// A quiet move is futile when the static evaluation plus this ...
pub const FUTILITY_BASE: i32 = 100;
/// ... plus this per ply of depth stays at or below alpha.
pub const FUTILITY_PER_DEPTH: i32 = 120;

// Step 10a: SEE pruning (SPRT row 5: +56.2 ± 24.6 Elo, H1).

/// SEE pruning applies at this depth and below.
pub const SEE_PRUNING_MAX_DEPTH: i32 = 8;
/// A quiet move that loses more than this times depth² by SEE is pruned.
pub const SEE_QUIET_MARGIN: i32 = 20;
/// A capture that loses more than this times depth by SEE is pruned.
pub const SEE_CAPTURE_MARGIN: i32 = 100;

// Step 11: late move reductions.

/// Moves are reduced at this depth and above ...
pub const LMR_MIN_DEPTH: i32 = 3;
/// ... from this move on (counting the move itself).
pub const LMR_MIN_MOVES: usize = 3;
/// The reduction's formula: `LMR_BASE + ln(depth) · ln(moves) / LMR_DIVISOR` plies, rounded down.
pub const LMR_BASE: f32 = 0.75;
/// See [`LMR_BASE`].
pub const LMR_DIVISOR: f32 = 2.25;
/// A quiet move's ordering key (its histories) changes its reduction by one ply per this much ...
pub const LMR_HISTORY_DIVISOR: i32 = 8192;
/// ... within ± this much of it (so at most two plies either way).
pub const LMR_HISTORY_CLAMP: i32 = 16384;

// The history heuristic: a quiet move's cutoff.

/// The bonus of a quiet move that refutes a position, and the malus of the quiet moves tried
/// before it: `min(depth², HISTORY_BONUS_MAX_DEPTH_SQUARED) · HISTORY_BONUS_SCALE`.
pub const HISTORY_BONUS_MAX_DEPTH_SQUARED: i32 = 400;
/// See [`HISTORY_BONUS_MAX_DEPTH_SQUARED`].
pub const HISTORY_BONUS_SCALE: i32 = 8;

// Quiescence.

/// Delta pruning: a capture is skipped when the stand-pat score plus the victim's value plus
/// this margin stays at or below alpha.
pub const DELTA_MARGIN: i32 = 200;

// Aspiration windows (`super::search`; SPRT row 12, "aspiration windows from ±15 cp":
// +59.5 ± 26.2 Elo, H1).

/// Depths from this on are searched with a window around the last depth's score.
pub const ASPIRATION_MIN_DEPTH: i32 = 5;
/// The window's first half-width, in centipawns; it grows by half at each failure.
pub const ASPIRATION_DELTA: i32 = 15;
/// Once the half-width has grown beyond this, the side that failed is opened to infinity.
pub const ASPIRATION_OPEN_DELTA: i32 = 500;
/// After a fail high the next try searches one ply shallower, down to at most this many plies
/// below the iteration's depth.
pub const ASPIRATION_MAX_FAIL_HIGH_REDUCTION: i32 = 3;
