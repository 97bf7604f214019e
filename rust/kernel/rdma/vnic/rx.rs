// SPDX-License-Identifier: GPL-2.0

//! The receive side of a VNIC netdev: a NAPI context on the netdev itself, in its private area
//! after the provider's data, whose poll is the provider's ([`VnicOps::poll`]).
//!
//! GRO keeps frames across polls, and each points to the netdev it arrived on: the netdev
//! must outlive the context. A context the netdev owns does, by construction: it is added to
//! the netdev when the netdev is allocated and deleted (which frees what GRO still holds)
//! before the netdev is freed. So frames go to GRO only through a [`VnicRx`], which only the
//! poll of that context gets, and which sets the frame's device to its own netdev.

use super::{ProviderNetdev, VnicOps, PRIV_OFFSET};
use crate::{
    bindings,
    error::{code::*, Result},
    net::{
        napi::{self, NapiCtx},
        skbuff::SkBuffMut,
    },
    rdma::provider::Provider,
    types::Opaque,
};
use core::{
    ffi::c_int,
    sync::atomic::{AtomicBool, Ordering},
};

/// The NAPI context of a VNIC netdev, in its private area at [`rx_offset`].
///
/// # Invariants
///
/// From the netdev's allocation until [`RxNapi::destroy`] (when it is freed), `napi` is added
/// to the netdev with the poll of its provider, and enabled except while
/// [`ProviderNetdev::rx_paused`] runs.
pub(super) struct RxNapi {
    napi: Opaque<bindings::napi_struct>,
    /// Set while [`ProviderNetdev::rx_paused`] runs, so that two never disable the context
    /// at once.
    pausing: AtomicBool,
}

/// Where the [`RxNapi`] of a VNIC netdev of `T` is in its private area: after the provider's
/// data, aligned.
pub(super) const fn rx_offset<T: Provider>() -> usize {
    let end = PRIV_OFFSET + core::mem::size_of::<T::Vnic>();
    let align = core::mem::align_of::<RxNapi>();
    end.div_ceil(align) * align
}

impl RxNapi {
    /// Sets the context up on the netdev `nd` of `T` and enables it.
    ///
    /// # Safety
    ///
    /// `this` is the [`RxNapi`] place ([`rx_offset`]) of the zeroed private area of `nd`, a
    /// new VNIC netdev of `T` whose provider data is initialised, and `destroy` is called
    /// before the netdev is freed.
    pub(super) unsafe fn init<T: Provider>(this: *mut Self, nd: *mut bindings::net_device) {
        // SAFETY: `this` is valid for writes, zeroed (an all-zero `napi_struct` is what
        // `netif_napi_add()` expects of the memory it sets up), and stays where it is until
        // the netdev is freed (the private area does not move).
        // INVARIANT: Added with `poll_callback::<T>` and enabled; `destroy` deletes it.
        unsafe {
            core::ptr::addr_of_mut!((*this).pausing).write(AtomicBool::new(false));
            let napi = Opaque::raw_get(core::ptr::addr_of!((*this).napi));
            bindings::netif_napi_add(nd, napi, Some(poll_callback::<T>));
            bindings::napi_enable(napi);
        }
    }

    /// Disables the context (waiting for a running poll) and deletes it, which frees the
    /// frames GRO still holds. Process context (it sleeps).
    ///
    /// # Safety
    ///
    /// `this` was set up by [`RxNapi::init`], and nothing else uses the netdev any more (it
    /// is unregistered, and being freed); called once.
    pub(super) unsafe fn destroy(this: *mut Self) {
        // SAFETY: Added and enabled (type invariant; no `rx_paused` runs, as nothing else uses
        // the netdev); deleted once.
        unsafe {
            let napi = Opaque::raw_get(core::ptr::addr_of!((*this).napi));
            bindings::napi_disable(napi);
            bindings::netif_napi_del(napi);
        }
    }
}

/// # Safety
///
/// Called by the networking core only, to poll the context of a VNIC netdev of `T` that
/// [`RxNapi::init`] added.
unsafe extern "C" fn poll_callback<T: Provider>(
    napi: *mut bindings::napi_struct,
    budget: c_int,
) -> c_int {
    // SAFETY: The context was added to a VNIC netdev of `T` (`napi->dev`, set by
    // `netif_napi_add()`), which lives until the context is deleted, after its last poll.
    let nd = unsafe { ProviderNetdev::<T>::from_raw((*napi).dev) };
    // SAFETY: The core is polling `napi` on this CPU for the duration of the call.
    unsafe {
        napi::run_poll(napi, budget, |ctx, budget| {
            T::Vnic::poll(nd, &VnicRx { ctx, nd }, budget)
        })
    }
}

/// The receive of a VNIC netdev during a poll of its own NAPI context ([`VnicOps::poll`]).
pub struct VnicRx<'a, T: Provider> {
    ctx: &'a NapiCtx<'a>,
    nd: &'a ProviderNetdev<T>,
}

impl<T: Provider> VnicRx<'_, T> {
    /// Hands a received Ethernet frame to GRO (hfi1's `napi_gro_receive()`): sets its device
    /// (this netdev) and protocol (`eth_type_trans`) first.
    ///
    /// Fails with `EINVAL`, and frees the buffer, when its linear part is shorter than an
    /// Ethernet header: `eth_type_trans` pulls one without checking.
    ///
    /// The buffer is a [`SkBuffMut`], not shared with a clone: GRO moves the fragments out of
    /// a merged buffer's shared info and may take over its head, which would take them from
    /// under a clone (a buffer from transmit, say).
    pub fn receive_gro(&self, skb: SkBuffMut) -> Result {
        if skb.data().len() < bindings::ETH_HLEN as usize {
            return Err(EINVAL);
        }
        // SAFETY: `skb` is a valid buffer we own, whose linear data starts with an Ethernet
        // header (checked above), which `eth_type_trans` pulls; the netdev is alive.
        unsafe { bindings::skb_eth_protocol_set(skb.as_raw(), self.nd.as_raw()) };
        // SAFETY: `eth_type_trans` set the buffer's device and protocol. The device is this
        // netdev, and the context is the netdev's own (only its poll gets a `VnicRx`), which
        // is deleted, freeing what GRO holds, before the netdev is freed.
        unsafe { self.ctx.gro_receive(skb) };
        Ok(())
    }
}

impl<T: Provider> ProviderNetdev<T> {
    fn rx_napi(&self) -> &RxNapi {
        // SAFETY: By the type invariant the netdev was allocated by `alloc_rdma_netdev` of
        // `T`, which set an `RxNapi` up at `rx_offset::<T>()` of the private area (aligned:
        // the area is `NETDEV_ALIGN`ed, and the offset a multiple of its alignment, which
        // `alloc_rdma_netdev` checks is at most that), alive until the netdev is freed.
        unsafe { &*self.priv_ptr().add(rx_offset::<T>()).cast::<RxNapi>() }
    }

    /// Schedules the netdev's receive (`napi_schedule()`): the provider's
    /// [`VnicOps::poll`] runs soon on this CPU, in softirq context. Any context; see
    /// [`Napi::schedule`](crate::net::napi::Napi::schedule).
    pub fn schedule_rx(&self) {
        // SAFETY: The context is added until the netdev is freed (invariant of `RxNapi`).
        unsafe { napi::schedule(self.rx_napi().napi.get()) };
    }

    /// Runs `f` with the netdev's receive disabled (`napi_disable()`, which waits for a
    /// running poll to finish, then `napi_enable()`): no poll runs meanwhile. Process context
    /// (it sleeps). `EBUSY` if another call is running.
    pub fn rx_paused<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        let rx = self.rx_napi();
        if rx.pausing.swap(true, Ordering::Acquire) {
            return Err(EBUSY);
        }
        // SAFETY: The context is enabled (invariant of `RxNapi`), and only this call
        // disables it (`pausing`) until the netdev is being freed, when no one calls this.
        unsafe { bindings::napi_disable(rx.napi.get()) };
        let r = f();
        // INVARIANT: Enabled again before `pausing` is cleared.
        // SAFETY: Disabled above.
        unsafe { bindings::napi_enable(rx.napi.get()) };
        rx.pausing.store(false, Ordering::Release);
        Ok(r)
    }
}
