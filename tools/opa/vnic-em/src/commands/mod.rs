// SPDX-License-Identifier: GPL-2.0

//! The commands, over any [`Fabric`], one a module as cargo's are:
//! `apply`, `show`, `counters`, `discover`, `traps`, `watch`, `set` and `raw`. Each
//! writes its report to `out` and the errors it goes on after to `err`,
//! and returns its exit code, or the error that stopped it
//! ([`crate::error`]). A write that fails stops it: nothing more is sent
//! to the fabric once the reader of the output is gone. What more than
//! one of them uses is here: where they write, how `show` and `counters`
//! pick vports, and the read of a whole vport.

pub mod apply;
pub mod counters;
pub mod discover;
pub mod raw;
pub mod set;
pub mod show;
pub mod traps;
pub mod watch;

use std::io::{self, Write};

use opa_wire::mad::MAD_STATUS_INVALID_ATTRIB_VALUE;

use crate::client::{Client, EmError};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::fabric::Fabric;
use crate::view::{
    error_fields, fields_json, info_view, macs_view, summary_fields, table_view, VportView,
};

pub use apply::{apply, apply_offline, join_groups, ApplyOpts};
pub use counters::{counters, counters_with, CountersFormat, CountersOpts};
pub use discover::{discover, DiscoverFormat, DiscoverOpts};
pub use raw::{raw, raw_as, RawReq};
pub use set::{set, EntryArg, SetOpts};
pub use show::show;
pub use traps::{traps, TrapOpts};

/// Where a command writes.
pub struct Io<'a> {
    /// Reports.
    pub out: &'a mut dyn Write,
    /// Errors and warnings.
    pub err: &'a mut dyn Write,
}

/// Reports an error that the command goes on after; its exit code is
/// [`Exit::of`](crate::error::Exit::of) it.
pub(crate) fn report_err(io: &mut Io<'_>, e: &EmError) -> io::Result<()> {
    writeln!(io.err, "vnic-em: {e}")
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
) -> Result<Vec<(u16, u8)>> {
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
        return Err(Error::Usage(
            "give --config FILE or --lid LID to say which vports to read".into(),
        ));
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
                Err(e) => return Err(e.into()),
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
) -> std::result::Result<VportView, EmError> {
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
