// SPDX-License-Identifier: GPL-2.0

//! The transmit plan against the rules it precomputes: for any vport configuration, frame,
//! hash, length and MAC table answer, `TxPlan::encap` gives the bytes that the per-frame
//! rules (`TxFrame::parse`, `select_dlid`, `select_sc`, `select_vl`, `select_rc`,
//! `Encap::write_header`: `opa_vnic_encap_skb()`) give.

use opa_wire::encap::*;
use opa_wire::hdr16b::{Encap, HDR_LEN, MAX_ETH_FRAME};
use opa_wire::tx_plan::*;
use opa_wire::vema_info::*;
use opa_wire::vema_info_bytes::VeswPortInfoBytes;
use opa_wire::vl_table::VlTable;
use proptest::prelude::*;

/// The plan of `info`, made as the driver makes it: from the info's wire form.
fn plan_of(info: &VeswPortInfo) -> TxPlan {
    TxPlan::new(&VeswPortInfoBytes::from_info(info))
}

/// What transmit wrote before the plan: each rule for each frame.
fn by_the_rules(
    info: &VeswPortInfo,
    frame: &[u8; TX_PARSE_LEN],
    proto: u16,
    hash: u32,
    eth_len: usize,
    mac_dlid: u32,
) -> [u8; TX_HDR_LEN] {
    let entropy = entropy_from_hash(hash);
    let t = TxFrame::parse(frame, proto);
    let def_port = def_port(&flow_table(info.vesw.def_port_mask), entropy);
    let dlid = info.vesw.select_dlid(mac_dlid, &t.dmac, def_port);
    let encap = Encap {
        slid: info.vport.encap_slid,
        dlid,
        sc: info.vport.select_sc(&t.dmac, t.vlan_tci),
        rc: info.vesw.select_rc(t.class),
        pkey: info.vesw.pkey,
        entropy,
        vesw_id: info.vesw.vesw_id,
    };
    let mut out = [0u8; TX_HDR_LEN];
    out[0] = info.vport.select_vl(&t.dmac, t.vlan_tci);
    out[1] = entropy;
    let mut hdr = [0u8; HDR_LEN];
    if dlid != 0 && encap.write_header(eth_len, &mut hdr).is_ok() {
        out[MDATA_LEN..].copy_from_slice(&hdr);
    } else {
        out[2] = MDATA_ENCAP_ERR;
    }
    out
}

/// A frame whose first bytes take every path of the parse: any MAC (multicast, local or
/// not), a tag or not, IPv4, IPv6 or another protocol, TCP, UDP or another.
fn any_frame() -> impl Strategy<Value = ([u8; TX_PARSE_LEN], u16)> {
    (
        proptest::array::uniform28(any::<u8>()),
        prop_oneof![
            Just(0x8100u16),
            Just(0x88a8),
            Just(0x0800),
            Just(0x86dd),
            any::<u16>()
        ],
        prop_oneof![Just(0x0800u16), Just(0x86dd), Just(0x8100), any::<u16>()],
        prop_oneof![Just(6u8), Just(17), any::<u8>()],
        any::<bool>(),
    )
        .prop_map(|(mut f, tag, inner, l4, tagged)| {
            if tagged {
                f[12..14].copy_from_slice(&tag.to_be_bytes());
                f[16..18].copy_from_slice(&inner.to_be_bytes());
            }
            f[14 + 9] = l4;
            f[14 + 6] = l4;
            f[18 + 9] = l4;
            f[18 + 6] = l4;
            let proto = if tagged { tag } else { inner };
            (f, proto)
        })
}

/// A configuration: any bytes, with the RC classes often all equal (the plan's fast case),
/// SCs often in range, and often no default port or one (the EM's usual configurations).
fn any_info() -> impl Strategy<Value = VeswPortInfo> {
    (
        proptest::collection::vec(any::<u8>(), VeswPortInfo::SIZE),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(None),
            Just(Some(0u16)),
            (0u32..16).prop_map(|b| Some(1u16 << b))
        ],
    )
        .prop_map(|(bytes, uniform_rc, small_sc, mask)| {
            let mut info = VeswPortInfo::decode(&bytes).unwrap();
            if let Some(mask) = mask {
                info.vesw.def_port_mask = mask;
            }
            if uniform_rc {
                let rc = info.vesw.rc & 7;
                info.vesw.rc = (0..7).fold(0, |acc, i| acc | (rc << (4 * i)));
            }
            if small_sc {
                let p = &mut info.vport;
                for sc in p.pcp_to_sc_uc.iter_mut().chain(p.pcp_to_sc_mc.iter_mut()) {
                    *sc &= 0x1f;
                }
                p.non_vlan_sc_uc &= 0x1f;
                p.non_vlan_sc_mc &= 0x1f;
            }
            info
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]
    #[test]
    fn plan_gives_what_the_rules_give(
        info in any_info(),
        (frame, proto) in any_frame(),
        hash in any::<u32>(),
        eth_len in prop_oneof![60usize..=MAX_ETH_FRAME, 0usize..=MAX_ETH_FRAME + 64],
        mac_dlid in prop_oneof![Just(0u32), any::<u32>()],
    ) {
        let plan = plan_of(&info);
        let got = plan.encap(&frame, || proto, hash, eth_len, |_| mac_dlid);
        prop_assert_eq!(got, by_the_rules(&info, &frame, proto, hash, eth_len, mac_dlid));
        let t = TxFrame::parse(&frame, proto);
        prop_assert_eq!(plan.vl(&t.dmac, t.vlan_tci), info.vport.select_vl(&t.dmac, t.vlan_tci));
        // Queue selection's copy of the VLs, read by the same rule, picks the VL transmit
        // sends with.
        let vl_table = VlTable::new(&VeswPortInfoBytes::from_info(&info));
        prop_assert_eq!(vl_table.get(&t.dmac, t.vlan_tci), plan.vl(&t.dmac, t.vlan_tci));
    }

    /// The driver makes a Set's plan from the request: the plan reads only what a Set copies
    /// into the vport's info, so it is the plan of the info the Set leaves, whatever was there.
    #[test]
    fn plan_of_a_set_is_the_plan_of_the_info_it_leaves(old in any_info(), req in any_info()) {
        let mut now = old;
        now.apply_set(&req);
        prop_assert_eq!(plan_of(&now), plan_of(&req));
        // The same in the wire form the driver keeps.
        let mut now = VeswPortInfoBytes::from_info(&old);
        let req_bytes = VeswPortInfoBytes::from_info(&req);
        now.apply_set(&req_bytes);
        prop_assert_eq!(TxPlan::new(&now), TxPlan::new(&req_bytes));
        // Queue selection's copy of the VLs, set from the request over the old info's, is
        // the plan's, for every destination and tag.
        let plan = plan_of(&req);
        let vl_table = VlTable::new(&VeswPortInfoBytes::from_info(&old));
        vl_table.set(&req_bytes);
        for dmac in [[0u8; 6], [1, 0, 0, 0, 0, 0]] {
            for tci in core::iter::once(None).chain((0..8u16).map(|p| Some(p << 13 | 5))) {
                prop_assert_eq!(vl_table.get(&dmac, tci), plan.vl(&dmac, tci));
            }
        }
    }
}

/// The header of the bench's frames, worked out by hand: a unicast frame to a MAC in the table
/// on the adapter's power-on configuration with SLID 1, P_Key 0x8001, vesw 1.
#[test]
fn plan_of_a_unicast_frame() {
    let mut info = VeswPortInfo::adapter_pod();
    info.vport.encap_slid = 1;
    info.vesw.pkey = 0x8001;
    info.vesw.vesw_id = 1;
    let mut frame = [0u8; TX_PARSE_LEN];
    frame[..6].copy_from_slice(&[2, 0, 0, 0, 2, 0]);
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    let got = plan_of(&info).encap(&frame, || 0x0800, 0x1234_5678, 60, |_| 2);
    #[rustfmt::skip]
    let want = [
        0, 0x08, 0, 0,
        0x01, 0x00, 0xb0, 0x00, 0x02, 0x00, 0x00, 0xc0,
        0x78, 0x00, 0x01, 0x80, 0x08, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x00,
    ];
    assert_eq!(got, want);
}
