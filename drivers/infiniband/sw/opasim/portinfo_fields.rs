// SPDX-License-Identifier: GPL-2.0-only

//! The PortInfo fields every simulated port has alike, an HFI's and a switch's: what the SM
//! sets in the port's management state ([`Mgmt`]), the link's fixed capabilities and the data
//! VLs' MTUs (`struct opa_port_info`, as hfi1's `__subn_get_opa_portinfo()` and
//! `__subn_set_opa_portinfo()` read and write them). The fields of one kind of port (its
//! LID, states, neighbour, counters, capability masks) are its SMA's.

use crate::{
    integrity::{NUM_DATA_VLS, OPA_MTUS, VL15_MTU},
    mgmt::{Mgmt, LINK_CREDITS, LINK_SPEED_25G, LINK_WIDTHS_ALL, LINK_WIDTH_4X, VAU, VL15_INIT},
    sma::Answer,
    sma_tables::VLARB_CAP,
};

/// The port type of a simulated port: a fixed link, no cable (hfi1's `PORT_TYPE_FIXED`).
pub(crate) const PORT_TYPE_FIXED: u8 = 2;

/// The MTU code of `mtu` (`mtu_to_enum()`): 0 for an MTU of 0 (a VL not in use), `default`
/// for a size OPA does not have.
pub(crate) fn mtu_code(mtu: u16, default: u8) -> u8 {
    if mtu == 0 {
        return 0;
    }
    match OPA_MTUS.iter().position(|&m| m == mtu) {
        Some(i) => i as u8 + 1,
        None => default,
    }
}

/// The MTU of code `c` (`enum_to_mtu()`): 0 for code 0, which the SM sets for a VL it does not
/// use (no packet fits it then); `None` for an invalid code.
pub(crate) fn code_mtu(c: u8) -> Option<u16> {
    if c == 0 {
        return Some(0);
    }
    OPA_MTUS.get(usize::from(c) - 1).copied()
}

/// The `LedEnable`/`OfflineDisabledReason` byte of the port states.
pub(crate) fn led_offline(m: &Mgmt) -> u8 {
    (u8::from(m.neighbor_normal) << 4)
        | (u8::from(m.sm_config_started) << 5)
        | (u8::from(m.led_on) << 6)
}

/// Writes the fields of `m` and of the link into the PortInfo at `at`; the M_Key only when
/// `show_mkey` (a Get with another M_Key at protection level 1 does not see it).
pub(crate) fn put_mgmt(ans: &mut Answer<'_>, at: usize, m: &Mgmt, show_mkey: bool) {
    ans.put_u8(at + 9, NUM_DATA_VLS);
    ans.put_be16(at + 10, m.vl_high_limit.into());
    ans.put_u8(at + 14, VLARB_CAP);
    ans.put_u8(at + 15, VLARB_CAP);
    ans.put_u8(at + 17, led_offline(m));
    ans.put_u8(at + 20, PORT_TYPE_FIXED);
    // OPA_COLLECTIVE_NR and OPA_MCAST_NR.
    ans.put_u8(at + 21, (1 << 3) | 4);
    ans.put_u8(at + 22, m.mkeyprot << 6);
    ans.put_u8(at + 23, m.sm_sl & 0x1f);
    // LinkInitReason, and the inbound partition enforcement hfi1 sets at reset.
    ans.put_u8(at + 24, (m.linkinit_reason & 0xf0) | 0x08);
    ans.put_u8(at + 25, m.operational_vls);
    ans.put_be16(at + 30, m.mkey_violations);
    ans.put_be32(at + 36, m.sm_trap_qp);
    ans.put_be32(at + 40, m.sa_qp);
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
    if show_mkey {
        ans.put_be64(at + 112, m.mkey);
    }
    ans.put_be64(at + 120, m.subnet_prefix);
    ans.put_be16(at + 228, LINK_CREDITS);
    ans.put_u8(at + 234, 0x80);
    ans.put_u8(at + 237, mtu_code(10240, 5));
    ans.put_u8(at + 238, 3);
}

/// Writes the data VLs' MTUs `mtus` and VL15's into the PortInfo at `at`.
pub(crate) fn put_vl_mtus(ans: &mut Answer<'_>, at: usize, mtus: &[u16; NUM_DATA_VLS as usize]) {
    for (i, &mtu) in mtus.iter().enumerate() {
        let code = mtu_code(mtu, 7);
        let b = at + 128 + i / 2;
        let v = ans.u8_at(b) | if i % 2 == 0 { code << 4 } else { code };
        ans.put_u8(b, v);
    }
    let b = at + 128 + 15 / 2;
    let v = ans.u8_at(b) | mtu_code(VL15_MTU, 4);
    ans.put_u8(b, v);
}

/// Reads the data VLs' MTUs of a Set(PortInfo) at `at` into `mtus`; `false` when a code is
/// invalid (that VL gets the largest MTU).
pub(crate) fn take_vl_mtus(
    ans: &Answer<'_>,
    at: usize,
    mtus: &mut [u16; NUM_DATA_VLS as usize],
) -> bool {
    let mut ok = true;
    for (i, mtu) in mtus.iter_mut().enumerate() {
        let b = ans.u8_at(at + 128 + i / 2);
        let code = if i % 2 == 0 { b >> 4 } else { b & 0xf };
        *mtu = code_mtu(code).unwrap_or_else(|| {
            ok = false;
            10240
        });
    }
    ok
}

/// What a Set(PortInfo) asks of the management state, read before it is applied.
pub(crate) struct MgmtSet {
    mkey: u64,
    prefix: u64,
    lease: u16,
    lir: u8,
    trap_qp: u32,
    sa_qp: u32,
    action: u32,
    lwe: u16,
    lwde: u16,
    lse: u16,
    lss: u16,
    prot: u8,
    high: u8,
    vls: u8,
    clear_mkey_violations: bool,
    timeout: u8,
}

impl MgmtSet {
    /// The request's fields, from the PortInfo at `at`.
    pub(crate) fn read(ans: &Answer<'_>, at: usize) -> Self {
        Self {
            mkey: ans.be64_at(at + 112),
            prefix: ans.be64_at(at + 120),
            lease: ans.be16_at(at + 98),
            lir: ans.u8_at(at + 24) & 0xf0,
            trap_qp: ans.be32_at(at + 36),
            sa_qp: ans.be32_at(at + 40),
            action: ans.be32_at(at + 92),
            lwe: ans.be16_at(at + 56),
            lwde: ans.be16_at(at + 62),
            lse: ans.be16_at(at + 50),
            lss: ans.be16_at(at + 48),
            prot: (ans.u8_at(at + 22) & 0xc0) >> 6,
            high: (ans.be16_at(at + 10) & 0xff) as u8,
            vls: ans.u8_at(at + 25) & 0x1f,
            clear_mkey_violations: ans.be16_at(at + 30) == 0,
            timeout: ans.u8_at(at + 47) & 0x1f,
        }
    }

    /// Applies the request to `m`; `false` when a field is invalid (the others still apply).
    pub(crate) fn apply(&self, m: &mut Mgmt) -> bool {
        let mut valid = true;
        m.mkey = self.mkey;
        m.subnet_prefix = self.prefix;
        m.mkey_lease_period = self.lease;
        if self.lir != 0 {
            m.linkinit_reason = self.lir;
        }
        m.sm_trap_qp = self.trap_qp;
        m.sa_qp = self.sa_qp;
        m.port_error_action = self.action;
        // 0x0fff and 0xffff reset to what is supported; other bits must be supported.
        match self.lwe {
            0 => {}
            0x0fff | 0xffff => m.link_width_enabled = LINK_WIDTH_4X,
            w if w & !LINK_WIDTH_4X == 0 => m.link_width_enabled = w,
            _ => valid = false,
        }
        match self.lwde {
            0x0fff | 0xffff => m.link_width_downgrade_enabled = LINK_WIDTHS_ALL,
            w if w & !LINK_WIDTHS_ALL == 0 => m.link_width_downgrade_enabled = w,
            _ => valid = false,
        }
        if self.lse != 0 {
            if self.lse & self.lss != 0 {
                m.link_speed_enabled = self.lse;
            } else {
                valid = false;
            }
        }
        m.mkeyprot = self.prot;
        m.vl_high_limit = self.high;
        if self.vls != 0 {
            if self.vls > NUM_DATA_VLS {
                valid = false;
            } else {
                m.operational_vls = self.vls;
            }
        }
        if self.clear_mkey_violations {
            m.mkey_violations = 0;
        }
        m.subnet_timeout = self.timeout;
        valid
    }
}
