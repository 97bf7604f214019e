// SPDX-License-Identifier: GPL-2.0

//! A received MAD, as its handler reads and answers it.

use super::{post_mad_with, Context, SendTo, IB_MAD_LEN, VENDOR_HDR_LEN};
use crate::rdma::scope::DeviceScope;
use crate::{bindings, error::from_err_ptr, prelude::*};

/// A received MAD, while its handler runs.
///
/// # Invariants
///
/// `agent` is the registered agent the MAD arrived for and `wc` its receive completion, both
/// valid for `'a`.
pub struct RecvMad<'a> {
    agent: *mut bindings::ib_mad_agent,
    wc: *mut bindings::ib_mad_recv_wc,
    scope: &'a DeviceScope,
}

impl<'a> RecvMad<'a> {
    /// # Safety
    ///
    /// `agent` is a registered agent and `wc` a receive completion for it, both valid for
    /// `'a`; `scope` is the agent's device scope.
    pub(super) unsafe fn new(
        agent: *mut bindings::ib_mad_agent,
        wc: *mut bindings::ib_mad_recv_wc,
        scope: &'a DeviceScope,
    ) -> Self {
        // INVARIANT: As the caller guarantees.
        Self { agent, wc, scope }
    }
}

impl RecvMad<'_> {
    /// The received bytes of the MAD that the MAD layer's buffer holds (for an OPA port up to
    /// 2048, without the GRH).
    ///
    /// That is `mad_len` bytes, but never more than one segment (`mad_seg_size`): the buffer
    /// holds one segment, and a reassembled RMPP MAD is longer than its first segment.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: By the type invariant `wc` is valid; `recv_buf.mad` points to a buffer of at
        // least `mad_seg_size` bytes (the MAD layer allocates every receive buffer with the
        // port's largest MAD size, and `mad_seg_size` is at most that), of which the first
        // `mad_len` were received; it is unchanged until the completion is freed after the
        // handler.
        unsafe {
            let wc = &*self.wc;
            let len = usize::try_from(wc.mad_len).unwrap_or(0);
            let seg = wc.mad_seg_size;
            if wc.recv_buf.__bindgen_anon_1.mad.is_null() {
                return &[];
            }
            core::slice::from_raw_parts(wc.recv_buf.__bindgen_anon_1.mad.cast::<u8>(), len.min(seg))
        }
    }

    /// Copies the MAD into `out` and fills the rest of `out` with zeros: the MAD as a kernel
    /// agent that reads a whole MAD sees it.
    ///
    /// Managers may send a MAD trimmed to its header and attribute (opa-fm does), and an
    /// InfiniBand-sized MAD (base version 1) is 256 bytes. The C agents read a whole MAD out of
    /// the MAD layer's receive buffer, whose tail past what arrived is not the sender's (zeros,
    /// or what an earlier MAD left there); this reads it as zeros, always.
    /// Returns the number of bytes that were received.
    pub fn read_padded(&self, out: &mut [u8]) -> usize {
        let b = self.bytes();
        let n = b.len().min(out.len());
        let (head, tail) = out.split_at_mut(n);
        head.copy_from_slice(&b[..n]);
        tail.fill(0);
        n
    }

    /// The device the MAD arrived on, whose per-device objects the handler may make.
    pub fn device(&self) -> &DeviceScope {
        self.scope
    }

    /// The port the MAD arrived on.
    pub fn port(&self) -> u32 {
        // SAFETY: By the type invariant the agent is valid; its port never changes.
        u32::from(unsafe { (*self.agent).port_num })
    }

    /// The LID the MAD came from.
    pub fn slid(&self) -> u32 {
        // SAFETY: By the type invariant `wc` and its work completion are valid.
        unsafe { (*(*self.wc).wc).slid }
    }

    /// Sends `rsp` (a whole MAD: vendor header and data) back to where this MAD came from,
    /// with the same P_Key index.
    ///
    /// An answer longer than an InfiniBand MAD (256 bytes) goes in an OPA-sized send buffer,
    /// whatever base version its header carries: an agent that copies the request's header
    /// into its answer (as every VEMA agent does) answers an InfiniBand-version request that
    /// way, and the MAD layer sends the whole buffer.
    ///
    /// The address handle and the send buffer are freed when the send completes.
    ///
    /// Sleeps (the address handle is made with `RDMA_CREATE_AH_SLEEPABLE`, the buffer with
    /// `GFP_KERNEL`): call it from the handler itself, not under a spinlock or in an RCU
    /// read-side section.
    pub fn respond(&self, rsp: &[u8]) -> Result {
        self.respond_with(rsp.len(), rsp.first().copied(), |buf| {
            buf.copy_from_slice(rsp);
            Ok(())
        })
    }

    /// Sends back, as [`RecvMad::respond`] does, a MAD of `len` bytes that `fill` builds in the
    /// send buffer itself (zeroed by the MAD layer): no copy of the answer. `base_version` is
    /// the base version the answer's header will carry (what `respond` reads from its first
    /// byte). Nothing is sent if `fill` fails, and its error is returned.
    pub fn respond_with(
        &self,
        len: usize,
        base_version: Option<u8>,
        fill: impl FnOnce(&mut [u8]) -> Result,
    ) -> Result {
        if len < VENDOR_HDR_LEN {
            return Err(EINVAL);
        }
        let base_version = if len > IB_MAD_LEN {
            bindings::OPA_MGMT_BASE_VERSION as u8
        } else {
            base_version.ok_or(EINVAL)?
        };
        // SAFETY: By the type invariant the agent and the completion are valid; the agent's QP
        // and PD exist while it is registered; the GRH pointer is the received one (or null).
        let ah = from_err_ptr(unsafe {
            let wc = &*self.wc;
            bindings::ib_create_ah_from_wc(
                (*(*self.agent).qp).pd,
                wc.wc,
                wc.recv_buf.grh,
                u32::from((*self.agent).port_num),
            )
        })?;
        // SAFETY: By the type invariant the completion is valid while the handler runs.
        let wc = unsafe { &*(*self.wc).wc };
        let to = SendTo {
            ah,
            remote_qpn: wc.src_qp,
            pkey_index: wc.pkey_index,
            base_version,
            context: Context::Process,
        };
        // SAFETY: The agent is registered and its send handler frees with `free_send`; `ah`
        // was just made on its PD; the handler runs in process context.
        unsafe { post_mad_with(self.agent, to, len, fill) }
    }
}
