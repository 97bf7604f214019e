// SPDX-License-Identifier: GPL-2.0

//! A fixed-capacity FIFO: the receive queue a QP keeps for its consumer.

use crate::{
    alloc::{flags::*, KVec},
    error::Result,
};

/// A fixed-capacity FIFO, allocated up front so that pushing never allocates (pushes happen
/// in atomic context).
pub(super) struct Ring<T> {
    slots: KVec<Option<T>>,
    head: usize,
    len: usize,
}

impl<T> Ring<T> {
    pub(super) fn new(capacity: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(capacity, GFP_KERNEL)?;
        for _ in 0..capacity {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots,
            head: 0,
            len: 0,
        })
    }

    pub(super) fn push(&mut self, v: T) -> Result<(), T> {
        let cap = self.slots.len();
        if self.len == cap {
            return Err(v);
        }
        self.slots[(self.head + self.len) % cap] = Some(v);
        self.len += 1;
        Ok(())
    }

    pub(super) fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        v
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }
}
