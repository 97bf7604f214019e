// SPDX-License-Identifier: GPL-2.0

//! The transmit decisions against the C driver's rules (opa_vnic_encap.c,
//! opa_vnic_netdev.c), with hand-worked cases and property tests against
//! independent oracles written from the C semantics.

use opa_wire::encap::*;
use opa_wire::vema_info::*;
use proptest::prelude::*;

#[test]
fn entropy_is_xor_of_hash_bytes() {
    // 0x12 ^ 0x34 ^ 0x56 ^ 0x78 = 0x08
    assert_eq!(entropy_from_hash(0x1234_5678), 0x08);
    assert_eq!(entropy_from_hash(0), 0);
    assert_eq!(entropy_from_hash(0xff00_0000), 0xff);
    assert_eq!(entropy_from_hash(0xffff_ffff), 0x00);
    assert_eq!(entropy_from_hash(0x0000_00a5), 0xa5);
}

#[test]
fn flow_ids() {
    assert_eq!(flow_id(0x00), 0);
    assert_eq!(flow_id(0x08), 8);
    assert_eq!(flow_id(0x11), 2);
    assert_eq!(flow_id(0xff), 30);
}

#[test]
fn flow_table_from_mask() {
    // Bits 0, 2, 13, 15 set: ports 0, 2, 13, 15 repeated.
    let t = flow_table(0b1010_0000_0000_0101);
    for (i, &p) in t.iter().enumerate() {
        assert_eq!(p, [0, 2, 13, 15][i % 4]);
    }
    assert_eq!(flow_table(0), [INVALID_PORT; 32]);
    let t = flow_table(0xffff);
    for (i, &p) in t.iter().enumerate() {
        assert_eq!(usize::from(p), i % 16);
    }
    assert_eq!(flow_table(0x0100), [8; 32]);
    let t = flow_table(0b111); // 3 ports: 32 is not a multiple of 3
    assert_eq!(t[30], 0);
    assert_eq!(t[31], 1);
    assert_eq!(def_port(&t, 0xff), t[30]);
}

fn tables() -> PerVeswPortInfo {
    let mut p = PerVeswPortInfo::ZERO;
    p.pcp_to_sc_uc = [0, 1, 2, 3, 4, 5, 6, 7];
    p.pcp_to_sc_mc = [10, 11, 12, 13, 14, 15, 16, 17];
    p.pcp_to_vl_uc = [20, 21, 22, 23, 24, 25, 26, 27];
    p.pcp_to_vl_mc = [30, 31, 32, 33, 34, 35, 36, 37];
    p.non_vlan_sc_uc = 40;
    p.non_vlan_sc_mc = 41;
    p.non_vlan_vl_uc = 42;
    p.non_vlan_vl_mc = 43;
    p
}

const UC: [u8; 6] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55];
const MC: [u8; 6] = [0x01, 0x00, 0x5e, 0x00, 0x00, 0x01];
const BC: [u8; 6] = [0xff; 6];

#[test]
fn sc_selection() {
    let p = tables();
    assert_eq!(p.select_sc(&UC, None), 40);
    assert_eq!(p.select_sc(&MC, None), 41);
    assert_eq!(p.select_sc(&BC, None), 41);
    assert_eq!(p.select_sc(&UC, Some(0x0000)), 0);
    assert_eq!(p.select_sc(&UC, Some(0x1fff)), 0); // PCP 0: VID and DEI ignored
    assert_eq!(p.select_sc(&UC, Some(0x2000)), 1);
    assert_eq!(p.select_sc(&UC, Some(0xe000)), 7);
    assert_eq!(p.select_sc(&MC, Some(0xa123)), 15);
    assert_eq!(p.select_sc(&BC, Some(0xffff)), 17);
    // Values are returned as configured, even above 31.
    let mut q = p;
    q.non_vlan_sc_uc = 0xff;
    assert_eq!(q.select_sc(&UC, None), 0xff);
}

#[test]
fn vl_selection() {
    let p = tables();
    assert_eq!(p.select_vl(&UC, None), 42);
    assert_eq!(p.select_vl(&MC, None), 43);
    assert_eq!(p.select_vl(&UC, Some(0x6000)), 23);
    assert_eq!(p.select_vl(&BC, Some(0x8001)), 34);
}

#[test]
fn frame_vlan_tag() {
    let mut f = [0u8; 60];
    assert_eq!(frame_vlan_tci(&f), None);
    f[12] = 0x81;
    assert_eq!(frame_vlan_tci(&f), Some(0));
    f[14] = 0xe0;
    f[15] = 0x05;
    assert_eq!(frame_vlan_tci(&f), Some(0xe005));
    f[12] = 0x88;
    f[13] = 0xa8;
    assert_eq!(frame_vlan_tci(&f), Some(0xe005));
    f[13] = 0xa9;
    assert_eq!(frame_vlan_tci(&f), None);
    assert_eq!(frame_vlan_tci(&[0x81; 15]), None);
    assert_eq!(frame_dmac(&[1, 2, 3, 4, 5]), None);
    assert_eq!(frame_dmac(&f), Some([0; 6]));
}

#[test]
fn rc_selection() {
    let mut v = VeswInfo::ZERO;
    v.rc = 0x0765_4321 | 0x8888_8888; // bit 3 of each nibble is not RC
    assert_eq!(v.select_rc(RcClass::classify(0x0806, 0)), 1);
    assert_eq!(v.select_rc(RcClass::classify(0x0800, 1)), 2);
    assert_eq!(v.select_rc(RcClass::classify(0x0800, 17)), 3);
    assert_eq!(v.select_rc(RcClass::classify(0x0800, 6)), 4);
    assert_eq!(v.select_rc(RcClass::classify(0x86dd, 58)), 5);
    assert_eq!(v.select_rc(RcClass::classify(0x86dd, 6)), 6);
    assert_eq!(v.select_rc(RcClass::classify(0x86dd, 17)), 7);
    assert_eq!(RcClass::classify(0x8100, 6), RcClass::Default);
}

#[test]
fn dlid_selection() {
    let mut v = VeswInfo::ZERO;
    v.u_mcast_dlid = 0xc000;
    for i in 0..16 {
        v.u_ucast_dlid[i] = 0x100 + i as u32;
    }
    // 1. MAC table hit wins.
    assert_eq!(v.select_dlid(0x77, &MC, 3), 0x77);
    // 2. Multicast and broadcast.
    assert_eq!(v.select_dlid(0, &MC, 3), 0xc000);
    assert_eq!(v.select_dlid(0, &BC, INVALID_PORT), 0xc000);
    // 3. Locally administered: DLID from bytes 3-5, byte 5 the highest.
    let local = [0x02, 0x00, 0x00, 0x34, 0x12, 0xab];
    assert_eq!(v.select_dlid(0, &local, 3), 0xab_1234);
    assert_eq!(v.select_dlid(0, &[0x02, 0, 0, 0, 0, 0], 3), 0);
    // 4. Unknown unicast: default port.
    assert_eq!(v.select_dlid(0, &UC, 0), 0x100);
    assert_eq!(v.select_dlid(0, &UC, 15), 0x10f);
    assert_eq!(v.select_dlid(0, &UC, 16), 0);
    assert_eq!(v.select_dlid(0, &UC, INVALID_PORT), 0);
}

#[test]
fn mac_hash_buckets() {
    // hash_32(v, 8) = (v * 0x61c88647) >> 24, worked by hand.
    assert_eq!(mac_hash_bucket(&[0, 0, 0, 0, 0, 0]), 0x00);
    assert_eq!(mac_hash_bucket(&[9, 9, 9, 9, 9, 1]), 0x61); // 0x61c88647
    assert_eq!(mac_hash_bucket(&[0, 0, 0, 0, 0, 2]), 0xc3); // 0xc3910c8e
    assert_eq!(mac_hash_bucket(&[0, 0, 0, 0, 0, 3]), 0x25); // 0x255992d5
    assert_eq!(hash_32(1, 0), 0);
    assert_eq!(hash_32(1, 32), 0);
    assert_eq!(hash_32(1, 31), 0x61c8_8647 >> 1);
}

#[test]
fn crc32_and_mac_list_checksum() {
    // The standard CRC-32 check value.
    assert_eq!(!crc32_le(!0, b"123456789"), 0xcbf4_3926);
    // Empty list: ~crc32_le(0, [0, 0, 0, 0]) = ~0.
    assert_eq!(
        iface_mac_list_crc(std::iter::empty::<&[u8; 6]>()),
        0xffff_ffff
    );
    let a = [[0x02u8, 0, 0, 0, 0, 1], [0x02, 0, 0, 0, 0, 2]];
    let b = [[0x02u8, 0, 0, 0, 0, 2], [0x02, 0, 0, 0, 0, 1]];
    assert_ne!(iface_mac_list_crc(&a), iface_mac_list_crc(&b));
    // Same as one CRC over the addresses then the count, little-endian.
    let mut all = Vec::new();
    all.extend_from_slice(&a[0]);
    all.extend_from_slice(&a[1]);
    all.extend_from_slice(&12u32.to_le_bytes());
    assert_eq!(iface_mac_list_crc(&a), !crc32_le(0, &all));
}

#[test]
fn port_state_and_set_rules() {
    let mut p = VeswPortInfo::adapter_pod();
    assert_eq!(p.vport.eth_link_status, ETH_LINK_DOWN);
    assert_eq!(p.vport.oper_state, 0);
    assert!(p.vport.dormant());
    p.vport.update_state(true);
    assert_eq!((p.vport.oper_state, p.vport.eth_link_status), (1, 2));

    let mut req = VeswPortInfo::ZERO;
    req.vesw.vesw_id = 7;
    req.vesw.eth_mtu = 9000;
    req.vport.config_state = STATE_FORWARDING;
    req.vport.encap_slid = 5;
    req.vport.oper_state = 0x77;
    req.vport.max_mac_tbl_ent = 1;
    req.vport.mac_tbl_digest = 0x1234;
    req.vport.uc_macs_gen_count = 9;
    req.vport.eth_link_status = 9;
    p.vport.mac_tbl_digest = 0xabcd;
    p.apply_set(&req);
    assert_eq!(p.vesw, req.vesw);
    assert_eq!(p.vport.config_state, STATE_FORWARDING);
    assert_eq!(p.vport.encap_slid, 5);
    // Read-only fields are kept.
    assert_eq!(p.vport.oper_state, 1);
    assert_eq!(p.vport.max_mac_tbl_ent, 2048);
    assert_eq!(p.vport.mac_tbl_digest, 0xabcd);
    assert_eq!(p.vport.uc_macs_gen_count, 0);
    assert_eq!(p.vport.eth_link_status, ETH_LINK_DOWN);
    assert!(!p.vport.dormant());
    p.vport.update_state(false);
    assert_eq!((p.vport.oper_state, p.vport.eth_link_status), (1, 2));
    p.vport.update_state(true);
    assert_eq!((p.vport.oper_state, p.vport.eth_link_status), (3, 1));

    assert_eq!(p.vesw.max_mtu(68), 9000);
    p.vesw.eth_mtu = 0;
    assert_eq!(p.vesw.max_mtu(68), 68);
    p.vesw.eth_mtu = 0xffff;
    assert_eq!(p.vesw.max_mtu(68), u32::from(ETH_MTU_MAX));
}

proptest! {
    #[test]
    fn entropy_matches_byte_xor(h in any::<u32>()) {
        let b = h.to_le_bytes();
        prop_assert_eq!(entropy_from_hash(h), b[0] ^ b[1] ^ b[2] ^ b[3]);
    }

    #[test]
    fn def_port_matches_oracle(mask in any::<u16>(), e in any::<u8>()) {
        let ports: Vec<u8> = (0..16u8).filter(|b| mask & (1 << b) != 0).collect();
        let fid = (usize::from(e % 16) + usize::from(e / 16)) % 32;
        let want = if ports.is_empty() { 0xff } else { ports[fid % ports.len()] };
        prop_assert_eq!(def_port(&flow_table(mask), e), want);
    }

    #[test]
    fn sc_vl_match_oracle(
        sc_uc in any::<[u8; 8]>(), sc_mc in any::<[u8; 8]>(),
        vl_uc in any::<[u8; 8]>(), vl_mc in any::<[u8; 8]>(),
        nv in any::<[u8; 4]>(), dmac in any::<[u8; 6]>(), tci in any::<Option<u16>>(),
    ) {
        let mut p = PerVeswPortInfo::ZERO;
        p.pcp_to_sc_uc = sc_uc;
        p.pcp_to_sc_mc = sc_mc;
        p.pcp_to_vl_uc = vl_uc;
        p.pcp_to_vl_mc = vl_mc;
        p.non_vlan_sc_uc = nv[0];
        p.non_vlan_vl_uc = nv[1];
        p.non_vlan_sc_mc = nv[2];
        p.non_vlan_vl_mc = nv[3];
        let mc = dmac[0] % 2 == 1;
        let (sc, vl) = match tci {
            Some(t) => {
                let pcp = usize::from(t / 8192);
                if mc { (sc_mc[pcp], vl_mc[pcp]) } else { (sc_uc[pcp], vl_uc[pcp]) }
            }
            None => if mc { (nv[2], nv[3]) } else { (nv[0], nv[1]) },
        };
        prop_assert_eq!(p.select_sc(&dmac, tci), sc);
        prop_assert_eq!(p.select_vl(&dmac, tci), vl);
    }

    #[test]
    fn dlid_matches_oracle(
        hit in prop_oneof![Just(0u32), any::<u32>()],
        dmac in any::<[u8; 6]>(),
        port in any::<u8>(),
        mc_dlid in any::<u32>(),
        uc in any::<[u32; 16]>(),
    ) {
        let mut v = VeswInfo::ZERO;
        v.u_mcast_dlid = mc_dlid;
        v.u_ucast_dlid = uc;
        let want = if hit != 0 {
            hit
        } else if dmac[0] & 1 == 1 {
            mc_dlid
        } else if dmac[0] & 2 == 2 {
            u32::from_le_bytes([dmac[3], dmac[4], dmac[5], 0])
        } else if port < 16 {
            uc[usize::from(port)]
        } else {
            0
        };
        prop_assert_eq!(v.select_dlid(hit, &dmac, port), want);
    }

    #[test]
    fn mac_hash_matches_formula(mac in any::<[u8; 6]>()) {
        let want = ((u64::from(mac[5]) * 0x61c8_8647) % (1 << 32)) >> 24;
        prop_assert_eq!(u64::from(mac_hash_bucket(&mac)), want);
    }
}

/// The first bytes of a frame, which are all `TxFrame::parse` reads: the oracle below reads
/// the whole padded frame, so the property test also shows that nothing past them matters.
fn parsed(frame: &[u8; ETH_ZLEN]) -> &[u8; TX_PARSE_LEN] {
    frame.first_chunk().unwrap()
}

/// The frame `TxFrame::parse` reads, as the C driver reads it: `vlan_get_protocol()` then
/// the IPv4 protocol or IPv6 next header after the (one) tag; the tag and the destination
/// MAC from the frame (the oracle is written from the C code, not from `parse`).
fn tx_frame_oracle(frame: &[u8; ETH_ZLEN], skb_protocol: u16) -> TxFrame {
    let be16 = |at: usize| u16::from_be_bytes([frame[at], frame[at + 1]]);
    let vlan = |p: u16| p == 0x8100 || p == 0x88a8;
    let (l3, ip) = if vlan(skb_protocol) {
        (be16(16), 18)
    } else {
        (skb_protocol, 14)
    };
    let l4 = match l3 {
        0x0800 => frame[ip + 9],
        0x86dd => frame[ip + 6],
        _ => 0,
    };
    TxFrame {
        dmac: frame[..6].try_into().unwrap(),
        vlan_tci: vlan(be16(12)).then(|| be16(14)),
        class: RcClass::classify(l3, l4),
    }
}

#[test]
fn tx_frame_cases() {
    let mut f = [0u8; ETH_ZLEN];
    f[..6].copy_from_slice(&[0x02, 0, 0, 0, 2, 0]);
    // Untagged IPv4 UDP.
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[23] = 17;
    let t = TxFrame::parse(parsed(&f), 0x0800);
    assert_eq!(t.dmac, [0x02, 0, 0, 0, 2, 0]);
    assert_eq!(t.vlan_tci, None);
    assert_eq!(t.class, RcClass::Ipv4Udp);
    // 802.1Q, priority 5, then IPv6 TCP.
    f[12..18].copy_from_slice(&[0x81, 0x00, 0xa0, 0x07, 0x86, 0xdd]);
    f[24] = 6;
    let t = TxFrame::parse(parsed(&f), 0x8100);
    assert_eq!(t.vlan_tci, Some(0xa007));
    assert_eq!(t.class, RcClass::Ipv6Tcp);
    // The class follows skb->protocol, as vlan_get_protocol() does.
    assert_eq!(TxFrame::parse(parsed(&f), 0x0806).class, RcClass::Default);
}

proptest! {
    #[test]
    fn tx_frame_matches_oracle(
        frame in proptest::collection::vec(any::<u8>(), ETH_ZLEN),
        proto in prop_oneof![
            Just(0x0800u16), Just(0x86dd), Just(0x8100), Just(0x88a8), any::<u16>()
        ],
        inner in prop_oneof![Just(0x0800u16), Just(0x86dd), any::<u16>()],
        tagged in any::<bool>(),
    ) {
        let mut f: [u8; ETH_ZLEN] = frame.try_into().unwrap();
        if tagged {
            f[12..14].copy_from_slice(&0x8100u16.to_be_bytes());
        }
        f[16..18].copy_from_slice(&inner.to_be_bytes());
        prop_assert_eq!(TxFrame::parse(parsed(&f), proto), tx_frame_oracle(&f, proto));
        // The slice readers receive say the same of the frame.
        prop_assert_eq!(Some(TxFrame::parse(parsed(&f), proto).dmac), frame_dmac(&f));
        prop_assert_eq!(TxFrame::parse(parsed(&f), proto).vlan_tci, frame_vlan_tci(&f));
    }
}
