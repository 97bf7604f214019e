// SPDX-License-Identifier: GPL-2.0

//! The commands, over any [`Fabric`], one a module as cargo's are:
//! `apply`, `show`, `counters`, `traps`, `watch`, `set` and `raw`. Each
//! writes its report to `out`, its errors to `err`, and returns the
//! process exit code. What more than one of them uses is here: where they
//! write, how `show` and `counters` pick vports, and the read of a whole
//! vport.

pub mod apply;
pub mod counters;
pub mod raw;
pub mod set;
pub mod show;
pub mod traps;
pub mod watch;

use std::io::Write;

use opa_wire::mad::MAD_STATUS_INVALID_ATTRIB_VALUE;

use crate::client::{Client, EmError};
use crate::config::Config;
use crate::fabric::Fabric;
use crate::view::{
    error_fields, fields_json, info_view, macs_view, summary_fields, table_view, VportView,
};

pub use apply::{apply, ApplyOpts};
pub use counters::counters;
pub use raw::{raw, RawReq};
pub use set::{set, EntryArg, SetOpts};
pub use show::show;
pub use traps::{traps, TrapOpts};

/// Success.
pub const EXIT_OK: u8 = 0;
/// Usage or config error: nothing was sent.
pub const EXIT_USAGE: u8 = 1;
/// Fabric error (timeout, MAD status, bad response): nothing was changed
/// (or, for read-only commands, some reads failed).
pub const EXIT_FABRIC: u8 = 2;
/// Partial apply: some Sets were applied, then something failed.
pub const EXIT_PARTIAL: u8 = 3;
/// Local error: no umad device, or it cannot be opened or registered.
pub const EXIT_DEVICE: u8 = 4;
/// `apply --check`: the fabric differs from the config.
pub const EXIT_DIFFERS: u8 = 5;

/// Where a command writes.
pub struct Io<'a> {
    /// Reports.
    pub out: &'a mut dyn Write,
    /// Errors and warnings.
    pub err: &'a mut dyn Write,
}

pub(crate) fn report_err(io: &mut Io<'_>, e: &EmError) {
    let _ = writeln!(io.err, "vnic-em: {e}");
}

pub(crate) fn exit_for(e: &EmError) -> u8 {
    match e {
        EmError::Transport(_) => EXIT_DEVICE,
        _ => EXIT_FABRIC,
    }
}

/// How `show` and `counters` pick vports.
#[derive(Debug, Clone, Default)]
pub struct Select {
    /// Node port LIDs (all of the config if empty and a config is given).
    pub lids: Vec<u16>,
    /// Virtual ports (all if empty).
    pub vports: Vec<u8>,
    /// Without a config or `vports`: probe vports `0..scan` of each LID.
    pub scan: u8,
}

/// The (LID, vport) pairs to read; the probe reads of a scan may fail.
pub fn resolve<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    io: &mut Io<'_>,
) -> Result<Vec<(u16, u8)>, u8> {
    if let Some(cfg) = cfg {
        let v: Vec<(u16, u8)> = cfg
            .vports
            .iter()
            .filter(|p| sel.lids.is_empty() || sel.lids.contains(&p.lid))
            .filter(|p| sel.vports.is_empty() || sel.vports.contains(&p.vport))
            .map(|p| (p.lid, p.vport))
            .collect();
        return Ok(v);
    }
    if sel.lids.is_empty() {
        let _ = writeln!(
            io.err,
            "vnic-em: give --config FILE or --lid LID to say which vports to read"
        );
        return Err(EXIT_USAGE);
    }
    let mut out = Vec::new();
    for &lid in &sel.lids {
        if !sel.vports.is_empty() {
            out.extend(sel.vports.iter().map(|&v| (lid, v)));
            continue;
        }
        // Counters answer 0x001c for a vport that does not exist.
        for v in 0..sel.scan {
            match client.get_error_counters(lid, v) {
                Ok(_) => out.push((lid, v)),
                Err(EmError::Status { status, .. })
                    if status == MAD_STATUS_INVALID_ATTRIB_VALUE => {}
                Err(e) => {
                    report_err(io, &e);
                    return Err(exit_for(&e));
                }
            }
        }
    }
    Ok(out)
}

/// Reads every attribute of one vport.
pub fn read_vport<F: Fabric>(
    client: &mut Client<F>,
    lid: u16,
    vport: u8,
    counters: bool,
) -> Result<VportView, EmError> {
    let info = client.get_vport_info(lid, vport)?;
    let mut v = info_view(lid, vport, &info);
    if !v.exists {
        return Ok(v);
    }
    v.mac_table = table_view(&client.read_mac_table(lid, vport)?);
    v.iface_ucast_macs = macs_view(&client.get_iface_macs(lid, vport, false)?);
    v.iface_mcast_macs = macs_view(&client.get_iface_macs(lid, vport, true)?);
    if counters {
        let s = client.get_summary_counters(lid, vport)?;
        let e = client.get_error_counters(lid, vport)?;
        v.summary_counters = Some(fields_json(&summary_fields(&s)));
        v.error_counters = Some(fields_json(&error_fields(&e)));
    }
    Ok(v)
}
