// SPDX-License-Identifier: GPL-2.0

//! Building the VEMA requests the EM sends and checking the responses it
//! gets, on top of the formats of `opa_wire`.

use core::fmt;

use opa_wire::mad::{
    MadHdr, RmppHdr, VemaMad, VemaMadHdr, ATTR_CLASS_PORT_INFO, ATTR_DELETE_VESW,
    ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS, ATTR_NOTICE, ATTR_VESWPORT_ERROR_COUNTERS,
    ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES, ATTR_VESWPORT_SUMMARY_COUNTERS,
    IB_MGMT_VENDOR_HDR, INTEL_OUI, MAD_STATUS_BAD_VERSION, MAD_STATUS_BUSY,
    MAD_STATUS_INVALID_ATTRIB_VALUE, MAD_STATUS_REDIRECT_REQD, MAD_STATUS_UNSUPPORTED_METHOD,
    MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB, METHOD_GET, METHOD_GET_RESP, METHOD_SET, METHOD_TRAP,
    OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION, OPA_MGMT_CLASS_INTEL_EMA, OPA_MGMT_MAD_SIZE,
    OPA_VNIC_EMA_DATA,
};
use opa_wire::WireError;

/// The Q_Key of QP1 (`IB_QP1_QKEY`), used for every GSI MAD.
pub const IB_QP1_QKEY: u32 = 0x8001_0000;
/// The default full-membership P_Key (`IB_DEFAULT_PKEY_FULL`).
pub const IB_DEFAULT_PKEY_FULL: u16 = 0xffff;

/// A whole OPA MAD buffer.
pub type MadBuf = [u8; OPA_MGMT_MAD_SIZE];

/// The request methods the EM sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Get.
    Get,
    /// Set.
    Set,
}

impl Method {
    /// The method byte.
    pub const fn code(self) -> u8 {
        match self {
            Method::Get => METHOD_GET,
            Method::Set => METHOD_SET,
        }
    }

    /// `"Get"` or `"Set"`.
    pub const fn name(self) -> &'static str {
        match self {
            Method::Get => "Get",
            Method::Set => "Set",
        }
    }
}

/// A human name for a VEMA attribute id.
pub fn attr_name(attr_id: u16) -> &'static str {
    match attr_id {
        ATTR_CLASS_PORT_INFO => "class port info",
        ATTR_NOTICE => "notice",
        ATTR_VESWPORT_INFO => "vesw port info",
        ATTR_VESWPORT_MAC_ENTRIES => "MAC table entries",
        ATTR_IFACE_UCAST_MACS => "interface unicast MACs",
        ATTR_IFACE_MCAST_MACS => "interface multicast MACs",
        ATTR_DELETE_VESW => "delete vesw",
        ATTR_VESWPORT_SUMMARY_COUNTERS => "summary counters",
        ATTR_VESWPORT_ERROR_COUNTERS => "error counters",
        _ => "unknown attribute",
    }
}

/// A human description of a MAD status (host order): the class-independent
/// code in bits 2-4, and busy and redirect in bits 0-1.
pub fn status_text(status: u16) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if status & MAD_STATUS_BUSY != 0 {
        parts.push("busy");
    }
    if status & MAD_STATUS_REDIRECT_REQD != 0 {
        parts.push("redirect required");
    }
    match status & 0x001c {
        0 => {}
        MAD_STATUS_BAD_VERSION => parts.push("bad base or class version"),
        MAD_STATUS_UNSUPPORTED_METHOD => parts.push("unsupported method"),
        MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB => {
            parts.push("unsupported method/attribute combination")
        }
        MAD_STATUS_INVALID_ATTRIB_VALUE => parts.push("invalid attribute value / modifier"),
        _ => parts.push("reserved status code"),
    }
    if status & 0xff00 != 0 {
        parts.push("class-specific status");
    }
    if parts.is_empty() {
        "success".to_string()
    } else {
        parts.join(", ")
    }
}

/// What a request is about: method, attribute, node port LID and virtual
/// port. Errors name it ("vesw port info of LID 0x0002 vport 1").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Get or Set.
    pub method: Method,
    /// Attribute id.
    pub attr_id: u16,
    /// LID of the node port the MAD goes to.
    pub lid: u16,
    /// Virtual port (attribute modifier bits 0-7), for per-port attributes.
    pub vport: Option<u8>,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} of LID {:#06x}",
            self.method.name(),
            attr_name(self.attr_id),
            self.lid
        )?;
        if let Some(v) = self.vport {
            write!(f, " vport {v}")?;
        }
        Ok(())
    }
}

/// Builds a whole VEMA request MAD (2048 bytes, data zero-padded): OPA
/// base version, EMA class and class version, the Intel OUI, `tid`,
/// `method`, `attr_id`, `attr_mod` and `data` after the vendor header.
pub fn build_request(
    tid: u64,
    method: Method,
    attr_id: u16,
    attr_mod: u32,
    data: &[u8],
) -> Result<MadBuf, WireError> {
    if data.len() > OPA_VNIC_EMA_DATA {
        return Err(WireError::MadTooLong);
    }
    let hdr = VemaMadHdr {
        mad_hdr: MadHdr {
            base_version: OPA_MGMT_BASE_VERSION,
            mgmt_class: OPA_MGMT_CLASS_INTEL_EMA,
            class_version: OPA_EMA_CLASS_VERSION,
            method: method.code(),
            status: 0,
            class_specific: 0,
            tid,
            attr_id,
            resv: 0,
            attr_mod,
        },
        rmpp_hdr: RmppHdr::ZERO,
        reserved: 0,
        oui: INTEL_OUI,
    };
    let mut buf = [0u8; OPA_MGMT_MAD_SIZE];
    VemaMad { hdr, data }.encode(&mut buf)?;
    Ok(buf)
}

/// Low 32 bits of a transaction id: the part the requester owns (the umad
/// layer puts its agent's id in the high half before sending).
pub const fn tid_low(tid: u64) -> u32 {
    (tid & 0xffff_ffff) as u32
}

/// What a received MAD is, as far as the EM is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming<'a> {
    /// A GetResp: the header and the data.
    Response(VemaMad<'a>),
    /// A Trap (method Trap, EMA class).
    Trap,
    /// Anything else (another class, another method).
    Other,
}

/// Sorts a received MAD: a VEMA GetResp, a VEMA Trap, or something else.
pub fn classify(buf: &[u8]) -> Incoming<'_> {
    match VemaMad::decode(buf) {
        Ok(m) if m.hdr.mad_hdr.method == METHOD_GET_RESP => Incoming::Response(m),
        Ok(m) if m.hdr.mad_hdr.method == METHOD_TRAP => Incoming::Trap,
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
    /// The data is shorter than the attribute; bytes found.
    Short(usize),
}

impl fmt::Display for ResponseMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseMismatch::Attr(a) => write!(f, "response carries attribute {a:#06x}"),
            ResponseMismatch::AttrMod(m) => write!(f, "response carries modifier {m:#010x}"),
            ResponseMismatch::Short(n) => write!(f, "response data too short ({n} bytes)"),
        }
    }
}

/// Checks that `rsp` answers a request for `attr_id`/`attr_mod` with at
/// least `min_len` bytes of data (the status is checked by the caller).
pub fn check_response(
    rsp: &VemaMad<'_>,
    attr_id: u16,
    attr_mod: u32,
    min_len: usize,
) -> Result<(), ResponseMismatch> {
    let h = &rsp.hdr.mad_hdr;
    if h.attr_id != attr_id {
        return Err(ResponseMismatch::Attr(h.attr_id));
    }
    if h.attr_mod != attr_mod {
        return Err(ResponseMismatch::AttrMod(h.attr_mod));
    }
    if rsp.data.len() < min_len {
        return Err(ResponseMismatch::Short(rsp.data.len()));
    }
    Ok(())
}

/// Offset of the data in a vendor MAD.
pub const DATA_OFFSET: usize = IB_MGMT_VENDOR_HDR;

#[cfg(test)]
mod tests {
    use super::*;
    use opa_wire::vema_info::VeswPortInfo;

    #[test]
    fn request_layout() {
        let mut info = VeswPortInfo::vema_pod();
        info.vesw.vesw_id = 0x123;
        let buf = build_request(
            0x0000_0000_dead_beef,
            Method::Set,
            ATTR_VESWPORT_INFO,
            7,
            &info.to_bytes(),
        )
        .unwrap();
        assert_eq!(&buf[0..4], &[0x80, 0x34, 0x80, 0x02]);
        assert_eq!(&buf[4..6], &[0, 0]);
        assert_eq!(&buf[8..16], &[0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(&buf[16..18], &[0x00, 0x11]);
        assert_eq!(&buf[20..24], &[0, 0, 0, 7]);
        assert_eq!(&buf[24..37], &[0u8; 13]);
        assert_eq!(&buf[37..40], &[0x00, 0x06, 0x6a]);
        // vesw_id is the second u16 of the data.
        assert_eq!(&buf[42..44], &[0x01, 0x23]);
        assert_eq!(
            VeswPortInfo::decode(&buf[DATA_OFFSET..])
                .unwrap()
                .vesw
                .vesw_id,
            0x123
        );
        assert!(buf[DATA_OFFSET + VeswPortInfo::SIZE..]
            .iter()
            .all(|&b| b == 0));
        assert_eq!(buf.len(), 2048);
    }

    #[test]
    fn request_too_long() {
        let data = vec![0u8; OPA_VNIC_EMA_DATA + 1];
        assert_eq!(
            build_request(1, Method::Get, ATTR_VESWPORT_INFO, 0, &data),
            Err(WireError::MadTooLong)
        );
    }

    #[test]
    fn classify_and_check() {
        let mut buf = build_request(5, Method::Get, ATTR_VESWPORT_INFO, 3, &[]).unwrap();
        assert_eq!(classify(&buf), Incoming::Other);
        buf[3] = METHOD_GET_RESP;
        let Incoming::Response(rsp) = classify(&buf) else {
            panic!("not a response")
        };
        assert_eq!(
            check_response(&rsp, ATTR_VESWPORT_INFO, 3, VeswPortInfo::SIZE),
            Ok(())
        );
        assert_eq!(
            check_response(&rsp, ATTR_VESWPORT_MAC_ENTRIES, 3, 0),
            Err(ResponseMismatch::Attr(ATTR_VESWPORT_INFO))
        );
        assert_eq!(
            check_response(&rsp, ATTR_VESWPORT_INFO, 4, 0),
            Err(ResponseMismatch::AttrMod(3))
        );
        let Incoming::Response(short) = classify(&buf[..100]) else {
            panic!("not a response")
        };
        assert_eq!(
            check_response(&short, ATTR_VESWPORT_INFO, 3, VeswPortInfo::SIZE),
            Err(ResponseMismatch::Short(60))
        );
        buf[3] = METHOD_TRAP;
        assert_eq!(classify(&buf), Incoming::Trap);
        buf[1] = 0x81;
        assert_eq!(classify(&buf), Incoming::Other);
        assert_eq!(classify(&[]), Incoming::Other);
    }

    #[test]
    fn names() {
        assert_eq!(status_text(0x001c), "invalid attribute value / modifier");
        assert_eq!(
            status_text(0x000c),
            "unsupported method/attribute combination"
        );
        assert_eq!(status_text(0), "success");
        assert_eq!(status_text(0x0001), "busy");
        let t = Target {
            method: Method::Get,
            attr_id: ATTR_VESWPORT_INFO,
            lid: 2,
            vport: Some(1),
        };
        assert_eq!(t.to_string(), "Get vesw port info of LID 0x0002 vport 1");
    }
}
