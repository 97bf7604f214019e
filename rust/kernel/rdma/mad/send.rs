// SPDX-License-Identifier: GPL-2.0

//! Freeing what a MAD send used: its buffer and address handle, in the context it ends in.

use crate::bindings;

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
