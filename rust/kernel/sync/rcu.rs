// SPDX-License-Identifier: GPL-2.0

//! Read-copy-update: a pointer to an immutable object that readers follow without a lock
//! and writers replace whole.
//!
//! C header: [`include/linux/rcupdate.h`](srctree/include/linux/rcupdate.h)
//!
//! Readers take a [`Guard`] (`rcu_read_lock()`; any context, it does not sleep) and get a
//! shared reference that lives as long as the guard. A writer publishes a new object with
//! [`Rcu::replace`] (`rcu_assign_pointer()`), which waits for a grace period
//! (`synchronize_rcu()`) before it hands the old object back, so no reader can still see it.
//! Writers are not serialised by this type: two may replace concurrently, each gets back a
//! distinct old object.
//!
//! # Examples
//!
//! ```
//! use kernel::prelude::*;
//! use kernel::sync::rcu::{Guard, Rcu};
//!
//! let config = Rcu::new(KBox::new(1u32, GFP_KERNEL)?);
//! {
//!     let guard = Guard::new();
//!     assert_eq!(*config.read(&guard), 1);
//! }
//! let old = config.replace(KBox::new(2u32, GFP_KERNEL)?);
//! assert_eq!(*old, 1);
//! let guard = Guard::new();
//! assert_eq!(*config.read(&guard), 2);
//! # Ok::<(), Error>(())
//! ```

use crate::{alloc::KBox, bindings};

#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
#[path = "rcu_kunit.rs"]
mod kunit;
use core::{
    marker::PhantomData,
    sync::atomic::{AtomicPtr, Ordering},
};

/// An RCU read-side critical section (`rcu_read_lock()` until dropped).
///
/// Not `Send`: the section ends on the CPU and in the task it began in.
pub struct Guard {
    _not_send: PhantomData<*mut ()>,
}

impl Guard {
    /// Enters a read-side critical section. Usable in any context; the section must not
    /// sleep.
    #[inline]
    pub fn new() -> Self {
        // SAFETY: FFI call without preconditions; paired with the unlock in `Drop`.
        unsafe { bindings::rcu_read_lock() };
        Self {
            _not_send: PhantomData,
        }
    }
}

impl Default for Guard {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `new` entered the section this leaves, in this task (the guard is not
        // `Send`).
        unsafe { bindings::rcu_read_unlock() };
    }
}

/// A pointer to an immutable `T` that readers follow under a [`Guard`] and writers replace
/// whole; see the module documentation.
///
/// # Invariants
///
/// `ptr` is always a pointer from [`KBox::into_raw`] that this object owns. A pointer replaced
/// out of `ptr` is freed only after a grace period, so a reference a reader got under a
/// [`Guard`] stays valid until the guard is dropped.
pub struct Rcu<T> {
    ptr: AtomicPtr<T>,
    _owns: PhantomData<KBox<T>>,
}

// SAFETY: The object is handed between threads (a writer's replaced object is dropped on the
// writer's thread): `T: Send`. Readers on any thread share it: `T: Sync`.
unsafe impl<T: Send + Sync> Send for Rcu<T> {}
// SAFETY: As above; `&Rcu<T>` gives `&T` to any thread and lets any thread replace it.
unsafe impl<T: Send + Sync> Sync for Rcu<T> {}

impl<T> Rcu<T> {
    /// An RCU pointer to `value`.
    pub fn new(value: KBox<T>) -> Self {
        // INVARIANT: The pointer comes from `KBox::into_raw`, and is owned from now on.
        Self {
            ptr: AtomicPtr::new(KBox::into_raw(value)),
            _owns: PhantomData,
        }
    }

    /// The current object (`rcu_dereference()`), valid while `guard` is held.
    #[inline]
    pub fn read<'a>(&'a self, _guard: &'a Guard) -> &'a T {
        // `Acquire` pairs with the `Release` of `replace`: the object's contents written
        // before it was published are seen (what `rcu_dereference()` guarantees in C).
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: By the type invariant `p` is a live object owned by `self`; a replacement
        // frees it only after a grace period, which cannot end while `_guard` is held, and
        // `self` cannot be dropped while it is borrowed.
        unsafe { &*p }
    }

    /// The current object, for a caller that keeps writers away (it holds their lock): no
    /// guard needed, since only a writer could free the object.
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` excludes readers and writers; the pointer is owned (type
        // invariant).
        unsafe { &mut *self.ptr.load(Ordering::Relaxed) }
    }

    /// Publishes `new` (`rcu_assign_pointer()`) and returns the object it replaces once no
    /// reader can see it any more (after `synchronize_rcu()`). Sleeps: process context only,
    /// not under a spinlock or a [`Guard`].
    pub fn replace(&self, new: KBox<T>) -> KBox<T> {
        // `Release` publishes the contents of `new` with the pointer; `Acquire` takes
        // ownership of the old object from the writer that published it.
        let old = self.ptr.swap(KBox::into_raw(new), Ordering::AcqRel);
        // SAFETY: FFI call; the caller may sleep (documented requirement).
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: `old` came from `KBox::into_raw` (type invariant) and is no longer in `ptr`;
        // every reader that could have seen it has left its read-side section.
        unsafe { KBox::from_raw(old) }
    }
}

impl<T> Drop for Rcu<T> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no reader holds a reference from `read` (they borrow `self`),
        // and the pointer is owned (type invariant).
        drop(unsafe { KBox::from_raw(*self.ptr.get_mut()) });
    }
}
