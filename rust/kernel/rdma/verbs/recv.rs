// SPDX-License-Identifier: GPL-2.0

//! Posted receive buffers of a QP.

use super::MAX_SGE;

/// A posted receive buffer: the work request's id and its scatter list.
///
/// # Invariants
///
/// Each of the first `num_sge` entries is a kernel virtual address range (virtual DMA) that
/// the poster keeps valid and writable until this receive completes or the QP is destroyed;
/// a `RecvBuffer` only lives in the receive queue of its QP, or on the stack of
/// [`Qp::deliver_ud`] while that QP is alive.
#[derive(Clone, Copy)]
pub(super) struct RecvBuffer {
    pub(super) wr_id: u64,
    pub(super) sges: [(u64, u32); MAX_SGE],
    pub(super) num_sge: usize,
}

impl RecvBuffer {
    /// The total length of the buffer.
    pub(super) fn len(&self) -> usize {
        self.sges[..self.num_sge].iter().map(|s| s.1 as usize).sum()
    }

    /// Writes `parts`, one after the other, from `offset` in the buffer; the caller has
    /// checked that they fit.
    pub(super) fn scatter(&self, mut offset: usize, parts: &[&[u8]]) {
        for part in parts {
            self.write_at(offset, part);
            offset += part.len();
        }
    }

    /// Writes `bytes` at `pos` of the buffer (the concatenation of its entries).
    pub(super) fn write_at(&self, mut pos: usize, mut bytes: &[u8]) {
        for &(addr, len) in &self.sges[..self.num_sge] {
            if bytes.is_empty() {
                return;
            }
            let len = len as usize;
            if pos >= len {
                pos -= len;
                continue;
            }
            let n = (len - pos).min(bytes.len());
            // SAFETY: By the type invariant `addr..addr + len` is writable kernel memory for
            // this receive, and `pos + n <= len`; `bytes` is a distinct Rust slice.
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
}
