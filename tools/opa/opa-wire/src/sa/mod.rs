// SPDX-License-Identifier: GPL-2.0

//! Subnet Administration (SA) MADs of an OPA fabric: what an Ethernet Manager asks the subnet
//! manager to find nodes by GUID or description, the LIDs they have now, and the ports that
//! can carry VNIC.
//!
//! The layouts are OPA's (base and class version `0x80`): the SA header after the RMPP header
//! (`struct ib_sa_mad` of `include/rdma/ib_sa.h`, IBA 15.2.1.1), and the records of opa-ff's
//! public `stl_sa.h` (`STL_NODE_RECORD`, `STL_PORTINFO_RECORD`, `STL_MCMEMBER_RECORD`). The
//! PathRecord is the exception: opa-fm serves it only at InfiniBand's versions (base version 1,
//! SA class version 2, 256-byte MADs: `sa_PathRecord.c` answers any other with BAD_CLASS), so
//! it has IBA's layout (15.2.5.16, 16-bit LIDs), and `encode_ib` and `SaMad::decode_ib`
//! carry it. Records of a GetTable answer follow each other every `AttributeOffset` 8-byte words;
//! an answer longer than one MAD travels as RMPP segments (IBA 13.6), which the kernel's MAD
//! layer cuts and reassembles for an agent registered with RMPP version 1.
//!
//! Host only: the kernel modules never parse SA records.

mod bytes;
pub mod records;

use crate::wire::mad::{MadHdr, RmppHdr, OPA_MGMT_BASE_VERSION};
use crate::wire::WireError;
use bytes::{put, u16_at, u64_at};

pub use records::{McMemberRecord, NodeRecord, PathRecord, PortInfoRecord};

/// Base version of an InfiniBand MAD (`IB_MGMT_BASE_VERSION`), the PathRecord's.
pub const IB_SA_BASE_VERSION: u8 = 1;
/// SA class version of InfiniBand (`IB_SA_CLASS_VERSION`), the PathRecord's.
pub const IB_SA_CLASS_VERSION: u8 = 2;
/// Size of an InfiniBand MAD, and of one RMPP segment of an IB SA answer.
pub const IB_MAD_SIZE: usize = 256;
/// Status BAD_CLASS (`MAD_STATUS_BAD_CLASS`): the class version is not served, as opa-fm
/// answers a PathRecord request at OPA's versions.
pub const MAD_STATUS_BAD_CLASS: u16 = 0x0004;

/// Management class of Subnet Administration (`IB_MGMT_CLASS_SUBN_ADM`).
pub const SA_CLASS: u8 = 0x03;
/// SA class version of OPA (`OPA_SA_CLASS_VERSION`, opa-ff's `STL_SA_CLASS_VERSION`).
pub const SA_CLASS_VERSION: u8 = 0x80;
/// Base version of an SA MAD on OPA.
pub const SA_BASE_VERSION: u8 = OPA_MGMT_BASE_VERSION;

/// Method Get: exactly one record.
pub const METHOD_GET: u8 = 0x01;
/// Method GetResp.
pub const METHOD_GET_RESP: u8 = 0x81;
/// Method Set (a McMemberRecord join).
pub const METHOD_SET: u8 = 0x02;
/// Method GetTable: every matching record (`IB_SA_METHOD_GET_TABLE`).
pub const METHOD_GET_TABLE: u8 = 0x12;
/// Method GetTableResp (`IB_SA_METHOD_GET_TABLE_RESP`).
pub const METHOD_GET_TABLE_RESP: u8 = 0x92;

/// Attribute ClassPortInfo (`STL_MCLASS_ATTRIB_ID_CLASS_PORT_INFO`): what the SA can do.
pub const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
/// Attribute NodeRecord (`STL_SA_ATTR_NODE_RECORD`).
pub const ATTR_NODE_RECORD: u16 = 0x0011;
/// Attribute PortInfoRecord (`STL_SA_ATTR_PORTINFO_RECORD`).
pub const ATTR_PORTINFO_RECORD: u16 = 0x0012;
/// Attribute PathRecord (`STL_SA_ATTR_PATH_RECORD`).
pub const ATTR_PATH_RECORD: u16 = 0x0035;
/// Attribute McMemberRecord (`STL_SA_ATTR_MCMEMBER_RECORD`).
pub const ATTR_MCMEMBER_RECORD: u16 = 0x0038;

/// MAD status BUSY (`MAD_STATUS_BUSY`): the SA cannot answer now (the SM is sweeping, or does
/// not yet know the requester); ask again later.
pub const MAD_STATUS_BUSY: u16 = 0x0001;

/// SA status (class-specific bits 8-14 of the MAD status): no resources.
pub const SA_STATUS_NO_RESOURCES: u16 = 0x0100;
/// SA status: the request is invalid (a component the SA does not match on).
pub const SA_STATUS_REQ_INVALID: u16 = 0x0200;
/// SA status: a Get matched no record.
pub const SA_STATUS_NO_RECORDS: u16 = 0x0300;
/// SA status: a Get matched more than one record.
pub const SA_STATUS_TOO_MANY_RECORDS: u16 = 0x0400;
/// SA status: the component mask does not give what the query needs.
pub const SA_STATUS_INSUFFICIENT_COMPONENTS: u16 = 0x0600;

/// RMPP version of IBA 13.6 (`IB_MGMT_RMPP_VERSION`).
pub const RMPP_VERSION: u8 = 1;
/// RMPP type DATA.
pub const RMPP_TYPE_DATA: u8 = 1;
/// RMPP flag Active: the MAD is (part of) an RMPP transfer.
pub const RMPP_FLAG_ACTIVE: u8 = 1;
/// RMPP flag First segment.
pub const RMPP_FLAG_FIRST: u8 = 2;
/// RMPP flag Last segment.
pub const RMPP_FLAG_LAST: u8 = 4;

/// Offset of the SA header in the MAD (`IB_MGMT_RMPP_HDR`).
pub const SA_HDR_OFFSET: usize = 36;
/// Offset of the SA data, the first record (`IB_MGMT_SA_HDR`).
pub const SA_DATA_OFFSET: usize = 56;
/// Size of an OPA MAD, and of one RMPP segment with its headers.
pub const OPA_MAD_SIZE: usize = 2048;
/// Data bytes of one RMPP segment of an OPA SA MAD.
pub const SA_SEGMENT_DATA: usize = OPA_MAD_SIZE - SA_DATA_OFFSET;

/// The SA header (`struct ib_sa_mad` between the RMPP header and the data), 20 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SaHdr {
    /// SM_Key (0: the EM is not trusted with more than records anyone may read).
    pub sm_key: u64,
    /// Distance between records of a GetTable answer, in 8-byte words.
    pub attr_offset: u16,
    /// Which fields of the template (request) or of the records (answer) count.
    pub comp_mask: u64,
}

impl SaHdr {
    /// Reads the header from a whole MAD.
    pub fn decode(mad: &[u8]) -> Result<Self, WireError> {
        Ok(SaHdr {
            sm_key: u64_at(mad, SA_HDR_OFFSET)?,
            attr_offset: u16_at(mad, SA_HDR_OFFSET + 8)?,
            comp_mask: u64_at(mad, SA_HDR_OFFSET + 12)?,
        })
    }

    /// Writes the header into a whole MAD.
    pub fn encode(&self, mad: &mut [u8]) -> Result<(), WireError> {
        put(mad, SA_HDR_OFFSET, &self.sm_key.to_be_bytes())?;
        put(mad, SA_HDR_OFFSET + 8, &self.attr_offset.to_be_bytes())?;
        put(mad, SA_HDR_OFFSET + 10, &[0, 0])?;
        put(mad, SA_HDR_OFFSET + 12, &self.comp_mask.to_be_bytes())
    }
}

/// A decoded SA MAD: its headers and the bytes after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaMad<'a> {
    /// Common MAD header.
    pub hdr: MadHdr,
    /// RMPP header.
    pub rmpp: RmppHdr,
    /// SA header.
    pub sa: SaHdr,
    /// The data: one record (Get, GetResp, a GetTable template) or the records of a
    /// reassembled GetTableResp.
    pub data: &'a [u8],
}

impl<'a> SaMad<'a> {
    /// Decodes an SA MAD of OPA (base and class version `0x80`, class SA).
    pub fn decode(mad: &'a [u8]) -> Result<Self, WireError> {
        Self::decode_as(mad, SA_BASE_VERSION, SA_CLASS_VERSION)
    }

    /// Decodes an SA MAD of InfiniBand (base version 1, class version 2, class SA): a
    /// PathRecord request or answer.
    pub fn decode_ib(mad: &'a [u8]) -> Result<Self, WireError> {
        Self::decode_as(mad, IB_SA_BASE_VERSION, IB_SA_CLASS_VERSION)
    }

    fn decode_as(mad: &'a [u8], base: u8, class: u8) -> Result<Self, WireError> {
        let hdr = MadHdr::decode(mad)?;
        if hdr.base_version != base {
            return Err(WireError::BadBaseVersion(hdr.base_version));
        }
        if hdr.mgmt_class != SA_CLASS {
            return Err(WireError::BadMgmtClass(hdr.mgmt_class));
        }
        if hdr.class_version != class {
            return Err(WireError::BadClassVersion(hdr.class_version));
        }
        let rmpp = RmppHdr::decode(mad.get(MadHdr::SIZE..).ok_or(WireError::Truncated)?)?;
        let sa = SaHdr::decode(mad)?;
        let data = mad.get(SA_DATA_OFFSET..).ok_or(WireError::Truncated)?;
        Ok(SaMad {
            hdr,
            rmpp,
            sa,
            data,
        })
    }

    /// The records of a GetTableResp: `attr_offset * 8` bytes each, as many as `data` holds
    /// whole (an RMPP transfer pads its last segment). An `attr_offset` of 0 means none.
    pub fn records(&self) -> impl Iterator<Item = &'a [u8]> {
        let stride = usize::from(self.sa.attr_offset).saturating_mul(8);
        let n = self.data.len().checked_div(stride).unwrap_or(0);
        let data = self.data;
        (0..n).filter_map(move |i| {
            let start = i.checked_mul(stride)?;
            data.get(start..start.checked_add(stride)?)
        })
    }

    /// The MAD status without its class-specific part mixed in: `(common, sa)`.
    pub fn status(&self) -> (u16, u16) {
        (self.hdr.status & 0x00ff, self.hdr.status & 0x7f00)
    }
}

/// Writes the headers of an SA MAD into `out` (at least [`SA_DATA_OFFSET`] bytes) and copies
/// `data` after them; returns the length of the MAD. A GetTableResp gets the RMPP Active flag,
/// so that the kernel's MAD layer sends it as RMPP segments; other methods get no RMPP.
#[allow(clippy::too_many_arguments)]
pub fn encode(
    out: &mut [u8],
    method: u8,
    status: u16,
    tid: u64,
    attr_id: u16,
    attr_mod: u32,
    sa: &SaHdr,
    data: &[u8],
) -> Result<usize, WireError> {
    let len = SA_DATA_OFFSET
        .checked_add(data.len())
        .ok_or(WireError::NoSpace)?;
    let out = out.get_mut(..len).ok_or(WireError::NoSpace)?;
    out.fill(0);
    MadHdr {
        base_version: SA_BASE_VERSION,
        mgmt_class: SA_CLASS,
        class_version: SA_CLASS_VERSION,
        method,
        status,
        class_specific: 0,
        tid,
        attr_id,
        resv: 0,
        attr_mod,
    }
    .encode(out)?;
    if method == METHOD_GET_TABLE_RESP {
        let rmpp = RmppHdr {
            rmpp_version: RMPP_VERSION,
            rmpp_type: RMPP_TYPE_DATA,
            rmpp_rtime_flags: RMPP_FLAG_ACTIVE,
            ..RmppHdr::ZERO
        };
        rmpp.encode(out.get_mut(MadHdr::SIZE..).ok_or(WireError::NoSpace)?)?;
    }
    sa.encode(out)?;
    put(out, SA_DATA_OFFSET, data)?;
    Ok(len)
}

/// [`encode`] at InfiniBand's base and class versions: a PathRecord request or answer.
#[allow(clippy::too_many_arguments)]
pub fn encode_ib(
    out: &mut [u8],
    method: u8,
    status: u16,
    tid: u64,
    attr_id: u16,
    attr_mod: u32,
    sa: &SaHdr,
    data: &[u8],
) -> Result<usize, WireError> {
    let len = encode(out, method, status, tid, attr_id, attr_mod, sa, data)?;
    // The common MAD header's BaseVersion and ClassVersion bytes.
    put(out, 0, &[IB_SA_BASE_VERSION])?;
    put(out, 2, &[IB_SA_CLASS_VERSION])?;
    Ok(len)
}

/// The `attr_offset` of records of `size` bytes: 8-byte words, rounded up.
pub const fn attr_offset(size: usize) -> u16 {
    // Records are a few hundred bytes; the quotient always fits.
    (size.div_ceil(8)) as u16
}
