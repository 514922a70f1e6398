//! The score scale the engine searches on and scored books store: centipawns from one side's
//! point of view, with mates at the ends of the scale.
//!
//! A mate in `n` plies scores [`MATE_CP`]` - n`, being mated in `n` plies `-(MATE_CP - n)`, so that
//! a nearer mate scores higher; everything beyond ±[`MATE_BOUND_CP`] is a mate. The engine's
//! search (`engine::score`, plies counted from the root of the search) and the learn field of a
//! book scored by `polybook analyse` (`book::scored`, plies counted from the position after the
//! book move) use this one scale, so that an engine's score is written into a book as it is.

/// The score of delivering mate right now (in 0 plies), in the units of the centipawn scale.
pub const MATE_CP: i32 = 32000;
/// Scores beyond this (in the units of the centipawn scale) are mates; centipawn scores stay
/// inside it.
pub const MATE_BOUND_CP: i32 = MATE_CP - 1000;
