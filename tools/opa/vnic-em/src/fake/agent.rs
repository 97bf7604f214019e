// SPDX-License-Identifier: GPL-2.0

//! The fake fabric's VEMA agent of one node port: its state (ClassPortInfo, the virtual
//! ports and their netdevs) and how it answers each attribute, as `opa_vnic_vema.c` does.

use std::collections::BTreeMap;

use opa_wire::mad::{VemaMad, VemaOp};
use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo};
use opa_wire::vema_mac::{IfaceMacs, IfaceMacsHdr, MacTable, MacTableEntry, MacTableHdr, ETH_ALEN};
use opa_wire::WireError;

/// One virtual port (one VNIC netdev) of a fake agent.
#[derive(Debug, Clone)]
pub struct FakeVport {
    /// The VESW port info the driver keeps.
    pub info: VeswPortInfo,
    /// The MAC table by index.
    pub mac_table: BTreeMap<u16, MacTableEntry>,
    /// The netdev's current address.
    pub dev_addr: [u8; ETH_ALEN],
    /// The base MAC last applied to the netdev (`vema_mac_addr`).
    pub vema_mac: [u8; ETH_ALEN],
    /// Extra unicast addresses (the netdev `uc` list).
    pub uc: Vec<[u8; ETH_ALEN]>,
    /// Multicast addresses (the netdev `mc` list).
    pub mc: Vec<[u8; ETH_ALEN]>,
    /// Whether the interface is up.
    pub if_up: bool,
    /// Counters the agent reports (ids are filled in on Get).
    pub summary: SummaryCounters,
    /// Error counters the agent reports.
    pub errors: ErrorCounters,
}

impl FakeVport {
    fn new() -> Self {
        let mut info = VeswPortInfo::adapter_pod();
        info.vport.update_state(false);
        FakeVport {
            info,
            mac_table: BTreeMap::new(),
            dev_addr: [0; ETH_ALEN],
            vema_mac: [0; ETH_ALEN],
            uc: Vec::new(),
            mc: Vec::new(),
            if_up: false,
            summary: SummaryCounters::ZERO,
            errors: ErrorCounters::ZERO,
        }
    }

    /// `opa_vnic_process_vema_config()`: apply a new base MAC to the
    /// netdev and update the state.
    fn process_config(&mut self) {
        if self.info.vport.base_mac_addr != self.vema_mac {
            self.dev_addr = self.info.vport.base_mac_addr;
            self.vema_mac = self.info.vport.base_mac_addr;
        }
        self.info.vport.update_state(self.if_up);
    }

    /// The unicast list VEMA reports: the netdev address unless it is the
    /// EM-set base MAC, then the `uc` list.
    pub fn ucast_list(&self) -> Vec<[u8; ETH_ALEN]> {
        let mut v = Vec::new();
        if self.dev_addr != self.info.vport.base_mac_addr {
            v.push(self.dev_addr);
        }
        v.extend(self.uc.iter().copied());
        v
    }
}

/// The VEMA agent of one node port.
#[derive(Debug, Clone)]
pub struct FakeAgent {
    /// OPA port number of the node port.
    pub opa_port: u8,
    /// ClassPortInfo as last set (all zero before).
    pub class_port_info: ClassPortInfo,
    /// Virtual ports by number.
    pub vports: BTreeMap<u8, FakeVport>,
    /// The TID of the agent's last trap.
    pub(super) tid: u64,
}

/// The per-attribute handlers of `vema_get()` and `vema_set()`; return
/// the bytes of the attribute they wrote to `out`.
pub(super) fn handle(
    agent: &mut FakeAgent,
    op: VemaOp,
    mad: &VemaMad<'_>,
    out: &mut [u8],
) -> Result<usize, WireError> {
    let vnum = mad.hdr.vport_num();
    if op.rejects_missing_vport() && !agent.vports.contains_key(&vnum) {
        return Err(WireError::NoSuchVport(vnum));
    }
    let opa_port = agent.opa_port;
    match op {
        VemaOp::GetClassPortInfo => agent
            .class_port_info
            .vema_response()
            .encode(out)
            .map(|()| ClassPortInfo::SIZE),
        VemaOp::SetClassPortInfo => {
            agent.class_port_info = ClassPortInfo::decode(mad.data)?;
            agent
                .class_port_info
                .vema_response()
                .encode(out)
                .map(|()| ClassPortInfo::SIZE)
        }
        VemaOp::GetVeswPortInfo => match agent.vports.get(&vnum) {
            Some(v) => v.info.encode(out),
            None => VeswPortInfo::vema_pod().encode(out),
        }
        .map(|()| VeswPortInfo::SIZE),
        VemaOp::SetVeswPortInfo => {
            let req = VeswPortInfo::decode(mad.data)?;
            let v = agent.vports.entry(vnum).or_insert_with(FakeVport::new);
            v.info.apply_set(&req);
            v.process_config();
            v.info.encode(out).map(|()| VeswPortInfo::SIZE)
        }
        VemaOp::GetMacEntries => {
            let v = agent
                .vports
                .get(&vnum)
                .ok_or(WireError::NoSuchVport(vnum))?;
            let req = MacTableHdr::decode(mad.data)?;
            get_mac_entries(v, &req, out)
        }
        VemaOp::SetMacEntries => {
            let v = agent
                .vports
                .get_mut(&vnum)
                .ok_or(WireError::NoSuchVport(vnum))?;
            let tbl = MacTable::decode(mad.data)?;
            let (off, n) = (tbl.hdr.offset, tbl.hdr.num_entries);
            v.mac_table.retain(|&i, _| !tbl.hdr.covers(i));
            for (i, e) in (off..off.saturating_add(n)).zip(tbl.entries()) {
                if !e.is_delete() {
                    v.mac_table.insert(i, e);
                }
            }
            v.info.vport.mac_tbl_digest = tbl.hdr.mac_tbl_digest;
            get_mac_entries(v, &tbl.hdr, out)
        }
        VemaOp::SetDeleteVesw => {
            let v = agent
                .vports
                .get_mut(&vnum)
                .ok_or(WireError::NoSuchVport(vnum))?;
            let pod = VeswPortInfo::vema_pod();
            v.info.apply_set(&pod);
            v.process_config();
            v.mac_table.clear();
            v.info.vport.mac_tbl_digest = 0;
            v.info.encode(out).map(|()| VeswPortInfo::SIZE)
        }
        VemaOp::GetIfaceUcastMacs | VemaOp::GetIfaceMcastMacs => {
            let v = agent
                .vports
                .get(&vnum)
                .ok_or(WireError::NoSuchVport(vnum))?;
            let req = IfaceMacsHdr::decode(mad.data)?;
            let hdr = if op == VemaOp::GetIfaceMcastMacs {
                IfaceMacs::encode_response(
                    &req,
                    v.mc.iter().copied(),
                    v.info.vport.mc_macs_gen_count,
                    out,
                )?
            } else {
                IfaceMacs::encode_response(
                    &req,
                    v.ucast_list(),
                    v.info.vport.uc_macs_gen_count,
                    out,
                )?
            };
            Ok(IfaceMacsHdr::SIZE + usize::from(hdr.num_macs_in_msg) * ETH_ALEN)
        }
        VemaOp::GetSummaryCounters => {
            let v = agent
                .vports
                .get(&vnum)
                .ok_or(WireError::NoSuchVport(vnum))?;
            let mut c = v.summary;
            c.vp_instance = u16::from(vnum);
            c.vesw_id = v.info.vesw.vesw_id;
            c.veswport_num = u32::from(opa_port);
            c.encode(out).map(|()| SummaryCounters::SIZE)
        }
        VemaOp::GetErrorCounters => {
            let v = agent
                .vports
                .get(&vnum)
                .ok_or(WireError::NoSuchVport(vnum))?;
            let mut c = v.errors;
            c.vp_instance = u16::from(vnum);
            c.vesw_id = v.info.vesw.vesw_id;
            c.veswport_num = u32::from(opa_port);
            c.encode(out).map(|()| ErrorCounters::SIZE)
        }
    }
}

/// `vema_get_mac_entries()`: the window's entries (zero where empty) and
/// the digest, after the range check; returns the bytes written.
fn get_mac_entries(v: &FakeVport, req: &MacTableHdr, out: &mut [u8]) -> Result<usize, WireError> {
    req.check_req()?;
    let entries: Vec<MacTableEntry> = (0..req.num_entries)
        .map(|k| {
            v.mac_table
                .get(&req.offset.saturating_add(k))
                .copied()
                .unwrap_or(MacTableEntry::ZERO)
        })
        .collect();
    let hdr = MacTableHdr {
        offset: req.offset,
        num_entries: req.num_entries,
        mac_tbl_digest: v.info.vport.mac_tbl_digest,
    };
    MacTable::encode(&hdr, &entries, out)
}
