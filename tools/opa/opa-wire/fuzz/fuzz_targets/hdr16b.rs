// SPDX-License-Identifier: GPL-2.0
#![no_main]

//! The 16B header and whole-packet decoders: never panic; what decodes
//! re-encodes to the same bytes.

use libfuzzer_sys::fuzz_target;
use opa_wire::hdr16b::{decap, Encap, Hdr16b, HDR_LEN, ICRC_TAIL_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = Hdr16b::decode(data) {
        let b = h.to_bytes().expect("a decoded header re-encodes");
        assert_eq!(&b[..], &data[..HDR_LEN]);
        assert_eq!(Hdr16b::decode(&b), Ok(h));
    }
    if let Ok(d) = decap(data) {
        assert_eq!(
            HDR_LEN + d.eth.len() + usize::from(d.pad) + ICRC_TAIL_LEN,
            data.len()
        );
        assert_eq!(usize::from(d.hdr.len_qw) * 8, data.len());
        // A packet the driver would make for this frame has the same
        // header when the decoded one is of the driver's form.
        let h = d.hdr;
        if !h.becn && !h.fecn && h.rsvd_qw1 == 0 && h.rsvd_qw2 == 0 && h.entropy < 256 {
            let e = Encap {
                slid: h.slid,
                dlid: h.dlid,
                sc: h.sc,
                rc: h.rc,
                pkey: h.pkey,
                entropy: h.entropy as u8,
                vesw_id: h.l4_hdr,
            };
            let mut out = vec![0u8; data.len()];
            let n = e.encap_frame(d.eth, &mut out).expect("re-encap");
            assert_eq!(n, data.len());
            assert_eq!(&out[..HDR_LEN], &data[..HDR_LEN]);
            assert_eq!(&out[HDR_LEN..HDR_LEN + d.eth.len()], d.eth);
        }
    }
});
