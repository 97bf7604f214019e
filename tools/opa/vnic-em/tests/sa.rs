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
    let got: Vec<(u16, &str, bool)> = nodes
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
