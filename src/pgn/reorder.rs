//! Putting back in order what parallel workers finish out of order.
//!
//! The chunks of a build are numbered as they are read (0, 1, 2, …) and parsed by several
//! threads at once, so their results arrive in any order. Game numbers in messages and
//! polyglot's halving of a position at 16384 games depend on the input order, so whoever
//! consumes the results takes them back through a [`Reorder`].

use std::collections::BTreeMap;

/// Items tagged with a sequence number go in in any order and come out in sequence order,
/// each as soon as every earlier one has come out.
pub struct Reorder<T> {
    /// Items that arrived before one of their predecessors.
    waiting: BTreeMap<u64, T>,
    /// The sequence number of the next item to come out.
    next: u64,
}

impl<T> Reorder<T> {
    /// An empty buffer whose first item is number 0.
    pub fn new() -> Self {
        Reorder {
            waiting: BTreeMap::new(),
            next: 0,
        }
    }

    /// Takes item number `seq`.
    pub fn push(&mut self, seq: u64, item: T) {
        self.waiting.insert(seq, item);
    }

    /// The next item in sequence, if it has arrived.
    pub fn pop(&mut self) -> Option<T> {
        let item = self.waiting.remove(&self.next)?;
        self.next += 1;
        Some(item)
    }
}

impl<T> Default for Reorder<T> {
    /// An empty buffer whose first item is number 0.
    fn default() -> Self {
        Reorder::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_out_in_sequence() {
        let mut r = Reorder::new();
        let mut out = Vec::new();
        for seq in [2, 0, 3, 1, 5, 4] {
            r.push(seq, seq * 10);
            while let Some(x) = r.pop() {
                out.push(x);
            }
        }
        assert_eq!(out, vec![0, 10, 20, 30, 40, 50]);
        assert!(r.pop().is_none());
    }
}
