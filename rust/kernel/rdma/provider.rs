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
pub use device::{ProviderDevice, Registration};

pub use super::device::PortCapMask;
use super::verbs::{Qp, QpInit, SendWr};
use super::vnic::VnicOps;
use crate::{
    error::{code::*, Result},
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

    /// What the driver keeps for each OPA VNIC netdev, and the netdev's operations
    /// ([`NoVnic`](super::vnic::NoVnic) without VNIC support).
    type Vnic: VnicOps<Self>;

    /// The device attributes (`query_device`).
    fn query_device(dev: &ProviderDevice<Self>) -> DeviceAttr;

    /// The attributes of `port` (`query_port`).
    fn query_port(dev: &ProviderDevice<Self>, port: u32) -> Result<PortAttr>;

    /// The immutable attributes of `port` (`get_port_immutable`).
    fn port_immutable(dev: &ProviderDevice<Self>, port: u32) -> Result<PortImmutable>;

    /// Changes the settings of `port` (checked to exist) as `change` says
    /// (`modify_port`). Without this op the IB core answers `EOPNOTSUPP`.
    fn modify_port(_dev: &ProviderDevice<Self>, _port: u32, _change: &PortModify) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Accepts `desc` as the device's new node description (`modify_device` with
    /// `IB_DEVICE_MODIFY_NODE_DESC`, which writing `/sys/class/infiniband/*/node_desc` does, as
    /// `rdma-ndd` does at boot). On success the IB core's copy, which `NodeDescription` MADs
    /// and sysfs show, becomes `desc`. Without this op the description cannot change.
    fn modify_node_desc(_dev: &ProviderDevice<Self>, _desc: &[u8; NODE_DESC_LEN]) -> Result {
        Err(EOPNOTSUPP)
    }

    /// The P_Key at `index` in the table of `port`.
    fn query_pkey(dev: &ProviderDevice<Self>, port: u32, index: u16) -> Result<u16>;

    /// The GID at `index` in the table of `port`.
    fn query_gid(dev: &ProviderDevice<Self>, port: u32, index: u32) -> Result<[u8; 16]>;

    /// Accepts a new QP: returns its number and the driver's data for it.
    ///
    /// Types the driver does not handle get `EOPNOTSUPP`.
    fn create_qp(dev: &ProviderDevice<Self>, init: &QpInit) -> Result<(u32, Self::Qp)>;

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
    fn port_counters(_dev: &ProviderDevice<Self>, _port: u32, _out: &mut [u64]) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Sends one UD work request from `qp`, which is in the RTS state.
    ///
    /// The driver delivers the message (or drops it) and reports the send's completion with
    /// [`Qp::complete_send`].
    fn post_send(qp: &Qp<Self>, wr: &SendWr<'_>) -> Result;
}

/// Bytes of a node description (`IB_DEVICE_NODE_DESC_MAX`).
pub const NODE_DESC_LEN: usize = bindings::IB_DEVICE_NODE_DESC_MAX as usize;

/// Returns the errno of a result, for the C ops.
pub(crate) fn errno(r: Result) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}
