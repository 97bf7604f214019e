// SPDX-License-Identifier: GPL-2.0

//! The request generator of the differential VEMA fuzzer (`vema-fuzz`).
//!
//! Request `index` of seed `seed` is a pure function of the two: [`generate`] builds it from a
//! PRNG seeded by both, so one request can be rebuilt without the ones before it
//! (`vema-fuzz show`), and a run of a seed sends the same MADs on every machine and with every
//! build. The PRNG is this module's own splitmix64 for that reason: no crate whose output could
//! change between versions decides what is sent.
//!
//! A request is a whole VEMA MAD as written to umad: any attribute (the eight VEMA ones and
//! unknown ids), method (mostly Get and Set), attribute modifier (mostly vports 0-3, so the
//! drivers' state stays small), size (the attribute's own, random, a full OPA MAD, or an IB
//! MAD of base version 1), and content (sensible values at and past their limits, random
//! bytes, all zeros, all ones). The RMPP header is always zero: RMPP-active MADs take another
//! path through the MAD layer and are not what is tested here.

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_DELETE_VESW, ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS,
    ATTR_NOTICE, ATTR_VESWPORT_ERROR_COUNTERS, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES,
    ATTR_VESWPORT_SUMMARY_COUNTERS, IB_MGMT_MAD_HDR, IB_MGMT_MAD_SIZE, IB_MGMT_VENDOR_HDR,
    INTEL_OUI, METHOD_GET, METHOD_REPORT, METHOD_SEND, METHOD_SET, METHOD_TRAP,
    METHOD_TRAP_REPRESS, OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION, OPA_MGMT_CLASS_INTEL_EMA,
    OPA_MGMT_MAD_SIZE,
};
use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_mac::{IfaceMacsHdr, MacTableEntry, MacTableHdr, MAC_TBL_ENTRIES_PER_MAD};

mod prng;
mod values;

pub use prng::SplitMix64;
use values::{attr_mod, valid_content};

/// The shortest request generated: a bare MAD header. umad refuses to send anything shorter
/// than the vendor header (40 bytes); those requests test that refusal, the same for both
/// drivers.
pub const MIN_LEN: usize = IB_MGMT_MAD_HDR;
/// The longest request: a whole OPA MAD.
pub const MAX_LEN: usize = OPA_MGMT_MAD_SIZE;
/// Bytes of VEMA data after the vendor header in a full OPA MAD.
const DATA_LEN: usize = OPA_MGMT_MAD_SIZE - IB_MGMT_VENDOR_HDR;

/// The attributes sent: every VEMA attribute, then ids no driver knows (the Notice attribute
/// of traps among them).
pub const ATTRS: [u16; 14] = [
    ATTR_CLASS_PORT_INFO,
    ATTR_VESWPORT_INFO,
    ATTR_VESWPORT_MAC_ENTRIES,
    ATTR_IFACE_UCAST_MACS,
    ATTR_IFACE_MCAST_MACS,
    ATTR_DELETE_VESW,
    ATTR_VESWPORT_SUMMARY_COUNTERS,
    ATTR_VESWPORT_ERROR_COUNTERS,
    0x0000,
    ATTR_NOTICE,
    0x0010,
    0x0016,
    0x0021,
    0xffff,
];
/// How often each of [`ATTRS`] is picked: the attributes that change state and read it back
/// most, unknown ids rarely.
const ATTR_WEIGHTS: [u32; 14] = [8, 22, 18, 8, 8, 5, 6, 6, 1, 1, 1, 1, 1, 1];

/// The methods other than Get and Set. The MAD layer delivers only the methods the agent
/// registered (Get and Set) and drops these, so they cost a timeout each: they are rare.
pub const OTHER_METHODS: [u8; 7] = [
    0x00,
    METHOD_SEND,
    0x04,
    METHOD_TRAP,
    METHOD_REPORT,
    METHOD_TRAP_REPRESS,
    0x7f,
];

/// How the length of a request was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SizeClass {
    /// The vendor header and exactly the attribute's bytes (what an EM trimming its MADs
    /// sends).
    Trimmed,
    /// Any length from [`MIN_LEN`] to [`MAX_LEN`], often around or below the attribute's
    /// size.
    Random,
    /// A whole 2048-byte OPA MAD.
    Full,
    /// A 256-byte MAD of base version 1 (an IB MAD) instead of 0x80.
    Ib,
}

impl SizeClass {
    /// Every size class.
    pub const ALL: [SizeClass; 4] = [Self::Trimmed, Self::Random, Self::Full, Self::Ib];

    /// The name used in transcripts, reports and allow rules.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Trimmed => "trimmed",
            Self::Random => "random",
            Self::Full => "full",
            Self::Ib => "ib",
        }
    }
}

/// What the data after the vendor header holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Content {
    /// The attribute's structure with sensible values, some at or past their limits.
    Valid,
    /// [`Content::Valid`] with a few bytes changed at random.
    Mutated,
    /// Random bytes.
    Random,
    /// All zeros.
    Zero,
    /// All 0xff.
    Ones,
}

impl Content {
    /// Every kind of content.
    pub const ALL: [Content; 5] = [
        Self::Valid,
        Self::Mutated,
        Self::Random,
        Self::Zero,
        Self::Ones,
    ];

    /// The name used in reports and allow rules.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::Mutated => "mutated",
            Self::Random => "random",
            Self::Zero => "zero",
            Self::Ones => "ones",
        }
    }
}

/// Get, Set, or another method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MethodClass {
    /// Get (0x01).
    Get,
    /// Set (0x02).
    Set,
    /// Any other method below 0x80.
    Other,
}

impl MethodClass {
    /// The class of `method`.
    pub const fn of(method: u8) -> Self {
        match method {
            METHOD_GET => Self::Get,
            METHOD_SET => Self::Set,
            _ => Self::Other,
        }
    }
}

/// One generated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The seed of the run.
    pub seed: u64,
    /// The request's place in the run.
    pub index: u64,
    /// Attribute id.
    pub attr_id: u16,
    /// Method.
    pub method: u8,
    /// Attribute modifier (the vport is bits 0-7).
    pub attr_mod: u32,
    /// Base version (0x80, or 0x01 for [`SizeClass::Ib`]).
    pub base_version: u8,
    /// Class version (0x80 mostly).
    pub class_version: u8,
    /// The OUI (Intel's mostly).
    pub oui: [u8; 3],
    /// How the length was chosen.
    pub size: SizeClass,
    /// What the data holds.
    pub content: Content,
    /// The MAD as written to umad (the upper half of its TID is ib_umad's to set).
    pub mad: Vec<u8>,
}

impl Request {
    /// The virtual port the attribute modifier names.
    pub const fn vport(&self) -> u8 {
        (self.attr_mod & 0xff) as u8
    }

    /// The bytes of data after the vendor header that the request's attribute and method
    /// read (0 when they read none).
    pub fn needed_data(&self) -> usize {
        let get = self.method == METHOD_GET;
        match (self.attr_id, MethodClass::of(self.method)) {
            (ATTR_CLASS_PORT_INFO, MethodClass::Set) => ClassPortInfo::SIZE,
            (ATTR_VESWPORT_INFO, MethodClass::Set) => VeswPortInfo::SIZE,
            (ATTR_VESWPORT_MAC_ENTRIES, MethodClass::Set) => {
                let n = self.data_u16(2).map_or(0, usize::from);
                MacTableHdr::SIZE
                    + n.min(usize::from(MAC_TBL_ENTRIES_PER_MAD)) * MacTableEntry::SIZE
            }
            (ATTR_VESWPORT_MAC_ENTRIES | ATTR_IFACE_UCAST_MACS | ATTR_IFACE_MCAST_MACS, _)
                if get =>
            {
                MacTableHdr::SIZE
            }
            _ => 0,
        }
    }

    /// Whether the class version or the OUI is one the VEMA agents did not register: the MAD
    /// layer answers such a Get or Set itself (status 0x000c) and drops other methods.
    pub fn is_foreign(&self) -> bool {
        self.class_version != OPA_EMA_CLASS_VERSION || self.oui != INTEL_OUI
    }

    /// Whether the MAD ends before the bytes its attribute reads.
    pub fn is_short(&self) -> bool {
        self.mad.len() < IB_MGMT_VENDOR_HDR + self.needed_data()
    }

    /// A big-endian u16 at `off` in the data after the vendor header, if the MAD holds it.
    fn data_u16(&self, off: usize) -> Option<u16> {
        let at = IB_MGMT_VENDOR_HDR + off;
        let b = self.mad.get(at..at + 2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }

    /// One line describing the request.
    pub fn describe(&self) -> String {
        format!(
            "attr {:#06x} ({}) method {:#04x} mod {:#010x} (vport {}) len {} ({}) base {:#04x} \
             class {:#04x} oui {:02x}{:02x}{:02x} content {}{}{}",
            self.attr_id,
            attr_name(self.attr_id),
            self.method,
            self.attr_mod,
            self.vport(),
            self.mad.len(),
            self.size.name(),
            self.base_version,
            self.class_version,
            self.oui[0],
            self.oui[1],
            self.oui[2],
            self.content.name(),
            if self.is_short() { ", short" } else { "" },
            if self.is_foreign() { ", foreign" } else { "" }
        )
    }
}

/// A short name for an attribute id.
pub const fn attr_name(attr_id: u16) -> &'static str {
    match attr_id {
        ATTR_CLASS_PORT_INFO => "ClassPortInfo",
        ATTR_VESWPORT_INFO => "VeswPortInfo",
        ATTR_VESWPORT_MAC_ENTRIES => "MacEntries",
        ATTR_IFACE_UCAST_MACS => "IfaceUcastMacs",
        ATTR_IFACE_MCAST_MACS => "IfaceMcastMacs",
        ATTR_DELETE_VESW => "DeleteVesw",
        ATTR_VESWPORT_SUMMARY_COUNTERS => "SummaryCounters",
        ATTR_VESWPORT_ERROR_COUNTERS => "ErrorCounters",
        ATTR_NOTICE => "Notice",
        _ => "unknown",
    }
}

/// The bytes of the attribute proper (what a trimmed request carries after the vendor
/// header).
fn attr_size(attr_id: u16, method: u8, data: &[u8]) -> usize {
    match attr_id {
        ATTR_CLASS_PORT_INFO => ClassPortInfo::SIZE,
        ATTR_VESWPORT_INFO => VeswPortInfo::SIZE,
        ATTR_VESWPORT_MAC_ENTRIES if method == METHOD_SET => {
            let n = usize::from(u16::from_be_bytes([data[2], data[3]]));
            MacTableHdr::SIZE + n.min(usize::from(MAC_TBL_ENTRIES_PER_MAD)) * MacTableEntry::SIZE
        }
        ATTR_VESWPORT_MAC_ENTRIES => MacTableHdr::SIZE,
        ATTR_IFACE_UCAST_MACS | ATTR_IFACE_MCAST_MACS => IfaceMacsHdr::SIZE,
        ATTR_DELETE_VESW => 0,
        ATTR_VESWPORT_SUMMARY_COUNTERS => SummaryCounters::SIZE,
        ATTR_VESWPORT_ERROR_COUNTERS => ErrorCounters::SIZE,
        _ => 0,
    }
}

/// Request `index` of the run of `seed`.
pub fn generate(seed: u64, index: u64) -> Request {
    // Each request has its own stream, from the seed and the index mixed apart.
    let mut r = SplitMix64::new(
        SplitMix64::new(seed).next_u64() ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03),
    );
    let attr_id = ATTRS[r.weighted(&ATTR_WEIGHTS)];
    let method = match r.below(100) {
        0..=46 => METHOD_GET,
        47..=96 => METHOD_SET,
        _ => r.pick(&OTHER_METHODS),
    };
    let attr_mod = attr_mod(&mut r);
    let size = SizeClass::ALL[r.weighted(&[30, 25, 35, 10])];
    let content = Content::ALL[r.weighted(&[62, 10, 14, 8, 6])];
    // A foreign class version or OUI: the MAD layer delivers neither to the agents, and
    // answers a Get or Set itself. Rare, since it tests the MAD layer more than the drivers.
    let class_version = match r.below(100) {
        0..=96 => OPA_EMA_CLASS_VERSION,
        97..=98 => 0x01,
        _ => r.u8(),
    };
    let oui = if r.chance(98) {
        INTEL_OUI
    } else {
        r.pick(&[[0, 0, 0], [0x00, 0x06, 0x6b], [0xff, 0xff, 0xff]])
    };
    let base_version = if size == SizeClass::Ib {
        0x01
    } else {
        OPA_MGMT_BASE_VERSION
    };

    let mut data = vec![0u8; DATA_LEN];
    match content {
        Content::Valid => valid_content(&mut r, attr_id, method, &mut data),
        Content::Mutated => {
            valid_content(&mut r, attr_id, method, &mut data);
            let span = attr_size(attr_id, method, &data).max(8);
            for _ in 0..r.range(1, 4) {
                let at = r.below(span as u64) as usize;
                data[at] ^= 1 << r.below(8);
            }
        }
        Content::Random => r.fill(&mut data),
        Content::Zero => {}
        Content::Ones => data.fill(0xff),
    }

    let attr_len = IB_MGMT_VENDOR_HDR + attr_size(attr_id, method, &data);
    let len = match size {
        SizeClass::Trimmed => attr_len.min(MAX_LEN),
        SizeClass::Full => MAX_LEN,
        SizeClass::Ib => IB_MGMT_MAD_SIZE,
        SizeClass::Random => match r.below(20) {
            // Below the vendor header: umad refuses them.
            0 => r.range(MIN_LEN as u64, IB_MGMT_VENDOR_HDR as u64 - 1) as usize,
            // Around the attribute's end, mostly short of it.
            1..=9 => {
                let lo = IB_MGMT_VENDOR_HDR as u64;
                let hi = (attr_len as u64 + 8).min(MAX_LEN as u64);
                r.range(lo, hi) as usize
            }
            _ => r.range(MIN_LEN as u64, MAX_LEN as u64) as usize,
        },
    };

    let mut mad = vec![0u8; IB_MGMT_VENDOR_HDR];
    mad[0] = base_version;
    mad[1] = OPA_MGMT_CLASS_INTEL_EMA;
    mad[2] = class_version;
    mad[3] = method;
    // Status and class-specific bits of a request mean nothing; the answer must not echo
    // them.
    if r.chance(5) {
        r.fill(&mut mad[4..8]);
    }
    // The TID's lower half is the index, so the answer names its request; ib_umad sets the
    // upper half.
    mad[12..16].copy_from_slice(&(index as u32).to_be_bytes());
    mad[16..18].copy_from_slice(&attr_id.to_be_bytes());
    if r.chance(3) {
        r.fill(&mut mad[18..20]);
    }
    mad[20..24].copy_from_slice(&attr_mod.to_be_bytes());
    // 24..36: the RMPP header, zero. 36: reserved.
    if r.chance(3) {
        mad[36] = r.u8();
    }
    mad[37..40].copy_from_slice(&oui);
    mad.extend_from_slice(&data);
    mad.truncate(len);

    Request {
        seed,
        index,
        attr_id,
        method,
        attr_mod,
        base_version,
        class_version,
        oui,
        size,
        content,
        mad,
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests;
