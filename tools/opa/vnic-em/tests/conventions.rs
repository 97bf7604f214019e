// SPDX-License-Identifier: GPL-2.0

//! The conventions of the command line: -v is --verbose; the port picked
//! as opa-ff's tools (-h HFI -p PORT) and infiniband-diags (-C CA -P
//! PORT) pick it; --json/-j wherever a command prints; milliseconds for
//! every time; a command's --help lists only its own options; old
//! spellings work for one release with a warning. No fabric: a fake sysfs
//! tree with one port and no device node, so that a command gets as far as
//! picking its port.

use std::path::PathBuf;
mod bin;
use bin::{text, vnic_em};

use opa_umad::fake_sysfs::{add_port, tmp_root, write_abi_version};

fn sample() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../samples/opa/vnic-em/fabric.toml")
        .to_string_lossy()
        .into_owned()
}

/// A tree with umad0, port 1 of hfi1_0, and no device node: a command
/// that picks it fails to open it (exit 4).
fn root(name: &str) -> String {
    let r = tmp_root(&format!("conv-{name}"));
    write_abi_version(&r, "5");
    add_port(&r, "umad0", "hfi1_0", 1, "0x1", "4: ACTIVE");
    r.to_string_lossy().into_owned()
}

#[test]
fn the_port_is_picked_as_opa_ff_and_infiniband_diags_pick_it() {
    let r = root("port");
    for pick in [
        &["-h", "mlx5_0"][..],
        &["-C", "mlx5_0"][..],
        &["--hfi", "mlx5_0"][..],
        &["--hca", "mlx5_0"][..],
    ] {
        // Before and after the command.
        for before in [true, false] {
            let mut a: Vec<&str> = Vec::new();
            if before {
                a.extend(pick);
            }
            a.extend(["show", "-l", "2", "--sysroot", &r]);
            if !before {
                a.extend(pick);
            }
            let o = vnic_em(&a);
            assert_eq!(o.status.code(), Some(4), "{a:?}: {}", text(&o.stderr));
            assert!(
                text(&o.stderr).contains("no umad device for mlx5_0: the umad devices are umad0"),
                "{a:?}: {}",
                text(&o.stderr)
            );
        }
    }
    for pick in [&["-p", "3"][..], &["-P", "3"][..], &["--port", "3"][..]] {
        let mut a = vec!["counters", "-l", "2", "--sysroot", &r];
        a.extend(pick);
        let o = vnic_em(&a);
        assert!(
            text(&o.stderr).contains("no umad device for any device port 3"),
            "{a:?}: {}",
            text(&o.stderr)
        );
    }
    // The port found: only its device node is missing.
    let o = vnic_em(&[
        "set",
        "-l",
        "2",
        "--vport",
        "0",
        "--enable",
        "-h",
        "hfi1_0",
        "-p",
        "1",
        "--sysroot",
        &r,
    ]);
    assert!(
        text(&o.stderr).contains("cannot open "),
        "{}",
        text(&o.stderr)
    );
    // --help alone is help, -h is the HFI.
    let o = vnic_em(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o.stdout).contains("-h, --hfi <NAME>"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn v_is_verbose_and_the_old_vport_spelling_warns() {
    let r = root("verbose");
    let o = vnic_em(&["-v", "apply", "--dry-run", &sample(), "--sysroot", &r]);
    let e = text(&o.stderr);
    assert!(e.contains("fabric.toml: 2 vesw(s), 3 vport(s)"), "{e}");
    let o = vnic_em(&["show", "-l", "2", "-v", "--sysroot", &r]);
    assert!(
        text(&o.stderr).contains("cannot open"),
        "{}",
        text(&o.stderr)
    );
    assert!(!text(&o.stderr).contains("deprecated"));
    for old in [&["-v", "0"][..], &["-v0"][..]] {
        let mut a = vec!["set", "-l", "2", "--enable", "--sysroot", &r];
        a.extend(old);
        let o = vnic_em(&a);
        let e = text(&o.stderr);
        // Taken as the vport, as before: on to the device.
        assert_eq!(o.status.code(), Some(4), "{a:?}: {e}");
        assert!(
            e.contains("warning: `-v 0` is deprecated")
                || e.contains("warning: `-v0` is deprecated"),
            "{e}"
        );
        assert!(
            e.contains("write `--vport 0` (-v now means --verbose)"),
            "{e}"
        );
    }
}

#[test]
fn json_wherever_a_command_prints() {
    for cmd in [
        "apply", "discover", "validate", "show", "counters", "traps", "set", "raw",
    ] {
        let o = vnic_em(&[cmd, "--help"]);
        assert!(
            text(&o.stdout).contains("-j, --json"),
            "{cmd}: {}",
            text(&o.stdout)
        );
    }
    let o = vnic_em(&["validate", "-j", &sample()]);
    assert_eq!(o.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (j["ok"].clone(), j["vports"].clone()),
        (true.into(), 3.into())
    );
    let bad = std::env::temp_dir().join(format!("vnic-em-conv-{}-bad.toml", std::process::id()));
    std::fs::write(&bad, "[[vesw]]\nid = 1\n").unwrap();
    let o = vnic_em(&["validate", "--json", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["ok"], false);
    assert!(j["errors"][0]
        .as_str()
        .unwrap()
        .ends_with(":1:1: error: [[vesw]] needs `pkey`"));
    let _ = std::fs::remove_file(bad);
}

#[test]
fn times_are_milliseconds_and_the_old_seconds_warn() {
    let r = root("times");
    let o = vnic_em(&["traps", "--help"]);
    let h = text(&o.stdout);
    assert!(h.contains("--wait-ms <MS>") && !h.contains("SECS"), "{h}");
    let o = vnic_em(&["watch", "--help"]);
    let h = text(&o.stdout);
    assert!(
        h.contains("--interval-ms <MS>") && !h.contains("SECS"),
        "{h}"
    );
    let o = vnic_em(&["traps", "--wait-ms", "1500", "--sysroot", &r]);
    assert_eq!(o.status.code(), Some(4));
    assert!(!text(&o.stderr).contains("deprecated"));
    let o = vnic_em(&["traps", "--timeout", "1.5", "--sysroot", &r]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains(
            "`--timeout 1.5` is deprecated and goes in the next release: write `--wait-ms 1500`"
        ),
        "{}",
        text(&o.stderr)
    );
    let o = vnic_em(&["watch", "-c", &sample(), "--interval", "5", "--sysroot", &r]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stderr).contains("write `--interval-ms 5000`"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_commands_help_lists_only_its_options() {
    let v = text(&vnic_em(&["validate", "--help"]).stdout);
    for opt in [
        "--umad",
        "--hfi",
        "--port",
        "--timeout-ms",
        "--retries",
        "--mad-size",
        "--sl",
    ] {
        assert!(!v.contains(opt), "validate --help lists {opt}: {v}");
    }
    let s = text(&vnic_em(&["show", "--help"]).stdout);
    for opt in ["--umad", "--hfi", "--port", "--timeout-ms", "--vport"] {
        assert!(s.contains(opt), "show --help lacks {opt}: {s}");
    }
    // Port options after validate are not its own.
    let o = vnic_em(&["validate", "-d", "umad0", &sample()]);
    assert_eq!(o.status.code(), Some(1));
    // The man pages are generated from the same definitions.
    let dir = std::env::temp_dir().join(format!("vnic-em-conv-{}-docs", std::process::id()));
    let o = vnic_em(&["gen-docs", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let man = |p: &str| std::fs::read_to_string(dir.join("man").join(p)).unwrap();
    assert!(!man("vnic-em-validate.1").contains("\\-\\-umad"));
    assert!(man("vnic-em-show.1").contains("\\-\\-hfi"));
    assert!(man("vnic-em-traps.1").contains("\\-\\-wait\\-ms"));
    let _ = std::fs::remove_dir_all(dir);
}
