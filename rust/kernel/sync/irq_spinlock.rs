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
//! Nothing in the type stops a holder from sleeping, as nothing stops one under a
//! [`SpinLock`](super::SpinLock): the lock raises the preemption count, so `might_sleep()`
//! reports it (`CONFIG_DEBUG_ATOMIC_SLEEP`). A holder that slept may wake on another CPU; the
//! guard remembers its CPU, and a release elsewhere warns and leaves the counts alone: the
//! releasing CPU's (which this guard never raised, and which must not wrap), and the first
//! CPU's, which no other CPU can safely change. The first CPU's count then stays raised, so
//! from its next guard on, interrupts are not turned back on there: the warning reports a bug
//! the system does not recover from.
//!
//! On PREEMPT_RT a `spinlock_t` is a sleeping lock and interrupt handlers are threads: the
//! lock is then taken as `spin_lock_irq()` takes it there, with interrupts left on.
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
//! assert!(irqs_disabled() || cfg!(CONFIG_PREEMPT_RT));
//! // The outer guard goes first: interrupts stay off until `gb` goes too.
//! drop(ga);
//! assert!(irqs_disabled() || cfg!(CONFIG_PREEMPT_RT));
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
// lock held (`spin_lock()`), and `unlock` releases it with `spin_unlock()`, so the lock excludes
// every other holder. Interrupts stay off from `lock` to `unlock` (except on PREEMPT_RT, where
// interrupt handlers are threads and the helpers do what `spin_lock_irq()` does there): the
// helpers count guards per CPU and only the last one restores the state the first one found.
// A guard is not `Send`, but that alone does not keep it on its CPU: a holder that sleeps
// under the lock (a bug that `might_sleep()` reports) may wake up elsewhere. The guard state
// is the CPU the lock was taken on, and the unlock helper checks it and warns instead of
// touching another CPU's count.
unsafe impl Backend for IrqSpinLockBackend {
    type State = bindings::spinlock_t;
    /// The CPU the lock was taken on.
    type GuardState = u32;

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

    unsafe fn unlock(ptr: *mut Self::State, guard_state: &Self::GuardState) {
        // SAFETY: The caller owns the lock, taken by `lock`, which returned `guard_state`; the
        // helper checks that this is the CPU it names before it touches the CPU's count.
        unsafe { bindings::spin_unlock_irq_nested(ptr, *guard_state) }
    }
}
