// SPDX-License-Identifier: GPL-2.0

//! End-to-end tests of every command against the in-memory VEMA fabric:
//! apply (idempotence, minimal diffs, dry run, check), show, counters,
//! traps and set, with dropped responses, MAD status codes, stale
//! responses and traps in the middle of transactions.

mod common;

use std::time::Duration;

use common::{apply, apply_ok, capture, sets};

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES, METHOD_GET, METHOD_SET,
};
use opa_wire::vema_info::{VeswPortInfo, ETH_LINK_UP, STATE_DROP_ALL, STATE_FORWARDING};
use vnic_em::client::{Client, EmError};
use vnic_em::commands::{self, ApplyOpts, EntryArg, RawReq, Select, SetOpts, TrapOpts};
use vnic_em::config::{parse, Config};
use vnic_em::error::Exit;
use vnic_em::fake::FakeFabric;
use vnic_em::mac::Mac;
use vnic_em::mad::{Method, Target};

const EM_LID: u16 = 1;

const FABRIC: &str = r#"
[em]
fabric_id = 0x2

[[vesw]]
id = 10
name = "red"
pkey = 0x8010
eth_mtu = 9000
unknown_ucast_dlids = [0x2, 0x3]
unknown_mcast_dlid = 0xf00010
routing_control = { ipv4_tcp = 1, ipv6_tcp = 1 }

[[vesw.mac_table]]
mac = "02:11:00:00:00:01"
dlid = 0x20
index = 100

[[vesw]]
id = 20
name = "blue"
pkey = 0x8020

[[vport]]
lid = 2
vport = 0
vesw = 10
port_num = 1
mac = "02:00:00:00:02:00"

[[vport]]
lid = 3
vport = 0
vesw = 10
port_num = 2
mac = "02:00:00:00:03:00"

[[vport]]
lid = 3
vport = 1
vesw = 20
port_num = 1
mac = "02:00:00:00:03:01"
enabled = false
"#;

fn fabric() -> FakeFabric {
    common::fabric(EM_LID)
}

fn client(f: FakeFabric) -> Client<FakeFabric> {
    Client::new(f, common::policy(50))
}

fn cfg(src: &str) -> Config {
    parse(src).unwrap()
}

fn applied(c: &mut Client<FakeFabric>) {
    apply_ok(c, &cfg(FABRIC));
}

#[test]
fn apply_creates_everything() {
    let mut c = client(fabric());
    let r = apply(&mut c, &cfg(FABRIC), ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.err.is_empty(), "{}", r.err);
    assert!(
        r.out
            .contains("LID 0x0002 vport 0 [vesw 10 red]: create vesw port info"),
        "{}",
        r.out
    );
    assert!(r.out.contains("applied 8 of 8 Set(s)"), "{}", r.out);
    // 2 ClassPortInfo, 3 vport info, and one MAC table Set per vport
    // (red: 3 entries in slots 0..=100 on 2 vports; blue: its own MAC).
    assert_eq!(sets(&c), 2 + 3 + 3);

    let f = c.fabric();
    for lid in [2, 3] {
        assert_eq!(f.agents[&lid].class_port_info.trap_lid, u32::from(EM_LID));
    }
    let v = f.vport(2, 0).unwrap();
    let i = &v.info;
    assert_eq!(i.vesw.vesw_id, 10);
    assert_eq!(i.vesw.fabric_id, 2);
    assert_eq!(i.vesw.pkey, 0x8010);
    assert_eq!(i.vesw.eth_mtu, 9000);
    assert_eq!(i.vesw.def_port_mask, 0b11);
    assert_eq!(&i.vesw.u_ucast_dlid[..3], &[2, 3, 0]);
    assert_eq!(i.vesw.u_mcast_dlid, 0xf00010);
    assert_eq!(i.vesw.rc, (1 << 12) | (1 << 20));
    assert_eq!(i.vport.port_num, 1);
    assert_eq!(i.vport.base_mac_addr, [2, 0, 0, 0, 2, 0]);
    assert_eq!(i.vport.config_state, STATE_FORWARDING);
    assert_eq!(i.vport.encap_slid, 2);
    assert_eq!(
        v.dev_addr,
        [2, 0, 0, 0, 2, 0],
        "base MAC applied to the netdev"
    );
    let idx: Vec<u16> = v.mac_table.keys().copied().collect();
    assert_eq!(idx, vec![0, 1, 100]);
    assert_eq!(v.mac_table[&0].dlid(), 2);
    assert_eq!(v.mac_table[&1].dlid(), 3);
    assert_eq!(v.mac_table[&100].dlid(), 0x20);
    assert_eq!(f.vport(3, 0).unwrap().mac_table, v.mac_table);
    assert_ne!(v.info.vport.mac_tbl_digest, 0);
    let blue = f.vport(3, 1).unwrap();
    assert_eq!(blue.info.vport.config_state, STATE_DROP_ALL);
    assert_eq!(blue.info.vesw.eth_mtu, 1500);
    assert_eq!(blue.mac_table.len(), 1);
}

#[test]
fn reapply_sends_nothing() {
    let mut c = client(fabric());
    applied(&mut c);
    let before_sets = sets(&c);
    let before_gets = c.fabric().count(METHOD_GET);
    let r = apply(&mut c, &cfg(FABRIC), ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.out.contains("nothing to do"), "{}", r.out);
    assert_eq!(r.out.matches("up to date").count(), 3, "{}", r.out);
    assert_eq!(sets(&c), before_sets);
    // One ClassPortInfo Get per node port, one info Get per vport: the
    // digests match, so no MAC table is read.
    assert_eq!(c.fabric().count(METHOD_GET) - before_gets, 2 + 3);

    // --check reads the tables in full and still finds nothing.
    let r = apply(
        &mut c,
        &cfg(FABRIC),
        ApplyOpts {
            check: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert_eq!(sets(&c), before_sets);
}

#[test]
fn changed_file_sends_only_the_difference() {
    let mut c = client(fabric());
    applied(&mut c);
    let before = c.fabric().log.len();
    // A new MTU for blue and a new MAC for LID 3 vport 0.
    let changed = FABRIC
        .replace("pkey = 0x8020\n", "pkey = 0x8020\neth_mtu = 4000\n")
        .replace("02:00:00:00:03:00", "02:00:00:00:03:99");
    let cfg2 = cfg(&changed);

    let r = apply(
        &mut c,
        &cfg2,
        ApplyOpts {
            check: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Differs, "{}{}", r.out, r.err);
    let r = apply(
        &mut c,
        &cfg2,
        ApplyOpts {
            dry_run: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Ok);
    assert!(
        r.out.contains("4 Set(s) to send (dry run: none sent)"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("eth_mtu              1500 -> 4000"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("mac                  02:00:00:00:03:00 -> 02:00:00:00:03:99"),
        "{}",
        r.out
    );
    assert_eq!(
        c.fabric().log[before..]
            .iter()
            .filter(|r| r.method == METHOD_SET)
            .count(),
        0
    );

    let r = apply(&mut c, &cfg2, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    let new_sets: Vec<(u16, u16, u32)> = c.fabric().log[before..]
        .iter()
        .filter(|r| r.method == METHOD_SET)
        .map(|r| (r.lid, r.attr_id, r.attr_mod))
        .collect();
    // vport info of (3,0) and (3,1); one MAC slot on both red vports.
    // The vports' Sets go out side by side (a window), each vport's in
    // the plan's order.
    assert_eq!(
        new_sets,
        vec![
            (2, ATTR_VESWPORT_MAC_ENTRIES, 0),
            (3, ATTR_VESWPORT_INFO, 0),
            (3, ATTR_VESWPORT_INFO, 1),
            (3, ATTR_VESWPORT_MAC_ENTRIES, 0),
        ]
    );
    assert_eq!(c.fabric().vport(3, 1).unwrap().info.vesw.eth_mtu, 4000);
    assert_eq!(
        c.fabric().vport(2, 0).unwrap().mac_table[&1].mac_addr,
        [2, 0, 0, 0, 3, 0x99]
    );
    let r = apply(
        &mut c,
        &cfg2,
        ApplyOpts {
            check: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
}

#[test]
fn apply_json_plan() {
    let mut c = client(fabric());
    let r = apply(
        &mut c,
        &cfg(FABRIC),
        ApplyOpts {
            dry_run: true,
            json: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Ok);
    let j: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(j["dry_run"], true);
    assert_eq!(j["applied"], 0);
    let steps = j["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 8);
    assert_eq!(steps[0]["action"], "set-class-port-info");
    assert_eq!(steps[0]["trap_lid"], 1);
    assert_eq!(steps[1]["action"], "create-vport");
    assert_eq!(steps[1]["status"], "planned");
    assert!(steps[1]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["field"] == "pkey" && c["to"] == "0x8010"));
    assert_eq!(steps[2]["action"], "set-mac-entries");
    assert_eq!(steps[2]["count"], 101);
}

#[test]
fn retries_after_dropped_responses() {
    let mut c = client(fabric());
    c.fabric_mut().faults.drop_next = 2;
    applied(&mut c);
    assert_eq!(c.stats().retries, 2);
    // No report at all from the transport: the client's own deadline.
    let mut c = client(fabric());
    c.fabric_mut().faults.silent_drop_next = 3;
    applied(&mut c);
    assert_eq!(c.stats().retries, 3);
}

#[test]
fn stale_responses_and_high_tid_bits() {
    let mut c = client(fabric());
    c.fabric_mut().faults.stale_before_each = true;
    applied(&mut c);
    assert_eq!(c.stats().retries, 0);
    assert_eq!(c.fabric().vport(3, 1).unwrap().info.vport.port_num, 1);
}

#[test]
fn dead_node_gives_partial_apply() {
    let mut f = fabric();
    f.agents.remove(&3);
    let mut c = client(f);
    let r = apply(&mut c, &cfg(FABRIC), ApplyOpts::default());
    assert_eq!(r.code, Exit::Partial, "{}{}", r.out, r.err);
    assert!(
        r.err
            .contains("Get class port info of LID 0x0003: no response after 4 attempt(s) of 50 ms"),
        "{}",
        r.err
    );
    assert!(c.fabric().vport(2, 0).is_some());

    // Nothing reachable: a fabric error, nothing changed.
    let mut c = client(FakeFabric::new(EM_LID));
    let r = apply(&mut c, &cfg(FABRIC), ApplyOpts::default());
    assert_eq!(r.code, Exit::Fabric, "{}{}", r.out, r.err);
    assert_eq!(r.err.lines().count(), 2, "{}", r.err);
}

#[test]
fn mad_status_is_reported_with_attribute_and_port() {
    let mut c = client(fabric());
    // The first vport info request is the Get of LID 2 vport 0.
    c.fabric_mut().faults.status_for_attr = Some((ATTR_VESWPORT_INFO, 0x001c));
    let r = apply(&mut c, &cfg(FABRIC), ApplyOpts::default());
    assert!(
        r.err.contains("Get vesw port info of LID 0x0002 vport 0: MAD status 0x001c (invalid attribute value / modifier)"),
        "{}",
        r.err
    );
    assert_eq!(r.code, Exit::Partial);
    assert!(c.fabric().vport(2, 0).is_none());
    assert!(c.fabric().vport(3, 0).is_some());

    // A failing Set skips the rest of that vport's Sets.
    let mut c = client(fabric());
    c.fabric_mut().faults.status_for_attr = Some((ATTR_VESWPORT_MAC_ENTRIES, 0x000c));
    let r = apply(&mut c, &cfg(FABRIC), ApplyOpts::default());
    assert_eq!(r.code, Exit::Partial);
    assert!(
        r.err.contains("Set MAC table entries of LID 0x0002 vport 0: MAD status 0x000c (unsupported method/attribute combination)"),
        "{}",
        r.err
    );
    assert!(r.out.contains("applied 7 of 8 Set(s)"), "{}", r.out);
    // Applying again repairs it.
    let r = apply(&mut c, &cfg(FABRIC), ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.out.contains("applied 1 of 1 Set(s)"), "{}", r.out);
}

#[test]
fn client_errors_name_the_request() {
    let mut c = client(fabric());
    let e = c.get_mac_entries(2, 1, 0, 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Get MAC table entries of LID 0x0002 vport 1: MAD status 0x001c (invalid attribute value / modifier)"
    );
    assert!(matches!(e, EmError::Status { status: 0x001c, .. }));
    let t = Target {
        method: Method::Get,
        attr_id: 0x0099,
        lid: 2,
        vport: None,
    };
    let e = c.transact(t, 0, &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Get unknown attribute of LID 0x0002: MAD status 0x000c (unsupported method/attribute combination)"
    );
    // Out-of-range MAC table windows are refused by the agent.
    c.set_vport_info(2, 0, &VeswPortInfo::vema_pod()).unwrap();
    let e = c.get_mac_entries(2, 0, 2000, 100).unwrap_err();
    assert!(matches!(e, EmError::Status { status: 0x001c, .. }), "{e}");
    let e = c.get_class_port_info(9).unwrap_err();
    assert!(matches!(e, EmError::Timeout { attempts: 4, .. }), "{e}");
    assert_eq!(
        c.fabric()
            .log
            .iter()
            .filter(|r| r.lid == 9 && r.attr_id == ATTR_CLASS_PORT_INFO)
            .count(),
        4
    );
}

fn show_json(
    c: &mut Client<FakeFabric>,
    cfg: Option<&Config>,
    sel: &Select,
) -> (Exit, serde_json::Value, String) {
    let r = capture(|io| commands::show(c, cfg, sel, true, true, io));
    let j = serde_json::from_str(&r.out).unwrap_or(serde_json::Value::Null);
    (r.code, j, r.err)
}

#[test]
fn show_matches_the_config_field_by_field() {
    let mut c = client(fabric());
    applied(&mut c);
    let config = cfg(FABRIC);
    let (code, j, err) = show_json(&mut c, Some(&config), &Select::default());
    assert_eq!(code, Exit::Ok, "{err}");
    let arr = j.as_array().unwrap();
    assert_eq!(arr.len(), 3);
    for (v, p) in arr.iter().zip(&config.vports) {
        let vesw = config.vesw(p.vesw).unwrap();
        assert_eq!(v["lid"], p.lid);
        assert_eq!(v["vport"], p.vport);
        assert_eq!(v["exists"], true);
        assert_eq!(v["vesw"]["id"], vesw.id);
        assert_eq!(v["vesw"]["fabric_id"], vesw.fabric_id);
        assert_eq!(v["vesw"]["pkey"], vesw.pkey);
        assert_eq!(v["vesw"]["eth_mtu"], vesw.eth_mtu);
        assert_eq!(
            v["vesw"]["unknown_ucast_dlids"],
            serde_json::json!(vesw.unknown_ucast_dlids)
        );
        assert_eq!(
            v["vesw"]["default_ports"],
            serde_json::json!(vesw.default_ports)
        );
        assert_eq!(v["vesw"]["unknown_mcast_dlid"], vesw.unknown_mcast_dlid);
        assert_eq!(v["vesw"]["routing_control"]["ipv4_tcp"], vesw.rc.ipv4_tcp);
        assert_eq!(v["port_num"], p.port_num);
        assert_eq!(v["mac"], p.mac.to_string());
        assert_eq!(v["enabled"], p.enabled);
        assert_eq!(v["encap_slid"], p.encap_slid);
        let table = vnic_em::config::vesw_mac_table(&config, vesw);
        let got = v["mac_table"].as_array().unwrap();
        assert_eq!(got.len(), table.len());
        for (g, (i, e)) in got.iter().zip(&table) {
            assert_eq!(g["index"], *i);
            assert_eq!(g["mac"], e.mac.to_string());
            assert_eq!(g["dlid"], e.dlid);
        }
        assert_eq!(v["summary_counters"]["vesw_id"], vesw.id);
        assert_eq!(v["iface_ucast_macs"], serde_json::json!([]));
    }
    // The text form names the same things.
    let r =
        capture(|io| commands::show(&mut c, Some(&config), &Select::default(), false, false, io));
    assert!(r.out.contains("LID 0x0003 vport 1"), "{}", r.out);
    assert!(r.out.contains("pkey                  0x8020"), "{}", r.out);
    assert!(
        r.out
            .contains("02:11:00:00:00:01  mask ff:ff:ff:ff:ff:ff  dlid 0x20"),
        "{}",
        r.out
    );
}

#[test]
fn show_scans_and_filters() {
    let mut c = client(fabric());
    applied(&mut c);
    let sel = Select {
        lids: vec![3],
        vports: vec![],
        scan: 4,
    };
    let (code, j, _) = show_json(&mut c, None, &sel);
    assert_eq!(code, Exit::Ok);
    let found: Vec<u64> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["vport"].as_u64().unwrap())
        .collect();
    assert_eq!(found, vec![0, 1]);
    // A vport that does not exist is shown as such.
    let sel = Select {
        lids: vec![2],
        vports: vec![5],
        scan: 0,
    };
    let (code, j, _) = show_json(&mut c, None, &sel);
    assert_eq!(code, Exit::Ok);
    assert_eq!(j[0]["exists"], false);
    // Neither config nor LID: usage error.
    let r = capture(|io| commands::show(&mut c, None, &Select::default(), false, true, io));
    assert_eq!(r.code, Exit::Usage);
    // Filter a config by LID.
    let config = cfg(FABRIC);
    let sel = Select {
        lids: vec![2],
        ..Default::default()
    };
    let (_, j, _) = show_json(&mut c, Some(&config), &sel);
    assert_eq!(j.as_array().unwrap().len(), 1);
    // A dead LID is a fabric error.
    let sel = Select {
        lids: vec![7],
        vports: vec![0],
        scan: 0,
    };
    let (code, _, err) = show_json(&mut c, None, &sel);
    assert_eq!(code, Exit::Fabric);
    assert!(
        err.contains("Get vesw port info of LID 0x0007 vport 0: no response"),
        "{err}"
    );
}

#[test]
fn counters_report_the_agent_values() {
    let mut c = client(fabric());
    applied(&mut c);
    {
        let v = c.fabric_mut().vport_mut(2, 0).unwrap();
        v.summary.tx_packets = 42;
        v.summary.rx_bytes = 4096;
        v.errors.tx_dlid_zero = 7;
    }
    let sel = Select {
        lids: vec![2],
        vports: vec![0],
        scan: 0,
    };
    let r = capture(|io| commands::counters(&mut c, None, &sel, true, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let j: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(j[0]["summary"]["tx_packets"], 42);
    assert_eq!(j[0]["summary"]["rx_bytes"], 4096);
    assert_eq!(j[0]["summary"]["vesw_id"], 10);
    assert_eq!(j[0]["errors"]["tx_dlid_zero"], 7);
    let r = capture(|io| commands::counters(&mut c, None, &sel, false, io));
    assert!(
        r.out.contains("LID 0x0002 vport 0 (vesw 10, OPA port 1)"),
        "{}",
        r.out
    );
    assert!(r.out.contains("tx_packets"), "{}", r.out);
    // A vport that does not exist.
    let sel = Select {
        lids: vec![2],
        vports: vec![9],
        scan: 0,
    };
    let r = capture(|io| commands::counters(&mut c, None, &sel, false, io));
    assert_eq!(r.code, Exit::Fabric);
    assert!(
        r.err
            .contains("Get summary counters of LID 0x0002 vport 9: MAD status 0x001c"),
        "{}",
        r.err
    );
}

#[test]
fn mac_change_trap_arrives_after_apply() {
    let mut c = client(fabric());
    applied(&mut c);
    // `ip link set dev veth address 02:00:00:00:02:77` on LID 2.
    assert!(c
        .fabric_mut()
        .ip_link_set_address(2, 0, [2, 0, 0, 0, 2, 0x77]));
    let opts = TrapOpts {
        count: Some(1),
        timeout: Some(Duration::from_millis(100)),
        json: true,
        ..Default::default()
    };
    let r = capture(|io| commands::traps(&mut c, &opts, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let t: serde_json::Value = serde_json::from_str(r.out.trim()).unwrap();
    assert_eq!(t["event"], "ucast-mac-change");
    assert_eq!(t["src_lid"], 2);
    assert_eq!(t["issuer_lid"], 2);
    assert_eq!(t["vesw"], 10);
    assert_eq!(t["port_num"], 1);
    assert_eq!(t["vport"], 0);
    assert_eq!(t["fabric_id"], 2);
    // show lists the new address and the bumped generation.
    let config = cfg(FABRIC);
    let (_, j, _) = show_json(
        &mut c,
        Some(&config),
        &Select {
            lids: vec![2],
            ..Default::default()
        },
    );
    assert_eq!(
        j[0]["iface_ucast_macs"],
        serde_json::json!(["02:00:00:00:02:77"])
    );
    assert_eq!(j[0]["uc_macs_gen_count"], 1);

    // Link and multicast traps, as text.
    c.fabric_mut().ip_link_set_up(3, 0, true);
    c.fabric_mut().ip_maddr_add(3, 0, [0x01, 0, 0x5e, 0, 0, 1]);
    let opts = TrapOpts {
        count: Some(2),
        timeout: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let r = capture(|io| commands::traps(&mut c, &opts, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert!(lines[0].starts_with("listening for traps at fake fabric LID 0x0001"));
    assert!(
        lines[1].starts_with("link-status-change: LID 0x0003 vport 0 (vesw 10 port 2"),
        "{}",
        r.out
    );
    assert!(
        lines[2].starts_with("mcast-mac-change: LID 0x0003 vport 0"),
        "{}",
        r.out
    );
    let v = c.fabric().vport(3, 0).unwrap();
    assert_eq!(v.info.vport.eth_link_status, ETH_LINK_UP);
    let (_, j, _) = show_json(
        &mut c,
        Some(&config),
        &Select {
            lids: vec![3],
            vports: vec![0],
            scan: 0,
        },
    );
    assert_eq!(
        j[0]["iface_mcast_macs"],
        serde_json::json!(["01:00:5e:00:00:01"])
    );
    assert_eq!(j[0]["eth_link_status"], "up");
    assert_eq!(j[0]["oper_state"], "forwarding");
}

#[test]
fn traps_need_the_trap_lid() {
    // Without apply no trap LID is set: the agent drops its traps.
    let mut f = fabric();
    let mut c0 = client(f.clone());
    let _ = c0.set_vport_info(2, 0, &VeswPortInfo::vema_pod());
    f = c0.fabric().clone();
    let mut c = client(f);
    c.fabric_mut().ip_link_set_up(2, 0, true);
    let opts = TrapOpts {
        count: Some(1),
        timeout: Some(Duration::from_millis(20)),
        ..Default::default()
    };
    let r = capture(|io| commands::traps(&mut c, &opts, io));
    assert_eq!(r.code, Exit::Fabric);
    assert!(
        r.err.contains("timed out waiting for traps: got 0 of 1"),
        "{}",
        r.err
    );
    // Arming points the trap LID at the EM.
    let opts = TrapOpts {
        arm: vec![2],
        count: Some(1),
        timeout: Some(Duration::from_millis(20)),
        ..Default::default()
    };
    c.fabric_mut().faults.trap_before_next = None;
    let r = capture(|io| commands::traps(&mut c, &opts, io));
    assert_eq!(r.code, Exit::Fabric);
    assert_eq!(c.fabric().agents[&2].class_port_info.trap_lid, 1);
    c.fabric_mut().ip_link_set_up(2, 0, false);
    let r = capture(|io| commands::traps(&mut c, &opts, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(r.out.contains("link-status-change"), "{}", r.out);
    // A timeout with no count is a normal end.
    let opts = TrapOpts {
        timeout: Some(Duration::from_millis(5)),
        ..Default::default()
    };
    let r = capture(|io| commands::traps(&mut c, &opts, io));
    assert_eq!(r.code, Exit::Ok);
}

#[test]
fn trap_in_the_middle_of_a_transaction_is_kept() {
    let mut c = client(fabric());
    applied(&mut c);
    c.fabric_mut().faults.trap_before_next = Some(3);
    c.get_vport_info(2, 0).unwrap();
    let opts = TrapOpts {
        count: Some(1),
        timeout: Some(Duration::from_millis(10)),
        json: true,
        ..Default::default()
    };
    let r = capture(|io| commands::traps(&mut c, &opts, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(r.out.contains("\"src_lid\":3"), "{}", r.out);
}

#[test]
fn set_one_off_changes() {
    let mut c = client(fabric());
    applied(&mut c);
    let before = sets(&c);
    let o = SetOpts {
        lid: 2,
        vport: Some(0),
        eth_mtu: Some(1500),
        disable: true,
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(r.out.contains("eth_mtu 9000 -> 1500"), "{}", r.out);
    assert!(
        r.out.contains("enabled forwarding -> drop-all"),
        "{}",
        r.out
    );
    assert_eq!(sets(&c), before + 1);
    assert_eq!(c.fabric().vport(2, 0).unwrap().info.vesw.eth_mtu, 1500);
    // The same again sends nothing.
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert!(r.out.contains("vesw port info unchanged"), "{}", r.out);
    assert_eq!(sets(&c), before + 1);

    // MAC table entries: add one, clear one; the digest changes, so apply
    // notices and repairs.
    let o = SetOpts {
        lid: 2,
        vport: Some(0),
        entries: vec![
            EntryArg {
                index: 7,
                mac: "02:00:00:00:00:07".parse().unwrap(),
                dlid: 0x7,
                source: false,
            },
            EntryArg {
                index: 100,
                mac: Mac::default(),
                dlid: 0,
                source: false,
            },
        ],
        json: true,
        ..Default::default()
    };
    let old_digest = c.fabric().vport(2, 0).unwrap().info.vport.mac_tbl_digest;
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let v = c.fabric().vport(2, 0).unwrap();
    let idx: Vec<u16> = v.mac_table.keys().copied().collect();
    assert_eq!(idx, vec![0, 1, 7]);
    assert_ne!(v.info.vport.mac_tbl_digest, old_digest);
    let json_start = r.out.find('{').unwrap();
    let j: serde_json::Value = serde_json::from_str(&r.out[json_start..]).unwrap();
    assert_eq!(j["mac_table"].as_array().unwrap().len(), 3);

    let r = apply(
        &mut c,
        &cfg(FABRIC),
        ApplyOpts {
            check: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Differs, "{}", r.out);
    applied(&mut c);
    let v = c.fabric().vport(2, 0).unwrap();
    assert_eq!(v.info.vport.mac_tbl_digest, old_digest);
    assert_eq!(v.info.vesw.eth_mtu, 9000);
    let idx: Vec<u16> = v.mac_table.keys().copied().collect();
    assert_eq!(idx, vec![0, 1, 100]);
}

#[test]
fn set_trap_delete_and_usage() {
    let mut c = client(fabric());
    applied(&mut c);
    let o = SetOpts {
        lid: 3,
        trap_lid: Some(0x44),
        trap_sl: Some(2),
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(
        r.out.contains("LID 0x0003: trap LID 0x44 SL 2"),
        "{}",
        r.out
    );
    let cpi = c.fabric().agents[&3].class_port_info;
    assert_eq!((cpi.trap_lid, cpi.trap_sl()), (0x44, 2));

    let o = SetOpts {
        lid: 3,
        vport: Some(1),
        delete: true,
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let v = c.fabric().vport(3, 1).unwrap();
    assert_eq!(v.info.vesw.vesw_id, 0);
    assert!(v.mac_table.is_empty());
    assert_eq!(v.info.vport.mac_tbl_digest, 0);
    // apply puts everything back, trap LID included.
    applied(&mut c);
    assert_eq!(c.fabric().vport(3, 1).unwrap().info.vesw.vesw_id, 20);
    assert_eq!(c.fabric().agents[&3].class_port_info.trap_lid, 1);

    let r = capture(|io| {
        commands::set(
            &mut c,
            &SetOpts {
                lid: 3,
                ..Default::default()
            },
            io,
        )
    });
    assert_eq!(r.code, Exit::Usage);
    let o = SetOpts {
        lid: 3,
        eth_mtu: Some(2000),
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Usage);
    assert!(r.err.contains("--vport is needed"), "{}", r.err);
    // Deleting a vport that does not exist: the agent's status.
    let o = SetOpts {
        lid: 3,
        vport: Some(9),
        delete: true,
        ..Default::default()
    };
    let r = capture(|io| commands::set(&mut c, &o, io));
    assert_eq!(r.code, Exit::Fabric);
    assert!(
        r.err
            .contains("Set delete vesw of LID 0x0003 vport 9: MAD status 0x001c"),
        "{}",
        r.err
    );
}

#[test]
fn big_mac_table_takes_several_mads() {
    let mut src = String::from("[[vesw]]\nid = 1\npkey = 0xffff\n");
    for i in 0..300u32 {
        src.push_str(&format!(
            "[[vesw.mac_table]]\nmac = \"02:00:00:00:{:02x}:{:02x}\"\ndlid = {}\n",
            i >> 8,
            i & 0xff,
            i + 0x100
        ));
    }
    src.push_str(
        "[[vport]]\nlid = 2\nvport = 3\nvesw = 1\nport_num = 1\nmac = \"02:99:00:00:00:01\"\n",
    );
    let config = cfg(&src);
    let mut c = client(fabric());
    let r = apply(&mut c, &config, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    let mac_sets = c
        .fabric()
        .log
        .iter()
        .filter(|r| r.method == METHOD_SET && r.attr_id == ATTR_VESWPORT_MAC_ENTRIES)
        .count();
    assert_eq!(mac_sets, 3, "301 entries in windows of 125");
    assert_eq!(c.fabric().vport(2, 3).unwrap().mac_table.len(), 301);
    let r = apply(
        &mut c,
        &config,
        ApplyOpts {
            check: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Ok, "{}", r.out);
    // One entry changes: one small Set.
    let before = c.fabric().log.len();
    let config2 = cfg(&src.replace("dlid = 400\n", "dlid = 999\n"));
    let r = apply(&mut c, &config2, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(
        r.out.contains("set MAC table slot 144 (1 changed)"),
        "{}",
        r.out
    );
    assert_eq!(
        c.fabric().log[before..]
            .iter()
            .filter(|r| r.method == METHOD_SET)
            .count(),
        1
    );
}

#[test]
fn sample_config_applies_and_reapplies_cleanly() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../samples/opa/vnic-em/fabric.toml"
    );
    let config = vnic_em::config::load(path).unwrap();
    let mut f = FakeFabric::new(EM_LID);
    f.add_node(1, 1).add_node(2, 1);
    let mut c = client(f);
    let r = apply(
        &mut c,
        &config,
        ApplyOpts {
            dry_run: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.out.contains("8 Set(s) to send"), "{}", r.out);
    assert!(
        r.out.contains(
            "LID 0x0001 vport 0 [vesw 1 tenant-a]: set MAC table slots 0..=2 (3 changed)"
        ),
        "{}",
        r.out
    );
    let r = apply(&mut c, &config, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.out.contains("applied 8 of 8 Set(s)"), "{}", r.out);
    let r = apply(
        &mut c,
        &config,
        ApplyOpts {
            check: true,
            ..Default::default()
        },
    );
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.out.contains("nothing to do"), "{}", r.out);
    let v = c.fabric().vport(2, 0).unwrap();
    assert_eq!(v.info.vport.pcp_to_sc_uc, [0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(v.mac_table[&0].mac_addr, [2, 0xa0, 0, 0, 0, 0x10]);
}

#[test]
fn raw_prints_status_and_data() {
    let mut c = client(fabric());
    let raw = |attr_id, attr_mod, data: &[u8]| RawReq {
        lid: 2,
        attr_id,
        attr_mod,
        data: data.to_vec(),
        ..RawReq::default()
    };
    // Get ClassPortInfo: status 0, base and class version 0x80, cap_mask 0xff01, resp time 18.
    let r = capture(|io| commands::raw(&mut c, &raw(0x0001, 0, &[]), io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert_eq!(r.out, "status 0x0000\ndata 8080ff0100000012\n");
    // MAC entries of a vport that does not exist: the agent's status, no data.
    let r = capture(|io| commands::raw(&mut c, &raw(0x0012, 9, &[0; 8]), io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert_eq!(r.out, "status 0x001c\ndata \n");
    // No such node: a fabric error.
    let r = capture(|io| {
        commands::raw(
            &mut c,
            &RawReq {
                lid: 9,
                ..raw(0x0001, 0, &[])
            },
            io,
        )
    });
    assert_eq!(r.code, Exit::Fabric);
}
