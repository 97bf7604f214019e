// SPDX-License-Identifier: GPL-2.0

//! The MADs the EM reads: responses (checked against the request), traps and anything
//! else.

use core::fmt;

use opa_wire::mad::{
    VemaMad, VemaMadHdr, IB_MGMT_MAD_HDR, IB_MGMT_VENDOR_HDR, INTEL_OUI, METHOD_GET_RESP,
    METHOD_TRAP, OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION, OPA_MGMT_CLASS_INTEL_EMA,
    OPA_MGMT_MAD_SIZE,
};

/// Base version of an IB MAD (`IB_MGMT_BASE_VERSION`): an agent may
/// answer with a 256-byte IB MAD.
pub const IB_MGMT_BASE_VERSION: u8 = 1;

/// A VEMA GetResp as the EM reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The vendor header (zero where the answer was shorter).
    pub hdr: VemaMadHdr,
    /// The data, read as if the answer were zero-filled to a whole OPA
    /// MAD: always [`OPA_VNIC_EMA_DATA`](opa_wire::mad::OPA_VNIC_EMA_DATA) bytes, so that any attribute
    /// decodes from it whatever size the answer came at.
    pub data: Vec<u8>,
    /// The bytes that came, header included.
    pub len: usize,
}

/// What a received MAD is, as far as the EM is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A GetResp of the EMA class.
    Response(Response),
    /// A Trap (method Trap, EMA class).
    Trap,
    /// Fewer bytes than the common MAD header: nothing can be read of
    /// it, not even its TID; the number of bytes.
    Runt(usize),
    /// Anything else (another class, another method).
    Other,
}

/// Sorts a received MAD: a VEMA GetResp, a VEMA Trap, too short to tell,
/// or something else.
///
/// Answers come at any size from the MAD header to a whole OPA MAD: the
/// kernel's MAD layer and the drivers answer trimmed or full, and an
/// agent answering with an IB MAD (base version 1) sends 256 bytes. A
/// response is read as if zero-filled to [`OPA_MGMT_MAD_SIZE`], as an
/// agent reads a trimmed request. The MAD layer routes a response to the
/// EM by its TID alone, so one cut short of the OUI is still read; an OUI
/// that came must be Intel's.
pub fn classify(buf: &[u8]) -> Incoming {
    let len = buf.len();
    if len > OPA_MGMT_MAD_SIZE {
        return Incoming::Other;
    }
    if len < IB_MGMT_MAD_HDR {
        return Incoming::Runt(len);
    }
    let mut full = vec![0u8; OPA_MGMT_MAD_SIZE];
    full[..len].copy_from_slice(buf);
    let Ok(hdr) = VemaMadHdr::decode(&full) else {
        return Incoming::Other;
    };
    let h = &hdr.mad_hdr;
    if h.mgmt_class != OPA_MGMT_CLASS_INTEL_EMA || h.class_version != OPA_EMA_CLASS_VERSION {
        return Incoming::Other;
    }
    match h.method {
        METHOD_GET_RESP => {
            if h.base_version != OPA_MGMT_BASE_VERSION && h.base_version != IB_MGMT_BASE_VERSION {
                return Incoming::Other;
            }
            if len >= IB_MGMT_VENDOR_HDR && hdr.oui != INTEL_OUI {
                return Incoming::Other;
            }
            full.drain(..DATA_OFFSET);
            Incoming::Response(Response {
                hdr,
                data: full,
                len,
            })
        }
        // Traps are decoded whole later: only a complete one counts.
        METHOD_TRAP if VemaMad::decode(buf).is_ok() => Incoming::Trap,
        _ => Incoming::Other,
    }
}

/// Why a response does not answer the request it matched by TID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseMismatch {
    /// The attribute id differs; the one found.
    Attr(u16),
    /// The attribute modifier differs; the one found.
    AttrMod(u32),
}

impl fmt::Display for ResponseMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseMismatch::Attr(a) => write!(f, "response carries attribute {a:#06x}"),
            ResponseMismatch::AttrMod(m) => write!(f, "response carries modifier {m:#010x}"),
        }
    }
}

/// Checks that `rsp` answers a request for `attr_id`/`attr_mod` (the
/// status is checked by the caller; the data is long enough for any
/// attribute, see [`Response::data`]).
pub fn check_response(rsp: &Response, attr_id: u16, attr_mod: u32) -> Result<(), ResponseMismatch> {
    let h = &rsp.hdr.mad_hdr;
    if h.attr_id != attr_id {
        return Err(ResponseMismatch::Attr(h.attr_id));
    }
    if h.attr_mod != attr_mod {
        return Err(ResponseMismatch::AttrMod(h.attr_mod));
    }
    Ok(())
}

/// Offset of the data in a vendor MAD.
pub const DATA_OFFSET: usize = IB_MGMT_VENDOR_HDR;
