// SPDX-License-Identifier: GPL-2.0

//! Posting a MAD, and freeing what its send used (its buffer and address handle) in the
//! context it ends in.

use super::{Dest, VENDOR_HDR_LEN};
use crate::{
    bindings,
    error::{from_err_ptr, to_result},
    prelude::*,
};

/// Whether the caller of [`free_send`] or [`destroy_ah`] may sleep.
#[derive(Clone, Copy)]
pub(super) enum Context {
    /// Process context: the device may sleep to destroy the address handle.
    Process,
    /// Possibly atomic (a send from a softirq or under a spinlock).
    Atomic,
}

/// Destroys an address handle of ours.
///
/// # Safety
///
/// `ah` is an address handle from `rdma_create_ah` or `ib_create_ah_from_wc` that nothing uses
/// any more; if `context` is [`Context::Process`], the caller may sleep.
pub(super) unsafe fn destroy_ah(ah: *mut bindings::ib_ah, context: Context) {
    let flags = match context {
        Context::Process => bindings::rdma_destroy_ah_flags_RDMA_DESTROY_AH_SLEEPABLE,
        Context::Atomic => 0,
    };
    // SAFETY: As the caller guarantees; without `RDMA_DESTROY_AH_SLEEPABLE` the device does not
    // sleep.
    unsafe { bindings::rdma_destroy_ah_user(ah, flags, core::ptr::null_mut()) };
}

/// Frees a send buffer of ours and its address handle.
///
/// # Safety
///
/// `buf` is a send buffer from `ib_create_send_mad` that the MAD layer no longer uses, whose
/// `ah` is null or an address handle nothing else uses; if `context` is [`Context::Process`],
/// the caller may sleep.
pub(super) unsafe fn free_send(buf: *mut bindings::ib_mad_send_buf, context: Context) {
    // SAFETY: `buf` is valid (the caller guarantees it).
    let ah = unsafe { (*buf).ah };
    if !ah.is_null() {
        // SAFETY: As the caller guarantees.
        unsafe { destroy_ah(ah, context) };
    }
    // SAFETY: As the caller guarantees; `ib_free_send_mad` does not sleep.
    unsafe { bindings::ib_free_send_mad(buf) };
}

/// Where a MAD goes and how it is sent: [`post_mad`]'s arguments besides the MAD.
pub(super) struct SendTo {
    /// The address handle, which the send owns from then on.
    pub(super) ah: *mut bindings::ib_ah,
    pub(super) remote_qpn: u32,
    pub(super) pkey_index: u16,
    pub(super) base_version: u8,
    /// The caller's context: whether allocating and freeing may sleep.
    pub(super) context: Context,
}

/// Copies `mad` (vendor header and data) into a new send buffer of `agent` and posts it to
/// `to`. The address handle and the buffer are freed when the send completes, or here if it
/// cannot be posted.
///
/// # Safety
///
/// `agent` is a registered agent whose send handler frees completed sends with
/// [`free_send`]; `to.ah` is an address handle of its PD that nothing else uses; if
/// `to.context` is [`Context::Process`], the caller may sleep.
pub(super) unsafe fn post_mad(
    agent: *mut bindings::ib_mad_agent,
    to: SendTo,
    mad: &[u8],
) -> Result {
    // SAFETY: As the caller guarantees.
    unsafe {
        post_mad_with(agent, to, mad.len(), |buf| {
            buf.copy_from_slice(mad);
            Ok(())
        })
    }
}

/// Sends a MAD of `len` bytes (vendor header and data) that `fill` writes into the send
/// buffer, which the MAD layer zeroed: an answer built in place, with no copy. Nothing is sent
/// if `fill` fails, nor (`EINVAL`) if what it wrote is a subnet management MAD (an SMP), which
/// a GSI agent does not send.
///
/// # Safety
///
/// As for [`post_mad`].
pub(super) unsafe fn post_mad_with(
    agent: *mut bindings::ib_mad_agent,
    to: SendTo,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result,
) -> Result {
    let data_len = len
        .checked_sub(VENDOR_HDR_LEN)
        .and_then(|n| i32::try_from(n).ok());
    let Some(data_len) = data_len else {
        // SAFETY: The caller gives the address handle to this function.
        unsafe { destroy_ah(to.ah, to.context) };
        return Err(EINVAL);
    };
    let gfp = match to.context {
        Context::Process => bindings::GFP_KERNEL,
        Context::Atomic => bindings::GFP_ATOMIC,
    };
    // SAFETY: The agent is registered (caller's guarantee); the lengths describe `mad`.
    let buf = from_err_ptr(unsafe {
        bindings::ib_create_send_mad(
            agent,
            to.remote_qpn,
            to.pkey_index,
            0,
            VENDOR_HDR_LEN as i32,
            data_len,
            gfp,
            to.base_version,
        )
    });
    let buf = match buf {
        Ok(buf) => buf,
        Err(e) => {
            // SAFETY: The address handle is ours and unused.
            unsafe { destroy_ah(to.ah, to.context) };
            return Err(e);
        }
    };
    // SAFETY: `buf` is a fresh send buffer whose `mad` holds `len` bytes (header plus data, as
    // asked), zeroed by `ib_create_send_mad()`; nothing else uses it until it is posted.
    let mad = unsafe { core::slice::from_raw_parts_mut((*buf).mad.cast::<u8>(), len) };
    // A GSI agent sends no SMP (its management class is the header's second byte): the MAD
    // layer hands a directed-route one to the device's `process_mad` as a local SMP, and
    // copies the port's MAD size (2048 bytes on an OPA port) out of this buffer, which may
    // hold 256 (`handle_outgoing_dr_smp()`); a LID-routed one would skip the SMP checks of
    // QP0's agents.
    let filled = fill(mad).and_then(|()| match u32::from(mad[1]) {
        bindings::IB_MGMT_CLASS_SUBN_LID_ROUTED | bindings::IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE => {
            Err(EINVAL)
        }
        _ => Ok(()),
    });
    // SAFETY: As above.
    unsafe { (*buf).ah = to.ah };
    if let Err(e) = filled {
        // SAFETY: Not posted, so the MAD layer does not hold `buf`; its `ah` is ours.
        unsafe { free_send(buf, to.context) };
        return Err(e);
    }
    // SAFETY: `buf` is complete; the MAD layer owns it if the post succeeds.
    let ret = to_result(unsafe { bindings::ib_post_send_mad(buf, core::ptr::null_mut()) });
    if ret.is_err() {
        // SAFETY: The post failed, so the MAD layer does not hold `buf`; its `ah` is ours.
        unsafe { free_send(buf, to.context) };
    }
    ret
}

/// Sends `mad` (a whole MAD: vendor header and data, its first byte the base version) from
/// `agent` to `dest`, without waiting for an answer. Usable in atomic context.
///
/// # Safety
///
/// `agent` is a registered agent, during the call, whose send handler frees completed sends
/// with [`free_send`].
pub(super) unsafe fn send_unsolicited(
    agent: *mut bindings::ib_mad_agent,
    dest: &Dest,
    mad: &[u8],
) -> Result {
    let base_version = *mad.first().ok_or(EINVAL)?;
    // SAFETY: All-zero is a valid `rdma_ah_attr`, which the helpers then fill in.
    let mut attr: bindings::rdma_ah_attr = unsafe { core::mem::zeroed() };
    // SAFETY: The agent is registered (the caller guarantees it): its device, port, QP and PD
    // are valid. `attr` is a local. Without `RDMA_CREATE_AH_SLEEPABLE`, `rdma_create_ah()`
    // does not sleep.
    let ah = from_err_ptr(unsafe {
        let port = u32::from((*agent).port_num);
        attr.type_ = bindings::rdma_ah_find_type((*agent).device, port);
        bindings::rdma_ah_set_dlid(&mut attr, dest.dlid);
        bindings::rdma_ah_set_sl(&mut attr, dest.sl);
        bindings::rdma_ah_set_port_num(&mut attr, port);
        bindings::rdma_create_ah((*(*agent).qp).pd, &mut attr, 0)
    })?;
    let to = SendTo {
        ah,
        remote_qpn: dest.remote_qpn,
        pkey_index: dest.pkey_index,
        base_version,
        context: Context::Atomic,
    };
    // SAFETY: The agent is registered and its send handler frees with `free_send` (the
    // caller's guarantee); `ah` was just made on its PD; the context may be atomic, as said.
    unsafe { post_mad(agent, to, mad) }
}
