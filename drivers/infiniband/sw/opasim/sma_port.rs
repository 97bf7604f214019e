// SPDX-License-Identifier: GPL-2.0-only

//! The SMA's port attributes: PortInfo and PortStateInfo, Get and Set, as hfi1 answers them
//! (`__subn_get_opa_portinfo()`, `__subn_set_opa_portinfo()`, `__subn_get_opa_psi()`,
//! `__subn_set_opa_psi()`), with hfi1's port state machine (`port_states_transition_allowed()`,
//! `set_port_states()`). What the SM sets is the port's one state: the datapath, `query_port`
//! and the debugfs files read it.

use crate::{
    fabric::SWITCH_GUID,
    mgmt::{phys_state, state_num, LINK_WIDTH_4X, PHYS_DISABLED, PHYS_POLLING},
    port::Counters,
    portinfo_fields::{led_offline, put_mgmt, put_vl_mtus, take_vl_mtus, MgmtSet},
    sma::{invalid, Answer, Sma, Step, METHOD_GET, STATUS_INVALID_FIELD},
};
use kernel::rdma::provider::PortState;

/// The bytes of PortInfo (`struct opa_port_info`).
pub(crate) const PORT_INFO_LEN: usize = 242;

/// The bytes of PortStateInfo (`struct opa_port_state_info`).
pub(crate) const PSI_LEN: usize = 8;

/// The attribute modifier's port count (`OPA_AM_NPORT()`).
pub(crate) fn am_nport(am: u32) -> u32 {
    am >> 24
}

/// The attribute modifier's start-of-SM-configuration bit (`OPA_AM_START_SM_CFG()`).
fn am_start_sm_cfg(am: u32) -> bool {
    am & (1 << 9) != 0
}

/// Get(PortInfo) (`__subn_get_opa_portinfo()`): one port, the one the SMP came in on.
pub(crate) fn get_portinfo(
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    if am_nport(am) != 1 || max < PORT_INFO_LEN {
        return invalid(ans);
    }
    let port = sma.port;
    let c = port.config();
    if am_start_sm_cfg(am) && c.state == PortState::Init {
        port.update_mgmt(|m| m.sm_config_started = true);
    }
    let m = port.mgmt();
    let fabric = &sma.dev.data().fabric;
    // The M_Key is hidden from a Get with another M_Key at protection level 1.
    let show_mkey = !(sma.method == METHOD_GET && m.mkey != sma.mkey && m.mkeyprot == 1);
    put_mgmt(ans, at, &m, show_mkey);
    put_vl_mtus(ans, at, &port.vl_mtu());
    ans.put_be32(at, c.lid);
    ans.put_u8(at + 19, (phys_state(c.state, &m) << 4) | state_num(c.state));
    let sat = |v: u64| v.min(0xffff) as u16;
    ans.put_be16(at + 32, sat(Counters::get(&port.counters.rcv_bad_pkey)));
    ans.put_be16(at + 34, sat(Counters::get(&port.counters.rcv_qkey_viol)));
    ans.put_u8(at + 44, fabric.switch_port(port));
    ans.put_be32(at + 108, m.sm_lid.unwrap_or_else(|| fabric.sm_lid()));
    ans.put_be64(at + 208, SWITCH_GUID);
    ans.put_be32(at + 216, crate::port::Capabilities::get(&port.caps.ib));
    ans.put_be16(
        at + 222,
        crate::port::Capabilities::get(&port.caps.opa3) as u16,
    );
    // The neighbour is the fabric's switch (node type 1), and whether its port allows this
    // HFI management (hfi1's `port_neigh_mode`, `OPA_PI_MASK_NEIGH_MGMT_ALLOWED`).
    let mgmt = u8::from(fabric.mgmt_allowed(port.dev_index));
    ans.put_u8(at + 236, 1 | (mgmt << 3));
    ans.put_u8(at + 239, port.num as u8);
    Step::Added(PORT_INFO_LEN)
}

/// hfi1's verdict on a state change request.
#[derive(PartialEq, Eq)]
enum Transition {
    Disallowed,
    Ignored,
    Allowed,
}

/// The logical transition `old` to `new` (`logical_transition_allowed()`, OPA table 9-12):
/// 0 (NOP) always; Init to Armed, Armed to Active; the same state is ignored, as is Armed or
/// Active to Armed or Active.
fn logical(old: u8, new: u8) -> Option<Transition> {
    use Transition::*;
    if new == 0 {
        return Some(Allowed);
    }
    let row: [Transition; 4] = match old {
        1 => [Ignored, Disallowed, Disallowed, Disallowed],
        2 => [Disallowed, Ignored, Allowed, Disallowed],
        3 => [Disallowed, Disallowed, Ignored, Allowed],
        4 => [Disallowed, Disallowed, Ignored, Ignored],
        _ => return None,
    };
    row.into_iter().nth(usize::from(new).checked_sub(1)?)
}

/// The physical transition `old` to `new` (`physical_transition_allowed()`, OPA table 6-4),
/// for the states an HFI port is in (Polling, Disabled, LinkUp) and asked to go to.
fn physical(old: u8, new: u8) -> Option<Transition> {
    use Transition::*;
    if new == 0 {
        return Some(Allowed);
    }
    // Rows and columns from Polling (2) to Offline (9); states 4, 6 and 8 are undefined.
    let t = match (old, new) {
        (2, 2) | (2, 3) => Allowed,
        (2, _) => Disallowed,
        (3, 2) => Allowed,
        (3, 3) => Ignored,
        (3, _) => Disallowed,
        (5, 2) | (5, 3) => Allowed,
        (5, 5) => Ignored,
        (5, _) => Disallowed,
        _ => return None,
    };
    Some(t)
}

/// Applies the requested logical and physical states (`set_port_states()`), or flags the
/// answer. `Step::Consumed` when a remote SMP disabled the port it came through.
fn set_states(sma: &Sma<'_>, ans: &mut Answer<'_>, ls_new: u8, ps_new: u8) -> Option<Step> {
    let port = sma.port;
    let c = port.config();
    let m = port.mgmt();
    let lv = logical(state_num(c.state), ls_new);
    let pv = physical(phys_state(c.state, &m), ps_new);
    let (Some(lv), Some(pv)) = (lv, pv) else {
        ans.fail(STATUS_INVALID_FIELD);
        return None;
    };
    if lv == Transition::Disallowed || pv == Transition::Disallowed {
        ans.fail(STATUS_INVALID_FIELD);
        return None;
    }
    if lv == Transition::Ignored && pv == Transition::Ignored {
        return None;
    }
    if ps_new != 0 && ls_new != 1 && ls_new != 0 {
        ans.fail(STATUS_INVALID_FIELD);
    }
    let new = match ls_new {
        0 if ps_new == 0 => return None,
        0 | 1 => match ps_new {
            // Down by default, or a bounce: the simulated link comes straight back up, to
            // Init (as hfi1's link once it trains).
            0 | PHYS_POLLING => {
                port.update_mgmt(|m| m.disabled = false);
                PortState::Init
            }
            PHYS_DISABLED => {
                port.update_mgmt(|m| m.disabled = true);
                PortState::Down
            }
            _ => {
                ans.fail(STATUS_INVALID_FIELD);
                return None;
            }
        },
        // hfi1's `set_link_state()` goes to Armed only from Init and to Active only from
        // Armed; from another state the request changes nothing.
        3 if c.state == PortState::Init => PortState::Armed,
        3 => return None,
        4 if !m.neighbor_normal => {
            ans.fail(STATUS_INVALID_FIELD);
            return None;
        }
        4 if c.state == PortState::Armed => PortState::Active,
        4 => return None,
        _ => {
            ans.fail(STATUS_INVALID_FIELD);
            return None;
        }
    };
    let (old, now) = port.update_config(|c| c.state = new);
    if old.active() != now.active() {
        sma.dev.port_event(port.num, now.active());
    }
    if now.active() {
        sma.dev.data().fabric.neighbor_active(port);
    }
    if new == PortState::Down && !sma.local {
        return Some(Step::Consumed);
    }
    None
}

/// Set(PortInfo) (`__subn_set_opa_portinfo()`): what the SM configures in a port, then the
/// port's PortInfo as a Get answers it.
pub(crate) fn set_portinfo(
    sma: &Sma<'_>,
    ans: &mut Answer<'_>,
    am: u32,
    at: usize,
    max: usize,
) -> Step {
    if am_nport(am) != 1 || max < PORT_INFO_LEN {
        return invalid(ans);
    }
    let lid = ans.be32_at(at);
    let smlid = ans.be32_at(at + 108);
    if lid & 0xff00_0000 != 0 || smlid & 0xff00_0000 != 0 {
        ans.fail(STATUS_INVALID_FIELD);
        return get_portinfo(sma, ans, am, at, max);
    }
    let port = sma.port;
    let dev = sma.dev;
    let clientrereg = ans.u8_at(at + 47) & 0x80;
    let ls_old = port.config().state;
    let req = MgmtSet::read(ans, at);
    // A LID is 1 to 0xbfff (0 only before Init), never a 16B multicast LID.
    let is_mcast = |l: u32| l >= 0xf0_0000;
    let down_or_init = matches!(ls_old, PortState::Down | PortState::Init);
    if (lid == 0 && !down_or_init) || is_mcast(lid) {
        ans.fail(STATUS_INVALID_FIELD);
    } else {
        let (old, _) = port.update_config(|c| c.lid = lid);
        if old.lid != lid {
            dev.lid_event(port.num);
        }
    }
    let msl = ans.u8_at(at + 23) & 0x1f;
    if (smlid == 0 && !down_or_init) || is_mcast(smlid) {
        ans.fail(STATUS_INVALID_FIELD);
    } else if port.update_mgmt(|m| {
        let changed = m.sm_lid != Some(smlid) || m.sm_sl != msl;
        m.sm_lid = Some(smlid);
        m.sm_sl = msl;
        changed
    }) {
        dev.sm_event(port.num);
    }
    let viol = [ans.be16_at(at + 32), ans.be16_at(at + 34)];
    if !port.update_mgmt(|m| req.apply(m)) {
        ans.fail(STATUS_INVALID_FIELD);
    }
    if viol[0] == 0 {
        port.counters
            .rcv_bad_pkey
            .store(0, core::sync::atomic::Ordering::Relaxed);
    }
    if viol[1] == 0 {
        port.counters
            .rcv_qkey_viol
            .store(0, core::sync::atomic::Ordering::Relaxed);
    }
    // The data VLs' MTUs, from the neighbour MTU nibbles; an invalid code gets the largest.
    let mut mtus = port.vl_mtu();
    if !take_vl_mtus(ans, at, &mut mtus) {
        ans.fail(STATUS_INVALID_FIELD);
    }
    port.set_vl_mtu(mtus);
    let states = ans.u8_at(at + 19);
    let (ls_new, ps_new) = (states & 0x0f, states >> 4);
    let mut step = None;
    let mut refused = false;
    if ls_old == PortState::Init {
        let start = am_start_sm_cfg(am);
        port.update_mgmt(|m| {
            if start {
                if ls_new == 2 || ls_new == 3 {
                    m.sm_config_started = true;
                }
            } else if ls_new == 3 && !m.sm_config_started {
                refused = true;
            }
        });
        if refused {
            ans.fail(STATUS_INVALID_FIELD);
        }
    }
    if clientrereg != 0 {
        dev.client_reregister_event(port.num);
    }
    if !refused {
        step = set_states(sma, ans, ls_new, ps_new);
    }
    if let Some(s) = step {
        return s;
    }
    let got = get_portinfo(sma, ans, am, at, max);
    let v = ans.u8_at(at + 47) | clientrereg;
    ans.put_u8(at + 47, v);
    got
}

/// Get(PortStateInfo) (`__subn_get_opa_psi()`).
pub(crate) fn get_psi(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < PSI_LEN {
        return invalid(ans);
    }
    let port = sma.port;
    let c = port.config();
    if am_start_sm_cfg(am) && c.state == PortState::Init {
        port.update_mgmt(|m| m.sm_config_started = true);
    }
    let m = port.mgmt();
    ans.put_u8(at + 1, led_offline(&m) & !(1 << 6));
    ans.put_u8(at + 3, (phys_state(c.state, &m) << 4) | state_num(c.state));
    ans.put_be16(at + 4, LINK_WIDTH_4X);
    ans.put_be16(at + 6, LINK_WIDTH_4X);
    Step::Added(PSI_LEN)
}

/// Set(PortStateInfo) (`__subn_set_opa_psi()`): the port states only.
pub(crate) fn set_psi(sma: &Sma<'_>, ans: &mut Answer<'_>, am: u32, at: usize, max: usize) -> Step {
    if am_nport(am) != 1 || max < PSI_LEN {
        return invalid(ans);
    }
    let port = sma.port;
    let states = ans.u8_at(at + 3);
    let (ls_new, ps_new) = (states & 0x0f, states >> 4);
    if port.config().state == PortState::Init {
        let start = am_start_sm_cfg(am);
        let refused = port.update_mgmt(|m| {
            if start {
                if ls_new == 2 || ls_new == 3 {
                    m.sm_config_started = true;
                }
                false
            } else {
                ls_new == 3 && !m.sm_config_started
            }
        });
        if refused {
            ans.fail(STATUS_INVALID_FIELD);
            return get_psi(sma, ans, am, at, max);
        }
    }
    if let Some(s) = set_states(sma, ans, ls_new, ps_new) {
        return s;
    }
    get_psi(sma, ans, am, at, max)
}
