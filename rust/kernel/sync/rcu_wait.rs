// SPDX-License-Identifier: GPL-2.0

//! The waits of [`super`]: for RCU callbacks and grace periods (the crate's own callers
//! only), and for the objects dropped `Rcu`s left to their callbacks (a module's exit).

use crate::bindings;
use core::sync::atomic::{fence, AtomicUsize, Ordering};

/// Waits until every RCU callback queued before the call has run (`rcu_barrier()`). Sleeps;
/// never called in a read-side section (with preemptible RCU it would wait for itself).
///
/// Crate-private: no [`Rcu`](super::Rcu) needs it (its drop does not wait), and code outside
/// the crate cannot wait where it must not.
#[cfg_attr(not(CONFIG_RUST_KERNEL_DOCTESTS), allow(dead_code))]
pub(crate) fn barrier() {
    // SAFETY: `rcu_barrier()`'s one requirement, a caller that may sleep and is in no
    // read-side section, is the kernel's rule for every sleeping call, which the crate's
    // callers keep (documented above); `rcu_wait_check()` reports a breach (lockdep's
    // `rcu_read_lock_any_held()`, `might_sleep()`), as nothing in Rust can prove it.
    unsafe {
        bindings::rcu_wait_check();
        bindings::rcu_barrier();
    }
}

/// Waits for a grace period (`synchronize_rcu()`): every read-side section begun before the
/// call has ended. Sleeps; never called in a read-side section (with preemptible RCU it
/// would wait for itself, without it the grace period could end under the caller's own
/// references).
///
/// Crate-private for the same reason as [`barrier`].
pub(crate) fn synchronize() {
    // SAFETY: As in `barrier`: the caller may sleep and is in no read-side section (without
    // preemptible RCU a sleep there would let the grace period end under its references),
    // the kernel's rule for every sleeping call; `rcu_wait_check()` reports a breach.
    unsafe {
        bindings::rcu_wait_check();
        bindings::synchronize_rcu();
    }
}

/// The objects that dropped [`Rcu`](super::Rcu)s left to their callbacks and that are not
/// dropped yet, counted per `Rcu`: what a module's exit waits for ([`wait_for_orphans`]).
pub(super) static ORPHANS: AtomicUsize = AtomicUsize::new(0);

/// Waits until every [`Rcu`](super::Rcu) dropped so far has dropped all its objects, including
/// those it left to their RCU callbacks. The `module!` macro calls it when a module's init
/// fails and after its exit, so that no object of the module is dropped after its code is
/// gone.
///
/// # Safety
///
/// Sleeps: the caller is in process context, outside any read-side section and with no lock
/// held that a work item on `system_wq` may wait for.
#[doc(hidden)]
pub unsafe fn wait_for_orphans() {
    // SAFETY: The caller may sleep (function safety requirements); the counter is a static.
    // The helper waits on `ORPHANS`'s address, which `orphan_done` wakes.
    unsafe { bindings::wait_var_event_zero(ORPHANS.as_ptr().cast()) };
}

/// One orphan fewer: wakes [`wait_for_orphans`] when none is left.
pub(super) fn orphan_done() {
    // `Release`: the drops done for the orphan happen before a waiter sees the count fall.
    if ORPHANS.fetch_sub(1, Ordering::Release) == 1 {
        // `wake_up_var()` looks for waiters without a lock: the count's store must be ordered
        // before that load (its comment asks for `smp_mb()`), which a read-modify-write alone
        // does not do on every architecture.
        fence(Ordering::SeqCst);
        // SAFETY: FFI call; the address is a static's.
        unsafe { bindings::wake_up_var(ORPHANS.as_ptr().cast()) };
    }
}
