//! The k-way merge of sources sorted by key, one key at a time: how books are merged
//! (`merge`) and how the sorted runs of a spilled tally are read back (`spill`).
//!
//! A heap holds each source's next key; the smallest comes off, and every source whose next
//! key it is gives up all its items with that key. Ties go to the source given first, and a
//! source's own items keep their order, so the result does not depend on the heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Sources sorted by key (each an iterator of `Result<T, E>`), merged one key at a time.
pub struct KeyedMerge<T, I, F> {
    sources: Vec<I>,
    /// Each source's next item, taken out but not yet merged.
    heads: Vec<Option<T>>,
    /// The sources' next keys, smallest first, then by source.
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    key: F,
}

impl<T, E, I, F> KeyedMerge<T, I, F>
where
    I: Iterator<Item = Result<T, E>>,
    F: Fn(&T) -> u64,
{
    /// Merges `sources`, each sorted by `key` (ascending).
    pub fn new(sources: impl IntoIterator<Item = I>, key: F) -> Result<Self, E> {
        let mut merge = KeyedMerge {
            sources: sources.into_iter().collect(),
            heads: Vec::new(),
            heap: BinaryHeap::new(),
            key,
        };
        for i in 0..merge.sources.len() {
            let head = merge.sources[i].next().transpose()?;
            if let Some(h) = &head {
                merge.heap.push(Reverse(((merge.key)(h), i)));
            }
            merge.heads.push(head);
        }
        Ok(merge)
    }

    /// Appends to `group` every item with the smallest key left: the first source's items
    /// first, each source's in its own order. Returns that key, or `None` when all is merged.
    pub fn next_group(&mut self, group: &mut Vec<T>) -> Result<Option<u64>, E> {
        let Some(&Reverse((key, _))) = self.heap.peek() else {
            return Ok(None);
        };
        while let Some(&Reverse((k, i))) = self.heap.peek() {
            if k != key {
                break;
            }
            self.heap.pop();
            group.extend(self.heads[i].take());
            for item in self.sources[i].by_ref() {
                let item = item?;
                let k = (self.key)(&item);
                if k != key {
                    self.heap.push(Reverse((k, i)));
                    self.heads[i] = Some(item);
                    break;
                }
                group.push(item);
            }
        }
        Ok(Some(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    #[test]
    fn groups_come_by_key_then_source_then_order() {
        let a = vec![(1, 'a'), (3, 'b'), (3, 'c'), (7, 'd')];
        let b = vec![(0, 'e'), (3, 'f'), (7, 'g'), (8, 'h')];
        let c: Vec<(u64, char)> = vec![];
        let sources = [a, b, c].map(|v| v.into_iter().map(Ok::<_, Infallible>));
        let Ok(mut merge) = KeyedMerge::new(sources, |&(k, _)| k);
        let mut groups = Vec::new();
        let mut group = Vec::new();
        while let Ok(Some(key)) = merge.next_group(&mut group) {
            groups.push((key, group.iter().map(|&(_, c)| c).collect::<String>()));
            group.clear();
        }
        let expected = [(0, "e"), (1, "a"), (3, "bcf"), (7, "dg"), (8, "h")];
        assert_eq!(groups, expected.map(|(k, s)| (k, s.to_string())));
    }

    #[test]
    fn an_error_stops_the_merge() {
        let a = vec![Ok(1u64), Err("broken"), Ok(5)];
        let mut merge = KeyedMerge::new([a.into_iter()], |&k| k).unwrap();
        let mut group = Vec::new();
        assert_eq!(merge.next_group(&mut group), Err("broken"));
    }
}
