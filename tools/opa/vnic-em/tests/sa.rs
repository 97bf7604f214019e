// SPDX-License-Identifier: GPL-2.0

//! The SA client against opasim's SA: discovery, names resolved to LIDs, and what goes wrong.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

mod common;

use opasim_sa::fabric::FabricView;
use vnic_em::fake::{FakeFabric, SaHook};
use vnic_em::sa::{NodeRef, ResolveError, SaClient, SaError};

/// The fake fabric (no VEMA agent) with opasim's SA over an EM port and two hosts.
fn fabric() -> (FakeFabric, Rc<RefCell<FabricView>>) {
    let mut f = FakeFabric::new(1);
    let view = common::with_sa(&mut f, common::sa_ports());
    (f, view)
}

const T: Duration = Duration::from_millis(100);

#[test]
fn discover_marks_vnic_ports() {
    let (mut f, _) = fabric();
    let nodes = SaClient::new(&mut f, T, 1).discover().unwrap();
    let got: Vec<(u32, &str, bool)> = nodes
        .iter()
        .map(|n| (n.lid, n.desc.as_str(), n.vnic))
        .collect();
    assert_eq!(
        got,
        [
            (1, "em hfi1_0", false),
            (2, "hostA hfi1_0", true),
            (3, "hostB hfi1_0", true)
        ]
    );
    assert_eq!(f.sa_requests, 2, "one GetTable of each record");
}

#[test]
fn names_resolve_to_the_lids_of_now() {
    let (mut f, view) = fabric();
    let guid = NodeRef::parse("0x0011750100000201").unwrap();
    let desc = NodeRef::parse("hostA hfi1_0").unwrap();
    let mut sa = SaClient::new(&mut f, T, 1);
    assert_eq!(sa.resolve(&guid).unwrap().lid, 3);
    assert_eq!(sa.resolve(&desc).unwrap().lid, 2);
    assert_eq!(sa.resolve(&NodeRef::Lid(2)).unwrap().desc, "hostA hfi1_0");
    // The SM moves hostB: the same name, a new LID.
    view.borrow_mut().ports[2].lid = 9;
    assert_eq!(sa.resolve(&guid).unwrap().lid, 9);

    let e = sa
        .resolve(&NodeRef::parse("0x00117501000000ff").unwrap())
        .unwrap_err();
    assert!(matches!(e, ResolveError::Unknown(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "no port of the fabric is GUID 0x00117501000000ff (the SA knows no such node)"
    );
    view.borrow_mut().ports[2].node_desc = "hostA hfi1_0".into();
    let e = sa.resolve(&desc).unwrap_err();
    assert!(
        matches!(e, ResolveError::Ambiguous(_, ref n) if n.len() == 2),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("2 ports are \"hostA hfi1_0\":"),
        "{e}"
    );
}

#[test]
fn a_missing_or_silent_sa() {
    let mut f = FakeFabric::new(1);
    let e = SaClient::new(&mut f, T, 2).discover().unwrap_err();
    assert!(matches!(e, SaError::Transport(_)), "{e}");
    assert!(e.to_string().contains("no subnet manager"), "{e}");

    f.sa = Some(SaHook::new(|_| None));
    let e = SaClient::new(&mut f, T, 2).discover().unwrap_err();
    assert!(matches!(e, SaError::Timeout { attempts: 3 }), "{e}");
    assert_eq!(f.sa_requests, 1 + 3);
}

/// The SA requests a fabric's SA received.
type Log = Rc<RefCell<Vec<Vec<u8>>>>;

/// A fabric with opasim's SA over `ports`, recording the requests.
fn recorded(ports: Vec<opasim_sa::fabric::PortView>) -> (FakeFabric, Log) {
    let mut f = FakeFabric::new(1);
    let view = common::with_sa(&mut f, ports);
    let log = Rc::new(RefCell::new(Vec::new()));
    let (v, l) = (view.clone(), log.clone());
    f.sa = Some(SaHook::new(move |mad| {
        l.borrow_mut().push(mad.to_vec());
        opasim_sa::answer::answer(mad, &v.borrow()).map(|a| a.mad)
    }));
    (f, log)
}

/// opa-fm answers REQ_INVALID to a NodeRecord or PortInfoRecord request whose data is
/// shorter than the record (sa_NodeRecord.c, sa_PortInfoRecord.c); opamgt sends the whole
/// record, mask 0 or not.
#[test]
fn every_request_carries_the_whole_record() {
    use opa_wire::sa::{
        McMemberRecord, NodeRecord, PortInfoRecord, SaMad, ATTR_MCMEMBER_RECORD, ATTR_NODE_RECORD,
        ATTR_PORTINFO_RECORD,
    };
    let (mut f, log) = recorded(common::sa_ports());
    let mut sa = SaClient::new(&mut f, T, 1);
    sa.discover().unwrap();
    sa.resolve(&NodeRef::parse("hostA hfi1_0").unwrap())
        .unwrap();
    sa.resolve(&NodeRef::parse("0x0011750100000201").unwrap())
        .unwrap();
    assert_eq!(
        sa.mcast_dlid(&vnic_em::sa::DEFAULT_MCAST_MGID).unwrap(),
        Some(0xf0_0001)
    );
    let log = log.borrow();
    assert!(log.len() >= 6, "{}", log.len());
    for m in log.iter() {
        // McMemberRecords at IB's versions, the only ones opa-fm serves them at (it answers
        // BAD_CLASS at OPA's); the other records at OPA's.
        let (m, size) = match SaMad::decode(m) {
            Ok(m) if m.hdr.attr_id == ATTR_NODE_RECORD => (m, NodeRecord::SIZE),
            Ok(m) if m.hdr.attr_id == ATTR_PORTINFO_RECORD => (m, PortInfoRecord::SIZE),
            Ok(m) => panic!("attribute {:#x} at OPA's versions", m.hdr.attr_id),
            Err(_) => {
                let m = SaMad::decode_ib(m).expect("a request at IB's versions");
                assert_eq!(m.hdr.attr_id, ATTR_MCMEMBER_RECORD);
                (m, McMemberRecord::SIZE)
            }
        };
        assert_eq!(m.data.len(), size, "attribute {:#x}", m.hdr.attr_id);
        assert_eq!(m.sa.sm_key, 0);
    }
}

/// BUSY (0x0001): asked again after a pause that doubles, a bounded number of times.
#[test]
fn busy_is_asked_again_then_given_up() {
    let (mut f, view) = fabric();
    let mut busy = 2;
    f.sa = Some(SaHook::new(move |mad| {
        let mut a = opasim_sa::answer::answer(mad, &view.borrow())?.mad;
        if busy > 0 {
            busy -= 1;
            a[4..6].copy_from_slice(&opa_wire::sa::MAD_STATUS_BUSY.to_be_bytes());
        }
        Some(a)
    }));
    let nodes = SaClient::new(&mut f, T, 0)
        .with_busy(3, Duration::from_millis(1))
        .discover()
        .unwrap();
    assert_eq!(nodes.len(), 3);
    assert_eq!(f.sa_requests, 2 + 2, "two BUSY, then the two tables");

    f.sa = Some(SaHook::new(|mad| {
        let mut m = mad.to_vec();
        m[3] = 0x92;
        m[4..6].copy_from_slice(&opa_wire::sa::MAD_STATUS_BUSY.to_be_bytes());
        Some(m)
    }));
    f.sa_requests = 0;
    let e = SaClient::new(&mut f, T, 0)
        .with_busy(3, Duration::from_millis(1))
        .node_table()
        .unwrap_err();
    assert!(matches!(e, SaError::Busy { answers: 4, .. }), "{e}");
    assert_eq!(f.sa_requests, 4);
    assert!(
        e.to_string().starts_with(
            "the subnet administrator answered NodeRecord GetTable BUSY 4 times over 0.0 s: \
             the SM is still bringing the fabric up"
        ),
        "{e}"
    );
}

/// Only HFI ports that are Active resolve: opa-fm's tables also hold switches and ports in
/// Init or Armed.
#[test]
fn only_active_hfi_ports_count() {
    use opa_wire::sa::records::{NODE_TYPE_CA, NODE_TYPE_SWITCH};
    use opa_wire::sa::{NodeRecord, PortInfoRecord};
    let hfi = |lid: u32, desc: &str| NodeRecord {
        lid,
        node_type: NODE_TYPE_CA,
        local_port_num: 1,
        port_guid: 0x100 + u64::from(lid),
        node_desc: NodeRecord::desc_bytes(desc),
        ..NodeRecord::ZERO
    };
    let sw = NodeRecord {
        node_type: NODE_TYPE_SWITCH,
        local_port_num: 0,
        ..hfi(7, "edge switch")
    };
    let pi = |lid: u32, port_num: u8, port_state: u8| PortInfoRecord {
        lid,
        port_num,
        port_state,
        cap_mask3: 0x2000,
        ..Default::default()
    };
    let nodes = [hfi(2, "hostA hfi1_0"), hfi(3, "hostB hfi1_0"), sw];
    // The switch's port 0 and port 1, both Active; hostB in Armed.
    let ports = [pi(2, 1, 4), pi(3, 1, 3), pi(7, 0, 4), pi(7, 1, 4)];
    let got = vnic_em::sa::active_hfi_ports(&nodes, &ports);
    assert_eq!(
        got.iter().map(|n| (n.lid, n.vnic)).collect::<Vec<_>>(),
        [(2, true)]
    );

    // Against opasim's SA: a port in Init has records there, and resolves to nothing here.
    let (mut f, view) = fabric();
    view.borrow_mut().ports[2].state = 2;
    let mut sa = SaClient::new(&mut f, T, 1);
    assert_eq!(
        sa.node_table().unwrap().len(),
        3,
        "the SA knows the Init port"
    );
    assert_eq!(sa.discover().unwrap().len(), 2);
    let e = sa
        .resolve(&NodeRef::parse("0x0011750100000201").unwrap())
        .unwrap_err();
    assert!(matches!(e, ResolveError::Unknown(_)), "{e}");
}

/// OPA's LIDs are 32 bits in the records: read whole.
#[test]
fn lids_above_16_bits_are_read_whole() {
    let (mut f, view) = fabric();
    view.borrow_mut().ports[2].lid = 0x0001_0003;
    let nodes = SaClient::new(&mut f, T, 1).discover().unwrap();
    assert_eq!(nodes[2].lid, 0x0001_0003);
    let n = SaClient::new(&mut f, T, 1)
        .resolve(&NodeRef::parse("hostB hfi1_0").unwrap())
        .unwrap();
    assert_eq!(n.lid, 0x0001_0003);
}

/// An EM port that is a limited member says so at once, not after the timeouts.
#[test]
fn a_limited_member_is_told_to_join_the_admin_vfabric() {
    let (mut f, _) = fabric();
    f.limited_member = true;
    let e = SaClient::new(&mut f, T, 3).discover().unwrap_err();
    assert!(matches!(e, SaError::LimitedMember(_)), "{e}");
    assert!(
        e.to_string().contains("add this port to the Admin vFabric"),
        "{e}"
    );
    assert_eq!(
        f.sa_requests, 1,
        "the NodeRecords only: no PortInfoRecord request"
    );
}

/// The broadcast and unknown multicast DLID: the MLID of the SA's multicast group, in the
/// 16B LID space.
#[test]
fn multicast_groups_give_the_dlid() {
    let (mut f, view) = fabric();
    let mut sa = SaClient::new(&mut f, T, 1);
    assert_eq!(
        sa.mcast_dlid(&vnic_em::sa::DEFAULT_MCAST_MGID).unwrap(),
        Some(0xf0_0001)
    );
    let other = vnic_em::sa::parse_mgid("0xff12401b80020000:0x00000000ffffffff").unwrap();
    assert_eq!(sa.mcast_dlid(&other).unwrap(), None);
    view.borrow_mut().groups[0].mlid = 0xf000_0042;
    assert_eq!(
        sa.mcast_dlid(&vnic_em::sa::DEFAULT_MCAST_MGID).unwrap(),
        Some(0xf0_0042)
    );
    assert_eq!(
        vnic_em::sa::mgid_text(&vnic_em::sa::DEFAULT_MCAST_MGID),
        "0xff12401b80010000:0x00000000ffffffff"
    );
    assert_eq!(vnic_em::sa::parse_mgid("ff12::1"), None);
}
