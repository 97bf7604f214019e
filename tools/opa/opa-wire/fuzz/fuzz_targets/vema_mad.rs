// SPDX-License-Identifier: GPL-2.0
#![no_main]

//! A whole VEMA MAD, as the agent would handle it: decode the header,
//! classify the request, decode its attribute. Never panics; errors map to
//! the MAD status codes VEMA answers with.

use libfuzzer_sys::fuzz_target;
use opa_wire::mad::{VemaMad, VemaOp};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_mac::{IfaceMacsHdr, MacTable, MacTableHdr};

fuzz_target!(|data: &[u8]| {
    let m = match VemaMad::decode(data) {
        Ok(m) => m,
        Err(e) => {
            assert!(matches!(e.mad_status(), 0x0004 | 0x000c | 0x001c));
            return;
        }
    };
    let mut out = vec![0u8; 2048];
    let n = m.encode(&mut out).expect("re-encode");
    assert_eq!(&out[..n], data);
    let rsp = m.hdr.response();
    assert_eq!(rsp.mad_hdr.method, 0x81);
    let _ = m.hdr.vport_num();
    match m.op() {
        Ok(VemaOp::SetClassPortInfo) => {
            if let Ok(c) = ClassPortInfo::decode(m.data) {
                let r = c.vema_response();
                assert_eq!(r.base_version, 0x80);
            }
        }
        Ok(VemaOp::SetVeswPortInfo) => {
            if let Ok(i) = VeswPortInfo::decode(m.data) {
                let mut cur = VeswPortInfo::vema_pod();
                cur.apply_set(&i);
                assert_eq!(cur.vesw, i.vesw);
                let _ = cur.vesw.max_mtu(68);
            }
        }
        Ok(VemaOp::SetMacEntries) => {
            let _ = MacTable::decode(m.data);
        }
        Ok(VemaOp::GetMacEntries) => {
            if let Ok(h) = MacTableHdr::decode(m.data) {
                if let Err(e) = h.check_req() {
                    assert_eq!(e.mad_status(), 0x001c);
                }
            }
        }
        Ok(VemaOp::GetIfaceUcastMacs | VemaOp::GetIfaceMcastMacs) => {
            if let Ok(h) = IfaceMacsHdr::decode(m.data) {
                let _ = h.req_count();
            }
        }
        Ok(_) => {}
        Err(e) => assert_eq!(e.mad_status(), 0x000c),
    }
});
