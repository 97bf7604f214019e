// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rust_net_napi` of [`Napi`]: scheduling from any context leaves the caller's
//! interrupt state alone.
//!
//! Part of the kernel crate's tests (`CONFIG_RUST_KERNEL_DOCTESTS`), run at boot.

use super::{Napi, NapiCtx, NapiPoll};
use crate::{
    kunit_expect, kunit_expect_eq, new_irq_spinlock, prelude::*, sync::irq_spinlock::irqs_disabled,
};
use core::sync::atomic::{AtomicU32, Ordering};

/// Counts its polls.
struct Polls(AtomicU32);

impl NapiPoll for Polls {
    fn poll(&self, _ctx: &NapiCtx<'_>, _budget: i32) -> i32 {
        self.0.fetch_add(1, Ordering::Relaxed);
        0
    }
}

/// Under an `IrqSpinLock`, `schedule` neither turns interrupts on nor runs the poll (which
/// would run the softirqs, interrupts on, under the lock): the poll runs later.
fn schedule_under_irq_spinlock() {
    let (Ok(napi), Ok(lock)) = (
        KBox::pin_init(Napi::new(Polls(AtomicU32::new(0))), GFP_KERNEL),
        KBox::pin_init(new_irq_spinlock!(()), GFP_KERNEL),
    ) else {
        kunit_expect!(false);
        return;
    };
    let g = lock.lock();
    let off = irqs_disabled();
    napi.schedule();
    let still_off = irqs_disabled();
    let polled = napi.data().0.load(Ordering::Relaxed);
    drop(g);
    kunit_expect_eq!(still_off, off);
    kunit_expect_eq!(polled, 0);
    // Interrupts on again: the poll runs (at the next interrupt's exit, or when a schedule
    // in process context enables bottom halves again, or from ksoftirqd).
    napi.schedule();
    for _ in 0..100 {
        if napi.data().0.load(Ordering::Relaxed) != 0 {
            break;
        }
        // SAFETY: FFI call without preconditions; a KUnit case runs in process context.
        unsafe { crate::bindings::msleep(10) };
    }
    kunit_expect!(napi.data().0.load(Ordering::Relaxed) >= 1);
}

crate::kunit_suite!(rust_net_napi, [schedule_under_irq_spinlock]);
