// SPDX-License-Identifier: GPL-2.0

//! `opasim-umad`: sends a GSI MAD from one umad port to a LID and answers it on another umad
//! port, through `/dev/infiniband/umad*` (`include/uapi/rdma/ib_user_mad.h`).
//!
//! ```text
//! opasim-umad ping REQ_UMAD RESP_UMAD DLID [--pkey-index N] [--expect-timeout]
//! ```
//!
//! The requester registers a GSI agent of the vendor class 0x09 on `REQ_UMAD` and sends a Get
//! to `DLID` (QP1); the responder, a second agent of the class on `RESP_UMAD` (which may be the
//! same device) taking Gets, answers it with a GetResp that echoes the payload. The program
//! prints what each side saw and exits 0 when the requester got the answer. With
//! `--expect-timeout` it exits 0 only when nothing arrives at the responder and the request
//! times out (a MAD dropped on the way).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `struct ib_user_mad_hdr` (with `pkey_index`, the layout after `REGISTER_AGENT2`).
const HDR: usize = 64;
/// The vendor class used (range 1: no OUI, no RMPP).
const CLASS: u8 = 0x09;
const CLASS_VERSION: u8 = 1;
const METHOD_GET: u8 = 0x01;
const METHOD_GET_RESP: u8 = 0x81;
const QP1_QKEY: u32 = 0x8001_0000;
const MAD_LEN: usize = 256;
const ETIMEDOUT: u32 = 110;

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

struct Agent {
    file: File,
    id: u32,
    name: String,
}

impl Agent {
    fn open(umad: &str, methods: u64) -> io::Result<Self> {
        let path = format!("/dev/infiniband/{umad}");
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        let mut req = RegReq2 {
            qpn: 1,
            mgmt_class: CLASS,
            mgmt_class_version: CLASS_VERSION,
            method_mask: [methods, 0],
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

    /// Sends `mad` to `lid`/`qpn` with the P_Key at `pkey_index`.
    fn send(
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
    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Recv>> {
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
            let mut buf = vec![0u8; HDR + 2048];
            let n = self.file.read(&mut buf)?;
            buf.truncate(n);
            if n < HDR + 24 {
                return Err(io::Error::other(format!("short read {n}")));
            }
            let u32_at = |o: usize| u32::from_ne_bytes(buf[o..o + 4].try_into().unwrap());
            return Ok(Some(Recv {
                status: u32_at(4),
                qpn: u32::from_be_bytes(buf[20..24].try_into().unwrap()),
                lid: u16::from_be_bytes(buf[28..30].try_into().unwrap()),
                pkey_index: u16::from_ne_bytes(buf[56..58].try_into().unwrap()),
                mad: buf[HDR..].to_vec(),
            }));
        }
    }
}

struct Recv {
    status: u32,
    qpn: u32,
    lid: u16,
    pkey_index: u16,
    mad: Vec<u8>,
}

impl Recv {
    fn tid(&self) -> u64 {
        u64::from_be_bytes(self.mad[8..16].try_into().unwrap())
    }
}

fn request(tid: u32) -> Vec<u8> {
    let mut mad = vec![0u8; MAD_LEN];
    mad[0] = 1; // base version
    mad[1] = CLASS;
    mad[2] = CLASS_VERSION;
    mad[3] = METHOD_GET;
    mad[12..16].copy_from_slice(&tid.to_be_bytes());
    mad[16..18].copy_from_slice(&0x0010u16.to_be_bytes()); // attribute id
    for (i, b) in mad[24..].iter_mut().enumerate() {
        *b = i as u8;
    }
    mad
}

struct Args {
    req: String,
    resp: String,
    dlid: u16,
    pkey_index: u16,
    expect_timeout: bool,
}

fn parse() -> Result<Args, String> {
    let usage =
        "usage: opasim-umad ping REQ_UMAD RESP_UMAD DLID [--pkey-index N] [--expect-timeout]";
    let mut it = std::env::args().skip(1);
    if it.next().as_deref() != Some("ping") {
        return Err(usage.into());
    }
    let req = it.next().ok_or(usage)?;
    let resp = it.next().ok_or(usage)?;
    let dlid = it.next().ok_or(usage)?;
    let dlid = parse_num(&dlid).ok_or_else(|| format!("bad DLID '{dlid}'"))?;
    let mut a = Args {
        req,
        resp,
        dlid,
        pkey_index: 0,
        expect_timeout: false,
    };
    while let Some(o) = it.next() {
        match o.as_str() {
            "--pkey-index" => {
                let v = it.next().ok_or(usage)?;
                a.pkey_index = parse_num(&v).ok_or_else(|| format!("bad index '{v}'"))?;
            }
            "--expect-timeout" => a.expect_timeout = true,
            _ => return Err(usage.into()),
        }
    }
    Ok(a)
}

fn parse_num(s: &str) -> Option<u16> {
    match s.strip_prefix("0x") {
        Some(h) => u16::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn run(a: &Args) -> Result<bool, String> {
    let err = |what: &str, e: io::Error| format!("{what}: {e}");
    let mut req =
        Agent::open(&a.req, 0).map_err(|e| err(&format!("requester agent on {}", a.req), e))?;
    let mut resp = Agent::open(&a.resp, 1 << METHOD_GET)
        .map_err(|e| err(&format!("responder agent on {}", a.resp), e))?;
    let tid = 0x5a5a_0000 | std::process::id() & 0xffff;
    let mad = request(tid);
    req.send(a.dlid, 1, a.pkey_index, 1000, &mad)
        .map_err(|e| err("send the request", e))?;
    println!(
        "{}: sent Get tid {tid:#x} to LID {} (P_Key index {})",
        req.name, a.dlid, a.pkey_index
    );

    match resp
        .recv(Duration::from_secs(2))
        .map_err(|e| err("responder read", e))?
    {
        None => println!("{}: no request arrived", resp.name),
        Some(r) => {
            println!(
                "{}: got method {:#04x} tid {:#x} from LID {} QP {} P_Key index {} ({} bytes)",
                resp.name,
                r.mad[3],
                r.tid(),
                r.lid,
                r.qpn,
                r.pkey_index,
                r.mad.len()
            );
            if r.mad[1] != CLASS || r.mad[3] != METHOD_GET || r.mad[24..] != mad[24..] {
                return Err("the request arrived changed".into());
            }
            let mut answer = r.mad.clone();
            answer[3] = METHOD_GET_RESP;
            resp.send(r.lid, r.qpn, r.pkey_index, 0, &answer)
                .map_err(|e| err("send the response", e))?;
        }
    }

    match req
        .recv(Duration::from_secs(4))
        .map_err(|e| err("requester read", e))?
    {
        None => Err("the requester got neither a response nor a timeout".into()),
        Some(r) if r.status == ETIMEDOUT => {
            println!("{}: request timed out", req.name);
            Ok(a.expect_timeout)
        }
        Some(r) if r.status != 0 => Err(format!("the requester got status {}", r.status)),
        Some(r) => {
            println!(
                "{}: got method {:#04x} tid {:#x} from LID {}",
                req.name,
                r.mad[3],
                r.tid(),
                r.lid
            );
            let ok = r.mad[3] == METHOD_GET_RESP
                && r.tid() & 0xffff_ffff == u64::from(tid)
                && r.lid == a.dlid
                && r.mad[24..] == mad[24..];
            if !ok {
                return Err("the response does not match the request".into());
            }
            println!("response ok");
            Ok(!a.expect_timeout)
        }
    }
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "opasim-umad: FAIL (expected {})",
                if args.expect_timeout {
                    "a timeout"
                } else {
                    "a response"
                }
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("opasim-umad: {e}");
            ExitCode::FAILURE
        }
    }
}
