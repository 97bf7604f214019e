// SPDX-License-Identifier: GPL-2.0

//! The verbs objects of software RDMA devices, as the IB core hands them to a provider: CQs,
//! UD QPs, address handles, work requests and work completions.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! The IB core allocates every object (zeroed, with the size the ops table gives) and calls
//! the device's `create_*` op to initialise the driver's part, which follows the core's
//! `struct ib_*` at offset 0; `destroy_*` drops it before the core frees the memory. This
//! module is the binding of those ops, not a provider: the containers ([`Cq`], [`Qp`], [`Ah`])
//! embed the provider's data after the core's object, and the typed views ([`QpInit`],
//! [`QpModify`], [`SendWr`], [`RecvWr`], [`AhAttr`], [`WorkCompletion`]) are what the core
//! passes or expects. The semantics (the QP state machine, Q_Key checks, the CQ's ring and
//! arming, UD delivery) are the provider's.
//!
//! Two things stay here because safe code could not do them soundly:
//!
//! - The receive buffers a QP's consumer posts: they are only valid until the request
//!   completes or the QP is destroyed, so the [`Qp`] keeps them (`RecvQueue`) and a
//!   provider reaches one only under the queue's lock ([`PostedRecv`] borrows it).
//! - The call of the CQ's completion handler: [`Cq::notify`] defers it to a work item, as
//!   rdmavt's `rvt_cq_enter()` does, so that it never runs in the context (and under the
//!   locks) of whoever posted the work request; `destroy_cq` flushes it.
//!
//! Memory is addressed virtually: the device is registered without a DMA device, so the
//! `addr` of every scatter/gather entry is a kernel virtual address (`ib_uses_virt_dma`).

mod ah;
mod cq;
#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
mod cq_kunit;
mod qp;
mod qp_attr;
#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
mod qp_kunit;
mod qp_ops;
mod recv;
mod refused;
mod ring;
mod send_wr;
mod wc;

pub use ah::{Ah, AhAttr};
pub use cq::{Cq, CqNotify};
pub use qp::Qp;
pub use qp_attr::{QpInit, QpModify, QpQuery, QpState, QpType};
pub use recv::{PostedRecv, RecvDone, RecvQueueGuard, RecvWr};
pub use refused::Refused;
pub use send_wr::SendWr;
pub use wc::{RecvInfo, WcStatus, WcWriter, WorkCompletion};

/// The most scatter/gather entries of a work request.
pub const MAX_SGE: usize = 4;

/// The deepest send or receive queue of a QP.
pub const MAX_QP_WR: u32 = 16384;

/// The Q_Key of QP1 (`IB_QP1_QKEY`).
pub const QP1_QKEY: u32 = 0x8001_0000;
