// SPDX-License-Identifier: GPL-2.0

//! VNIC traps: the trap payload, the vendor Notice attribute that carries
//! it and the whole trap MAD.

use super::codec::{Field, Reader, Writer};
use super::error::WireError;
use super::mad::{
    MadHdr, RmppHdr, VemaMadHdr, ATTR_NOTICE, IB_MGMT_MAD_DATA, IB_MGMT_VENDOR_HDR, INTEL_OUI,
    METHOD_TRAP, OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION, OPA_MGMT_CLASS_INTEL_EMA,
};

/// Trap opcode: the interface unicast MAC list changed.
pub const TRAP_IFACE_UCAST_MAC_CHANGE: u8 = 0x1;
/// Trap opcode: the interface multicast MAC list changed.
pub const TRAP_IFACE_MCAST_MAC_CHANGE: u8 = 0x2;
/// Trap opcode: the Ethernet link status changed.
pub const TRAP_ETH_LINK_STATUS_CHANGE: u8 = 0x3;
/// Notice type informational (`OPA_INTEL_EMA_NOTICE_TYPE_INFO`).
pub const NOTICE_TYPE_INFO: u8 = 0x04;
/// The `gen_type` byte the C driver sends: `NOTICE_TYPE_INFO << 1`
/// (generic bit 0).
pub const NOTICE_GEN_TYPE: u8 = NOTICE_TYPE_INFO << 1;
/// Bytes of a trap MAD on the wire: vendor header plus `IB_MGMT_MAD_DATA`
/// (the size `ib_create_send_mad()` gives it), 272.
pub const TRAP_MAD_LEN: usize = IB_MGMT_VENDOR_HDR + IB_MGMT_MAD_DATA;

wire_struct! {
    /// The trap payload (`struct opa_veswport_trap`), 16 bytes, carried in
    /// the Notice `raw_data`.
    pub struct VeswPortTrap {
        /// Fabric id (10 bits).
        fabric_id: u16,
        /// Virtual Ethernet switch id (12 bits).
        veswid: u16,
        /// Port number on the vesw.
        veswportnum: u32,
        /// OPA port number.
        opaportnum: u16,
        /// Virtual port index on the OPA port.
        veswportindex: u8,
        /// Opcode (`TRAP_*`).
        opcode: u8,
        /// Reserved.
        reserved: u32,
    }
}

wire_struct! {
    /// The vendor Notice attribute (`struct opa_vnic_notice_attr`), 96
    /// bytes.
    pub struct NoticeAttr {
        /// Generic bit and type ([`NOTICE_GEN_TYPE`]).
        gen_type: u8,
        /// Vendor OUI byte 1 (`0x00`).
        oui_1: u8,
        /// Vendor OUI byte 2 (`0x06`).
        oui_2: u8,
        /// Vendor OUI byte 3 (`0x6a`).
        oui_3: u8,
        /// Trap number (0 for VNIC traps).
        trap_num: u16,
        /// Toggle bit and count.
        toggle_count: u16,
        /// LID of the issuer (the port's `encap_slid`).
        issuer_lid: u32,
        /// Reserved.
        reserved: u32,
        /// Issuer GID (Report only).
        issuer_gid: [u8; 16],
        /// Trap body: a [`VeswPortTrap`] then zeros.
        raw_data: [u8; 64],
    }
}

wire_struct! {
    /// A trap MAD up to the end of the Notice (`struct
    /// opa_vnic_vema_mad_trap`), 136 bytes; sent as [`TRAP_MAD_LEN`] bytes
    /// with zeros after it.
    pub struct VemaTrapMad {
        /// Vendor MAD header.
        hdr: VemaMadHdr,
        /// The Notice.
        notice: NoticeAttr,
    }
}

const _: () = assert!(VeswPortTrap::SIZE == 16);
const _: () = assert!(NoticeAttr::SIZE == 96);
const _: () = assert!(VemaTrapMad::SIZE == 136);
const _: () = assert!(TRAP_MAD_LEN == 272);

impl VemaTrapMad {
    /// The trap MAD `opa_vnic_vema_send_trap()` sends: OPA base version,
    /// EMA class and class version, method Trap, transaction id `tid`,
    /// attribute Notice, modifier 0, Intel OUI in the header and the
    /// Notice, [`NOTICE_GEN_TYPE`], the issuer LID and the payload (with
    /// its reserved word zero).
    pub fn new(tid: u64, issuer_lid: u32, trap: &VeswPortTrap) -> Self {
        let mut payload = *trap;
        payload.reserved = 0;
        let mut raw_data = [0u8; 64];
        // Cannot fail: 64 bytes hold the 16-byte payload.
        let _ = payload.encode(&mut raw_data);
        VemaTrapMad {
            hdr: VemaMadHdr {
                mad_hdr: MadHdr {
                    base_version: OPA_MGMT_BASE_VERSION,
                    mgmt_class: OPA_MGMT_CLASS_INTEL_EMA,
                    class_version: OPA_EMA_CLASS_VERSION,
                    method: METHOD_TRAP,
                    status: 0,
                    class_specific: 0,
                    tid,
                    attr_id: ATTR_NOTICE,
                    resv: 0,
                    attr_mod: 0,
                },
                rmpp_hdr: RmppHdr::ZERO,
                reserved: 0,
                oui: INTEL_OUI,
            },
            notice: NoticeAttr {
                gen_type: NOTICE_GEN_TYPE,
                oui_1: INTEL_OUI[0],
                oui_2: INTEL_OUI[1],
                oui_3: INTEL_OUI[2],
                trap_num: 0,
                toggle_count: 0,
                issuer_lid,
                reserved: 0,
                issuer_gid: [0; 16],
                raw_data,
            },
        }
    }

    /// Encodes the whole trap MAD, [`TRAP_MAD_LEN`] bytes with zeros after
    /// the Notice, into `out`; returns [`TRAP_MAD_LEN`].
    pub fn encode_mad(&self, out: &mut [u8]) -> Result<usize, WireError> {
        let dst = out.get_mut(..TRAP_MAD_LEN).ok_or(WireError::NoSpace)?;
        dst.fill(0);
        self.encode(dst)?;
        Ok(TRAP_MAD_LEN)
    }

    /// Decodes and checks a received VNIC trap MAD: the vendor header of
    /// the EMA class, method Trap, attribute Notice and the Intel OUI in
    /// the Notice. The payload is [`VemaTrapMad::trap`].
    pub fn decode_trap(buf: &[u8]) -> Result<Self, WireError> {
        let mad = Self::decode(buf)?;
        mad.hdr.check_class()?;
        if mad.hdr.mad_hdr.method != METHOD_TRAP {
            return Err(WireError::UnsupportedMethod(mad.hdr.mad_hdr.method));
        }
        if mad.hdr.mad_hdr.attr_id != ATTR_NOTICE {
            return Err(WireError::UnsupportedAttribute(mad.hdr.mad_hdr.attr_id));
        }
        let n = &mad.notice;
        if [n.oui_1, n.oui_2, n.oui_3] != INTEL_OUI {
            return Err(WireError::NotVnicTrap);
        }
        Ok(mad)
    }

    /// The payload in the Notice's `raw_data`.
    pub fn trap(&self) -> Result<VeswPortTrap, WireError> {
        VeswPortTrap::decode(&self.notice.raw_data)
    }
}
