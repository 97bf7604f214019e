// SPDX-License-Identifier: GPL-2.0

//! Fake sysfs trees for tests of port discovery, here and in the crates that use it
//! (feature `test-support`).

use std::fs;
use std::path::{Path, PathBuf};

/// A root for a fake tree, `name` in the temporary directory and the process ID, removed
/// if a test run before left it.
pub fn tmp_root(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("opa-umad-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&p);
    p
}

/// Writes `version` (`"5"`) to the umad ABI version file under `root`.
pub fn write_abi_version(root: &Path, version: &str) {
    let class = root.join("sys/class/infiniband_mad");
    fs::create_dir_all(&class).unwrap();
    fs::write(class.join("abi_version"), format!("{version}\n")).unwrap();
}

/// Adds the umad device `umad` for port `port` of `ibdev` under `root`, with the port's
/// `lid` and `state` files; returns the port's folder, for more files.
pub fn add_port(root: &Path, umad: &str, ibdev: &str, port: u8, lid: &str, state: &str) -> PathBuf {
    let d = root.join("sys/class/infiniband_mad").join(umad);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("ibdev"), format!("{ibdev}\n")).unwrap();
    fs::write(d.join("port"), format!("{port}\n")).unwrap();
    let p = root
        .join("sys/class/infiniband")
        .join(ibdev)
        .join("ports")
        .join(port.to_string());
    fs::create_dir_all(&p).unwrap();
    fs::write(p.join("lid"), format!("{lid}\n")).unwrap();
    fs::write(p.join("state"), format!("{state}\n")).unwrap();
    p
}
