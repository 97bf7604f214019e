// SPDX-License-Identifier: GPL-2.0

//! A spinlock that disables interrupts while held (`spin_lock_irqsave`).
//!
//! C header: [`include/linux/spinlock.h`](srctree/include/linux/spinlock.h)
//!
//! The paths of a software RDMA device run in every context: verbs from process context, the
//! MAD layer's sends with interrupts off, network transmits in softirq context. A lock taken
//! on more than one of them must keep interrupts (and so softirqs) off while held, or an
//! interrupt on the same CPU could spin on a lock its own CPU holds. The 6.12 kernel crate
//! only has the plain [`SpinLock`](crate::sync::SpinLock); this is its `irqsave` twin.

use crate::{bindings, ffi::c_ulong, sync::lock::Backend};

/// Creates an [`IrqSpinLock`] initialiser with the given name and a new lock class.
#[macro_export]
macro_rules! new_irq_spinlock {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::rdma::irqlock::IrqSpinLock::new(
            $inner, $crate::optional_name!($($name)?), $crate::static_lock_class!())
    };
}
pub use new_irq_spinlock;

/// A spinlock held with interrupts disabled; see the module documentation.
pub type IrqSpinLock<T> = crate::sync::lock::Lock<T, IrqSpinLockBackend>;

/// The [`Backend`] of [`IrqSpinLock`]: the guard keeps the saved interrupt flags.
pub struct IrqSpinLockBackend;

// SAFETY: The lock is a `spinlock_t`, initialised by `__spin_lock_init`; `lock` returns with the
// lock held (and interrupts off) and `unlock` releases it, restoring the flags `lock` saved.
unsafe impl Backend for IrqSpinLockBackend {
    type State = bindings::spinlock_t;
    type GuardState = c_ulong;

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const crate::ffi::c_char,
        key: *mut bindings::lock_class_key,
    ) {
        // SAFETY: The safety requirements of `init` are those of `__spin_lock_init`.
        unsafe { bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: The caller guarantees the lock is initialised.
        unsafe { bindings::spin_lock_irqsave_flags(ptr) }
    }

    unsafe fn unlock(ptr: *mut Self::State, flags: &Self::GuardState) {
        // SAFETY: The caller owns the lock, taken by `lock`, which returned `flags`.
        unsafe { bindings::spin_unlock_irqrestore(ptr, *flags) }
    }
}
