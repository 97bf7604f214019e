// SPDX-License-Identifier: GPL-2.0

//! Traps: the agents' MAC change traps, the trap LID they need, and a trap in the middle
//! of a transaction.

use super::*;

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
