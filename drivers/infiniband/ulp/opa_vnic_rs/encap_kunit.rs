// SPDX-License-Identifier: GPL-2.0-only

//! KUnit suite of the transmit encapsulation, on real socket buffers.

use crate::encap::encap_skb;
use crate::wire::{
    tx_plan::{TxPlan, MDATA_ENCAP_ERR},
    vema_info::VeswPortInfo,
    vema_info_bytes::VeswPortInfoBytes,
};
use kernel::{
    kunit_expect, kunit_expect_eq,
    net::skbuff::{SkBuff, SkBuffHead},
    prelude::*,
};

/// The hash the tests give their frames; its entropy is the XOR of its bytes:
/// 0x12 ^ 0x34 ^ 0x56 ^ 0x78 = 0x08.
const HASH: u32 = 0x1234_5678;
const ENTROPY: u8 = 0x08;

fn tx_info() -> TxPlan {
    let mut info = VeswPortInfo::vema_pod();
    info.vesw.vesw_id = 3;
    info.vesw.pkey = 0x8001;
    info.vesw.u_mcast_dlid = 0xf0_0001;
    info.vport.encap_slid = 1;
    info.vport.non_vlan_sc_uc = 5;
    info.vport.non_vlan_vl_uc = 2;
    info.vport.non_vlan_sc_mc = 6;
    info.vport.non_vlan_vl_mc = 3;
    TxPlan::new(&VeswPortInfoBytes::from_info(&info))
}

/// A 60-byte IPv4 frame to `dmac` in an skb with room for the encapsulation.
fn frame_skb(dmac: [u8; 6]) -> Result<SkBuffHead> {
    let mut skb = SkBuff::alloc(256, GFP_KERNEL)?;
    skb.reserve(64)?;
    let mut frame = [0u8; 60];
    frame[..6].copy_from_slice(&dmac);
    frame[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    frame[14] = 0x45;
    frame[23] = 17; // UDP
    skb.put_data(&frame)?;
    skb.set_protocol(0x0800);
    skb.set_hash(HASH);
    Ok(skb.into_head())
}

/// A unicast frame whose MAC is in the MAC table: metadata, then the header worked out by hand
/// from the packet-format table, then the frame unchanged.
fn encap_unicast_from_mac_table() {
    let Ok(mut skb) = frame_skb([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]) else {
        kunit_expect!(false);
        return;
    };
    let ret = encap_skb(
        &tx_info(),
        |mac| if mac[5] == 0x55 { 2 } else { 0 },
        &mut skb,
    );
    kunit_expect_eq!(ret, Ok(()));
    kunit_expect_eq!(skb.len(), 4 + 20 + 60);
    let d = skb.data();
    // Metadata: VL 2 (non-VLAN unicast), the entropy, no flags.
    kunit_expect_eq!(d[..4], [2, ENTROPY, 0, 0]);
    #[rustfmt::skip]
    let want: [u8; 20] = [
        // SLID 1 | 11 quad words << 20 ; DLID 2 | SC 5 << 20 | L2 0b10 << 29 | LT << 31
        0x01, 0x00, 0xb0, 0x00, 0x02, 0x00, 0x50, 0xc0,
        // L4 0x78 | P_Key 0x8001 << 16 ; entropy
        0x78, 0x00, 0x01, 0x80, ENTROPY, 0x00, 0x00, 0x00,
        // reserved ; vesw id 3
        0x00, 0x00, 0x03, 0x00,
    ];
    kunit_expect_eq!(d[4..24], want);
    kunit_expect_eq!(d[24..30], [0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
}

/// Multicast goes to the vesw's multicast DLID; its 24 bits split 20 + 4 between QW0 and QW1.
fn encap_multicast_dlid() {
    let Ok(mut skb) = frame_skb([0x01, 0x00, 0x5e, 0x00, 0x00, 0x01]) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(encap_skb(&tx_info(), |_| 0, &mut skb), Ok(()));
    let d = skb.data();
    kunit_expect_eq!(d[..4], [3, ENTROPY, 0, 0]);
    // DLID low 20 bits 0x00001, SC 6.
    kunit_expect_eq!(d[8..12], [0x01, 0x00, 0x60, 0xc0]);
    // QW1 bits 12-15: DLID bits 20-23 (0xf).
    kunit_expect_eq!(d[12..14], [0x78, 0xf0]);
}

/// A unicast MAC with no table entry, not locally administered, and no default port: no DLID,
/// so the frame is flagged for the HFI to drop.
fn encap_without_destination_is_flagged() {
    let Ok(mut skb) = frame_skb([0x00, 0x11, 0x22, 0x33, 0x44, 0x66]) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(encap_skb(&tx_info(), |_| 0, &mut skb), Ok(()));
    let d = skb.data();
    kunit_expect_eq!(d[2], MDATA_ENCAP_ERR);
    kunit_expect!(d[4..24].iter().all(|&b| b == 0));
}

/// A locally administered unicast MAC carries its DLID in bytes 3-5.
fn encap_local_mac_dlid() {
    let Ok(mut skb) = frame_skb([0x02, 0x00, 0x00, 0x07, 0x00, 0x00]) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(encap_skb(&tx_info(), |_| 0, &mut skb), Ok(()));
    let d = skb.data();
    kunit_expect_eq!(d[2], 0);
    kunit_expect_eq!(d[8], 0x07);
}

kernel::kunit_suite!(
    opa_vnic_rs_encap,
    [
        encap_unicast_from_mac_table,
        encap_multicast_dlid,
        encap_without_destination_is_flagged,
        encap_local_mac_dlid
    ]
);
