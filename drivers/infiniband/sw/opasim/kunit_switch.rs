// SPDX-License-Identifier: GPL-2.0-only

//! The KUnit suite of opasim's switch: routing by DLID and the receive checks of a port (on
//! ports attached to a private switch, without RDMA devices).

use crate::{
    fabric::Fabric,
    port::{Counters, Port, PortConfig},
    ud::{self, Packet, Refusal},
};
use kernel::{kunit_expect, kunit_expect_eq};

/// A switch with ports of LIDs 1, 2 and 3 (port 3 down), the P_Keys of each given.
fn three_ports(
    pkeys: [&[u16]; 3],
) -> Option<(kernel::sync::Arc<Fabric>, [kernel::sync::Arc<Port>; 3])> {
    let fabric = Fabric::new().ok()?;
    let mut c3 = PortConfig::new(3, pkeys[2]);
    c3.state = kernel::rdma::provider::PortState::Down;
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

fn switch_sm_lid_follows_the_sm_port() {
    let Some((fabric, p)) = three_ports([&[0xffff], &[0xffff], &[0xffff]]) else {
        kunit_expect!(false);
        return;
    };
    kunit_expect_eq!(fabric.sm_lid(), 0);
    fabric.set_sm(Some((1, 1)));
    kunit_expect_eq!(fabric.sm_port(), Some((1, 1)));
    kunit_expect_eq!(fabric.sm_lid(), 2);
    // The SM's port gets a new LID: every port sees it at once.
    let mut c = p[1].config();
    c.lid = 0x42;
    p[1].set_config(c);
    kunit_expect_eq!(fabric.sm_lid(), 0x42);
    // A port that is down, or an SM on a port not on the switch, gives no SMLID.
    fabric.set_sm(Some((2, 1)));
    kunit_expect_eq!(fabric.sm_lid(), 0);
    fabric.set_sm(Some((7, 1)));
    kunit_expect_eq!(fabric.sm_lid(), 0);
    fabric.set_sm(None);
    kunit_expect_eq!(fabric.sm_port(), None);
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
        switch_sm_lid_follows_the_sm_port,
        receive_pkey_rule
    ]
);
