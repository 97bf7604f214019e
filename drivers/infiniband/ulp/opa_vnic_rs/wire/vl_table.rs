// SPDX-License-Identifier: GPL-2.0

//! The VL of a frame by its destination and tag, as queue selection reads it: a copy of what
//! the transmit plan says ([`TxPlan::vl`]), kept in atomics, because the stack calls queue
//! selection outside any RCU read-side section for a packet socket that bypasses the qdisc.
//! An entry read while the EM changes the table is the old or the new one; either only
//! chooses a queue, and transmit takes the VL it sends with from the plan.
//!
//! Four words, written from the VESW port info's VL bytes as they are: a Set costs four
//! stores, not one per entry.

use super::encap::vlan_pcp;
use super::tx_plan::TxPlan;
use super::vema_info_bytes::{VeswPortInfoBytes, SIZE as INFO_SIZE};
use super::vema_mac::ETH_ALEN;
use core::borrow::Borrow;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// A vport's VL by multicast or not, then by PCP or untagged.
pub struct VlTable {
    /// By multicast or not: the VLs of PCP 0 to 7, one a byte (PCP i in byte i, as the info
    /// holds them, read little-endian).
    pcp: [AtomicU64; 2],
    /// By multicast or not: the VL of untagged frames.
    untagged: [AtomicU8; 2],
}

impl VlTable {
    /// The table of `info`.
    pub fn new<B: Borrow<[u8; INFO_SIZE]>>(info: &VeswPortInfoBytes<B>) -> Self {
        let t = Self {
            pcp: [AtomicU64::new(0), AtomicU64::new(0)],
            untagged: [AtomicU8::new(0), AtomicU8::new(0)],
        };
        t.set(info);
        t
    }

    /// Makes it the table of `info`.
    #[inline]
    pub fn set<B: Borrow<[u8; INFO_SIZE]>>(&self, info: &VeswPortInfoBytes<B>) {
        let [uc, mc] = &self.pcp;
        uc.store(u64::from_le_bytes(info.pcp_to_vl_uc()), Ordering::Relaxed);
        mc.store(u64::from_le_bytes(info.pcp_to_vl_mc()), Ordering::Relaxed);
        let [uc, mc] = &self.untagged;
        uc.store(info.non_vlan_vl_uc(), Ordering::Relaxed);
        mc.store(info.non_vlan_vl_mc(), Ordering::Relaxed);
    }

    /// The VL of a frame to `dmac` with the VLAN tag `tci`: where [`TxPlan::entry_index`]
    /// says, as [`TxPlan::vl`] reads it.
    #[inline]
    pub fn get(&self, dmac: &[u8; ETH_ALEN], tci: Option<u16>) -> u8 {
        let (mc, tag) = TxPlan::entry_index(dmac, tci);
        match tag {
            Some(pcp) => self.pcp.get(mc).map_or(0, |row| {
                (row.load(Ordering::Relaxed) >> (pcp.wrapping_mul(8) & 63)) as u8
            }),
            None => self
                .untagged
                .get(mc)
                .map_or(0, |vl| vl.load(Ordering::Relaxed)),
        }
    }
}

// Not `vlan_pcp` of another width: a PCP indexes the eight bytes of a word.
const _: () = assert!(vlan_pcp(0xffff) == 7);
