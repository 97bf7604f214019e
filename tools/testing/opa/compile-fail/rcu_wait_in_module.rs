// SPDX-License-Identifier: GPL-2.0
// expect: E0603
//! A module cannot wait for RCU callbacks or a grace period itself: `rcu::barrier()` and
//! `rcu::synchronize()` are the kernel crate's, whose callers never wait inside a read-side
//! section (where the wait would never end under preemptible RCU). An `Rcu` needs neither:
//! its drop does not wait.
use kernel::sync::rcu::{barrier, Guard};

/// What the crate refuses.
pub fn wait_under_guard() {
    let _guard = Guard::new();
    barrier();
}
