// SPDX-License-Identifier: GPL-2.0

//! What the fabric should look like (from the config) and the Sets that
//! take it there from what it looks like now: the diff behind an
//! idempotent `apply`.

use std::collections::BTreeMap;

use opa_wire::encap::crc32_le;
use opa_wire::vema_info::{
    ClassPortInfo, VeswPortInfo, STATE_DROP_ALL, STATE_FORWARDING, VESW_MAX_NUM_DEF_PORT,
};
use opa_wire::vema_mac::{MacTableEntry, DLID_SD_SRC_MAC, MAC_TBL_ENTRIES_PER_MAD};

use crate::config::{vesw_mac_table, Config, RoutingControl, Vesw, Vport};
use crate::mac::Mac;
use crate::mad::{IB_DEFAULT_PKEY_FULL, IB_QP1_QKEY};

/// The state one vport should have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredVport {
    /// Node port LID.
    pub lid: u16,
    /// Virtual port number.
    pub vport: u8,
    /// Vesw id.
    pub vesw: u16,
    /// Vesw name.
    pub vesw_name: String,
    /// The VESW port info to set (read-only fields zero).
    pub info: VeswPortInfo,
    /// The MAC table, by index.
    pub table: BTreeMap<u16, MacTableEntry>,
    /// The digest that identifies `table`.
    pub digest: u32,
}

/// The VESW port info a vport of `vesw` should have.
pub fn desired_info(vesw: &Vesw, p: &Vport) -> VeswPortInfo {
    let mut i = VeswPortInfo::ZERO;
    i.vesw.fabric_id = vesw.fabric_id;
    i.vesw.vesw_id = vesw.id;
    i.vesw.def_port_mask = vesw.def_port_mask();
    i.vesw.pkey = vesw.pkey;
    i.vesw.u_mcast_dlid = vesw.unknown_mcast_dlid;
    for (slot, d) in i
        .vesw
        .u_ucast_dlid
        .iter_mut()
        .zip(&vesw.unknown_ucast_dlids)
    {
        *slot = *d;
    }
    i.vesw.rc = vesw.rc.word();
    i.vesw.eth_mtu = vesw.eth_mtu;
    i.vport.port_num = p.port_num;
    i.vport.base_mac_addr = p.mac.0;
    i.vport.config_state = if p.enabled {
        STATE_FORWARDING
    } else {
        STATE_DROP_ALL
    };
    i.vport.encap_slid = p.encap_slid;
    i.vport.pcp_to_sc_uc = p.qos.pcp_sc_uc;
    i.vport.pcp_to_vl_uc = p.qos.pcp_vl_uc;
    i.vport.pcp_to_sc_mc = p.qos.pcp_sc_mc;
    i.vport.pcp_to_vl_mc = p.qos.pcp_vl_mc;
    i.vport.non_vlan_sc_uc = p.qos.non_vlan_sc_uc;
    i.vport.non_vlan_vl_uc = p.qos.non_vlan_vl_uc;
    i.vport.non_vlan_sc_mc = p.qos.non_vlan_sc_mc;
    i.vport.non_vlan_vl_mc = p.qos.non_vlan_vl_mc;
    i
}

/// The digest of a MAC table: a CRC-32 of every entry with its index, in
/// index order; 0 for an empty table (what the driver reports for a
/// table it never had), never 0 otherwise.
pub fn table_digest(table: &BTreeMap<u16, MacTableEntry>) -> u32 {
    if table.is_empty() {
        return 0;
    }
    let mut crc = !0u32;
    for (i, e) in table {
        crc = crc32_le(crc, &i.to_be_bytes());
        crc = crc32_le(crc, &e.to_bytes());
    }
    match !crc {
        0 => 1,
        d => d,
    }
}

/// Every vport of the config with the state it should have.
pub fn desired(cfg: &Config) -> Vec<DesiredVport> {
    let mut tables: BTreeMap<u16, BTreeMap<u16, MacTableEntry>> = BTreeMap::new();
    for v in &cfg.vesws {
        let t = vesw_mac_table(cfg, v)
            .into_iter()
            .map(|(i, e)| {
                let sd = if e.source { DLID_SD_SRC_MAC } else { 0 };
                (
                    i,
                    MacTableEntry {
                        mac_addr: e.mac.0,
                        mac_addr_mask: e.mask.0,
                        dlid_sd: (e.dlid << 8) | sd,
                    },
                )
            })
            .collect();
        tables.insert(v.id, t);
    }
    cfg.vports
        .iter()
        .filter_map(|p| {
            let vesw = cfg.vesw(p.vesw)?;
            let table = tables.get(&vesw.id).cloned().unwrap_or_default();
            Some(DesiredVport {
                lid: p.lid,
                vport: p.vport,
                vesw: vesw.id,
                vesw_name: vesw.name.clone(),
                info: desired_info(vesw, p),
                digest: table_digest(&table),
                table,
            })
        })
        .collect()
}

/// One field that differs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// Field name, as in the config.
    pub field: &'static str,
    /// Current value.
    pub from: String,
    /// Wanted value.
    pub to: String,
}

fn lids(v: &[u32]) -> String {
    let n = v.iter().rposition(|&d| d != 0).map_or(0, |p| p + 1);
    let items: Vec<String> = v.iter().take(n).map(|d| format!("{d:#x}")).collect();
    format!("[{}]", items.join(", "))
}

fn list(v: &[u8]) -> String {
    let items: Vec<String> = v.iter().map(|d| d.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// The default ports of a `def_port_mask`.
pub fn mask_ports(mask: u16) -> Vec<u8> {
    (0..VESW_MAX_NUM_DEF_PORT)
        .filter(|i| mask & (1 << i) != 0)
        .filter_map(|i| u8::try_from(i).ok())
        .collect()
}

/// A config-state byte as a word.
pub fn state_name(s: u8) -> String {
    match s {
        STATE_FORWARDING => "forwarding".to_string(),
        STATE_DROP_ALL => "drop-all".to_string(),
        0 => "none".to_string(),
        x => format!("{x:#x}"),
    }
}

/// A routing control word as the config writes it, classes at 0 left
/// out: `{ ipv4_tcp = 1 }`, `{}`.
pub fn rc_text(w: u32) -> String {
    let r = RoutingControl::from_word(w);
    let parts: Vec<String> = [
        ("default", r.default),
        ("ipv4", r.ipv4),
        ("ipv4_udp", r.ipv4_udp),
        ("ipv4_tcp", r.ipv4_tcp),
        ("ipv6", r.ipv6),
        ("ipv6_tcp", r.ipv6_tcp),
        ("ipv6_udp", r.ipv6_udp),
    ]
    .iter()
    .filter(|(_, v)| *v != 0)
    .map(|(k, v)| format!("{k} = {v}"))
    .collect();
    if parts.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {} }}", parts.join(", "))
    }
}

/// The writable fields of VESW port info that differ between `cur` and
/// `want` (read-only and reserved fields are not compared).
pub fn info_changes(cur: &VeswPortInfo, want: &VeswPortInfo) -> Vec<Change> {
    let mut out = Vec::new();
    let mut cmp = |field: &'static str, a: String, b: String| {
        if a != b {
            out.push(Change {
                field,
                from: a,
                to: b,
            });
        }
    };
    let (c, w) = (&cur.vesw, &want.vesw);
    cmp(
        "fabric_id",
        format!("{:#x}", c.fabric_id),
        format!("{:#x}", w.fabric_id),
    );
    cmp("vesw", c.vesw_id.to_string(), w.vesw_id.to_string());
    cmp(
        "pkey",
        format!("{:#06x}", c.pkey),
        format!("{:#06x}", w.pkey),
    );
    cmp("eth_mtu", c.eth_mtu.to_string(), w.eth_mtu.to_string());
    cmp(
        "unknown_ucast_dlids",
        lids(&c.u_ucast_dlid),
        lids(&w.u_ucast_dlid),
    );
    cmp(
        "default_ports",
        list(&mask_ports(c.def_port_mask)),
        list(&mask_ports(w.def_port_mask)),
    );
    cmp(
        "unknown_mcast_dlid",
        format!("{:#x}", c.u_mcast_dlid),
        format!("{:#x}", w.u_mcast_dlid),
    );
    cmp("routing_control", rc_text(c.rc), rc_text(w.rc));
    let (c, w) = (&cur.vport, &want.vport);
    cmp("port_num", c.port_num.to_string(), w.port_num.to_string());
    cmp(
        "mac",
        Mac(c.base_mac_addr).to_string(),
        Mac(w.base_mac_addr).to_string(),
    );
    cmp(
        "enabled",
        state_name(c.config_state),
        state_name(w.config_state),
    );
    cmp(
        "encap_slid",
        format!("{:#x}", c.encap_slid),
        format!("{:#x}", w.encap_slid),
    );
    cmp("pcp_sc_uc", list(&c.pcp_to_sc_uc), list(&w.pcp_to_sc_uc));
    cmp("pcp_vl_uc", list(&c.pcp_to_vl_uc), list(&w.pcp_to_vl_uc));
    cmp("pcp_sc_mc", list(&c.pcp_to_sc_mc), list(&w.pcp_to_sc_mc));
    cmp("pcp_vl_mc", list(&c.pcp_to_vl_mc), list(&w.pcp_to_vl_mc));
    cmp(
        "non_vlan_sc_uc",
        c.non_vlan_sc_uc.to_string(),
        w.non_vlan_sc_uc.to_string(),
    );
    cmp(
        "non_vlan_vl_uc",
        c.non_vlan_vl_uc.to_string(),
        w.non_vlan_vl_uc.to_string(),
    );
    cmp(
        "non_vlan_sc_mc",
        c.non_vlan_sc_mc.to_string(),
        w.non_vlan_sc_mc.to_string(),
    );
    cmp(
        "non_vlan_vl_mc",
        c.non_vlan_vl_mc.to_string(),
        w.non_vlan_vl_mc.to_string(),
    );
    out
}

/// One MAC table Set: `entries` go to slots `offset..`; an all-zero
/// entry clears its slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacSet {
    /// First slot.
    pub offset: u16,
    /// The entries.
    pub entries: Vec<MacTableEntry>,
    /// What the window's slots hold now (read from the fabric), for
    /// `apply --diff`.
    pub cur: Vec<MacTableEntry>,
    /// Slots of the window whose content changes.
    pub changed: usize,
}

/// The fewest MAC table Sets that turn `cur` into `want`: each covers up
/// to 125 slots from the first differing one (greedy, which is optimal
/// for covering points with fixed-length windows). If nothing differs
/// but the digest does, one empty Set carries the new digest.
pub fn table_sets(
    cur: &BTreeMap<u16, MacTableEntry>,
    cur_digest: u32,
    want: &BTreeMap<u16, MacTableEntry>,
    want_digest: u32,
) -> Vec<MacSet> {
    let get = |t: &BTreeMap<u16, MacTableEntry>, i: u16| {
        t.get(&i).copied().unwrap_or(MacTableEntry::ZERO)
    };
    let mut diff: Vec<u16> = cur
        .keys()
        .chain(want.keys())
        .copied()
        .filter(|&i| get(cur, i) != get(want, i))
        .collect();
    diff.sort_unstable();
    diff.dedup();
    let mut sets = Vec::new();
    let mut k = 0;
    while let Some(&start) = diff.get(k) {
        let limit = u32::from(start) + u32::from(MAC_TBL_ENTRIES_PER_MAD);
        let mut end = start;
        let mut changed = 0;
        while let Some(&i) = diff.get(k) {
            if u32::from(i) >= limit {
                break;
            }
            end = i;
            changed += 1;
            k += 1;
        }
        let entries = (start..=end).map(|i| get(want, i)).collect();
        sets.push(MacSet {
            offset: start,
            entries,
            cur: (start..=end).map(|i| get(cur, i)).collect(),
            changed,
        });
    }
    if sets.is_empty() && cur_digest != want_digest {
        sets.push(MacSet {
            offset: 0,
            entries: Vec::new(),
            cur: Vec::new(),
            changed: 0,
        });
    }
    sets
}

/// The fields of ClassPortInfo that an update from `cur` to `new` changes
/// (those [`class_port_info_update`] sets).
pub fn class_port_info_changes(cur: &ClassPortInfo, new: &ClassPortInfo) -> Vec<Change> {
    let fields = |c: &ClassPortInfo| {
        [
            ("trap_lid", format!("{:#x}", c.trap_lid)),
            ("trap_sl", c.trap_sl().to_string()),
            ("trap_hl_qp", format!("{:#x}", c.trap_hl_qp)),
            ("trap_qkey", format!("{:#x}", c.trap_qkey)),
            ("trap_pkey", format!("{:#06x}", c.trap_pkey)),
        ]
    };
    fields(cur)
        .into_iter()
        .zip(fields(new))
        .filter(|((_, a), (_, b))| a != b)
        .map(|((field, from), (_, to))| Change { field, from, to })
        .collect()
}

/// The ClassPortInfo to set so that traps go to `trap_lid` with service
/// level `trap_sl`, or `None` if `cur` already does. The VNIC driver
/// reads only the trap LID and SL; the rest is set for other readers.
pub fn class_port_info_update(
    cur: &ClassPortInfo,
    trap_lid: u16,
    trap_sl: u8,
) -> Option<ClassPortInfo> {
    if cur.trap_lid == u32::from(trap_lid) && cur.trap_sl() == trap_sl {
        return None;
    }
    let mut n = *cur;
    n.trap_lid = u32::from(trap_lid);
    n.trap_sl_rsvd = (trap_sl & 0x1f) << 3;
    n.trap_hl_qp = 1;
    n.trap_qkey = IB_QP1_QKEY;
    n.trap_pkey = IB_DEFAULT_PKEY_FULL;
    Some(n)
}

#[cfg(test)]
mod tests;
