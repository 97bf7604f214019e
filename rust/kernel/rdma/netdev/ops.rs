// SPDX-License-Identifier: GPL-2.0

//! The `net_device_ops` of a VNIC netdev: the ULP's operations around the device's.

use super::{
    netdev_ref::SockAddr, AddrLists, Inner, UlpNetdev, UlpNetdevAtomic, UlpNetdevRef, VnicStats,
    VnicUlp,
};
use crate::{
    bindings,
    net::{
        rtnl::Rtnl,
        skbuff::{xmit_busy, SkBuff, SkBuffRef},
    },
    rdma::vnic::SKB_MDATA_LEN,
    sync::rcu::ReadSide,
};
use core::{
    ffi::{c_int, c_void},
    ptr::NonNull,
};

// The metadata written in front of a frame is `struct opa_vnic_skb_mdata`, whose length the
// device reads off (`OPA_VNIC_SKB_MDATA_LEN`).
const _: () = assert!(core::mem::size_of::<bindings::opa_vnic_skb_mdata>() == SKB_MDATA_LEN);

impl<T: VnicUlp> UlpNetdev<T> {
    pub(super) const OPS: bindings::net_device_ops = bindings::net_device_ops {
        ndo_open: Some(Self::open),
        ndo_stop: Some(Self::stop),
        ndo_start_xmit: Some(Self::start_xmit),
        ndo_get_stats64: Some(Self::get_stats64),
        ndo_set_rx_mode: Some(Self::set_rx_mode),
        ndo_select_queue: Some(Self::select_queue),
        ndo_set_mac_address: Some(Self::set_mac_address),
        // SAFETY: The other operations are absent (null).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn open(nd: *mut bindings::net_device) -> c_int {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: The device's operations are valid while the netdev exists.
        let ret = unsafe { (*inner.hfi_ops).ndo_open.map_or(0, |f| f(nd)) };
        if ret == 0 {
            // SAFETY: As above; the stack calls `ndo_open` under RTNL, in process context, without
            // the address lock.
            let (rtnl, netdev) = unsafe { (Rtnl::assume_held(), UlpNetdevRef::from_raw(nd)) };
            inner.ulp.opened(rtnl, netdev);
        }
        ret
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn stop(nd: *mut bindings::net_device) -> c_int {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: The device's operations are valid while the netdev exists.
        let ret = unsafe { (*inner.hfi_ops).ndo_stop.map_or(0, |f| f(nd)) };
        if ret == 0 {
            // SAFETY: As above; the stack calls `ndo_stop` under RTNL, in process context, without
            // the address lock.
            let (rtnl, netdev) = unsafe { (Rtnl::assume_held(), UlpNetdevRef::from_raw(nd)) };
            inner.ulp.stopped(rtnl, netdev);
        }
        ret
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn start_xmit(
        given: *mut bindings::sk_buff,
        nd: *mut bindings::net_device,
    ) -> bindings::netdev_tx_t {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: The stack hands a valid skb over to the driver (never null), and no one else
        // holds it: the netdev does not allow shared skbs (`IFF_TX_SKB_SHARING` is cleared in
        // `new`).
        let skb = unsafe { SkBuff::from_raw(NonNull::new_unchecked(given)) };
        // SAFETY: The stack calls `ndo_start_xmit` with bottom halves disabled (under
        // `rcu_read_lock_bh()` in `__dev_queue_xmit()`, `local_bh_disable()` in pktgen and
        // `dev_direct_xmit()`) or interrupts disabled (netpoll): an RCU read-side section
        // that lasts the call. The netdev is valid during it.
        let (rcu, netdev) = unsafe { (ReadSide::assume(), UlpNetdevAtomic::from_raw(nd)) };
        let Some(skb) = inner.ulp.xmit(netdev, skb, rcu) else {
            // The ULP took the frame (dropped it).
            return bindings::netdev_tx_NETDEV_TX_OK;
        };
        // SAFETY: The netdev is set up (the stack transmits only on a registered one): its
        // device's operations are valid while it exists.
        let Some(device_xmit) = (unsafe { (*inner.hfi_ops).ndo_start_xmit }) else {
            // A device without a transmit: the frame is dropped, and counted.
            drop(skb);
            netdev.count_tx_dropped();
            return bindings::netdev_tx_NETDEV_TX_OK;
        };
        // The ULP may have dropped the stack's buffer and returned another: `given` is only
        // compared with what the device hands back (`xmit_busy`).
        let out = skb.into_raw();
        // SAFETY: The device's transmit takes the skb over, or, returning `NETDEV_TX_BUSY`,
        // hands it back to its caller with the metadata and 16B header pulled off again
        // (hfi1's contract, `rdma::vnic`).
        let ret = unsafe { device_xmit(out.as_ptr(), nd) };
        if ret != bindings::netdev_tx_NETDEV_TX_BUSY {
            return ret;
        }
        // SAFETY: On `NETDEV_TX_BUSY` the device gave the buffer `out` back: it is ours again.
        let back = unsafe { SkBuff::from_raw(out) };
        xmit_busy(given, back, || netdev.count_tx_dropped())
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn select_queue(
        nd: *mut bindings::net_device,
        skb: *mut bindings::sk_buff,
        sb_dev: *mut bindings::net_device,
    ) -> u16 {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: The stack lends the skb (never null) for this call, on the transmitting CPU
        // that owns it: nothing else changes it or reads its hash meanwhile.
        let (vl, entropy) = inner.ulp.vl_entropy(unsafe { SkBuffRef::from_raw(skb) });
        // The device reads the metadata in front of the frame (hfi1's contract): write it in
        // the headroom, as the C ULP does, but only once the head is the skb's own, so that a
        // clone sharing it (a tap) is not written under. The test of the inline
        // `skb_cow_head()` is written out, so that a buffer never cloned costs no call.
        // SAFETY: The skb is valid and the stack's caller may change its head here: the stack
        // reads its fields again after `ndo_select_queue`.
        let own = unsafe {
            (*skb).cloned() == 0
                && ((*skb).data as usize).wrapping_sub((*skb).head as usize) >= SKB_MDATA_LEN
        };
        // SAFETY: As above.
        if !own && unsafe { bindings::skb_cow_head(skb, SKB_MDATA_LEN as u32) } != 0 {
            return 0;
        }
        // SAFETY: The head is the skb's own with at least `SKB_MDATA_LEN` bytes of headroom
        // (tested above, or `skb_cow_head` succeeded); the metadata is pushed there
        // (`__skb_push()`) and pulled off again before returning, so the stack sees the frame
        // as it passed it.
        unsafe {
            (*skb).data = (*skb).data.sub(SKB_MDATA_LEN);
            (*skb).len = (*skb).len.wrapping_add(SKB_MDATA_LEN as u32);
            (*skb)
                .data
                .cast::<bindings::opa_vnic_skb_mdata>()
                .write_unaligned(bindings::opa_vnic_skb_mdata {
                    vl,
                    entropy,
                    flags: 0,
                    rsvd: 0,
                });
        }
        // SAFETY: The device reads the metadata the ULP pushed in front of the frame.
        let queue = unsafe {
            (*inner.hfi_ops)
                .ndo_select_queue
                .map_or(0, |f| f(nd, skb, sb_dev))
        };
        // SAFETY: Pushed above (`__skb_pull()`); the device leaves the offsets as they were.
        unsafe {
            (*skb).data = (*skb).data.add(SKB_MDATA_LEN);
            (*skb).len = (*skb).len.wrapping_sub(SKB_MDATA_LEN as u32);
        }
        queue
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn get_stats64(
        nd: *mut bindings::net_device,
        stats: *mut bindings::rtnl_link_stats64,
    ) {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // The device writes a whole `struct opa_vnic_stats` around the `rtnl_link_stats64`
        // it is given (hfi1's contract): give it one, and pass on the standard part.
        // SAFETY: The stack asks only a registered netdev of this type, set up before its
        // registration, and `inner` is its part.
        let vstats = unsafe { Self::device_stats(nd, inner) };
        // SAFETY: `stats` is the stack's buffer for the standard statistics.
        unsafe { *stats = vstats.netstats };
    }

    /// The device's statistics of the netdev `nd`.
    ///
    /// # Safety
    ///
    /// `nd` is a VNIC netdev of this type that is set up (its device's operations saved in
    /// `inner.hfi_ops`) and not freed, and `inner` is its ULP part (`Self::inner(nd)`).
    pub(super) unsafe fn device_stats(
        nd: *mut bindings::net_device,
        inner: &Inner<T>,
    ) -> VnicStats {
        // SAFETY: All-zero is a valid `opa_vnic_stats`.
        let mut vstats: VnicStats = unsafe { core::mem::zeroed() };
        // SAFETY: `nd` is set up and alive and `inner` its part (the caller's guarantee), so
        // `hfi_ops` are the device's operations, valid while the netdev exists; the device
        // fills in the `opa_vnic_stats` whose `netstats` it is given (hfi1's contract).
        unsafe {
            if let Some(f) = (*inner.hfi_ops).ndo_get_stats64 {
                f(nd, &mut vstats.netstats);
            }
        }
        vstats
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn set_rx_mode(nd: *mut bindings::net_device) {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: As above. Atomic context, address lock held: the atomic reference.
        let netdev = unsafe { UlpNetdevAtomic::from_raw(nd) };
        // INVARIANT: The stack calls `ndo_set_rx_mode` with the address lock held
        // (`__dev_set_rx_mode()` callers take `netif_addr_lock_bh()`), until it returns.
        inner.ulp.rx_mode_changed(netdev, &AddrLists { netdev });
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    pub(super) unsafe extern "C" fn set_mac_address(
        nd: *mut bindings::net_device,
        addr: *mut c_void,
    ) -> c_int {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: As above; the stack calls `ndo_set_mac_address` under RTNL (every caller of
        // `dev_set_mac_address()` holds it: it sends the `NETDEV_CHANGEADDR` notification,
        // which needs RTNL), in process context, without the address lock.
        let (rtnl, dev) = unsafe { (Rtnl::assume_held(), UlpNetdevRef::from_raw(nd)) };
        // SAFETY: `addr` is a `sockaddr` with the new address.
        if dev.mac(rtnl) == unsafe { SockAddr::mac_of(addr) } {
            return 0;
        }
        // SAFETY: Under RTNL, as the stack calls this.
        let ret = unsafe { bindings::eth_mac_addr(nd, addr) };
        if ret == 0 {
            inner.ulp.mac_changed(rtnl, dev);
        }
        ret
    }
}
