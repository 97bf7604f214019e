// SPDX-License-Identifier: GPL-2.0-only

//! A bounded first-in first-out queue, allocated once: a descriptor ring or a receive queue of
//! the simulated HFI never allocates on the data path.

use kernel::prelude::*;

/// A FIFO of at most `slots.len()` items.
pub(crate) struct Fifo<T> {
    slots: KVec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T> Fifo<T> {
    /// An empty FIFO for `cap` items (at least one).
    pub(crate) fn new(cap: usize) -> Result<Self> {
        let cap = cap.max(1);
        let mut slots = KVec::with_capacity(cap, GFP_KERNEL)?;
        for _ in 0..cap {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            head: 0,
            len: 0,
        })
    }

    /// Appends `item`, or gives it back when the FIFO is full.
    pub(crate) fn push(&mut self, item: T) -> Result<(), T> {
        let cap = self.slots.len();
        if self.len == cap {
            return Err(item);
        }
        let i = (self.head + self.len) % cap;
        self.slots[i] = Some(item);
        self.len += 1;
        Ok(())
    }

    /// Takes the oldest item.
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let item = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        item
    }

    /// The number of items.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the FIFO takes no more items.
    pub(crate) fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }
}
