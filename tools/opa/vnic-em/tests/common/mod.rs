// SPDX-License-Identifier: GPL-2.0

//! What the end-to-end tests share: the fake fabric they talk to, the config they apply
//! to it (and opasim's SA over it) and the capture of a command's exit code and output.

// Each test file builds this module on its own, and none uses all of it.
#![allow(dead_code)]

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::time::Duration;

use opa_wire::mad::METHOD_SET;
use opasim_sa::answer::answer;
use opasim_sa::fabric::{FabricView, McGroup, PortView};
use vnic_em::client::{Client, Policy};
use vnic_em::commands::{self, ApplyOpts, Io};
use vnic_em::config::Config;
use vnic_em::error::{self, Exit};
use vnic_em::fabric::Fabric;
use vnic_em::fake::{FakeFabric, SaHook};

/// The fake fabric of the tests: the EM's port at `em_lid`, and one VEMA agent on each of
/// LIDs 2 and 3.
pub fn fabric(em_lid: u16) -> FakeFabric {
    let mut f = FakeFabric::new(em_lid);
    f.add_node(2, 1).add_node(3, 1);
    f
}

/// The config the tests apply to [`fabric`]: two vesws, red (10), with every setting a vesw
/// has and a MAC table entry at slot 100, on vport 0 of both node ports; blue (20), with
/// the defaults but a multicast DLID given (0, so that no SA is asked for a group), on
/// vport 1 of LID 3, disabled. A test whose config must differ, to show
/// something this one cannot, keeps its own next to it.
pub const FABRIC: &str = r#"
[em]
fabric_id = 0x2

[[vesw]]
id = 10
name = "red"
pkey = 0x8010
eth_mtu = 9000
unknown_ucast_dlids = [0x2, 0x3]
unknown_mcast_dlid = 0xf00010
routing_control = { ipv4_tcp = 1, ipv6_tcp = 1 }

[[vesw.mac_table]]
mac = "02:11:00:00:00:01"
dlid = 0x20
index = 100

[[vesw]]
id = 20
name = "blue"
pkey = 0x8020
unknown_mcast_dlid = 0

[[vport]]
lid = 2
vport = 0
vesw = 10
port_num = 1
mac = "02:00:00:00:02:00"

[[vport]]
lid = 3
vport = 0
vesw = 10
port_num = 2
mac = "02:00:00:00:03:00"

[[vport]]
lid = 3
vport = 1
vesw = 20
port_num = 1
mac = "02:00:00:00:03:01"
enabled = false
"#;

/// The ports of [`fabric`] as opasim's SA knows them: the EM's (`em hfi1_0`, LID 1), and
/// the two hosts a VNIC driver serves at the LIDs of the VEMA agents, `hostA hfi1_0` (2)
/// and `hostB hfi1_0` (3).
pub fn sa_ports() -> Vec<PortView> {
    vec![
        PortView::sample(0, 1, "em hfi1_0"),
        PortView::vnic_host(1, 2, "hostA hfi1_0"),
        PortView::vnic_host(2, 3, "hostB hfi1_0"),
    ]
}

/// Makes opasim's SA answer `f`'s SA queries from `ports` (the SM at LID 1); returns the
/// view it answers from, for a test to change the fabric under the SA.
pub fn with_sa(f: &mut FakeFabric, ports: Vec<PortView>) -> Rc<RefCell<FabricView>> {
    let view = Rc::new(RefCell::new(FabricView {
        ports,
        sm_lid: 1,
        groups: vec![McGroup::DEFAULT_BROADCAST],
    }));
    let v = view.clone();
    f.sa = Some(SaHook::new(move |mad| {
        answer(mad, &v.borrow()).map(|a| a.mad)
    }));
    view
}

/// The client policy of the tests: the fake fabric answers at once or never, so a short
/// time-out and no grace period for late answers.
pub fn policy(timeout_ms: u64) -> Policy {
    Policy {
        timeout: Duration::from_millis(timeout_ms),
        grace: Duration::ZERO,
        ..Policy::default()
    }
}

/// A client of [`fabric`] with the EM at LID 1, under [`policy`]`(timeout_ms)`.
pub fn client(timeout_ms: u64) -> Client<FakeFabric> {
    Client::new(fabric(1), policy(timeout_ms))
}

/// How many Sets the fabric has received.
pub fn sets(c: &Client<FakeFabric>) -> usize {
    c.fabric().count(METHOD_SET)
}

/// A command's exit code, standard output and standard error.
pub struct Out {
    pub code: Exit,
    pub out: String,
    pub err: String,
}

/// Runs a command writing its output to `out`; returns its exit code and what it wrote to
/// standard error, its error printed as `vnic-em` prints it.
pub fn run_to(out: &mut dyn Write, f: impl FnOnce(&mut Io<'_>) -> error::Result) -> (Exit, String) {
    let mut err = Vec::new();
    let code = {
        let mut io = Io { out, err: &mut err };
        let r = f(&mut io);
        // As main prints an error that ends a command.
        error::finish(r, io.err)
    };
    (code, String::from_utf8(err).unwrap())
}

/// Runs a command with its output captured, its error printed as `vnic-em` prints it.
pub fn capture(f: impl FnOnce(&mut Io<'_>) -> error::Result) -> Out {
    let mut out = Vec::new();
    let (code, err) = run_to(&mut out, f);
    Out {
        code,
        out: String::from_utf8(out).unwrap(),
        err,
    }
}

/// `apply` of `cfg` with `opts`, its output captured.
pub fn apply<F: Fabric>(c: &mut Client<F>, cfg: &Config, opts: ApplyOpts) -> Out {
    capture(|io| commands::apply(c, cfg, opts, io))
}

/// `apply --check` of `cfg`, its output captured.
pub fn check<F: Fabric>(c: &mut Client<F>, cfg: &Config) -> Out {
    let opts = ApplyOpts {
        check: true,
        ..ApplyOpts::default()
    };
    apply(c, cfg, opts)
}

/// `apply` of `cfg`, which must configure everything.
pub fn apply_ok<F: Fabric>(c: &mut Client<F>, cfg: &Config) -> Out {
    let r = apply(c, cfg, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    r
}
