// SPDX-License-Identifier: GPL-2.0

//! The EM side of VEMA: typed Gets and Sets over any [`Fabric`], with TID
//! matching, per-request timeouts and retries, and traps that arrive in
//! the middle of a transaction kept for later.

mod error;
mod policy;
mod values;
pub mod window;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_DELETE_VESW, ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS,
    ATTR_VESWPORT_ERROR_COUNTERS, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES,
    ATTR_VESWPORT_SUMMARY_COUNTERS, IB_MGMT_MAD_HDR, MAD_STATUS_BUSY, MAD_STATUS_SUCCESS,
    OPA_MGMT_MAD_SIZE,
};
use opa_wire::trap::VemaTrapMad;
use opa_wire::vema_counters::{ErrorCounters, SummaryCounters};
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo, MAC_TBL_MAX_ENTRIES};
use opa_wire::vema_mac::{
    IfaceMacs, IfaceMacsHdr, MacTable, MacTableEntry, MacTableHdr, MAC_TBL_ENTRIES_PER_MAD,
};

use crate::fabric::{Dest, Event, Fabric};

use crate::mad::{build_request, check_response, classify, tid_low, Incoming, Method, Target};
pub use error::EmError;
pub use policy::{Policy, Stats};
pub use values::{IfaceMacList, MacTableState, TrapEvent};
pub use window::{Outcome, Request, Window};

/// Attempts before a request is given up, when responses keep coming that
/// do not match: guards against a transport that never stops talking.
const MAX_EVENTS_PER_ATTEMPT: u32 = 10_000;

/// The EM client over a fabric.
pub struct Client<F: Fabric> {
    fabric: F,
    policy: Policy,
    next_tid: u32,
    traps: VecDeque<TrapEvent>,
    stats: Stats,
}

impl<F: Fabric> Client<F> {
    /// A client over `fabric` with `policy`.
    pub fn new(fabric: F, policy: Policy) -> Self {
        let seed = std::process::id().wrapping_mul(0x0001_0003) ^ 0x5a5a_0000;
        Client {
            fabric,
            policy,
            next_tid: seed | 1,
            traps: VecDeque::new(),
            stats: Stats::default(),
        }
    }

    /// The transport.
    pub fn fabric(&self) -> &F {
        &self.fabric
    }

    /// The transport, mutable (the tests drive the fake through it).
    pub fn fabric_mut(&mut self) -> &mut F {
        &mut self.fabric
    }

    /// How requests are sent.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// What was sent so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Sets how many requests a batch keeps in flight.
    pub fn set_window(&mut self, window: Window) {
        self.policy.window = window;
    }

    /// The EM's own LID.
    pub fn local_lid(&self) -> u16 {
        self.fabric.local_lid()
    }

    fn alloc_tid(&mut self) -> u64 {
        let t = self.next_tid;
        self.next_tid = self.next_tid.wrapping_add(1);
        if self.next_tid == 0 {
            self.next_tid = 1;
        }
        u64::from(t)
    }

    fn note_trap(&mut self, src_lid: u16, data: &[u8]) {
        if let Ok(m) = VemaTrapMad::decode_trap(data) {
            if let Ok(trap) = m.trap() {
                self.traps.push_back(TrapEvent {
                    src_lid,
                    issuer_lid: m.notice.issuer_lid,
                    tid: m.hdr.mad_hdr.tid,
                    trap,
                });
            }
        }
    }

    /// One request/response exchange with retries, the request sized as
    /// the policy's [`crate::mad::MadSize`] says; returns the response data, read as
    /// if zero-filled to a whole MAD (see [`crate::mad::Response::data`]).
    pub fn transact(
        &mut self,
        target: Target,
        attr_mod: u32,
        data: &[u8],
    ) -> Result<Vec<u8>, EmError> {
        let len = self
            .policy
            .mad_size
            .request_len(target.method, target.attr_id, data);
        self.transact_len(target, attr_mod, data, len)
    }

    /// Like [`Client::transact`], but the request is exactly `len` bytes,
    /// header included, from [`IB_MGMT_MAD_HDR`] to [`OPA_MGMT_MAD_SIZE`]:
    /// `data` is zero-padded or cut to fit (a test aid, to see how an
    /// agent takes requests of any size).
    pub fn transact_len(
        &mut self,
        target: Target,
        attr_mod: u32,
        data: &[u8],
        len: usize,
    ) -> Result<Vec<u8>, EmError> {
        if !(IB_MGMT_MAD_HDR..=OPA_MGMT_MAD_SIZE).contains(&len) {
            return Err(EmError::Encode {
                target,
                reason: format!(
                    "a MAD of {len} bytes: it must be {IB_MGMT_MAD_HDR} to {OPA_MGMT_MAD_SIZE}"
                ),
            });
        }
        let dest = Dest::gsi(target.lid, self.policy.pkey_index, self.policy.sl);
        let attempts = self.policy.attempts();
        for attempt in 0..attempts {
            if attempt > 0 {
                self.stats.retries = self.stats.retries.saturating_add(1);
            }
            let tid = self.alloc_tid();
            let buf =
                build_request(tid, target.method, target.attr_id, attr_mod, data).map_err(|e| {
                    EmError::Encode {
                        target,
                        reason: format!("{e:?}"),
                    }
                })?;
            let wait = self.policy.attempt_timeout(attempt);
            self.fabric.send(&dest, &buf[..len], wait)?;
            self.stats.sent = self.stats.sent.saturating_add(1);
            self.stats.max_in_flight = self.stats.max_in_flight.max(1);
            match self.await_response(target, tid, attr_mod, wait)? {
                Some(rsp) => {
                    if target.method == Method::Set {
                        self.stats.sets_ok = self.stats.sets_ok.saturating_add(1);
                    }
                    return Ok(rsp);
                }
                None => self.stats.timeouts = self.stats.timeouts.saturating_add(1),
            }
        }
        Err(EmError::Timeout {
            target,
            attempts,
            timeout: self.policy.timeout,
            last: self.policy.attempt_timeout(attempts - 1),
        })
    }

    /// Waits for the response to `tid`: `Some(data)` on success, `None`
    /// when the attempt timed out (or the agent was busy), an error for a
    /// bad status or response.
    fn await_response(
        &mut self,
        target: Target,
        tid: u64,
        attr_mod: u32,
        wait: Duration,
    ) -> Result<Option<Vec<u8>>, EmError> {
        let deadline = Instant::now() + wait + self.policy.grace;
        for _ in 0..MAX_EVENTS_PER_ATTEMPT {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let Some(ev) = self.fabric.recv(deadline - now)? else {
                return Ok(None);
            };
            match ev {
                Event::SendTimeout { tid: t } => {
                    if tid_low(t) == tid_low(tid) {
                        return Ok(None);
                    }
                }
                Event::Mad { src_lid, data } => match classify(&data) {
                    Incoming::Response(rsp) => {
                        if tid_low(rsp.hdr.mad_hdr.tid) != tid_low(tid) {
                            continue; // a late answer to an earlier attempt
                        }
                        let status = rsp.hdr.mad_hdr.status;
                        if status == MAD_STATUS_BUSY {
                            return Ok(None);
                        }
                        if status != MAD_STATUS_SUCCESS {
                            return Err(EmError::Status { target, status });
                        }
                        check_response(&rsp, target.attr_id, attr_mod).map_err(|e| {
                            EmError::BadResponse {
                                target,
                                reason: e.to_string(),
                            }
                        })?;
                        return Ok(Some(rsp.data));
                    }
                    // Nothing tells whose it is; only a request is
                    // outstanding, and the MAD layer never hands on less
                    // than a MAD header: the fabric is broken.
                    Incoming::Runt(n) => {
                        return Err(EmError::BadResponse {
                            target,
                            reason: format!(
                                "an answer of {n} bytes, shorter than the {IB_MGMT_MAD_HDR}-byte MAD header"
                            ),
                        })
                    }
                    Incoming::Trap => self.note_trap(src_lid, &data),
                    Incoming::Other => {}
                },
            }
        }
        Ok(None)
    }

    fn target(method: Method, attr_id: u16, lid: u16, vport: Option<u8>) -> Target {
        Target {
            method,
            attr_id,
            lid,
            vport,
        }
    }

    fn bad(target: Target, e: opa_wire::WireError) -> EmError {
        EmError::BadResponse {
            target,
            reason: format!("{e:?}"),
        }
    }

    /// Get ClassPortInfo of the agent at `lid`.
    pub fn get_class_port_info(&mut self, lid: u16) -> Result<ClassPortInfo, EmError> {
        let t = Self::target(Method::Get, ATTR_CLASS_PORT_INFO, lid, None);
        let d = self.transact(t, 0, &[])?;
        ClassPortInfo::decode(&d).map_err(|e| Self::bad(t, e))
    }

    /// Set ClassPortInfo of the agent at `lid`; returns what it answers.
    pub fn set_class_port_info(
        &mut self,
        lid: u16,
        cpi: &ClassPortInfo,
    ) -> Result<ClassPortInfo, EmError> {
        let t = Self::target(Method::Set, ATTR_CLASS_PORT_INFO, lid, None);
        let d = self.transact(t, 0, &cpi.to_bytes())?;
        ClassPortInfo::decode(&d).map_err(|e| Self::bad(t, e))
    }

    /// Get VESW port info of `vport` at `lid` (power-on defaults if the
    /// port does not exist).
    pub fn get_vport_info(&mut self, lid: u16, vport: u8) -> Result<VeswPortInfo, EmError> {
        let t = Self::target(Method::Get, ATTR_VESWPORT_INFO, lid, Some(vport));
        let d = self.transact(t, u32::from(vport), &[])?;
        VeswPortInfo::decode(&d).map_err(|e| Self::bad(t, e))
    }

    /// Set VESW port info of `vport` at `lid` (creates the port); returns
    /// what the agent answers.
    pub fn set_vport_info(
        &mut self,
        lid: u16,
        vport: u8,
        info: &VeswPortInfo,
    ) -> Result<VeswPortInfo, EmError> {
        let t = Self::target(Method::Set, ATTR_VESWPORT_INFO, lid, Some(vport));
        let d = self.transact(t, u32::from(vport), &info.to_bytes())?;
        VeswPortInfo::decode(&d).map_err(|e| Self::bad(t, e))
    }

    /// Set delete vesw: resets `vport` at `lid` to power-on defaults and
    /// empties its MAC table.
    pub fn delete_vesw(&mut self, lid: u16, vport: u8) -> Result<VeswPortInfo, EmError> {
        let t = Self::target(Method::Set, ATTR_DELETE_VESW, lid, Some(vport));
        let d = self.transact(t, u32::from(vport), &[])?;
        VeswPortInfo::decode(&d).map_err(|e| Self::bad(t, e))
    }

    fn decode_table(t: Target, d: &[u8]) -> Result<(MacTableHdr, Vec<MacTableEntry>), EmError> {
        let tbl = MacTable::decode(d).map_err(|e| Self::bad(t, e))?;
        Ok((tbl.hdr, tbl.entries().collect()))
    }

    /// Get `count` MAC table entries of `vport` at `lid` from `offset`.
    pub fn get_mac_entries(
        &mut self,
        lid: u16,
        vport: u8,
        offset: u16,
        count: u16,
    ) -> Result<(MacTableHdr, Vec<MacTableEntry>), EmError> {
        let t = Self::target(Method::Get, ATTR_VESWPORT_MAC_ENTRIES, lid, Some(vport));
        let req = MacTableHdr {
            offset,
            num_entries: count,
            mac_tbl_digest: 0,
        };
        let d = self.transact(t, u32::from(vport), &req.to_bytes())?;
        let (hdr, entries) = Self::decode_table(t, &d)?;
        if hdr.offset != offset || hdr.num_entries != count {
            return Err(EmError::BadResponse {
                target: t,
                reason: format!(
                    "asked for {count} entries at {offset}, got {} at {}",
                    hdr.num_entries, hdr.offset
                ),
            });
        }
        Ok((hdr, entries))
    }

    /// Set MAC table entries `offset..offset + entries.len()` of `vport`
    /// at `lid` (an all-zero MAC removes a slot) and the table digest.
    pub fn set_mac_entries(
        &mut self,
        lid: u16,
        vport: u8,
        offset: u16,
        digest: u32,
        entries: &[MacTableEntry],
    ) -> Result<(MacTableHdr, Vec<MacTableEntry>), EmError> {
        let t = Self::target(Method::Set, ATTR_VESWPORT_MAC_ENTRIES, lid, Some(vport));
        let count = u16::try_from(entries.len()).unwrap_or(u16::MAX);
        let hdr = MacTableHdr {
            offset,
            num_entries: count,
            mac_tbl_digest: digest,
        };
        let mut data = vec![0u8; MacTableHdr::SIZE + entries.len() * MacTableEntry::SIZE];
        MacTable::encode(&hdr, entries, &mut data).map_err(|e| EmError::Encode {
            target: t,
            reason: format!("{e:?}"),
        })?;
        let d = self.transact(t, u32::from(vport), &data)?;
        Self::decode_table(t, &d)
    }

    /// Reads the whole MAC table of `vport` at `lid` (17 Gets).
    pub fn read_mac_table(&mut self, lid: u16, vport: u8) -> Result<MacTableState, EmError> {
        let mut st = MacTableState::default();
        let mut offset: u16 = 0;
        while offset < MAC_TBL_MAX_ENTRIES {
            let count = MAC_TBL_ENTRIES_PER_MAD.min(MAC_TBL_MAX_ENTRIES - offset);
            let (hdr, entries) = self.get_mac_entries(lid, vport, offset, count)?;
            st.digest = hdr.mac_tbl_digest;
            for (i, e) in (offset..).zip(entries) {
                if !e.is_delete() {
                    st.entries.insert(i, e);
                }
            }
            offset += count;
        }
        Ok(st)
    }

    /// Reads an interface MAC list (unicast, or multicast if `mcast`) of
    /// `vport` at `lid`, as many MADs as it takes.
    pub fn get_iface_macs(
        &mut self,
        lid: u16,
        vport: u8,
        mcast: bool,
    ) -> Result<IfaceMacList, EmError> {
        let attr = if mcast {
            ATTR_IFACE_MCAST_MACS
        } else {
            ATTR_IFACE_UCAST_MACS
        };
        let t = Self::target(Method::Get, attr, lid, Some(vport));
        let mut out = IfaceMacList::default();
        let mut start: u16 = 0;
        // 65535 addresses at 333 a MAD: never more than 197 MADs.
        for _ in 0..200 {
            let req = IfaceMacsHdr {
                start_idx: start,
                num_macs_in_msg: 0,
                tot_macs_in_lst: 0,
                gen_count: 0,
            };
            let d = self.transact(t, u32::from(vport), &req.to_bytes())?;
            let macs = IfaceMacs::decode(&d).map_err(|e| Self::bad(t, e))?;
            out.gen_count = macs.hdr.gen_count;
            let got = macs.len();
            out.macs.extend(macs.entries());
            if got == 0 || out.macs.len() >= usize::from(macs.hdr.tot_macs_in_lst) {
                break;
            }
            start = start.saturating_add(u16::try_from(got).unwrap_or(u16::MAX));
        }
        Ok(out)
    }

    /// Get summary counters of `vport` at `lid`.
    pub fn get_summary_counters(
        &mut self,
        lid: u16,
        vport: u8,
    ) -> Result<SummaryCounters, EmError> {
        let t = Self::target(
            Method::Get,
            ATTR_VESWPORT_SUMMARY_COUNTERS,
            lid,
            Some(vport),
        );
        let d = self.transact(t, u32::from(vport), &[])?;
        SummaryCounters::decode(&d).map_err(|e| Self::bad(t, e))
    }

    /// Get error counters of `vport` at `lid`.
    pub fn get_error_counters(&mut self, lid: u16, vport: u8) -> Result<ErrorCounters, EmError> {
        let t = Self::target(Method::Get, ATTR_VESWPORT_ERROR_COUNTERS, lid, Some(vport));
        let d = self.transact(t, u32::from(vport), &[])?;
        ErrorCounters::decode(&d).map_err(|e| Self::bad(t, e))
    }

    /// The next trap, waiting at most `timeout`; responses that arrive
    /// meanwhile (late answers) are dropped.
    pub fn wait_trap(&mut self, timeout: Duration) -> Result<Option<TrapEvent>, EmError> {
        if let Some(t) = self.traps.pop_front() {
            return Ok(Some(t));
        }
        let deadline = Instant::now() + timeout;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let Some(ev) = self.fabric.recv(deadline - now)? else {
                return Ok(None);
            };
            if let Event::Mad { src_lid, data } = ev {
                if classify(&data) == Incoming::Trap {
                    self.note_trap(src_lid, &data);
                    if let Some(t) = self.traps.pop_front() {
                        return Ok(Some(t));
                    }
                }
            }
        }
    }
}
