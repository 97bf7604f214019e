// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rust_rdma_provider` of [`Registration::new`](super::Registration::new)'s
//! checks, which need no device: a name the core would take as a format with other
//! conversions than one `%d` (`sscanf()` into its one `int`, `snprintf()` from it) is refused.
//!
//! Part of the kernel crate's tests (`CONFIG_RUST_KERNEL_DOCTESTS`), run at boot.

use super::is_name_pattern;
use crate::{c_str, kunit_expect_eq};

fn device_names() {
    kunit_expect_eq!(is_name_pattern(c_str!("opasim%d")), true);
    kunit_expect_eq!(is_name_pattern(c_str!("opasim0")), true);
    kunit_expect_eq!(is_name_pattern(c_str!("%d_sim")), true);
    // A string, a long, a second conversion, a lone `%` at the end, `%%`: each would write
    // past the core's `int` or read an argument it does not pass.
    kunit_expect_eq!(is_name_pattern(c_str!("x%s")), false);
    kunit_expect_eq!(is_name_pattern(c_str!("x%ld")), false);
    kunit_expect_eq!(is_name_pattern(c_str!("x%d%d")), false);
    kunit_expect_eq!(is_name_pattern(c_str!("x%")), false);
    kunit_expect_eq!(is_name_pattern(c_str!("x%%d")), false);
}

crate::kunit_suite!(rust_rdma_provider, [device_names]);
