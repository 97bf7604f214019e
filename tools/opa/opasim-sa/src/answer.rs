// SPDX-License-Identifier: GPL-2.0

//! The SA's answers: every record of the fabric that matches the request's template in the
//! components its mask names, as opa-fm's SA matches them (`sa_NodeRecord.c`,
//! `sa_PortInfoRecord.c`, `sa_McMemberRecord.c`, `sa_PathRecord.c`): a Get gets exactly one
//! record or the status that says why not, a GetTable all of them in one RMPP transfer.
//!
//! Where opa-fm refuses a request, so does this SA, the same way (the functions of opa-fm
//! 10.10.3.0.11's `Esm/ib/src/smi/sa/` named at each check):
//!
//! - a request with a non-zero SM_Key, and a PortInfoRecord request that does not come on
//!   P_Key 0xffff, are dropped without an answer (`sa_filter_validate_mad()`, `sa_main.c`);
//! - a NodeRecord, PortInfoRecord or McMemberRecord request whose data is shorter than the
//!   record is answered REQ_INVALID (their `*_GetTable()`: the data size is the MAD's length
//!   on the wire minus the headers);
//! - component mask bits past the last field of the record's field table are ignored
//!   (`sa_create_template_mask()`, `sa_db.c`, with the tables of `sa_m.h`); the fields of a
//!   NodeRecord and a McMemberRecord match byte for byte under the mask
//!   (`sa_template_test()`); a PortInfoRecord's table has only EndPortLID, PortNum, Options
//!   and CapabilityMask;
//! - PathRecords and McMemberRecords only at InfiniBand's base and class versions (1 and 2),
//!   BAD_CLASS at OPA's (`sa_PathRecord()`, `sa_McMemberRecord()`); a McMemberRecord Set
//!   joins a port to a group the SA has (`mcmember`), a Set of anything else is an
//!   unsupported method;
//! - a ClassPortInfo Get is answered at either version (`classport`, `sa_ClassPortInfo()`),
//!   any other method on it is unsupported.

use crate::fabric::{FabricView, PortView};
use opa_wire::sa::{
    self, attr_offset, NodeRecord, PortInfoRecord, SaHdr, SaMad, ATTR_CLASS_PORT_INFO,
    ATTR_MCMEMBER_RECORD, ATTR_NODE_RECORD, ATTR_PATH_RECORD, ATTR_PORTINFO_RECORD, METHOD_GET,
    METHOD_GET_RESP, METHOD_GET_TABLE, METHOD_GET_TABLE_RESP, METHOD_SET, SA_STATUS_NO_RECORDS,
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

/// The management P_Key (`STL_DEFAULT_FM_PKEY`): full membership of the Admin vFabric.
pub const MGMT_PKEY: u16 = 0xffff;

/// Who sent a request, as the MAD layer tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requester {
    /// The P_Key the request came with (the SA port's P_Key at the received P_Key index).
    pub pkey: u16,
}

impl Requester {
    /// A requester on the management P_Key, which every request may come on.
    pub const MGMT: Requester = Requester { pkey: MGMT_PKEY };
}

/// The answer to the request `mad` from a requester on the management P_Key
/// ([`answer_from`]).
pub fn answer(mad: &[u8], view: &FabricView) -> Option<Answer> {
    answer_from(mad, &Requester::MGMT, view)
}

/// Whether answering `mad` needs the fabric as it is now ([`crate::fabric::Source::snapshot`],
/// a read of every port in sysfs): not for a ClassPortInfo, the SA's own.
pub fn needs_fabric(mad: &[u8]) -> bool {
    mad.get(16..18) != Some(&ATTR_CLASS_PORT_INFO.to_be_bytes()[..])
}

/// The answer to the request `mad` from `who`, or `None` for a MAD that is not a request or
/// that opa-fm's SA drops (`sa_filter_validate_mad()`): a non-zero SM_Key, a PortInfoRecord
/// request not on P_Key 0xffff.
pub fn answer_from(mad: &[u8], who: &Requester, view: &FabricView) -> Option<Answer> {
    // A PathRecord request comes at InfiniBand's versions, the only ones opa-fm serves it at;
    // its answer goes back at them.
    if let Ok(req) = SaMad::decode_ib(mad) {
        return answer_ib(&req, view);
    }
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
    let (method, attr) = (req.hdr.method, req.hdr.attr_id);
    if method & 0x80 != 0 {
        return None;
    }
    // sa_filter_validate_mad(): the SA trusts no SM_Key, and keeps PortInfoRecords (and
    // every attribute but a few any member may read) to the management P_Key.
    if req.sa.sm_key != 0 || (attr == ATTR_PORTINFO_RECORD && who.pkey != MGMT_PKEY) {
        return None;
    }
    if attr == ATTR_CLASS_PORT_INFO {
        return Some(classport::class_port_info(&req, false));
    }
    let name = match attr {
        ATTR_NODE_RECORD => "NodeRecord",
        ATTR_PORTINFO_RECORD => "PortInfoRecord",
        ATTR_MCMEMBER_RECORD => "McMemberRecord",
        ATTR_PATH_RECORD => "PathRecord",
        _ => "attribute",
    };
    let resp_method = match method {
        METHOD_GET => METHOD_GET_RESP,
        METHOD_GET_TABLE => METHOD_GET_TABLE_RESP,
        _ => {
            let s = format!("{name} {attr:#06x} method {method:#04x}: unsupported method");
            return Some(refusal(
                &req,
                METHOD_GET_RESP,
                MAD_STATUS_UNSUPPORTED_METHOD,
                s,
            ));
        }
    };
    let mname = match method {
        METHOD_GET => "Get",
        METHOD_SET => "Set",
        _ => "GetTable",
    };
    let found = match attr {
        ATTR_PATH_RECORD | ATTR_MCMEMBER_RECORD => {
            // sa_PathRecord(), sa_McMemberRecord(): only at IB's base and class versions.
            let s = format!("{name} {mname}: not at OPA's class version");
            return Some(refusal(&req, resp_method, sa::MAD_STATUS_BAD_CLASS, s));
        }
        ATTR_NODE_RECORD => node_records(&req, view),
        ATTR_PORTINFO_RECORD => port_info_records(&req, view),
        _ => {
            let s = format!("{name} {attr:#06x} {mname}: unsupported attribute");
            return Some(refusal(
                &req,
                resp_method,
                MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB,
                s,
            ));
        }
    };
    Some(records_reply(&req, name, mname, found))
}

/// The answer of a Get (one record, or the status that says why not) or of a GetTable (every
/// record, in one RMPP transfer) to `req`, from what the query `found`.
fn records_reply(req: &SaMad<'_>, name: &str, mname: &str, found: Found) -> Answer {
    let (tid, attr, method) = (req.hdr.tid, req.hdr.attr_id, req.hdr.method);
    let (size, records) = match found {
        Ok(r) => r,
        Err(status) => {
            let s = format!("{name} {mname}: status {status:#06x}");
            return refusal(req, METHOD_GET_RESP, status, s);
        }
    };
    let stride = usize::from(attr_offset(size)) * 8;
    let sa = SaHdr {
        sm_key: 0,
        attr_offset: attr_offset(size),
        comp_mask: req.sa.comp_mask,
    };
    if method != METHOD_GET_TABLE {
        let s = format!("{name} {mname}: {} record(s)", records.len());
        return match records.as_slice() {
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
        };
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
    reply(METHOD_GET_TABLE_RESP, 0, tid, attr, &sa, &data, s)
}

/// The answer to an SA request at InfiniBand's versions: a PathRecord Get or GetTable
/// (`sa_PathRecord.c`), a McMemberRecord Get, GetTable or Set (`sa_McMemberRecord.c`), the
/// answer at the same versions; anything else is refused as an unsupported method or
/// attribute.
fn answer_ib(req: &SaMad<'_>, view: &FabricView) -> Option<Answer> {
    let (method, attr) = (req.hdr.method, req.hdr.attr_id);
    if method & 0x80 != 0 || req.sa.sm_key != 0 {
        return None;
    }
    if attr == ATTR_CLASS_PORT_INFO {
        return Some(classport::class_port_info(req, true));
    }
    let mname = match method {
        METHOD_GET => "Get",
        METHOD_SET => "Set",
        _ => "GetTable",
    };
    let a = match (method, attr) {
        (METHOD_GET | METHOD_GET_TABLE, ATTR_PATH_RECORD) => {
            records_reply(req, "PathRecord", mname, path::path_records(req, view))
        }
        (METHOD_GET | METHOD_GET_TABLE, ATTR_MCMEMBER_RECORD) => records_reply(
            req,
            "McMemberRecord",
            mname,
            mcmember::mc_member_records(req, view),
        ),
        (METHOD_SET, ATTR_MCMEMBER_RECORD) => {
            records_reply(req, "McMemberRecord", mname, mcmember::mc_join(req, view))
        }
        _ => {
            let status = if attr == ATTR_PATH_RECORD || attr == ATTR_MCMEMBER_RECORD {
                MAD_STATUS_UNSUPPORTED_METHOD
            } else {
                MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB
            };
            let s = format!("attribute {attr:#06x} method {method:#04x} at IB's versions");
            refusal(req, METHOD_GET_RESP, status, s)
        }
    };
    Some(ib_versions(a))
}

/// `a` at InfiniBand's base and class versions.
fn ib_versions(mut a: Answer) -> Answer {
    if let Some(v) = a.mad.get_mut(0) {
        *v = sa::IB_SA_BASE_VERSION;
    }
    if let Some(v) = a.mad.get_mut(2) {
        *v = sa::IB_SA_CLASS_VERSION;
    }
    a
}

/// The answer to `req` by `method` with `status` and no data: a refusal, or the status a
/// query failed with.
fn refusal(req: &SaMad<'_>, method: u8, status: u16, summary: String) -> Answer {
    let (tid, attr) = (req.hdr.tid, req.hdr.attr_id);
    reply(method, status, tid, attr, &req.sa, &[], summary)
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

/// A field of a record's field table (opa-fm's `FieldMask_t` of `sa_m.h`): its offset and
/// length in bits. Component mask bit i names field i.
type Field = (u16, u16);

/// `StlNodeRecordFieldMask`: RID.LID, reserved, BaseVersion, ClassVersion, NodeType,
/// NumPorts, reserved, SystemImageGUID, NodeGUID, PortGUID, PartitionCap, DeviceID,
/// Revision, LocalPortNum, VendorID, NodeDesc. (opa-fm's table puts NodeGUID at bit 196, a
/// nibble late; this SA matches it where it is.)
const NODE_FIELDS: [Field; 16] = [
    (0, 32),
    (32, 32),
    (64, 8),
    (72, 8),
    (80, 8),
    (88, 8),
    (96, 32),
    (128, 64),
    (192, 64),
    (256, 64),
    (320, 16),
    (336, 16),
    (352, 32),
    (384, 8),
    (392, 24),
    (416, 512),
];

/// The number of fields of `StlPortInfoRecordFieldMask`: EndPortLID, PortNum, Options,
/// CapabilityMask ("no other fields are searchable").
const PORTINFO_FIELDS: u32 = 4;

/// The byte mask of the fields `mask` names (`sa_create_template_mask()`): bits past the
/// table are ignored.
fn byte_mask(fields: &[Field], mask: u64, size: usize) -> Vec<u8> {
    let mut m = vec![0u8; size];
    for (i, &(off, len)) in fields.iter().enumerate() {
        if mask & 1u64.checked_shl(i as u32).unwrap_or(0) == 0 {
            continue;
        }
        for bit in off..off.saturating_add(len) {
            if let Some(b) = m.get_mut(usize::from(bit / 8)) {
                *b |= 0x80 >> (bit % 8);
            }
        }
    }
    m
}

/// Whether `record` matches `template` under the byte mask `m` (`sa_template_test()`).
fn matches(record: &[u8], template: &[u8], m: &[u8]) -> bool {
    record
        .iter()
        .zip(template)
        .zip(m)
        .all(|((r, t), k)| (r ^ t) & k == 0)
}

/// The template of a query: the record it carries, which opa-fm's SA wants whole even when
/// the mask names no component (REQ_INVALID when the data is shorter than `size`).
fn template<'a>(req: &SaMad<'a>, size: usize) -> Result<&'a [u8], Status> {
    req.data.get(..size).ok_or(SA_STATUS_REQ_INVALID)
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
    let t = template(req, NodeRecord::SIZE)?;
    let m = byte_mask(&NODE_FIELDS, req.sa.comp_mask, NodeRecord::SIZE);
    let mut out = Vec::new();
    // sa_NodeRecord_GetTable(): a record for every port the SM has brought past Down.
    for p in view.ports.iter().filter(|p| p.is_known()) {
        let r = node_record(p).to_vec();
        if matches(&r, t, &m) {
            out.push(r);
        }
    }
    Ok((NodeRecord::SIZE, out))
}

fn port_info_records(req: &SaMad<'_>, view: &FabricView) -> Found {
    let t = template(req, PortInfoRecord::SIZE)?;
    let t = PortInfoRecord::decode(t).map_err(|_| SA_STATUS_REQ_INVALID)?;
    // Bits past the table's fields are ignored.
    let m = req.sa.comp_mask & ((1 << PORTINFO_FIELDS) - 1);
    let on = |bit: u64| m & bit != 0;
    // IBA 15.2.5.3: with bit 31 of the modifier, CapabilityMask matches on the template's
    // bits only; without it, exactly.
    let cap_any = req.hdr.attr_mod & (1 << 31) != 0;
    let mut out = Vec::new();
    for p in view.ports.iter().filter(|p| p.is_known()) {
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

mod classport;
mod mcmember;
mod path;

#[cfg(test)]
mod tests;
