// SPDX-License-Identifier: GPL-2.0

//! What the client reads back: traps, MAC tables, interface MAC lists.

use std::collections::BTreeMap;

use opa_wire::trap::VeswPortTrap;
use opa_wire::vema_mac::{MacTableEntry, ETH_ALEN};

/// A VNIC trap as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrapEvent {
    /// LID the trap MAD came from.
    pub src_lid: u16,
    /// Issuer LID in the Notice (the vport's encap SLID).
    pub issuer_lid: u32,
    /// Transaction id of the trap.
    pub tid: u64,
    /// The payload.
    pub trap: VeswPortTrap,
}

/// A MAC table as read back: the digest and every slot in use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MacTableState {
    /// The digest the EM last set.
    pub digest: u32,
    /// The entries with a non-zero MAC, by index.
    pub entries: BTreeMap<u16, MacTableEntry>,
}

/// An interface MAC list as read back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IfaceMacList {
    /// Generation count of the list.
    pub gen_count: u16,
    /// The addresses.
    pub macs: Vec<[u8; ETH_ALEN]>,
}
