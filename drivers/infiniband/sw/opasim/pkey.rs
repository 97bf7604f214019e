// SPDX-License-Identifier: GPL-2.0-only

//! The P_Key membership rule (IBA 10.9.3, OPA the same): a packet is accepted when the key
//! parts (low 15 bits) of its P_Key and of a P_Key of the receiving port are equal and at
//! least one of the two is a full member (bit 15). Two limited members never talk.

/// The membership bit of a P_Key: set for a full member.
pub(crate) const FULL_MEMBER: u16 = 0x8000;

/// The key part of a P_Key.
pub(crate) const KEY_MASK: u16 = 0x7fff;

/// Whether a packet with P_Key `pkt` may be received with the port's P_Key `port`.
///
/// The invalid P_Key (key part 0) matches nothing.
pub(crate) fn matches(pkt: u16, port: u16) -> bool {
    let key = pkt & KEY_MASK;
    key != 0 && key == port & KEY_MASK && (pkt | port) & FULL_MEMBER != 0
}

/// The index, in the port's table, of the first P_Key that accepts `pkt`.
pub(crate) fn find(table: &[u16], pkt: u16) -> Option<u16> {
    table
        .iter()
        .position(|&p| matches(pkt, p))
        .and_then(|i| u16::try_from(i).ok())
}

/// The index a MAD received with P_Key `pkt` reports (`hfi1_lookup_pkey_idx()`, which hfi1's
/// `hfi1_ud_rcv()` gives QP0 and QP1): a management P_Key by exact match first (0xffff
/// falls back to 0x7fff's index), any other by its key part.
pub(crate) fn mad_index(table: &[u16], pkt: u16) -> Option<u16> {
    const FULL_MGMT: u16 = 0xffff;
    const LIM_MGMT: u16 = 0x7fff;
    let at = |f: &dyn Fn(u16) -> bool| {
        table
            .iter()
            .position(|&p| f(p))
            .and_then(|i| u16::try_from(i).ok())
    };
    match pkt {
        FULL_MGMT => at(&|p| p == FULL_MGMT).or_else(|| at(&|p| p == LIM_MGMT)),
        LIM_MGMT => at(&|p| p == LIM_MGMT),
        _ => at(&|p| p & KEY_MASK == pkt & KEY_MASK),
    }
}
