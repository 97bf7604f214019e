// SPDX-License-Identifier: GPL-2.0

//! The binary: exit codes, help, config errors with line numbers, and
//! the sample config. No fabric is needed: the umad device is looked up
//! under an empty sysfs root.

use std::path::PathBuf;
mod bin;
use bin::{text, vnic_em};
use std::process::Command;

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../samples/opa/vnic-em/fabric.toml")
}

fn tmp_file(name: &str, body: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("vnic-em-cli-{}-{name}", std::process::id()));
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn help_lists_exit_codes() {
    let o = vnic_em(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let s = text(&o.stdout);
    assert!(s.contains("Exit codes:"), "{s}");
    assert!(s.contains("3  partial apply"), "{s}");
    for cmd in [
        "apply", "show", "counters", "traps", "watch", "set", "validate",
    ] {
        let o = vnic_em(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{cmd}");
        assert!(text(&o.stdout).contains("Exit codes:"), "{cmd}");
    }
    let o = vnic_em(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn mad_size_and_len_options() {
    let o = vnic_em(&["--help"]);
    let s = text(&o.stdout);
    assert!(s.contains("--mad-size <SIZE>"), "{s}");
    assert!(s.contains("(default: full)"), "{s}");
    let o = vnic_em(&["raw", "--help"]);
    let s = text(&o.stdout);
    assert!(
        s.contains("trimmed") && s.contains("as opa-fm sends them"),
        "{s}"
    );
    assert!(s.contains("--len <N>"), "{s}");
    for (args, msg) in [
        (
            &["--mad-size", "half", "show", "-l", "2"][..],
            "invalid value 'half'",
        ),
        (
            &["raw", "-l", "2", "--attr", "1", "--len", "23"][..],
            "a MAD of 23 bytes: it must hold the 24-byte MAD header and fit in 2048 bytes",
        ),
        (
            &["raw", "-l", "2", "--attr", "1", "--len", "2049"][..],
            "fit in 2048 bytes",
        ),
        (
            &["raw", "-l", "2", "--attr", "1", "--len", "x"][..],
            "is not a number",
        ),
    ] {
        let o = vnic_em(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            text(&o.stderr).contains(msg),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
}

#[test]
fn usage_errors_exit_1() {
    for args in [
        &["show", "--bogus"][..],
        &[][..],
        &["set", "--lid", "0"][..],
        &["set", "--lid", "2", "--vport", "0", "--pkey", "0x8000"][..],
        &["set", "--lid", "2", "--vport", "0", "--eth-mtu", "20000"][..],
        &["set", "--lid", "2", "--vport", "0", "--mac", "zz"][..],
        &[
            "set",
            "--lid",
            "2",
            "--vport",
            "0",
            "--mac-entry",
            "3=02:00:00:00:00:01",
        ][..],
        &["set", "--lid", "2", "--vport", "0", "--enable", "--disable"][..],
        &["traps", "--timeout", "-1"][..],
        &["apply"][..],
        &["watch"][..],
        &["watch", "-c", "x.toml", "--interval", "0"][..],
        &["watch", "-c", "x.toml", "--interval", "soon"][..],
    ] {
        let o = vnic_em(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
    }
}

#[test]
fn sample_config_is_valid() {
    let o = vnic_em(&["validate", sample().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("ok (2 vesw(s), 3 vport(s))"));
}

#[test]
fn config_errors_have_line_numbers_and_nothing_is_sent() {
    let bad = tmp_file(
        "bad.toml",
        "[[vesw]]\nid = 1\npkey = 0x8000\n\n[[vport]]\nlid = 2\nvport = 0\nvesw = 3\nport_num = 1\nmac = \"02:00:00:00:00:01\"\n",
    );
    let path = bad.to_str().unwrap();
    let o = vnic_em(&["validate", path]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains(&format!("{path}:3:8: error: pkey 0x8000 has no key part")),
        "{e}"
    );
    assert!(
        e.contains(&format!("{path}:8:8: error: vesw 3 is not defined")),
        "{e}"
    );
    // apply and watch check the file before they look for a device.
    let o = vnic_em(&["apply", path, "--sysroot", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(1));
    let o = vnic_em(&["watch", "-c", path, "--sysroot", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("error: vesw 3 is not defined"));
    let o = vnic_em(&["validate", "/nonexistent/x.toml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("cannot read"));
    let _ = std::fs::remove_file(bad);
}

#[test]
fn sc_vl_pairs_are_checked_and_warnings_do_not_stop() {
    // Before the check, validate said "ok" and hfi1 dropped every frame.
    let vport = "[[vesw]]\nid = 1\npkey = 0x8001\n\n[[vport]]\nlid = 2\nvport = 0\nvesw = 1\n\
                 port_num = 1\nmac = \"02:00:00:00:00:01\"\nnon_vlan_sc_uc = 5\n";
    let bad = tmp_file("sc.toml", vport);
    let path = bad.to_str().unwrap();
    let o = vnic_em(&["validate", path]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(
        e.contains(&format!(
            "{path}:11:18: error: non_vlan_sc_uc = 5 with non_vlan_vl_uc = 0: the SC-to-VL \
             table maps SC5 to VL5"
        )),
        "{e}"
    );
    let o = vnic_em(&["apply", path, "--sysroot", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(1));
    // Declared by the admin, the fabric's table is the one that counts;
    // a node with two vesws equal modulo 256 is a warning.
    let ok = tmp_file(
        "sc-ok.toml",
        &format!(
            "[em]\nsc2vl = \"5:0\"\n{vport}\n[[vesw]]\nid = 0x101\npkey = 0x8002\n\n\
             [[vport]]\nlid = 2\nvport = 1\nvesw = 0x101\nport_num = 1\n\
             mac = \"02:00:00:00:00:02\"\n"
        ),
    );
    let path = ok.to_str().unwrap();
    let o = vnic_em(&["validate", path]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("ok (2 vesw(s), 2 vport(s), 1 warning(s))"));
    let e = text(&o.stderr);
    assert!(
        e.contains(&format!(
            "{path}:22:8: warning: vesw 257 (0x101) and vesw 1 (0x1, line 10)"
        )),
        "{e}"
    );
    // apply goes on after a warning (to the missing device here).
    let o = vnic_em(&["apply", path, "--sysroot", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("warning: vesw 257"));
    let _ = std::fs::remove_file(bad);
    let _ = std::fs::remove_file(ok);
}

#[test]
fn no_device_exits_4() {
    let root = std::env::temp_dir().join(format!("vnic-em-cli-{}-root", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let r = root.to_str().unwrap();
    for args in [
        &["show", "--lid", "2", "--sysroot", r][..],
        &["counters", "--lid", "2", "--sysroot", r][..],
        &["traps", "--count", "1", "--sysroot", r][..],
        &[
            "set",
            "--lid",
            "2",
            "--vport",
            "0",
            "--enable",
            "--sysroot",
            r,
        ][..],
        &["apply", sample().to_str().unwrap(), "--sysroot", r][..],
        &["watch", "-c", sample().to_str().unwrap(), "--sysroot", r][..],
        &[
            "--mad-size",
            "trimmed",
            "show",
            "--lid",
            "2",
            "--sysroot",
            r,
        ][..],
        &[
            "raw",
            "-l",
            "2",
            "--attr",
            "1",
            "--len",
            "24",
            "--mad-size",
            "full",
            "--sysroot",
            r,
        ][..],
    ] {
        let o = vnic_em(args);
        assert_eq!(o.status.code(), Some(4), "{args:?}");
        // The cause and the fix, not a sysfs path and an OS error.
        let e = text(&o.stderr);
        assert!(
            e.contains(
                "no umad device: the ib_umad module is not loaded (load it: modprobe ib_umad)"
            ),
            "{args:?}: {e}"
        );
        assert!(!e.contains("os error") && !e.contains("abi_version"), "{e}");
    }
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn gen_docs_writes_man_pages_and_completions_from_the_help() {
    let dir = std::env::temp_dir().join(format!("vnic-em-cli-{}-docs", std::process::id()));
    let o = vnic_em(&["gen-docs", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    let main = read("man/vnic-em.1");
    assert!(main.contains("vnic\\-em\\-watch(1)"), "{main}");
    // The sections man-pages(7) names, in its order; none clap calls EXTRA; only installed
    // files named.
    let at = |page: &str, s: &str| page.find(s).unwrap_or_else(|| panic!("no {s}: {page}"));
    assert!(
        at(&main, ".SH OPTIONS") < at(&main, ".SH \"EXIT STATUS\""),
        "{main}"
    );
    assert!(
        at(&main, ".SH \"EXIT STATUS\"") < at(&main, ".SH NOTES"),
        "{main}"
    );
    assert!(at(&main, ".SH NOTES") < at(&main, ".SH FILES"), "{main}");
    assert!(
        at(&main, ".SH FILES") < at(&main, ".SH \"SEE ALSO\""),
        "{main}"
    );
    assert!(main.contains(".BR fabric.toml (5)"), "{main}");
    assert!(main.contains("/etc/vnic\\-em/fabric.toml"), "{main}");
    let config = read("man/fabric.toml.5");
    assert!(config.contains(".TH FABRIC.TOML 5"), "{config}");
    let watch = read("man/vnic-em-watch.1");
    assert!(watch.contains("\\-\\-interval"), "{watch}");
    assert!(watch.contains("SIGTERM"), "{watch}");
    for sub in [
        "apply", "validate", "show", "counters", "traps", "set", "raw",
    ] {
        let page = read(&format!("man/vnic-em-{sub}.1"));
        assert!(page.contains(".SH \"EXIT STATUS\""), "{sub}: {page}");
        assert!(!page.contains(".SH EXTRA"), "{sub}: {page}");
        assert!(!page.contains("Documentation/"), "{sub}: {page}");
        assert!(page.contains(".BR vnic\\-em (1)"), "{sub}: {page}");
    }
    for f in [
        "completions/bash/vnic-em.bash",
        "completions/zsh/_vnic-em",
        "completions/fish/vnic-em.fish",
    ] {
        let s = read(f);
        assert!(s.contains("watch") && s.contains("interval"), "{f}: {s}");
        // The generator is not a command of the docs it writes.
        assert!(!s.contains("gen-docs"), "{f}");
    }
    // The bash completions complete a command's options (bash runs them
    // as it would on <TAB>).
    let script = format!(
        "source {}; COMP_WORDS=(vnic-em watch --interval-); COMP_CWORD=2; _vnic-em vnic-em --interval- watch; echo \"${{COMPREPLY[@]}}\"",
        dir.join("completions/bash/vnic-em.bash").display()
    );
    if let Ok(o) = Command::new("bash").arg("-c").arg(&script).output() {
        assert_eq!(
            text(&o.stdout).trim(),
            "--interval-ms",
            "{}",
            text(&o.stderr)
        );
    }
    assert!(!main.contains("gen\\-docs"));
    // Nor of the help.
    assert!(!text(&vnic_em(&["--help"]).stdout).contains("gen-docs"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_mistyped_command_gets_the_nearest() {
    let o = vnic_em(&["aply", "x.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("did you mean `apply`?"), "{e}");
    let o = vnic_em(&["valdate", "x.toml"]);
    assert!(text(&o.stderr).contains("did you mean `validate`?"));
    // Nothing near: no tip.
    let o = vnic_em(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!text(&o.stderr).contains("did you mean"));
}

#[test]
fn apply_dry_run_without_a_fabric_prints_what_it_can() {
    let s = sample();
    let o = vnic_em(&[
        "apply",
        "--dry-run",
        s.to_str().unwrap(),
        "--sysroot",
        "/nonexistent",
    ]);
    // The fabric was not read: the device error's code, after the plan.
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("no fabric: the plan of the config alone, 3 vport(s)"),
        "{out}"
    );
    assert!(
        out.contains("LID 0x0002 vport 1 [vesw 2 tenant-b]: create vesw port info"),
        "{out}"
    );
    assert!(out.contains("not checked without a fabric:"), "{out}");
    assert!(out.contains("the fabric's current state"), "{out}");
    assert!(
        out.contains("6 Set(s) at most (dry run, no fabric: none sent)"),
        "{out}"
    );
    assert!(text(&o.stderr).contains("modprobe ib_umad"));
    let o = vnic_em(&[
        "apply",
        "-n",
        "--json",
        s.to_str().unwrap(),
        "--sysroot",
        "/nonexistent",
    ]);
    assert_eq!(o.status.code(), Some(4));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["fabric_read"], false);
    assert_eq!(j["steps"].as_array().map(Vec::len), Some(6));
    // Without --dry-run (or with --check, about the fabric), no plan.
    for args in [
        &["apply"][..],
        &["apply", "--check"][..],
        &["apply", "--dry-run", "--diff"][..],
    ] {
        let mut a = args.to_vec();
        a.extend([s.to_str().unwrap(), "--sysroot", "/nonexistent"]);
        let o = vnic_em(&a);
        assert_eq!(o.status.code(), Some(4), "{a:?}");
        assert!(o.stdout.is_empty(), "{a:?}: {}", text(&o.stdout));
    }
}
