// SPDX-License-Identifier: GPL-2.0
#![no_main]

//! The trap MAD decoder: never panics; an accepted trap re-encodes to the
//! same 136 bytes and its payload decodes.

use libfuzzer_sys::fuzz_target;
use opa_wire::trap::VemaTrapMad;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = VemaTrapMad::decode_trap(data) {
        assert_eq!(&t.to_bytes()[..], &data[..VemaTrapMad::SIZE]);
        let p = t.trap().expect("payload");
        let again = VemaTrapMad::new(t.hdr.mad_hdr.tid, t.notice.issuer_lid, &p);
        assert_eq!(again.trap().expect("payload").opcode, p.opcode);
    }
});
