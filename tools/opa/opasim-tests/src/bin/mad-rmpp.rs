// SPDX-License-Identifier: GPL-2.0

//! `mad-rmpp`: sends a VEMA Get of VESW port info with an active RMPP header to a VNIC
//! driver's agent and prints everything that comes back.
//!
//! ```text
//! mad-rmpp -d UMAD --dlid LID CASE [--vport N] [--timeout-ms T] [--wait-ms W] [--pkey-index P]
//! ```
//!
//! `CASE` is `single` (one RMPP DATA segment, flags Active|First|Last), `two-segments` (a
//! request of 3000 data bytes: segment 1 Active|First, then segment 2 Active|Last, both
//! with the same TID) or `plain` (the same Get without RMPP). Each segment is sent from a
//! send-only agent without RMPP, so that the MAD layer sends it as written and hands back
//! whatever comes (see `opasim_tests::rmpp`), with a time-out of T ms (default 1000); then
//! every MAD of its TID that arrives in the next W ms (default 2500) is printed: an answer
//! (method, status, the RMPP type and flags it carries), an RMPP ACK, STOP or ABORT, or
//! umad's notice that the segment got no answer in time. The last line sums it up:
//!
//! ```text
//! mad-rmpp single: result: ack 1, rmpp-answer 1, plain-answer 0, no-answer 0
//! ```
//!
//! Exit status: for `single` and `two-segments`, 0 when nothing but answers with an inactive
//! RMPP header came back (or nothing at all: an agent without RMPP may drop the request), 1
//! when an RMPP ACK, STOP or ABORT, an RMPP-active answer or anything else came; for
//! `plain`, 0 when it was answered; 2 on errors.

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use opa_umad::{umad_dev_path, Device, Registration, SendHdr};
use opa_wire::mad::{ATTR_VESWPORT_INFO, METHOD_GET};
use opasim_tests::cli::{nonzero, num};
use opasim_tests::rmpp::{self, Reply};

/// Data bytes of the two-segment request (one segment holds 2008).
const TWO_SEGMENT_DATA: usize = 3000;

/// Sends a VEMA Get of VESW port info with an active RMPP header to a VNIC driver's agent
/// and prints everything that comes back.
#[derive(Parser)]
#[command(name = "mad-rmpp")]
struct Args {
    /// The umad device to send from (umad0 or /dev/infiniband/umad0)
    #[arg(short = 'd', value_name = "UMAD")]
    umad: String,
    /// LID of the agent
    #[arg(long, value_name = "LID", value_parser = nonzero::<u16>)]
    dlid: u16,
    /// One RMPP segment, two, or the Get without RMPP
    #[arg(value_name = "CASE", value_parser = ["single", "two-segments", "plain"])]
    case: String,
    /// The vport asked for
    #[arg(long, value_name = "N", default_value = "0", value_parser = num::<u32>)]
    vport: u32,
    /// umad's time-out of each segment, in ms
    #[arg(long, value_name = "T", default_value = "1000", value_parser = num::<u32>)]
    timeout_ms: u32,
    /// How long to wait for what comes back after each segment, in ms
    #[arg(long, value_name = "W", default_value = "2500", value_parser = num::<u64>)]
    wait_ms: u64,
    /// Index of the P_Key to send with
    #[arg(long, value_name = "P", default_value = "0", value_parser = num::<u16>)]
    pkey_index: u16,
}

/// What came back over the whole case.
#[derive(Default)]
struct Tally {
    plain_answers: u32,
    rmpp_answers: u32,
    acks: u32,
    stop_abort: u32,
    other: u32,
    no_answer: u32,
}

fn run(a: &Args) -> Result<ExitCode, String> {
    let case = a.case.as_str();
    // The lower half of the TID (ib_umad sets the upper half): one per run.
    let tid = 0x524d_0000 | (std::process::id() & 0xffff);
    let segs = match case {
        "single" => rmpp::get_segments(tid, ATTR_VESWPORT_INFO, a.vport, 0),
        "two-segments" => rmpp::get_segments(tid, ATTR_VESWPORT_INFO, a.vport, TWO_SEGMENT_DATA),
        _ => vec![rmpp::plain(METHOD_GET, tid, ATTR_VESWPORT_INFO, a.vport)],
    };
    // A send-only agent without RMPP: answers come back to it by TID, and the MAD layer
    // neither cuts nor reassembles anything for it.
    let umad = a.umad.strip_prefix("/dev/infiniband/").unwrap_or(&a.umad);
    let (mut agent, id) = Device::open_agent(umad_dev_path(umad), &Registration::default())
        .map_err(|e| format!("cannot register an agent on {umad}: {e}"))?;
    let mut t = Tally::default();
    let n = segs.len();
    for (i, seg) in segs.iter().enumerate() {
        println!(
            "mad-rmpp {case}: sent segment {}/{n}: Get VESW port info vport {} to LID {:#x}, \
             tid {tid:#010x}, RMPP {}, payload length {}",
            i + 1,
            a.vport,
            a.dlid,
            rmpp::rmpp_text(seg[25], seg[26]),
            u32::from_be_bytes([seg[32], seg[33], seg[34], seg[35]])
        );
        agent
            .send(
                &SendHdr {
                    timeout_ms: a.timeout_ms,
                    ..SendHdr::gsi(id, a.dlid, a.pkey_index)
                },
                seg,
            )
            .map_err(|e| format!("send of segment {}: {e}", i + 1))?;
        let deadline = Instant::now() + Duration::from_millis(a.wait_ms);
        let mut got = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let Some(r) = agent.recv(left).map_err(|e| format!("read: {e}"))? else {
                break;
            };
            if r.tid() as u32 != tid {
                println!(
                    "mad-rmpp {case}: ignored a MAD of TID {:#018x} (not ours)",
                    r.tid()
                );
                continue;
            }
            got += 1;
            if r.status == libc::ETIMEDOUT {
                t.no_answer += 1;
                println!(
                    "mad-rmpp {case}: segment {}: got no answer in {} ms (umad time-out)",
                    i + 1,
                    a.timeout_ms
                );
                continue;
            }
            if r.status != 0 {
                return Err(format!("umad read status {}", r.status));
            }
            let reply = Reply::of(&r.mad);
            match &reply {
                Reply::Answer { .. } if reply.is_plain_answer() => t.plain_answers += 1,
                Reply::Answer { .. } => t.rmpp_answers += 1,
                Reply::Ack { .. } => t.acks += 1,
                Reply::StopOrAbort { .. } => t.stop_abort += 1,
                Reply::Other { .. } => t.other += 1,
            }
            println!(
                "mad-rmpp {case}: segment {}: got {} ({} bytes)",
                i + 1,
                reply.describe(),
                r.mad.len()
            );
        }
        if got == 0 {
            t.no_answer += 1;
            println!(
                "mad-rmpp {case}: segment {}: nothing came back in {} ms",
                i + 1,
                a.wait_ms
            );
        }
    }
    println!(
        "mad-rmpp {case}: result: ack {}, rmpp-answer {}, plain-answer {}, no-answer {}, \
         stop-abort {}, other {}",
        t.acks, t.rmpp_answers, t.plain_answers, t.no_answer, t.stop_abort, t.other
    );
    let rmpp_seen = t.acks + t.rmpp_answers + t.stop_abort + t.other;
    let ok = if case == "plain" {
        t.plain_answers > 0 && rmpp_seen == 0
    } else {
        rmpp_seen == 0
    };
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mad-rmpp: {e}");
            ExitCode::from(2)
        }
    }
}
