// SPDX-License-Identifier: GPL-2.0-only

//! What the subnet manager sets in a port through the SMA, beside its LID, P_Key table and
//! state (the port's [`PortConfig`](crate::port::PortConfig)) and its SC-to-VL send table and
//! VL MTUs (which the datapath checks): the M_Key and its protection, the SM's LID and SL, the
//! SL/SC maps, VL arbitration and buffer control. hfi1 keeps these in `struct hfi1_ibport`
//! (`rvp`) and `struct hfi1_pportdata`; the values after reset are hfi1's (`init.c`,
//! `chip.c`), and [`crate::sma`] answers and changes them as hfi1's `mad.c` does.

use kernel::{rdma::provider::PortState, time::Ktime};

/// The SCs, SLs and VLs an OPA port maps between (`OPA_MAX_SCS`).
pub(crate) const NUM_SC: usize = 32;

/// The bytes of a BufferControlTable (`struct buffer_control`: a reserved word, the overall
/// shared limit, then dedicated and shared limits of 32 VLs).
pub(crate) const BCT_LEN: usize = 4 + 4 * 32;

/// The VL arbitration elements hfi1 keeps per table (`VL_ARB_TABLE_SIZE`, of two bytes each;
/// OPA's 128 elements read back as zeros after them).
pub(crate) const VLARB_ELEMS: usize = 16;

/// The buffer space of the port in allocation units (hfi1's `CM_GLOBAL_CREDITS`).
pub(crate) const LINK_CREDITS: u16 = 0x880;

/// The allocation unit code (hfi1's `CM_VAU`: 8 * 2^3 = 64 bytes).
pub(crate) const VAU: u8 = 3;

/// VL15's dedicated credits after reset: room for 8 SMPs (hfi1's `vl15_init`).
pub(crate) const VL15_INIT: u16 = (8 * (2048 + 128)) / 64;

/// Link speed 25 Gb/s (`OPA_LINK_SPEED_25G`), all an HFI port has.
pub(crate) const LINK_SPEED_25G: u16 = 2;

/// Link width 4X (`OPA_LINK_WIDTH_4X`).
pub(crate) const LINK_WIDTH_4X: u16 = 8;

/// Link widths 1X to 4X, the downgrade widths hfi1 supports.
pub(crate) const LINK_WIDTHS_ALL: u16 = 0xf;

/// The physical port state Polling (`IB_PORTPHYSSTATE_POLLING`).
pub(crate) const PHYS_POLLING: u8 = 2;
/// The physical port state Disabled (`IB_PORTPHYSSTATE_DISABLED`).
pub(crate) const PHYS_DISABLED: u8 = 3;
/// The physical port state LinkUp (`IB_PORTPHYSSTATE_LINKUP`).
pub(crate) const PHYS_LINKUP: u8 = 5;

/// The port's management state.
#[derive(Clone, Copy)]
pub(crate) struct Mgmt {
    /// `M_Key` (0: none, every M_Key matches).
    pub(crate) mkey: u64,
    /// `M_KeyProtectBits`.
    pub(crate) mkeyprot: u8,
    /// `M_KeyLeasePeriod`, in seconds (0: the protection never lapses).
    pub(crate) mkey_lease_period: u16,
    /// When the lease of a violated M_Key ends (hfi1's `mkey_lease_timeout`).
    pub(crate) mkey_lease_end: Option<Ktime>,
    /// `M_KeyViolations`.
    pub(crate) mkey_violations: u16,
    /// The SM's LID as the SM set it; `None` until it does (the fabric's SM port is
    /// reported then, see [`crate::sm`]).
    pub(crate) sm_lid: Option<u32>,
    /// `MasterSMSL`.
    pub(crate) sm_sl: u8,
    /// `SubnetTimeOut`.
    pub(crate) subnet_timeout: u8,
    /// `SubnetPrefix`.
    pub(crate) subnet_prefix: u64,
    /// `SMTrapQP`.
    pub(crate) sm_trap_qp: u32,
    /// `SAQP`.
    pub(crate) sa_qp: u32,
    /// `PortErrorAction`.
    pub(crate) port_error_action: u32,
    /// `VLHighLimit`.
    pub(crate) vl_high_limit: u8,
    /// `OperationalVLs`.
    pub(crate) operational_vls: u8,
    /// `LinkWidth.Enabled`.
    pub(crate) link_width_enabled: u16,
    /// `LinkWidthDowngrade.Enabled`.
    pub(crate) link_width_downgrade_enabled: u16,
    /// `LinkSpeed.Enabled`.
    pub(crate) link_speed_enabled: u16,
    /// `LinkInitReason`.
    pub(crate) linkinit_reason: u8,
    /// `IsSMConfigurationStarted` (hfi1's `is_sm_config_started`).
    pub(crate) sm_config_started: bool,
    /// `NeighborNormal`: the neighbour is up; a port goes Active only then.
    pub(crate) neighbor_normal: bool,
    /// The SM disabled the port (physical state Disabled rather than Polling when down).
    pub(crate) disabled: bool,
    /// The LED is blinking for the SMA (`LedInfo`).
    pub(crate) led_on: bool,
    /// SL to SC.
    pub(crate) sl2sc: [u8; NUM_SC],
    /// SC to SL.
    pub(crate) sc2sl: [u8; NUM_SC],
    /// SC to VL, receive side (SC2VLnt).
    pub(crate) sc2vlnt: [u8; NUM_SC],
    /// The low priority VL arbitration table.
    pub(crate) vlarb_low: [u8; 2 * VLARB_ELEMS],
    /// The high priority VL arbitration table.
    pub(crate) vlarb_high: [u8; 2 * VLARB_ELEMS],
    /// The BufferControlTable, as on the wire.
    pub(crate) bct: [u8; BCT_LEN],
}

impl Mgmt {
    /// The state after reset, as hfi1 sets it up.
    pub(crate) fn new(vls: u8) -> Self {
        let mut ident = [0u8; NUM_SC];
        for (i, v) in (0u8..).zip(ident.iter_mut()) {
            *v = i;
        }
        let mut bct = [0u8; BCT_LEN];
        // VL15 dedicated credits (hfi1's `set_up_vl15()`); every other limit 0.
        let at = 4 + 4 * 15;
        if let Some(d) = bct.get_mut(at..at + 2) {
            d.copy_from_slice(&VL15_INIT.to_be_bytes());
        }
        Self {
            mkey: 0,
            mkeyprot: 0,
            mkey_lease_period: 0,
            mkey_lease_end: None,
            mkey_violations: 0,
            sm_lid: None,
            sm_sl: 0,
            subnet_timeout: 18,
            subnet_prefix: 0xfe80_0000_0000_0000,
            sm_trap_qp: 0,
            sa_qp: 1,
            port_error_action: 0,
            vl_high_limit: 0,
            operational_vls: vls,
            link_width_enabled: LINK_WIDTH_4X,
            link_width_downgrade_enabled: LINK_WIDTHS_ALL,
            link_speed_enabled: LINK_SPEED_25G,
            linkinit_reason: 0,
            sm_config_started: false,
            neighbor_normal: true,
            disabled: false,
            led_on: false,
            sl2sc: ident,
            sc2sl: ident,
            sc2vlnt: crate::integrity::DEFAULT_SC2VL,
            vlarb_low: [0; 2 * VLARB_ELEMS],
            vlarb_high: [0; 2 * VLARB_ELEMS],
            bct,
        }
    }
}

/// The physical state of a port in logical state `state` (hfi1's `driver_pstate()`).
pub(crate) fn phys_state(state: PortState, m: &Mgmt) -> u8 {
    match state {
        PortState::Down if m.disabled => PHYS_DISABLED,
        PortState::Down => PHYS_POLLING,
        _ => PHYS_LINKUP,
    }
}

/// The logical state's number on the wire (`IB_PORT_DOWN` to `IB_PORT_ACTIVE`).
pub(crate) fn state_num(state: PortState) -> u8 {
    match state {
        PortState::Down => 1,
        PortState::Init => 2,
        PortState::Armed => 3,
        PortState::Active => 4,
    }
}

/// The name of a logical state, as the `state` file shows it.
pub(crate) fn state_name(state: PortState) -> &'static str {
    match state {
        PortState::Down => "down",
        PortState::Init => "init",
        PortState::Armed => "armed",
        PortState::Active => "active",
    }
}
