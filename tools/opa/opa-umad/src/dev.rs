// SPDX-License-Identifier: GPL-2.0

//! One open umad device and the MAD agents registered on it.
//!
//! A file of `/dev/infiniband/umadN` holds up to 32 agents
//! (`IB_UMAD_MAX_AGENTS`); each `IB_USER_MAD_REGISTER_AGENT2` ioctl
//! registers one and returns its id. A send names its agent in the
//! header; a read says in its header which agent it is for: a MAD whose
//! class, version, OUI and method the agent registered for (a request to
//! a server agent), the response to a request the agent sent (routed by
//! the high half of the TID, whatever the agent registered for), or the
//! agent's request that got no response in its time (status
//! `ETIMEDOUT`). All reads come through the one file, in arrival order.
//!
//! With `rmpp_version` 1 the MAD layer does RMPP for the agent
//! (`ib_mad_kernel_rmpp_agent()`): a send of an RMPP class whose RMPP
//! header has the Active flag is cut into segments (`ib_umad_write()`,
//! `copy_rmpp_mad()`), and a received transfer is reassembled and read in
//! one piece. Without it, every segment is sent and read as written.
//!
//! This module holds the only `unsafe` code of the crate: the register
//! ioctl and `poll()`.

#![allow(unsafe_code)]

use std::error::Error;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::hdr::{RecvHdr, SendHdr, UMAD_HDR_SIZE};

/// The largest MAD segment (an OPA MAD). A read buffer must hold the
/// header and one segment, or `ib_umad_read()` fails with `EINVAL`.
const MAX_SEG: usize = 2048;

/// The largest read accepted: a reassembled RMPP transfer of up to
/// 16 MiB.
const MAX_READ: usize = 16 << 20;

/// An agent registered on a [`Device`]: the id the kernel gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(pub u32);

/// What an agent registers for, on QP1 (the GSI) or, for the subnet
/// management classes, QP0 (the SMI).
///
/// The default is a send-only agent on QP1: class 0, which receives
/// nothing unsolicited but gets the responses to its requests and their
/// time-outs, whatever their class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    /// Management class (0: send only).
    pub mgmt_class: u8,
    /// Class version.
    pub class_version: u8,
    /// OUI of a vendor class of range 2 (0x30-0x4f), in the low 24 bits.
    pub oui: u32,
    /// Bit N (of the 128): requests of method N of the class arrive at
    /// this agent. Only one agent of a port may take a method of a class.
    pub method_mask: [u64; 2],
    /// 0: no RMPP; 1: the MAD layer segments this agent's RMPP-active
    /// sends and reassembles the RMPP transfers it receives.
    pub rmpp_version: u8,
    /// The QP of the agent: 1 (the GSI) for every class but the
    /// subnet management ones, whose agents are on QP0 (the SMI).
    pub qpn: u32,
}

impl Default for Registration {
    fn default() -> Self {
        Self::class(0, 0)
    }
}

impl Registration {
    /// An agent of `mgmt_class` version `class_version`, taking no
    /// method yet.
    pub const fn class(mgmt_class: u8, class_version: u8) -> Self {
        Registration {
            mgmt_class,
            class_version,
            oui: 0,
            method_mask: [0; 2],
            rmpp_version: 0,
            qpn: 1,
        }
    }

    /// An agent of the subnet management class `mgmt_class` (0x01
    /// LID-routed, 0x81 directed-route) on QP0, as an SM or an admin tool
    /// registers one to send SMPs.
    pub const fn smi(mgmt_class: u8, class_version: u8) -> Self {
        let mut r = Self::class(mgmt_class, class_version);
        r.qpn = 0;
        r
    }

    /// The same with the vendor OUI `oui` (most significant byte first).
    pub const fn with_oui(mut self, oui: [u8; 3]) -> Self {
        self.oui = (oui[0] as u32) << 16 | (oui[1] as u32) << 8 | oui[2] as u32;
        self
    }

    /// The same taking requests of `method` too.
    ///
    /// # Panics
    ///
    /// If `method` has the response bit (0x80) set: there are 128
    /// methods.
    pub const fn with_method(mut self, method: u8) -> Self {
        assert!(method < 128, "a method is below 128");
        let m = method as usize;
        self.method_mask[m / 64] |= 1 << (m % 64);
        self
    }

    /// The same with RMPP `version` (1) done by the MAD layer.
    pub const fn with_rmpp(mut self, version: u8) -> Self {
        self.rmpp_version = version;
        self
    }
}

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

/// One read of a [`Device`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recv {
    /// The agent it is for.
    pub agent: AgentId,
    /// 0 for a received MAD, or `libc::ETIMEDOUT` for a request that got
    /// no response in its time (the MAD is then the request's 24-byte
    /// common header).
    pub status: i32,
    /// Source QP.
    pub qpn: u32,
    /// Source LID.
    pub lid: u16,
    /// Service level it came on.
    pub sl: u8,
    /// Index of the P_Key it came with.
    pub pkey_index: u16,
    /// The MAD at the length read: a whole MAD, a reassembled RMPP
    /// transfer, or the header of a timed-out request.
    pub mad: Vec<u8>,
}

impl Recv {
    /// The transaction id of the MAD (0 if too short).
    pub fn tid(&self) -> u64 {
        self.mad
            .get(8..16)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_be_bytes)
    }

    /// Whether this is a request of the agent that got no response.
    pub fn timed_out(&self) -> bool {
        self.status == libc::ETIMEDOUT
    }
}

/// A send that failed.
#[derive(Debug)]
pub enum SendError {
    /// The device took only part of the header and MAD.
    Short {
        /// Bytes taken.
        written: usize,
        /// Bytes given.
        len: usize,
    },
    /// The write failed (`EINVAL`: a MAD the MAD layer refuses).
    Io(io::Error),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Short { written, len } => write!(f, "short write ({written} of {len})"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl Error for SendError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Short { .. } => None,
        }
    }
}

impl From<SendError> for io::Error {
    fn from(e: SendError) -> Self {
        match e {
            SendError::Io(e) => e,
            s @ SendError::Short { .. } => io::Error::new(io::ErrorKind::WriteZero, s.to_string()),
        }
    }
}

/// A read that failed.
#[derive(Debug)]
pub enum RecvError {
    /// `poll()` failed.
    Poll(io::Error),
    /// The file's agents are gone (`POLLERR`: the device was removed).
    AgentsGone,
    /// The read failed.
    Read(io::Error),
    /// The read returned less than a header.
    Short(usize),
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Poll(e) => write!(f, "poll: {e}"),
            Self::AgentsGone => write!(f, "agents gone (device removed?)"),
            Self::Read(e) => write!(f, "{e}"),
            Self::Short(n) => write!(f, "short read ({n} bytes)"),
        }
    }
}

impl Error for RecvError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Poll(e) | Self::Read(e) => Some(e),
            _ => None,
        }
    }
}

impl From<RecvError> for io::Error {
    fn from(e: RecvError) -> Self {
        match e {
            RecvError::Poll(e) | RecvError::Read(e) => e,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// One open umad device file and its agents.
///
/// Closing it (dropping) unregisters them.
#[derive(Debug)]
pub struct Device {
    file: File,
    path: PathBuf,
    /// The read buffer: a header and an OPA MAD, grown for RMPP
    /// transfers.
    buf: Vec<u8>,
}

impl Device {
    /// Opens the umad character device at `path`.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        Ok(Device {
            file,
            path,
            buf: vec![0; UMAD_HDR_SIZE + MAX_SEG],
        })
    }

    /// Opens the umad character device at `path` and registers one agent
    /// on it: what a tool with a single agent needs.
    pub fn open_agent(path: impl AsRef<Path>, reg: &Registration) -> io::Result<(Self, AgentId)> {
        let dev = Self::open(path)?;
        let agent = dev.register(reg)?;
        Ok((dev, agent))
    }

    /// The path the device was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Registers an agent on its QP (`IB_USER_MAD_REGISTER_AGENT2`); from
    /// the first one on, the file speaks the 64-byte header with
    /// `pkey_index`.
    pub fn register(&self, reg: &Registration) -> io::Result<AgentId> {
        let mut req = RegReq2 {
            qpn: reg.qpn,
            mgmt_class: reg.mgmt_class,
            mgmt_class_version: reg.class_version,
            method_mask: reg.method_mask,
            oui: reg.oui,
            rmpp_version: reg.rmpp_version,
            ..RegReq2::default()
        };
        // SAFETY: the fd is open for the lifetime of `self.file`, and the
        // request type matches the ioctl number (its size is encoded in
        // it and asserted above). `ib_umad_reg_agent2()` reads the whole
        // `struct ib_user_mad_reg_req2` with copy_from_user() and writes
        // back only `id` (or `flags`, on a flags error) with put_user(),
        // during the call; `req` is a live, exclusively borrowed value
        // for all of it.
        let rc = unsafe {
            libc::ioctl(
                self.file.as_raw_fd(),
                IB_USER_MAD_REGISTER_AGENT2 as _,
                &mut req as *mut RegReq2,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(AgentId(req.id))
    }

    /// Sends `mad` as `hdr` says, in one write (the MAD layer takes one
    /// MAD per write; of an agent with RMPP, an RMPP-active MAD of any
    /// length, which it cuts into segments).
    pub fn send(&mut self, hdr: &SendHdr, mad: &[u8]) -> Result<(), SendError> {
        let mut buf = Vec::with_capacity(UMAD_HDR_SIZE + mad.len());
        buf.extend_from_slice(&hdr.encode());
        buf.extend_from_slice(mad);
        match self.file.write(&buf) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(n) => Err(SendError::Short {
                written: n,
                len: buf.len(),
            }),
            Err(e) => Err(SendError::Io(e)),
        }
    }

    /// Waits up to `timeout` for one read, of any agent of the file.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Recv>, RecvError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            // Rounded up, so that the wait does not end just before the
            // deadline.
            let ms = i32::try_from(left.as_millis().saturating_add(1)).unwrap_or(i32::MAX);
            let mut pfd = libc::pollfd {
                fd: self.file.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid pollfd and the count is 1; it is
            // exclusively borrowed for the call, and the fd stays open
            // while `self.file` lives.
            let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    if left.is_zero() {
                        return Ok(None);
                    }
                    continue;
                }
                return Err(RecvError::Poll(e));
            }
            if rc == 0 {
                return Ok(None);
            }
            // ib_umad_poll() reports only EPOLLERR once the agents are dead.
            if pfd.revents & libc::POLLERR != 0 {
                return Err(RecvError::AgentsGone);
            }
            match self.read_one()? {
                Some(r) => return Ok(Some(r)),
                None => continue,
            }
        }
    }

    /// One read; `None` if interrupted.
    fn read_one(&mut self) -> Result<Option<Recv>, RecvError> {
        let n = loop {
            match self.file.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(None),
                // copy_recv_mad() of Linux 6.12: a reassembled RMPP
                // transfer longer than the buffer fails with ENOSPC after
                // the header (whose `length` is header plus transfer) and
                // the first segment were copied, and ib_umad_read() puts
                // the packet back at the head of the list; the next read
                // with a buffer of `length` bytes gets it whole.
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
                    let need = RecvHdr::decode(&self.buf).map_or(0, |h| h.length as usize);
                    if need <= self.buf.len() || need > MAX_READ {
                        return Err(RecvError::Read(e));
                    }
                    self.buf.resize(need, 0);
                }
                Err(e) => return Err(RecvError::Read(e)),
            }
        };
        let (Some(h), Some(mad)) = (
            RecvHdr::decode(&self.buf[..n]),
            self.buf.get(UMAD_HDR_SIZE..n),
        ) else {
            return Err(RecvError::Short(n));
        };
        Ok(Some(Recv {
            agent: AgentId(h.id),
            status: h.status,
            qpn: h.qpn,
            lid: h.lid,
            sl: h.sl,
            pkey_index: h.pkey_index,
            mad: mad.to_vec(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration() {
        let r = Registration::class(0x0a, 0x80)
            .with_oui([0x00, 0x06, 0x6a])
            .with_method(0x05)
            .with_method(0x46)
            .with_rmpp(1);
        assert_eq!(r.oui, 0x00_066a);
        assert_eq!(r.method_mask, [1 << 5, 1 << 6]);
        assert_eq!(r.rmpp_version, 1);
        assert_eq!(Registration::default(), Registration::class(0, 0));
    }

    #[test]
    fn not_a_umad_device() {
        // A plain file opens, but takes no ioctl.
        let p = std::env::temp_dir().join(format!("opa-umad-{}-dev", std::process::id()));
        std::fs::write(&p, b"").unwrap();
        let d = Device::open(&p).unwrap();
        assert_eq!(d.path(), p);
        assert!(d.register(&Registration::default()).is_err());
        let _ = std::fs::remove_file(&p);
        assert!(Device::open(&p).is_err());
    }

    #[test]
    fn timed_out() {
        let mut r = Recv {
            agent: AgentId(1),
            status: libc::ETIMEDOUT,
            qpn: 1,
            lid: 1,
            sl: 0,
            pkey_index: 0,
            mad: vec![0; 24],
        };
        r.mad[8..16].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
        assert!(r.timed_out());
        assert_eq!(r.tid(), 0x1122_3344_5566_7788);
        r.status = 0;
        assert!(!r.timed_out());
    }
}
