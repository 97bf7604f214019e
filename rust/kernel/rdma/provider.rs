// SPDX-License-Identifier: GPL-2.0

//! Software RDMA devices: the provider side of the IB core.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! A [`Provider`] is a driver of software RDMA devices that speak UD only: the management
//! QPs (QP0 as SMI, QP1 as GSI) and, optionally, ordinary UD QPs, with virtual addressing
//! instead of DMA (the device is registered without a DMA device, so the IB core hands it
//! kernel virtual addresses in its scatter/gather entries). The abstraction binds the IB
//! core's provider ops (`struct ib_device_ops`): it checks what the core hands over and passes
//! typed views of it ([`verbs`](super::verbs)) to the provider, which implements the verbs'
//! semantics: its CQs (their rings and arming), its QPs' states and keys, and what happens to
//! a UD send ([`Provider::post_send`]). PDs need nothing from the provider; AHs keep their
//! address; posted receive buffers are kept by the abstraction (see
//! [`verbs`](super::verbs)). A provider may be its ports' management agent: the SMA and PMA
//! that answer the subnet manager and the admin tools ([`Provider::process_mad`], [`mad`]).
//!
//! User space can open the devices (`ib_uverbs`), query them and their ports and read their
//! async events: a user context is a token the core owns (see `ucontext.rs`). Every other
//! verb (memory registration, connected QPs, CQs and QPs for user space) is absent from the
//! ops table or answers `EOPNOTSUPP`.

mod adapter;
mod attr;
mod device;
pub mod mad;
mod mad_ops;
mod ucontext;

pub use attr::{
    DeviceAttr, Mtu, PortAttr, PortImmutable, PortModify, PortState, StatDesc, SPEED_EDR, WIDTH_4X,
};
pub use device::{ProviderDevice, Registration};

pub use super::device::PortCapMask;
use super::verbs::{
    Cq, CqNotify, Qp, QpInit, QpModify, QpQuery, RecvWr, Refused, SendWr, WcWriter,
};
use super::vnic::VnicOps;
use crate::{
    error::{code::*, Error, Result},
    init::PinInit,
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

    /// What the driver keeps for each CQ: its completions and how it is armed.
    type Cq: Send + Sync;

    /// What the driver keeps for each QP: its state and keys, and how it is reached.
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

    /// Accepts a new CQ of room for `entries` completions (at least 1): returns the
    /// initialiser of the driver's data for it.
    fn create_cq(dev: &ProviderDevice<Self>, entries: u32)
        -> Result<impl PinInit<Self::Cq, Error>>;

    /// Moves the oldest completions of `cq` into `out`, as many as it takes (`poll_cq`).
    ///
    /// Must not sleep: the core polls from softirq context for some CQs (`IB_POLL_SOFTIRQ`).
    fn poll_cq(cq: &Cq<Self>, out: &mut WcWriter<'_>);

    /// Arms `cq` as `notify` says (`req_notify_cq`): the next completion (or the next
    /// solicited one) is to call the core's completion handler, through [`Cq::notify`].
    /// Returns whether completions are waiting already, when `notify.report_missed` asks.
    ///
    /// Must not sleep, as [`Provider::poll_cq`].
    fn req_notify_cq(cq: &Cq<Self>, notify: &CqNotify) -> bool;

    /// Accepts a new QP: returns its number and the initialiser of the driver's data for it.
    ///
    /// Types the driver does not handle get `EOPNOTSUPP`.
    fn create_qp(
        dev: &ProviderDevice<Self>,
        init: &QpInit,
    ) -> Result<(u32, impl PinInit<Self::Qp, Error>)>;

    /// Changes the attributes of `qp` as `attr` says (`modify_qp`), or refuses.
    fn modify_qp(qp: &Qp<Self>, attr: &QpModify) -> Result;

    /// The state and keys of `qp` (`query_qp`).
    fn query_qp(qp: &Qp<Self>) -> QpQuery;

    /// Accepts the receive `wr` posted to `qp` (queueing it with [`Qp::post_recv`]), or
    /// refuses it (giving it back in [`Refused`]).
    ///
    /// Must not sleep: consumers post under their spinlocks, interrupts off (the MAD layer's
    /// receive queue lock).
    fn post_recv<'a>(qp: &Qp<Self>, wr: RecvWr<'a>) -> Result<(), Refused<RecvWr<'a>>>;

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

    /// Takes, answers or passes on `req`, a MAD that arrived on QP0 or QP1 of one of the
    /// device's ports, a directed-route SMP a local agent sends to its own port, or a
    /// performance query of the core (`process_mad`; see [`mad`]). The answer goes into
    /// `reply`. Called in any context, interrupts possibly off: must not sleep.
    ///
    /// Without this op the core gives every MAD to its agents, and local directed-route SMPs
    /// go out on the wire.
    fn process_mad(
        _dev: &ProviderDevice<Self>,
        _req: &mad::MadRequest<'_>,
        _reply: &mut mad::MadReply<'_>,
    ) -> mad::MadVerdict {
        mad::MadVerdict::Pass
    }

    /// The names of the per-port counters, in the order of [`Provider::port_counters`].
    fn port_counter_descs() -> &'static [StatDesc] {
        &[]
    }

    /// Reads the counters of `port` into `out` (one value per
    /// [`Provider::port_counter_descs`] entry).
    fn port_counters(_dev: &ProviderDevice<Self>, _port: u32, _out: &mut [u64]) -> Result {
        Err(EOPNOTSUPP)
    }

    /// Sends one UD work request from `qp`.
    ///
    /// The driver checks the QP's state, delivers the message (or drops it) and queues the
    /// send's completion ([`WorkCompletion::send`](super::verbs::WorkCompletion::send), which
    /// consumes `wr`) on the QP's send CQ; or it refuses the request (giving it back in
    /// [`Refused`]), which it can only do before completing it.
    ///
    /// Must not sleep: consumers post under their spinlocks, interrupts off (`ib_send_mad()`
    /// holds the send queue's lock).
    fn post_send<'a>(qp: &Qp<Self>, wr: SendWr<'a>) -> Result<(), Refused<SendWr<'a>>>;
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
