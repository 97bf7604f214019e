// SPDX-License-Identifier: GPL-2.0

//! The output for monitoring, against the in-memory fabric: `counters
//! --prometheus` (and `--output FILE`), and the field names of `show
//! --json` and `counters --json`, which Documentation/infiniband/vnic-em.rst
//! lists and scripts rely on.

mod common;

use common::{capture, FABRIC};

use vnic_em::client::Client;
use vnic_em::commands::{self, CountersFormat, CountersOpts, Select};
use vnic_em::config::parse;
use vnic_em::error::Exit;
use vnic_em::fake::FakeFabric;

fn applied() -> Client<FakeFabric> {
    let mut c = common::client(50);
    let cfg = parse(FABRIC).unwrap();
    common::apply_ok(&mut c, &cfg);
    let v = c.fabric_mut().vport_mut(2, 0).unwrap();
    v.summary.rx_packets = 123;
    v.summary.tx_bytes = 1 << 40;
    v.errors.tx_dlid_zero = 7;
    c
}

fn prom(c: &mut Client<FakeFabric>, sel: &Select, output: Option<std::path::PathBuf>) -> String {
    let opts = CountersOpts {
        format: CountersFormat::Prometheus,
        output,
    };
    let r = capture(|io| commands::counters_with(c, None, sel, &opts, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    r.out
}

#[test]
fn counters_in_the_prometheus_text_format() {
    let mut c = applied();
    let sel = Select {
        lids: vec![2, 3],
        scan: 2,
        ..Select::default()
    };
    let t = prom(&mut c, &sel, None);
    assert!(
        t.contains(
            "# TYPE opa_vnic_vport_rx_packets_total counter\n\
             opa_vnic_vport_rx_packets_total{lid=\"0x0002\",vport=\"0\",vesw=\"10\",\
             mac=\"02:00:00:00:02:00\"} 123\n\
             opa_vnic_vport_rx_packets_total{lid=\"0x0003\",vport=\"0\",vesw=\"10\",\
             mac=\"02:00:00:00:03:00\"} 0\n"
        ),
        "{t}"
    );
    assert!(t.contains("vesw=\"10\",mac=\"02:00:00:00:02:00\"} 1099511627776\n"));
    assert!(t.contains("opa_vnic_vport_tx_dlid_zero_total{lid=\"0x0002\""));
    // HELP and TYPE once per family, before its samples.
    let mut seen = std::collections::HashSet::new();
    let mut current = String::new();
    for l in t.lines() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(seen.insert(name.clone()), "{name} twice");
            current = name;
        } else if !l.starts_with('#') {
            assert!(
                l.starts_with(&format!("{current}{{")) || l.starts_with(&current),
                "{l}"
            );
        }
    }
    assert_eq!(seen.len(), 28 + 10 + 1, "{seen:?}");
    assert!(t.ends_with("opa_vnic_em_read_errors 0\n"));

    // A vport that cannot be read is counted, the others still written.
    let sel = Select {
        lids: vec![2],
        vports: vec![0, 9],
        ..Select::default()
    };
    let opts = CountersOpts {
        format: CountersFormat::Prometheus,
        output: None,
    };
    let r = capture(|io| commands::counters_with(&mut c, None, &sel, &opts, io));
    assert_eq!(r.code, Exit::Fabric);
    assert!(r
        .out
        .contains("opa_vnic_vport_rx_packets_total{lid=\"0x0002\",vport=\"0\""));
    assert!(r.out.ends_with("opa_vnic_em_read_errors 1\n"), "{}", r.out);
}

#[test]
fn output_file_is_replaced_whole() {
    let mut c = applied();
    let dir = std::env::temp_dir().join(format!("vnic-em-monitor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("vnic.prom");
    std::fs::write(&file, "old\n").unwrap();
    let sel = Select {
        lids: vec![2],
        vports: vec![0],
        ..Select::default()
    };
    let out = prom(&mut c, &sel, Some(file.clone()));
    assert!(out.is_empty(), "{out}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written, prom(&mut c, &sel, None));
    // Nothing else is left in the directory (the temporary file is gone).
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("vnic.prom")]);
    // A directory that does not exist: a local error, exit 4.
    let opts = CountersOpts {
        format: CountersFormat::Json,
        output: Some(dir.join("no/such/dir/x.json")),
    };
    let r = capture(|io| commands::counters_with(&mut c, None, &sel, &opts, io));
    assert_eq!(r.code, Exit::Device, "{}", r.err);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The keys of a JSON object, sorted.
fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn json_field_names_are_the_documented_ones() {
    let mut c = applied();
    let sel = Select {
        lids: vec![2],
        vports: vec![0],
        ..Select::default()
    };
    let r = capture(|io| commands::show(&mut c, None, &sel, true, true, io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let j: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    let mut want = vec![
        "lid",
        "vport",
        "exists",
        "vesw",
        "port_num",
        "mac",
        "enabled",
        "config_state",
        "oper_state",
        "eth_link_status",
        "encap_slid",
        "pcp_sc_uc",
        "pcp_vl_uc",
        "pcp_sc_mc",
        "pcp_vl_mc",
        "non_vlan_sc_uc",
        "non_vlan_vl_uc",
        "non_vlan_sc_mc",
        "non_vlan_vl_mc",
        "max_mac_tbl_ent",
        "max_smac_ent",
        "mac_tbl_digest",
        "uc_macs_gen_count",
        "mc_macs_gen_count",
        "mac_table",
        "iface_ucast_macs",
        "iface_mcast_macs",
        "summary_counters",
        "error_counters",
    ];
    want.sort_unstable();
    assert_eq!(keys(&j[0]), want);
    let mut want = vec![
        "id",
        "fabric_id",
        "pkey",
        "eth_mtu",
        "unknown_ucast_dlids",
        "default_ports",
        "unknown_mcast_dlid",
        "routing_control",
    ];
    want.sort_unstable();
    assert_eq!(keys(&j[0]["vesw"]), want);
    let mut want = vec!["index", "mac", "mask", "dlid", "source"];
    want.sort_unstable();
    assert_eq!(keys(&j[0]["mac_table"][0]), want);

    let r = capture(|io| commands::counters(&mut c, None, &sel, true, io));
    let j: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(keys(&j[0]), vec!["errors", "lid", "summary", "vport"]);
    assert_eq!(j[0]["summary"].as_object().unwrap().len(), 31);
    assert_eq!(j[0]["errors"].as_object().unwrap().len(), 15);
}
