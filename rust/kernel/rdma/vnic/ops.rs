// SPDX-License-Identifier: GPL-2.0

//! The operations a provider gives its OPA VNIC netdevs.

use super::{ProviderNetdev, SkbMetadata, VnicFeatures, VnicRx, Xmit};
use crate::rdma::provider::{Provider, ProviderDevice};
use crate::{bindings, net::skbuff::SkBuff, prelude::*};

/// The OPA VNIC netdevs of the provider `P`: the data the provider keeps for each (`Self`) and
/// their operations, as hfi1's `vnic_main.c` has them. Every operation is required, so that a
/// provider with VNIC netdevs cannot leave one out and lose traffic at run time.
pub trait VnicOps<P: Provider>: Sized + Send + Sync + 'static {
    /// Whether the devices can allocate `RDMA_NETDEV_OPA_VNIC` netdevs (false only for
    /// [`NoVnic`]).
    const SUPPORTED: bool = true;

    /// The features the netdevs advertise (hfi1: scatter-gather and high DMA).
    const FEATURES: VnicFeatures = VnicFeatures::NONE;

    /// Accepts a new VNIC netdev on `port` (checked to exist): the provider's data for it.
    fn alloc(dev: &ProviderDevice<P>, port: u32) -> Result<Self>;

    /// The transmit queues of a new VNIC netdev on `port` (hfi1 gives one per SDMA engine);
    /// taken between 1 and [`MAX_TX_QUEUES`](super::MAX_TX_QUEUES).
    fn tx_queues(dev: &ProviderDevice<P>, port: u32) -> u32;

    /// `rn.set_id`: binds the netdev to a virtual Ethernet switch id, for receive. Process
    /// context; may sleep (hfi1 takes the vport's mutex and may reopen the netdev).
    fn set_id(nd: &ProviderNetdev<P>, id: i32);

    /// `ndo_open`.
    fn open(nd: &ProviderNetdev<P>) -> Result;

    /// `ndo_stop`.
    fn stop(nd: &ProviderNetdev<P>);

    /// `ndo_start_xmit`: `skb` starts with the metadata, then the 16B header and the frame
    /// (in the head: the client pushed them there; with [`VnicFeatures::SG`] the rest may lie
    /// in fragments). The provider owns the buffer (frees or passes it on), or gives it back
    /// with [`Xmit::Busy`]. Runs with bottom halves off, under the queue's transmit lock:
    /// must not sleep, nor stop the queues with [`ProviderNetdev::stop`].
    fn xmit(nd: &ProviderNetdev<P>, skb: SkBuff) -> Xmit;

    /// `ndo_select_queue`, from the frame's metadata: a queue below
    /// [`VnicOps::tx_queues`] (the stack caps a larger one, with a warning). Runs with bottom
    /// halves off: must not sleep.
    fn select_queue(nd: &ProviderNetdev<P>, meta: &SkbMetadata) -> u16;

    /// `ndo_get_stats64`: fills the whole `struct opa_vnic_stats`. May run in an RCU
    /// read-side section (`/proc/net/dev`): must not sleep.
    fn stats(nd: &ProviderNetdev<P>, stats: &mut bindings::opa_vnic_stats);

    /// The poll of the netdev's receive NAPI context, once
    /// [`ProviderNetdev::schedule_rx`] scheduled it: delivers at most `budget` frames (with
    /// [`VnicRx::receive_gro`]) and returns how many; less than `budget` completes the
    /// context. Softirq context, or netpoll's with interrupts off and a budget of 0: must not
    /// sleep.
    fn poll(nd: &ProviderNetdev<P>, rx: &VnicRx<'_, P>, budget: i32) -> i32;
}

/// The [`Provider::Vnic`] of a provider without OPA VNIC netdevs. [`VnicOps::alloc`] fails, so no
/// netdev exists and no other operation is ever called (the type has no values); they answer
/// as a device without the operation would.
pub enum NoVnic {}

impl<P: Provider> VnicOps<P> for NoVnic {
    const SUPPORTED: bool = false;

    fn alloc(_dev: &ProviderDevice<P>, _port: u32) -> Result<Self> {
        Err(EOPNOTSUPP)
    }

    fn tx_queues(_dev: &ProviderDevice<P>, _port: u32) -> u32 {
        1
    }

    fn set_id(_nd: &ProviderNetdev<P>, _id: i32) {}

    fn open(_nd: &ProviderNetdev<P>) -> Result {
        Err(EOPNOTSUPP)
    }

    fn stop(_nd: &ProviderNetdev<P>) {}

    fn xmit(_nd: &ProviderNetdev<P>, _skb: SkBuff) -> Xmit {
        Xmit::Done
    }

    fn select_queue(_nd: &ProviderNetdev<P>, _meta: &SkbMetadata) -> u16 {
        0
    }

    fn stats(_nd: &ProviderNetdev<P>, _stats: &mut bindings::opa_vnic_stats) {}

    fn poll(_nd: &ProviderNetdev<P>, _rx: &VnicRx<'_, P>, _budget: i32) -> i32 {
        0
    }
}
