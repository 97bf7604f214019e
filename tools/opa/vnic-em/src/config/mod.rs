// SPDX-License-Identifier: GPL-2.0

//! The declarative fabric config (TOML): virtual Ethernet switches, the
//! virtual ports on node ports, and MAC tables.
//!
//! The whole file is checked before anything is sent. Every error names
//! its line and column: TOML syntax errors and unknown fields come from
//! the TOML parser, semantic errors (ranges, duplicates, dangling
//! references, bad MACs) from the spans kept for every value.

use std::collections::BTreeMap;

use opa_wire::encap::RcClass;
use opa_wire::vema_info::{MAC_TBL_MAX_ENTRIES, MAX_NUM_PCP};
use toml::Spanned;

use crate::mac::Mac;
use crate::sa::NodeRef;

mod check;
mod diag;
mod read;

pub use diag::{line_col, ConfigErrors, Diag};

/// Smallest Ethernet MTU a netdev takes (`ETH_MIN_MTU`): the C driver
/// raises a smaller `eth_mtu` to it.
pub const ETH_MIN_MTU: u16 = 68;
/// Largest vesw id (12 bits).
pub const VESW_ID_MAX: u16 = 0x0fff;
/// Largest fabric id (10 bits).
pub const FABRIC_ID_MAX: u16 = 0x03ff;
/// Largest unicast LID a MAD can be addressed to (16-bit LIDs below the
/// multicast range).
pub const UNICAST_LID_MAX: u16 = 0xbfff;
/// Largest 24-bit OPA LID (DLIDs of the vesw and MAC table).
pub const LID24_MAX: u32 = 0x00ff_ffff;
/// Largest SC and VL (5 bits).
pub const SC_VL_MAX: u8 = 31;
/// Largest routing control value (3 bits).
pub const RC_MAX: u8 = 7;
/// Number of SCs, the length of an SC-to-VL table.
pub const NUM_SC: usize = 32;
/// The management VL: the only VL of a port above its 8 data VLs.
pub const VL15: u8 = 15;
/// hfi1's SC-to-VL send table after reset (`init_sc2vl_tables()`): SC0-7
/// to VL0-7, SC15 to VL15, every other SC to VL0. The HFI drops a packet
/// whose VL is not its SC's in this table, unless the fabric manager has
/// programmed another (`[em] sc2vl`).
pub const DEFAULT_SC2VL: [u8; NUM_SC] = {
    let mut t = [0u8; NUM_SC];
    let mut sc = 0;
    while sc < 8 {
        t[sc] = sc as u8;
        sc += 1;
    }
    t[15] = VL15;
    t
};

/// Why `pkey` cannot be a vesw's P_Key, or `None` if it can: the one check
/// of the config file and of `set --pkey`; `written`: the key as the user
/// wrote it (decimal or hex), for the message. Every VNIC port of a vesw
/// must be a full member of its partition (bit 15) for the ports to reach
/// each other, and the management partition (0x7fff, 0xffff) is the SM's
/// and the EM's, not a tenant's.
pub fn pkey_problem(pkey: u16, written: &str) -> Option<String> {
    if pkey & 0x7fff == 0x7fff {
        Some(format!(
            "pkey {written} is the management partition's key: give the vesw a partition \
             of its own (e.g. 0x8001)"
        ))
    } else if pkey & 0x7fff == 0 {
        Some(format!(
            "pkey {written} has no key part (the low 15 bits are zero)"
        ))
    } else if pkey & 0x8000 == 0 {
        Some(format!(
            "pkey {written} lacks the full-member bit 0x8000: a vesw's pkey is a full \
             member's key (write {:#06x})",
            pkey | 0x8000
        ))
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// The file as written.

type SInt = Spanned<i64>;

struct RawConfig {
    em: Option<RawEm>,
    vesw: Vec<Spanned<RawVesw>>,
    vport: Vec<Spanned<RawVport>>,
}

struct RawEm {
    fabric_id: Option<SInt>,
    trap_lid: Option<SInt>,
    trap_sl: Option<SInt>,
    sc2vl: Option<Spanned<toml::Value>>,
}

struct RawVesw {
    id: Option<SInt>,
    name: Option<Spanned<String>>,
    fabric_id: Option<SInt>,
    pkey: Option<SInt>,
    eth_mtu: Option<SInt>,
    unknown_ucast_dlids: Option<Spanned<Vec<SInt>>>,
    unknown_ucast_nodes: Option<Spanned<Vec<Spanned<String>>>>,
    default_ports: Option<Spanned<Vec<SInt>>>,
    unknown_mcast_dlid: Option<SInt>,
    unknown_mcast_mgid: Option<Spanned<String>>,
    routing_control: Option<RawRc>,
    mac_table_from_vports: Option<bool>,
    mac_table: Vec<Spanned<RawMacEntry>>,
}

struct RawRc {
    default: Option<SInt>,
    ipv4: Option<SInt>,
    ipv4_udp: Option<SInt>,
    ipv4_tcp: Option<SInt>,
    ipv6: Option<SInt>,
    ipv6_tcp: Option<SInt>,
    ipv6_udp: Option<SInt>,
}

struct RawMacEntry {
    index: Option<SInt>,
    mac: Option<Spanned<String>>,
    mask: Option<Spanned<String>>,
    dlid: Option<SInt>,
    node: Option<Spanned<String>>,
    source: Option<bool>,
}

struct RawVport {
    lid: Option<SInt>,
    node: Option<Spanned<String>>,
    vport: Option<SInt>,
    vesw: Option<SInt>,
    port_num: Option<SInt>,
    mac: Option<Spanned<String>>,
    enabled: Option<bool>,
    encap_slid: Option<SInt>,
    pcp_sc_uc: Option<Spanned<Vec<SInt>>>,
    pcp_vl_uc: Option<Spanned<Vec<SInt>>>,
    pcp_sc_mc: Option<Spanned<Vec<SInt>>>,
    pcp_vl_mc: Option<Spanned<Vec<SInt>>>,
    non_vlan_sc_uc: Option<SInt>,
    non_vlan_vl_uc: Option<SInt>,
    non_vlan_sc_mc: Option<SInt>,
    non_vlan_vl_mc: Option<SInt>,
}

// ---------------------------------------------------------------------------
// The checked config.

/// EM-wide settings (`[em]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EmSettings {
    /// Fabric id of every vesw that does not set its own.
    pub fabric_id: u16,
    /// Where agents send traps; `None`: the EM's own LID.
    pub trap_lid: Option<u16>,
    /// Service level of traps.
    pub trap_sl: u8,
    /// The fabric's SC-to-VL table as declared; `None`: hfi1's after
    /// reset ([`DEFAULT_SC2VL`]).
    pub sc2vl: Option<[u8; NUM_SC]>,
}

impl EmSettings {
    /// The SC-to-VL table the vports' SC/VL pairs are checked against.
    pub fn sc2vl_table(&self) -> [u8; NUM_SC] {
        self.sc2vl.unwrap_or(DEFAULT_SC2VL)
    }
}

/// Routing control: a 3-bit RC per traffic class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoutingControl {
    /// Anything but IPv4 and IPv6.
    pub default: u8,
    /// IPv4, neither TCP nor UDP.
    pub ipv4: u8,
    /// IPv4 UDP.
    pub ipv4_udp: u8,
    /// IPv4 TCP.
    pub ipv4_tcp: u8,
    /// IPv6, neither TCP nor UDP.
    pub ipv6: u8,
    /// IPv6 TCP.
    pub ipv6_tcp: u8,
    /// IPv6 UDP.
    pub ipv6_udp: u8,
}

impl RoutingControl {
    fn pairs(&self) -> [(RcClass, u8); 7] {
        [
            (RcClass::Default, self.default),
            (RcClass::Ipv4, self.ipv4),
            (RcClass::Ipv4Udp, self.ipv4_udp),
            (RcClass::Ipv4Tcp, self.ipv4_tcp),
            (RcClass::Ipv6, self.ipv6),
            (RcClass::Ipv6Tcp, self.ipv6_tcp),
            (RcClass::Ipv6Udp, self.ipv6_udp),
        ]
    }

    /// The vesw `rc` word.
    pub fn word(&self) -> u32 {
        self.pairs()
            .iter()
            .fold(0u32, |w, (c, v)| w | (u32::from(*v & RC_MAX) << c.shift()))
    }

    /// The classes of an `rc` word (bits outside the seven 3-bit fields
    /// are dropped).
    pub fn from_word(w: u32) -> Self {
        let f = |c: RcClass| ((w >> c.shift()) & u32::from(RC_MAX)) as u8;
        RoutingControl {
            default: f(RcClass::Default),
            ipv4: f(RcClass::Ipv4),
            ipv4_udp: f(RcClass::Ipv4Udp),
            ipv4_tcp: f(RcClass::Ipv4Tcp),
            ipv6: f(RcClass::Ipv6),
            ipv6_tcp: f(RcClass::Ipv6Tcp),
            ipv6_udp: f(RcClass::Ipv6Udp),
        }
    }
}

/// An explicit MAC table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacEntryCfg {
    /// Table slot; `None`: the next free one.
    pub index: Option<u16>,
    /// The address.
    pub mac: Mac,
    /// The address mask (stored by the driver, not used for lookups).
    pub mask: Mac,
    /// Where frames to `mac` go (24-bit LID); for a `node` entry, its LID once resolved.
    pub dlid: u32,
    /// The node port the entry points to, by name (an index into [`Config::names`]).
    pub node: Option<usize>,
    /// A source MAC entry (side data bit 5): never used as destination.
    pub source: bool,
}

/// A virtual Ethernet switch (`[[vesw]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vesw {
    /// Vesw id (12 bits).
    pub id: u16,
    /// A name for people.
    pub name: String,
    /// Fabric id (10 bits).
    pub fabric_id: u16,
    /// Partition key.
    pub pkey: u16,
    /// Ethernet MTU.
    pub eth_mtu: u16,
    /// DLIDs for unknown unicast destinations, by default port index.
    pub unknown_ucast_dlids: Vec<u32>,
    /// The node ports of `unknown_ucast_dlids` given by name (`unknown_ucast_nodes`), in
    /// the same order (indices into [`Config::names`]); empty when they are LIDs.
    pub unknown_ucast_nodes: Vec<usize>,
    /// The default ports in use (indices into `unknown_ucast_dlids`).
    pub default_ports: Vec<u8>,
    /// DLID for unknown multicast and broadcast (a 16B DLID: 24 bits); 0 until resolved when
    /// it comes from a multicast group ([`Vesw::unknown_mcast_mgid`]).
    pub unknown_mcast_dlid: u32,
    /// The multicast group whose MLID `unknown_mcast_dlid` is, asked of the SA at every use
    /// of the config (`unknown_mcast_mgid`, or the default group): `None` when the config
    /// gives `unknown_mcast_dlid`, which wins (a fabric without an SM).
    pub unknown_mcast_mgid: Option<[u8; 16]>,
    /// Routing control.
    pub rc: RoutingControl,
    /// Add an entry for the MAC of every vport of this vesw to the table.
    pub mac_table_from_vports: bool,
    /// Explicit MAC table entries.
    pub mac_table: Vec<MacEntryCfg>,
}

impl Vesw {
    /// `def_port_mask`: bit i for each default port i.
    pub fn def_port_mask(&self) -> u16 {
        self.default_ports.iter().fold(0u16, |m, &p| {
            m | 1u16.checked_shl(u32::from(p)).unwrap_or(0)
        })
    }
}

/// SC and VL settings of a vport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Qos {
    /// SC by PCP, unicast.
    pub pcp_sc_uc: [u8; MAX_NUM_PCP],
    /// VL by PCP, unicast.
    pub pcp_vl_uc: [u8; MAX_NUM_PCP],
    /// SC by PCP, multicast.
    pub pcp_sc_mc: [u8; MAX_NUM_PCP],
    /// VL by PCP, multicast.
    pub pcp_vl_mc: [u8; MAX_NUM_PCP],
    /// SC of untagged unicast.
    pub non_vlan_sc_uc: u8,
    /// VL of untagged unicast.
    pub non_vlan_vl_uc: u8,
    /// SC of untagged multicast.
    pub non_vlan_sc_mc: u8,
    /// VL of untagged multicast.
    pub non_vlan_vl_mc: u8,
}

/// A virtual port (`[[vport]]`): one VNIC netdev on a node port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vport {
    /// LID of the node port (where the MADs go); for a `node` vport, its LID once resolved
    /// (0 before).
    pub lid: u16,
    /// The node port by name (an index into [`Config::names`]).
    pub node: Option<usize>,
    /// Virtual port number on that node port (attribute modifier).
    pub vport: u8,
    /// Vesw id it belongs to.
    pub vesw: u16,
    /// Port number on the vesw.
    pub port_num: u32,
    /// Base MAC address.
    pub mac: Mac,
    /// Forwarding (true) or drop-all.
    pub enabled: bool,
    /// Source LID of encapsulated packets (default: `lid`).
    pub encap_slid: u32,
    /// `encap_slid` was given: it does not follow the node's LID.
    pub encap_slid_set: bool,
    /// SC and VL settings.
    pub qos: Qos,
}

/// A checked config.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// EM settings.
    pub em: EmSettings,
    /// Virtual Ethernet switches, in file order.
    pub vesws: Vec<Vesw>,
    /// Virtual ports, in file order.
    pub vports: Vec<Vport>,
    /// What the checks found suspect but not wrong, in file order: the
    /// commands print them and go on.
    pub warnings: Vec<Diag>,
    /// The node ports named by port GUID or node description (`node = "..."`), in file
    /// order: resolved to LIDs through the SA before the config is used
    /// ([`crate::names`]).
    pub names: Vec<NodeName>,
}

/// A node port named in the config, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeName {
    /// The name.
    pub name: NodeRef,
    /// Line of the name in the file (1-based).
    pub line: usize,
    /// Column (1-based).
    pub col: usize,
}

impl Config {
    /// The vesw with id `id`.
    pub fn vesw(&self, id: u16) -> Option<&Vesw> {
        self.vesws.iter().find(|v| v.id == id)
    }
}

/// Parses and checks a config; every error found, in file order.
pub fn parse(src: &str) -> Result<Config, Vec<Diag>> {
    let mut c = check::Checker {
        src,
        diags: Vec::new(),
        names: Vec::new(),
        warnings: Vec::new(),
        partial: false,
    };
    let raw = read::read(&mut c);
    let mut cfg = check::check(&mut c, raw);
    if cfg.vesws.is_empty() && cfg.vports.is_empty() && c.diags.is_empty() {
        // An empty file is a mistake (the wrong file, a file cut short), and
        // `apply` of it would change nothing while saying "ok".
        c.err(
            0..0,
            "no [[vesw]] and no [[vport]]: the file configures nothing",
        );
    }
    if c.diags.is_empty() {
        c.warnings.sort_by_key(|(off, _)| *off);
        cfg.warnings = c.warnings.into_iter().map(|(_, d)| d).collect();
        Ok(cfg)
    } else {
        c.diags.sort_by_key(|(off, _)| *off);
        Err(c.diags.into_iter().map(|(_, d)| d).collect())
    }
}

/// Reads, parses and checks the config file at `path`.
pub fn load(path: &str) -> Result<Config, ConfigErrors> {
    let src = std::fs::read_to_string(path).map_err(|e| ConfigErrors {
        path: path.to_string(),
        diags: vec![Diag {
            line: 0,
            col: 0,
            msg: format!("cannot read: {e}"),
        }],
    })?;
    parse(&src).map_err(|diags| ConfigErrors {
        path: path.to_string(),
        diags,
    })
}

/// The MAC table a vesw's vports get: explicit entries at their index,
/// the others in the first free slots in file order, then (if
/// `mac_table_from_vports`) one entry per vport of the vesw whose MAC is
/// not listed, pointing at its encap SLID.
pub fn vesw_mac_table(cfg: &Config, vesw: &Vesw) -> BTreeMap<u16, MacEntryCfg> {
    let mut out: BTreeMap<u16, MacEntryCfg> = BTreeMap::new();
    for e in vesw.mac_table.iter().filter(|e| e.index.is_some()) {
        if let Some(i) = e.index {
            out.insert(i, *e);
        }
    }
    let mut next: u16 = 0;
    let mut place = |out: &mut BTreeMap<u16, MacEntryCfg>, e: MacEntryCfg| {
        while next < MAC_TBL_MAX_ENTRIES && out.contains_key(&next) {
            next += 1;
        }
        if next < MAC_TBL_MAX_ENTRIES {
            out.insert(
                next,
                MacEntryCfg {
                    index: Some(next),
                    ..e
                },
            );
        }
    };
    for e in vesw.mac_table.iter().filter(|e| e.index.is_none()) {
        place(&mut out, *e);
    }
    if vesw.mac_table_from_vports {
        for p in cfg.vports.iter().filter(|p| p.vesw == vesw.id) {
            if vesw.mac_table.iter().any(|e| e.mac == p.mac) {
                continue;
            }
            place(
                &mut out,
                MacEntryCfg {
                    index: None,
                    mac: p.mac,
                    mask: Mac::ALL_ONES,
                    dlid: p.encap_slid,
                    node: None,
                    source: false,
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;
