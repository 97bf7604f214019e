// SPDX-License-Identifier: GPL-2.0

//! `opasim-sa`: the subnet administrator of opasim's fabric (see the library's documentation).
//!
//! ```text
//! opasim-sa [--umad umadN | --hca DEV] [--port N] [--root DIR]
//! ```
//!
//! It registers the SA class (0x03) for Get and GetTable at class version 0x80, and for
//! Get, GetTable and Set at InfiniBand's class version 2 (PathRecords and McMemberRecords,
//! which opa-fm serves only there), on the chosen
//! port, with RMPP done by the kernel's MAD layer, claims the SM role in opasim's `sm` file,
//! prints `opasim-sa: ready on DEV port N (umadN), LID 0xL`, then one line per query, until
//! SIGINT or SIGTERM, when it gives the role up.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use opa_umad::{list_ports, select_port, Device, PortSelect, Registration, SendHdr, QP1_QKEY};
use opa_wire::sa::{
    IB_SA_CLASS_VERSION, METHOD_GET, METHOD_GET_TABLE, METHOD_GET_TABLE_RESP, METHOD_SET,
    RMPP_VERSION, SA_CLASS, SA_CLASS_VERSION,
};
use opasim_sa::answer::{answer_from, needs_fabric, Requester};
use opasim_sa::fabric::{FabricView, Source};

/// The subnet administrator of opasim's fabric.
#[derive(Parser, Debug)]
#[command(name = "opasim-sa", version, about)]
struct Args {
    /// The umad device of the SM's port (`umad0`).
    #[arg(long)]
    umad: Option<String>,
    /// The RDMA device of the SM's port (`opasim0`).
    #[arg(long)]
    hca: Option<String>,
    /// The port number on that device.
    #[arg(long)]
    port: Option<u8>,
    /// Root of the sysfs, debugfs and /dev trees (tests).
    #[arg(long, default_value = "/")]
    root: PathBuf,
}

/// How long a GetTableResp's segments wait for their ACKs, and how often they are resent:
/// what the MAD layer's RMPP sender is told (IBA 13.6.3).
const RMPP_TIMEOUT_MS: u32 = 1000;
const RMPP_RETRIES: u32 = 3;

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("opasim-sa: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let ports = list_ports(&args.root).map_err(|e| e.to_string())?;
    let sel = PortSelect {
        umad: args.umad.clone(),
        hca: args.hca.clone(),
        port: args.port,
    };
    let port = select_port(&ports, &sel).map_err(|e| e.to_string())?;
    let mut dev = Device::open(&port.dev_path)
        .map_err(|e| format!("cannot open {}: {e}", port.dev_path.display()))?;
    // OPA's class version for NodeRecords and PortInfoRecords; InfiniBand's for PathRecords
    // and McMemberRecords (Set: a join), which opa-fm serves only there.
    for (version, set) in [(SA_CLASS_VERSION, false), (IB_SA_CLASS_VERSION, true)] {
        let mut reg = Registration::class(SA_CLASS, version)
            .with_method(METHOD_GET)
            .with_method(METHOD_GET_TABLE)
            .with_rmpp(RMPP_VERSION);
        if set {
            reg = reg.with_method(METHOD_SET);
        }
        dev.register(&reg).map_err(|e| {
            format!(
                "cannot register the SA class (version {version:#04x}) on {} (another SA on \
                 the port?): {e}",
                port.dev_path.display()
            )
        })?;
    }
    let source = Source::new(&args.root);
    source
        .claim_sm(Some((&port.ibdev, port.port)))
        .map_err(|e| format!("cannot claim the SM role (is opasim loaded?): {e}"))?;

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).map_err(|e| e.to_string())?;
    }
    let lid = source
        .snapshot()
        .ok()
        .and_then(|v| {
            v.ports
                .iter()
                .find(|p| p.ibdev == port.ibdev && p.port_num == port.port)
                .map(|p| p.lid)
        })
        .unwrap_or(0);
    println!(
        "opasim-sa: ready on {} port {} ({}), LID {lid:#x}",
        port.ibdev, port.port, port.name
    );
    let _ = std::io::stdout().flush();

    let result = serve(&mut dev, &source, (&port.ibdev, port.port), &stop);
    let _ = source.claim_sm(None);
    println!("opasim-sa: stopped");
    result
}

fn serve(
    dev: &mut Device,
    source: &Source,
    (ibdev, port): (&str, u8),
    stop: &AtomicBool,
) -> Result<(), String> {
    while !stop.load(Ordering::Relaxed) {
        let r = match dev.recv(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => return Err(e.to_string()),
        };
        if r.status != 0 {
            // A response of ours that was not delivered (an RMPP transfer whose receiver
            // stopped acknowledging): the requester retries.
            println!(
                "opasim-sa: a response to LID {:#x} failed: status {}",
                r.lid, r.status
            );
            continue;
        }
        // The fabric as it is now: a LID changed since the last query is answered. Not read
        // for what needs none: the kernel's ClassPortInfo queries come from every port at
        // each port event, and reading sysfs for each would delay the queries behind them.
        let view = if needs_fabric(&r.mad) {
            source.snapshot().map_err(|e| e.to_string())?
        } else {
            FabricView::default()
        };
        // The P_Key the request came with: the SA port's at the index the MAD layer gives.
        let Some(pkey) = source.pkey(ibdev, port, r.pkey_index) else {
            println!(
                "opasim-sa: LID {:#x}: no P_Key at index {}: dropped",
                r.lid, r.pkey_index
            );
            continue;
        };
        let Some(a) = answer_from(&r.mad, &Requester { pkey }, &view) else {
            println!(
                "opasim-sa: LID {:#x}: attribute {:#06x} on P_Key {pkey:#06x}: dropped",
                r.lid,
                u16::from_be_bytes([
                    r.mad.get(16).copied().unwrap_or(0),
                    r.mad.get(17).copied().unwrap_or(0)
                ])
            );
            let _ = std::io::stdout().flush();
            continue;
        };
        let table = a.mad.get(3) == Some(&METHOD_GET_TABLE_RESP);
        let hdr = SendHdr {
            timeout_ms: if table { RMPP_TIMEOUT_MS } else { 0 },
            retries: if table { RMPP_RETRIES } else { 0 },
            qpn: r.qpn,
            qkey: QP1_QKEY,
            sl: r.sl,
            // The agent of the request's class version answers it.
            ..SendHdr::gsi(r.agent, r.lid, r.pkey_index)
        };
        match dev.send(&hdr, &a.mad) {
            Ok(()) => println!("opasim-sa: LID {:#x}: {}", r.lid, a.summary),
            Err(e) => println!("opasim-sa: LID {:#x}: {}: not sent: {e}", r.lid, a.summary),
        }
        let _ = std::io::stdout().flush();
    }
    Ok(())
}
