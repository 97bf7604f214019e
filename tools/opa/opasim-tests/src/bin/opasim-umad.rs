// SPDX-License-Identifier: GPL-2.0

//! `opasim-umad`: sends a GSI MAD from one umad port to a LID and answers it on another umad
//! port, through `/dev/infiniband/umad*` (`include/uapi/rdma/ib_user_mad.h`).
//!
//! ```text
//! opasim-umad ping REQ_UMAD RESP_UMAD DLID [--pkey-index N] [--expect-timeout | --expect-send-error]
//! opasim-umad smp UMAD ATTR [--am N] [--ib] [--hop-ptr N] [--hop-cnt N]
//! opasim-umad traps UMAD [--count N] [--secs S]
//! ```
//!
//! The requester registers a GSI agent of the vendor class 0x09 on `REQ_UMAD` and sends a Get
//! to `DLID` (QP1); the responder, a second agent of the class on `RESP_UMAD` (which may be the
//! same device) taking Gets, answers it with a GetResp that echoes the payload. The program
//! prints what each side saw and exits 0 when the requester got the answer. With
//! `--expect-timeout` it exits 0 only when nothing arrives at the responder and the request
//! times out (a MAD dropped on the way); with `--expect-send-error` only when the `write()` is
//! taken and nothing comes back at all (a send that fails to leave the port).
//!
//! `smp` sends a directed-route SubnGet(`ATTR`) to the local port of `UMAD` (hop count 0,
//! permissive LIDs), as opamgt and the SM do, from an agent on QP0: an OPA SMP, or with `--ib`
//! an IB one (base version 1). It prints the answer's method and status, then `data ` and
//! its attribute data in hex, on one line. `--hop-ptr`/`--hop-cnt` make the route wrong: the MAD layer refuses such
//! a send (`send refused: ...`, exit status 2).
//!
//! `traps` takes the SubnTraps that reach the port of `UMAD` (an agent of the LID-routed SMP
//! class on QP0, as the SM has), printing `trap N from LID L type T: HEX` for each (HEX: the
//! Notice's 64 bytes of details), until `--count` of them came (exit 0) or `--secs` passed
//! (exit 1).

#![forbid(unsafe_code)]

use std::io;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use opa_umad::{umad_dev_path, AgentId, Device, Registration, SendHdr};
use opasim_tests::cli::num;

/// The vendor class used (range 1: no OUI, no RMPP).
const CLASS: u8 = 0x09;
const CLASS_VERSION: u8 = 1;
const METHOD_GET: u8 = 0x01;
const METHOD_SET: u8 = 0x02;
const METHOD_GET_RESP: u8 = 0x81;
const MAD_LEN: usize = 256;

/// An agent of the vendor class, taking Gets when `server`.
fn open(umad: &str, server: bool) -> io::Result<(Device, AgentId)> {
    let mut reg = Registration::class(CLASS, CLASS_VERSION);
    if server {
        reg = reg.with_method(METHOD_GET);
    }
    Device::open_agent(umad_dev_path(umad), &reg)
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

/// Sends a GSI MAD from one umad port to a LID and answers it on another umad port.
#[derive(Parser)]
#[command(name = "opasim-umad")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Send a Get of the vendor class 0x09 from REQ_UMAD to DLID and answer it on RESP_UMAD
    Ping(Args),
    /// Send a directed-route SubnGet to the local port and print the answer
    Smp(SmpArgs),
    /// Print the SubnTraps that reach a port, as its SM would get them
    Traps(TrapArgs),
}

#[derive(clap::Args)]
struct TrapArgs {
    /// umad device of the SM's port (umad1)
    #[arg(value_name = "UMAD")]
    umad: String,
    /// Traps to wait for
    #[arg(long, value_name = "N", default_value = "1", value_parser = num::<u32>)]
    count: u32,
    /// Seconds to wait at most
    #[arg(long, value_name = "S", default_value = "10", value_parser = num::<u64>)]
    secs: u64,
}

/// Takes the traps that reach `a.umad` until `a.count` came: whether they did in time.
fn traps(a: &TrapArgs) -> Result<bool, String> {
    const METHOD_TRAP: u8 = 0x05;
    let (mut dev, _) = Device::open_agent(
        umad_dev_path(&a.umad),
        &Registration::smi(0x01, 0x80).with_method(METHOD_TRAP),
    )
    .map_err(|e| format!("trap agent on {}: {e}", a.umad))?;
    println!("{}: waiting for {} trap(s)", a.umad, a.count);
    let deadline = std::time::Instant::now() + Duration::from_secs(a.secs);
    let mut got = 0;
    while got < a.count {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let Some(r) = dev.recv(left).map_err(|e| format!("read: {e}"))? else {
            continue;
        };
        if r.mad.len() < 128 || r.mad[3] != METHOD_TRAP {
            continue;
        }
        // The Notice, in the LID-routed data after the M_Key.
        let n = &r.mad[32..128];
        let num = u16::from_be_bytes([n[4], n[5]]);
        let issuer = u32::from_be_bytes([n[8], n[9], n[10], n[11]]);
        let hex: String = n[32..].iter().map(|b| format!("{b:02x}")).collect();
        println!(
            "trap {num} from LID {issuer} (slid {}) type {:#04x}: {hex}",
            r.lid, n[0]
        );
        got += 1;
    }
    Ok(true)
}

#[derive(clap::Args)]
struct SmpArgs {
    /// umad device of the port (umad0)
    #[arg(value_name = "UMAD")]
    umad: String,
    /// Attribute id (0x11 NodeInfo, 0x15 PortInfo, ...)
    #[arg(value_name = "ATTR", value_parser = num::<u16>)]
    attr: u16,
    /// Attribute modifier
    #[arg(long, value_name = "N", default_value = "0", value_parser = num::<u32>)]
    am: u32,
    /// An IB SMP (base and class version 1) rather than an OPA one
    #[arg(long)]
    ib: bool,
    /// Hop pointer of the route (0 for a good local route)
    #[arg(long, value_name = "N", default_value = "0", value_parser = num::<u8>)]
    hop_ptr: u8,
    /// Hop count of the route (0 for the local port)
    #[arg(long, value_name = "N", default_value = "0", value_parser = num::<u8>)]
    hop_cnt: u8,
    /// A directed route out of the fabric: the port to leave each node by, comma-separated
    /// (`1` the switch, `1,3` the node on its port 3); sets the hop count
    #[arg(long, value_name = "P,...", value_delimiter = ',', value_parser = num::<u8>)]
    path: Vec<u8>,
    /// A Set with this attribute data (hex) rather than a Get
    #[arg(long, value_name = "HEX")]
    set: Option<String>,
}

/// The directed-route SMP class.
const CLASS_DR_SMP: u8 = 0x81;

/// Why `smp` failed: the MAD layer refused the send (exit status 2), or anything else.
enum SmpError {
    Refused(String),
    Other(String),
}

/// A directed-route SubnGet of `attr` from the local port, hop count 0 unless `a` says.
fn smp_request(a: &SmpArgs, tid: u32, set: Option<&[u8]>) -> Vec<u8> {
    let (len, version) = if a.ib { (256, 1) } else { (2048, 0x80) };
    let mut m = vec![0u8; len];
    m[..4].copy_from_slice(&[version, CLASS_DR_SMP, version, METHOD_GET]);
    m[6] = a.hop_ptr;
    m[7] = a.hop_cnt;
    if !a.path.is_empty() && !a.ib {
        // The initial path, from index 1 (OPA: at 40).
        m[7] = a.path.len() as u8;
        for (i, p) in a.path.iter().enumerate() {
            m[41 + i] = *p;
        }
    }
    if let Some(data) = set {
        m[3] = METHOD_SET;
        let at = if a.ib { 64 } else { 176 };
        let n = data.len().min(len - at);
        m[at..at + n].copy_from_slice(&data[..n]);
    }
    m[12..16].copy_from_slice(&tid.to_be_bytes());
    m[16..18].copy_from_slice(&a.attr.to_be_bytes());
    m[20..24].copy_from_slice(&a.am.to_be_bytes());
    // Permissive DrSLID and DrDLID: 32-bit in an OPA SMP, 16-bit in an IB one.
    let lids = if a.ib { 32..36 } else { 32..40 };
    m[lids].fill(0xff);
    m
}

/// The bytes of the hex string `s` (an even number of hex digits).
fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

fn smp(a: &SmpArgs) -> Result<(), SmpError> {
    let other = |what: &str, e: io::Error| SmpError::Other(format!("{what}: {e}"));
    let version = if a.ib { 1 } else { 0x80 };
    let (mut dev, id) = Device::open_agent(
        umad_dev_path(&a.umad),
        &Registration::smi(CLASS_DR_SMP, version),
    )
    .map_err(|e| other(&format!("SMP agent on {}", a.umad), e))?;
    let tid = 0x5b5b_0000 | std::process::id() & 0xffff;
    let hdr = SendHdr {
        timeout_ms: 1000,
        qpn: 0,
        qkey: 0,
        ..SendHdr::gsi(id, 0xffff, 0)
    };
    let set = match &a.set {
        Some(hex) => {
            Some(parse_hex(hex).ok_or_else(|| SmpError::Other(format!("--set: not hex: {hex}")))?)
        }
        None => None,
    };
    dev.send(&hdr, &smp_request(a, tid, set.as_deref()))
        .map_err(|e| SmpError::Refused(io::Error::from(e).to_string()))?;
    let r = dev
        .recv(Duration::from_secs(4))
        .map_err(|e| other("read", e.into()))?
        .ok_or_else(|| SmpError::Other("no answer".into()))?;
    if r.timed_out() {
        return Err(SmpError::Other("the SMP timed out".into()));
    }
    let status = u16::from_be_bytes([r.mad[4], r.mad[5]]);
    // The attribute data follows the directed route: at 176 in an OPA SMP, 64 in an IB one.
    let at = if a.ib { 64 } else { 176 };
    println!(
        "method {:#04x} status {status:#06x} attr {:#06x} bytes {}",
        r.mad[3],
        a.attr,
        r.mad.len()
    );
    let data = r.mad.get(at..).unwrap_or(&[]);
    let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
    println!("data {hex}");
    Ok(())
}

#[derive(clap::Args)]
struct Args {
    /// umad device of the requester (umad0)
    #[arg(value_name = "REQ_UMAD")]
    req: String,
    /// umad device of the responder (may be the same)
    #[arg(value_name = "RESP_UMAD")]
    resp: String,
    /// LID to send the Get to
    #[arg(value_name = "DLID", value_parser = num::<u16>)]
    dlid: u16,
    /// Index of the P_Key to send with
    #[arg(long, value_name = "N", default_value = "0", value_parser = num::<u16>)]
    pkey_index: u16,
    /// Succeed only when the request times out (a MAD dropped on the way)
    #[arg(long)]
    expect_timeout: bool,
    /// Succeed only when the request is taken but fails to leave (a port that is down): ib_umad
    /// reports such a send to no one, so nothing comes back, not even a timeout
    #[arg(long, conflicts_with = "expect_timeout")]
    expect_send_error: bool,
}

fn run(a: &Args) -> Result<bool, String> {
    let err = |what: &str, e: io::Error| format!("{what}: {e}");
    let (mut req, req_id) =
        open(&a.req, false).map_err(|e| err(&format!("requester agent on {}", a.req), e))?;
    let (mut resp, resp_id) =
        open(&a.resp, true).map_err(|e| err(&format!("responder agent on {}", a.resp), e))?;
    let tid = 0x5a5a_0000 | std::process::id() & 0xffff;
    let mad = request(tid);
    let hdr = SendHdr {
        timeout_ms: 1000,
        ..SendHdr::gsi(req_id, a.dlid, a.pkey_index)
    };
    req.send(&hdr, &mad)
        .map_err(|e| err("send the request", e.into()))?;
    println!(
        "{}: sent Get tid {tid:#x} to LID {} (P_Key index {})",
        a.req, a.dlid, a.pkey_index
    );

    match resp
        .recv(Duration::from_secs(2))
        .map_err(|e| err("responder read", e.into()))?
    {
        None => println!("{}: no request arrived", a.resp),
        Some(r) => {
            println!(
                "{}: got method {:#04x} tid {:#x} from LID {} QP {} P_Key index {} ({} bytes)",
                a.resp,
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
            let hdr = SendHdr {
                qpn: r.qpn,
                ..SendHdr::gsi(resp_id, r.lid, r.pkey_index)
            };
            resp.send(&hdr, &answer)
                .map_err(|e| err("send the response", e.into()))?;
        }
    }

    match req
        .recv(Duration::from_secs(4))
        .map_err(|e| err("requester read", e.into()))?
    {
        None if a.expect_send_error => {
            println!("{}: nothing came back (the send failed)", a.req);
            Ok(true)
        }
        None => Err("the requester got neither a response nor a timeout".into()),
        Some(r) if r.timed_out() => {
            println!("{}: request timed out", a.req);
            Ok(a.expect_timeout)
        }
        Some(r) if r.status != 0 => Err(format!("the requester got status {}", r.status)),
        Some(r) => {
            println!(
                "{}: got method {:#04x} tid {:#x} from LID {}",
                a.req,
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
            Ok(!a.expect_timeout && !a.expect_send_error)
        }
    }
}

fn main() -> ExitCode {
    let args = match Cli::parse().cmd {
        Cmd::Ping(args) => args,
        Cmd::Traps(a) => {
            return match traps(&a) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => {
                    eprintln!("opasim-umad: not enough traps in {} s", a.secs);
                    ExitCode::FAILURE
                }
                Err(e) => {
                    eprintln!("opasim-umad: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        Cmd::Smp(a) => {
            return match smp(&a) {
                Ok(()) => ExitCode::SUCCESS,
                Err(SmpError::Refused(e)) => {
                    println!("send refused: {e}");
                    ExitCode::from(2)
                }
                Err(SmpError::Other(e)) => {
                    eprintln!("opasim-umad: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "opasim-umad: FAIL (expected {})",
                if args.expect_timeout {
                    "a timeout"
                } else if args.expect_send_error {
                    "a failed send"
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
