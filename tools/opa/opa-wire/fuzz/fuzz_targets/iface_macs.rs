// SPDX-License-Identifier: GPL-2.0
#![no_main]

//! The interface MAC list decoder: never panics; accepted lists hold
//! num_macs_in_msg entries; a response built from them decodes back.

use libfuzzer_sys::fuzz_target;
use opa_wire::vema_mac::{IfaceMacs, IfaceMacsHdr, IFACE_MACS_PER_MAD};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = IfaceMacsHdr::decode(data) {
        assert!(h.req_count() >= 1 && h.req_count() <= IFACE_MACS_PER_MAD);
    }
    if let Ok(m) = IfaceMacs::decode(data) {
        assert_eq!(m.len(), usize::from(m.hdr.num_macs_in_msg));
        let macs: Vec<[u8; 6]> = m.entries().collect();
        let req = IfaceMacsHdr {
            start_idx: 0,
            num_macs_in_msg: m.hdr.num_macs_in_msg,
            ..IfaceMacsHdr::ZERO
        };
        let mut out = vec![0u8; 2008];
        let h = IfaceMacs::encode_response(&req, macs.iter().copied(), m.hdr.gen_count, &mut out)
            .expect("response");
        let back = IfaceMacs::decode(&out).expect("decode response");
        assert_eq!(back.hdr, h);
        if m.hdr.num_macs_in_msg > 0 {
            assert_eq!(back.entries().collect::<Vec<_>>(), macs);
        }
    }
});
