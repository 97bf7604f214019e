// SPDX-License-Identifier: GPL-2.0-only

//! The switch as a node the subnet manager programs (the fabric's `managed` mode): what an OPA
//! switch's SMA keeps and its forwarding reads. Port 0 is the management port (the switch's
//! LID, its M_Key, the SM's LID); port N is attached to the fabric's port slot N - 1. The
//! linear forwarding table (LFT) gives the egress port of each unicast LID, the multicast
//! table (MFT) a port mask per multicast LID; both start empty, so nothing but directed-route
//! SMPs passes until the SM has written them, as on a real switch.

use crate::{
    integrity::{DEFAULT_VL_MTUS, NUM_DATA_VLS},
    mgmt::Mgmt,
    port::PKEY_TABLE_LEN,
};
use kernel::{prelude::*, rdma::provider::PortState};

/// The external ports of the switch (the first fabric port slots): 48, as an Omni-Path edge
/// switch has, so that a multicast port mask (bit N: port N) fits MFT position 0.
pub(crate) const SWITCH_PORTS: usize = 48;

/// The unicast LIDs the LFT holds (`LinearFDBCap`): 0 to 0xbfff, opa-fm's default
/// `MaximumLID`; a switch with fewer is quarantined (`_stl_authentic_node()`).
pub(crate) const LFT_CAP: u32 = 0xc000;

/// The multicast LIDs the MFT holds (`MulticastFDBCap`), from 0xf00000 up: opa-fm's default
/// `MLIDTableCap` (a switch with fewer gets a warning per sweep, `_switch_info_worker()`).
pub(crate) const MFT_CAP: u32 = 8192;

/// An LFT entry no port has: the packet is dropped.
pub(crate) const LFT_NONE: u8 = 0xff;

/// The first multicast LID of the MFT (the 24-bit multicast base of 16B packets).
pub(crate) const MFT_BASE: u32 = 0xf0_0000;

/// The switch's node description until the SM's Get reads it.
const DESC: &[u8] = b"opasim switch";

/// A port of the switch.
#[derive(Clone, Copy)]
pub(crate) struct SwitchPort {
    /// The logical state.
    pub(crate) state: PortState,
    /// What the SM sets through PortInfo.
    pub(crate) mgmt: Mgmt,
    /// The partition table the switch enforces once the SM enables it.
    pub(crate) pkeys: [u16; PKEY_TABLE_LEN],
    /// The data VLs' MTUs.
    pub(crate) vl_mtu: [u16; NUM_DATA_VLS as usize],
    /// PortInfo's `XmitQ`: each VL's stall count and head-of-queue life, as the SM set them
    /// (opa-fm checks them when it arms a switch, `_arm_switch()`).
    pub(crate) xmit_q: [u8; 32],
    /// An external port's PortInfo LID: the LID of the HFI behind it, which the SM writes for
    /// the switch's SLID check (opa-fm's `sm_set_portinfo()`) and checks again at every sweep
    /// (a mismatch quarantines the HFI as a spoofer); 0 after reset. Port 0's is the switch's.
    pub(crate) lid: u32,
}

impl SwitchPort {
    fn new() -> Self {
        let mut pkeys = [0; PKEY_TABLE_LEN];
        // The default partition, as after reset; the SM writes the table.
        pkeys[0] = 0xffff;
        Self {
            state: PortState::Down,
            mgmt: Mgmt::new(NUM_DATA_VLS),
            pkeys,
            vl_mtu: DEFAULT_VL_MTUS,
            xmit_q: [0; 32],
            lid: 0,
        }
    }
}

/// What the switch's SMA keeps.
pub(crate) struct SwitchState {
    /// The node description.
    pub(crate) desc: [u8; 64],
    /// The LID of port 0 (0 until the SM assigns one).
    pub(crate) lid: u32,
    /// The egress port of each unicast LID.
    pub(crate) lft: KVec<u8>,
    /// `LinearFDBTop`.
    pub(crate) lft_top: u32,
    /// The port mask of each multicast LID from [`MFT_BASE`].
    pub(crate) mft: KVec<u64>,
    /// `MulticastFDBTop`.
    pub(crate) mft_top: u32,
    /// `LifeTimeValue`.
    pub(crate) lifetime: u8,
    /// `PortStateChange`: a port changed state since the SM last cleared it.
    pub(crate) port_state_change: bool,
    /// Port 0 to [`SWITCH_PORTS`].
    pub(crate) ports: KVec<SwitchPort>,
}

impl SwitchState {
    /// A switch after reset; `managed` is false for a fabric without one (no tables then).
    pub(crate) fn new(managed: bool) -> Result<Self> {
        let mut s = Self {
            desc: [0; 64],
            lid: 0,
            lft: KVec::new(),
            lft_top: 0,
            mft: KVec::new(),
            mft_top: 0,
            lifetime: 18,
            port_state_change: false,
            ports: KVec::new(),
        };
        s.desc[..DESC.len()].copy_from_slice(DESC);
        if managed {
            s.lft = KVec::from_elem(LFT_NONE, LFT_CAP as usize, GFP_KERNEL)?;
            s.mft = KVec::from_elem(0, MFT_CAP as usize, GFP_KERNEL)?;
            s.ports = KVec::from_elem(SwitchPort::new(), SWITCH_PORTS + 1, GFP_KERNEL)?;
            // Port 0 is always linked: the switch's own management port.
            if let Some(p) = s.ports.get_mut(0) {
                p.state = PortState::Init;
            }
        }
        Ok(s)
    }

    /// The port `n`, if the switch has it.
    pub(crate) fn port(&self, n: usize) -> Option<&SwitchPort> {
        self.ports.get(n)
    }

    /// The port `n` to change, if the switch has it.
    pub(crate) fn port_mut(&mut self, n: usize) -> Option<&mut SwitchPort> {
        self.ports.get_mut(n)
    }

    /// The state of port `n` (Down for a port the switch does not have).
    pub(crate) fn state(&self, n: usize) -> PortState {
        self.port(n).map_or(PortState::Down, |p| p.state)
    }

    /// The egress port the LFT gives `dlid`, `None` when it has none.
    pub(crate) fn egress(&self, dlid: u32) -> Option<usize> {
        let e = *self.lft.get(usize::try_from(dlid).ok()?)?;
        (usize::from(e) <= SWITCH_PORTS).then_some(usize::from(e))
    }

    /// The port mask the MFT gives the multicast LID `dlid` (bit N - 1: port N).
    pub(crate) fn mcast_mask(&self, dlid: u32) -> u64 {
        dlid.checked_sub(MFT_BASE)
            .and_then(|i| self.mft.get(usize::try_from(i).ok()?))
            .copied()
            .unwrap_or(0)
    }

    /// Whether `dlid` is the switch's own (port 0's LID).
    pub(crate) fn is_own(&self, dlid: u32) -> bool {
        self.lid != 0 && dlid == self.lid
    }

    /// Port `n`'s link comes up (Init) or goes down, as its neighbour's does; a change
    /// raises `PortStateChange`.
    pub(crate) fn link(&mut self, n: usize, up: bool) {
        let Some(p) = self.port_mut(n) else {
            return;
        };
        let new = match (up, p.state) {
            (false, _) => PortState::Down,
            (true, PortState::Down) => PortState::Init,
            (true, s) => s,
        };
        if new != p.state {
            p.state = new;
            self.port_state_change = true;
        }
    }
}

/// Whether a packet may leave or enter through a port in `state`: data only through Active
/// ports, SMPs (QP0, VL15) through every port whose link is up, as IBA 7.2 has it.
pub(crate) fn passes(state: PortState, smp: bool) -> bool {
    match state {
        PortState::Active => true,
        PortState::Armed | PortState::Init => smp,
        PortState::Down => false,
    }
}
