// SPDX-License-Identifier: GPL-2.0-only

//! The simulated HFI's UD queue pairs (QP0, QP1): their state machine and keys, posting
//! receives, and delivering a message into one, as rdmavt does for hfi1 (`sw/rdmavt/qp.c`,
//! `hw/hfi1/ud.c`).

use crate::{cq, hfi::Hfi};
use kernel::{
    new_irq_spinlock,
    prelude::*,
    rdma::verbs::{
        Qp, QpInit, QpModify, QpQuery, QpState, QpType, RecvInfo, RecvWr, Refused, SendWr,
        WcStatus, WorkCompletion,
    },
    sync::IrqSpinLock,
};

/// The bytes a UD receive buffer reserves for the GRH before the payload (IBA 11.4.1.1).
pub(crate) const GRH_LEN: usize = 40;

/// The attributes of a QP that `modify_qp` changes.
struct QpAttrs {
    state: QpState,
    qkey: u32,
    pkey_index: u16,
    port: u32,
}

/// What opasim keeps for each QP: which receiver slot of its port it fills, and its state.
#[pin_data]
pub(crate) struct HfiQp {
    /// QP0 or QP1: the index of the port's receiver it is.
    pub(crate) slot: Option<usize>,
    #[pin]
    attrs: IrqSpinLock<QpAttrs>,
}

impl HfiQp {
    /// The data of a new QP created with `init`, in the Reset state.
    pub(crate) fn new(slot: Option<usize>, init: &QpInit) -> impl PinInit<Self, Error> {
        let attrs = QpAttrs {
            state: QpState::Reset,
            qkey: 0,
            pkey_index: 0,
            port: init.port,
        };
        try_pin_init!(Self {
            slot,
            attrs <- new_irq_spinlock!(attrs, "opasim_qp"),
        }? Error)
    }
}

/// The QP's port: fixed for QP0/QP1, from `modify_qp` for UD QPs (0 before).
pub(crate) fn port(qp: &Qp<Hfi>) -> u32 {
    qp.data().attrs.lock().port
}

/// `modify_qp`: the transitions and attributes the IB specification allows (the check of
/// `rvt_modify_qp()`); a move to Reset drops the posted receives, as `rvt_reset_qp()` does.
pub(crate) fn modify(qp: &Qp<Hfi>, m: &QpModify) -> Result {
    if m.has_non_ud_attrs() {
        return Err(EOPNOTSUPP);
    }
    let ports = qp.device().port_count();
    let qp_type = qp.init().qp_type;
    let mut a = qp.data().attrs.lock();
    let new_state = m.state.unwrap_or(a.state);
    if !m.transition_ok(a.state, new_state, qp_type) {
        return Err(EINVAL);
    }
    if let Some(port) = m.port {
        if port == 0 || port > ports {
            return Err(EINVAL);
        }
        // QP0 and QP1 belong to their port for good.
        if qp_type != QpType::Ud && port != a.port {
            return Err(EINVAL);
        }
        a.port = port;
    }
    if let Some(i) = m.pkey_index {
        a.pkey_index = i;
    }
    if let Some(k) = m.qkey {
        a.qkey = k;
    }
    if new_state == QpState::Reset {
        // Under the QP's lock, so no delivery is between its state check and the queue.
        qp.recv_queue().clear();
    }
    a.state = new_state;
    Ok(())
}

/// `query_qp`.
pub(crate) fn query(qp: &Qp<Hfi>) -> QpQuery {
    let a = qp.data().attrs.lock();
    QpQuery {
        state: a.state,
        qkey: a.qkey,
        pkey_index: a.pkey_index,
        port: a.port,
    }
}

/// `post_recv`: receives may be posted from Init on, and not in Error (as
/// `rvt_post_recv()`, which refuses in Reset and flushes in Error).
pub(crate) fn post_recv<'a>(qp: &Qp<Hfi>, wr: RecvWr<'a>) -> Result<(), Refused<RecvWr<'a>>> {
    let a = qp.data().attrs.lock();
    if matches!(a.state, QpState::Reset | QpState::Err) {
        return Err(Refused::new(wr, EINVAL));
    }
    qp.post_recv(wr)
}

/// The Q_Key and P_Key index to send `wr` with, if `qp` may send (it is in RTS): the
/// request's Q_Key, or the QP's if the request's has the high bit set (IBA 10.2.5); the
/// request's P_Key index on QP0/QP1, the QP's on UD QPs.
pub(crate) fn send_keys(qp: &Qp<Hfi>, wr: &SendWr<'_>) -> Result<(u32, u16, u32)> {
    let a = qp.data().attrs.lock();
    if a.state != QpState::Rts {
        return Err(EINVAL);
    }
    let qkey = if wr.remote_qkey() & 0x8000_0000 != 0 {
        a.qkey
    } else {
        wr.remote_qkey()
    };
    let pkey_index = match qp.init().qp_type {
        QpType::Smi | QpType::Gsi => wr.pkey_index(),
        QpType::Ud => a.pkey_index,
    };
    Ok((qkey, pkey_index, a.port))
}

/// Reports the completion of the send `wr` of `qp` (on `port`) with `status`: queues it on
/// the send CQ if the request is signaled, the QP signals all requests, or it failed.
pub(crate) fn complete_send(qp: &Qp<Hfi>, wr: SendWr<'_>, status: WcStatus, port: u32) {
    if !(qp.init().sig_all || wr.signaled() || status != WcStatus::Success) {
        return;
    }
    // A full CQ loses the completion, as an overrun does on rdmavt.
    let _ = cq::complete(qp.send_cq(), WorkCompletion::send(wr, status, port));
}

/// Delivers a UD message (the concatenated `parts`) to `qp`: takes the oldest posted
/// receive, writes the payload after the [`GRH_LEN`] bytes reserved for the GRH, and queues
/// the receive completion on the receive CQ (as hfi1's `hfi1_ud_rcv()` with rdmavt's
/// `rvt_get_rwqe()` and `rvt_recv_cq()`).
///
/// Fails with `EAGAIN` when the QP cannot receive (not in RTR/RTS/SQD) or has no receive
/// posted, and with `ENOSPC` when the receive CQ is full; the message is then dropped, and
/// the posted receives stay posted. A message larger than the buffer completes it with a
/// length error, and fails with `E2BIG`.
pub(crate) fn deliver_ud(qp: &Qp<Hfi>, parts: &[&[u8]], info: &RecvInfo) -> Result {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let rcq = qp.recv_cq();
    // The CQ's lock is held from the check for room to the completion, so that a receive is
    // taken only when its completion can be queued; the QP's lock, then its receive queue's,
    // nest inside (the order `modify` takes the last two in).
    let mut ring = rcq.data().ring.lock();
    if ring.is_full() {
        return Err(ENOSPC);
    }
    let a = qp.data().attrs.lock();
    if !matches!(a.state, QpState::Rtr | QpState::Rts | QpState::Sqd) {
        return Err(EAGAIN);
    }
    let mut rq = qp.recv_queue();
    let mut buf = rq.pop().ok_or(EAGAIN)?;
    let status = match buf.write(GRH_LEN, parts) {
        Ok(()) => WcStatus::Success,
        Err(_) => WcStatus::LocalLengthError,
    };
    let done = buf.finish();
    let wc = WorkCompletion::recv(qp, done, status, (GRH_LEN + len) as u32, info, a.port);
    // Queued before the receive queue's lock goes, as rdmavt holds `r_lock` through
    // `rvt_recv_cq()`: a move to Reset clears the queue under that lock, after which the
    // consumer may free the buffer and what its `wr_id` names, so no completion of it may
    // follow.
    let fire = ring.queue(wc)?;
    drop(rq);
    drop(a);
    drop(ring);
    if fire {
        rcq.notify();
    }
    if status == WcStatus::Success {
        Ok(())
    } else {
        Err(E2BIG)
    }
}
