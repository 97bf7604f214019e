// SPDX-License-Identifier: GPL-2.0

//! The SA's ClassPortInfo, as opa-fm's `sa_ClassPortInfo()` (`sa_ClassPortInfo.c`) answers
//! it from the `saClassPortInfo` that `sa_main()` fills: a Get at OPA's versions gets the
//! 80-byte `STL_CLASS_PORT_INFO`, a Get at InfiniBand's the 72-byte `IB_CLASS_PORT_INFO`
//! (with OPA's base and class versions in it, as opa-fm copies them); any other method is an
//! unsupported one.
//!
//! The kernel's `ib_sa` asks for it on every port at each SM change, LID change, client
//! reregistration and port activation (`update_ib_cpi()`, `sa_query.c`), and asks again
//! three times, a second apart, until it has a valid one. An SA that refuses it makes every
//! port ask four times per event, which buries the requests that follow.

use super::{ib_versions, refusal, reply, Answer};
use opa_wire::sa::{
    attr_offset, SaHdr, SaMad, METHOD_GET, METHOD_GET_RESP, SA_BASE_VERSION, SA_CLASS_VERSION,
};
use opa_wire::wire::mad::MAD_STATUS_UNSUPPORTED_METHOD;

/// `STL_CLASS_PORT_CAPMASK_CM2 | STL_SA_CAPABILITY_MULTICAST_SUPPORT |
/// STL_SA_CAPABILITY_PORTINFO_CAPMASK_MATCH | STL_SA_CAPABILITY_PA_SERVICES_SUPPORT`.
const CAP_MASK: u16 = 0x0004 | 0x0200 | 0x2000 | 0x8000;
/// `STL_SA_CAPABILITY2_QOS_SUPPORT | _MFTTOP_SUPPORT | _FULL_PORTINFO | _EXT_SUPPORT`: what
/// the InfiniBand form says.
const CAP_MASK2_IB: u32 = 0x02 | 0x08 | 0x40 | 0x80;
/// The OPA form adds `STL_SA_CAPABILITY2_DGDTRECORD_SUPPORT`.
const CAP_MASK2_OPA: u32 = CAP_MASK2_IB | 0x0100_0000;
/// `sm_config.sa_resp_time_n2` by default: 2^18 x 4.096 us.
const RESP_TIME_VALUE: u32 = 18;
/// `saClassPortInfo.u5.s.TrapHopLimit` and `TrapQP`, and `u3.s.RedirectQP`.
const TRAP_HOP_LIMIT: u32 = 0xff;
const TRAP_QP: u32 = 1;
const REDIRECT_QP: u32 = 1;

/// Size of `IB_CLASS_PORT_INFO` and of `STL_CLASS_PORT_INFO`.
const IB_SIZE: usize = 72;
const OPA_SIZE: usize = 80;

/// The answer to a ClassPortInfo request `req`, at InfiniBand's versions when `ib`.
pub(super) fn class_port_info(req: &SaMad<'_>, ib: bool) -> Answer {
    let (method, tid, attr) = (req.hdr.method, req.hdr.tid, req.hdr.attr_id);
    let form = if ib { "IB" } else { "OPA" };
    let a = if method == METHOD_GET {
        let data = if ib { ib_form() } else { opa_form() };
        let sa = SaHdr {
            sm_key: 0,
            attr_offset: attr_offset(data.len()),
            comp_mask: req.sa.comp_mask,
        };
        let s = format!("ClassPortInfo Get ({form} form)");
        reply(METHOD_GET_RESP, 0, tid, attr, &sa, &data, s)
    } else {
        let s = format!("ClassPortInfo method {method:#04x} ({form} versions): unsupported method");
        refusal(req, METHOD_GET_RESP, MAD_STATUS_UNSUPPORTED_METHOD, s)
    };
    if ib {
        ib_versions(a)
    } else {
        a
    }
}

/// One form: versions, CapMask, CapMask2 with RespTimeValue, RedirectQP at byte 32 and
/// TrapHopLimit with TrapQP at byte 64 (where both forms have them), zeros elsewhere, `size`
/// bytes in all.
fn form(cap_mask2: u32, size: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(size);
    b.extend_from_slice(&[SA_BASE_VERSION, SA_CLASS_VERSION]);
    b.extend_from_slice(&CAP_MASK.to_be_bytes());
    b.extend_from_slice(&((cap_mask2 << 5) | RESP_TIME_VALUE).to_be_bytes());
    b.resize(32, 0);
    b.extend_from_slice(&REDIRECT_QP.to_be_bytes());
    b.resize(64, 0);
    b.extend_from_slice(&((TRAP_HOP_LIMIT << 24) | TRAP_QP).to_be_bytes());
    b.resize(size, 0);
    b
}

/// `IB_CLASS_PORT_INFO` (IBA 13.4.8.1).
fn ib_form() -> Vec<u8> {
    form(CAP_MASK2_IB, IB_SIZE)
}

/// `STL_CLASS_PORT_INFO` (opa-ff's `stl_mad_types.h`): the LIDs 32 bits wide, RedirectSL
/// beside RedirectQP, the P_Keys moved to the end; the same bytes where this SA sets any.
fn opa_form() -> Vec<u8> {
    form(CAP_MASK2_OPA, OPA_SIZE)
}
