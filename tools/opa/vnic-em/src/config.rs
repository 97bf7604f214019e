// SPDX-License-Identifier: GPL-2.0

//! The declarative fabric config (TOML): virtual Ethernet switches, the
//! virtual ports on node ports, and MAC tables.
//!
//! The whole file is checked before anything is sent. Every error names
//! its line and column: TOML syntax errors and unknown fields come from
//! the TOML parser, semantic errors (ranges, duplicates, dangling
//! references, bad MACs) from the spans kept for every value.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Range;

use opa_wire::encap::RcClass;
use opa_wire::vema_info::{
    ETH_MTU_MAX, MAC_TBL_MAX_ENTRIES, MAX_NUM_PCP, MAX_NUM_VPORT, VESW_MAX_NUM_DEF_PORT,
};
use serde::Deserialize;
use toml::Spanned;

use crate::mac::Mac;

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

/// One error in a config file, at a line and column (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// Line (1-based; 0 when the error is not about a place).
    pub line: usize,
    /// Column (1-based).
    pub col: usize,
    /// The message.
    pub msg: String,
}

/// Every error of a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors {
    /// The file, as named on the command line.
    pub path: String,
    /// The errors, in file order.
    pub diags: Vec<Diag>,
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diags.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if d.line == 0 {
                write!(f, "{}: error: {}", self.path, d.msg)?;
            } else {
                write!(f, "{}:{}:{}: error: {}", self.path, d.line, d.col, d.msg)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// 1-based line and column of byte `offset` in `src`.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = src.get(..offset).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let col = match before.rfind('\n') {
        Some(nl) => before.get(nl + 1..).map_or(1, |s| s.chars().count() + 1),
        None => before.chars().count() + 1,
    };
    (line, col)
}

// ---------------------------------------------------------------------------
// The file as written.

type SInt = Spanned<i64>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    em: Option<RawEm>,
    #[serde(default)]
    vesw: Vec<Spanned<RawVesw>>,
    #[serde(default)]
    vport: Vec<Spanned<RawVport>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEm {
    fabric_id: Option<SInt>,
    trap_lid: Option<SInt>,
    trap_sl: Option<SInt>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVesw {
    id: SInt,
    name: Option<Spanned<String>>,
    fabric_id: Option<SInt>,
    pkey: SInt,
    eth_mtu: Option<SInt>,
    unknown_ucast_dlids: Option<Spanned<Vec<SInt>>>,
    default_ports: Option<Spanned<Vec<SInt>>>,
    unknown_mcast_dlid: Option<SInt>,
    routing_control: Option<RawRc>,
    mac_table_from_vports: Option<bool>,
    #[serde(default)]
    mac_table: Vec<Spanned<RawMacEntry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRc {
    default: Option<SInt>,
    ipv4: Option<SInt>,
    ipv4_udp: Option<SInt>,
    ipv4_tcp: Option<SInt>,
    ipv6: Option<SInt>,
    ipv6_tcp: Option<SInt>,
    ipv6_udp: Option<SInt>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMacEntry {
    index: Option<SInt>,
    mac: Spanned<String>,
    mask: Option<Spanned<String>>,
    dlid: SInt,
    source: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVport {
    lid: SInt,
    vport: SInt,
    vesw: SInt,
    port_num: SInt,
    mac: Spanned<String>,
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
    /// Where frames to `mac` go (24-bit LID).
    pub dlid: u32,
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
    /// The default ports in use (indices into `unknown_ucast_dlids`).
    pub default_ports: Vec<u8>,
    /// DLID for unknown multicast and broadcast.
    pub unknown_mcast_dlid: u32,
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
    /// LID of the node port (where the MADs go).
    pub lid: u16,
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
}

impl Config {
    /// The vesw with id `id`.
    pub fn vesw(&self, id: u16) -> Option<&Vesw> {
        self.vesws.iter().find(|v| v.id == id)
    }
}

// ---------------------------------------------------------------------------
// Checking.

struct Checker<'a> {
    src: &'a str,
    diags: Vec<(usize, Diag)>,
}

impl<'a> Checker<'a> {
    fn err(&mut self, span: Range<usize>, msg: impl Into<String>) {
        let (line, col) = line_col(self.src, span.start);
        self.diags.push((
            span.start,
            Diag {
                line,
                col,
                msg: msg.into(),
            },
        ));
    }

    fn line_of(&self, span: &Range<usize>) -> usize {
        line_col(self.src, span.start).0
    }

    /// An integer in `lo..=hi`, or an error naming `what`.
    fn int<T: TryFrom<i64> + Default>(
        &mut self,
        v: &SInt,
        lo: i64,
        hi: i64,
        hex: bool,
        what: &str,
    ) -> T {
        let x = *v.get_ref();
        if x < lo || x > hi {
            let msg = if hex {
                format!("{what} must be in {lo:#x}..={hi:#x} (got {x:#x})")
            } else {
                format!("{what} must be in {lo}..={hi} (got {x})")
            };
            self.err(v.span(), msg);
            return T::default();
        }
        T::try_from(x).unwrap_or_default()
    }

    fn opt_int<T: TryFrom<i64> + Default>(
        &mut self,
        v: &Option<SInt>,
        lo: i64,
        hi: i64,
        hex: bool,
        what: &str,
        default: T,
    ) -> T {
        match v {
            Some(v) => self.int(v, lo, hi, hex, what),
            None => default,
        }
    }

    fn mac(&mut self, v: &Spanned<String>, what: &str) -> Option<Mac> {
        match v.get_ref().parse::<Mac>() {
            Ok(m) => Some(m),
            Err(e) => {
                self.err(v.span(), format!("{what}: {e}"));
                None
            }
        }
    }

    fn pcp(&mut self, v: &Option<Spanned<Vec<SInt>>>, what: &str) -> [u8; MAX_NUM_PCP] {
        let mut out = [0u8; MAX_NUM_PCP];
        let Some(v) = v else {
            return out;
        };
        if v.get_ref().len() != MAX_NUM_PCP {
            self.err(
                v.span(),
                format!(
                    "{what} must list {MAX_NUM_PCP} values, one per PCP (got {})",
                    v.get_ref().len()
                ),
            );
            return out;
        }
        for (slot, x) in out.iter_mut().zip(v.get_ref()) {
            *slot = self.int(x, 0, i64::from(SC_VL_MAX), false, what);
        }
        out
    }
}

/// Parses and checks a config; every error found, in file order.
pub fn parse(src: &str) -> Result<Config, Vec<Diag>> {
    let raw: RawConfig = match toml::from_str(src) {
        Ok(r) => r,
        Err(e) => {
            let (line, col) = e.span().map(|s| line_col(src, s.start)).unwrap_or((0, 0));
            return Err(vec![Diag {
                line,
                col,
                msg: e.message().trim().to_string(),
            }]);
        }
    };
    let mut c = Checker {
        src,
        diags: Vec::new(),
    };
    let cfg = check(&mut c, raw);
    if c.diags.is_empty() {
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

fn check(c: &mut Checker<'_>, raw: RawConfig) -> Config {
    let mut em = EmSettings::default();
    if let Some(e) = &raw.em {
        em.fabric_id = c.opt_int(
            &e.fabric_id,
            0,
            i64::from(FABRIC_ID_MAX),
            true,
            "fabric_id",
            0,
        );
        em.trap_lid = e
            .trap_lid
            .as_ref()
            .map(|v| c.int(v, 1, i64::from(UNICAST_LID_MAX), true, "trap_lid"));
        em.trap_sl = c.opt_int(&e.trap_sl, 0, i64::from(SC_VL_MAX), false, "trap_sl", 0);
    }

    let mut vesws = Vec::new();
    let mut vesw_ids: HashMap<u16, Range<usize>> = HashMap::new();
    let mut vesw_names: HashMap<String, Range<usize>> = HashMap::new();
    for sv in &raw.vesw {
        let v = sv.get_ref();
        let id: u16 = c.int(&v.id, 0, i64::from(VESW_ID_MAX), true, "vesw id");
        if let Some(first) = vesw_ids.get(&id) {
            let l = c.line_of(first);
            c.err(
                v.id.span(),
                format!("duplicate vesw id {id} (first defined at line {l})"),
            );
        } else {
            vesw_ids.insert(id, v.id.span());
        }
        let name = v
            .name
            .as_ref()
            .map(|n| n.get_ref().clone())
            .unwrap_or_default();
        if let Some(n) = &v.name {
            if let Some(first) = vesw_names.get(n.get_ref()) {
                let l = c.line_of(first);
                c.err(
                    n.span(),
                    format!(
                        "duplicate vesw name {:?} (first used at line {l})",
                        n.get_ref()
                    ),
                );
            } else {
                vesw_names.insert(n.get_ref().clone(), n.span());
            }
        }
        let fabric_id = c.opt_int(
            &v.fabric_id,
            0,
            i64::from(FABRIC_ID_MAX),
            true,
            "fabric_id",
            em.fabric_id,
        );
        let pkey: u16 = c.int(&v.pkey, 0, 0xffff, true, "pkey");
        if pkey & 0x7fff == 0 && (0..=0xffff).contains(v.pkey.get_ref()) {
            c.err(
                v.pkey.span(),
                format!("pkey {pkey:#06x} has no key part (the low 15 bits are zero)"),
            );
        }
        let eth_mtu = c.opt_int(
            &v.eth_mtu,
            i64::from(ETH_MIN_MTU),
            i64::from(ETH_MTU_MAX),
            false,
            "eth_mtu",
            1500,
        );

        let mut ucast = Vec::new();
        if let Some(l) = &v.unknown_ucast_dlids {
            if l.get_ref().len() > VESW_MAX_NUM_DEF_PORT {
                c.err(l.span(), format!("at most {VESW_MAX_NUM_DEF_PORT} unknown_ucast_dlids (default ports), got {}", l.get_ref().len()));
            }
            for d in l.get_ref().iter().take(VESW_MAX_NUM_DEF_PORT) {
                ucast.push(c.int(d, 1, i64::from(LID24_MAX), true, "unknown unicast DLID"));
            }
        }
        let mut default_ports: Vec<u8> = Vec::new();
        match &v.default_ports {
            None => {
                default_ports = (0..ucast.len())
                    .filter_map(|i| u8::try_from(i).ok())
                    .collect()
            }
            Some(l) => {
                for p in l.get_ref() {
                    let hi = i64::try_from(ucast.len()).unwrap_or(0) - 1;
                    if hi < 0 {
                        c.err(
                            p.span(),
                            "default port given but unknown_ucast_dlids is empty",
                        );
                        continue;
                    }
                    let idx: u8 = c.int(
                        p,
                        0,
                        hi,
                        false,
                        "default port (index into unknown_ucast_dlids)",
                    );
                    if default_ports.contains(&idx) && (0..=hi).contains(p.get_ref()) {
                        c.err(p.span(), format!("default port {idx} listed twice"));
                    } else {
                        default_ports.push(idx);
                    }
                }
            }
        }
        let unknown_mcast_dlid = c.opt_int(
            &v.unknown_mcast_dlid,
            0,
            i64::from(LID24_MAX),
            true,
            "unknown_mcast_dlid",
            0,
        );
        let mut rc = RoutingControl::default();
        if let Some(r) = &v.routing_control {
            let m = i64::from(RC_MAX);
            rc.default = c.opt_int(&r.default, 0, m, false, "routing_control.default", 0);
            rc.ipv4 = c.opt_int(&r.ipv4, 0, m, false, "routing_control.ipv4", 0);
            rc.ipv4_udp = c.opt_int(&r.ipv4_udp, 0, m, false, "routing_control.ipv4_udp", 0);
            rc.ipv4_tcp = c.opt_int(&r.ipv4_tcp, 0, m, false, "routing_control.ipv4_tcp", 0);
            rc.ipv6 = c.opt_int(&r.ipv6, 0, m, false, "routing_control.ipv6", 0);
            rc.ipv6_tcp = c.opt_int(&r.ipv6_tcp, 0, m, false, "routing_control.ipv6_tcp", 0);
            rc.ipv6_udp = c.opt_int(&r.ipv6_udp, 0, m, false, "routing_control.ipv6_udp", 0);
        }

        let mut table = Vec::new();
        let mut idx_seen: HashMap<u16, usize> = HashMap::new();
        let mut mac_seen: HashMap<Mac, usize> = HashMap::new();
        for se in &v.mac_table {
            let e = se.get_ref();
            let index = e.index.as_ref().map(|i| {
                let x: u16 = c.int(
                    i,
                    0,
                    i64::from(MAC_TBL_MAX_ENTRIES) - 1,
                    false,
                    "MAC table index",
                );
                if let Some(l) = idx_seen.get(&x) {
                    c.err(
                        i.span(),
                        format!("MAC table index {x} already used at line {l}"),
                    );
                } else {
                    let l = c.line_of(&i.span());
                    idx_seen.insert(x, l);
                }
                x
            });
            let parsed = c.mac(&e.mac, "MAC table entry");
            let mac = parsed.unwrap_or_default();
            if parsed.is_none() {
                // Reported.
            } else if mac.is_zero() {
                c.err(
                    e.mac.span(),
                    "MAC table entry: the all-zero MAC means an empty slot",
                );
            } else if let Some(l) = mac_seen.get(&mac) {
                c.err(
                    e.mac.span(),
                    format!("MAC {mac} already in the table at line {l}"),
                );
            } else {
                let l = c.line_of(&e.mac.span());
                mac_seen.insert(mac, l);
            }
            let mask = match &e.mask {
                Some(m) => c.mac(m, "MAC table mask").unwrap_or(Mac::ALL_ONES),
                None => Mac::ALL_ONES,
            };
            let dlid = c.int(&e.dlid, 1, i64::from(LID24_MAX), true, "MAC table DLID");
            table.push(MacEntryCfg {
                index,
                mac,
                mask,
                dlid,
                source: e.source.unwrap_or(false),
            });
        }
        if table.len() > usize::from(MAC_TBL_MAX_ENTRIES) {
            c.err(
                sv.span(),
                format!("more than {MAC_TBL_MAX_ENTRIES} MAC table entries"),
            );
        }
        vesws.push(Vesw {
            id,
            name,
            fabric_id,
            pkey,
            eth_mtu,
            unknown_ucast_dlids: ucast,
            default_ports,
            unknown_mcast_dlid,
            rc,
            mac_table_from_vports: v.mac_table_from_vports.unwrap_or(true),
            mac_table: table,
        });
    }

    let mut vports = Vec::new();
    let mut keys: HashMap<(u16, u8), usize> = HashMap::new();
    let mut port_nums: HashMap<(u16, u32), usize> = HashMap::new();
    let mut macs: HashMap<(u16, Mac), usize> = HashMap::new();
    for sp in &raw.vport {
        let p = sp.get_ref();
        let lid: u16 = c.int(&p.lid, 1, i64::from(UNICAST_LID_MAX), true, "vport lid");
        let vport: u8 = c.int(
            &p.vport,
            0,
            i64::from(MAX_NUM_VPORT) - 1,
            false,
            "vport number",
        );
        let here = c.line_of(&sp.span());
        if let Some(l) = keys.get(&(lid, vport)) {
            c.err(
                p.vport.span(),
                format!(
                    "duplicate vport: LID {lid:#06x} vport {vport} already defined at line {l}"
                ),
            );
        } else {
            keys.insert((lid, vport), here);
        }
        let vesw: u16 = c.int(&p.vesw, 0, i64::from(VESW_ID_MAX), true, "vesw id");
        if (0..=i64::from(VESW_ID_MAX)).contains(p.vesw.get_ref()) && !vesw_ids.contains_key(&vesw)
        {
            c.err(
                p.vesw.span(),
                format!("vesw {vesw} is not defined (add a [[vesw]] with id = {vesw})"),
            );
        }
        let port_num: u32 = c.int(&p.port_num, 0, i64::from(u32::MAX), false, "port_num");
        if let Some(l) = port_nums.get(&(vesw, port_num)) {
            c.err(
                p.port_num.span(),
                format!("port_num {port_num} of vesw {vesw} already used at line {l}"),
            );
        } else {
            port_nums.insert((vesw, port_num), here);
        }
        let parsed = c.mac(&p.mac, "vport mac");
        let mac = parsed.unwrap_or_default();
        if parsed.is_none() {
            // Reported.
        } else if mac.is_zero() || mac.is_multicast() {
            c.err(
                p.mac.span(),
                format!("vport mac {mac} must be a non-zero unicast address"),
            );
        } else if let Some(l) = macs.get(&(vesw, mac)) {
            c.err(
                p.mac.span(),
                format!("duplicate MAC {mac} in vesw {vesw} (first used at line {l})"),
            );
        } else {
            macs.insert((vesw, mac), here);
        }
        let encap_slid = c.opt_int(
            &p.encap_slid,
            1,
            i64::from(LID24_MAX),
            true,
            "encap_slid",
            u32::from(lid),
        );
        let s = i64::from(SC_VL_MAX);
        let qos = Qos {
            pcp_sc_uc: c.pcp(&p.pcp_sc_uc, "pcp_sc_uc"),
            pcp_vl_uc: c.pcp(&p.pcp_vl_uc, "pcp_vl_uc"),
            pcp_sc_mc: c.pcp(&p.pcp_sc_mc, "pcp_sc_mc"),
            pcp_vl_mc: c.pcp(&p.pcp_vl_mc, "pcp_vl_mc"),
            non_vlan_sc_uc: c.opt_int(&p.non_vlan_sc_uc, 0, s, false, "non_vlan_sc_uc", 0),
            non_vlan_vl_uc: c.opt_int(&p.non_vlan_vl_uc, 0, s, false, "non_vlan_vl_uc", 0),
            non_vlan_sc_mc: c.opt_int(&p.non_vlan_sc_mc, 0, s, false, "non_vlan_sc_mc", 0),
            non_vlan_vl_mc: c.opt_int(&p.non_vlan_vl_mc, 0, s, false, "non_vlan_vl_mc", 0),
        };
        vports.push(Vport {
            lid,
            vport,
            vesw,
            port_num,
            mac,
            enabled: p.enabled.unwrap_or(true),
            encap_slid,
            qos,
        });
    }

    // Auto entries must fit with the explicit ones.
    for (sv, v) in raw.vesw.iter().zip(&vesws) {
        if !v.mac_table_from_vports {
            continue;
        }
        let explicit: Vec<Mac> = v.mac_table.iter().map(|e| e.mac).collect();
        let auto = vports
            .iter()
            .filter(|p| p.vesw == v.id && !explicit.contains(&p.mac))
            .count();
        if v.mac_table.len() + auto > usize::from(MAC_TBL_MAX_ENTRIES) {
            c.err(
                sv.span(),
                format!(
                    "MAC table of vesw {} needs {} entries, more than {MAC_TBL_MAX_ENTRIES}",
                    v.id,
                    v.mac_table.len() + auto
                ),
            );
        }
    }

    Config { em, vesws, vports }
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
                    source: false,
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[em]
fabric_id = 0x1

[[vesw]]
id = 1
name = "tenant-a"
pkey = 0x8001
eth_mtu = 9000
unknown_ucast_dlids = [0x3, 0x4]
unknown_mcast_dlid = 0xf00001
routing_control = { ipv4_tcp = 2, ipv6_udp = 1 }

[[vesw.mac_table]]
mac = "02:aa:00:00:00:01"
dlid = 0x10
index = 5

[[vesw.mac_table]]
mac = "02:aa:00:00:00:02"
dlid = 0x11

[[vport]]
lid = 0x2
vport = 0
vesw = 1
port_num = 1
mac = "02:00:00:00:02:00"

[[vport]]
lid = 0x3
vport = 0
vesw = 1
port_num = 2
mac = "02:00:00:00:03:00"
enabled = false
encap_slid = 0x103
pcp_sc_uc = [0, 1, 2, 3, 4, 5, 6, 7]
non_vlan_vl_mc = 3
"#;

    fn errs(src: &str) -> Vec<String> {
        match parse(src) {
            Ok(_) => vec![],
            Err(d) => d
                .into_iter()
                .map(|d| format!("{}:{}: {}", d.line, d.col, d.msg))
                .collect(),
        }
    }

    fn one_err(src: &str) -> String {
        let e = errs(src);
        assert_eq!(e.len(), 1, "{e:#?}");
        e.into_iter().next().unwrap()
    }

    #[test]
    fn good_config() {
        let c = parse(GOOD).unwrap();
        assert_eq!(c.em.fabric_id, 1);
        assert_eq!(c.vesws.len(), 1);
        let v = &c.vesws[0];
        assert_eq!((v.id, v.pkey, v.eth_mtu, v.fabric_id), (1, 0x8001, 9000, 1));
        assert_eq!(v.unknown_ucast_dlids, vec![3, 4]);
        assert_eq!(v.default_ports, vec![0, 1]);
        assert_eq!(v.def_port_mask(), 0b11);
        assert_eq!(v.rc.ipv4_tcp, 2);
        assert_eq!(v.rc.word(), (2 << 12) | (1 << 24));
        assert_eq!(RoutingControl::from_word(v.rc.word()), v.rc);
        assert_eq!(c.vports.len(), 2);
        assert!(c.vports[0].enabled);
        assert_eq!(c.vports[0].encap_slid, 2);
        assert!(!c.vports[1].enabled);
        assert_eq!(c.vports[1].encap_slid, 0x103);
        assert_eq!(c.vports[1].qos.pcp_sc_uc, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(c.vports[1].qos.non_vlan_vl_mc, 3);

        let t = vesw_mac_table(&c, v);
        let idx: Vec<u16> = t.keys().copied().collect();
        assert_eq!(idx, vec![0, 1, 2, 5]);
        assert_eq!(t[&5].dlid, 0x10);
        assert_eq!(t[&0].dlid, 0x11);
        assert_eq!(t[&1].mac.to_string(), "02:00:00:00:02:00");
        assert_eq!(t[&1].dlid, 2);
        assert_eq!(t[&2].dlid, 0x103);
    }

    #[test]
    fn empty_file_is_valid() {
        assert_eq!(parse("").unwrap(), Config::default());
        assert_eq!(parse("# nothing\n").unwrap(), Config::default());
    }

    #[test]
    fn syntax_error_has_line() {
        let e = one_err("[[vesw]]\nid = 1\npkey = = 3\n");
        assert!(e.starts_with("3:"), "{e}");
    }

    #[test]
    fn unknown_field_has_line() {
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nmtu = 1500\n");
        assert!(e.starts_with("4:1:"), "{e}");
        assert!(e.contains("unknown field `mtu`"), "{e}");
        let e = one_err("[bogus]\nx = 1\n");
        assert!(e.starts_with("1:"), "{e}");
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nrouting_control = { ipv5 = 1 }\n");
        assert!(e.starts_with("4:"), "{e}");
    }

    #[test]
    fn missing_and_mistyped_fields() {
        let e = one_err("[[vesw]]\nid = 1\n");
        assert!(e.contains("missing field `pkey`"), "{e}");
        let e = one_err("[[vesw]]\nid = \"one\"\npkey = 0x8001\n");
        assert!(e.starts_with("2:6:"), "{e}");
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nmac_table_from_vports = 1\n");
        assert!(e.starts_with("4:"), "{e}");
    }

    const VESW: &str = "[[vesw]]\nid = 1\npkey = 0x8001\n";

    fn vport(extra: &str) -> String {
        format!("{VESW}[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n{extra}")
    }

    #[test]
    fn semantic_errors_name_the_line() {
        let e = one_err("[[vesw]]\nid = 4096\npkey = 0x8001\n");
        assert!(
            e.starts_with("2:6: vesw id must be in 0x0..=0xfff (got 0x1000)"),
            "{e}"
        );
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8000\n");
        assert!(e.starts_with("3:8: pkey 0x8000 has no key part"), "{e}");
        let e = one_err("[[vesw]]\nid = 1\npkey = 0\n");
        assert!(e.contains("no key part"), "{e}");
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x18001\n");
        assert!(e.contains("pkey must be in"), "{e}");
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\neth_mtu = 20000\n");
        assert!(
            e.starts_with("4:11: eth_mtu must be in 68..=16333 (got 20000)"),
            "{e}"
        );
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\neth_mtu = 10\n");
        assert!(e.contains("eth_mtu"), "{e}");
        let e = one_err(&format!("{VESW}[[vesw]]\nid = 1\npkey = 0x8002\n"));
        assert!(
            e.starts_with("5:6: duplicate vesw id 1 (first defined at line 2)"),
            "{e}"
        );
        let e = one_err(&vport(
            "[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 2\nmac = \"02:00:00:00:00:02\"\n",
        ));
        assert!(
            e.starts_with("12:9: duplicate vport: LID 0x0002 vport 0 already defined at line 4"),
            "{e}"
        );
        let e = one_err(&vport(
            "[[vport]]\nlid = 3\nvport = 0\nvesw = 1\nport_num = 2\nmac = \"02:00:00:00:00:01\"\n",
        ));
        assert!(
            e.starts_with("15:7: duplicate MAC 02:00:00:00:00:01 in vesw 1"),
            "{e}"
        );
        let e = one_err(&vport(
            "[[vport]]\nlid = 3\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:00:02\"\n",
        ));
        assert!(
            e.starts_with("14:12: port_num 1 of vesw 1 already used at line 4"),
            "{e}"
        );
        let e = one_err(&format!("{VESW}[[vport]]\nlid = 2\nvport = 0\nvesw = 7\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n"));
        assert!(e.starts_with("7:8: vesw 7 is not defined"), "{e}");
        let e = one_err(&format!("{VESW}[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:01\"\n"));
        assert!(e.starts_with("9:7: vport mac: invalid MAC address"), "{e}");
        let e = one_err(&format!("{VESW}[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"01:00:5e:00:00:01\"\n"));
        assert!(e.contains("non-zero unicast"), "{e}");
        let e = one_err(&format!("{VESW}[[vport]]\nlid = 0xc000\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n"));
        assert!(
            e.starts_with("5:7: vport lid must be in 0x1..=0xbfff"),
            "{e}"
        );
        let e = one_err(&format!("{VESW}[[vport]]\nlid = 2\nvport = 255\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n"));
        assert!(e.contains("vport number must be in 0..=254"), "{e}");
        let e = one_err(&vport("pcp_sc_uc = [1, 2]\n"));
        assert!(e.starts_with("10:13: pcp_sc_uc must list 8 values"), "{e}");
        let e = one_err(&vport("pcp_vl_mc = [1, 2, 3, 4, 5, 6, 7, 32]\n"));
        assert!(e.starts_with("10:35: pcp_vl_mc must be in 0..=31"), "{e}");
        let e = one_err(&vport("encap_slid = 0x1000000\n"));
        assert!(e.contains("encap_slid"), "{e}");
    }

    #[test]
    fn vesw_field_errors() {
        let e = one_err(
            "[[vesw]]\nid = 1\npkey = 0x8001\nunknown_ucast_dlids = [1]\ndefault_ports = [1]\n",
        );
        assert!(
            e.starts_with("5:18: default port (index into unknown_ucast_dlids) must be in 0..=0"),
            "{e}"
        );
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\ndefault_ports = [0]\n");
        assert!(e.contains("unknown_ucast_dlids is empty"), "{e}");
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nunknown_ucast_dlids = [1, 2]\ndefault_ports = [1, 1]\n");
        assert!(e.contains("default port 1 listed twice"), "{e}");
        let list: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
        let e = one_err(&format!(
            "[[vesw]]\nid = 1\npkey = 0x8001\nunknown_ucast_dlids = [{}]\n",
            list.join(", ")
        ));
        assert!(e.contains("at most 16"), "{e}");
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nrouting_control = { ipv4 = 8 }\n");
        assert!(
            e.starts_with("4:28: routing_control.ipv4 must be in 0..=7"),
            "{e}"
        );
        let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nname = \"a\"\n[[vesw]]\nid = 2\npkey = 0x8002\nname = \"a\"\n");
        assert!(
            e.contains("duplicate vesw name \"a\" (first used at line 4)"),
            "{e}"
        );
        let e = one_err("[em]\ntrap_lid = 0\n");
        assert!(e.starts_with("2:12: trap_lid"), "{e}");
        let e = one_err("[em]\nfabric_id = 0x400\n");
        assert!(e.contains("fabric_id must be in 0x0..=0x3ff"), "{e}");
    }

    #[test]
    fn mac_table_errors() {
        let t = |body: &str| format!("{VESW}[[vesw.mac_table]]\n{body}\n");
        let e = one_err(&t("mac = \"00:00:00:00:00:00\"\ndlid = 1"));
        assert!(e.contains("all-zero MAC"), "{e}");
        let e = one_err(&t("mac = \"02:00:00:00:00:09\"\ndlid = 0"));
        assert!(e.starts_with("6:8: MAC table DLID"), "{e}");
        let e = one_err(&t("mac = \"02:00:00:00:00:09\"\ndlid = 1\nindex = 2048"));
        assert!(e.contains("MAC table index must be in 0..=2047"), "{e}");
        let e = one_err(&t("mac = \"02:00:00:00:00:09\"\ndlid = 1\nmask = \"ff\""));
        assert!(e.contains("MAC table mask"), "{e}");
        let two = format!(
            "{}[[vesw.mac_table]]\nmac = \"02:00:00:00:00:09\"\ndlid = 2\nindex = 3\n",
            t("mac = \"02:00:00:00:00:09\"\ndlid = 1\nindex = 3")
        );
        let e = errs(&two);
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(
            e[0].starts_with("9:7: MAC 02:00:00:00:00:09 already in the table at line 5"),
            "{e:?}"
        );
        assert!(
            e[1].starts_with("11:9: MAC table index 3 already used at line 7"),
            "{e:?}"
        );
        let e = one_err(&t("mac = \"02:00:00:00:00:09\"\ndlid = 1\nwho = 1"));
        assert!(e.contains("unknown field `who`"), "{e}");
    }

    #[test]
    fn many_errors_are_all_reported_in_order() {
        let src = "[[vesw]]\nid = 5000\npkey = 0x8000\neth_mtu = 1\n";
        let e = errs(src);
        assert_eq!(e.len(), 3, "{e:#?}");
        assert!(e[0].starts_with("2:"));
        assert!(e[1].starts_with("3:"));
        assert!(e[2].starts_with("4:"));
    }

    #[test]
    fn no_panic_on_garbage() {
        for src in [
            "\u{0}",
            "[[vport]]",
            "vesw = 3",
            "[[vesw]]\nid = -1\npkey = -1\n",
            "[[vesw]]\nid = 9223372036854775807\npkey = 1\n",
            "[[vesw]]\nid = 1\npkey = 1\nunknown_ucast_dlids = \"x\"\n",
            "[[vesw]]\nid = 1\npkey = 1\nmac_table = 3\n",
            "[[vport]]\nlid = 1\nvport = 1\nvesw = 1\nport_num = -5\nmac = \"\u{1F600}\"\n",
            "\u{feff}[em]\n",
            "[em]\n[em]\n",
        ] {
            let _ = parse(src);
        }
    }

    #[test]
    fn line_col_works() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("ab\ncd", 99), (2, 3));
        assert_eq!(line_col("é\nx", 3), (2, 1));
    }

    #[test]
    fn display_of_errors() {
        let e = ConfigErrors {
            path: "f.toml".into(),
            diags: vec![
                Diag {
                    line: 3,
                    col: 8,
                    msg: "bad".into(),
                },
                Diag {
                    line: 0,
                    col: 0,
                    msg: "cannot read".into(),
                },
            ],
        };
        assert_eq!(
            e.to_string(),
            "f.toml:3:8: error: bad\nf.toml: error: cannot read"
        );
        assert!(load("/nonexistent/vnic-em.toml").is_err());
    }
}
