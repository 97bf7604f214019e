// SPDX-License-Identifier: GPL-2.0

//! The plan of `apply` and `watch`: the Sets that make the fabric match a
//! config, read from the fabric and computed with [`diff`], and their
//! sending in order.

pub mod diff;
mod offline;
mod read;
mod send;

use std::collections::BTreeSet;

use opa_wire::vema_info::VeswPortInfo;

use crate::client::{Client, EmError, MacTableState};
use crate::config::Config;
use crate::fabric::Fabric;
use diff::{
    class_port_info_changes, class_port_info_update, desired, info_changes, table_sets, Change,
    MacSet,
};
pub use offline::{offline_plan, OfflinePlan};
pub use send::{send_steps, step_request, Sent};

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
    let mut dead = BTreeSet::new();
    let cpis = read::class_port_infos(client, lids, &mut dead);
    let live: Vec<u16> = lids
        .iter()
        .zip(&cpis)
        .filter(|(_, c)| matches!(c, Some(Ok(_))))
        .map(|(&l, _)| l)
        .collect();
    let ports: Vec<(u16, u8)> = want
        .iter()
        .filter(|d| live.contains(&d.lid))
        .map(|d| (d.lid, d.vport))
        .collect();
    let infos = read::vport_infos(client, &ports, &mut dead);
    // The tables to read: of the vports that exist, those whose digest is
    // not the config's (all of them with `full_tables`).
    let to_read: Vec<(u16, u8)> = want
        .iter()
        .filter(|d| match infos.get(&(d.lid, d.vport)) {
            Some(Some(Ok(cur))) => {
                *cur != VeswPortInfo::vema_pod()
                    && (full_tables || cur.vport.mac_tbl_digest != d.digest)
            }
            _ => false,
        })
        .map(|d| (d.lid, d.vport))
        .collect();
    let mut tables = read::mac_tables(client, &to_read, &mut dead);
    let mut infos = infos;
    for (&lid, cpi) in lids.iter().zip(cpis) {
        match cpi {
            Some(Ok(cpi)) => {
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
            Some(Err(e)) => {
                // The node port does not answer: leave all of it out.
                plan.errors.push(e);
                continue;
            }
            None => continue,
        }
        for d in want.iter().filter(|d| d.lid == lid) {
            let vesw = Some((d.vesw, d.vesw_name.clone()));
            let cur = match infos.remove(&(lid, d.vport)).flatten() {
                Some(Ok(c)) => c,
                Some(Err(e)) => {
                    plan.errors.push(e);
                    continue;
                }
                None => continue,
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
            let cur_table = if !exists {
                Some(MacTableState::default())
            } else {
                match tables.remove(&(lid, d.vport)) {
                    None => None,
                    Some(Some(Ok(t))) => Some(t),
                    Some(Some(Err(e))) => {
                        plan.errors.push(e);
                        continue;
                    }
                    Some(None) => continue,
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
    // A node port that stopped answering halfway through the reads: its
    // error is in, and its Sets would only wait for it once more.
    plan.steps.retain(|s| !dead.contains(&s.lid));
    plan
}
