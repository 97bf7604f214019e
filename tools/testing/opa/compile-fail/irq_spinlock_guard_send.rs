// SPDX-License-Identifier: GPL-2.0
// expect: E0277
//! An `IrqSpinLock` guard is released in the task, and on the CPU, that took it: it cannot be
//! sent to another thread.
use kernel::sync::{lock::Guard, IrqSpinLock};

fn must_be_send<T: Send>(_: T) {}

/// What the type refuses.
pub fn send_the_guard(lock: &IrqSpinLock<u32>) {
    must_be_send::<Guard<'_, u32, kernel::sync::irq_spinlock::IrqSpinLockBackend>>(lock.lock());
}
