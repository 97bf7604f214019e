// SPDX-License-Identifier: GPL-2.0

//! UD queue pairs (`struct ib_qp`): their state, and how a provider delivers to them.

use super::{
    cq::{Cq, QpPtr, WcStatus, WorkCompletion},
    recv::RecvBuffer,
    ring::Ring,
    send_wr::SendWr,
    GRH_LEN,
};
use crate::rdma::provider::{ProviderDevice, Provider};
use crate::sync::IrqSpinLock;
use crate::{
    bindings,
    error::{code::*, Result},
    types::{AlwaysRefCounted, Opaque},
};
use core::{
    ffi::c_int,
    ptr::NonNull,
    sync::atomic::{fence, AtomicUsize, Ordering},
};

/// The type of a QP this abstraction supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpType {
    /// QP0, the subnet management interface.
    Smi,
    /// QP1, the general services interface.
    Gsi,
    /// An unreliable datagram QP.
    Ud,
}

impl QpType {
    pub(super) fn raw(self) -> bindings::ib_qp_type {
        match self {
            Self::Smi => bindings::ib_qp_type_IB_QPT_SMI,
            Self::Gsi => bindings::ib_qp_type_IB_QPT_GSI,
            Self::Ud => bindings::ib_qp_type_IB_QPT_UD,
        }
    }
}

/// What a QP is created with (from `struct ib_qp_init_attr`).
#[derive(Clone, Copy, Debug)]
pub struct QpInit {
    /// The QP's type.
    pub qp_type: QpType,
    /// The port of QP0/QP1; 0 for UD QPs (their port comes with `modify_qp`).
    pub port: u32,
    /// The send queue's depth.
    pub max_send_wr: u32,
    /// The receive queue's depth.
    pub max_recv_wr: u32,
}

/// The state of a QP (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    /// Reset.
    Reset,
    /// Initialised: receives may be posted.
    Init,
    /// Ready to receive.
    Rtr,
    /// Ready to send.
    Rts,
    /// Send queue drained.
    Sqd,
    /// Send queue error.
    Sqe,
    /// Error.
    Err,
}

impl QpState {
    pub(super) fn from_raw(s: bindings::ib_qp_state) -> Option<Self> {
        Some(match s {
            bindings::ib_qp_state_IB_QPS_RESET => Self::Reset,
            bindings::ib_qp_state_IB_QPS_INIT => Self::Init,
            bindings::ib_qp_state_IB_QPS_RTR => Self::Rtr,
            bindings::ib_qp_state_IB_QPS_RTS => Self::Rts,
            bindings::ib_qp_state_IB_QPS_SQD => Self::Sqd,
            bindings::ib_qp_state_IB_QPS_SQE => Self::Sqe,
            bindings::ib_qp_state_IB_QPS_ERR => Self::Err,
            _ => return None,
        })
    }

    pub(super) fn raw(self) -> bindings::ib_qp_state {
        match self {
            Self::Reset => bindings::ib_qp_state_IB_QPS_RESET,
            Self::Init => bindings::ib_qp_state_IB_QPS_INIT,
            Self::Rtr => bindings::ib_qp_state_IB_QPS_RTR,
            Self::Rts => bindings::ib_qp_state_IB_QPS_RTS,
            Self::Sqd => bindings::ib_qp_state_IB_QPS_SQD,
            Self::Sqe => bindings::ib_qp_state_IB_QPS_SQE,
            Self::Err => bindings::ib_qp_state_IB_QPS_ERR,
        }
    }
}

pub(super) struct QpInner {
    pub(super) qps: QpState,
    pub(super) qkey: u32,
    pub(super) pkey_index: u16,
    pub(super) port: u32,
    pub(super) sig_all: bool,
    pub(super) rq: Ring<RecvBuffer>,
    pub(super) max_send_wr: u32,
    pub(super) max_recv_wr: u32,
}

/// A UD queue pair of the provider `T`.
///
/// Shared with [`ARef`](crate::types::ARef): the provider keeps references to the QPs that
/// can receive (in its port tables); destroying the QP waits until they are all dropped.
///
/// # Invariants
///
/// `ib` is a `struct ib_qp` of a device of `T` that the core allocated with the size of
/// `Self`; `refs`, `released`, `inner` and `data` are initialised from the end of a
/// successful `create_qp` until `destroy_qp` has seen `refs` drop to zero. The QP's CQs stay
/// alive as long as it does (the core refuses to destroy a CQ that QPs use).
#[repr(C)]
pub struct Qp<T: Provider> {
    pub(super) ib: Opaque<bindings::ib_qp>,
    pub(super) refs: AtomicUsize,
    pub(super) released: Opaque<bindings::completion>,
    pub(super) inner: IrqSpinLock<QpInner>,
    pub(super) qp_type: QpType,
    pub(super) data: T::Qp,
}

// SAFETY: The mutable state is behind the spinlock or atomic; the core's part is only read
// for fields fixed at creation (number, type, CQs, device).
unsafe impl<T: Provider> Send for Qp<T> {}
// SAFETY: See above.
unsafe impl<T: Provider> Sync for Qp<T> {}

// SAFETY: `inc_ref` and `dec_ref` keep `refs` exact; the object is not freed at zero but
// `destroy_qp` waits for zero (by `released`) before the core frees it.
unsafe impl<T: Provider> AlwaysRefCounted for Qp<T> {
    fn inc_ref(&self) {
        self.refs.fetch_add(1, Ordering::Relaxed);
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference, so the QP is alive.
        let this = unsafe { obj.as_ref() };
        if this.refs.fetch_sub(1, Ordering::Release) == 1 {
            fence(Ordering::Acquire);
            // SAFETY: `released` is initialised (type invariant); `destroy_qp` frees the QP
            // only after this completion, and touches nothing of `this` after waiting.
            unsafe { bindings::complete(this.released.get()) };
        }
    }
}

/// The user-visible parts of a UD message for [`Qp::deliver_ud`].
#[derive(Clone, Copy, Debug)]
pub struct UdDelivery {
    /// The sender's LID.
    pub slid: u32,
    /// The sender's QP number.
    pub src_qp: u32,
    /// The service level.
    pub sl: u8,
    /// The index, in the receiving port's table, of the P_Key the packet matched.
    pub pkey_index: u16,
    /// The immediate data, if any.
    pub imm: Option<u32>,
    /// The sender asked for a solicited event.
    pub solicited: bool,
}

impl<T: Provider> Qp<T> {
    /// # Safety
    ///
    /// `ptr` must be an initialised QP of `T` (see the type invariant) for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_qp) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Self`, and the caller guarantees
        // the memory is an initialised `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn raw(&self) -> *mut bindings::ib_qp {
        self.ib.get()
    }

    /// The provider's data of the QP.
    pub fn data(&self) -> &T::Qp {
        &self.data
    }

    /// The QP's number.
    pub fn qp_num(&self) -> u32 {
        // SAFETY: The QP is alive (type invariant); `qp_num` is fixed at creation.
        unsafe { (*self.raw()).qp_num }
    }

    /// The QP's type.
    pub fn qp_type(&self) -> QpType {
        self.qp_type
    }

    /// The device the QP belongs to.
    pub fn device(&self) -> &ProviderDevice<T> {
        // SAFETY: The QP is alive, so its device is (the core destroys a device's QPs before
        // unregistering it), and it is a device of `T` (type invariant).
        unsafe { ProviderDevice::from_raw((*self.raw()).device) }
    }

    /// The QP's port: fixed for QP0/QP1, from `modify_qp` for UD QPs (0 before).
    pub fn port(&self) -> u32 {
        self.inner.lock().port
    }

    /// The QP's state.
    pub fn state(&self) -> QpState {
        self.inner.lock().qps
    }

    /// The QP's Q_Key.
    pub fn qkey(&self) -> u32 {
        self.inner.lock().qkey
    }

    pub(super) fn send_cq(&self) -> &Cq {
        // SAFETY: The QP is alive, its send CQ is a CQ of this abstraction, and the core keeps
        // it alive while the QP uses it.
        unsafe { Cq::from_raw((*self.raw()).send_cq) }
    }

    pub(super) fn recv_cq(&self) -> &Cq {
        // SAFETY: As for `send_cq`.
        unsafe { Cq::from_raw((*self.raw()).recv_cq) }
    }

    /// Reports the completion of the send `wr` of this QP with `status`: queues a completion
    /// on the send CQ if the request is signaled (or the QP signals all requests).
    pub fn complete_send(&self, wr: &SendWr<'_>, status: WcStatus) {
        let sig_all = self.inner.lock().sig_all;
        if !(sig_all || wr.signaled() || status != WcStatus::Success) {
            return;
        }
        let port = self.port();
        let _ = self.send_cq().complete(WorkCompletion {
            wr_id: wr.wr_id(),
            status: status.raw(),
            opcode: bindings::ib_wc_opcode_IB_WC_SEND,
            byte_len: wr.len() as u32,
            qp: QpPtr(self.raw()),
            src_qp: 0,
            slid: 0,
            wc_flags: 0,
            imm: 0,
            pkey_index: 0,
            sl: 0,
            port_num: port,
            solicited: false,
        });
    }

    /// Delivers a UD message (the concatenated `parts`) to this QP: takes the oldest posted
    /// receive, writes the payload after the [`GRH_LEN`] bytes reserved for the GRH, and
    /// queues the receive completion on the receive CQ.
    ///
    /// Fails with `EAGAIN` when the QP cannot receive (not in RTR/RTS) or has no receive
    /// posted, and with `ENOSPC` when the receive CQ is full; the message is then dropped,
    /// and the posted receives stay posted.
    pub fn deliver_ud(&self, parts: &[&[u8]], d: &UdDelivery) -> Result {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let cq = self.recv_cq();
        // The CQ's lock is held from the check for room to the completion, so that a receive
        // is taken only when its completion can be queued (the QP's lock nests inside).
        let mut st = cq.state.lock();
        if st.ring.is_full() {
            return Err(ENOSPC);
        }
        let (buf, port) = {
            let mut inner = self.inner.lock();
            if !matches!(inner.qps, QpState::Rtr | QpState::Rts | QpState::Sqd) {
                return Err(EAGAIN);
            }
            (inner.rq.pop().ok_or(EAGAIN)?, inner.port)
        };
        let status = if GRH_LEN + len > buf.len() {
            WcStatus::LocalLengthError
        } else {
            buf.scatter(GRH_LEN, parts);
            WcStatus::Success
        };
        let mut wc_flags = 0;
        if d.imm.is_some() {
            wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_IMM as c_int;
        }
        let fire = Cq::queue(
            &mut st,
            WorkCompletion {
                wr_id: buf.wr_id,
                status: status.raw(),
                opcode: bindings::ib_wc_opcode_IB_WC_RECV,
                byte_len: (GRH_LEN + len) as u32,
                qp: QpPtr(self.raw()),
                src_qp: d.src_qp,
                slid: d.slid,
                wc_flags,
                imm: d.imm.unwrap_or(0),
                pkey_index: d.pkey_index,
                sl: d.sl,
                port_num: port,
                solicited: d.solicited,
            },
        )?;
        drop(st);
        cq.fire(fire);
        if status == WcStatus::Success {
            Ok(())
        } else {
            Err(E2BIG)
        }
    }
}
