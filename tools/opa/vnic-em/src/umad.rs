// SPDX-License-Identifier: GPL-2.0

//! The real transport: the kernel's umad interface, through `opa_umad`.
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
//! Port discovery and selection are `opa_umad`'s, re-exported here with
//! their errors as [`FabricError::Device`].

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use opa_umad::{AgentId, Device, RecvError, Registration, SendError, SendHdr};
use opa_wire::mad::{
    IB_MGMT_MAD_HDR, IB_MGMT_VENDOR_HDR, INTEL_OUI, METHOD_TRAP, OPA_EMA_CLASS_VERSION,
    OPA_MGMT_CLASS_INTEL_EMA, OPA_MGMT_MAD_SIZE,
};
use opa_wire::sa::{RMPP_VERSION, SA_CLASS, SA_CLASS_VERSION};

pub use opa_umad::{
    mgmt_pkey_index, parse_sysfs_lid, PortSelect, RecvHdr, UmadPort, UMAD_ABI_VERSION,
    UMAD_HDR_SIZE,
};

use crate::fabric::{Dest, Event, Fabric, FabricError, DEFAULT_SUBNET_PREFIX};
use discovery::{discovery_error, open_error};

mod discovery;

/// Every umad device under `root` (`/` on a real system), sorted by
/// number; checks the ABI version first ([`opa_umad::list_ports`]).
pub fn list_ports(root: &Path) -> Result<Vec<UmadPort>, FabricError> {
    opa_umad::list_ports(root).map_err(|e| FabricError::Device(discovery_error(&e, &[])))
}

/// Picks the port: the named umad device, or the first of `hca`/`port`,
/// preferring an ACTIVE port when nothing is named
/// ([`opa_umad::select_port`]).
pub fn select_port(ports: &[UmadPort], sel: &PortSelect) -> Result<UmadPort, FabricError> {
    opa_umad::select_port(ports, sel).map_err(|e| FabricError::Device(discovery_error(&e, ports)))
}

/// The umad header of a send of agent `agent_id` to `dest`.
fn send_hdr(agent_id: u32, dest: &Dest, timeout_ms: u32) -> SendHdr {
    SendHdr {
        timeout_ms,
        // The EM retries itself.
        retries: 0,
        qpn: dest.qpn,
        qkey: dest.qkey,
        sl: dest.sl,
        ..SendHdr::gsi(AgentId(agent_id), dest.lid, dest.pkey_index)
    }
}

/// Encodes the 64-byte `struct ib_user_mad_hdr` of a send.
pub fn encode_send_hdr(agent_id: u32, dest: &Dest, timeout_ms: u32) -> [u8; UMAD_HDR_SIZE] {
    send_hdr(agent_id, dest, timeout_ms).encode()
}

/// Decodes the header of a read.
pub fn decode_recv_hdr(buf: &[u8]) -> Option<RecvHdr> {
    RecvHdr::decode(buf)
}

/// A port's SM SL from its sysfs folder (`sm_sl`), 0 when it cannot be read.
pub fn port_sm_sl(port_dir: &Path) -> u8 {
    std::fs::read_to_string(port_dir.join("sm_sl"))
        .ok()
        .and_then(|s| opa_umad::parse_sysfs_num(s.trim()))
        .and_then(|v| u8::try_from(v).ok())
        .filter(|&v| v < 32)
        .unwrap_or(0)
}

/// A port's subnet prefix: the first half of its GID 0 in sysfs (`gids/0`, eight groups of
/// four hexadecimal digits), `None` when it cannot be read.
pub fn port_subnet_prefix(port_dir: &Path) -> Option<u64> {
    let s = std::fs::read_to_string(port_dir.join("gids/0")).ok()?;
    let groups: Vec<&str> = s.trim().split(':').collect();
    if groups.len() != 8 {
        return None;
    }
    groups[..4].iter().try_fold(0u64, |acc, g| {
        (g.len() == 4)
            .then(|| u16::from_str_radix(g, 16).ok())
            .flatten()
            .map(|v| (acc << 16) | u64::from(v))
    })
}

/// Whether a port's sysfs `pkeys` folder has any entry (a port without one says nothing of
/// its membership).
fn has_pkeys(port_dir: &Path) -> bool {
    std::fs::read_dir(port_dir.join("pkeys")).is_ok_and(|mut d| d.next().is_some())
}

/// Whether a port's P_Key table holds 0xffff: full membership of the management partition.
pub fn has_full_mgmt_pkey(port_dir: &Path) -> bool {
    std::fs::read_dir(port_dir.join("pkeys")).is_ok_and(|d| {
        d.flatten().any(|e| {
            std::fs::read_to_string(e.path())
                .ok()
                .and_then(|s| parse_sysfs_lid(s.trim()))
                == Some(0xffff)
        })
    })
}

/// Turns a read's status, source LID and MAD into an event; `None` for
/// a timed-out send too short to carry its TID.
fn event(status: i32, src_lid: u16, mad: &[u8]) -> Option<Event> {
    if status != 0 {
        // A send that timed out: the MAD header of the request follows.
        let tid = mad.get(8..16)?;
        let tid = u64::from_be_bytes(tid.try_into().ok()?);
        return Some(Event::SendTimeout { tid });
    }
    Some(Event::Mad {
        src_lid,
        data: mad.to_vec(),
    })
}

/// Turns one read (header and MAD) into an event.
pub fn decode_read(buf: &[u8]) -> Option<Event> {
    let hdr = RecvHdr::decode(buf)?;
    event(hdr.status, hdr.lid, buf.get(UMAD_HDR_SIZE..)?)
}

/// The umad transport of one port.
pub struct Umad {
    dev: Device,
    agent: AgentId,
    port: UmadPort,
    /// The port's sysfs directory: its LID and SMLID are read again at each use, since the SM
    /// may change them while the EM runs.
    sysfs: PathBuf,
    /// The Subnet Administration agent, registered at the first SA request.
    sa_agent: Option<AgentId>,
    /// MADs of the EMA agent read while an SA answer was awaited.
    pending: VecDeque<Event>,
    /// The low halves of the TIDs of SA requests sent.
    sa_tid: u32,
}

/// How long past its timeout an SA request waits for the MAD layer's timeout report.
const SA_GRACE: Duration = Duration::from_millis(500);

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
        let dev = Device::open(&port.dev_path)
            .map_err(|e| FabricError::Device(open_error(&port.dev_path, &e)))?;
        let mut reg = Registration::class(OPA_MGMT_CLASS_INTEL_EMA, OPA_EMA_CLASS_VERSION)
            .with_oui(INTEL_OUI);
        if traps {
            reg = reg.with_method(METHOD_TRAP);
        }
        let agent = dev.register(&reg).map_err(|e| {
            FabricError::Device(format!(
                "cannot register the EMA agent on {} ({} port {}): {e}",
                port.dev_path.display(),
                port.ibdev,
                port.port
            ))
        })?;
        let sysfs = root
            .join("sys/class/infiniband")
            .join(&port.ibdev)
            .join("ports")
            .join(port.port.to_string());
        Ok(Umad {
            dev,
            agent,
            port,
            sysfs,
            sa_agent: None,
            pending: VecDeque::new(),
            sa_tid: std::process::id().wrapping_mul(0x0004_0003),
        })
    }

    /// A LID of the port from sysfs (`lid`, `sm_lid`), or `fallback` when it cannot be read.
    fn sysfs_lid(&self, name: &str, fallback: u16) -> u16 {
        std::fs::read_to_string(self.sysfs.join(name))
            .ok()
            .and_then(|s| parse_sysfs_lid(s.trim()))
            .unwrap_or(fallback)
    }

    /// The port's SM SL (sysfs `sm_sl`), 0 when it cannot be read: the SL opamgt sends SA and
    /// other management MADs on (`omgt_get_sa_sl()`, from the port's `sm_sl`). An SL no
    /// vFabric uses maps to SC 15, which hfi1 drops on QP1.
    pub fn sm_sl(&self) -> u8 {
        port_sm_sl(&self.sysfs)
    }

    /// The SA agent, registered now if it is not yet: class 0x03, OPA class version, RMPP by
    /// the MAD layer (a GetTableResp comes reassembled), no method (it only asks).
    fn sa_agent(&mut self) -> Result<AgentId, FabricError> {
        if let Some(a) = self.sa_agent {
            return Ok(a);
        }
        let reg = Registration::class(SA_CLASS, SA_CLASS_VERSION).with_rmpp(RMPP_VERSION);
        let a = self.dev.register(&reg).map_err(|e| {
            FabricError::Device(format!(
                "cannot register an SA agent on {}: {e}",
                self.port.dev_path.display()
            ))
        })?;
        self.sa_agent = Some(a);
        Ok(a)
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
        let hdr = send_hdr(self.agent.0, dest, timeout_ms);
        match self.dev.send(&hdr, mad) {
            Ok(()) => Ok(()),
            Err(SendError::Short { written, len }) => Err(FabricError::Io(format!(
                "short write to {} ({written} of {len})",
                self.port.dev_path.display(),
            ))),
            Err(SendError::Io(e)) => Err(FabricError::Io(format!(
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
        if let Some(ev) = self.pending.pop_front() {
            return Ok(Some(ev));
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let r = match self.dev.recv(left) {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(None),
                Err(RecvError::Poll(e)) => return Err(FabricError::Io(format!("poll: {e}"))),
                Err(RecvError::AgentsGone) => {
                    return Err(FabricError::Io(format!(
                        "{}: agent gone (device removed?)",
                        self.port.dev_path.display()
                    )))
                }
                Err(e @ (RecvError::Read(_) | RecvError::Short(_))) => {
                    return Err(FabricError::Io(format!(
                        "read from {}: {e}",
                        self.port.dev_path.display()
                    )))
                }
            };
            if let Some(ev) = event(r.status, r.lid, &r.mad) {
                return Ok(Some(ev));
            }
        }
    }

    fn local_lid(&self) -> u16 {
        // Read again: the SM may have given the EM's port a new LID.
        self.sysfs_lid("lid", self.port.lid)
    }

    fn limited_member(&self) -> bool {
        has_pkeys(&self.sysfs) && !has_full_mgmt_pkey(&self.sysfs)
    }

    fn describe(&self) -> String {
        format!(
            "{} port {} ({}, LID {:#06x})",
            self.port.ibdev,
            self.port.port,
            self.port.name,
            self.local_lid()
        )
    }

    fn subnet_prefix(&self) -> u64 {
        port_subnet_prefix(&self.sysfs).unwrap_or(DEFAULT_SUBNET_PREFIX)
    }

    fn sa_request(
        &mut self,
        mad: &[u8],
        timeout: Duration,
    ) -> Result<Option<Vec<u8>>, FabricError> {
        let sm_lid = self.sysfs_lid("sm_lid", 0);
        if sm_lid == 0 {
            return Err(FabricError::Device(format!(
                "{} port {}: SMLID 0, no subnet manager to ask (is the SM running?)",
                self.port.ibdev, self.port.port
            )));
        }
        let agent = self.sa_agent()?;
        // The MAD layer keeps the request's TID but its high half, which routes the answer.
        self.sa_tid = self.sa_tid.wrapping_add(1);
        let tid = self.sa_tid;
        let mut req = mad.to_vec();
        if let Some(t) = req.get_mut(12..16) {
            t.copy_from_slice(&tid.to_be_bytes());
        }
        let timeout_ms = u32::try_from(timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1);
        // On the management P_Key's index (0xffff, else 0x7fff) and the SM's SL, as opamgt.
        let hdr = SendHdr {
            timeout_ms,
            sl: self.sm_sl(),
            ..SendHdr::gsi(agent, sm_lid, mgmt_pkey_index(&self.sysfs))
        };
        self.dev.send(&hdr, &req).map_err(|e| {
            FabricError::Io(format!(
                "SA request to LID {sm_lid:#06x} from {}: {e}",
                self.port.dev_path.display()
            ))
        })?;
        let deadline = Instant::now() + timeout + SA_GRACE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let r = match self.dev.recv(left) {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(None),
                Err(e) => {
                    return Err(FabricError::Io(format!(
                        "read from {}: {e}",
                        self.port.dev_path.display()
                    )))
                }
            };
            if r.agent != agent {
                // A trap or a late VEMA answer: the EMA side reads it later.
                if let Some(ev) = event(r.status, r.lid, &r.mad) {
                    self.pending.push_back(ev);
                }
                continue;
            }
            if (r.tid() & 0xffff_ffff) as u32 != tid {
                continue; // the answer to an earlier attempt
            }
            if r.timed_out() {
                return Ok(None);
            }
            let mut rsp = r.mad;
            // Give the caller back the TID it chose.
            if let (Some(d), Some(s)) = (rsp.get_mut(12..16), mad.get(12..16)) {
                d.copy_from_slice(s);
            }
            return Ok(Some(rsp));
        }
    }
}

#[cfg(test)]
mod tests;
