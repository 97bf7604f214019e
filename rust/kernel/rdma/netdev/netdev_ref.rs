// SPDX-License-Identifier: GPL-2.0

//! A VNIC netdev as the ULP's callbacks and the ULP's agent use it, by context: what atomic
//! context may use ([`UlpNetdevAtomic`]) and what process context may use besides
//! ([`UlpNetdevRef`]).

use super::addr_lists::{for_each_hw_addr, AddrList, AddrLists};
use crate::{
    alloc::{flags::GFP_ATOMIC, KVec},
    bindings,
    error::Result,
    net::rtnl::Rtnl,
    str::CStr,
    types::Opaque,
};
use core::{
    ffi::{c_int, c_void},
    ops::Deref,
};

/// A VNIC netdev of a ULP as the callbacks that may run in atomic context see it
/// ([`VnicUlp::xmit`](super::VnicUlp::xmit),
/// [`VnicUlp::rx_mode_changed`](super::VnicUlp::rx_mode_changed)): nothing it offers sleeps
/// or takes the netdev's address lock (which `ndo_set_rx_mode` runs under).
///
/// # Invariants
///
/// `self.0` is a netdev allocated by an OPA device for `RDMA_NETDEV_OPA_VNIC`, whose
/// operations are a ULP's ([`UlpNetdev`](super::UlpNetdev)), and which is not freed while the
/// reference lives.
#[repr(transparent)]
pub struct UlpNetdevAtomic(Opaque<bindings::net_device>);

impl UlpNetdevAtomic {
    /// # Safety
    ///
    /// `ptr` is valid as the type invariant says for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // INVARIANT: The caller guarantees it.
        // SAFETY: `Self` is a transparent wrapper of `net_device`, valid for `'a` as the caller
        // guarantees.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// Sets or clears the dormant state (`netif_dormant_on/off()`, which set a bit atomically
    /// and queue a link event under a spinlock: any context).
    pub fn set_dormant(&self, dormant: bool) {
        // SAFETY: The netdev is valid (type invariant); the functions may be called in any
        // context.
        unsafe {
            if dormant {
                bindings::netif_dormant_on(self.as_raw())
            } else {
                bindings::netif_dormant_off(self.as_raw())
            }
        }
    }

    /// Turns the carrier on or off (`netif_carrier_on/off()`, which set a bit atomically and
    /// queue a link event under a spinlock: any context).
    pub fn set_carrier(&self, on: bool) {
        // SAFETY: The netdev is valid (type invariant); the functions may be called in any
        // context.
        unsafe {
            if on {
                bindings::netif_carrier_on(self.as_raw())
            } else {
                bindings::netif_carrier_off(self.as_raw())
            }
        }
    }

    /// Counts a transmitted frame the ULP dropped (`dev_core_stats_tx_dropped_inc()`, a per-CPU
    /// counter: any context).
    pub fn count_tx_dropped(&self) {
        // SAFETY: The netdev is valid (type invariant); the function may be called in any
        // context (it allocates the per-CPU counters with `GFP_ATOMIC` on first use).
        unsafe { bindings::dev_core_stats_tx_dropped_inc(self.as_raw()) };
    }
}

/// A VNIC netdev of a ULP as process context sees it: the callbacks that run under RTNL and
/// the owner of the netdev ([`UlpNetdev::netdev`](super::UlpNetdev::netdev)). It offers what
/// may sleep or take the address lock, and all that [`UlpNetdevAtomic`] offers.
///
/// # Context
///
/// Process context, without the netdev's address lock: its own methods may sleep or take that
/// lock. The type does not prove it (the owner may call [`UlpNetdev::netdev`] anywhere); a
/// call in atomic context or under that lock sleeps where it must not, or deadlocks, which
/// `might_sleep()` and lockdep report.
///
/// [`UlpNetdev::netdev`]: super::UlpNetdev::netdev
///
/// # Invariants
///
/// As [`UlpNetdevAtomic`]'s.
#[repr(transparent)]
pub struct UlpNetdevRef(UlpNetdevAtomic);

impl Deref for UlpNetdevRef {
    type Target = UlpNetdevAtomic;

    fn deref(&self) -> &UlpNetdevAtomic {
        &self.0
    }
}

impl UlpNetdevRef {
    /// # Safety
    ///
    /// `ptr` is valid as the type invariant says for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // INVARIANT: The caller guarantees it.
        // SAFETY: `Self` is a transparent wrapper of `UlpNetdevAtomic`, itself one of
        // `net_device`, valid for `'a` as the caller guarantees.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The interface's name. It changes only under RTNL (`dev_change_name()` asserts it holds
    /// RTNL, and registration names the netdev under RTNL), which the token proves is held for
    /// as long as the name is borrowed.
    pub fn name<'a>(&'a self, _rtnl: &'a Rtnl) -> &'a CStr {
        // SAFETY: The netdev is valid (type invariant); its name is a NUL-terminated string
        // that no one writes while RTNL is held, for the borrow of the token.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The interface's MAC address. Written only under RTNL (`dev_set_mac_address()` and
    /// `eth_commit_mac_addr_change()` are called under it: `ndo_set_mac_address`, and
    /// [`UlpNetdevRef::set_mac`]), which the token proves is held.
    pub fn mac(&self, _rtnl: &Rtnl) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: `dev_addr` of an Ethernet netdev holds at least 6 bytes, which no one writes
        // while RTNL is held.
        unsafe { core::ptr::copy_nonoverlapping((*self.as_raw()).dev_addr, mac.as_mut_ptr(), 6) };
        mac
    }

    /// Whether the interface is administratively up (`IFF_UP`). `IFF_UP` changes only under
    /// RTNL (`__dev_open()` and `__dev_close_many()` assert it), held as the token proves, so
    /// the answer holds until RTNL is released.
    pub fn is_up(&self, _rtnl: &Rtnl) -> bool {
        // SAFETY: The netdev is valid; its `flags` are written under RTNL (`__dev_open()`,
        // `__dev_close_many()`, `__dev_change_flags()` and `__dev_set_promiscuity()` assert
        // it), which is held: no write races the read. Read once, as `dev_get_flags()` reads
        // it (`READ_ONCE()`).
        let flags =
            unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*self.as_raw()).flags)) };
        flags & bindings::net_device_flags_IFF_UP != 0
    }

    /// Sets the MAC address (`eth_commit_mac_addr_change()`) and tells the stack
    /// (`NETDEV_CHANGEADDR`), as a change through `ip link set address` would, but without
    /// calling the driver's own `ndo_set_mac_address`.
    pub fn set_mac(&self, _rtnl: &Rtnl, mac: &[u8; 6]) {
        let mut sa = SockAddr::new(mac);
        // SAFETY: The netdev is valid; `sa` is laid out as a `struct sockaddr` with the address;
        // RTNL (held, as the token proves) serialises with the stack's address changes, and
        // `call_netdevice_notifiers()` requires it.
        unsafe {
            bindings::eth_commit_mac_addr_change(self.as_raw(), sa.as_mut_ptr());
            bindings::call_netdevice_notifiers(
                bindings::netdev_cmd_NETDEV_CHANGEADDR as usize,
                self.as_raw(),
            );
        }
    }

    /// Sets the largest MTU, shrinking the current one to it if larger.
    pub fn set_max_mtu(&self, _rtnl: &Rtnl, max: u32) {
        // SAFETY: The netdev is valid; RTNL (held, as the token proves) serialises with the
        // stack's MTU changes, and `dev_set_mtu()` requires it (and so process context).
        unsafe {
            let nd = self.as_raw();
            (*nd).max_mtu = max.max((*nd).min_mtu);
            if (*nd).mtu > (*nd).max_mtu {
                bindings::dev_set_mtu(nd, (*nd).max_mtu as c_int);
            }
        }
    }

    /// Calls `f` with each of the interface's own addresses (`dev_addrs`, which RTNL
    /// protects), in list order.
    pub fn for_each_dev_addr(&self, _rtnl: &Rtnl, f: &mut dyn FnMut([u8; 6])) {
        // SAFETY: The netdev is valid; its device address list changes only under RTNL, which
        // is held (as the token proves).
        unsafe { for_each_hw_addr(core::ptr::addr_of_mut!((*self.as_raw()).dev_addrs), f) }
    }

    /// The ULP part of the netdev's private area.
    fn rdma_netdev(&self) -> *mut bindings::rdma_netdev {
        // SAFETY: The private area of an OPA VNIC netdev starts with `struct rdma_netdev`.
        unsafe { bindings::netdev_priv(self.as_raw()).cast::<bindings::rdma_netdev>() }
    }

    /// A copy of the netdev's unicast or multicast list, in list order, taken under its
    /// address lock. ([`VnicUlp::rx_mode_changed`](super::VnicUlp::rx_mode_changed), which
    /// holds that lock already, is given the lists and no [`UlpNetdevRef`].)
    ///
    /// A copy rather than a callback under the lock: no code of the caller runs with the lock
    /// held and bottom halves off, where this reference's context (process context, lock not
    /// held) would be false. `ENOMEM` if the copy cannot be allocated (atomically). Not with
    /// interrupts off: unlocking turns bottom halves back on.
    pub fn addr_list(&self, which: AddrList) -> Result<KVec<[u8; 6]>> {
        // SAFETY: The netdev is valid. A caller that holds its address lock already deadlocks
        // here (see the type's context), which lockdep reports: not a memory-safety matter.
        unsafe { bindings::netif_addr_lock_bh(self.as_raw()) };
        let copy = {
            // INVARIANT: The address lock is held for as long as `lists` lives, this block.
            let lists = AddrLists { netdev: &self.0 };
            KVec::with_capacity(lists.count(which), GFP_ATOMIC).map(|mut v| {
                // The capacity is the list's length, which cannot change meanwhile: no push
                // fails.
                lists.for_each(which, &mut |mac| {
                    let _ = v.push(mac, GFP_ATOMIC);
                });
                v
            })
        };
        // SAFETY: Taken above; `lists` is gone.
        unsafe { bindings::netif_addr_unlock_bh(self.as_raw()) };
        Ok(copy?)
    }

    /// Binds the netdev to a virtual Ethernet switch: received packets with this vesw id
    /// come to it (`rdma_netdev.set_id`). May sleep: hfi1's `hfi1_vnic_set_vesw_id()` takes
    /// the vport's mutex and may reopen the netdev.
    pub fn set_vesw_id(&self, id: u16) {
        // SAFETY: The device filled in `set_id` when it allocated the netdev. It may sleep,
        // which the type's context allows (hfi1's takes a mutex: `might_sleep()` reports a
        // caller in atomic context).
        unsafe {
            if let Some(set_id) = (*self.rdma_netdev()).set_id {
                set_id(self.as_raw(), c_int::from(id));
            }
        }
    }
}

/// A `struct sockaddr` holding a MAC address: the family (2 bytes), then the address. (The
/// C structure's data is a flexible array in an anonymous union, which bindgen does not name
/// usefully.)
#[repr(C, align(2))]
pub(super) struct SockAddr([u8; 16]);

impl SockAddr {
    pub(super) fn new(mac: &[u8; 6]) -> Self {
        let mut sa = [0u8; 16];
        sa[2..8].copy_from_slice(mac);
        Self(sa)
    }

    pub(super) fn as_mut_ptr(&mut self) -> *mut c_void {
        self.0.as_mut_ptr().cast::<c_void>()
    }

    /// # Safety
    ///
    /// `p` points to a `struct sockaddr` with at least 6 bytes of data.
    pub(super) unsafe fn mac_of(p: *const c_void) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: As the caller guarantees: the data starts after the 2-byte family.
        unsafe { core::ptr::copy_nonoverlapping(p.cast::<u8>().add(2), mac.as_mut_ptr(), 6) };
        mac
    }
}
