// SPDX-License-Identifier: GPL-2.0

use super::*;
use crate::fabric::McGroup;
use opa_wire::sa::{McMemberRecord, PathRecord, SA_STATUS_INSUFFICIENT_COMPONENTS};

fn port(dev: u8, lid: u32, desc: &str, state: u8, cap3: u16) -> PortView {
    PortView {
        state,
        cap_mask: 0x0001_0000,
        cap_mask3: cap3,
        ..PortView::sample(dev, lid, desc)
    }
}

fn view() -> FabricView {
    FabricView {
        ports: vec![
            port(0, 1, "sm hfi1_0", 4, 0),
            port(1, 2, "hostA hfi1_0", 4, 0x2000),
            port(2, 3, "hostB hfi1_0", 4, 0x2000),
            port(3, 4, "hostB hfi1_0", 1, 0x2000),
        ],
        sm_lid: 1,
        groups: vec![McGroup::DEFAULT_BROADCAST],
    }
}

/// A whole zero record of `size` bytes: the template of a query for every record.
fn zero(size: usize) -> Vec<u8> {
    vec![0; size]
}

fn request(method: u8, attr: u16, attr_mod: u32, mask: u64, template: &[u8]) -> Vec<u8> {
    let mut m = vec![0u8; 2048];
    let sa = SaHdr {
        comp_mask: mask,
        ..Default::default()
    };
    let n = sa::encode(&mut m, method, 0, 0x77, attr, attr_mod, &sa, template).unwrap();
    m.truncate(n);
    m
}

/// An answer's status and records (one for a GetResp with data).
fn status_and_records(m: &SaMad<'_>) -> (u16, Vec<Vec<u8>>) {
    let recs = if m.hdr.method == METHOD_GET_TABLE_RESP {
        m.records().map(<[u8]>::to_vec).collect()
    } else if m.data.is_empty() {
        vec![]
    } else {
        vec![m.data.to_vec()]
    };
    (m.hdr.status, recs)
}

fn ask(method: u8, attr: u16, mask: u64, template: &[u8]) -> (u16, Vec<Vec<u8>>, Answer) {
    let a = answer(&request(method, attr, 0, mask, template), &view()).unwrap();
    let m = SaMad::decode(&a.mad).unwrap();
    assert_eq!(m.hdr.tid, 0x77);
    let (status, recs) = status_and_records(&m);
    (status, recs, a)
}

#[test]
fn node_records_by_each_name() {
    let (st, recs, a) = ask(
        METHOD_GET_TABLE,
        ATTR_NODE_RECORD,
        0,
        &zero(NodeRecord::SIZE),
    );
    assert_eq!(st, 0);
    assert_eq!(recs.len(), 3, "the port that is down has no record");
    assert_eq!(a.summary, "NodeRecord GetTable: 3 record(s), 360 bytes");
    let descs: Vec<String> = recs
        .iter()
        .map(|r| NodeRecord::decode(r).unwrap().desc().to_owned())
        .collect();
    assert_eq!(descs, ["sm hfi1_0", "hostA hfi1_0", "hostB hfi1_0"]);

    let mut t = NodeRecord::ZERO;
    t.port_guid = 0x0011_7501_0000_0201;
    let (st, recs, _) = ask(
        METHOD_GET,
        ATTR_NODE_RECORD,
        NodeRecord::COMP_PORTGUID,
        &t.to_vec(),
    );
    assert_eq!(st, 0);
    assert_eq!(NodeRecord::decode(&recs[0]).unwrap().lid, 3);

    t.node_desc = NodeRecord::desc_bytes("hostA hfi1_0");
    let (st, recs, _) = ask(
        METHOD_GET,
        ATTR_NODE_RECORD,
        NodeRecord::COMP_NODEDESC,
        &t.to_vec(),
    );
    assert_eq!((st, NodeRecord::decode(&recs[0]).unwrap().lid), (0, 2));
    t.node_desc = NodeRecord::desc_bytes("nobody");
    let (st, _, _) = ask(
        METHOD_GET,
        ATTR_NODE_RECORD,
        NodeRecord::COMP_NODEDESC,
        &t.to_vec(),
    );
    assert_eq!(st, SA_STATUS_NO_RECORDS);
    t.node_desc = NodeRecord::desc_bytes("sm hfi1_0");
    let (st, recs, _) = ask(
        METHOD_GET_TABLE,
        ATTR_NODE_RECORD,
        NodeRecord::COMP_NODEDESC,
        &t.to_vec(),
    );
    assert_eq!((st, recs.len()), (0, 1));
    // Two ports, one name: a Get cannot choose.
    let mut v = view();
    v.ports[3].state = 4;
    t.node_desc = NodeRecord::desc_bytes("hostB hfi1_0");
    let req = request(
        METHOD_GET,
        ATTR_NODE_RECORD,
        0,
        NodeRecord::COMP_NODEDESC,
        &t.to_vec(),
    );
    let a = answer(&req, &v).unwrap();
    assert_eq!(
        SaMad::decode(&a.mad).unwrap().hdr.status,
        SA_STATUS_TOO_MANY_RECORDS
    );
}

#[test]
fn port_info_records_show_vnic_capable_ports() {
    let (st, recs, _) = ask(
        METHOD_GET_TABLE,
        ATTR_PORTINFO_RECORD,
        0,
        &zero(PortInfoRecord::SIZE),
    );
    assert_eq!(st, 0);
    let r: Vec<PortInfoRecord> = recs
        .iter()
        .map(|r| PortInfoRecord::decode(r).unwrap())
        .collect();
    assert_eq!(r.len(), 3);
    assert_eq!(
        r.iter()
            .filter(|r| r.is_eth_on_fabric())
            .map(|r| r.lid)
            .collect::<Vec<_>>(),
        [2, 3]
    );
    assert!(r.iter().all(|r| r.sm_lid == 1 && r.port_state == 4));

    let t = PortInfoRecord {
        lid: 3,
        ..Default::default()
    };
    let mut b = vec![0u8; PortInfoRecord::SIZE];
    t.encode(&mut b).unwrap();
    let (st, recs, _) = ask(
        METHOD_GET,
        ATTR_PORTINFO_RECORD,
        PortInfoRecord::COMP_ENDPORTLID,
        &b,
    );
    assert_eq!((st, PortInfoRecord::decode(&recs[0]).unwrap().lid), (0, 3));

    // CapabilityMask with modifier bit 31: the template's bits only.
    let t = PortInfoRecord {
        cap_mask: 0x0001_0000,
        ..Default::default()
    };
    t.encode(&mut b).unwrap();
    let req = request(
        METHOD_GET_TABLE,
        ATTR_PORTINFO_RECORD,
        1 << 31,
        PortInfoRecord::COMP_CAPABILITYMASK,
        &b,
    );
    let a = answer(&req, &view()).unwrap();
    assert_eq!(SaMad::decode(&a.mad).unwrap().records().count(), 3);
}

/// [`ask`] at InfiniBand's versions, the answer decoded at them.
fn ask_ib(method: u8, attr: u16, mask: u64, template: &[u8]) -> (u16, Vec<Vec<u8>>, Answer) {
    let mut m = vec![0u8; 2048];
    let sa = SaHdr {
        comp_mask: mask,
        ..Default::default()
    };
    let n = sa::encode_ib(&mut m, method, 0, 0x77, attr, 0, &sa, template).unwrap();
    m.truncate(n);
    let a = answer(&m, &view()).unwrap();
    let r = SaMad::decode_ib(&a.mad).expect("an answer at IB's versions");
    let (status, recs) = status_and_records(&r);
    (status, recs, a)
}

/// opa-fm serves PathRecords only at IB's versions (`sa_PathRecord.c`): at OPA's, BAD_CLASS;
/// at IB's, Get and GetTable, nothing else.
#[test]
fn path_records_only_at_ib_versions() {
    let t = PathRecord {
        slid: 2,
        dlid: 3,
        ..Default::default()
    };
    let mut b = vec![0u8; PathRecord::SIZE];
    t.encode(&mut b).unwrap();
    let mask = PathRecord::COMP_SLID | PathRecord::COMP_DLID;
    let (st, recs, _) = ask(METHOD_GET, ATTR_PATH_RECORD, mask, &b);
    assert_eq!((st, recs.len()), (sa::MAD_STATUS_BAD_CLASS, 0));
    let (st, recs, _) = ask_ib(METHOD_GET, ATTR_PATH_RECORD, mask, &b);
    assert_eq!((st, recs.len()), (0, 1));
    let (st, _, _) = ask_ib(METHOD_SET, ATTR_PATH_RECORD, mask, &b);
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD);
    let (st, _, _) = ask_ib(METHOD_GET, ATTR_NODE_RECORD, 0, &zero(NodeRecord::SIZE));
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
}

#[test]
fn path_records_need_their_ends() {
    let t = PathRecord {
        slid: 2,
        dlid: 3,
        ..Default::default()
    };
    let mut b = vec![0u8; PathRecord::SIZE];
    t.encode(&mut b).unwrap();
    let mask = PathRecord::COMP_SLID | PathRecord::COMP_DLID;
    let (st, recs, _) = ask_ib(METHOD_GET, ATTR_PATH_RECORD, mask, &b);
    assert_eq!(st, 0);
    let p = PathRecord::decode(&recs[0]).unwrap();
    assert_eq!((p.slid, p.dlid, p.pkey, p.mtu), (2, 3, 0xffff, 7));
    assert_eq!(PathRecord::gid_guid(&p.dgid), 0x0011_7501_0000_0201);

    let (st, recs, _) = ask_ib(
        METHOD_GET_TABLE,
        ATTR_PATH_RECORD,
        PathRecord::COMP_SLID,
        &b,
    );
    assert_eq!((st, recs.len()), (0, 3), "every reachable destination");
    let (st, _, _) = ask_ib(METHOD_GET, ATTR_PATH_RECORD, PathRecord::COMP_SLID, &b);
    assert_eq!(st, SA_STATUS_INSUFFICIENT_COMPONENTS);
    let (st, _, _) = ask_ib(METHOD_GET, ATTR_PATH_RECORD, PathRecord::COMP_DLID, &b);
    assert_eq!(st, SA_STATUS_INSUFFICIENT_COMPONENTS);
}

#[test]
fn what_the_sa_refuses() {
    let (st, _, _) = ask(METHOD_GET_TABLE, 0x0031, 0, &[]);
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
    let (st, _, _) = ask(0x02, ATTR_NODE_RECORD, 0, &[]);
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD);
    // A short template for a mask that needs it.
    let (st, _, a) = ask(METHOD_GET, ATTR_NODE_RECORD, NodeRecord::COMP_LID, &[0; 8]);
    assert_eq!(st, SA_STATUS_REQ_INVALID);
    assert_eq!(a.summary, "NodeRecord Get: status 0x0200");
    // Responses are not answered; a MAD of another class version gets BadVersion.
    let mut resp = request(METHOD_GET, ATTR_NODE_RECORD, 0, 0, &[]);
    resp[3] = METHOD_GET_RESP;
    assert_eq!(answer(&resp, &view()), None);
    let mut ib = request(METHOD_GET, ATTR_NODE_RECORD, 0, 0, &[]);
    ib[2] = 2;
    let a = answer(&ib, &view()).unwrap();
    assert_eq!(&a.mad[4..6], &MAD_STATUS_BAD_VERSION.to_be_bytes());
    assert_eq!(answer(&[0; 10], &view()), None);
}

/// sa_NodeRecord_GetTable(), sa_PortInfoRecord_GetTable(), sa_McMemberRecord_GetTable():
/// the data must hold the whole record, whatever the mask.
#[test]
fn templates_shorter_than_the_record_are_invalid() {
    for (attr, size) in [
        (ATTR_NODE_RECORD, NodeRecord::SIZE),
        (ATTR_PORTINFO_RECORD, PortInfoRecord::SIZE),
        (ATTR_MCMEMBER_RECORD, McMemberRecord::SIZE),
    ] {
        // McMemberRecords at IB's versions, where opa-fm serves them.
        let ask = if attr == ATTR_MCMEMBER_RECORD {
            ask_ib
        } else {
            ask
        };
        for len in [0, size - 1] {
            let (st, recs, _) = ask(METHOD_GET_TABLE, attr, 0, &zero(len));
            assert_eq!(
                (st, recs.len()),
                (SA_STATUS_REQ_INVALID, 0),
                "attribute {attr:#x}, {len} bytes"
            );
        }
        let (st, _, _) = ask(METHOD_GET_TABLE, attr, 0, &zero(size));
        assert_eq!(st, 0, "attribute {attr:#x}, the whole record");
    }
}

/// sa_create_template_mask(): bits past the field table are ignored; the fields it has
/// match under the mask, those this SA does not model too (NodeType).
#[test]
fn component_masks_as_opa_fm_reads_them() {
    let mut t = NodeRecord::ZERO;
    t.lid = 3;
    let (st, recs, _) = ask(
        METHOD_GET,
        ATTR_NODE_RECORD,
        NodeRecord::COMP_LID | 1 << 40,
        &t.to_vec(),
    );
    assert_eq!((st, NodeRecord::decode(&recs[0]).unwrap().lid), (0, 3));
    t.node_type = sa::records::NODE_TYPE_SWITCH;
    let (st, recs, _) = ask(
        METHOD_GET_TABLE,
        ATTR_NODE_RECORD,
        NodeRecord::COMP_NODETYPE,
        &t.to_vec(),
    );
    assert_eq!((st, recs.len()), (0, 0), "no switch");
    t.node_type = sa::records::NODE_TYPE_CA;
    t.vendor_id = 0x1175;
    let (st, recs, _) = ask(
        METHOD_GET_TABLE,
        ATTR_NODE_RECORD,
        NodeRecord::COMP_NODETYPE | 1 << 14,
        &t.to_vec(),
    );
    assert_eq!((st, recs.len()), (0, 3), "HFIs of the vendor");
    // PortInfoRecord: only four fields are searchable.
    let (st, recs, _) = ask(
        METHOD_GET_TABLE,
        ATTR_PORTINFO_RECORD,
        1 << 20,
        &zero(PortInfoRecord::SIZE),
    );
    assert_eq!((st, recs.len()), (0, 3));
}

/// sa_filter_validate_mad(): a non-zero SM_Key is dropped; PortInfoRecords only on 0xffff.
#[test]
fn what_the_sa_drops() {
    let mut m = request(
        METHOD_GET_TABLE,
        ATTR_NODE_RECORD,
        0,
        0,
        &zero(NodeRecord::SIZE),
    );
    let limited = Requester { pkey: 0x7fff };
    assert!(
        answer_from(&m, &limited, &view()).is_some(),
        "NodeRecords on 0x7fff"
    );
    m[sa::SA_HDR_OFFSET + 7] = 1;
    assert_eq!(answer(&m, &view()), None, "an SM_Key");
    let m = request(
        METHOD_GET_TABLE,
        ATTR_PORTINFO_RECORD,
        0,
        0,
        &zero(PortInfoRecord::SIZE),
    );
    assert_eq!(answer_from(&m, &limited, &view()), None);
    assert!(answer_from(&m, &Requester::MGMT, &view()).is_some());
}

/// Ports in Init or Armed have records; Down ones do not.
#[test]
fn ports_past_down_have_records() {
    let mut v = view();
    v.ports[3].state = 2;
    let m = request(
        METHOD_GET_TABLE,
        ATTR_NODE_RECORD,
        0,
        0,
        &zero(NodeRecord::SIZE),
    );
    let a = answer(&m, &v).unwrap();
    assert_eq!(SaMad::decode(&a.mad).unwrap().records().count(), 4);
}

#[test]
fn multicast_groups_by_mgid() {
    let mut t = McMemberRecord {
        mgid: McGroup::DEFAULT_BROADCAST.mgid,
        ..Default::default()
    };
    let mut b = zero(McMemberRecord::SIZE);
    t.encode(&mut b).unwrap();
    let (st, recs, a) = ask_ib(
        METHOD_GET_TABLE,
        ATTR_MCMEMBER_RECORD,
        McMemberRecord::COMP_MGID,
        &b,
    );
    assert_eq!((st, recs.len()), (0, 1), "{}", a.summary);
    // opa-fm: McMemberRecords only at IB's versions.
    let (st, _, _) = ask(
        METHOD_GET_TABLE,
        ATTR_MCMEMBER_RECORD,
        McMemberRecord::COMP_MGID,
        &b,
    );
    assert_eq!(st, sa::MAD_STATUS_BAD_CLASS);
    let r = McMemberRecord::decode(&recs[0]).unwrap();
    assert_eq!((r.mlid, r.pkey, r.port_gid), (0xc001, 0x8001, [0; 16]));
    t.mgid[15] = 1;
    t.encode(&mut b).unwrap();
    let (st, recs, _) = ask_ib(
        METHOD_GET_TABLE,
        ATTR_MCMEMBER_RECORD,
        McMemberRecord::COMP_MGID,
        &b,
    );
    assert_eq!((st, recs.len()), (0, 0), "no such group");
    // MTU and rate are not matched on in a GetTable.
    t.mgid = McGroup::DEFAULT_BROADCAST.mgid;
    t.mtu = 5;
    t.encode(&mut b).unwrap();
    let (_, recs, _) = ask_ib(METHOD_GET_TABLE, ATTR_MCMEMBER_RECORD, 0x21, &b);
    assert_eq!(recs.len(), 1);
}

mod join;

/// opa-fm's `sa_ClassPortInfo()`: a Get at either version is answered with the SA's
/// ClassPortInfo in that version's form, so that the kernel's `ib_sa` marks it valid and
/// stops asking (`update_ib_cpi()`); any other method is unsupported.
#[test]
fn class_port_info_at_both_versions() {
    let (st, recs, a) = ask_ib(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]);
    assert_eq!((st, recs.len()), (0, 1), "{}", a.summary);
    let ib = &recs[0];
    assert_eq!(ib.len(), 72);
    // OPA's versions inside, as opa-fm copies them; CM2, multicast, CapMask match, PA.
    assert_eq!(&ib[..4], &[0x80, 0x80, 0xa2, 0x04]);
    // CapMask2 QoS, MFT top, full PortInfo, extended; RespTimeValue 18.
    assert_eq!(
        u32::from_be_bytes(ib[4..8].try_into().unwrap()),
        (0xca << 5) | 18
    );
    assert_eq!(&ib[32..36], &[0, 0, 0, 1]);
    assert_eq!(&ib[64..68], &[0xff, 0, 0, 1]);
    assert_eq!(a.summary, "ClassPortInfo Get (IB form)");

    let (st, recs, a) = ask(METHOD_GET, ATTR_CLASS_PORT_INFO, 0, &[]);
    assert_eq!((st, recs.len()), (0, 1), "{}", a.summary);
    let opa = &recs[0];
    assert_eq!(opa.len(), 80);
    assert_eq!(&opa[..4], &[0x80, 0x80, 0xa2, 0x04]);
    // The OPA form adds DG/DT records.
    let w = u32::from_be_bytes(opa[4..8].try_into().unwrap());
    assert_eq!(w, ((0x0100_0000 | 0xca) << 5) | 18);
    assert_eq!(&opa[64..68], &[0xff, 0, 0, 1]);

    let (st, _, _) = ask_ib(METHOD_SET, ATTR_CLASS_PORT_INFO, 0, &[0; 72]);
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD);
    let (st, _, _) = ask(METHOD_GET_TABLE, ATTR_CLASS_PORT_INFO, 0, &[]);
    assert_eq!(st, MAD_STATUS_UNSUPPORTED_METHOD);
    // It needs no look at the fabric.
    assert!(!needs_fabric(&request(
        METHOD_GET,
        ATTR_CLASS_PORT_INFO,
        0,
        0,
        &[]
    )));
    assert!(needs_fabric(&request(
        METHOD_GET,
        ATTR_NODE_RECORD,
        0,
        0,
        &[]
    )));
}
