// SPDX-License-Identifier: GPL-2.0

//! What `apply` prints of its plan: a line (or a few) per Set, or a JSON
//! report of the Sets, their status and the errors.

use serde::Serialize;

use opa_wire::vema_mac::{MacTableEntry, DLID_SD_SRC_MAC};

use crate::client::EmError;
use crate::mac::Mac;
use crate::plan::diff::Change;
use crate::plan::{Action, Step};

/// A Set of the plan as printed by `apply --json`. Its keys come out
/// sorted (a `serde_json` map), whatever the order here.
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

/// A Set of the plan for people: one line, and one more per changed
/// field of a VESW port info Set.
pub fn step_text(step: &Step) -> String {
    match &step.action {
        Action::ClassPortInfo { cpi, from, .. } => format!(
            "{}: set class port info: trap LID {:#x} -> {:#x} (SL {})",
            step.name(),
            from,
            cpi.trap_lid,
            cpi.trap_sl()
        ),
        Action::VportInfo {
            create, changes, ..
        } => {
            let mut s = format!(
                "{}: {} vesw port info",
                step.name(),
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
                n => format!(
                    "slots {} to {}",
                    set.offset,
                    usize::from(set.offset) + n - 1
                ),
            };
            format!(
                "{}: set MAC table {range} ({} changed), digest {from_digest:#010x} -> {digest:#010x}",
                step.name(),
                set.changed
            )
        }
    }
}

/// A MAC table slot for people: `-` when empty, else the MAC, its DLID,
/// and the mask and source flag when they are not the usual ones.
fn entry_text(e: &MacTableEntry) -> String {
    if *e == MacTableEntry::ZERO {
        return "-".to_string();
    }
    let mut s = format!("{} dlid {:#x}", Mac(e.mac_addr), e.dlid());
    if Mac(e.mac_addr_mask) != Mac::ALL_ONES {
        s.push_str(&format!(" mask {}", Mac(e.mac_addr_mask)));
    }
    if e.dlid_sd & DLID_SD_SRC_MAC != 0 {
        s.push_str(" src");
    }
    s
}

/// A Set of the plan as `apply --diff` prints it: a line that says which
/// Set goes where (method, attribute, node port, vport; for MAC entries
/// the first slot and the number of entries it carries), then one line
/// per value that changes, `old -> new`, the old one as read from the
/// fabric.
pub fn step_diff(step: &Step) -> String {
    let mut s = String::new();
    let mut line = |k: &str, from: &str, to: &str| {
        s.push_str(&format!("\n    {k:<20} {from} -> {to}"));
    };
    let head = match &step.action {
        Action::ClassPortInfo { changes, .. } => {
            changes.iter().for_each(|c| line(c.field, &c.from, &c.to));
            format!("Set ClassPortInfo {}", step.name())
        }
        Action::VportInfo {
            create, changes, ..
        } => {
            changes.iter().for_each(|c| line(c.field, &c.from, &c.to));
            let what = if *create { " (create)" } else { "" };
            format!("Set VESWPortInfo {}{what}", step.name())
        }
        Action::MacEntries {
            set,
            from_digest,
            digest,
        } => {
            line(
                "mac_tbl_digest",
                &format!("{from_digest:#010x}"),
                &format!("{digest:#010x}"),
            );
            for (i, (old, new)) in set.cur.iter().zip(&set.entries).enumerate() {
                if old != new {
                    let slot = format!("slot {}", usize::from(set.offset) + i);
                    line(&slot, &entry_text(old), &entry_text(new));
                }
            }
            format!(
                "Set VESWPortMacEntries {} offset {} count {}",
                step.name(),
                set.offset,
                set.entries.len()
            )
        }
    };
    head + &s
}

/// A Set of the plan as a JSON object, with its `status` ("planned",
/// "ok", "failed", "skipped").
pub fn step_json(step: &Step, status: &str) -> serde_json::Value {
    let mut j = StepJson {
        lid: step.lid,
        vport: step.vport,
        vesw: step.vesw.as_ref().map(|v| v.0),
        action: "",
        changes: Vec::new(),
        offset: None,
        count: None,
        digest: None,
        trap_lid: None,
        status,
    };
    match &step.action {
        Action::ClassPortInfo { cpi, changes, .. } => {
            j.action = "set-class-port-info";
            j.trap_lid = Some(cpi.trap_lid);
            j.changes = changes.clone();
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

/// What `apply --json` prints.
#[derive(Debug, Clone, Copy)]
pub struct ApplyReport<'a> {
    /// The EM's LID.
    pub em_lid: u16,
    /// No Set was sent (`--dry-run` or `--check`).
    pub dry_run: bool,
    /// The Sets of the plan.
    pub steps: &'a [Step],
    /// The status of each Set, as [`step_json`] takes it.
    pub statuses: &'a [&'a str],
    /// Vports already as configured.
    pub up_to_date: &'a [(u16, u8)],
    /// Sets that were applied.
    pub applied: usize,
    /// The reads that failed.
    pub read_errors: &'a [EmError],
    /// The Sets that failed.
    pub set_errors: &'a [EmError],
}

/// The JSON report of `apply`.
pub fn apply_json(r: &ApplyReport<'_>) -> serde_json::Value {
    serde_json::json!({
        "em_lid": r.em_lid,
        "dry_run": r.dry_run,
        "steps": r.steps.iter().zip(r.statuses).map(|(s, st)| step_json(s, st)).collect::<Vec<_>>(),
        "up_to_date": r.up_to_date.iter().map(|(l, v)| serde_json::json!({"lid": l, "vport": v})).collect::<Vec<_>>(),
        "applied": r.applied,
        "errors": r.read_errors.iter().chain(r.set_errors).map(|e| e.to_string()).collect::<Vec<_>>(),
    })
}
