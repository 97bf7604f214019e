// SPDX-License-Identifier: GPL-2.0

//! McMemberRecords, at InfiniBand's versions only, as opa-fm serves them (`sa_McMemberRecord()`
//! answers BAD_CLASS at OPA's): the groups the SA has (GetTable), and a port's join to one
//! (Set), checked as opa-fm's `sa_McMemberRecord_Set()` checks a join to an existing group.
//! The 32-bit MLIDs of opa-fm's groups go out as 16-bit ones (`MCAST32_TO_MCAST16()`). This SA creates no group
//! and keeps no member list: opasim's fabric-at-load mode has no multicast tables to program
//! (a multicast DLID reaches every port), so a join changes nothing but the answer.

use opa_wire::sa::records::mlid32_to_16;
use opa_wire::sa::{
    McMemberRecord, SaMad, SA_STATUS_INSUFFICIENT_COMPONENTS, SA_STATUS_REQ_INVALID,
};

use super::{byte_mask, matches, template, Field, Found, Status};
use crate::fabric::FabricView;

/// `MAD_STATUS_SA_REQ_INVALID_GID`: the PortGID names no port of the subnet.
pub const SA_STATUS_REQ_INVALID_GID: Status = 0x0800;
/// The subnet prefix of opasim's ports (opa-fm's default `<SubnetPrefix>`).
const SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;

/// The answer to a join: the group's record with the member's PortGID and JoinState, or the
/// status opa-fm answers.
pub(super) fn mc_join(req: &SaMad<'_>, view: &FabricView) -> Found {
    let t = McMemberRecord::decode(template(req, McMemberRecord::SIZE)?)
        .map_err(|_| SA_STATUS_REQ_INVALID)?;
    let mask = req.sa.comp_mask;
    // A zero MGID, or no MGID, is a create, which needs more components than a join names.
    if mask & McMemberRecord::COMP_OK_JOIN != McMemberRecord::COMP_OK_JOIN || t.mgid == [0; 16] {
        return Err(SA_STATUS_INSUFFICIENT_COMPONENTS);
    }
    let mut half = [0u8; 8];
    half.copy_from_slice(&t.port_gid[..8]);
    let prefix = u64::from_be_bytes(half);
    half.copy_from_slice(&t.port_gid[8..]);
    let guid = u64::from_be_bytes(half);
    if guid == 0 || prefix != SUBNET_PREFIX {
        return Err(SA_STATUS_REQ_INVALID_GID);
    }
    // The member must be an Active port; a join state of 0 joins nothing.
    let active = view
        .ports
        .iter()
        .any(|p| p.port_guid == guid && p.state == 4);
    let join = t.scope_join & 0x0f;
    if !active || join == 0 {
        return Err(SA_STATUS_REQ_INVALID);
    }
    // MGID does not exist: a join (not a create) fails.
    let g = view
        .groups
        .iter()
        .find(|g| g.mgid == t.mgid)
        .ok_or(SA_STATUS_REQ_INVALID)?;
    let r = McMemberRecord {
        mgid: g.mgid,
        port_gid: t.port_gid,
        qkey: g.qkey,
        mtu: g.mtu,
        pkey: g.pkey,
        rate: g.rate,
        sl: g.sl,
        // Link-local scope, and the join state asked for.
        scope_join: 0x20 | join,
        mlid: mlid32_to_16(g.mlid),
        ..McMemberRecord::default()
    };
    let mut b = vec![0u8; McMemberRecord::SIZE];
    r.encode(&mut b).map_err(|_| SA_STATUS_REQ_INVALID)?;
    Ok((McMemberRecord::SIZE, vec![b]))
}

/// The fields of `IB_MCMEMBER_RECORD` by component mask bit (`IB_MCMEMBER_RECORD_COMP_*`):
/// MGID, PortGID, Q_Key, MLID, MtuSelector, Mtu, TClass, P_Key, RateSelector, Rate,
/// PktLifeTimeSelector, PktLifeTime, SL, FlowLabel, HopLimit, Scope, JoinState, ProxyJoin.
/// (opa-fm turns the mask into its STL one, `REBUILD_COMPMSK_IB2STL_MCMEMBER_RECORD()`, and
/// matches the same fields.)
const MCMEMBER_FIELDS: [Field; 18] = [
    (0, 128),
    (128, 128),
    (256, 32),
    (288, 16),
    (304, 2),
    (306, 6),
    (312, 8),
    (320, 16),
    (336, 2),
    (338, 6),
    (344, 2),
    (346, 6),
    (352, 4),
    (356, 20),
    (376, 8),
    (384, 4),
    (388, 4),
    (392, 1),
];

/// McMemberRecord GetTable (`sa_McMemberRecord_GetTable()`) from a requester without the
/// SM_Key: one record per group that matches, its PortGID and JoinState cleared; the MTU, Rate
/// and PacketLifeTime components are left out of the match (`STL_MC_REMOVE_MTU_RATE_LIFE_MASK`).
pub(super) fn mc_member_records(req: &SaMad<'_>, view: &FabricView) -> Found {
    let t = template(req, McMemberRecord::SIZE)?;
    let mask = req.sa.comp_mask & !MC_REMOVE_MTU_RATE_LIFE;
    let m = byte_mask(&MCMEMBER_FIELDS, mask, McMemberRecord::SIZE);
    let mut out = Vec::new();
    for g in &view.groups {
        let r = McMemberRecord {
            mgid: g.mgid,
            qkey: g.qkey,
            mtu: g.mtu,
            pkey: g.pkey,
            rate: g.rate,
            sl: g.sl,
            // Link-local scope (IB_LINK_LOCAL_SCOPE), no join state shown.
            scope_join: 0x20,
            mlid: mlid32_to_16(g.mlid),
            ..McMemberRecord::default()
        };
        let mut b = vec![0u8; McMemberRecord::SIZE];
        if r.encode(&mut b).is_ok() && matches(&b, t, &m) {
            out.push(b);
        }
    }
    Ok((McMemberRecord::SIZE, out))
}

/// The MTU, Rate and PacketLifeTime components (and their selectors) of a McMemberRecord,
/// which opa-fm's SA does not match on in a GetTable (`STL_MC_REMOVE_MTU_RATE_LIFE_MASK`).
const MC_REMOVE_MTU_RATE_LIFE: u64 = 0x0000_0000_0000_0f30;
