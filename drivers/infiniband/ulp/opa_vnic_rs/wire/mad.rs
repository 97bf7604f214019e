// SPDX-License-Identifier: GPL-2.0

//! The common MAD header, the vendor (VEMA) MAD layout, methods, status
//! codes (and the one each [`WireError`] answers), attribute ids and the
//! classification of a received VEMA request.

use super::codec::{get_at, put_at, Field, Reader, Writer};
use super::error::WireError;

/// Base version of OPA MADs (`OPA_MGMT_BASE_VERSION`).
pub const OPA_MGMT_BASE_VERSION: u8 = 0x80;
/// Intel Ethernet management class (`OPA_MGMT_CLASS_INTEL_EMA`).
pub const OPA_MGMT_CLASS_INTEL_EMA: u8 = 0x34;
/// EMA class version (`OPA_EMA_CLASS_VERSION`).
pub const OPA_EMA_CLASS_VERSION: u8 = 0x80;
/// Intel's OUI, carried by every VEMA MAD and trap.
pub const INTEL_OUI: [u8; 3] = [0x00, 0x06, 0x6a];

/// Method Get.
pub const METHOD_GET: u8 = 0x01;
/// Method Set.
pub const METHOD_SET: u8 = 0x02;
/// Method Send.
pub const METHOD_SEND: u8 = 0x03;
/// Method Trap.
pub const METHOD_TRAP: u8 = 0x05;
/// Method Report.
pub const METHOD_REPORT: u8 = 0x06;
/// Method TrapRepress.
pub const METHOD_TRAP_REPRESS: u8 = 0x07;
/// Response bit of a method.
pub const METHOD_RESP: u8 = 0x80;
/// Method GetResp (the answer to Get and Set).
pub const METHOD_GET_RESP: u8 = 0x81;
/// Method ReportResp.
pub const METHOD_REPORT_RESP: u8 = 0x86;

/// MAD status: success.
pub const MAD_STATUS_SUCCESS: u16 = 0x0000;
/// MAD status: busy.
pub const MAD_STATUS_BUSY: u16 = 0x0001;
/// MAD status: redirect required.
pub const MAD_STATUS_REDIRECT_REQD: u16 = 0x0002;
/// MAD status: bad base or class version.
pub const MAD_STATUS_BAD_VERSION: u16 = 0x0004;
/// MAD status: method not supported.
pub const MAD_STATUS_UNSUPPORTED_METHOD: u16 = 0x0008;
/// MAD status: method/attribute combination not supported (what VEMA
/// answers for an unsupported attribute and for an unsupported method).
pub const MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB: u16 = 0x000c;
/// MAD status: invalid attribute value or modifier.
pub const MAD_STATUS_INVALID_ATTRIB_VALUE: u16 = 0x001c;

impl WireError {
    /// The MAD status (host order) a VEMA response carries for this error.
    ///
    /// Matches the C driver: an unsupported method and an unsupported
    /// attribute both answer `0x000c` (unsupported method/attribute
    /// combination), a bad version answers `0x0004`, and every invalid
    /// field, modifier or length answers `0x001c` (invalid attribute value
    /// or modifier). A change the agent could not make for want of memory
    /// answers `0x0001` (busy), where the C driver, which allocates nothing
    /// for it, cannot fail.
    pub const fn mad_status(self) -> u16 {
        match self {
            WireError::UnsupportedMethod(_) | WireError::UnsupportedAttribute(_) => {
                MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB
            }
            WireError::BadBaseVersion(_) | WireError::BadClassVersion(_) => MAD_STATUS_BAD_VERSION,
            WireError::Busy => MAD_STATUS_BUSY,
            _ => MAD_STATUS_INVALID_ATTRIB_VALUE,
        }
    }
}

/// Attribute: ClassPortInfo.
pub const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
/// Attribute: Notice (trap), `IB_SMP_ATTR_NOTICE`.
pub const ATTR_NOTICE: u16 = 0x0002;
/// Attribute: VESW port info (vesw info + per-port info).
pub const ATTR_VESWPORT_INFO: u16 = 0x0011;
/// Attribute: MAC table entries.
pub const ATTR_VESWPORT_MAC_ENTRIES: u16 = 0x0012;
/// Attribute: interface unicast MAC list.
pub const ATTR_IFACE_UCAST_MACS: u16 = 0x0013;
/// Attribute: interface multicast MAC list.
pub const ATTR_IFACE_MCAST_MACS: u16 = 0x0014;
/// Attribute: delete (reset to power-on defaults) a vesw port.
pub const ATTR_DELETE_VESW: u16 = 0x0015;
/// Attribute: summary counters.
pub const ATTR_VESWPORT_SUMMARY_COUNTERS: u16 = 0x0020;
/// Attribute: error counters.
pub const ATTR_VESWPORT_ERROR_COUNTERS: u16 = 0x0022;

/// Size of an OPA MAD (`OPA_MGMT_MAD_SIZE`).
pub const OPA_MGMT_MAD_SIZE: usize = 2048;
/// Size of an IB MAD and of the smallest OPA MAD (`sizeof(struct ib_mad)`).
pub const IB_MGMT_MAD_SIZE: usize = 256;
/// Common MAD header (`IB_MGMT_MAD_HDR`).
pub const IB_MGMT_MAD_HDR: usize = 24;
/// Vendor MAD header: MAD header, RMPP header, reserved byte and OUI
/// (`IB_MGMT_VENDOR_HDR`).
pub const IB_MGMT_VENDOR_HDR: usize = 40;
/// Data bytes of an IB MAD after the common header (`IB_MGMT_MAD_DATA`).
pub const IB_MGMT_MAD_DATA: usize = IB_MGMT_MAD_SIZE - IB_MGMT_MAD_HDR;
/// Data bytes of a VEMA MAD (`OPA_VNIC_EMA_DATA`).
pub const OPA_VNIC_EMA_DATA: usize = OPA_MGMT_MAD_SIZE - IB_MGMT_VENDOR_HDR;

wire_struct! {
    /// The common MAD header (`struct ib_mad_hdr`), 24 bytes.
    pub struct MadHdr {
        /// Base version ([`OPA_MGMT_BASE_VERSION`]).
        base_version: u8,
        /// Management class ([`OPA_MGMT_CLASS_INTEL_EMA`]).
        mgmt_class: u8,
        /// Class version ([`OPA_EMA_CLASS_VERSION`]).
        class_version: u8,
        /// Method (`METHOD_*`).
        method: u8,
        /// Status (`MAD_STATUS_*`).
        status: u16,
        /// Class specific.
        class_specific: u16,
        /// Transaction id.
        tid: u64,
        /// Attribute id (`ATTR_*`).
        attr_id: u16,
        /// Reserved.
        resv: u16,
        /// Attribute modifier; VEMA takes the virtual port number from bits
        /// 0-7.
        attr_mod: u32,
    }
}

wire_struct! {
    /// The RMPP header (`struct ib_rmpp_hdr`), 12 bytes; unused by VEMA
    /// but part of every vendor MAD.
    pub struct RmppHdr {
        /// RMPP version.
        rmpp_version: u8,
        /// RMPP type.
        rmpp_type: u8,
        /// Response time (bits 3-7) and flags (bits 0-2).
        rmpp_rtime_flags: u8,
        /// RMPP status.
        rmpp_status: u8,
        /// Segment number.
        seg_num: u32,
        /// Payload length or new window.
        paylen_newwin: u32,
    }
}

wire_struct! {
    /// The header of a vendor MAD (`struct opa_vnic_vema_mad` up to its
    /// data), 40 bytes.
    pub struct VemaMadHdr {
        /// Common MAD header.
        mad_hdr: MadHdr,
        /// RMPP header.
        rmpp_hdr: RmppHdr,
        /// Reserved.
        reserved: u8,
        /// Vendor OUI ([`INTEL_OUI`]).
        oui: [u8; 3],
    }
}

const _: () = assert!(MadHdr::SIZE == IB_MGMT_MAD_HDR);
const _: () = assert!(RmppHdr::SIZE == 12);
const _: () = assert!(VemaMadHdr::SIZE == IB_MGMT_VENDOR_HDR);
const _: () = assert!(OPA_VNIC_EMA_DATA == 2008);

// Where `MadHdr` and `RmppHdr` keep the fields the agent reads and writes in place.
const HDR_METHOD: usize = 3;
const HDR_STATUS: usize = 4;
const HDR_ATTR_ID: usize = 16;
const HDR_ATTR_MOD: usize = 20;
const HDR_RMPP_FLAGS: usize = IB_MGMT_MAD_HDR + 2;

/// The Active flag of an RMPP header's flags (`IB_MGMT_RMPP_FLAG_ACTIVE`):
/// the MAD is a segment of an RMPP transfer.
pub const RMPP_FLAG_ACTIVE: u8 = 0x01;

impl RmppHdr {
    /// Whether the MAD is part of an RMPP transfer.
    pub const fn is_active(&self) -> bool {
        self.rmpp_rtime_flags & RMPP_FLAG_ACTIVE != 0
    }
}

impl VemaMadHdr {
    /// The header of the response to this request, as `vema_recv()` makes
    /// it: the whole vendor header copied, method GetResp, status 0.
    ///
    /// Except the RMPP header of a request that has RMPP active, which is
    /// zeroed: the C agent never sees such a request (it registers with
    /// RMPP and the MAD layer reassembles, or hangs), while this driver's
    /// agent gets it as a single MAD and answers it as one, not as a
    /// segment of an RMPP transfer.
    pub const fn response(&self) -> Self {
        let mut rsp = *self;
        rsp.mad_hdr.method = METHOD_GET_RESP;
        rsp.mad_hdr.status = MAD_STATUS_SUCCESS;
        if rsp.rmpp_hdr.is_active() {
            rsp.rmpp_hdr = RmppHdr::ZERO;
        }
        rsp
    }

    /// [`VemaMadHdr::response`] with `status`, made from the request's header where it is:
    /// its bytes, with the response's method and status, and no RMPP header if the request's
    /// was active. What the agent answers with, without decoding the header's 14 fields and
    /// encoding them again.
    #[inline]
    pub fn write_response(
        req: &[u8; IB_MGMT_VENDOR_HDR],
        status: u16,
        rsp: &mut [u8; IB_MGMT_VENDOR_HDR],
    ) {
        *rsp = *req;
        put_at::<HDR_METHOD, 1, IB_MGMT_VENDOR_HDR>(rsp, [METHOD_GET_RESP]);
        put_at::<HDR_STATUS, 2, IB_MGMT_VENDOR_HDR>(rsp, status.to_be_bytes());
        let [flags] = get_at::<HDR_RMPP_FLAGS, 1, IB_MGMT_VENDOR_HDR>(req);
        if flags & RMPP_FLAG_ACTIVE != 0 {
            put_at::<IB_MGMT_MAD_HDR, { RmppHdr::SIZE }, IB_MGMT_VENDOR_HDR>(
                rsp,
                [0; RmppHdr::SIZE],
            );
        }
    }

    /// What the agent reads of a request's header, read where it is: method, attribute id and
    /// attribute modifier (as [`MadHdr`] decodes them).
    #[inline]
    pub fn read_op(req: &[u8; IB_MGMT_VENDOR_HDR]) -> (u8, u16, u32) {
        let [method] = get_at::<HDR_METHOD, 1, IB_MGMT_VENDOR_HDR>(req);
        let attr_id = u16::from_be_bytes(get_at::<HDR_ATTR_ID, 2, IB_MGMT_VENDOR_HDR>(req));
        let attr_mod = u32::from_be_bytes(get_at::<HDR_ATTR_MOD, 4, IB_MGMT_VENDOR_HDR>(req));
        (method, attr_id, attr_mod)
    }

    /// The virtual port number the attribute modifier names (bits 0-7).
    pub const fn vport_num(&self) -> u8 {
        vport_num(self.mad_hdr.attr_mod)
    }

    /// Checks base version, class, class version and OUI of a VEMA MAD.
    pub const fn check_class(&self) -> Result<(), WireError> {
        let h = &self.mad_hdr;
        if h.base_version != OPA_MGMT_BASE_VERSION {
            return Err(WireError::BadBaseVersion(h.base_version));
        }
        if h.mgmt_class != OPA_MGMT_CLASS_INTEL_EMA {
            return Err(WireError::BadMgmtClass(h.mgmt_class));
        }
        if h.class_version != OPA_EMA_CLASS_VERSION {
            return Err(WireError::BadClassVersion(h.class_version));
        }
        let o = self.oui;
        if o[0] != INTEL_OUI[0] || o[1] != INTEL_OUI[1] || o[2] != INTEL_OUI[2] {
            return Err(WireError::BadOui);
        }
        Ok(())
    }
}

/// The virtual port number in an attribute modifier (bits 0-7; the C
/// driver ignores bits 8-31).
pub const fn vport_num(attr_mod: u32) -> u8 {
    (attr_mod & 0xff) as u8
}

/// A whole VEMA MAD: the vendor header and the data after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VemaMad<'a> {
    /// The vendor MAD header.
    pub hdr: VemaMadHdr,
    /// The data (up to [`OPA_VNIC_EMA_DATA`] bytes).
    pub data: &'a [u8],
}

impl<'a> VemaMad<'a> {
    /// Decodes a received VEMA MAD: at least the 40-byte header, at most
    /// [`OPA_MGMT_MAD_SIZE`] bytes, OPA base version, EMA class and class
    /// version, Intel OUI.
    pub fn decode(buf: &'a [u8]) -> Result<Self, WireError> {
        if buf.len() > OPA_MGMT_MAD_SIZE {
            return Err(WireError::MadTooLong);
        }
        let hdr = VemaMadHdr::decode(buf)?;
        hdr.check_class()?;
        let data = buf.get(IB_MGMT_VENDOR_HDR..).ok_or(WireError::Truncated)?;
        Ok(VemaMad { hdr, data })
    }

    /// Writes the header and then `data` into `out`; returns the bytes
    /// written.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, WireError> {
        let n = IB_MGMT_VENDOR_HDR
            .checked_add(self.data.len())
            .ok_or(WireError::NoSpace)?;
        if n > OPA_MGMT_MAD_SIZE {
            return Err(WireError::MadTooLong);
        }
        let mut w = Writer::new(out);
        self.hdr.write(&mut w)?;
        w.put(self.data)?;
        Ok(n)
    }

    /// What this MAD asks VEMA to do.
    pub const fn op(&self) -> Result<VemaOp, WireError> {
        VemaOp::classify(self.hdr.mad_hdr.method, self.hdr.mad_hdr.attr_id)
    }
}

/// A VEMA request the C driver handles: each Get/Set and attribute pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VemaOp {
    /// Get ClassPortInfo.
    GetClassPortInfo,
    /// Set ClassPortInfo.
    SetClassPortInfo,
    /// Get VESW port info (power-on defaults if the port does not exist).
    GetVeswPortInfo,
    /// Set VESW port info (creates the port if it does not exist).
    SetVeswPortInfo,
    /// Get MAC table entries.
    GetMacEntries,
    /// Set MAC table entries.
    SetMacEntries,
    /// Set delete vesw: reset the port to power-on defaults.
    SetDeleteVesw,
    /// Get interface unicast MAC list.
    GetIfaceUcastMacs,
    /// Get interface multicast MAC list.
    GetIfaceMcastMacs,
    /// Get summary counters.
    GetSummaryCounters,
    /// Get error counters.
    GetErrorCounters,
}

impl VemaOp {
    /// The operation for a method and attribute id, or the error (and so
    /// the status) `vema_recv()`, `vema_get()` and `vema_set()` answer
    /// with: any method but Get and Set, and any attribute the method does
    /// not handle, answer [`MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB`].
    pub const fn classify(method: u8, attr_id: u16) -> Result<Self, WireError> {
        match method {
            METHOD_GET => match attr_id {
                ATTR_CLASS_PORT_INFO => Ok(VemaOp::GetClassPortInfo),
                ATTR_VESWPORT_INFO => Ok(VemaOp::GetVeswPortInfo),
                ATTR_VESWPORT_MAC_ENTRIES => Ok(VemaOp::GetMacEntries),
                ATTR_IFACE_UCAST_MACS => Ok(VemaOp::GetIfaceUcastMacs),
                ATTR_IFACE_MCAST_MACS => Ok(VemaOp::GetIfaceMcastMacs),
                ATTR_VESWPORT_SUMMARY_COUNTERS => Ok(VemaOp::GetSummaryCounters),
                ATTR_VESWPORT_ERROR_COUNTERS => Ok(VemaOp::GetErrorCounters),
                _ => Err(WireError::UnsupportedAttribute(attr_id)),
            },
            METHOD_SET => match attr_id {
                ATTR_CLASS_PORT_INFO => Ok(VemaOp::SetClassPortInfo),
                ATTR_VESWPORT_INFO => Ok(VemaOp::SetVeswPortInfo),
                ATTR_VESWPORT_MAC_ENTRIES => Ok(VemaOp::SetMacEntries),
                ATTR_DELETE_VESW => Ok(VemaOp::SetDeleteVesw),
                _ => Err(WireError::UnsupportedAttribute(attr_id)),
            },
            _ => Err(WireError::UnsupportedMethod(method)),
        }
    }

    /// Whether the operation acts on a virtual port named by the attribute
    /// modifier (all but the ClassPortInfo ones).
    pub const fn needs_vport(self) -> bool {
        !matches!(self, VemaOp::GetClassPortInfo | VemaOp::SetClassPortInfo)
    }

    /// Whether the C driver answers [`WireError::NoSuchVport`] when the
    /// port does not exist. Get VESW port info answers the power-on
    /// defaults instead, Set VESW port info creates the port, and the
    /// ClassPortInfo ones name no port.
    pub const fn rejects_missing_vport(self) -> bool {
        !matches!(
            self,
            VemaOp::GetClassPortInfo
                | VemaOp::SetClassPortInfo
                | VemaOp::GetVeswPortInfo
                | VemaOp::SetVeswPortInfo
        )
    }
}
