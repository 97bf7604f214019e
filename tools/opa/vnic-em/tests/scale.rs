// SPDX-License-Identifier: GPL-2.0

//! Many MADs in flight: `apply` on 32 node ports of 8 vports each (256
//! vports), some of them dead. Time is counted, not measured: the fabric
//! below holds every timeout report back until nothing else is left to
//! deliver, and then releases all of them at once, one "tick" of the
//! clock. A run with dead node ports must take the ticks of one request's
//! attempts, however many node ports are dead.

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::time::Duration;

use common::policy;
use opa_wire::mad::{ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES, METHOD_SET};
use vnic_em::client::{Client, Window};
use vnic_em::commands::ApplyOpts;
use vnic_em::config::{parse, Config};
use vnic_em::error::Exit;
use vnic_em::fabric::{Dest, Event, Fabric, FabricError};
use vnic_em::fake::FakeFabric;
use vnic_em::plan::{make_plan, send_steps};

const EM_LID: u16 = 1;
const NODES: u16 = 32;
const VPORTS: u8 = 8;
const VESWS: u8 = 4;

/// 4 vesws, 8 vports on each of the node ports 2 to 33: 2 of each vesw.
fn config() -> Config {
    let mut t = String::from("[em]\nfabric_id = 0x1\n");
    for w in 1..=VESWS {
        write!(
            t,
            "[[vesw]]\nid = {w}\nname = \"t{w}\"\npkey = 0x800{w}\n\
             unknown_mcast_dlid = 0xf0000{w}\nmac_table_from_vports = true\n"
        )
        .unwrap();
    }
    for n in 0..NODES {
        for v in 0..VPORTS {
            write!(
                t,
                "[[vport]]\nlid = {}\nvport = {v}\nvesw = {}\nport_num = {}\n\
                 mac = \"02:00:00:{:02x}:00:{v:02x}\"\nenabled = true\n",
                n + 2,
                v % VESWS + 1,
                n * 2 + u16::from(v / VESWS) + 1,
                n + 2
            )
            .unwrap();
        }
    }
    parse(&t).unwrap()
}

/// A fake fabric with a clock: timeout reports wait until nothing else
/// is left to deliver. Counts what the tests look at.
struct Clocked {
    inner: FakeFabric,
    ready: VecDeque<Event>,
    held: Vec<Event>,
    /// Times the held timeout reports were released.
    ticks: u32,
    sends: u32,
    /// Requests sent when the first timeout was delivered.
    sends_at_first_tick: Option<u32>,
    /// Requests on the wire, by TID (low half), to their LID.
    wire: BTreeMap<u32, u16>,
    /// Most requests on the wire to one LID at once.
    max_per_lid: usize,
}

impl Clocked {
    fn new(inner: FakeFabric) -> Self {
        Clocked {
            inner,
            ready: VecDeque::new(),
            held: Vec::new(),
            ticks: 0,
            sends: 0,
            sends_at_first_tick: None,
            wire: BTreeMap::new(),
            max_per_lid: 0,
        }
    }
}

fn tid_of(ev: &Event) -> Option<u32> {
    match ev {
        Event::SendTimeout { tid } => Some(*tid as u32),
        Event::Mad { data, .. } => {
            let b: [u8; 4] = data.get(12..16)?.try_into().ok()?;
            Some(u32::from_be_bytes(b))
        }
    }
}

impl Fabric for Clocked {
    fn send(&mut self, dest: &Dest, mad: &[u8], timeout: Duration) -> Result<(), FabricError> {
        self.inner.send(dest, mad, timeout)?;
        self.sends += 1;
        let tid = u32::from_be_bytes(mad[12..16].try_into().unwrap());
        self.wire.insert(tid, dest.lid);
        let n = self.wire.values().filter(|&&l| l == dest.lid).count();
        self.max_per_lid = self.max_per_lid.max(n);
        while let Some(ev) = self.inner.recv(Duration::ZERO)? {
            match ev {
                Event::SendTimeout { .. } => self.held.push(ev),
                ev => self.ready.push_back(ev),
            }
        }
        Ok(())
    }

    fn recv(&mut self, _timeout: Duration) -> Result<Option<Event>, FabricError> {
        if self.ready.is_empty() && !self.held.is_empty() {
            self.ticks += 1;
            self.sends_at_first_tick.get_or_insert(self.sends);
            self.ready.extend(self.held.drain(..));
        }
        let ev = self.ready.pop_front();
        if let Some(t) = ev.as_ref().and_then(tid_of) {
            self.wire.remove(&t);
        }
        Ok(ev)
    }

    fn local_lid(&self) -> u16 {
        EM_LID
    }

    fn describe(&self) -> String {
        "clocked fake fabric".into()
    }
}

/// The timeout of the tests: long, so that no attempt runs out on the
/// wall clock while its answer waits in the queue behind thousands (a
/// retry would change the counts); the clock that counts is the ticks.
const TIMEOUT_MS: u64 = 60_000;

/// 32 node ports, those of `dead` not answering.
fn client(dead: &[u16], window: Window) -> Client<Clocked> {
    let mut f = FakeFabric::new(EM_LID);
    for n in 0..NODES {
        let lid = n + 2;
        if !dead.contains(&lid) {
            f.add_node(lid, 1);
        }
    }
    let mut c = Client::new(Clocked::new(f), policy(TIMEOUT_MS));
    c.set_window(window);
    c
}

/// The Sets of each (LID, vport), in order: (attribute, data).
type SetsByVport = BTreeMap<(u16, u32), Vec<(u16, Vec<u8>)>>;

/// The Sets each vport got, in order.
fn sets_by_vport(c: &Client<Clocked>) -> SetsByVport {
    let mut m = SetsByVport::new();
    for r in c
        .fabric()
        .inner
        .log
        .iter()
        .filter(|r| r.method == METHOD_SET)
    {
        m.entry((r.lid, r.attr_mod))
            .or_default()
            .push((r.attr_id, r.data.clone()));
    }
    m
}

/// Every vport of the live node ports is as configured: created, with its
/// MAC and the 64 entries of its vesw's MAC table.
fn assert_live_configured(c: &Client<Clocked>, dead: &[u16]) {
    for n in 0..NODES {
        let lid = n + 2;
        for v in 0..VPORTS {
            let p = c.fabric().inner.vport(lid, v);
            if dead.contains(&lid) {
                assert!(p.is_none());
                continue;
            }
            let p = p.unwrap_or_else(|| panic!("LID {lid} vport {v} not created"));
            assert_eq!(p.info.vport.base_mac_addr, [2, 0, 0, lid as u8, 0, v]);
            assert_eq!(p.mac_table.len(), usize::from(NODES) * 2);
        }
    }
}

#[test]
fn apply_256_vports_keeps_the_window_full_and_each_vport_in_order() {
    let cfg = config();
    let mut seq = client(&[], Window::SEQUENTIAL);
    let r = common::apply(&mut seq, &cfg, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(r.out.contains("applied 544 of 544 Set(s)"), "{}", r.out);
    assert_eq!(seq.stats().max_in_flight, 1);

    let mut win = client(&[], Window::default());
    let r = common::apply(&mut win, &cfg, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    assert!(r.out.contains("applied 544 of 544 Set(s)"), "{}", r.out);
    assert_live_configured(&win, &[]);
    // 32 ClassPortInfo Gets, 256 VESW port info Gets, 544 Sets.
    assert_eq!(win.stats().sent, 32 + 256 + 544);
    assert_eq!(win.stats().max_in_flight, 64);
    assert!(
        win.fabric().max_per_lid <= 4,
        "{}",
        win.fabric().max_per_lid
    );
    // The same Sets to each vport, in the same order, but not the same
    // order overall: vports go side by side.
    assert_eq!(sets_by_vport(&seq), sets_by_vport(&win));
    let order = |c: &Client<Clocked>| -> Vec<(u16, u32, u16)> {
        let log = &c.fabric().inner.log;
        log.iter()
            .filter(|r| r.method == METHOD_SET)
            .map(|r| (r.lid, r.attr_mod, r.attr_id))
            .collect()
    };
    assert_ne!(order(&seq), order(&win));
    // A vport is created before its MAC table is set.
    for sets in sets_by_vport(&win).values() {
        if let Some(i) = sets.iter().position(|s| s.0 == ATTR_VESWPORT_MAC_ENTRIES) {
            assert!(sets[..i].iter().any(|s| s.0 == ATTR_VESWPORT_INFO));
        }
    }
}

#[test]
fn dead_node_ports_cost_one_request_s_attempts_not_their_sum() {
    let cfg = config();
    // 10% of the node ports: LIDs 5, 17 and 30.
    let dead = [5, 17, 30];
    let attempts = policy(TIMEOUT_MS).attempts();

    let mut seq = client(&dead, Window::SEQUENTIAL);
    let r = common::apply(&mut seq, &cfg, ApplyOpts::default());
    assert_eq!(r.code, Exit::Partial, "{}", r.err);
    // One request at a time: each dead node port's attempts in turn.
    assert_eq!(seq.fabric().ticks, 3 * attempts);

    let mut win = client(&dead, Window::default());
    let r = common::apply(&mut win, &cfg, ApplyOpts::default());
    assert_eq!(r.code, Exit::Partial, "{}", r.err);
    assert_eq!(win.fabric().ticks, attempts, "{}", r.err);
    // Every node port was asked before the first timeout was handled.
    assert!(win.fabric().sends_at_first_tick.unwrap() >= u32::from(NODES));
    assert_eq!(win.stats().timeouts, 3 * attempts);
    // One error a dead node port, with its LID; the others all done.
    let errors: Vec<&str> = r.err.lines().collect();
    assert_eq!(errors.len(), 3, "{}", r.err);
    for (e, lid) in errors.iter().zip(dead) {
        assert!(
            e.contains(&format!(
                "LID {lid:#06x}: no response after {attempts} attempt(s)"
            )),
            "{e}"
        );
    }
    let live_sets = 544 - 3 * 17;
    assert!(
        r.out
            .contains(&format!("applied {live_sets} of {live_sets} Set(s)")),
        "{}",
        r.out
    );
    assert_live_configured(&win, &dead);
}

#[test]
fn a_node_port_that_dies_before_its_sets_is_given_up_once() {
    let cfg = config();
    let mut c = client(&[], Window::default());
    let plan = make_plan(&mut c, &cfg, false);
    assert!(plan.errors.is_empty());
    // It dies between the reads and the Sets.
    c.fabric_mut().inner.agents.remove(&9);
    let ticks = c.fabric().ticks;
    let sent = send_steps(&mut c, &plan.steps);
    assert_eq!(c.fabric().ticks - ticks, c.policy().attempts());
    // Its trap LID Set timed out; its 16 vport Sets were never sent.
    assert_eq!(sent.failed.len(), 1, "{:?}", sent.failed);
    assert!(sent.failed[0].to_string().contains("LID 0x0009"));
    assert_eq!(
        sent.statuses.iter().filter(|s| **s == "skipped").count(),
        16
    );
    assert_eq!(sent.applied, 544 - 17);
}

#[test]
fn check_reads_every_mac_table_side_by_side() {
    let cfg = config();
    let mut c = client(&[], Window::default());
    let r = common::apply(&mut c, &cfg, ApplyOpts::default());
    assert_eq!(r.code, Exit::Ok, "{}", r.err);
    let sent = c.stats().sent;
    let opts = ApplyOpts {
        check: true,
        ..ApplyOpts::default()
    };
    let r = common::apply(&mut c, &cfg, opts);
    assert_eq!(r.code, Exit::Ok, "{}{}", r.out, r.err);
    // 17 Gets a table, those of one vport one after the other.
    assert_eq!(c.stats().sent - sent, 32 + 256 + 256 * 17);
    assert_eq!(c.stats().max_in_flight, 64);
    assert!(c.fabric().max_per_lid <= 4);
}
