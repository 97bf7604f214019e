// SPDX-License-Identifier: GPL-2.0

//! The node ports of each vesw joined to the multicast group its broadcast and unknown
//! multicast go to, so that the SM's multicast tables reach them.
//!
//! A vesw that takes its multicast DLID from a group of the SA ([`crate::names`]) sends its
//! broadcast (ARP) to the group's MLID. A real SM forwards an MLID only to the switch ports of
//! the group's members (opa-fm's `sm_add_mcmember_port_masks()`); a VNIC driver joins nothing
//! (neither the C `opa_vnic` nor this one), so `apply` and every poll of `watch` join the node
//! port of each enabled vport to its vesw's group, as a full member ([`SaClient::join`]). A
//! repeated join is harmless, and it is what brings the members back after an SM restart,
//! whose groups come back empty. A vesw given `unknown_mcast_dlid` joins nothing: that number
//! is the admin's, for fabrics whose multicast tables someone else programs.

use std::time::Duration;

use crate::client::Client;
use crate::commands::Io;
use crate::config::Config;
use crate::fabric::Fabric;
use crate::sa::{mgid_text, port_gid, SaClient};

/// The joins of one vesw's node ports to its group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupJoin {
    /// The vesw's id.
    pub vesw: u16,
    /// The vesw's name.
    pub name: String,
    /// The group.
    pub mgid: [u8; 16],
    /// The LIDs of the node ports that are members now.
    pub joined: Vec<u16>,
    /// The group's 16-bit MLID, as the SA answered the joins (0 when none was answered).
    pub mlid: u16,
    /// A sentence for each node port that could not join.
    pub errors: Vec<String>,
}

impl GroupJoin {
    /// A line on the joins done, for people.
    pub fn text(&self) -> String {
        format!(
            "vesw {} ({}): {} node port(s) joined multicast group {} (MLID {:#x})",
            self.vesw,
            self.name,
            self.joined.len(),
            mgid_text(&self.mgid),
            self.mlid
        )
    }
}

/// The node port LIDs of the enabled vports of vesw `id`, each once, in order.
fn member_lids(cfg: &Config, id: u16) -> Vec<u16> {
    let mut lids: Vec<u16> = cfg
        .vports
        .iter()
        .filter(|p| p.vesw == id && p.enabled && p.lid != 0)
        .map(|p| p.lid)
        .collect();
    lids.sort_unstable();
    lids.dedup();
    lids
}

/// Joins the node ports of every vesw of `cfg` (resolved: LIDs, and the groups' MGIDs) that
/// takes its multicast DLID from a group; nothing is asked when none does. `Err`: the SA's
/// ports could not be read, so nothing was joined.
pub fn join_groups<F: Fabric>(
    fabric: &mut F,
    cfg: &Config,
    timeout: Duration,
    retries: u32,
) -> Result<Vec<GroupJoin>, String> {
    let wanted: Vec<(usize, [u8; 16], Vec<u16>)> = cfg
        .vesws
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some((i, v.unknown_mcast_mgid?, member_lids(cfg, v.id))))
        .filter(|(_, _, lids)| !lids.is_empty())
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let prefix = fabric.subnet_prefix();
    let mut sa = SaClient::new(fabric, timeout, retries);
    // The port GUIDs: a PortGID names the member, and a config may give LIDs.
    let ports = sa
        .discover()
        .map_err(|e| format!("cannot join the VNIC ports to their multicast groups: {e}"))?;
    let mut out = Vec::new();
    for (i, mgid, lids) in wanted {
        let v = &cfg.vesws[i];
        let mut j = GroupJoin {
            vesw: v.id,
            name: v.name.clone(),
            mgid,
            joined: Vec::new(),
            mlid: 0,
            errors: Vec::new(),
        };
        for lid in lids {
            let Some(p) = ports.iter().find(|p| p.lid == u32::from(lid)) else {
                j.errors.push(format!(
                    "vesw {} ({}): LID {lid:#06x} is no Active HFI port of the SA: not joined \
                     to multicast group {}",
                    v.id,
                    v.name,
                    mgid_text(&mgid)
                ));
                continue;
            };
            match sa.join(&mgid, &port_gid(prefix, p.port_guid)) {
                Ok(r) => {
                    j.joined.push(lid);
                    j.mlid = r.mlid;
                }
                Err(e) => j.errors.push(format!(
                    "vesw {} ({}): port GUID {:#018x} (LID {lid:#06x}) could not join \
                     multicast group {}: {e}; broadcast and ARP will not reach it",
                    v.id,
                    v.name,
                    p.port_guid,
                    mgid_text(&mgid)
                )),
            }
        }
        out.push(j);
    }
    Ok(out)
}

/// The joins `watch` makes at every poll, and what it last said of them: a line when a
/// vesw's members change and when a port's error starts or ends, not one each poll.
#[derive(Debug, Default)]
pub struct JoinWatch {
    last: Vec<GroupJoin>,
    failing: Option<String>,
}

impl JoinWatch {
    /// Joins the node ports of `cfg` (resolved) to their groups again; a line on `out` for
    /// each vesw whose members changed, on `err` for each new error.
    pub fn poll<F: Fabric>(
        &mut self,
        client: &mut Client<F>,
        cfg: &Config,
        io: &mut Io<'_>,
    ) -> std::io::Result<()> {
        let pol = *client.policy();
        let joins = match join_groups(client.fabric_mut(), cfg, pol.timeout, pol.retries) {
            Ok(j) => j,
            Err(e) => {
                if self.failing.as_ref() != Some(&e) {
                    writeln!(io.err, "vnic-em: watch: {e}")?;
                    self.failing = Some(e);
                }
                return Ok(());
            }
        };
        self.failing = None;
        for j in &joins {
            let before = self.last.iter().find(|b| b.vesw == j.vesw);
            if !j.joined.is_empty() && before.map(|b| &b.joined) != Some(&j.joined) {
                writeln!(io.out, "{}", j.text())?;
            }
            for e in &j.errors {
                if !before.is_some_and(|b| b.errors.contains(e)) {
                    writeln!(io.err, "vnic-em: watch: {e}")?;
                }
            }
        }
        self.last = joins;
        io.out.flush()?;
        io.err.flush()
    }
}
