// SPDX-License-Identifier: GPL-2.0-only

//! The SMA's tables: P_KeyTable, SL2SC, SC2SL, SC2VLt, SC2VLnt, VLArbitration,
//! BufferControlTable, and CableInfo and LedInfo, as hfi1 answers them (`mad.c`:
//! `__subn_{get,set}_opa_pkeytable()`, `_sl_to_sc()`, `_sc_to_sl()`, `_sc_to_vlt()`,
//! `_sc_to_vlnt()`, `_vl_arb()`, `_bct()`, `__subn_get_opa_cable_info()`, `_led_info()`).
//! The P_Key table and SC2VLt are the ones the datapath enforces.

use crate::{
    integrity::{NUM_DATA_VLS, VL15},
    mgmt::{BCT_LEN, NUM_SC, VLARB_ELEMS},
    port::PKEY_TABLE_LEN,
    sma::{
        invalid, Answer, Sma, Step, LIM_MGMT_P_KEY, STATUS_INVALID_FIELD, STATUS_UNSUP_METH_ATTR,
    },
    sma_cong,
    sma_port::am_nport,
};
use kernel::rdma::provider::PortState;

/// The VL arbitration elements an HFI port has, as PortInfo's VLArbitrationHigh/LowCap say.
pub(crate) const VLARB_CAP: u8 = VLARB_ELEMS as u8;

/// The P_Keys of a P_Key block (`OPA_PARTITION_TABLE_BLK_SIZE`).
const PKEY_BLOCK: usize = 32;

/// An SC2VLt entry hfi1 keeps for an unused SC (`ILLEGAL_VL`), 0xf on the wire.
const ILLEGAL_VL: u8 = 12;

/// The bytes of a VL arbitration section on the wire.
const VLARB_LEN: usize = 256;

/// Get of a table attribute.
pub(crate) fn get(
    attr: u16,
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    match attr {
        0x16 => get_pkeys(sma, ans, am, at, max),
        0x17 => get_map(ans, am, at, max, sma.port.mgmt().sl2sc),
        0x82 => get_map(ans, am, at, max, sma.port.mgmt().sc2sl),
        0x84 => get_sc2vlt(sma, ans, am, at, max),
        0x85 => get_sc2vlnt(sma, ans, am, at, max),
        0x18 => get_vlarb(sma, ans, am, at, max),
        0x8a => get_bct(sma, ans, am, at, max),
        0x32 => {
            // No QSFP cable to read: hfi1 refuses a port of another type (opasim's are fixed).
            ans.fail(STATUS_INVALID_FIELD);
            Step::Added(0)
        }
        0x31 => get_led(sma, ans, am, at, max),
        0x8b => sma_cong::get_info(ans, at, max),
        0x8f => sma_cong::get_log(ans, am, at, max),
        0x90 => sma_cong::get_setting(sma, ans, at, max),
        0x91 => sma_cong::get_table(sma, ans, am, at, max),
        _ => unsupported(ans),
    }
}

/// Set of a table attribute; the answer is the table as a Get reads it after.
pub(crate) fn set(
    attr: u16,
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    match attr {
        0x16 => set_pkeys(sma, ans, am, at, max),
        0x17 | 0x82 => {
            if am != 0 || max < NUM_SC {
                return invalid(ans);
            }
            let mut t = [0u8; NUM_SC];
            t.copy_from_slice(ans.bytes(at, NUM_SC));
            let sl2sc = attr == 0x17;
            sma.port
                .update_mgmt(|m| if sl2sc { m.sl2sc = t } else { m.sc2sl = t });
            get(attr, sma, ans, am, at, max)
        }
        0x84 => set_sc2vlt(sma, ans, am, at, max),
        0x85 => set_sc2vlnt(sma, ans, am, at, max),
        0x18 => set_vlarb(sma, ans, am, at, max),
        0x8a => set_bct(sma, ans, am, at, max),
        0x31 => {
            if am_nport(am) != 1 || max < 8 {
                return invalid(ans);
            }
            let on = ans.be32_at(at) & (1 << 31) != 0;
            sma.port.update_mgmt(|m| m.led_on = on);
            get_led(sma, ans, am, at, max)
        }
        0x90 => sma_cong::set_setting(sma, ans, at, max),
        0x91 => sma_cong::set_table(sma, ans, am, at, max),
        _ => unsupported(ans),
    }
}

fn unsupported(ans: &mut Answer<'_>) -> Step {
    ans.fail(STATUS_UNSUP_METH_ATTR);
    Step::Added(0)
}

/// The attribute modifier's block count (`OPA_AM_NBLK()`).
fn am_nblk(am: u32) -> u32 {
    am >> 24
}

/// Checks a P_Key table request: N blocks from block B, of the one block 16 P_Keys fill.
fn pkey_request(ans: &mut Answer<'_>, am: u32, max: usize) -> Option<usize> {
    let n = am_nblk(am) as usize;
    let start = (am & 0x7ff) as usize;
    let size = n * PKEY_BLOCK * 2;
    let avail = PKEY_TABLE_LEN / PKEY_BLOCK + 1;
    // One SMP carries at most (2016 - 8) / 64 blocks (`OPA_NUM_PKEY_BLOCKS_PER_SMP`).
    if n == 0 || size > max || start + n > avail || n > 31 {
        ans.fail(STATUS_INVALID_FIELD);
        return None;
    }
    Some(size)
}

fn get_pkeys(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    let Some(size) = pkey_request(ans, am, max) else {
        return Step::Added(0);
    };
    if am & 0x7ff != 0 {
        return invalid(ans);
    }
    let pkeys = sma.port.config().pkeys;
    for (i, p) in pkeys.iter().enumerate() {
        ans.put_be16(at + 2 * i, *p);
    }
    Step::Added(size)
}

/// Set(P_KeyTable) (`set_pkeys()`): the new table must hold the limited management P_Key;
/// a change is the port's table at once, and the clients hear of it.
fn set_pkeys(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if pkey_request(ans, am, max).is_none() {
        return Step::Added(0);
    }
    if am & 0x7ff == 0 {
        let mut t = [0u16; PKEY_TABLE_LEN];
        for (i, p) in t.iter_mut().enumerate() {
            *p = ans.be16_at(at + 2 * i);
        }
        if !t.contains(&LIM_MGMT_P_KEY) {
            return invalid(ans);
        }
        let (old, _) = sma.port.update_config(|c| c.pkeys = t);
        if old.pkeys != t {
            sma.dev.pkey_event(sma.port.num);
        }
    }
    get_pkeys(sma, ans, am, at, max)
}

/// SL2SC or SC2SL: no attribute modifier, 32 bytes.
fn get_map(ans: &mut Answer<'_>, am: u32, at: usize, max: usize, t: [u8; NUM_SC]) -> Step {
    if am != 0 || max < NUM_SC {
        return invalid(ans);
    }
    ans.put(at, &t);
    Step::Added(NUM_SC)
}

/// Whether the port is Armed or Active, when the VL maps may change only asynchronously.
fn configured(sma: &Sma<'_>) -> bool {
    matches!(
        sma.port.config().state,
        PortState::Armed | PortState::Active
    )
}

fn get_sc2vlt(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nblk(am) != 1 || max < NUM_SC {
        return invalid(ans);
    }
    let mut t = sma.port.sc2vl();
    for (sc, vl) in t.iter_mut().enumerate() {
        if sc != 15 && *vl & 0x1f == ILLEGAL_VL {
            *vl = 0xf;
        }
    }
    ans.put(at, &t);
    Step::Added(NUM_SC)
}

/// Set(SC2VLt) (`__subn_set_opa_sc_to_vlt()`): only before the port is Armed, never
/// asynchronously; the table is the one the HFI checks every VNIC packet against, with an
/// SC other than 15 mapped to VL15 kept as the illegal VL (`filter_sc2vlt()`).
fn set_sc2vlt(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    let async_update = am & (1 << 12) != 0;
    if am_nblk(am) != 1 || async_update || max < NUM_SC || configured(sma) {
        return invalid(ans);
    }
    let mut t = [0u8; NUM_SC];
    t.copy_from_slice(ans.bytes(at, NUM_SC));
    for (sc, vl) in t.iter_mut().enumerate() {
        if sc != 15 && *vl & 0x1f == VL15 {
            *vl = ILLEGAL_VL;
        }
    }
    sma.port.set_sc2vl(t);
    get_sc2vlt(sma, ans, am, at, max)
}

fn get_sc2vlnt(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < NUM_SC {
        return invalid(ans);
    }
    ans.put(at, &sma.port.mgmt().sc2vlnt);
    Step::Added(NUM_SC)
}

fn set_sc2vlnt(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < NUM_SC || configured(sma) {
        return invalid(ans);
    }
    let mut t = [0u8; NUM_SC];
    t.copy_from_slice(ans.bytes(at, NUM_SC));
    sma.port.update_mgmt(|m| m.sc2vlnt = t);
    get_sc2vlnt(sma, ans, am, at, max)
}

/// Get(VLArbitration): the section of the attribute modifier's bits 16-23 (low, high,
/// preemption elements, preemption matrix), 256 bytes; hfi1 keeps 16 elements of the low and
/// high tables and reads no preemption.
fn get_vlarb(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < VLARB_LEN {
        return invalid(ans);
    }
    let m = sma.port.mgmt();
    match (am >> 16) & 0xff {
        0 => ans.put(at, &m.vlarb_low),
        1 => ans.put(at, &m.vlarb_high),
        2 | 3 => {}
        _ => {
            ans.fail(STATUS_INVALID_FIELD);
            return Step::Added(0);
        }
    }
    Step::Added(VLARB_LEN)
}

fn set_vlarb(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < VLARB_LEN {
        return invalid(ans);
    }
    let mut t = [0u8; 2 * VLARB_ELEMS];
    t.copy_from_slice(ans.bytes(at, 2 * VLARB_ELEMS));
    match (am >> 16) & 0xff {
        0 => sma.port.update_mgmt(|m| m.vlarb_low = t),
        1 => sma.port.update_mgmt(|m| m.vlarb_high = t),
        // The preemption tables keep hfi1's defaults.
        2 | 3 => ans.fail(STATUS_UNSUP_METH_ATTR),
        _ => ans.fail(STATUS_INVALID_FIELD),
    }
    get_vlarb(sma, ans, am, at, max)
}

fn get_bct(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < BCT_LEN {
        return invalid(ans);
    }
    ans.put(at, &sma.port.mgmt().bct);
    Step::Added(BCT_LEN)
}

/// Set(BufferControlTable) (`set_buffer_control()`): the limits of the VLs the port does not
/// have (not a data VL, not VL15) are cleared.
fn set_bct(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < BCT_LEN {
        return invalid(ans);
    }
    let mut t = [0u8; BCT_LEN];
    t.copy_from_slice(ans.bytes(at, BCT_LEN));
    for vl in 0..32u8 {
        if vl < NUM_DATA_VLS || vl == VL15 {
            continue;
        }
        let o = 4 + 4 * usize::from(vl);
        if let Some(b) = t.get_mut(o..o + 4) {
            b.fill(0);
        }
    }
    sma.port.update_mgmt(|m| m.bct = t);
    get_bct(sma, ans, am, at, max)
}

fn get_led(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < 8 {
        return invalid(ans);
    }
    ans.put_be32(at, u32::from(sma.port.mgmt().led_on) << 31);
    Step::Added(8)
}
