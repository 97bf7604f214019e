// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`struct ib_cq`).

use super::ring::Ring;
use crate::sync::IrqSpinLock;
use crate::{
    bindings,
    error::{code::*, Result},
    init::PinInit,
    types::Opaque,
};
use core::{ffi::c_int, ptr::addr_of_mut};

/// The status of a work completion (`enum ib_wc_status`, the ones a software device uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    /// The work request succeeded.
    Success,
    /// A local length error: the message did not fit the receive buffer.
    LocalLengthError,
    /// A general error.
    GeneralError,
}

impl WcStatus {
    pub(super) fn raw(self) -> bindings::ib_wc_status {
        match self {
            Self::Success => bindings::ib_wc_status_IB_WC_SUCCESS,
            Self::LocalLengthError => bindings::ib_wc_status_IB_WC_LOC_LEN_ERR,
            Self::GeneralError => bindings::ib_wc_status_IB_WC_GENERAL_ERR,
        }
    }
}

/// The `struct ib_qp` of a completion: only handed back to the core, never dereferenced.
#[derive(Clone, Copy)]
pub(super) struct QpPtr(pub(super) *mut bindings::ib_qp);

// SAFETY: The pointer is only copied into `struct ib_wc` for the core, never dereferenced.
unsafe impl Send for QpPtr {}

/// A work completion waiting in a [`Cq`].
#[derive(Clone, Copy)]
pub(super) struct WorkCompletion {
    /// The `wr_id` / `wr_cqe` union of the work request, as its bits.
    pub(super) wr_id: u64,
    pub(super) status: bindings::ib_wc_status,
    pub(super) opcode: bindings::ib_wc_opcode,
    pub(super) byte_len: u32,
    pub(super) qp: QpPtr,
    pub(super) src_qp: u32,
    pub(super) slid: u32,
    pub(super) wc_flags: c_int,
    pub(super) imm: u32,
    pub(super) pkey_index: u16,
    pub(super) sl: u8,
    pub(super) port_num: u32,
    pub(super) solicited: bool,
}

/// The arming state of a CQ.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Armed {
    No,
    Solicited,
    Next,
}

pub(super) struct CqState {
    pub(super) ring: Ring<WorkCompletion>,
    pub(super) armed: Armed,
}

/// A completion queue: the core's `struct ib_cq` and the completions waiting to be polled.
///
/// # Invariants
///
/// `ib` is a `struct ib_cq` the core allocated with the size of `Self`, and `state` is
/// initialised, from a successful `create_cq` until `destroy_cq`.
#[repr(C)]
pub struct Cq {
    pub(super) ib: Opaque<bindings::ib_cq>,
    pub(super) state: IrqSpinLock<CqState>,
}

// SAFETY: The CQ's state is behind its spinlock; the core's part is used under the core's
// rules (the comp_handler is only called, never changed, by this code).
unsafe impl Send for Cq {}
// SAFETY: See above.
unsafe impl Sync for Cq {}

impl Cq {
    /// # Safety
    ///
    /// `ptr` must be a CQ of a device of this abstraction, between `create_cq` and
    /// `destroy_cq`, for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_cq) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Self`, and the caller guarantees
        // the memory is an initialised `Self` for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Queues a completion and calls the CQ's completion handler if the CQ is armed for it.
    ///
    /// A full CQ drops the completion (an overrun) and returns `ENOSPC`.
    pub(super) fn complete(&self, wc: WorkCompletion) -> Result {
        let fire = Self::queue(&mut self.state.lock(), wc)?;
        self.fire(fire);
        Ok(())
    }

    /// Queues a completion in the locked state; returns whether the completion handler is to
    /// be called (once the lock is released).
    pub(super) fn queue(st: &mut CqState, wc: WorkCompletion) -> Result<bool> {
        if st.ring.push(wc).is_err() {
            return Err(ENOSPC);
        }
        let fire = match st.armed {
            Armed::Next => true,
            Armed::Solicited => wc.solicited,
            Armed::No => false,
        };
        if fire {
            st.armed = Armed::No;
        }
        Ok(fire)
    }

    /// Calls the completion handler if `fire`, without the CQ's lock held.
    pub(super) fn fire(&self, fire: bool) {
        if fire {
            let cq = self.ib.get();
            // SAFETY: The CQ is alive (type invariant; callers hold a QP that uses it, so the
            // core cannot destroy it). The core sets `comp_handler` before it arms the CQ,
            // and the arming happened before (under the lock taken above).
            unsafe {
                if let Some(handler) = (*cq).comp_handler {
                    handler(cq, (*cq).cq_context);
                }
            }
        }
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a zeroed CQ of the size of `Self`.
    pub(crate) unsafe extern "C" fn create_cq_callback(
        cq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        _attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        // SAFETY: `attr` is valid for the call, by the op's contract.
        let attr = unsafe { &*attr };
        if attr.flags != 0 || attr.cqe == 0 || attr.cqe > 65536 {
            return EINVAL.to_errno();
        }
        let ring = match Ring::new(attr.cqe as usize) {
            Ok(r) => r,
            Err(e) => return e.to_errno(),
        };
        let this = cq.cast::<Self>();
        let init = crate::new_irq_spinlock!(
            CqState {
                ring,
                armed: Armed::No,
            },
            "opa_sw_cq"
        );
        // SAFETY: `this` is the core's zeroed allocation of the size of `Self`, and `state` is
        // not initialised yet; the core does not move the CQ.
        let Ok(()) = unsafe { PinInit::__pinned_init(init, addr_of_mut!((*this).state)) };
        // SAFETY: The core's `ib_cq` is valid; `cqe` tells the user the actual size.
        unsafe { (*cq).cqe = attr.cqe as c_int };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with a CQ `create_cq_callback` initialised and no QP using
    /// it any more.
    pub(crate) unsafe extern "C" fn destroy_cq_callback(
        cq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        let this = cq.cast::<Self>();
        // SAFETY: The CQ is initialised and unused (no QP references it, so no delivery can
        // touch it); the core frees the memory after this returns.
        unsafe { core::ptr::drop_in_place(addr_of_mut!((*this).state)) };
        0
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised CQ and `wc` valid for `num` entries.
    pub(crate) unsafe extern "C" fn poll_cq_callback(
        cq: *mut bindings::ib_cq,
        num: c_int,
        wc: *mut bindings::ib_wc,
    ) -> c_int {
        // SAFETY: The core polls initialised CQs only.
        let this = unsafe { Self::from_raw(cq) };
        let mut st = this.state.lock();
        let mut n = 0;
        while n < num {
            let Some(c) = st.ring.pop() else { break };
            // SAFETY: `wc` has room for `num` entries, by the op's contract, and `n < num`.
            let out = unsafe { &mut *wc.add(n as usize) };
            // SAFETY: A zeroed `ib_wc` is valid.
            *out = unsafe { core::mem::MaybeUninit::zeroed().assume_init() };
            out.__bindgen_anon_1.wr_id = c.wr_id;
            out.status = c.status;
            out.opcode = c.opcode;
            out.byte_len = c.byte_len;
            out.qp = c.qp.0;
            out.src_qp = c.src_qp;
            out.slid = c.slid;
            out.wc_flags = c.wc_flags;
            out.ex.imm_data = c.imm.to_be();
            out.pkey_index = c.pkey_index;
            out.sl = c.sl;
            out.port_num = c.port_num;
            n += 1;
        }
        n
    }

    /// # Safety
    ///
    /// Called by the IB core only, with an initialised CQ.
    pub(crate) unsafe extern "C" fn req_notify_cq_callback(
        cq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> c_int {
        // SAFETY: The core arms initialised CQs only.
        let this = unsafe { Self::from_raw(cq) };
        let mut st = this.state.lock();
        let solicited = flags & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
            == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED;
        if st.armed != Armed::Next {
            st.armed = if solicited {
                Armed::Solicited
            } else {
                Armed::Next
            };
        }
        if flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0
            && !st.ring.is_empty()
        {
            1
        } else {
            0
        }
    }
}
