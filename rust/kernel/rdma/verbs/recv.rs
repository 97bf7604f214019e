// SPDX-License-Identifier: GPL-2.0

//! Posted receive buffers of a QP (`struct ib_recv_wr`), kept by the QP's container.
//!
//! A consumer's receive buffer is only valid until its request completes or the QP is
//! destroyed: afterwards the consumer may free it. So no object that can write a buffer can
//! outlive either: [`RecvWr`] lives for the `post_recv` call and can only be queued on its own
//! QP; the queue is a private part of the [`Qp`], reached under its lock through a
//! [`RecvQueueGuard`], which cannot be swapped or moved out of; and a [`PostedRecv`] taken out
//! of the queue borrows the guard, so the lock is held while the buffer is written and the
//! buffer is gone from the queue before its completion ([`RecvDone`]) can exist.

use super::{qp::Qp, refused::Refused, ring::Ring, MAX_SGE};
use crate::{
    bindings,
    error::{code::*, Result},
    rdma::provider::Provider,
    sync::{irq_spinlock::IrqSpinLockBackend, lock::Guard},
};
use core::marker::PhantomData;

/// A posted receive buffer: the work request's id and its scatter list.
///
/// # Invariants
///
/// Each of the first `num_sge` entries is a kernel virtual address range (virtual DMA) that
/// the poster keeps valid and writable until this receive completes or the QP is destroyed.
/// A `RecvBuffer` only lives in the receive queue of the QP it was posted to, or in a
/// [`PostedRecv`] that borrows that queue's lock.
struct RecvBuffer {
    wr_id: u64,
    sges: [(u64, u32); MAX_SGE],
    num_sge: usize,
}

/// The receive queue of a QP: the buffers posted and not yet taken, oldest first.
pub(super) struct RecvQueue {
    ring: Ring<RecvBuffer>,
}

impl RecvQueue {
    pub(super) fn new(depth: u32) -> Result<Self> {
        Ok(Self {
            ring: Ring::new(depth.max(1) as usize)?,
        })
    }
}

/// A receive work request during the provider's `post_recv`: either queued on its QP with
/// [`Qp::post_recv`], or refused.
///
/// # Invariants
///
/// `buf` is a request posted to the QP `qp` and valid as `RecvBuffer` says; the lifetime
/// `'a` is that of the `post_recv` call, so the request cannot be kept past it.
pub struct RecvWr<'a> {
    qp: *mut bindings::ib_qp,
    buf: RecvBuffer,
    _p: PhantomData<&'a bindings::ib_recv_wr>,
}

impl<'a> RecvWr<'a> {
    /// # Safety
    ///
    /// `wr` must be a valid receive request posted to `qp` (its `sg_list` has `num_sge`
    /// entries), during `'a`, by the contract of `post_recv`.
    pub(super) unsafe fn from_raw(
        qp: *mut bindings::ib_qp,
        wr: &'a bindings::ib_recv_wr,
    ) -> Result<Self> {
        let n = usize::try_from(wr.num_sge).map_err(|_| EINVAL)?;
        if n > MAX_SGE {
            return Err(EINVAL);
        }
        let mut buf = RecvBuffer {
            // SAFETY: Both members of the union are 64 bits wide; this reads whichever the
            // poster wrote as its bits, which is all the completion returns.
            wr_id: unsafe { wr.__bindgen_anon_1.wr_id },
            sges: [(0, 0); MAX_SGE],
            num_sge: n,
        };
        for (i, s) in buf.sges[..n].iter_mut().enumerate() {
            // SAFETY: `sg_list` has `num_sge` entries, by the caller's guarantee, and `i < n`.
            let sge = unsafe { &*wr.sg_list.add(i) };
            *s = (sge.addr, sge.length);
        }
        // INVARIANT: The buffer is the request posted to `qp`, valid until it completes or the
        // QP is destroyed (the contract of `post_recv`).
        Ok(Self {
            qp,
            buf,
            _p: PhantomData,
        })
    }
}

impl<T: Provider> Qp<T> {
    /// Queues the posted receive `wr` on this QP, behind the buffers posted before.
    ///
    /// Refuses it with `EINVAL` if `wr` was posted to another QP, `ENOMEM` if the queue is
    /// full. Once queued, the request is posted: it has gone, and the provider's `post_recv`
    /// has nothing left to refuse ([`Refused`]).
    pub fn post_recv<'a>(&self, wr: RecvWr<'a>) -> Result<(), Refused<RecvWr<'a>>> {
        if wr.qp != self.raw() {
            return Err(Refused::new(wr, EINVAL));
        }
        let RecvWr { qp, buf, _p } = wr;
        // INVARIANT: The buffer moves into the queue of the QP it was posted to (checked
        // above), where it may live.
        self.p.rq.lock().ring.push(buf).map_err(|buf| {
            // INVARIANT: Not queued: the request is whole again, for the provider to refuse.
            Refused::new(RecvWr { qp, buf, _p }, ENOMEM)
        })
    }

    /// Locks the QP's receive queue: to take the oldest buffer, or to drop them all.
    pub fn recv_queue(&self) -> RecvQueueGuard<'_> {
        RecvQueueGuard {
            g: self.p.rq.lock(),
        }
    }
}

/// The locked receive queue of a QP.
///
/// It gives no `&mut` to the queue itself, so that no safe code can move buffers from the
/// queue of one QP to another's (which could outlive the first, and the buffers with it).
pub struct RecvQueueGuard<'a> {
    g: Guard<'a, RecvQueue, IrqSpinLockBackend>,
}

impl RecvQueueGuard<'_> {
    /// Takes the oldest posted buffer, to write a message into and complete.
    pub fn pop(&mut self) -> Option<PostedRecv<'_>> {
        let buf = self.g.ring.pop()?;
        // INVARIANT: The buffer leaves its QP's queue for a `PostedRecv` that borrows the
        // queue's lock.
        Some(PostedRecv {
            buf,
            _p: PhantomData,
        })
    }

    /// Drops every posted buffer (the QP went to Reset): the consumer may free them now.
    pub fn clear(&mut self) {
        while self.g.ring.pop().is_some() {}
    }

    /// Whether no buffer is posted.
    pub fn is_empty(&self) -> bool {
        self.g.ring.is_empty()
    }
}

/// A posted receive buffer taken from its QP's queue, while the queue is locked.
///
/// It borrows the [`RecvQueueGuard`] it came from: it cannot outlive the lock nor the QP, and
/// so it cannot be written after the QP is destroyed or the queue is cleared.
pub struct PostedRecv<'g> {
    buf: RecvBuffer,
    _p: PhantomData<&'g mut RecvQueue>,
}

impl PostedRecv<'_> {
    /// The buffer's length, in bytes (the sum of its scatter/gather entries).
    pub fn len(&self) -> usize {
        self.buf.sges[..self.buf.num_sge]
            .iter()
            .map(|s| s.1 as usize)
            .sum()
    }

    /// Whether the buffer has no room at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes `parts`, one after the other, from `offset` in the buffer.
    ///
    /// `E2BIG` (and nothing written) if they do not fit.
    pub fn write(&mut self, offset: usize, parts: &[&[u8]]) -> Result {
        let total = parts.iter().try_fold(offset, |a, p| a.checked_add(p.len()));
        if !matches!(total, Some(t) if t <= self.len()) {
            return Err(E2BIG);
        }
        let mut pos = offset;
        for part in parts {
            self.write_at(pos, part);
            pos += part.len();
        }
        Ok(())
    }

    /// Writes `bytes` at `pos` of the buffer (the concatenation of its entries); the caller
    /// checked that they fit.
    fn write_at(&mut self, mut pos: usize, mut bytes: &[u8]) {
        for &(addr, len) in &self.buf.sges[..self.buf.num_sge] {
            if bytes.is_empty() {
                return;
            }
            let len = len as usize;
            if pos >= len {
                pos -= len;
                continue;
            }
            let n = (len - pos).min(bytes.len());
            // SAFETY: By the invariant of `RecvBuffer`, `addr..addr + len` is writable kernel
            // memory until this receive completes or the QP is destroyed, and neither can
            // happen while `self` borrows the queue's lock; `pos + n <= len`. `bytes` is a
            // Rust slice, which cannot overlap memory the poster handed to the device.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    (addr as usize as *mut u8).add(pos),
                    n,
                )
            };
            bytes = &bytes[n..];
            pos = 0;
        }
    }

    /// Ends the use of the buffer: what remains is what its completion needs.
    ///
    /// Queue that completion before the receive queue's lock is released: a move of the QP
    /// to Reset clears the queue under that lock, and once it returns the consumer may free
    /// the buffer and what the completion's `wr_id` names (rdmavt holds `r_lock` through
    /// `rvt_recv_cq()`). The type does not enforce it.
    pub fn finish(self) -> RecvDone {
        RecvDone {
            wr_id: self.buf.wr_id,
        }
    }
}

/// A receive whose buffer was written and can no longer be: the makings of its
/// [`WorkCompletion`](super::WorkCompletion).
pub struct RecvDone {
    pub(super) wr_id: u64,
}
