// SPDX-License-Identifier: GPL-2.0

//! The SA client and its one request: a MAD built as opamgt builds it, asked again after
//! silence and after BUSY, the answer checked. What is asked for is the other files' job.

use std::time::Duration;

use opa_wire::sa::{
    self, SaHdr, SaMad, MAD_STATUS_BUSY, METHOD_GET, METHOD_GET_RESP, METHOD_GET_TABLE,
    METHOD_GET_TABLE_RESP, METHOD_SET,
};

use crate::fabric::Fabric;

use super::SaError;

/// How many BUSY answers the client takes before it gives up.
pub const BUSY_RETRIES: u32 = 8;
/// The pause after the first BUSY answer; it doubles after each, up to [`BUSY_PAUSE_MAX`].
pub const BUSY_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between two BUSY answers.
pub const BUSY_PAUSE_MAX: Duration = Duration::from_secs(2);

/// An SA client over the EM's transport.
pub struct SaClient<'a, F: Fabric> {
    /// The transport; the tables' reader asks it whether the port may ask at all.
    pub(super) fabric: &'a mut F,
    timeout: Duration,
    retries: u32,
    tid: u32,
    busy_retries: u32,
    busy_pause: Duration,
}

impl<'a, F: Fabric> SaClient<'a, F> {
    /// A client waiting `timeout` for each answer, with `retries` more attempts.
    pub fn new(fabric: &'a mut F, timeout: Duration, retries: u32) -> Self {
        let tid = std::process::id().wrapping_mul(0x0002_0005) | 0x8000_0000;
        SaClient {
            fabric,
            timeout,
            retries,
            tid,
            busy_retries: BUSY_RETRIES,
            busy_pause: BUSY_PAUSE,
        }
    }

    /// The client taking `retries` BUSY answers, pausing `pause` after the first (tests).
    pub fn with_busy(mut self, retries: u32, pause: Duration) -> Self {
        self.busy_retries = retries;
        self.busy_pause = pause;
        self
    }

    /// One query with retries, at OPA's versions: the answer's status and records (one for a
    /// GetResp).
    pub(super) fn query(
        &mut self,
        what: &'static str,
        method: u8,
        attr: u16,
        mask: u64,
        template: &[u8],
    ) -> Result<(u16, Vec<Vec<u8>>), SaError> {
        self.query_as(false, what, method, attr, mask, template)
    }

    /// [`Self::query`] at InfiniBand's versions, the only ones opa-fm serves McMemberRecords
    /// and PathRecords at.
    pub(super) fn query_ib(
        &mut self,
        what: &'static str,
        method: u8,
        attr: u16,
        mask: u64,
        template: &[u8],
    ) -> Result<(u16, Vec<Vec<u8>>), SaError> {
        self.query_as(true, what, method, attr, mask, template)
    }

    fn query_as(
        &mut self,
        ib: bool,
        what: &'static str,
        method: u8,
        attr: u16,
        mask: u64,
        template: &[u8],
    ) -> Result<(u16, Vec<Vec<u8>>), SaError> {
        let encode = if ib { sa::encode_ib } else { sa::encode };
        let attempts = self.retries.saturating_add(1);
        let mut silent = 0u32;
        let mut busy = 0u32;
        let mut pause = self.busy_pause;
        let mut waited = Duration::ZERO;
        while silent < attempts {
            self.tid = self.tid.wrapping_add(1);
            let mut mad = vec![0u8; sa::SA_DATA_OFFSET + template.len()];
            let sa_hdr = SaHdr {
                comp_mask: mask,
                ..SaHdr::default()
            };
            let n = encode(
                &mut mad,
                method,
                0,
                u64::from(self.tid),
                attr,
                0,
                &sa_hdr,
                template,
            )
            .map_err(|e| SaError::Bad(format!("{e:?}")))?;
            mad.truncate(n);
            let Some(rsp) = self.fabric.sa_request(&mad, self.timeout)? else {
                silent = silent.saturating_add(1);
                continue;
            };
            let m = if ib {
                SaMad::decode_ib(&rsp)
            } else {
                SaMad::decode(&rsp)
            }
            .map_err(|e| SaError::Bad(format!("{e:?}")))?;
            if m.hdr.status == MAD_STATUS_BUSY {
                busy = busy.saturating_add(1);
                if busy > self.busy_retries {
                    return Err(SaError::Busy {
                        what,
                        answers: busy,
                        waited,
                    });
                }
                std::thread::sleep(pause);
                waited = waited.saturating_add(pause);
                pause = pause
                    .saturating_mul(2)
                    .min(BUSY_PAUSE_MAX.max(self.busy_pause));
                continue;
            }
            let want = if method == METHOD_GET || method == METHOD_SET {
                METHOD_GET_RESP
            } else {
                METHOD_GET_TABLE_RESP
            };
            if m.hdr.method != want || m.hdr.attr_id != attr {
                return Err(SaError::Bad(format!(
                    "method {:#04x} attribute {:#06x} for {what}",
                    m.hdr.method, m.hdr.attr_id
                )));
            }
            let recs = if method != METHOD_GET_TABLE {
                if m.hdr.status == 0 {
                    vec![m.data.to_vec()]
                } else {
                    vec![]
                }
            } else {
                m.records().map(<[u8]>::to_vec).collect()
            };
            return Ok((m.hdr.status, recs));
        }
        Err(SaError::Timeout { attempts })
    }
}
