// SPDX-License-Identifier: GPL-2.0

//! Which vports `watch` must configure again, and why, from a plan
//! ([`crate::plan::make_plan`]) of what differs between the fabric and the
//! config.
//!
//! A vport drifts from the config when its node reboots or its driver is
//! reloaded (it comes back with power-on defaults and an empty MAC table,
//! and the node port's ClassPortInfo forgets the EM's trap LID), or when
//! someone changes it behind the EM's back. Every Set of the plan belongs
//! to one repair: one per vport, plus one per node port whose trap LID must
//! be pointed at the EM again. Each repair is re-applied with the Sets of
//! `apply` and logged as one line.

use std::fmt;

use crate::plan::{Action, Step};

/// Why a vport or node port needs its configuration again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The node port sends traps elsewhere (its agent restarted with a
    /// zero ClassPortInfo, or another EM took it over).
    TrapLid {
        /// The trap LID found.
        from: u32,
        /// The EM's trap LID.
        to: u32,
    },
    /// The vport does not exist: the agent answers power-on defaults (the
    /// node rebooted, or the driver was reloaded).
    Missing,
    /// The vport exists, with these VESW port info fields not as
    /// configured.
    Fields(Vec<&'static str>),
    /// The vport's MAC table is not the configured one.
    MacTable,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::TrapLid { from, to } => {
                write!(f, "trap LID is {from:#x}, not the EM's {to:#x}")
            }
            Reason::Missing => write!(f, "vport missing (power-on defaults)"),
            Reason::Fields(v) => write!(f, "{} differ(s)", v.join(", ")),
            Reason::MacTable => write!(f, "MAC table differs"),
        }
    }
}

/// The Sets that bring one vport (or one node port's trap LID) back to
/// the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// Node port.
    pub lid: u16,
    /// Virtual port; `None` for the node port's ClassPortInfo.
    pub vport: Option<u8>,
    /// Why, most telling first.
    pub reasons: Vec<Reason>,
    /// The Sets, in plan order.
    pub steps: Vec<Step>,
}

impl Repair {
    /// Who, for a log line: `LID 0x0002 vport 0 [vesw 1 red]`.
    pub fn name(&self) -> String {
        self.steps
            .first()
            .map(Step::name)
            .unwrap_or_else(|| format!("LID {:#06x}", self.lid))
    }

    /// Why, for a log line: the reasons joined.
    pub fn why(&self) -> String {
        let v: Vec<String> = self.reasons.iter().map(|r| r.to_string()).collect();
        v.join("; ")
    }
}

fn reason_of(action: &Action) -> Reason {
    match action {
        Action::ClassPortInfo { cpi, from, .. } => Reason::TrapLid {
            from: *from,
            to: cpi.trap_lid,
        },
        Action::VportInfo { create: true, .. } => Reason::Missing,
        Action::VportInfo { changes, .. } => {
            Reason::Fields(changes.iter().map(|c| c.field).collect())
        }
        Action::MacEntries { .. } => Reason::MacTable,
    }
}

/// Groups the Sets of a plan by vport (and node port, for ClassPortInfo),
/// in plan order, so that a node port's trap LID is set before its vports
/// and a vport's info before its MAC table. A missing vport's MAC table
/// Sets are part of creating it and add no reason of their own.
pub fn repairs(steps: &[Step]) -> Vec<Repair> {
    let mut out: Vec<Repair> = Vec::new();
    for s in steps {
        let r = reason_of(&s.action);
        let pos = out
            .iter()
            .position(|x| x.lid == s.lid && x.vport == s.vport);
        let rep = match pos {
            Some(i) => &mut out[i],
            None => {
                out.push(Repair {
                    lid: s.lid,
                    vport: s.vport,
                    reasons: Vec::new(),
                    steps: Vec::new(),
                });
                let last = out.len() - 1;
                &mut out[last]
            }
        };
        let implied = r == Reason::MacTable && rep.reasons.contains(&Reason::Missing);
        if !implied && !rep.reasons.contains(&r) {
            rep.reasons.push(r);
        }
        rep.steps.push(s.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client::{Client, Policy};
    use crate::config::{parse, Config};
    use crate::fake::FakeFabric;
    use crate::plan::{make_plan, send_steps};

    const CFG: &str = r#"
[[vesw]]
id = 1
pkey = 0x8001
eth_mtu = 9000

[[vesw.mac_table]]
mac = "02:11:00:00:00:01"
dlid = 0x20

[[vport]]
lid = 2
vport = 0
vesw = 1
port_num = 1
mac = "02:00:00:00:02:00"

[[vport]]
lid = 3
vport = 0
vesw = 1
port_num = 2
mac = "02:00:00:00:03:00"

[[vport]]
lid = 3
vport = 1
vesw = 1
port_num = 3
mac = "02:00:00:00:03:01"
"#;

    /// A fabric configured as `CFG` says, as `apply` leaves it.
    fn configured() -> (Client<FakeFabric>, Config) {
        let mut f = FakeFabric::new(1);
        f.add_node(2, 1).add_node(3, 1);
        let policy = Policy {
            timeout: Duration::from_millis(20),
            grace: Duration::ZERO,
            ..Policy::default()
        };
        let mut c = Client::new(f, policy);
        let cfg = parse(CFG).unwrap();
        let plan = make_plan(&mut c, &cfg, false);
        assert!(send_steps(&mut c, &plan.steps).failed.is_empty());
        (c, cfg)
    }

    fn found(c: &mut Client<FakeFabric>, cfg: &Config) -> Vec<(u16, Option<u8>, Vec<Reason>)> {
        let plan = make_plan(c, cfg, false);
        repairs(&plan.steps)
            .into_iter()
            .map(|r| (r.lid, r.vport, r.reasons))
            .collect()
    }

    #[test]
    fn nothing_to_repair_when_configured() {
        let (mut c, cfg) = configured();
        assert!(found(&mut c, &cfg).is_empty());
    }

    #[test]
    fn reloaded_driver_needs_its_trap_lid_and_every_vport() {
        let (mut c, cfg) = configured();
        c.fabric_mut().reload_driver(3);
        let trap = Reason::TrapLid { from: 0, to: 1 };
        assert_eq!(
            found(&mut c, &cfg),
            vec![
                (3, None, vec![trap]),
                (3, Some(0), vec![Reason::Missing]),
                (3, Some(1), vec![Reason::Missing]),
            ]
        );
    }

    #[test]
    fn a_missing_vport_is_one_repair_with_its_table() {
        let (mut c, cfg) = configured();
        c.fabric_mut().agents.get_mut(&2).unwrap().vports.clear();
        let plan = make_plan(&mut c, &cfg, false);
        let r = repairs(&plan.steps);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].lid, r[0].vport), (2, Some(0)));
        assert_eq!(r[0].reasons, vec![Reason::Missing]);
        // VESW port info first, then the MAC table: all of the plan's Sets.
        assert!(matches!(
            r[0].steps[0].action,
            Action::VportInfo { create: true, .. }
        ));
        assert!(matches!(r[0].steps[1].action, Action::MacEntries { .. }));
        assert_eq!(r[0].steps.len(), plan.steps.len());
        assert_eq!(r[0].why(), "vport missing (power-on defaults)");
        assert_eq!(r[0].name(), "LID 0x0002 vport 0 [vesw 1]");
    }

    #[test]
    fn drift_names_the_fields_and_the_table() {
        let (mut c, cfg) = configured();
        let v = c.fabric_mut().vport_mut(3, 1).unwrap();
        v.info.vesw.eth_mtu = 1500;
        v.info.vport.port_num = 9;
        v.mac_table.clear();
        v.info.vport.mac_tbl_digest = 0;
        assert_eq!(
            found(&mut c, &cfg),
            vec![(
                3,
                Some(1),
                vec![
                    Reason::Fields(vec!["eth_mtu", "port_num"]),
                    Reason::MacTable
                ]
            )]
        );
    }

    #[test]
    fn a_node_port_that_does_not_answer_is_not_repaired() {
        let (mut c, cfg) = configured();
        let gone = c.fabric_mut().agents.remove(&3).unwrap();
        c.fabric_mut().agents.get_mut(&2).unwrap().vports.clear();
        let plan = make_plan(&mut c, &cfg, false);
        assert_eq!(plan.errors.len(), 1, "{:?}", plan.errors);
        let r = repairs(&plan.steps);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].lid, 2);
        c.fabric_mut().agents.insert(3, gone);
    }

    #[test]
    fn reasons_read_as_log_text() {
        assert_eq!(
            Reason::TrapLid { from: 0, to: 1 }.to_string(),
            "trap LID is 0x0, not the EM's 0x1"
        );
        assert_eq!(
            Reason::Fields(vec!["eth_mtu", "mac"]).to_string(),
            "eth_mtu, mac differ(s)"
        );
        assert_eq!(Reason::MacTable.to_string(), "MAC table differs");
    }
}
