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
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo, MAC_TBL_MAX_ENTRIES};
use opa_wire::vema_mac::{
    IfaceMacsHdr, MacTableEntry, MacTableHdr, IFACE_MACS_PER_MAD, MAC_TBL_ENTRIES_PER_MAD,
};

/// The shortest request generated: a bare MAD header. umad refuses to send anything shorter
/// than the vendor header (40 bytes); those requests test that refusal, the same for both
/// drivers.
pub const MIN_LEN: usize = IB_MGMT_MAD_HDR;
/// The longest request: a whole OPA MAD.
pub const MAX_LEN: usize = OPA_MGMT_MAD_SIZE;
/// Bytes of VEMA data after the vendor header in a full OPA MAD.
const DATA_LEN: usize = OPA_MGMT_MAD_SIZE - IB_MGMT_VENDOR_HDR;

/// splitmix64 (Steele, Lea, Flood 2014): small, fast, and fixed here, so that a seed means
/// the same requests for good.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `state`.
    pub const fn new(state: u64) -> Self {
        Self(state)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0). The modulo bias is irrelevant at these ranges.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// One of `items`, uniformly.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// An index into `weights`, each chosen in proportion to its weight.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut r = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if r < u64::from(w) {
                return i;
            }
            r -= u64::from(w);
        }
        weights.len() - 1
    }

    /// Random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// A random 16-bit value.
    pub fn u16(&mut self) -> u16 {
        self.next_u64() as u16
    }

    /// A random 32-bit value.
    pub fn u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    /// A random byte.
    pub fn u8(&mut self) -> u8 {
        self.next_u64() as u8
    }
}

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

/// LIDs: unset, the two opasim ports, the top of the 16-bit unicast range, multicast, the
/// top of the 24-bit range and past it.
fn lid(r: &mut SplitMix64) -> u32 {
    if r.chance(15) {
        return r.u32();
    }
    r.pick(&[
        0,
        1,
        2,
        3,
        0xbfff,
        0xc000,
        0xffff,
        0x1_0000,
        0xf0_0001,
        0xff_ffff,
        0x100_0000,
        0xffff_ffff,
    ])
}

/// P_Keys: full and limited management, the fabric's usual ones, zero, random.
fn pkey(r: &mut SplitMix64) -> u16 {
    if r.chance(20) {
        return r.u16();
    }
    r.pick(&[0xffff, 0x7fff, 0x8001, 0x0001, 0x8002, 0x0000, 0x8000])
}

/// MACs from a small pool (so that Sets overwrite each other), with multicast, zero and
/// broadcast ones.
fn mac(r: &mut SplitMix64) -> [u8; 6] {
    match r.below(10) {
        0 => [0; 6],
        1 => [0xff; 6],
        2 => [0x01, 0x00, 0x5e, 0x00, 0x00, r.u8()],
        3 => {
            let mut m = [0u8; 6];
            r.fill(&mut m);
            m
        }
        _ => [0x02, 0x00, 0x00, 0x00, r.below(4) as u8, r.below(8) as u8],
    }
}

/// Service classes and virtual lanes: mostly valid (0-31), sometimes past 31.
fn sc(r: &mut SplitMix64) -> u8 {
    if r.chance(85) {
        r.below(32) as u8
    } else {
        r.u8()
    }
}

/// Ethernet MTUs: none, tiny, the usual ones and their neighbours, the largest 16B frame and
/// past it.
fn mtu(r: &mut SplitMix64) -> u16 {
    if r.chance(15) {
        return r.u16();
    }
    r.pick(&[
        0, 1, 68, 1499, 1500, 1501, 4096, 9000, 9001, 10240, 16333, 16334, 65535,
    ])
}

/// Mostly zero (what an EM sends in reserved fields), sometimes random.
fn reserved(r: &mut SplitMix64, buf: &mut [u8]) {
    if r.chance(10) {
        r.fill(buf);
    }
}

fn class_port_info(r: &mut SplitMix64) -> ClassPortInfo {
    let mut c = ClassPortInfo::ZERO;
    c.base_version = {
        let x = r.u8();
        r.pick(&[0, OPA_MGMT_BASE_VERSION, 1, x])
    };
    c.class_version = {
        let x = r.u8();
        r.pick(&[0, OPA_EMA_CLASS_VERSION, 1, x])
    };
    c.cap_mask = r.u16();
    c.cap_mask2_resp_time = r.u32();
    if r.chance(30) {
        r.fill(&mut c.redirect_gid);
        c.redirect_tc_fl = r.u32();
        c.redirect_lid = lid(r);
        c.redirect_sl_qp = r.u32();
        c.redirect_qkey = r.u32();
    }
    if r.chance(30) {
        r.fill(&mut c.trap_gid);
    }
    c.trap_tc_fl = if r.chance(80) { 0 } else { r.u32() };
    c.trap_lid = lid(r);
    c.trap_hl_qp = if r.chance(70) { 1 } else { r.u32() };
    c.trap_qkey = if r.chance(70) { 0x8001_0000 } else { r.u32() };
    c.trap_pkey = pkey(r);
    c.redirect_pkey = pkey(r);
    c.trap_sl_rsvd = r.u8();
    reserved(r, &mut c.reserved);
    c
}

fn veswport_info(r: &mut SplitMix64) -> VeswPortInfo {
    let mut p = VeswPortInfo::ZERO;
    let v = &mut p.vesw;
    v.fabric_id = if r.chance(70) {
        r.below(4) as u16
    } else {
        r.u16()
    };
    v.vesw_id = if r.chance(70) {
        r.below(4) as u16
    } else {
        let x = r.u16();
        r.pick(&[0x0fff, 0x1000, 0xffff, x])
    };
    reserved(r, &mut v.rsvd0);
    v.def_port_mask = if r.chance(50) {
        r.below(4) as u16
    } else {
        r.u16()
    };
    reserved(r, &mut v.rsvd1);
    v.pkey = pkey(r);
    reserved(r, &mut v.rsvd2);
    v.u_mcast_dlid = lid(r);
    for d in v.u_ucast_dlid.iter_mut() {
        *d = lid(r);
    }
    v.rc = r.u32();
    reserved(r, &mut v.rsvd3);
    v.eth_mtu = mtu(r);
    reserved(r, &mut v.rsvd4);

    let o = &mut p.vport;
    o.port_num = if r.chance(70) {
        r.below(4) as u32
    } else {
        r.u32()
    };
    o.eth_link_status = r.below(4) as u8;
    reserved(r, &mut o.rsvd0);
    o.base_mac_addr = mac(r);
    o.config_state = if r.chance(85) {
        r.pick(&[1, 3, 3])
    } else {
        let x = r.u8();
        r.pick(&[0, 2, 4, x])
    };
    o.oper_state = r.below(4) as u8;
    o.max_mac_tbl_ent = r.u16();
    o.max_smac_ent = r.u16();
    o.mac_tbl_digest = r.u32();
    reserved(r, &mut o.rsvd1);
    o.encap_slid = lid(r);
    for t in [
        &mut o.pcp_to_sc_uc,
        &mut o.pcp_to_vl_uc,
        &mut o.pcp_to_sc_mc,
        &mut o.pcp_to_vl_mc,
    ] {
        for x in t.iter_mut() {
            *x = sc(r);
        }
    }
    o.non_vlan_sc_uc = sc(r);
    o.non_vlan_vl_uc = sc(r);
    o.non_vlan_sc_mc = sc(r);
    o.non_vlan_vl_mc = sc(r);
    reserved(r, &mut o.rsvd2);
    o.uc_macs_gen_count = r.u16();
    o.mc_macs_gen_count = r.u16();
    reserved(r, &mut o.rsvd3);
    p
}

/// A count of MAC table entries: none, one, a few, the most one MAD carries and one more,
/// absurd.
fn mac_tbl_count(r: &mut SplitMix64) -> u16 {
    let max = MAC_TBL_ENTRIES_PER_MAD;
    match r.below(10) {
        0 => 0,
        1 => max,
        2 => max + 1,
        3 => r.pick(&[0xffff, 0x8000, 2 * max]),
        4 => r.range(1, u64::from(max)) as u16,
        _ => r.range(1, 8) as u16,
    }
}

/// The offset of `num` MAC table entries: the start, the end (exactly reaching the table's
/// end, and one past), inside, or far out.
fn mac_tbl_offset(r: &mut SplitMix64, num: u16) -> u16 {
    let max = MAC_TBL_MAX_ENTRIES;
    match r.below(10) {
        0 => max.wrapping_sub(num),
        1 => max.wrapping_sub(num).wrapping_add(1),
        2 => r.pick(&[max - 1, max, 0xffff, 0x8000]),
        3 => r.below(u64::from(max)) as u16,
        _ => r.below(16) as u16,
    }
}

fn mac_entries(r: &mut SplitMix64, data: &mut [u8]) {
    let num = mac_tbl_count(r);
    let hdr = MacTableHdr {
        offset: mac_tbl_offset(r, num),
        num_entries: num,
        mac_tbl_digest: r.u32(),
    };
    // Cannot fail: the data is longer than the header.
    let _ = hdr.encode(data);
    let entries = &mut data[MacTableHdr::SIZE..];
    for e in entries.chunks_exact_mut(MacTableEntry::SIZE) {
        let mut mask = [0xffu8; 6];
        if r.chance(10) {
            r.fill(&mut mask);
        }
        let dlid_sd = (lid(r) << 8) | if r.chance(10) { u32::from(r.u8()) } else { 0 };
        let entry = MacTableEntry {
            mac_addr: mac(r),
            mac_addr_mask: mask,
            dlid_sd,
        };
        let _ = entry.encode(e);
    }
}

fn iface_macs(r: &mut SplitMix64, data: &mut [u8]) {
    let max = IFACE_MACS_PER_MAD;
    let hdr = IfaceMacsHdr {
        start_idx: match r.below(8) {
            0 => r.pick(&[max - 1, max, max + 1, 0xffff]),
            1 => r.u16(),
            2..=4 => 0,
            _ => r.below(4) as u16,
        },
        num_macs_in_msg: match r.below(8) {
            0 => r.pick(&[max, max + 1, 0xffff]),
            1 => r.u16(),
            2..=4 => 0,
            _ => r.range(1, 4) as u16,
        },
        tot_macs_in_lst: if r.chance(70) { 0 } else { r.u16() },
        gen_count: if r.chance(70) { 0 } else { r.u16() },
    };
    let _ = hdr.encode(data);
    if r.chance(20) {
        r.fill(&mut data[IfaceMacsHdr::SIZE..]);
    }
}

/// Writes the attribute's structure with sensible values into `data` (the whole data part
/// of a full MAD).
fn valid_content(r: &mut SplitMix64, attr_id: u16, method: u8, data: &mut [u8]) {
    match attr_id {
        ATTR_CLASS_PORT_INFO => {
            let _ = class_port_info(r).encode(data);
        }
        ATTR_VESWPORT_INFO => {
            let _ = veswport_info(r).encode(data);
        }
        ATTR_VESWPORT_MAC_ENTRIES => mac_entries(r, data),
        ATTR_IFACE_UCAST_MACS | ATTR_IFACE_MCAST_MACS => iface_macs(r, data),
        // A Get of the counters carries nothing; a Set of them is refused whatever it
        // carries. Random counters stand for what an EM might echo back.
        ATTR_VESWPORT_SUMMARY_COUNTERS | ATTR_VESWPORT_ERROR_COUNTERS if method != METHOD_GET => {
            r.fill(&mut data[..SummaryCounters::SIZE]);
        }
        _ => {}
    }
}

/// The attribute modifier: vports 0-3 mostly, so the drivers' state stays small; any vport
/// sometimes; bits 8-31 set sometimes (the drivers take bits 0-7 only).
fn attr_mod(r: &mut SplitMix64) -> u32 {
    match r.below(100) {
        0..=83 => r.below(4) as u32,
        84..=89 => r.range(4, 255) as u32,
        90..=95 => (r.u32() & 0xffff_ff00) | r.below(4) as u32,
        _ => {
            let x = r.u32();
            r.pick(&[0xffff_ffff, 0x0000_00ff, 0x8000_0000, x])
        }
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
mod tests {
    use super::*;
    use std::collections::HashSet;

    const PINNED: u64 = 0xf2e9_4d8e_0b20_f287;

    #[test]
    fn splitmix64_reference() {
        // The first outputs of splitmix64 from state 0, as in the reference code: a change of
        // the PRNG would silently change every seed's requests.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn same_seed_same_requests() {
        for i in 0..500 {
            assert_eq!(generate(7, i), generate(7, i));
        }
        let a: Vec<_> = (0..200).map(|i| generate(1, i).mad).collect();
        let b: Vec<_> = (0..200).map(|i| generate(2, i).mad).collect();
        assert_ne!(a, b, "another seed, other requests");
    }

    /// FNV-1a over the MADs of requests `0..n` of `seed`.
    fn digest(seed: u64, n: u64) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for i in 0..n {
            for b in generate(seed, i).mad {
                h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    }

    #[test]
    fn pinned_requests() {
        // The requests of a seed are pinned: should the generator drift, the seeds of old
        // runs and their reproducers would no longer name the same MADs. A deliberate change
        // of the generator updates these.
        assert_eq!(
            hex(&generate(1, 11).mad),
            "8034800100000000000000000000000b00150000000000000000000000000000000000000000066a"
        );
        assert_eq!(digest(1, 1000), PINNED);
    }

    #[test]
    fn first_2000_cover_everything() {
        let reqs: Vec<Request> = (0..2000).map(|i| generate(1, i)).collect();
        let attrs: HashSet<u16> = reqs.iter().map(|r| r.attr_id).collect();
        for a in ATTRS {
            assert!(attrs.contains(&a), "attribute {a:#06x} missing");
        }
        let methods: HashSet<MethodClass> =
            reqs.iter().map(|r| MethodClass::of(r.method)).collect();
        assert_eq!(methods.len(), 3, "{methods:?}");
        for m in [METHOD_SEND, METHOD_TRAP_REPRESS] {
            assert!(
                reqs.iter().any(|r| r.method == m),
                "method {m:#04x} missing"
            );
        }
        let sizes: HashSet<SizeClass> = reqs.iter().map(|r| r.size).collect();
        assert_eq!(sizes.len(), SizeClass::ALL.len(), "{sizes:?}");
        let contents: HashSet<Content> = reqs.iter().map(|r| r.content).collect();
        assert_eq!(contents.len(), Content::ALL.len(), "{contents:?}");
        for r in &reqs {
            assert!(
                (MIN_LEN..=MAX_LEN).contains(&r.mad.len()),
                "{}",
                r.describe()
            );
            assert_eq!(r.mad[1], OPA_MGMT_CLASS_INTEL_EMA);
            if r.mad.len() >= 36 {
                assert_eq!(&r.mad[24..36], &[0; 12], "RMPP header must stay zero");
            }
            assert!(r.method < 0x80);
            match r.size {
                SizeClass::Ib => {
                    assert_eq!(r.mad.len(), IB_MGMT_MAD_SIZE);
                    assert_eq!(r.base_version, 1);
                }
                SizeClass::Full => assert_eq!(r.mad.len(), MAX_LEN),
                _ => assert_eq!(r.base_version, OPA_MGMT_BASE_VERSION),
            }
            assert_eq!(r.mad[0], r.base_version);
            assert_eq!(
                u32::from_be_bytes(r.mad[12..16].try_into().unwrap()),
                r.index as u32
            );
        }
        // Lengths below the vendor header, short of the attribute, and past it.
        assert!(reqs.iter().any(|r| r.mad.len() < IB_MGMT_VENDOR_HDR));
        assert!(reqs.iter().any(|r| r.method == METHOD_SET && r.is_short()));
        assert!(reqs
            .iter()
            .any(|r| r.size == SizeClass::Trimmed && r.attr_id == ATTR_VESWPORT_INFO));
        // Vports mostly 0-3, some beyond, some with high modifier bits.
        let low = reqs.iter().filter(|r| r.attr_mod < 4).count();
        assert!(low > 1500, "{low}");
        assert!(reqs.iter().any(|r| r.vport() >= 4));
        assert!(reqs.iter().any(|r| r.attr_mod > 0xff && r.vport() < 4));
        assert!(reqs
            .iter()
            .any(|r| r.class_version != OPA_EMA_CLASS_VERSION));
        assert!(reqs.iter().any(|r| r.oui != INTEL_OUI));
    }

    #[test]
    fn boundaries_of_the_content() {
        let reqs: Vec<Request> = (0..4000).map(|i| generate(3, i)).collect();
        let valid = |a: u16| {
            reqs.iter()
                .filter(move |r| r.attr_id == a && r.content == Content::Valid)
                .filter(|r| r.mad.len() >= IB_MGMT_VENDOR_HDR + 8)
        };
        // MAC tables exactly reaching the end of the table, and one entry past it.
        let ends: HashSet<u32> = valid(ATTR_VESWPORT_MAC_ENTRIES)
            .map(|r| {
                let d = &r.mad[IB_MGMT_VENDOR_HDR..];
                u32::from(u16::from_be_bytes([d[0], d[1]]))
                    + u32::from(u16::from_be_bytes([d[2], d[3]]))
            })
            .collect();
        assert!(ends.contains(&2048) && ends.contains(&2049), "{ends:?}");
        // Iface MAC lists asking for more than one MAD carries.
        assert!(valid(ATTR_IFACE_UCAST_MACS)
            .chain(valid(ATTR_IFACE_MCAST_MACS))
            .any(|r| u16::from_be_bytes([r.mad[42], r.mad[43]]) > IFACE_MACS_PER_MAD));
        // VESW port infos with MTUs 0 and above 9000, LIDs past 24 bits, SCs past 31.
        let vpis: Vec<VeswPortInfo> = valid(ATTR_VESWPORT_INFO)
            .filter(|r| r.mad.len() >= IB_MGMT_VENDOR_HDR + VeswPortInfo::SIZE)
            .map(|r| VeswPortInfo::decode(&r.mad[IB_MGMT_VENDOR_HDR..]).unwrap())
            .collect();
        assert!(vpis.iter().any(|p| p.vesw.eth_mtu == 0));
        assert!(vpis.iter().any(|p| p.vesw.eth_mtu > 9000));
        assert!(vpis.iter().any(|p| p.vport.encap_slid > 0xff_ffff));
        assert!(vpis.iter().any(|p| p.vport.non_vlan_sc_uc > 31));
        assert!(vpis.iter().any(|p| p.vport.config_state == 3));
        // Class port infos with trap LIDs.
        assert!(valid(ATTR_CLASS_PORT_INFO)
            .filter(|r| r.mad.len() >= IB_MGMT_VENDOR_HDR + ClassPortInfo::SIZE)
            .any(|r| ClassPortInfo::decode(&r.mad[IB_MGMT_VENDOR_HDR..])
                .unwrap()
                .trap_lid
                == 1));
    }
}
