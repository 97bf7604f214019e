// SPDX-License-Identifier: GPL-2.0

//! ClassPortInfo, VESW info and the VESW port info around it.

use super::*;

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
