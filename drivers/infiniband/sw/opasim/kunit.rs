// SPDX-License-Identifier: GPL-2.0-only

//! KUnit suites of opasim: the P_Key rule, and the switch's routing and receive checks
//! (on ports attached to a private switch, without RDMA devices).

use crate::{
    fabric::Fabric,
    pkey,
    port::{Counters, Port, PortConfig},
    ud::{self, Packet, Refusal},
    vnic,
    wire::hdr16b::{self, Encap},
};
use kernel::{kunit_expect, kunit_expect_eq, prelude::*};

fn pkey_full_and_limited() {
    // Full to full, full to limited, limited to full: accepted.
    kunit_expect!(pkey::matches(0xffff, 0xffff));
    kunit_expect!(pkey::matches(0x8001, 0x0001));
    kunit_expect!(pkey::matches(0x0001, 0x8001));
    // Limited to limited: refused.
    kunit_expect!(!pkey::matches(0x0001, 0x0001));
    kunit_expect!(!pkey::matches(0x7fff, 0x7fff));
}

fn pkey_key_parts_differ() {
    kunit_expect!(!pkey::matches(0x8001, 0x8002));
    kunit_expect!(!pkey::matches(0xffff, 0x8001));
    // The invalid P_Key matches nothing, not even itself as a full member.
    kunit_expect!(!pkey::matches(0x8000, 0x8000));
    kunit_expect!(!pkey::matches(0x0000, 0x8000));
}

fn pkey_find_index() {
    let table = [0xffff, 0x0001, 0x8002, 0];
    kunit_expect_eq!(pkey::find(&table, 0xffff), Some(0));
    kunit_expect_eq!(pkey::find(&table, 0x7fff), Some(0));
    kunit_expect_eq!(pkey::find(&table, 0x8001), Some(1));
    kunit_expect_eq!(pkey::find(&table, 0x0001), None);
    kunit_expect_eq!(pkey::find(&table, 0x0002), Some(2));
    kunit_expect_eq!(pkey::find(&table, 0x8003), None);
}

kernel::kunit_suite!(
    opasim_pkey,
    [
        pkey_full_and_limited,
        pkey_key_parts_differ,
        pkey_find_index
    ]
);

/// A switch with ports of LIDs 1, 2 and 3 (port 3 down), the P_Keys of each given.
fn three_ports(
    pkeys: [&[u16]; 3],
) -> Option<(kernel::sync::Arc<Fabric>, [kernel::sync::Arc<Port>; 3])> {
    let fabric = Fabric::new().ok()?;
    let mut c3 = PortConfig::new(3, pkeys[2]);
    c3.active = false;
    let p = [
        Port::new(0, 1, 0x11, PortConfig::new(1, pkeys[0])).ok()?,
        Port::new(1, 1, 0x21, PortConfig::new(2, pkeys[1])).ok()?,
        Port::new(2, 1, 0x31, c3).ok()?,
    ];
    for port in &p {
        fabric.attach(port.clone()).ok()?;
    }
    Some((fabric, p))
}

fn is(a: Option<kernel::sync::Arc<Port>>, b: &Port) -> bool {
    a.is_some_and(|a| core::ptr::eq(&*a, b))
}

fn switch_routes_by_dlid() {
    let Some((fabric, p)) = three_ports([&[0xffff], &[0xffff], &[0xffff]]) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect!(is(fabric.forward(&p[0], 2), &p[1]));
    kunit_expect!(is(fabric.forward(&p[1], 1), &p[0]));
    // A port's own LID loops back.
    kunit_expect!(is(fabric.forward(&p[0], 1), &p[0]));
    kunit_expect_eq!(Counters::get(&fabric.unknown_dlid), 0);
}

fn switch_drops_unknown_dlid() {
    let Some((fabric, p)) = three_ports([&[0xffff], &[0xffff], &[0xffff]]) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect!(fabric.forward(&p[0], 99).is_none());
    // A port that is down does not receive.
    kunit_expect!(fabric.forward(&p[0], 3).is_none());
    // LID 0 is no destination.
    kunit_expect!(fabric.forward(&p[0], 0).is_none());
    kunit_expect_eq!(Counters::get(&fabric.unknown_dlid), 3);
    kunit_expect_eq!(Counters::get(&p[0].counters.xmit_unknown_dlid), 3);
    kunit_expect_eq!(Counters::get(&p[1].counters.xmit_unknown_dlid), 0);
}

fn switch_detach() {
    let Some((fabric, p)) = three_ports([&[0xffff], &[0xffff], &[0xffff]]) else {
        kunit_expect!(false);
        return;
    };
    fabric.detach_where(|q| q.dev_index == 1);
    kunit_expect!(fabric.forward(&p[0], 2).is_none());
    kunit_expect!(is(fabric.forward(&p[0], 1), &p[0]));
}

fn packet(pkey: u16) -> Packet<'static> {
    Packet {
        slid: 1,
        dlid: 2,
        sl: 0,
        pkey,
        src_qp: 1,
        dest_qp: 1,
        qkey: kernel::rdma::verbs::QP1_QKEY,
        imm: None,
        solicited: false,
        payload: &[0; 256],
    }
}

fn receive_pkey_rule() {
    let Some((_fabric, p)) = three_ports([&[0xffff, 0x8001], &[0xffff, 0x0001], &[0xffff]]) else {
        kunit_expect!(false);
        return;
    };
    // Limited to limited: refused and counted in the receiver's bad P_Key counter.
    kunit_expect_eq!(ud::receive(&p[1], &packet(0x0001)), Err(Refusal::BadPkey));
    kunit_expect_eq!(Counters::get(&p[1].counters.rcv_bad_pkey), 1);
    // Full to limited: passes the P_Key check (no QP1 here, so it stops at the QP lookup).
    kunit_expect_eq!(
        ud::receive(&p[1], &packet(0x8001)),
        Err(Refusal::NoReceiver)
    );
    kunit_expect_eq!(Counters::get(&p[1].counters.rcv_bad_pkey), 1);
    kunit_expect_eq!(Counters::get(&p[1].counters.rcv_dropped), 1);
    // An unknown partition: refused.
    kunit_expect_eq!(ud::receive(&p[1], &packet(0x8005)), Err(Refusal::BadPkey));
    kunit_expect_eq!(Counters::get(&p[1].counters.rcv_bad_pkey), 2);
}

kernel::kunit_suite!(
    opasim_switch,
    [
        switch_routes_by_dlid,
        switch_drops_unknown_dlid,
        switch_detach,
        receive_pkey_rule
    ]
);

/// A 16B packet for a frame of `eth_len` bytes, as the VNIC client builds it (header and
/// frame, no pad or tail).
fn client_packet(eth_len: usize) -> Option<KVec<u8>> {
    let enc = Encap {
        slid: 1,
        dlid: 2,
        sc: 0,
        rc: 0,
        pkey: 0x8001,
        entropy: 0x11,
        vesw_id: 3,
    };
    let hdr = enc.header(eth_len).ok()?;
    let mut pkt = KVec::new();
    pkt.extend_from_slice(&hdr.to_bytes().ok()?, GFP_KERNEL)
        .ok()?;
    for i in 0..eth_len {
        pkt.push(i as u8, GFP_KERNEL).ok()?;
    }
    Some(pkt)
}

fn vnic_wire_tail() {
    // Every pad count: frames of 60 to 67 bytes.
    for eth_len in 60..68 {
        let Some(pkt) = client_packet(eth_len) else {
            kunit_expect!(false);
            return;
        };
        let Ok((hdr, wire)) = vnic::wire_packet(&pkt) else {
            kunit_expect!(false);
            return;
        };
        kunit_expect_eq!(wire.len(), usize::from(hdr.len_qw) * 8);
        kunit_expect_eq!(wire.len() % 8, 0);
        kunit_expect_eq!(wire[..pkt.len()], pkt[..]);
        // The receive side takes it apart into the same frame.
        match hdr16b::decap(&wire) {
            Ok(d) => {
                kunit_expect_eq!(d.eth, &pkt[hdr16b::HDR_LEN..]);
                kunit_expect_eq!(d.icrc, 0);
                kunit_expect_eq!(
                    usize::from(d.pad),
                    wire.len() - pkt.len() - hdr16b::ICRC_TAIL_LEN
                );
                kunit_expect_eq!(d.hdr.vesw_id(), 3);
            }
            Err(_) => kunit_expect!(false),
        }
    }
}

fn vnic_wire_bad_length() {
    let Some(mut pkt) = client_packet(60) else {
        kunit_expect!(false);
        return;
    };
    // A frame longer than the header says: no room for the tail.
    let _ = pkt.extend_from_slice(&[0; 16], GFP_KERNEL);
    kunit_expect!(vnic::wire_packet(&pkt).is_err());
    // No header at all.
    kunit_expect!(vnic::wire_packet(&[0u8; 8]).is_err());
}

fn vnic_size_histogram() {
    let g = vnic::GrpCounters::default();
    let mut frame = [0u8; 14];
    // Unicast, untagged: the thresholds of hfi1 (lengths without FCS).
    for len in [60, 61, 123, 124, 251, 252, 507, 508, 1019, 1020, 1514, 1515] {
        g.count(&frame, len, true);
    }
    kunit_expect_eq!(g.sizes(), [1, 2, 2, 2, 2, 2, 1]);
    kunit_expect_eq!(g.kinds(), [12, 0, 12, 0]);
    // Broadcast and VLAN-tagged frames; a bad frame counts its size only.
    frame[0] = 0xff;
    frame[12] = 0x81;
    g.count(&frame, 64, true);
    g.count(&frame, 64, false);
    kunit_expect_eq!(g.kinds(), [12, 1, 12, 1]);
    kunit_expect_eq!(g.sizes()[1], 4);
}

kernel::kunit_suite!(
    opasim_vnic,
    [vnic_wire_tail, vnic_wire_bad_length, vnic_size_histogram]
);
