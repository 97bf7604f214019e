// SPDX-License-Identifier: GPL-2.0

//! Building the VEMA requests the EM sends and checking the responses it
//! gets, on top of the formats of `opa_wire`.

use core::fmt;

use opa_wire::mad::{
    MadHdr, RmppHdr, VemaMad, VemaMadHdr, ATTR_CLASS_PORT_INFO, ATTR_DELETE_VESW,
    ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS, ATTR_NOTICE, ATTR_VESWPORT_ERROR_COUNTERS,
    ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES, ATTR_VESWPORT_SUMMARY_COUNTERS, IB_MGMT_MAD_HDR,
    IB_MGMT_VENDOR_HDR, INTEL_OUI, MAD_STATUS_BAD_VERSION, MAD_STATUS_BUSY,
    MAD_STATUS_INVALID_ATTRIB_VALUE, MAD_STATUS_REDIRECT_REQD, MAD_STATUS_UNSUPPORTED_METHOD,
    MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB, METHOD_GET, METHOD_GET_RESP, METHOD_SET, METHOD_TRAP,
    OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION, OPA_MGMT_CLASS_INTEL_EMA, OPA_MGMT_MAD_SIZE,
    OPA_VNIC_EMA_DATA,
};
use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_mac::{IfaceMacEntry, IfaceMacsHdr, MacTableEntry, MacTableHdr};
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

/// How big the request MADs the EM sends are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MadSize {
    /// Every request is a whole OPA MAD of [`OPA_MGMT_MAD_SIZE`] bytes,
    /// its data zero-padded.
    #[default]
    Full,
    /// Every request is the vendor MAD header and the size of the
    /// attribute it carries ([`attr_size`]), as opa-fm sends them: the
    /// agent must read the rest as zeros.
    Trimmed,
}

impl MadSize {
    /// `"full"` or `"trimmed"`, as the command line spells it.
    pub const fn name(self) -> &'static str {
        match self {
            MadSize::Full => "full",
            MadSize::Trimmed => "trimmed",
        }
    }

    /// The bytes of a request MAD, header included, that carries `data`
    /// for `method` on `attr_id`. Never cuts `data` short.
    pub fn request_len(self, method: Method, attr_id: u16, data: &[u8]) -> usize {
        match self {
            MadSize::Full => OPA_MGMT_MAD_SIZE,
            MadSize::Trimmed => attr_size(method, attr_id, data)
                .max(data.len())
                .saturating_add(IB_MGMT_VENDOR_HDR)
                .min(OPA_MGMT_MAD_SIZE),
        }
    }
}

/// The header of a list attribute at the start of `data`, read as if the
/// request data were zero-filled (a raw request may give less than the
/// header).
fn list_hdr<const N: usize>(data: &[u8]) -> [u8; N] {
    let mut h = [0u8; N];
    for (d, s) in h.iter_mut().zip(data) {
        *d = *s;
    }
    h
}

/// The size of the attribute a request carries, as opa-fm sends it: the
/// attribute's size for fixed-size attributes (for a Get too, whose data
/// the agent does not read), the header and the entries of the request
/// for the MAC table (a Get: the entries it asks for), the header alone
/// for a Get of an interface MAC list, and just `data` for anything else.
/// At most [`OPA_VNIC_EMA_DATA`].
pub fn attr_size(method: Method, attr_id: u16, data: &[u8]) -> usize {
    let n = match attr_id {
        ATTR_CLASS_PORT_INFO => ClassPortInfo::SIZE,
        // Delete vesw answers the VESW port info of the port.
        ATTR_VESWPORT_INFO | ATTR_DELETE_VESW => VeswPortInfo::SIZE,
        ATTR_VESWPORT_SUMMARY_COUNTERS => SummaryCounters::SIZE,
        ATTR_VESWPORT_ERROR_COUNTERS => ErrorCounters::SIZE,
        ATTR_VESWPORT_MAC_ENTRIES => {
            let count = MacTableHdr::decode(&list_hdr::<{ MacTableHdr::SIZE }>(data))
                .map_or(0, |h| usize::from(h.num_entries));
            MacTableHdr::SIZE.saturating_add(count.saturating_mul(MacTableEntry::SIZE))
        }
        ATTR_IFACE_UCAST_MACS | ATTR_IFACE_MCAST_MACS => match method {
            Method::Get => IfaceMacsHdr::SIZE,
            // No agent takes a Set of these; a raw one carries its entries.
            Method::Set => {
                let count = IfaceMacsHdr::decode(&list_hdr::<{ IfaceMacsHdr::SIZE }>(data))
                    .map_or(0, |h| usize::from(h.num_macs_in_msg));
                IfaceMacsHdr::SIZE.saturating_add(count.saturating_mul(IfaceMacEntry::SIZE))
            }
        },
        _ => data.len(),
    };
    n.min(OPA_VNIC_EMA_DATA)
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

/// Base version of an IB MAD (`IB_MGMT_BASE_VERSION`): an agent may
/// answer with a 256-byte IB MAD.
pub const IB_MGMT_BASE_VERSION: u8 = 1;

/// A VEMA GetResp as the EM reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The vendor header (zero where the answer was shorter).
    pub hdr: VemaMadHdr,
    /// The data, read as if the answer were zero-filled to a whole OPA
    /// MAD: always [`OPA_VNIC_EMA_DATA`] bytes, so that any attribute
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
