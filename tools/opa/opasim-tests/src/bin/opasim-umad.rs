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
            Ok(!a.expect_timeout)
        }
    }
}

fn main() -> ExitCode {
    let Cmd::Ping(args) = Cli::parse().cmd;
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
