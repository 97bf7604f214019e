// SPDX-License-Identifier: GPL-2.0
#![no_main]

use libfuzzer_sys::fuzz_target;

use opa_wire::vema_info::VeswInfo as T;

fuzz_target!(|data: &[u8]| {
    match T::decode(data) {
        Ok(v) => {
            assert!(data.len() >= T::SIZE);
            assert_eq!(&v.to_bytes()[..], &data[..T::SIZE]);
            assert_eq!(T::decode(&v.to_bytes()), Ok(v));
        }
        Err(e) => {
            assert!(data.len() < T::SIZE);
            assert_eq!(e, opa_wire::WireError::Truncated);
        }
    }
});
