// SPDX-License-Identifier: GPL-2.0
// expect: E0597
//! A reference read from an `Rcu` lives no longer than the read-side section it was read in.
use kernel::sync::rcu::{Guard, Rcu};

/// What the type refuses.
pub fn read_after_unlock(rcu: &Rcu<u32>) -> u32 {
    let v;
    {
        let guard = Guard::new();
        v = rcu.read(&guard);
    }
    *v
}
