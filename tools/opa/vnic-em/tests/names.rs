// SPDX-License-Identifier: GPL-2.0

//! Node ports named by GUID or description, resolved through opasim's SA: the config
//! checks, apply with names, what a name that gives no port or two does, and `watch`
//! following a LID the SM changed.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

use common::{capture, sets};

use opasim_sa::answer::answer;
use opasim_sa::fabric::{FabricView, PortView};
use vnic_em::client::Client;
use vnic_em::commands::watch::{self, WatchOpts};
use vnic_em::commands::ApplyOpts;
use vnic_em::config::parse;
use vnic_em::error::Exit;
use vnic_em::fake::{FakeFabric, SaHook};
use vnic_em::names::{resolve, NamesError};

/// Port GUIDs of opasim's devices 1 and 2 (LIDs 2 and 3 here).
const GUID_A: &str = "0x0011750100000101";

const NAMED: &str = r#"
[[vesw]]
id = 10
name = "red"
pkey = 0x8010
unknown_ucast_nodes = ["hostB hfi1_0"]

[[vesw.mac_table]]
mac = "02:11:00:00:00:01"
node = "hostB hfi1_0"

[[vport]]
node = "0x0011750100000101"
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

/// The fake fabric (VEMA agents at LIDs 2 and 3) with opasim's SA over the same ports.
fn fabric() -> (Client<FakeFabric>, Rc<RefCell<FabricView>>) {
    let mut f = common::fabric(1);
    let view = common::with_sa(&mut f, common::sa_ports());
    (Client::new(f, common::policy(20)), view)
}

#[test]
fn names_in_the_config() {
    let cfg = parse(NAMED).unwrap();
    assert_eq!(cfg.names.len(), 4);
    assert_eq!((cfg.names[2].line, cfg.names[2].col), (13, 8));
    assert_eq!(cfg.vports[0].lid, 0, "resolved later");

    let both = NAMED.replacen("node = \"0x0011750100000101\"", "lid = 2\nnode = \"x\"", 1);
    let e = parse(&both).unwrap_err();
    assert!(
        e[0].msg.contains("by `lid` or by `node`, not both"),
        "{e:?}"
    );
    let none = NAMED.replacen("node = \"0x0011750100000101\"\n", "", 1);
    let e = parse(&none).unwrap_err();
    assert!(e[0].msg.contains("missing `node`"), "{e:?}");
    let short = NAMED.replacen(GUID_A, "0x0011750100101", 1);
    let e = parse(&short).unwrap_err();
    assert!(
        e[0].msg
            .contains("a port GUID (0x and 16 hexadecimal digits)"),
        "{e:?}"
    );
    assert_eq!(e[0].line, 13);
    let two = NAMED.replacen(
        "unknown_ucast_nodes",
        "unknown_ucast_dlids = [2]\nunknown_ucast_nodes",
        1,
    );
    let e = parse(&two).unwrap_err();
    assert!(e[0].msg.contains("not both"), "{e:?}");
}

#[test]
fn apply_by_name_reaches_the_lids_of_now() {
    let (mut c, _) = fabric();
    let cfg = parse(NAMED).unwrap();
    let pol = *c.policy();
    let r = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap();
    assert_eq!(r.cfg.vports[0].lid, 2);
    assert_eq!(r.cfg.vports[1].lid, 3);
    assert_eq!(r.cfg.vports[1].encap_slid, 3, "encap_slid follows the node");
    assert_eq!(r.cfg.vesws[0].unknown_ucast_dlids, [3]);
    assert_eq!(r.cfg.vesws[0].mac_table[0].dlid, 3);
    assert_eq!(r.nodes.len(), 4);
    common::apply_ok(&mut c, &r.cfg);
    let a = c.fabric().agents[&2].vports[&0].info.vport.encap_slid;
    assert_eq!(a, 2);
    assert_eq!(
        c.fabric().agents[&3].vports[&0].info.vesw.u_ucast_dlid[0],
        3
    );
}

#[test]
fn names_that_give_no_port_or_two_stop_everything() {
    let (mut c, view) = fabric();
    let pol = *c.policy();
    let unknown = NAMED.replacen(GUID_A, "0x00117501000009ff", 1);
    let cfg = parse(&unknown).unwrap();
    let e = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap_err();
    let NamesError::Config(e) = e else {
        panic!("not a config error: {e:?}")
    };
    assert_eq!(
        e.to_string(),
        "f.toml:13:8: error: no port of the fabric is GUID 0x00117501000009ff (the SA knows \
         no such node; `vnic-em discover` lists them)"
    );
    view.borrow_mut().ports[1].node_desc = "hostB hfi1_0".into();
    let cfg = parse(NAMED).unwrap();
    let e = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap_err();
    let NamesError::Config(e) = e else {
        panic!("not a config error: {e:?}")
    };
    // Every line that uses the shared name is named.
    assert_eq!(e.diags.len(), 3, "{e}");
    assert!(
        e.diags[0].msg.starts_with("2 ports are \"hostB hfi1_0\""),
        "{e}"
    );
    assert_eq!(sets(&c), 0, "nothing sent");

    // Two names for one port: the second vport 0 of it is refused.
    view.borrow_mut().ports[1].node_desc = "hostA hfi1_0".into();
    let twice = NAMED.replacen(
        "node = \"hostB hfi1_0\"\nvport",
        "node = \"hostA hfi1_0\"\nvport",
        1,
    );
    let cfg = parse(&twice).unwrap();
    let e = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap_err();
    assert!(
        matches!(&e, NamesError::Config(c) if c.diags[0].msg.contains("already configures")),
        "{e:?}"
    );

    // No SA: a fabric error, not the config's.
    c.fabric_mut().sa = None;
    let e = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap_err();
    assert!(
        matches!(&e, NamesError::Sa(m) if m.contains("cannot resolve 4 node name(s)")),
        "{e:?}"
    );
}

#[test]
fn watch_follows_a_lid_the_sm_changed() {
    let (mut c, view) = fabric();
    let cfg = parse(NAMED).unwrap();
    // The SM moves hostB from LID 3 to 0x33 between the first poll and the second (seven SA
    // requests a poll: NodeRecords, PortInfoRecords, the vesw's multicast group; then the
    // joins of its two node ports: NodeRecords, PortInfoRecords and a Set each); its vports
    // stay on the node.
    c.fabric_mut().move_at_sa_request = Some((8, 3, 0x33));
    let v = view.clone();
    let mut n = 0;
    c.fabric_mut().sa = Some(SaHook::new(move |mad| {
        n += 1;
        if n == 8 {
            v.borrow_mut().ports[2].lid = 0x33;
        }
        answer(mad, &v.borrow()).map(|a| a.mad)
    }));
    let opts = WatchOpts {
        interval: std::time::Duration::ZERO,
        max_checks: Some(2),
        config_path: "f.toml".into(),
        ..WatchOpts::default()
    };
    let stop = AtomicBool::new(false);
    let r = capture(|io| watch::watch(&mut c, &cfg, &opts, &stop, io));
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    let log: Vec<&str> = r.out.lines().collect();
    // Both node ports joined the group at the start, and joined again under the new LID.
    let joined = "vesw 10 (red): 2 node port(s) joined multicast group \
                  0xff12401b80010000:0x00000000ffffffff (MLID 0xc001)";
    assert_eq!(log[1], joined, "{}", r.out);
    assert_eq!(
        log[6..],
        [
            "\"hostB hfi1_0\" (line 6): LID 0x0003 -> 0x0033, found by poll: re-applying what \
             points to it",
            joined,
            "LID 0x0002 vport 0 [vesw 10 red]: unknown_ucast_dlids differ(s); MAC table differs, \
             found by poll: re-applied 2 Set(s)",
            "LID 0x0033 vport 0 [vesw 10 red]: unknown_ucast_dlids, encap_slid differ(s); MAC \
             table differs, found by poll: re-applied 2 Set(s)",
        ],
        "{}",
        r.out
    );
    let f = c.fabric();
    assert_eq!(f.agents[&0x33].vports[&0].info.vport.encap_slid, 0x33);
    assert_eq!(f.agents[&2].vports[&0].info.vesw.u_ucast_dlid[0], 0x33);
    let _ = view;
}

#[test]
fn discover_lists_vnic_ports_and_starts_a_config() {
    use vnic_em::commands::{discover, DiscoverFormat, DiscoverOpts};
    let (mut c, _) = fabric();
    let opts = |format| DiscoverOpts { all: false, format };
    let r = capture(|io| discover(&mut c, &opts(DiscoverFormat::Text), io));
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert_eq!(
        r.out,
        "PORT GUID           LID     PORT  VNIC  NODE DESCRIPTION\n\
         0x0011750100000101  0x0002     1  yes   hostA hfi1_0\n\
         0x0011750100000201  0x0003     1  yes   hostB hfi1_0\n\
         3 port(s), 2 served by a VNIC driver\n"
    );
    let r = capture(|io| discover(&mut c, &opts(DiscoverFormat::Json), io));
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v[1]["port_guid"], "0x0011750100000201");
    assert_eq!(v[1]["lid"], "0x0003");
    assert_eq!(v[1]["vnic"], true);
    assert_eq!(v[1]["desc"], "hostB hfi1_0");
    let r = capture(|io| discover(&mut c, &opts(DiscoverFormat::Config), io));
    let cfg = parse(&r.out).unwrap_or_else(|e| panic!("{e:?}\n{}", r.out));
    assert_eq!(cfg.vports.len(), 2);
    let pol = *c.policy();
    let res = resolve(c.fabric_mut(), &cfg, "new.toml", pol.timeout, pol.retries).unwrap();
    assert_eq!(res.cfg.vports[1].lid, 3);
    assert_eq!(res.cfg.vports[1].mac.to_string(), "02:00:00:02:01:00");
    // No SA: a fabric error.
    c.fabric_mut().sa = None;
    let r = capture(|io| discover(&mut c, &opts(DiscoverFormat::Text), io));
    assert_eq!(r.code, Exit::Fabric);
    assert!(
        r.err.contains("discover: fake port: no subnet manager"),
        "{}",
        r.err
    );
}

#[test]
fn a_node_the_sa_knows_but_whose_vema_agent_does_not_answer() {
    // hostC is on the fabric (the SA has it) but runs no VNIC driver: no VEMA agent at LID 4.
    let (mut c, view) = fabric();
    view.borrow_mut()
        .ports
        .push(PortView::vnic_host(3, 4, "hostC hfi1_0"));
    let with_c = format!(
        "{NAMED}\n[[vport]]\nnode = \"hostC hfi1_0\"\nvport = 0\nvesw = 10\nport_num = 3\n\
         mac = \"02:00:00:00:04:00\"\n"
    );
    let cfg = parse(&with_c).unwrap();
    let pol = *c.policy();
    let r = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap();
    assert_eq!(r.cfg.vports[2].lid, 4);
    let out = common::apply(&mut c, &r.cfg, ApplyOpts::default());
    // The others are configured; the silent one is named, and exit 3 says the fabric is
    // half-applied.
    assert_eq!(out.code, Exit::Partial, "{}{}", out.out, out.err);
    assert!(out.err.contains("LID 0x0004"), "{}", out.err);
    assert_eq!(c.fabric().agents[&3].vports[&0].info.vport.encap_slid, 3);
}

/// A vesw without `unknown_mcast_dlid` takes the MLID of its multicast group from the SA (the
/// default group, or `unknown_mcast_mgid`); a number given wins and asks nothing; a group the
/// fabric lacks is a clear error.
#[test]
fn the_multicast_dlid_comes_from_the_sas_group() {
    let (mut c, view) = fabric();
    let pol = common::policy(20);
    let cfg = parse(NAMED).unwrap();
    assert_eq!(cfg.vesws[0].unknown_mcast_dlid, 0);
    let r = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap();
    assert_eq!(r.cfg.vesws[0].unknown_mcast_dlid, 0xf0_0001);

    // The SM gave the group another MLID: the next resolution follows.
    view.borrow_mut().groups[0].mlid = 0xf000_0007;
    let r = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap();
    assert_eq!(r.cfg.vesws[0].unknown_mcast_dlid, 0xf0_0007);

    let other = NAMED.replacen(
        "pkey = 0x8010\n",
        "pkey = 0x8010\nunknown_mcast_mgid = \"0xff12401b80100000:0x00000000ffffffff\"\n",
        1,
    );
    let cfg = parse(&other).unwrap();
    let e = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap_err();
    assert!(
        matches!(&e, NamesError::Sa(m) if m.starts_with(
            "f.toml: vesw 10 (red): the fabric has no multicast group \
             0xff12401b80100000:0x00000000ffffffff (no McMemberRecord of it in the SA)"
        )),
        "{e:?}"
    );
    let bad = NAMED.replacen(
        "pkey = 0x8010\n",
        "pkey = 0x8010\nunknown_mcast_mgid = \"ff12::1\"\n",
        1,
    );
    let e = parse(&bad).unwrap_err();
    assert!(
        e[0].msg.contains("is not an MGID as opafm.xml writes them"),
        "{e:?}"
    );

    // A number wins; a config with neither names nor groups asks the SA nothing.
    let lids = "[[vesw]]\nid = 1\npkey = 0x8001\nunknown_mcast_dlid = 0xf00009\n\
                unknown_mcast_mgid = \"0xff12401b80100000:0x00000000ffffffff\"\n\
                [[vport]]\nlid = 2\nvport = 0\nvesw = 1\nport_num = 1\nmac = \"02:00:00:00:02:00\"\n";
    let cfg = parse(lids).unwrap();
    assert!(!vnic_em::names::needs_sa(&cfg));
    let no_number = lids.replace("unknown_mcast_dlid = 0xf00009\n", "");
    assert!(
        vnic_em::names::needs_sa(&parse(&no_number).unwrap()),
        "no names, but a group to ask for"
    );
    c.fabric_mut().sa = None;
    let asked = c.fabric().sa_requests;
    let r = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap();
    assert_eq!(r.cfg.vesws[0].unknown_mcast_dlid, 0xf0_0009);
    assert_eq!(c.fabric().sa_requests, asked, "the SA not asked");
}

/// A node port whose LID is above 16 bits: its 24-bit uses take it whole, its vports cannot
/// be reached by the EM (umad without a GRH), which says so.
#[test]
fn a_lid_above_16_bits_is_not_cut() {
    let (mut c, view) = fabric();
    let pol = common::policy(20);
    view.borrow_mut().ports[2].lid = 0x0001_0003;
    let cfg = parse(NAMED).unwrap();
    let e = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap_err();
    assert!(
        matches!(&e, NamesError::Config(c) if c.diags[0].msg.contains(
            "is LID 0x10003, above 16 bits: the EM cannot address its VEMA agent"
        )),
        "{e:?}"
    );
    // Without the vport on it, the MAC table entry and the unknown unicast DLID are whole.
    let no_vport = NAMED.rsplit_once("[[vport]]").unwrap().0;
    let cfg = parse(no_vport).unwrap();
    let r = resolve(c.fabric_mut(), &cfg, "f.toml", pol.timeout, pol.retries).unwrap();
    assert_eq!(r.cfg.vesws[0].mac_table[0].dlid, 0x0001_0003);
    assert_eq!(r.cfg.vesws[0].unknown_ucast_dlids, [0x0001_0003]);
}
