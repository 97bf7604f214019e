// SPDX-License-Identifier: GPL-2.0

//! Golden vectors of the VEMA MADs: for each attribute a byte array with
//! known field values placed by hand at the offsets of the C struct layout
//! (opa_vnic_encap.h, ib_mad.h), big-endian, never produced by the encoder.
//! Each test checks that decode reads those values from those offsets and
//! that encode gives back the same bytes.

use opa_wire::mad::*;
use opa_wire::trap::*;
use opa_wire::vema_counters::*;
use opa_wire::vema_info::*;
use opa_wire::vema_mac::*;
use opa_wire::WireError;

/// Writes `bytes` at `off`.
fn at(buf: &mut [u8], off: usize, bytes: &[u8]) {
    buf[off..off + bytes.len()].copy_from_slice(bytes);
}

/// A buffer whose every byte differs from its neighbours, so that a field
/// read from the wrong offset shows.
fn pattern(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(0x11))
        .collect()
}

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
    assert!(!GetVeswPortInfo.rejects_missing_vport());
    assert!(!SetVeswPortInfo.rejects_missing_vport());
    assert!(GetMacEntries.rejects_missing_vport());
    assert!(SetDeleteVesw.rejects_missing_vport());
    assert!(!GetClassPortInfo.needs_vport());
}

/// ClassPortInfo, 80 bytes. Offsets: 0 base_version, 1 class_version,
/// 2 cap_mask, 4 cap_mask2_resp_time, 8 redirect_gid, 24 redirect_tc_fl,
/// 28 redirect_lid, 32 redirect_sl_qp, 36 redirect_qkey, 40 trap_gid,
/// 56 trap_tc_fl, 60 trap_lid, 64 trap_hl_qp, 68 trap_qkey, 72 trap_pkey,
/// 74 redirect_pkey, 76 trap_sl_rsvd, 77 reserved.
#[test]
fn golden_class_port_info() {
    let mut b = pattern(ClassPortInfo::SIZE);
    at(&mut b, 0, &[0x80, 0x80]);
    at(&mut b, 2, &[0xff, 0x01]);
    at(&mut b, 4, &[0x00, 0x00, 0x00, 0x12]);
    at(&mut b, 60, &[0x00, 0x00, 0x12, 0x34]);
    at(&mut b, 72, &[0x7f, 0xff]);
    at(&mut b, 76, &[0xa8]); // SL 21 in bits 3-7
    let c = ClassPortInfo::decode(&b).unwrap();
    assert_eq!(c.base_version, 0x80);
    assert_eq!(c.cap_mask, 0xff01);
    assert_eq!(c.cap_mask2_resp_time, 18);
    assert_eq!(c.redirect_gid[..], b[8..24]);
    assert_eq!(c.redirect_tc_fl.to_be_bytes(), b[24..28]);
    assert_eq!(c.redirect_qkey.to_be_bytes(), b[36..40]);
    assert_eq!(c.trap_gid[..], b[40..56]);
    assert_eq!(c.trap_lid, 0x1234);
    assert_eq!(c.trap_qkey.to_be_bytes(), b[68..72]);
    assert_eq!(c.trap_pkey, 0x7fff);
    assert_eq!(c.redirect_pkey.to_be_bytes(), b[74..76]);
    assert_eq!(c.trap_sl(), 21);
    assert_eq!(c.reserved[..], b[77..80]);
    assert_eq!(c.to_bytes()[..], b[..]);

    // What VEMA answers to a Get after a Set of all zero.
    let rsp = ClassPortInfo::ZERO.vema_response().to_bytes();
    let mut want = [0u8; 80];
    at(
        &mut want,
        0,
        &[0x80, 0x80, 0xff, 0x01, 0x00, 0x00, 0x00, 0x12],
    );
    assert_eq!(rsp, want);
}

/// VESW info, 152 bytes. Offsets: 0 fabric_id, 2 vesw_id, 4 rsvd0[6],
/// 10 def_port_mask, 12 rsvd1[2], 14 pkey, 16 rsvd2[4], 20 u_mcast_dlid,
/// 24 u_ucast_dlid[16], 88 rc, 92 rsvd3[56], 148 eth_mtu, 150 rsvd4[2].
fn vesw_bytes() -> Vec<u8> {
    let mut b = pattern(VeswInfo::SIZE);
    at(&mut b, 0, &[0x03, 0xff]);
    at(&mut b, 2, &[0x0a, 0xbc]);
    at(&mut b, 10, &[0x80, 0x05]);
    at(&mut b, 14, &[0xff, 0xff]);
    at(&mut b, 20, &[0x00, 0xc0, 0x00, 0x01]);
    for i in 0..16u8 {
        at(&mut b, 24 + 4 * usize::from(i), &[0, 0, 0x10, i]);
    }
    at(&mut b, 88, &[0x07, 0x65, 0x43, 0x21]);
    at(&mut b, 148, &[0x23, 0x28]); // 9000
    b
}

fn check_vesw(v: &VeswInfo, b: &[u8]) {
    assert_eq!(v.fabric_id, 0x3ff);
    assert_eq!(v.vesw_id, 0xabc);
    assert_eq!(v.rsvd0[..], b[4..10]);
    assert_eq!(v.def_port_mask, 0x8005);
    assert_eq!(v.rsvd1[..], b[12..14]);
    assert_eq!(v.pkey, 0xffff);
    assert_eq!(v.rsvd2[..], b[16..20]);
    assert_eq!(v.u_mcast_dlid, 0xc0_0001);
    for i in 0..16u32 {
        assert_eq!(v.u_ucast_dlid[i as usize], 0x1000 | i);
    }
    assert_eq!(v.rc, 0x0765_4321);
    assert_eq!(v.rsvd3[..], b[92..148]);
    assert_eq!(v.eth_mtu, 9000);
    assert_eq!(v.rsvd4[..], b[150..152]);
}

#[test]
fn golden_vesw_info() {
    let b = vesw_bytes();
    let v = VeswInfo::decode(&b).unwrap();
    check_vesw(&v, &b);
    assert_eq!(v.to_bytes()[..], b[..]);
}

/// Per-vesw-port info, 128 bytes. Offsets: 0 port_num, 4 eth_link_status,
/// 5 rsvd0[3], 8 base_mac_addr, 14 config_state, 15 oper_state,
/// 16 max_mac_tbl_ent, 18 max_smac_ent, 20 mac_tbl_digest, 24 rsvd1[4],
/// 28 encap_slid, 32 pcp_to_sc_uc, 40 pcp_to_vl_uc, 48 pcp_to_sc_mc,
/// 56 pcp_to_vl_mc, 64 non_vlan_sc_uc, 65 non_vlan_vl_uc, 66
/// non_vlan_sc_mc, 67 non_vlan_vl_mc, 68 rsvd2[48], 116 uc_macs_gen_count,
/// 118 mc_macs_gen_count, 120 rsvd3[8].
fn vport_bytes() -> Vec<u8> {
    let mut b = pattern(PerVeswPortInfo::SIZE);
    at(&mut b, 0, &[0, 0, 0, 9]);
    at(&mut b, 4, &[1]);
    at(&mut b, 8, &[0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
    at(&mut b, 14, &[3, 1]);
    at(&mut b, 16, &[0x08, 0x00, 0x01, 0x00]);
    at(&mut b, 20, &[0xde, 0xad, 0xbe, 0xef]);
    at(&mut b, 28, &[0x00, 0xa1, 0x23, 0x45]);
    at(&mut b, 32, &[0, 1, 2, 3, 4, 5, 6, 7]);
    at(&mut b, 40, &[10, 11, 12, 13, 14, 15, 16, 17]);
    at(&mut b, 48, &[20, 21, 22, 23, 24, 25, 26, 27]);
    at(&mut b, 56, &[30, 31, 0, 1, 2, 3, 4, 5]);
    at(&mut b, 64, &[8, 9, 18, 19]);
    at(&mut b, 116, &[0x12, 0x34, 0x56, 0x78]);
    b
}

fn check_vport(p: &PerVeswPortInfo, b: &[u8]) {
    assert_eq!(p.port_num, 9);
    assert_eq!(p.eth_link_status, ETH_LINK_UP);
    assert_eq!(p.rsvd0[..], b[5..8]);
    assert_eq!(p.base_mac_addr, [0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
    assert_eq!(p.config_state, STATE_FORWARDING);
    assert_eq!(p.oper_state, STATE_DROP_ALL);
    assert_eq!(p.max_mac_tbl_ent, 2048);
    assert_eq!(p.max_smac_ent, 256);
    assert_eq!(p.mac_tbl_digest, 0xdead_beef);
    assert_eq!(p.rsvd1[..], b[24..28]);
    assert_eq!(p.encap_slid, 0xa1_2345);
    assert_eq!(p.pcp_to_sc_uc, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(p.pcp_to_vl_uc, [10, 11, 12, 13, 14, 15, 16, 17]);
    assert_eq!(p.pcp_to_sc_mc, [20, 21, 22, 23, 24, 25, 26, 27]);
    assert_eq!(p.pcp_to_vl_mc, [30, 31, 0, 1, 2, 3, 4, 5]);
    assert_eq!(
        [
            p.non_vlan_sc_uc,
            p.non_vlan_vl_uc,
            p.non_vlan_sc_mc,
            p.non_vlan_vl_mc
        ],
        [8, 9, 18, 19]
    );
    assert_eq!(p.rsvd2[..], b[68..116]);
    assert_eq!(p.uc_macs_gen_count, 0x1234);
    assert_eq!(p.mc_macs_gen_count, 0x5678);
    assert_eq!(p.rsvd3[..], b[120..128]);
}

#[test]
fn golden_per_veswport_info() {
    let b = vport_bytes();
    let p = PerVeswPortInfo::decode(&b).unwrap();
    check_vport(&p, &b);
    assert_eq!(p.to_bytes()[..], b[..]);
}

/// VESW port info (attribute 0x0011), 280 bytes: vesw info at 0, per-port
/// info at 152.
#[test]
fn golden_veswport_info() {
    let mut b = vesw_bytes();
    b.extend(vport_bytes());
    assert_eq!(b.len(), 280);
    let i = VeswPortInfo::decode(&b).unwrap();
    check_vesw(&i.vesw, &b[..152]);
    check_vport(&i.vport, &b[152..]);
    assert_eq!(i.to_bytes()[..], b[..]);

    // Power-on defaults VEMA answers: max_mac_tbl_ent 2048 at 152+16,
    // max_smac_ent 256 at 152+18, config_state/oper_state 1 at 152+14/15,
    // eth_mtu 1500 at 148.
    let mut want = [0u8; 280];
    at(&mut want, 148, &[0x05, 0xdc]);
    at(&mut want, 166, &[1, 1, 0x08, 0x00, 0x01, 0x00]);
    assert_eq!(VeswPortInfo::vema_pod().to_bytes(), want);
}

/// MAC table entries (attribute 0x0012): header 8 bytes (0 offset,
/// 2 num_entries, 4 mac_tbl_digest), then 16-byte entries (0 mac_addr,
/// 6 mac_addr_mask, 12 dlid_sd).
#[test]
fn golden_mac_table() {
    #[rustfmt::skip]
    let b: [u8; 40] = [
        0x07, 0xd0, 0x00, 0x02, 0x01, 0x02, 0x03, 0x04, // offset 2000, 2 entries, digest
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // entry 0 MAC
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // mask
        0x00, 0x12, 0x34, 0x00,             // DLID 0x1234, sd 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // entry 1: all-zero MAC (delete)
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x56, 0x20,             // DLID 0x56, source MAC bit
    ];
    let t = MacTable::decode(&b).unwrap();
    assert_eq!(
        t.hdr,
        MacTableHdr {
            offset: 2000,
            num_entries: 2,
            mac_tbl_digest: 0x0102_0304
        }
    );
    assert_eq!(t.len(), 2);
    let e0 = t.entry(0).unwrap();
    assert_eq!(e0.mac_addr, [0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    assert_eq!(e0.mac_addr_mask, [0xff; 6]);
    assert_eq!(e0.dlid(), 0x1234);
    assert!(!e0.is_src_mac() && !e0.is_delete());
    assert_eq!(
        e0.lookup(&[0x00, 0x11, 0x22, 0x33, 0x44, 0x55]),
        Some(0x1234)
    );
    assert_eq!(e0.lookup(&[0x00, 0x11, 0x22, 0x33, 0x44, 0x56]), None);
    let e1 = t.entry(1).unwrap();
    assert!(e1.is_src_mac() && e1.is_delete());
    assert_eq!(e1.lookup(&[0; 6]), None);
    assert!(t.entry(2).is_none());
    assert_eq!(MacTableEntry::SIZE, 16);

    let entries: Vec<MacTableEntry> = t.entries().collect();
    let mut out = [0u8; 64];
    let n = MacTable::encode(&t.hdr, &entries, &mut out).unwrap();
    assert_eq!(&out[..n], &b[..]);
    assert!(t.hdr.covers(2000) && t.hdr.covers(2001));
    assert!(!t.hdr.covers(1999) && !t.hdr.covers(2002));

    // Truncated entries.
    assert_eq!(MacTable::decode(&b[..39]), Err(WireError::Truncated));
}

/// The range rules of vema_mac_tbl_req_ok(): at most 125 entries,
/// offset + num_entries <= 2048; both answer 0x001c.
#[test]
fn golden_mac_table_range_rules() {
    let h = |offset, num_entries| MacTableHdr {
        offset,
        num_entries,
        mac_tbl_digest: 0,
    };
    assert_eq!(MAC_TBL_ENTRIES_PER_MAD, 125);
    assert_eq!(h(0, 125).check_req(), Ok(()));
    assert_eq!(h(1923, 125).check_req(), Ok(()));
    assert_eq!(h(2048, 0).check_req(), Ok(()));
    assert_eq!(h(0, 126).check_req(), Err(WireError::TooManyEntries(126)));
    let e = h(1924, 125).check_req().unwrap_err();
    assert_eq!(
        e,
        WireError::OffsetOutOfRange {
            offset: 1924,
            num_entries: 125
        }
    );
    assert_eq!(e.mad_status(), 0x001c);
    assert!(h(2049, 0).check_req().is_err());
    assert!(h(0xffff, 1).check_req().is_err());
    let mut b = [0u8; 2008];
    b[..4].copy_from_slice(&[0x00, 0x00, 0x00, 0x7e]);
    assert_eq!(MacTable::decode(&b), Err(WireError::TooManyEntries(126)));
}

/// Interface MAC lists (attributes 0x0013 and 0x0014): header 8 bytes
/// (0 start_idx, 2 num_macs_in_msg, 4 tot_macs_in_lst, 6 gen_count), then
/// 6-byte MACs.
#[test]
fn golden_iface_macs() {
    #[rustfmt::skip]
    let b: [u8; 20] = [
        0x00, 0x01, 0x00, 0x02, 0x00, 0x05, 0x12, 0x34,
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x33, 0x33, 0x00, 0x00, 0x00, 0x01,
    ];
    let m = IfaceMacs::decode(&b).unwrap();
    assert_eq!(
        m.hdr,
        IfaceMacsHdr {
            start_idx: 1,
            num_macs_in_msg: 2,
            tot_macs_in_lst: 5,
            gen_count: 0x1234
        }
    );
    assert_eq!(m.entry(0), Some([0x02, 0, 0, 0, 0, 1]));
    assert_eq!(m.entry(1), Some([0x33, 0x33, 0, 0, 0, 1]));
    assert_eq!(m.entry(2), None);
    assert_eq!(IfaceMacEntry::SIZE, 6);

    // A Get response built the C way: start at 1, ask for 2, list of 5.
    let list = [
        [0x02, 0, 0, 0, 0, 0],
        [0x02, 0, 0, 0, 0, 1],
        [0x33, 0x33, 0, 0, 0, 1],
        [0x02, 0, 0, 0, 0, 3],
        [0x02, 0, 0, 0, 0, 4],
    ];
    let req = IfaceMacsHdr {
        start_idx: 1,
        num_macs_in_msg: 2,
        tot_macs_in_lst: 0,
        gen_count: 0,
    };
    let mut out = [0u8; 64];
    let h = IfaceMacs::encode_response(&req, list, 0x1234, &mut out).unwrap();
    assert_eq!(h, m.hdr);
    assert_eq!(&out[..20], &b[..]);

    // num_macs_in_msg 0 asks for as many as fit: 333.
    assert_eq!(IFACE_MACS_PER_MAD, 333);
    assert_eq!(IfaceMacsHdr::ZERO.req_count(), 333);
    let big = IfaceMacsHdr {
        num_macs_in_msg: 1000,
        ..IfaceMacsHdr::ZERO
    };
    assert_eq!(big.req_count(), 333);
    let mut b2 = [0u8; 2008];
    b2[2..4].copy_from_slice(&334u16.to_be_bytes());
    assert_eq!(IfaceMacs::decode(&b2), Err(WireError::TooManyEntries(334)));
}

/// Summary counters (attribute 0x0020), 360 bytes: 0 vp_instance,
/// 2 vesw_id, 4 veswport_num, then 44 u64s from offset 8 in struct order
/// (tx_errors 8, rx_errors 16, tx_packets 24, rx_packets 32, tx_bytes 40,
/// rx_bytes 48, tx_unicast 56, tx_mcastbcast 64, tx_untagged 72, tx_vlan
/// 80, tx_64_size 88 ... tx_1519_max 136, rx_unicast 144, rx_mcastbcast
/// 152, rx_untagged 160, rx_vlan 168, rx_64_size 176 ... rx_1519_max 224,
/// reserved[16] 232..360).
#[test]
fn golden_summary_counters() {
    let mut b = vec![0u8; 360];
    at(&mut b, 0, &[0x00, 0x03, 0x0a, 0xbc, 0x00, 0x00, 0x00, 0x01]);
    for k in 0..44u64 {
        let off = 8 + 8 * k as usize;
        at(&mut b, off, &(0x1000_0000_0000_0000 | k).to_be_bytes());
    }
    let c = SummaryCounters::decode(&b).unwrap();
    let v = |k: u64| 0x1000_0000_0000_0000 | k;
    assert_eq!((c.vp_instance, c.vesw_id, c.veswport_num), (3, 0xabc, 1));
    assert_eq!(c.tx_errors, v(0));
    assert_eq!(c.rx_bytes, v(5));
    assert_eq!(c.tx_unicast, v(6));
    assert_eq!(c.tx_vlan, v(9));
    assert_eq!(c.tx_64_size, v(10));
    assert_eq!(c.tx_1519_max, v(16));
    assert_eq!(c.rx_unicast, v(17));
    assert_eq!(c.rx_64_size, v(21));
    assert_eq!(c.rx_1519_max, v(27));
    assert_eq!(c.reserved[0], v(28));
    assert_eq!(c.reserved[15], v(43));
    assert_eq!(c.to_bytes()[..], b[..]);
}

/// Error counters (attribute 0x0022), 304 bytes: 0 vp_instance, 2 vesw_id,
/// 4 veswport_num, then 37 u64s from offset 8: tx_errors 8, rx_errors 16,
/// rsvd0 24, tx_smac_filt 32, rsvd1-3 40-56, tx_dlid_zero 64, rsvd4 72,
/// tx_logic 80, rsvd5 88, tx_drop_state 96, rx_bad_veswid 104, rsvd6 112,
/// rx_runt 120, rx_oversize 128, rsvd7 136, rx_eth_down 144,
/// rx_drop_state 152, rx_logic 160, rsvd8 168, rsvd9[16] 176..304.
#[test]
fn golden_error_counters() {
    let mut b = vec![0u8; 304];
    at(&mut b, 0, &[0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03]);
    for k in 0..37u64 {
        at(&mut b, 8 + 8 * k as usize, &(0xe000 + k).to_be_bytes());
    }
    let c = ErrorCounters::decode(&b).unwrap();
    let v = |off: u64| 0xe000 + (off - 8) / 8;
    assert_eq!((c.vp_instance, c.vesw_id, c.veswport_num), (1, 2, 3));
    assert_eq!(c.tx_errors, v(8));
    assert_eq!(c.rx_errors, v(16));
    assert_eq!(c.tx_smac_filt, v(32));
    assert_eq!(c.tx_dlid_zero, v(64));
    assert_eq!(c.tx_logic, v(80));
    assert_eq!(c.tx_drop_state, v(96));
    assert_eq!(c.rx_bad_veswid, v(104));
    assert_eq!(c.rx_runt, v(120));
    assert_eq!(c.rx_oversize, v(128));
    assert_eq!(c.rx_eth_down, v(144));
    assert_eq!(c.rx_drop_state, v(152));
    assert_eq!(c.rx_logic, v(160));
    assert_eq!(c.rsvd8, v(168));
    assert_eq!(c.rsvd9[15], v(296));
    assert_eq!(c.to_bytes()[..], b[..]);
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
