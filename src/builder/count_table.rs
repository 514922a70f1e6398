//! The tally: how often each (position, move) was played and what it scored.
//!
//! Keys are spread over 256 partitions by their top byte, so that the partitions in order are the
//! book's key order, each grows on its own (no single huge reallocation), and several threads can
//! count at once, each owning some partitions. A partition is an open-addressing table with linear
//! probing on the key alone, as in polyglot: all the moves of one position sit in one run of
//! slots, which makes polyglot's "halve every move of the position" step a short scan.
//!
//! Each slot remembers its rank: the how-manieth distinct move of its position it was when first
//! seen. Ties in weight are written in that order, as polyglot's stable sort writes them.
//!
//! When the table would outgrow its memory budget it is written to disk as a sorted run
//! ([`super::spill`]) and emptied; the runs are merged at the end.

use std::mem::size_of;

use byteorder::{ByteOrder, LittleEndian};

use super::RatingSums;
use super::game::{BLACK_MOVED, GameRatings, Ply};

/// polyglot's COUNT_MAX: when a move's game count reaches it, every move of the position is halved.
pub const COUNT_MAX: u16 = 16384;

/// Number of partitions (by the key's top byte).
pub const PARTITIONS: usize = 256;

/// The partition of a key: its top byte (so partitions in order are keys in order).
pub fn partition(key: u64) -> usize {
    (key >> 56) as usize
}

/// Which (position, move) counts can become book entries: at least `min_games` games, and some
/// points unless `pointless` (`--weights nag`, where a move marked `?` is kept at weight 0).
#[derive(Clone, Copy, Debug)]
pub struct Keep {
    pub min_games: u64,
    pub pointless: bool,
}

impl Keep {
    #[inline]
    pub fn keeps(&self, n: u64, points: u64) -> bool {
        n >= self.min_games && (points > 0 || self.pointless)
    }
}

/// The counters kept per (position, move).
pub trait Counts: Copy + Default + Send + 'static {
    /// What these counts become in spilled runs and in the output: exact 64-bit counts.
    type Wide: WideCounts;
    /// Counts one more game in which the mover scored `points` (2, 1 or 0).
    fn add(&mut self, points: u8);
    /// Counts `ply`'s game (`games`: its chunk's [`GameRatings`], for counts that keep them).
    #[inline]
    fn add_ply(&mut self, ply: &Ply, _games: &[GameRatings]) {
        self.add(ply.points);
    }
    fn widen(&self) -> Self::Wide;
    /// Whether this entry's counts trigger polyglot's halving of the whole position.
    fn needs_halving(&self) -> bool;
    /// polyglot's halving, rounding up.
    fn halve(&mut self);
    fn n(&self) -> u64;
    fn points(&self) -> u64;
    fn wins(&self) -> u64;
}

/// polyglot's counters: 16-bit, halved at [`COUNT_MAX`] games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolyglotCounts {
    pub n: u16,
    pub sum: u16,
}

impl Counts for PolyglotCounts {
    #[inline]
    fn add(&mut self, points: u8) {
        self.n += 1;
        self.sum += u16::from(points);
    }
    #[inline]
    fn needs_halving(&self) -> bool {
        self.n >= COUNT_MAX
    }
    fn halve(&mut self) {
        self.n = self.n.div_ceil(2);
        self.sum = self.sum.div_ceil(2);
    }
    fn n(&self) -> u64 {
        self.n.into()
    }
    fn points(&self) -> u64 {
        self.sum.into()
    }
    fn wins(&self) -> u64 {
        0
    }
    type Wide = ExactCounts;
    fn widen(&self) -> ExactCounts {
        ExactCounts {
            n: self.n.into(),
            points: self.sum.into(),
            wins: 0,
        }
    }
}

/// Exact 64-bit counters for the `games` and `wins` weight schemes: never halved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExactCounts {
    pub n: u64,
    pub points: u64,
    pub wins: u64,
}

impl Counts for ExactCounts {
    #[inline]
    fn add(&mut self, points: u8) {
        self.n += 1;
        self.points += u64::from(points);
        self.wins += u64::from(points == 2);
    }
    fn needs_halving(&self) -> bool {
        false
    }
    fn halve(&mut self) {}
    fn n(&self) -> u64 {
        self.n
    }
    fn points(&self) -> u64 {
        self.points
    }
    fn wins(&self) -> u64 {
        self.wins
    }
    type Wide = ExactCounts;
    fn widen(&self) -> ExactCounts {
        *self
    }
}

/// Counts as they are written to spilled runs and handed to the output: exact, and summed when
/// runs are merged.
pub trait WideCounts: Counts<Wide = Self> {
    /// Whether they keep the games' ratings and dates (`tally --ratings`).
    const RATED: bool;
    /// Bytes of a spilled record's counts.
    const BYTES: usize;
    fn write(&self, buf: &mut [u8]);
    fn read(buf: &[u8]) -> Self;
    /// Adds the counts of the same pair from another run.
    fn merge(&mut self, other: &Self);
    fn exact(&self) -> ExactCounts;
    /// The ratings and dates (zero when not kept).
    fn rating(&self) -> RatingSums;
}

impl WideCounts for ExactCounts {
    const RATED: bool = false;
    const BYTES: usize = 24;
    fn write(&self, buf: &mut [u8]) {
        LittleEndian::write_u64(&mut buf[0..8], self.n);
        LittleEndian::write_u64(&mut buf[8..16], self.points);
        LittleEndian::write_u64(&mut buf[16..24], self.wins);
    }
    fn read(buf: &[u8]) -> Self {
        ExactCounts {
            n: LittleEndian::read_u64(&buf[0..8]),
            points: LittleEndian::read_u64(&buf[8..16]),
            wins: LittleEndian::read_u64(&buf[16..24]),
        }
    }
    #[inline]
    fn merge(&mut self, other: &Self) {
        self.n += other.n;
        self.points += other.points;
        self.wins += other.wins;
    }
    #[inline]
    fn exact(&self) -> ExactCounts {
        *self
    }
    #[inline]
    fn rating(&self) -> RatingSums {
        RatingSums::default()
    }
}

/// Exact counts and, over the games where both players are rated, the sums of the mover's and
/// the opponent's ratings; and the latest date (`tally --ratings`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RatedCounts {
    pub exact: ExactCounts,
    pub rating: RatingSums,
}

impl Counts for RatedCounts {
    type Wide = RatedCounts;
    fn add(&mut self, points: u8) {
        self.exact.add(points);
    }
    #[inline]
    fn add_ply(&mut self, ply: &Ply, games: &[GameRatings]) {
        self.exact.add(ply.points);
        let Some(game) = games.get(ply.game as usize) else {
            return;
        };
        if game.rated() {
            let (mover, opponent) = if ply.mv & BLACK_MOVED != 0 {
                (game.black, game.white)
            } else {
                (game.white, game.black)
            };
            self.rating.rated_games += 1;
            self.rating.mover_sum += u64::from(mover);
            self.rating.opponent_sum += u64::from(opponent);
        }
        self.rating.last_date = self.rating.last_date.max(game.date);
    }
    fn widen(&self) -> RatedCounts {
        *self
    }
    fn needs_halving(&self) -> bool {
        false
    }
    fn halve(&mut self) {}
    fn n(&self) -> u64 {
        self.exact.n
    }
    fn points(&self) -> u64 {
        self.exact.points
    }
    fn wins(&self) -> u64 {
        self.exact.wins
    }
}

impl WideCounts for RatedCounts {
    const RATED: bool = true;
    const BYTES: usize = ExactCounts::BYTES + 28;
    fn write(&self, buf: &mut [u8]) {
        self.exact.write(buf);
        let r = &self.rating;
        LittleEndian::write_u64(&mut buf[24..32], r.rated_games);
        LittleEndian::write_u64(&mut buf[32..40], r.mover_sum);
        LittleEndian::write_u64(&mut buf[40..48], r.opponent_sum);
        LittleEndian::write_u32(&mut buf[48..52], r.last_date);
    }
    fn read(buf: &[u8]) -> Self {
        RatedCounts {
            exact: ExactCounts::read(buf),
            rating: RatingSums {
                rated_games: LittleEndian::read_u64(&buf[24..32]),
                mover_sum: LittleEndian::read_u64(&buf[32..40]),
                opponent_sum: LittleEndian::read_u64(&buf[40..48]),
                last_date: LittleEndian::read_u32(&buf[48..52]),
            },
        }
    }
    fn merge(&mut self, other: &Self) {
        self.exact.merge(&other.exact);
        self.rating.add(&other.rating);
    }
    fn exact(&self) -> ExactCounts {
        self.exact
    }
    fn rating(&self) -> RatingSums {
        self.rating
    }
}

/// One slot of a partition. `mv == 0` marks an empty slot (a1a1 is no move).
#[derive(Clone, Copy, Debug, Default)]
struct Slot<C> {
    key: u64,
    /// The Polyglot move, bit 15 set when Black moved.
    mv: u16,
    rank: u16,
    counts: C,
}

/// One (position, move) with its counts, as the tally hands it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tallied<C> {
    pub key: u64,
    pub mv: u16,
    /// Order of first appearance among the moves of this position: (run, rank within the run).
    pub first: u64,
    pub counts: C,
}

#[derive(Default)]
struct Partition<C> {
    slots: Vec<Slot<C>>,
    len: usize,
}

impl<C: Counts> Partition<C> {
    #[inline]
    fn home(&self, key: u64) -> usize {
        // The top byte chose the partition; the rest is uniformly spread.
        ((u128::from(key << 8) * self.slots.len() as u128) >> 64) as usize
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() { 0 } else { i + 1 }
    }

    /// Past 3/4 full, linear probing's misses get long (8.5 probes on average at 3/4, 32 at
    /// 7/8), and inserting new pairs is most of what a build does.
    fn needs_growth(&self) -> bool {
        (self.len + 1) * 4 > self.slots.len() * 3
    }

    /// The next size: half as large again, or, once a tenth of the input is counted, room for
    /// what the partition will hold at the end, foreseen as what it holds now scaled to the
    /// whole input (an overestimate, since the openings repeat: at most about 1.4 times the final
    /// count at a tenth, less later), at most four times as large.
    fn grown_capacity(&self, progress: Option<f64>) -> usize {
        let step = (self.slots.len() * 3 / 2).max(64);
        match progress {
            Some(done) if done >= 0.1 => {
                let foreseen = (self.len as f64 / done * 4.0 / 3.0) as usize;
                foreseen.clamp(step, step.max(self.slots.len() * 4))
            }
            _ => step,
        }
    }

    fn resize(&mut self, capacity: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); capacity]);
        for slot in old.into_iter().filter(|s| s.mv != 0) {
            let mut i = self.home(slot.key);
            while self.slots[i].mv != 0 {
                i = self.next(i);
            }
            self.slots[i] = slot;
        }
    }

    #[inline]
    fn add(&mut self, ply: Ply, games: &[GameRatings]) {
        let home = self.home(ply.key);
        let mut i = home;
        let mut rank = 0u16;
        let halve = loop {
            let slot = &mut self.slots[i];
            if slot.mv == 0 {
                *slot = Slot {
                    key: ply.key,
                    mv: ply.mv,
                    rank,
                    counts: C::default(),
                };
                slot.counts.add_ply(&ply, games);
                self.len += 1;
                break slot.counts.needs_halving();
            }
            if slot.key == ply.key {
                if slot.mv == ply.mv {
                    slot.counts.add_ply(&ply, games);
                    break slot.counts.needs_halving();
                }
                rank += 1;
            }
            i = self.next(i);
        };
        if halve {
            let mut i = home;
            while self.slots[i].mv != 0 {
                if self.slots[i].key == ply.key {
                    self.slots[i].counts.halve();
                }
                i = self.next(i);
            }
        }
    }

    /// The partition's entries sorted by key (with `Some(keep)`: only those it keeps); the
    /// partition is emptied.
    ///
    /// The home slot grows with the key, so the table is already nearly in key order: an entry
    /// sits at most its probe distance after its place, or, when its probe wrapped around the
    /// end, at the start. Those few go to the end, and an insertion sort does the rest in about
    /// linear time.
    fn drain_sorted(&mut self, run: u64, keep: Option<Keep>) -> Vec<Tallied<C>> {
        let mut out: Vec<Tallied<C>> = Vec::with_capacity(self.len);
        let mut wrapped: Vec<Tallied<C>> = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            if s.mv == 0 || keep.is_some_and(|k| !k.keeps(s.counts.n(), s.counts.points())) {
                continue;
            }
            let t = Tallied {
                key: s.key,
                mv: s.mv,
                first: (run << 16) | u64::from(s.rank),
                counts: s.counts,
            };
            if self.home(s.key) > i {
                wrapped.push(t);
            } else {
                out.push(t);
            }
        }
        out.append(&mut wrapped);
        insertion_sort_by_key(&mut out, |t| (t.key, t.first));
        *self = Partition::default();
        out
    }
}

/// Sorts `v` by `key`, in time proportional to its length plus how far its elements are from
/// their places: for input that is nearly sorted. Input far from sorted is handed to the
/// standard sort before that costs more than it would.
fn insertion_sort_by_key<T: Copy, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    let mut budget = 64 * v.len();
    for i in 1..v.len() {
        let item = v[i];
        let k = key(&item);
        let mut j = i;
        while j > 0 && key(&v[j - 1]) > k {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = item;
        budget = match budget.checked_sub(i - j) {
            Some(b) => b,
            None => return v.sort_unstable_by_key(key),
        };
    }
}

/// The counts of the partitions one thread owns.
pub struct Tally<C> {
    parts: Vec<Partition<C>>,
    /// Bytes held by all partitions' slot arrays.
    bytes: usize,
    /// Past this many bytes the tally spills instead of growing (`None`: never).
    budget: Option<usize>,
    distinct: u64,
    /// How far into the input the plies being counted come from (0 to 1), when known.
    progress: Option<f64>,
}

/// What the tally asks its owner to do before it can go on.
pub enum Pressure {
    /// Nothing: the ply was counted.
    None,
    /// The budget is reached: spill, then count the ply again.
    Spill,
}

impl<C: Counts> Tally<C> {
    pub fn new(budget: Option<usize>) -> Self {
        Tally {
            parts: (0..PARTITIONS).map(|_| Partition::default()).collect(),
            bytes: 0,
            budget,
            distinct: 0,
            progress: None,
        }
    }

    /// Tells how far into the input the next plies come from (0 to 1), so that partitions can
    /// grow straight to about their final size.
    pub fn set_progress(&mut self, progress: Option<f64>) {
        self.progress = progress;
    }

    /// The memory one (position, move) takes in a full slot.
    pub const SLOT_BYTES: usize = size_of::<Slot<C>>();

    /// Hints the processor to fetch the slot where `key` will be looked up, so that counting a
    /// stream of plies overlaps their cache misses instead of waiting for each in turn.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        let part = &self.parts[(key >> 56) as usize];
        if part.slots.is_empty() {
            return;
        }
        let slot: *const Slot<C> = &part.slots[part.home(key)];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint; the pointer is in bounds and never dereferenced here.
        unsafe {
            std::arch::x86_64::_mm_prefetch(slot.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// Counts one ply (`games`: its chunk's games, for counts that keep their ratings), unless
    /// the table must first be spilled.
    #[inline]
    pub fn add(&mut self, ply: Ply, games: &[GameRatings]) -> Pressure {
        self.add_within(ply, games, true)
    }

    /// Counts one ply, growing past the budget if need be.
    pub fn add_anyway(&mut self, ply: Ply, games: &[GameRatings]) {
        let _ = self.add_within(ply, games, false);
    }

    #[inline]
    fn add_within(&mut self, ply: Ply, games: &[GameRatings], budgeted: bool) -> Pressure {
        let p = (ply.key >> 56) as usize;
        let part = &mut self.parts[p];
        if part.needs_growth() {
            let old = part.slots.len();
            let over = |new: usize| {
                budgeted
                    && self.budget.is_some_and(|budget| {
                        self.bytes + (new - old) * Self::SLOT_BYTES > budget && self.distinct > 0
                    })
            };
            let mut new = part.grown_capacity(self.progress);
            if over(new) {
                // Short of room for the foreseen size, grow by the smallest step.
                new = part.grown_capacity(None);
                if over(new) {
                    return Pressure::Spill;
                }
            }
            part.resize(new);
            self.bytes += (new - old) * Self::SLOT_BYTES;
        }
        let before = part.len;
        part.add(ply, games);
        self.distinct += (part.len - before) as u64;
        Pressure::None
    }

    pub fn is_empty(&self) -> bool {
        self.distinct == 0
    }

    /// Every entry of partition `p`, sorted by key; the partition is emptied.
    pub fn drain_partition(&mut self, p: usize, run: u64) -> Vec<Tallied<C>> {
        self.drain_partition_with(p, run, None).0
    }

    /// The entries of partition `p` sorted by key, or with `Some(keep)` only those that can
    /// become book entries; the partition is emptied. Also returns how many entries it held.
    pub fn drain_partition_with(
        &mut self,
        p: usize,
        run: u64,
        keep: Option<Keep>,
    ) -> (Vec<Tallied<C>>, u64) {
        let part = &mut self.parts[p];
        let held = part.len as u64;
        self.bytes -= part.slots.len() * Self::SLOT_BYTES;
        self.distinct -= held;
        (part.drain_sorted(run, keep), held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ply(key: u64, mv: u16, points: u8) -> Ply {
        Ply {
            key,
            mv,
            points,
            game: 0,
        }
    }

    #[test]
    fn counts_ranks_and_halving() {
        let mut t: Tally<PolyglotCounts> = Tally::new(None);
        let key = 0x1234_5678_9abc_def0;
        t.add(ply(key, 7, 2), &[]);
        t.add(ply(key, 9, 1), &[]);
        t.add(ply(key, 7, 0), &[]);
        for _ in 0..(COUNT_MAX - 2) {
            t.add(ply(key, 7, 1), &[]);
        }
        // Move 7 reached 16384 games: both moves were halved, rounding up.
        let out = t.drain_partition((key >> 56) as usize, 0);
        assert_eq!(out.len(), 2);
        let m7 = out.iter().find(|e| e.mv == 7).unwrap();
        let m9 = out.iter().find(|e| e.mv == 9).unwrap();
        assert_eq!(m7.counts, PolyglotCounts { n: 8192, sum: 8192 });
        assert_eq!(m9.counts, PolyglotCounts { n: 1, sum: 1 });
        assert_eq!((m7.first, m9.first), (0, 1));
        assert!(t.is_empty());
    }

    #[test]
    fn the_adaptive_sort_sorts_any_input() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 2, 7, 100, 5000] {
            for shuffled in [false, true] {
                let mut v: Vec<(u64, u64)> = (0..len as u64).map(|i| (i / 3, i % 3)).collect();
                if shuffled {
                    for i in (1..v.len()).rev() {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        v.swap(i, (x % (i as u64 + 1)) as usize);
                    }
                } else if len > 4 {
                    v.swap(1, 3);
                }
                let mut want = v.clone();
                want.sort();
                insertion_sort_by_key(&mut v, |&e| e);
                assert_eq!(v, want);
            }
        }
    }

    #[test]
    fn many_keys_survive_growth() {
        for progress in [None, Some(0.05), Some(0.1), Some(0.5), Some(1.0)] {
            many_keys_survive_growth_at(progress);
        }
    }

    fn many_keys_survive_growth_at(progress: Option<f64>) {
        let mut t: Tally<ExactCounts> = Tally::new(None);
        t.set_progress(progress);
        for i in 0..100_000u64 {
            let key = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            t.add(ply(key, 1, 2), &[]);
            t.add(ply(key, 1, 0), &[]);
        }
        assert_eq!(t.distinct, 100_000);
        let mut total = 0;
        for p in 0..PARTITIONS {
            let part = t.drain_partition(p, 0);
            assert!(part.windows(2).all(|w| w[0].key <= w[1].key));
            total += part
                .iter()
                .map(|e| {
                    assert_eq!((e.counts.n, e.counts.points, e.counts.wins), (2, 2, 1));
                    1
                })
                .sum::<u64>();
        }
        assert_eq!(total, 100_000);
    }

    #[test]
    fn a_budget_asks_for_a_spill() {
        let mut t: Tally<PolyglotCounts> = Tally::new(Some(64 * 1024));
        let mut spilled = false;
        for i in 0..100_000u64 {
            if let Pressure::Spill = t.add(ply(i.wrapping_mul(0x9e37_79b9_7f4a_7c15), 1, 1), &[]) {
                spilled = true;
                break;
            }
        }
        assert!(spilled);
        assert!(t.bytes <= 64 * 1024);
    }
}
