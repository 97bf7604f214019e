// SPDX-License-Identifier: GPL-2.0

//! Reading what a plan starts from, in batches ([`Client::run_batch`]):
//! the ClassPortInfo of every node port, then the VESW port info of every
//! vport of the node ports that answered, then the MAC tables that must be
//! read. A node port that does not answer holds each batch up for one
//! request's attempts, however many vports it has, and is left out of the
//! batches after it.

use std::collections::{BTreeMap, BTreeSet};

use opa_wire::mad::{ATTR_CLASS_PORT_INFO, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo, MAC_TBL_MAX_ENTRIES};
use opa_wire::vema_mac::{MacTable, MacTableHdr, MAC_TBL_ENTRIES_PER_MAD};

use crate::client::{Client, EmError, MacTableState, Outcome, Request};
use crate::fabric::Fabric;
use crate::mad::{Method, Target};

/// What a read came to: the value, an error, or nothing (skipped: an
/// earlier read of its node port or vport failed).
pub(super) type Read<T> = Option<Result<T, EmError>>;

fn get(attr_id: u16, lid: u16, vport: Option<u8>, data: Vec<u8>) -> Request {
    Request {
        target: Target {
            method: Method::Get,
            attr_id,
            lid,
            vport,
        },
        attr_mod: u32::from(vport.unwrap_or(0)),
        data,
    }
}

fn bad(target: Target, e: opa_wire::WireError) -> EmError {
    EmError::BadResponse {
        target,
        reason: format!("{e:?}"),
    }
}

/// The node ports given up in a batch: they are left out of the next.
fn note_dead(out: &[Outcome], dead: &mut BTreeSet<u16>) {
    for o in out {
        if let Outcome::Failed(EmError::Timeout { target, .. } | EmError::GaveUp { target }) = o {
            dead.insert(target.lid);
        }
    }
}

/// Turns outcomes into reads decoded with `decode`. A request given up
/// because another to its node port timed out reads as skipped: that
/// timeout is the node port's one error.
fn reads<T>(
    out: Vec<Outcome>,
    reqs: &[Request],
    decode: impl Fn(&[u8]) -> Result<T, opa_wire::WireError>,
) -> Vec<Read<T>> {
    out.into_iter()
        .zip(reqs)
        .map(|(o, r)| match o {
            Outcome::Done(d) => Some(decode(&d).map_err(|e| bad(r.target, e))),
            Outcome::Failed(EmError::GaveUp { .. }) | Outcome::Skipped => None,
            Outcome::Failed(e) => Some(Err(e)),
        })
        .collect()
}

/// Reads the ClassPortInfo of each of `lids`.
pub(super) fn class_port_infos<F: Fabric>(
    client: &mut Client<F>,
    lids: &[u16],
    dead: &mut BTreeSet<u16>,
) -> Vec<Read<ClassPortInfo>> {
    let reqs: Vec<Request> = lids
        .iter()
        .map(|&l| get(ATTR_CLASS_PORT_INFO, l, None, Vec::new()))
        .collect();
    let out = client.run_batch(&reqs, |_, _| Ok(()));
    note_dead(&out, dead);
    reads(out, &reqs, ClassPortInfo::decode)
}

/// Reads the VESW port info of each of `vports` not on a `dead` node port.
pub(super) fn vport_infos<F: Fabric>(
    client: &mut Client<F>,
    vports: &[(u16, u8)],
    dead: &mut BTreeSet<u16>,
) -> BTreeMap<(u16, u8), Read<VeswPortInfo>> {
    let todo: Vec<(u16, u8)> = vports
        .iter()
        .copied()
        .filter(|(l, _)| !dead.contains(l))
        .collect();
    let reqs: Vec<Request> = todo
        .iter()
        .map(|&(l, v)| get(ATTR_VESWPORT_INFO, l, Some(v), Vec::new()))
        .collect();
    let out = client.run_batch(&reqs, |_, _| Ok(()));
    note_dead(&out, dead);
    todo.into_iter()
        .zip(reads(out, &reqs, VeswPortInfo::decode))
        .collect()
}

/// Reads the whole MAC table of each of `vports` not on a `dead` node
/// port: 17 Gets each, those of one vport one after the other.
pub(super) fn mac_tables<F: Fabric>(
    client: &mut Client<F>,
    vports: &[(u16, u8)],
    dead: &mut BTreeSet<u16>,
) -> BTreeMap<(u16, u8), Read<MacTableState>> {
    let mut reqs = Vec::new();
    let mut owner = Vec::new();
    let mut tables: BTreeMap<(u16, u8), Read<MacTableState>> = BTreeMap::new();
    for &(lid, v) in vports {
        if dead.contains(&lid) {
            tables.insert((lid, v), None);
            continue;
        }
        let mut offset: u16 = 0;
        while offset < MAC_TBL_MAX_ENTRIES {
            let count = MAC_TBL_ENTRIES_PER_MAD.min(MAC_TBL_MAX_ENTRIES - offset);
            let hdr = MacTableHdr {
                offset,
                num_entries: count,
                mac_tbl_digest: 0,
            };
            reqs.push(get(
                ATTR_VESWPORT_MAC_ENTRIES,
                lid,
                Some(v),
                hdr.to_bytes().to_vec(),
            ));
            owner.push((lid, v, offset, count));
            offset += count;
        }
    }
    let out = client.run_batch(&reqs, |k, d| {
        let (_, _, offset, count) = owner[k];
        let t = MacTable::decode(d).map_err(|e| bad(reqs[k].target, e))?;
        if t.hdr.offset != offset || t.hdr.num_entries != count {
            return Err(EmError::BadResponse {
                target: reqs[k].target,
                reason: format!(
                    "asked for {count} entries at {offset}, got {} at {}",
                    t.hdr.num_entries, t.hdr.offset
                ),
            });
        }
        Ok(())
    });
    note_dead(&out, dead);
    let parts = reads(out, &reqs, |d| {
        MacTable::decode(d).map(|t| (t.hdr.mac_tbl_digest, t.entries().collect::<Vec<_>>()))
    });
    for ((lid, v, offset, _), part) in owner.into_iter().zip(parts) {
        let slot = tables
            .entry((lid, v))
            .or_insert_with(|| Some(Ok(MacTableState::default())));
        let Some(Ok(st)) = slot else { continue };
        match part {
            Some(Ok((digest, entries))) => {
                st.digest = digest;
                for (i, e) in (offset..).zip(entries) {
                    if !e.is_delete() {
                        st.entries.insert(i, e);
                    }
                }
            }
            other => *slot = other.map(|r| r.map(|_| MacTableState::default())),
        }
    }
    tables
}
