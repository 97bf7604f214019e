// SPDX-License-Identifier: GPL-2.0

//! The `alloc_rdma_netdev` operation of a provider and the operations of its VNIC netdevs, which
//! call the provider's [`VnicOps`].

use super::{
    rx::{rx_offset, RxNapi},
    ProviderNetdev, SkbMetadata, VnicOps, Xmit, MAX_TX_QUEUES, PRIV_OFFSET,
};
use crate::rdma::provider::{Provider, ProviderDevice};
use crate::{
    bindings,
    error::code::*,
    ffi::{c_char, c_int, c_uchar},
    net::skbuff::{xmit_busy, SkBuff},
    str::CStr,
};
use core::{marker::PhantomData, ptr::NonNull};

/// The VNIC netdev ops and the `alloc_rdma_netdev` op of a provider `T`.
pub(crate) struct Adapter<T: Provider>(PhantomData<T>);

impl<T: Provider> Adapter<T> {
    const NETDEV_OPS: bindings::net_device_ops = bindings::net_device_ops {
        ndo_open: Some(Self::open),
        ndo_stop: Some(Self::stop),
        ndo_start_xmit: Some(Self::start_xmit),
        ndo_select_queue: Some(Self::select_queue),
        ndo_get_stats64: Some(Self::get_stats64),
        // SAFETY: The other ops are absent (null), which is valid.
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// # Safety
    ///
    /// Called by the IB core only (through the ops of [`super::provider`]), with a device of
    /// `T`, a valid C string `name` and a valid `setup` function or none (the client's
    /// arguments of `ib_device_ops.alloc_rdma_netdev`).
    pub(crate) unsafe extern "C" fn alloc_rdma_netdev(
        ibdev: *mut bindings::ib_device,
        port: u32,
        kind: bindings::rdma_netdev_t,
        name: *const c_char,
        name_assign_type: c_uchar,
        setup: Option<unsafe extern "C" fn(*mut bindings::net_device)>,
    ) -> *mut bindings::net_device {
        crate::build_assert!(core::mem::align_of::<T::Vnic>() <= 8);
        crate::build_assert!(PRIV_OFFSET % 8 == 0);
        crate::build_assert!(core::mem::align_of::<RxNapi>() <= 8);
        // SAFETY: The core passes a device of `T`, alive during the call.
        let dev = unsafe { ProviderDevice::<T>::from_raw(ibdev) };
        if kind != bindings::rdma_netdev_t_RDMA_NETDEV_OPA_VNIC {
            return EOPNOTSUPP.to_ptr();
        }
        if port == 0 || port > dev.port_count() {
            return EINVAL.to_ptr();
        }
        // `alloc_netdev_mqs()` calls `setup` unconditionally and `BUG()`s on a name that does
        // not fit `IFNAMSIZ`: refuse both here.
        let Some(setup) = setup else {
            return EINVAL.to_ptr();
        };
        // SAFETY: `name` is a valid C string during the call (the function's requirement).
        if unsafe { CStr::from_char_ptr(name) }.len() >= bindings::IFNAMSIZ as usize {
            return EINVAL.to_ptr();
        }
        let data = match T::Vnic::alloc(dev, port) {
            Ok(d) => d,
            Err(e) => return e.to_ptr(),
        };
        let size = rx_offset::<T>() + core::mem::size_of::<RxNapi>();
        let txqs = T::Vnic::tx_queues(dev, port).clamp(1, MAX_TX_QUEUES);
        // SAFETY: `name` is the client's C string, shorter than `IFNAMSIZ`, and `setup` its
        // setup function (checked above), valid during the call; `txqs` transmit queues (at
        // least one), one receive queue (receive does not go through the stack's queues).
        let nd = unsafe {
            bindings::alloc_netdev_mqs(size as c_int, name, name_assign_type, Some(setup), txqs, 1)
        };
        if nd.is_null() {
            return ENOMEM.to_ptr();
        }
        // SAFETY: `nd` is a new netdev with a zeroed private area of `size` bytes, which only
        // this function knows: write the device's callbacks, its data, its receive context
        // (after the data, destroyed in `free_rdma_netdev` before the netdev is freed) and
        // its ops.
        unsafe {
            let p = bindings::netdev_priv(nd).cast::<u8>();
            let rn = p.cast::<bindings::rdma_netdev>();
            (*rn).free_rdma_netdev = Some(Self::free_rdma_netdev);
            (*rn).set_id = Some(Self::set_id);
            p.add(PRIV_OFFSET).cast::<T::Vnic>().write(data);
            RxNapi::init::<T>(p.add(rx_offset::<T>()).cast::<RxNapi>(), nd);
            (*nd).netdev_ops = &Self::NETDEV_OPS;
            // As `hfi1_vnic_alloc_rn()`: the same features offered, on, and inherited by VLAN
            // devices on top.
            let features = T::Vnic::FEATURES.bits();
            (*nd).features = features;
            (*nd).hw_features = features;
            (*nd).vlan_features = features;
        }
        // INVARIANT: `nd` now holds the `T::Vnic` at `PRIV_OFFSET` and the receive context
        // after it, until `free_rdma_netdev`: what a `ProviderNetdev<T>` of it relies on.
        nd
    }

    /// # Safety
    ///
    /// Called by the client once, with an unregistered VNIC netdev of `T`.
    unsafe extern "C" fn free_rdma_netdev(nd: *mut bindings::net_device) {
        // SAFETY: The netdev is a VNIC netdev of `T`; its receive context is deleted (no poll
        // uses the data after this) and its data dropped, once, here, before the netdev is
        // freed, and nothing uses it any more (it is unregistered).
        unsafe {
            let p = bindings::netdev_priv(nd).cast::<u8>();
            RxNapi::destroy(p.add(rx_offset::<T>()).cast::<RxNapi>());
            core::ptr::drop_in_place(p.add(PRIV_OFFSET).cast::<T::Vnic>());
            bindings::free_netdev(nd);
        }
    }

    /// # Safety
    ///
    /// Called by the client with a VNIC netdev of `T`.
    unsafe extern "C" fn set_id(nd: *mut bindings::net_device, id: c_int) {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { ProviderNetdev::<T>::from_raw(nd) };
        T::Vnic::set_id(nd, id);
    }

    /// # Safety
    ///
    /// Called by the networking core (through the client) with a VNIC netdev of `T`.
    unsafe extern "C" fn open(nd: *mut bindings::net_device) -> c_int {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { ProviderNetdev::<T>::from_raw(nd) };
        match T::Vnic::open(nd) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// # Safety
    ///
    /// Called by the networking core (through the client) with a VNIC netdev of `T`.
    unsafe extern "C" fn stop(nd: *mut bindings::net_device) -> c_int {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { ProviderNetdev::<T>::from_raw(nd) };
        T::Vnic::stop(nd);
        0
    }

    /// # Safety
    ///
    /// Called by the networking core (through the client) with a VNIC netdev of `T` and a
    /// buffer it hands over.
    unsafe extern "C" fn start_xmit(
        skb: *mut bindings::sk_buff,
        nd: *mut bindings::net_device,
    ) -> bindings::netdev_tx_t {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { ProviderNetdev::<T>::from_raw(nd) };
        let Some(skb) = NonNull::new(skb) else {
            return bindings::netdev_tx_NETDEV_TX_OK;
        };
        // SAFETY: `ndo_start_xmit` passes the ownership of the buffer.
        match T::Vnic::xmit(nd, unsafe { SkBuff::from_raw(skb) }) {
            Xmit::Done => bindings::netdev_tx_NETDEV_TX_OK,
            // The stack takes back the buffer it gave, and only that one: another is dropped
            // and counted as a transmit drop of the netdev (`xmit_busy`).
            Xmit::Busy(back) => xmit_busy(skb.as_ptr(), back, || {
                // SAFETY: The netdev is alive during the call; the counter may be raised in
                // any context.
                unsafe { bindings::dev_core_stats_tx_dropped_inc(nd.as_raw()) }
            }),
        }
    }

    /// # Safety
    ///
    /// Called by the networking core (through the client) with a VNIC netdev of `T` and a
    /// buffer starting with the metadata.
    unsafe extern "C" fn select_queue(
        nd: *mut bindings::net_device,
        skb: *mut bindings::sk_buff,
        _sb_dev: *mut bindings::net_device,
    ) -> u16 {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { ProviderNetdev::<T>::from_raw(nd) };
        // SAFETY: The buffer is valid during the call, and its head holds `skb_headlen()`
        // (`len - data_len`) initialised bytes at `skb->data`, which nothing writes meanwhile
        // (the stack hands the buffer to `ndo_start_xmit` only after this returns). `parse`
        // checks the length: a head shorter than the metadata gives the default.
        let meta = unsafe {
            let len = ((*skb).len - (*skb).data_len) as usize;
            let head = core::slice::from_raw_parts((*skb).data, len);
            SkbMetadata::parse(head).unwrap_or_default()
        };
        T::Vnic::select_queue(nd, &meta)
    }

    /// # Safety
    ///
    /// Called by the client with a VNIC netdev of `T` and a `struct opa_vnic_stats`.
    unsafe extern "C" fn get_stats64(
        nd: *mut bindings::net_device,
        stats: *mut bindings::rtnl_link_stats64,
    ) {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { ProviderNetdev::<T>::from_raw(nd) };
        // SAFETY: By the VNIC contract (see the module documentation) `stats` is the
        // `netstats` member, at offset 0, of a `struct opa_vnic_stats`, writable during the
        // call.
        let stats = unsafe { &mut *stats.cast::<bindings::opa_vnic_stats>() };
        T::Vnic::stats(nd, stats);
    }
}
