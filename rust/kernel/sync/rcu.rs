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
//! softirq context (it may sleep wherever the writer may, or in a worker; see below), and
//! nothing in the type depends on
//! the caller being outside a read-side section: a reference a reader holds stays valid
//! across any number of replacements until its guard is dropped. Writers are not serialised
//! by this type: two may replace concurrently.
//!
//! Dropping an [`Rcu`] does not wait either: objects it replaced whose grace period has not
//! ended are left to their RCU callbacks, and the last of those hands them to a work item
//! that drops them in process context. A module's exit waits for those drops (the
//! `module!` macro calls [`wait_for_orphans`]), so that no code of the module runs after it
//! is gone. So an `Rcu` may be dropped wherever its `T` may be dropped, inside a read-side
//! section too.
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
    bindings, c_str,
    error::Result,
    init::{pin_init_from_closure, PinInit},
    static_lock_class,
    types::Opaque,
};
use core::{
    marker::PhantomData,
    ops::Deref,
    ptr,
    sync::atomic::{AtomicPtr, AtomicUsize, Ordering},
};

#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
#[path = "rcu_kunit.rs"]
mod kunit;

#[path = "rcu_wait.rs"]
mod wait;
#[cfg(CONFIG_RUST_KERNEL_DOCTESTS)]
pub(crate) use wait::barrier;
pub(crate) use wait::synchronize;
pub use wait::wait_for_orphans;
use wait::{orphan_done, ORPHANS};

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

/// The header of every object an [`Rcu`] allocates: the callback that retires it, then the
/// link of its owner's list of objects whose grace period has ended.
///
/// `#[repr(C)]` with `head` first, and first in [`Node`]: the callback gets a pointer to
/// `head` and finds the node at the same address.
#[repr(C)]
struct Retired {
    head: Opaque<bindings::callback_head>,
    next: *mut Retired,
    shared: *const Shared,
}

/// Bit of [`Shared::state`]: the [`Rcu`] is gone.
const ORPHANED: usize = 1 << (usize::BITS - 1);

/// What one [`Rcu`] shares with the callbacks of the objects it replaced: allocated apart
/// from the `Rcu`, so that it outlives an `Rcu` dropped while callbacks are pending.
///
/// `#[repr(C)]` with `work` first: the work function gets a pointer to `work` and finds the
/// `Shared` at the same address.
#[repr(C)]
struct Shared {
    /// Queued by the last callback once the `Rcu` is gone: drops what it left, in process
    /// context ([`orphan_work`]).
    work: Opaque<bindings::work_struct>,
    /// Replaced objects whose grace period has ended, pushed by their callbacks and taken
    /// whole by a writer (or the work).
    first: AtomicPtr<Retired>,
    /// Callbacks pending, plus [`ORPHANED`] once the `Rcu` is dropped.
    state: AtomicUsize,
    /// Drops a list of nodes of the `Rcu`'s `T` ([`Rcu::drop_list`]).
    drop_list: unsafe fn(*mut Retired),
}

impl Shared {
    /// The shared part of a new `Rcu` whose list of nodes `drop_list` drops.
    ///
    /// Not generic, and `#[inline(never)]` (see [`retired_callback`]), so that the work item's
    /// lockdep class and its name are one for every `Rcu`: lockdep warns when one key comes
    /// with two names, as a copy of the name in each module would.
    #[inline(never)]
    fn new(drop_list: unsafe fn(*mut Retired), flags: Flags) -> Result<KBox<Self>> {
        let shared = KBox::new(
            Shared {
                work: Opaque::uninit(),
                first: AtomicPtr::new(ptr::null_mut()),
                state: AtomicUsize::new(0),
                drop_list,
            },
            flags,
        )?;
        // SAFETY: `work` is at its final address (a box does not move its contents), and is
        // not queued; `orphan_work` is the function an `Rcu`'s invariants name.
        unsafe {
            bindings::init_work_with_key(
                shared.work.get(),
                Some(orphan_work),
                false,
                c_str!("rcu::Rcu orphans").as_char_ptr(),
                static_lock_class!().as_ptr(),
            )
        };
        Ok(shared)
    }
}

/// An object and its header, as one allocation.
#[repr(C)]
struct Node<T> {
    retired: Retired,
    value: T,
}

/// The RCU callback of a replaced object: its grace period has ended, so it joins its
/// owner's list for the next writer to drop; if the owner is gone and this is its last
/// callback, the work that drops what it left is queued.
///
/// Not generic, so that its code is the kernel's and not a module's: a callback may run
/// after a module that replaced an object has begun to unload. `#[inline(never)]` for the
/// same reason: rustc may otherwise make a small non-generic function available for
/// inlining in other crates (cross-crate inlining), and a module's generic `replace` would
/// then pass `call_rcu()` a copy in the module's own code.
///
/// # Safety
///
/// `head` is the `head` of a [`Retired`] whose `shared` is valid and counts this callback
/// in its `state`.
#[inline(never)]
unsafe extern "C" fn retired_callback(head: *mut bindings::callback_head) {
    let node = head.cast::<Retired>();
    // SAFETY: `head` is the first field of a `Retired` (`#[repr(C)]`), which no one else
    // touches while its callback is pending; its `shared` is valid until this callback is
    // no longer counted (function safety requirements).
    let shared = unsafe { &*(*node).shared };
    let work = shared.work.get();
    let mut first = shared.first.load(Ordering::Relaxed);
    loop {
        // SAFETY: As above; the node is not on the list yet.
        unsafe { (*node).next = first };
        // `Release` hands the node (and its `next`) to whoever takes the list.
        match shared
            .first
            .compare_exchange_weak(first, node, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => break,
            Err(now) => first = now,
        }
    }
    // `Release`: the push above is seen by whoever sees the count fall. `Acquire`: the last
    // callback of an orphan takes the other callbacks' pushes with it, for the work.
    if shared.state.fetch_sub(1, Ordering::AcqRel) == ORPHANED + 1 {
        // The `Rcu` is gone and every other callback has finished: no one else refers to
        // `shared`. Queueing orders the pushes before the work runs.
        // SAFETY: `work` was initialised with `orphan_work` when `shared` was allocated, and
        // was never queued before (only the last callback of an orphan queues it, once).
        unsafe {
            bindings::queue_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as _,
                bindings::system_wq,
                work,
            )
        };
    }
}

/// The work of an [`Rcu`] dropped while callbacks were pending, queued by the last of
/// them: drops the objects it left and frees what it shared with them. Not generic, as
/// [`retired_callback`]; the drops themselves are the module's code, which
/// [`wait_for_orphans`] waits for.
///
/// # Safety
///
/// `work` is the `work` of a [`Shared`] from [`KBox::into_raw`] that no one else refers to.
#[inline(never)]
unsafe extern "C" fn orphan_work(work: *mut bindings::work_struct) {
    // SAFETY: `work` is the first field of a `Shared` (`#[repr(C)]`) from `KBox::into_raw`,
    // owned by this work alone (function safety requirements). The workqueue allows a work
    // item to be freed by its own function.
    let shared = unsafe { KBox::from_raw(work.cast::<Shared>()) };
    let first = shared.first.swap(ptr::null_mut(), Ordering::Acquire);
    let drop_list = shared.drop_list;
    drop(shared);
    // SAFETY: Every node on the list was pushed by a callback of the dropped `Rcu`, whose
    // objects it now owns alone; `drop_list` is that `Rcu`'s.
    unsafe { drop_list(first) };
    orphan_done();
}

/// A pointer to an immutable `T` that readers follow under a [`Guard`] and writers replace
/// whole without waiting; see the module documentation.
///
/// `T: Send + 'static`: objects left to their callbacks by the drop are dropped later, in a
/// worker, after the `Rcu` and any borrow of the code that dropped it have ended; an object
/// must therefore own what it refers to, as upstream's workqueue asks of what it enqueues.
///
/// # Invariants
///
/// - `ptr` is always a pointer from `KBox::into_raw` of a `Node<T>` that this object owns.
/// - `shared` is a pointer from `KBox::into_raw` of a `Shared` whose `work` was
///   initialised with `orphan_work` and whose `drop_list` is `Rcu::drop_list`; it is
///   owned by this object and by the callbacks its `state` counts.
/// - A node replaced out of `ptr` has its `shared` pointing to `shared`, and has been passed
///   to `call_rcu()` with `retired_callback`, and counted in `state` until its callback has
///   pushed it onto `first`; a node on that list is owned by this object again, and is
///   dropped only from there. So a reference a reader got under a [`Guard`] stays valid
///   until the guard is dropped.
pub struct Rcu<T: Send + 'static> {
    ptr: AtomicPtr<Node<T>>,
    shared: *mut Shared,
    _owns: PhantomData<KBox<Node<T>>>,
}

// SAFETY: The object is handed between threads (a writer drops objects other writers
// replaced, a worker those left by the drop): `T: Send`. Readers on any thread share it:
// `T: Sync`. The raw pointers are only followed as the invariants say.
unsafe impl<T: Send + Sync + 'static> Send for Rcu<T> {}
// SAFETY: As above; `&Rcu<T>` gives `&T` to any thread and lets any thread replace it.
unsafe impl<T: Send + Sync + 'static> Sync for Rcu<T> {}

impl<T: Send + 'static> Rcu<T> {
    /// An RCU pointer to `value`, which it allocates with `flags`. An initialiser, so that an
    /// `Rcu` can be a field of a pinned structure; the allocations are made by this call.
    pub fn new(value: T, flags: Flags) -> impl PinInit<Self, crate::error::Error> {
        let this = Self::try_new(value, flags);
        // SAFETY: On `Ok` the closure writes a whole `Self` into the slot, which `Self` may
        // occupy at any address; on `Err` it writes nothing and owns nothing.
        unsafe {
            pin_init_from_closure(move |slot: *mut Self| {
                slot.write(this?);
                Ok(())
            })
        }
    }

    fn try_new(value: T, flags: Flags) -> Result<Self> {
        let shared = Shared::new(Self::drop_list, flags)?;
        // On failure the box is dropped: nothing refers to it yet.
        let node = KBox::into_raw(Prepared::new(value, flags)?.node);
        // INVARIANT: Both pointers from `KBox::into_raw`, owned by the new object; `shared`
        // initialised as the invariants say, and no callback counted yet.
        Ok(Self {
            ptr: AtomicPtr::new(node),
            shared: KBox::into_raw(shared),
            _owns: PhantomData,
        })
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
        self.publish(Prepared::new(value, flags)?);
        Ok(())
    }

    /// Publishes an object allocated beforehand, as [`Rcu::replace`] does, but without
    /// allocating: it cannot fail. A writer that changes several `Rcu`s as one makes each
    /// new object a [`Prepared`] first, so that it changes all of them or, if an allocation
    /// fails, none.
    pub fn publish(&self, prepared: Prepared<T>) {
        let new = KBox::into_raw(prepared.node);
        // SAFETY: `shared` is valid while `self` lives (type invariants).
        let shared = unsafe { &*self.shared };
        // Counted before the callback can run, so that the callback does not take the `Rcu`
        // for gone.
        shared.state.fetch_add(1, Ordering::Relaxed);
        // `Release` publishes the contents of `new` with the pointer; `Acquire` takes
        // ownership of the old node from the writer that published it.
        // INVARIANT: `new` is from `KBox::into_raw`, and the `Prepared` that owned it is gone:
        // this object owns it now.
        let old = self.ptr.swap(new, Ordering::AcqRel);
        // SAFETY: `old` is a live node that this object owned (type invariant) and that the
        // swap took out of `ptr`: only this writer can reach it, though readers may still
        // read its `value`, which this does not touch.
        unsafe { (*old).retired.shared = self.shared };
        // INVARIANT: The replaced node is passed to `call_rcu()` and counted in `state`.
        // SAFETY: `old`'s header is its own (as above), its `shared` is this object's, which
        // stays valid while `state` counts the callback (type invariants).
        unsafe {
            bindings::call_rcu(
                Opaque::raw_get(ptr::addr_of!((*old).retired.head)),
                Some(retired_callback),
            )
        };
        self.drop_retired();
    }

    /// Drops the objects whose grace period has ended.
    fn drop_retired(&self) {
        // SAFETY: `shared` is valid while `self` lives (type invariants).
        let shared = unsafe { &*self.shared };
        // `Acquire` pairs with the callbacks' `Release`.
        let first = shared.first.swap(ptr::null_mut(), Ordering::Acquire);
        // SAFETY: The list's nodes were pushed by `retired_callback`, so this object owns
        // them again, and the swap above took them from everyone else.
        unsafe { Self::drop_list(first) };
    }

    /// Drops the nodes of the list that begins at `first`.
    ///
    /// # Safety
    ///
    /// Each node on the list is the `Retired` at the start of a `Node<T>` from
    /// [`KBox::into_raw`] that the caller owns and no one else refers to.
    unsafe fn drop_list(first: *mut Retired) {
        let mut p = first;
        while !p.is_null() {
            // SAFETY: As the function safety requirements say.
            let node = unsafe { KBox::from_raw(p.cast::<Node<T>>()) };
            p = node.retired.next;
            drop(node);
        }
    }
}

/// An object allocated for an [`Rcu`] and not published yet; [`Rcu::publish`] publishes it
/// without allocating. Dropping it drops the object.
pub struct Prepared<T: Send + 'static> {
    node: KBox<Node<T>>,
}

impl<T: Send + 'static> Prepared<T> {
    /// `value`, in the allocation (made with `flags`) that an [`Rcu`] keeps an object in. Its
    /// header's `shared` is set when the object is replaced in turn.
    pub fn new(value: T, flags: Flags) -> Result<Self> {
        let node = KBox::new(
            Node {
                retired: Retired {
                    head: Opaque::uninit(),
                    next: ptr::null_mut(),
                    shared: ptr::null(),
                },
                value,
            },
            flags,
        )?;
        Ok(Self { node })
    }
}

impl<T: Send + 'static> Drop for Rcu<T> {
    fn drop(&mut self) {
        // SAFETY: Being dropped: no reader holds a reference from `read` (they borrow
        // `self`), and the current node is owned (type invariant).
        drop(unsafe { KBox::from_raw(*self.ptr.get_mut()) });
        self.drop_retired();
        // SAFETY: `shared` is valid until this object lets go of it below.
        let shared = unsafe { &*self.shared };
        // No `replace` can add a callback (`&mut self`), so a count seen at zero stays there.
        // `Acquire` takes the pushes of the callbacks that finished.
        if shared.state.load(Ordering::Acquire) != 0 {
            // Counted before the orphan can be dropped by its work.
            ORPHANS.fetch_add(1, Ordering::Relaxed);
            // `AcqRel`: as above, and hands the last callback what this thread did.
            if shared.state.fetch_or(ORPHANED, Ordering::AcqRel) != 0 {
                // INVARIANT: `shared` is the callbacks' alone now; the last one queues
                // `orphan_work`, which drops what they pushed and frees `shared`.
                return;
            }
            // The last callback finished between the two reads: nothing is orphaned.
            orphan_done();
        }
        // No callback is pending and none will be: `shared` is this object's alone.
        self.drop_retired();
        // SAFETY: From `KBox::into_raw` (type invariants); its work was never queued (only an
        // orphan's is) and no callback refers to it.
        drop(unsafe { KBox::from_raw(self.shared) });
    }
}
