// SPDX-License-Identifier: GPL-2.0-only

//! The switch's SMA: the attributes an OPA switch answers the subnet manager (OPA
//! specification, ch. 20; the layouts of opa-ff's `stl_sm_types.h`), Get and Set, one by one
//! or in an Aggregate. The SM configures through it what the switch's forwarding reads: port 0's
//! LID, each port's state, the LFT and the MFT. The QoS tables it writes (SL2SC, SC2SC,
//! SC2VL, VL arbitration, buffer control) are taken and read back as the defaults: the
//! simulated switch does not arbitrate VLs.

use crate::{
    mgmt::{phys_state, state_num, LINK_WIDTH_4X},
    port::PKEY_TABLE_LEN,
    portinfo_fields::{led_offline, put_mgmt, put_vl_mtus, take_vl_mtus, MgmtSet},
    sma::{
        Answer, ATTR_NODE_INFO, ATTR_PORT_INFO, METHOD_GET, METHOD_SET, OPA_SM_CLASS_VERSION,
        STATUS_INVALID_FIELD, STATUS_UNSUP_METHOD, STATUS_UNSUP_METH_ATTR,
    },
    sma_port::{PORT_INFO_LEN, PSI_LEN},
    switch::{SwitchState, LFT_CAP, MFT_CAP, SWITCH_PORTS},
};
use kernel::rdma::provider::{mad::OPA_BASE_VERSION, PortState};

/// The switch's node and port 0 GUID.
pub(crate) use crate::fabric::SWITCH_GUID;

/// Node type: switch.
const NODE_TYPE_SWITCH: u8 = 2;
/// The bytes of SwitchInfo (`STL_SWITCH_INFO`).
const SWITCH_INFO_LEN: usize = 84;
/// LFT entries of a block (`MAX_LFT_ELEMENTS_BLOCK`).
const LFT_BLOCK: usize = 64;
/// MFT entries of a block (`STL_NUM_MFT_ELEMENTS_BLOCK`), 8 bytes each.
const MFT_BLOCK: usize = 8;
/// Where PortInfo's `XmitQ` (32 bytes, one a VL) starts.
const XMIT_Q: usize = 144;
/// The device ID the switch reports (Intel's Omni-Path switch ASIC).
const DEVICE_ID: u16 = 0x2718;

/// The node on the other end of a switch port: its node GUID and port number (0 GUID: no
/// link).
#[derive(Clone, Copy, Default)]
pub(crate) struct Neighbor {
    /// The neighbour's node GUID.
    pub(crate) guid: u64,
    /// The neighbour's port number.
    pub(crate) port: u8,
    /// The port allows its neighbour management (PortNeighborMode.MgmtAllowed).
    pub(crate) mgmt_allowed: bool,
}

/// A request to the switch's SMA.
pub(crate) struct SwSma<'a> {
    /// The switch.
    pub(crate) st: &'a mut SwitchState,
    /// The port the SMP came in on.
    pub(crate) ingress: usize,
    /// The neighbour of each port (index 0: port 1).
    pub(crate) neighbors: &'a [Neighbor],
    /// The request's method.
    pub(crate) method: u8,
    /// The request's M_Key.
    pub(crate) mkey: u64,
}

/// The ports an attribute modifier names (`NNNN NNNN ... PPPP PPPP`: the count in the top
/// byte, the first port in the low byte), when they exist and `size` bytes each fit `max`.
fn port_range(am: u32, size: usize, max: usize) -> Option<core::ops::Range<usize>> {
    let n = (am >> 24) as usize;
    let start = (am & 0xff) as usize;
    (n >= 1 && start + n - 1 <= SWITCH_PORTS && n * size <= max).then_some(start..start + n)
}

/// Get or Set of one attribute at `at` (`max` bytes there); the bytes the answer holds.
pub(crate) fn attr(
    s: &mut SwSma<'_>,
    ans: &mut Answer<'_>,
    id: u16,
    am: u32,
    at: usize,
    max: usize,
) -> usize {
    let set = s.method == METHOD_SET;
    if !set {
        ans.zero(at, max);
    }
    let r = match (id, set) {
        (0x10, false) => node_desc(s, ans, am, at, max),
        (ATTR_NODE_INFO, false) => node_info(s, ans, am, at, max),
        (0x12, _) => switch_info(s, ans, am, at, max),
        (ATTR_PORT_INFO, _) => port_info(s, ans, am, at, max),
        (0x87, _) => port_state_info(s, ans, am, at, max),
        (0x16, _) => pkeys(s, ans, am, at, max),
        (0x19, _) => lft(s, ans, am, at, max),
        (0x1b, _) => mft(s, ans, am, at, max),
        // SL2SC, SC2SL, SC2VLr: one table of 32 bytes.
        (0x17 | 0x82 | 0x83, _) => qos(ans, set, at, max, 32, 1, identity),
        // SC2SC (per egress port), SC2VLt and SC2VLnt (per port): 32 bytes each.
        (0x81 | 0x84 | 0x85, _) => qos(ans, set, at, max, 32, am >> 24, sc2vl(id)),
        // VL arbitration: a section (high, low, preemption: 256 bytes; matrix: 128) per port.
        (0x18, _) => {
            let size = if (am >> 16) & 0xff == 3 { 128 } else { 256 };
            qos(ans, set, at, max, size, am >> 24, zeros)
        }
        // BufferControlTable: 132 bytes a port, padded to 8.
        (0x8a, _) => qos(ans, set, at, max, 136, am >> 24, zeros),
        // SwitchCongestionSetting: 76 bytes.
        (0x8d, _) => qos(ans, set, at, max, 76, 1, zeros),
        // LedInfo: 8 bytes a port.
        (0x31, _) => qos(ans, set, at, max, 8, am >> 24, zeros),
        // CableInfo: the ports are fixed links, no QSFP (as hfi1 answers for such a port).
        (0x32, false) => None,
        _ => {
            ans.fail(STATUS_UNSUP_METH_ATTR);
            return 0;
        }
    };
    r.unwrap_or_else(|| {
        ans.fail(STATUS_INVALID_FIELD);
        0
    })
}

fn identity(i: usize) -> u8 {
    (i % 32) as u8
}

fn zeros(_i: usize) -> u8 {
    0
}

/// The default of SC2SC (identity) or SC2VL (hfi1's after reset).
fn sc2vl(id: u16) -> fn(usize) -> u8 {
    match id {
        0x81 => identity,
        _ => |i| crate::integrity::DEFAULT_SC2VL[i % 32],
    }
}

/// A QoS table the switch takes and reads back as its default `byte(i)`: `n` entries of
/// `size` bytes.
fn qos(
    ans: &mut Answer<'_>,
    set: bool,
    at: usize,
    max: usize,
    size: usize,
    n: u32,
    byte: fn(usize) -> u8,
) -> Option<usize> {
    let n = (n as usize).max(1);
    if n > SWITCH_PORTS + 1 || n * size > max {
        return None;
    }
    if !set {
        for i in 0..n * size {
            ans.put_u8(at + i, byte(i % size));
        }
    }
    Some(n * size)
}

/// Get(NodeDescription).
fn node_desc(s: &SwSma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Option<usize> {
    if am != 0 || max < 64 {
        return None;
    }
    ans.put(at, &s.st.desc);
    Some(64)
}

/// Get(NodeInfo): a switch of [`SWITCH_PORTS`] ports; the local port is the one the SMP came
/// in on.
fn node_info(s: &SwSma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Option<usize> {
    if am != 0 || max < 44 {
        return None;
    }
    ans.put_u8(at, OPA_BASE_VERSION);
    ans.put_u8(at + 1, OPA_SM_CLASS_VERSION);
    ans.put_u8(at + 2, NODE_TYPE_SWITCH);
    ans.put_u8(at + 3, SWITCH_PORTS as u8);
    ans.put_be64(at + 8, SWITCH_GUID);
    ans.put_be64(at + 16, SWITCH_GUID);
    ans.put_be64(at + 24, SWITCH_GUID);
    ans.put_be16(at + 32, PKEY_TABLE_LEN as u16);
    ans.put_be16(at + 34, DEVICE_ID);
    ans.put_u8(at + 40, s.ingress as u8);
    let oui = crate::hfi::VENDOR_ID.to_be_bytes();
    ans.put(at + 41, &oui[1..]);
    Some(44)
}

/// Get/Set(SwitchInfo): the table sizes, the tops the SM programmed, the life time and
/// PortStateChange (a Set with it clears it), linear routing, enhanced port 0.
fn switch_info(
    s: &mut SwSma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Option<usize> {
    if am != 0 || max < SWITCH_INFO_LEN {
        return None;
    }
    let st = &mut *s.st;
    if s.method == METHOD_SET {
        st.lft_top = ans.be32_at(at + 12).min(LFT_CAP - 1);
        st.mft_top = ans.be32_at(at + 16);
        let b = ans.u8_at(at + 67);
        st.lifetime = b >> 3;
        if b & 0x04 != 0 {
            st.port_state_change = false;
        }
        ans.zero(at, SWITCH_INFO_LEN);
    }
    ans.put_be32(at, LFT_CAP);
    ans.put_be32(at + 8, MFT_CAP);
    ans.put_be32(at + 12, st.lft_top);
    ans.put_be32(at + 16, st.mft_top);
    ans.put_u8(
        at + 67,
        (st.lifetime << 3) | (u8::from(st.port_state_change) << 2),
    );
    ans.put_be16(at + 70, PKEY_TABLE_LEN as u16);
    // Linear routing supported and enabled (`STL_ROUTE_LINEAR`).
    ans.put_u8(at + 74, 1);
    ans.put_u8(at + 75, 1);
    // EnhancedPort0.
    ans.put_u8(at + 76, 0x08);
    // CollectiveMask 1, MulticastMask 4: the top 4 bits of a LID mark it multicast.
    ans.put_u8(at + 77, (1 << 3) | 4);
    Some(SWITCH_INFO_LEN)
}

/// Get/Set(PortInfo) of each port the modifier names.
fn port_info(
    s: &mut SwSma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Option<usize> {
    let ports = port_range(am, PORT_INFO_LEN, max)?;
    let mut off = at;
    let mut ok = true;
    for p in ports.clone() {
        if s.method == METHOD_SET {
            ok &= set_port_info(s, ans, p, off);
            ans.zero(off, PORT_INFO_LEN);
        }
        get_port_info(s, ans, p, off);
        off += PORT_INFO_LEN;
    }
    if !ok {
        ans.fail(STATUS_INVALID_FIELD);
    }
    Some(ports.len() * PORT_INFO_LEN)
}

fn get_port_info(s: &SwSma<'_>, ans: &mut Answer<'_>, p: usize, at: usize) {
    let st = &*s.st;
    let (Some(port), Some(p0)) = (st.port(p), st.port(0)) else {
        return;
    };
    let m = &port.mgmt;
    let show_mkey = !(s.method == METHOD_GET && p0.mgmt.mkey != s.mkey && p0.mgmt.mkeyprot == 1);
    put_mgmt(ans, at, m, show_mkey);
    put_vl_mtus(ans, at, &port.vl_mtu);
    ans.put_be32(at, if p == 0 { st.lid } else { port.lid });
    ans.put_u8(
        at + 19,
        (phys_state(port.state, m) << 4) | state_num(port.state),
    );
    ans.put_be32(at + 108, p0.mgmt.sm_lid.unwrap_or(0));
    ans.put(at + XMIT_Q, &port.xmit_q);
    ans.put_u8(at + 239, p as u8);
    if let Some(n) = p
        .checked_sub(1)
        .and_then(|i| s.neighbors.get(i))
        .filter(|n| n.guid != 0)
    {
        ans.put_u8(at + 44, n.port);
        ans.put_be64(at + 208, n.guid);
        // The neighbour is an HFI (node type 0), which may manage the fabric when the port
        // allows it.
        ans.put_u8(at + 236, u8::from(n.mgmt_allowed) << 3);
    }
}

/// Applies a Set(PortInfo) to port `p`: port 0's LID and SM LID, every port's management
/// fields, MTUs and state. `false` when a field is invalid.
fn set_port_info(s: &mut SwSma<'_>, ans: &Answer<'_>, p: usize, at: usize) -> bool {
    let req = MgmtSet::read(ans, at);
    let lid = ans.be32_at(at);
    let smlid = ans.be32_at(at + 108);
    let msl = ans.u8_at(at + 23) & 0x1f;
    let states = ans.u8_at(at + 19);
    let st = &mut *s.st;
    let mut ok = true;
    if p == 0 {
        if lid >= 0xf0_0000 || smlid >= 0xf0_0000 {
            ok = false;
        } else {
            st.lid = lid;
        }
    }
    let Some(port) = st.port_mut(p) else {
        return false;
    };
    if p != 0 {
        port.lid = lid;
    }
    if p == 0 && smlid < 0xf0_0000 {
        port.mgmt.sm_lid = Some(smlid);
        port.mgmt.sm_sl = msl;
    }
    ok &= req.apply(&mut port.mgmt);
    if let Ok(q) = <[u8; 32]>::try_from(ans.bytes(at + XMIT_Q, 32)) {
        port.xmit_q = q;
    }
    ok &= take_vl_mtus(ans, at, &mut port.vl_mtu);
    ok & set_state(st, p, states & 0x0f, states >> 4)
}

/// Moves port `p` to the logical state `ls` (and physical `ps`), as an OPA port's state
/// machine allows: Init to Armed, Armed to Active (with NeighborNormal), Down bounces the
/// link back to Init; the same state again is ignored.
fn set_state(st: &mut SwitchState, p: usize, ls: u8, ps: u8) -> bool {
    let Some(port) = st.port_mut(p) else {
        return false;
    };
    let new = match (ls, port.state) {
        (0, _) => return ps == 0 || ps == 2 || ps == 3,
        (1, PortState::Down) => return true,
        // Down: the simulated link comes straight back up, to Init; a Disabled port stays down.
        (1, _) if ps == 3 => PortState::Down,
        (1, _) => PortState::Init,
        (2, PortState::Init) => return true,
        (3, PortState::Init) => PortState::Armed,
        (3, PortState::Armed | PortState::Active) => return true,
        (4, PortState::Armed) if port.mgmt.neighbor_normal => PortState::Active,
        (4, PortState::Active) => return true,
        _ => return false,
    };
    if new != port.state {
        port.state = new;
        st.port_state_change = true;
    }
    true
}

/// Get/Set(PortStateInfo) of each port the modifier names.
fn port_state_info(
    s: &mut SwSma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Option<usize> {
    let ports = port_range(am, PSI_LEN, max)?;
    let mut ok = true;
    for (i, p) in ports.clone().enumerate() {
        let off = at + i * PSI_LEN;
        if s.method == METHOD_SET {
            let b = ans.u8_at(off + 3);
            ok &= set_state(s.st, p, b & 0x0f, b >> 4);
            ans.zero(off, PSI_LEN);
        }
        let port = s.st.port(p)?;
        ans.put_u8(off + 1, led_offline(&port.mgmt) & !(1 << 6));
        ans.put_u8(
            off + 3,
            (phys_state(port.state, &port.mgmt) << 4) | state_num(port.state),
        );
        ans.put_be16(off + 4, LINK_WIDTH_4X);
        ans.put_be16(off + 6, LINK_WIDTH_4X);
    }
    if !ok {
        ans.fail(STATUS_INVALID_FIELD);
    }
    Some(ports.len() * PSI_LEN)
}

/// Get/Set(P_KeyTable): one block of 32 P_Keys (the first [`PKEY_TABLE_LEN`] kept) of the
/// port in bits 16-23 of the modifier.
fn pkeys(s: &mut SwSma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Option<usize> {
    let (n, p, block) = (am >> 24, ((am >> 16) & 0xff) as usize, am & 0x7ff);
    if n != 1 || block != 0 || max < 64 {
        return None;
    }
    let port = s.st.port_mut(p)?;
    if s.method == METHOD_SET {
        for (i, k) in port.pkeys.iter_mut().enumerate() {
            *k = ans.be16_at(at + 2 * i);
        }
        ans.zero(at, 64);
    }
    for (i, k) in port.pkeys.iter().enumerate() {
        ans.put_be16(at + 2 * i, *k);
    }
    Some(64)
}

/// Get/Set(LinearForwardingTable): `N` blocks of 64 one-byte egress ports from block `B`
/// (`NNNN NNNN 0000 00BB ... B`, as opa-fm's `sm_send_lft()` sends them).
fn lft(s: &mut SwSma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Option<usize> {
    let n = (am >> 24) as usize;
    let first = (am & 0x3_ffff) as usize * LFT_BLOCK;
    let len = n * LFT_BLOCK;
    if n == 0 || len > max || first + len > LFT_CAP as usize {
        return None;
    }
    let t = s.st.lft.get_mut(first..first + len)?;
    if s.method == METHOD_SET {
        let new = ans.bytes(at, len);
        if new.len() != len {
            return None;
        }
        t.copy_from_slice(new);
    }
    ans.put(at, t);
    Some(len)
}

/// Get/Set(MulticastForwardingTable): `N` blocks of 8 port masks from block `B`, position
/// `P` (`NNNN NNNN PP0. ... B`: the 64 ports of a mask from 64 * P); this switch's ports
/// are all in position 0.
fn mft(s: &mut SwSma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Option<usize> {
    let n = (am >> 24) as usize;
    let pos = (am >> 22) & 0x3;
    let first = (am & 0xf_ffff) as usize * MFT_BLOCK;
    let len = n * MFT_BLOCK;
    if n == 0 || len * 8 > max || first + len > MFT_CAP as usize {
        return None;
    }
    let set = s.method == METHOD_SET;
    for i in 0..len {
        let e = s.st.mft.get_mut(first + i)?;
        if set && pos == 0 {
            *e = ans.be64_at(at + 8 * i);
        }
        ans.put_be64(at + 8 * i, if pos == 0 { *e } else { 0 });
    }
    Some(len * 8)
}

/// Answers `buf`, an OPA SMP for the switch (data at `at`; `buf` is a whole MAD, the request
/// zero-padded), in place: checks the class version and method, then the attribute or each of
/// an Aggregate's. The answer's length: the headers and the attribute data, as hfi1's
/// `resp_len` (the SM checks it against the attribute's size).
pub(crate) fn answer(s: &mut SwSma<'_>, buf: &mut [u8], at: usize) -> usize {
    let mut ans = Answer::in_place(buf);
    let end = ans.len;
    let (class_version, attr_id, am) = (ans.u8_at(2), ans.be16_at(16), ans.be32_at(20));
    let max = end.saturating_sub(at);
    ans.len = at;
    if class_version != OPA_SM_CLASS_VERSION {
        ans.fail(crate::sma::STATUS_UNSUP_VERSION);
    } else if s.method != METHOD_GET && s.method != METHOD_SET {
        ans.fail(STATUS_UNSUP_METHOD);
    } else if attr_id == 0x80 {
        aggregate(s, &mut ans, am, at, end);
    } else {
        ans.len += attr(s, &mut ans, attr_id, am, at, max);
    }
    match ans.reply() {
        kernel::rdma::provider::mad::MadVerdict::Reply(n) => n,
        _ => 0,
    }
}

/// An Aggregate: up to 117 segments, each an attribute with its own 8-byte header; the first
/// that fails gets its error bit and ends it (`subn_get_opa_aggregate()`).
fn aggregate(s: &mut SwSma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, end: usize) {
    let n = am & 0xff;
    if !(1..=117).contains(&n) {
        ans.fail(STATUS_INVALID_FIELD);
        return;
    }
    let mut next = at;
    for _ in 0..n {
        let id = ans.be16_at(next);
        let erl = ans.be16_at(next + 2);
        let seg_am = ans.be32_at(next + 4);
        let data_len = usize::from(erl & 0x7f) * 8;
        ans.len += 8 + data_len;
        if next + 8 + data_len > end {
            ans.fail(STATUS_INVALID_FIELD);
            return;
        }
        let before = ans.status();
        attr(s, ans, id, seg_am, next + 8, data_len);
        if ans.status() != before {
            ans.put_be16(next + 2, erl | 0x8000);
            return;
        }
        next += 8 + data_len;
    }
}
