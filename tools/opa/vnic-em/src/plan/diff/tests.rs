// SPDX-License-Identifier: GPL-2.0

//! Tests of the desired state and the diffs.

use super::*;
use crate::config::parse;

fn e(i: u8, dlid: u32) -> MacTableEntry {
    MacTableEntry {
        mac_addr: [2, 0, 0, 0, 0, i],
        mac_addr_mask: [0xff; 6],
        dlid_sd: dlid << 8,
    }
}

fn table(idx: &[(u16, u8)]) -> BTreeMap<u16, MacTableEntry> {
    idx.iter().map(|&(i, m)| (i, e(m, 1))).collect()
}

#[test]
fn no_sets_when_equal() {
    let t = table(&[(0, 1), (1, 2), (500, 3)]);
    assert_eq!(table_sets(&t, 9, &t, 9), vec![]);
}

#[test]
fn digest_only() {
    let t = table(&[(0, 1)]);
    let s = table_sets(&t, 1, &t, 2);
    assert_eq!(
        s,
        vec![MacSet {
            offset: 0,
            entries: vec![],
            cur: vec![],
            changed: 0
        }]
    );
}

#[test]
fn additions_removals_and_windows() {
    let cur = table(&[(0, 1), (3, 9), (300, 5)]);
    let want = table(&[(0, 1), (1, 2), (124, 4), (125, 6), (300, 5)]);
    let s = table_sets(&cur, 1, &want, 2);
    // Diffs at 1, 3 (removed), 124, 125: the first window is 1..=125.
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].offset, 1);
    assert_eq!(s[0].entries.len(), 125);
    assert_eq!(s[0].changed, 4);
    assert_eq!(s[0].entries[0], e(2, 1));
    assert_eq!(s[0].entries[2], MacTableEntry::ZERO, "slot 3 cleared");
    assert_eq!(s[0].entries[124], e(6, 1));

    let want2 = table(&[(0, 1), (126, 7), (300, 5), (2047, 8)]);
    let s = table_sets(&cur, 1, &want2, 2);
    let spans: Vec<(u16, usize, usize)> = s
        .iter()
        .map(|m| (m.offset, m.entries.len(), m.changed))
        .collect();
    assert_eq!(spans, vec![(3, 124, 2), (2047, 1, 1)]);

    // Emptying a table.
    let s = table_sets(&cur, 1, &BTreeMap::new(), 0);
    let spans: Vec<(u16, usize)> = s.iter().map(|m| (m.offset, m.entries.len())).collect();
    assert_eq!(spans, vec![(0, 4), (300, 1)]);
    assert!(s.iter().flat_map(|m| &m.entries).all(|x| x.is_delete()));
}

#[test]
fn sets_apply_to_the_wanted_table() {
    // Applying the Sets as the driver does gives the wanted table.
    let cur = table(&[(5, 1), (6, 2), (700, 3), (1500, 4)]);
    let want = table(&[(5, 1), (7, 2), (701, 3), (1999, 9), (2000, 10)]);
    let mut t = cur.clone();
    for s in table_sets(&cur, 0, &want, 1) {
        assert!(s.entries.len() <= 125);
        for (i, x) in (s.offset..).zip(&s.entries) {
            t.remove(&i);
            if !x.is_delete() {
                t.insert(i, *x);
            }
        }
    }
    assert_eq!(t, want);
}

#[test]
fn digest_properties() {
    assert_eq!(table_digest(&BTreeMap::new()), 0);
    let a = table(&[(0, 1)]);
    let b = table(&[(1, 1)]);
    assert_ne!(table_digest(&a), 0);
    assert_ne!(table_digest(&a), table_digest(&b), "index matters");
    assert_eq!(table_digest(&a), table_digest(&a.clone()));
}

const CFG: &str = r#"
[[vesw]]
id = 3
name = "v"
fabric_id = 2
pkey = 0x8003
eth_mtu = 2000
unknown_ucast_dlids = [0x10, 0x11, 0x12]
default_ports = [0, 2]
unknown_mcast_dlid = 0xf00003
routing_control = { default = 1, ipv6_tcp = 5 }

[[vport]]
lid = 4
vport = 2
vesw = 3
port_num = 9
mac = "02:00:00:00:04:02"
encap_slid = 0x104
non_vlan_sc_uc = 4
non_vlan_vl_uc = 4
"#;

#[test]
fn desired_state_from_config() {
    let cfg = parse(CFG).unwrap();
    let d = desired(&cfg);
    assert_eq!(d.len(), 1);
    let v = &d[0];
    assert_eq!((v.lid, v.vport, v.vesw), (4, 2, 3));
    let i = &v.info;
    assert_eq!(i.vesw.fabric_id, 2);
    assert_eq!(i.vesw.vesw_id, 3);
    assert_eq!(i.vesw.pkey, 0x8003);
    assert_eq!(i.vesw.eth_mtu, 2000);
    assert_eq!(i.vesw.def_port_mask, 0b101);
    assert_eq!(&i.vesw.u_ucast_dlid[..4], &[0x10, 0x11, 0x12, 0]);
    assert_eq!(i.vesw.u_mcast_dlid, 0xf00003);
    assert_eq!(i.vesw.rc, 1 | (5 << 20));
    assert_eq!(i.vport.port_num, 9);
    assert_eq!(i.vport.base_mac_addr, [2, 0, 0, 0, 4, 2]);
    assert_eq!(i.vport.config_state, STATE_FORWARDING);
    assert_eq!(i.vport.encap_slid, 0x104);
    assert_eq!(i.vport.non_vlan_sc_uc, 4);
    assert_eq!(v.table.len(), 1);
    assert_eq!(v.table[&0].dlid_sd, 0x104 << 8);
    assert_eq!(v.digest, table_digest(&v.table));

    // From power-on defaults everything differs but the zero QoS.
    let ch = info_changes(&VeswPortInfo::vema_pod(), i);
    let fields: Vec<&str> = ch.iter().map(|c| c.field).collect();
    assert_eq!(
        fields,
        [
            "fabric_id",
            "vesw",
            "pkey",
            "eth_mtu",
            "unknown_ucast_dlids",
            "default_ports",
            "unknown_mcast_dlid",
            "routing_control",
            "port_num",
            "mac",
            "enabled",
            "encap_slid",
            "non_vlan_sc_uc",
            "non_vlan_vl_uc"
        ]
    );
    assert_eq!(ch[4].to, "[0x10, 0x11, 0x12]");
    assert_eq!(ch[7].from, "{}");
    assert_eq!(ch[7].to, "{ default = 1, ipv6_tcp = 5 }");
    assert_eq!(ch[5].to, "[0, 2]");
    assert_eq!(ch[10].from, "drop-all");
    assert_eq!(ch[10].to, "forwarding");

    // Read-only fields do not count.
    let mut cur = *i;
    cur.vport.oper_state = 3;
    cur.vport.eth_link_status = 1;
    cur.vport.mac_tbl_digest = 77;
    cur.vport.uc_macs_gen_count = 5;
    cur.vport.max_mac_tbl_ent = 2048;
    assert_eq!(info_changes(&cur, i), vec![]);
    cur.vesw.eth_mtu = 1500;
    let ch = info_changes(&cur, i);
    assert_eq!(ch.len(), 1);
    assert_eq!(
        (ch[0].field, ch[0].from.as_str(), ch[0].to.as_str()),
        ("eth_mtu", "1500", "2000")
    );
}

#[test]
fn class_port_info() {
    let cur = ClassPortInfo::ZERO.vema_response();
    let n = class_port_info_update(&cur, 1, 0).unwrap();
    assert_eq!(n.trap_lid, 1);
    assert_eq!(n.trap_sl(), 0);
    assert_eq!(n.trap_qkey, IB_QP1_QKEY);
    assert_eq!(class_port_info_update(&n, 1, 0), None);
    let m = class_port_info_update(&n, 1, 5).unwrap();
    assert_eq!(m.trap_sl(), 5);
    assert_eq!(class_port_info_update(&m, 1, 5), None);
}
