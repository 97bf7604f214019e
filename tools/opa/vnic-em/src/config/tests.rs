// SPDX-License-Identifier: GPL-2.0

//! Tests of the config: parsing, every check, the MAC tables.

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
pcp_vl_uc = [0, 1, 2, 3, 4, 5, 6, 7]
non_vlan_sc_mc = 3
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
fn empty_file_is_an_error() {
    assert_eq!(
        one_err(""),
        "1:1: no [[vesw]] and no [[vport]]: the file configures nothing"
    );
    assert!(one_err("# nothing\n").contains("configures nothing"));
    assert!(parse(VESW).is_ok());
}

#[test]
fn vesw_pkeys_and_table_macs() {
    for (k, what) in [
        ("0x1", "lacks the full-member bit 0x8000"),
        ("0x7fff", "management partition"),
        ("0xffff", "management partition"),
    ] {
        let e = one_err(&format!("[[vesw]]\nid = 1\npkey = {k}\n"));
        assert!(e.starts_with("3:8: pkey") && e.contains(what), "{e}");
    }
    let e = one_err(&format!(
        "{VESW}[[vesw.mac_table]]\nmac = \"ff:ff:ff:ff:ff:ff\"\ndlid = 1\n"
    ));
    assert!(
        e.starts_with("5:7: MAC table entry: ff:ff:ff:ff:ff:ff is the broadcast"),
        "{e}"
    );
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
    assert!(
        e.contains("unknown key `mtu` in [[vesw]] (its keys: id, name,"),
        "{e}"
    );
    let e = one_err("[bogus]\nx = 1\n");
    assert!(e.starts_with("1:"), "{e}");
    let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nrouting_control = { ipv5 = 1 }\n");
    assert!(e.starts_with("4:"), "{e}");
}

#[test]
fn missing_and_mistyped_fields() {
    let e = one_err("[[vesw]]\nid = 1\n");
    assert_eq!(e, "1:1: [[vesw]] needs `pkey`");
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
        e.starts_with("2:6: vesw id must be from 0x0 to 0xfff (got 4096)"),
        "{e}"
    );
    let e = one_err("[[vesw]]\nid = 1\npkey = 0x8000\n");
    assert!(e.starts_with("3:8: pkey 0x8000 has no key part"), "{e}");
    let e = one_err("[[vesw]]\nid = 1\npkey = 0\n");
    assert!(e.contains("no key part"), "{e}");
    let e = one_err("[[vesw]]\nid = 1\npkey = 0x18001\n");
    assert!(
        e.contains("pkey must be from 0x0 to 0xffff (got 0x18001)"),
        "{e}"
    );
    let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\neth_mtu = 20000\n");
    assert!(
        e.starts_with("4:11: eth_mtu must be from 68 to 16333 (got 20000)"),
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
    let e = one_err(&format!(
        "{VESW}[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:01\"\n"
    ));
    assert!(e.starts_with("9:7: vport mac: invalid MAC address"), "{e}");
    let e = one_err(&format!("{VESW}[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"01:00:5e:00:00:01\"\n"));
    assert!(e.contains("is a multicast address"), "{e}");
    let e = one_err(&format!("{VESW}[[vport]]\nlid = 0xc000\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n"));
    assert!(
        e.starts_with("5:7: vport lid must be from 0x1 to 0xbfff (got 0xc000)"),
        "{e}"
    );
    let e = one_err(&format!("{VESW}[[vport]]\nlid = 2\nvport = 255\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n"));
    assert!(e.contains("vport number must be from 0 to 254"), "{e}");
    let e = one_err(&vport("pcp_sc_uc = [1, 2]\n"));
    assert!(e.starts_with("10:13: pcp_sc_uc must list 8 values"), "{e}");
    let e = one_err(&vport("pcp_vl_mc = [1, 2, 3, 4, 5, 6, 7, 32]\n"));
    assert!(
        e.starts_with("10:35: pcp_vl_mc must be from 0 to 31"),
        "{e}"
    );
    let e = one_err(&vport("encap_slid = 0x1000000\n"));
    assert!(e.contains("encap_slid"), "{e}");
}

#[test]
fn vesw_field_errors() {
    let e = one_err(
        "[[vesw]]\nid = 1\npkey = 0x8001\nunknown_ucast_dlids = [1]\ndefault_ports = [1]\n",
    );
    assert!(
        e.starts_with("5:18: default port (index into unknown_ucast_dlids) must be from 0 to 0"),
        "{e}"
    );
    let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\ndefault_ports = [0]\n");
    assert!(e.contains("unknown_ucast_dlids is empty"), "{e}");
    let e = one_err(
        "[[vesw]]\nid = 1\npkey = 0x8001\nunknown_ucast_dlids = [1, 2]\ndefault_ports = [1, 1]\n",
    );
    assert!(e.contains("default port 1 listed twice"), "{e}");
    let list: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
    let e = one_err(&format!(
        "[[vesw]]\nid = 1\npkey = 0x8001\nunknown_ucast_dlids = [{}]\n",
        list.join(", ")
    ));
    assert!(e.contains("at most 16"), "{e}");
    let e = one_err("[[vesw]]\nid = 1\npkey = 0x8001\nrouting_control = { ipv4 = 8 }\n");
    assert!(
        e.starts_with("4:28: routing_control.ipv4 must be from 0 to 7"),
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
    assert!(
        e.contains("fabric_id must be from 0x0 to 0x3ff (got 0x400)"),
        "{e}"
    );
}

#[test]
fn mac_table_errors() {
    let t = |body: &str| format!("{VESW}[[vesw.mac_table]]\n{body}\n");
    let e = one_err(&t("mac = \"00:00:00:00:00:00\"\ndlid = 1"));
    assert!(e.contains("all-zero MAC"), "{e}");
    let e = one_err(&t("mac = \"02:00:00:00:00:09\"\ndlid = 0"));
    assert!(e.starts_with("6:8: MAC table DLID"), "{e}");
    let e = one_err(&t("mac = \"02:00:00:00:00:09\"\ndlid = 1\nindex = 2048"));
    assert!(e.contains("MAC table index must be from 0 to 2047"), "{e}");
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
    assert!(e.contains("unknown key `who` in [[vesw.mac_table]]"), "{e}");
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
