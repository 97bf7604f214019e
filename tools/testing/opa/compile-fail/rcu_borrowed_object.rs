// SPDX-License-Identifier: GPL-2.0
// expect: E0597
//! An `Rcu` holds only objects that own what they refer to: the objects its drop leaves to
//! pending RCU callbacks are dropped later by a worker, after the function that dropped the
//! `Rcu` has returned. Here the replaced object's drop would write into a dead frame.
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{prelude::*, sync::rcu::Rcu};

/// Counts its drops through a borrowed counter.
pub struct CountsDrops<'a>(&'a AtomicU32);

impl Drop for CountsDrops<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// What the type refuses.
pub fn borrowed_object() -> Result {
    let drops = AtomicU32::new(0);
    let rcu = KBox::pin_init(Rcu::new(CountsDrops(&drops), GFP_KERNEL), GFP_KERNEL)?;
    rcu.replace(CountsDrops(&drops), GFP_KERNEL)?;
    drop(rcu);
    Ok(())
}
