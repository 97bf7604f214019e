// SPDX-License-Identifier: GPL-2.0

//! `apply`: idempotence, minimal diffs, the dry run and the plan, dropped and stale
//! responses, MAD status codes, and MAC tables over several MADs.

use super::*;

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
    let r = common::check(&mut c, &cfg(FABRIC));
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert_eq!(sets(&c), before_sets);
}

#[test]
fn changed_file_sends_only_the_difference() {
    let mut c = client(fabric());
    applied(&mut c);
    let before = c.fabric().log.len();
    let before_sets = sets(&c);
    // A new MTU for blue and a new MAC for LID 3 vport 0.
    let changed = FABRIC
        .replace("pkey = 0x8020\n", "pkey = 0x8020\neth_mtu = 4000\n")
        .replace("02:00:00:00:03:00", "02:00:00:00:03:99");
    let cfg2 = cfg(&changed);

    let r = common::check(&mut c, &cfg2);
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
    assert_eq!(sets(&c), before_sets, "the dry run sent a Set");

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
    let r = common::check(&mut c, &cfg2);
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

#[test]
fn big_mac_table_takes_several_mads() {
    let mut src = String::from("[[vesw]]\nid = 1\npkey = 0x8001\n");
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
    let r = common::check(&mut c, &config);
    assert_eq!(r.code, Exit::Ok, "{}", r.out);
    // One entry changes: one small Set.
    let before = sets(&c);
    let config2 = cfg(&src.replace("dlid = 400\n", "dlid = 999\n"));
    let r = apply(&mut c, &config2, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(
        r.out.contains("set MAC table slot 144 (1 changed)"),
        "{}",
        r.out
    );
    assert_eq!(sets(&c), before + 1);
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
            "LID 0x0001 vport 0 [vesw 1 tenant-a]: set MAC table slots 0 to 2 (3 changed)"
        ),
        "{}",
        r.out
    );
    let r = apply(&mut c, &config, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.out.contains("applied 8 of 8 Set(s)"), "{}", r.out);
    let r = common::check(&mut c, &config);
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(r.out.contains("nothing to do"), "{}", r.out);
    let v = c.fabric().vport(2, 0).unwrap();
    assert_eq!(v.info.vport.pcp_to_sc_uc, [0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(v.mac_table[&0].mac_addr, [2, 0xa0, 0, 0, 0, 0x10]);
}
