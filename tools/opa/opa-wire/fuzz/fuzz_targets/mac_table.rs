// SPDX-License-Identifier: GPL-2.0
#![no_main]

//! The MAC table entries decoder: never panics; accepted tables pass the
//! range rules and re-encode to the same bytes.

use libfuzzer_sys::fuzz_target;
use opa_wire::vema_mac::{MacTable, MacTableEntry, MacTableHdr};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = MacTableHdr::decode(data) {
        let _ = h.check_req();
    }
    if let Ok(t) = MacTable::decode(data) {
        assert!(t.hdr.check_req().is_ok());
        assert_eq!(t.len(), usize::from(t.hdr.num_entries));
        let entries: Vec<MacTableEntry> = t.entries().collect();
        assert_eq!(entries.len(), t.len());
        let mut out = vec![0u8; 8 + 16 * entries.len()];
        let n = MacTable::encode(&t.hdr, &entries, &mut out).expect("re-encode");
        assert_eq!(&out[..n], &data[..n]);
        for e in &entries {
            let _ = e.lookup(&[0, 1, 2, 3, 4, 5]);
        }
    }
});
