// SPDX-License-Identifier: GPL-2.0

//! What `show`, `counters` and `traps` print: serializable views of the
//! attributes (field names as in the config, for scripts that compare)
//! and their text tables. The traps are in [`trap`], the plan of `apply`
//! in [`plan`], the Prometheus exposition of `counters` in [`prom`].

pub mod plan;
pub mod prom;
pub mod trap;

use std::fmt::Write as _;

use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{VeswPortInfo, ETH_LINK_DOWN, ETH_LINK_UP, STATE_FORWARDING};
use opa_wire::vema_mac::DLID_SD_SRC_MAC;
use serde::Serialize;

use crate::client::{IfaceMacList, MacTableState};
use crate::config::RoutingControl;
use crate::mac::Mac;
use crate::plan::diff::{mask_ports, state_name};

/// Routing control by traffic class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RcView {
    /// Anything but IPv4 and IPv6.
    pub default: u8,
    /// IPv4 other.
    pub ipv4: u8,
    /// IPv4 UDP.
    pub ipv4_udp: u8,
    /// IPv4 TCP.
    pub ipv4_tcp: u8,
    /// IPv6 other.
    pub ipv6: u8,
    /// IPv6 TCP.
    pub ipv6_tcp: u8,
    /// IPv6 UDP.
    pub ipv6_udp: u8,
}

impl From<RoutingControl> for RcView {
    fn from(r: RoutingControl) -> Self {
        RcView {
            default: r.default,
            ipv4: r.ipv4,
            ipv4_udp: r.ipv4_udp,
            ipv4_tcp: r.ipv4_tcp,
            ipv6: r.ipv6,
            ipv6_tcp: r.ipv6_tcp,
            ipv6_udp: r.ipv6_udp,
        }
    }
}

/// The vesw part of VESW port info.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VeswView {
    /// Vesw id.
    pub id: u16,
    /// Fabric id.
    pub fabric_id: u16,
    /// P_Key.
    pub pkey: u16,
    /// Ethernet MTU.
    pub eth_mtu: u16,
    /// Unknown unicast DLIDs (trailing zeros dropped).
    pub unknown_ucast_dlids: Vec<u32>,
    /// Default ports (bits of `def_port_mask`).
    pub default_ports: Vec<u8>,
    /// Unknown multicast DLID.
    pub unknown_mcast_dlid: u32,
    /// Routing control.
    pub routing_control: RcView,
}

/// One MAC table entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MacEntryView {
    /// Slot.
    pub index: u16,
    /// Address.
    pub mac: String,
    /// Mask.
    pub mask: String,
    /// DLID.
    pub dlid: u32,
    /// Source MAC entry.
    pub source: bool,
}

/// The per-vport part of VESW port info.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortView {
    /// Port number on the vesw.
    pub port_num: u32,
    /// Base MAC.
    pub mac: String,
    /// Configured state is forwarding.
    pub enabled: bool,
    /// Configured state.
    pub config_state: String,
    /// Operational state.
    pub oper_state: String,
    /// Ethernet link status.
    pub eth_link_status: String,
    /// Encapsulation source LID.
    pub encap_slid: u32,
    /// SC by PCP, unicast.
    pub pcp_sc_uc: Vec<u8>,
    /// VL by PCP, unicast.
    pub pcp_vl_uc: Vec<u8>,
    /// SC by PCP, multicast.
    pub pcp_sc_mc: Vec<u8>,
    /// VL by PCP, multicast.
    pub pcp_vl_mc: Vec<u8>,
    /// SC of untagged unicast.
    pub non_vlan_sc_uc: u8,
    /// VL of untagged unicast.
    pub non_vlan_vl_uc: u8,
    /// SC of untagged multicast.
    pub non_vlan_sc_mc: u8,
    /// VL of untagged multicast.
    pub non_vlan_vl_mc: u8,
    /// MAC table size.
    pub max_mac_tbl_ent: u16,
    /// Source MAC entries limit.
    pub max_smac_ent: u16,
    /// MAC table digest.
    pub mac_tbl_digest: u32,
    /// Unicast list generation.
    pub uc_macs_gen_count: u16,
    /// Multicast list generation.
    pub mc_macs_gen_count: u16,
}

/// Everything `show` reads of one vport.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VportView {
    /// Node port LID.
    pub lid: u16,
    /// Virtual port number.
    pub vport: u8,
    /// Whether the port exists (Get answered other than power-on
    /// defaults).
    pub exists: bool,
    /// The vesw part.
    pub vesw: VeswView,
    /// The per-port part.
    #[serde(flatten)]
    pub port: PortView,
    /// The MAC table.
    pub mac_table: Vec<MacEntryView>,
    /// Interface unicast addresses (besides the base MAC).
    pub iface_ucast_macs: Vec<String>,
    /// Interface multicast addresses.
    pub iface_mcast_macs: Vec<String>,
    /// Summary counters.
    pub summary_counters: Option<serde_json::Map<String, serde_json::Value>>,
    /// Error counters.
    pub error_counters: Option<serde_json::Map<String, serde_json::Value>>,
}

fn link_name(s: u8) -> String {
    match s {
        ETH_LINK_UP => "up".to_string(),
        ETH_LINK_DOWN => "down".to_string(),
        0 => "none".to_string(),
        x => format!("{x:#x}"),
    }
}

/// The view of VESW port info.
pub fn info_view(lid: u16, vport: u8, info: &VeswPortInfo) -> VportView {
    let w = &info.vesw;
    let n = w
        .u_ucast_dlid
        .iter()
        .rposition(|&d| d != 0)
        .map_or(0, |p| p + 1);
    let p = &info.vport;
    VportView {
        lid,
        vport,
        exists: *info != VeswPortInfo::vema_pod(),
        vesw: VeswView {
            id: w.vesw_id,
            fabric_id: w.fabric_id,
            pkey: w.pkey,
            eth_mtu: w.eth_mtu,
            unknown_ucast_dlids: w.u_ucast_dlid.iter().take(n).copied().collect(),
            default_ports: mask_ports(w.def_port_mask),
            unknown_mcast_dlid: w.u_mcast_dlid,
            routing_control: RoutingControl::from_word(w.rc).into(),
        },
        port: PortView {
            port_num: p.port_num,
            mac: Mac(p.base_mac_addr).to_string(),
            enabled: p.config_state == STATE_FORWARDING,
            config_state: state_name(p.config_state),
            oper_state: state_name(p.oper_state),
            eth_link_status: link_name(p.eth_link_status),
            encap_slid: p.encap_slid,
            pcp_sc_uc: p.pcp_to_sc_uc.to_vec(),
            pcp_vl_uc: p.pcp_to_vl_uc.to_vec(),
            pcp_sc_mc: p.pcp_to_sc_mc.to_vec(),
            pcp_vl_mc: p.pcp_to_vl_mc.to_vec(),
            non_vlan_sc_uc: p.non_vlan_sc_uc,
            non_vlan_vl_uc: p.non_vlan_vl_uc,
            non_vlan_sc_mc: p.non_vlan_sc_mc,
            non_vlan_vl_mc: p.non_vlan_vl_mc,
            max_mac_tbl_ent: p.max_mac_tbl_ent,
            max_smac_ent: p.max_smac_ent,
            mac_tbl_digest: p.mac_tbl_digest,
            uc_macs_gen_count: p.uc_macs_gen_count,
            mc_macs_gen_count: p.mc_macs_gen_count,
        },
        mac_table: Vec::new(),
        iface_ucast_macs: Vec::new(),
        iface_mcast_macs: Vec::new(),
        summary_counters: None,
        error_counters: None,
    }
}

/// The view of a MAC table.
pub fn table_view(t: &MacTableState) -> Vec<MacEntryView> {
    t.entries
        .iter()
        .map(|(&i, e)| MacEntryView {
            index: i,
            mac: Mac(e.mac_addr).to_string(),
            mask: Mac(e.mac_addr_mask).to_string(),
            dlid: e.dlid(),
            source: e.dlid_sd & DLID_SD_SRC_MAC != 0,
        })
        .collect()
}

/// The view of an interface MAC list.
pub fn macs_view(l: &IfaceMacList) -> Vec<String> {
    l.macs.iter().map(|m| Mac(*m).to_string()).collect()
}

/// Summary counters by name, in wire order.
pub fn summary_fields(c: &SummaryCounters) -> Vec<(&'static str, u64)> {
    vec![
        ("vp_instance", u64::from(c.vp_instance)),
        ("vesw_id", u64::from(c.vesw_id)),
        ("veswport_num", u64::from(c.veswport_num)),
        ("tx_errors", c.tx_errors),
        ("rx_errors", c.rx_errors),
        ("tx_packets", c.tx_packets),
        ("rx_packets", c.rx_packets),
        ("tx_bytes", c.tx_bytes),
        ("rx_bytes", c.rx_bytes),
        ("tx_unicast", c.tx_unicast),
        ("tx_mcastbcast", c.tx_mcastbcast),
        ("tx_untagged", c.tx_untagged),
        ("tx_vlan", c.tx_vlan),
        ("tx_64_size", c.tx_64_size),
        ("tx_65_127", c.tx_65_127),
        ("tx_128_255", c.tx_128_255),
        ("tx_256_511", c.tx_256_511),
        ("tx_512_1023", c.tx_512_1023),
        ("tx_1024_1518", c.tx_1024_1518),
        ("tx_1519_max", c.tx_1519_max),
        ("rx_unicast", c.rx_unicast),
        ("rx_mcastbcast", c.rx_mcastbcast),
        ("rx_untagged", c.rx_untagged),
        ("rx_vlan", c.rx_vlan),
        ("rx_64_size", c.rx_64_size),
        ("rx_65_127", c.rx_65_127),
        ("rx_128_255", c.rx_128_255),
        ("rx_256_511", c.rx_256_511),
        ("rx_512_1023", c.rx_512_1023),
        ("rx_1024_1518", c.rx_1024_1518),
        ("rx_1519_max", c.rx_1519_max),
    ]
}

/// Error counters by name, in wire order (reserved ones left out).
pub fn error_fields(c: &ErrorCounters) -> Vec<(&'static str, u64)> {
    vec![
        ("vp_instance", u64::from(c.vp_instance)),
        ("vesw_id", u64::from(c.vesw_id)),
        ("veswport_num", u64::from(c.veswport_num)),
        ("tx_errors", c.tx_errors),
        ("rx_errors", c.rx_errors),
        ("tx_smac_filt", c.tx_smac_filt),
        ("tx_dlid_zero", c.tx_dlid_zero),
        ("tx_logic", c.tx_logic),
        ("tx_drop_state", c.tx_drop_state),
        ("rx_bad_veswid", c.rx_bad_veswid),
        ("rx_runt", c.rx_runt),
        ("rx_oversize", c.rx_oversize),
        ("rx_eth_down", c.rx_eth_down),
        ("rx_drop_state", c.rx_drop_state),
        ("rx_logic", c.rx_logic),
    ]
}

/// Counters as a JSON object.
pub fn fields_json(f: &[(&'static str, u64)]) -> serde_json::Map<String, serde_json::Value> {
    f.iter()
        .map(|(k, v)| ((*k).to_string(), serde_json::Value::from(*v)))
        .collect()
}

fn counters_text(out: &mut String, title: &str, f: &[(&'static str, u64)]) {
    let _ = writeln!(out, "  {title}:");
    // Skip the three ids; two columns.
    let rows: Vec<String> = f
        .iter()
        .skip(3)
        .map(|(k, v)| format!("{k:<16}{v:>20}"))
        .collect();
    for pair in rows.chunks(2) {
        let _ = writeln!(out, "    {}", pair.join("    "));
    }
}

/// The counters of one vport as text.
pub fn counters_text_block(lid: u16, vport: u8, s: &SummaryCounters, e: &ErrorCounters) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "LID {lid:#06x} vport {vport} (vesw {}, OPA port {})",
        s.vesw_id, s.veswport_num
    );
    counters_text(&mut out, "summary", &summary_fields(s));
    counters_text(&mut out, "errors", &error_fields(e));
    out
}

fn join_u8(v: &[u8]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One vport as a text table.
pub fn vport_text(v: &VportView) -> String {
    let mut o = String::new();
    let p = &v.port;
    let w = &v.vesw;
    let _ = writeln!(o, "LID {:#06x} vport {}", v.lid, v.vport);
    if !v.exists {
        let _ = writeln!(o, "  (no such vport: the agent answers power-on defaults)");
        return o;
    }
    let row = |o: &mut String, k: &str, val: String| {
        let _ = writeln!(o, "  {k:<22}{val}");
    };
    row(
        &mut o,
        "vesw",
        format!("{} (fabric {:#x})", w.id, w.fabric_id),
    );
    row(&mut o, "pkey", format!("{:#06x}", w.pkey));
    row(&mut o, "eth_mtu", w.eth_mtu.to_string());
    row(
        &mut o,
        "unknown_ucast_dlids",
        w.unknown_ucast_dlids
            .iter()
            .map(|d| format!("{d:#x}"))
            .collect::<Vec<_>>()
            .join(" "),
    );
    row(&mut o, "default_ports", join_u8(&w.default_ports));
    row(
        &mut o,
        "unknown_mcast_dlid",
        format!("{:#x}", w.unknown_mcast_dlid),
    );
    let r = &w.routing_control;
    row(
        &mut o,
        "routing_control",
        format!(
            "default {} ipv4 {} ipv4_udp {} ipv4_tcp {} ipv6 {} ipv6_tcp {} ipv6_udp {}",
            r.default, r.ipv4, r.ipv4_udp, r.ipv4_tcp, r.ipv6, r.ipv6_tcp, r.ipv6_udp
        ),
    );
    row(&mut o, "port_num", p.port_num.to_string());
    row(&mut o, "mac", p.mac.clone());
    row(
        &mut o,
        "state",
        format!(
            "config {} oper {} link {}",
            p.config_state, p.oper_state, p.eth_link_status
        ),
    );
    row(&mut o, "encap_slid", format!("{:#x}", p.encap_slid));
    row(
        &mut o,
        "pcp sc/vl uc",
        format!("{} / {}", join_u8(&p.pcp_sc_uc), join_u8(&p.pcp_vl_uc)),
    );
    row(
        &mut o,
        "pcp sc/vl mc",
        format!("{} / {}", join_u8(&p.pcp_sc_mc), join_u8(&p.pcp_vl_mc)),
    );
    row(
        &mut o,
        "non-vlan sc/vl uc, mc",
        format!(
            "{}/{}, {}/{}",
            p.non_vlan_sc_uc, p.non_vlan_vl_uc, p.non_vlan_sc_mc, p.non_vlan_vl_mc
        ),
    );
    row(
        &mut o,
        "mac table",
        format!(
            "{} entries (max {}, smac {}), digest {:#010x}",
            v.mac_table.len(),
            p.max_mac_tbl_ent,
            p.max_smac_ent,
            p.mac_tbl_digest
        ),
    );
    for e in &v.mac_table {
        let _ = writeln!(
            o,
            "    {:>5}  {}  mask {}  dlid {:#x}{}",
            e.index,
            e.mac,
            e.mask,
            e.dlid,
            if e.source { "  source" } else { "" }
        );
    }
    row(
        &mut o,
        "iface ucast macs",
        format!(
            "gen {}: {}",
            p.uc_macs_gen_count,
            v.iface_ucast_macs.join(" ")
        ),
    );
    row(
        &mut o,
        "iface mcast macs",
        format!(
            "gen {}: {}",
            p.mc_macs_gen_count,
            v.iface_mcast_macs.join(" ")
        ),
    );
    if let Some(s) = &v.summary_counters {
        let g = |k: &str| s.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        row(
            &mut o,
            "packets",
            format!(
                "tx {} ({} bytes) rx {} ({} bytes) errors tx {} rx {}",
                g("tx_packets"),
                g("tx_bytes"),
                g("rx_packets"),
                g("rx_bytes"),
                g("tx_errors"),
                g("rx_errors")
            ),
        );
    }
    o
}

/// The summary and error counters of one vport as `counters --json`
/// prints them.
pub fn counters_json(
    lid: u16,
    vport: u8,
    s: &SummaryCounters,
    e: &ErrorCounters,
) -> serde_json::Value {
    serde_json::json!({
        "lid": lid,
        "vport": vport,
        "summary": fields_json(&summary_fields(s)),
        "errors": fields_json(&error_fields(e)),
    })
}
