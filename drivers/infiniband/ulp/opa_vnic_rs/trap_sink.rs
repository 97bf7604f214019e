// SPDX-License-Identifier: GPL-2.0-only

//! Where a port's traps go. The agent ([`crate::vema_port`], [`crate::vema_backend`]) writes
//! it, the vports ([`crate::vport`]) read it when they send a trap: a file of its own, so that
//! none of those three has to import another for it.

use kernel::rdma::device::Device;

/// Where traps go: what the EM set in ClassPortInfo, kept apart from the port's mutex so
/// that the netdev callbacks (under RTNL) can read it.
pub(crate) struct TrapSink {
    pub(crate) lid: u32,
    pub(crate) sl: u8,
    pub(crate) tid: u64,
    /// The P_Key index traps go with (see [`trap_pkey_index`]).
    pub(crate) pkey_index: u16,
}

/// The P_Key index of a port's traps: the full default P_Key's, else the limited one's, else
/// 1, as `vema_get_pkey_ix()` picks it. The C driver searches the table for every trap, in
/// atomic context too; this driver searches it when it registers the agent and when the port's
/// P_Key table changes.
pub(crate) fn trap_pkey_index(device: &Device, port: u32) -> u16 {
    device
        .find_pkey(port, 0xffff)
        .or_else(|| device.find_pkey(port, 0x7fff))
        .unwrap_or(1)
}
