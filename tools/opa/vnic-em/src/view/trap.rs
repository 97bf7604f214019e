// SPDX-License-Identifier: GPL-2.0

//! What `traps` and `watch` print of a trap: a JSON object or a line.

use opa_wire::trap::{
    VeswPortTrap, TRAP_ETH_LINK_STATUS_CHANGE, TRAP_IFACE_MCAST_MAC_CHANGE,
    TRAP_IFACE_UCAST_MAC_CHANGE,
};
use serde::Serialize;

use crate::client::TrapEvent;

/// A trap opcode as a word.
pub fn trap_name(op: u8) -> &'static str {
    match op {
        TRAP_IFACE_UCAST_MAC_CHANGE => "ucast-mac-change",
        TRAP_IFACE_MCAST_MAC_CHANGE => "mcast-mac-change",
        TRAP_ETH_LINK_STATUS_CHANGE => "link-status-change",
        _ => "unknown",
    }
}

/// A trap as printed by `traps --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrapView {
    /// Opcode name.
    pub event: &'static str,
    /// Opcode.
    pub opcode: u8,
    /// LID the MAD came from.
    pub src_lid: u16,
    /// Issuer LID (encap SLID of the vport).
    pub issuer_lid: u32,
    /// Fabric id.
    pub fabric_id: u16,
    /// Vesw id.
    pub vesw: u16,
    /// Port number on the vesw.
    pub port_num: u32,
    /// OPA port number.
    pub opa_port: u16,
    /// Virtual port number.
    pub vport: u8,
    /// Transaction id.
    pub tid: u64,
}

/// The view of a trap.
pub fn trap_view(t: &TrapEvent) -> TrapView {
    let p: &VeswPortTrap = &t.trap;
    TrapView {
        event: trap_name(p.opcode),
        opcode: p.opcode,
        src_lid: t.src_lid,
        issuer_lid: t.issuer_lid,
        fabric_id: p.fabric_id,
        vesw: p.veswid,
        port_num: p.veswportnum,
        opa_port: p.opaportnum,
        vport: p.veswportindex,
        tid: t.tid,
    }
}

/// A trap as one line of text.
pub fn trap_text(t: &TrapView) -> String {
    format!(
        "{}: LID {:#06x} vport {} (vesw {} port {}, OPA port {}, fabric {:#x}, issuer {:#x})",
        t.event, t.src_lid, t.vport, t.vesw, t.port_num, t.opa_port, t.fabric_id, t.issuer_lid
    )
}
