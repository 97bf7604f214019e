// SPDX-License-Identifier: GPL-2.0

//! A spinlock that keeps interrupts disabled while held.
//!
//! C header: [`include/linux/spinlock.h`](srctree/include/linux/spinlock.h)
//!
//! A lock taken both in process context and in an interrupt or softirq handler must keep
//! interrupts off while held, or an interrupt on the same CPU could spin on a lock its own CPU
//! holds. The 6.12 kernel crate only has the plain [`SpinLock`](super::SpinLock).
//!
//! C's `spin_lock_irqsave()` keeps the interrupt state it found in each lock's caller, which
//! relies on the locks being released in the reverse order of taking them: releasing an
//! outer lock first would turn interrupts back on while an inner one is still held. Guards
//! can be dropped in any order in safe Rust, so this lock counts instead: the first guard on
//! a CPU saves the interrupt state, and only the last one to go restores it (as the
//! `local_interrupt_disable()` proposals for Rust do).
//!
//! # Examples
//!
//! ```
//! use kernel::sync::{irq_spinlock::irqs_disabled, new_irq_spinlock, IrqSpinLock};
//! use kernel::prelude::*;
//!
//! let a = KBox::pin_init(new_irq_spinlock!(1u32), GFP_KERNEL)?;
//! let b = KBox::pin_init(new_irq_spinlock!(2u32), GFP_KERNEL)?;
//! let before = irqs_disabled();
//! let ga = a.lock();
//! let gb = b.lock();
//! assert!(irqs_disabled());
//! // The outer guard goes first: interrupts stay off until `gb` goes too.
//! drop(ga);
//! assert!(irqs_disabled());
//! assert_eq!(*gb, 2);
//! drop(gb);
//! assert_eq!(irqs_disabled(), before);
//! # Ok::<(), Error>(())
//! ```

use super::lock::{Backend, Lock};
use crate::bindings;

/// Creates an [`IrqSpinLock`] initialiser with the given name and a new lock class.
#[macro_export]
macro_rules! new_irq_spinlock {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::sync::IrqSpinLock::new(
            $inner, $crate::optional_name!($($name)?), $crate::static_lock_class!())
    };
}
pub use new_irq_spinlock;

/// A spinlock held with interrupts disabled; see the module documentation.
pub type IrqSpinLock<T> = Lock<T, IrqSpinLockBackend>;

/// Whether interrupts are disabled on this CPU (`irqs_disabled()`).
pub fn irqs_disabled() -> bool {
    // SAFETY: FFI call without preconditions.
    unsafe { bindings::irqs_disabled() }
}

/// The [`Backend`] of [`IrqSpinLock`].
pub struct IrqSpinLockBackend;

// SAFETY: The lock is a `spinlock_t`, initialised by `__spin_lock_init`; `lock` returns with the
// lock held and interrupts off (counted per CPU), `unlock` releases it and restores the
// interrupt state when the CPU's count drops to zero. Guards are not `Send`, so a guard is
// dropped on the CPU that took it (interrupts are off in between, so it cannot migrate).
unsafe impl Backend for IrqSpinLockBackend {
    type State = bindings::spinlock_t;
    type GuardState = ();

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
        unsafe { bindings::spin_lock_irq_nested(ptr) }
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: The caller owns the lock, taken by `lock` on this CPU.
        unsafe { bindings::spin_unlock_irq_nested(ptr) }
    }
}
