// SPDX-License-Identifier: GPL-2.0

//! The verbs objects of software RDMA devices: CQs, UD QPs, address handles and work requests.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)
//!
//! The IB core allocates every object (zeroed, with the size the ops table gives) and calls
//! the device's `create_*` op to initialise the driver's part, which follows the core's
//! `struct ib_*` at offset 0; `destroy_*` drops it before the core frees the memory. Here the
//! driver's part is generic:
//!
//! - [`Cq`]: a ring of work completions under a spinlock, polled by `poll_cq`, and the arming
//!   state of `req_notify_cq`.
//! - [`Qp`]: UD semantics for QP0 (SMI), QP1 (GSI) and UD QPs: the QP state and Q_Key from
//!   `modify_qp`, the receive queue filled by `post_recv`, and the provider's data. Sends go
//!   to [`Provider::post_send`]; the provider delivers into a receiving QP with
//!   [`Qp::deliver_ud`].
//! - [`Ah`]: the address (DLID, SL, port) of a UD destination.
//!
//! Memory is addressed virtually: the device is registered without a DMA device, so the
//! `addr` of every scatter/gather entry is a kernel virtual address (`ib_uses_virt_dma`).

mod ah;
mod cq;
mod qp;
mod qp_ops;
mod recv;
mod ring;
mod send_wr;

pub use ah::{Ah, AhAttr};
pub use cq::{Cq, WcStatus};
pub use qp::{Qp, QpInit, QpState, QpType, UdDelivery};
pub use send_wr::SendWr;

/// The most scatter/gather entries of a work request.
pub const MAX_SGE: usize = 4;

/// The bytes a UD receive buffer reserves for the GRH before the payload.
pub const GRH_LEN: usize = 40;

/// The Q_Key of QP1 (`IB_QP1_QKEY`).
pub const QP1_QKEY: u32 = 0x8001_0000;
