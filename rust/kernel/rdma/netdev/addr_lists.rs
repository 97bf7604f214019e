// SPDX-License-Identifier: GPL-2.0

//! The address lists of a VNIC netdev, read under the locks that protect them.

use super::UlpNetdevAtomic;
use crate::bindings;

/// The address lists of a netdev that its address lock protects.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AddrList {
    /// The secondary unicast addresses (`uc`).
    Unicast,
    /// The multicast addresses (`mc`).
    Multicast,
}

/// Read access to a netdev's unicast and multicast lists, while its address lock is held.
///
/// # Invariants
///
/// `netdev` is valid for `'a`, and the netdev's address lock (`netif_addr_lock_bh()`), which
/// protects the unicast and multicast lists, is held for as long as `&AddrLists` is live.
pub struct AddrLists<'a> {
    pub(super) netdev: &'a UlpNetdevAtomic,
}

impl AddrLists<'_> {
    pub(super) fn list(&self, which: AddrList) -> *mut bindings::netdev_hw_addr_list {
        let nd = self.netdev.as_raw();
        // SAFETY: `nd` is valid (type invariant); only the field's address is taken.
        unsafe {
            match which {
                AddrList::Unicast => core::ptr::addr_of_mut!((*nd).uc),
                AddrList::Multicast => core::ptr::addr_of_mut!((*nd).mc),
            }
        }
    }

    /// The number of addresses in a list.
    pub fn count(&self, which: AddrList) -> usize {
        // SAFETY: The list is valid and, by the type invariant, does not change meanwhile.
        usize::try_from(unsafe { (*self.list(which)).count }).unwrap_or(0)
    }

    /// Calls `f` with each (Ethernet) address of a list, in list order.
    pub fn for_each(&self, which: AddrList, f: &mut dyn FnMut([u8; 6])) {
        // SAFETY: By the type invariant the list does not change while it is walked.
        unsafe { for_each_hw_addr(self.list(which), f) }
    }
}

/// Calls `f` with each (Ethernet) address of the hardware address list `list`, in list order.
///
/// # Safety
///
/// `list` is a valid `netdev_hw_addr_list` of an Ethernet netdev that does not change during
/// the call.
pub(super) unsafe fn for_each_hw_addr(
    list: *mut bindings::netdev_hw_addr_list,
    f: &mut dyn FnMut([u8; 6]),
) {
    // SAFETY: As the caller guarantees; the entries are `struct netdev_hw_addr`s linked through
    // their first field, `list`, each with at least 6 bytes of address.
    unsafe {
        let head = core::ptr::addr_of_mut!((*list).list);
        let mut pos = (*head).next;
        while !pos.is_null() && pos != head {
            let ha = pos.cast::<bindings::netdev_hw_addr>();
            let mut mac = [0u8; 6];
            core::ptr::copy_nonoverlapping(
                core::ptr::addr_of!((*ha).addr).cast::<u8>(),
                mac.as_mut_ptr(),
                6,
            );
            f(mac);
            pos = (*pos).next;
        }
    }
}
