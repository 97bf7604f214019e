// SPDX-License-Identifier: GPL-2.0

//! What `validate` (and every command that reads a config) refuses, and
//! how it says so: the binary run on small files, no fabric needed.

use std::path::PathBuf;
mod bin;
use bin::{text, vnic_em};

/// A file of its own for each test (they run at once).
fn tmp_file(name: &str, body: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("vnic-em-validate-{}-{name}", std::process::id()));
    std::fs::write(&p, body).unwrap();
    p
}

/// `validate` of `body`: the exit code and standard error, the file's
/// path replaced by `F`.
fn validate(name: &str, body: &str) -> (Option<i32>, String) {
    let f = tmp_file(name, body);
    let path = f.to_str().unwrap().to_string();
    let o = vnic_em(&["validate", &path]);
    let _ = std::fs::remove_file(&f);
    (o.status.code(), text(&o.stderr).replace(&path, "F"))
}

const VPORT: &str =
    "\n[[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n";

#[test]
fn vesw_pkeys_must_be_full_members_outside_the_management_partition() {
    for (pkey, want) in [
        (
            "0x0001",
            "F:3:8: error: pkey 0x0001 lacks the full-member bit 0x8000",
        ),
        (
            "0xffff",
            "F:3:8: error: pkey 0xffff is the management partition's key",
        ),
        (
            "0x7fff",
            "F:3:8: error: pkey 0x7fff is the management partition's key",
        ),
    ] {
        let (code, err) = validate(
            "pkey.toml",
            &format!("[[vesw]]\nid = 1\npkey = {pkey}\n{VPORT}"),
        );
        assert_eq!(code, Some(1), "{pkey}: {err}");
        assert!(err.contains(want), "{pkey}: {err}");
    }
    let o = vnic_em(&["set", "-l", "2", "--vport", "0", "--pkey", "0x7fff"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("management partition"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn mac_table_entries_must_be_unicast() {
    for mac in ["ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01"] {
        let (code, err) = validate(
            "table.toml",
            &format!("[[vesw]]\nid = 1\npkey = 0x8001\n[[vesw.mac_table]]\nmac = \"{mac}\"\ndlid = 5\n{VPORT}"),
        );
        assert_eq!(code, Some(1), "{mac}: {err}");
        assert!(
            err.contains(&format!("F:5:7: error: MAC table entry: {mac} is")),
            "{err}"
        );
    }
}

#[test]
fn an_empty_file_is_an_error() {
    for body in ["", "# nothing yet\n", "[em]\nfabric_id = 1\n"] {
        let (code, err) = validate("empty.toml", body);
        assert_eq!(code, Some(1), "{body:?}: {err}");
        assert!(err.contains("no [[vesw]] and no [[vport]]"), "{err}");
    }
}

#[test]
fn set_mac_is_checked_as_the_file_is() {
    for (opt, val) in [
        ("--mac", "01:00:5e:00:00:01"),
        ("--mac", "ff:ff:ff:ff:ff:ff"),
        ("--mac-entry", "3=01:00:5e:00:00:01,5"),
    ] {
        let o = vnic_em(&["set", "-l", "2", "--vport", "0", opt, val]);
        assert_eq!(o.status.code(), Some(1), "{opt} {val}");
        let e = text(&o.stderr);
        assert!(e.contains("give a unicast address"), "{opt} {val}: {e}");
    }
    let (_, err) = validate(
        "vport-mac.toml",
        &format!(
            "[[vesw]]\nid = 1\npkey = 0x8001\n{}",
            VPORT.replace("02:00:00:00:00:01", "01:00:5e:00:00:01")
        ),
    );
    assert!(
        err.contains("vport mac: 01:00:5e:00:00:01 is a multicast address"),
        "{err}"
    );
}

/// Words of serde and of Rust that meant nothing to an admin.
const NOT_FOR_USERS: [&str; 8] = [
    "invalid type",
    "expected i64",
    "map",
    "sequence",
    "..=",
    "unknown field",
    "missing field",
    "expected one of",
];

fn no_serde_words(err: &str) {
    for w in NOT_FOR_USERS {
        assert!(!err.contains(w), "{w:?} in {err}");
    }
}

#[test]
fn every_error_of_a_file_at_once_each_at_its_place() {
    let body = "[[vesw]]\nid = \"one\"\npkey = 0x0001\neth_mtu = 20000\n\
                unknown_mcast_dlidd = 5\n[vport]\nlid = 2\nbad line\n";
    let (code, err) = validate("all.toml", body);
    assert_eq!(code, Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    let want = [
        "F:2:6: error: `id` must be an integer (decimal or 0x hex), not a string",
        "F:3:8: error: pkey 0x0001 lacks the full-member bit 0x8000",
        "F:4:11: error: eth_mtu must be from 68 to 16333 (got 20000)",
        "F:5:1: error: unknown key `unknown_mcast_dlidd` in [[vesw]]: did you mean `unknown_mcast_dlid`?",
        "F:6:1: error: `vport` must be an array of tables: write [[vport]]",
        "F:8:5: error: key with no value, expected `=`",
    ];
    assert_eq!(lines.len(), want.len(), "{err}");
    for (l, w) in lines.iter().zip(want) {
        assert!(l.starts_with(w), "{l:?} is not {w:?}:\n{err}");
    }
    no_serde_words(&err);
}

#[test]
fn messages_are_in_the_files_words() {
    let vesw = "[[vesw]]\nid = 1\npkey = 0x8001\n";
    for (body, want) in [
        (
            format!("{vesw}[vport]\nlid = 2\n"),
            "F:4:1: error: `vport` must be an array of tables: write [[vport]]",
        ),
        (
            format!("[vesw]\nid = 1\npkey = 0x8001\n{VPORT}"),
            "F:1:1: error: `vesw` must be an array of tables: write [[vesw]]",
        ),
        (
            format!("{vesw}mac_table = 3\n{VPORT}"),
            "F:4:13: error: `mac_table` must be an array of tables: write [[vesw.mac_table]]",
        ),
        (
            format!("[[vesw]]\nid = 4096\npkey = 0x8001\n{VPORT}"),
            "F:2:6: error: vesw id must be from 0x0 to 0xfff (got 4096)",
        ),
        (
            format!("{vesw}mac_table_from_vports = 1\n{VPORT}"),
            "F:4:25: error: `mac_table_from_vports` must be true or false, not an integer",
        ),
        (
            format!("[[vesw]]\nid = 1\n{VPORT}"),
            "F:1:1: error: [[vesw]] needs `pkey`",
        ),
        (
            format!("[emm]\n{vesw}{VPORT}"),
            "F:1:2: error: unknown key `emm` in the file: did you mean `em`?",
        ),
    ] {
        let (code, err) = validate("words.toml", &body);
        assert_eq!(code, Some(1), "{body}: {err}");
        assert!(err.contains(want), "{body}\nwant {want}\ngot {err}");
        no_serde_words(&err);
    }
}

#[test]
fn values_are_echoed_as_written() {
    let (_, err) = validate("echo.toml", &format!("[[vesw]]\nid = 1\npkey = 1\n{VPORT}"));
    assert!(
        err.contains("F:3:8: error: pkey 1 lacks the full-member bit 0x8000"),
        "{err}"
    );
    let (_, err) = validate(
        "echo2.toml",
        &format!(
            "[[vesw]]\nid = 1\npkey = 0x8001\n{}",
            VPORT.replace("vesw = 1", "vesw = 0x10")
        ),
    );
    assert!(
        err.contains("error: vesw 0x10 is not defined (add a [[vesw]] with id = 0x10)"),
        "{err}"
    );
}
