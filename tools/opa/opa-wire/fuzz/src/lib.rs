// SPDX-License-Identifier: GPL-2.0

//! What the fuzz targets share: the target of a fixed-size VEMA structure, the same for
//! each of them.

/// The targets expand [`fixed_size_target!`] to libFuzzer's entry point, through this
/// crate.
pub use libfuzzer_sys;

/// Defines the fuzz target of a fixed-size wire structure: a type with `SIZE`,
/// `decode(&[u8]) -> Result<Self, WireError>` and `to_bytes()`. Decoding never panics;
/// it fails, with `Truncated`, exactly when the input is shorter than `SIZE`; what it
/// decodes re-encodes to the input's first `SIZE` bytes, and those decode to the same
/// value.
///
/// A target's file is its `#![no_main]` and one use of this macro.
#[macro_export]
macro_rules! fixed_size_target {
    ($t:ty) => {
        $crate::libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            match <$t>::decode(data) {
                Ok(v) => {
                    assert!(data.len() >= <$t>::SIZE);
                    assert_eq!(&v.to_bytes()[..], &data[..<$t>::SIZE]);
                    assert_eq!(<$t>::decode(&v.to_bytes()), Ok(v));
                }
                Err(e) => {
                    assert!(data.len() < <$t>::SIZE);
                    assert_eq!(e, ::opa_wire::WireError::Truncated);
                }
            }
        });
    };
}
