// SPDX-License-Identifier: GPL-2.0-only

//! The MAC table of a virtual port as transmit reads it: the EM's entries, at most one per
//! table index, kept in 256 hash buckets keyed by the last byte of the MAC address (the byte
//! `opa_vnic_chk_mac_tbl()` hashes), so that finding the DLID of a frame walks one bucket, not
//! the table.
//!
//! A table is never changed in place. An update builds a whole new table with [`merge`] and
//! [`MacIndex::new`], off any lock, and the owner swaps it in: a reader holds either the old
//! table or the new one, never a mix, as the C driver's RCU swap of its hash table guarantees.
//!
//! `core` only, with the storage the caller's (a `KVec` in the kernel, a `Vec` on the host),
//! so that the host tests and the kernel's KUnit suite run this very code.

use crate::wire::{
    vema_mac::{MacTable, MacTableEntry, ETH_ALEN},
    WireError,
};
use core::ops::DerefMut;

/// The number of hash buckets of a [`MacIndex`].
pub const MAC_HASH_BUCKETS: usize = 256;

/// One entry of a MAC table: where the EM put it and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacSlot {
    /// The entry's index in the EM's table (0 to `MAC_TBL_MAX_ENTRIES - 1`).
    pub index: u16,
    /// The entry.
    pub entry: MacTableEntry,
    /// What a lookup compares: [`mac_key`] of the entry's MAC, with [`SRC_MAC_KEY`] for a
    /// source MAC entry, which no frame's key equals.
    key: u64,
}

/// Set in the key of a source MAC entry: lookups skip those (`opa_vnic_chk_mac_tbl()`).
const SRC_MAC_KEY: u64 = 1 << 63;

/// A MAC address as one number, for a lookup to compare with one instruction.
#[inline]
pub fn mac_key(mac: &[u8; ETH_ALEN]) -> u64 {
    let [a, b, c, d, e, f] = *mac;
    u64::from_le_bytes([a, b, c, d, e, f, 0, 0])
}

impl MacSlot {
    /// The slot of `entry` at `index`.
    pub fn new(index: u16, entry: MacTableEntry) -> Self {
        let src = if entry.is_src_mac() { SRC_MAC_KEY } else { 0 };
        Self {
            index,
            entry,
            key: mac_key(&entry.mac_addr) | src,
        }
    }
}

/// The bucket of a MAC address.
#[inline]
fn bucket(mac: &[u8; ETH_ALEN]) -> usize {
    usize::from(mac[ETH_ALEN - 1])
}

/// A MAC table, hashed for lookups by destination MAC.
///
/// # Invariants
///
/// `slots` is sorted by bucket, then by index; the slots of bucket `b` are
/// `slots[starts[b]..starts[b + 1]]`.
pub struct MacIndex<S> {
    slots: S,
    starts: [u32; MAC_HASH_BUCKETS + 1],
}

impl<S: DerefMut<Target = [MacSlot]>> MacIndex<S> {
    /// Indexes the entries in `slots` (at most one per index: see [`merge`]).
    pub fn new(mut slots: S) -> Self {
        slots.sort_unstable_by_key(|s| (bucket(&s.entry.mac_addr), s.index));
        // Count each bucket into the next one's start, then sum the counts up.
        let mut starts = [0u32; MAC_HASH_BUCKETS + 1];
        for s in slots.iter() {
            if let Some(n) = starts.get_mut(bucket(&s.entry.mac_addr).wrapping_add(1)) {
                *n = n.saturating_add(1);
            }
        }
        let mut sum = 0u32;
        for n in starts.iter_mut() {
            sum = sum.saturating_add(*n);
            *n = sum;
        }
        // INVARIANT: `slots` is sorted by bucket then index, and `starts[b]` is the number of
        // slots in the buckets before `b`, so bucket `b`'s slots are `starts[b]..starts[b + 1]`.
        Self { slots, starts }
    }

    /// The DLID frames to `dmac` go to: that of the entry for `dmac` with the lowest index,
    /// skipping source MAC entries; 0 if there is none (the caller then uses the vport's
    /// default DLIDs), as `opa_vnic_chk_mac_tbl()`.
    ///
    /// Transmit runs this for every frame: one comparison per entry of the bucket.
    #[inline]
    pub fn lookup(&self, dmac: &[u8; ETH_ALEN]) -> u32 {
        let key = mac_key(dmac);
        let b = bucket(dmac);
        let (Some(&lo), Some(&hi)) = (self.starts.get(b), self.starts.get(b.wrapping_add(1)))
        else {
            return 0;
        };
        // Indexed rather than sliced: a bucket holds an entry or two, and a slice's bounds
        // checks cost more than the walk.
        let mut i = lo as usize;
        while i < hi as usize {
            match self.slots.get(i) {
                Some(s) if s.key == key => return s.entry.dlid(),
                Some(_) => i = i.wrapping_add(1),
                None => break,
            }
        }
        0
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The entries, in no particular order.
    pub fn slots(&self) -> &[MacSlot] {
        &self.slots
    }
}

/// Builds the table `opa_vnic_update_mac_tbl()` makes of the table `old` and the Set `req`:
/// the entries of `old` outside the request's window stay, the window's entries with a MAC
/// replace what it held (an all-zero MAC deletes). `push` stores one entry of the new table,
/// in index order within each part; an error from it ends the merge. The new table needs room
/// for at most `old.len() + req.len()` entries.
pub fn merge<'a>(
    old: impl Iterator<Item = &'a MacSlot>,
    req: &MacTable<'_>,
    push: &mut dyn FnMut(MacSlot) -> Result<(), WireError>,
) -> Result<(), WireError> {
    for s in old.filter(|s| !req.hdr.covers(s.index)) {
        push(*s)?;
    }
    // The range check of the request keeps `offset + i` within the table.
    for (i, entry) in req.entries().enumerate() {
        if !entry.is_delete() {
            let index = req.hdr.offset.wrapping_add(i as u16);
            push(MacSlot::new(index, entry))?;
        }
    }
    Ok(())
}
