// SPDX-License-Identifier: GPL-2.0

//! VEMA configuration attributes: ClassPortInfo, vesw info, per-vesw-port
//! info and the VESW port info attribute that joins the two.

use super::codec::{Field, Reader, Writer};
use super::error::WireError;
use super::mad::{OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION};

/// Default ports a vesw can have (`OPA_VESW_MAX_NUM_DEF_PORT`).
pub const VESW_MAX_NUM_DEF_PORT: usize = 16;
/// Ethernet priority code points (`OPA_VNIC_MAX_NUM_PCP`).
pub const MAX_NUM_PCP: usize = 8;
/// Port state: drop all (`OPA_VNIC_STATE_DROP_ALL`).
pub const STATE_DROP_ALL: u8 = 0x1;
/// Port state: forwarding (`OPA_VNIC_STATE_FORWARDING`).
pub const STATE_FORWARDING: u8 = 0x3;
/// Ethernet link status: up (`OPA_VNIC_ETH_LINK_UP`).
pub const ETH_LINK_UP: u8 = 1;
/// Ethernet link status: down (`OPA_VNIC_ETH_LINK_DOWN`).
pub const ETH_LINK_DOWN: u8 = 2;
/// Entries of a MAC table (`OPA_VNIC_MAC_TBL_MAX_ENTRIES`).
pub const MAC_TBL_MAX_ENTRIES: u16 = 2048;
/// Source MAC entries of a MAC table (`OPA_VNIC_MAX_SMAC_LIMIT`).
pub const MAX_SMAC_LIMIT: u16 = 256;
/// Power-on Ethernet MTU (`ETH_DATA_LEN`).
pub const ETH_DATA_LEN: u16 = 1500;
/// Largest Ethernet MTU whose VLAN-tagged frames still fit the 16B length
/// field: [`super::hdr16b::MAX_ETH_FRAME`] minus `VLAN_ETH_HLEN` = 16333.
/// The C driver accepts any `eth_mtu`; above this the length overflows.
pub const ETH_MTU_MAX: u16 = 16333;
/// Virtual ports per OPA port (`OPA_VNIC_MAX_NUM_VPORT`).
pub const MAX_NUM_VPORT: u8 = 255;
/// ClassPortInfo capability: the agent generates traps
/// (`OPA_VNIC_CLASS_CAP_TRAP`).
pub const CLASS_CAP_TRAP: u16 = 0x1;
/// ClassPortInfo response time VEMA reports: 4.096 us * 2^18 = 1.07 s.
pub const CLASS_RESP_TIME: u32 = 18;

const _: () =
    assert!(ETH_MTU_MAX as usize + super::hdr16b::VLAN_ETH_HLEN == super::hdr16b::MAX_ETH_FRAME);

wire_struct! {
    /// ClassPortInfo (`struct opa_class_port_info`), 80 bytes.
    pub struct ClassPortInfo {
        /// Base version.
        base_version: u8,
        /// Class version.
        class_version: u8,
        /// Capability mask; VEMA: trap capability in bit 0, number of
        /// virtual ports in bits 8-15.
        cap_mask: u16,
        /// Capability mask 2 (bits 5-31) and response time value (bits 0-4).
        cap_mask2_resp_time: u32,
        /// Redirect GID.
        redirect_gid: [u8; 16],
        /// Redirect traffic class (bits 24-31) and flow label (bits 0-19).
        redirect_tc_fl: u32,
        /// Redirect LID.
        redirect_lid: u32,
        /// Redirect SL (bits 27-31) and QP (bits 0-23).
        redirect_sl_qp: u32,
        /// Redirect Q_Key.
        redirect_qkey: u32,
        /// Trap GID.
        trap_gid: [u8; 16],
        /// Trap traffic class and flow label.
        trap_tc_fl: u32,
        /// Trap LID: where traps are sent.
        trap_lid: u32,
        /// Trap hop limit (bits 24-31) and QP (bits 0-23).
        trap_hl_qp: u32,
        /// Trap Q_Key.
        trap_qkey: u32,
        /// Trap P_Key.
        trap_pkey: u16,
        /// Redirect P_Key.
        redirect_pkey: u16,
        /// Trap SL in bits 3-7.
        trap_sl_rsvd: u8,
        /// Reserved.
        reserved: [u8; 3],
    }
}

const _: () = assert!(ClassPortInfo::SIZE == 80);

impl ClassPortInfo {
    /// The trap service level (bits 3-7 of `trap_sl_rsvd`).
    pub const fn trap_sl(&self) -> u8 {
        (self.trap_sl_rsvd >> 3) & 0x1f
    }

    /// The ClassPortInfo VEMA answers, given the one last set by the EM
    /// (all zero before the first Set): the stored value with the OPA base
    /// version, the EMA class version, the trap capability and
    /// [`MAX_NUM_VPORT`] in `cap_mask`, and [`CLASS_RESP_TIME`].
    pub const fn vema_response(&self) -> Self {
        let mut rsp = *self;
        rsp.base_version = OPA_MGMT_BASE_VERSION;
        rsp.class_version = OPA_EMA_CLASS_VERSION;
        rsp.cap_mask = CLASS_CAP_TRAP | ((MAX_NUM_VPORT as u16) << 8);
        rsp.cap_mask2_resp_time = CLASS_RESP_TIME;
        rsp
    }
}

wire_struct! {
    /// Virtual Ethernet switch info (`struct opa_vesw_info`), 152 bytes.
    /// Every field, reserved ones too, is stored on Set and returned on Get.
    pub struct VeswInfo {
        /// Fabric id (10 bits).
        fabric_id: u16,
        /// Virtual Ethernet switch id (12 bits).
        vesw_id: u16,
        /// Reserved.
        rsvd0: [u8; 6],
        /// Bit mask of the default ports (bit i: `u_ucast_dlid[i]`).
        def_port_mask: u16,
        /// Reserved.
        rsvd1: [u8; 2],
        /// Partition key.
        pkey: u16,
        /// Reserved.
        rsvd2: [u8; 4],
        /// DLID of unknown multicast (and broadcast) destinations.
        u_mcast_dlid: u32,
        /// DLIDs of unknown unicast destinations, by default port.
        u_ucast_dlid: [u32; VESW_MAX_NUM_DEF_PORT],
        /// Routing control: a 3-bit RC per traffic class, at the bit
        /// offset [`super::encap::RcClass::shift`] gives.
        rc: u32,
        /// Reserved.
        rsvd3: [u8; 56],
        /// Ethernet MTU.
        eth_mtu: u16,
        /// Reserved.
        rsvd4: [u8; 2],
    }
}

const _: () = assert!(VeswInfo::SIZE == 152);

impl VeswInfo {
    /// The netdev `max_mtu` the C driver derives from `eth_mtu`:
    /// `max(eth_mtu, min_mtu)`, here also capped at [`ETH_MTU_MAX`] so that
    /// no frame overflows the 16B length field.
    pub const fn max_mtu(&self, min_mtu: u32) -> u32 {
        let m = if (self.eth_mtu as u32) > min_mtu {
            self.eth_mtu as u32
        } else {
            min_mtu
        };
        if m > ETH_MTU_MAX as u32 {
            ETH_MTU_MAX as u32
        } else {
            m
        }
    }
}

wire_struct! {
    /// Per virtual Ethernet switch port info (`struct
    /// opa_per_veswport_info`), 128 bytes.
    pub struct PerVeswPortInfo {
        /// Port number on the vesw.
        port_num: u32,
        /// Ethernet link status ([`ETH_LINK_UP`], [`ETH_LINK_DOWN`]);
        /// read only.
        eth_link_status: u8,
        /// Reserved.
        rsvd0: [u8; 3],
        /// Base MAC address, set by the EM.
        base_mac_addr: [u8; 6],
        /// Configured state ([`STATE_DROP_ALL`], [`STATE_FORWARDING`]).
        config_state: u8,
        /// Operational state; read only.
        oper_state: u8,
        /// MAC table size; read only.
        max_mac_tbl_ent: u16,
        /// Source MAC entries limit; read only.
        max_smac_ent: u16,
        /// MAC table digest, as last set with the MAC entries; read only
        /// here.
        mac_tbl_digest: u32,
        /// Reserved.
        rsvd1: [u8; 4],
        /// Source LID of encapsulated packets.
        encap_slid: u32,
        /// SC by PCP, unicast.
        pcp_to_sc_uc: [u8; MAX_NUM_PCP],
        /// VL by PCP, unicast.
        pcp_to_vl_uc: [u8; MAX_NUM_PCP],
        /// SC by PCP, multicast.
        pcp_to_sc_mc: [u8; MAX_NUM_PCP],
        /// VL by PCP, multicast.
        pcp_to_vl_mc: [u8; MAX_NUM_PCP],
        /// SC of untagged unicast.
        non_vlan_sc_uc: u8,
        /// VL of untagged unicast.
        non_vlan_vl_uc: u8,
        /// SC of untagged multicast.
        non_vlan_sc_mc: u8,
        /// VL of untagged multicast.
        non_vlan_vl_mc: u8,
        /// Reserved.
        rsvd2: [u8; 48],
        /// Unicast MAC list generation count; read only.
        uc_macs_gen_count: u16,
        /// Multicast MAC list generation count; read only.
        mc_macs_gen_count: u16,
        /// Reserved.
        rsvd3: [u8; 8],
    }
}

const _: () = assert!(PerVeswPortInfo::SIZE == 128);

impl PerVeswPortInfo {
    /// Applies a Set: copies the fields `opa_vnic_set_per_veswport_info()`
    /// copies (port number, base MAC, config state, encap SLID, SC and VL
    /// tables, reserved bytes) and keeps the read-only ones (link status,
    /// oper state, table limits, digest, generation counts).
    pub fn apply_set(&mut self, req: &Self) {
        self.port_num = req.port_num;
        self.rsvd0 = req.rsvd0;
        self.base_mac_addr = req.base_mac_addr;
        self.config_state = req.config_state;
        self.rsvd1 = req.rsvd1;
        self.encap_slid = req.encap_slid;
        self.pcp_to_sc_uc = req.pcp_to_sc_uc;
        self.pcp_to_vl_uc = req.pcp_to_vl_uc;
        self.pcp_to_sc_mc = req.pcp_to_sc_mc;
        self.pcp_to_vl_mc = req.pcp_to_vl_mc;
        self.non_vlan_sc_uc = req.non_vlan_sc_uc;
        self.non_vlan_vl_uc = req.non_vlan_vl_uc;
        self.non_vlan_sc_mc = req.non_vlan_sc_mc;
        self.non_vlan_vl_mc = req.non_vlan_vl_mc;
        self.rsvd2 = req.rsvd2;
        self.rsvd3 = req.rsvd3;
    }

    /// Updates the operational state and link status as
    /// `opa_vnic_update_state()` does: forwarding and link up only when the
    /// configured state is forwarding and the interface is up.
    pub fn update_state(&mut self, if_up: bool) {
        if self.config_state == STATE_FORWARDING && if_up {
            self.oper_state = STATE_FORWARDING;
            self.eth_link_status = ETH_LINK_UP;
        } else {
            self.oper_state = STATE_DROP_ALL;
            self.eth_link_status = ETH_LINK_DOWN;
        }
    }

    /// Whether the netdev is dormant: the configured state is not
    /// forwarding.
    pub const fn dormant(&self) -> bool {
        self.config_state != STATE_FORWARDING
    }
}

wire_struct! {
    /// VESW port info (`struct opa_veswport_info`), 280 bytes: the data of
    /// the VESW port info attribute and of the delete-vesw response.
    pub struct VeswPortInfo {
        /// The vesw part.
        vesw: VeswInfo,
        /// The per-port part.
        vport: PerVeswPortInfo,
    }
}

const _: () = assert!(VeswPortInfo::SIZE == 280);

impl VeswPortInfo {
    /// The power-on defaults VEMA answers for a port that does not exist
    /// and resets a port to on delete (`vema_get_pod_values()`): all zero
    /// but the table limits, both states drop-all and MTU 1500.
    pub const fn vema_pod() -> Self {
        let mut p = Self::ZERO;
        p.vport.max_mac_tbl_ent = MAC_TBL_MAX_ENTRIES;
        p.vport.max_smac_ent = MAX_SMAC_LIMIT;
        p.vport.oper_state = STATE_DROP_ALL;
        p.vport.config_state = STATE_DROP_ALL;
        p.vesw.eth_mtu = ETH_DATA_LEN;
        p
    }

    /// The values a new netdev starts with (`opa_vnic_set_pod_values()`):
    /// unlike [`VeswPortInfo::vema_pod`], link status down and oper state
    /// 0 until the first state update.
    pub const fn adapter_pod() -> Self {
        let mut p = Self::ZERO;
        p.vport.max_mac_tbl_ent = MAC_TBL_MAX_ENTRIES;
        p.vport.max_smac_ent = MAX_SMAC_LIMIT;
        p.vport.config_state = STATE_DROP_ALL;
        p.vport.eth_link_status = ETH_LINK_DOWN;
        p.vesw.eth_mtu = ETH_DATA_LEN;
        p
    }

    /// Applies a Set: the whole vesw part and the writable per-port fields
    /// ([`PerVeswPortInfo::apply_set`]).
    pub fn apply_set(&mut self, req: &Self) {
        self.vesw = req.vesw;
        self.vport.apply_set(&req.vport);
    }
}
