// SPDX-License-Identifier: GPL-2.0

//! OPA VNIC netdevs of software RDMA devices (`ib_device_ops.alloc_rdma_netdev` with
//! `RDMA_NETDEV_OPA_VNIC`).
//!
//! C header: [`include/rdma/opa_vnic.h`](srctree/include/rdma/opa_vnic.h)
//!
//! The contract, as hfi1 implements it (`drivers/infiniband/hw/hfi1/vnic_main.c`) and the
//! VNIC drivers rely on it:
//!
//! - the netdev's private area starts with `struct opa_vnic_rdma_netdev`: the
//!   `struct rdma_netdev` the client fills (`clnt_priv`, `hca`, `port_num`) and whose
//!   `set_id` and `free_rdma_netdev` the device provides, then the device's own data
//!   (`opa_vnic_dev_priv()`), here the provider's [`Provider::Vnic`], which implements the
//!   netdev's operations ([`VnicOps`]: all of them, or the provider does not build);
//! - the client keeps the device's `netdev_ops` (open, stop, start_xmit, select_queue,
//!   get_stats64) and calls them from its own;
//! - `ndo_start_xmit` gets a frame with a 16B header the client built, preceded by the 4
//!   bytes of `struct opa_vnic_skb_mdata`; `ndo_select_queue` gets the same metadata;
//! - `ndo_get_stats64` is called with a `struct opa_vnic_stats` whose first member is the
//!   `struct rtnl_link_stats64` (the client passes the whole structure).
//!
//! The netdevs are not scatter/gather capable, so every frame is linear.

use super::provider::{Device, Provider};
use crate::{
    bindings,
    error::{code::*, Result},
    ffi::{c_char, c_int, c_uchar},
    net::skbuff::{SkBuff, SkBuffMut},
    types::{AlwaysRefCounted, Opaque},
};
use core::{marker::PhantomData, mem::offset_of, ptr::NonNull};

/// `OPA_VNIC_SKB_MDATA_LEN`: the metadata before the 16B header on transmit.
pub const SKB_MDATA_LEN: usize = bindings::OPA_VNIC_SKB_MDATA_LEN as usize;

/// `OPA_VNIC_SKB_MDATA_ENCAP_ERR`: the client could not encapsulate the frame.
pub const SKB_MDATA_ENCAP_ERR: u8 = bindings::OPA_VNIC_SKB_MDATA_ENCAP_ERR as u8;

/// The metadata of a frame to send (`struct opa_vnic_skb_mdata`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkbMetadata {
    /// The virtual lane.
    pub vl: u8,
    /// The flow entropy.
    pub entropy: u8,
    /// `SKB_MDATA_*` flags.
    pub flags: u8,
}

impl SkbMetadata {
    /// Reads the metadata at the start of `data`.
    pub fn parse(data: &[u8]) -> Option<Self> {
        let m = data.get(..SKB_MDATA_LEN)?;
        Some(Self {
            vl: m[0],
            entropy: m[1],
            flags: m[2],
        })
    }
}

/// The most transmit queues a VNIC netdev gets (hfi1 has 16 SDMA engines).
pub const MAX_TX_QUEUES: u32 = 16;

/// The offset of the device's data in the private area of a VNIC netdev.
const PRIV_OFFSET: usize = offset_of!(bindings::opa_vnic_rdma_netdev, dev_priv);

/// The OPA VNIC netdevs of the provider `P`: the data the provider keeps for each (`Self`) and
/// their operations, as hfi1's `vnic_main.c` has them. Every operation is required, so that a
/// provider with VNIC netdevs cannot leave one out and lose traffic at run time.
pub trait VnicOps<P: Provider>: Sized + Send + Sync + 'static {
    /// Whether the devices can allocate `RDMA_NETDEV_OPA_VNIC` netdevs (false only for
    /// [`NoVnic`]).
    const SUPPORTED: bool = true;

    /// Accepts a new VNIC netdev on `port` (checked to exist): the provider's data for it.
    fn alloc(dev: &Device<P>, port: u32) -> Result<Self>;

    /// The transmit queues of a new VNIC netdev on `port` (hfi1 gives one per SDMA engine);
    /// taken between 1 and [`MAX_TX_QUEUES`].
    fn tx_queues(dev: &Device<P>, port: u32) -> u32;

    /// `rn.set_id`: binds the netdev to a virtual Ethernet switch id, for receive.
    fn set_id(nd: &VnicNetdev<P>, id: i32);

    /// `ndo_open`.
    fn open(nd: &VnicNetdev<P>) -> Result;

    /// `ndo_stop`.
    fn stop(nd: &VnicNetdev<P>);

    /// `ndo_start_xmit`: `skb` starts with the metadata, then the 16B header and the frame.
    /// The provider owns the buffer (frees or passes it on).
    fn xmit(nd: &VnicNetdev<P>, skb: SkBuff);

    /// `ndo_select_queue`, from the frame's metadata: a queue below
    /// [`VnicOps::tx_queues`] (the stack caps a larger one, with a warning).
    fn select_queue(nd: &VnicNetdev<P>, meta: &SkbMetadata) -> u16;

    /// `ndo_get_stats64`: fills the whole `struct opa_vnic_stats`.
    fn stats(nd: &VnicNetdev<P>, stats: &mut bindings::opa_vnic_stats);
}

/// The [`Provider::Vnic`] of a provider without OPA VNIC netdevs. [`VnicOps::alloc`] fails, so no
/// netdev exists and no other operation is ever called (the type has no values); they answer
/// as a device without the operation would.
pub enum NoVnic {}

impl<P: Provider> VnicOps<P> for NoVnic {
    const SUPPORTED: bool = false;

    fn alloc(_dev: &Device<P>, _port: u32) -> Result<Self> {
        Err(EOPNOTSUPP)
    }

    fn tx_queues(_dev: &Device<P>, _port: u32) -> u32 {
        1
    }

    fn set_id(_nd: &VnicNetdev<P>, _id: i32) {}

    fn open(_nd: &VnicNetdev<P>) -> Result {
        Err(EOPNOTSUPP)
    }

    fn stop(_nd: &VnicNetdev<P>) {}

    fn xmit(_nd: &VnicNetdev<P>, _skb: SkBuff) {}

    fn select_queue(_nd: &VnicNetdev<P>, _meta: &SkbMetadata) -> u16 {
        0
    }

    fn stats(_nd: &VnicNetdev<P>, _stats: &mut bindings::opa_vnic_stats) {}
}

/// A VNIC netdev of the provider `T`.
///
/// # Invariants
///
/// The `net_device` was allocated by [`Adapter::alloc_rdma_netdev`] of `T`: its private area
/// holds an initialised `T::Vnic` at `PRIV_OFFSET`, until `free_rdma_netdev`. References
/// exist only while the netdev is allocated; counted ones ([`ARef`](crate::types::ARef)) hold
/// a `dev_hold` reference, which `unregister_netdev` waits for.
#[repr(transparent)]
pub struct VnicNetdev<T: Provider>(Opaque<bindings::net_device>, PhantomData<T>);

// SAFETY: The netdev is used from any thread under the networking core's rules; the shared
// data is `T::Vnic`, which is `Sync`.
unsafe impl<T: Provider> Send for VnicNetdev<T> {}
// SAFETY: See above.
unsafe impl<T: Provider> Sync for VnicNetdev<T> {}

// SAFETY: `dev_hold` and `dev_put` keep the netdev's reference count, which
// `unregister_netdev` waits for before the netdev can be freed.
unsafe impl<T: Provider> AlwaysRefCounted for VnicNetdev<T> {
    fn inc_ref(&self) {
        // SAFETY: The netdev is alive (type invariant).
        unsafe { bindings::dev_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference.
        unsafe { bindings::dev_put(obj.as_ptr().cast()) };
    }
}

impl<T: Provider> VnicNetdev<T> {
    /// # Safety
    ///
    /// `nd` must be a VNIC netdev of `T` (see the type invariant), alive for `'a`.
    unsafe fn from_raw<'a>(nd: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `Self` is a transparent wrapper of `net_device`; the caller guarantees the
        // rest.
        unsafe { &*nd.cast::<Self>() }
    }

    /// The raw `struct net_device`.
    pub fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    fn priv_ptr(&self) -> *mut u8 {
        // SAFETY: The netdev is alive; its private area exists.
        unsafe { bindings::netdev_priv(self.as_raw()).cast::<u8>() }
    }

    /// The provider's data of the netdev.
    pub fn data(&self) -> &T::Vnic {
        // SAFETY: By the type invariant an initialised `T::Vnic` is at `PRIV_OFFSET` of the
        // private area (aligned: the private area is `NETDEV_ALIGN`ed and `PRIV_OFFSET` is a
        // multiple of 8, which `alloc_rdma_netdev` checks `T::Vnic` needs at most).
        unsafe { &*self.priv_ptr().add(PRIV_OFFSET).cast::<T::Vnic>() }
    }

    /// The port the netdev was allocated on.
    pub fn port(&self) -> u32 {
        // SAFETY: The private area starts with the `rdma_netdev`; `port_num` is written by the
        // client once, before registration.
        unsafe { (*self.priv_ptr().cast::<bindings::rdma_netdev>()).port_num }
    }

    /// Whether the netdev is operationally up (`netif_oper_up`).
    pub fn oper_up(&self) -> bool {
        // SAFETY: The netdev is alive.
        unsafe { bindings::netif_oper_up(self.as_raw()) }
    }

    /// The MTU.
    pub fn mtu(&self) -> u32 {
        // SAFETY: The netdev is alive; `READ_ONCE` semantics are not needed for a statistic
        // check, and a torn read is impossible for an aligned `u32`.
        unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*self.as_raw()).mtu)) }
    }

    /// Turns the carrier on and starts the transmit queues.
    pub fn start(&self) {
        // SAFETY: The netdev is alive.
        unsafe {
            bindings::netif_carrier_on(self.as_raw());
            bindings::netif_tx_start_all_queues(self.as_raw());
        }
    }

    /// Turns the carrier off and stops the transmit queues (`netif_tx_disable`).
    pub fn stop(&self) {
        // SAFETY: The netdev is alive.
        unsafe {
            bindings::netif_carrier_off(self.as_raw());
            bindings::netif_tx_disable(self.as_raw());
        }
    }

    /// Allocates a receive buffer with room for `len` bytes (`netdev_alloc_skb`, atomic).
    pub fn alloc_skb(&self, len: u32) -> Result<SkBuffMut> {
        // SAFETY: The netdev is alive; the call has no other precondition.
        let skb = unsafe { bindings::__netdev_alloc_skb(self.as_raw(), len, bindings::GFP_ATOMIC) };
        let skb = NonNull::new(skb).ok_or(ENOMEM)?;
        // SAFETY: The new buffer is ours; its head is not shared, so `cow_head` does not copy.
        unsafe { SkBuff::from_raw(skb) }.cow_head(0)
    }

    /// Hands a received Ethernet frame to the stack: sets its protocol (`eth_type_trans`) and
    /// queues it (`netif_rx`).
    ///
    /// Fails with `EINVAL`, and frees the buffer, when its linear part is shorter than an
    /// Ethernet header: `eth_type_trans` pulls one without checking.
    pub fn receive(&self, skb: SkBuff) -> Result {
        if skb.data().len() < bindings::ETH_HLEN as usize {
            return Err(EINVAL);
        }
        let skb = skb.into_raw().as_ptr();
        // SAFETY: `skb` is a valid buffer whose ownership passes to the stack; its linear data
        // starts with an Ethernet header (at least `ETH_HLEN` bytes, checked above), which
        // `eth_type_trans` pulls.
        unsafe {
            bindings::skb_eth_protocol_set(skb, self.as_raw());
            bindings::netif_rx(skb);
        }
        Ok(())
    }
}

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
    /// `T`.
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
        // SAFETY: The core passes a device of `T`, alive during the call.
        let dev = unsafe { Device::<T>::from_raw(ibdev) };
        if kind != bindings::rdma_netdev_t_RDMA_NETDEV_OPA_VNIC {
            return EOPNOTSUPP.to_ptr();
        }
        if port == 0 || port > dev.port_count() {
            return EINVAL.to_ptr();
        }
        let data = match T::Vnic::alloc(dev, port) {
            Ok(d) => d,
            Err(e) => return e.to_ptr(),
        };
        let size = PRIV_OFFSET + core::mem::size_of::<T::Vnic>();
        let txqs = T::Vnic::tx_queues(dev, port).clamp(1, MAX_TX_QUEUES);
        // SAFETY: `name` is the client's C string and `setup` its setup function, valid during
        // the call; `txqs` transmit queues (at least one), one receive queue (receive does not
        // go through the stack's queues).
        let nd = unsafe {
            bindings::alloc_netdev_mqs(size as c_int, name, name_assign_type, setup, txqs, 1)
        };
        if nd.is_null() {
            return ENOMEM.to_ptr();
        }
        // SAFETY: `nd` is a new netdev with a zeroed private area of `size` bytes, which only
        // this function knows: write the device's callbacks, its data and its ops.
        unsafe {
            let p = bindings::netdev_priv(nd).cast::<u8>();
            let rn = p.cast::<bindings::rdma_netdev>();
            (*rn).free_rdma_netdev = Some(Self::free_rdma_netdev);
            (*rn).set_id = Some(Self::set_id);
            p.add(PRIV_OFFSET).cast::<T::Vnic>().write(data);
            (*nd).netdev_ops = &Self::NETDEV_OPS;
        }
        nd
    }

    /// # Safety
    ///
    /// Called by the client once, with an unregistered VNIC netdev of `T`.
    unsafe extern "C" fn free_rdma_netdev(nd: *mut bindings::net_device) {
        // SAFETY: The netdev is a VNIC netdev of `T`; its data is dropped once, here, before
        // the netdev is freed, and nothing uses it any more (it is unregistered).
        unsafe {
            let p = bindings::netdev_priv(nd).cast::<u8>();
            core::ptr::drop_in_place(p.add(PRIV_OFFSET).cast::<T::Vnic>());
            bindings::free_netdev(nd);
        }
    }

    /// # Safety
    ///
    /// Called by the client with a VNIC netdev of `T`.
    unsafe extern "C" fn set_id(nd: *mut bindings::net_device, id: c_int) {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { VnicNetdev::<T>::from_raw(nd) };
        T::Vnic::set_id(nd, id);
    }

    /// # Safety
    ///
    /// Called by the networking core (through the client) with a VNIC netdev of `T`.
    unsafe extern "C" fn open(nd: *mut bindings::net_device) -> c_int {
        // SAFETY: The netdev is a VNIC netdev of `T`, alive during the call.
        let nd = unsafe { VnicNetdev::<T>::from_raw(nd) };
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
        let nd = unsafe { VnicNetdev::<T>::from_raw(nd) };
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
        let nd = unsafe { VnicNetdev::<T>::from_raw(nd) };
        if let Some(skb) = NonNull::new(skb) {
            // SAFETY: `ndo_start_xmit` passes the ownership of the buffer; the netdev has no
            // scatter/gather feature, so the buffer is linear.
            T::Vnic::xmit(nd, unsafe { SkBuff::from_raw(skb) });
        }
        bindings::netdev_tx_NETDEV_TX_OK
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
        let nd = unsafe { VnicNetdev::<T>::from_raw(nd) };
        // SAFETY: The buffer is valid during the call and linear; its head holds at least the
        // metadata the client pushed (`skb->data`, `skb_headlen`).
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
        let nd = unsafe { VnicNetdev::<T>::from_raw(nd) };
        // SAFETY: By the VNIC contract (see the module documentation) `stats` is the
        // `netstats` member, at offset 0, of a `struct opa_vnic_stats`, writable during the
        // call.
        let stats = unsafe { &mut *stats.cast::<bindings::opa_vnic_stats>() };
        T::Vnic::stats(nd, stats);
    }
}
