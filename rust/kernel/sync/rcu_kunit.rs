// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rust_sync_rcu` of [`Rcu`]: what readers see, and when replaced objects are
//! dropped.
//!
//! Part of the kernel crate's tests (`CONFIG_RUST_KERNEL_DOCTESTS`), run at boot. Readers on
//! other CPUs racing a writer need threads a built-in suite cannot spawn here (a work item's
//! closure type makes a symbol name longer than modpost takes); the `vnic-races` scenario
//! covers them, with transmit reading on two CPUs while the EM replaces the MAC table.

use super::{barrier, wait_for_orphans, Guard, Prepared, Rcu};
use crate::{kunit_expect, kunit_expect_eq, prelude::*};
use core::sync::atomic::{AtomicU8, Ordering};

/// The values the cases use: `Counted(v)` for `v` below this.
const VALUES: usize = 128;

/// How many times each `Counted(v)` was dropped, by `v`.
static DROPS: [AtomicU8; VALUES] = [const { AtomicU8::new(0) }; VALUES];

/// A value that counts its drops in [`DROPS`].
struct Counted(usize);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS[self.0].fetch_add(1, Ordering::Relaxed);
    }
}

/// Starts a case: objects the previous cases' `Rcu`s left to their callbacks are dropped
/// first, then the counts cleared.
fn reset() {
    // SAFETY: A KUnit case runs in process context, outside any read-side section, with no
    // lock held.
    unsafe { wait_for_orphans() };
    for d in &DROPS {
        d.store(0, Ordering::Relaxed);
    }
}

/// Drops of the values `lo..hi`, in total.
fn drops(lo: usize, hi: usize) -> usize {
    DROPS[lo..hi]
        .iter()
        .map(|d| usize::from(d.load(Ordering::Relaxed)))
        .sum()
}

fn new_rcu(v: usize) -> Pin<KBox<Rcu<Counted>>> {
    // A case cannot go on without it; KUnit reports the panic's oops as a failure.
    KBox::pin_init(Rcu::new(Counted(v), GFP_KERNEL), GFP_KERNEL).expect("allocation")
}

/// A reader sees the object published last, under any number of guards.
fn read_sees_published() {
    reset();
    let rcu = new_rcu(1);
    {
        let g = Guard::new();
        let nested = Guard::new();
        kunit_expect_eq!(rcu.read(&g).0, 1);
        kunit_expect_eq!(rcu.read(&nested).0, 1);
    }
    kunit_expect_eq!(rcu.replace(Counted(2), GFP_KERNEL), Ok(()));
    let g = Guard::new();
    kunit_expect_eq!(rcu.read(&g).0, 2);
}

/// A reader's own section: `replace` does not wait in it, and neither the object the reader
/// holds nor any object replaced after it is dropped while the section lasts.
fn replace_in_own_read_section() {
    reset();
    let rcu = new_rcu(0);
    {
        let g = Guard::new();
        let held = rcu.read(&g);
        // The section must not sleep: an allocation that does not.
        for v in 1..100 {
            kunit_expect_eq!(rcu.replace(Counted(v), GFP_ATOMIC), Ok(()));
        }
        kunit_expect_eq!(held.0, 0);
        kunit_expect_eq!(rcu.read(&g).0, 99);
        kunit_expect_eq!(drops(0, VALUES), 0);
    }
    // Every callback queued so far has run: the 99 replaced objects wait on the list, for
    // the next writer.
    barrier();
    kunit_expect_eq!(drops(0, VALUES), 0);
    kunit_expect_eq!(rcu.replace(Counted(100), GFP_KERNEL), Ok(()));
    kunit_expect_eq!(drops(0, 99), 99);
    // 99, replaced by that call, is dropped by it only if its grace period ended meanwhile
    // (the test thread preempted between the retiring and the drops): at most once, and the
    // current object not at all.
    kunit_expect!(drops(99, 100) <= 1);
    kunit_expect_eq!(drops(100, VALUES), 0);
}

/// An object replaced many times in a loop: each object is dropped exactly once, the last
/// ones by the work that the `Rcu`'s drop leaves them to, which a module's exit waits for.
fn replaced_objects_are_dropped_once() {
    reset();
    let rcu = new_rcu(0);
    for v in 1..VALUES {
        kunit_expect_eq!(rcu.replace(Counted(v), GFP_KERNEL), Ok(()));
    }
    kunit_expect_eq!(DROPS[VALUES - 1].load(Ordering::Relaxed), 0);
    drop(rcu);
    kunit_expect_eq!(DROPS[VALUES - 1].load(Ordering::Relaxed), 1);
    // SAFETY: A KUnit case runs in process context, outside any read-side section, with no
    // lock held.
    unsafe { wait_for_orphans() };
    for (v, d) in DROPS.iter().enumerate() {
        kunit_expect_eq!((v, d.load(Ordering::Relaxed)), (v, 1));
    }
}

/// An `Rcu` dropped inside a read-side section in which it replaced objects: the drop does
/// not wait (a wait would never end under preemptible RCU, or end the grace period under
/// the section without it), and none of those objects is dropped before the section ends.
fn drop_in_read_section() {
    reset();
    let rcu = new_rcu(0);
    {
        let _g = Guard::new();
        for v in 1..10 {
            kunit_expect_eq!(rcu.replace(Counted(v), GFP_ATOMIC), Ok(()));
        }
        drop(rcu);
        // The current object goes with the `Rcu`; those it replaced wait for a grace period
        // that began after `_g`'s section.
        kunit_expect_eq!(drops(0, 9), 0);
        kunit_expect_eq!(drops(9, 10), 1);
    }
    // SAFETY: As in `replaced_objects_are_dropped_once`, now that `_g` is gone.
    unsafe { wait_for_orphans() };
    for (v, d) in DROPS.iter().enumerate().take(10) {
        kunit_expect_eq!((v, d.load(Ordering::Relaxed)), (v, 1));
    }
    kunit_expect_eq!(drops(10, VALUES), 0);
}

/// An `Rcu` whose callbacks have all run when it is dropped drops every object itself.
fn drop_after_callbacks() {
    reset();
    let rcu = new_rcu(0);
    for v in 1..10 {
        kunit_expect_eq!(rcu.replace(Counted(v), GFP_KERNEL), Ok(()));
    }
    barrier();
    drop(rcu);
    kunit_expect_eq!(drops(0, 10), 10);
    // Nothing is left to wait for.
    // SAFETY: As in `replaced_objects_are_dropped_once`.
    unsafe { wait_for_orphans() };
    kunit_expect_eq!(drops(0, VALUES), 10);
}

/// Objects prepared for two `Rcu`s: nothing changes until each is published, publishing
/// cannot fail, and one prepared but never published is dropped with nothing else touched
/// (a writer that changes both, or neither when the second allocation fails).
fn prepared_publish_changes_both_or_neither() {
    reset();
    let a = new_rcu(0);
    let b = new_rcu(1);
    let next_a = Prepared::new(Counted(2), GFP_KERNEL).expect("allocation");
    let unused = Prepared::new(Counted(3), GFP_KERNEL).expect("allocation");
    {
        let g = Guard::new();
        kunit_expect_eq!((a.read(&g).0, b.read(&g).0), (0, 1));
    }
    // The writer gives up: what it prepared goes, the `Rcu`s keep what they had.
    drop((next_a, unused));
    kunit_expect_eq!((drops(2, 3), drops(3, 4)), (1, 1));
    kunit_expect_eq!(drops(0, 2), 0);
    // Both prepared, then both published.
    let next_a = Prepared::new(Counted(4), GFP_KERNEL).expect("allocation");
    let next_b = Prepared::new(Counted(5), GFP_KERNEL).expect("allocation");
    a.publish(next_a);
    b.publish(next_b);
    {
        let g = Guard::new();
        kunit_expect_eq!((a.read(&g).0, b.read(&g).0), (4, 5));
    }
    drop((a, b));
    // SAFETY: As in `replaced_objects_are_dropped_once`.
    unsafe { wait_for_orphans() };
    for (v, d) in DROPS.iter().enumerate().take(6) {
        kunit_expect_eq!((v, d.load(Ordering::Relaxed)), (v, 1));
    }
    kunit_expect_eq!(drops(6, VALUES), 0);
}

crate::kunit_suite!(
    rust_sync_rcu,
    [
        read_sees_published,
        replace_in_own_read_section,
        replaced_objects_are_dropped_once,
        drop_in_read_section,
        drop_after_callbacks,
        prepared_publish_changes_both_or_neither,
    ]
);
