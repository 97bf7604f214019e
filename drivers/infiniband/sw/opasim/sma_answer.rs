// SPDX-License-Identifier: GPL-2.0-only

//! An SMP's answer as the SMAs build it (an HFI port's, [`crate::sma`], and the switch's,
//! [`crate::switch_sma`]): the request copied, its status bits, the attribute data written
//! in place, and the size so far, ended as hfi1's `reply()` ends it.

use crate::sma::{METHOD_GET_RESP, STATUS_DIRECTION};
use kernel::rdma::provider::mad::{MadReply, MadRequest, MadVerdict, CLASS_SUBN_DIRECTED_ROUTE};

/// An answer being built in the reply buffer: the request, copied, with the status bits and
/// the size so far.
pub(crate) struct Answer<'b> {
    buf: &'b mut [u8],
    status: u16,
    /// The answer's size so far (hfi1's `resp_len`).
    pub(crate) len: usize,
}

impl<'b> Answer<'b> {
    /// Starts the answer to `req` in `reply`: a copy of the request (`*out_mad = *in_mad`).
    pub(crate) fn new(req: &MadRequest<'_>, reply: &'b mut MadReply<'_>) -> Option<Self> {
        let src = req.bytes();
        let buf = reply.buf();
        buf.get_mut(..src.len())?.copy_from_slice(src);
        let status = be16(buf, 4);
        Some(Self {
            buf,
            status,
            len: src.len(),
        })
    }

    /// Starts the answer to the SMP in `buf` in place, for a node that is not an RDMA device
    /// (the fabric's switch).
    pub(crate) fn in_place(buf: &'b mut [u8]) -> Self {
        let status = be16(buf, 4);
        let len = buf.len();
        Self { buf, status, len }
    }

    /// Adds `bits` to the answer's status.
    pub(crate) fn fail(&mut self, bits: u16) {
        self.status |= bits;
    }

    /// The answer's status so far.
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    /// The byte at `at` (0 beyond the buffer).
    pub(crate) fn u8_at(&self, at: usize) -> u8 {
        self.buf.get(at).copied().unwrap_or(0)
    }

    /// The big-endian 16-bit word at `at`.
    pub(crate) fn be16_at(&self, at: usize) -> u16 {
        be16(self.buf, at)
    }

    /// The big-endian 32-bit word at `at`.
    pub(crate) fn be32_at(&self, at: usize) -> u32 {
        (u32::from(be16(self.buf, at)) << 16) | u32::from(be16(self.buf, at + 2))
    }

    /// The big-endian 64-bit word at `at`.
    pub(crate) fn be64_at(&self, at: usize) -> u64 {
        (u64::from(self.be32_at(at)) << 32) | u64::from(self.be32_at(at + 4))
    }

    /// The `len` bytes at `at`.
    pub(crate) fn bytes(&self, at: usize, len: usize) -> &[u8] {
        self.buf.get(at..at + len).unwrap_or(&[])
    }

    /// Writes `v` at `at`.
    pub(crate) fn put(&mut self, at: usize, v: &[u8]) {
        if let Some(d) = self.buf.get_mut(at..at + v.len()) {
            d.copy_from_slice(v);
        }
    }

    /// Writes the byte `v` at `at`.
    pub(crate) fn put_u8(&mut self, at: usize, v: u8) {
        self.put(at, &[v]);
    }

    /// Writes `v` big-endian at `at`.
    pub(crate) fn put_be16(&mut self, at: usize, v: u16) {
        self.put(at, &v.to_be_bytes());
    }

    /// Writes `v` big-endian at `at`.
    pub(crate) fn put_be32(&mut self, at: usize, v: u32) {
        self.put(at, &v.to_be_bytes());
    }

    /// Writes `v` big-endian at `at`.
    pub(crate) fn put_be64(&mut self, at: usize, v: u64) {
        self.put(at, &v.to_be_bytes());
    }

    /// Zeroes the `len` bytes at `at`.
    pub(crate) fn zero(&mut self, at: usize, len: usize) {
        if let Some(d) = self.buf.get_mut(at..at + len) {
            d.fill(0);
        }
    }

    /// Ends the answer (hfi1's `reply()`): GetResp, the status with the direction bit of a
    /// directed-route SMP, and the size so far.
    pub(crate) fn reply(mut self) -> MadVerdict {
        self.put_u8(3, METHOD_GET_RESP);
        if self.u8_at(1) == CLASS_SUBN_DIRECTED_ROUTE {
            self.status |= STATUS_DIRECTION;
        }
        let status = self.status;
        self.put_be16(4, status);
        MadVerdict::Reply(self.len)
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(&[x, y]) => u16::from_be_bytes([x, y]),
        _ => 0,
    }
}
