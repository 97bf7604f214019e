// SPDX-License-Identifier: GPL-2.0

//! PathRecords (`sa_PathRecord.c`), asked and answered at InfiniBand's versions only: every
//! path from the ports the source components name to those the destination ones name, at
//! the MTU, rate and packet lifetime of an OPA-100 fabric.

use opa_wire::sa::{
    PathRecord, SaMad, METHOD_GET, SA_STATUS_INSUFFICIENT_COMPONENTS, SA_STATUS_REQ_INVALID,
};

use super::{Found, Status};
use crate::fabric::{FabricView, PortView};

/// The MTU of an OPA path (`OPA_MTU_10240`, hfi1's largest).
const PATH_MTU_10240: u8 = 7;
/// The rate of an OPA-100 path (`IB_RATE_100_GBPS`).
const PATH_RATE_100G: u8 = 16;
/// The packet lifetime the SA gives (opa-fm's default `PacketLifetime` of 18).
const PATH_PKT_LIFE: u8 = 18;

/// The components of `mask` outside `known` make a PathRecord request invalid.
fn check_mask(mask: u64, known: u64) -> Result<(), Status> {
    if mask & !known != 0 {
        Err(SA_STATUS_REQ_INVALID)
    } else {
        Ok(())
    }
}

/// The paths a PathRecord Get or GetTable asks for (a Get needs both ends).
pub(super) fn path_records(req: &SaMad<'_>, view: &FabricView) -> Found {
    let m = req.sa.comp_mask;
    check_mask(
        m,
        PathRecord::COMP_SERVICE_ID
            | PathRecord::COMP_DGID
            | PathRecord::COMP_SGID
            | PathRecord::COMP_DLID
            | PathRecord::COMP_SLID
            | PathRecord::COMP_REVERSIBLE
            | PathRecord::COMP_NUMB_PATH
            | PathRecord::COMP_PKEY
            | PathRecord::COMP_SL,
    )?;
    let t = PathRecord::decode(req.data).map_err(|_| SA_STATUS_REQ_INVALID)?;
    let on = |bit: u64| m & bit != 0;
    let pick = |lid_bit, lid: u16, gid_bit, gid: &[u8; 16]| -> Result<Vec<&PortView>, Status> {
        // An IB PathRecord has 16-bit LIDs: a port above them has no path of this kind.
        let ports = view
            .ports
            .iter()
            .filter(|p| p.is_up() && p.lid <= u32::from(u16::MAX));
        Ok(match (on(lid_bit), on(gid_bit)) {
            (true, _) => ports.filter(|p| p.lid == u32::from(lid)).collect(),
            (false, true) => ports
                .filter(|p| p.port_guid == PathRecord::gid_guid(gid))
                .collect(),
            (false, false) => ports.collect(),
        })
    };
    // IBA 15.2.5.16: a path needs its source; a Get needs both ends.
    if !on(PathRecord::COMP_SLID) && !on(PathRecord::COMP_SGID) {
        return Err(SA_STATUS_INSUFFICIENT_COMPONENTS);
    }
    if req.hdr.method == METHOD_GET && !on(PathRecord::COMP_DLID) && !on(PathRecord::COMP_DGID) {
        return Err(SA_STATUS_INSUFFICIENT_COMPONENTS);
    }
    let srcs = pick(
        PathRecord::COMP_SLID,
        t.slid,
        PathRecord::COMP_SGID,
        &t.sgid,
    )?;
    let dsts = pick(
        PathRecord::COMP_DLID,
        t.dlid,
        PathRecord::COMP_DGID,
        &t.dgid,
    )?;
    let mut out = Vec::new();
    for s in &srcs {
        for d in &dsts {
            let r = PathRecord {
                service_id: if on(PathRecord::COMP_SERVICE_ID) {
                    t.service_id
                } else {
                    0
                },
                dgid: PathRecord::guid_gid(d.port_guid),
                sgid: PathRecord::guid_gid(s.port_guid),
                dlid: d.lid as u16,
                slid: s.lid as u16,
                reversible: true,
                numb_path: 1,
                pkey: if on(PathRecord::COMP_PKEY) {
                    t.pkey
                } else {
                    0xffff
                },
                sl: if on(PathRecord::COMP_SL) { t.sl } else { 0 },
                mtu: PATH_MTU_10240,
                rate: PATH_RATE_100G,
                pkt_life: PATH_PKT_LIFE,
            };
            let mut b = vec![0u8; PathRecord::SIZE];
            if r.encode(&mut b).is_ok() {
                out.push(b);
            }
        }
    }
    Ok((PathRecord::SIZE, out))
}
