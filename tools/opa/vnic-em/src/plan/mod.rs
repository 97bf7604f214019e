// SPDX-License-Identifier: GPL-2.0

//! The plan of `apply` and `watch`: the Sets that make the fabric match a
//! config, read from the fabric and computed with [`diff`], and their
//! sending in order.

pub mod diff;

use opa_wire::vema_info::VeswPortInfo;

use crate::client::{Client, EmError, MacTableState};
use crate::config::Config;
use crate::fabric::Fabric;
use diff::{
    class_port_info_changes, class_port_info_update, desired, info_changes, table_sets, Change,
    MacSet,
};

/// What one Set does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Set ClassPortInfo (trap LID and SL).
    ClassPortInfo {
        /// The new value.
        cpi: opa_wire::vema_info::ClassPortInfo,
        /// Trap LID before.
        from: u32,
        /// The fields that change.
        changes: Vec<Change>,
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
                            changes: class_port_info_changes(&cpi, &n),
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
