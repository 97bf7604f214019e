// SPDX-License-Identifier: GPL-2.0

//! The routing netlink lock (RTNL), which serialises the configuration of network devices.
//!
//! C header: [`include/linux/rtnetlink.h`](srctree/include/linux/rtnetlink.h)
//!
//! Functions that must run under RTNL take an [`Rtnl`] token. Code that runs without it takes
//! the lock with [`Rtnl::lock`]; callbacks the stack calls with RTNL held are given a token
//! instead, so that nothing called from them takes the lock a second time (a deadlock).

use crate::bindings;
use core::{marker::PhantomData, ops::Deref, ptr::NonNull};

/// Proof that the current task holds RTNL.
///
/// Not `Send` or `Sync`: RTNL is held by a task, and only code of that task may rely on it.
///
/// # Invariants
///
/// RTNL is held by the current task for as long as a reference to an [`Rtnl`] is live.
pub struct Rtnl {
    _not_send: PhantomData<*mut ()>,
}

impl Rtnl {
    /// Takes RTNL (`rtnl_lock()`), sleeping until it is free; released when the guard is
    /// dropped. Process context only, and never with RTNL held already.
    pub fn lock() -> RtnlGuard {
        // SAFETY: FFI call without memory-safety preconditions. Taken twice by one task it
        // deadlocks, and in atomic context it sleeps; lockdep and `might_sleep()` (in
        // `mutex_lock()`) report either, and neither breaks memory safety. Callbacks the stack
        // runs under RTNL get a token instead, so they need not call this.
        unsafe { bindings::rtnl_lock() };
        // INVARIANT: RTNL is held until the guard is dropped.
        RtnlGuard(Rtnl {
            _not_send: PhantomData,
        })
    }

    /// The token of a caller that holds RTNL, for callbacks the stack calls under it.
    ///
    /// # Safety
    ///
    /// The current task holds RTNL for `'a`.
    pub unsafe fn assume_held<'a>() -> &'a Rtnl {
        // INVARIANT: The caller guarantees that RTNL is held for `'a`.
        // SAFETY: `Rtnl` is a zero-sized type, for which a dangling, aligned pointer is valid.
        unsafe { NonNull::<Rtnl>::dangling().as_ref() }
    }
}

/// RTNL, held by the current task until this is dropped (see [`Rtnl::lock`]).
pub struct RtnlGuard(Rtnl);

impl Deref for RtnlGuard {
    type Target = Rtnl;

    fn deref(&self) -> &Rtnl {
        &self.0
    }
}

impl Drop for RtnlGuard {
    fn drop(&mut self) {
        // SAFETY: By the type invariant of `Rtnl`, this task holds RTNL, taken by `Rtnl::lock`.
        unsafe { bindings::rtnl_unlock() };
    }
}
