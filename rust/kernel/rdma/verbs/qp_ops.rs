// SPDX-License-Identifier: GPL-2.0

//! The IB core's operations on the QPs of [`super::qp`]: create, destroy, modify, query, and
//! post sends and receives. Each checks what the core hands over and passes typed views to
//! the provider, which decides what they mean.

use super::{
    cq::Cq,
    qp::{Qp, QpPriv},
    qp_attr::{QpInit, QpModify, QpState, QpType},
    recv::RecvWr,
    send_wr::SendWr,
    MAX_QP_WR, MAX_SGE,
};
use crate::rdma::provider::{errno, Provider, ProviderDevice};
use crate::{
    bindings,
    error::{code::*, from_result, Result},
    init::PinInit,
    types::{AlwaysRefCounted, Opaque},
};
use core::{
    ffi::c_int,
    ptr::{addr_of_mut, NonNull},
};

impl<T: Provider> Qp<T> {
    /// # Safety
    ///
    /// Called by the IB core only, as `create_qp`, with a zeroed QP of the size of `Self` on a
    /// device of `T`.
    pub(crate) unsafe extern "C" fn create_qp_callback(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The arguments are the core's, as this function's contract says.
            unsafe { Self::create_qp(qp, attr, udata) }?;
            Ok(0)
        })
    }

    /// `create_qp`, with errors as `Result`.
    ///
    /// # Safety
    ///
    /// As [`Self::create_qp_callback`].
    unsafe fn create_qp(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> Result {
        // The core allocates the QP with `kzalloc()`, whose alignment (at least 8 bytes) must
        // do for `Self`.
        crate::build_assert!(core::mem::align_of::<Self>() <= 8);
        if !udata.is_null() {
            return Err(EOPNOTSUPP);
        }
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &*attr };
        let qp_type = QpType::from_raw(attr.qp_type).ok_or(EOPNOTSUPP)?;
        if !attr.srq.is_null() || attr.create_flags != 0 || !attr.rwq_ind_tbl.is_null() {
            return Err(EOPNOTSUPP);
        }
        // The CQs must be CQs of this device (so of `T`), as `Qp::send_cq()` takes them to be.
        // SAFETY: The core set `device` and the CQs (from `attr`) before calling `create_qp`;
        // a non-null CQ is a live CQ the creator holds.
        let cqs_ok = unsafe {
            let dev = (*qp).device;
            let ok = |cq: *mut bindings::ib_cq| !cq.is_null() && (*cq).device == dev;
            ok((*qp).send_cq) && ok((*qp).recv_cq)
        };
        if !cqs_ok {
            return Err(EINVAL);
        }
        let cap = &attr.cap;
        if cap.max_send_sge as usize > MAX_SGE
            || cap.max_recv_sge as usize > MAX_SGE
            || cap.max_recv_wr > MAX_QP_WR
            || cap.max_send_wr > MAX_QP_WR
            || cap.max_inline_data != 0
        {
            return Err(EINVAL);
        }
        let init = QpInit {
            qp_type,
            port: if qp_type == QpType::Ud {
                0
            } else {
                attr.port_num
            },
            max_send_wr: cap.max_send_wr,
            max_recv_wr: cap.max_recv_wr,
            sig_all: attr.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
        };
        // SAFETY: The core passes a QP of one of `T`'s devices, whose `device` it has set and
        // which is alive during the call.
        let dev = unsafe { ProviderDevice::<T>::from_raw((*qp).device) };
        let (qpn, data) = T::create_qp(dev, &init)?;
        let p = QpPriv::<T>::new(init, data)?;
        let this = qp.cast::<Self>();
        // SAFETY: The core's allocation is of the size of `Self` and aligned enough (checked
        // above), so `p` is valid for writing a `QpPriv<T>`, which is not initialised yet. The
        // core never moves the QP, and frees it only after `destroy_qp` (or after this fails,
        // which leaves `p` as uninitialised as it found it: `__pinned_init` drops what it
        // initialised on error). This is the only way to initialise pinned data in memory C
        // allocated; `drm::Device::new` does the same.
        unsafe { p.__pinned_init(addr_of_mut!((*this).p)) }?;
        // INVARIANT: `p` is initialised now, in the core's allocation of the size of `Self`,
        // until `release` drops it; the CQs were checked to be this device's above.
        // SAFETY: The QP is the core's, not yet visible to its users; `qp_num` is read by the
        // core after `create_qp` returns.
        unsafe { (*qp).qp_num = qpn };
        // SAFETY: The QP is initialised now.
        let me = unsafe { Self::from_raw(qp) };
        if let Err(e) = T::qp_ready(me) {
            // SAFETY: The QP was initialised above and is not known to the core's users yet.
            unsafe { Self::release(qp) };
            return Err(e);
        }
        Ok(())
    }

    /// Drops the initial reference, waits for the others, and drops what `create_qp`
    /// initialised.
    ///
    /// # Safety
    ///
    /// `qp` must be initialised, and this must be its only teardown.
    unsafe fn release(qp: *mut bindings::ib_qp) {
        let this = qp.cast::<Self>();
        // SAFETY: The QP is initialised (caller's guarantee) and the initial reference is
        // owned by the core's handle, which is being destroyed.
        unsafe { Self::dec_ref(NonNull::new_unchecked(this)) };
        // SAFETY: As above; `released` is initialised with the QP.
        let released = unsafe { Opaque::raw_get(addr_of_mut!((*this).p.released)) };
        // The provider's references (`ARef<Qp>`) must all go before the memory can: wait, and
        // say what is waited for every 10 s (as `netdev_wait_allrefs()` does) instead of
        // hanging silently when a provider keeps one.
        // SAFETY: `__msecs_to_jiffies` has no precondition.
        let period = unsafe { bindings::__msecs_to_jiffies(10_000) };
        // SAFETY: `released` is a valid completion, completed by the last `dec_ref`.
        while unsafe { bindings::wait_for_completion_timeout(released, period) } == 0 {
            // SAFETY: The QP is initialised until the drop below.
            let num = unsafe { (*qp).qp_num };
            crate::pr_warn!("QP {}: waiting for the provider to release it\n", num);
        }
        // SAFETY: No reference is left, so nothing uses the QP's parts any more (the posted
        // receives go with the queue: the QP is being destroyed); they are dropped once.
        unsafe { core::ptr::drop_in_place(addr_of_mut!((*this).p)) };
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `destroy_qp`, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn destroy_qp_callback(
        qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        let (send_cq, recv_cq) = {
            // SAFETY: The core destroys initialised QPs only; `me` is not used after `release`.
            let me = unsafe { Self::from_raw(qp) };
            T::destroy_qp(me);
            (me.send_cq() as *const Cq<T>, me.recv_cq() as *const Cq<T>)
        };
        // SAFETY: The QP is initialised, and the core calls `destroy_qp` once.
        unsafe { Self::release(qp) };
        // No completion of this QP can be queued any more. Wait for the completion handler
        // calls its completions asked for: once the last QP of a CQ is gone, nothing can queue
        // the CQ's work item, so none is pending when `ib_free_cq()` cancels the core's own
        // work and destroys the CQ (rdmavt flushes only in `destroy_cq`, after that cancel,
        // which leaves a window where the handler requeues the core's work).
        // SAFETY: The QP's CQs stay alive until the core has finished destroying the QP (it
        // drops its use of them after this returns).
        unsafe {
            (*send_cq).flush_notify();
            (*recv_cq).flush_notify();
        }
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `modify_qp`, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn modify_qp_callback(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        if !udata.is_null() {
            return EOPNOTSUPP.to_errno();
        }
        // SAFETY: The core modifies initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        // SAFETY: `attr` is valid for reading during the call, by the op's contract.
        let attr = unsafe { &*attr };
        errno(QpModify::new(attr, mask as u32).and_then(|m| {
            T::modify_qp(me, &m)?;
            if m.state == Some(QpState::Reset) {
                // Once `ib_modify_qp(RESET)` returns, the consumer may free the buffers it
                // posted: none may stay queued for a delivery to write, whatever the provider
                // did. (A delivery in progress holds the queue's lock while it writes, so the
                // clear waits for it.)
                me.recv_queue().clear();
            }
            Ok(())
        }))
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `query_qp`, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn query_qp_callback(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        // SAFETY: The core queries initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        // SAFETY: `attr` and `init` are valid for writing, by the op's contract (`ib_query_qp()`
        // callers pass both). The core zeroes neither (some pass uninitialised stack
        // structures), so this only writes them, whole plain-data fields, and reads nothing.
        let (attr, init) = unsafe { (&mut *attr, &mut *init) };
        let q = T::query_qp(me);
        let i = me.init();
        attr.qp_state = q.state.raw();
        attr.cur_qp_state = q.state.raw();
        attr.qkey = q.qkey;
        attr.pkey_index = q.pkey_index;
        attr.port_num = q.port;
        attr.path_mtu = bindings::ib_mtu_IB_MTU_4096;
        // Made whole here: copying `attr.cap` would read its fields this does not set.
        let cap = bindings::ib_qp_cap {
            max_send_wr: i.max_send_wr,
            max_recv_wr: i.max_recv_wr,
            max_send_sge: MAX_SGE as u32,
            max_recv_sge: MAX_SGE as u32,
            max_inline_data: 0,
            max_rdma_ctxs: 0,
        };
        attr.cap = cap;
        init.cap = cap;
        init.port_num = q.port;
        init.sq_sig_type = if i.sig_all {
            bindings::ib_sig_type_IB_SIGNAL_ALL_WR
        } else {
            bindings::ib_sig_type_IB_SIGNAL_REQ_WR
        };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `post_send`, with an initialised QP of `T` and a valid
    /// chain of work requests.
    pub(crate) unsafe extern "C" fn post_send_callback(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: The core posts to initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        let mut cur = wr;
        while !cur.is_null() {
            // The next request is read first: once the provider completes this one, its
            // consumer may free it (on another CPU, polling the CQ).
            // SAFETY: `cur` is a valid request of the chain, not yet handed to the provider.
            let next = unsafe { (*cur).next };
            // SAFETY: Every request of the chain is a valid `struct ib_send_wr`, and every send
            // of a UD QP (SMI, GSI and UD are the only types `create_qp` accepts) the `wr` of a
            // valid `struct ib_ud_wr` (the posting contract of UD QPs), valid until the
            // provider completes or refuses it: both consume the `SendWr`, so nothing reads
            // the request after that.
            let ret = match unsafe { SendWr::from_raw(qp, cur) } {
                Ok(w) => T::post_send(me, w).map_err(|r| r.err()),
                Err(e) => Err(e),
            };
            if let Err(e) = ret {
                // SAFETY: `bad` is valid for writing, by the op's contract. The request was
                // refused (`Refused` held it), so it is not completed and still valid.
                unsafe { *bad = cur };
                return e.to_errno();
            }
            cur = next;
        }
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, as `post_recv`, with an initialised QP of `T` and a valid
    /// chain of work requests.
    pub(crate) unsafe extern "C" fn post_recv_callback(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_recv_wr,
        bad: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: The core posts to initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        let mut cur = wr;
        while !cur.is_null() {
            // SAFETY: `cur` is a valid request of the chain, during the call.
            let w = unsafe { &*cur };
            // The next request is read first: once this one is queued, a delivery may
            // complete it and its consumer free it.
            let next = w.next;
            // SAFETY: `w` is a request posted to `qp`, by the op's contract.
            let ret = match unsafe { RecvWr::from_raw(qp, w) } {
                Ok(r) => T::post_recv(me, r).map_err(|r| r.err()),
                Err(e) => Err(e),
            };
            if let Err(e) = ret {
                // SAFETY: `bad` is valid for writing, by the op's contract. The request was
                // refused (`Refused` held it), so it is not queued.
                unsafe { *bad = cur };
                return e.to_errno();
            }
            cur = next;
        }
        0
    }
}
