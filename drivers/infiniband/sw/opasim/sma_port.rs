// SPDX-License-Identifier: GPL-2.0-only

//! The SMA's port attributes: PortInfo and PortStateInfo, Get and Set, as hfi1 answers them
//! (`__subn_get_opa_portinfo()`, `__subn_set_opa_portinfo()`, `__subn_get_opa_psi()`,
//! `__subn_set_opa_psi()`), with hfi1's port state machine (`port_states_transition_allowed()`,
//! `set_port_states()`). What the SM sets is the port's one state: the datapath, `query_port`
//! and the debugfs files read it.

use crate::{
    fabric::SWITCH_GUID,
    integrity::{NUM_DATA_VLS, OPA_MTUS, VL15_MTU},
    mgmt::{
        phys_state, state_num, Mgmt, LINK_CREDITS, LINK_SPEED_25G, LINK_WIDTHS_ALL, LINK_WIDTH_4X,
        PHYS_DISABLED, PHYS_POLLING, VAU, VL15_INIT,
    },
    port::Counters,
    sma::{Answer, Sma, Step, METHOD_GET, STATUS_INVALID_FIELD},
    sma_tables::VLARB_CAP,
};
use kernel::rdma::provider::PortState;

/// The bytes of PortInfo (`struct opa_port_info`).
pub(crate) const PORT_INFO_LEN: usize = 242;

/// The bytes of PortStateInfo (`struct opa_port_state_info`).
pub(crate) const PSI_LEN: usize = 8;

/// The port type of a simulated port: a fixed link, no cable (hfi1's `PORT_TYPE_FIXED`).
pub(crate) const PORT_TYPE_FIXED: u8 = 2;

/// The MTU code of `mtu` (`mtu_to_enum()`), `default` for a size OPA does not have.
fn mtu_code(mtu: u16, default: u8) -> u8 {
    match OPA_MTUS.iter().position(|&m| m == mtu) {
        Some(i) => i as u8 + 1,
        None => default,
    }
}

/// The MTU of code `c` (`enum_to_mtu()`), `None` for an invalid code.
fn code_mtu(c: u8) -> Option<u16> {
    OPA_MTUS.get(usize::from(c).checked_sub(1)?).copied()
}

/// The attribute modifier's port count (`OPA_AM_NPORT()`).
pub(crate) fn am_nport(am: u32) -> u32 {
    am >> 24
}

/// The attribute modifier's start-of-SM-configuration bit (`OPA_AM_START_SM_CFG()`).
fn am_start_sm_cfg(am: u32) -> bool {
    am & (1 << 9) != 0
}

/// The `LedEnable`/`OfflineDisabledReason` byte of the port states.
fn led_offline(m: &Mgmt) -> u8 {
    (u8::from(m.neighbor_normal) << 4)
        | (u8::from(m.sm_config_started) << 5)
        | (u8::from(m.led_on) << 6)
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
        ans.fail(STATUS_INVALID_FIELD);
        return Step::Added(0);
    }
    let port = sma.port;
    let c = port.config();
    if am_start_sm_cfg(am) && c.state == PortState::Init {
        port.update_mgmt(|m| m.sm_config_started = true);
    }
    let m = port.mgmt();
    let fabric = &sma.dev.data().fabric;
    ans.put_be32(at, c.lid);
    ans.put_u8(at + 9, NUM_DATA_VLS);
    ans.put_be16(at + 10, m.vl_high_limit.into());
    ans.put_u8(at + 14, VLARB_CAP);
    ans.put_u8(at + 15, VLARB_CAP);
    ans.put_u8(at + 17, led_offline(&m));
    ans.put_u8(at + 19, (phys_state(c.state, &m) << 4) | state_num(c.state));
    ans.put_u8(at + 20, PORT_TYPE_FIXED);
    // OPA_COLLECTIVE_NR and OPA_MCAST_NR.
    ans.put_u8(at + 21, (1 << 3) | 4);
    ans.put_u8(at + 22, m.mkeyprot << 6);
    ans.put_u8(at + 23, m.sm_sl & 0x1f);
    // LinkInitReason, and the inbound partition enforcement hfi1 sets at reset.
    ans.put_u8(at + 24, (m.linkinit_reason & 0xf0) | 0x08);
    ans.put_u8(at + 25, m.operational_vls);
    ans.put_be16(at + 30, m.mkey_violations);
    let sat = |v: u64| v.min(0xffff) as u16;
    ans.put_be16(at + 32, sat(Counters::get(&port.counters.rcv_bad_pkey)));
    ans.put_be16(at + 34, sat(Counters::get(&port.counters.rcv_qkey_viol)));
    ans.put_be32(at + 36, m.sm_trap_qp);
    ans.put_be32(at + 40, m.sa_qp);
    ans.put_u8(at + 44, fabric.switch_port(port));
    ans.put_u8(at + 47, m.subnet_timeout & 0x1f);
    ans.put_be16(at + 48, LINK_SPEED_25G);
    ans.put_be16(at + 50, m.link_speed_enabled);
    ans.put_be16(at + 52, LINK_SPEED_25G);
    ans.put_be16(at + 54, LINK_WIDTH_4X);
    ans.put_be16(at + 56, m.link_width_enabled);
    ans.put_be16(at + 58, LINK_WIDTH_4X);
    ans.put_be16(at + 60, LINK_WIDTHS_ALL);
    ans.put_be16(at + 62, m.link_width_downgrade_enabled);
    ans.put_be16(at + 64, LINK_WIDTH_4X);
    ans.put_be16(at + 66, LINK_WIDTH_4X);
    // OPA_PORT_LINK_MODE_OPA in the supported, enabled and active fields.
    ans.put_be16(at + 68, (4 << 10) | (4 << 5) | 4);
    // LTP CRC: 14-bit and 48-bit supported, 14-bit enabled and active (hfi1's defaults).
    ans.put_be16(at + 70, (0x5 << 8) | (1 << 4) | 1);
    // 9B and 16B packets, supported and enabled.
    ans.put_be16(at + 74, 0x2 | 0x8);
    ans.put_be16(at + 76, 0x2 | 0x8);
    ans.put_be16(at + 78, 0x1400);
    ans.put_be32(at + 92, m.port_error_action);
    ans.put_be16(at + 98, m.mkey_lease_period);
    let units = u32::from(VAU) | (u32::from(VL15_INIT) << 11);
    ans.put_be32(at + 100, units);
    ans.put_be32(at + 108, m.sm_lid.unwrap_or_else(|| fabric.sm_lid()));
    // The M_Key is hidden from a Get with another M_Key at protection level 1.
    if !(sma.method == METHOD_GET && m.mkey != sma.mkey && m.mkeyprot == 1) {
        ans.put_be64(at + 112, m.mkey);
    }
    ans.put_be64(at + 120, m.subnet_prefix);
    let mtus = port.vl_mtu();
    for (i, &mtu) in mtus.iter().enumerate() {
        let code = mtu_code(mtu, 7);
        let b = at + 128 + i / 2;
        let v = ans.u8_at(b) | if i % 2 == 0 { code << 4 } else { code };
        ans.put_u8(b, v);
    }
    let b = at + 128 + 15 / 2;
    let v = ans.u8_at(b) | mtu_code(VL15_MTU, 4);
    ans.put_u8(b, v);
    ans.put_be64(at + 208, SWITCH_GUID);
    ans.put_be32(at + 216, crate::port::Capabilities::get(&port.caps.ib));
    ans.put_be16(
        at + 222,
        crate::port::Capabilities::get(&port.caps.opa3) as u16,
    );
    ans.put_be16(at + 228, LINK_CREDITS);
    ans.put_u8(at + 234, 0x80);
    // The neighbour is the fabric's switch, which allows management.
    ans.put_u8(at + 236, 1 | (1 << 3));
    ans.put_u8(at + 237, mtu_code(10240, 5));
    ans.put_u8(at + 238, 3);
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
        ans.fail(STATUS_INVALID_FIELD);
        return Step::Added(0);
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
    let mkey = ans.be64_at(at + 112);
    let prefix = ans.be64_at(at + 120);
    let lease = ans.be16_at(at + 98);
    port.update_mgmt(|m| {
        m.mkey = mkey;
        m.subnet_prefix = prefix;
        m.mkey_lease_period = lease;
    });
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
    let lir = ans.u8_at(at + 24) & 0xf0;
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
    let trap_qp = ans.be32_at(at + 36);
    let sa_qp = ans.be32_at(at + 40);
    let action = ans.be32_at(at + 92);
    let lwe = ans.be16_at(at + 56);
    let lwde = ans.be16_at(at + 62);
    let lse = ans.be16_at(at + 50);
    let lss = ans.be16_at(at + 48);
    let prot = (ans.u8_at(at + 22) & 0xc0) >> 6;
    let high = (ans.be16_at(at + 10) & 0xff) as u8;
    let vls = ans.u8_at(at + 25) & 0x1f;
    let viol = [
        ans.be16_at(at + 30),
        ans.be16_at(at + 32),
        ans.be16_at(at + 34),
    ];
    let timeout = ans.u8_at(at + 47) & 0x1f;
    let mut invalid = false;
    port.update_mgmt(|m| {
        if lir != 0 {
            m.linkinit_reason = lir;
        }
        m.sm_trap_qp = trap_qp;
        m.sa_qp = sa_qp;
        m.port_error_action = action;
        // 0x0fff and 0xffff reset to what is supported; other bits must be supported.
        match lwe {
            0 => {}
            0x0fff | 0xffff => m.link_width_enabled = LINK_WIDTH_4X,
            w if w & !LINK_WIDTH_4X == 0 => m.link_width_enabled = w,
            _ => invalid = true,
        }
        match lwde {
            0x0fff | 0xffff => m.link_width_downgrade_enabled = LINK_WIDTHS_ALL,
            w if w & !LINK_WIDTHS_ALL == 0 => m.link_width_downgrade_enabled = w,
            _ => invalid = true,
        }
        if lse != 0 {
            if lse & lss != 0 {
                m.link_speed_enabled = lse;
            } else {
                invalid = true;
            }
        }
        m.mkeyprot = prot;
        m.vl_high_limit = high;
        if vls != 0 {
            if vls > NUM_DATA_VLS {
                invalid = true;
            } else {
                m.operational_vls = vls;
            }
        }
        if viol[0] == 0 {
            m.mkey_violations = 0;
        }
        m.subnet_timeout = timeout;
    });
    if invalid {
        ans.fail(STATUS_INVALID_FIELD);
    }
    if viol[1] == 0 {
        port.counters
            .rcv_bad_pkey
            .store(0, core::sync::atomic::Ordering::Relaxed);
    }
    if viol[2] == 0 {
        port.counters
            .rcv_qkey_viol
            .store(0, core::sync::atomic::Ordering::Relaxed);
    }
    // The data VLs' MTUs, from the neighbour MTU nibbles; an invalid code gets the largest.
    let mut mtus = port.vl_mtu();
    for (i, mtu) in mtus.iter_mut().enumerate() {
        let b = ans.u8_at(at + 128 + i / 2);
        let code = if i % 2 == 0 { b >> 4 } else { b & 0xf };
        *mtu = code_mtu(code).unwrap_or_else(|| {
            ans.fail(STATUS_INVALID_FIELD);
            10240
        });
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
        ans.fail(STATUS_INVALID_FIELD);
        return Step::Added(0);
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
        ans.fail(STATUS_INVALID_FIELD);
        return Step::Added(0);
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
