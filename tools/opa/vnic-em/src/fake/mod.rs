// SPDX-License-Identifier: GPL-2.0

//! An in-memory fabric whose node ports answer like the kernel's VEMA
//! agent (`opa_vnic_vema.c`), so that every command is tested end to end
//! on the host.
//!
//! Each node port (by LID) has the agent state of one OPA port: the
//! ClassPortInfo last set and the virtual ports created by Set VESW port
//! info, each with its MAC table, interface MAC lists, link state and
//! counters. Requests are decoded and answered with the `opa_wire`
//! formats, status codes included. Faults can be injected: dropped
//! responses (reported as the kernel reports a send timeout, or not at
//! all), forced statuses, stale responses and traps arriving in the middle
//! of a transaction. The "kernel" puts its agent id in the high half of
//! each TID, as umad does.
//!
//! Requests may come at any size from the vendor MAD header to a whole
//! OPA MAD: the agent reads them zero-filled to 2048 bytes, as the
//! kernel's agent reads its receive buffer, and the log keeps the size
//! that came. Answers are whole MADs, as the C agent sends them, unless
//! [`FakeFabric::answer_size`] says otherwise.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use opa_wire::mad::{
    VemaMad, IB_MGMT_MAD_SIZE, IB_MGMT_VENDOR_HDR, OPA_MGMT_MAD_SIZE, OPA_VNIC_EMA_DATA,
};
use opa_wire::trap::{
    VemaTrapMad, VeswPortTrap, TRAP_ETH_LINK_STATUS_CHANGE, TRAP_IFACE_MCAST_MAC_CHANGE,
    TRAP_IFACE_UCAST_MAC_CHANGE, TRAP_MAD_LEN,
};
use opa_wire::vema_info::ClassPortInfo;
use opa_wire::vema_mac::ETH_ALEN;

use crate::fabric::{Dest, Event, Fabric, FabricError};

mod agent;

use crate::mad::{DATA_OFFSET, IB_MGMT_BASE_VERSION};
use agent::handle;
pub use agent::{FakeAgent, FakeVport};

/// A request the fake received, for the tests to inspect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedRequest {
    /// Destination LID.
    pub lid: u16,
    /// Method.
    pub method: u8,
    /// Attribute id.
    pub attr_id: u16,
    /// Attribute modifier.
    pub attr_mod: u32,
    /// Bytes that came, header included.
    pub len: usize,
    /// The data that came (after the vendor header, not zero-filled).
    pub data: Vec<u8>,
}

/// How big the fake agents' answers are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AnswerSize {
    /// Whole OPA MADs, as the C agent answers.
    #[default]
    Full,
    /// The vendor header and the attribute the agent wrote (the header
    /// alone with a non-zero status).
    Trimmed,
    /// Whole MADs cut to this many bytes.
    Cut(usize),
    /// IB MADs: base version 1, 256 bytes.
    Ib,
}

/// Faults to inject into the next requests.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Drop this many next responses; the send is reported timed out.
    pub drop_next: u32,
    /// Drop this many next responses with no report at all.
    pub silent_drop_next: u32,
    /// Refuse the next request with this attribute id with this status
    /// (the agent's state is left alone).
    pub status_for_attr: Option<(u16, u16)>,
    /// Queue a stale response (another TID) before each real one.
    pub stale_before_each: bool,
    /// Queue a trap from this LID before the next response.
    pub trap_before_next: Option<u16>,
}

/// The fake fabric: the EM's port and the node ports it reaches.
#[derive(Debug, Clone)]
pub struct FakeFabric {
    local_lid: u16,
    /// The node ports, by LID.
    pub agents: BTreeMap<u16, FakeAgent>,
    queue: VecDeque<Event>,
    /// Faults to inject.
    pub faults: Faults,
    /// Every request received, in order.
    pub log: Vec<LoggedRequest>,
    /// Traps sent to a LID other than the EM's (lost).
    pub traps_lost: u32,
    /// How big the answers are.
    pub answer_size: AnswerSize,
    hi_tid: u32,
    /// The subnet administrator: answers an SA request MAD, or `None` to lose it (a timeout).
    /// Without one, SA requests fail as on a port with no SM.
    pub sa: Option<SaHook>,
    /// SA requests sent.
    pub sa_requests: u32,
    /// The SM moves a node port: at the SA request of this number (from 1), the VEMA agent
    /// at the first LID moves to the second, before the SA answers (the hook's fabric must
    /// move it too).
    pub move_at_sa_request: Option<(u32, u16, u16)>,
    /// The EM's port is a limited member of the management partition (no 0xffff).
    pub limited_member: bool,
}

/// An SA of the fake fabric (the host tests plug opasim's own in); clones share it.
#[derive(Clone)]
pub struct SaHook(std::rc::Rc<std::cell::RefCell<SaFn>>);

/// What an [`SaHook`] runs: the answer to an SA request, `None` to lose it.
pub type SaFn = dyn FnMut(&[u8]) -> Option<Vec<u8>>;

impl SaHook {
    /// An SA answering with `f`.
    pub fn new(f: impl FnMut(&[u8]) -> Option<Vec<u8>> + 'static) -> Self {
        SaHook(std::rc::Rc::new(std::cell::RefCell::new(f)))
    }
}

impl std::fmt::Debug for SaHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SaHook")
    }
}

impl FakeFabric {
    /// A fabric where the EM's port has `local_lid`, with no node ports.
    pub fn new(local_lid: u16) -> Self {
        FakeFabric {
            local_lid,
            agents: BTreeMap::new(),
            queue: VecDeque::new(),
            faults: Faults::default(),
            log: Vec::new(),
            traps_lost: 0,
            answer_size: AnswerSize::Full,
            hi_tid: 0x0000_0007,
            sa: None,
            sa_requests: 0,
            move_at_sa_request: None,
            limited_member: false,
        }
    }

    /// Moves the node port at LID `from` to LID `to`, its VEMA state with it, as the SM does
    /// when it reassigns a LID.
    pub fn move_node(&mut self, from: u16, to: u16) {
        if let Some(a) = self.agents.remove(&from) {
            self.agents.insert(to, a);
        }
    }

    /// Adds a node port at `lid` (OPA port `opa_port`) running VEMA.
    pub fn add_node(&mut self, lid: u16, opa_port: u8) -> &mut Self {
        self.agents.insert(
            lid,
            FakeAgent {
                opa_port,
                class_port_info: ClassPortInfo::ZERO,
                vports: BTreeMap::new(),
                tid: 0,
            },
        );
        self
    }

    /// The virtual port `vport` at `lid`, if it exists.
    pub fn vport(&self, lid: u16, vport: u8) -> Option<&FakeVport> {
        self.agents.get(&lid)?.vports.get(&vport)
    }

    /// The virtual port `vport` at `lid`, mutable.
    pub fn vport_mut(&mut self, lid: u16, vport: u8) -> Option<&mut FakeVport> {
        self.agents.get_mut(&lid)?.vports.get_mut(&vport)
    }

    /// Requests logged with `method` (1 Get, 2 Set).
    pub fn count(&self, method: u8) -> usize {
        self.log.iter().filter(|r| r.method == method).count()
    }

    /// `rmmod` and `modprobe` of the VNIC driver on node port `lid` (or
    /// a reboot of its node): the agent comes back with no vport and a
    /// zero ClassPortInfo, so it sends no trap until an EM sets it.
    /// Returns whether the node port exists.
    pub fn reload_driver(&mut self, lid: u16) -> bool {
        let Some(a) = self.agents.get_mut(&lid) else {
            return false;
        };
        a.class_port_info = ClassPortInfo::ZERO;
        a.vports.clear();
        true
    }

    /// `ip link set dev vnicX address MAC`: `opa_vnic_set_mac_addr()`.
    /// Returns whether the vport exists.
    pub fn ip_link_set_address(&mut self, lid: u16, vport: u8, mac: [u8; ETH_ALEN]) -> bool {
        let Some(v) = self.vport_mut(lid, vport) else {
            return false;
        };
        if v.dev_addr == mac {
            return true;
        }
        v.dev_addr = mac;
        v.info.vport.uc_macs_gen_count = v.info.vport.uc_macs_gen_count.wrapping_add(1);
        self.send_trap(lid, vport, TRAP_IFACE_UCAST_MAC_CHANGE);
        true
    }

    /// `ip link set dev vnicX up|down`: open/close, state update and
    /// link status trap. Returns whether the vport exists.
    pub fn ip_link_set_up(&mut self, lid: u16, vport: u8, up: bool) -> bool {
        let Some(v) = self.vport_mut(lid, vport) else {
            return false;
        };
        v.if_up = up;
        v.info.vport.update_state(up);
        self.send_trap(lid, vport, TRAP_ETH_LINK_STATUS_CHANGE);
        true
    }

    /// `ip maddr add MAC dev vnicX`: the multicast list changes.
    pub fn ip_maddr_add(&mut self, lid: u16, vport: u8, mac: [u8; ETH_ALEN]) -> bool {
        let Some(v) = self.vport_mut(lid, vport) else {
            return false;
        };
        v.mc.push(mac);
        v.info.vport.mc_macs_gen_count = v.info.vport.mc_macs_gen_count.wrapping_add(1);
        self.send_trap(lid, vport, TRAP_IFACE_MCAST_MAC_CHANGE);
        true
    }

    /// `opa_vnic_vema_report_event()` and `opa_vnic_vema_send_trap()`:
    /// a trap to the trap LID of the ClassPortInfo, if it is set.
    fn send_trap(&mut self, lid: u16, vport: u8, opcode: u8) {
        let local = self.local_lid;
        let Some(agent) = self.agents.get_mut(&lid) else {
            return;
        };
        let trap_lid = agent.class_port_info.trap_lid;
        if trap_lid == 0 {
            return;
        }
        let Some(v) = agent.vports.get(&vport) else {
            return;
        };
        let trap = VeswPortTrap {
            fabric_id: v.info.vesw.fabric_id,
            veswid: v.info.vesw.vesw_id,
            veswportnum: v.info.vport.port_num,
            opaportnum: u16::from(agent.opa_port),
            veswportindex: vport,
            opcode,
            reserved: 0,
        };
        agent.tid = agent.tid.wrapping_add(1);
        let mad = VemaTrapMad::new(agent.tid, v.info.vport.encap_slid, &trap);
        let mut buf = vec![0u8; TRAP_MAD_LEN];
        if mad.encode_mad(&mut buf).is_err() {
            return;
        }
        if trap_lid == u32::from(local) {
            self.queue.push_back(Event::Mad {
                src_lid: lid,
                data: buf,
            });
        } else {
            self.traps_lost += 1;
        }
    }

    /// Answers one request as `vema_recv()` does; `None` if the MAD would
    /// never reach the agent (not a VEMA MAD).
    fn answer(&mut self, lid: u16, req: &[u8]) -> Option<Vec<u8>> {
        let mad = VemaMad::decode(req).ok()?;
        let agent = self.agents.get_mut(&lid)?;
        let mut rsp_hdr = mad.hdr.response();
        let mut data = [0u8; OPA_VNIC_EMA_DATA];
        let mut written = 0;
        let forced = match self.faults.status_for_attr {
            Some((attr, st)) if attr == mad.hdr.mad_hdr.attr_id => {
                self.faults.status_for_attr = None;
                Some(st)
            }
            _ => None,
        };
        rsp_hdr.mad_hdr.status = match (forced, mad.op()) {
            // The agent refuses without touching its state.
            (Some(st), _) => st,
            (None, Err(e)) => e.mad_status(),
            (None, Ok(op)) => match handle(agent, op, &mad, &mut data) {
                Ok(n) => {
                    written = n;
                    0
                }
                Err(e) => e.mad_status(),
            },
        };
        let len = match self.answer_size {
            AnswerSize::Full => OPA_MGMT_MAD_SIZE,
            AnswerSize::Trimmed => IB_MGMT_VENDOR_HDR + written,
            AnswerSize::Cut(n) => n.min(OPA_MGMT_MAD_SIZE),
            AnswerSize::Ib => {
                rsp_hdr.mad_hdr.base_version = IB_MGMT_BASE_VERSION;
                IB_MGMT_MAD_SIZE
            }
        };
        let mut out = vec![0u8; OPA_MGMT_MAD_SIZE];
        VemaMad {
            hdr: rsp_hdr,
            data: &data,
        }
        .encode(&mut out)
        .ok()?;
        out.truncate(len);
        Some(out)
    }
}

impl Fabric for FakeFabric {
    fn limited_member(&self) -> bool {
        self.limited_member
    }

    fn sa_request(
        &mut self,
        mad: &[u8],
        _timeout: Duration,
    ) -> Result<Option<Vec<u8>>, FabricError> {
        self.sa_requests = self.sa_requests.saturating_add(1);
        if let Some((n, from, to)) = self.move_at_sa_request {
            if n == self.sa_requests {
                self.move_node(from, to);
            }
        }
        match self.sa.as_mut() {
            Some(sa) => Ok((sa.0.borrow_mut())(mad)),
            None => Err(FabricError::Device(
                "fake port: no subnet manager (SMLID 0)".into(),
            )),
        }
    }

    fn send(&mut self, dest: &Dest, mad: &[u8], _timeout: Duration) -> Result<(), FabricError> {
        // ib_umad_write() refuses a vendor MAD shorter than its header.
        if mad.len() > OPA_MGMT_MAD_SIZE || mad.len() < DATA_OFFSET {
            return Err(FabricError::Io(format!(
                "write of {} bytes rejected",
                mad.len()
            )));
        }
        // What the agent reads: the MAD zero-filled to a whole one.
        let mut req = vec![0u8; OPA_MGMT_MAD_SIZE];
        req[..mad.len()].copy_from_slice(mad);
        // The "kernel" owns the high half of the TID.
        let mut tid_bytes = [0u8; 8];
        tid_bytes.copy_from_slice(&req[8..16]);
        let tid = (u64::from(self.hi_tid) << 32) | (u64::from_be_bytes(tid_bytes) & 0xffff_ffff);
        req[8..16].copy_from_slice(&tid.to_be_bytes());
        if let Ok(m) = VemaMad::decode(&req) {
            self.log.push(LoggedRequest {
                lid: dest.lid,
                method: m.hdr.mad_hdr.method,
                attr_id: m.hdr.mad_hdr.attr_id,
                attr_mod: m.hdr.mad_hdr.attr_mod,
                len: mad.len(),
                data: mad.get(DATA_OFFSET..).unwrap_or_default().to_vec(),
            });
        }
        if self.faults.silent_drop_next > 0 {
            self.faults.silent_drop_next -= 1;
            return Ok(());
        }
        if self.faults.drop_next > 0 || !self.agents.contains_key(&dest.lid) {
            self.faults.drop_next = self.faults.drop_next.saturating_sub(1);
            self.queue.push_back(Event::SendTimeout { tid });
            return Ok(());
        }
        if let Some(src) = self.faults.trap_before_next.take() {
            let vport = self
                .agents
                .get(&src)
                .and_then(|a| a.vports.keys().next().copied());
            if let Some(vp) = vport {
                self.send_trap(src, vp, TRAP_ETH_LINK_STATUS_CHANGE);
            }
        }
        if let Some(rsp) = self.answer(dest.lid, &req) {
            if self.faults.stale_before_each {
                let mut stale = rsp.clone();
                // Another TID (an answer cut before its TID has none to change).
                if let Some(b) = stale.get_mut(15) {
                    *b ^= 0x80;
                }
                self.queue.push_back(Event::Mad {
                    src_lid: dest.lid,
                    data: stale,
                });
            }
            self.queue.push_back(Event::Mad {
                src_lid: dest.lid,
                data: rsp,
            });
        } else {
            self.queue.push_back(Event::SendTimeout { tid });
        }
        Ok(())
    }

    fn recv(&mut self, _timeout: Duration) -> Result<Option<Event>, FabricError> {
        Ok(self.queue.pop_front())
    }

    fn local_lid(&self) -> u16 {
        self.local_lid
    }

    fn describe(&self) -> String {
        format!("fake fabric LID {:#06x}", self.local_lid)
    }
}
