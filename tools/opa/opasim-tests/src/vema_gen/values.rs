// SPDX-License-Identifier: GPL-2.0

//! The values the generator writes: field values at and past their limits, and the sensible
//! content of each attribute.

use opa_wire::mad::{
    ATTR_CLASS_PORT_INFO, ATTR_IFACE_MCAST_MACS, ATTR_IFACE_UCAST_MACS,
    ATTR_VESWPORT_ERROR_COUNTERS, ATTR_VESWPORT_INFO, ATTR_VESWPORT_MAC_ENTRIES,
    ATTR_VESWPORT_SUMMARY_COUNTERS, METHOD_GET, OPA_EMA_CLASS_VERSION, OPA_MGMT_BASE_VERSION,
};
use opa_wire::vema_counters::SummaryCounters;
use opa_wire::vema_info::{ClassPortInfo, VeswPortInfo, MAC_TBL_MAX_ENTRIES};
use opa_wire::vema_mac::{
    IfaceMacsHdr, MacTableEntry, MacTableHdr, IFACE_MACS_PER_MAD, MAC_TBL_ENTRIES_PER_MAD,
};

use super::SplitMix64;

/// LIDs: unset, the two opasim ports, the top of the 16-bit unicast range, multicast, the
/// top of the 24-bit range and past it.
fn lid(r: &mut SplitMix64) -> u32 {
    if r.chance(15) {
        return r.u32();
    }
    r.pick(&[
        0,
        1,
        2,
        3,
        0xbfff,
        0xc000,
        0xffff,
        0x1_0000,
        0xf0_0001,
        0xff_ffff,
        0x100_0000,
        0xffff_ffff,
    ])
}

/// P_Keys: full and limited management, the fabric's usual ones, zero, random.
fn pkey(r: &mut SplitMix64) -> u16 {
    if r.chance(20) {
        return r.u16();
    }
    r.pick(&[0xffff, 0x7fff, 0x8001, 0x0001, 0x8002, 0x0000, 0x8000])
}

/// MACs from a small pool (so that Sets overwrite each other), with multicast, zero and
/// broadcast ones.
fn mac(r: &mut SplitMix64) -> [u8; 6] {
    match r.below(10) {
        0 => [0; 6],
        1 => [0xff; 6],
        2 => [0x01, 0x00, 0x5e, 0x00, 0x00, r.u8()],
        3 => {
            let mut m = [0u8; 6];
            r.fill(&mut m);
            m
        }
        _ => [0x02, 0x00, 0x00, 0x00, r.below(4) as u8, r.below(8) as u8],
    }
}

/// Service classes and virtual lanes: mostly valid (0-31), sometimes past 31.
fn sc(r: &mut SplitMix64) -> u8 {
    if r.chance(85) {
        r.below(32) as u8
    } else {
        r.u8()
    }
}

/// Ethernet MTUs: none, tiny, the usual ones and their neighbours, the largest 16B frame and
/// past it.
fn mtu(r: &mut SplitMix64) -> u16 {
    if r.chance(15) {
        return r.u16();
    }
    r.pick(&[
        0, 1, 68, 1499, 1500, 1501, 4096, 9000, 9001, 10240, 16333, 16334, 65535,
    ])
}

/// Mostly zero (what an EM sends in reserved fields), sometimes random.
fn reserved(r: &mut SplitMix64, buf: &mut [u8]) {
    if r.chance(10) {
        r.fill(buf);
    }
}

fn class_port_info(r: &mut SplitMix64) -> ClassPortInfo {
    let mut c = ClassPortInfo::ZERO;
    c.base_version = {
        let x = r.u8();
        r.pick(&[0, OPA_MGMT_BASE_VERSION, 1, x])
    };
    c.class_version = {
        let x = r.u8();
        r.pick(&[0, OPA_EMA_CLASS_VERSION, 1, x])
    };
    c.cap_mask = r.u16();
    c.cap_mask2_resp_time = r.u32();
    if r.chance(30) {
        r.fill(&mut c.redirect_gid);
        c.redirect_tc_fl = r.u32();
        c.redirect_lid = lid(r);
        c.redirect_sl_qp = r.u32();
        c.redirect_qkey = r.u32();
    }
    if r.chance(30) {
        r.fill(&mut c.trap_gid);
    }
    c.trap_tc_fl = if r.chance(80) { 0 } else { r.u32() };
    c.trap_lid = lid(r);
    c.trap_hl_qp = if r.chance(70) { 1 } else { r.u32() };
    c.trap_qkey = if r.chance(70) { 0x8001_0000 } else { r.u32() };
    c.trap_pkey = pkey(r);
    c.redirect_pkey = pkey(r);
    c.trap_sl_rsvd = r.u8();
    reserved(r, &mut c.reserved);
    c
}

fn veswport_info(r: &mut SplitMix64) -> VeswPortInfo {
    let mut p = VeswPortInfo::ZERO;
    let v = &mut p.vesw;
    v.fabric_id = if r.chance(70) {
        r.below(4) as u16
    } else {
        r.u16()
    };
    v.vesw_id = if r.chance(70) {
        r.below(4) as u16
    } else {
        let x = r.u16();
        r.pick(&[0x0fff, 0x1000, 0xffff, x])
    };
    reserved(r, &mut v.rsvd0);
    v.def_port_mask = if r.chance(50) {
        r.below(4) as u16
    } else {
        r.u16()
    };
    reserved(r, &mut v.rsvd1);
    v.pkey = pkey(r);
    reserved(r, &mut v.rsvd2);
    v.u_mcast_dlid = lid(r);
    for d in v.u_ucast_dlid.iter_mut() {
        *d = lid(r);
    }
    v.rc = r.u32();
    reserved(r, &mut v.rsvd3);
    v.eth_mtu = mtu(r);
    reserved(r, &mut v.rsvd4);

    let o = &mut p.vport;
    o.port_num = if r.chance(70) {
        r.below(4) as u32
    } else {
        r.u32()
    };
    o.eth_link_status = r.below(4) as u8;
    reserved(r, &mut o.rsvd0);
    o.base_mac_addr = mac(r);
    o.config_state = if r.chance(85) {
        r.pick(&[1, 3, 3])
    } else {
        let x = r.u8();
        r.pick(&[0, 2, 4, x])
    };
    o.oper_state = r.below(4) as u8;
    o.max_mac_tbl_ent = r.u16();
    o.max_smac_ent = r.u16();
    o.mac_tbl_digest = r.u32();
    reserved(r, &mut o.rsvd1);
    o.encap_slid = lid(r);
    for t in [
        &mut o.pcp_to_sc_uc,
        &mut o.pcp_to_vl_uc,
        &mut o.pcp_to_sc_mc,
        &mut o.pcp_to_vl_mc,
    ] {
        for x in t.iter_mut() {
            *x = sc(r);
        }
    }
    o.non_vlan_sc_uc = sc(r);
    o.non_vlan_vl_uc = sc(r);
    o.non_vlan_sc_mc = sc(r);
    o.non_vlan_vl_mc = sc(r);
    reserved(r, &mut o.rsvd2);
    o.uc_macs_gen_count = r.u16();
    o.mc_macs_gen_count = r.u16();
    reserved(r, &mut o.rsvd3);
    p
}

/// A count of MAC table entries: none, one, a few, the most one MAD carries and one more,
/// absurd.
fn mac_tbl_count(r: &mut SplitMix64) -> u16 {
    let max = MAC_TBL_ENTRIES_PER_MAD;
    match r.below(10) {
        0 => 0,
        1 => max,
        2 => max + 1,
        3 => r.pick(&[0xffff, 0x8000, 2 * max]),
        4 => r.range(1, u64::from(max)) as u16,
        _ => r.range(1, 8) as u16,
    }
}

/// The offset of `num` MAC table entries: the start, the end (exactly reaching the table's
/// end, and one past), inside, or far out.
fn mac_tbl_offset(r: &mut SplitMix64, num: u16) -> u16 {
    let max = MAC_TBL_MAX_ENTRIES;
    match r.below(10) {
        0 => max.wrapping_sub(num),
        1 => max.wrapping_sub(num).wrapping_add(1),
        2 => r.pick(&[max - 1, max, 0xffff, 0x8000]),
        3 => r.below(u64::from(max)) as u16,
        _ => r.below(16) as u16,
    }
}

fn mac_entries(r: &mut SplitMix64, data: &mut [u8]) {
    let num = mac_tbl_count(r);
    let hdr = MacTableHdr {
        offset: mac_tbl_offset(r, num),
        num_entries: num,
        mac_tbl_digest: r.u32(),
    };
    // Cannot fail: the data is longer than the header.
    let _ = hdr.encode(data);
    let entries = &mut data[MacTableHdr::SIZE..];
    for e in entries.chunks_exact_mut(MacTableEntry::SIZE) {
        let mut mask = [0xffu8; 6];
        if r.chance(10) {
            r.fill(&mut mask);
        }
        let dlid_sd = (lid(r) << 8) | if r.chance(10) { u32::from(r.u8()) } else { 0 };
        let entry = MacTableEntry {
            mac_addr: mac(r),
            mac_addr_mask: mask,
            dlid_sd,
        };
        let _ = entry.encode(e);
    }
}

fn iface_macs(r: &mut SplitMix64, data: &mut [u8]) {
    let max = IFACE_MACS_PER_MAD;
    let hdr = IfaceMacsHdr {
        start_idx: match r.below(8) {
            0 => r.pick(&[max - 1, max, max + 1, 0xffff]),
            1 => r.u16(),
            2..=4 => 0,
            _ => r.below(4) as u16,
        },
        num_macs_in_msg: match r.below(8) {
            0 => r.pick(&[max, max + 1, 0xffff]),
            1 => r.u16(),
            2..=4 => 0,
            _ => r.range(1, 4) as u16,
        },
        tot_macs_in_lst: if r.chance(70) { 0 } else { r.u16() },
        gen_count: if r.chance(70) { 0 } else { r.u16() },
    };
    let _ = hdr.encode(data);
    if r.chance(20) {
        r.fill(&mut data[IfaceMacsHdr::SIZE..]);
    }
}

/// Writes the attribute's structure with sensible values into `data` (the whole data part
/// of a full MAD).
pub(super) fn valid_content(r: &mut SplitMix64, attr_id: u16, method: u8, data: &mut [u8]) {
    match attr_id {
        ATTR_CLASS_PORT_INFO => {
            let _ = class_port_info(r).encode(data);
        }
        ATTR_VESWPORT_INFO => {
            let _ = veswport_info(r).encode(data);
        }
        ATTR_VESWPORT_MAC_ENTRIES => mac_entries(r, data),
        ATTR_IFACE_UCAST_MACS | ATTR_IFACE_MCAST_MACS => iface_macs(r, data),
        // A Get of the counters carries nothing; a Set of them is refused whatever it
        // carries. Random counters stand for what an EM might echo back.
        ATTR_VESWPORT_SUMMARY_COUNTERS | ATTR_VESWPORT_ERROR_COUNTERS if method != METHOD_GET => {
            r.fill(&mut data[..SummaryCounters::SIZE]);
        }
        _ => {}
    }
}

/// The attribute modifier: vports 0-3 mostly, so the drivers' state stays small; any vport
/// sometimes; bits 8-31 set sometimes (the drivers take bits 0-7 only).
pub(super) fn attr_mod(r: &mut SplitMix64) -> u32 {
    match r.below(100) {
        0..=83 => r.below(4) as u32,
        84..=89 => r.range(4, 255) as u32,
        90..=95 => (r.u32() & 0xffff_ff00) | r.below(4) as u32,
        _ => {
            let x = r.u32();
            r.pick(&[0xffff_ffff, 0x0000_00ff, 0x8000_0000, x])
        }
    }
}
