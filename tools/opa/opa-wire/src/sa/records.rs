// SPDX-License-Identifier: GPL-2.0

//! The SA records an EM reads, with their component-mask bits.

use super::bytes::{get, put, u16_at, u32_at, u64_at, u8_at};
use crate::wire::WireError;

/// NodeType of a channel adapter (an HFI), `IB_NODE_CA`.
pub const NODE_TYPE_CA: u8 = 1;
/// NodeType of a switch.
pub const NODE_TYPE_SWITCH: u8 = 2;

/// `STL_NODE_RECORD`: the LID of a port, the node's `STL_NODE_INFO` as that port answers it
/// (`struct opa_node_info` of `include/rdma/opa_smi.h`) and its 64-byte node description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRecord {
    /// RID.LID: the port's LID.
    pub lid: u32,
    /// NodeInfo.NodeType ([`NODE_TYPE_CA`] for an HFI).
    pub node_type: u8,
    /// NodeInfo.NumPorts.
    pub num_ports: u8,
    /// NodeInfo.SystemImageGUID.
    pub sys_image_guid: u64,
    /// NodeInfo.NodeGUID.
    pub node_guid: u64,
    /// NodeInfo.PortGUID: the GUID of the port the record is for.
    pub port_guid: u64,
    /// NodeInfo.PartitionCap.
    pub partition_cap: u16,
    /// NodeInfo.DeviceID.
    pub device_id: u16,
    /// NodeInfo.Revision.
    pub revision: u32,
    /// NodeInfo.LocalPortNum: the port's number on its node.
    pub local_port_num: u8,
    /// NodeInfo.VendorID (24 bits).
    pub vendor_id: u32,
    /// NodeDesc: NUL-padded text.
    pub node_desc: [u8; 64],
}

impl NodeRecord {
    /// Bytes of the record (RID 4, reserved 4, NodeInfo 44, NodeDesc 64).
    pub const SIZE: usize = 116;
    /// Component: RID.LID.
    pub const COMP_LID: u64 = 0x0000_0001;
    /// Component: NodeInfo.NodeType.
    pub const COMP_NODETYPE: u64 = 0x0000_0010;
    /// Component: NodeInfo.SystemImageGUID.
    pub const COMP_SYSIMAGEGUID: u64 = 0x0000_0080;
    /// Component: NodeInfo.NodeGUID.
    pub const COMP_NODEGUID: u64 = 0x0000_0100;
    /// Component: NodeInfo.PortGUID.
    pub const COMP_PORTGUID: u64 = 0x0000_0200;
    /// Component: NodeInfo.LocalPortNum.
    pub const COMP_LOCALPORTNUM: u64 = 0x0000_2000;
    /// Component: NodeDesc.
    pub const COMP_NODEDESC: u64 = 0x0000_8000;

    /// A record with every field zero.
    pub const ZERO: Self = NodeRecord {
        lid: 0,
        node_type: 0,
        num_ports: 0,
        sys_image_guid: 0,
        node_guid: 0,
        port_guid: 0,
        partition_cap: 0,
        device_id: 0,
        revision: 0,
        local_port_num: 0,
        vendor_id: 0,
        node_desc: [0; 64],
    };

    /// Decodes a record from its first [`Self::SIZE`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self, WireError> {
        if b.len() < Self::SIZE {
            return Err(WireError::Truncated);
        }
        Ok(NodeRecord {
            lid: u32_at(b, 0)?,
            node_type: u8_at(b, 10)?,
            num_ports: u8_at(b, 11)?,
            sys_image_guid: u64_at(b, 16)?,
            node_guid: u64_at(b, 24)?,
            port_guid: u64_at(b, 32)?,
            partition_cap: u16_at(b, 40)?,
            device_id: u16_at(b, 42)?,
            revision: u32_at(b, 44)?,
            local_port_num: u8_at(b, 48)?,
            vendor_id: u32_at(b, 48)? & 0x00ff_ffff,
            node_desc: get(b, 52)?,
        })
    }

    /// Encodes the record into the first [`Self::SIZE`] bytes of `b` (reserved bytes zero).
    pub fn encode(&self, b: &mut [u8]) -> Result<(), WireError> {
        b.get_mut(..Self::SIZE).ok_or(WireError::NoSpace)?.fill(0);
        put(b, 0, &self.lid.to_be_bytes())?;
        // NodeInfo: BaseVersion and ClassVersion of the SMA (OPA: 0x80).
        put(b, 8, &[0x80, 0x80, self.node_type, self.num_ports])?;
        put(b, 16, &self.sys_image_guid.to_be_bytes())?;
        put(b, 24, &self.node_guid.to_be_bytes())?;
        put(b, 32, &self.port_guid.to_be_bytes())?;
        put(b, 40, &self.partition_cap.to_be_bytes())?;
        put(b, 42, &self.device_id.to_be_bytes())?;
        put(b, 44, &self.revision.to_be_bytes())?;
        let port_vendor = (u32::from(self.local_port_num) << 24) | (self.vendor_id & 0x00ff_ffff);
        put(b, 48, &port_vendor.to_be_bytes())?;
        put(b, 52, &self.node_desc)
    }

    /// The node description as text: up to the first NUL, and up to the first byte that is
    /// not UTF-8 (node descriptions are ASCII; a bad byte ends the name rather than fail).
    pub fn desc(&self) -> &str {
        let end = self
            .node_desc
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(self.node_desc.len());
        let bytes = self.node_desc.get(..end).unwrap_or_default();
        match core::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => core::str::from_utf8(bytes.get(..e.valid_up_to()).unwrap_or_default())
                .unwrap_or_default(),
        }
    }

    /// A node description field holding `s` (cut at 64 bytes), NUL-padded.
    pub fn desc_bytes(s: &str) -> [u8; 64] {
        let mut d = [0u8; 64];
        for (o, i) in d.iter_mut().zip(s.bytes()) {
            *o = i;
        }
        d
    }
}

/// Offset of `lid` in `struct opa_port_info` (`include/rdma/opa_port_info.h`).
const PI_LID: usize = 0;
/// Offset of `port_states.portphysstate_portstate` (PortState in the low 4 bits).
const PI_PORT_STATE: usize = 19;
/// Offset of `sm_lid`.
const PI_SM_LID: usize = 108;
/// Offset of `ib_cap_mask` (CapabilityMask).
const PI_CAP_MASK: usize = 216;
/// Offset of `opa_cap_mask` (CapabilityMask3).
const PI_CAP_MASK3: usize = 222;
/// Offset of `local_port_num`.
const PI_LOCAL_PORT_NUM: usize = 239;
/// Size of `struct opa_port_info` (opa-ff's `STL_PORT_INFO`).
pub const PORT_INFO_SIZE: usize = 242;
/// Where PortInfo starts in the record (after RID and a reserved word).
const PIR_PORT_INFO: usize = 8;

/// CapabilityMask3 bit of a port that can carry VNIC traffic, which the VNIC driver raises
/// while it serves the port (`OPA_CAP_MASK3_IsEthOnFabricSupported`).
pub const CAP_MASK3_IS_ETH_ON_FABRIC: u16 = 1 << 13;

/// `STL_PORTINFO_RECORD`: a port's LID and number, its `STL_PORT_INFO`, and eight
/// link-down reasons. Only the fields an EM reads are kept here; the others encode as zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortInfoRecord {
    /// RID.EndPortLID.
    pub lid: u32,
    /// RID.PortNum.
    pub port_num: u8,
    /// PortInfo.PortStates.PortState (4: Active).
    pub port_state: u8,
    /// PortInfo.SMLID.
    pub sm_lid: u32,
    /// PortInfo.CapabilityMask.
    pub cap_mask: u32,
    /// PortInfo.CapabilityMask3 ([`CAP_MASK3_IS_ETH_ON_FABRIC`]).
    pub cap_mask3: u16,
}

impl PortInfoRecord {
    /// Bytes of the record (RID 8, PortInfo 242, LinkDownReasons 8 x 16).
    pub const SIZE: usize = PIR_PORT_INFO + PORT_INFO_SIZE + 8 * 16;
    /// Component: RID.EndPortLID.
    pub const COMP_ENDPORTLID: u64 = 0x1;
    /// Component: RID.PortNum.
    pub const COMP_PORTNUM: u64 = 0x2;
    /// Component: options (reserved bits of the RID).
    pub const COMP_OPTIONS: u64 = 0x4;
    /// Component: PortInfo.CapabilityMask, matched on the bits the template sets when bit 31
    /// of the attribute modifier is set (IBA 15.2.5.3, CapMaskMatchSupported).
    pub const COMP_CAPABILITYMASK: u64 = 0x8;

    /// Decodes a record from its first [`Self::SIZE`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self, WireError> {
        if b.len() < Self::SIZE {
            return Err(WireError::Truncated);
        }
        let pi = PIR_PORT_INFO;
        Ok(PortInfoRecord {
            lid: u32_at(b, 0)?,
            port_num: u8_at(b, 4)?,
            port_state: u8_at(b, pi + PI_PORT_STATE)? & 0x0f,
            sm_lid: u32_at(b, pi + PI_SM_LID)?,
            cap_mask: u32_at(b, pi + PI_CAP_MASK)?,
            cap_mask3: u16_at(b, pi + PI_CAP_MASK3)?,
        })
    }

    /// Encodes the record into the first [`Self::SIZE`] bytes of `b`.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), WireError> {
        b.get_mut(..Self::SIZE).ok_or(WireError::NoSpace)?.fill(0);
        let pi = PIR_PORT_INFO;
        put(b, 0, &self.lid.to_be_bytes())?;
        put(b, 4, &[self.port_num])?;
        put(b, pi + PI_LID, &self.lid.to_be_bytes())?;
        put(b, pi + PI_PORT_STATE, &[self.port_state & 0x0f])?;
        put(b, pi + PI_SM_LID, &self.sm_lid.to_be_bytes())?;
        put(b, pi + PI_CAP_MASK, &self.cap_mask.to_be_bytes())?;
        put(b, pi + PI_CAP_MASK3, &self.cap_mask3.to_be_bytes())?;
        put(b, pi + PI_LOCAL_PORT_NUM, &[self.port_num])
    }

    /// The CapabilityMask of a template record (for matching with attribute modifier bit 31).
    pub fn template_cap_mask(b: &[u8]) -> Result<u32, WireError> {
        u32_at(b, PIR_PORT_INFO + PI_CAP_MASK)
    }

    /// Whether the port can carry VNIC traffic now.
    pub fn is_eth_on_fabric(&self) -> bool {
        self.cap_mask3 & CAP_MASK3_IS_ETH_ON_FABRIC != 0
    }
}

/// The PathRecord as opa-fm serves it: InfiniBand's (IBA 15.2.5.16, the kernel's
/// `path_rec_table`), 16-bit LIDs, asked and answered at IB's versions ([`super::encode_ib`]).
/// Only the fields an EM and this SA use are kept; the others encode as zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathRecord {
    /// ServiceID.
    pub service_id: u64,
    /// DGID: subnet prefix and the destination's port GUID.
    pub dgid: [u8; 16],
    /// SGID: subnet prefix and the source's port GUID.
    pub sgid: [u8; 16],
    /// DLID.
    pub dlid: u16,
    /// SLID.
    pub slid: u16,
    /// Reversible (bit 7 of byte 49).
    pub reversible: bool,
    /// NumbPath (bits 0-6 of byte 49).
    pub numb_path: u8,
    /// P_Key.
    pub pkey: u16,
    /// SL (the low 4 bits of the 16 bits QosClass:12, SL:4).
    pub sl: u8,
    /// MTU (IBA encoding; OPA adds 6 = 8192 and 7 = 10240).
    pub mtu: u8,
    /// Rate (IBA encoding).
    pub rate: u8,
    /// PacketLifeTime.
    pub pkt_life: u8,
}

impl PathRecord {
    /// Bytes of the record.
    pub const SIZE: usize = 64;
    /// Component: ServiceID (two bits, as in IBA).
    pub const COMP_SERVICE_ID: u64 = 0x3;
    /// Component: DGID.
    pub const COMP_DGID: u64 = 1 << 2;
    /// Component: SGID.
    pub const COMP_SGID: u64 = 1 << 3;
    /// Component: DLID.
    pub const COMP_DLID: u64 = 1 << 4;
    /// Component: SLID.
    pub const COMP_SLID: u64 = 1 << 5;
    /// Component: Reversible.
    pub const COMP_REVERSIBLE: u64 = 1 << 11;
    /// Component: NumbPath.
    pub const COMP_NUMB_PATH: u64 = 1 << 12;
    /// Component: P_Key.
    pub const COMP_PKEY: u64 = 1 << 13;
    /// Component: SL.
    pub const COMP_SL: u64 = 1 << 15;

    /// Decodes a record from its first [`Self::SIZE`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self, WireError> {
        if b.len() < Self::SIZE {
            return Err(WireError::Truncated);
        }
        let rev_numb = u8_at(b, 49)?;
        Ok(PathRecord {
            service_id: u64_at(b, 0)?,
            dgid: get(b, 8)?,
            sgid: get(b, 24)?,
            dlid: u16_at(b, 40)?,
            slid: u16_at(b, 42)?,
            reversible: rev_numb & 0x80 != 0,
            numb_path: rev_numb & 0x7f,
            pkey: u16_at(b, 50)?,
            sl: (u16_at(b, 52)? & 0xf) as u8,
            mtu: u8_at(b, 54)? & 0x3f,
            rate: u8_at(b, 55)? & 0x3f,
            pkt_life: u8_at(b, 56)? & 0x3f,
        })
    }

    /// Encodes the record into the first [`Self::SIZE`] bytes of `b` (selectors 0: exactly).
    pub fn encode(&self, b: &mut [u8]) -> Result<(), WireError> {
        b.get_mut(..Self::SIZE).ok_or(WireError::NoSpace)?.fill(0);
        put(b, 0, &self.service_id.to_be_bytes())?;
        put(b, 8, &self.dgid)?;
        put(b, 24, &self.sgid)?;
        put(b, 40, &self.dlid.to_be_bytes())?;
        put(b, 42, &self.slid.to_be_bytes())?;
        let rev = if self.reversible { 0x80 } else { 0 };
        put(b, 49, &[rev | (self.numb_path & 0x7f)])?;
        put(b, 50, &self.pkey.to_be_bytes())?;
        put(b, 52, &u16::from(self.sl & 0xf).to_be_bytes())?;
        put(
            b,
            54,
            &[self.mtu & 0x3f, self.rate & 0x3f, self.pkt_life & 0x3f],
        )
    }

    /// The port GUID in a GID (its low 8 bytes).
    pub fn gid_guid(gid: &[u8; 16]) -> u64 {
        let mut g = [0u8; 8];
        g.copy_from_slice(gid.get(8..).unwrap_or(&[0; 8]));
        u64::from_be_bytes(g)
    }

    /// A GID of the default subnet prefix (`fe80::`) and `guid`.
    pub fn guid_gid(guid: u64) -> [u8; 16] {
        let mut g = [0u8; 16];
        for (o, i) in g.iter_mut().zip([0xfe, 0x80]) {
            *o = i;
        }
        for (o, i) in g.iter_mut().skip(8).zip(guid.to_be_bytes()) {
            *o = i;
        }
        g
    }
}

/// The first 32-bit multicast LID (opa-ff's `STL_LID_MULTICAST_BEGIN`), where opa-fm's SM
/// numbers its groups' MLIDs.
pub const MLID_BASE: u32 = 0xf000_0000;
/// The first 16-bit multicast LID (`LID_MCAST_START`): a McMemberRecord at IB's versions
/// gives the MLID there (`MCAST32_TO_MCAST16()`).
pub const MLID16_BASE: u16 = 0xc000;
/// The first multicast DLID of a 16B header (24-bit LIDs), where [`MLID16_BASE`] lands.
pub const MLID_BASE_16B: u32 = 0x00f0_0000;

/// The 16B DLID of the 16-bit MLID `mlid` (opa-ff's `MCAST16_TO_MCAST24()`), `None` for a
/// LID that is not multicast or is the permissive one.
pub const fn mlid16_to_16b(mlid: u16) -> Option<u32> {
    if mlid < MLID16_BASE || mlid == 0xffff {
        return None;
    }
    Some((mlid & !MLID16_BASE) as u32 | MLID_BASE_16B)
}

/// The 16-bit MLID of opa-fm's 32-bit MLID `mlid` (`MCAST32_TO_MCAST16()`), as its SA
/// answers a McMemberRecord.
pub const fn mlid32_to_16(mlid: u32) -> u16 {
    (mlid & 0xffff) as u16 | MLID16_BASE
}

/// The McMemberRecord as opa-fm serves it: InfiniBand's (IBA 15.2.5.17, opa-ff's
/// `IB_MCMEMBER_RECORD`), 16-bit MLID, asked and answered at IB's versions
/// ([`super::encode_ib`]); opa-fm refuses `STL_MCMEMBER_RECORD` on the wire (BAD_CLASS, "later
/// dropped from the spec", `sa_McMemberRecord()`). A member of a multicast group, and the
/// group's parameters. Only the fields an EM and this SA use are kept; the others encode as
/// zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct McMemberRecord {
    /// RID.MGID: the group.
    pub mgid: [u8; 16],
    /// RID.PortGID: the member (zero in the answers to an untrusted requester).
    pub port_gid: [u8; 16],
    /// Q_Key.
    pub qkey: u32,
    /// MLID: the group's 16-bit multicast LID.
    pub mlid: u16,
    /// Mtu (6 bits; the selector bits are not kept).
    pub mtu: u8,
    /// TClass.
    pub tclass: u8,
    /// P_Key of the group.
    pub pkey: u16,
    /// Rate (6 bits).
    pub rate: u8,
    /// SL (4 bits, the top of the word SL:4 FlowLabel:20 HopLimit:8).
    pub sl: u8,
    /// Scope (the high 4 bits) and JoinState (the low 4 bits) of the byte at offset 48.
    pub scope_join: u8,
}

impl McMemberRecord {
    /// Bytes of the record.
    pub const SIZE: usize = 52;
    /// Component: RID.MGID.
    pub const COMP_MGID: u64 = 0x1;
    /// Component: RID.PortGID.
    pub const COMP_PORTGID: u64 = 0x2;
    /// Component: JoinState (`IB_MCMEMBER_RECORD_COMP_JOINSTATE`).
    pub const COMP_JOIN_STATE: u64 = 0x1_0000;
    /// The components a join names: the group, the member and how it joins; the SA fills in
    /// the group's parameters.
    pub const COMP_OK_JOIN: u64 = Self::COMP_MGID | Self::COMP_PORTGID | Self::COMP_JOIN_STATE;
    /// JoinState FullMember, the low bit of the byte at offset 48: the member receives the
    /// group's packets, so the SM adds its switch port to the group's multicast tables.
    pub const JOIN_FULL_MEMBER: u8 = 0x01;

    /// Decodes a record from its first [`Self::SIZE`] bytes.
    pub fn decode(b: &[u8]) -> Result<Self, WireError> {
        if b.len() < Self::SIZE {
            return Err(WireError::Truncated);
        }
        Ok(McMemberRecord {
            mgid: get(b, 0)?,
            port_gid: get(b, 16)?,
            qkey: u32_at(b, 32)?,
            mlid: u16_at(b, 36)?,
            mtu: u8_at(b, 38)? & 0x3f,
            tclass: u8_at(b, 39)?,
            pkey: u16_at(b, 40)?,
            rate: u8_at(b, 42)? & 0x3f,
            sl: u8_at(b, 44)? >> 4,
            scope_join: u8_at(b, 48)?,
        })
    }

    /// Encodes the record into the first [`Self::SIZE`] bytes of `b`.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), WireError> {
        b.get_mut(..Self::SIZE).ok_or(WireError::NoSpace)?.fill(0);
        put(b, 0, &self.mgid)?;
        put(b, 16, &self.port_gid)?;
        put(b, 32, &self.qkey.to_be_bytes())?;
        put(b, 36, &self.mlid.to_be_bytes())?;
        put(b, 38, &[self.mtu & 0x3f, self.tclass])?;
        put(b, 40, &self.pkey.to_be_bytes())?;
        put(b, 42, &[self.rate & 0x3f])?;
        put(b, 44, &[(self.sl & 0xf) << 4])?;
        put(b, 48, &[self.scope_join])
    }
}
