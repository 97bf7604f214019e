// SPDX-License-Identifier: GPL-2.0-only

//! The management agent of each opasim port: the MADs the IB core offers the provider first
//! (`process_mad`), taken as hfi1's `hfi1_process_mad()` takes them (`hw/hfi1/mad.c`).
//!
//! - OPA SMPs (LID-routed and directed-route, base version 0x80) go to the SMA,
//!   `process_subn_opa()`: M_Key check, then Get and Set of the attributes of
//!   [`crate::sma_node`], [`crate::sma_port`] and [`crate::sma_tables`], one by one or in an
//!   Aggregate.
//! - IB SMPs (base version 1) get `process_subn()`'s answer: NodeInfo only, with base
//!   version 0x80, which tells opamgt (`port_is_opa()`) that the port is an OPA port.
//! - Performance MADs go to the PMA ([`crate::pma`]).
//! - Every other MAD, and every response, goes on to the agents.
//!
//! The answer is the request with its method turned into GetResp, its status bits, and for a
//! directed-route SMP the direction bit; the core routes it back (`reply()`).

pub(crate) use crate::sma_answer::Answer;
use crate::{hfi::Hfi, port::Port, sma_node, sma_port, sma_tables};
use kernel::{
    rdma::provider::{
        mad::{
            MadReply, MadRequest, MadVerdict, CLASS_PERF_MGMT, CLASS_SUBN_DIRECTED_ROUTE,
            CLASS_SUBN_LID_ROUTED, OPA_BASE_VERSION, OPA_LID_PERMISSIVE, OPA_MAD_SIZE,
        },
        ProviderDevice,
    },
    sync::Arc,
    time::Ktime,
};

/// Status: the class version is not supported (`IB_SMP_UNSUP_VERSION`).
pub(crate) const STATUS_UNSUP_VERSION: u16 = 0x0004;
/// Status: the method is not supported (`IB_SMP_UNSUP_METHOD`).
pub(crate) const STATUS_UNSUP_METHOD: u16 = 0x0008;
/// Status: the method/attribute combination is not supported (`IB_SMP_UNSUP_METH_ATTR`).
pub(crate) const STATUS_UNSUP_METH_ATTR: u16 = 0x000c;
/// Status: a field of the request is invalid (`IB_SMP_INVALID_FIELD`).
pub(crate) const STATUS_INVALID_FIELD: u16 = 0x001c;
/// The direction bit of a directed-route SMP's status (`IB_SMP_DIRECTION`).
pub(crate) const STATUS_DIRECTION: u16 = 0x8000;

/// Method Get.
pub(crate) const METHOD_GET: u8 = 0x01;
/// Method Set.
pub(crate) const METHOD_SET: u8 = 0x02;
/// Method Trap.
const METHOD_TRAP: u8 = 0x05;
/// Method Report.
const METHOD_REPORT: u8 = 0x06;
/// Method TrapRepress.
pub(crate) const METHOD_TRAP_REPRESS: u8 = 0x07;
/// Method GetResp.
pub(crate) const METHOD_GET_RESP: u8 = 0x81;
/// Method ReportResp.
const METHOD_REPORT_RESP: u8 = 0x86;

/// The limited management P_Key (`LIM_MGMT_P_KEY`).
pub(crate) const LIM_MGMT_P_KEY: u16 = 0x7fff;
/// The full management P_Key (`FULL_MGMT_P_KEY`).
pub(crate) const FULL_MGMT_P_KEY: u16 = 0xffff;

/// The OPA SMP class version (`OPA_SM_CLASS_VERSION`).
pub(crate) const OPA_SM_CLASS_VERSION: u8 = 0x80;

/// Attribute Aggregate (`OPA_ATTRIB_ID_AGGREGATE`).
const ATTR_AGGREGATE: u16 = 0x80;
/// Attribute NodeInfo.
pub(crate) const ATTR_NODE_INFO: u16 = 0x11;
/// Attribute PortInfo.
pub(crate) const ATTR_PORT_INFO: u16 = 0x15;

/// Refuses a request as hfi1's handlers refuse a bad attribute modifier or size: the invalid
/// field status, no attribute data.
pub(crate) fn invalid(ans: &mut Answer<'_>) -> Step {
    ans.fail(STATUS_INVALID_FIELD);
    Step::Added(0)
}

/// What a request is, for its handlers: the device and port it came in on, its method and
/// M_Key, and whether it comes from this node.
pub(crate) struct Sma<'d> {
    /// The device.
    pub(crate) dev: &'d ProviderDevice<Hfi>,
    /// The port the request came in on.
    pub(crate) port: &'d Arc<Port>,
    /// The request's method.
    pub(crate) method: u8,
    /// The request's M_Key.
    pub(crate) mkey: u64,
    /// Sent from and to this node (hfi1's `is_local_mad()`).
    pub(crate) local: bool,
}

/// What a handler did: the bytes it added to the answer, or that the request is to be dropped
/// without an answer (hfi1's `IB_MAD_RESULT_CONSUMED` of a port disabled from afar).
pub(crate) enum Step {
    /// The attribute's bytes.
    Added(usize),
    /// No answer.
    Consumed,
}

/// Offers `req` to the port's SMA and PMA (`hfi1_process_mad()`).
pub(crate) fn process(
    dev: &ProviderDevice<Hfi>,
    req: &MadRequest<'_>,
    reply: &mut MadReply<'_>,
) -> MadVerdict {
    let Ok(port) = dev.data().port(req.port()) else {
        return MadVerdict::Failure;
    };
    let hdr = req.hdr();
    match (hdr.base_version, hdr.mgmt_class) {
        (OPA_BASE_VERSION, CLASS_SUBN_LID_ROUTED | CLASS_SUBN_DIRECTED_ROUTE) => {
            reply.set_pkey_index(lim_mgmt_index(port));
            let local = is_local(req, port);
            if local && !local_smp_check(req, port) {
                return MadVerdict::Failure;
            }
            subn_opa(dev, port, req, reply, local)
        }
        (OPA_BASE_VERSION, CLASS_PERF_MGMT) => {
            reply.set_pkey_index(lim_mgmt_index(port));
            if !crate::pma::pkey_valid(req, port, is_local(req, port)) {
                return MadVerdict::Failure;
            }
            crate::pma::process_opa(port, req, reply)
        }
        (1, CLASS_SUBN_LID_ROUTED | CLASS_SUBN_DIRECTED_ROUTE) => subn_ib(dev, port, req, reply),
        (1, CLASS_PERF_MGMT) => crate::pma::process_ib(port, req, reply),
        _ => MadVerdict::Pass,
    }
}

/// The index the answers and traps go out with: the limited management P_Key's, found
/// exactly as `hfi1_lookup_pkey_idx()` finds a management P_Key, or 1
/// (`hfi1_process_opa_mad()`, `send_trap()`).
pub(crate) fn lim_mgmt_index(port: &Port) -> u16 {
    port.config()
        .pkeys
        .iter()
        .position(|&p| p == LIM_MGMT_P_KEY)
        .and_then(|i| u16::try_from(i).ok())
        .unwrap_or(1)
}

/// Whether `req` was sent from and to this node (`is_local_mad()`).
fn is_local(req: &MadRequest<'_>, port: &Port) -> bool {
    if let Some(smp) = req.smp().filter(|s| s.is_directed()) {
        return smp.hop_cnt() == 0
            && smp.dr_slid() == OPA_LID_PERMISSIVE
            && smp.dr_dlid() == OPA_LID_PERMISSIVE;
    }
    match req.source() {
        Some(s) => s.slid == port.config().lid,
        // The core's own queries (sysfs) come from this node.
        None => true,
    }
}

/// The checks of a node-local SMP: its P_Key is a management one (`opa_local_smp_check()`).
fn local_smp_check(req: &MadRequest<'_>, port: &Port) -> bool {
    let Some(src) = req.source() else {
        return true;
    };
    let c = port.config();
    match c.pkeys.get(usize::from(src.pkey_index)) {
        Some(&p) => p == LIM_MGMT_P_KEY || p == FULL_MGMT_P_KEY,
        None => false,
    }
}

/// Whether the request's M_Key passes (`check_mkey()`): it matches, or the port has none, or
/// the core asked to ignore it, or it is a Get below protection level 2. A violation counts
/// and starts the lease.
fn check_mkey(port: &Port, method: u8, mkey: u64, ignore: bool) -> bool {
    let now = Ktime::ktime_get();
    port.update_mgmt(|m| {
        // A lapsed lease clears the protection.
        if let Some(end) = m.mkey_lease_end {
            if kernel::time::ktime_ms_delta(now, end) >= 0 {
                m.mkey_lease_end = None;
                m.mkeyprot = 0;
            }
        }
        let valid = ignore || m.mkey == 0 || m.mkey == mkey;
        let keyed = matches!(method, METHOD_GET | METHOD_SET | METHOD_TRAP_REPRESS);
        if valid {
            if keyed {
                m.mkey_lease_end = None;
            }
            return true;
        }
        if method == METHOD_GET && m.mkeyprot < 2 {
            return true;
        }
        if !keyed {
            return true;
        }
        m.mkey_violations = m.mkey_violations.saturating_add(1);
        if m.mkey_lease_end.is_none() && m.mkey_lease_period != 0 {
            let ms = i64::from(m.mkey_lease_period) * 1000;
            m.mkey_lease_end = Some(Ktime::from_raw(now.to_ns() + ms * 1_000_000));
        }
        false
    })
}

/// Whether the M_Key of the SMP `req` passes on `port` (`check_mkey()`); a violation also
/// sends trap 256 to the SM (`bad_mkey()`).
fn mkey_passes(dev: &ProviderDevice<Hfi>, port: &Arc<Port>, req: &MadRequest<'_>) -> bool {
    let Some(smp) = req.smp() else {
        return false;
    };
    let hdr = req.hdr();
    if check_mkey(port, hdr.method, smp.mkey(), req.ignore_mkey()) {
        return true;
    }
    let dr = smp
        .is_directed()
        .then(|| (smp.dr_slid(), smp.return_path(), smp.hop_cnt()));
    crate::sma_trap::bad_mkey(port, &dev.data().fabric, &hdr, smp.mkey(), dr);
    false
}

/// An OPA SMP (`process_subn_opa()`).
fn subn_opa(
    dev: &ProviderDevice<Hfi>,
    port: &Arc<Port>,
    req: &MadRequest<'_>,
    reply: &mut MadReply<'_>,
    local: bool,
) -> MadVerdict {
    let Some(smp) = req.smp() else {
        return MadVerdict::Failure;
    };
    let hdr = req.hdr();
    let Some(mut ans) = Answer::new(req, reply) else {
        return MadVerdict::Failure;
    };
    if let Some(s) = req.source() {
        ans.len = (s.byte_len as usize).saturating_sub(40).min(OPA_MAD_SIZE);
    }
    if hdr.class_version != OPA_SM_CLASS_VERSION {
        ans.fail(STATUS_UNSUP_VERSION);
        return ans.reply();
    }
    if !mkey_passes(dev, port, req) {
        return MadVerdict::Failure;
    }
    let sma = Sma {
        dev,
        port,
        method: hdr.method,
        mkey: smp.mkey(),
        local,
    };
    let at = smp.data_offset();
    let max = smp.data().len();
    ans.len = at;
    let step = match (hdr.method, hdr.attr_id) {
        (METHOD_GET, ATTR_AGGREGATE) => aggregate(&sma, &mut ans, hdr.attr_mod, at, false),
        (METHOD_GET, attr) => {
            ans.zero(at, max);
            get(attr, &sma, &mut ans, hdr.attr_mod, at, max)
        }
        (METHOD_SET, ATTR_AGGREGATE) => aggregate(&sma, &mut ans, hdr.attr_mod, at, true),
        (METHOD_SET, attr) => set(attr, &sma, &mut ans, hdr.attr_mod, at, max),
        // Responses, traps and reports are the agents' (the SM's); opasim sends no trap whose
        // repression it would track.
        (
            METHOD_TRAP | METHOD_REPORT | METHOD_REPORT_RESP | METHOD_GET_RESP
            | METHOD_TRAP_REPRESS,
            _,
        ) => return MadVerdict::Pass,
        _ => {
            ans.fail(STATUS_UNSUP_METHOD);
            Step::Added(0)
        }
    };
    match step {
        Step::Added(n) => {
            ans.len += n;
            ans.reply()
        }
        Step::Consumed => MadVerdict::Consumed,
    }
}

/// Get of one attribute (`subn_get_opa_sma()`).
pub(crate) fn get(
    attr: u16,
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    match attr {
        0x10 => sma_node::get_nodedesc(sma, ans, am, at, max),
        ATTR_NODE_INFO => sma_node::get_nodeinfo(sma, ans, am, at, max),
        ATTR_PORT_INFO => sma_port::get_portinfo(sma, ans, am, at, max),
        0x87 => sma_port::get_psi(sma, ans, am, at, max),
        _ => sma_tables::get(attr, sma, ans, am, at, max),
    }
}

/// Set of one attribute (`subn_set_opa_sma()`).
pub(crate) fn set(
    attr: u16,
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    match attr {
        ATTR_PORT_INFO => sma_port::set_portinfo(sma, ans, am, at, max),
        0x87 => sma_port::set_psi(sma, ans, am, at, max),
        _ => sma_tables::set(attr, sma, ans, am, at, max),
    }
}

/// Get or Set of an Aggregate: up to 117 attributes, each with its own 8-byte header
/// (`subn_get_opa_aggregate()`, `subn_set_opa_aggregate()`). The first segment whose
/// handler fails gets its error bit, and ends the answer.
fn aggregate(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, set_it: bool) -> Step {
    let n = am & 0xff;
    if !(1..=117).contains(&n) {
        return invalid(ans);
    }
    let mut next = at;
    for _ in 0..n {
        let attr = ans.be16_at(next);
        let erl = ans.be16_at(next + 2);
        let seg_am = ans.be32_at(next + 4);
        let data_len = usize::from(erl & 0x7f) * 8;
        let size = 8 + data_len;
        ans.len += size;
        if next + size > OPA_MAD_SIZE {
            return invalid(ans);
        }
        let step = if set_it {
            set(attr, sma, ans, seg_am, next + 8, data_len)
        } else {
            ans.zero(next + 8, data_len);
            get(attr, sma, ans, seg_am, next + 8, data_len)
        };
        if let Step::Consumed = step {
            return Step::Consumed;
        }
        if ans.status() & STATUS_INVALID_FIELD != 0 {
            break;
        }
        if ans.status() & !STATUS_DIRECTION != 0 {
            ans.put_be16(next + 2, erl | 0x8000);
            return Step::Added(0);
        }
        next += size;
    }
    Step::Added(0)
}

/// An IB SMP (`process_subn()`): Get(NodeInfo) is answered, with OPA's base and class
/// version; any other Get is unsupported; other methods go on to the agents.
fn subn_ib(
    dev: &ProviderDevice<Hfi>,
    port: &Arc<Port>,
    req: &MadRequest<'_>,
    reply: &mut MadReply<'_>,
) -> MadVerdict {
    let Some(smp) = req.smp() else {
        return MadVerdict::Failure;
    };
    let hdr = req.hdr();
    let Some(mut ans) = Answer::new(req, reply) else {
        return MadVerdict::Failure;
    };
    if hdr.class_version != 1 {
        ans.fail(STATUS_UNSUP_VERSION);
        return ans.reply();
    }
    if !mkey_passes(dev, port, req) {
        return MadVerdict::Failure;
    }
    match (hdr.method, hdr.attr_id) {
        (METHOD_GET, ATTR_NODE_INFO) => {
            sma_node::get_ib_nodeinfo(dev, port, &mut ans, hdr.attr_mod, smp.data_offset());
            ans.reply()
        }
        (METHOD_GET, _) => {
            ans.fail(STATUS_UNSUP_METH_ATTR);
            ans.reply()
        }
        // As hfi1: no answer, and the agents see it.
        _ => MadVerdict::Failure,
    }
}
