// SPDX-License-Identifier: GPL-2.0

//! RMPP-active VEMA requests, cut into segments by hand, and what an answer to one says
//! (`mad-rmpp`).
//!
//! A VEMA agent registered with an RMPP version makes the MAD layer reassemble RMPP-active
//! requests before the agent sees them, and the MAD layer then talks RMPP (ACKs, time-outs)
//! with the requester. The requests here are written to umad by an agent without RMPP, so
//! the MAD layer of the requester sends every segment as it is and hands back every answer
//! as it comes, ACKs included: what the agent's side did is seen whole.

use opa_wire::mad::{
    IB_MGMT_VENDOR_HDR, INTEL_OUI, METHOD_GET, METHOD_RESP, OPA_EMA_CLASS_VERSION,
    OPA_MGMT_BASE_VERSION, OPA_MGMT_CLASS_INTEL_EMA, OPA_MGMT_MAD_SIZE, OPA_VNIC_EMA_DATA,
};

/// `IB_MGMT_RMPP_VERSION`.
pub const RMPP_VERSION: u8 = 1;
/// RMPP type DATA.
pub const TYPE_DATA: u8 = 1;
/// RMPP type ACK.
pub const TYPE_ACK: u8 = 2;
/// RMPP type STOP.
pub const TYPE_STOP: u8 = 3;
/// RMPP type ABORT.
pub const TYPE_ABORT: u8 = 4;
/// RMPP flag Active (bit 0 of `rmpp_rtime_flags`).
pub const FLAG_ACTIVE: u8 = 0x01;
/// RMPP flag First.
pub const FLAG_FIRST: u8 = 0x02;
/// RMPP flag Last.
pub const FLAG_LAST: u8 = 0x04;

/// Offset of the RMPP header in a MAD.
const RMPP_OFF: usize = 24;

/// One RMPP-active VEMA request of `data.len()` data bytes (after the 40-byte vendor
/// header), cut into whole 2048-byte OPA MADs, each with its RMPP DATA header: segment
/// numbers from 1, First on the first, Last on the last, the payload length of the whole on
/// the first and of its own part on the last (as the MAD layer's `send_next_seg()` writes
/// them). An empty `data` is one segment of zeros.
pub fn segments(method: u8, tid: u32, attr_id: u16, attr_mod: u32, data: &[u8]) -> Vec<Vec<u8>> {
    let zeros = [0u8; OPA_VNIC_EMA_DATA];
    let data = if data.is_empty() { &zeros[..] } else { data };
    let parts: Vec<&[u8]> = data.chunks(OPA_VNIC_EMA_DATA).collect();
    let n = parts.len();
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let mut mad = header(method, tid, attr_id, attr_mod);
            let mut flags = FLAG_ACTIVE;
            if i == 0 {
                flags |= FLAG_FIRST;
            }
            if i + 1 == n {
                flags |= FLAG_LAST;
            }
            let paylen = if i == 0 { data.len() } else { part.len() };
            mad[RMPP_OFF] = RMPP_VERSION;
            mad[RMPP_OFF + 1] = TYPE_DATA;
            mad[RMPP_OFF + 2] = flags;
            mad[RMPP_OFF + 4..RMPP_OFF + 8].copy_from_slice(&(i as u32 + 1).to_be_bytes());
            mad[RMPP_OFF + 8..RMPP_OFF + 12].copy_from_slice(&(paylen as u32).to_be_bytes());
            mad[IB_MGMT_VENDOR_HDR..IB_MGMT_VENDOR_HDR + part.len()].copy_from_slice(part);
            mad
        })
        .collect()
}

/// A plain VEMA request (RMPP header zero) of a whole OPA MAD, its data zero.
pub fn plain(method: u8, tid: u32, attr_id: u16, attr_mod: u32) -> Vec<u8> {
    header(method, tid, attr_id, attr_mod)
}

/// A whole OPA MAD of zeros with the VEMA vendor header and no RMPP.
fn header(method: u8, tid: u32, attr_id: u16, attr_mod: u32) -> Vec<u8> {
    let mut mad = vec![0u8; OPA_MGMT_MAD_SIZE];
    mad[0] = OPA_MGMT_BASE_VERSION;
    mad[1] = OPA_MGMT_CLASS_INTEL_EMA;
    mad[2] = OPA_EMA_CLASS_VERSION;
    mad[3] = method;
    // The TID's lower half; ib_umad writes the upper one.
    mad[12..16].copy_from_slice(&tid.to_be_bytes());
    mad[16..18].copy_from_slice(&attr_id.to_be_bytes());
    mad[20..24].copy_from_slice(&attr_mod.to_be_bytes());
    mad[37..40].copy_from_slice(&INTEL_OUI);
    mad
}

/// What one MAD that came back is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// An answer of the agent (a response method, RMPP DATA or RMPP inactive).
    Answer {
        /// Method.
        method: u8,
        /// MAD status.
        status: u16,
        /// Attribute id.
        attr_id: u16,
        /// RMPP type (0 when inactive).
        rmpp_type: u8,
        /// RMPP flags (low 3 bits of `rmpp_rtime_flags`).
        rmpp_flags: u8,
    },
    /// An RMPP ACK: the MAD layer of the agent's side doing RMPP.
    Ack {
        /// Segment acknowledged.
        seg_num: u32,
        /// New window.
        newwin: u32,
    },
    /// An RMPP STOP or ABORT, with its RMPP status.
    StopOrAbort {
        /// [`TYPE_STOP`] or [`TYPE_ABORT`].
        rmpp_type: u8,
        /// RMPP status.
        rmpp_status: u8,
    },
    /// Anything else RMPP-active (an unknown type), or a MAD that is not a response.
    Other {
        /// Method.
        method: u8,
        /// RMPP type.
        rmpp_type: u8,
        /// RMPP flags.
        rmpp_flags: u8,
    },
}

impl Reply {
    /// Classifies a MAD read from umad (at least its 40-byte vendor header; shorter reads
    /// as zeros).
    pub fn of(mad: &[u8]) -> Self {
        let b = |i: usize| mad.get(i).copied().unwrap_or(0);
        let be16 = |i: usize| u16::from_be_bytes([b(i), b(i + 1)]);
        let be32 = |i: usize| u32::from_be_bytes([b(i), b(i + 1), b(i + 2), b(i + 3)]);
        let method = b(3);
        let rmpp_type = b(RMPP_OFF + 1);
        let rmpp_flags = b(RMPP_OFF + 2) & 0x07;
        let active = rmpp_flags & FLAG_ACTIVE != 0;
        match (active, rmpp_type) {
            (true, TYPE_ACK) => Reply::Ack {
                seg_num: be32(RMPP_OFF + 4),
                newwin: be32(RMPP_OFF + 8),
            },
            (true, TYPE_STOP | TYPE_ABORT) => Reply::StopOrAbort {
                rmpp_type,
                rmpp_status: b(RMPP_OFF + 3),
            },
            (true, TYPE_DATA) | (false, _) if method & METHOD_RESP != 0 => Reply::Answer {
                method,
                status: be16(4),
                attr_id: be16(16),
                rmpp_type,
                rmpp_flags,
            },
            _ => Reply::Other {
                method,
                rmpp_type,
                rmpp_flags,
            },
        }
    }

    /// Whether this is what an agent without RMPP may send back to an RMPP-active request:
    /// an answer whose RMPP header is inactive.
    pub fn is_plain_answer(&self) -> bool {
        matches!(self, Reply::Answer { rmpp_flags, .. } if rmpp_flags & FLAG_ACTIVE == 0)
    }

    /// One line: what it is and its fields.
    pub fn describe(&self) -> String {
        match self {
            Reply::Answer {
                method,
                status,
                attr_id,
                rmpp_type,
                rmpp_flags,
            } => format!(
                "answer: method {method:#04x} status {status:#06x} attr {attr_id:#06x}, RMPP {}",
                rmpp_text(*rmpp_type, *rmpp_flags)
            ),
            Reply::Ack { seg_num, newwin } => {
                format!("RMPP ACK: segment {seg_num}, new window {newwin}")
            }
            Reply::StopOrAbort {
                rmpp_type,
                rmpp_status,
            } => format!(
                "RMPP {}: status {rmpp_status:#04x}",
                if *rmpp_type == TYPE_STOP {
                    "STOP"
                } else {
                    "ABORT"
                }
            ),
            Reply::Other {
                method,
                rmpp_type,
                rmpp_flags,
            } => format!(
                "unexpected MAD: method {method:#04x}, RMPP {}",
                rmpp_text(*rmpp_type, *rmpp_flags)
            ),
        }
    }
}

/// `inactive (type T flags 0xF)` or `active, type DATA, flags Active|First|Last`.
pub fn rmpp_text(rmpp_type: u8, flags: u8) -> String {
    let names: Vec<&str> = [
        (FLAG_ACTIVE, "Active"),
        (FLAG_FIRST, "First"),
        (FLAG_LAST, "Last"),
    ]
    .iter()
    .filter(|(f, _)| flags & f != 0)
    .map(|(_, n)| *n)
    .collect();
    let t = match rmpp_type {
        0 => "0".to_string(),
        TYPE_DATA => "DATA".to_string(),
        TYPE_ACK => "ACK".to_string(),
        TYPE_STOP => "STOP".to_string(),
        TYPE_ABORT => "ABORT".to_string(),
        t => t.to_string(),
    };
    let f = if names.is_empty() {
        format!("{flags:#x}")
    } else {
        names.join("|")
    };
    if flags & FLAG_ACTIVE == 0 {
        format!("inactive (type {t}, flags {f})")
    } else {
        format!("active (type {t}, flags {f})")
    }
}

/// The Get of a VEMA attribute, as one RMPP segment or two.
pub fn get_segments(tid: u32, attr_id: u16, attr_mod: u32, data_len: usize) -> Vec<Vec<u8>> {
    segments(METHOD_GET, tid, attr_id, attr_mod, &vec![0u8; data_len])
}

#[cfg(test)]
mod tests {
    use super::*;
    use opa_wire::mad::{ATTR_VESWPORT_INFO, METHOD_GET_RESP};

    fn be32(m: &[u8], o: usize) -> u32 {
        u32::from_be_bytes(m[o..o + 4].try_into().unwrap())
    }

    #[test]
    fn one_segment_is_first_and_last() {
        let s = get_segments(7, ATTR_VESWPORT_INFO, 0, OPA_VNIC_EMA_DATA);
        assert_eq!(s.len(), 1);
        let m = &s[0];
        assert_eq!(m.len(), OPA_MGMT_MAD_SIZE);
        assert_eq!(&m[0..4], &[0x80, 0x34, 0x80, METHOD_GET]);
        assert_eq!(be32(m, 12), 7);
        assert_eq!(&m[16..18], &ATTR_VESWPORT_INFO.to_be_bytes());
        assert_eq!(&m[24..27], &[1, TYPE_DATA, 0x07]);
        assert_eq!(be32(m, 28), 1);
        assert_eq!(be32(m, 32), 2008);
        assert_eq!(&m[37..40], &INTEL_OUI);
        // An empty request is the same single segment.
        assert_eq!(get_segments(7, ATTR_VESWPORT_INFO, 0, 0), s);
    }

    #[test]
    fn two_segments() {
        let data: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
        let s = segments(METHOD_GET, 9, ATTR_VESWPORT_INFO, 3, &data);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0][26], FLAG_ACTIVE | FLAG_FIRST);
        assert_eq!(s[1][26], FLAG_ACTIVE | FLAG_LAST);
        assert_eq!((be32(&s[0], 28), be32(&s[1], 28)), (1, 2));
        assert_eq!((be32(&s[0], 32), be32(&s[1], 32)), (3000, 992));
        assert_eq!((be32(&s[0], 20), be32(&s[1], 20)), (3, 3));
        assert_eq!(&s[0][40..], &data[..2008]);
        assert_eq!(&s[1][40..40 + 992], &data[2008..]);
        assert!(s[1][40 + 992..].iter().all(|&b| b == 0));
    }

    #[test]
    fn classify() {
        let mut m = plain(METHOD_GET, 1, ATTR_VESWPORT_INFO, 0);
        m[3] = METHOD_GET_RESP;
        m[5] = 0x1c;
        let r = Reply::of(&m);
        assert!(r.is_plain_answer());
        assert_eq!(
            r.describe(),
            "answer: method 0x81 status 0x001c attr 0x0011, RMPP inactive (type 0, flags 0x0)"
        );
        // The request's RMPP header echoed: an active answer.
        m[24..27].copy_from_slice(&[1, TYPE_DATA, 0x07]);
        let r = Reply::of(&m);
        assert!(!r.is_plain_answer());
        assert!(r
            .describe()
            .ends_with("RMPP active (type DATA, flags Active|First|Last)"));
        // A type without the Active flag is inactive all the same.
        m[26] = 0x06;
        assert!(Reply::of(&m).is_plain_answer());
        // The MAD layer's ACK of a segment.
        m[24..36].copy_from_slice(&[1, TYPE_ACK, 0x01, 0, 0, 0, 0, 1, 0, 0, 0, 65]);
        assert_eq!(
            Reply::of(&m),
            Reply::Ack {
                seg_num: 1,
                newwin: 65
            }
        );
        m[25] = TYPE_ABORT;
        m[27] = 0x76;
        assert_eq!(Reply::of(&m).describe(), "RMPP ABORT: status 0x76");
        // Not a response.
        let g = plain(METHOD_GET, 1, ATTR_VESWPORT_INFO, 0);
        assert!(matches!(Reply::of(&g), Reply::Other { .. }));
        // Short reads count as zeros.
        assert!(matches!(Reply::of(&g[..10]), Reply::Other { .. }));
        assert!(Reply::of(&m[..4]).is_plain_answer());
    }
}
