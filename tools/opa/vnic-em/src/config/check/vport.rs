// SPDX-License-Identifier: GPL-2.0

//! `[[vport]]`.

use std::collections::HashMap;
use std::ops::Range;

use opa_wire::vema_info::MAX_NUM_VPORT;
use toml::Spanned;

use super::qos::{check_pairs, Sc2vl};
use super::Checker;
use crate::config::{
    Qos, RawVport, SInt, Vport, LID24_MAX, SC_VL_MAX, UNICAST_LID_MAX, VESW_ID_MAX,
};
use crate::mac::Mac;

/// The (LID, vport) pairs, vesw port numbers and MACs met so far, at
/// which line: each is used once.
#[derive(Default)]
pub(super) struct VportsSeen {
    keys: HashMap<(u16, u8), usize>,
    port_nums: HashMap<(u16, u32), usize>,
    macs: HashMap<(u16, Mac), usize>,
    /// By node port LID and the low 8 bits of a vesw id: the first vesw
    /// with a vport there, at which line.
    /// The node port is its LID, or its name before the SA resolves it.
    vnic_ids: HashMap<(String, u8), (u16, usize)>,
}

/// hfi1 finds the netdev of a received frame by the low 8 bits of the
/// vesw id (`VNIC_ID()`), per device: two vesws of one node whose ids are
/// equal modulo 256 collide there. A warning, not an error: the config is
/// right, and a VNIC driver with a receive path of its own would take it.
fn check_vnic_id(c: &mut Checker<'_>, at: &SInt, who: String, vesw: u16, seen: &mut VportsSeen) {
    let key = (who.clone(), (vesw & 0xff) as u8);
    match seen.vnic_ids.get(&key) {
        Some(&(other, line)) if other != vesw => c.warn(
            at.span(),
            format!(
                "vesw {vesw} ({vesw:#x}) and vesw {other} ({other:#x}, line {line}) both have \
                 vports on {who} and ids equal modulo 256: hfi1 tells the vesws of a \
                 node apart by the low 8 bits of the id, so this netdev fails to open \
                 (EBUSY) if the other is up"
            ),
        ),
        Some(_) => {}
        None => {
            let line = c.line_of(&at.span());
            seen.vnic_ids.insert(key, (vesw, line));
        }
    }
}

/// One `[[vport]]`; `vesw_ids`: the vesws defined; `sc2vl`: the table its
/// SC/VL pairs must agree with.
pub(super) fn check_vport(
    c: &mut Checker<'_>,
    sp: &Spanned<RawVport>,
    vesw_ids: &HashMap<u16, Range<usize>>,
    sc2vl: &Sc2vl,
    seen: &mut VportsSeen,
) -> Vport {
    let p = sp.get_ref();
    // The node port: by LID, or by name (resolved through the SA before use).
    let (lid, node): (u16, Option<usize>) = match (&p.lid, &p.node) {
        (Some(l), None) => (
            c.int(l, 1, i64::from(UNICAST_LID_MAX), true, "vport lid"),
            None,
        ),
        (None, Some(n)) => (0, c.node(n, "vport node")),
        (Some(_), Some(n)) => {
            c.err(
                n.span(),
                "give the vport's node port by `lid` or by `node`, not both",
            );
            (0, None)
        }
        (None, None) => {
            c.err_absent(
                sp.span(),
                "vport: missing `node` (port GUID or node description) or `lid`",
            );
            (0, None)
        }
    };
    let vport: u8 = c.opt_int(
        &p.vport,
        0,
        i64::from(MAX_NUM_VPORT) - 1,
        false,
        "vport number",
        0,
    );
    let here = c.line_of(&sp.span());
    // Named vports are checked for duplicates once their LIDs are known.
    if let Some(sv) = p.vport.as_ref().filter(|_| node.is_none() && lid != 0) {
        if let Some(l) = seen.keys.get(&(lid, vport)) {
            c.err(
                sv.span(),
                format!(
                    "duplicate vport: LID {lid:#06x} vport {vport} already defined at line {l}"
                ),
            );
        } else {
            seen.keys.insert((lid, vport), here);
        }
    }
    let vesw: u16 = c.opt_int(&p.vesw, 0, i64::from(VESW_ID_MAX), true, "vesw id", 0);
    if let Some(sv) = &p.vesw {
        if (0..=i64::from(VESW_ID_MAX)).contains(sv.get_ref()) && !vesw_ids.contains_key(&vesw) {
            // The id as the user wrote it, to find it in the file.
            let w = c.src.get(sv.span()).unwrap_or_default();
            c.err_absent(
                sv.span(),
                format!("vesw {w} is not defined (add a [[vesw]] with id = {w})"),
            );
        } else if vesw_ids.contains_key(&vesw) {
            let who = match node.and_then(|i| c.names.get(i)) {
                Some(n) => n.name.to_string(),
                None => format!("LID {lid:#06x}"),
            };
            check_vnic_id(c, sv, who, vesw, seen);
        }
    }
    let port_num: u32 = c.opt_int(&p.port_num, 0, i64::from(u32::MAX), false, "port_num", 0);
    if let Some(spn) = &p.port_num {
        if let Some(l) = seen.port_nums.get(&(vesw, port_num)) {
            c.err(
                spn.span(),
                format!("port_num {port_num} of vesw {vesw} already used at line {l}"),
            );
        } else {
            seen.port_nums.insert((vesw, port_num), here);
        }
    }
    let parsed = p
        .mac
        .as_ref()
        .and_then(|m| Some((c.mac(m, "vport mac")?, m)));
    let mac = parsed.map(|(m, _)| m).unwrap_or_default();
    if let Some((mac, smac)) = parsed {
        if let Some(problem) = mac.unicast_problem() {
            c.err(smac.span(), format!("vport mac: {problem}"));
        } else if let Some(l) = seen.macs.get(&(vesw, mac)) {
            c.err(
                smac.span(),
                format!("duplicate MAC {mac} in vesw {vesw} (first used at line {l})"),
            );
        } else {
            seen.macs.insert((vesw, mac), here);
        }
    }
    let encap_slid = c.opt_int(
        &p.encap_slid,
        1,
        i64::from(LID24_MAX),
        true,
        "encap_slid",
        u32::from(lid),
    );
    let s = i64::from(SC_VL_MAX);
    let errors_before = c.diags.len();
    let qos = Qos {
        pcp_sc_uc: c.pcp(&p.pcp_sc_uc, "pcp_sc_uc"),
        pcp_vl_uc: c.pcp(&p.pcp_vl_uc, "pcp_vl_uc"),
        pcp_sc_mc: c.pcp(&p.pcp_sc_mc, "pcp_sc_mc"),
        pcp_vl_mc: c.pcp(&p.pcp_vl_mc, "pcp_vl_mc"),
        non_vlan_sc_uc: c.opt_int(&p.non_vlan_sc_uc, 0, s, false, "non_vlan_sc_uc", 0),
        non_vlan_vl_uc: c.opt_int(&p.non_vlan_vl_uc, 0, s, false, "non_vlan_vl_uc", 0),
        non_vlan_sc_mc: c.opt_int(&p.non_vlan_sc_mc, 0, s, false, "non_vlan_sc_mc", 0),
        non_vlan_vl_mc: c.opt_int(&p.non_vlan_vl_mc, 0, s, false, "non_vlan_vl_mc", 0),
    };
    // A value out of range stands as 0 in `qos`: no pair to check then.
    if c.diags.len() == errors_before {
        check_pairs(c, p, &qos, &sp.span(), sc2vl);
    }
    Vport {
        lid,
        node,
        vport,
        vesw,
        port_num,
        mac,
        enabled: p.enabled.unwrap_or(true),
        encap_slid,
        encap_slid_set: p.encap_slid.is_some(),
        qos,
    }
}
