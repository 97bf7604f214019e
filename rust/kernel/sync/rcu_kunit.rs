// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rust_sync_rcu` of [`Rcu`]: what readers see, and when replaced objects are
//! freed.
//!
//! Part of the kernel crate's tests (`CONFIG_RUST_KERNEL_DOCTESTS`), run at boot. Readers on
//! other CPUs racing a writer need threads a built-in suite cannot spawn here (a work item's
//! closure type makes a symbol name longer than modpost takes); the `vnic-races` scenario
//! covers them, with transmit reading on two CPUs while the EM replaces the MAC table.

use super::{Guard, Rcu};
use crate::{kunit_expect_eq, prelude::*};
use core::sync::atomic::{AtomicUsize, Ordering};

/// A value that counts its drops in `DROPS`.
struct Counted(u32);

static DROPS: AtomicUsize = AtomicUsize::new(0);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::Relaxed);
    }
}

fn boxed(v: u32) -> KBox<Counted> {
    // A case cannot go on without it; KUnit reports the panic's oops as a failure.
    KBox::new(Counted(v), GFP_KERNEL).expect("allocation")
}

/// A reader sees the object published last, under any number of guards.
fn read_sees_published() {
    let rcu = Rcu::new(boxed(1));
    {
        let g = Guard::new();
        let nested = Guard::new();
        kunit_expect_eq!(rcu.read(&g).0, 1);
        kunit_expect_eq!(rcu.read(&nested).0, 1);
    }
    drop(rcu.replace(boxed(2)));
    let g = Guard::new();
    kunit_expect_eq!(rcu.read(&g).0, 2);
}

/// `replace` hands the old object back (not freed yet), and dropping the `Rcu` frees the
/// current one: each object is dropped exactly once.
fn replaced_objects_are_dropped_once() {
    let before = DROPS.load(Ordering::Relaxed);
    let rcu = Rcu::new(boxed(1));
    let old = rcu.replace(boxed(2));
    kunit_expect_eq!(old.0, 1);
    kunit_expect_eq!(DROPS.load(Ordering::Relaxed) - before, 0);
    drop(old);
    kunit_expect_eq!(DROPS.load(Ordering::Relaxed) - before, 1);
    drop(rcu);
    kunit_expect_eq!(DROPS.load(Ordering::Relaxed) - before, 2);
}

/// `get_mut` changes the current object in place, as readers then see it.
fn get_mut_changes_in_place() {
    let mut rcu = Rcu::new(boxed(1));
    rcu.get_mut().0 = 7;
    let g = Guard::new();
    kunit_expect_eq!(rcu.read(&g).0, 7);
}

crate::kunit_suite!(
    rust_sync_rcu,
    [
        read_sees_published,
        replaced_objects_are_dropped_once,
        get_mut_changes_in_place,
    ]
);
