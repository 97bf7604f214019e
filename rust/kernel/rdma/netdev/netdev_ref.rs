// SPDX-License-Identifier: GPL-2.0

//! A VNIC netdev as the ULP's callbacks and the ULP's agent use it.

use super::addr_lists::{for_each_hw_addr, AddrLists};
use crate::{bindings, net::rtnl::Rtnl, str::CStr, types::Opaque};
use core::ffi::{c_int, c_void};

/// A VNIC netdev as the ULP's callbacks see it.
///
/// # Invariants
///
/// `self.0` is a registered netdev allocated by an OPA device for `RDMA_NETDEV_OPA_VNIC`.
#[repr(transparent)]
pub struct VnicNetdevRef(Opaque<bindings::net_device>);

impl VnicNetdevRef {
    /// # Safety
    ///
    /// `ptr` is valid as the type invariant says for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `Self` is a transparent wrapper, and the caller guarantees validity.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The interface's name.
    pub fn name(&self) -> &CStr {
        // SAFETY: A registered netdev's name is a NUL-terminated string that changes only under
        // RTNL, by copying a whole new name.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The interface's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: `dev_addr` of an Ethernet netdev holds at least 6 bytes.
        unsafe { core::ptr::copy_nonoverlapping((*self.as_raw()).dev_addr, mac.as_mut_ptr(), 6) };
        mac
    }

    /// Whether the interface is administratively up (`IFF_UP`).
    pub fn is_up(&self) -> bool {
        // SAFETY: Reading the flags of a valid netdev.
        unsafe { (*self.as_raw()).flags & bindings::net_device_flags_IFF_UP != 0 }
    }

    /// Sets or clears the dormant state (`netif_dormant_on/off()`).
    pub fn set_dormant(&self, dormant: bool) {
        // SAFETY: The netdev is valid and registered.
        unsafe {
            if dormant {
                bindings::netif_dormant_on(self.as_raw())
            } else {
                bindings::netif_dormant_off(self.as_raw())
            }
        }
    }

    /// Turns the carrier on or off (`netif_carrier_on/off()`).
    pub fn set_carrier(&self, on: bool) {
        // SAFETY: The netdev is valid and registered.
        unsafe {
            if on {
                bindings::netif_carrier_on(self.as_raw())
            } else {
                bindings::netif_carrier_off(self.as_raw())
            }
        }
    }

    /// Sets the MAC address (`eth_commit_mac_addr_change()`) and tells the stack
    /// (`NETDEV_CHANGEADDR`), as a change through `ip link set address` would, but without
    /// calling the driver's own `ndo_set_mac_address`.
    pub fn set_mac(&self, _rtnl: &Rtnl, mac: &[u8; 6]) {
        let mut sa = SockAddr::new(mac);
        // SAFETY: The netdev is valid; `sa` is laid out as a `struct sockaddr` with the address;
        // RTNL (held, as the token proves) serialises with the stack's address changes.
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
        // stack's MTU changes.
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
    pub(super) fn rdma_netdev(&self) -> *mut bindings::rdma_netdev {
        // SAFETY: The private area of an OPA VNIC netdev starts with `struct rdma_netdev`.
        unsafe { bindings::netdev_priv(self.as_raw()).cast::<bindings::rdma_netdev>() }
    }

    /// Calls `f` with the netdev's unicast and multicast lists, taking its address lock for
    /// it. Not from [`VnicUlp::rx_mode_changed`], which holds that lock already and is given
    /// the lists.
    pub fn with_addr_lists<R>(&self, f: impl FnOnce(&AddrLists<'_>) -> R) -> R {
        // SAFETY: The netdev is valid.
        unsafe { bindings::netif_addr_lock_bh(self.as_raw()) };
        // INVARIANT: The address lock is held until `f` returns.
        let r = f(&AddrLists { netdev: self });
        // SAFETY: Taken above.
        unsafe { bindings::netif_addr_unlock_bh(self.as_raw()) };
        r
    }

    /// Binds the netdev to a virtual Ethernet switch: received packets with this vesw id
    /// come to it (`rdma_netdev.set_id`).
    pub fn set_vesw_id(&self, id: u16) {
        // SAFETY: The device filled in `set_id` when it allocated the netdev.
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
