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
//! - the device may advertise scatter-gather ([`VnicOps::FEATURES`]; hfi1 does): a frame then
//!   reaches `ndo_start_xmit` with only its headers, or only its metadata and 16B header, in
//!   the linear part, and the rest in page fragments;
//! - `ndo_start_xmit` may push back with `NETDEV_TX_BUSY` ([`Xmit::Busy`]): the device hands
//!   the buffer back with the metadata and the 16B header pulled off again, so that the stack
//!   requeues the frame it gave, and stops the queue until it has room.

mod adapter;
mod ops;
mod rx;

pub(crate) use adapter::Adapter;
pub use ops::{NoVnic, VnicOps};
pub use rx::VnicRx;

use super::provider::Provider;
use crate::{
    bindings,
    error::{code::*, Result},
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

/// The netdev features a provider advertises on its VNIC netdevs (`netdev_features_t`), in
/// `features`, `hw_features` and `vlan_features`, as `hfi1_vnic_alloc_rn()` sets them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VnicFeatures(bindings::netdev_features_t);

impl VnicFeatures {
    /// No feature: every frame reaches the device linear.
    pub const NONE: Self = Self(0);
    /// `NETIF_F_SG`: the device gathers a frame from its head and its page fragments.
    pub const SG: Self = Self(1 << bindings::NETIF_F_SG_BIT);
    /// `NETIF_F_HIGHDMA`: the device can read frames in high memory.
    pub const HIGHDMA: Self = Self(1 << bindings::NETIF_F_HIGHDMA_BIT);

    /// Both sets of features.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The raw bits.
    pub const fn bits(self) -> bindings::netdev_features_t {
        self.0
    }
}

/// What a provider's `ndo_start_xmit` did with a buffer.
pub enum Xmit {
    /// Taken: sent, queued for the device, or dropped and counted (`NETDEV_TX_OK`).
    Done,
    /// No room (`NETDEV_TX_BUSY`): the buffer goes back to the stack as the client gave it to
    /// the device, less the metadata and the 16B header, and the provider has stopped the
    /// queue until room frees ([`ProviderNetdev::stop_subqueue`]).
    ///
    /// It must be the buffer `xmit` was given: the stack requeues the one it passed. Any other
    /// is dropped, counted as a transmit drop of the netdev (`tx_dropped`), and the transmit
    /// answers `NETDEV_TX_OK` ([`xmit_busy`](crate::net::skbuff::xmit_busy)).
    Busy(SkBuff),
}

/// The most transmit queues a VNIC netdev gets (hfi1 has 16 SDMA engines).
pub const MAX_TX_QUEUES: u32 = 16;

/// The offset of the device's data in the private area of a VNIC netdev.
const PRIV_OFFSET: usize = offset_of!(bindings::opa_vnic_rdma_netdev, dev_priv);

/// An OPA VNIC netdev as the provider `T` that allocated it sees it: the device's side of the
/// netdev, whose operations the ULP's call (the ULP's side is
/// [`UlpNetdev`](super::netdev::UlpNetdev)).
///
/// # Invariants
///
/// The `net_device` was allocated by `Adapter::alloc_rdma_netdev` of `T`: its private area
/// holds an initialised `T::Vnic` at `PRIV_OFFSET`, and its receive NAPI context after it
/// (`rx::RxNapi`), until `free_rdma_netdev`. References
/// exist only while the netdev is allocated; counted ones ([`ARef`](crate::types::ARef)) hold
/// a `dev_hold` reference, which `unregister_netdev` waits for.
#[repr(transparent)]
pub struct ProviderNetdev<T: Provider>(Opaque<bindings::net_device>, PhantomData<T>);

// SAFETY: The netdev is used from any thread under the networking core's rules; the shared
// data is `T::Vnic`, which is `Sync`.
unsafe impl<T: Provider> Send for ProviderNetdev<T> {}
// SAFETY: See above.
unsafe impl<T: Provider> Sync for ProviderNetdev<T> {}

// SAFETY: `dev_hold` and `dev_put` keep the netdev's reference count, which
// `unregister_netdev` waits for before the netdev can be freed.
unsafe impl<T: Provider> AlwaysRefCounted for ProviderNetdev<T> {
    fn inc_ref(&self) {
        // SAFETY: The netdev is alive (type invariant).
        unsafe { bindings::dev_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference.
        unsafe { bindings::dev_put(obj.as_ptr().cast()) };
    }
}

impl<T: Provider> ProviderNetdev<T> {
    /// # Safety
    ///
    /// `nd` must be a VNIC netdev of `T` (see the type invariant), alive for `'a`.
    unsafe fn from_raw<'a>(nd: *mut bindings::net_device) -> &'a Self {
        // INVARIANT: The caller guarantees it.
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
        // SAFETY: The netdev is alive. `mtu` changes under RTNL, which the caller may not hold:
        // read once (`READ_ONCE()`), as the stack's lockless readers do (`__dev_set_mtu()`
        // writes it with `WRITE_ONCE()`); the value may be stale by the time it is used.
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
    ///
    /// Takes each queue's transmit lock, with bottom halves off: not from
    /// [`VnicOps::xmit`], which runs under its queue's lock, nor
    /// with interrupts off.
    pub fn stop(&self) {
        // SAFETY: The netdev is alive.
        unsafe {
            bindings::netif_carrier_off(self.as_raw());
            bindings::netif_tx_disable(self.as_raw());
        }
    }

    /// Marks the device not present (`netif_device_detach()`): its transmit queues stop, the
    /// stack's transmit watchdog no longer looks at them, and an open is refused (`ENODEV`)
    /// until [`ProviderNetdev::attach`]. For a device that cannot send for now, though open.
    pub fn detach(&self) {
        // SAFETY: The netdev is alive; `netif_device_detach()` changes a state bit atomically
        // and stops the queues, which needs no lock.
        unsafe { bindings::netif_device_detach(self.as_raw()) };
    }

    /// Marks the device present again (`netif_device_attach()`): if it is running, its
    /// transmit queues wake (the stack's transmit watchdog stays off: the ULP's operations have
    /// no `ndo_tx_timeout`).
    pub fn attach(&self) {
        // SAFETY: The netdev is alive; `netif_device_attach()` changes a state bit atomically,
        // wakes the queues and arms a timer, none of which needs a lock.
        unsafe { bindings::netif_device_attach(self.as_raw()) };
    }

    /// Stops the transmit queue `queue` (`netif_stop_subqueue()`): the stack sends it nothing
    /// until [`ProviderNetdev::wake_subqueue`]. Ignored for a queue the netdev does not have.
    pub fn stop_subqueue(&self, queue: u16) {
        if self.has_tx_queue(queue) {
            // SAFETY: The netdev is alive and has the queue.
            unsafe { bindings::netif_stop_subqueue(self.as_raw(), queue) };
        }
    }

    /// Wakes the transmit queue `queue` (`netif_wake_subqueue()`), if the stack can send then
    /// (the netdev is up); ignored for a queue the netdev does not have.
    pub fn wake_subqueue(&self, queue: u16) {
        if self.has_tx_queue(queue) {
            // SAFETY: The netdev is alive and has the queue.
            unsafe { bindings::netif_wake_subqueue(self.as_raw(), queue) };
        }
    }

    /// Whether the transmit queue `queue` is stopped (`__netif_subqueue_stopped()`); false for
    /// a queue the netdev does not have.
    pub fn subqueue_stopped(&self, queue: u16) -> bool {
        // SAFETY: The netdev is alive and has the queue.
        self.has_tx_queue(queue)
            && unsafe { bindings::__netif_subqueue_stopped(self.as_raw(), queue) }
    }

    fn has_tx_queue(&self, queue: u16) -> bool {
        // SAFETY: The netdev is alive; `num_tx_queues` is set when it is allocated and never
        // changes.
        u32::from(queue) < unsafe { (*self.as_raw()).num_tx_queues }
    }

    /// Allocates a receive buffer with room for `len` bytes (`netdev_alloc_skb`, atomic).
    pub fn alloc_skb(&self, len: u32) -> Result<SkBuffMut> {
        // SAFETY: The netdev is alive; the call has no other precondition.
        let skb = unsafe { bindings::__netdev_alloc_skb(self.as_raw(), len, bindings::GFP_ATOMIC) };
        let skb = NonNull::new(skb).ok_or(ENOMEM)?;
        // SAFETY: The new buffer is ours.
        unsafe { SkBuff::from_raw(skb) }
            .into_mut()
            .map_err(|_| EINVAL)
    }

    /// Hands a received Ethernet frame to the stack: sets its protocol (`eth_type_trans`) and
    /// queues it (`netif_rx`).
    ///
    /// Fails with `EINVAL`, and frees the buffer, when its linear part is shorter than an
    /// Ethernet header: `eth_type_trans` pulls one without checking.
    ///
    /// Not with interrupts off in process context (an
    /// [`IrqSpinLock`](crate::sync::IrqSpinLock) held): `netif_rx()` then turns bottom halves
    /// back on, which runs pending softirqs with interrupts on.
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
