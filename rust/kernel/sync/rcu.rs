// SPDX-License-Identifier: GPL-2.0

//! Read-copy-update: a pointer to an immutable object that readers follow without a lock
//! and writers replace whole, without waiting for the readers.
//!
//! C header: [`include/linux/rcupdate.h`](srctree/include/linux/rcupdate.h)
//!
//! Readers take a [`Guard`] (`rcu_read_lock()`; any context, it does not sleep) and get a
//! shared reference that lives as long as the guard. A writer publishes a new object with
//! [`Rcu::replace`] (`rcu_assign_pointer()`), which neither sleeps nor waits: the old object
//! is retired with `call_rcu()`, and once its grace period has ended the next `replace` (or
//! the `Rcu`'s drop) drops it, in the writer's context. So an object's `Drop` never runs in
//! softirq context (it may sleep wherever the writer may), and nothing in the type depends on
//! the caller being outside a read-side section: a reference a reader holds stays valid
//! across any number of replacements until its guard is dropped. Writers are not serialised
//! by this type: two may replace concurrently.
//!
//! Dropping an [`Rcu`] whose replaced objects still wait for their grace period waits for
//! them (`rcu_barrier()`), so that no callback of it runs after its owner (a module) is gone:
//! an `Rcu` is dropped in process context.
//!
//! # Examples
//!
//! ```
//! use kernel::prelude::*;
//! use kernel::sync::rcu::{Guard, Rcu};
//!
//! let config = KBox::pin_init(Rcu::new(1u32, GFP_KERNEL), GFP_KERNEL)?;
//! {
//!     let guard = Guard::new();
//!     assert_eq!(*config.read(&guard), 1);
//!     // No wait, even inside a read-side section (which must not sleep: the allocation
//!     // does not); the old object outlives `guard`.
//!     config.replace(2, GFP_ATOMIC)?;
//!     assert_eq!(*config.read(&guard), 2);
//! }
//! # Ok::<(), Error>(())
//! ```

use crate::{
    alloc::{Flags, KBox},
    bindings,
    error::Result,
    init::PinInit,
    try_pin_init,
    types::Opaque,
};
use core::{
    marker::{PhantomData, PhantomPinned},
    ops::Deref,
    pin::Pin,
    ptr,
    sync::atomic::{AtomicPtr, AtomicUsize, Ordering},
};
use macros::{pin_data, pinned_drop};

#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
#[path = "rcu_kunit.rs"]
mod kunit;

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

impl Deref for Guard {
    type Target = ReadSide;

    #[inline]
    fn deref(&self) -> &ReadSide {
        &ReadSide::SECTION
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

/// An RCU read-side critical section, by reference: what [`Rcu::read`] needs, for as long as
/// the reference lives. A [`Guard`] derefs to one. Code that runs where the kernel has
/// entered a read-side section already (bottom halves, interrupts or preemption disabled:
/// since Linux 4.20 a grace period waits for those too, as for `rcu_read_lock()`) gets one
/// from [`ReadSide::assume`], at no cost: a netdev's `ndo_start_xmit`, for example.
///
/// Not `Sync`, so a reference to it is not `Send`: it stays in the task whose section it
/// stands for.
pub struct ReadSide {
    _not_send: PhantomData<*mut ()>,
}

impl ReadSide {
    const SECTION: ReadSide = ReadSide {
        _not_send: PhantomData,
    };

    /// The read-side section the caller is in.
    ///
    /// # Safety
    ///
    /// For all of `'a`, the caller is in an RCU read-side critical section: under
    /// `rcu_read_lock()`, or with bottom halves, interrupts or preemption disabled.
    #[inline]
    pub unsafe fn assume<'a>() -> &'a ReadSide {
        &Self::SECTION
    }
}

/// Waits until every RCU callback queued before the call has run (`rcu_barrier()`): for
/// objects replaced in any [`Rcu`], until each is ready for its owner to drop. Sleeps.
pub fn barrier() {
    // SAFETY: FFI calls without preconditions; the caller may sleep (documented). The check
    // reports a call inside a read-side section, where the wait never ends (preemptible RCU).
    unsafe {
        bindings::rcu_wait_check();
        bindings::rcu_barrier();
    }
}

/// Waits for a grace period (`synchronize_rcu()`): every read-side section begun before the
/// call has ended. Sleeps; never call it under a [`Guard`] (with preemptible RCU it would
/// wait for itself).
pub fn synchronize() {
    // SAFETY: FFI calls without preconditions; the caller may sleep (documented). The check
    // reports a call inside a read-side section, where the grace period could end under the
    // caller's own references.
    unsafe {
        bindings::rcu_wait_check();
        bindings::synchronize_rcu();
    }
}

/// The header of every object an [`Rcu`] allocates: the callback that retires it, then the
/// link of its owner's list of objects whose grace period has ended.
///
/// `#[repr(C)]` with `head` first, and first in [`Node`]: the callback gets a pointer to
/// `head` and finds the node at the same address.
#[repr(C)]
struct Retired {
    head: Opaque<bindings::callback_head>,
    next: *mut Retired,
    list: *const RetiredList,
}

/// The objects of one [`Rcu`] that its writers may drop, pushed by the RCU callback and
/// taken whole by a writer.
struct RetiredList {
    first: AtomicPtr<Retired>,
    /// Objects replaced whose callback has not finished.
    in_flight: AtomicUsize,
}

/// An object and its header, as one allocation.
#[repr(C)]
struct Node<T> {
    retired: Retired,
    value: T,
}

/// The RCU callback of a replaced object: its grace period has ended, so it joins its
/// owner's list for the next writer to drop.
///
/// Not generic, so that its code is the kernel's and not a module's: a callback may run
/// after a module that replaced an object has begun to unload (until its `Rcu` is dropped).
/// `#[inline(never)]` for the same reason: rustc may otherwise make a small non-generic
/// function available for inlining in other crates (cross-crate inlining), and a module's
/// generic `replace` would then pass `call_rcu()` a copy in the module's own code.
///
/// # Safety
///
/// `head` is the `head` of a [`Retired`] whose `list` is valid until the counter
/// `in_flight` this callback decrements has been seen at zero (the `Rcu` waits for that in
/// its drop).
#[inline(never)]
unsafe extern "C" fn retired_callback(head: *mut bindings::callback_head) {
    let node = head.cast::<Retired>();
    // SAFETY: `head` is the first field of a `Retired` (`#[repr(C)]`), which no one else
    // touches while its callback is pending; its `list` is valid (function safety
    // requirements).
    let list = unsafe { &*(*node).list };
    let mut first = list.first.load(Ordering::Relaxed);
    loop {
        // SAFETY: As above; the node is not on the list yet.
        unsafe { (*node).next = first };
        // `Release` hands the node (and its `next`) to the writer that takes the list.
        match list
            .first
            .compare_exchange_weak(first, node, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => break,
            Err(now) => first = now,
        }
    }
    // `Release`: the push above is seen by whoever sees the count drop; the list is not
    // touched after this.
    list.in_flight.fetch_sub(1, Ordering::Release);
}

/// A pointer to an immutable `T` that readers follow under a [`Guard`] and writers replace
/// whole without waiting; see the module documentation.
///
/// # Invariants
///
/// - `ptr` is always a pointer from [`KBox::into_raw`] of a `Node<T>` that this object owns.
/// - A node replaced out of `ptr` has its `list` pointing to `retired`, and has been passed
///   to `call_rcu()` with `retired_callback`,
///   and counted in `retired.in_flight` until its callback has pushed it onto
///   `retired.first`; a node on that list is owned by this object again, and is dropped only
///   from there. So a reference a reader got under a [`Guard`] stays valid until the guard
///   is dropped.
#[pin_data(PinnedDrop)]
pub struct Rcu<T> {
    ptr: AtomicPtr<Node<T>>,
    /// Pointed to by every replaced node: it must not move, and does not, as an `Rcu` is
    /// `!Unpin` (`_pin`) and only used pinned (its constructor is a pin initialiser).
    retired: RetiredList,
    #[pin]
    _pin: PhantomPinned,
    _owns: PhantomData<KBox<Node<T>>>,
}

// SAFETY: The object is handed between threads (a writer drops objects other writers
// replaced): `T: Send`. Readers on any thread share it: `T: Sync`. The raw pointers in the
// nodes are only followed as the invariants say.
unsafe impl<T: Send + Sync> Send for Rcu<T> {}
// SAFETY: As above; `&Rcu<T>` gives `&T` to any thread and lets any thread replace it.
unsafe impl<T: Send + Sync> Sync for Rcu<T> {}

impl<T> Rcu<T> {
    /// An RCU pointer to `value`, which it allocates with `flags`.
    pub fn new(value: T, flags: Flags) -> impl PinInit<Self, crate::error::Error> {
        try_pin_init!(Self {
            ptr: AtomicPtr::new(Self::node(value, flags)?),
            retired: RetiredList {
                first: AtomicPtr::new(ptr::null_mut()),
                in_flight: AtomicUsize::new(0),
            },
            _pin: PhantomPinned,
            _owns: PhantomData,
        }? crate::error::Error)
    }

    /// A node holding `value`, as a raw pointer that the caller owns. Its `list` is set when
    /// it is replaced.
    fn node(value: T, flags: Flags) -> Result<*mut Node<T>> {
        let node = KBox::new(
            Node {
                retired: Retired {
                    head: Opaque::uninit(),
                    next: ptr::null_mut(),
                    list: ptr::null(),
                },
                value,
            },
            flags,
        )?;
        Ok(KBox::into_raw(node))
    }

    /// The current object (`rcu_dereference()`), valid while the read-side section `_section`
    /// lasts (a [`Guard`], or [`ReadSide::assume`]).
    #[inline]
    pub fn read<'a>(&'a self, _section: &'a ReadSide) -> &'a T {
        // `Acquire` pairs with the `Release` of `replace`: the object's contents written
        // before it was published are seen (what `rcu_dereference()` guarantees in C).
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: By the type invariants `p` is a live node; a replacement only drops it from
        // the retired list, which it joins after a grace period that cannot end while
        // `_section` lasts (`replace` does not wait, so not even in this task);
        // `self` cannot be dropped while it is borrowed.
        unsafe { &(*p).value }
    }

    /// Publishes `value` (`rcu_assign_pointer()`), allocated with `flags`, and retires the
    /// object it replaces, to be dropped after a grace period. Does not wait for the grace
    /// period. Drops the objects retired earlier whose grace period has ended, so it runs
    /// where `T`'s drop may run; under a [`Guard`] (or a spinlock) that means a drop that does
    /// not sleep, and `flags` that do not either (`GFP_ATOMIC`).
    pub fn replace(&self, value: T, flags: Flags) -> Result {
        let new = Self::node(value, flags)?;
        // Counted before the callback can run, so that the drop of `self` waits for it.
        self.retired.in_flight.fetch_add(1, Ordering::Relaxed);
        // `Release` publishes the contents of `new` with the pointer; `Acquire` takes
        // ownership of the old node from the writer that published it.
        let old = self.ptr.swap(new, Ordering::AcqRel);
        // SAFETY: `old` is a live node that this object owned (type invariant) and that the
        // swap took out of `ptr`: only this writer can reach it, though readers may still
        // read its `value`, which this does not touch.
        unsafe { (*old).retired.list = &self.retired };
        // SAFETY: `old`'s header is its own (as above), its `list` is `self.retired`, which is
        // pinned and lives until the drop of `self` has seen `in_flight` at zero, which it
        // cannot before this callback has run.
        // INVARIANT: The replaced node is passed to `call_rcu()` and counted in `in_flight`.
        unsafe {
            bindings::call_rcu(
                Opaque::raw_get(ptr::addr_of!((*old).retired.head)),
                Some(retired_callback),
            )
        };
        self.drop_retired();
        Ok(())
    }

    /// Drops the objects whose grace period has ended.
    fn drop_retired(&self) {
        // `Acquire` pairs with the callbacks' `Release`.
        let mut p = self.retired.first.swap(ptr::null_mut(), Ordering::Acquire);
        while !p.is_null() {
            // SAFETY: `p` was pushed by `retired_callback`, so it is a `Retired` at the start
            // of a `Node<T>` from `KBox::into_raw` that this object owns again, and no one
            // else took it (the swap above took the whole list).
            let node = unsafe { KBox::from_raw(p.cast::<Node<T>>()) };
            p = node.retired.next;
            drop(node);
        }
    }
}

#[pinned_drop]
impl<T> PinnedDrop for Rcu<T> {
    fn drop(self: Pin<&mut Self>) {
        // Even if no callback is pending: a drop in atomic context, or in a read-side section
        // (where `barrier` would wait for itself, or a grace period end under a live
        // reference), is a bug whenever one is; reported with `CONFIG_PROVE_RCU` and
        // `CONFIG_DEBUG_ATOMIC_SLEEP`.
        // SAFETY: FFI call without preconditions.
        unsafe { bindings::rcu_wait_check() };
        if self.retired.in_flight.load(Ordering::Acquire) != 0 {
            barrier();
        }
        // Every callback has pushed its node, and none touches `self.retired` any more.
        self.drop_retired();
        // SAFETY: Being dropped: no reader holds a reference from `read` (they borrow
        // `self`), and the current node is owned (type invariant).
        drop(unsafe { KBox::from_raw(self.ptr.load(Ordering::Relaxed)) });
    }
}
