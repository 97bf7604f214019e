// SPDX-License-Identifier: GPL-2.0

//! The MAD header, the status codes and the trap MAD.

use super::*;

/// MAD header (24) + RMPP header (12) + reserved + OUI: a Get of VESW port
/// info for virtual port 7.
/// Offsets: 0 base_version, 1 mgmt_class, 2 class_version, 3 method,
/// 4 status, 6 class_specific, 8 tid, 16 attr_id, 18 resv, 20 attr_mod,
/// 24 rmpp_version, 25 rmpp_type, 26 rtime_flags, 27 rmpp_status,
/// 28 seg_num, 32 paylen_newwin, 36 reserved, 37 oui.
#[test]
fn golden_mad_header() {
    #[rustfmt::skip]
    let bytes: [u8; 40] = [
        0x80, 0x34, 0x80, 0x01, // base, class, class version, Get
        0x00, 0x00, 0x00, 0x00, // status, class specific
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // tid
        0x00, 0x11, 0x00, 0x00, // attr_id VESWPORT_INFO, resv
        0x00, 0x00, 0x01, 0x07, // attr_mod: vport 7 (bits 8+ ignored)
        0x01, 0x02, 0x03, 0x04, // rmpp version, type, rtime_flags, status
        0x00, 0x00, 0x00, 0x05, // seg_num
        0x00, 0x00, 0x00, 0x06, // paylen_newwin
        0x00, 0x00, 0x06, 0x6a, // reserved, OUI
    ];
    let h = VemaMadHdr::decode(&bytes).unwrap();
    assert_eq!(h.mad_hdr.base_version, OPA_MGMT_BASE_VERSION);
    assert_eq!(h.mad_hdr.mgmt_class, OPA_MGMT_CLASS_INTEL_EMA);
    assert_eq!(h.mad_hdr.class_version, OPA_EMA_CLASS_VERSION);
    assert_eq!(h.mad_hdr.method, METHOD_GET);
    assert_eq!(h.mad_hdr.tid, 0x0102_0304_0506_0708);
    assert_eq!(h.mad_hdr.attr_id, ATTR_VESWPORT_INFO);
    assert_eq!(h.mad_hdr.attr_mod, 0x107);
    assert_eq!(h.vport_num(), 7);
    assert_eq!(h.rmpp_hdr.rmpp_rtime_flags, 3);
    assert_eq!(h.rmpp_hdr.seg_num, 5);
    assert_eq!(h.rmpp_hdr.paylen_newwin, 6);
    assert_eq!(h.oui, INTEL_OUI);
    assert_eq!(h.to_bytes(), bytes);

    let mut mad = bytes.to_vec();
    mad.extend(std::iter::repeat(0).take(OPA_VNIC_EMA_DATA));
    let m = VemaMad::decode(&mad).unwrap();
    assert_eq!(m.data.len(), 2008);
    assert_eq!(m.op(), Ok(VemaOp::GetVeswPortInfo));

    // RMPP is active in this header (flags 3): the answer is one MAD, its RMPP header zero.
    let rsp = h.response().to_bytes();
    let mut want = bytes;
    want[3] = 0x81; // GetResp
    want[24..36].fill(0);
    assert_eq!(rsp, want);

    let mut bad = bytes;
    bad[0] = 0x01;
    assert_eq!(VemaMad::decode(&bad), Err(WireError::BadBaseVersion(1)));
    assert_eq!(WireError::BadBaseVersion(1).mad_status(), 0x0004);
    let mut bad = bytes;
    bad[1] = 0x81;
    assert_eq!(VemaMad::decode(&bad), Err(WireError::BadMgmtClass(0x81)));
    let mut bad = bytes;
    bad[2] = 0x01;
    assert_eq!(VemaMad::decode(&bad), Err(WireError::BadClassVersion(1)));
    let mut bad = bytes;
    bad[39] = 0x6b;
    assert_eq!(VemaMad::decode(&bad), Err(WireError::BadOui));
    assert_eq!(VemaMad::decode(&bytes[..39]), Err(WireError::Truncated));
    let long = vec![0u8; 2049];
    assert_eq!(VemaMad::decode(&long), Err(WireError::MadTooLong));
}

/// Methods and attributes the C driver handles, and the status it answers
/// for the others.
#[test]
fn golden_status_codes() {
    use VemaOp::*;
    let ok = [
        (METHOD_GET, 0x0001, GetClassPortInfo),
        (METHOD_SET, 0x0001, SetClassPortInfo),
        (METHOD_GET, 0x0011, GetVeswPortInfo),
        (METHOD_SET, 0x0011, SetVeswPortInfo),
        (METHOD_GET, 0x0012, GetMacEntries),
        (METHOD_SET, 0x0012, SetMacEntries),
        (METHOD_GET, 0x0013, GetIfaceUcastMacs),
        (METHOD_GET, 0x0014, GetIfaceMcastMacs),
        (METHOD_SET, 0x0015, SetDeleteVesw),
        (METHOD_GET, 0x0020, GetSummaryCounters),
        (METHOD_GET, 0x0022, GetErrorCounters),
    ];
    for (m, a, op) in ok {
        assert_eq!(VemaOp::classify(m, a), Ok(op));
    }
    for (m, a) in [
        (METHOD_SET, 0x0013),
        (METHOD_SET, 0x0014),
        (METHOD_GET, 0x0015),
        (METHOD_SET, 0x0020),
        (METHOD_SET, 0x0022),
        (METHOD_GET, 0x0002),
        (METHOD_GET, 0x0021),
    ] {
        let e = VemaOp::classify(m, a).unwrap_err();
        assert_eq!(e, WireError::UnsupportedAttribute(a));
        assert_eq!(e.mad_status(), 0x000c);
    }
    for m in [0x00, METHOD_SEND, METHOD_TRAP, METHOD_GET_RESP, 0x7f] {
        let e = VemaOp::classify(m, ATTR_VESWPORT_INFO).unwrap_err();
        assert_eq!(e, WireError::UnsupportedMethod(m));
        assert_eq!(e.mad_status(), 0x000c);
    }
    assert_eq!(WireError::NoSuchVport(3).mad_status(), 0x001c);
    assert_eq!(WireError::TooManyEntries(126).mad_status(), 0x001c);
    assert_eq!(WireError::Busy.mad_status(), 0x0001);
    assert!(!GetVeswPortInfo.rejects_missing_vport());
    assert!(!SetVeswPortInfo.rejects_missing_vport());
    assert!(GetMacEntries.rejects_missing_vport());
    assert!(SetDeleteVesw.rejects_missing_vport());
    assert!(!GetClassPortInfo.needs_vport());
}

/// The trap MAD of opa_vnic_vema_send_trap(), 136 bytes (sent as 272):
/// vendor header (base 0x80, class 0x34, version 0x80, method Trap 0x05,
/// tid, attr Notice 0x0002, OUI), then the Notice at 40: 40 gen_type
/// (0x04 << 1), 41 OUI, 44 trap_num, 46 toggle_count, 48 issuer_lid,
/// 52 reserved, 56 issuer_gid, 72 raw_data; the payload in raw_data: 0
/// fabric_id, 2 veswid, 4 veswportnum, 8 opaportnum, 10 veswportindex,
/// 11 opcode, 12 reserved.
#[test]
fn golden_trap() {
    let mut want = [0u8; 136];
    #[rustfmt::skip]
    at(&mut want, 0, &[
        0x80, 0x34, 0x80, 0x05, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
        0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]);
    at(&mut want, 37, &[0x00, 0x06, 0x6a]);
    #[rustfmt::skip]
    at(&mut want, 40, &[
        0x08, 0x00, 0x06, 0x6a, 0x00, 0x00, 0x00, 0x00,
        0x00, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00,
    ]);
    #[rustfmt::skip]
    at(&mut want, 72, &[
        0x03, 0xff, 0x0a, 0xbc, 0x11, 0x22, 0x33, 0x44,
        0x00, 0x01, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00,
    ]);
    let payload = VeswPortTrap {
        fabric_id: 0x3ff,
        veswid: 0xabc,
        veswportnum: 0x1122_3344,
        opaportnum: 1,
        veswportindex: 2,
        opcode: TRAP_ETH_LINK_STATUS_CHANGE,
        reserved: 0x5555_5555, // not sent: the C driver leaves it zero
    };
    let t = VemaTrapMad::new(0x0102_0304_0506_0708, 0x00ab_cdef, &payload);
    assert_eq!(t.to_bytes(), want);
    let mut mad = [0xffu8; 300];
    assert_eq!(t.encode_mad(&mut mad), Ok(272));
    assert_eq!(&mad[..136], &want[..]);
    assert!(mad[136..272].iter().all(|&b| b == 0));
    assert_eq!(mad[272], 0xff);

    let d = VemaTrapMad::decode_trap(&mad[..272]).unwrap();
    assert_eq!(d, t);
    let p = d.trap().unwrap();
    assert_eq!(
        p,
        VeswPortTrap {
            reserved: 0,
            ..payload
        }
    );
    assert_eq!(d.notice.issuer_lid, 0xab_cdef);
    assert_eq!(d.notice.gen_type, 0x08);

    let mut bad = want;
    bad[3] = 0x01;
    assert_eq!(
        VemaTrapMad::decode_trap(&bad),
        Err(WireError::UnsupportedMethod(1))
    );
    let mut bad = want;
    bad[17] = 0x03;
    assert_eq!(
        VemaTrapMad::decode_trap(&bad),
        Err(WireError::UnsupportedAttribute(3))
    );
    let mut bad = want;
    bad[43] = 0x00;
    assert_eq!(VemaTrapMad::decode_trap(&bad), Err(WireError::NotVnicTrap));
    assert_eq!(VeswPortTrap::SIZE, 16);
    assert_eq!(NoticeAttr::SIZE, 96);
}
