// SPDX-License-Identifier: GPL-2.0

//! OPA VNIC netdevs as an upper layer protocol uses them.
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/rdma/opa_vnic.h`](srctree/include/rdma/opa_vnic.h)
//!
//! An OPA device creates the netdev (`ib_device_ops.alloc_rdma_netdev` with
//! `RDMA_NETDEV_OPA_VNIC`); its private area starts with `struct rdma_netdev`. The ULP puts
//! its own context there, keeps the device's `net_device_ops` and installs its own, which
//! call the device's: [`UlpNetdev`] does that, calling the [`VnicUlp`] around the device's
//! operations. The device's side of the same netdev is [`super::vnic::ProviderNetdev`].
//!
//! The callbacks see the netdev through a reference type that fits their context: those
//! that may run in atomic context get a [`UlpNetdevAtomic`], which offers nothing that
//! sleeps or takes the address lock; those that run in process context get a
//! [`UlpNetdevRef`], which offers everything.

mod addr_lists;
mod ethtool;
mod netdev_ref;
mod ops;

pub use addr_lists::{AddrList, AddrLists};
pub use netdev_ref::{UlpNetdevAtomic, UlpNetdevRef};

use super::scope::DeviceScope;
use crate::{
    bindings, c_str,
    error::to_result,
    net::{
        rtnl::{Rtnl, RtnlGuard},
        skbuff::{SkBuff, SkBuffRef},
    },
    prelude::*,
    str::CStr,
    sync::rcu::ReadSide,
};
use core::{ffi::c_void, marker::PhantomData, ptr::NonNull};

/// The statistics an OPA device keeps of a VNIC netdev (`struct opa_vnic_stats`): the
/// standard netdev counters, per-group transmit and receive counters, and the VNIC drops.
pub type VnicStats = bindings::opa_vnic_stats;

/// One statistic of `ethtool -S`: its name and how to read it from the device's statistics.
pub type EthtoolStat = (&'static str, fn(&VnicStats) -> u64);

/// What a ULP does around the device's operations of its VNIC netdev.
///
/// The callbacks run in the contexts of the corresponding `ndo_*` operations. Those that run
/// under RTNL in process context get an [`Rtnl`] token and a [`UlpNetdevRef`];
/// [`VnicUlp::xmit`], [`VnicUlp::vl_entropy`] and [`VnicUlp::rx_mode_changed`] may run in
/// atomic context (with bottom halves or interrupts off, or under the address lock) and get
/// at most a [`UlpNetdevAtomic`], which cannot sleep.
pub trait VnicUlp: Send + Sync + 'static {
    /// The driver's name, for `ethtool -i`.
    const DRIVER_NAME: &'static CStr;

    /// The statistics `ethtool -S` shows: names (at most 31 bytes) and how to read each from
    /// the device's statistics.
    const ETHTOOL_STATS: &'static [EthtoolStat];

    /// The bytes the ULP puts in front of every frame it transmits: the stack is asked to
    /// leave that much headroom (it is added to the netdev's `hard_header_len`, as the C ULP
    /// adds `OPA_VNIC_SKB_HEADROOM`).
    const HEADROOM: u16;

    /// The device opened the interface (`ndo_open`).
    fn opened(&self, rtnl: &Rtnl, netdev: &UlpNetdevRef);

    /// The device stopped the interface (`ndo_stop`).
    fn stopped(&self, rtnl: &Rtnl, netdev: &UlpNetdevRef);

    /// Transmit (`ndo_start_xmit`): the stack hands the ULP the frame `skb` (never shared: the
    /// netdev does not allow `IFF_TX_SKB_SHARING`; its head may be shared with clones, and it
    /// may lie partly in page fragments when the device advertises scatter-gather, as hfi1
    /// does). The ULP returns what the device is to transmit (for an OPA VNIC device: the
    /// metadata, the 16B header and the frame, in a head of its own), or `None` once it has
    /// dropped the frame (and counted it, if it counts drops).
    ///
    /// The ULP may return another buffer than `skb` (having dropped `skb`): the device then
    /// transmits that one, and if it answers `NETDEV_TX_BUSY` the buffer is dropped and
    /// counted in `tx_dropped` rather than given back, as the stack can only requeue the one it
    /// passed ([`xmit_busy`](crate::net::skbuff::xmit_busy)).
    ///
    /// Atomic context, in an RCU read-side section (`rcu`: `ndo_start_xmit` runs with bottom
    /// halves or interrupts disabled).
    fn xmit(&self, netdev: &UlpNetdevAtomic, skb: SkBuff, rcu: &ReadSide) -> Option<SkBuff>;

    /// The VL and the entropy of a frame, for the device to choose a queue from. Atomic
    /// context; the buffer is the stack's, only borrowed. The stack calls it before it pads
    /// the frame or moves a VLAN device's tag into it (`skb_vlan_tag_present()` may hold),
    /// and the frame may lie partly in fragments, as for [`VnicUlp::xmit`].
    fn vl_entropy(&self, skb: &SkBuffRef) -> (u8, u8);

    /// The interface's MAC address changed (by `ip link set address`).
    fn mac_changed(&self, rtnl: &Rtnl, netdev: &UlpNetdevRef);

    /// The interface's unicast or multicast address lists may have changed; `lists` reads
    /// them. Called under the netdev's address lock with bottom halves off (atomic context),
    /// with or without RTNL (`ndo_set_rx_mode`).
    fn rx_mode_changed(&self, netdev: &UlpNetdevAtomic, lists: &AddrLists<'_>);
}

/// The ULP's state in the netdev (`rdma_netdev.clnt_priv`), from registration until the
/// netdev is released.
struct Inner<T: VnicUlp> {
    ulp: T,
    /// The device's own operations, which ours call.
    hfi_ops: *const bindings::net_device_ops,
    /// Keeps the device (whose driver made the netdev and frees it) until the netdev is
    /// freed: dropped after the device's free operation.
    _scope: DeviceScope,
}

/// A registered OPA VNIC netdev of the ULP `T`: the ULP's side of it.
///
/// Dropping it unregisters the netdev (`unregister_netdev()`, which takes RTNL: not with
/// RTNL held) and frees it; [`UlpNetdev::unregister`] does the same under RTNL.
///
/// # Invariants
///
/// `netdev` was allocated by the device for `RDMA_NETDEV_OPA_VNIC` and is registered; its
/// `rdma_netdev.clnt_priv` is an `Inner<T>` (allocated with `KBox`) whose `hfi_ops` are the
/// device's operations; its `netdev_ops` are `T`'s trampolines and its `priv_destructor` is
/// `UlpNetdev::release`, which frees the netdev and the `Inner<T>` once the netdev is
/// unregistered and unused.
pub struct UlpNetdev<T: VnicUlp> {
    netdev: NonNull<bindings::net_device>,
    _ulp: PhantomData<Inner<T>>,
}

// SAFETY: The netdev may be unregistered from any thread; `T` is `Send + Sync`.
unsafe impl<T: VnicUlp> Send for UlpNetdev<T> {}
// SAFETY: `&UlpNetdev` gives `&T` and `&UlpNetdevRef`, both usable from any thread.
unsafe impl<T: VnicUlp> Sync for UlpNetdev<T> {}

impl<T: VnicUlp> UlpNetdev<T> {
    /// Has `device` allocate a VNIC netdev on `port` (named `veth%d`), installs `ulp` and its
    /// operations, and registers it, carrier off and dormant.
    ///
    /// Fails with `EOPNOTSUPP` if the device cannot allocate VNIC netdevs. Takes RTNL
    /// (`register_netdev()`): not with it held.
    pub fn new(device: &DeviceScope, port: u32, ulp: T) -> Result<Self> {
        if !device.is_port_valid(port) {
            return Err(EINVAL);
        }
        // SAFETY: The device is registered; its ops table is constant while it is.
        let alloc = unsafe { (*device.as_raw()).ops.alloc_rdma_netdev }.ok_or(EOPNOTSUPP)?;
        let mut inner = KBox::new(
            Inner {
                ulp,
                hfi_ops: core::ptr::null(),
                _scope: device.clone(),
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
        // SAFETY: `raw` is the fresh, unregistered netdev; its private area starts with
        // `struct rdma_netdev`, whose `clnt_priv`, `hca` and `port_num` are the client's to
        // fill (`include/rdma/ib_verbs.h`).
        let ret = unsafe {
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
            // The ULP writes its header into every frame it is handed: a sender that hands
            // the same skb over and over (pktgen with `clone_skb`) must not be allowed, or the
            // frame would carry the previous header. `ether_setup` allowed it.
            bindings::netdev_clear_priv_flags(
                raw,
                bindings::netdev_priv_flags_IFF_TX_SKB_SHARING.into(),
            );
            (*raw).hard_header_len += T::HEADROOM;
            (*raw).dev.parent = (*device.as_raw()).__bindgen_anon_1.dev.parent;
            to_result(bindings::register_netdev(raw))
        };
        if let Err(e) = ret {
            // SAFETY: Registration failed: the netdev is ours to free, with the device's own
            // free operation; `inner` is dropped after it.
            unsafe { free(raw) };
            return Err(e);
        }
        // The `Inner<T>` is now the netdev's (`clnt_priv` points to it), freed by `release`.
        let _ = KBox::into_raw(inner);
        // SAFETY: The netdev is registered. Only this value unregisters it (it has no
        // `rtnl_link_ops`, so no `ip link del` can), and the stack reads `priv_destructor`
        // only once it is unregistered (`netdev_run_todo()`): it is set before any reader.
        unsafe {
            (*raw).priv_destructor = Some(Self::release);
            bindings::netif_carrier_off(raw);
            bindings::netif_dormant_on(raw);
        }
        // INVARIANT: The device allocated `nd` for `RDMA_NETDEV_OPA_VNIC`, and it is
        // registered; `clnt_priv` is the `Inner<T>` (from `KBox`) whose `hfi_ops` were the
        // netdev's operations, replaced by `T`'s; `priv_destructor` is `release`.
        Ok(Self {
            netdev: nd,
            _ulp: PhantomData,
        })
    }

    /// The netdev, for process context without its address lock ([`UlpNetdevRef`]'s
    /// context): what it offers may sleep or take that lock.
    pub fn netdev(&self) -> &UlpNetdevRef {
        // SAFETY: By the type invariant the netdev is registered, with `T`'s operations,
        // while `self` lives.
        unsafe { UlpNetdevRef::from_raw(self.netdev.as_ptr()) }
    }

    /// The ULP's state.
    pub fn ulp(&self) -> &T {
        // SAFETY: The netdev is registered while `self` lives (type invariant), so `release`
        // has not freed its `Inner<T>`.
        unsafe { &Self::inner(self.netdev.as_ptr()).ulp }
    }

    /// Unregisters the netdev under RTNL (`unregister_netdevice()`), for a caller that took
    /// it ([`Rtnl::lock`]): dropping a [`UlpNetdev`] takes RTNL itself. No operation of the
    /// netdev runs once this returns; the netdev, the ULP's state `T` and the device's scope
    /// are freed when RTNL is released and the netdev's last reference goes
    /// (`netdev_run_todo()`, in process context), so `T`'s drop must not need RTNL's holder to
    /// go on first.
    ///
    /// The guard, not the token the netdev's callbacks get: unregistering from inside one
    /// hangs, since the core goes on with the netdev when the callback returns (`dev_close()`
    /// would call `ndo_stop` for ever, `dev_open()` hold a reference nothing puts).
    pub fn unregister(self, _rtnl: &RtnlGuard) {
        let nd = self.netdev.as_ptr();
        core::mem::forget(self);
        // SAFETY: By the type invariant the netdev is registered; RTNL is held (as the guard
        // proves), as `unregister_netdevice_queue()` requires. The netdev is freed by
        // `release` after RTNL is released, not here.
        unsafe { bindings::unregister_netdevice_queue(nd, core::ptr::null_mut()) };
    }

    /// # Safety
    ///
    /// `nd` is a netdev of this type (its operations are `T`'s trampolines) that has not been
    /// released, and stays so for `'a`.
    unsafe fn inner<'a>(nd: *mut bindings::net_device) -> &'a Inner<T> {
        // SAFETY: By the type invariant `clnt_priv` is the `Inner<T>`, alive until the netdev
        // is released, which the caller guarantees it is not during `'a`.
        // `netdev_priv()` is the address of `priv` (6.12): written out, as transmit calls
        // this for every frame.
        unsafe {
            let rn = core::ptr::addr_of_mut!((*nd).priv_).cast::<bindings::rdma_netdev>();
            &*(*rn).clnt_priv.cast::<Inner<T>>()
        }
    }

    /// `priv_destructor`: frees the netdev and the ULP's state.
    ///
    /// # Safety
    ///
    /// Called by `netdev_run_todo()` only, for a netdev of this type that is unregistered and
    /// whose last reference is gone (no operation runs or will run), once.
    unsafe extern "C" fn release(nd: *mut bindings::net_device) {
        // SAFETY: By the type invariant `clnt_priv` is the `Inner<T>` from `KBox`, which no
        // one uses any more (the netdev is unregistered and unreferenced); taken back once.
        let inner = unsafe {
            let rn = bindings::netdev_priv(nd).cast::<bindings::rdma_netdev>();
            KBox::from_raw((*rn).clnt_priv.cast::<Inner<T>>())
        };
        // SAFETY: The netdev is unregistered and unused. `free_netdev()` (which the device's
        // free operation calls) is valid here: `netdev_unregister_kobject()` took a reference
        // to the device that `netdev_run_todo()` drops only after this returns, so the
        // `net_device` it reads afterwards (`needs_free_netdev`, false) is still allocated.
        unsafe { free(nd) };
        // The ULP's state, then the device's scope (the device's free operation ran).
        drop(inner);
    }

    /// The device's statistics of the netdev: the standard ones and the VNIC groups
    /// (`struct opa_vnic_stats`).
    pub fn stats(&self) -> VnicStats {
        let nd = self.netdev.as_ptr();
        // SAFETY: The netdev is registered while `self` lives (type invariant), so `release`
        // has not freed its `Inner<T>`.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: As above: registered, so set up and not freed; `inner` is its part.
        unsafe { Self::device_stats(nd, inner) }
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

impl<T: VnicUlp> Drop for UlpNetdev<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the netdev is registered. `unregister_netdev()` takes
        // RTNL (a caller holding it uses `unregister` instead) and, releasing it, runs
        // `netdev_run_todo()`, which waits for the netdev's references and then frees it with
        // `release` (our netdev was put on the todo list under that RTNL, so this
        // `rtnl_unlock()` takes it).
        unsafe { bindings::unregister_netdev(self.netdev.as_ptr()) };
    }
}
