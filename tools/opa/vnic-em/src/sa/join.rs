// SPDX-License-Identifier: GPL-2.0

//! A port joined to a multicast group, as a full member, by a McMemberRecord Set: what an
//! SM needs before it adds the port's switch port to the group's multicast tables.
//!
//! opa-fm programs a switch's MFT entry of a group only with the switch ports of its members
//! (`sm_add_mcmember_port_masks()` of `sm_multicast.c`); a group created by opafm.xml has
//! none until a port joins. A VNIC driver joins nothing, so the EM joins each VNIC port for it
//! (a proxy join: the request comes from the EM's port, the PortGID is the member's, which
//! `sa_McMemberRecord_Set()` accepts when the EM's port shares a vFabric with the group).
//! A join of a port already a member changes nothing and starts no sweep, so the EM may
//! repeat it: after an SM restart the groups come back without members.

use opa_wire::sa::{McMemberRecord, ATTR_MCMEMBER_RECORD, METHOD_SET};

use crate::fabric::Fabric;

use super::{mgid_text, SaClient, SaError};

/// The port GID of a port: the subnet prefix and the port's GUID.
pub fn port_gid(prefix: u64, guid: u64) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[..8].copy_from_slice(&prefix.to_be_bytes());
    g[8..].copy_from_slice(&guid.to_be_bytes());
    g
}

impl<F: Fabric> SaClient<'_, F> {
    /// Joins the port `gid` to the group `mgid` as a full member; the group's record as the SA
    /// answered it (its MLID, P_Key, MTU, rate and SL).
    pub fn join(&mut self, mgid: &[u8; 16], gid: &[u8; 16]) -> Result<McMemberRecord, SaError> {
        let t = McMemberRecord {
            mgid: *mgid,
            port_gid: *gid,
            scope_join: McMemberRecord::JOIN_FULL_MEMBER,
            ..McMemberRecord::default()
        };
        let mut b = vec![0u8; McMemberRecord::SIZE];
        t.encode(&mut b)
            .map_err(|e| SaError::Bad(format!("{e:?}")))?;
        let what = "McMemberRecord Set (join)";
        // At IB's versions: opa-fm serves McMemberRecords only there.
        let (status, recs) = self.query_ib(
            what,
            METHOD_SET,
            ATTR_MCMEMBER_RECORD,
            McMemberRecord::COMP_OK_JOIN,
            &b,
        )?;
        if status != 0 {
            return Err(SaError::Status { what, status });
        }
        let r = recs
            .first()
            .and_then(|r| McMemberRecord::decode(r).ok())
            .ok_or_else(|| SaError::Bad(format!("{what}: no record in the answer")))?;
        if r.mgid != *mgid {
            return Err(SaError::Bad(format!(
                "{what}: the answer is of group {}, not {}",
                mgid_text(&r.mgid),
                mgid_text(mgid)
            )));
        }
        Ok(r)
    }
}
