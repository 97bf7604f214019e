// SPDX-License-Identifier: GPL-2.0

//! KUnit test suites written in Rust.
//!
//! C header: [`include/kunit/test.h`](srctree/include/kunit/test.h)
//!
//! [`kunit_suite!`](crate::kunit_suite!) turns plain Rust functions into the cases of a KUnit
//! suite and places the suite in the `.kunit_test_suites` section, from which KUnit runs it when
//! the module (or the kernel) containing it is loaded. Its results are reported in KTAP like
//! those of C suites. Inside a case, [`kunit_expect!`](crate::kunit_expect!) and
//! [`kunit_expect_eq!`](crate::kunit_expect_eq!) mark the case failed (and print where and
//! why) without stopping it, like C's `KUNIT_EXPECT_*`.
//!
//! # Examples
//!
//! ```ignore
//! fn adds() {
//!     kernel::kunit_expect_eq!(1 + 1, 2);
//! }
//!
//! kernel::kunit_suite!(example_suite, [adds]);
//! ```

use crate::{bindings, str::CStr};
use core::{cell::UnsafeCell, fmt};

/// One case of a suite (`struct kunit_case`), or the zeroed terminator of the case array.
///
/// Only for [`kunit_suite!`](crate::kunit_suite!).
///
/// # Invariants
///
/// The case's `name` is a static C string or null (terminator); KUnit writes its private
/// fields (status, log) through the [`UnsafeCell`] while running it.
#[repr(transparent)]
pub struct Case(UnsafeCell<bindings::kunit_case>);

/// The cases of a suite followed by the zeroed terminator that KUnit looks for after them
/// (`kunit_suite_for_each_test_case()` stops at the first case without `run_case`): the
/// terminator is in the type, so a suite cannot lack one.
///
/// Only for [`kunit_suite!`](crate::kunit_suite!).
#[repr(C)]
pub struct Cases<const N: usize> {
    cases: [Case; N],
    end: Case,
}

impl<const N: usize> Cases<N> {
    /// `cases`, terminated.
    pub const fn new(cases: [Case; N]) -> Self {
        Self {
            cases,
            end: Case::end(),
        }
    }
}

// SAFETY: Only KUnit writes to a case (its status and log), and Rust code never reads what it
// writes. (Two writers of a suite's debugfs `run` file run it twice at once, and both write
// those fields: KUnit's own race, in C, which no Rust code takes part in.)
unsafe impl Sync for Case {}

impl Case {
    /// A case named `name` that runs `run`.
    ///
    /// `run` is a safe function: KUnit calls it with its own `struct kunit`, which a safe
    /// function cannot misuse (an `unsafe` one could require more of it).
    pub const fn new(name: &'static CStr, run: extern "C" fn(*mut bindings::kunit)) -> Self {
        // INVARIANT: `name` is a static C string.
        Self(UnsafeCell::new(bindings::kunit_case {
            run_case: Some(run as unsafe extern "C" fn(*mut bindings::kunit)),
            name: name.as_char_ptr(),
            // SAFETY: The remaining fields (no parameter generator, no attributes, KUnit's
            // private state) are valid zeroed.
            ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
        }))
    }

    /// The terminator of a case array.
    const fn end() -> Self {
        // SAFETY: A zeroed `kunit_case` is KUnit's end-of-array marker.
        // INVARIANT: The name is null: the terminator.
        Self(UnsafeCell::new(unsafe {
            core::mem::MaybeUninit::zeroed().assume_init()
        }))
    }
}

/// A suite (`struct kunit_suite`).
///
/// Only for [`kunit_suite!`](crate::kunit_suite!).
///
/// # Invariants
///
/// `test_cases` points to the cases of a static [`Cases`], which the terminator follows.
#[repr(transparent)]
pub struct Suite(UnsafeCell<bindings::kunit_suite>);

// SAFETY: KUnit is the only writer of a suite's private fields (status, log, ...), which it
// writes while it runs the suite; Rust code never touches them. As for C suites (plain
// statics), running one suite twice at once (its debugfs `run` file written from two
// threads) is KUnit's own race.
unsafe impl Sync for Suite {}

impl Suite {
    /// A suite named `name` (at most 255 bytes, checked at build time) with the `cases`.
    pub const fn new<const N: usize>(name: &str, cases: &'static Cases<N>) -> Self {
        let bytes = name.as_bytes();
        assert!(
            bytes.len() < 256,
            "KUnit suite names have at most 255 bytes"
        );
        let mut c_name = [0; 256];
        let mut i = 0;
        while i < bytes.len() {
            c_name[i] = bytes[i] as crate::ffi::c_char;
            i += 1;
        }
        // INVARIANT: `cases` is a static `Cases`; its first field is the array of cases
        // (`#[repr(C)]`), each a transparent `kunit_case`, and the terminator follows them
        // with no padding (an array's size is a multiple of its elements' alignment).
        Self(UnsafeCell::new(bindings::kunit_suite {
            name: c_name,
            test_cases: core::ptr::from_ref(cases)
                .cast::<bindings::kunit_case>()
                .cast_mut(),
            // SAFETY: No init/exit hooks and no attributes; KUnit's private state is valid
            // zeroed.
            ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
        }))
    }
}

/// An entry of the `.kunit_test_suites` section: a pointer to a [`Suite`].
///
/// Only for [`kunit_suite!`](crate::kunit_suite!).
#[repr(transparent)]
pub struct SuiteEntry(*const bindings::kunit_suite);

// SAFETY: The pointer is to a static `Suite`, which is `Sync`.
unsafe impl Sync for SuiteEntry {}

impl SuiteEntry {
    /// The entry for `suite`.
    pub const fn new(suite: &'static Suite) -> Self {
        Self(suite.0.get().cast_const())
    }
}

/// Reports a failed expectation of the running case: prints it in KTAP's diagnostic format and
/// marks the case failed. The case goes on running.
///
/// Only for [`kunit_expect!`](crate::kunit_expect!) and
/// [`kunit_expect_eq!`](crate::kunit_expect_eq!).
#[doc(hidden)]
pub fn fail(file: &str, line: u32, args: fmt::Arguments<'_>) {
    // SAFETY: FFI call without preconditions.
    let test = unsafe { bindings::kunit_get_current_test() };
    if test.is_null() {
        crate::kunit::err(format_args!(
            "    # EXPECTATION FAILED at {file}:{line} outside of a KUnit case\n    {args}\n"
        ));
        return;
    }
    // SAFETY: `test` is the running case's `struct kunit`, valid while the case runs (and it
    // runs: this is its thread). Its `name` is a C string KUnit set up.
    let name = unsafe { CStr::from_char_ptr((*test).name) };
    crate::kunit::err(format_args!(
        "    # {name}: EXPECTATION FAILED at {file}:{line}\n    {args}\n"
    ));
    // SAFETY: As above; this is `kunit_set_failure()`, a volatile store of the status that
    // KUnit reads once the case returns.
    unsafe {
        core::ptr::write_volatile(
            core::ptr::addr_of_mut!((*test).status),
            bindings::kunit_status_KUNIT_FAILURE,
        )
    };
}

/// Declares a KUnit suite named `$suite` whose cases are the functions `$case` (each `fn()`).
///
/// The suite runs when the module holding it is loaded (or at boot when built in), with its
/// cases named after the functions.
#[macro_export]
macro_rules! kunit_suite {
    ($suite:ident, [$($case:ident),+ $(,)?]) => {
        const _: () = {
            static CASES: $crate::kunit_suite::Cases<{ [$(stringify!($case)),+].len() }> =
                $crate::kunit_suite::Cases::new([
                $(
                    $crate::kunit_suite::Case::new($crate::c_str!(stringify!($case)), {
                        extern "C" fn run(_test: *mut $crate::bindings::kunit) {
                            $case()
                        }
                        run
                    }),
                )+
                ]);
            static SUITE: $crate::kunit_suite::Suite =
                $crate::kunit_suite::Suite::new(stringify!($suite), &CASES);
            #[used]
            #[link_section = ".kunit_test_suites"]
            static ENTRY: $crate::kunit_suite::SuiteEntry =
                $crate::kunit_suite::SuiteEntry::new(&SUITE);
        };
    };
}

/// Expects `$cond` to hold; otherwise the running KUnit case fails (and goes on).
#[macro_export]
macro_rules! kunit_expect {
    ($cond:expr $(,)?) => {
        if !$cond {
            $crate::kunit_suite::fail(
                ::core::file!(),
                ::core::line!(),
                ::core::format_args!("Expected {} to be true, but is false", stringify!($cond)),
            );
        }
    };
}

/// Expects `$left == $right`; otherwise the running KUnit case fails (and goes on), and both
/// values are printed.
#[macro_export]
macro_rules! kunit_expect_eq {
    ($left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (left, right) => {
                if !(*left == *right) {
                    $crate::kunit_suite::fail(
                        ::core::file!(),
                        ::core::line!(),
                        ::core::format_args!(
                            "Expected {} == {}, but\n        left: {:?}\n        right: {:?}",
                            stringify!($left),
                            stringify!($right),
                            left,
                            right
                        ),
                    );
                }
            }
        }
    };
}
