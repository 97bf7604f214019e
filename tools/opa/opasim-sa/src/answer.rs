// SPDX-License-Identifier: GPL-2.0

//! The SA's answers: every record of the fabric that matches the request's template in the
//! components its mask names, as opa-fm's SA matches them (`sa_NodeRecord.c`,
//! `sa_PortInfoRecord.c`, `sa_PathRecord.c`): a Get gets exactly one record or the status
//! that says why not, a GetTable all of them in one RMPP transfer.

use crate::fabric::{FabricView, PortView};
use opa_wire::sa::{
    self, attr_offset, NodeRecord, PathRecord, PortInfoRecord, SaHdr, SaMad, ATTR_NODE_RECORD,
    ATTR_PATH_RECORD, ATTR_PORTINFO_RECORD, METHOD_GET, METHOD_GET_RESP, METHOD_GET_TABLE,
    METHOD_GET_TABLE_RESP, SA_STATUS_INSUFFICIENT_COMPONENTS, SA_STATUS_NO_RECORDS,
    SA_STATUS_REQ_INVALID, SA_STATUS_TOO_MANY_RECORDS,
};
use opa_wire::wire::mad::{
    MAD_STATUS_BAD_VERSION, MAD_STATUS_UNSUPPORTED_METHOD, MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
};

/// An answer to send back, and one line for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The response MAD (a GetTableResp of any length: the kernel cuts it into segments).
    pub mad: Vec<u8>,
    /// What was asked and answered (`NodeRecord GetTable: 4 records`).
    pub summary: String,
}

/// Why no record could be chosen.
type Status = u16;

/// The MTU of an OPA path (`OPA_MTU_10240`, hfi1's largest).
const PATH_MTU_10240: u8 = 7;
/// The rate of an OPA-100 path (`IB_RATE_100_GBPS`).
const PATH_RATE_100G: u8 = 16;
/// The packet lifetime the SA gives (opa-fm's default `PacketLifetime` of 18).
const PATH_PKT_LIFE: u8 = 18;

/// The answer to the request `mad`, or `None` for a MAD that is not a request.
pub fn answer(mad: &[u8], view: &FabricView) -> Option<Answer> {
    let req = match SaMad::decode(mad) {
        Ok(r) => r,
        Err(_) => {
            // Not an OPA SA MAD of our version: answered with BadVersion, as an SA would,
            // when its header can be read at all.
            let tid = u64::from_be_bytes(mad.get(8..16)?.try_into().ok()?);
            let method = *mad.get(3)?;
            if method & 0x80 != 0 {
                return None;
            }
            let attr = u16::from_be_bytes(mad.get(16..18)?.try_into().ok()?);
            return Some(reply(
                METHOD_GET_RESP,
                MAD_STATUS_BAD_VERSION,
                tid,
                attr,
                &SaHdr::default(),
                &[],
                "bad version".into(),
            ));
        }
    };
    let (method, tid, attr) = (req.hdr.method, req.hdr.tid, req.hdr.attr_id);
    if method & 0x80 != 0 {
        return None;
    }
    let name = match attr {
        ATTR_NODE_RECORD => "NodeRecord",
        ATTR_PORTINFO_RECORD => "PortInfoRecord",
        ATTR_PATH_RECORD => "PathRecord",
        _ => "attribute",
    };
    let resp_method = match method {
        METHOD_GET => METHOD_GET_RESP,
        METHOD_GET_TABLE => METHOD_GET_TABLE_RESP,
        _ => {
            let s = format!("{name} {attr:#06x} method {method:#04x}: unsupported method");
            return Some(reply(
                METHOD_GET_RESP,
                MAD_STATUS_UNSUPPORTED_METHOD,
                tid,
                attr,
                &req.sa,
                &[],
                s,
            ));
        }
    };
    let mname = if method == METHOD_GET {
        "Get"
    } else {
        "GetTable"
    };
    let found = match attr {
        ATTR_NODE_RECORD => node_records(&req, view),
        ATTR_PORTINFO_RECORD => port_info_records(&req, view),
        ATTR_PATH_RECORD => path_records(&req, view),
        _ => {
            let s = format!("{name} {attr:#06x} {mname}: unsupported attribute");
            return Some(reply(
                resp_method,
                MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
                tid,
                attr,
                &req.sa,
                &[],
                s,
            ));
        }
    };
    let (size, records) = match found {
        Ok(r) => r,
        Err(status) => {
            let s = format!("{name} {mname}: status {status:#06x}");
            return Some(reply(resp_method, status, tid, attr, &req.sa, &[], s));
        }
    };
    let stride = usize::from(attr_offset(size)) * 8;
    let sa = SaHdr {
        sm_key: 0,
        attr_offset: attr_offset(size),
        comp_mask: req.sa.comp_mask,
    };
    if method == METHOD_GET {
        let s = format!("{name} Get: {} record(s)", records.len());
        return Some(match records.as_slice() {
            [one] => reply(METHOD_GET_RESP, 0, tid, attr, &sa, one, s),
            [] => reply(
                METHOD_GET_RESP,
                SA_STATUS_NO_RECORDS,
                tid,
                attr,
                &sa,
                &[],
                s,
            ),
            _ => reply(
                METHOD_GET_RESP,
                SA_STATUS_TOO_MANY_RECORDS,
                tid,
                attr,
                &sa,
                &[],
                s,
            ),
        });
    }
    let mut data = vec![0u8; stride * records.len()];
    for (chunk, r) in data.chunks_exact_mut(stride).zip(&records) {
        if let Some(dst) = chunk.get_mut(..r.len()) {
            dst.copy_from_slice(r);
        }
    }
    let s = format!(
        "{name} GetTable: {} record(s), {} bytes",
        records.len(),
        data.len()
    );
    Some(reply(METHOD_GET_TABLE_RESP, 0, tid, attr, &sa, &data, s))
}

/// A response MAD with `data` after the headers.
fn reply(
    method: u8,
    status: u16,
    tid: u64,
    attr: u16,
    sa: &SaHdr,
    data: &[u8],
    summary: String,
) -> Answer {
    let mut mad = vec![0u8; sa::SA_DATA_OFFSET + data.len()];
    // Cannot fail: the buffer has room for the headers and the data.
    let len = sa::encode(&mut mad, method, status, tid, attr, 0, sa, data).unwrap_or(0);
    mad.truncate(len);
    Answer { mad, summary }
}

/// The components of `mask` outside `known` make the request invalid: the SA does not
/// silently ignore a field the requester meant to match on.
fn check_mask(mask: u64, known: u64) -> Result<(), Status> {
    if mask & !known != 0 {
        Err(SA_STATUS_REQ_INVALID)
    } else {
        Ok(())
    }
}

/// A query's component mask, checked by [`check_mask`] against `known`, and its template:
/// the record it carries, read by `decode`, or `empty` when the mask names no component
/// (a query for every record may leave the template out).
fn template<R, E>(
    req: &SaMad<'_>,
    known: u64,
    empty: R,
    decode: impl Fn(&[u8]) -> Result<R, E>,
) -> Result<(u64, R), Status> {
    let m = req.sa.comp_mask;
    check_mask(m, known)?;
    if m == 0 {
        return Ok((m, empty));
    }
    let t = decode(req.data).map_err(|_| SA_STATUS_REQ_INVALID)?;
    Ok((m, t))
}

fn node_record(p: &PortView) -> NodeRecord {
    NodeRecord {
        lid: p.lid,
        node_type: sa::records::NODE_TYPE_CA,
        num_ports: p.num_ports,
        sys_image_guid: p.sys_image_guid,
        node_guid: p.node_guid,
        port_guid: p.port_guid,
        partition_cap: 16,
        local_port_num: p.port_num,
        vendor_id: 0x1175,
        node_desc: NodeRecord::desc_bytes(&p.node_desc),
        ..NodeRecord::ZERO
    }
}

type Found = Result<(usize, Vec<Vec<u8>>), Status>;

fn node_records(req: &SaMad<'_>, view: &FabricView) -> Found {
    let known = NodeRecord::COMP_LID
        | NodeRecord::COMP_NODETYPE
        | NodeRecord::COMP_SYSIMAGEGUID
        | NodeRecord::COMP_NODEGUID
        | NodeRecord::COMP_PORTGUID
        | NodeRecord::COMP_LOCALPORTNUM
        | NodeRecord::COMP_NODEDESC;
    let (m, t) = template(req, known, NodeRecord::ZERO, NodeRecord::decode)?;
    let on = |bit: u64| m & bit != 0;
    let mut out = Vec::new();
    for p in view.ports.iter().filter(|p| p.is_up()) {
        let r = node_record(p);
        if (on(NodeRecord::COMP_LID) && r.lid != t.lid)
            || (on(NodeRecord::COMP_NODETYPE) && r.node_type != t.node_type)
            || (on(NodeRecord::COMP_SYSIMAGEGUID) && r.sys_image_guid != t.sys_image_guid)
            || (on(NodeRecord::COMP_NODEGUID) && r.node_guid != t.node_guid)
            || (on(NodeRecord::COMP_PORTGUID) && r.port_guid != t.port_guid)
            || (on(NodeRecord::COMP_LOCALPORTNUM) && r.local_port_num != t.local_port_num)
            || (on(NodeRecord::COMP_NODEDESC) && r.node_desc != t.node_desc)
        {
            continue;
        }
        out.push(r.to_vec());
    }
    Ok((NodeRecord::SIZE, out))
}

fn port_info_records(req: &SaMad<'_>, view: &FabricView) -> Found {
    let known = PortInfoRecord::COMP_ENDPORTLID
        | PortInfoRecord::COMP_PORTNUM
        | PortInfoRecord::COMP_OPTIONS
        | PortInfoRecord::COMP_CAPABILITYMASK;
    let (m, t) = template(
        req,
        known,
        PortInfoRecord::default(),
        PortInfoRecord::decode,
    )?;
    let on = |bit: u64| m & bit != 0;
    // IBA 15.2.5.3: with bit 31 of the modifier, CapabilityMask matches on the template's
    // bits only; without it, exactly.
    let cap_any = req.hdr.attr_mod & (1 << 31) != 0;
    let mut out = Vec::new();
    for p in view.ports.iter().filter(|p| p.is_up()) {
        let r = PortInfoRecord {
            lid: p.lid,
            port_num: p.port_num,
            port_state: p.state,
            sm_lid: view.sm_lid,
            cap_mask: p.cap_mask,
            cap_mask3: p.cap_mask3,
        };
        let cap_ok = if cap_any {
            r.cap_mask & t.cap_mask == t.cap_mask
        } else {
            r.cap_mask == t.cap_mask
        };
        if (on(PortInfoRecord::COMP_ENDPORTLID) && r.lid != t.lid)
            || (on(PortInfoRecord::COMP_PORTNUM) && r.port_num != t.port_num)
            || (on(PortInfoRecord::COMP_CAPABILITYMASK) && !cap_ok)
        {
            continue;
        }
        let mut b = vec![0u8; PortInfoRecord::SIZE];
        if r.encode(&mut b).is_ok() {
            out.push(b);
        }
    }
    Ok((PortInfoRecord::SIZE, out))
}

fn path_records(req: &SaMad<'_>, view: &FabricView) -> Found {
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
    let pick = |lid_bit, lid: u32, gid_bit, gid: &[u8; 16]| -> Result<Vec<&PortView>, Status> {
        let ports = view.ports.iter().filter(|p| p.is_up());
        Ok(match (on(lid_bit), on(gid_bit)) {
            (true, _) => ports.filter(|p| p.lid == lid).collect(),
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
                dlid: d.lid,
                slid: s.lid,
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

trait ToVec {
    fn to_vec(&self) -> Vec<u8>;
}

impl ToVec for NodeRecord {
    fn to_vec(&self) -> Vec<u8> {
        let mut b = vec![0u8; NodeRecord::SIZE];
        // Cannot fail: the buffer is the record's size.
        let _ = self.encode(&mut b);
        b
    }
}

#[cfg(test)]
mod tests;
