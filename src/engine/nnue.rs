//! The neural network evaluation (NNUE, "efficiently updatable neural network"): a position's
//! pieces in, a score in centipawns out, trained by `polybook train` on positions labelled by
//! this engine's own search (see `crate::training`).
//!
//! The net is `768 × K → HIDDEN ×2 → 1`:
//! - **Inputs.** One input per (colour, piece, square) — 2 × 6 × 64 = 768 — seen from each side
//!   (its own pieces first, the board mirrored vertically for Black). [`feature`] numbers them.
//!   A net may have K sets of them, one per *king bucket* ([`KingBuckets`]): each side's pieces
//!   are read through the set its own king's square chooses, and with mirroring a side whose king
//!   stands on files e–h sees the board mirrored left–right, so that its king is always on a–d.
//!   The committed net has one set and no mirroring ([`KingBuckets::NONE`]).
//! - **The hidden layer** ("the accumulator"): the same weights for both perspectives, a sum of the
//!   rows of the pieces on the board plus a bias. A move changes two to four pieces, so the
//!   search updates the sums with two to four rows ([`Accumulator::play`]) instead of computing
//!   them again: that is what makes the net cheap enough for a search.
//! - **The output**: SCReLU (clamp to [0, 1], squared) of the side to move's half, then of the
//!   other half, times one weight each, plus a bias; times [`SCALE`] gives centipawns. There are
//!   [`OUTPUT_BUCKETS`] sets of output weights and biases, one per stage of the game counted by
//!   the pieces on the board ([`output_bucket`]): an endgame is weighed with other weights than
//!   a middlegame, for the price of choosing a row.
//!
//! Everything is integer, as engines quantise their nets: the hidden weights are the float weights
//! × [`QA`] in `i16`, the output weights × [`QB`]. The file format is [`Network::from_bytes`]'s.

use shakmaty::{Board, Chess, Color, Move, Position, Role, Square};

/// The net the engine plays with: `net.nnue` beside this file, written by `polybook train`.
static NET: std::sync::LazyLock<Box<Network>> = std::sync::LazyLock::new(|| {
    Network::from_bytes(include_bytes!("net.nnue"))
        .expect("src/engine/net.nnue is a net of this engine's shape")
});

/// The engine's net.
pub fn net() -> &'static Network {
    &NET
}

/// Inputs: colour (own, theirs) × role × square.
pub const INPUTS: usize = 768;
/// Hidden neurons per perspective.
pub const HIDDEN: usize = 256;
/// The hidden layer's quantisation: 1.0 is `QA`.
pub const QA: i32 = 255;
/// The output weights' quantisation: 1.0 is `QB`.
pub const QB: i32 = 64;
/// Centipawns per unit of the net's output (its targets are `sigmoid(cp / SCALE)`).
pub const SCALE: i32 = 400;
/// The first bytes of a net file with one set of inputs and no mirroring.
pub const MAGIC: &[u8; 8] = b"PBNNUE02";
/// The first bytes of a net file with king buckets: the layout follows the header.
pub const MAGIC_KINGS: &[u8; 8] = b"PBNNUE03";
/// Output weight sets, by the number of pieces on the board.
pub const OUTPUT_BUCKETS: usize = 8;

/// The output bucket of a position with `pieces` pieces (kings included): 2–5 pieces are
/// bucket 0, 6–9 bucket 1, …, 30–32 bucket 7.
#[inline]
pub fn output_bucket(pieces: usize) -> usize {
    (pieces.saturating_sub(2) / 4).min(OUTPUT_BUCKETS - 1)
}

/// The input of a piece of colour `color` and role `role` on `sq`, seen from `perspective`: its
/// own pieces are 0..384, the other side's 384..768, and Black sees the board mirrored (a1 ↔ a8).
#[inline]
pub fn feature(perspective: Color, color: Color, role: Role, sq: Square) -> usize {
    let theirs = usize::from(color != perspective);
    let sq = if perspective == Color::White {
        sq as usize
    } else {
        sq as usize ^ 56
    };
    theirs * 384 + (role as usize - 1) * 64 + sq
}

/// The same input seen from the other side.
#[inline]
pub fn flip(feature: usize) -> usize {
    if feature < 384 {
        (feature ^ 56) + 384
    } else {
        (feature ^ 56) - 384
    }
}

/// Which set of inputs a side reads its pieces through, by its own king's square, and whether it
/// sees the board mirrored left–right when that king stands on files e–h.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KingBuckets {
    /// Mirror the board left–right for a side whose king stands on files e–h.
    pub mirror: bool,
    /// The bucket of each square of a side's own king, seen from its side (Black's board turned
    /// a1 ↔ a8) and, with `mirror`, after mirroring (so only files a–d matter then). Buckets are
    /// numbered from 0 without gaps.
    pub map: [u8; 64],
}

/// How a side reads the board through its king bucket: the first input of the bucket's set,
/// and the square transform (`^ 56` turns the board for Black, `^ 7` mirrors it left–right).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    base: usize,
    xor: usize,
}

impl KingBuckets {
    /// One set of inputs, no mirroring: the layout of every net before king buckets.
    pub const NONE: KingBuckets = KingBuckets {
        mirror: false,
        map: [0; 64],
    };
    /// One set of inputs, mirrored so that each side's king is on files a–d.
    pub const MIRROR: KingBuckets = KingBuckets {
        mirror: true,
        map: [0; 64],
    };
    /// Mirrored, four buckets: the king on a1–b1, on c1–d1, on the second rank, further up.
    pub const MIRROR4: KingBuckets = {
        let mut map = [3u8; 64];
        let mut sq = 0;
        while sq < 16 {
            map[sq] = if sq >= 8 {
                2
            } else if sq % 8 < 2 {
                0
            } else {
                1
            };
            sq += 1;
        }
        KingBuckets { mirror: true, map }
    };
    /// The layouts `polybook train --king-buckets` offers, by name.
    pub const NAMED: [(&'static str, KingBuckets); 3] = [
        ("none", KingBuckets::NONE),
        ("mirror", KingBuckets::MIRROR),
        ("mirror4", KingBuckets::MIRROR4),
    ];

    /// The layout of a name of [`KingBuckets::NAMED`].
    pub fn named(name: &str) -> Option<KingBuckets> {
        Self::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, k)| k)
    }

    /// The number of buckets (sets of 768 inputs).
    pub fn count(&self) -> usize {
        usize::from(*self.map.iter().max().expect("64 squares")) + 1
    }

    /// The net's inputs: 768 per bucket.
    pub fn inputs(&self) -> usize {
        INPUTS * self.count()
    }

    /// Whether a side's king square matters at all (not [`KingBuckets::NONE`]).
    #[inline]
    pub fn by_king(&self) -> bool {
        self.mirror || self.map != [0; 64]
    }

    /// How `perspective` reads the board when its own king stands on `king` (`None`: no king, as
    /// on some test boards: bucket 0, not mirrored).
    #[inline]
    pub fn view(&self, perspective: Color, king: Option<Square>) -> View {
        let turn = if perspective == Color::White { 0 } else { 56 };
        let Some(king) = king.filter(|_| self.by_king()) else {
            return View { base: 0, xor: turn };
        };
        let seen = king as usize ^ turn;
        let mirror = if self.mirror && seen % 8 >= 4 { 7 } else { 0 };
        View {
            base: INPUTS * usize::from(self.map[seen ^ mirror]),
            xor: turn ^ mirror,
        }
    }

    /// How `perspective` reads `board`.
    #[inline]
    pub fn view_of(&self, perspective: Color, board: &Board) -> View {
        if !self.by_king() {
            return self.view(perspective, None);
        }
        self.view(perspective, board.king_of(perspective))
    }
}

/// The input of a piece of colour `color` and role `role` on `sq` for `perspective` reading the
/// board through `view`. With [`KingBuckets::NONE`] it is [`feature`].
#[inline]
pub fn input(view: View, perspective: Color, color: Color, role: Role, sq: Square) -> usize {
    view.base
        + usize::from(color != perspective) * 384
        + (role as usize - 1) * 64
        + (sq as usize ^ view.xor)
}

/// The input of the piece that [`feature`] numbers `white_feature` from White's side, for
/// `perspective` reading through `view`.
#[inline]
pub fn input_of_feature(view: View, perspective: Color, white_feature: usize) -> usize {
    let color = if white_feature < 384 {
        Color::White
    } else {
        Color::Black
    };
    view.base
        + usize::from(color != perspective) * 384
        + (white_feature % 384) / 64 * 64
        + ((white_feature % 64) ^ view.xor)
}

/// The king of `color` among inputs numbered from White's side ([`white_features`]).
pub fn king_among(white_features: &[u16], color: Color) -> Option<Square> {
    let king = feature(Color::White, color, Role::King, Square::A1) as u16;
    white_features
        .iter()
        .find(|&&f| f & !63 == king)
        .map(|&f| Square::new(u32::from(f % 64)))
}

/// The inputs of a board seen from White, in square order (at most 32).
pub fn white_features(board: &Board) -> impl Iterator<Item = usize> + '_ {
    board.occupied().into_iter().filter_map(move |sq| {
        board
            .piece_at(sq)
            .map(|p| feature(Color::White, p.color, p.role, sq))
    })
}

/// One row of hidden weights, aligned for the vector loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Row(pub [i16; HIDDEN]);

/// A quantised net.
#[repr(C, align(64))]
pub struct Network {
    /// How the inputs depend on each side's king.
    pub kings: KingBuckets,
    /// Hidden weights, one row of `HIDDEN` per input (`kings.inputs()` of them).
    pub feature_weights: Vec<Row>,
    pub feature_bias: [i16; HIDDEN],
    /// Output weights per bucket: the side to move's half, then the other side's.
    pub output_weights: [[[i16; HIDDEN]; 2]; OUTPUT_BUCKETS],
    /// Output bias per bucket, × `QA × QB`.
    pub output_bias: [i32; OUTPUT_BUCKETS],
}

/// Why a net file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    #[error("not a polybook net (it does not start with {:?})", std::str::from_utf8(MAGIC).unwrap_or(""))]
    Magic,
    #[error("a net of {found} hidden neurons, but this engine's nets have {HIDDEN}")]
    Hidden { found: u32 },
    #[error("a net of {found} output buckets, but this engine's nets have {OUTPUT_BUCKETS}")]
    Buckets { found: u32 },
    #[error("{found} bytes, but a net of {HIDDEN} hidden neurons has {expected}")]
    Size { found: usize, expected: usize },
    #[error("its king buckets are not numbered 0, 1, … without gaps, or mirroring is not 0 or 1")]
    Kings,
}

impl Network {
    /// The size of a net file of one set of inputs, [`MAGIC`]: magic, hidden size and output
    /// buckets (u32 each), the feature weights, the feature bias, the output weights bucket by
    /// bucket (i16 each, little-endian), the output biases (i32 each). With king buckets
    /// ([`MAGIC_KINGS`]), the header goes on with mirroring (a u32, 0 or 1) and the 64 bytes of
    /// the bucket map, and the feature weights are those of every bucket, one after the other.
    pub const FILE_SIZE: usize = Self::file_size(&KingBuckets::NONE);

    /// The size of a net file of this layout.
    pub const fn file_size(kings: &KingBuckets) -> usize {
        let mut buckets = 0;
        let mut i = 0;
        while i < 64 {
            if kings.map[i] as usize + 1 > buckets {
                buckets = kings.map[i] as usize + 1;
            }
            i += 1;
        }
        let header = if buckets == 1 && !kings.mirror {
            16
        } else {
            16 + 4 + 64
        };
        header
            + 2 * (INPUTS * buckets * HIDDEN + HIDDEN + OUTPUT_BUCKETS * 2 * HIDDEN)
            + 4 * OUTPUT_BUCKETS
    }

    /// Reads a net file (the format of [`Network::FILE_SIZE`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Box<Network>, NetError> {
        if bytes.len() < 16 || (&bytes[..8] != MAGIC && &bytes[..8] != MAGIC_KINGS) {
            return Err(NetError::Magic);
        }
        let (kings, header) = if &bytes[..8] == MAGIC {
            (KingBuckets::NONE, 16)
        } else {
            if bytes.len() < 16 + 4 + 64 {
                return Err(NetError::Size {
                    found: bytes.len(),
                    expected: 16 + 4 + 64,
                });
            }
            let mirror = u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes"));
            let map: [u8; 64] = bytes[20..84].try_into().expect("64 bytes");
            let kings = KingBuckets {
                mirror: mirror == 1,
                map,
            };
            let numbered = (0..kings.count() as u8).all(|b| map.contains(&b));
            if mirror > 1 || !numbered {
                return Err(NetError::Kings);
            }
            (kings, 84)
        };
        let hidden = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if hidden as usize != HIDDEN {
            return Err(NetError::Hidden { found: hidden });
        }
        let buckets = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
        if buckets as usize != OUTPUT_BUCKETS {
            return Err(NetError::Buckets { found: buckets });
        }
        if bytes.len() != Self::file_size(&kings) {
            return Err(NetError::Size {
                found: bytes.len(),
                expected: Self::file_size(&kings),
            });
        }
        let biases = bytes.len() - 4 * OUTPUT_BUCKETS;
        let mut words = bytes[header..biases]
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]));
        let mut net = Network::zeroed(kings);
        for row in net.feature_weights.iter_mut() {
            row.0
                .iter_mut()
                .for_each(|w| *w = words.next().expect("sized"));
        }
        net.feature_bias
            .iter_mut()
            .for_each(|w| *w = words.next().expect("sized"));
        for half in net.output_weights.iter_mut().flatten() {
            half.iter_mut()
                .for_each(|w| *w = words.next().expect("sized"));
        }
        for (bias, b) in net
            .output_bias
            .iter_mut()
            .zip(bytes[biases..].chunks_exact(4))
        {
            *bias = i32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        Ok(net)
    }

    /// The file bytes of this net.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::file_size(&self.kings));
        let by_king = self.kings.by_king();
        out.extend_from_slice(if by_king { MAGIC_KINGS } else { MAGIC });
        out.extend_from_slice(&(HIDDEN as u32).to_le_bytes());
        out.extend_from_slice(&(OUTPUT_BUCKETS as u32).to_le_bytes());
        if by_king {
            out.extend_from_slice(&u32::from(self.kings.mirror).to_le_bytes());
            out.extend_from_slice(&self.kings.map);
        }
        let words = self
            .feature_weights
            .iter()
            .flat_map(|row| &row.0)
            .chain(&self.feature_bias)
            .chain(self.output_weights.iter().flatten().flatten());
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for bias in self.output_bias {
            out.extend_from_slice(&bias.to_le_bytes());
        }
        out
    }

    /// A net of zeros of this layout.
    pub fn zeroed(kings: KingBuckets) -> Box<Network> {
        Box::new(Network {
            kings,
            feature_weights: vec![Row([0; HIDDEN]); kings.inputs()],
            feature_bias: [0; HIDDEN],
            output_weights: [[[0; HIDDEN]; 2]; OUTPUT_BUCKETS],
            output_bias: [0; OUTPUT_BUCKETS],
        })
    }

    /// The hidden weights of an input.
    #[inline]
    pub fn row(&self, input: usize) -> &[i16; HIDDEN] {
        &self.feature_weights[input].0
    }

    /// The score of a position from its accumulator, in centipawns for the side to move
    /// (`pieces`: the pieces on its board, kings included, which choose the output bucket).
    #[inline]
    pub fn evaluate(&self, acc: &Accumulator, turn: Color, pieces: usize) -> i32 {
        let bucket = output_bucket(pieces);
        #[cfg(target_arch = "x86_64")]
        match vectors() {
            // SAFETY (both): the processor has just been seen to have these instructions.
            Vectors::Avx512 => return unsafe { self.evaluate_avx512(acc, turn, bucket) },
            Vectors::Avx2 => return unsafe { self.evaluate_avx2(acc, turn, bucket) },
            Vectors::Sse2 => {}
        }
        self.evaluate_with(acc, turn, bucket)
    }

    /// [`Network::evaluate`] compiled with AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn evaluate_avx512(&self, acc: &Accumulator, turn: Color, bucket: usize) -> i32 {
        self.evaluate_with(acc, turn, bucket)
    }

    /// [`Network::evaluate`] compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn evaluate_avx2(&self, acc: &Accumulator, turn: Color, bucket: usize) -> i32 {
        self.evaluate_with(acc, turn, bucket)
    }

    #[inline(always)]
    fn evaluate_with(&self, acc: &Accumulator, turn: Color, bucket: usize) -> i32 {
        let (weights, bias) = (&self.output_weights[bucket], self.output_bias[bucket]);
        let (us, them) = (&acc.v[turn as usize], &acc.v[turn.other() as usize]);
        // Each half's sum fits an `i32` (HIDDEN × 255² × 127 < 2³¹ up to 256 neurons); their total
        // and its scaling are taken in `i64`, which no net's weights can overflow.
        let sum = i64::from(screlu_dot(us, &weights[0])) + i64::from(screlu_dot(them, &weights[1]));
        let (qa, qb) = (i64::from(QA), i64::from(QB));
        ((sum / qa + i64::from(bias)) * i64::from(SCALE) / (qa * qb)) as i32
    }

    /// The score of a position computed from scratch (for one-off evaluations; the search keeps
    /// accumulators).
    pub fn evaluate_position(&self, pos: &Chess) -> i32 {
        let board = pos.board();
        self.evaluate(
            &Accumulator::new(self, board),
            pos.turn(),
            board.occupied().count(),
        )
    }
}

/// The vector instructions the net's loops run with: every x86-64 has SSE2 (8 lanes of `i16`),
/// nearly every one made since 2013 AVX2 (16 lanes), many servers and recent desktops AVX-512
/// (32 lanes). Each loop is compiled for all three and the widest the processor has is taken,
/// with the same values either way.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vectors {
    Avx512,
    Avx2,
    Sse2,
}

/// The widest [`Vectors`] this processor has (the standard library caches the answer).
#[cfg(target_arch = "x86_64")]
#[inline]
fn vectors() -> Vectors {
    if std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512f")
    {
        Vectors::Avx512
    } else if std::arch::is_x86_feature_detected!("avx2") {
        Vectors::Avx2
    } else {
        Vectors::Sse2
    }
}

/// Σ clamp(x, 0, QA)² × w: the SCReLU of one half times its output weights. `x × w` is taken
/// first (it fits an `i16`: the trainer keeps |w| < 128), then times `x` in `i32`.
#[inline(always)]
fn screlu_dot(acc: &[i16; HIDDEN], weights: &[i16; HIDDEN]) -> i32 {
    let mut sum = 0i32;
    for i in 0..HIDDEN {
        let x = acc[i].clamp(0, QA as i16);
        sum += i32::from(x.wrapping_mul(weights[i])) * i32::from(x);
    }
    sum
}

/// The hidden layer's sums for both perspectives (`v[Color::White as usize]`, `v[Black]`).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Accumulator {
    pub v: [[i16; HIDDEN]; 2],
}

/// A piece a move puts on or takes off a square.
#[derive(Clone, Copy)]
struct Placed {
    color: Color,
    role: Role,
    sq: Square,
}

/// The pieces a move adds and removes (two of each at the most: castling, a capture by a pawn
/// promoting).
struct Change {
    add: [Placed; 2],
    adds: usize,
    sub: [Placed; 2],
    subs: usize,
}

impl Default for Change {
    fn default() -> Self {
        let none = Placed {
            color: Color::White,
            role: Role::Pawn,
            sq: Square::A1,
        };
        Change {
            add: [none; 2],
            adds: 0,
            sub: [none; 2],
            subs: 0,
        }
    }
}

impl Change {
    fn add(&mut self, color: Color, role: Role, sq: Square) {
        self.add[self.adds] = Placed { color, role, sq };
        self.adds += 1;
    }
    fn sub(&mut self, color: Color, role: Role, sq: Square) {
        self.sub[self.subs] = Placed { color, role, sq };
        self.subs += 1;
    }
    /// Where `color`'s king goes, if the move moves it.
    fn king_to(&self, color: Color) -> Option<Square> {
        self.add[..self.adds]
            .iter()
            .find(|p| p.role == Role::King && p.color == color)
            .map(|p| p.sq)
    }
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator {
            v: [[0; HIDDEN]; 2],
        }
    }
}

impl Accumulator {
    /// The sums for a board, from scratch.
    pub fn new(net: &Network, board: &Board) -> Accumulator {
        let mut acc = Accumulator {
            v: [net.feature_bias; 2],
        };
        for persp in Color::ALL {
            acc.refresh(net, board, persp);
        }
        acc
    }

    /// `perspective`'s sums for a board, from scratch.
    fn refresh(&mut self, net: &Network, board: &Board, perspective: Color) {
        let view = net.kings.view_of(perspective, board);
        let sums = &mut self.v[perspective as usize];
        *sums = net.feature_bias;
        for sq in board.occupied() {
            let p = board.piece_at(sq).expect("occupied");
            add_row(sums, net.row(input(view, perspective, p.color, p.role, sq)));
        }
    }

    /// The sums after `m` is played in `pos` (whose sums are `self`), into `out`.
    #[inline]
    pub fn play(&self, net: &Network, pos: &Chess, m: Move, out: &mut Accumulator) {
        #[cfg(target_arch = "x86_64")]
        match vectors() {
            // SAFETY (both): the processor has just been seen to have these instructions.
            Vectors::Avx512 => return unsafe { self.play_avx512(net, pos, m, out) },
            Vectors::Avx2 => return unsafe { self.play_avx2(net, pos, m, out) },
            Vectors::Sse2 => {}
        }
        self.play_with(net, pos, m, out)
    }

    /// [`Accumulator::play`] compiled with AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn play_avx512(&self, net: &Network, pos: &Chess, m: Move, out: &mut Accumulator) {
        self.play_with(net, pos, m, out)
    }

    /// [`Accumulator::play`] compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn play_avx2(&self, net: &Network, pos: &Chess, m: Move, out: &mut Accumulator) {
        self.play_with(net, pos, m, out)
    }

    #[inline(always)]
    fn play_with(&self, net: &Network, pos: &Chess, m: Move, out: &mut Accumulator) {
        let mut change = Change::default();
        let standard =
            crate::position::for_each_piece_moved(pos.turn(), m, |piece, sq, on| match on {
                true => change.add(piece.color, piece.role, sq),
                false => change.sub(piece.color, piece.role, sq),
            });
        let after = || {
            let mut after = pos.clone();
            after.play_unchecked(m);
            after
        };
        if !standard {
            // Not a move of standard chess: start again from the board.
            *out = Accumulator::new(net, after().board());
            return;
        }
        for persp in Color::ALL {
            let p = persp as usize;
            let view = net.kings.view_of(persp, pos.board());
            if net.kings.by_king()
                && let Some(king) = change.king_to(persp)
                && net.kings.view(persp, Some(king)) != view
            {
                // The king changed bucket or side of the board: this side reads every piece
                // through other inputs now.
                out.refresh(net, after().board(), persp);
                continue;
            }
            let rows = |list: &[Placed]| -> [&[i16; HIDDEN]; 2] {
                let row = |i: usize| {
                    let q = list[i.min(list.len() - 1)];
                    net.row(input(view, persp, q.color, q.role, q.sq))
                };
                [row(0), row(1)]
            };
            let add = rows(&change.add[..change.adds]);
            let sub = rows(&change.sub[..change.subs]);
            let (src, dst) = (&self.v[p], &mut out.v[p]);
            match (change.adds, change.subs) {
                (1, 1) => {
                    for i in 0..HIDDEN {
                        dst[i] = src[i] + add[0][i] - sub[0][i];
                    }
                }
                (1, 2) => {
                    for i in 0..HIDDEN {
                        dst[i] = src[i] + add[0][i] - sub[0][i] - sub[1][i];
                    }
                }
                _ => {
                    for i in 0..HIDDEN {
                        dst[i] = src[i] + add[0][i] + add[1][i] - sub[0][i] - sub[1][i];
                    }
                }
            }
        }
    }
}

#[inline]
fn add_row(acc: &mut [i16; HIDDEN], row: &[i16; HIDDEN]) {
    for i in 0..HIDDEN {
        acc[i] += row[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{parse_fen, parse_fen_for};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// A net of small random weights, as a trained one could be.
    fn random_net(seed: u64) -> Box<Network> {
        random_net_of(seed, KingBuckets::NONE)
    }

    /// The same with king buckets.
    fn random_net_of(seed: u64, kings: KingBuckets) -> Box<Network> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut net = Network::zeroed(kings);
        for row in net.feature_weights.iter_mut() {
            row.0
                .iter_mut()
                .for_each(|w| *w = rng.random_range(-60..60));
        }
        net.feature_bias
            .iter_mut()
            .for_each(|w| *w = rng.random_range(0..120));
        for half in net.output_weights.iter_mut().flatten() {
            half.iter_mut()
                .for_each(|w| *w = rng.random_range(-127..127));
        }
        for bias in net.output_bias.iter_mut() {
            *bias = rng.random_range(-5000..5000);
        }
        net
    }

    #[test]
    fn the_features_of_a_side_mirror_the_others() {
        let pos: Chess =
            parse_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3").unwrap();
        let mirrored: Chess =
            parse_fen("rnbqkb1r/pppp1ppp/5n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR b KQkq - 2 3").unwrap();
        let net = random_net(1);
        // The same position with colours swapped scores the same for the side to move.
        assert_eq!(
            net.evaluate_position(&pos),
            net.evaluate_position(&mirrored)
        );
        for f in 0..INPUTS {
            assert_eq!(flip(flip(f)), f);
        }
        // Without king buckets, every side reads the inputs `feature` numbers.
        let board = pos.board();
        for persp in Color::ALL {
            let view = KingBuckets::NONE.view_of(persp, board);
            for sq in board.occupied() {
                let p = board.piece_at(sq).unwrap();
                let f = feature(persp, p.color, p.role, sq);
                assert_eq!(input(view, persp, p.color, p.role, sq), f);
                let white = feature(Color::White, p.color, p.role, sq);
                assert_eq!(input_of_feature(view, persp, white), f);
            }
        }
        // With them too the position and its colour-swapped twin score the same.
        for kings in [KingBuckets::MIRROR, KingBuckets::MIRROR4] {
            let net = random_net_of(8, kings);
            assert_eq!(
                net.evaluate_position(&pos),
                net.evaluate_position(&mirrored)
            );
        }
        assert_eq!(
            flip(feature(Color::White, Color::Black, Role::Queen, Square::D8)),
            feature(Color::Black, Color::Black, Role::Queen, Square::D8)
        );
    }

    #[test]
    fn updated_sums_equal_sums_from_scratch_along_random_games() {
        for (seed, kings) in [
            (2, KingBuckets::NONE),
            (9, KingBuckets::MIRROR),
            (10, KingBuckets::MIRROR4),
        ] {
            updated_sums_equal_sums_from_scratch(&random_net_of(seed, kings));
        }
    }

    fn updated_sums_equal_sums_from_scratch(net: &Network) {
        let mut rng = StdRng::seed_from_u64(3);
        let starts = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
        ];
        for fen in starts {
            for game in random_games(fen, 20, &mut rng) {
                let mut acc = Accumulator::new(net, game[0].0.board());
                for (pos, m) in game {
                    let mut next = Accumulator::default();
                    acc.play(net, &pos, m, &mut next);
                    let mut after = pos.clone();
                    after.play_unchecked(m);
                    let fresh = Accumulator::new(net, after.board());
                    assert_eq!(next.v, fresh.v, "{fen} after {m}");
                    acc = next;
                }
            }
        }
    }

    /// `count` random games of at most 80 plies from `fen`: each position with the move played.
    fn random_games(fen: &str, count: usize, rng: &mut StdRng) -> Vec<Vec<(Chess, Move)>> {
        (0..count)
            .map(|_| {
                let mut pos: Chess = parse_fen(fen).unwrap();
                let mut game = Vec::new();
                for _ in 0..80 {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    let m = moves[rng.random_range(0..moves.len())];
                    game.push((pos.clone(), m));
                    pos.play_unchecked(m);
                }
                game
            })
            .collect()
    }

    /// Each loop compiled for AVX-512 and AVX2 (those the processor has) gives what the plain
    /// build gives, sums and scores, along random games.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_vector_width_gives_the_same_sums_and_scores() {
        let net = random_net(6);
        let mut rng = StdRng::seed_from_u64(7);
        let (avx512, avx2) = (vectors() == Vectors::Avx512, vectors() != Vectors::Sse2);
        let mut checked = 0;
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        for game in random_games(start, 20, &mut rng) {
            for (pos, m) in game {
                let acc = Accumulator::new(&net, pos.board());
                let mut plain = Accumulator::default();
                acc.play_with(&net, &pos, m, &mut plain);
                for (wide, has) in [(0, avx512), (1, avx2)] {
                    if !has {
                        continue;
                    }
                    let mut next = Accumulator::default();
                    // SAFETY: only the instructions `vectors()` has seen are used.
                    unsafe {
                        match wide {
                            0 => acc.play_avx512(&net, &pos, m, &mut next),
                            _ => acc.play_avx2(&net, &pos, m, &mut next),
                        }
                    }
                    assert_eq!(next.v, plain.v, "after {m}");
                    for turn in Color::ALL {
                        let bucket = output_bucket(pos.board().occupied().count());
                        // SAFETY: as above.
                        let score = unsafe {
                            match wide {
                                0 => net.evaluate_avx512(&plain, turn, bucket),
                                _ => net.evaluate_avx2(&plain, turn, bucket),
                            }
                        };
                        assert_eq!(score, net.evaluate_with(&plain, turn, bucket));
                        checked += 1;
                    }
                }
            }
        }
        // On a processor without AVX2 there is nothing to compare (nothing was checked).
        assert!(checked > 0 || !avx2, "{checked}");
    }

    /// Chess960's castling: the king onto its rook's square, king and rook swapping squares, a
    /// rook or a king that stays where it is.
    #[test]
    fn updated_sums_equal_sums_from_scratch_after_chess960_castling() {
        for (seed, kings) in [(5, KingBuckets::NONE), (11, KingBuckets::MIRROR4)] {
            after_chess960_castling(&random_net_of(seed, kings));
        }
    }

    fn after_chess960_castling(net: &Network) {
        let mut castles = 0;
        for fen in [
            "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
            "2rk1r2/pppppppp/8/8/8/8/PPPPPPPP/2RK1R2 w FCfc - 0 1",
            "2rk1r2/pppppppp/8/8/8/8/PPPPPPPP/2RK1R2 b FCfc - 0 1",
            "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1",
            "k4r2/8/8/8/8/7p/7P/6KR w H - 0 1",
        ] {
            let pos: Chess = parse_fen_for(fen, true).unwrap();
            let acc = Accumulator::new(net, pos.board());
            for m in pos.legal_moves() {
                castles += usize::from(m.is_castle());
                let mut next = Accumulator::default();
                acc.play(net, &pos, m, &mut next);
                let mut after = pos.clone();
                after.play_unchecked(m);
                assert_eq!(next.v, Accumulator::new(net, after.board()).v, "{fen} {m}");
            }
        }
        assert_eq!(castles, 9);
    }

    #[test]
    fn a_net_file_reads_back_as_written() {
        let net = random_net(4);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), Network::FILE_SIZE);
        let back = Network::from_bytes(&bytes).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(Network::from_bytes(b"PBNNUE0").err(), Some(NetError::Magic));
        assert!(matches!(
            Network::from_bytes(&bytes[..bytes.len() - 2]),
            Err(NetError::Size { .. })
        ));
        let mut other = bytes.clone();
        other[8..12].copy_from_slice(&64u32.to_le_bytes());
        assert_eq!(
            Network::from_bytes(&other).err(),
            Some(NetError::Hidden { found: 64 })
        );
        let mut other = bytes.clone();
        other[12] = 1;
        assert_eq!(
            Network::from_bytes(&other).err(),
            Some(NetError::Buckets { found: 1 })
        );
        // A net with king buckets: its layout in the header, every bucket's weights.
        let kings = random_net_of(12, KingBuckets::MIRROR4);
        let bytes4 = kings.to_bytes();
        assert_eq!(&bytes4[..8], MAGIC_KINGS);
        assert_eq!(bytes4.len(), Network::file_size(&KingBuckets::MIRROR4));
        assert_eq!(
            bytes4.len() - bytes.len(),
            84 - 16 + 2 * 3 * INPUTS * HIDDEN
        );
        let back = Network::from_bytes(&bytes4).unwrap();
        assert_eq!(back.kings, KingBuckets::MIRROR4);
        assert_eq!(back.to_bytes(), bytes4);
        let mut gap = bytes4.clone();
        gap[20..84]
            .iter_mut()
            .for_each(|b| *b = if *b == 1 { 2 } else { *b });
        assert_eq!(Network::from_bytes(&gap).err(), Some(NetError::Kings));
        assert!(matches!(
            Network::from_bytes(&bytes4[..bytes4.len() - 2 * INPUTS * HIDDEN]),
            Err(NetError::Size { .. })
        ));
        // The buckets of MIRROR4, from each side, mirrored.
        let kings = KingBuckets::MIRROR4;
        assert_eq!(kings.count(), 4);
        let bucket = |persp, sq| kings.view(persp, Some(sq)).base / INPUTS;
        assert_eq!(bucket(Color::White, Square::G1), 0);
        assert_eq!(bucket(Color::White, Square::E1), 1);
        assert_eq!(bucket(Color::Black, Square::C8), 1);
        assert_eq!(bucket(Color::Black, Square::H7), 2);
        assert_eq!(bucket(Color::White, Square::D4), 3);
        assert_eq!(KingBuckets::named("mirror4"), Some(KingBuckets::MIRROR4));
        // A net of the first format (one set of output weights) is refused by its magic.
        let mut first = bytes.clone();
        first[7] = b'1';
        assert_eq!(Network::from_bytes(&first).err(), Some(NetError::Magic));
        // The buckets: kings alone to a full board.
        let buckets: Vec<usize> = (2..=32).map(output_bucket).collect();
        assert_eq!(buckets[..4], [0; 4]);
        assert_eq!(buckets[4..8], [1; 4]);
        assert_eq!(buckets[28..], [7; 3]);
    }
}
