// SPDX-License-Identifier: GPL-2.0

//! The real transport: the kernel's umad interface
//! (`/dev/infiniband/umadN`, `include/uapi/rdma/ib_user_mad.h`).
//!
//! The EM opens the umad device of its own port, registers one GSI agent
//! for the Intel EMA class (OPA class version, Intel OUI; method Trap too
//! when it listens for traps, so that they reach it), and sends OPA MADs of the size the caller gives:
//! whole 2048-byte ones, or trimmed to their attribute as opa-fm sends
//! them (the kernel sends an OPA MAD at the size it is written). Reads
//! return answers at the size they came. Responses are
//! routed back by the kernel on the high half of the TID; a send given a
//! `timeout_ms` that gets no answer comes back as a read with status
//! `ETIMEDOUT`.
//!
//! The only `unsafe` of the crate is here: the register ioctl and poll().

#![allow(unsafe_code)]

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use opa_wire::mad::{
    IB_MGMT_MAD_HDR, IB_MGMT_VENDOR_HDR, INTEL_OUI, METHOD_TRAP, OPA_EMA_CLASS_VERSION,
    OPA_MGMT_CLASS_INTEL_EMA, OPA_MGMT_MAD_SIZE,
};

use crate::fabric::{Dest, Event, Fabric, FabricError};

/// `IB_USER_MAD_ABI_VERSION`: the only layout this code speaks.
pub const UMAD_ABI_VERSION: u32 = 5;
/// Size of `struct ib_user_mad_hdr` (the layout with `pkey_index`, used
/// once an agent is registered with `IB_USER_MAD_REGISTER_AGENT2`).
pub const UMAD_HDR_SIZE: usize = 64;

/// `struct ib_user_mad_reg_req2`.
#[repr(C)]
#[derive(Debug, Default)]
struct RegReq2 {
    id: u32,
    qpn: u32,
    mgmt_class: u8,
    mgmt_class_version: u8,
    res: u16,
    flags: u32,
    method_mask: [u64; 2],
    oui: u32,
    rmpp_version: u8,
    reserved: [u8; 3],
}

const _: () = assert!(core::mem::size_of::<RegReq2>() == 40);

/// `RDMA_IOCTL_MAGIC`.
const RDMA_IOCTL_MAGIC: u64 = 0x1b;

/// `_IOWR(RDMA_IOCTL_MAGIC, 0x04, struct ib_user_mad_reg_req2)`.
const IB_USER_MAD_REGISTER_AGENT2: u64 =
    (3 << 30) | ((core::mem::size_of::<RegReq2>() as u64) << 16) | (RDMA_IOCTL_MAGIC << 8) | 0x04;

const _: () = assert!(IB_USER_MAD_REGISTER_AGENT2 == 0xc028_1b04);

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

fn read_trim(p: &Path) -> io::Result<String> {
    Ok(fs::read_to_string(p)?.trim().to_string())
}

/// A sysfs LID (`0x1`, or decimal).
pub fn parse_sysfs_lid(s: &str) -> Option<u16> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse::<u32>().ok(),
    }
    .and_then(|v| u16::try_from(v).ok())
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

/// Every umad device under `root` (`/` on a real system), sorted by
/// number; checks the ABI version first.
pub fn list_ports(root: &Path) -> Result<Vec<UmadPort>, FabricError> {
    let class = root.join("sys/class/infiniband_mad");
    let abi_path = class.join("abi_version");
    let abi = read_trim(&abi_path).map_err(|e| {
        FabricError::Device(format!(
            "cannot read {}: {e} (is ib_umad loaded?)",
            abi_path.display()
        ))
    })?;
    if abi.parse::<u32>().ok() != Some(UMAD_ABI_VERSION) {
        return Err(FabricError::Device(format!(
            "umad ABI version {abi} not supported (need {UMAD_ABI_VERSION})"
        )));
    }
    let rd = fs::read_dir(&class)
        .map_err(|e| FabricError::Device(format!("cannot list {}: {e}", class.display())))?;
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
        let lid = read_trim(&pdir.join("lid"))
            .ok()
            .and_then(|s| parse_sysfs_lid(&s))
            .unwrap_or(0);
        let state = read_trim(&pdir.join("state")).unwrap_or_default();
        let mgmt_pkey_index = mgmt_pkey_index(&pdir);
        out.push(UmadPort {
            mgmt_pkey_index,
            dev_path: root.join("dev/infiniband").join(&name),
            name,
            ibdev,
            port,
            lid,
            state,
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

/// How the EM's port is chosen.
#[derive(Debug, Clone, Default)]
pub struct PortSelect {
    /// A umad device name or path (`umad0`, `/dev/infiniband/umad0`).
    pub umad: Option<String>,
    /// An RDMA device name (`hfi1_0`).
    pub hca: Option<String>,
    /// A port number of that device (or of any device).
    pub port: Option<u8>,
}

/// Picks the port: the named umad device, or the first of `hca`/`port`,
/// preferring an ACTIVE port when nothing is named.
pub fn select_port(ports: &[UmadPort], sel: &PortSelect) -> Result<UmadPort, FabricError> {
    if ports.is_empty() {
        return Err(FabricError::Device(
            "no umad device found (load ib_umad and an OPA HFI driver)".to_string(),
        ));
    }
    if let Some(u) = &sel.umad {
        let base = Path::new(u)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        return ports
            .iter()
            .find(|p| p.name == base)
            .cloned()
            .ok_or_else(|| FabricError::Device(format!("no umad device {u}")));
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
        None => Err(FabricError::Device(format!(
            "no umad device for {}{}",
            sel.hca.as_deref().unwrap_or("any device"),
            sel.port.map(|n| format!(" port {n}")).unwrap_or_default()
        ))),
    }
}

/// Encodes the 64-byte `struct ib_user_mad_hdr` of a send.
pub fn encode_send_hdr(agent_id: u32, dest: &Dest, timeout_ms: u32) -> [u8; UMAD_HDR_SIZE] {
    let mut h = [0u8; UMAD_HDR_SIZE];
    h[0..4].copy_from_slice(&agent_id.to_ne_bytes()); // id
                                                      // 4..8 status, 12..16 retries (the EM retries itself), 16..20 length.
    h[8..12].copy_from_slice(&timeout_ms.to_ne_bytes());
    h[20..24].copy_from_slice(&dest.qpn.to_be_bytes());
    h[24..28].copy_from_slice(&dest.qkey.to_be_bytes());
    h[28..30].copy_from_slice(&dest.lid.to_be_bytes());
    h[30] = dest.sl;
    // 31 path_bits, 32 grh_present, 33 gid_index, 34 hop_limit,
    // 35 traffic_class, 36..52 gid, 52..56 flow_label: no GRH.
    h[56..58].copy_from_slice(&dest.pkey_index.to_ne_bytes());
    h
}

/// The fields of a received `struct ib_user_mad_hdr` the EM uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvHdr {
    /// Agent id.
    pub id: u32,
    /// 0, or `ETIMEDOUT` for a send that got no response.
    pub status: u32,
    /// Source LID.
    pub lid: u16,
}

/// Decodes the header of a read.
pub fn decode_recv_hdr(buf: &[u8]) -> Option<RecvHdr> {
    let h = buf.get(..UMAD_HDR_SIZE)?;
    let u32_ne =
        |o: usize| -> Option<u32> { Some(u32::from_ne_bytes(h.get(o..o + 4)?.try_into().ok()?)) };
    Some(RecvHdr {
        id: u32_ne(0)?,
        status: u32_ne(4)?,
        lid: u16::from_be_bytes(h.get(28..30)?.try_into().ok()?),
    })
}

/// Turns one read into an event.
pub fn decode_read(buf: &[u8]) -> Option<Event> {
    let hdr = decode_recv_hdr(buf)?;
    let mad = buf.get(UMAD_HDR_SIZE..)?;
    if hdr.status != 0 {
        // A send that timed out: the MAD header of the request follows.
        let tid = mad.get(8..16)?;
        let tid = u64::from_be_bytes(tid.try_into().ok()?);
        return Some(Event::SendTimeout { tid });
    }
    Some(Event::Mad {
        src_lid: hdr.lid,
        data: mad.to_vec(),
    })
}

/// The umad transport of one port.
pub struct Umad {
    file: File,
    agent_id: u32,
    port: UmadPort,
}

impl Umad {
    /// Opens the selected port's umad device under `root` and registers
    /// the EMA agent; with `traps`, for method Trap too, so that the
    /// traps sent to the port reach it. Only one agent of a port may have
    /// a method: the EM that listens for traps (`traps`, `watch`) takes
    /// it, and other commands run beside it.
    pub fn open(root: &Path, sel: &PortSelect, traps: bool) -> Result<Self, FabricError> {
        let ports = list_ports(root)?;
        let port = select_port(&ports, sel)?;
        if port.lid == 0 {
            return Err(FabricError::Device(format!(
                "{} port {} has no LID (is the port ACTIVE and the SM running?)",
                port.ibdev, port.port
            )));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&port.dev_path)
            .map_err(|e| {
                FabricError::Device(format!("cannot open {}: {e}", port.dev_path.display()))
            })?;
        let mut req = RegReq2 {
            qpn: 1,
            mgmt_class: OPA_MGMT_CLASS_INTEL_EMA,
            mgmt_class_version: OPA_EMA_CLASS_VERSION,
            method_mask: [if traps { 1u64 << METHOD_TRAP } else { 0 }, 0],
            oui: (u32::from(INTEL_OUI[0]) << 16)
                | (u32::from(INTEL_OUI[1]) << 8)
                | u32::from(INTEL_OUI[2]),
            ..RegReq2::default()
        };
        // SAFETY: the fd is open for the lifetime of `file`; the request
        // is a valid, exclusively borrowed `struct ib_user_mad_reg_req2`
        // (layout checked above) that the kernel reads and writes back
        // (the agent id) during the call only.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                IB_USER_MAD_REGISTER_AGENT2 as _,
                &mut req as *mut RegReq2,
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return Err(FabricError::Device(format!(
                "cannot register the EMA agent on {} ({} port {}): {e}",
                port.dev_path.display(),
                port.ibdev,
                port.port
            )));
        }
        Ok(Umad {
            file,
            agent_id: req.id,
            port,
        })
    }

    /// The port in use.
    pub fn port(&self) -> &UmadPort {
        &self.port
    }
}

impl Fabric for Umad {
    fn send(&mut self, dest: &Dest, mad: &[u8], timeout: Duration) -> Result<(), FabricError> {
        if mad.len() > OPA_MGMT_MAD_SIZE || mad.len() < IB_MGMT_MAD_HDR {
            return Err(FabricError::Io(format!("bad MAD length {}", mad.len())));
        }
        let timeout_ms = u32::try_from(timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1);
        let mut buf = Vec::with_capacity(UMAD_HDR_SIZE + mad.len());
        buf.extend_from_slice(&encode_send_hdr(self.agent_id, dest, timeout_ms));
        buf.extend_from_slice(mad);
        match self.file.write(&buf) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(n) => Err(FabricError::Io(format!(
                "short write to {} ({n} of {})",
                self.port.dev_path.display(),
                buf.len()
            ))),
            Err(e) => Err(FabricError::Io(format!(
                "write to {} for LID {:#06x}: {e}{}",
                self.port.dev_path.display(),
                dest.lid,
                match e.raw_os_error() {
                    // ib_umad_write() needs the whole header of the class.
                    Some(libc::EINVAL) if mad.len() < IB_MGMT_VENDOR_HDR => {
                        " (umad takes no vendor MAD shorter than its 40-byte header)"
                    }
                    Some(libc::EINVAL) => " (is the port an OPA port? OPA MADs need one)",
                    _ => "",
                }
            ))),
        }
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<Event>, FabricError> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let ms = i32::try_from(left.as_millis().saturating_add(1)).unwrap_or(i32::MAX);
            let mut pfd = libc::pollfd {
                fd: self.file.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid pollfd, exclusively borrowed for
            // the call; the fd stays open while `self.file` lives.
            let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    if left.is_zero() {
                        return Ok(None);
                    }
                    continue;
                }
                return Err(FabricError::Io(format!("poll: {e}")));
            }
            if rc == 0 {
                return Ok(None);
            }
            if pfd.revents & libc::POLLERR != 0 {
                return Err(FabricError::Io(format!(
                    "{}: agent gone (device removed?)",
                    self.port.dev_path.display()
                )));
            }
            let mut buf = vec![0u8; UMAD_HDR_SIZE + OPA_MGMT_MAD_SIZE];
            let n = match self.file.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(FabricError::Io(format!(
                        "read from {}: {e}",
                        self.port.dev_path.display()
                    )))
                }
            };
            buf.truncate(n);
            if let Some(ev) = decode_read(&buf) {
                return Ok(Some(ev));
            }
        }
    }

    fn local_lid(&self) -> u16 {
        self.port.lid
    }

    fn describe(&self) -> String {
        format!(
            "{} port {} ({}, LID {:#06x})",
            self.port.ibdev, self.port.port, self.port.name, self.port.lid
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("vnic-em-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        p
    }

    fn mk(root: &Path, umad: &str, ibdev: &str, port: u8, lid: &str, state: &str) {
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
    }

    #[test]
    fn discovery() {
        let root = tmp("disc");
        assert!(matches!(list_ports(&root), Err(FabricError::Device(_))));
        fs::create_dir_all(root.join("sys/class/infiniband_mad")).unwrap();
        fs::write(root.join("sys/class/infiniband_mad/abi_version"), "6\n").unwrap();
        assert!(list_ports(&root)
            .unwrap_err()
            .to_string()
            .contains("ABI version 6"));
        fs::write(root.join("sys/class/infiniband_mad/abi_version"), "5\n").unwrap();
        assert_eq!(list_ports(&root).unwrap(), vec![]);
        assert!(select_port(&[], &PortSelect::default()).is_err());
        mk(&root, "umad10", "hfi1_1", 1, "0x10", "4: ACTIVE");
        mk(&root, "umad0", "hfi1_0", 1, "0x0", "1: DOWN");
        mk(&root, "umad2", "hfi1_0", 2, "0x2", "4: ACTIVE");
        let pk = root.join("sys/class/infiniband/hfi1_0/ports/2/pkeys");
        fs::create_dir_all(&pk).unwrap();
        for (i, k) in [(0, "0x8001"), (1, "0x7fff"), (2, "0xffff"), (10, "0x0000")] {
            fs::write(pk.join(i.to_string()), format!("{k}\n")).unwrap();
        }
        fs::create_dir_all(root.join("sys/class/infiniband_mad/issm0")).unwrap();
        let ports = list_ports(&root).unwrap();
        let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["umad0", "umad2", "umad10"]);
        assert_eq!(ports[1].lid, 2);
        assert_eq!(ports[1].mgmt_pkey_index, 2);
        assert_eq!(ports[0].mgmt_pkey_index, 0, "no pkeys folder");
        fs::write(pk.join("2"), "0x8002\n").unwrap();
        assert_eq!(
            mgmt_pkey_index(pk.parent().unwrap()),
            1,
            "limited management key"
        );
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
            hca: Some("mlx5_0".into()),
            ..Default::default()
        };
        assert!(select_port(&ports, &sel)
            .unwrap_err()
            .to_string()
            .contains("no umad device for mlx5_0"));
        // The node is a plain file here: open works, the ioctl does not.
        fs::create_dir_all(root.join("dev/infiniband")).unwrap();
        fs::write(root.join("dev/infiniband/umad2"), b"").unwrap();
        let e = Umad::open(&root, &PortSelect::default(), false)
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("cannot register the EMA agent"),
            "{e}"
        );
        let sel = PortSelect {
            umad: Some("umad0".into()),
            ..Default::default()
        };
        let e = Umad::open(&root, &sel, false).err().unwrap();
        assert!(e.to_string().contains("has no LID"), "{e}");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn header_layout() {
        let d = Dest::gsi(0x1234, 3, 5);
        let h = encode_send_hdr(7, &d, 1000);
        assert_eq!(&h[0..4], &7u32.to_ne_bytes());
        assert_eq!(&h[8..12], &1000u32.to_ne_bytes());
        assert_eq!(&h[20..24], &[0, 0, 0, 1]);
        assert_eq!(&h[24..28], &[0x80, 0x01, 0x00, 0x00]);
        assert_eq!(&h[28..30], &[0x12, 0x34]);
        assert_eq!(h[30], 5);
        assert_eq!(&h[56..58], &3u16.to_ne_bytes());
        assert_eq!(h[32], 0, "no GRH");

        let mut rd = vec![0u8; UMAD_HDR_SIZE + IB_MGMT_MAD_HDR];
        rd[4..8].copy_from_slice(&(libc::ETIMEDOUT as u32).to_ne_bytes());
        rd[UMAD_HDR_SIZE + 8..UMAD_HDR_SIZE + 16]
            .copy_from_slice(&0x0000_0007_0000_0042u64.to_be_bytes());
        assert_eq!(
            decode_read(&rd),
            Some(Event::SendTimeout {
                tid: 0x0000_0007_0000_0042
            })
        );
        rd[4..8].copy_from_slice(&[0; 4]);
        rd[28..30].copy_from_slice(&[0x00, 0x05]);
        assert_eq!(
            decode_read(&rd),
            Some(Event::Mad {
                src_lid: 5,
                data: rd[UMAD_HDR_SIZE..].to_vec()
            })
        );
        assert_eq!(decode_read(&rd[..10]), None);
        assert_eq!(parse_sysfs_lid("0x1f"), Some(0x1f));
        assert_eq!(parse_sysfs_lid("12"), Some(12));
        assert_eq!(parse_sysfs_lid("0x10000"), None);
        assert_eq!(parse_sysfs_lid("zz"), None);
    }
}
