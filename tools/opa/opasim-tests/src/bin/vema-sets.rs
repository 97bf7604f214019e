// SPDX-License-Identifier: GPL-2.0

//! `vema-sets`: many VEMA Sets from one process, for the race scenarios, where one
//! `vnic-em` run per Set would make the EM's side far slower than what it races against.
//!
//! ```text
//! vema-sets -d UMAD --dlid LID --attr ID [--mod N] [--count C | --secs S] [--timeout-ms T] HEX...
//! ```
//!
//! Sends `C` Sets (default: one per `HEX`; with `--secs`, as many as `S` seconds take) of
//! attribute `ID` with modifier `N` to LID, one at a time, their data taken from the `HEX` arguments in turn (the first Set carries the
//! first, and so on, round and round), each in a whole OPA MAD, and waits up to T ms
//! (default 1000) for each answer. Prints one line, `vema-sets: C Sets: A answered with
//! status 0, B with another status, L not answered, in U us` (the time from the first send to
//! the last answer: `make bench` makes Sets per second of it), and exits 0 when every Set was
//! answered with status 0, 1 if not, 2 on errors.

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use opa_umad::{umad_dev_path, Device, Registration, SendHdr};
use opa_wire::mad::{METHOD_SET, OPA_VNIC_EMA_DATA};
use opasim_tests::cli::{nonzero, num};
use opasim_tests::rmpp;

fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 || s.len() / 2 > OPA_VNIC_EMA_DATA {
        return Err(format!(
            "bad data '{s}': an even number of hex digits, at most 2008 bytes"
        ));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| format!("bad hex '{s}'")))
        .collect()
}

/// Many VEMA Sets from one process, one at a time, each waiting for its answer.
#[derive(Parser)]
#[command(name = "vema-sets")]
struct Args {
    /// The umad device to send from (umad0 or /dev/infiniband/umad0)
    #[arg(short = 'd', value_name = "UMAD")]
    umad: String,
    /// LID of the agent
    #[arg(long, value_name = "LID", value_parser = nonzero::<u16>)]
    dlid: u16,
    /// Attribute id of the Sets
    #[arg(long, value_name = "ID", value_parser = nonzero::<u16>)]
    attr: u16,
    /// Attribute modifier of the Sets
    #[arg(long = "mod", value_name = "N", default_value = "0", value_parser = num::<u32>)]
    attr_mod: u32,
    /// Sets to send (default: one per HEX)
    #[arg(long, value_name = "C", value_parser = num::<u64>, conflicts_with = "secs")]
    count: Option<u64>,
    /// Send Sets for this many seconds instead of a count (make profile's windows: a count
    /// that outlasts one depends on how fast the agent answers)
    #[arg(long, value_name = "S", value_parser = nonzero::<u64>)]
    secs: Option<u64>,
    /// How long each Set waits for its answer, in ms
    #[arg(long, value_name = "T", default_value = "1000", value_parser = num::<u32>)]
    timeout_ms: u32,
    /// The data of the Sets, in turn, in hex (at most 2008 bytes)
    #[arg(value_name = "HEX", required = true, value_parser = unhex)]
    data: Vec<Vec<u8>>,
}

fn run(a: &Args) -> Result<ExitCode, String> {
    // A send-only agent: the answers come back to it by TID.
    let umad = a.umad.strip_prefix("/dev/infiniband/").unwrap_or(&a.umad);
    let (mut agent, id) = Device::open_agent(umad_dev_path(umad), &Registration::default())
        .map_err(|e| format!("cannot register an agent on {umad}: {e}"))?;
    let limit = a.secs.map(Duration::from_secs);
    let count = match limit {
        Some(_) => u64::MAX,
        None => a.count.unwrap_or(a.data.len() as u64),
    };
    let mut sent = 0u64;
    let base = (std::process::id() & 0xffff) << 16;
    let (mut ok, mut other, mut lost) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    for i in 0..count {
        if limit.is_some_and(|l| start.elapsed() >= l) {
            break;
        }
        sent += 1;
        let tid = base | (i as u32 & 0xffff);
        let mut mad = rmpp::plain(METHOD_SET, tid, a.attr, a.attr_mod);
        let data = &a.data[(i % a.data.len() as u64) as usize];
        mad[40..40 + data.len()].copy_from_slice(data);
        agent
            .send(
                &SendHdr {
                    timeout_ms: a.timeout_ms,
                    ..SendHdr::gsi(id, a.dlid, 0)
                },
                &mad,
            )
            .map_err(|e| format!("send of Set {i}: {e}"))?;
        // umad's time-out notice comes soon after the time-out; past that the Set is lost.
        let deadline = Instant::now() + Duration::from_millis(u64::from(a.timeout_ms) + 2000);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(r) = agent.recv(left).map_err(|e| format!("read: {e}"))? else {
                lost += 1;
                break;
            };
            if r.tid() as u32 != tid {
                continue;
            }
            match (r.status, r.mad.get(4..6)) {
                (libc::ETIMEDOUT, _) => lost += 1,
                (0, Some([0, 0])) => ok += 1,
                _ => other += 1,
            }
            break;
        }
    }
    println!(
        "vema-sets: {sent} Sets: {ok} answered with status 0, {other} with another status, \
         {lost} not answered, in {} us",
        start.elapsed().as_micros()
    );
    Ok(if ok == sent {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vema-sets: {e}");
            ExitCode::from(2)
        }
    }
}
