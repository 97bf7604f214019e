// SPDX-License-Identifier: GPL-2.0
// expect: E0308
//! KUnit reads a suite's cases up to a zeroed terminator: a suite is made only from `Cases`,
//! which always end with one, never from a bare array, which KUnit would read past.
use kernel::kunit_suite::{Case, Suite};

extern "C" fn run(_test: *mut kernel::bindings::kunit) {}

/// One case, and no terminator after it.
pub static CASES: [Case; 1] = [Case::new(kernel::c_str!("only"), run)];
/// A suite of them.
pub static SUITE: Suite = Suite::new("unterminated", &CASES);
