//! Static evaluation: a tapered (middlegame/endgame) score from the side to move's point of view.
//!
//! Every term is a count times a weight: a piece on a square counts once for its material and its
//! piece-square entry, a knight with five safe squares counts once for "knight mobility 5", a
//! passed pawn counts its king distances, and so on. The weights are one flat table, [`Params`],
//! with a middlegame and an endgame value each; the score blends the two by the game phase (how
//! much material is left), PeSTO's "tapered eval".
//!
//! The terms are computed once, by [`eval_terms`], into a [`TermSink`]: the search's
//! sink adds weights ([`evaluate`]), the tuner's records the counts themselves
//! ([`trace`]), so that Texel's tuning (`crate::tune`) fits exactly the evaluation the engine
//! plays with. A "mop-up" term outside the table drives a lone king to the edge, so that mates
//! like KRvK are found by the search rather than stumbled upon.
//!
//! The weights the engine uses are the text file `params.txt` beside this file, written by
//! `polybook tune` (see [`Params::parse`]); the tuner starts from [`Params::start`]: PeSTO's
//! material and tables and a few hand-set terms.

use std::sync::LazyLock;

use shakmaty::attacks::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};
use shakmaty::{Bitboard, Board, Chess, Color, Position, Role, Square};

use super::pesto::{EG_TABLE, EG_VALUE, MG_TABLE, MG_VALUE, PHASE_INC};

/// A middlegame/endgame pair of weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Weight {
    pub mg: i32,
    pub eg: i32,
}

const fn w(mg: i32, eg: i32) -> Weight {
    Weight { mg, eg }
}

/// Where each term's weights start in [`Params::w`], and how many it has.
pub mod index {
    /// Material by role (pawn … king; the king's never counts: both sides have one).
    pub const MATERIAL: usize = 0;
    /// Piece-square tables: role × 64, the square seen from White (a8 = 0, as PeSTO prints them).
    pub const PST: usize = MATERIAL + 6;
    /// Mobility by piece and number of safe squares: knight 0–8, bishop 0–13, rook 0–14, queen
    /// 0–27.
    pub const MOBILITY: [usize; 4] = [PST + 384, PST + 384 + 9, PST + 384 + 23, PST + 384 + 38];
    pub const MOBILITY_LEN: [usize; 4] = [9, 14, 15, 28];
    /// Passed pawn by relative rank (0 = own back rank).
    pub const PASSED: usize = MOBILITY[3] + 28;
    /// Passed pawn whose path to promotion is empty, by relative rank.
    pub const PASSED_FREE: usize = PASSED + 8;
    /// Passed pawn: per step of our king's distance from the square in front of it, by rank.
    pub const PASSED_OUR_KING: usize = PASSED_FREE + 8;
    /// Passed pawn: per step of their king's distance from the square in front of it, by rank.
    pub const PASSED_THEIR_KING: usize = PASSED_OUR_KING + 8;
    pub const ISOLATED: usize = PASSED_THEIR_KING + 8;
    pub const DOUBLED: usize = ISOLATED + 1;
    pub const BISHOP_PAIR: usize = DOUBLED + 1;
    /// Per own pawn on the three squares in front of the king.
    pub const KING_SHIELD: usize = BISHOP_PAIR + 1;
    /// By number of our pieces attacking the enemy king's zone (7 = seven or more).
    pub const KING_ATTACKERS: usize = KING_SHIELD + 1;
    /// Per attacked square of the enemy king's zone, by attacking piece (knight … queen).
    pub const KING_ZONE_ATTACKS: usize = KING_ATTACKERS + 8;
    /// Per enemy piece (knight … queen) attacked by one of our pawns.
    pub const THREAT_BY_PAWN: usize = KING_ZONE_ATTACKS + 4;
    /// Per enemy rook, queen attacked by one of our knights or bishops.
    pub const THREAT_BY_MINOR: usize = THREAT_BY_PAWN + 4;
    /// Per rook on a file without pawns, and on a file without our own pawns.
    pub const ROOK_OPEN: usize = THREAT_BY_MINOR + 2;
    pub const ROOK_SEMI_OPEN: usize = ROOK_OPEN + 1;
    /// The side to move's bonus.
    pub const TEMPO: usize = ROOK_SEMI_OPEN + 1;
    /// How many weights there are.
    pub const COUNT: usize = TEMPO + 1;
}
use index::*;

/// The evaluation's weights (centipawns), indexed by the constants of [`index`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub w: [Weight; COUNT],
}

/// The weights the engine plays with: `params.txt`, read once.
static TUNED: LazyLock<Params> = LazyLock::new(|| {
    Params::parse(include_str!("params.txt")).expect("src/engine/params.txt is well-formed")
});

impl Default for Params {
    fn default() -> Self {
        TUNED.clone()
    }
}

/// Why a parameter file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct ParamsError {
    pub line: usize,
    pub why: String,
}

impl Params {
    /// The tuner's starting point: PeSTO's material and piece-square tables, and hand-set values
    /// for the classical terms (the terms added for tuning start at zero).
    pub fn start() -> Params {
        let mut t = [Weight::default(); COUNT];
        for r in 0..6 {
            t[MATERIAL + r] = Weight {
                mg: MG_VALUE[r],
                eg: EG_VALUE[r],
            };
            for sq in 0..64 {
                t[PST + 64 * r + sq] = Weight {
                    mg: MG_TABLE[r][sq],
                    eg: EG_TABLE[r][sq],
                };
            }
        }
        // Mobility was (squares - baseline) × weight: the same line, one weight per count.
        let per_square = [w(4, 4), w(5, 5), w(2, 4), w(1, 2)];
        let baseline = [4, 6, 6, 12];
        for piece in 0..4 {
            for n in 0..MOBILITY_LEN[piece] {
                let k = n as i32 - baseline[piece];
                t[MOBILITY[piece] + n] = Weight {
                    mg: k * per_square[piece].mg,
                    eg: k * per_square[piece].eg,
                };
            }
        }
        let passed = [
            (0, 0),
            (2, 10),
            (5, 15),
            (10, 25),
            (20, 45),
            (35, 75),
            (60, 120),
            (0, 0),
        ];
        for (rank, (mg, eg)) in passed.into_iter().enumerate() {
            t[PASSED + rank] = Weight { mg, eg };
        }
        t[ISOLATED] = Weight { mg: -10, eg: -12 };
        t[DOUBLED] = Weight { mg: -8, eg: -20 };
        t[BISHOP_PAIR] = Weight { mg: 25, eg: 45 };
        t[KING_SHIELD] = Weight { mg: 10, eg: 0 };
        // Attackers of the king's zone counted a² × 6 in the middlegame.
        for a in 0..8 {
            t[KING_ATTACKERS + a] = Weight {
                mg: 6 * (a * a) as i32,
                eg: 0,
            };
        }
        t[TEMPO] = Weight { mg: 10, eg: 10 };
        Params { w: t }
    }

    /// The name of weight `i` in a parameter file, e.g. `pst.knight.e4` or `mobility.rook.7`.
    pub fn name(i: usize) -> String {
        const ROLES: [&str; 6] = ["pawn", "knight", "bishop", "rook", "queen", "king"];
        let range = |start: usize, len: usize| (start..start + len).contains(&i);
        if range(MATERIAL, 6) {
            return format!("material.{}", ROLES[i - MATERIAL]);
        }
        if range(PST, 384) {
            let (r, idx) = ((i - PST) / 64, (i - PST) % 64);
            // Index 0 is a8: the square seen from White is idx ^ 56.
            let sq = Square::new((idx ^ 56) as u32);
            return format!("pst.{}.{}", ROLES[r], sq);
        }
        for piece in 0..4 {
            if range(MOBILITY[piece], MOBILITY_LEN[piece]) {
                return format!("mobility.{}.{}", ROLES[piece + 1], i - MOBILITY[piece]);
            }
        }
        // Tables indexed by a number (a rank counted from our side, a number of attackers).
        let numbered = [
            (PASSED, 8, "passed"),
            (PASSED_FREE, 8, "passed_free"),
            (PASSED_OUR_KING, 8, "passed_our_king"),
            (PASSED_THEIR_KING, 8, "passed_their_king"),
            (KING_ATTACKERS, 8, "king_attackers"),
        ];
        for (start, len, prefix) in numbered {
            if range(start, len) {
                return format!("{prefix}.{}", i - start);
            }
        }
        if range(KING_ZONE_ATTACKS, 4) {
            return format!("king_zone_attacks.{}", ROLES[i - KING_ZONE_ATTACKS + 1]);
        }
        if range(THREAT_BY_MINOR, 2) {
            return format!("threat_by_minor.{}", ROLES[i - THREAT_BY_MINOR + 3]);
        }
        if range(THREAT_BY_PAWN, 4) {
            return format!("threat_by_pawn.{}", ROLES[i - THREAT_BY_PAWN + 1]);
        }
        match i {
            ISOLATED => "isolated",
            DOUBLED => "doubled",
            BISHOP_PAIR => "bishop_pair",
            KING_SHIELD => "king_shield",
            ROOK_OPEN => "rook_open_file",
            ROOK_SEMI_OPEN => "rook_semi_open_file",
            TEMPO => "tempo",
            _ => "unknown",
        }
        .to_string()
    }

    /// Reads a parameter file: one weight a line, `NAME MG EG` (names as [`Params::name`] gives
    /// them, each exactly once, in any order); `#` starts a comment.
    pub fn parse(text: &str) -> Result<Params, ParamsError> {
        let names: std::collections::HashMap<String, usize> =
            (0..COUNT).map(|i| (Params::name(i), i)).collect();
        let mut w = [Weight::default(); COUNT];
        let mut seen = [false; COUNT];
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let err = |why: String| ParamsError { line, why };
            let fields: Vec<&str> = content.split_whitespace().collect();
            let [name, mg, eg] = fields[..] else {
                return Err(err(format!(
                    "expected NAME MG EG, found {}",
                    crate::text::quote(content)
                )));
            };
            let Some(&i) = names.get(name) else {
                return Err(err(format!("unknown weight {}", crate::text::quote(name))));
            };
            if std::mem::replace(&mut seen[i], true) {
                return Err(err(format!("{name} given twice")));
            }
            let number = |s: &str| {
                s.parse::<i32>()
                    .map_err(|_| err(format!("{} is not a whole number", crate::text::quote(s))))
            };
            w[i] = Weight {
                mg: number(mg)?,
                eg: number(eg)?,
            };
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(ParamsError {
                line: text.lines().count(),
                why: format!("{} is missing", Params::name(i)),
            });
        }
        Ok(Params { w })
    }

    /// The parameter file [`Params::parse`] reads back.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (i, weight) in self.w.iter().enumerate() {
            out.push_str(&format!(
                "{} {} {}\n",
                Params::name(i),
                weight.mg,
                weight.eg
            ));
        }
        out
    }
}

/// Index of a role in the PeSTO arrays (pawn = 0 … king = 5).
#[inline]
pub fn role_index(role: Role) -> usize {
    role as usize - 1
}

/// The plain material value of a role (middlegame PeSTO value, king large) for SEE and ordering.
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20000];

#[inline]
pub fn see_value(role: Role) -> i32 {
    SEE_VALUE[role_index(role)]
}

const FILE_A: u64 = 0x0101_0101_0101_0101;

/// The files adjacent to each file, for isolated and passed pawns.
const ADJACENT_FILES: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        if f > 0 {
            t[f] |= FILE_A << (f - 1);
        }
        if f < 7 {
            t[f] |= FILE_A << (f + 1);
        }
        f += 1;
    }
    t
};

/// For each colour and square, the squares in front of a pawn there on its own and the adjacent
/// files: an enemy pawn in this span can stop it; none there means the pawn is passed.
const PASSED_SPAN: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let file = sq % 8;
        let rank = sq / 8;
        let files = ADJACENT_FILES[file] | FILE_A << file;
        let mut r = 0;
        while r < 8 {
            let rank_bb = 0xffu64 << (8 * r);
            if r > rank {
                t[1][sq] |= files & rank_bb; // White (index of Color::White is 1)
            }
            if r < rank {
                t[0][sq] |= files & rank_bb;
            }
            r += 1;
        }
        sq += 1;
    }
    t
};

/// All squares attacked by the given pawns, by shifting the whole set at once.
fn pawn_attack_span(color: Color, pawns: Bitboard) -> Bitboard {
    let p = pawns.0;
    let not_a = !FILE_A;
    let not_h = !(FILE_A << 7);
    Bitboard(match color {
        Color::White => ((p & not_a) << 7) | ((p & not_h) << 9),
        Color::Black => ((p & not_a) >> 9) | ((p & not_h) >> 7),
    })
}

fn adjacent_files(file: u32) -> Bitboard {
    Bitboard(ADJACENT_FILES[file as usize])
}

fn passed_span(color: Color, sq: Square) -> Bitboard {
    Bitboard(PASSED_SPAN[color as usize][sq as usize])
}

/// Where the terms of [`eval_terms`] go: each is "`count` times weight `index`, for `color`".
pub trait TermSink {
    fn add(&mut self, color: Color, index: usize, count: i32);
}

/// The search's term sink: White's middlegame and endgame sums minus Black's.
struct Sums<'a> {
    w: &'a [Weight; COUNT],
    mg: i32,
    eg: i32,
}

impl TermSink for Sums<'_> {
    #[inline(always)]
    fn add(&mut self, color: Color, index: usize, count: i32) {
        let weight = self.w[index];
        // Black's terms count against White: the same sums as two totals subtracted at the end.
        let count = match color {
            Color::White => count,
            Color::Black => -count,
        };
        self.mg += count * weight.mg;
        self.eg += count * weight.eg;
    }
}

/// The tuner's term sink: how often each weight counts, White's counts minus Black's.
#[derive(Clone, Debug)]
pub struct Trace {
    pub count: [i32; COUNT],
}

impl TermSink for Trace {
    #[inline]
    fn add(&mut self, color: Color, index: usize, count: i32) {
        match color {
            Color::White => self.count[index] += count,
            Color::Black => self.count[index] -= count,
        }
    }
}

/// What [`eval_terms`] returns beside the terms: how to blend them.
#[derive(Clone, Copy, Debug)]
pub struct Blend {
    /// The game phase, 24 (all pieces on the board: pure middlegame) down to 0 (pure endgame).
    pub phase: i32,
    /// The mop-up bonus (endgame, White's point of view), outside the tuned weights.
    pub mop_up: i32,
}

/// The static evaluation of `pos` in centipawns, from the side to move's point of view.
pub fn evaluate(pos: &Chess, params: &Params) -> i32 {
    // Counting squares is most of the evaluation's arithmetic: where the processor has a
    // population-count instruction (nearly every x86-64 made since 2008), the same code is
    // compiled with it; elsewhere with the portable bit-twiddling count. Same values either way.
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the processor has just been seen to have the instruction.
        return unsafe { evaluate_popcnt(pos, params) };
    }
    evaluate_with(pos, params)
}

/// [`evaluate`] compiled with the `popcnt` instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn evaluate_popcnt(pos: &Chess, params: &Params) -> i32 {
    evaluate_with(pos, params)
}

#[inline(always)]
fn evaluate_with(pos: &Chess, params: &Params) -> i32 {
    let mut sums = Sums {
        w: &params.w,
        mg: 0,
        eg: 0,
    };
    let board = pos.board();
    let pawns = PAWN_CACHE.with_borrow_mut(|cache| cache.get(board));
    let blend = terms_with(pos, &pawns, &mut sums);
    let mg_score = sums.mg;
    let eg_score = sums.eg + blend.mop_up;
    let score = (mg_score * blend.phase + eg_score * (24 - blend.phase)) / 24;
    match pos.turn() {
        Color::White => score,
        Color::Black => -score,
    }
}

/// The evaluation's terms of `pos` as counts per weight (White's point of view), for the tuner.
pub fn trace(pos: &Chess) -> (Trace, Blend) {
    let mut trace = Trace { count: [0; COUNT] };
    let blend = eval_terms(pos, &mut trace);
    (trace, blend)
}

/// Every term of the evaluation, into `sink`; the phase and the mop-up bonus returned.
pub fn eval_terms<S: TermSink>(pos: &Chess, sink: &mut S) -> Blend {
    terms_with(pos, &PawnInfo::of(pos.board()), sink)
}

/// What the pawns alone decide, per colour (indexed by `Color as usize`): the search keeps it in
/// [`PAWN_CACHE`], since pawn structures change far less often than the rest of the board.
/// Everything that also depends on the other pieces (a passed pawn's free path, the kings'
/// distances, the king's shield) is computed afresh from it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PawnInfo {
    /// Pawns with no own pawn on an adjacent file.
    isolated: [i32; 2],
    /// Pawns beyond the first on their file.
    doubled: [i32; 2],
    /// Pawns no enemy pawn can stop (none ahead on their own or an adjacent file).
    passed: [Bitboard; 2],
}

impl PawnInfo {
    fn of(board: &Board) -> PawnInfo {
        let mut info = PawnInfo::default();
        for us in Color::ALL {
            let c = us as usize;
            let our_pawns = board.pawns() & board.by_color(us);
            let their_pawns = board.pawns() & board.by_color(!us);
            for sq in our_pawns {
                if !adjacent_files(u32::from(sq.file())).intersects(our_pawns) {
                    info.isolated[c] += 1;
                }
                if !passed_span(us, sq).intersects(their_pawns) {
                    info.passed[c].add(sq);
                }
            }
            // Doubled pawns: the pawns minus the files with a pawn.
            let mut files = our_pawns.0;
            files |= files >> 32;
            files |= files >> 16;
            files |= files >> 8;
            info.doubled[c] = our_pawns.count() as i32 - (files & 0xff).count_ones() as i32;
        }
        info
    }
}

/// A table of [`PawnInfo`] by pawn structure, one per thread, each entry holding its full key
/// (both colours' pawns), so a lookup either finds exactly this structure or computes it.
struct PawnCache {
    entries: Vec<(Bitboard, Bitboard, PawnInfo)>,
}

impl PawnCache {
    /// 4,096 entries of 48 bytes: within the processor's second-level cache.
    const BITS: u32 = 12;

    fn get(&mut self, board: &Board) -> PawnInfo {
        let white = board.pawns() & board.white();
        let black = board.pawns() & board.black();
        if self.entries.is_empty() {
            // No structure has every square a pawn: this key is never looked up.
            let empty = (Bitboard::FULL, Bitboard::FULL, PawnInfo::default());
            self.entries = vec![empty; 1 << Self::BITS];
        }
        // Multiplicative hashing of the two sets: the top bits mix all of theirs.
        let mixed = white.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ black.0.wrapping_mul(0xC2B2_AE3D_27D4_EB4F).rotate_left(31);
        let entry = &mut self.entries[(mixed >> (64 - Self::BITS)) as usize];
        if entry.0 != white || entry.1 != black {
            *entry = (white, black, PawnInfo::of(board));
        }
        entry.2
    }
}

thread_local! {
    /// The search's pawn cache: each thread (Lazy SMP's helpers too) has its own.
    static PAWN_CACHE: std::cell::RefCell<PawnCache> =
        const { std::cell::RefCell::new(PawnCache { entries: Vec::new() }) };
}

/// [`eval_terms`] with the pawns' part already known.
#[inline(always)]
fn terms_with<S: TermSink>(pos: &Chess, pawns: &PawnInfo, sink: &mut S) -> Blend {
    let board = pos.board();
    let mut phase = 0;

    // Material and piece-square tables.
    // (By colour and role, straight from the bitboards: cheaper than asking each square.)
    for color in Color::ALL {
        let flip = match color {
            Color::White => 56,
            Color::Black => 0,
        };
        let ours = board.by_color(color);
        for role in Role::ALL {
            let r = role_index(role);
            let pieces = board.by_role(role) & ours;
            // Material and phase count the pieces at once; the tables go square by square.
            let n = pieces.count() as i32;
            sink.add(color, MATERIAL + r, n);
            phase += n * PHASE_INC[r];
            for sq in pieces {
                sink.add(color, PST + 64 * r + (sq as usize ^ flip), 1);
            }
        }
    }

    for color in Color::ALL {
        side_terms(board, pawns, color, sink);
    }
    sink.add(pos.turn(), TEMPO, 1);

    Blend {
        phase: phase.min(24),
        mop_up: mop_up(board),
    }
}

/// Mobility, threats, king safety, pawn structure, rooks on files and the bishop pair for one
/// side.
#[inline(always)]
fn side_terms<S: TermSink>(board: &Board, pawns: &PawnInfo, us: Color, sink: &mut S) {
    let them = !us;
    let occupied = board.occupied();
    let ours = board.by_color(us);
    let theirs = board.by_color(them);
    let our_pawns = board.pawns() & ours;
    let their_pawns = board.pawns() & theirs;

    // Squares guarded by enemy pawns are poor posts: don't count them as mobility.
    let pawn_guard = pawn_attack_span(them, their_pawns);
    let safe = !ours & !pawn_guard;
    let their_king_zone = board
        .king_of(them)
        .map(|k| king_attacks(k) | Bitboard::from_square(k))
        .unwrap_or(Bitboard::EMPTY);
    let their_major = (board.rooks() | board.queens()) & theirs;
    let mut attackers = 0;

    for (i, role) in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
        .into_iter()
        .enumerate()
    {
        for sq in board.by_role(role) & ours {
            let attacks = match role {
                Role::Knight => knight_attacks(sq),
                Role::Bishop => bishop_attacks(sq, occupied),
                Role::Rook => rook_attacks(sq, occupied),
                _ => bishop_attacks(sq, occupied) | rook_attacks(sq, occupied),
            };
            sink.add(us, MOBILITY[i] + (attacks & safe).count(), 1);
            let zone = attacks & their_king_zone;
            if zone.any() {
                attackers += 1;
                sink.add(us, KING_ZONE_ATTACKS + i, zone.count() as i32);
            }
            // A minor piece attacking a rook or a queen wins material unless it is answered.
            if i < 2 {
                let hit = attacks & their_major;
                if hit.any() {
                    let rooks = (hit & board.rooks()).count() as i32;
                    sink.add(us, THREAT_BY_MINOR, rooks);
                    sink.add(us, THREAT_BY_MINOR + 1, hit.count() as i32 - rooks);
                }
            }
            // Rooks want files free of pawns: of all pawns (open), of our own (semi-open).
            if role == Role::Rook {
                let file = Bitboard(FILE_A << u32::from(sq.file()));
                if !file.intersects(our_pawns) {
                    let open = !file.intersects(their_pawns);
                    sink.add(us, if open { ROOK_OPEN } else { ROOK_SEMI_OPEN }, 1);
                }
            }
        }
    }
    // King safety: how many of our pieces attack the enemy king's zone.
    sink.add(us, KING_ATTACKERS + attackers.min(7), 1);

    // Threats: enemy pieces attacked by our pawns.
    let pawn_hits = pawn_attack_span(us, our_pawns) & theirs;
    if pawn_hits.any() {
        for (i, role) in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .into_iter()
            .enumerate()
        {
            sink.add(
                us,
                THREAT_BY_PAWN + i,
                (pawn_hits & board.by_role(role)).count() as i32,
            );
        }
    }

    // The pawn shield: own pawns on the three squares in front of our king.
    let our_king = board.king_of(us);
    if let Some(k) = our_king {
        let ahead = match us {
            Color::White => k.rank().offset(1),
            Color::Black => k.rank().offset(-1),
        };
        if let Some(rank) = ahead {
            let front = king_attacks(k) & Bitboard::from_rank(rank);
            sink.add(us, KING_SHIELD, (front & our_pawns).count() as i32);
        }
    }

    // Pawn structure: isolated, doubled and passed pawns from the pawns alone ([`PawnInfo`]).
    let c = us as usize;
    if pawns.isolated[c] > 0 {
        sink.add(us, ISOLATED, pawns.isolated[c]);
    }
    let their_king = board.king_of(them);
    for sq in pawns.passed[c] {
        let file = u32::from(sq.file());
        let rel_rank = match us {
            Color::White => u32::from(sq.rank()),
            Color::Black => 7 - u32::from(sq.rank()),
        } as usize;
        // Only the rearmost pawn of a doubled pair is passed in earnest; the front one is
        // counted too, which is fine for a first evaluation.
        sink.add(us, PASSED + rel_rank, 1);
        // Nothing in the way to the promotion square.
        let path = passed_span(us, sq) & Bitboard(FILE_A << file);
        if !path.intersects(occupied) {
            sink.add(us, PASSED_FREE + rel_rank, 1);
        }
        // The kings' distances from the square in front: ours escorts, theirs blocks.
        let stop = match us {
            Color::White => sq.offset(8),
            Color::Black => sq.offset(-8),
        };
        if let Some(stop) = stop {
            if let Some(k) = our_king {
                sink.add(us, PASSED_OUR_KING + rel_rank, k.distance(stop) as i32);
            }
            if let Some(k) = their_king {
                sink.add(us, PASSED_THEIR_KING + rel_rank, k.distance(stop) as i32);
            }
        }
    }
    if pawns.doubled[c] > 0 {
        sink.add(us, DOUBLED, pawns.doubled[c]);
    }

    if (board.bishops() & ours).more_than_one() {
        sink.add(us, BISHOP_PAIR, 1);
    }
}

/// In a pawnless ending where one side has only its king, reward the stronger side for driving
/// that king to the edge and bringing its own king close: the technique of every basic mate.
/// Returned from White's point of view.
fn mop_up(board: &Board) -> i32 {
    if board.pawns().any() {
        return 0;
    }
    for strong in Color::ALL {
        let weak = !strong;
        if board.by_color(weak).count() == 1 && board.by_color(strong).count() > 1 {
            let (Some(wk), Some(sk)) = (board.king_of(weak), board.king_of(strong)) else {
                return 0;
            };
            let f = u32::from(wk.file()) as i32;
            let r = u32::from(wk.rank()) as i32;
            let center = (3 - f).max(f - 4) + (3 - r).max(r - 4);
            let kd = (u32::from(wk.file()) as i32 - u32::from(sk.file()) as i32).abs()
                + (u32::from(wk.rank()) as i32 - u32::from(sk.rank()) as i32).abs();
            let bonus = 10 * center + 4 * (14 - kd) + 200;
            return match strong {
                Color::White => bonus,
                Color::Black => -bonus,
            };
        }
    }
    0
}

/// Does the side to move have a piece other than pawns and king? (Null move is unsafe in pawn
/// endings, where zugzwang is common.)
pub fn has_non_pawn_material(pos: &Chess) -> bool {
    let b = pos.board();
    ((b.knights() | b.bishops() | b.rooks() | b.queens()) & pos.us()).any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::parse_fen;

    #[test]
    fn the_start_position_evaluates_to_the_tempo() {
        let p = Params::default();
        assert_eq!(evaluate(&Chess::default(), &p), p.w[TEMPO].mg);
        let start = Params::start();
        assert_eq!(evaluate(&Chess::default(), &start), 10);
    }

    #[test]
    fn mirrored_positions_evaluate_alike() {
        // The same position with colours swapped and the board flipped: the same score for
        // the side to move, whatever the weights.
        let p = Params::default();
        let pairs = [
            (
                "r1bqk2r/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQkq - 0 1",
                "r2qkb1r/pp2bppp/2n2n2/2pp4/3P4/2N1PN2/PP2BPPP/R1BQK2R b KQkq - 0 1",
            ),
            (
                "8/5k2/8/3P4/8/8/2K5/8 w - - 0 1",
                "8/2k5/8/8/3p4/8/5K2/8 b - - 0 1",
            ),
        ];
        for (a, b) in pairs {
            let (a, b) = (parse_fen(a).unwrap(), parse_fen(b).unwrap());
            assert_eq!(evaluate(&a, &p), evaluate(&b, &p));
        }
    }

    /// The tuner's view of `pos` as a score: its counts times the weights, blended by phase,
    /// from the side to move's point of view.
    fn traced_score(pos: &Chess, p: &Params) -> i32 {
        let (trace, blend) = trace(pos);
        let (mut mg, mut eg) = (0, blend.mop_up);
        for (n, weight) in trace.count.iter().zip(&p.w) {
            mg += n * weight.mg;
            eg += n * weight.eg;
        }
        let white = (mg * blend.phase + eg * (24 - blend.phase)) / 24;
        if pos.turn() == Color::White {
            white
        } else {
            -white
        }
    }

    #[test]
    fn the_trace_gives_the_same_score() {
        // The tuner's view of a position (counts × weights, blended) is the search's score.
        let p = Params::default();
        for fen in [
            "r1bqk2r/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQkq - 0 1",
            "8/5k2/8/3P4/8/8/2K5/R7 b - - 0 1",
            "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        ] {
            let pos = parse_fen(fen).unwrap();
            assert_eq!(evaluate(&pos, &p), traced_score(&pos, &p), "{fen}");
        }
    }

    #[test]
    fn the_pawn_cache_gives_what_the_pawns_give() {
        // Every position two plies from these, through one cache: each lookup, hit or miss,
        // is the structure's own `PawnInfo`, and the evaluation the trace's.
        let mut cache = PawnCache {
            entries: Vec::new(),
        };
        let p = Params::default();
        for fen in [
            "r1bqk2r/pp2bppp/2n1pn2/3p4/2PP4/2N2N2/PP2BPPP/R2QKB1R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
        ] {
            let root = parse_fen(fen).unwrap();
            for m in root.legal_moves() {
                let child = root.clone().play(m).unwrap();
                for m2 in child.legal_moves() {
                    let pos = child.clone().play(m2).unwrap();
                    for _ in 0..2 {
                        assert_eq!(cache.get(pos.board()), PawnInfo::of(pos.board()));
                    }
                    assert_eq!(evaluate(&pos, &p), traced_score(&pos, &p));
                }
            }
        }
    }

    #[test]
    fn parameter_files_read_back() {
        let p = Params::start();
        assert_eq!(Params::parse(&p.to_text()), Ok(p.clone()));
        let names: std::collections::HashSet<String> = (0..COUNT).map(Params::name).collect();
        assert_eq!(names.len(), COUNT, "every weight has a name of its own");
        assert!(!names.contains("unknown"));
        let bad = p.to_text().replace("tempo 10 10", "tempo ten 10");
        let err = Params::parse(&bad).unwrap_err();
        assert!(err.to_string().contains("not a whole number"), "{err}");
        let missing = p.to_text().replace("tempo 10 10\n", "");
        assert!(
            Params::parse(&missing)
                .unwrap_err()
                .why
                .contains("tempo is missing")
        );
    }

    #[test]
    fn pawn_spans_match_shakmaty() {
        use shakmaty::attacks::pawn_attacks;
        for color in Color::ALL {
            for sq in Square::ALL {
                let one = Bitboard::from_square(sq);
                assert_eq!(
                    pawn_attack_span(color, one),
                    pawn_attacks(color, sq),
                    "{sq:?}"
                );
            }
        }
        // A white pawn on e4 is stopped by a black pawn on d5, not by one on d3.
        assert!(passed_span(Color::White, Square::E4).contains(Square::D5));
        assert!(!passed_span(Color::White, Square::E4).contains(Square::D3));
        assert!(passed_span(Color::Black, Square::E4).contains(Square::F2));
    }

    #[test]
    fn a_queen_up_is_winning() {
        let p = Params::default();
        let pos = parse_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1").unwrap();
        assert!(evaluate(&pos, &p) > 800);
        let pos = parse_fen("4k3/8/8/8/8/8/8/3QK3 b - - 0 1").unwrap();
        assert!(evaluate(&pos, &p) < -800);
    }
}
