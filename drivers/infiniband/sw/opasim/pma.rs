// SPDX-License-Identifier: GPL-2.0-only

//! The PMA of each opasim port, as hfi1's `process_perf_opa()` and `process_perf()`
//! (`hw/hfi1/mad.c`): ClassPortInfo, PortStatus, DataPortCounters, ErrorPortCounters,
//! ErrorInfo and ClearPortStatus of OPA's PM class; PortCounters and PortCountersExtended of
//! IB's, which `/sys/class/infiniband/*/ports/*/counters` reads.
//!
//! The counters are the port's own ([`crate::port::Counters`]), moving with every packet it
//! sends and receives (MADs and VNIC frames). Data counts are in flits of 8 bytes, as the
//! chip counts them. opasim counts no VL apart, no link error and no congestion: those
//! counters read 0.

use crate::{
    port::{Counters, Port},
    sma::{
        Answer, FULL_MGMT_P_KEY, LIM_MGMT_P_KEY, METHOD_GET, METHOD_GET_RESP, METHOD_SET,
        OPA_SM_CLASS_VERSION, STATUS_INVALID_FIELD, STATUS_UNSUP_METHOD, STATUS_UNSUP_METH_ATTR,
        STATUS_UNSUP_VERSION,
    },
};
use core::sync::atomic::Ordering;
use kernel::{
    rdma::provider::mad::{MadReply, MadRequest, MadVerdict, MAD_HDR_SIZE, OPA_BASE_VERSION},
    sync::Arc,
};

/// Attribute ClassPortInfo.
const ATTR_CLASS_PORT_INFO: u16 = 0x01;
/// Attribute PortStatus (OPA).
const ATTR_PORT_STATUS: u16 = 0x40;
/// Attribute ClearPortStatus (OPA).
const ATTR_CLEAR_PORT_STATUS: u16 = 0x41;
/// Attribute DataPortCounters (OPA).
const ATTR_DATA_PORT_COUNTERS: u16 = 0x42;
/// Attribute ErrorPortCounters (OPA).
const ATTR_ERROR_PORT_COUNTERS: u16 = 0x43;
/// Attribute ErrorInfo (OPA).
const ATTR_ERROR_INFO: u16 = 0x44;
/// Attribute PortCounters (IB).
const ATTR_IB_PORT_COUNTERS: u16 = 0x12;
/// Attribute PortCountersExtended (IB).
const ATTR_IB_PORT_COUNTERS_EXT: u16 = 0x1d;

/// Status: the response would not fit (`OPA_PM_STATUS_REQUEST_TOO_LARGE`).
const STATUS_REQUEST_TOO_LARGE: u16 = 0x0100;

/// The VLs a VL select mask may name: data VLs 0-7 and VL15 (`VL_MASK_ALL`).
const VL_MASK_ALL: u32 = 0x80ff;

/// The bytes of a PM MAD's data (`struct opa_pma_mad`).
const PMA_DATA_LEN: usize = 2024;

/// The link quality of a working link (`OPA_LINK_QUALITY_EXCELLENT`).
const LINK_QUALITY_EXCELLENT: u8 = 5;

/// ClearPortStatus's counter select bits opasim has counters for (`CS_*`).
const CS_PORT_XMIT_DATA: u32 = 1 << 31;
const CS_PORT_RCV_DATA: u32 = 1 << 30;
const CS_PORT_XMIT_PKTS: u32 = 1 << 29;
const CS_PORT_RCV_PKTS: u32 = 1 << 28;
const CS_PORT_RCV_CONSTRAINT_ERRORS: u32 = 1 << 16;
const CS_PORT_XMIT_DISCARDS: u32 = 1 << 14;
const CS_PORT_RCV_ERRORS: u32 = 1 << 10;

/// Whether a performance MAD's P_Key may reach the PMA (`hfi1_pkey_validation_pma()`): a
/// management P_Key unless it comes from this node, and not the limited one if the port is a
/// full management member.
pub(crate) fn pkey_valid(req: &MadRequest<'_>, port: &Port, local: bool) -> bool {
    let c = port.config();
    let idx = req.source().map_or(0, |s| s.pkey_index);
    let p = c.pkeys.get(usize::from(idx)).copied().unwrap_or(0);
    if !local && p != LIM_MGMT_P_KEY && p != FULL_MGMT_P_KEY {
        return false;
    }
    !(p == LIM_MGMT_P_KEY && c.pkeys.contains(&FULL_MGMT_P_KEY))
}

/// The port's counters, read once.
struct Snapshot {
    xmit_flits: u64,
    rcv_flits: u64,
    xmit_pkts: u64,
    rcv_pkts: u64,
    xmit_discards: u64,
    rcv_constraint: u64,
    rcv_errors: u64,
}

impl Snapshot {
    fn read(port: &Port) -> Self {
        let c = &port.counters;
        Self {
            xmit_flits: Counters::get(&c.xmit_bytes) / 8,
            rcv_flits: Counters::get(&c.rcv_bytes) / 8,
            xmit_pkts: Counters::get(&c.xmit_packets),
            rcv_pkts: Counters::get(&c.rcv_packets),
            xmit_discards: Counters::get(&c.xmit_unknown_dlid)
                + Counters::get(&c.xmit_bad_pkey)
                + port.tx_drops.total(),
            rcv_constraint: Counters::get(&c.rcv_bad_pkey),
            rcv_errors: Counters::get(&c.rcv_errors),
        }
    }
}

/// The number of the port a port select mask names (its lowest bit of the last word, as
/// hfi1's `find_first_bit()`), 64 for none.
fn selected_port(ans: &Answer<'_>, at: usize) -> u32 {
    ans.be64_at(at + 24).trailing_zeros()
}

/// An OPA performance MAD (`process_perf_opa()`).
pub(crate) fn process_opa(
    port: &Arc<Port>,
    req: &MadRequest<'_>,
    reply: &mut MadReply<'_>,
) -> MadVerdict {
    let hdr = req.hdr();
    let Some(mut ans) = Answer::new(req, reply) else {
        return MadVerdict::Failure;
    };
    if let Some(s) = req.source() {
        ans.len = (s.byte_len as usize)
            .saturating_sub(40)
            .min(req.bytes().len());
    }
    if hdr.class_version != OPA_SM_CLASS_VERSION {
        ans.fail(STATUS_UNSUP_VERSION);
        return ans.reply();
    }
    ans.len = MAD_HDR_SIZE;
    let at = MAD_HDR_SIZE;
    let added = match (hdr.method, hdr.attr_id) {
        (METHOD_GET, ATTR_CLASS_PORT_INFO) => class_port_info(&mut ans, hdr.attr_mod, at),
        (METHOD_GET, ATTR_PORT_STATUS) => port_status(port, &mut ans, hdr.attr_mod, at),
        (METHOD_GET, ATTR_DATA_PORT_COUNTERS) => data_counters(port, &mut ans, hdr.attr_mod, at),
        (METHOD_GET, ATTR_ERROR_PORT_COUNTERS) => error_counters(port, &mut ans, hdr.attr_mod, at),
        (METHOD_GET | METHOD_SET, ATTR_ERROR_INFO) => error_info(port, &mut ans, hdr.attr_mod, at),
        (METHOD_SET, ATTR_CLEAR_PORT_STATUS) => clear_status(port, &mut ans, hdr.attr_mod, at),
        (METHOD_GET | METHOD_SET, _) => {
            ans.fail(STATUS_UNSUP_METH_ATTR);
            0
        }
        // Traps and responses are the agents' (the PM's).
        (0x05 | METHOD_GET_RESP, _) => return MadVerdict::Pass,
        _ => {
            ans.fail(STATUS_UNSUP_METHOD);
            0
        }
    };
    ans.len += added;
    ans.reply()
}

/// Get(ClassPortInfo) (`pma_get_opa_classportinfo()`): OPA versions, response time 2^18.
fn class_port_info(ans: &mut Answer<'_>, am: u32, at: usize) -> usize {
    ans.zero(at, PMA_DATA_LEN);
    if am != 0 {
        ans.fail(STATUS_INVALID_FIELD);
    }
    ans.put_u8(at, OPA_BASE_VERSION);
    ans.put_u8(at + 1, OPA_SM_CLASS_VERSION);
    ans.put_be32(at + 4, 18);
    // `struct opa_class_port_info`.
    72
}

/// Checks a VL select mask; the number of VLs it names.
fn vls(ans: &mut Answer<'_>, mask: u32) -> Option<usize> {
    if mask & !VL_MASK_ALL != 0 {
        ans.fail(STATUS_INVALID_FIELD);
        return None;
    }
    Some(mask.count_ones() as usize)
}

/// Get(PortStatus) (`pma_get_opa_portstatus()`): the port's counters, then per VL selected
/// (opasim counts no VL apart: zeros).
fn port_status(port: &Port, ans: &mut Answer<'_>, am: u32, at: usize) -> usize {
    let port_num = u32::from(ans.u8_at(at));
    let mask = ans.be32_at(at + 4);
    let n = mask.count_ones() as usize;
    let size = 216 + 112 * n;
    if size > PMA_DATA_LEN {
        ans.fail(STATUS_REQUEST_TOO_LARGE);
        return 0;
    }
    if am >> 24 != 1 || (port_num != 0 && port_num != port.num) || vls(ans, mask).is_none() {
        ans.fail(STATUS_INVALID_FIELD);
        return 0;
    }
    let s = Snapshot::read(port);
    ans.zero(at, PMA_DATA_LEN);
    ans.put_u8(at, port.num as u8);
    ans.put_be32(at + 4, mask);
    ans.put_be64(at + 8, s.xmit_flits);
    ans.put_be64(at + 16, s.rcv_flits);
    ans.put_be64(at + 24, s.xmit_pkts);
    ans.put_be64(at + 32, s.rcv_pkts);
    ans.put_be64(at + 128, s.rcv_constraint);
    ans.put_be64(at + 144, s.xmit_discards);
    ans.put_be64(at + 176, s.rcv_errors);
    ans.put_u8(at + 209, link_quality(port));
    size
}

fn link_quality(port: &Port) -> u8 {
    if port.config().active() {
        LINK_QUALITY_EXCELLENT
    } else {
        0
    }
}

/// Checks the port and VL selects of a counters request (`pma_get_opa_datacounters()`,
/// `pma_get_opa_porterrors()`): one port, the one the MAD came in on.
fn counters_request(
    port: &Port,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    base: usize,
    per_vl: usize,
) -> Option<usize> {
    let mask = ans.be32_at(at + 32);
    let n = vls(ans, mask)?;
    if am >> 24 != 1 {
        ans.fail(STATUS_INVALID_FIELD);
        return None;
    }
    let size = 40 + base + per_vl * n;
    if size > PMA_DATA_LEN || selected_port(ans, at) != port.num {
        ans.fail(STATUS_INVALID_FIELD);
        return None;
    }
    Some(size)
}

/// Get(DataPortCounters) (`pma_get_opa_datacounters()`).
fn data_counters(port: &Port, ans: &mut Answer<'_>, am: u32, at: usize) -> usize {
    let Some(size) = counters_request(port, ans, am, at, 136, 104) else {
        return 0;
    };
    let s = Snapshot::read(port);
    let p = at + 40;
    ans.zero(p, PMA_DATA_LEN - 40);
    ans.put_u8(p, port.num as u8);
    ans.put_be32(p + 4, link_quality(port).into());
    ans.put_be64(p + 8, s.xmit_flits);
    ans.put_be64(p + 16, s.rcv_flits);
    ans.put_be64(p + 24, s.xmit_pkts);
    ans.put_be64(p + 32, s.rcv_pkts);
    // PortErrorCounterSummary: the sum of the error counters.
    ans.put_be64(p + 128, s.rcv_constraint + s.xmit_discards + s.rcv_errors);
    size
}

/// Get(ErrorPortCounters) (`pma_get_opa_porterrors()`).
fn error_counters(port: &Port, ans: &mut Answer<'_>, am: u32, at: usize) -> usize {
    let Some(size) = counters_request(port, ans, am, at, 96, 8) else {
        return 0;
    };
    let s = Snapshot::read(port);
    let p = at + 40;
    ans.zero(p, PMA_DATA_LEN - 40);
    ans.put_u8(p, port.num as u8);
    ans.put_be64(p + 8, s.rcv_constraint);
    ans.put_be64(p + 24, s.xmit_discards);
    ans.put_be64(p + 56, s.rcv_errors);
    size
}

/// Get or Set(ErrorInfo) (`pma_get_opa_errorinfo()`, `pma_set_opa_errorinfo()`): opasim
/// records no error details, so every status reads "no error".
fn error_info(port: &Port, ans: &mut Answer<'_>, am: u32, at: usize) -> usize {
    if am >> 24 != 1 || selected_port(ans, at) != port.num {
        ans.fail(STATUS_INVALID_FIELD);
        return 0;
    }
    ans.zero(at + 40, 72);
    ans.put_u8(at + 40, port.num as u8);
    40 + 72
}

/// Set(ClearPortStatus) (`pma_set_opa_portstatus()`): zeroes the selected counters of the
/// port.
fn clear_status(port: &Port, ans: &mut Answer<'_>, am: u32, at: usize) -> usize {
    if am >> 24 != 1 || selected_port(ans, at) != port.num {
        ans.fail(STATUS_INVALID_FIELD);
        return 0;
    }
    let sel = ans.be32_at(at + 32);
    let c = &port.counters;
    let zero = |bit: u32, ctrs: &[&core::sync::atomic::AtomicU64]| {
        if sel & bit != 0 {
            for x in ctrs {
                x.store(0, Ordering::Relaxed);
            }
        }
    };
    zero(CS_PORT_XMIT_DATA, &[&c.xmit_bytes]);
    zero(CS_PORT_RCV_DATA, &[&c.rcv_bytes]);
    zero(CS_PORT_XMIT_PKTS, &[&c.xmit_packets]);
    zero(CS_PORT_RCV_PKTS, &[&c.rcv_packets]);
    zero(CS_PORT_RCV_CONSTRAINT_ERRORS, &[&c.rcv_bad_pkey]);
    zero(
        CS_PORT_XMIT_DISCARDS,
        &[&c.xmit_unknown_dlid, &c.xmit_bad_pkey],
    );
    if sel & CS_PORT_XMIT_DISCARDS != 0 {
        port.tx_drops.clear();
    }
    zero(CS_PORT_RCV_ERRORS, &[&c.rcv_errors]);
    36
}

/// An IB performance MAD (`process_perf()`): PortCounters and PortCountersExtended from the
/// same counters, ClassPortInfo with the extended-width capability.
pub(crate) fn process_ib(
    port: &Arc<Port>,
    req: &MadRequest<'_>,
    reply: &mut MadReply<'_>,
) -> MadVerdict {
    let hdr = req.hdr();
    let Some(mut ans) = Answer::new(req, reply) else {
        return MadVerdict::Failure;
    };
    if hdr.class_version != 1 {
        ans.fail(STATUS_UNSUP_VERSION);
        return ans.reply();
    }
    // IB PM data starts after 40 reserved bytes.
    let at = 64;
    let s = Snapshot::read(port);
    match (hdr.method, hdr.attr_id) {
        (METHOD_GET, ATTR_IB_PORT_COUNTERS) => {
            let sel = ans.u8_at(at + 1);
            ans.zero(at, 192);
            if sel != 0 && u32::from(sel) != port.num && sel != 0xff {
                ans.fail(STATUS_INVALID_FIELD);
                return ans.reply();
            }
            ans.put_u8(at + 1, sel);
            let sat16 = |v: u64| v.min(0xffff) as u16;
            let sat32 = |v: u64| v.min(0xffff_ffff) as u32;
            ans.put_be16(at + 8, sat16(s.rcv_errors));
            ans.put_be16(at + 12, sat16(s.rcv_constraint));
            ans.put_be16(at + 14, sat16(s.xmit_discards));
            // Data in 4-byte words: two per flit.
            ans.put_be32(at + 24, sat32(s.xmit_flits * 2));
            ans.put_be32(at + 28, sat32(s.rcv_flits * 2));
            ans.put_be32(at + 32, sat32(s.xmit_pkts));
            ans.put_be32(at + 36, sat32(s.rcv_pkts));
        }
        (METHOD_GET, ATTR_IB_PORT_COUNTERS_EXT) => {
            let sel = ans.u8_at(at + 1);
            ans.zero(at, 192);
            ans.put_u8(at + 1, sel);
            ans.put_be64(at + 8, s.xmit_flits * 2);
            ans.put_be64(at + 16, s.rcv_flits * 2);
            ans.put_be64(at + 24, s.xmit_pkts);
            ans.put_be64(at + 32, s.rcv_pkts);
        }
        (METHOD_GET, ATTR_CLASS_PORT_INFO) => {
            // IB_PMA_CLASS_CAP_EXT_WIDTH.
            ans.put_be16(at + 2, 1 << 9);
        }
        (METHOD_GET, _) => ans.fail(STATUS_UNSUP_METH_ATTR),
        (METHOD_SET, 0) => return MadVerdict::Failure,
        (METHOD_SET, _) => ans.fail(STATUS_UNSUP_METH_ATTR),
        (0x05 | METHOD_GET_RESP, _) => return MadVerdict::Pass,
        _ => ans.fail(STATUS_UNSUP_METHOD),
    }
    ans.reply()
}
