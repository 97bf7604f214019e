// SPDX-License-Identifier: GPL-2.0

//! OPA VNIC netdevs as an upper layer protocol uses them.
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/rdma/opa_vnic.h`](srctree/include/rdma/opa_vnic.h)
//!
//! An OPA device creates the netdev (`ib_device_ops.alloc_rdma_netdev` with
//! `RDMA_NETDEV_OPA_VNIC`); its private area starts with `struct rdma_netdev`. The ULP puts
//! its own context there, keeps the device's `net_device_ops` and installs its own, which
//! call the device's: [`VnicNetdev`] does that, calling the [`VnicUlp`] around the device's
//! operations.

mod addr_lists;
mod ethtool;
mod netdev_ref;
mod ops;

pub use addr_lists::{AddrList, AddrLists};
pub use netdev_ref::VnicNetdevRef;

use super::scope::DeviceScope;
use crate::{
    bindings, c_str,
    error::to_result,
    net::{
        rtnl::Rtnl,
        skbuff::{SkBuffHead, SkBuffRef},
    },
    prelude::*,
    str::CStr,
    sync::rcu::ReadSide,
};
use core::{ffi::c_void, ptr::NonNull};

/// The statistics an OPA device keeps of a VNIC netdev (`struct opa_vnic_stats`): the
/// standard netdev counters, per-group transmit and receive counters, and the VNIC drops.
pub type VnicStats = bindings::opa_vnic_stats;

/// Room the ULP needs in front of a frame: the 16B header and the metadata, rounded to 8
/// (`OPA_VNIC_SKB_HEADROOM`).
pub const SKB_HEADROOM: u32 = 24;

/// The shortest Ethernet frame without its FCS (`ETH_ZLEN`): frames are padded to it before
/// [`VnicUlp::encap`].
pub const ETH_ZLEN: u32 = 60;

/// Length of the metadata the device reads in front of a frame (`struct opa_vnic_skb_mdata`).
const MDATA_LEN: u32 = 4;

/// One statistic of `ethtool -S`: its name and how to read it from the device's statistics.
pub type EthtoolStat = (&'static str, fn(&VnicStats) -> u64);

/// What a ULP does around the device's operations of its VNIC netdev.
///
/// The callbacks run in the contexts of the corresponding `ndo_*` operations. Those that run
/// under RTNL in process context get an [`Rtnl`] token; [`VnicUlp::encap`],
/// [`VnicUlp::vl_entropy`] and [`VnicUlp::rx_mode_changed`] may run in atomic context (with
/// bottom halves or interrupts off, or under the address lock) and must not sleep.
pub trait VnicUlp: Send + Sync + 'static {
    /// The driver's name, for `ethtool -i`.
    const DRIVER_NAME: &'static CStr;

    /// The statistics `ethtool -S` shows: names (at most 31 bytes) and how to read each from
    /// the device's statistics.
    const ETHTOOL_STATS: &'static [EthtoolStat];

    /// The device opened the interface (`ndo_open`).
    fn opened(&self, rtnl: &Rtnl, netdev: &VnicNetdevRef);

    /// The device stopped the interface (`ndo_stop`).
    fn stopped(&self, rtnl: &Rtnl, netdev: &VnicNetdevRef);

    /// Prepares a frame for the device's transmit, in a buffer whose head is its own with at
    /// least [`SKB_HEADROOM`] bytes before the frame, and whose frame is padded to at least
    /// [`ETH_ZLEN`] bytes: on `Err` the frame is dropped. The frame may lie partly in page
    /// fragments when the device advertises scatter-gather (hfi1 does): the linear part may
    /// hold as little as the Ethernet header. Atomic context, in an RCU read-side section
    /// (`rcu`: `ndo_start_xmit` runs with bottom halves or interrupts disabled).
    fn encap(&self, skb: &mut SkBuffHead, rcu: &ReadSide) -> Result;

    /// The VL and the entropy of a frame, for the device to choose a queue from. Atomic
    /// context; the buffer is the stack's, only borrowed. The stack calls it before it pads
    /// the frame or moves a VLAN device's tag into it (`skb_vlan_tag_present()` may hold),
    /// and the frame may lie partly in fragments, as for [`VnicUlp::encap`].
    fn vl_entropy(&self, skb: &SkBuffRef) -> (u8, u8);

    /// The interface's MAC address changed (by `ip link set address`).
    fn mac_changed(&self, rtnl: &Rtnl, netdev: &VnicNetdevRef);

    /// The interface's unicast or multicast address lists may have changed; `lists` reads
    /// them. Called under the netdev's address lock with bottom halves off (atomic context),
    /// with or without RTNL (`ndo_set_rx_mode`).
    fn rx_mode_changed(&self, netdev: &VnicNetdevRef, lists: &AddrLists<'_>);
}

/// The ULP's state in the netdev (`rdma_netdev.clnt_priv`).
struct Inner<T: VnicUlp> {
    ulp: T,
    /// The device's own operations, which ours call.
    hfi_ops: *const bindings::net_device_ops,
}

/// A registered OPA VNIC netdev of the ULP `T`; unregistered and freed when dropped.
///
/// # Invariants
///
/// `netdev` was allocated by the device for `RDMA_NETDEV_OPA_VNIC` and is registered; its
/// `rdma_netdev.clnt_priv` is `&*inner`, its `netdev_ops` are `T`'s trampolines and
/// `inner.hfi_ops` the device's operations.
pub struct VnicNetdev<T: VnicUlp> {
    netdev: NonNull<bindings::net_device>,
    inner: Pin<KBox<Inner<T>>>,
    /// Keeps the device (whose driver made the netdev and frees it) until the netdev is
    /// freed; dropped after `Drop::drop`.
    _scope: DeviceScope,
}

// SAFETY: The netdev may be unregistered from any thread; `T` is `Send + Sync`.
unsafe impl<T: VnicUlp> Send for VnicNetdev<T> {}
// SAFETY: `&VnicNetdev` gives `&T` and `&VnicNetdevRef`, both usable from any thread.
unsafe impl<T: VnicUlp> Sync for VnicNetdev<T> {}

impl<T: VnicUlp> VnicNetdev<T> {
    /// Has `device` allocate a VNIC netdev on `port` (named `veth%d`), installs `ulp` and its
    /// operations, and registers it, carrier off and dormant.
    ///
    /// Fails with `EOPNOTSUPP` if the device cannot allocate VNIC netdevs.
    pub fn new(device: &DeviceScope, port: u32, ulp: T) -> Result<Self> {
        if !device.is_port_valid(port) {
            return Err(EINVAL);
        }
        // SAFETY: The device is registered; its ops table is constant while it is.
        let alloc = unsafe { (*device.as_raw()).ops.alloc_rdma_netdev }.ok_or(EOPNOTSUPP)?;
        let inner = KBox::pin(
            Inner {
                ulp,
                hfi_ops: core::ptr::null(),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: The device is registered and `port` one of its ports; the name is a C string
        // and `ether_setup` the setup the C ULP passes.
        let nd = unsafe {
            alloc(
                device.as_raw(),
                port,
                bindings::rdma_netdev_t_RDMA_NETDEV_OPA_VNIC,
                c_str!("veth%d").as_char_ptr(),
                bindings::NET_NAME_UNKNOWN as u8,
                Some(bindings::ether_setup),
            )
        };
        let nd = NonNull::new(crate::error::from_err_ptr(nd)?).ok_or(ENOMEM)?;
        let raw = nd.as_ptr();
        let mut inner = inner;
        // SAFETY: `raw` is the fresh, unregistered netdev; its private area starts with
        // `struct rdma_netdev`. `inner` is pinned (only its address is taken, nothing moves)
        // and the returned value keeps it until after the netdev is unregistered.
        let ret = unsafe {
            let inner = Pin::get_unchecked_mut(inner.as_mut());
            inner.hfi_ops = (*raw).netdev_ops;
            let rn = bindings::netdev_priv(raw).cast::<bindings::rdma_netdev>();
            (*rn).clnt_priv = core::ptr::addr_of_mut!(*inner).cast::<c_void>();
            (*rn).hca = device.as_raw();
            (*rn).port_num = port;
            (*raw).netdev_ops = &Self::OPS;
            (*raw).ethtool_ops = &Self::ETHTOOL_OPS;
            bindings::netdev_add_priv_flags(
                raw,
                bindings::netdev_priv_flags_IFF_LIVE_ADDR_CHANGE.into(),
            );
            // The ULP writes its header into every frame (`SkBuffHead`): a sender that hands
            // the same skb over and over (pktgen with `clone_skb`) must not be allowed, or the
            // frame would carry the previous header. `ether_setup` allowed it.
            bindings::netdev_clear_priv_flags(
                raw,
                bindings::netdev_priv_flags_IFF_TX_SKB_SHARING.into(),
            );
            (*raw).hard_header_len += SKB_HEADROOM as u16;
            (*raw).dev.parent = (*device.as_raw()).__bindgen_anon_1.dev.parent;
            to_result(bindings::register_netdev(raw))
        };
        if let Err(e) = ret {
            // SAFETY: Registration failed: the netdev is ours to free, with the device's own
            // free operation; `inner` is dropped after it.
            unsafe { free(raw) };
            return Err(e);
        }
        // SAFETY: The netdev is registered.
        unsafe {
            bindings::netif_carrier_off(raw);
            bindings::netif_dormant_on(raw);
        }
        Ok(Self {
            netdev: nd,
            inner,
            _scope: device.clone(),
        })
    }

    /// The netdev.
    pub fn netdev(&self) -> &VnicNetdevRef {
        // SAFETY: By the type invariant the netdev is registered while `self` lives.
        unsafe { VnicNetdevRef::from_raw(self.netdev.as_ptr()) }
    }

    /// The ULP's state.
    pub fn ulp(&self) -> &T {
        &self.inner.ulp
    }

    /// # Safety
    ///
    /// `nd` is a netdev of this type (its operations are `T`'s trampolines).
    unsafe fn inner<'a>(nd: *mut bindings::net_device) -> &'a Inner<T> {
        // SAFETY: By the type invariant `clnt_priv` is the `Inner<T>`, alive while the netdev
        // is registered, which it is while its operations run.
        // `netdev_priv()` is the address of `priv` (6.12): written out, as transmit calls
        // this for every frame.
        unsafe {
            let rn = core::ptr::addr_of_mut!((*nd).priv_).cast::<bindings::rdma_netdev>();
            &*(*rn).clnt_priv.cast::<Inner<T>>()
        }
    }

    /// The device's statistics of the netdev: the standard ones and the VNIC groups
    /// (`struct opa_vnic_stats`).
    pub fn stats(&self) -> VnicStats {
        Self::device_stats(self.netdev.as_ptr(), &self.inner)
    }
}

/// Frees an unregistered VNIC netdev with its device's free operation.
///
/// # Safety
///
/// `nd` is an unregistered OPA VNIC netdev that nothing uses any more.
unsafe fn free(nd: *mut bindings::net_device) {
    // SAFETY: As the caller guarantees; the device filled in `free_rdma_netdev`.
    unsafe {
        let rn = bindings::netdev_priv(nd).cast::<bindings::rdma_netdev>();
        if let Some(f) = (*rn).free_rdma_netdev {
            f(nd);
        }
    }
}

impl<T: VnicUlp> Drop for VnicNetdev<T> {
    fn drop(&mut self) {
        let nd = self.netdev.as_ptr();
        // SAFETY: By the type invariant the netdev is registered; once unregistered no
        // operation runs, so it can be freed; `inner` is freed after this, with `self`.
        unsafe {
            bindings::unregister_netdev(nd);
            free(nd);
        }
    }
}
