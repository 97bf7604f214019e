// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rust_rdma_cq` of [`Cq::notify`](super::Cq::notify): the CQ's completion
//! handler runs from a work item, never in the context of whoever asked for it (a provider
//! asks while delivering a send, under the locks of the poster, such as the MAD layer's send
//! list lock).
//!
//! Part of the kernel crate's tests (`CONFIG_RUST_KERNEL_DOCTESTS`), run at boot, on a CQ
//! made without a device (only the core's `struct ib_cq` and the work item, which is all the
//! handler's call uses).

use super::cq::CqCore;
use crate::{alloc::flags::*, bindings, kunit_expect, kunit_expect_eq, prelude::*, types::Opaque};
use core::{
    ffi::c_void,
    mem::MaybeUninit,
    ptr::{addr_of_mut, null_mut},
    sync::atomic::{AtomicPtr, AtomicUsize, Ordering},
};

/// The task the handler last ran in.
static HANDLER_TASK: AtomicPtr<bindings::task_struct> = AtomicPtr::new(null_mut());
/// How often the handler ran.
static CALLS: AtomicUsize = AtomicUsize::new(0);
/// The context the handler was last called with.
static CONTEXT: AtomicPtr<c_void> = AtomicPtr::new(null_mut());

/// The CQ's completion handler: records where and with what it ran.
///
/// # Safety
///
/// None: it only records its arguments (`unsafe` is the type of a completion handler).
unsafe extern "C" fn handler(_cq: *mut bindings::ib_cq, ctx: *mut c_void) {
    // SAFETY: `get_current()` has no precondition.
    HANDLER_TASK.store(unsafe { bindings::get_current() }, Ordering::Relaxed);
    CONTEXT.store(ctx, Ordering::Relaxed);
    CALLS.fetch_add(1, Ordering::Relaxed);
}

fn handler_runs_in_a_work_item() {
    CALLS.store(0, Ordering::Relaxed);
    HANDLER_TASK.store(null_mut(), Ordering::Relaxed);
    let Ok(mut b) = KBox::<MaybeUninit<CqCore>>::new_uninit(GFP_KERNEL | __GFP_ZERO) else {
        kunit_expect!(false);
        return;
    };
    let p = b.as_mut_ptr().cast::<CqCore>();
    let mut ctx = 0u8;
    // SAFETY: `p` is a zeroed `CqCore`, which is valid as plain data, that stays in place
    // until it is dropped at the end, after the work item is flushed. The handler and its
    // context are set before the work can be queued, as the core does before arming.
    let core = unsafe {
        let cq = Opaque::raw_get(addr_of_mut!((*p).ib));
        (*cq).comp_handler = Some(handler);
        (*cq).cq_context = addr_of_mut!(ctx).cast();
        CqCore::init_work(p);
        &*p
    };
    // SAFETY: `get_current()` has no precondition.
    let me = unsafe { bindings::get_current() };
    // The detector: a handler called in the caller's context (as the old synchronous call
    // from `post_send` did) records the caller's task.
    // SAFETY: `handler` only records its arguments.
    unsafe { handler(Opaque::raw_get(addr_of_mut!((*p).ib)), null_mut()) };
    kunit_expect!(HANDLER_TASK.load(Ordering::Relaxed) == me);
    CALLS.store(0, Ordering::Relaxed);
    HANDLER_TASK.store(null_mut(), Ordering::Relaxed);
    // As a provider asks for the handler inside `post_send`.
    core.notify();
    // SAFETY: `comp_work` is initialised (above) and alive until `b` is dropped.
    unsafe { bindings::flush_work(core.comp_work.get()) };
    kunit_expect_eq!(CALLS.load(Ordering::Relaxed), 1);
    let task = HANDLER_TASK.load(Ordering::Relaxed);
    kunit_expect!(!task.is_null() && task != me);
    kunit_expect!(CONTEXT.load(Ordering::Relaxed) == addr_of_mut!(ctx).cast::<c_void>());
    drop(b);
}

/// Once disabled (what `ib_free_cq()` has done through `pre_destroy_cq` before it cancels its
/// own poll work, which may still arm the CQ), a notify queues nothing: the handler does not
/// run, so it cannot queue that poll work again past the CQ's free.
fn notify_after_disable_queues_nothing() {
    CALLS.store(0, Ordering::Relaxed);
    let Ok(mut b) = KBox::<MaybeUninit<CqCore>>::new_uninit(GFP_KERNEL | __GFP_ZERO) else {
        kunit_expect!(false);
        return;
    };
    let p = b.as_mut_ptr().cast::<CqCore>();
    // SAFETY: As in `handler_runs_in_a_work_item`.
    let core = unsafe {
        let cq = Opaque::raw_get(addr_of_mut!((*p).ib));
        (*cq).comp_handler = Some(handler);
        (*cq).cq_context = null_mut();
        CqCore::init_work(p);
        &*p
    };
    core.notify();
    // A call queued before the disable ran already, or is cancelled by it: once at most.
    core.disable();
    let before = CALLS.load(Ordering::Relaxed);
    kunit_expect!(before <= 1);
    core.notify();
    core.flush();
    kunit_expect_eq!(CALLS.load(Ordering::Relaxed), before);
    drop(b);
}

crate::kunit_suite!(
    rust_rdma_cq,
    [
        handler_runs_in_a_work_item,
        notify_after_disable_queues_nothing
    ]
);
