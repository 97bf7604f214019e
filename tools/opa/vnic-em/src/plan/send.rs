// SPDX-License-Identifier: GPL-2.0

//! Sending the Sets of a plan: one batch ([`Client::run_batch`]), many in
//! flight, the Sets of each vport in the plan's order.

use opa_wire::mad::{ATTR_CLASS_PORT_INFO, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_mac::{MacTable, MacTableEntry, MacTableHdr};

use super::diff::info_changes;
use super::{Action, Step};
use crate::client::{Client, EmError, Outcome, Request};
use crate::fabric::Fabric;
use crate::mad::{Method, Target};

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

/// The target of a step's Set.
fn target(step: &Step) -> Target {
    let attr_id = match step.action {
        Action::ClassPortInfo { .. } => ATTR_CLASS_PORT_INFO,
        Action::VportInfo { .. } => ATTR_VESWPORT_INFO,
        Action::MacEntries { .. } => ATTR_VESWPORT_MAC_ENTRIES,
    };
    Target {
        method: Method::Set,
        attr_id,
        lid: step.lid,
        vport: step.vport,
    }
}

/// The Set MAD of a step.
pub fn step_request(step: &Step) -> Result<Request, EmError> {
    let target = target(step);
    let data = match &step.action {
        Action::ClassPortInfo { cpi, .. } => cpi.to_bytes().to_vec(),
        Action::VportInfo { info, .. } => info.to_bytes().to_vec(),
        Action::MacEntries { set, digest, .. } => {
            let hdr = MacTableHdr {
                offset: set.offset,
                num_entries: u16::try_from(set.entries.len()).unwrap_or(u16::MAX),
                mac_tbl_digest: *digest,
            };
            let mut data = vec![0u8; MacTableHdr::SIZE + set.entries.len() * MacTableEntry::SIZE];
            MacTable::encode(&hdr, &set.entries, &mut data).map_err(|e| EmError::Encode {
                target,
                reason: format!("{e:?}"),
            })?;
            data
        }
    };
    Ok(Request {
        target,
        attr_mod: u32::from(step.vport.unwrap_or(0)),
        data,
    })
}

/// Checks the answer to a step's Set: it decodes, and a VESW port info
/// Set took.
fn check_step(step: &Step, data: &[u8]) -> Result<(), EmError> {
    let target = target(step);
    let bad = |reason: String| EmError::BadResponse { target, reason };
    match &step.action {
        Action::ClassPortInfo { .. } => {
            ClassPortInfo::decode(data).map_err(|e| bad(format!("{e:?}")))?;
        }
        Action::VportInfo { info, .. } => {
            let got = VeswPortInfo::decode(data).map_err(|e| bad(format!("{e:?}")))?;
            let diff = info_changes(&got, info);
            if !diff.is_empty() {
                let what: Vec<String> = diff
                    .iter()
                    .map(|c| format!("{} is {} (wanted {})", c.field, c.from, c.to))
                    .collect();
                return Err(bad(format!(
                    "the agent did not take the values: {}",
                    what.join(", ")
                )));
            }
        }
        Action::MacEntries { .. } => {
            MacTable::decode(data).map_err(|e| bad(format!("{e:?}")))?;
        }
    }
    Ok(())
}

/// Sends steps `idx` of `steps` in one batch; their outcomes, by step.
fn batch<F: Fabric>(
    client: &mut Client<F>,
    steps: &[Step],
    idx: &[usize],
    out: &mut [Option<Outcome>],
) {
    // A Set that cannot be built fails here; the rest of its vport is
    // skipped, as after a Set the agent refused.
    let mut broken: Vec<(u16, Option<u8>)> = Vec::new();
    let mut reqs = Vec::new();
    let mut which = Vec::new();
    for &i in idx {
        let s = &steps[i];
        if broken.contains(&(s.lid, s.vport)) {
            out[i] = Some(Outcome::Skipped);
            continue;
        }
        match step_request(s) {
            Ok(r) => {
                reqs.push(r);
                which.push(i);
            }
            Err(e) => {
                broken.push((s.lid, s.vport));
                out[i] = Some(Outcome::Failed(e));
            }
        }
    }
    let got = client.run_batch(&reqs, |k, data| check_step(&steps[which[k]], data));
    for (i, o) in which.into_iter().zip(got) {
        out[i] = Some(o);
    }
}

/// Sends the Sets of a plan, as many at once as the client's window lets.
/// The trap LIDs (ClassPortInfo) go first, so that the traps of the vports
/// created next reach the EM; then the vports, the Sets of each in order,
/// one at a time. A failed Set skips the rest of its vport (they build on
/// it: a MAC table Set on a vport that was not created fails too); a node
/// port that does not answer is given up, its Sets not sent yet skipped;
/// the other vports go on. `apply` and `watch` both send their Sets here.
pub fn send_steps<F: Fabric>(client: &mut Client<F>, steps: &[Step]) -> Sent {
    let mut out: Vec<Option<Outcome>> = steps.iter().map(|_| None).collect();
    let (cpi, rest): (Vec<usize>, Vec<usize>) =
        (0..steps.len()).partition(|&i| steps[i].vport.is_none());
    batch(client, steps, &cpi, &mut out);
    let dead: Vec<u16> = cpi
        .iter()
        .filter(|&&i| {
            matches!(
                out[i],
                Some(Outcome::Failed(
                    EmError::Timeout { .. } | EmError::GaveUp { .. }
                ))
            )
        })
        .map(|&i| steps[i].lid)
        .collect();
    let (skip, rest): (Vec<usize>, Vec<usize>) = rest
        .into_iter()
        .partition(|&i| dead.contains(&steps[i].lid));
    for i in skip {
        out[i] = Some(Outcome::Skipped);
    }
    batch(client, steps, &rest, &mut out);
    let mut sent = Sent::default();
    for o in out {
        sent.statuses.push(match o.unwrap_or(Outcome::Skipped) {
            Outcome::Done(_) => {
                sent.applied += 1;
                "ok"
            }
            Outcome::Failed(e) => {
                sent.failed.push(e);
                "failed"
            }
            Outcome::Skipped => "skipped",
        });
    }
    sent
}
