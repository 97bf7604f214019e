// SPDX-License-Identifier: GPL-2.0

//! Software RDMA devices: the provider side of the IB core.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A [`Provider`] is a driver of software RDMA devices that speak UD only: the management
//! QPs (QP0 as SMI, QP1 as GSI) and, optionally, ordinary UD QPs, with virtual addressing
//! instead of DMA (the device is registered without a DMA device, so the IB core hands it
//! kernel virtual addresses in its scatter/gather entries). The abstraction implements the
//! generic parts of the verbs (PDs, CQs, AHs, receive queues, QP state) in
//! [`verbs`](super::verbs); the provider supplies the port attributes and the "wire": what
//! happens to a UD send ([`Provider::post_send`]).
//!
//! Every other verb (memory registration, connected QPs, user verbs) is absent from the ops
//! table or answers `EOPNOTSUPP`.

mod adapter;
mod attr;
mod device;

pub use attr::{
    DeviceAttr, Mtu, PortAttr, PortImmutable, PortModify, PortState, StatDesc, SPEED_EDR, WIDTH_4X,
};
pub use device::{Device, Registration};

pub use super::device::PortCapMask;
use super::verbs::{Qp, QpInit, SendWr};
use super::vnic::{SkbMetadata, VnicNetdev};
use crate::{
    error::{code::*, Result},
    net::skbuff::SkBuff,
    str::CStr,
};
use core::ffi::c_int;

/// A driver of software RDMA devices.
#[macros::vtable]
pub trait Provider: Sized + 'static {
    /// The node description of the driver's devices (at most 63 bytes are kept), as
    /// `NodeDescription` MADs and `/sys/class/infiniband/*/node_desc` show it.
    const NODE_DESC: &'static CStr;

    /// What the driver keeps for each of its devices.
    type Data: Send + Sync;

    /// What the driver keeps for each QP.
    type Qp: Send + Sync;

    /// What the driver keeps for each OPA VNIC netdev (`()` without VNIC support).
    type Vnic: Send + Sync;

    /// The device attributes (`query_device`).
    fn query_device(dev: &Device<Self>) -> DeviceAttr;

    /// The attributes of `port` (`query_port`).
    fn query_port(dev: &Device<Self>, port: u32) -> Result<PortAttr>;

    /// The immutable attributes of `port` (`get_port_immutable`).
    fn port_immutable(dev: &Device<Self>, port: u32) -> Result<PortImmutable>;

    /// Changes the settings of `port` (checked to exist) as `change` says
    /// (`modify_port`). Without this op the IB core answers `EOPNOTSUPP`.
    fn modify_port(_dev: &Device<Self>, _port: u32, _change: &PortModify) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The P_Key at `index` in the table of `port`.
    fn query_pkey(dev: &Device<Self>, port: u32, index: u16) -> Result<u16>;

    /// The GID at `index` in the table of `port`.
    fn query_gid(dev: &Device<Self>, port: u32, index: u32) -> Result<[u8; 16]>;

    /// Accepts a new QP: returns its number and the driver's data for it.
    ///
    /// Types the driver does not handle get `EOPNOTSUPP`.
    fn create_qp(dev: &Device<Self>, init: &QpInit) -> Result<(u32, Self::Qp)>;

    /// Called once the QP is complete, before it is handed to its creator: the place to
    /// publish it (keep an [`ARef`](crate::types::ARef) to it) for receives. An error
    /// destroys the QP again, without calling [`Provider::destroy_qp`]: a failing `qp_ready`
    /// must not keep a reference (the destruction would wait for it forever).
    fn qp_ready(_qp: &Qp<Self>) -> Result {
        Ok(())
    }

    /// Called when the QP's creator destroys it: the driver must drop every reference it
    /// keeps to it (the abstraction then waits for the last one before freeing).
    fn destroy_qp(_qp: &Qp<Self>) {}

    /// The names of the per-port counters, in the order of [`Provider::port_counters`].
    fn port_counter_descs() -> &'static [StatDesc] {
        &[]
    }

    /// Reads the counters of `port` into `out` (one value per
    /// [`Provider::port_counter_descs`] entry).
    fn port_counters(_dev: &Device<Self>, _port: u32, _out: &mut [u64]) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Accepts a new OPA VNIC netdev on `port` (checked to exist): returns the driver's data
    /// for it. Providing this makes the devices able to allocate `RDMA_NETDEV_OPA_VNIC`
    /// netdevs (see [`vnic`](super::vnic)).
    fn alloc_vnic(_dev: &Device<Self>, _port: u32) -> Result<Self::Vnic> {
        Err(EOPNOTSUPP)
    }

    /// The transmit queues of a new OPA VNIC netdev on `port` (hfi1 gives one per SDMA
    /// engine); taken between 1 and [`vnic::MAX_TX_QUEUES`](super::vnic::MAX_TX_QUEUES).
    fn vnic_tx_queues(_dev: &Device<Self>, _port: u32) -> u32 {
        1
    }

    /// `rn.set_id`: binds the netdev to a virtual Ethernet switch id, for receive.
    fn vnic_set_id(_nd: &VnicNetdev<Self>, _id: i32) {}

    /// `ndo_open` of a VNIC netdev.
    fn vnic_open(_nd: &VnicNetdev<Self>) -> Result {
        Err(EOPNOTSUPP)
    }

    /// `ndo_stop` of a VNIC netdev.
    fn vnic_stop(_nd: &VnicNetdev<Self>) {}

    /// `ndo_start_xmit` of a VNIC netdev: `skb` starts with the metadata, then the 16B
    /// header and the frame. The driver owns the buffer (frees or passes it on).
    fn vnic_xmit(_nd: &VnicNetdev<Self>, _skb: SkBuff) {}

    /// `ndo_select_queue` of a VNIC netdev, from the frame's metadata: a queue below
    /// [`Provider::vnic_tx_queues`] (the stack caps a larger one, with a warning).
    fn vnic_select_queue(_nd: &VnicNetdev<Self>, _meta: &SkbMetadata) -> u16 {
        0
    }

    /// `ndo_get_stats64` of a VNIC netdev: fills the whole `struct opa_vnic_stats`.
    fn vnic_stats(_nd: &VnicNetdev<Self>, _stats: &mut bindings::opa_vnic_stats) {}

    /// Sends one UD work request from `qp`, which is in the RTS state.
    ///
    /// The driver delivers the message (or drops it) and reports the send's completion with
    /// [`Qp::complete_send`].
    fn post_send(qp: &Qp<Self>, wr: &SendWr<'_>) -> Result;
}

/// Returns the errno of a result, for the C ops.
pub(crate) fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}
