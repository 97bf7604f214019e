// SPDX-License-Identifier: GPL-2.0-only

//! The KUnit suite of opasim's SMA: MADs crafted byte by byte, offered to a registered
//! two-port device through `process_mad` as the IB core offers them, and the answers read
//! field by field against what hfi1's handlers give (`hw/hfi1/mad.c`).

use crate::{
    kunit_mad::{be16, be32, be64, device, offer, opa_dr, put, Dev, DR, REPLIED},
    port::Counters,
};
use kernel::{
    kunit_expect, kunit_expect_eq,
    prelude::*,
    rdma::provider::{mad::MadOutcome, PortState},
};

fn sma_ib_nodeinfo() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    // opamgt's `port_is_opa()`: an IB directed-route Get(NodeInfo), hop count 0.
    let mut m = KVec::new();
    let _ = m.extend_from_slice(&[0u8; 256], GFP_KERNEL);
    put(&mut m, 0, &[1, 0x81, 1, 1]);
    put(&mut m, 16, &0x11u16.to_be_bytes());
    put(&mut m, 32, &[0xff; 4]);
    let (o, a) = offer(&d, 2, &m, false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(a[3], 0x81);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    // `struct ib_node_info` at 64: OPA's base and class versions, an HFI of 2 ports.
    kunit_expect_eq!(&a[64..68], &[0x80, 0x80, 1, 2]);
    kunit_expect_eq!(be64(&a, 68), d.guid);
    kunit_expect_eq!(be64(&a, 76), d.guid);
    kunit_expect_eq!(be64(&a, 84), d.guid | (1 << 30));
    kunit_expect_eq!(be16(&a, 92), 16);
    kunit_expect_eq!(a[100], 2);
    kunit_expect_eq!(&a[101..104], &[0x00, 0x11, 0x75]);
    // Any other IB Get: unsupported method/attribute.
    put(&mut m, 16, &0x15u16.to_be_bytes());
    let (o, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(be16(&a, 4), 0x800c);
}

fn sma_opa_nodeinfo_desc() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    let (o, a) = offer(&d, 1, &opa_dr(1, 0x11, 0, 0), false);
    kunit_expect_eq!(o.flags, REPLIED);
    // 176 header bytes and a 44-byte NodeInfo, rounded up to 8.
    kunit_expect_eq!(o.size, 224);
    kunit_expect_eq!(&a[DR..DR + 4], &[0x80, 0x80, 1, 2]);
    kunit_expect_eq!(be64(&a, DR + 16), d.guid);
    // Port 1's GUID is the node's (the SM's spoofing check).
    kunit_expect_eq!(be64(&a, DR + 24), d.guid);
    kunit_expect_eq!(a[DR + 40], 1);
    // An attribute modifier: invalid field.
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x11, 1, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    let (o, a) = offer(&d, 1, &opa_dr(1, 0x10, 0, 0), false);
    kunit_expect_eq!(o.size, DR + 64);
    kunit_expect_eq!(&a[DR..DR + 6], b"opasim");
}

fn sma_refusals() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    // An unknown attribute, an unknown method, a class version other than 0x80.
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x99, 0, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x800c);
    let (_, a) = offer(&d, 1, &opa_dr(0x03, 0x11, 0, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x8008);
    let mut m = opa_dr(1, 0x11, 0, 0);
    m[2] = 0x81;
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x8004);
    // A response is the agents': passed on.
    let (o, _) = offer(&d, 1, &opa_dr(0x81, 0x11, 0, 0), false);
    kunit_expect_eq!(o.flags, 1);
    // A VEMA MAD (vendor class 0x0b) too, with its P_Key index kept.
    let mut v = opa_dr(1, 0x11, 0, 0);
    v[1] = 0x0b;
    let (o, _) = offer(&d, 1, &v, false);
    kunit_expect_eq!(o.flags, 1);
    kunit_expect_eq!(o.pkey_index, 0);
    // A wrong-sized MAD never reaches the provider.
    let mut out = [0u8; 256];
    kunit_expect!(d
        .reg
        .device()
        .process_mad(1, &v[..256], None, false, &mut out)
        .is_err());
}

/// A PortInfo Set of port state `ls`/`ps`, LID `lid` and SM LID 1, from a Get's answer.
fn portinfo_set(
    d: &Dev,
    port: u32,
    am: u32,
    edit: impl FnOnce(&mut [u8]),
) -> (MadOutcome, KVec<u8>) {
    let (_, got) = offer(d, port, &opa_dr(1, 0x15, 0x0100_0000, 0), false);
    let mut m = opa_dr(2, 0x15, am, 0);
    put(&mut m, DR, &got[DR..DR + 242]);
    // A Set's port state bytes are requests: 0 (no change) unless `edit` says. An Active
    // port needs an SM LID.
    m[DR + 19] = 0;
    put(&mut m, DR + 108, &1u32.to_be_bytes());
    edit(&mut m[DR..DR + 242]);
    offer(d, port, &m, false)
}

fn sma_portinfo() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    let (o, a) = offer(&d, 1, &opa_dr(1, 0x15, 0x0100_0000, 0), false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(o.size, DR + 248);
    kunit_expect_eq!(be32(&a, DR), 0x41);
    // LinkUp, Active; NeighborNormal.
    kunit_expect_eq!(a[DR + 19], 0x54);
    kunit_expect_eq!(a[DR + 17] & 0x10, 0x10);
    // The neighbour: a switch allowing management.
    kunit_expect_eq!(a[DR + 236], 0x09);
    kunit_expect_eq!(a[DR + 237], 7);
    kunit_expect_eq!(a[DR + 239], 1);
    kunit_expect_eq!(be16(&a, DR + 228), 0x880);
    // Two ports asked for: invalid.
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x15, 0x0200_0000, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    // The SM sets LID 0x51, SM LID 7 on SL 2: the port's one state, and query_port's.
    let (o, a) = portinfo_set(&d, 1, 0x0100_0000, |pi| {
        pi[0..4].copy_from_slice(&0x51u32.to_be_bytes());
        pi[108..112].copy_from_slice(&7u32.to_be_bytes());
        pi[23] = 2;
    });
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    kunit_expect_eq!(be32(&a, DR), 0x51);
    kunit_expect_eq!(be32(&a, DR + 108), 7);
    kunit_expect_eq!(d.ports[0].config().lid, 0x51);
    kunit_expect_eq!(d.ports[0].mgmt().sm_lid, Some(7));
    kunit_expect_eq!(d.ports[0].mgmt().sm_sl, 2);
    // A multicast LID is refused.
    let (_, a) = portinfo_set(&d, 1, 0x0100_0000, |pi| {
        pi[0..4].copy_from_slice(&0xf0_0001u32.to_be_bytes());
    });
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    kunit_expect_eq!(d.ports[0].config().lid, 0x51);
}

fn sma_port_states() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    let p = &d.ports[1];
    // Active to Armed: ignored.
    let (_, a) = portinfo_set(&d, 2, 0x0100_0000, |pi| pi[19] = 3);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    kunit_expect!(p.config().state == PortState::Active);
    // Active to Down is not a logical transition hfi1 allows.
    let (_, a) = portinfo_set(&d, 2, 0x0100_0000, |pi| pi[19] = 0x21);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    // A bounce (no logical change, Polling): the link comes back to Init.
    let (_, a) = portinfo_set(&d, 2, 0x0100_0000, |pi| pi[19] = 0x20);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    kunit_expect!(p.config().state == PortState::Init);
    kunit_expect_eq!(a[DR + 19], 0x52);
    // Init to Active: refused; to Armed before the SM said it started: refused.
    let (_, a) = portinfo_set(&d, 2, 0x0100_0000, |pi| pi[19] = 4);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    let (_, a) = portinfo_set(&d, 2, 0x0100_0000, |pi| pi[19] = 3);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    kunit_expect!(p.config().state == PortState::Init);
    // With the start-of-SM-configuration bit: Armed, then Active.
    let (_, a) = portinfo_set(&d, 2, 0x0100_0200, |pi| pi[19] = 3);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    kunit_expect!(p.config().state == PortState::Armed);
    kunit_expect_eq!(a[DR + 17] & 0x20, 0x20);
    // PortStateInfo reads the same; Set(PortStateInfo) makes it Active.
    let (_, a) = offer(&d, 2, &opa_dr(1, 0x87, 0x0100_0000, 0), false);
    kunit_expect_eq!(a[DR + 3], 0x53);
    let mut m = opa_dr(2, 0x87, 0x0100_0000, 0);
    m[DR + 3] = 4;
    let (_, a) = offer(&d, 2, &m, false);
    kunit_expect_eq!(a[DR + 3], 0x54);
    kunit_expect!(p.config().state == PortState::Active);
    // Disabled (no logical change, Disabled) from here, a local SMP: answered.
    let (o, a) = portinfo_set(&d, 2, 0x0100_0000, |pi| pi[19] = 0x30);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(a[DR + 19], 0x31);
    kunit_expect!(p.config().state == PortState::Down);
}

fn sma_mkey() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    // The SM protects the port with M_Key 0xabc at level 2.
    let (_, a) = portinfo_set(&d, 1, 0x0100_0000, |pi| {
        pi[112..120].copy_from_slice(&0xabcu64.to_be_bytes());
        pi[22] = 2 << 6;
    });
    kunit_expect_eq!(be64(&a, DR + 112), 0xabc);
    // A Get with another M_Key at level 2: no answer, one violation.
    let (o, _) = offer(&d, 1, &opa_dr(1, 0x11, 0, 0x999), false);
    kunit_expect_eq!(o.flags, 0);
    kunit_expect_eq!(d.ports[0].mgmt().mkey_violations, 1);
    // And a bad M_Key trap (256) for the SM at LID 1, which no port of this switch has.
    kunit_expect_eq!(Counters::get(&d.ports[0].counters.xmit_unknown_dlid), 1);
    // The right M_Key, or the core's IGNORE_MKEY, passes.
    let (o, _) = offer(&d, 1, &opa_dr(1, 0x11, 0, 0xabc), false);
    kunit_expect_eq!(o.flags, REPLIED);
    let (o, _) = offer(&d, 1, &opa_dr(1, 0x11, 0, 0x999), true);
    kunit_expect_eq!(o.flags, REPLIED);
    // At level 1 a Get passes, with the M_Key hidden from the wrong key.
    let mut m = opa_dr(1, 0x15, 0x0100_0000, 0xabc);
    let (_, got) = offer(&d, 1, &m, false);
    m = opa_dr(2, 0x15, 0x0100_0000, 0xabc);
    put(&mut m, DR, &got[DR..DR + 242]);
    m[DR + 19] = 0;
    m[DR + 22] = 1 << 6;
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    let (o, a) = offer(&d, 1, &opa_dr(1, 0x15, 0x0100_0000, 0x999), false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(be64(&a, DR + 112), 0);
}

fn sma_pkey_table() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    let (o, a) = offer(&d, 1, &opa_dr(1, 0x16, 0x0100_0000, 0), false);
    kunit_expect_eq!(o.size, DR + 64);
    kunit_expect_eq!(be16(&a, DR), 0xffff);
    kunit_expect_eq!(be16(&a, DR + 2), 0x8001);
    // A table without the limited management P_Key: refused, nothing changes.
    let mut m = opa_dr(2, 0x16, 0x0100_0000, 0);
    put(&mut m, DR, &[0xff, 0xff, 0x80, 0x02]);
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    kunit_expect_eq!(d.ports[0].config().pkeys[1], 0x8001);
    // With it: the port's table, which the datapath checks.
    put(&mut m, DR + 4, &[0x7f, 0xff]);
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    kunit_expect_eq!(d.ports[0].config().pkeys[1], 0x8002);
    kunit_expect_eq!(d.ports[0].config().pkeys[2], 0x7fff);
    kunit_expect_eq!(d.ports[0].accept_pkey(0x8002), Some(1));
    // Block 1 does not exist; no block is invalid.
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x16, 0x0100_0001, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x16, 0, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
}

fn sma_vl_maps() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    let p = &d.ports[0];
    // SC2VLt: refused while Active.
    let mut m = opa_dr(2, 0x84, 0x0100_0000, 0);
    put(&mut m, DR, &[0, 1, 15]);
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    // In Init it is the datapath's table; SC2 to VL15 is kept as the illegal VL.
    p.update_config(|c| c.state = PortState::Init);
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    kunit_expect_eq!(p.sc2vl()[2], 12);
    kunit_expect_eq!(a[DR + 2], 15);
    // SL2SC and SC2SL, no attribute modifier.
    let mut m = opa_dr(2, 0x17, 0, 0);
    put(&mut m, DR, &[3, 4]);
    let (o, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(o.size, DR + 32);
    kunit_expect_eq!(&a[DR..DR + 3], &[3, 4, 0]);
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x82, 1, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    // VLArb: the preemption tables cannot be set.
    let (_, a) = offer(&d, 1, &opa_dr(2, 0x18, 0x0102_0000, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x800c);
    // BufferControlTable: VL15's 272 credits after reset.
    let (o, a) = offer(&d, 1, &opa_dr(1, 0x8a, 0x0100_0000, 0), false);
    kunit_expect_eq!(o.size, DR + 136);
    kunit_expect_eq!(be16(&a, DR + 64), 272);
    // CableInfo: no cable.
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x32, 0, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
}

fn sma_aggregate() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    // NodeInfo (44 bytes: 6 words of 8) and PortInfo (242: 31 words).
    let mut m = opa_dr(1, 0x80, 2, 0);
    put(&mut m, DR, &[0, 0x11, 0, 6, 0, 0, 0, 0]);
    put(&mut m, DR + 56, &[0, 0x15, 0, 31, 1, 0, 0, 0]);
    let (o, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    kunit_expect_eq!(a[DR + 8], 0x80);
    kunit_expect_eq!(be32(&a, DR + 64), 0x41);
    kunit_expect_eq!(o.size, DR + 56 + 256);
    // A segment that fails ends the answer with its status; as on hfi1, whose test of
    // IB_SMP_INVALID_FIELD's bits also matches an unsupported attribute, its error bit
    // stays clear.
    put(&mut m, DR + 56, &[0, 0x99, 0, 1, 0, 0, 0, 0]);
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x800c);
    kunit_expect_eq!(be16(&a, DR + 58) & 0x8000, 0);
    // No segment, or too many: invalid.
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x80, 0, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
}

/// Congestion control as hfi1 keeps it: CongestionInfo, a setting and a table set and read
/// back, a limit past the entries sent refused, the log of an HFI.
fn sma_congestion() {
    let Some(d) = device() else {
        kunit_expect!(false);
        return;
    };
    let (o, a) = offer(&d, 1, &opa_dr(1, 0x8b, 0, 0), false);
    kunit_expect_eq!(o.flags, REPLIED);
    kunit_expect_eq!(&a[DR..DR + 4], &[0, 0, 31, 96]);
    let mut m = opa_dr(2, 0x90, 0, 0);
    put(&mut m, DR, &0x8000_0001u32.to_be_bytes());
    put(&mut m, DR + 6, &[5, 0xee, 0, 10, 7, 1]);
    offer(&d, 1, &m, false);
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x90, 0, 0), false);
    kunit_expect_eq!(be32(&a, DR), 0x8000_0001);
    kunit_expect_eq!(be16(&a, DR + 4), 1);
    kunit_expect_eq!(&a[DR + 6..DR + 12], &[5, 0, 0, 10, 7, 1]);
    // One block from block 2, CCTI_Limit 130 (block 2, entry 2): entries 128 to 130 kept.
    let mut m = opa_dr(2, 0x91, 0x0100_0002, 0);
    put(&mut m, DR, &130u16.to_be_bytes());
    for j in 0..64u16 {
        put(
            &mut m,
            DR + 2 + 2 * usize::from(j),
            &(0x4000 | j).to_be_bytes(),
        );
    }
    let (o, a) = offer(&d, 1, &m, false);
    // GetResp, no error (the direction bit of a directed-route answer).
    kunit_expect_eq!(be16(&a, 4), 0x8000);
    // The header and the table, rounded up to 8 bytes.
    kunit_expect_eq!(o.size, (DR + 2 * 65 + 7) & !7);
    kunit_expect_eq!(be16(&a, DR), 130);
    kunit_expect_eq!(be16(&a, DR + 2 + 4), 0x4002);
    kunit_expect_eq!(be16(&a, DR + 2 + 6), 0);
    // CCTI_Limit 64 with one block from block 0: past the entries sent, refused.
    let mut m = opa_dr(2, 0x91, 0x0100_0000, 0);
    put(&mut m, DR, &64u16.to_be_bytes());
    let (_, a) = offer(&d, 1, &m, false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    // 32 blocks: more than the table has.
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x91, 0x0100_001f, 0), false);
    kunit_expect_eq!(be16(&a, 4), 0x801c);
    let (_, a) = offer(&d, 1, &opa_dr(1, 0x8f, 0, 0), false);
    kunit_expect_eq!(a[DR], 2);
}

kernel::kunit_suite!(
    opasim_sma,
    [
        sma_ib_nodeinfo,
        sma_opa_nodeinfo_desc,
        sma_refusals,
        sma_portinfo,
        sma_port_states,
        sma_mkey,
        sma_pkey_table,
        sma_vl_maps,
        sma_aggregate,
        sma_congestion
    ]
);
