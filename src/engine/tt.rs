//! The transposition table: search results by position, shared lock-free.
//!
//! Each entry is two `AtomicU64`: the data word and the key XOR the data. A reader accepts an entry
//! only when `key_word ^ data == key`, so a torn write by another thread (Lazy SMP's helpers) reads as
//! a miss instead of as a wrong move. Mate scores are stored relative to the node (see
//! [`score::to_tt`]) so that they stay right when the position is reached at another ply.
//!
//! The data word: the move (16 bits, a [`PackedMove`]), the score and the static evaluation (16
//! bits each), the depth + 1 (8 bits), the bound (2 bits) and the search's generation (6 bits).

use std::sync::atomic::{AtomicU64, Ordering};

use super::packed_move::PackedMove;
use super::score::{self, Score16};

/// What a stored score means relative to the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true score is at least this (a beta cutoff).
    Lower = 1,
    /// The true score is at most this (no move raised alpha).
    Upper = 2,
    Exact = 3,
}

/// One probed entry.
#[derive(Clone, Copy, Debug)]
pub struct TtEntry {
    /// The best move found ([`PackedMove::NONE`] for none).
    pub mv: PackedMove,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

#[repr(C)]
struct Slot {
    key: AtomicU64,
    data: AtomicU64,
}

/// Where the slots live: an anonymous memory map marked for transparent huge pages where the
/// system allows it (the table is probed at random, so with 4 KB pages nearly every probe also
/// misses the TLB), else an ordinary vector.
enum Storage {
    Mapped { map: memmap2::MmapMut, len: usize },
    Heap(Vec<Slot>),
}

impl Storage {
    fn new(n: usize) -> Storage {
        if let Ok(map) = memmap2::MmapMut::map_anon(n * std::mem::size_of::<Slot>()) {
            #[cfg(target_os = "linux")]
            {
                // Only a hint: without huge pages the table works the same, a little slower.
                let _ = map.advise(memmap2::Advice::HugePage);
            }
            return Storage::Mapped { map, len: n };
        }
        Storage::Heap(
            (0..n)
                .map(|_| Slot {
                    key: AtomicU64::new(0),
                    data: AtomicU64::new(0),
                })
                .collect(),
        )
    }

    fn slots(&self) -> &[Slot] {
        match self {
            // SAFETY: the map is `len` slots long, page-aligned (more than `Slot`'s alignment of
            // 8), zero-filled by the system (zero is a valid `AtomicU64`), lives as long as `self`,
            // and is only ever accessed through the atomics.
            Storage::Mapped { map, len } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<Slot>(), *len)
            },
            Storage::Heap(v) => v,
        }
    }
}

/// Slots per line of the dirty map: 4 slots of 16 bytes, one 64-byte cache line.
const LINE_SLOTS: usize = 4;

pub struct TranspositionTable {
    slots: Storage,
    mask: usize,
    generation: u8,
    /// One bit per line of [`LINE_SLOTS`] slots, set by the first store into the line since the
    /// last clear: `clear` zeroes only those lines. A short search (`bench` clears before each
    /// of its positions) writes a few percent of a table, and writing all of it each time cost
    /// more than many of the searches.
    dirty: Vec<AtomicU64>,
}

impl TranspositionTable {
    /// A table of about `mb` megabytes (rounded down to a power of two entries; at least 1 MB).
    pub fn new(mb: usize) -> Self {
        let bytes = mb.max(1) * 1024 * 1024;
        let n = (bytes / std::mem::size_of::<Slot>()).next_power_of_two() / 2;
        let n = n.max(1024);
        let lines = n.div_ceil(LINE_SLOTS);
        TranspositionTable {
            slots: Storage::new(n),
            mask: n - 1,
            generation: 0,
            dirty: (0..lines.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Empties the table: every slot written since the last clear (the dirty lines) back to
    /// zero, which is an empty slot (both words zero), as the system gives a new map.
    pub fn clear(&mut self) {
        // `&mut self`: no other thread holds the table, so plain writes do, far quicker than a
        // store per atomic.
        let slots: &mut [Slot] = match &mut self.slots {
            // SAFETY: as in `Storage::slots`; `&mut self` makes the access exclusive.
            Storage::Mapped { map, len } => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<Slot>(), *len)
            },
            Storage::Heap(v) => v,
        };
        let empty = |slots: &mut [Slot]| {
            for s in slots {
                *s.key.get_mut() = 0;
                *s.data.get_mut() = 0;
            }
        };
        let len = slots.len();
        for (w, word) in self.dirty.iter_mut().enumerate() {
            let mut bits = std::mem::take(word.get_mut());
            let first = w * 64 * LINE_SLOTS;
            if bits == u64::MAX {
                // All 64 lines of this word: one run of 4 KB.
                empty(&mut slots[first..(first + 64 * LINE_SLOTS).min(len)]);
                continue;
            }
            while bits != 0 {
                let start = first + bits.trailing_zeros() as usize * LINE_SLOTS;
                bits &= bits - 1;
                empty(&mut slots[start..(start + LINE_SLOTS).min(len)]);
            }
        }
        self.generation = 0;
    }

    /// Marks the line of slot `index` as written (see `dirty`).
    #[inline]
    fn mark_dirty(&self, index: usize) {
        let line = index / LINE_SLOTS;
        let word = &self.dirty[line / 64];
        let bit = 1u64 << (line % 64);
        // Most stores go to lines already marked: a plain load is enough to see it.
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// Has the system allocate the table's pages now (`MADV_POPULATE_WRITE`; elsewhere, or on
    /// an older kernel, they come when first touched). A fresh table's pages are otherwise
    /// allocated by the search, one fault at a time: with 1 GB, its first thousand nodes took
    /// most of a second.
    pub fn populate(&self) {
        #[cfg(target_os = "linux")]
        if let Storage::Mapped { map, .. } = &self.slots {
            let _ = map.advise(memmap2::Advice::PopulateWrite);
        }
    }

    /// A new search begins: older entries become preferred victims.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 0x3f;
    }

    fn slot(&self, key: u64) -> &Slot {
        &self.slots.slots()[(key as usize) & self.mask]
    }

    /// Asks the CPU to start loading the slot of `key`, so that the probe a little later doesn't
    /// wait for memory: the table is far larger than the caches, and this miss is the single
    /// largest cost of a node.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let slot: *const Slot = self.slot(key);
            // SAFETY: prefetching only hints the cache; any address is allowed, and this one is
            // a valid slot of the table.
            #[allow(unused_unsafe)]
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    slot.cast::<i8>(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    pub fn probe(&self, key: u64, ply: usize) -> Option<TtEntry> {
        let slot = self.slot(key);
        let data = slot.data.load(Ordering::Relaxed);
        let k = slot.key.load(Ordering::Relaxed);
        if k ^ data != key || data == 0 {
            return None;
        }
        let mv = PackedMove::from_bits(data as u16);
        let score = score::from_tt((data >> 16) as u16 as Score16 as i32, ply);
        let eval = (data >> 32) as u16 as Score16 as i32;
        let depth = ((data >> 48) as u8) as i32 - 1;
        let bound = match (data >> 56) & 3 {
            1 => Bound::Lower,
            2 => Bound::Upper,
            _ => Bound::Exact,
        };
        Some(TtEntry {
            mv,
            score,
            eval,
            depth,
            bound,
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        key: u64,
        ply: usize,
        mv: PackedMove,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let slot = self.slot(key);
        let old = slot.data.load(Ordering::Relaxed);
        let old_key = slot.key.load(Ordering::Relaxed) ^ old;
        let old_depth = ((old >> 48) as u8) as i32 - 1;
        let old_gen = ((old >> 58) & 0x3f) as u8;
        // Replace unless the slot holds a deeper result of this same search for another
        // position; always keep the old move when storing a result without one.
        if old != 0
            && old_key != key
            && old_gen == self.generation
            && old_depth > depth + 2
            && bound != Bound::Exact
        {
            return;
        }
        let mv = if mv.is_none() && old_key == key {
            old as u16
        } else {
            mv.bits()
        };
        let score = score::to_tt(score, ply) as Score16 as u16 as u64;
        let eval = eval.clamp(-32000, 32000) as Score16 as u16 as u64;
        let depth = (depth + 1).clamp(0, 255) as u64;
        let data = mv as u64
            | score << 16
            | eval << 32
            | depth << 48
            | (bound as u64) << 56
            | (self.generation as u64) << 58;
        self.mark_dirty((key as usize) & self.mask);
        slot.data.store(data, Ordering::Relaxed);
        slot.key.store(key ^ data, Ordering::Relaxed);
    }

    /// Permille of the first thousand slots used in this search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let slots = self.slots.slots();
        let n = slots.len().min(1000);
        let used = slots[..n]
            .iter()
            .filter(|s| {
                let d = s.data.load(Ordering::Relaxed);
                d != 0 && ((d >> 58) & 0x3f) as u8 == self.generation
            })
            .count();
        (used * 1000 / n) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::score::MATE;

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        let tt = TranspositionTable::new(1);
        // Found at ply 5: mate delivered at ply 9 from the root, i.e. 4 plies from the node.
        tt.store(
            42,
            5,
            PackedMove::from_bits(7),
            MATE - 9,
            0,
            3,
            Bound::Exact,
        );
        // Read at ply 2 the same node's mate is 4 plies further: ply 6 from the root.
        let e = tt.probe(42, 2).unwrap();
        assert_eq!(e.score, MATE - 6);
        assert_eq!(e.mv, PackedMove::from_bits(7));
        assert_eq!(e.depth, 3);
        assert_eq!(e.bound, Bound::Exact);
        assert!(tt.probe(43, 2).is_none());
        tt.store(44, 3, PackedMove::NONE, -(MATE - 7), -50, 0, Bound::Upper);
        assert_eq!(tt.probe(44, 1).unwrap().score, -(MATE - 5));
        assert_eq!(tt.probe(44, 1).unwrap().eval, -50);
    }

    #[test]
    fn clear_empties_every_slot_written() {
        let mut tt = TranspositionTable::new(1);
        let n = tt.slots.slots().len() as u64;
        let is_empty = |tt: &TranspositionTable| {
            tt.slots
                .slots()
                .iter()
                .all(|s| s.key.load(Ordering::Relaxed) == 0 && s.data.load(Ordering::Relaxed) == 0)
        };
        // A few scattered slots (first, last, neighbours in one line), then every slot.
        let few = [0, 1, 2, 5, 63, 64, 255, 256, 1000, n / 2 + 3, n - 1];
        for keys in [few.to_vec(), (0..n).collect::<Vec<u64>>()] {
            for &k in &keys {
                tt.store(k, 0, PackedMove::from_bits(1), 10, 0, 1, Bound::Exact);
            }
            assert!(keys.iter().all(|&k| tt.probe(k, 0).is_some()));
            assert!(!is_empty(&tt));
            tt.clear();
            assert!(is_empty(&tt));
            assert!(tt.dirty.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        }
    }
}
