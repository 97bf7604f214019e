// SPDX-License-Identifier: GPL-2.0-only

//! The traps a port's SMA sends its subnet manager, as hfi1's `send_trap()` (`hw/hfi1/mad.c`):
//! an OPA SubnTrap(Notice), LID-routed, from QP0 of the port to the SM's LID and trap QP
//! (PortInfo's SMTrapQP), on the limited management P_Key and the SM's SL, only while the port
//! is Active and knows its SM.
//!
//! - Trap 144 (`hfi1_cap_mask_chg()`): the port's CapabilityMask or CapabilityMask3 changed,
//!   as when a VNIC driver starts or stops serving it; also with the NodeDescription flag
//!   (`hfi1_node_desc_chg()`) when the description changes.
//! - Trap 256 (`bad_mkey()`): an SMP came with a wrong M_Key.
//!
//! hfi1 sends a trap again until the SM represses it (TrapRepress); opasim sends each once.

use crate::{
    capture::Kind,
    port::{Capabilities, Counters, Port},
    sma::{FULL_MGMT_P_KEY, OPA_SM_CLASS_VERSION},
    ud::{self, Packet},
};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::rdma::provider::{mad::OPA_BASE_VERSION, PortState};

/// The size of the trap MAD hfi1 sends (`IB_MGMT_MAD_HDR + IB_MGMT_MAD_DATA`).
const TRAP_MAD_LEN: usize = 256;

/// Method Trap.
const METHOD_TRAP: u8 = 0x05;

/// Attribute Notice.
const ATTR_NOTICE: u16 = 0x0002;

/// Notice type: informational (`IB_NOTICE_TYPE_INFO`).
const TYPE_INFO: u8 = 0x84;
/// Notice type: security (`IB_NOTICE_TYPE_SECURITY`).
const TYPE_SECURITY: u8 = 0x82;
/// Producer type: channel adapter (`IB_NOTICE_PROD_CA`).
const PROD_CA: u16 = 1;

/// Trap 144's change flag of the node description (`OPA_NOTICE_TRAP_NODE_DESC_CHG`).
pub(crate) const CHANGE_NODE_DESC: u16 = 0x01;

/// The transaction ids of traps (hfi1: per port; one sequence here is as good).
static TID: AtomicU64 = AtomicU64::new(0);

/// A Notice being built: the 64 bytes of its details after the 32-byte common part.
struct Notice {
    bytes: [u8; 96],
}

impl Notice {
    /// A notice of `kind` and trap number `num`, issued by `lid`.
    fn new(kind: u8, num: u16, lid: u32) -> Self {
        let mut bytes = [0u8; 96];
        bytes[0] = kind;
        bytes[2..4].copy_from_slice(&PROD_CA.to_be_bytes());
        bytes[4..6].copy_from_slice(&num.to_be_bytes());
        bytes[8..12].copy_from_slice(&lid.to_be_bytes());
        Self { bytes }
    }

    fn put(&mut self, at: usize, v: &[u8]) {
        if let Some(d) = self.bytes.get_mut(32 + at..32 + at + v.len()) {
            d.copy_from_slice(v);
        }
    }
}

/// Sends `notice` from `port` to its SM (`send_trap()`), if the port is Active and knows an
/// SM LID.
fn send(port: &Port, sm_lid: u32, fabric: &crate::fabric::Fabric, notice: &Notice) {
    let c = port.config();
    let m = port.mgmt();
    if c.state != PortState::Active || sm_lid == 0 || sm_lid >= 0xffff {
        return;
    }
    // The limited management P_Key, or index 1's (hfi1's fallback).
    let pkey = c
        .pkeys
        .get(usize::from(crate::sma::lim_mgmt_index(port)))
        .copied()
        .unwrap_or(FULL_MGMT_P_KEY);
    let mut mad = [0u8; TRAP_MAD_LEN];
    mad[..4].copy_from_slice(&[OPA_BASE_VERSION, 0x01, OPA_SM_CLASS_VERSION, METHOD_TRAP]);
    let tid = TID.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
    mad[8..16].copy_from_slice(&tid.to_be_bytes());
    mad[16..18].copy_from_slice(&ATTR_NOTICE.to_be_bytes());
    // The M_Key stays 0 (o14-1); the Notice follows it, in the LID-routed data.
    mad[32..128].copy_from_slice(&notice.bytes);
    let pkt = Packet {
        slid: c.lid,
        dlid: sm_lid,
        sl: m.sm_sl,
        pkey,
        src_qp: 0,
        dest_qp: m.sm_trap_qp,
        qkey: 0,
        imm: None,
        solicited: false,
        payload: &mad,
    };
    Counters::inc(&port.counters.xmit_packets);
    Counters::add(&port.counters.xmit_bytes, TRAP_MAD_LEN as u64);
    fabric.capture(Kind::Ud, port, c.lid, sm_lid, pkey, None, &mad);
    if let Some(to) = fabric.forward_smp(port, sm_lid) {
        let _ = ud::receive(&to, &pkt);
    }
}

/// The SM LID `port` reports (what the SM set, else the fabric's SM port).
fn sm_lid(port: &Port, fabric: &crate::fabric::Fabric) -> u32 {
    port.mgmt().sm_lid.unwrap_or_else(|| fabric.sm_lid())
}

/// Trap 144: the capability masks of `port` changed, or (`flags`) its node description.
pub(crate) fn local_changes(port: &Port, fabric: &crate::fabric::Fabric, flags: u16) {
    let lid = port.config().lid;
    let mut n = Notice::new(TYPE_INFO, 144, lid);
    n.put(0, &lid.to_be_bytes());
    if flags == 0 {
        n.put(4, &Capabilities::get(&port.caps.ib).to_be_bytes());
        n.put(
            10,
            &(Capabilities::get(&port.caps.opa3) as u16).to_be_bytes(),
        );
    }
    n.put(12, &flags.to_be_bytes());
    send(port, sm_lid(port, fabric), fabric, &n);
}

/// Trap 256: an SMP of `method`, `attr_id`, `attr_mod` came with the wrong M_Key `mkey`; a
/// directed-route one also tells its DrSLID and return path.
pub(crate) fn bad_mkey(
    port: &Port,
    fabric: &crate::fabric::Fabric,
    hdr: &kernel::rdma::provider::mad::MadHdr,
    mkey: u64,
    dr: Option<(u32, &[u8], u8)>,
) {
    let lid = port.config().lid;
    let mut n = Notice::new(TYPE_SECURITY, 256, lid);
    // OPA's `ntc_256`: LID, DrSLID, method, the truncation and hop count byte, attribute id
    // and modifier, M_Key, return path.
    n.put(0, &lid.to_be_bytes());
    n.put(8, &[hdr.method]);
    n.put(10, &hdr.attr_id.to_be_bytes());
    n.put(12, &hdr.attr_mod.to_be_bytes());
    n.put(16, &mkey.to_be_bytes());
    if let Some((dr_slid, path, hops)) = dr {
        n.put(4, &dr_slid.to_be_bytes());
        // IB_NOTICE_TRAP_DR_NOTICE, truncated (IB_NOTICE_TRAP_DR_TRUNC) beyond 30 hops.
        let room = 30u8;
        let shown = hops.min(room);
        let trunc = if hops > room { 0x40 } else { 0 };
        n.put(9, &[0x80 | trunc | shown]);
        n.put(24, path.get(..usize::from(shown)).unwrap_or(&[]));
    }
    send(port, sm_lid(port, fabric), fabric, &n);
}
