// SPDX-License-Identifier: GPL-2.0-only

//! The KUnit suite of the managed switch: directed-route hops as `smi.c` moves them, the
//! switch's SMA (NodeInfo, SwitchInfo, PortInfo, LFT, MFT), and forwarding by the tables the
//! SM wrote (on ports attached to a private switch, without RDMA devices).

use crate::{
    fabric::Fabric,
    port::{Counters, Port, PortConfig},
    switch::{LFT_CAP, SWITCH_PORTS},
    switch_sma::{answer, Neighbor, SwSma, SWITCH_GUID},
    switch_smi::{dr_step, DrAction},
};
use kernel::{kunit_expect, kunit_expect_eq, prelude::*, rdma::provider::PortState, sync::Arc};

/// A directed-route SMP of `hop_cnt` hops along `initial` (ports from index 1), its hop
/// pointer at `hop_ptr`, both route LIDs permissive.
fn dr_smp(hop_ptr: u8, hop_cnt: u8, initial: &[u8]) -> [u8; 256] {
    let mut b = [0u8; 256];
    b[0] = 0x80;
    b[1] = 0x81;
    b[2] = 0x80;
    b[3] = 0x01;
    b[6] = hop_ptr;
    b[7] = hop_cnt;
    b[32..40].fill(0xff);
    for (i, p) in initial.iter().enumerate() {
        b[41 + i] = *p;
    }
    b
}

fn dr_end_of_path_is_local() {
    // The SM's HFI sent it out of its port 1 (hop pointer 1); the switch is the end.
    let mut b = dr_smp(1, 1, &[1]);
    kunit_expect_eq!(dr_step(&mut b, 5), DrAction::Local);
    // The switch noted where it came in, and the hop pointer went past the end.
    kunit_expect_eq!(b[104 + 1], 5);
    kunit_expect_eq!(b[6], 2);
    // The answer goes back out of the port the request came in on.
    b[4] = 0x80;
    kunit_expect_eq!(dr_step(&mut b, 5), DrAction::Forward(5));
    kunit_expect_eq!(b[6], 1);
}

fn dr_intermediate_hop_forwards() {
    // SM's HFI port 1, then switch port 7: the HFI there is the end.
    let mut b = dr_smp(1, 2, &[1, 7]);
    kunit_expect_eq!(dr_step(&mut b, 3), DrAction::Forward(7));
    kunit_expect_eq!(b[104 + 1], 3);
    kunit_expect_eq!(b[6], 2);
    // The answer comes back from that HFI with the hop pointer at 2 and goes out of port 3.
    b[4] = 0x80;
    kunit_expect_eq!(dr_step(&mut b, 7), DrAction::Forward(3));
    kunit_expect_eq!(b[6], 1);
}

fn dr_bad_hops_discarded() {
    // The sender did not move the hop pointer.
    let mut b = dr_smp(0, 1, &[1]);
    kunit_expect_eq!(dr_step(&mut b, 1), DrAction::Discard);
    // A next hop the switch does not have.
    let mut b = dr_smp(1, 2, &[1, (SWITCH_PORTS + 1) as u8]);
    kunit_expect_eq!(dr_step(&mut b, 1), DrAction::Discard);
    // Too many hops.
    let mut b = dr_smp(1, 64, &[1]);
    kunit_expect_eq!(dr_step(&mut b, 1), DrAction::Discard);
    // A directed route that ends in a LID route is not modelled.
    let mut b = dr_smp(1, 1, &[1]);
    b[36..40].copy_from_slice(&7u32.to_be_bytes());
    kunit_expect_eq!(dr_step(&mut b, 1), DrAction::Discard);
}

fn dr_mixed_lid_routed_start() {
    // From the SM's LID 1, LID-routed to the switch, then out of its port 4.
    let mut b = dr_smp(0, 1, &[4]);
    b[32..36].copy_from_slice(&1u32.to_be_bytes());
    kunit_expect_eq!(dr_step(&mut b, 1), DrAction::Forward(4));
    kunit_expect_eq!(b[6], 1);
    // The HFI there answers (it noted its port and moved the hop pointer back to 1): the
    // directed part ends at the switch, the rest goes to the DrSLID by LID.
    b[4] = 0x80;
    kunit_expect_eq!(dr_step(&mut b, 4), DrAction::ToSlid(1));
    kunit_expect_eq!(b[6], 0);
}

/// A managed switch with HFI ports in slots 0 and 1 (LID 0, Init) and port 2 unattached.
fn managed() -> Option<(Arc<Fabric>, [Arc<Port>; 2])> {
    let fabric = Fabric::with_mode(true).ok()?;
    let mut c = PortConfig::new(0, &[0xffff]);
    c.state = PortState::Init;
    let p = [
        Port::new(0, 1, 0x11, c).ok()?,
        Port::new(1, 1, 0x21, c).ok()?,
    ];
    for port in &p {
        fabric.attach(port.clone()).ok()?;
    }
    Some((fabric, p))
}

/// Answers the Get or Set `method` of `attr`/`am` with `data` at the switch (in on port 1).
fn ask(fabric: &Fabric, method: u8, attr: u16, am: u32, data: &[u8]) -> KVec<u8> {
    let mut b = KVec::from_elem(0u8, 2048, GFP_KERNEL).unwrap_or_default();
    if b.len() < 2048 {
        return b;
    }
    b[..256].copy_from_slice(&dr_smp(2, 1, &[1]));
    b[3] = method;
    b[16..18].copy_from_slice(&attr.to_be_bytes());
    b[20..24].copy_from_slice(&am.to_be_bytes());
    b[176..176 + data.len()].copy_from_slice(data);
    let ns = [
        Neighbor {
            guid: 0x11,
            port: 1,
            mgmt_allowed: true,
        },
        Neighbor {
            guid: 0x21,
            port: 1,
            mgmt_allowed: false,
        },
    ];
    let mut st = fabric.switch.lock();
    let mut s = SwSma {
        st: &mut st,
        ingress: 1,
        neighbors: &ns,
        method,
        mkey: 0,
    };
    answer(&mut s, &mut b, 176);
    b
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn switch_sma_node_and_switch_info() {
    let Some((fabric, _p)) = managed() else {
        kunit_expect!(false);
        return;
    };
    let b = ask(&fabric, 1, 0x11, 0, &[]);
    kunit_expect_eq!(b[3], 0x81);
    // GetResp with the direction bit, no error.
    kunit_expect_eq!(u16::from_be_bytes([b[4], b[5]]), 0x8000);
    kunit_expect_eq!(b[176 + 2], 2);
    kunit_expect_eq!(b[176 + 3] as usize, SWITCH_PORTS);
    kunit_expect_eq!(
        u64::from_be_bytes(b[176 + 16..176 + 24].try_into().unwrap_or([0; 8])),
        SWITCH_GUID
    );
    kunit_expect_eq!(b[176 + 40], 1);
    let b = ask(&fabric, 1, 0x12, 0, &[]);
    kunit_expect_eq!(be32(&b, 176), LFT_CAP);
    kunit_expect_eq!(b[176 + 76], 0x08);
    // An attribute the switch does not have.
    let b = ask(&fabric, 1, 0x20, 0, &[]);
    kunit_expect_eq!(u16::from_be_bytes([b[4], b[5]]), 0x800c);
}

fn switch_sma_port_info() {
    let Some((fabric, _p)) = managed() else {
        kunit_expect!(false);
        return;
    };
    // Ports 1 to 3: two linked to HFIs (Init), the third down.
    let b = ask(&fabric, 1, 0x15, (3 << 24) | 1, &[]);
    let pi = |n: usize| 176 + n * 242;
    kunit_expect_eq!(b[pi(0) + 19], (5 << 4) | 2);
    kunit_expect_eq!(b[pi(1) + 19], (5 << 4) | 2);
    kunit_expect_eq!(b[pi(2) + 19] & 0xf, 1);
    kunit_expect_eq!(
        u64::from_be_bytes(b[pi(1) + 208..pi(1) + 216].try_into().unwrap_or([0; 8])),
        0x21
    );
    kunit_expect_eq!(b[pi(1) + 239], 2);
    // PortNeighborMode: an HFI (type 0) on both, management allowed on port 1 only.
    kunit_expect_eq!(b[pi(0) + 236], 1 << 3);
    kunit_expect_eq!(b[pi(1) + 236], 0);
    // Port 0's LID, then port 1 to Armed and Active.
    let mut req = [0u8; 242];
    req[..4].copy_from_slice(&0x10u32.to_be_bytes());
    req[108..112].copy_from_slice(&1u32.to_be_bytes());
    let b = ask(&fabric, 2, 0x15, 1 << 24, &req);
    kunit_expect_eq!(u16::from_be_bytes([b[4], b[5]]), 0x8000);
    kunit_expect_eq!(fabric.switch.lock().lid, 0x10);
    // An external port keeps the LID the SM writes (its HFI's, for the SLID check), apart
    // from port 0's, which every sweep compares with the HFI's own.
    req[..4].copy_from_slice(&0x21u32.to_be_bytes());
    ask(&fabric, 2, 0x15, (1 << 24) | 2, &req);
    let b = ask(&fabric, 1, 0x15, 3 << 24, &[]);
    kunit_expect_eq!(be32(&b, pi(0)), 0x10);
    kunit_expect_eq!(be32(&b, pi(2)), 0x21);
    kunit_expect_eq!(be32(&b, pi(1)), 0);
    let mut req = [0u8; 242];
    req[19] = 3;
    ask(&fabric, 2, 0x15, (1 << 24) | 1, &req);
    // Active only from Armed: the second Set to Active is refused on port 2 (still Init).
    req[19] = 4;
    ask(&fabric, 2, 0x15, (1 << 24) | 1, &req);
    let b = ask(&fabric, 2, 0x15, (1 << 24) | 2, &req);
    kunit_expect_eq!(u16::from_be_bytes([b[4], b[5]]), 0x801c);
    kunit_expect_eq!(fabric.switch.lock().state(1), PortState::Active);
    kunit_expect_eq!(fabric.switch.lock().state(2), PortState::Init);
}

fn switch_forwards_by_lft() {
    let Some((fabric, p)) = managed() else {
        kunit_expect!(false);
        return;
    };
    for (port, lid) in p.iter().zip([1u32, 2]) {
        let mut c = port.config();
        c.lid = lid;
        c.state = PortState::Active;
        port.set_config(c);
    }
    // Nothing is programmed: every LID is dropped.
    kunit_expect!(fabric.forward(&p[0], 2).is_none());
    kunit_expect_eq!(Counters::get(&fabric.unknown_dlid), 1);
    // LID 2 to port 2, LID 1 to port 1 (block 0 of the LFT).
    let mut lft = [0xffu8; 64];
    lft[1] = 1;
    lft[2] = 2;
    let b = ask(&fabric, 2, 0x19, 1 << 24, &lft);
    kunit_expect_eq!(b[176 + 2], 2);
    // SMPs pass ports that are Init; data waits for Active.
    kunit_expect!(fabric
        .forward_smp(&p[0], 2)
        .is_some_and(|t| Arc::ptr_eq(&t, &p[1])));
    kunit_expect!(fabric.forward(&p[0], 2).is_none());
    {
        let mut st = fabric.switch.lock();
        for n in 1..=2 {
            if let Some(sp) = st.port_mut(n) {
                sp.state = PortState::Active;
            }
        }
    }
    kunit_expect!(fabric
        .forward(&p[0], 2)
        .is_some_and(|t| Arc::ptr_eq(&t, &p[1])));
    kunit_expect!(fabric
        .forward(&p[1], 1)
        .is_some_and(|t| Arc::ptr_eq(&t, &p[0])));
    // A multicast LID goes to the MFT's ports only (bit N: port N), not back to the sender.
    kunit_expect_eq!(fabric.flood(&p[0], 0xf0_0001).len(), 0);
    let mut mft = [0u8; 64];
    mft[8..16].copy_from_slice(&0b110u64.to_be_bytes());
    ask(&fabric, 2, 0x1b, 1 << 24, &mft);
    let to = fabric.flood(&p[0], 0xf0_0001);
    kunit_expect_eq!(to.len(), 1);
    kunit_expect!(to.first().is_some_and(|t| Arc::ptr_eq(t, &p[1])));
}

/// Cascade activation: an Armed switch port becomes Active with the HFI port on its link, an
/// Init one does not.
fn switch_port_follows_active_hfi() {
    let Some((fabric, p)) = managed() else {
        kunit_expect!(false);
        return;
    };
    if let Some(sp) = fabric.switch.lock().port_mut(1) {
        sp.state = PortState::Armed;
    }
    fabric.neighbor_active(&p[0]);
    fabric.neighbor_active(&p[1]);
    kunit_expect_eq!(fabric.switch.lock().state(1), PortState::Active);
    kunit_expect_eq!(fabric.switch.lock().state(2), PortState::Init);
}

/// `mgmt_allowed=`: the devices whose switch port allows management, as the HFIs and the
/// switch report it.
fn mgmt_allowed_devices() {
    let Some((fabric, _p)) = managed() else {
        kunit_expect!(false);
        return;
    };
    kunit_expect!(fabric.mgmt_allowed(0) && fabric.mgmt_allowed(1));
    kunit_expect_eq!(crate::parse_device_set(b"all").ok(), Some(u64::MAX));
    kunit_expect_eq!(crate::parse_device_set(b"0,2").ok(), Some(0b101));
    for bad in [&b""[..], b"64", b"x", b"1,-2"] {
        kunit_expect!(crate::parse_device_set(bad).is_err());
    }
    // `all` covers every index, past 63 too.
    kunit_expect!(fabric.mgmt_allowed(0xee));
    fabric.set_mgmt_allowed(0b1);
    kunit_expect!(fabric.mgmt_allowed(0));
    kunit_expect!(!fabric.mgmt_allowed(1));
    kunit_expect!(!fabric.mgmt_allowed(64));
}

/// The SM sets MTU code 0 for the VLs it does not use: MTU 0, as hfi1's `enum_to_mtu()`, not
/// an invalid field (which failed opa-fm's Set(PortInfo) of its own port).
fn vl_mtu_code_zero() {
    use crate::portinfo_fields::{code_mtu, mtu_code};
    kunit_expect_eq!(code_mtu(0), Some(0));
    kunit_expect_eq!(mtu_code(0, 7), 0);
    kunit_expect_eq!(code_mtu(4), Some(2048));
    kunit_expect_eq!(code_mtu(8), None);
    kunit_expect_eq!(mtu_code(3000, 7), 7);
}

kernel::kunit_suite!(
    opasim_managed,
    [
        switch_port_follows_active_hfi,
        vl_mtu_code_zero,
        dr_end_of_path_is_local,
        dr_intermediate_hop_forwards,
        dr_bad_hops_discarded,
        dr_mixed_lid_routed_start,
        switch_sma_node_and_switch_info,
        switch_sma_port_info,
        switch_forwards_by_lft,
        mgmt_allowed_devices
    ]
);
