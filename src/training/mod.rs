//! The net's training: positions from real games labelled by the engine's own search
//! ([`data`]), the label file `datagen` makes or resumes ([`labels`]), the labelled data sets
//! `train` reads back ([`sets`]), and the trainer that fits [`crate::engine::nnue`]'s net to them
//! ([`trainer`]).

pub mod data;
pub mod labels;
pub mod sets;
pub mod trainer;

use shakmaty::Color;

use crate::engine::nnue::{self, KingBuckets};

/// One training position: its pieces, side to move, the search's score and the game's result.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// The pieces as inputs seen from White (`nnue::feature(Color::White, …)`), `len` of them;
    /// Black's are `nnue::flip` of each.
    pub features: [u16; 32],
    pub len: u8,
    /// The side to move.
    pub turn: Color,
    /// The search's score in centipawns, for the side to move.
    pub score: i16,
    /// The game's result for the side to move: 0 lost, 1 drawn, 2 won.
    pub result: u8,
}

impl Sample {
    /// The sample of a position.
    pub fn new(pos: &shakmaty::Chess, score: i16, result: u8) -> Sample {
        use shakmaty::Position;
        let mut features = [0u16; 32];
        let mut len = 0;
        for f in nnue::white_features(pos.board()).take(32) {
            features[len] = f as u16;
            len += 1;
        }
        Sample {
            features,
            len: len as u8,
            turn: pos.turn(),
            score,
            result,
        }
    }

    /// The net's inputs for `perspective`, in a net of this king-bucket layout (with
    /// [`KingBuckets::NONE`]: each feature from White's side, [`nnue::flip`] of each from Black's).
    ///
    /// [`nnue::flip`]: crate::engine::nnue::flip
    pub fn inputs(
        &self,
        kings: &KingBuckets,
        perspective: Color,
    ) -> impl Iterator<Item = usize> + '_ {
        let features = &self.features[..self.len as usize];
        let king = if kings.by_king() {
            nnue::king_among(features, perspective)
        } else {
            None
        };
        let view = kings.view(perspective, king);
        features
            .iter()
            .map(move |&f| nnue::input_of_feature(view, perspective, f as usize))
    }
}
