// SPDX-License-Identifier: GPL-2.0

//! UD send work requests (`struct ib_ud_wr`).

use super::{
    ah::{Ah, AhAttr},
    qp::{Qp, QpType},
    MAX_SGE,
};
use crate::rdma::provider::Provider;
use crate::{
    alloc::{flags::*, KVec},
    bindings,
    error::{code::*, Result},
};
use core::ffi::c_int;

/// A UD send work request, during [`Provider::post_send`].
///
/// # Invariants
///
/// `wr` is a valid `struct ib_ud_wr` whose AH belongs to a device of this abstraction, and
/// whose scatter list gives kernel virtual addresses (virtual DMA) readable during the call.
pub struct SendWr<'a> {
    pub(super) wr: &'a bindings::ib_ud_wr,
}

impl<'a> SendWr<'a> {
    /// # Safety
    ///
    /// `wr` must be the `wr` of a valid `struct ib_ud_wr` posted to a UD QP of this
    /// abstraction, valid for `'a`.
    pub(super) unsafe fn from_raw(wr: *const bindings::ib_send_wr) -> Self {
        Self {
            // SAFETY: `wr` is the first field of `ib_ud_wr` (container_of with offset 0),
            // valid for `'a` by the caller's guarantee.
            wr: unsafe { &*wr.cast::<bindings::ib_ud_wr>() },
        }
    }

    pub(super) fn check(&self) -> Result {
        let op = self.wr.wr.opcode;
        if op != bindings::ib_wr_opcode_IB_WR_SEND
            && op != bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
        {
            return Err(EOPNOTSUPP);
        }
        let n = usize::try_from(self.wr.wr.num_sge).map_err(|_| EINVAL)?;
        if n > MAX_SGE || self.wr.ah.is_null() {
            return Err(EINVAL);
        }
        Ok(())
    }

    pub(super) fn sges(&self) -> &[bindings::ib_sge] {
        let n = self.wr.wr.num_sge.clamp(0, MAX_SGE as c_int) as usize;
        if n == 0 {
            return &[];
        }
        // SAFETY: `sg_list` has `num_sge` valid entries during the call (type invariant).
        unsafe { core::slice::from_raw_parts(self.wr.wr.sg_list, n) }
    }

    pub(super) fn wr_id(&self) -> u64 {
        // SAFETY: Both members of the union are 64 bits wide; the completion returns the bits.
        unsafe { self.wr.wr.__bindgen_anon_1.wr_id }
    }

    pub(super) fn signaled(&self) -> bool {
        self.wr.wr.send_flags & bindings::ib_send_flags_IB_SEND_SIGNALED as c_int != 0
    }

    /// Whether the sender asked for a solicited event at the receiver.
    pub fn solicited(&self) -> bool {
        self.wr.wr.send_flags & bindings::ib_send_flags_IB_SEND_SOLICITED as c_int != 0
    }

    /// The immediate data, for a send with immediate.
    pub fn imm(&self) -> Option<u32> {
        if self.wr.wr.opcode == bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM {
            // SAFETY: `ex` holds the immediate data for this opcode.
            Some(u32::from_be(unsafe { self.wr.wr.ex.imm_data }))
        } else {
            None
        }
    }

    /// The destination.
    pub fn ah(&self) -> &AhAttr {
        // SAFETY: The AH of a posted request is an AH of this abstraction, alive at least
        // until the request completes (type invariant).
        unsafe { &(*self.wr.ah.cast::<Ah>()).attr }
    }

    /// The destination QP number.
    pub fn remote_qpn(&self) -> u32 {
        self.wr.remote_qpn
    }

    /// The Q_Key to send with: the request's, or the QP's if the request's has the high bit
    /// set (IBA 10.2.5).
    pub fn qkey<T: Provider>(&self, qp: &Qp<T>) -> u32 {
        if self.wr.remote_qkey & 0x8000_0000 != 0 {
            qp.qkey()
        } else {
            self.wr.remote_qkey
        }
    }

    /// The index of the P_Key to send with, in the sending port's table (QP0/QP1 give it per
    /// request; UD QPs use the QP's).
    pub fn pkey_index<T: Provider>(&self, qp: &Qp<T>) -> u16 {
        match qp.qp_type {
            QpType::Smi | QpType::Gsi => self.wr.pkey_index,
            QpType::Ud => qp.inner.lock().pkey_index,
        }
    }

    /// The total length of the message.
    pub fn len(&self) -> usize {
        self.sges().iter().map(|s| s.length as usize).sum()
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the message to `out` (which must have room: this never allocates).
    pub fn gather(&self, out: &mut KVec<u8>) -> Result {
        if out.capacity() - out.len() < self.len() {
            return Err(ENOSPC);
        }
        for sge in self.sges() {
            if sge.length == 0 {
                continue;
            }
            // SAFETY: By the type invariant, `addr` is a kernel virtual address of `length`
            // readable bytes during the call.
            let src = unsafe {
                core::slice::from_raw_parts(sge.addr as usize as *const u8, sge.length as usize)
            };
            out.extend_from_slice(src, GFP_ATOMIC)?;
        }
        Ok(())
    }
}
