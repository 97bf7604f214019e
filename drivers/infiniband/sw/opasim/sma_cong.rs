// SPDX-License-Identifier: GPL-2.0-only

//! The SMA's congestion control attributes, as hfi1 answers them (`mad.c`:
//! `__subn_get_opa_cong_info()`, `__subn_{get,set}_opa_cong_setting()`,
//! `__subn_get_opa_hfi1_cong_log()`, `__subn_{get,set}_opa_cc_table()`): the SM's settings
//! are kept and read back; opasim marks no packet with a congestion notification, so the
//! log holds no event.

use crate::sma::{invalid, Answer, Sma, Step, STATUS_INVALID_FIELD};
use kernel::{prelude::*, time::Ktime};

/// The SLs a congestion setting has an entry for (`OPA_MAX_SLS`).
const SLS: usize = 32;
/// The bytes of an SL's congestion setting (`struct opa_congestion_setting_entry`).
const SETTING_ENTRY: usize = 6;
/// The bytes of HFICongestionSetting (`struct opa_congestion_setting_attr`).
const SETTING_LEN: usize = 6 + SLS * SETTING_ENTRY;
/// The blocks of the congestion control table (`IB_CC_TABLE_CAP_DEFAULT`).
const CCT_BLOCKS: usize = 31;
/// The entries of a table block (`IB_CCT_ENTRIES`).
const CCT_ENTRIES: usize = 64;
/// The events of the congestion log (`OPA_CONG_LOG_ELEMS`).
const LOG_ELEMS: usize = 96;
/// The bytes of HFICongestionLog (`struct opa_hfi1_cong_log`).
const LOG_LEN: usize = 12 + LOG_ELEMS * 16;
/// The log type of an HFI (`OPA_CC_LOG_TYPE_HFI`).
const LOG_TYPE_HFI: u8 = 2;
/// Congestion control by SL (`IB_CC_CCS_PC_SL_BASED`).
const PORT_CONTROL_SL_BASED: u16 = 1;

/// A port's congestion control state, as the SM sets it.
pub(crate) struct Congestion {
    /// `Control_Map`: the SLs whose entries apply.
    control_map: u32,
    /// Each SL's entry, as on the wire.
    entries: [[u8; SETTING_ENTRY]; SLS],
    /// `CCTI_Limit`.
    ccti_limit: u16,
    /// The congestion control table.
    cct: KVec<u16>,
}

impl Congestion {
    /// The state after reset: nothing set, an empty table.
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            control_map: 0,
            entries: [[0; SETTING_ENTRY]; SLS],
            ccti_limit: 0,
            cct: KVec::from_elem(0, CCT_BLOCKS * CCT_ENTRIES, GFP_KERNEL)?,
        })
    }
}

/// Get(CongestionInfo): no congestion info flags, the table's blocks, the log's length.
pub(crate) fn get_info(ans: &mut Answer<'_>, at: usize, max: usize) -> Step {
    if max < 4 {
        return invalid(ans);
    }
    ans.put_u8(at + 2, CCT_BLOCKS as u8);
    ans.put_u8(at + 3, LOG_ELEMS as u8);
    Step::Added(4)
}

/// Get(HFICongestionSetting).
pub(crate) fn get_setting(sma: &Sma<'_>, ans: &mut Answer<'_>, at: usize, max: usize) -> Step {
    if max < SETTING_LEN {
        return invalid(ans);
    }
    let c = sma.port.congestion.lock();
    ans.put_be32(at, c.control_map);
    ans.put_be16(at + 4, PORT_CONTROL_SL_BASED);
    for (i, e) in c.entries.iter().enumerate() {
        ans.put(at + 6 + i * SETTING_ENTRY, e);
    }
    Step::Added(SETTING_LEN)
}

/// Set(HFICongestionSetting): the control map and each SL's entry; the answer as a Get.
pub(crate) fn set_setting(sma: &Sma<'_>, ans: &mut Answer<'_>, at: usize, max: usize) -> Step {
    if max < SETTING_LEN {
        return invalid(ans);
    }
    {
        let mut c = sma.port.congestion.lock();
        c.control_map = ans.be32_at(at);
        for (i, e) in c.entries.iter_mut().enumerate() {
            let src = ans.bytes(at + 6 + i * SETTING_ENTRY, SETTING_ENTRY);
            if let Ok(src) = <[u8; SETTING_ENTRY]>::try_from(src) {
                // The reserved byte stays 0.
                *e = [src[0], 0, src[2], src[3], src[4], src[5]];
            }
        }
    }
    get_setting(sma, ans, at, max)
}

/// Get(HFICongestionLog): the HFI's log type, the time in 1.024 us units, no events.
pub(crate) fn get_log(ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am != 0 || max < LOG_LEN {
        return invalid(ans);
    }
    ans.put_u8(at, LOG_TYPE_HFI);
    ans.put_be32(at + 4, (Ktime::ktime_get().to_ns() / 1024) as u32);
    Step::Added(LOG_LEN)
}

/// The blocks a table request names (`OPA_AM_NBLK()`, `OPA_AM_START_BLK()`) and its size,
/// when they are the table's and fit.
fn cct_request(am: u32, max: usize) -> Option<(usize, usize, usize)> {
    let n = (am >> 24) as usize;
    let start = (am & 0xff) as usize;
    let size = 2 * (CCT_ENTRIES * n + 1);
    (n != 0 && size <= max && start + n <= CCT_BLOCKS).then_some((start, n, size))
}

/// Get(CongestionControlTable): `CCTI_Limit`, then the entries of the blocks asked for.
pub(crate) fn get_table(
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    let Some((start, n, size)) = cct_request(am, max) else {
        ans.fail(STATUS_INVALID_FIELD);
        return Step::Added(0);
    };
    let c = sma.port.congestion.lock();
    ans.put_be16(at, c.ccti_limit);
    let first = start * CCT_ENTRIES;
    for (j, e) in c.cct.iter().skip(first).take(n * CCT_ENTRIES).enumerate() {
        ans.put_be16(at + 2 + 2 * j, *e);
    }
    Step::Added(size)
}

/// Set(CongestionControlTable): the entries up to `CCTI_Limit` in the last block; a limit
/// beyond the blocks sent is refused.
pub(crate) fn set_table(
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    let Some((start, n, _)) = cct_request(am, max) else {
        ans.fail(STATUS_INVALID_FIELD);
        return Step::Added(0);
    };
    let limit = usize::from(ans.be16_at(at));
    let first = start * CCT_ENTRIES;
    let end = first + (n - 1) * CCT_ENTRIES + limit % CCT_ENTRIES + 1;
    if limit + 1 > end {
        return invalid(ans);
    }
    {
        let mut c = sma.port.congestion.lock();
        c.ccti_limit = limit as u16;
        for (j, i) in (first..end).enumerate() {
            let v = ans.be16_at(at + 2 + 2 * j);
            if let Some(e) = c.cct.get_mut(i) {
                *e = v;
            }
        }
    }
    get_table(sma, ans, am, at, max)
}
