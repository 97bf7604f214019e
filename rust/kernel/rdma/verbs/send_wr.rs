// SPDX-License-Identifier: GPL-2.0

//! UD send work requests (`struct ib_ud_wr`).

use super::{ah::Ah, AhAttr, MAX_SGE};
use crate::{
    alloc::{flags::*, KVec},
    bindings,
    error::{code::*, Result},
};
use core::ffi::c_int;

/// A UD send work request, during the provider's `post_send`.
///
/// Not `Clone`: it exists once per request posted, and its completion
/// ([`WorkCompletion::send`](super::WorkCompletion::send)) or its refusal
/// ([`Refused`](super::Refused)) consumes it, so a request cannot be completed twice, nor
/// completed and refused.
///
/// # Invariants
///
/// `wr` is a valid `struct ib_ud_wr` for `'a`, posted to the QP `qp`, with a send opcode, at
/// most [`MAX_SGE`] scatter/gather entries that give kernel virtual addresses (virtual DMA)
/// readable for `'a`, and an AH of the QP's device (so an [`Ah`] of this abstraction), alive
/// for `'a`.
pub struct SendWr<'a> {
    wr: &'a bindings::ib_ud_wr,
    qp: *mut bindings::ib_qp,
}

impl<'a> SendWr<'a> {
    /// The request, or `EOPNOTSUPP` for an opcode other than a send, `EINVAL` for one that
    /// is malformed.
    ///
    /// # Safety
    ///
    /// `wr` must be a valid `struct ib_send_wr` posted to the UD QP `qp` of this abstraction,
    /// valid for `'a`, and the `wr` of a `struct ib_ud_wr` (with its scatter list and AH) if
    /// its opcode is a send (the posting contract: the core's `__ib_drain_sq()` posts a
    /// smaller `struct ib_rdma_wr` to any QP).
    pub(super) unsafe fn from_raw(
        qp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
    ) -> Result<Self> {
        // SAFETY: `wr` is a valid `ib_send_wr` (the caller's guarantee).
        let op = unsafe { (*wr).opcode };
        if op != bindings::ib_wr_opcode_IB_WR_SEND
            && op != bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
        {
            return Err(EOPNOTSUPP);
        }
        // SAFETY: A send's `wr` is the first field of an `ib_ud_wr` (container_of with offset
        // 0), valid for `'a` by the caller's guarantee.
        let wr = unsafe { &*wr.cast::<bindings::ib_ud_wr>() };
        let n = usize::try_from(wr.wr.num_sge).map_err(|_| EINVAL)?;
        if n > MAX_SGE || wr.ah.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `qp` and the AH are valid (the caller's guarantee); only their `device`
        // pointers are read, which the core sets at creation.
        if unsafe { (*wr.ah).device != (*qp).device } {
            return Err(EINVAL);
        }
        // INVARIANT: Checked above: a send, at most `MAX_SGE` entries, an AH of the QP's device
        // (whose ops are this abstraction's, so an `Ah`); the rest is the caller's guarantee.
        Ok(Self { wr, qp })
    }

    fn sges(&self) -> &[bindings::ib_sge] {
        let n = self.wr.wr.num_sge as usize;
        if n == 0 {
            return &[];
        }
        // SAFETY: `sg_list` has `num_sge` valid entries during `'a` (type invariant).
        unsafe { core::slice::from_raw_parts(self.wr.wr.sg_list, n) }
    }

    /// The QP the request was posted to.
    pub(super) fn qp(&self) -> *mut bindings::ib_qp {
        self.qp
    }

    pub(super) fn wr_id(&self) -> u64 {
        // SAFETY: Both members of the union are 64 bits wide; the completion returns the bits.
        unsafe { self.wr.wr.__bindgen_anon_1.wr_id }
    }

    /// Whether the sender asked for a completion (`IB_SEND_SIGNALED`).
    pub fn signaled(&self) -> bool {
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
        // SAFETY: The AH is an `Ah` of this abstraction, initialised by `create_ah` and alive
        // during `'a` (type invariant).
        unsafe { &(*self.wr.ah.cast::<Ah>()).attr }
    }

    /// The destination QP number.
    pub fn remote_qpn(&self) -> u32 {
        self.wr.remote_qpn
    }

    /// The Q_Key the request names (high bit set: "use the QP's", IBA 10.2.5).
    pub fn remote_qkey(&self) -> u32 {
        self.wr.remote_qkey
    }

    /// The P_Key index the request names (meaningful on QP0/QP1 only).
    pub fn pkey_index(&self) -> u16 {
        self.wr.pkey_index
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
            // readable bytes during `'a`.
            let src = unsafe {
                core::slice::from_raw_parts(sge.addr as usize as *const u8, sge.length as usize)
            };
            out.extend_from_slice(src, GFP_ATOMIC)?;
        }
        Ok(())
    }
}
