// SPDX-License-Identifier: GPL-2.0

//! A small umad layer: one GSI agent on `/dev/infiniband/umadN`
//! (`include/uapi/rdma/ib_user_mad.h`), sending MADs and reading what comes back.
//!
//! The only `unsafe` of the crate is here: the register ioctl and poll().

#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// `struct ib_user_mad_hdr` (with `pkey_index`, the layout after `REGISTER_AGENT2`).
pub const HDR: usize = 64;
/// The Q_Key of QP1.
pub const QP1_QKEY: u32 = 0x8001_0000;
/// The largest MAD a read returns (an OPA MAD).
pub const MAX_MAD: usize = 2048;

/// `struct ib_user_mad_reg_req2`.
#[repr(C)]
#[derive(Default)]
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

const _: () = assert!(std::mem::size_of::<RegReq2>() == 40);
/// `_IOWR(0x1b, 0x04, struct ib_user_mad_reg_req2)`.
const REGISTER_AGENT2: u64 = 0xc028_1b04;

/// What an agent registers for on QP1.
#[derive(Debug, Clone, Copy, Default)]
pub struct Registration {
    /// Management class; 0 for an agent that only sends (and gets the answers to what it
    /// sent, which the MAD layer routes by TID, whatever the class).
    pub class: u8,
    /// Class version.
    pub class_version: u8,
    /// OUI of a vendor class of range 2 (0x30-0x4f), in the low 24 bits.
    pub oui: u32,
    /// Bit N: method N arrives at this agent (methods below 64).
    pub methods: u64,
}

/// One agent on one umad device.
pub struct Agent {
    file: File,
    id: u32,
    name: String,
}

/// One read of an agent.
#[derive(Debug, Clone)]
pub struct Recv {
    /// 0, or `ETIMEDOUT` for a send that got no answer in its time (the MAD is then the
    /// request's 24-byte header).
    pub status: u32,
    /// Source QP.
    pub qpn: u32,
    /// Source LID.
    pub lid: u16,
    /// P_Key index it came with.
    pub pkey_index: u16,
    /// The MAD.
    pub mad: Vec<u8>,
}

impl Recv {
    /// The transaction id of the MAD.
    pub fn tid(&self) -> u64 {
        self.mad
            .get(8..16)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_be_bytes)
    }
}

impl Agent {
    /// Opens `/dev/infiniband/{umad}` and registers a GSI agent.
    pub fn open(umad: &str, reg: &Registration) -> io::Result<Self> {
        let path = format!("/dev/infiniband/{umad}");
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        let mut req = RegReq2 {
            qpn: 1,
            mgmt_class: reg.class,
            mgmt_class_version: reg.class_version,
            method_mask: [reg.methods, 0],
            oui: reg.oui,
            ..RegReq2::default()
        };
        // SAFETY: `file` is open; `req` is a valid `struct ib_user_mad_reg_req2` (size checked
        // above) that the kernel reads and writes (the agent id) during the call only.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), REGISTER_AGENT2 as _, &mut req) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            file,
            id: req.id,
            name: umad.to_string(),
        })
    }

    /// The umad device's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends `mad` to `lid`/`qpn` with the P_Key at `pkey_index`. With a `timeout_ms`, an
    /// answer (matched by TID) or an `ETIMEDOUT` read follows.
    pub fn send(
        &mut self,
        lid: u16,
        qpn: u32,
        pkey_index: u16,
        timeout_ms: u32,
        mad: &[u8],
    ) -> io::Result<()> {
        let mut buf = vec![0u8; HDR];
        buf[0..4].copy_from_slice(&self.id.to_ne_bytes());
        buf[8..12].copy_from_slice(&timeout_ms.to_ne_bytes());
        buf[20..24].copy_from_slice(&qpn.to_be_bytes());
        buf[24..28].copy_from_slice(&QP1_QKEY.to_be_bytes());
        buf[28..30].copy_from_slice(&lid.to_be_bytes());
        buf[56..58].copy_from_slice(&pkey_index.to_ne_bytes());
        buf.extend_from_slice(mad);
        let n = self.file.write(&buf)?;
        if n != buf.len() {
            return Err(io::Error::other(format!("short write {n}")));
        }
        Ok(())
    }

    /// Waits up to `timeout` for one read.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Option<Recv>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut pfd = libc::pollfd {
                fd: self.file.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
            // SAFETY: one valid pollfd, borrowed for the call; the fd is open.
            let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if rc == 0 {
                return Ok(None);
            }
            let mut buf = vec![0u8; HDR + MAX_MAD];
            let n = match self.file.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            buf.truncate(n);
            if n < HDR + 24 {
                return Err(io::Error::other(format!("short read {n}")));
            }
            let u32_at =
                |o: usize| u32::from_ne_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
            return Ok(Some(Recv {
                status: u32_at(4),
                qpn: u32::from_be_bytes([buf[20], buf[21], buf[22], buf[23]]),
                lid: u16::from_be_bytes([buf[28], buf[29]]),
                pkey_index: u16::from_ne_bytes([buf[56], buf[57]]),
                mad: buf[HDR..].to_vec(),
            }));
        }
    }
}
