// SPDX-License-Identifier: GPL-2.0

//! `[[vesw]]` and its `[[vesw.mac_table]]`.

use std::collections::HashMap;
use std::ops::Range;

use opa_wire::vema_info::{ETH_MTU_MAX, MAC_TBL_MAX_ENTRIES, VESW_MAX_NUM_DEF_PORT};
use toml::Spanned;

use super::Checker;
use crate::config::{
    pkey_problem, EmSettings, MacEntryCfg, RawRc, RawVesw, RoutingControl, Vesw, ETH_MIN_MTU,
    FABRIC_ID_MAX, LID24_MAX, RC_MAX, VESW_ID_MAX,
};
use crate::mac::Mac;

/// The vesw ids and names met so far, where: each is used once.
#[derive(Default)]
pub(super) struct VeswsSeen {
    pub(super) ids: HashMap<u16, Range<usize>>,
    names: HashMap<String, Range<usize>>,
}

/// One `[[vesw]]`.
pub(super) fn check_vesw(
    c: &mut Checker<'_>,
    sv: &Spanned<RawVesw>,
    em: &EmSettings,
    seen: &mut VeswsSeen,
) -> Vesw {
    let v = sv.get_ref();
    // A missing id is reported; the vesw is checked all the same.
    let id: u16 = c.opt_int(&v.id, 0, i64::from(VESW_ID_MAX), true, "vesw id", 0);
    if let Some(sid) = &v.id {
        if let Some(first) = seen.ids.get(&id) {
            let l = c.line_of(first);
            c.err(
                sid.span(),
                format!("duplicate vesw id {id} (first defined at line {l})"),
            );
        } else {
            seen.ids.insert(id, sid.span());
        }
    }
    let name = v
        .name
        .as_ref()
        .map(|n| n.get_ref().clone())
        .unwrap_or_default();
    if let Some(n) = &v.name {
        if let Some(first) = seen.names.get(n.get_ref()) {
            let l = c.line_of(first);
            c.err(
                n.span(),
                format!(
                    "duplicate vesw name {:?} (first used at line {l})",
                    n.get_ref()
                ),
            );
        } else {
            seen.names.insert(n.get_ref().clone(), n.span());
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
    let pkey: u16 = c.opt_int(&v.pkey, 0, 0xffff, true, "pkey", 0);
    if let Some(sp) = v
        .pkey
        .as_ref()
        .filter(|p| (0..=0xffff).contains(p.get_ref()))
    {
        if let Some(p) = pkey_problem(pkey, c.src.get(sp.span()).unwrap_or_default()) {
            c.err(sp.span(), p);
        }
    }
    let eth_mtu = c.opt_int(
        &v.eth_mtu,
        i64::from(ETH_MIN_MTU),
        i64::from(ETH_MTU_MAX),
        false,
        "eth_mtu",
        1500,
    );

    let (ucast, ucast_nodes, default_ports) = check_default_ports(c, v);
    let unknown_mcast_dlid = c.opt_int(
        &v.unknown_mcast_dlid,
        0,
        i64::from(LID24_MAX),
        true,
        "unknown_mcast_dlid",
        0,
    );
    // A number given wins (a fabric without an SM); else the group's MLID, from the SA.
    let unknown_mcast_mgid = match (&v.unknown_mcast_dlid, &v.unknown_mcast_mgid) {
        (Some(_), _) => None,
        (None, None) => Some(crate::sa::DEFAULT_MCAST_MGID),
        (None, Some(g)) => match crate::sa::parse_mgid(g.get_ref()) {
            Some(m) => Some(m),
            None => {
                c.err(
                    g.span(),
                    format!(
                        "unknown_mcast_mgid \"{}\" is not an MGID as opafm.xml writes them \
                         (0xff12401b80010000:0x00000000ffffffff)",
                        g.get_ref()
                    ),
                );
                None
            }
        },
    };
    let rc = v
        .routing_control
        .as_ref()
        .map(|r| check_rc(c, r))
        .unwrap_or_default();
    let table = check_mac_table(c, sv);
    Vesw {
        id,
        name,
        fabric_id,
        pkey,
        eth_mtu,
        unknown_ucast_dlids: ucast,
        unknown_ucast_nodes: ucast_nodes,
        default_ports,
        unknown_mcast_dlid,
        unknown_mcast_mgid,
        rc,
        mac_table_from_vports: v.mac_table_from_vports.unwrap_or(true),
        mac_table: table,
    }
}

/// A vesw's `unknown_ucast_dlids` (or `unknown_ucast_nodes`, by name: their DLIDs are 0 until
/// resolved), the names, and the `default_ports` that index them (all of them if not given).
fn check_default_ports(c: &mut Checker<'_>, v: &RawVesw) -> (Vec<u32>, Vec<usize>, Vec<u8>) {
    let mut ucast = Vec::new();
    let mut nodes = Vec::new();
    if let Some(l) = &v.unknown_ucast_nodes {
        if v.unknown_ucast_dlids.is_some() {
            c.err(
                l.span(),
                "give the unknown unicast destinations by `unknown_ucast_dlids` or by \
                 `unknown_ucast_nodes`, not both",
            );
        } else if l.get_ref().len() > VESW_MAX_NUM_DEF_PORT {
            c.err(
                l.span(),
                format!(
                    "at most {VESW_MAX_NUM_DEF_PORT} unknown_ucast_nodes (default ports), got {}",
                    l.get_ref().len()
                ),
            );
        } else {
            for n in l.get_ref() {
                if let Some(i) = c.node(n, "unknown unicast node") {
                    nodes.push(i);
                    ucast.push(0);
                }
            }
        }
    }
    if let Some(l) = &v.unknown_ucast_dlids {
        if l.get_ref().len() > VESW_MAX_NUM_DEF_PORT {
            c.err(
                l.span(),
                format!(
                    "at most {VESW_MAX_NUM_DEF_PORT} unknown_ucast_dlids (default ports), got {}",
                    l.get_ref().len()
                ),
            );
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
                    c.err_absent(
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
    (ucast, nodes, default_ports)
}

/// A vesw's `routing_control`.
fn check_rc(c: &mut Checker<'_>, r: &RawRc) -> RoutingControl {
    let mut rc = RoutingControl::default();
    let m = i64::from(RC_MAX);
    rc.default = c.opt_int(&r.default, 0, m, false, "routing_control.default", 0);
    rc.ipv4 = c.opt_int(&r.ipv4, 0, m, false, "routing_control.ipv4", 0);
    rc.ipv4_udp = c.opt_int(&r.ipv4_udp, 0, m, false, "routing_control.ipv4_udp", 0);
    rc.ipv4_tcp = c.opt_int(&r.ipv4_tcp, 0, m, false, "routing_control.ipv4_tcp", 0);
    rc.ipv6 = c.opt_int(&r.ipv6, 0, m, false, "routing_control.ipv6", 0);
    rc.ipv6_tcp = c.opt_int(&r.ipv6_tcp, 0, m, false, "routing_control.ipv6_tcp", 0);
    rc.ipv6_udp = c.opt_int(&r.ipv6_udp, 0, m, false, "routing_control.ipv6_udp", 0);
    rc
}

/// A vesw's `[[vesw.mac_table]]` entries.
fn check_mac_table(c: &mut Checker<'_>, sv: &Spanned<RawVesw>) -> Vec<MacEntryCfg> {
    let v = sv.get_ref();
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
        let parsed = e
            .mac
            .as_ref()
            .and_then(|m| Some((c.mac(m, "MAC table entry")?, m)));
        let mac = parsed.map(|(m, _)| m).unwrap_or_default();
        if let Some((mac, smac)) = parsed {
            if mac.is_zero() {
                c.err(
                    smac.span(),
                    "MAC table entry: the all-zero MAC means an empty slot",
                );
            } else if let Some(p) = mac.unicast_problem() {
                c.err(smac.span(), format!("MAC table entry: {p}"));
            } else if let Some(l) = mac_seen.get(&mac) {
                c.err(
                    smac.span(),
                    format!("MAC {mac} already in the table at line {l}"),
                );
            } else {
                let l = c.line_of(&smac.span());
                mac_seen.insert(mac, l);
            }
        }
        let mask = match &e.mask {
            Some(m) => c.mac(m, "MAC table mask").unwrap_or(Mac::ALL_ONES),
            None => Mac::ALL_ONES,
        };
        let (dlid, node) = match (&e.dlid, &e.node) {
            (Some(d), None) => (
                c.int(d, 1, i64::from(LID24_MAX), true, "MAC table DLID"),
                None,
            ),
            (None, Some(n)) => (0, c.node(n, "MAC table node")),
            (Some(_), Some(n)) => {
                c.err(
                    n.span(),
                    "give the entry's destination by `dlid` or by `node`, not both",
                );
                (0, None)
            }
            (None, None) => {
                c.err_absent(
                    se.span(),
                    "MAC table entry: missing `node` (port GUID or node description) or `dlid`",
                );
                (0, None)
            }
        };
        table.push(MacEntryCfg {
            index,
            mac,
            mask,
            dlid,
            node,
            source: e.source.unwrap_or(false),
        });
    }
    if table.len() > usize::from(MAC_TBL_MAX_ENTRIES) {
        c.err(
            sv.span(),
            format!("more than {MAC_TBL_MAX_ENTRIES} MAC table entries"),
        );
    }
    table
}
