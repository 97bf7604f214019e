// SPDX-License-Identifier: GPL-2.0

//! The plan of `apply --dry-run` without a fabric (no umad device, no
//! port): every Set the config makes, as if each vport were at its
//! power-on defaults, and what could not be known without reading the
//! fabric. An admin can check a config's plan on a laptop.

use std::collections::BTreeMap;

use opa_wire::vema_info::VeswPortInfo;

use super::diff::{desired, info_changes, table_sets};
use super::{Action, Plan, Step};
use crate::config::Config;

/// The plan a config makes of a fabric whose state is unknown, and what it
/// leaves out.
#[derive(Debug, Default)]
pub struct OfflinePlan {
    /// The Sets of every vport the config names by LID, each as if the
    /// vport did not exist yet: the most apply would send.
    pub plan: Plan,
    /// What could not be checked or computed, one sentence each.
    pub unknown: Vec<String>,
}

/// The Sets of `cfg` against power-on defaults; vports named by node
/// (their LIDs are the SA's) are left out and said so.
pub fn offline_plan(cfg: &Config) -> OfflinePlan {
    let mut out = OfflinePlan::default();
    out.unknown.push(
        "the fabric's current state: every Set is listed as if each vport were new, \
         apply sends only those that differ"
            .to_string(),
    );
    if cfg.em.trap_lid.is_none() {
        out.unknown
            .push("the trap LID of each node port (the EM's own LID is unknown)".to_string());
    }
    let named = cfg.vports.iter().filter(|p| p.node.is_some()).count();
    if named > 0 {
        out.unknown.push(format!(
            "{named} vport(s) named by node: their LIDs are the SA's, left out of the plan"
        ));
    }
    let groups = cfg
        .vesws
        .iter()
        .filter(|v| v.unknown_mcast_mgid.is_some())
        .count();
    if groups > 0 {
        out.unknown.push(format!(
            "the unknown_mcast_dlid of {groups} vesw(s): the MLID of a multicast group, \
             shown as 0"
        ));
    }
    let pod = VeswPortInfo::vema_pod();
    for (p, d) in cfg.vports.iter().zip(desired(cfg)) {
        if p.node.is_some() {
            continue;
        }
        let vesw = Some((d.vesw, d.vesw_name.clone()));
        out.plan.steps.push(Step {
            lid: d.lid,
            vport: Some(d.vport),
            vesw: vesw.clone(),
            action: Action::VportInfo {
                info: Box::new(d.info),
                create: true,
                changes: info_changes(&pod, &d.info),
            },
        });
        for set in table_sets(&BTreeMap::new(), 0, &d.table, d.digest) {
            out.plan.steps.push(Step {
                lid: d.lid,
                vport: Some(d.vport),
                vesw: vesw.clone(),
                action: Action::MacEntries {
                    set,
                    from_digest: 0,
                    digest: d.digest,
                },
            });
        }
    }
    out
}
