// SPDX-License-Identifier: GPL-2.0

//! The node ports of a vesw joined to its multicast group after `apply` (a real SM forwards
//! a group's MLID only to the switch ports of its members): the joins the SA sees, a vesw
//! with its own `unknown_mcast_dlid` joining nothing, and a refused join reported.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::capture;

use opa_wire::sa::{McMemberRecord, SaMad, ATTR_MCMEMBER_RECORD, METHOD_SET};
use opasim_sa::answer::answer;
use vnic_em::client::Client;
use vnic_em::commands::{apply, join_groups, ApplyOpts};
use vnic_em::config::parse;
use vnic_em::error::Exit;
use vnic_em::fake::{FakeFabric, SaHook};
use vnic_em::names::resolve;

/// Two vports of vesw 10 on hostA and hostB (LIDs 2 and 3), by name; vesw 10 takes its
/// multicast DLID from the default group. `EXTRA` goes into the vesw.
const CFG: &str = r#"
[[vesw]]
id = 10
name = "red"
pkey = 0x8001
EXTRA

[[vport]]
node = "hostA hfi1_0"
vport = 0
vesw = 10
port_num = 1
mac = "02:00:00:00:02:00"

[[vport]]
node = "hostB hfi1_0"
vport = 0
vesw = 10
port_num = 2
mac = "02:00:00:00:03:00"
"#;

type Log = Rc<RefCell<Vec<Vec<u8>>>>;

/// The fake fabric with opasim's SA, every SA request logged; `refuse_joins`: the SA answers
/// every join REQ_INVALID (a port that shares no vFabric with the group, to opa-fm).
fn fabric(refuse_joins: bool) -> (Client<FakeFabric>, Log) {
    let mut f = common::fabric(1);
    let view = common::with_sa(&mut f, common::sa_ports());
    let log: Log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    f.sa = Some(SaHook::new(move |mad| {
        l.borrow_mut().push(mad.to_vec());
        let mut a = answer(mad, &view.borrow()).map(|a| a.mad)?;
        if refuse_joins && mad.get(3) == Some(&METHOD_SET) {
            a[4..6].copy_from_slice(&0x0200u16.to_be_bytes());
        }
        Some(a)
    }));
    (Client::new(f, common::policy(20)), log)
}

/// `apply` as the command line runs it: resolve, apply, join.
fn apply_and_join(c: &mut Client<FakeFabric>, text: &str) -> common::Out {
    let cfg = parse(text).unwrap();
    let pol = *c.policy();
    let r = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap();
    capture(|io| {
        let exit = apply(c, &r.cfg, ApplyOpts::default(), io)?;
        join_groups(c, &r.cfg, false, exit, io)
    })
}

/// The joins the SA was sent: (PortGUID, JoinState, component mask).
fn joins(log: &Log) -> Vec<(u64, u8, u64)> {
    log.borrow()
        .iter()
        .filter_map(|m| SaMad::decode_ib(m).ok())
        .filter(|m| m.hdr.method == METHOD_SET && m.hdr.attr_id == ATTR_MCMEMBER_RECORD)
        .map(|m| {
            let r = McMemberRecord::decode(m.data).unwrap();
            let guid = u64::from_be_bytes(r.port_gid[8..].try_into().unwrap());
            assert_eq!(r.port_gid[..8], [0xfe, 0x80, 0, 0, 0, 0, 0, 0]);
            (guid, r.scope_join & 0x0f, m.sa.comp_mask)
        })
        .collect()
}

#[test]
fn apply_joins_each_vnic_port_to_its_vesws_group() {
    let (mut c, log) = fabric(false);
    let r = apply_and_join(&mut c, &CFG.replace("EXTRA", ""));
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    let ok_join = McMemberRecord::COMP_OK_JOIN;
    assert_eq!(
        joins(&log),
        [
            (0x0011_7501_0000_0101, 1, ok_join),
            (0x0011_7501_0000_0201, 1, ok_join)
        ],
        "hostA and hostB, full members"
    );
    assert!(
        r.out.contains(
            "vesw 10 (red): 2 node port(s) joined multicast group \
             0xff12401b80010000:0x00000000ffffffff (MLID 0xc001)"
        ),
        "{}",
        r.out
    );
}

#[test]
fn a_vesw_with_its_own_mcast_dlid_joins_nothing() {
    let (mut c, log) = fabric(false);
    let r = apply_and_join(
        &mut c,
        &CFG.replace("EXTRA", "unknown_mcast_dlid = 0xf00009"),
    );
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert_eq!(joins(&log), []);
    assert!(!r.out.contains("joined"), "{}", r.out);
}

#[test]
fn a_refused_join_after_the_sets_is_not_joined_and_names_the_port() {
    let (mut c, log) = fabric(true);
    let r = apply_and_join(&mut c, &CFG.replace("EXTRA", ""));
    // Not 2, "nothing was changed": the Sets took.
    assert_eq!(r.code, Exit::NotJoined, "{}{}", r.out, r.err);
    assert_eq!(r.code.code(), 6);
    assert_eq!(joins(&log).len(), 2);
    assert!(
        r.err.contains(
            "vesw 10 (red): port GUID 0x0011750100000101 (LID 0x0002) could not join multicast \
             group 0xff12401b80010000:0x00000000ffffffff: the subnet administrator refused \
             McMemberRecord Set (join): status 0x0200; broadcast and ARP will not reach it"
        ),
        "{}",
        r.err
    );
    // The vports themselves were configured.
    assert!(r.out.contains("applied "), "{}", r.out);
}
