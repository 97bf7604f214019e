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

use super::device::Device;
use crate::{
    bindings, c_str, error::to_result, net::skbuff::SkBuff, prelude::*, str::CStr, types::Opaque,
};
use core::{
    ffi::{c_int, c_void},
    mem::ManuallyDrop,
    ptr::NonNull,
};

/// The statistics an OPA device keeps of a VNIC netdev (`struct opa_vnic_stats`): the
/// standard netdev counters, per-group transmit and receive counters, and the VNIC drops.
pub type VnicStats = bindings::opa_vnic_stats;

/// Room the ULP needs in front of a frame: the 16B header and the metadata, rounded to 8
/// (`OPA_VNIC_SKB_HEADROOM`).
pub const SKB_HEADROOM: u32 = 24;

/// One statistic of `ethtool -S`: its name and how to read it from the device's statistics.
pub type EthtoolStat = (&'static str, fn(&VnicStats) -> u64);

/// What a ULP does around the device's operations of its VNIC netdev.
///
/// The callbacks run in the contexts of the corresponding `ndo_*` operations: `xmit` and
/// `select_queue` in softirq context (no sleeping), the others in process context under
/// RTNL.
pub trait VnicUlp: Send + Sync + 'static {
    /// The driver's name, for `ethtool -i`.
    const DRIVER_NAME: &'static CStr;

    /// The statistics `ethtool -S` shows: names (at most 31 bytes) and how to read each from
    /// the device's statistics.
    const ETHTOOL_STATS: &'static [EthtoolStat];

    /// The device opened the interface.
    fn opened(&self, netdev: &VnicNetdevRef);

    /// The device stopped the interface.
    fn stopped(&self, netdev: &VnicNetdevRef);

    /// Prepares a frame for the device's transmit: on `Err` the frame is dropped.
    fn encap(&self, skb: &mut SkBuff) -> Result;

    /// The VL and the entropy of a frame, for the device to choose a queue from.
    fn vl_entropy(&self, skb: &mut SkBuff) -> (u8, u8);

    /// The interface's MAC address changed (by `ip link set address`).
    fn mac_changed(&self, netdev: &VnicNetdevRef);

    /// The interface's unicast or multicast address lists may have changed; `lists` reads
    /// them.
    fn rx_mode_changed(&self, netdev: &VnicNetdevRef, lists: &AddrLists<'_>);
}

/// The address lists of a netdev.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AddrList {
    /// The device's own addresses (`dev_addrs`).
    Device,
    /// The secondary unicast addresses (`uc`).
    Unicast,
    /// The multicast addresses (`mc`).
    Multicast,
}

/// Read access to a netdev's address lists, while the locks that protect them are held.
///
/// # Invariants
///
/// `netdev` is valid for `'a`; the holder of `&AddrLists` holds the netdev's address lock
/// (`netif_addr_lock_bh()`), which protects the unicast and multicast lists, and RTNL or the
/// address lock, under which the device list does not change.
pub struct AddrLists<'a> {
    netdev: &'a VnicNetdevRef,
}

impl AddrLists<'_> {
    fn list(&self, which: AddrList) -> *mut bindings::netdev_hw_addr_list {
        let nd = self.netdev.as_raw();
        // SAFETY: `nd` is valid (type invariant); only the field's address is taken.
        unsafe {
            match which {
                AddrList::Device => core::ptr::addr_of_mut!((*nd).dev_addrs),
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
        let head = self.list(which);
        // SAFETY: By the type invariant the list does not change while we walk it; its entries
        // are `struct netdev_hw_addr`s linked through their first field, `list`.
        unsafe {
            let head = core::ptr::addr_of_mut!((*head).list);
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
}

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
    unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `Self` is a transparent wrapper, and the caller guarantees validity.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn as_raw(&self) -> *mut bindings::net_device {
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

    /// Sets the MAC address (`eth_commit_mac_addr_change()`).
    pub fn set_mac(&self, mac: &[u8; 6]) {
        let mut sa = SockAddr::new(mac);
        // SAFETY: The netdev is valid; `sa` is laid out as a `struct sockaddr` with the address.
        unsafe { bindings::eth_commit_mac_addr_change(self.as_raw(), sa.as_mut_ptr()) };
    }

    /// Sets the largest MTU, shrinking the current one to it if larger (under RTNL).
    pub fn set_max_mtu(&self, max: u32) {
        // SAFETY: The netdev is valid; `rtnl_lock` serialises with the stack's MTU changes.
        unsafe {
            bindings::rtnl_lock();
            let nd = self.as_raw();
            (*nd).max_mtu = max.max((*nd).min_mtu);
            if (*nd).mtu > (*nd).max_mtu {
                bindings::dev_set_mtu(nd, (*nd).max_mtu as c_int);
            }
            bindings::rtnl_unlock();
        }
    }

    /// The ULP part of the netdev's private area.
    fn rdma_netdev(&self) -> *mut bindings::rdma_netdev {
        // SAFETY: The private area of an OPA VNIC netdev starts with `struct rdma_netdev`.
        unsafe { bindings::netdev_priv(self.as_raw()).cast::<bindings::rdma_netdev>() }
    }

    /// Calls `f` with the netdev's address lists, taking RTNL and the address lock for it.
    /// Process context only.
    pub fn with_addr_lists<R>(&self, f: impl FnOnce(&AddrLists<'_>) -> R) -> R {
        // SAFETY: The netdev is valid; RTNL, then the address lock, as the stack takes them.
        unsafe {
            bindings::rtnl_lock();
            bindings::netif_addr_lock_bh(self.as_raw());
        }
        // INVARIANT: Both locks are held until `f` returns.
        let r = f(&AddrLists { netdev: self });
        // SAFETY: Released in reverse order.
        unsafe {
            bindings::netif_addr_unlock_bh(self.as_raw());
            bindings::rtnl_unlock();
        }
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
struct SockAddr([u8; 16]);

impl SockAddr {
    fn new(mac: &[u8; 6]) -> Self {
        let mut sa = [0u8; 16];
        sa[2..8].copy_from_slice(mac);
        Self(sa)
    }

    fn as_mut_ptr(&mut self) -> *mut c_void {
        self.0.as_mut_ptr().cast::<c_void>()
    }

    /// # Safety
    ///
    /// `p` points to a `struct sockaddr` with at least 6 bytes of data.
    unsafe fn mac_of(p: *const c_void) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: As the caller guarantees: the data starts after the 2-byte family.
        unsafe { core::ptr::copy_nonoverlapping(p.cast::<u8>().add(2), mac.as_mut_ptr(), 6) };
        mac
    }
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
}

// SAFETY: The netdev may be unregistered from any thread; `T` is `Send + Sync`.
unsafe impl<T: VnicUlp> Send for VnicNetdev<T> {}
// SAFETY: `&VnicNetdev` gives `&T` and `&VnicNetdevRef`, both usable from any thread.
unsafe impl<T: VnicUlp> Sync for VnicNetdev<T> {}

impl<T: VnicUlp> VnicNetdev<T> {
    const ETHTOOL_OPS: bindings::ethtool_ops = bindings::ethtool_ops {
        get_drvinfo: Some(Self::get_drvinfo),
        get_link: Some(bindings::ethtool_op_get_link),
        get_strings: Some(Self::get_strings),
        get_sset_count: Some(Self::get_sset_count),
        get_ethtool_stats: Some(Self::get_ethtool_stats),
        // SAFETY: The other operations are absent (null).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    const OPS: bindings::net_device_ops = bindings::net_device_ops {
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

    /// Has `device` allocate a VNIC netdev on `port` (named `veth%d`), installs `ulp` and its
    /// operations, and registers it, carrier off and dormant.
    ///
    /// Fails with `EOPNOTSUPP` if the device cannot allocate VNIC netdevs.
    pub fn new(device: &Device, port: u32, ulp: T) -> Result<Self> {
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
        Ok(Self { netdev: nd, inner })
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
        unsafe {
            let rn = bindings::netdev_priv(nd).cast::<bindings::rdma_netdev>();
            &*(*rn).clnt_priv.cast::<Inner<T>>()
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn open(nd: *mut bindings::net_device) -> c_int {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: The device's operations are valid while the netdev exists.
        let ret = unsafe { (*inner.hfi_ops).ndo_open.map_or(0, |f| f(nd)) };
        if ret == 0 {
            // SAFETY: As above.
            inner.ulp.opened(unsafe { VnicNetdevRef::from_raw(nd) });
        }
        ret
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn stop(nd: *mut bindings::net_device) -> c_int {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: The device's operations are valid while the netdev exists.
        let ret = unsafe { (*inner.hfi_ops).ndo_stop.map_or(0, |f| f(nd)) };
        if ret == 0 {
            // SAFETY: As above.
            inner.ulp.stopped(unsafe { VnicNetdevRef::from_raw(nd) });
        }
        ret
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn start_xmit(
        skb: *mut bindings::sk_buff,
        nd: *mut bindings::net_device,
    ) -> bindings::netdev_tx_t {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        let Some(skb) = NonNull::new(skb) else {
            return bindings::netdev_tx_NETDEV_TX_OK;
        };
        // SAFETY: The stack hands the skb over to the driver.
        let skb = unsafe { SkBuff::from_raw(skb) };
        // Pad to the minimum Ethernet frame, as the C driver does (a failure frees the skb).
        // A frame dropped here is counted, which the C driver does not do.
        let Ok(mut skb) = skb.put_padto(60) else {
            // SAFETY: `nd` is a registered netdev.
            unsafe { bindings::dev_core_stats_tx_dropped_inc(nd) };
            return bindings::netdev_tx_NETDEV_TX_OK;
        };
        if inner.ulp.encap(&mut skb).is_err() {
            // SAFETY: `nd` is a registered netdev; the skb is freed with `skb`.
            unsafe { bindings::dev_core_stats_tx_dropped_inc(nd) };
            return bindings::netdev_tx_NETDEV_TX_OK;
        }
        // SAFETY: The device's transmit takes the skb over.
        unsafe {
            match (*inner.hfi_ops).ndo_start_xmit {
                Some(f) => f(skb.into_raw().as_ptr(), nd),
                None => bindings::netdev_tx_NETDEV_TX_OK,
            }
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn select_queue(
        nd: *mut bindings::net_device,
        skb: *mut bindings::sk_buff,
        sb_dev: *mut bindings::net_device,
    ) -> u16 {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        let Some(raw) = NonNull::new(skb) else {
            return 0;
        };
        // SAFETY: The skb stays the stack's: only borrowed for this call, never freed here.
        let mut skb = ManuallyDrop::new(unsafe { SkBuff::from_raw(raw) });
        let (vl, entropy) = inner.ulp.vl_entropy(&mut skb);
        let Ok(mdata) = skb.push(4) else {
            return 0;
        };
        mdata.copy_from_slice(&[vl, entropy, 0, 0]);
        // SAFETY: The device reads the metadata the ULP pushes in front of the frame.
        let queue = unsafe {
            (*inner.hfi_ops)
                .ndo_select_queue
                .map_or(0, |f| f(nd, raw.as_ptr(), sb_dev))
        };
        let _ = skb.pull(4);
        queue
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn get_stats64(
        nd: *mut bindings::net_device,
        stats: *mut bindings::rtnl_link_stats64,
    ) {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // The device writes a whole `struct opa_vnic_stats` around the `rtnl_link_stats64`
        // it is given (hfi1's contract): give it one, and pass on the standard part.
        let vstats = Self::device_stats(nd, inner);
        // SAFETY: `stats` is the stack's buffer for the standard statistics.
        unsafe { *stats = vstats.netstats };
    }

    /// The device's statistics of the netdev `nd`.
    fn device_stats(nd: *mut bindings::net_device, inner: &Inner<T>) -> VnicStats {
        // SAFETY: All-zero is a valid `opa_vnic_stats`.
        let mut vstats: VnicStats = unsafe { core::mem::zeroed() };
        // SAFETY: The device's operations are valid while the netdev exists; it fills in the
        // `opa_vnic_stats` whose `netstats` it is given.
        unsafe {
            if let Some(f) = (*inner.hfi_ops).ndo_get_stats64 {
                f(nd, &mut vstats.netstats);
            }
        }
        vstats
    }

    /// The device's statistics of the netdev: the standard ones and the VNIC groups
    /// (`struct opa_vnic_stats`).
    pub fn stats(&self) -> VnicStats {
        Self::device_stats(self.netdev.as_ptr(), &self.inner)
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn set_rx_mode(nd: *mut bindings::net_device) {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: As above.
        let netdev = unsafe { VnicNetdevRef::from_raw(nd) };
        // INVARIANT: The stack calls `ndo_set_rx_mode` with the address lock held.
        inner.ulp.rx_mode_changed(netdev, &AddrLists { netdev });
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn set_mac_address(
        nd: *mut bindings::net_device,
        addr: *mut c_void,
    ) -> c_int {
        // SAFETY: Called by the stack for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        // SAFETY: As above.
        let dev = unsafe { VnicNetdevRef::from_raw(nd) };
        // SAFETY: `addr` is a `sockaddr` with the new address.
        if dev.mac() == unsafe { SockAddr::mac_of(addr) } {
            return 0;
        }
        // SAFETY: Under RTNL, as the stack calls this.
        let ret = unsafe { bindings::eth_mac_addr(nd, addr) };
        if ret == 0 {
            inner.ulp.mac_changed(dev);
        }
        ret
    }
}

impl<T: VnicUlp> VnicNetdev<T> {
    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn get_drvinfo(
        nd: *mut bindings::net_device,
        info: *mut bindings::ethtool_drvinfo,
    ) {
        // SAFETY: `info` is the ethtool core's buffer; `nd` a netdev of this type, whose parent
        // (the device's parent, possibly none) outlives it.
        unsafe {
            copy_c_str(&mut (*info).driver, T::DRIVER_NAME.as_bytes());
            let parent = (*nd).dev.parent;
            if !parent.is_null() {
                let name = CStr::from_char_ptr(bindings::dev_name(parent));
                copy_c_str(&mut (*info).bus_info, name.as_bytes());
            }
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn get_sset_count(_nd: *mut bindings::net_device, sset: c_int) -> c_int {
        if sset == bindings::ethtool_stringset_ETH_SS_STATS as c_int {
            T::ETHTOOL_STATS.len() as c_int
        } else {
            -(bindings::EOPNOTSUPP as c_int)
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn get_strings(_nd: *mut bindings::net_device, sset: u32, data: *mut u8) {
        if sset != bindings::ethtool_stringset_ETH_SS_STATS {
            return;
        }
        let len = bindings::ETH_GSTRING_LEN as usize;
        for (i, (name, _)) in T::ETHTOOL_STATS.iter().enumerate() {
            // SAFETY: The ethtool core gives room for `get_sset_count()` strings of
            // `ETH_GSTRING_LEN` bytes.
            let slot = unsafe { core::slice::from_raw_parts_mut(data.add(i * len), len) };
            slot.fill(0);
            let n = name.len().min(len - 1);
            slot[..n].copy_from_slice(&name.as_bytes()[..n]);
        }
    }

    /// # Safety
    ///
    /// Called by the networking stack only, for a netdev of this type, with the arguments of
    /// the `net_device_ops` or `ethtool_ops` member it stands for.
    unsafe extern "C" fn get_ethtool_stats(
        nd: *mut bindings::net_device,
        _stats: *mut bindings::ethtool_stats,
        data: *mut u64,
    ) {
        // SAFETY: Called by the ethtool core for a netdev of this type.
        let inner = unsafe { Self::inner(nd) };
        let vstats = Self::device_stats(nd, inner);
        for (i, (_, read)) in T::ETHTOOL_STATS.iter().enumerate() {
            // SAFETY: The ethtool core gives room for `get_sset_count()` values.
            unsafe { *data.add(i) = read(&vstats) };
        }
    }
}

/// Copies `src` into the C string buffer `dst`, truncated and NUL-terminated.
fn copy_c_str<const N: usize>(dst: &mut [u8; N], src: &[u8]) {
    let n = src.len().min(N.saturating_sub(1));
    dst[..n].copy_from_slice(&src[..n]);
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
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
