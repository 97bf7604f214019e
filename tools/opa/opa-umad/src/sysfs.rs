// SPDX-License-Identifier: GPL-2.0

//! The umad devices of a system as sysfs describes them, and how one is
//! picked.
//!
//! `ib_umad` makes one class device per port under
//! `/sys/class/infiniband_mad` (`umadN`, with files `ibdev` and `port`) and
//! the character device `/dev/infiniband/umadN`; the port's LID, SM LID,
//! state and P_Key table are under
//! `/sys/class/infiniband/IBDEV/ports/N/`. Every function takes the root
//! to look under (`/` on a real system), so that tests can use a fake tree.

use std::error::Error;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// `IB_USER_MAD_ABI_VERSION`: the only layout this crate speaks.
pub const UMAD_ABI_VERSION: u32 = 5;

/// One umad device as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UmadPort {
    /// Device name (`umad0`).
    pub name: String,
    /// RDMA device (`hfi1_0`).
    pub ibdev: String,
    /// Port number.
    pub port: u8,
    /// The character device to open.
    pub dev_path: PathBuf,
    /// The port's LID (0 if unknown).
    pub lid: u16,
    /// The LID of the port's subnet manager (0 if unknown): where
    /// Subnet Administration queries go.
    pub sm_lid: u16,
    /// The port state text (`4: ACTIVE`), empty if unknown.
    pub state: String,
    /// Index of the full management P_Key (0xffff) in the port's P_Key
    /// table, else of the limited one (0x7fff), else 0: what MADs are
    /// sent with unless told otherwise (the VNIC driver picks its trap
    /// P_Key the same way).
    pub mgmt_pkey_index: u16,
}

impl UmadPort {
    /// Whether the port is ACTIVE.
    pub fn is_active(&self) -> bool {
        self.state.contains("ACTIVE")
    }
}

/// Why no port could be listed or picked. The texts are what the tools
/// print.
#[derive(Debug)]
pub enum DiscoveryError {
    /// The ABI version file cannot be read (`ib_umad` is not loaded).
    NoAbiVersion {
        /// The file.
        path: PathBuf,
        /// What reading it gave.
        err: io::Error,
    },
    /// The kernel speaks another umad ABI.
    BadAbiVersion(String),
    /// The class folder cannot be listed.
    List {
        /// The folder.
        path: PathBuf,
        /// What listing it gave.
        err: io::Error,
    },
    /// There is no umad device at all.
    NoDevice,
    /// The umad device named (a name or a path) does not exist.
    NoSuchDevice(String),
    /// No umad device matches the RDMA device and port asked for.
    NoMatch {
        /// The RDMA device asked for, if any.
        hca: Option<String>,
        /// The port asked for, if any.
        port: Option<u8>,
    },
}

impl fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoAbiVersion { path, err } => write!(
                f,
                "cannot read {}: {err} (is ib_umad loaded?)",
                path.display()
            ),
            Self::BadAbiVersion(abi) => write!(
                f,
                "umad ABI version {abi} not supported (need {UMAD_ABI_VERSION})"
            ),
            Self::List { path, err } => write!(f, "cannot list {}: {err}", path.display()),
            Self::NoDevice => write!(
                f,
                "no umad device found (load ib_umad and an OPA HFI driver)"
            ),
            Self::NoSuchDevice(u) => write!(f, "no umad device {u}"),
            Self::NoMatch { hca, port } => write!(
                f,
                "no umad device for {}{}",
                hca.as_deref().unwrap_or("any device"),
                port.map(|n| format!(" port {n}")).unwrap_or_default()
            ),
        }
    }
}

impl Error for DiscoveryError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::NoAbiVersion { err, .. } | Self::List { err, .. } => Some(err),
            _ => None,
        }
    }
}

fn read_trim(p: &Path) -> io::Result<String> {
    Ok(fs::read_to_string(p)?.trim().to_string())
}

/// `0x` (or `0X`) hexadecimal, else decimal.
fn parse_hex_or_dec(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A sysfs LID (`0x1`, or decimal).
pub fn parse_sysfs_lid(s: &str) -> Option<u16> {
    parse_hex_or_dec(s.trim()).and_then(|v| u16::try_from(v).ok())
}

/// A number as the kernel writes it in sysfs: `0x` hexadecimal or decimal, maybe followed
/// by a `:` and a name (a port's `state`, `4: ACTIVE`).
pub fn parse_sysfs_num(s: &str) -> Option<u64> {
    let s = s.trim();
    parse_hex_or_dec(s.split(':').next().unwrap_or(s).trim())
}

/// A sysfs GUID (`node_guid`: `0011:7501:0000:0100`).
pub fn parse_sysfs_guid(s: &str) -> Option<u64> {
    let hex: String = s.trim().split(':').collect();
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(&hex, 16).ok()
}

/// The port GUID in a sysfs GID (a port's `gids/0`:
/// `fe80:0000:0000:0000:0011:7501:0000:0101`): its last four groups, the interface ID.
pub fn parse_sysfs_gid_guid(s: &str) -> Option<u64> {
    let groups: Vec<&str> = s.trim().split(':').collect();
    if groups.len() != 8 {
        return None;
    }
    parse_sysfs_guid(&groups[4..].join(":"))
}

/// The index of the management P_Key in a port's sysfs `pkeys` folder:
/// 0xffff first, then 0x7fff, else 0.
pub fn mgmt_pkey_index(port_dir: &Path) -> u16 {
    let mut table: Vec<(u16, u16)> = Vec::new();
    if let Ok(rd) = fs::read_dir(port_dir.join("pkeys")) {
        for ent in rd.flatten() {
            let Some(idx) = ent.file_name().to_str().and_then(|n| n.parse::<u16>().ok()) else {
                continue;
            };
            if let Some(key) = read_trim(&ent.path())
                .ok()
                .and_then(|s| parse_sysfs_lid(&s))
            {
                table.push((idx, key));
            }
        }
    }
    table.sort_unstable();
    for want in [0xffff, 0x7fff] {
        if let Some((i, _)) = table.iter().find(|(_, k)| *k == want) {
            return *i;
        }
    }
    0
}

/// A LID file of a port folder, 0 if absent or unreadable.
fn port_lid(pdir: &Path, file: &str) -> u16 {
    read_trim(&pdir.join(file))
        .ok()
        .and_then(|s| parse_sysfs_lid(&s))
        .unwrap_or(0)
}

/// Every umad device under `root` (`/` on a real system), sorted by
/// number; checks the ABI version first.
pub fn list_ports(root: &Path) -> Result<Vec<UmadPort>, DiscoveryError> {
    let class = root.join("sys/class/infiniband_mad");
    let abi_path = class.join("abi_version");
    let abi = read_trim(&abi_path).map_err(|err| DiscoveryError::NoAbiVersion {
        path: abi_path.clone(),
        err,
    })?;
    if abi.parse::<u32>().ok() != Some(UMAD_ABI_VERSION) {
        return Err(DiscoveryError::BadAbiVersion(abi));
    }
    let rd = fs::read_dir(&class).map_err(|err| DiscoveryError::List {
        path: class.clone(),
        err,
    })?;
    let mut out = Vec::new();
    for ent in rd.flatten() {
        let name = ent.file_name().to_string_lossy().into_owned();
        let Some(num) = name.strip_prefix("umad") else {
            continue;
        };
        if num.parse::<u32>().is_err() {
            continue;
        }
        let dir = class.join(&name);
        let (Ok(ibdev), Ok(port)) = (read_trim(&dir.join("ibdev")), read_trim(&dir.join("port")))
        else {
            continue;
        };
        let Ok(port) = port.parse::<u8>() else {
            continue;
        };
        let pdir = root
            .join("sys/class/infiniband")
            .join(&ibdev)
            .join("ports")
            .join(port.to_string());
        out.push(UmadPort {
            lid: port_lid(&pdir, "lid"),
            sm_lid: port_lid(&pdir, "sm_lid"),
            state: read_trim(&pdir.join("state")).unwrap_or_default(),
            mgmt_pkey_index: mgmt_pkey_index(&pdir),
            dev_path: root.join("dev/infiniband").join(&name),
            name,
            ibdev,
            port,
        });
    }
    out.sort_by_key(|p| {
        p.name
            .strip_prefix("umad")
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(u32::MAX)
    });
    Ok(out)
}

/// How a port is chosen.
#[derive(Debug, Clone, Default)]
pub struct PortSelect {
    /// A umad device name or path (`umad0`, `/dev/infiniband/umad0`).
    pub umad: Option<String>,
    /// An RDMA device name (`hfi1_0`).
    pub hca: Option<String>,
    /// A port number of that device (or of any device).
    pub port: Option<u8>,
}

/// The name of a umad device given as a name or a path (`umad0`,
/// `/dev/infiniband/umad0`).
fn umad_name(u: &str) -> String {
    Path::new(u)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The character device of a umad device given as a name or a path
/// (`umad0`, `/dev/infiniband/umad0`), on a real system.
pub fn umad_dev_path(u: &str) -> PathBuf {
    Path::new("/dev/infiniband").join(umad_name(u))
}

/// Picks the port: the named umad device, or the first of `hca`/`port`,
/// preferring an ACTIVE port when nothing is named.
pub fn select_port(ports: &[UmadPort], sel: &PortSelect) -> Result<UmadPort, DiscoveryError> {
    if ports.is_empty() {
        return Err(DiscoveryError::NoDevice);
    }
    if let Some(u) = &sel.umad {
        let base = umad_name(u);
        return ports
            .iter()
            .find(|p| p.name == base)
            .cloned()
            .ok_or_else(|| DiscoveryError::NoSuchDevice(u.clone()));
    }
    let matching: Vec<&UmadPort> = ports
        .iter()
        .filter(|p| sel.hca.as_ref().map_or(true, |h| &p.ibdev == h))
        .filter(|p| sel.port.map_or(true, |n| p.port == n))
        .collect();
    let pick = matching
        .iter()
        .find(|p| p.is_active())
        .or_else(|| matching.first());
    match pick {
        Some(p) => Ok((*p).clone()),
        None => Err(DiscoveryError::NoMatch {
            hca: sel.hca.clone(),
            port: sel.port,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_sysfs::{add_port, tmp_root, write_abi_version};

    #[test]
    fn discovery() {
        let root = tmp_root("disc");
        let e = list_ports(&root).unwrap_err();
        assert!(matches!(e, DiscoveryError::NoAbiVersion { .. }));
        assert!(e.to_string().ends_with("(is ib_umad loaded?)"), "{e}");
        write_abi_version(&root, "6");
        assert_eq!(
            list_ports(&root).unwrap_err().to_string(),
            "umad ABI version 6 not supported (need 5)"
        );
        write_abi_version(&root, "5");
        assert_eq!(list_ports(&root).unwrap(), vec![]);
        assert_eq!(
            select_port(&[], &PortSelect::default())
                .unwrap_err()
                .to_string(),
            "no umad device found (load ib_umad and an OPA HFI driver)"
        );
        add_port(&root, "umad10", "hfi1_1", 1, "0x10", "4: ACTIVE");
        add_port(&root, "umad0", "hfi1_0", 1, "0x0", "1: DOWN");
        let p2 = add_port(&root, "umad2", "hfi1_0", 2, "0x2", "4: ACTIVE");
        fs::write(p2.join("sm_lid"), "0x1\n").unwrap();
        let pk = p2.join("pkeys");
        fs::create_dir_all(&pk).unwrap();
        for (i, k) in [(0, "0x8001"), (1, "0x7fff"), (2, "0xffff"), (10, "0x0000")] {
            fs::write(pk.join(i.to_string()), format!("{k}\n")).unwrap();
        }
        fs::create_dir_all(root.join("sys/class/infiniband_mad/issm0")).unwrap();
        let ports = list_ports(&root).unwrap();
        let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["umad0", "umad2", "umad10"]);
        assert_eq!(ports[1].lid, 2);
        assert_eq!(ports[1].sm_lid, 1);
        assert_eq!(ports[0].sm_lid, 0, "no sm_lid file");
        assert_eq!(ports[1].mgmt_pkey_index, 2);
        assert_eq!(ports[0].mgmt_pkey_index, 0, "no pkeys folder");
        fs::write(pk.join("2"), "0x8002\n").unwrap();
        assert_eq!(mgmt_pkey_index(&p2), 1, "limited management key");
        assert_eq!(ports[2].lid, 0x10);
        assert_eq!(ports[0].dev_path, root.join("dev/infiniband/umad0"));
        let any = select_port(&ports, &PortSelect::default()).unwrap();
        assert_eq!(any.name, "umad2", "first ACTIVE port");
        let sel = PortSelect {
            hca: Some("hfi1_0".into()),
            port: Some(1),
            ..Default::default()
        };
        assert_eq!(select_port(&ports, &sel).unwrap().name, "umad0");
        let sel = PortSelect {
            umad: Some("/dev/infiniband/umad10".into()),
            ..Default::default()
        };
        assert_eq!(select_port(&ports, &sel).unwrap().ibdev, "hfi1_1");
        let sel = PortSelect {
            umad: Some("umad7".into()),
            ..Default::default()
        };
        assert_eq!(
            select_port(&ports, &sel).unwrap_err().to_string(),
            "no umad device umad7"
        );
        let sel = PortSelect {
            hca: Some("mlx5_0".into()),
            ..Default::default()
        };
        assert_eq!(
            select_port(&ports, &sel).unwrap_err().to_string(),
            "no umad device for mlx5_0"
        );
        let sel = PortSelect {
            port: Some(3),
            ..Default::default()
        };
        assert_eq!(
            select_port(&ports, &sel).unwrap_err().to_string(),
            "no umad device for any device port 3"
        );
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn lids_and_paths() {
        assert_eq!(parse_sysfs_lid("0x1f"), Some(0x1f));
        assert_eq!(parse_sysfs_lid("12"), Some(12));
        assert_eq!(parse_sysfs_lid("0x10000"), None);
        assert_eq!(parse_sysfs_lid("zz"), None);
        assert_eq!(parse_sysfs_lid("4: ACTIVE"), None, "a LID has no name");
        assert_eq!(umad_dev_path("umad1"), Path::new("/dev/infiniband/umad1"));
        assert_eq!(
            umad_dev_path("/dev/infiniband/umad1"),
            Path::new("/dev/infiniband/umad1")
        );
    }

    #[test]
    fn numbers_and_guids() {
        assert_eq!(parse_sysfs_num("4: ACTIVE\n"), Some(4));
        assert_eq!(parse_sysfs_num("0x1f"), Some(0x1f));
        assert_eq!(parse_sysfs_num("zz"), None);
        assert_eq!(
            parse_sysfs_guid("0011:7501:0000:0100\n"),
            Some(0x0011_7501_0000_0100)
        );
        assert_eq!(parse_sysfs_guid("0011:7501:0000"), None);
        assert_eq!(
            parse_sysfs_gid_guid("fe80:0000:0000:0000:0011:7501:0000:0101\n"),
            Some(0x0011_7501_0000_0101)
        );
        assert_eq!(parse_sysfs_gid_guid("0011:7501:0000:0101"), None);
    }
}
