// SPDX-License-Identifier: GPL-2.0

//! The IB core's operations on the UD queue pairs of [`super::qp`]: create, destroy,
//! modify, query, and post sends and receives.

use super::{
    qp::{Qp, QpInit, QpInner, QpState, QpType},
    recv::RecvBuffer,
    ring::Ring,
    send_wr::SendWr,
    MAX_SGE,
};
use crate::rdma::provider::{errno, ProviderDevice, Provider};
use crate::{
    bindings,
    error::{code::*, from_result, Result},
    init::PinInit,
    types::{AlwaysRefCounted, Opaque},
};
use core::{
    ffi::c_int,
    ptr::{addr_of_mut, NonNull},
    sync::atomic::AtomicUsize,
};

impl<T: Provider> Qp<T> {
    /// # Safety
    ///
    /// Called by the IB core only, with a zeroed QP of the size of `Self` on a device of `T`.
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
        if !udata.is_null() {
            return Err(EOPNOTSUPP);
        }
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &mut *attr };
        let qp_type = match attr.qp_type {
            bindings::ib_qp_type_IB_QPT_SMI => QpType::Smi,
            bindings::ib_qp_type_IB_QPT_GSI => QpType::Gsi,
            bindings::ib_qp_type_IB_QPT_UD => QpType::Ud,
            _ => return Err(EOPNOTSUPP),
        };
        if !attr.srq.is_null() || attr.create_flags != 0 || !attr.rwq_ind_tbl.is_null() {
            return Err(EOPNOTSUPP);
        }
        let cap = &mut attr.cap;
        if cap.max_send_sge as usize > MAX_SGE
            || cap.max_recv_sge as usize > MAX_SGE
            || cap.max_recv_wr > 16384
            || cap.max_send_wr > 16384
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
        };
        // SAFETY: The core passes a QP of one of `T`'s devices, whose `device` it has set and
        // which is alive during the call.
        let dev = unsafe { ProviderDevice::<T>::from_raw((*qp).device) };
        let (qpn, data) = T::create_qp(dev, &init)?;
        let rq = Ring::new(init.max_recv_wr.max(1) as usize)?;
        let this = qp.cast::<Self>();
        let lock = crate::new_irq_spinlock!(
            QpInner {
                qps: QpState::Reset,
                qkey: 0,
                pkey_index: 0,
                port: init.port,
                sig_all: attr.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
                rq,
                max_send_wr: init.max_send_wr,
                max_recv_wr: init.max_recv_wr,
            },
            "opa_sw_qp"
        );
        // SAFETY: `this` is the core's zeroed allocation of the size of `Self`, whose fields
        // after `ib` are not initialised yet; the core does not move the QP.
        let Ok(()) = unsafe { PinInit::__pinned_init(lock, addr_of_mut!((*this).inner)) };
        // SAFETY: As above, for the remaining fields.
        unsafe {
            addr_of_mut!((*this).refs).write(AtomicUsize::new(1));
            bindings::init_completion(Opaque::raw_get(addr_of_mut!((*this).released)));
            addr_of_mut!((*this).qp_type).write(qp_type);
            addr_of_mut!((*this).data).write(data);
            (*qp).qp_num = qpn;
        }
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
    pub(super) unsafe fn release(qp: *mut bindings::ib_qp) {
        let this = qp.cast::<Self>();
        // SAFETY: The QP is initialised (caller's guarantee) and the initial reference is
        // owned by the core's handle, which is being destroyed.
        unsafe { Self::dec_ref(NonNull::new_unchecked(this)) };
        // SAFETY: As above; `released` is initialised with the QP.
        let released = unsafe { Opaque::raw_get(addr_of_mut!((*this).released)) };
        // The provider's references (`ARef<Qp>`) must all go before the memory can: wait, and
        // say what is waited for every 10 s (as `netdev_wait_allrefs()` does) instead of
        // hanging silently when a provider keeps one.
        // SAFETY: `__msecs_to_jiffies` has no precondition.
        let period = unsafe { bindings::__msecs_to_jiffies(10_000) };
        // SAFETY: `released` is a valid completion, completed by the last `dec_ref`.
        while unsafe { bindings::wait_for_completion_timeout(released, period) } == 0 {
            // SAFETY: The QP is initialised until the drops below.
            let num = unsafe { (*qp).qp_num };
            crate::pr_warn!("QP {}: waiting for the provider to release it\n", num);
        }
        // SAFETY: No reference is left, so nothing uses the QP's parts any more; each is
        // dropped once.
        unsafe {
            core::ptr::drop_in_place(addr_of_mut!((*this).inner));
            core::ptr::drop_in_place(addr_of_mut!((*this).data));
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn destroy_qp_callback(
        qp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        {
            // SAFETY: The core destroys initialised QPs only.
            let me = unsafe { Self::from_raw(qp) };
            T::destroy_qp(me);
            me.inner.lock().qps = QpState::Err;
        }
        // SAFETY: The QP is initialised, and the core calls `destroy_qp` once.
        unsafe { Self::release(qp) };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T`.
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
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &*attr };
        from_result(|| {
            me.modify(attr, mask as u32)?;
            Ok(0)
        })
    }

    /// `modify_qp`: the attributes of `attr` that `mask` names.
    fn modify(&self, attr: &bindings::ib_qp_attr, mask: u32) -> Result {
        let allowed = bindings::ib_qp_attr_mask_IB_QP_STATE
            | bindings::ib_qp_attr_mask_IB_QP_CUR_STATE
            | bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX
            | bindings::ib_qp_attr_mask_IB_QP_PORT
            | bindings::ib_qp_attr_mask_IB_QP_QKEY
            | bindings::ib_qp_attr_mask_IB_QP_SQ_PSN
            | bindings::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY;
        if mask & !allowed != 0 {
            return Err(EOPNOTSUPP);
        }
        let dev = self.device();
        let mut inner = self.inner.lock();
        let new_state = if mask & bindings::ib_qp_attr_mask_IB_QP_STATE != 0 {
            match QpState::from_raw(attr.qp_state) {
                Some(s) => s,
                None => return Err(EINVAL),
            }
        } else {
            inner.qps
        };
        // The transitions and the attributes each one needs and allows, as the IB spec has
        // them (the check rdmavt and every hardware driver make).
        // SAFETY: A pure function of its arguments.
        let ok = unsafe {
            bindings::ib_modify_qp_is_ok(inner.qps.raw(), new_state.raw(), self.qp_type.raw(), mask)
        };
        if !ok {
            return Err(EINVAL);
        }
        if mask & bindings::ib_qp_attr_mask_IB_QP_PORT != 0 {
            if attr.port_num == 0 || attr.port_num > dev.port_count() {
                return Err(EINVAL);
            }
            if self.qp_type != QpType::Ud && attr.port_num != inner.port {
                return Err(EINVAL);
            }
        }
        if mask & bindings::ib_qp_attr_mask_IB_QP_PORT != 0 {
            inner.port = attr.port_num;
        }
        if mask & bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX != 0 {
            inner.pkey_index = attr.pkey_index;
        }
        if mask & bindings::ib_qp_attr_mask_IB_QP_QKEY != 0 {
            inner.qkey = attr.qkey;
        }
        if new_state == QpState::Reset {
            while inner.rq.pop().is_some() {}
        }
        inner.qps = new_state;
        Ok(())
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T`.
    pub(crate) unsafe extern "C" fn query_qp_callback(
        qp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        // SAFETY: The core queries initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        // SAFETY: `attr` and `init` are valid for writing, by the op's contract.
        let (attr, init) = unsafe { (&mut *attr, &mut *init) };
        let inner = me.inner.lock();
        attr.qp_state = inner.qps.raw();
        attr.cur_qp_state = inner.qps.raw();
        attr.qkey = inner.qkey;
        attr.pkey_index = inner.pkey_index;
        attr.port_num = inner.port;
        attr.path_mtu = bindings::ib_mtu_IB_MTU_4096;
        attr.cap.max_send_wr = inner.max_send_wr;
        attr.cap.max_recv_wr = inner.max_recv_wr;
        attr.cap.max_send_sge = MAX_SGE as u32;
        attr.cap.max_recv_sge = MAX_SGE as u32;
        init.cap = attr.cap;
        init.port_num = inner.port;
        init.sq_sig_type = if inner.sig_all {
            bindings::ib_sig_type_IB_SIGNAL_ALL_WR
        } else {
            bindings::ib_sig_type_IB_SIGNAL_REQ_WR
        };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T` and a valid chain of work
    /// requests.
    pub(crate) unsafe extern "C" fn post_send_callback(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: The core posts to initialised QPs only.
        let me = unsafe { Self::from_raw(qp) };
        let mut cur = wr;
        while !cur.is_null() {
            // SAFETY: Every request of the chain of a UD QP is the `wr` of a valid
            // `struct ib_ud_wr` (the posting contract of UD QPs), valid during the call.
            let w = unsafe { SendWr::from_raw(cur) };
            let ret = if me.state() != QpState::Rts {
                Err(EINVAL)
            } else {
                w.check().and_then(|()| T::post_send(me, &w))
            };
            if let Err(e) = ret {
                // SAFETY: `bad` is valid for writing, by the op's contract.
                unsafe { *bad = cur };
                return e.to_errno();
            }
            // SAFETY: `cur` is valid (see above).
            cur = unsafe { (*cur).next };
        }
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised QP of `T` and a valid chain of work
    /// requests.
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
            let ret = (|| -> Result {
                let n = usize::try_from(w.num_sge).map_err(|_| EINVAL)?;
                if n > MAX_SGE {
                    return Err(EINVAL);
                }
                let mut buf = RecvBuffer {
                    // SAFETY: Both members of the union are 64 bits wide; this reads whichever
                    // the poster wrote as its bits, which is all the completion returns.
                    wr_id: unsafe { w.__bindgen_anon_1.wr_id },
                    sges: [(0, 0); MAX_SGE],
                    num_sge: n,
                };
                for (i, s) in buf.sges[..n].iter_mut().enumerate() {
                    // SAFETY: `sg_list` has `num_sge` entries, by the posting contract.
                    let sge = unsafe { &*w.sg_list.add(i) };
                    *s = (sge.addr, sge.length);
                }
                let mut inner = me.inner.lock();
                if inner.qps == QpState::Reset || inner.qps == QpState::Err {
                    return Err(EINVAL);
                }
                // The buffers stay valid until completion or destruction: the invariant of
                // `RecvBuffer`, by the contract of `post_recv`.
                inner.rq.push(buf).map_err(|_| ENOMEM)
            })();
            if let Err(e) = ret {
                // SAFETY: `bad` is valid for writing, by the op's contract.
                unsafe { *bad = cur };
                return errno(Err(e));
            }
            cur = w.next;
        }
        0
    }
}
