// SPDX-License-Identifier: GPL-2.0

//! The commands, over any [`Fabric`]: `apply`, `show`, `counters`,
//! `traps` and `set`. Each writes its report to `out`, its errors to
//! `err`, and returns the process exit code.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use opa_wire::mad::MAD_STATUS_INVALID_ATTRIB_VALUE;
use opa_wire::vema_info::{VeswPortInfo, STATE_DROP_ALL, STATE_FORWARDING};
use opa_wire::vema_mac::{MacTableEntry, DLID_SD_SRC_MAC};
use serde::Serialize;

use crate::client::{Client, EmError, MacTableState};
use crate::config::Config;
use crate::fabric::Fabric;
use crate::mac::Mac;
use crate::mad::{Method, Target};
use crate::plan::{
    class_port_info_update, desired, info_changes, table_digest, table_sets, Change, MacSet,
};
use crate::view::{
    counters_text_block, error_fields, fields_json, info_view, macs_view, summary_fields,
    table_view, trap_text, trap_view, vport_text, VportView,
};

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

fn report_err(io: &mut Io<'_>, e: &EmError) {
    let _ = writeln!(io.err, "vnic-em: {e}");
}

fn exit_for(e: &EmError) -> u8 {
    match e {
        EmError::Transport(_) => EXIT_DEVICE,
        _ => EXIT_FABRIC,
    }
}

// ---------------------------------------------------------------------------
// apply

/// Options of `apply`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyOpts {
    /// Print the plan, send no Set.
    pub dry_run: bool,
    /// Like `dry_run`, and exit with [`EXIT_DIFFERS`] if there is any
    /// Set to send; implies `full_tables`.
    pub check: bool,
    /// Read the MAC tables even when their digest matches.
    pub full_tables: bool,
    /// Print the plan and result as JSON.
    pub json: bool,
}

/// What one Set does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Set ClassPortInfo (trap LID and SL).
    ClassPortInfo {
        /// The new value.
        cpi: opa_wire::vema_info::ClassPortInfo,
        /// Trap LID before.
        from: u32,
    },
    /// Set VESW port info.
    VportInfo {
        /// The value to set.
        info: Box<VeswPortInfo>,
        /// The port does not exist yet.
        create: bool,
        /// The fields that change.
        changes: Vec<Change>,
    },
    /// Set MAC table entries.
    MacEntries {
        /// The window.
        set: MacSet,
        /// Digest before.
        from_digest: u32,
        /// Digest to set.
        digest: u32,
    },
}

/// One Set of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Node port.
    pub lid: u16,
    /// Virtual port, except for ClassPortInfo.
    pub vport: Option<u8>,
    /// Vesw id and name, for people.
    pub vesw: Option<(u16, String)>,
    /// What to set.
    pub action: Action,
}

/// The Sets that make the fabric match a config, and what could not be
/// read.
#[derive(Debug, Default)]
pub struct Plan {
    /// The Sets, in the order to send them.
    pub steps: Vec<Step>,
    /// Vports already as configured.
    pub up_to_date: Vec<(u16, u8)>,
    /// Reads that failed (their ports are left out of the plan).
    pub errors: Vec<EmError>,
}

#[derive(Serialize)]
struct StepJson<'a> {
    lid: u16,
    vport: Option<u8>,
    vesw: Option<u16>,
    action: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    changes: Vec<Change>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    digest: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trap_lid: Option<u32>,
    status: &'a str,
}

impl Step {
    /// The node port, vport and vesw, for people: `LID 0x0002 vport 0 [vesw 1 red]`.
    pub fn name(&self) -> String {
        let mut s = format!("LID {:#06x}", self.lid);
        if let Some(v) = self.vport {
            s.push_str(&format!(" vport {v}"));
        }
        if let Some((id, name)) = &self.vesw {
            if name.is_empty() {
                s.push_str(&format!(" [vesw {id}]"));
            } else {
                s.push_str(&format!(" [vesw {id} {name}]"));
            }
        }
        s
    }

    fn text(&self) -> String {
        match &self.action {
            Action::ClassPortInfo { cpi, from } => format!(
                "{}: set class port info: trap LID {:#x} -> {:#x} (SL {})",
                self.name(),
                from,
                cpi.trap_lid,
                cpi.trap_sl()
            ),
            Action::VportInfo {
                create, changes, ..
            } => {
                let mut s = format!(
                    "{}: {} vesw port info",
                    self.name(),
                    if *create { "create" } else { "update" }
                );
                for c in changes {
                    s.push_str(&format!("\n      {:<20} {} -> {}", c.field, c.from, c.to));
                }
                s
            }
            Action::MacEntries {
                set,
                from_digest,
                digest,
            } => {
                let range = match set.entries.len() {
                    0 => "digest only".to_string(),
                    1 => format!("slot {}", set.offset),
                    n => format!("slots {}..={}", set.offset, usize::from(set.offset) + n - 1),
                };
                format!(
                    "{}: set MAC table {range} ({} changed), digest {from_digest:#010x} -> {digest:#010x}",
                    self.name(),
                    set.changed
                )
            }
        }
    }

    fn json(&self, status: &str) -> serde_json::Value {
        let mut j = StepJson {
            lid: self.lid,
            vport: self.vport,
            vesw: self.vesw.as_ref().map(|v| v.0),
            action: "",
            changes: Vec::new(),
            offset: None,
            count: None,
            digest: None,
            trap_lid: None,
            status,
        };
        match &self.action {
            Action::ClassPortInfo { cpi, .. } => {
                j.action = "set-class-port-info";
                j.trap_lid = Some(cpi.trap_lid);
            }
            Action::VportInfo {
                create, changes, ..
            } => {
                j.action = if *create {
                    "create-vport"
                } else {
                    "update-vport"
                };
                j.changes = changes.clone();
            }
            Action::MacEntries { set, digest, .. } => {
                j.action = "set-mac-entries";
                j.offset = Some(set.offset);
                j.count = Some(set.entries.len());
                j.digest = Some(*digest);
            }
        }
        serde_json::to_value(j).unwrap_or(serde_json::Value::Null)
    }
}

/// The node port LIDs of a config, each once, in config order.
pub fn config_lids(cfg: &Config) -> Vec<u16> {
    let mut lids: Vec<u16> = Vec::new();
    for p in &cfg.vports {
        if !lids.contains(&p.lid) {
            lids.push(p.lid);
        }
    }
    lids
}

/// Reads the fabric and computes the Sets that make it match `cfg`.
pub fn make_plan<F: Fabric>(client: &mut Client<F>, cfg: &Config, full_tables: bool) -> Plan {
    make_plan_lids(client, cfg, &config_lids(cfg), full_tables)
}

/// Like [`make_plan`], for the node ports `lids` of the config only (the
/// MAC tables are still those of the whole config): `watch` checks one
/// node port at a time.
pub fn make_plan_lids<F: Fabric>(
    client: &mut Client<F>,
    cfg: &Config,
    lids: &[u16],
    full_tables: bool,
) -> Plan {
    let want = desired(cfg);
    let trap_lid = cfg.em.trap_lid.unwrap_or_else(|| client.local_lid());
    let mut plan = Plan::default();
    for &lid in lids {
        match client.get_class_port_info(lid) {
            Ok(cpi) => {
                if let Some(n) = class_port_info_update(&cpi, trap_lid, cfg.em.trap_sl) {
                    plan.steps.push(Step {
                        lid,
                        vport: None,
                        vesw: None,
                        action: Action::ClassPortInfo {
                            cpi: n,
                            from: cpi.trap_lid,
                        },
                    });
                }
            }
            Err(e) => {
                // The node port does not answer: leave all of it out.
                plan.errors.push(e);
                continue;
            }
        }
        for d in want.iter().filter(|d| d.lid == lid) {
            let vesw = Some((d.vesw, d.vesw_name.clone()));
            let cur = match client.get_vport_info(lid, d.vport) {
                Ok(c) => c,
                Err(e) => {
                    plan.errors.push(e);
                    continue;
                }
            };
            let exists = cur != VeswPortInfo::vema_pod();
            let changes = info_changes(&cur, &d.info);
            let mut dirty = false;
            if !changes.is_empty() {
                dirty = true;
                plan.steps.push(Step {
                    lid,
                    vport: Some(d.vport),
                    vesw: vesw.clone(),
                    action: Action::VportInfo {
                        info: Box::new(d.info),
                        create: !exists,
                        changes,
                    },
                });
            }
            let cur_digest = cur.vport.mac_tbl_digest;
            let cur_table = if !exists {
                Some(MacTableState::default())
            } else if cur_digest == d.digest && !full_tables {
                None
            } else {
                match client.read_mac_table(lid, d.vport) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        plan.errors.push(e);
                        continue;
                    }
                }
            };
            if let Some(t) = cur_table {
                for set in table_sets(&t.entries, t.digest, &d.table, d.digest) {
                    dirty = true;
                    plan.steps.push(Step {
                        lid,
                        vport: Some(d.vport),
                        vesw: vesw.clone(),
                        action: Action::MacEntries {
                            set,
                            from_digest: t.digest,
                            digest: d.digest,
                        },
                    });
                }
            }
            if !dirty {
                plan.up_to_date.push((lid, d.vport));
            }
        }
    }
    plan
}

/// Sends one Set of a plan; checks that a VESW port info Set took.
fn run_step<F: Fabric>(client: &mut Client<F>, step: &Step) -> Result<(), EmError> {
    match &step.action {
        Action::ClassPortInfo { cpi, .. } => {
            client.set_class_port_info(step.lid, cpi)?;
        }
        Action::VportInfo { info, .. } => {
            let vport = step.vport.unwrap_or(0);
            let got = client.set_vport_info(step.lid, vport, info)?;
            let diff = info_changes(&got, info);
            if !diff.is_empty() {
                let what: Vec<String> = diff
                    .iter()
                    .map(|c| format!("{} is {} (wanted {})", c.field, c.from, c.to))
                    .collect();
                return Err(EmError::BadResponse {
                    target: crate::mad::Target {
                        method: crate::mad::Method::Set,
                        attr_id: opa_wire::mad::ATTR_VESWPORT_INFO,
                        lid: step.lid,
                        vport: step.vport,
                    },
                    reason: format!("the agent did not take the values: {}", what.join(", ")),
                });
            }
        }
        Action::MacEntries { set, digest, .. } => {
            client.set_mac_entries(
                step.lid,
                step.vport.unwrap_or(0),
                set.offset,
                *digest,
                &set.entries,
            )?;
        }
    }
    Ok(())
}

/// What sending the Sets of a plan came to.
#[derive(Debug, Default)]
pub struct Sent {
    /// Per step: "ok", "failed" or "skipped".
    pub statuses: Vec<&'static str>,
    /// Sets that were applied.
    pub applied: usize,
    /// Why Sets failed, in order.
    pub failed: Vec<EmError>,
}

/// Sends the Sets of a plan in order. A failed Set skips the rest of its
/// vport (they build on it: a MAC table Set on a vport that was not
/// created fails too); other vports go on. `apply` and `watch` both send
/// their Sets here.
pub fn send_steps<F: Fabric>(client: &mut Client<F>, steps: &[Step]) -> Sent {
    let mut sent = Sent {
        statuses: vec!["pending"; steps.len()],
        ..Sent::default()
    };
    let mut broken: Vec<(u16, Option<u8>)> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        if broken.contains(&(s.lid, s.vport)) {
            sent.statuses[i] = "skipped";
            continue;
        }
        match run_step(client, s) {
            Ok(()) => {
                sent.applied += 1;
                sent.statuses[i] = "ok";
            }
            Err(e) => {
                sent.statuses[i] = "failed";
                broken.push((s.lid, s.vport));
                sent.failed.push(e);
            }
        }
    }
    sent
}

/// `vnic-em apply`: plan, print, and (unless a dry run) send the Sets.
pub fn apply<F: Fabric>(
    client: &mut Client<F>,
    cfg: &Config,
    opts: ApplyOpts,
    io: &mut Io<'_>,
) -> u8 {
    let full = opts.full_tables || opts.check;
    let plan = make_plan(client, cfg, full);
    let read_errors = plan.errors.len();
    for e in &plan.errors {
        report_err(io, e);
    }
    let dry = opts.dry_run || opts.check;
    let mut statuses: Vec<&str> = vec![if dry { "planned" } else { "pending" }; plan.steps.len()];
    let mut applied = 0usize;
    let mut failed: Vec<EmError> = Vec::new();
    if !opts.json {
        let _ = writeln!(
            io.out,
            "EM at {}, {} vport(s) in the config",
            client.fabric().describe(),
            cfg.vports.len()
        );
        for s in &plan.steps {
            let _ = writeln!(io.out, "  {}", s.text());
        }
        for (lid, v) in &plan.up_to_date {
            let _ = writeln!(io.out, "  LID {lid:#06x} vport {v}: up to date");
        }
    }
    if !dry {
        let sent = send_steps(client, &plan.steps);
        for e in &sent.failed {
            report_err(io, e);
        }
        statuses = sent.statuses;
        applied = sent.applied;
        failed = sent.failed;
    }
    let total = plan.steps.len();
    if opts.json {
        let j = serde_json::json!({
            "em_lid": client.local_lid(),
            "dry_run": dry,
            "steps": plan.steps.iter().zip(&statuses).map(|(s, st)| s.json(st)).collect::<Vec<_>>(),
            "up_to_date": plan.up_to_date.iter().map(|(l, v)| serde_json::json!({"lid": l, "vport": v})).collect::<Vec<_>>(),
            "applied": applied,
            "errors": plan.errors.iter().chain(&failed).map(|e| e.to_string()).collect::<Vec<_>>(),
        });
        let _ = writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&j).unwrap_or_default()
        );
    } else if dry {
        let _ = match total {
            0 => writeln!(io.out, "nothing to do"),
            n => writeln!(io.out, "{n} Set(s) to send (dry run: none sent)"),
        };
    } else {
        let _ = match total {
            0 => writeln!(io.out, "nothing to do"),
            n => writeln!(io.out, "applied {applied} of {n} Set(s)"),
        };
    }
    let errors = read_errors + failed.len();
    if errors == 0 {
        if opts.check && total > 0 {
            EXIT_DIFFERS
        } else {
            EXIT_OK
        }
    } else if applied > 0 {
        EXIT_PARTIAL
    } else if plan
        .errors
        .iter()
        .chain(&failed)
        .all(|e| matches!(e, EmError::Transport(_)))
    {
        EXIT_DEVICE
    } else {
        EXIT_FABRIC
    }
}

// ---------------------------------------------------------------------------
// Which vports: show, counters

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

/// `vnic-em show`.
pub fn show<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    json: bool,
    counters: bool,
    io: &mut Io<'_>,
) -> u8 {
    let targets = match resolve(client, cfg, sel, io) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut views = Vec::new();
    let mut code = EXIT_OK;
    for (lid, vport) in targets {
        match read_vport(client, lid, vport, counters) {
            Ok(v) => {
                if !json {
                    let _ = write!(io.out, "{}", vport_text(&v));
                }
                views.push(v);
            }
            Err(e) => {
                report_err(io, &e);
                code = code.max(exit_for(&e));
            }
        }
    }
    if json {
        let _ = writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&views).unwrap_or_default()
        );
    }
    code
}

/// `vnic-em counters`.
pub fn counters<F: Fabric>(
    client: &mut Client<F>,
    cfg: Option<&Config>,
    sel: &Select,
    json: bool,
    io: &mut Io<'_>,
) -> u8 {
    let targets = match resolve(client, cfg, sel, io) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut all = Vec::new();
    let mut code = EXIT_OK;
    for (lid, vport) in targets {
        let r = client
            .get_summary_counters(lid, vport)
            .and_then(|s| Ok((s, client.get_error_counters(lid, vport)?)));
        match r {
            Ok((s, e)) => {
                if json {
                    all.push(serde_json::json!({
                        "lid": lid,
                        "vport": vport,
                        "summary": fields_json(&summary_fields(&s)),
                        "errors": fields_json(&error_fields(&e)),
                    }));
                } else {
                    let _ = write!(io.out, "{}", counters_text_block(lid, vport, &s, &e));
                }
            }
            Err(e) => {
                report_err(io, &e);
                code = code.max(exit_for(&e));
            }
        }
    }
    if json {
        let _ = writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&all).unwrap_or_default()
        );
    }
    code
}

// ---------------------------------------------------------------------------
// traps

/// Options of `traps`.
#[derive(Debug, Clone, Default)]
pub struct TrapOpts {
    /// Point the trap LID of these node ports at the EM first.
    pub arm: Vec<u16>,
    /// Trap SL to set when arming.
    pub trap_sl: u8,
    /// Stop after this many traps.
    pub count: Option<u32>,
    /// Stop after this long.
    pub timeout: Option<Duration>,
    /// One JSON object a line.
    pub json: bool,
}

/// `vnic-em traps`: arm, then print traps as they arrive.
pub fn traps<F: Fabric>(client: &mut Client<F>, opts: &TrapOpts, io: &mut Io<'_>) -> u8 {
    let me = client.local_lid();
    for &lid in &opts.arm {
        let r = client.get_class_port_info(lid).and_then(|cpi| {
            match class_port_info_update(&cpi, me, opts.trap_sl) {
                Some(n) => client.set_class_port_info(lid, &n).map(|_| ()),
                None => Ok(()),
            }
        });
        if let Err(e) = r {
            report_err(io, &e);
            return exit_for(&e);
        }
    }
    if !opts.json {
        let _ = writeln!(
            io.out,
            "listening for traps at {}",
            client.fabric().describe()
        );
        let _ = io.out.flush();
    }
    let start = Instant::now();
    let mut got: u32 = 0;
    loop {
        if opts.count.is_some_and(|c| got >= c) {
            return EXIT_OK;
        }
        let wait = match opts.timeout {
            Some(t) => match t.checked_sub(start.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => break,
            },
            None => Duration::from_secs(3600),
        };
        match client.wait_trap(wait) {
            Ok(Some(t)) => {
                got += 1;
                let v = trap_view(&t);
                let line = if opts.json {
                    serde_json::to_string(&v).unwrap_or_default()
                } else {
                    trap_text(&v)
                };
                let _ = writeln!(io.out, "{line}");
                let _ = io.out.flush();
            }
            Ok(None) => {}
            Err(e) => {
                report_err(io, &e);
                return exit_for(&e);
            }
        }
    }
    match opts.count {
        Some(c) if got < c => {
            let _ = writeln!(
                io.err,
                "vnic-em: timed out waiting for traps: got {got} of {c}"
            );
            EXIT_FABRIC
        }
        _ => EXIT_OK,
    }
}

// ---------------------------------------------------------------------------
// set

/// One MAC table entry to write with `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryArg {
    /// Slot.
    pub index: u16,
    /// Address; zero clears the slot.
    pub mac: Mac,
    /// DLID.
    pub dlid: u32,
    /// Source MAC entry.
    pub source: bool,
}

/// What `set` changes; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SetOpts {
    /// Node port.
    pub lid: u16,
    /// Virtual port (needed for all but the trap settings).
    pub vport: Option<u8>,
    /// New trap LID.
    pub trap_lid: Option<u16>,
    /// New trap SL.
    pub trap_sl: Option<u8>,
    /// Reset the vport to power-on defaults.
    pub delete: bool,
    /// Vesw id.
    pub vesw: Option<u16>,
    /// Fabric id.
    pub fabric_id: Option<u16>,
    /// P_Key.
    pub pkey: Option<u16>,
    /// Ethernet MTU.
    pub eth_mtu: Option<u16>,
    /// Unknown unicast DLIDs.
    pub unknown_ucast_dlids: Option<Vec<u32>>,
    /// Default ports.
    pub default_ports: Option<Vec<u8>>,
    /// Unknown multicast DLID.
    pub unknown_mcast_dlid: Option<u32>,
    /// Routing control word.
    pub rc: Option<u32>,
    /// Port number on the vesw.
    pub port_num: Option<u32>,
    /// Base MAC.
    pub mac: Option<Mac>,
    /// Forwarding or drop-all.
    pub enabled: Option<bool>,
    /// Encap SLID.
    pub encap_slid: Option<u32>,
    /// MAC table entries to write.
    pub entries: Vec<EntryArg>,
    /// Print JSON.
    pub json: bool,
}

impl SetOpts {
    fn touches_info(&self) -> bool {
        self.vesw.is_some()
            || self.fabric_id.is_some()
            || self.pkey.is_some()
            || self.eth_mtu.is_some()
            || self.unknown_ucast_dlids.is_some()
            || self.default_ports.is_some()
            || self.unknown_mcast_dlid.is_some()
            || self.rc.is_some()
            || self.port_num.is_some()
            || self.mac.is_some()
            || self.enabled.is_some()
            || self.encap_slid.is_some()
    }

    fn apply_to(&self, i: &mut VeswPortInfo) {
        if let Some(x) = self.vesw {
            i.vesw.vesw_id = x;
        }
        if let Some(x) = self.fabric_id {
            i.vesw.fabric_id = x;
        }
        if let Some(x) = self.pkey {
            i.vesw.pkey = x;
        }
        if let Some(x) = self.eth_mtu {
            i.vesw.eth_mtu = x;
        }
        if let Some(l) = &self.unknown_ucast_dlids {
            i.vesw.u_ucast_dlid = [0; 16];
            for (slot, d) in i.vesw.u_ucast_dlid.iter_mut().zip(l) {
                *slot = *d;
            }
        }
        if let Some(p) = &self.default_ports {
            i.vesw.def_port_mask = p.iter().fold(0u16, |m, &x| {
                m | 1u16.checked_shl(u32::from(x)).unwrap_or(0)
            });
        }
        if let Some(x) = self.unknown_mcast_dlid {
            i.vesw.u_mcast_dlid = x;
        }
        if let Some(x) = self.rc {
            i.vesw.rc = x;
        }
        if let Some(x) = self.port_num {
            i.vport.port_num = x;
        }
        if let Some(m) = self.mac {
            i.vport.base_mac_addr = m.0;
        }
        if let Some(e) = self.enabled {
            i.vport.config_state = if e { STATE_FORWARDING } else { STATE_DROP_ALL };
        }
        if let Some(x) = self.encap_slid {
            i.vport.encap_slid = x;
        }
    }
}

fn set_inner<F: Fabric>(
    client: &mut Client<F>,
    o: &SetOpts,
    io: &mut Io<'_>,
) -> Result<(), EmError> {
    let lid = o.lid;
    if o.trap_lid.is_some() || o.trap_sl.is_some() {
        let cpi = client.get_class_port_info(lid)?;
        let tl = o
            .trap_lid
            .unwrap_or_else(|| u16::try_from(cpi.trap_lid).unwrap_or(0));
        let sl = o.trap_sl.unwrap_or_else(|| cpi.trap_sl());
        match class_port_info_update(&cpi, tl, sl) {
            Some(n) => {
                let got = client.set_class_port_info(lid, &n)?;
                let _ = writeln!(
                    io.out,
                    "LID {lid:#06x}: trap LID {:#x} SL {}",
                    got.trap_lid,
                    got.trap_sl()
                );
            }
            None => {
                let _ = writeln!(io.out, "LID {lid:#06x}: trap LID already {tl:#x} SL {sl}");
            }
        }
    }
    let Some(vport) = o.vport else {
        return Ok(());
    };
    if o.delete {
        client.delete_vesw(lid, vport)?;
        let _ = writeln!(
            io.out,
            "LID {lid:#06x} vport {vport}: reset to power-on defaults"
        );
    }
    if o.touches_info() {
        let cur = client.get_vport_info(lid, vport)?;
        let mut want = cur;
        o.apply_to(&mut want);
        let changes = info_changes(&cur, &want);
        if changes.is_empty() {
            let _ = writeln!(
                io.out,
                "LID {lid:#06x} vport {vport}: vesw port info unchanged"
            );
        } else {
            client.set_vport_info(lid, vport, &want)?;
            for c in changes {
                let _ = writeln!(
                    io.out,
                    "LID {lid:#06x} vport {vport}: {} {} -> {}",
                    c.field, c.from, c.to
                );
            }
        }
    }
    if !o.entries.is_empty() {
        let cur = client.read_mac_table(lid, vport)?;
        let mut want: BTreeMap<u16, MacTableEntry> = cur.entries.clone();
        for e in &o.entries {
            if e.mac.is_zero() {
                want.remove(&e.index);
            } else {
                let sd = if e.source { DLID_SD_SRC_MAC } else { 0 };
                want.insert(
                    e.index,
                    MacTableEntry {
                        mac_addr: e.mac.0,
                        mac_addr_mask: Mac::ALL_ONES.0,
                        dlid_sd: (e.dlid << 8) | sd,
                    },
                );
            }
        }
        let digest = table_digest(&want);
        let sets = table_sets(&cur.entries, cur.digest, &want, digest);
        if sets.is_empty() {
            let _ = writeln!(io.out, "LID {lid:#06x} vport {vport}: MAC table unchanged");
        }
        for s in sets {
            client.set_mac_entries(lid, vport, s.offset, digest, &s.entries)?;
            let _ = writeln!(
                io.out,
                "LID {lid:#06x} vport {vport}: set {} MAC table slot(s) from {}, digest {digest:#010x}",
                s.entries.len(),
                s.offset
            );
        }
    }
    let v = read_vport(client, lid, vport, false)?;
    if o.json {
        let _ = writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_default()
        );
    } else {
        let _ = write!(io.out, "{}", vport_text(&v));
    }
    Ok(())
}

/// `vnic-em set`: one-off changes, each a Get, then a Set if the value
/// differs.
pub fn set<F: Fabric>(client: &mut Client<F>, o: &SetOpts, io: &mut Io<'_>) -> u8 {
    let needs_vport = o.delete || o.touches_info() || !o.entries.is_empty();
    if needs_vport && o.vport.is_none() {
        let _ = writeln!(io.err, "vnic-em: set: --vport is needed for vport settings");
        return EXIT_USAGE;
    }
    if !needs_vport && o.trap_lid.is_none() && o.trap_sl.is_none() && o.vport.is_none() {
        let _ = writeln!(io.err, "vnic-em: set: nothing to set");
        return EXIT_USAGE;
    }
    let before = client.stats().sets_ok;
    match set_inner(client, o, io) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            report_err(io, &e);
            if client.stats().sets_ok > before {
                EXIT_PARTIAL
            } else {
                exit_for(&e)
            }
        }
    }
}

/// One request of `vnic-em raw`.
#[derive(Debug, Clone, Default)]
pub struct RawReq {
    /// Node port LID.
    pub lid: u16,
    /// A Set rather than a Get.
    pub set: bool,
    /// Attribute id.
    pub attr_id: u16,
    /// Attribute modifier.
    pub attr_mod: u32,
    /// The request's data.
    pub data: Vec<u8>,
    /// Send exactly this many bytes, header included (the data cut or
    /// zero-padded to fit), whatever the client's MAD size.
    pub len: Option<usize>,
}

/// `vnic-em raw`: one Get or Set, its answer printed as `status 0xSSSS` and `data HEX`, so
/// that two agents' answers compare line by line. The data is printed without its trailing zero
/// bytes: an answer reads as if zero-filled, so the same answer trimmed or in a whole MAD prints
/// alike. A MAD status is part of the answer, not an error.
pub fn raw<F: Fabric>(client: &mut Client<F>, req: &RawReq, io: &mut Io<'_>) -> u8 {
    let target = Target {
        method: if req.set { Method::Set } else { Method::Get },
        attr_id: req.attr_id,
        lid: req.lid,
        vport: Some((req.attr_mod & 0xff) as u8),
    };
    let r = match req.len {
        Some(len) => client.transact_len(target, req.attr_mod, &req.data, len),
        None => client.transact(target, req.attr_mod, &req.data),
    };
    let (status, rsp) = match r {
        Ok(rsp) => (0, rsp),
        Err(EmError::Status { status, .. }) => (status, Vec::new()),
        Err(e) => {
            let _ = writeln!(io.err, "vnic-em: {e}");
            return EXIT_FABRIC;
        }
    };
    let end = rsp.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let hex: String = rsp[..end].iter().map(|b| format!("{b:02x}")).collect();
    let _ = writeln!(io.out, "status {status:#06x}");
    let _ = writeln!(io.out, "data {hex}");
    EXIT_OK
}
