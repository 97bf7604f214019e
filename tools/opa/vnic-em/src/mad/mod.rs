// SPDX-License-Identifier: GPL-2.0

//! Building the VEMA requests the EM sends and checking the responses it
//! gets, on top of the formats of `opa_wire`: the names of methods,
//! attributes and statuses here, the requests ([`build_request`]) and the
//! responses ([`classify`], [`check_response`]) in files of their own.

use core::fmt;

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_DELETE_VESW, ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS,
    ATTR_NOTICE, ATTR_VESWPORT_ERROR_COUNTERS, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES,
    ATTR_VESWPORT_SUMMARY_COUNTERS, MAD_STATUS_BAD_VERSION, MAD_STATUS_BUSY,
    MAD_STATUS_INVALID_ATTRIB_VALUE, MAD_STATUS_REDIRECT_REQD, MAD_STATUS_UNSUPPORTED_METHOD,
    MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB, METHOD_GET, METHOD_SET, OPA_MGMT_MAD_SIZE,
};

mod request;
mod response;

pub use request::{attr_size, build_request, tid_low, MadSize};
pub use response::{
    check_response, classify, Incoming, Response, ResponseMismatch, DATA_OFFSET,
    IB_MGMT_BASE_VERSION,
};

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

#[cfg(test)]
mod tests {
    use opa_wire::mad::{
        IB_MGMT_MAD_HDR, IB_MGMT_VENDOR_HDR, METHOD_GET_RESP, METHOD_TRAP, OPA_VNIC_EMA_DATA,
    };
    use opa_wire::vema_info::VeswPortInfo;
    use opa_wire::vema_mac::MacTableHdr;
    use opa_wire::WireError;

    use super::*;

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
        assert_eq!(rsp.len, OPA_MGMT_MAD_SIZE);
        assert_eq!(rsp.data.len(), OPA_VNIC_EMA_DATA);
        assert_eq!(check_response(&rsp, ATTR_VESWPORT_INFO, 3), Ok(()));
        assert_eq!(
            check_response(&rsp, ATTR_VESWPORT_MAC_ENTRIES, 3),
            Err(ResponseMismatch::Attr(ATTR_VESWPORT_INFO))
        );
        assert_eq!(
            check_response(&rsp, ATTR_VESWPORT_INFO, 4),
            Err(ResponseMismatch::AttrMod(3))
        );
        buf[3] = METHOD_TRAP;
        assert_eq!(classify(&buf), Incoming::Trap);
        assert_eq!(classify(&buf[..30]), Incoming::Other, "a trap cut short");
        buf[1] = 0x81;
        assert_eq!(classify(&buf), Incoming::Other);
        assert_eq!(classify(&[]), Incoming::Runt(0));
        assert_eq!(classify(&buf[..IB_MGMT_MAD_HDR - 1]), Incoming::Runt(23));
        assert_eq!(classify(&[0u8; OPA_MGMT_MAD_SIZE + 1]), Incoming::Other);
    }

    #[test]
    fn short_answers_read_as_zero_filled() {
        let mut info = VeswPortInfo::vema_pod();
        info.vesw.vesw_id = 0x123;
        info.vport.encap_slid = 0x42;
        let mut buf =
            build_request(9, Method::Set, ATTR_VESWPORT_INFO, 1, &info.to_bytes()).unwrap();
        buf[3] = METHOD_GET_RESP;
        // Trimmed, a 256-byte IB MAD (cut inside the attribute), the
        // vendor header alone, the common MAD header alone.
        for len in [
            IB_MGMT_VENDOR_HDR + VeswPortInfo::SIZE,
            256,
            IB_MGMT_VENDOR_HDR,
            IB_MGMT_MAD_HDR,
        ] {
            let mut b = buf[..len].to_vec();
            if len == 256 {
                b[0] = IB_MGMT_BASE_VERSION;
            }
            let Incoming::Response(rsp) = classify(&b) else {
                panic!("{len}: not a response")
            };
            assert_eq!(rsp.len, len);
            assert_eq!(rsp.hdr.mad_hdr.tid, 9);
            let got = VeswPortInfo::decode(&rsp.data).unwrap();
            let mut want = [0u8; VeswPortInfo::SIZE];
            let n = len.saturating_sub(DATA_OFFSET).min(VeswPortInfo::SIZE);
            want[..n].copy_from_slice(&info.to_bytes()[..n]);
            assert_eq!(got, VeswPortInfo::decode(&want).unwrap(), "{len}");
        }
        // An OUI that came must be Intel's; another base version is not ours.
        let mut b = buf[..IB_MGMT_VENDOR_HDR].to_vec();
        b[39] ^= 1;
        assert_eq!(classify(&b), Incoming::Other);
        let mut b = buf[..IB_MGMT_MAD_HDR].to_vec();
        b[0] = 2;
        assert_eq!(classify(&b), Incoming::Other);
    }

    #[test]
    fn trimmed_sizes() {
        let t = MadSize::Trimmed;
        let get = |attr, data: &[u8]| t.request_len(Method::Get, attr, data);
        let set = |attr, data: &[u8]| t.request_len(Method::Set, attr, data);
        assert_eq!(get(ATTR_CLASS_PORT_INFO, &[]), 120);
        assert_eq!(set(ATTR_CLASS_PORT_INFO, &[0; 80]), 120);
        assert_eq!(get(ATTR_VESWPORT_INFO, &[]), 320);
        assert_eq!(set(ATTR_VESWPORT_INFO, &[0; 280]), 320);
        assert_eq!(set(ATTR_DELETE_VESW, &[]), 320);
        assert_eq!(get(ATTR_VESWPORT_SUMMARY_COUNTERS, &[]), 400);
        assert_eq!(get(ATTR_VESWPORT_ERROR_COUNTERS, &[]), 344);
        // MAC entries: the entries of the request, or those a Get asks for
        // (even from a header cut short).
        let hdr = |n: u16| MacTableHdr {
            offset: 0,
            num_entries: n,
            mac_tbl_digest: 7,
        };
        assert_eq!(get(ATTR_VESWPORT_MAC_ENTRIES, &hdr(125).to_bytes()), 2048);
        assert_eq!(get(ATTR_VESWPORT_MAC_ENTRIES, &hdr(2).to_bytes()), 80);
        assert_eq!(get(ATTR_VESWPORT_MAC_ENTRIES, &[0, 0, 0, 10]), 208);
        let mut one = hdr(1).to_bytes().to_vec();
        one.extend_from_slice(&[0x02; 16]);
        assert_eq!(set(ATTR_VESWPORT_MAC_ENTRIES, &one), 64);
        assert_eq!(
            get(ATTR_VESWPORT_MAC_ENTRIES, &hdr(0xffff).to_bytes()),
            2048
        );
        // Interface MAC lists: a Get sends the header only.
        assert_eq!(get(ATTR_IFACE_UCAST_MACS, &[0; 8]), 48);
        assert_eq!(get(ATTR_IFACE_MCAST_MACS, &[]), 48);
        assert_eq!(set(ATTR_IFACE_MCAST_MACS, &[0, 0, 0, 2]), 60);
        // Anything else: what the request carries.
        assert_eq!(get(0x0099, &[]), 40);
        assert_eq!(get(0x0099, &[1, 2, 3]), 43);
        // Data is never cut short.
        assert_eq!(get(ATTR_CLASS_PORT_INFO, &[0; 100]), 140);
        for a in [ATTR_CLASS_PORT_INFO, ATTR_VESWPORT_MAC_ENTRIES, 0x0099] {
            assert_eq!(MadSize::Full.request_len(Method::Get, a, &[]), 2048);
        }
        assert_eq!(MadSize::default(), MadSize::Full);
        assert_eq!(MadSize::Trimmed.name(), "trimmed");
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
