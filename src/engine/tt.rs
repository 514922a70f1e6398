//! The transposition table: search results by position, shared lock-free.
//!
//! Each entry is two `AtomicU64`: the data word and the key XOR the data. A reader accepts an entry
//! only when `key_word ^ data == key`, so a torn write by another thread (Lazy SMP's helpers) reads as
//! a miss instead of as a wrong move. Mate scores are stored relative to the node (see
//! [`score::to_tt`]) so that they stay right when the position is reached at another ply.
//!
//! The data word: the move (16 bits, a [`PackedMove`]), the score and the static evaluation (16
//! bits each), the depth + 1 (8 bits), the bound (2 bits) and the search's generation (6 bits).
//!
//! The table is allocated fallibly ([`TranspositionTable::try_new`]): a size the machine cannot
//! give is an error to report, never an abort.

use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

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
    /// `n` empty slots, or `None` when the system cannot give the memory.
    fn try_new(n: usize) -> Option<Storage> {
        let bytes = n.checked_mul(std::mem::size_of::<Slot>())?;
        if let Ok(map) = memmap2::MmapMut::map_anon(bytes) {
            #[cfg(target_os = "linux")]
            {
                // Only a hint: without huge pages the table works the same, a little slower.
                let _ = map.advise(memmap2::Advice::HugePage);
            }
            return Some(Storage::Mapped { map, len: n });
        }
        zeroed(n, || Slot {
            key: AtomicU64::new(0),
            data: AtomicU64::new(0),
        })
        .map(Storage::Heap)
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

/// `n` values made by `empty` in a vector, or `None` when the memory cannot be had.
fn zeroed<T>(n: usize, empty: impl FnMut() -> T) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize_with(n, empty);
    Some(v)
}

/// Slots per line of the dirty map: 4 slots of 16 bytes, one 64-byte cache line.
const LINE_SLOTS: usize = 4;

/// Sizes past this many MB are taken as this (far more than any machine has: a table that size
/// is never given; it keeps the arithmetic of [`TranspositionTable::slots_for`] from
/// overflowing).
const MB_CEILING: usize = usize::MAX >> 21;

/// Why a transposition table of the size asked for was not made.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum TableError {
    /// The tables would take more memory than the machine has free.
    #[error(
        "{} of {mb} MB {} more than this machine can give ({free_mb} MB of memory free)",
        if *.tables == 1 { "a hash table".to_string() } else { format!("{} hash tables", .tables) },
        if *.tables == 1 { "is" } else { "are" }
    )]
    TooLarge {
        mb: usize,
        tables: usize,
        free_mb: usize,
    },
    /// The system refused the memory.
    #[error("cannot allocate a hash table of {mb} MB: out of memory")]
    OutOfMemory { mb: usize },
}

/// The memory the machine can give now, in bytes: Linux's estimate of what can be allocated
/// without swapping (`MemAvailable`); `None` where it is not known (the allocation decides).
fn memory_free() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kb = info.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
        let kb: u64 = kb.trim().strip_suffix("kB")?.trim().parse().ok()?;
        Some(kb.saturating_mul(1024))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The memory the machine can give now, in MB, where it is known ([`memory_free`]).
pub fn memory_free_mb() -> Option<usize> {
    memory_free().map(|bytes| (bytes >> 20) as usize)
}

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
    /// The slots of a table of about `mb` MB: rounded down to a power of two, at least 1024.
    fn slots_for(mb: usize) -> usize {
        let bytes = mb.clamp(1, MB_CEILING) * 1024 * 1024;
        let n = (bytes / std::mem::size_of::<Slot>()).next_power_of_two() / 2;
        n.max(1024)
    }

    /// The words of the dirty map of `n` slots.
    fn dirty_words(n: usize) -> usize {
        n.div_ceil(LINE_SLOTS).div_ceil(64)
    }

    /// The bytes a table of `mb` MB takes (its slots and its dirty map).
    pub fn bytes_for(mb: usize) -> u64 {
        let n = Self::slots_for(mb);
        (n * std::mem::size_of::<Slot>() + Self::dirty_words(n) * 8) as u64
    }

    /// Can the machine give `tables` tables of `mb` MB each? [`TableError::TooLarge`] when they
    /// would take more than the memory free now.
    pub fn check_size(mb: usize, tables: usize) -> Result<(), TableError> {
        let Some(free) = memory_free() else {
            return Ok(());
        };
        if Self::bytes_for(mb).saturating_mul(tables.max(1) as u64) > free {
            return Err(TableError::TooLarge {
                mb,
                tables: tables.max(1),
                free_mb: (free >> 20) as usize,
            });
        }
        Ok(())
    }

    /// A table of about `mb` megabytes (rounded down to a power of two entries; at least 1 MB),
    /// or why the machine cannot give it: more than its free memory, or refused by the system.
    pub fn try_new(mb: usize) -> Result<Self, TableError> {
        Self::check_size(mb, 1)?;
        Self::allocate(mb)
    }

    /// A table of about `mb` MB if the system gives the memory, whatever the memory free says.
    pub(super) fn allocate(mb: usize) -> Result<Self, TableError> {
        let n = Self::slots_for(mb);
        let out_of_memory = || TableError::OutOfMemory { mb };
        let slots = Storage::try_new(n).ok_or_else(out_of_memory)?;
        let dirty = zeroed(Self::dirty_words(n), || AtomicU64::new(0)).ok_or_else(out_of_memory)?;
        Ok(TranspositionTable {
            slots,
            mask: n - 1,
            generation: 0,
            dirty,
        })
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
    use crate::engine::score::MATE_CP;

    #[test]
    fn sizes_no_machine_has_are_refused_not_overflowed() {
        // 1 MB (and 0): 2^16 slots' worth, rounded down to 2^15 slots of 16 bytes, with a bit
        // of the dirty map for every 4; 64 MB: 2^21 slots.
        assert_eq!(
            TranspositionTable::bytes_for(0),
            (1 << 15) * 16 + (1 << 15) / 256 * 8
        );
        assert_eq!(
            TranspositionTable::bytes_for(1),
            (1 << 15) * 16 + (1 << 15) / 256 * 8
        );
        assert_eq!(
            TranspositionTable::bytes_for(64),
            (1 << 21) * 16 + (1 << 21) / 256 * 8
        );
        for mb in [1 << 40, usize::MAX / 2, usize::MAX] {
            assert!(TranspositionTable::bytes_for(mb) >= 1 << 59, "{mb}");
            assert!(TranspositionTable::try_new(mb).is_err(), "{mb}");
        }
    }

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        let tt = TranspositionTable::try_new(1).unwrap();
        // Found at ply 5: mate delivered at ply 9 from the root, i.e. 4 plies from the node.
        tt.store(
            42,
            5,
            PackedMove::from_bits(7),
            MATE_CP - 9,
            0,
            3,
            Bound::Exact,
        );
        // Read at ply 2 the same node's mate is 4 plies further: ply 6 from the root.
        let e = tt.probe(42, 2).unwrap();
        assert_eq!(e.score, MATE_CP - 6);
        assert_eq!(e.mv, PackedMove::from_bits(7));
        assert_eq!(e.depth, 3);
        assert_eq!(e.bound, Bound::Exact);
        assert!(tt.probe(43, 2).is_none());
        tt.store(
            44,
            3,
            PackedMove::NONE,
            -(MATE_CP - 7),
            -50,
            0,
            Bound::Upper,
        );
        assert_eq!(tt.probe(44, 1).unwrap().score, -(MATE_CP - 5));
        assert_eq!(tt.probe(44, 1).unwrap().eval, -50);
    }

    #[test]
    fn clear_empties_every_slot_written() {
        let mut tt = TranspositionTable::try_new(1).unwrap();
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
