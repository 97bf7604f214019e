// SPDX-License-Identifier: GPL-2.0

//! The EM's words for a port it cannot find or open: each names the cause
//! and what to do, where `opa_umad`'s say what failed (a sysfs path and an
//! OS error), which an admin without `ib_umad` loaded cannot act on.

use std::io;
use std::path::Path;

use opa_umad::{DiscoveryError, UmadPort};

/// The ports there are, for a message that says none of them was the
/// one asked for.
fn listing(ports: &[UmadPort]) -> String {
    let l: Vec<String> = ports
        .iter()
        .map(|p| format!("{} ({} port {})", p.name, p.ibdev, p.port))
        .collect();
    l.join(", ")
}

/// Why no port could be listed or picked; `ports`: those listed, if any.
pub(super) fn discovery_error(e: &DiscoveryError, ports: &[UmadPort]) -> String {
    match e {
        // No abi_version: the class directory is ib_umad's, so the module is not there.
        DiscoveryError::NoAbiVersion { err, .. } if err.kind() == io::ErrorKind::NotFound => {
            "no umad device: the ib_umad module is not loaded (load it: modprobe ib_umad)"
                .to_string()
        }
        DiscoveryError::NoDevice => "no umad device: ib_umad is loaded but no RDMA port is \
                                     there (load the HFI's driver: modprobe hfi1)"
            .to_string(),
        DiscoveryError::NoSuchDevice(u) => format!(
            "no umad device {u}: the umad devices are {} (pick one with -d)",
            listing(ports)
        ),
        DiscoveryError::NoMatch { .. } => format!(
            "{e}: the umad devices are {} (pick a port with -h/-C and -p/-P, or -d)",
            listing(ports)
        ),
        _ => e.to_string(),
    }
}

/// Why the umad device node cannot be opened.
pub(super) fn open_error(path: &Path, e: &io::Error) -> String {
    let why = match e.kind() {
        io::ErrorKind::NotFound => {
            " (sysfs lists it but there is no device node: is udev \
                                    running?)"
        }
        io::ErrorKind::PermissionDenied => {
            " (vnic-em needs root, or read and write access \
                                            to the device)"
        }
        _ => "",
    };
    format!("cannot open {}: {e}{why}", path.display())
}
