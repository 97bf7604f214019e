// SPDX-License-Identifier: GPL-2.0

//! `watch` against the in-memory VEMA fabric: what it re-applies after a
//! driver reload, a change behind its back or a node port that stops
//! answering, what it logs, and its loop (the check at start, polls,
//! traps, the stop flag).

mod common;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::{capture, sets, Out, FABRIC};

use opa_wire::mad::METHOD_SET;
use vnic_em::client::Client;
use vnic_em::commands::watch::{self, Cause, Checked, WatchOpts, Watcher};
use vnic_em::config::{parse, Config};
use vnic_em::error::Exit;
use vnic_em::fake::FakeFabric;

fn client() -> Client<FakeFabric> {
    common::client(20)
}

fn cfg() -> Config {
    parse(FABRIC).unwrap()
}

fn configured() -> Client<FakeFabric> {
    let mut c = client();
    common::apply_ok(&mut c, &cfg());
    c
}

/// The fabric matches the config: `apply --check` finds nothing.
fn assert_matches(c: &mut Client<FakeFabric>) {
    let r = common::check(c, &cfg());
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
}

fn check(w: &mut Watcher<'_>, c: &mut Client<FakeFabric>, cause: Cause) -> (Checked, Out) {
    let stop = AtomicBool::new(false);
    let mut done = None;
    let out = capture(|io| {
        done = Some(w.check(c, &[2, 3], cause, &stop, io).unwrap());
        Ok(Exit::Ok)
    });
    (done.unwrap(), out)
}

#[test]
fn a_configured_fabric_is_left_alone() {
    let mut c = configured();
    let cfg = cfg();
    let mut w = Watcher::new(&cfg, false);
    let before = sets(&c);
    let (done, out) = check(&mut w, &mut c, Cause::Poll);
    assert_eq!(done, Checked::default());
    assert_eq!(out.out, "");
    assert_eq!(out.err, "");
    assert_eq!(sets(&c), before);
}

#[test]
fn a_reloaded_driver_is_configured_again() {
    let mut c = configured();
    c.fabric_mut().reload_driver(3);
    let before = c.fabric().log.len();
    let cfg = cfg();
    let mut w = Watcher::new(&cfg, false);
    let (done, out) = check(&mut w, &mut c, Cause::Poll);
    assert_eq!(done.repaired, vec![(3, None), (3, Some(0)), (3, Some(1))]);
    assert!(done.failed.is_empty() && done.unreadable.is_empty());
    let lines: Vec<&str> = out.out.lines().collect();
    assert_eq!(
        lines,
        [
            "LID 0x0003: trap LID is 0x0, not the EM's 0x1, found by poll: re-applied 1 Set(s)",
            "LID 0x0003 vport 0 [vesw 10 red]: vport missing (power-on defaults), found by poll: re-applied 2 Set(s)",
            "LID 0x0003 vport 1 [vesw 20 blue]: vport missing (power-on defaults), found by poll: re-applied 2 Set(s)",
        ],
        "{}",
        out.out
    );
    assert_eq!(out.err, "");
    assert_matches(&mut c);
    // LID 2 was read, not written.
    let to_2 = c.fabric().log[before..]
        .iter()
        .filter(|r| r.method == METHOD_SET && r.lid == 2)
        .count();
    assert_eq!(to_2, 0);
}

#[test]
fn a_change_behind_its_back_is_undone() {
    let mut c = configured();
    let v = c.fabric_mut().vport_mut(2, 0).unwrap();
    v.info.vesw.pkey = 0x8099;
    let cfg = cfg();
    let mut w = Watcher::new(&cfg, false);
    let (done, out) = check(&mut w, &mut c, Cause::Trap);
    assert_eq!(done.repaired, vec![(2, Some(0))]);
    assert_eq!(
        out.out,
        "LID 0x0002 vport 0 [vesw 10 red]: pkey differ(s), found after a trap: re-applied 1 Set(s)\n"
    );
    assert_matches(&mut c);
}

#[test]
fn a_failed_re_apply_is_logged_and_tried_again() {
    let mut c = configured();
    c.fabric_mut().reload_driver(2);
    // The agent refuses the MAC table Set (the first MAC table request:
    // a vport just created has its table read from nowhere).
    c.fabric_mut().faults.status_for_attr =
        Some((opa_wire::mad::ATTR_VESWPORT_MAC_ENTRIES, 0x001c));
    let cfg = cfg();
    let mut w = Watcher::new(&cfg, false);
    let (done, out) = check(&mut w, &mut c, Cause::Poll);
    assert_eq!(done.repaired, vec![(2, None)]);
    assert_eq!(done.failed, vec![(2, Some(0))]);
    assert!(
        out.out.contains(
            "LID 0x0002 vport 0 [vesw 10 red]: vport missing (power-on defaults), found by poll: re-apply failed after 1 of 2 Set(s): Set"
        ),
        "{}",
        out.out
    );
    let (done, _) = check(&mut w, &mut c, Cause::Poll);
    assert_eq!(done.repaired, vec![(2, Some(0))]);
    assert_matches(&mut c);
}

#[test]
fn a_silent_node_port_is_logged_once_then_repaired() {
    let mut c = configured();
    let cfg = cfg();
    let mut w = Watcher::new(&cfg, false);
    let mut gone = c.fabric_mut().agents.remove(&3).unwrap();
    let (done, out) = check(&mut w, &mut c, Cause::Poll);
    assert_eq!(done.unreadable, vec![3]);
    assert_eq!(out.out, "");
    assert!(
        out.err
            .starts_with("vnic-em: watch: LID 0x0003: cannot read (found by poll): Get class port info of LID 0x0003: no response"),
        "{}",
        out.err
    );
    let (_, out) = check(&mut w, &mut c, Cause::Poll);
    assert_eq!(out.err, "", "logged again");
    // It comes back rebooted.
    gone.vports.clear();
    gone.class_port_info = opa_wire::vema_info::ClassPortInfo::ZERO;
    c.fabric_mut().agents.insert(3, gone);
    let (done, out) = check(&mut w, &mut c, Cause::Poll);
    assert!(
        out.out.starts_with("LID 0x0003: answers again\n"),
        "{}",
        out.out
    );
    assert_eq!(done.repaired.len(), 3, "{}", out.out);
    assert_matches(&mut c);
}

#[test]
fn the_loop_configures_at_start_then_polls() {
    let mut c = client();
    let cfg = cfg();
    let opts = WatchOpts {
        interval: Duration::from_millis(10),
        max_checks: Some(3),
        ..WatchOpts::default()
    };
    let stop = AtomicBool::new(false);
    let r = capture(|io| watch::watch(&mut c, &cfg, &opts, &stop, io));
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    assert!(
        r.out.starts_with(
            "watching 3 vport(s) on 2 node port(s) from fake fabric LID 0x0001, polling every 0.01 s\n"
        ),
        "{}",
        r.out
    );
    assert_eq!(
        r.out.matches("found at start: re-applied").count(),
        5,
        "{}",
        r.out
    );
    assert!(!r.out.contains("found by poll"), "{}", r.out);
    assert_matches(&mut c);
}

#[test]
fn the_loop_checks_the_node_port_of_a_trap() {
    let mut c = configured();
    // A trap from LID 2, and a change that only a check of LID 2 finds.
    c.fabric_mut().ip_link_set_up(2, 0, true);
    let cfg = cfg();
    let opts = WatchOpts {
        interval: Duration::from_secs(3600),
        settle: Duration::from_millis(1),
        max_checks: Some(2),
        ..WatchOpts::default()
    };
    let stop = AtomicBool::new(false);
    let before = c.fabric().log.len();
    let r = capture(|io| watch::watch(&mut c, &cfg, &opts, &stop, io));
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.out);
    assert!(lines[1].starts_with("trap: "), "{}", r.out);
    // The check at start read LIDs 2 and 3, the trap's check LID 2 again.
    let reads: Vec<u16> = c.fabric().log[before..]
        .iter()
        .filter(|q| q.attr_id == opa_wire::mad::ATTR_CLASS_PORT_INFO)
        .map(|q| q.lid)
        .collect();
    assert_eq!(reads, [2, 3, 2]);
}

#[test]
fn the_stop_flag_ends_the_loop() {
    let mut c = client();
    let cfg = cfg();
    let stop = AtomicBool::new(true);
    let r = capture(|io| watch::watch(&mut c, &cfg, &WatchOpts::default(), &stop, io));
    assert_eq!(r.code, Exit::Ok);
    assert!(r.out.ends_with("stopping\n"), "{}", r.out);
    assert!(c.fabric().log.is_empty(), "sent nothing");
}
