// SPDX-License-Identifier: GPL-2.0

//! The VEMA requests the EM sends: how big they are and how they are built.

use opa_wire::mad::{
    MadHdr, RmppHdr, VemaMad, VemaMadHdr, ATTR_CLASS_PORT_INFO, ATTR_DELETE_VESW,
    ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS, ATTR_VESWPORT_ERROR_COUNTERS, ATTR_VESWPORT_INFO,
    ATTR_VESWPORT_MAC_ENTRIES, ATTR_VESWPORT_SUMMARY_COUNTERS, IB_MGMT_VENDOR_HDR, INTEL_OUI,
    OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION, OPA_MGMT_CLASS_INTEL_EMA, OPA_MGMT_MAD_SIZE,
    OPA_VNIC_EMA_DATA,
};
use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_mac::{IfaceMacEntry, IfaceMacsHdr, MacTableEntry, MacTableHdr};
use opa_wire::WireError;

use super::{MadBuf, Method};

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
