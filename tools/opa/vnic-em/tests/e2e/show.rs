// SPDX-License-Identifier: GPL-2.0

//! `show` and `counters`: what the agents hold, field by field, scanned and filtered.

use super::*;

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
