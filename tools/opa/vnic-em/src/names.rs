// SPDX-License-Identifier: GPL-2.0

//! Node ports named in the config (`node = "0x0011750101000001"`, `node = "hostA hfi1_0"`)
//! resolved to the LIDs the subnet manager gave them, at every use of the config: apply,
//! show, counters, traps, and every poll of watch, since the SM may reassign a LID at any
//! time (a restart, a re-cabled node) and nothing tells the EM.
//!
//! One NodeRecord table and one PortInfoRecord table from the SA per resolution; every name is
//! matched among the HFI ports that are Active, so a name no such port has, or a description
//! two ports share, is an error at the config line that uses it, and nothing is sent to any
//! node port. Resolved, the config reads as if written with LIDs: the vport's `lid`, its
//! `encap_slid` unless given, the MAC table entries and the unknown unicast DLIDs that point
//! to the node.
//!
//! A vesw without `unknown_mcast_dlid` takes its broadcast and unknown multicast DLID from a
//! multicast group of the SA (`unknown_mcast_mgid`, or [`crate::sa::DEFAULT_MCAST_MGID`]): a
//! real SM programs the switches' multicast tables only for the MLIDs of its groups. A
//! number in the config wins, for fabrics without an SM.

use std::collections::HashMap;
use std::time::Duration;

use crate::config::{Config, ConfigErrors, Diag, NodeName};
use crate::fabric::Fabric;
use crate::sa::{mgid_text, NodeRef, SaClient, SaNode};

/// A config with every name resolved, and what each name was found to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The config, with LIDs where it had names.
    pub cfg: Config,
    /// Each name of [`Config::names`] and its node port, in file order.
    pub nodes: Vec<(NodeName, SaNode)>,
}

/// The node port a name gives among `nodes`, or why none.
fn find<'n>(name: &NodeRef, nodes: &'n [SaNode]) -> Result<&'n SaNode, String> {
    let hits: Vec<&SaNode> = nodes
        .iter()
        .filter(|n| match name {
            NodeRef::Lid(l) => n.lid == u32::from(*l),
            NodeRef::Guid(g) => n.port_guid == *g,
            NodeRef::Desc(d) => n.desc == *d,
        })
        .collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "no port of the fabric is {name} (the SA knows no such node; `vnic-em discover` \
             lists them)"
        )),
        many => {
            let ports: Vec<String> = many
                .iter()
                .map(|n| format!("GUID {:#018x} LID {:#06x}", n.port_guid, n.lid))
                .collect();
            Err(format!(
                "{} ports are {name} ({}): name the port by GUID",
                many.len(),
                ports.join(", ")
            ))
        }
    }
}

/// Resolves the names of `cfg` among `nodes` (the SA's table); the errors name the lines of
/// `path`.
pub fn resolve_in(cfg: &Config, nodes: &[SaNode], path: &str) -> Result<Resolved, ConfigErrors> {
    let mut diags = Vec::new();
    let mut found: Vec<Option<&SaNode>> = Vec::with_capacity(cfg.names.len());
    for n in &cfg.names {
        match find(&n.name, nodes) {
            Ok(node) if node.lid != 0 => found.push(Some(node)),
            Ok(_) => {
                diags.push(diag(
                    n,
                    format!("{} has no LID (its port is not up)", n.name),
                ));
                found.push(None);
            }
            Err(msg) => {
                diags.push(diag(n, msg));
                found.push(None);
            }
        }
    }
    let lid_of = |i: Option<usize>| {
        i.and_then(|i| found.get(i).copied().flatten())
            .map(|n| n.lid)
    };
    let mut out = cfg.clone();
    for p in &mut out.vports {
        if let Some(lid) = lid_of(p.node) {
            // The EM reaches a node port's VEMA agent by a 16-bit LID (the umad header
            // carries no more without a GRH); the vesw's LIDs below are 24-bit.
            match u16::try_from(lid) {
                Ok(l) => p.lid = l,
                Err(_) => {
                    if let Some(n) = p.node.and_then(|k| cfg.names.get(k)) {
                        diags.push(diag(
                            n,
                            format!(
                                "{} is LID {lid:#x}, above 16 bits: the EM cannot address its \
                                 VEMA agent (umad without a GRH)",
                                n.name
                            ),
                        ));
                    }
                    continue;
                }
            }
            if !p.encap_slid_set {
                p.encap_slid = lid;
            }
        }
    }
    for v in &mut out.vesws {
        for e in &mut v.mac_table {
            if let Some(lid) = lid_of(e.node) {
                e.dlid = lid;
            }
        }
        for (d, &i) in v.unknown_ucast_dlids.iter_mut().zip(&v.unknown_ucast_nodes) {
            if let Some(lid) = lid_of(Some(i)) {
                *d = lid;
            }
        }
    }
    // Two names (or a name and a LID) for one node port's same vport.
    let mut seen: HashMap<(u16, u8), usize> = HashMap::new();
    for (i, p) in out.vports.iter().enumerate() {
        if p.lid == 0 {
            continue;
        }
        if let Some(&j) = seen.get(&(p.lid, p.vport)) {
            if let Some(n) = p.node.and_then(|k| cfg.names.get(k)) {
                diags.push(diag(
                    n,
                    format!(
                        "{} is LID {:#06x}, whose vport {} the vport #{} of the file already \
                         configures",
                        n.name,
                        p.lid,
                        p.vport,
                        j + 1
                    ),
                ));
            }
        } else {
            seen.insert((p.lid, p.vport), i);
        }
    }
    if !diags.is_empty() {
        diags.sort_by_key(|d| (d.line, d.col));
        return Err(ConfigErrors {
            path: path.to_owned(),
            diags,
        });
    }
    let nodes = cfg
        .names
        .iter()
        .zip(found)
        .filter_map(|(n, f)| Some((n.clone(), f?.clone())))
        .collect();
    Ok(Resolved { cfg: out, nodes })
}

fn diag(n: &NodeName, msg: String) -> Diag {
    Diag {
        line: n.line,
        col: n.col,
        msg,
    }
}

/// Why the names of a config cannot be resolved.
#[derive(Debug)]
pub enum NamesError {
    /// The SA could not be asked (no SM, no answer): a fabric error.
    Sa(String),
    /// Some names give no port, or more than one: errors of the config.
    Config(ConfigErrors),
}

/// Whether `cfg` must be resolved through the SA: it names node ports, or a vesw takes its
/// multicast DLID from a group.
pub fn needs_sa(cfg: &Config) -> bool {
    !cfg.names.is_empty() || cfg.vesws.iter().any(|v| v.unknown_mcast_mgid.is_some())
}

/// Resolves the names of `cfg` (read from `path`) and the multicast groups of its vesws
/// through the SA of `fabric`; a config without either is returned as it is, and the SA is
/// not asked.
pub fn resolve<F: Fabric>(
    fabric: &mut F,
    cfg: &Config,
    path: &str,
    timeout: Duration,
    retries: u32,
) -> Result<Resolved, NamesError> {
    if !needs_sa(cfg) {
        return Ok(Resolved {
            cfg: cfg.clone(),
            nodes: Vec::new(),
        });
    }
    let mut sa = SaClient::new(fabric, timeout, retries);
    let mut r = if cfg.names.is_empty() {
        Resolved {
            cfg: cfg.clone(),
            nodes: Vec::new(),
        }
    } else {
        let nodes = sa.discover().map_err(|e| {
            NamesError::Sa(format!(
                "{path}: cannot resolve {} node name(s): {e}",
                cfg.names.len()
            ))
        })?;
        resolve_in(cfg, &nodes, path).map_err(NamesError::Config)?
    };
    let mut known: Vec<([u8; 16], u32)> = Vec::new();
    for v in &mut r.cfg.vesws {
        let Some(mgid) = v.unknown_mcast_mgid else {
            continue;
        };
        let dlid = match known.iter().find(|(g, _)| *g == mgid) {
            Some(&(_, d)) => d,
            None => {
                let d = sa
                    .mcast_dlid(&mgid)
                    .map_err(|e| {
                        NamesError::Sa(format!(
                            "{path}: vesw {} ({}): cannot find multicast group {}: {e}",
                            v.id,
                            v.name,
                            mgid_text(&mgid)
                        ))
                    })?
                    .ok_or_else(|| {
                        NamesError::Sa(format!(
                            "{path}: vesw {} ({}): the fabric has no multicast group {} (no \
                             McMemberRecord of it in the SA): create it in opafm.xml \
                             (<MulticastGroup> with <Create>1</Create> and this <MGID>), name \
                             another with unknown_mcast_mgid, or give unknown_mcast_dlid",
                            v.id,
                            v.name,
                            mgid_text(&mgid)
                        ))
                    })?;
                known.push((mgid, d));
                d
            }
        };
        v.unknown_mcast_dlid = dlid;
    }
    Ok(r)
}
