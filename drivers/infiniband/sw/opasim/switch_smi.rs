// SPDX-License-Identifier: GPL-2.0-only

//! The switch's subnet management interface: what it does with an SMP that comes in on one of
//! its ports. A directed-route SMP is forwarded along its initial path or, on the way back,
//! its return path, with the hop pointer and return path kept as IBA 14.2.2 and the IB core's
//! `smi.c` (`smi_handle_dr_smp_recv()`, `smi_check_forward_dr_smp()`,
//! `smi_handle_dr_smp_send()`) define them for a switch; at the end of its path it goes to
//! the switch's SMA, whose answer takes the return path. A LID-routed SMP for the switch's own
//! LID is answered back to its source LID through the LFT.

use crate::{
    fabric::Fabric,
    port::{Counters, Port},
    switch::SWITCH_PORTS,
    switch_sma::{answer, Neighbor, SwSma},
    ud::{self, Packet},
};
use kernel::{
    prelude::*,
    rdma::provider::mad::{CLASS_SUBN_DIRECTED_ROUTE, CLASS_SUBN_LID_ROUTED, OPA_MAD_SIZE},
};

/// The most hops a directed route has (`IB_SMP_MAX_PATH_HOPS`).
const MAX_HOPS: u8 = 64;
/// The permissive LID of a directed-route SMP's DrSLID/DrDLID (`OPA_LID_PERMISSIVE`).
const PERMISSIVE: u32 = 0xffff_ffff;
/// Where the data of a directed-route OPA SMP starts (`struct opa_smp`).
const DR_DATA: usize = 176;
/// Where the data of a LID-routed OPA SMP starts.
const LR_DATA: usize = 32;
/// The direction bit of the status.
const DIRECTION: u16 = 0x8000;

/// What the switch does with a directed-route SMP (`enum smi_forward_action` with discard).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DrAction {
    /// Dropped: the hop pointer or path is not valid here.
    Discard,
    /// Sent on out of this port.
    Forward(u8),
    /// For the switch's own SMA.
    Local,
    /// The directed part ended here on the way back: LID-routed on to the SMP's DrSLID (a
    /// route that began with a LID-routed part, mixed LR-DR).
    ToSlid(u32),
}

fn be16(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map_or(0, |x| u16::from_be_bytes([x[0], x[1]]))
}

fn be32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// The byte of the initial (`40 + i`) or return (`104 + i`) path.
fn path(b: &[u8], base: usize, i: u8) -> u8 {
    b.get(base + usize::from(i)).copied().unwrap_or(0xff)
}

/// Takes the directed-route SMP `smp` in on port `port` of the switch and moves its hop
/// pointer (and, going out, its return path) as a switch does: receive, then the forward
/// check, then the send side for the port it leaves on.
pub(crate) fn dr_step(smp: &mut [u8], port: u8) -> DrAction {
    if smp.len() < DR_DATA {
        return DrAction::Discard;
    }
    let (mut hop_ptr, hop_cnt) = (smp[6], smp[7]);
    let back = be16(smp, 4) & DIRECTION != 0;
    let slid_perm = be32(smp, 32) == PERMISSIVE;
    let dlid_perm = be32(smp, 36) == PERMISSIVE;
    if hop_cnt >= MAX_HOPS {
        return DrAction::Discard;
    }
    let action = if !back {
        if hop_cnt != 0 && hop_ptr == 0 {
            // C14-9:1: the sender moves the hop pointer, unless a LID-routed part brought the
            // SMP here (its DrSLID is the sender's LID): the directed part starts here, as the
            // send side of a switch starts it (`smi_handle_dr_smp_send()`).
            if slid_perm {
                return DrAction::Discard;
            }
            let out = path(smp, 40, 1);
            if out == 0 || usize::from(out) > SWITCH_PORTS {
                return DrAction::Discard;
            }
            smp[6] = 1;
            return DrAction::Forward(out);
        }
        if hop_ptr != 0 && hop_ptr < hop_cnt {
            // C14-9:2: an intermediate hop: note where it came from, go on.
            smp[104 + usize::from(hop_ptr)] = port;
            let out = path(smp, 40, hop_ptr + 1);
            if out == 0 || usize::from(out) > SWITCH_PORTS {
                return DrAction::Discard;
            }
            hop_ptr += 1;
            DrAction::Forward(out)
        } else if hop_ptr == hop_cnt {
            // C14-9:3: the end of the directed part; only a permissive DLID ends here.
            if hop_cnt != 0 {
                smp[104 + usize::from(hop_ptr)] = port;
            }
            if !dlid_perm {
                return DrAction::Discard;
            }
            hop_ptr += 1;
            DrAction::Local
        } else if hop_ptr == hop_cnt + 1 {
            DrAction::Local
        } else {
            return DrAction::Discard;
        }
    } else if hop_cnt != 0 && hop_ptr == hop_cnt + 1 {
        // C14-13:1: a response this switch made, back to where the request came from.
        hop_ptr -= 1;
        DrAction::Forward(path(smp, 104, hop_ptr))
    } else if (2..=hop_cnt).contains(&hop_ptr) {
        // C14-13:2: an intermediate hop on the way back.
        hop_ptr -= 1;
        let out = path(smp, 104, hop_ptr);
        if out == 0 || usize::from(out) > SWITCH_PORTS {
            return DrAction::Discard;
        }
        DrAction::Forward(out)
    } else if hop_ptr == 1 && !slid_perm {
        // C14-13:3: the end of the directed part on the way back; the rest is LID-routed.
        smp[6] = 0;
        return DrAction::ToSlid(be32(smp, 32));
    } else {
        return DrAction::Discard;
    };
    smp[6] = hop_ptr;
    action
}

/// The neighbours of the switch's ports, and whether each link is up.
fn neighbors(fabric: &Fabric) -> Result<KVec<(Neighbor, bool)>> {
    let mut out = KVec::with_capacity(SWITCH_PORTS, GFP_ATOMIC)?;
    for i in 0..SWITCH_PORTS {
        let n = fabric.slot(i).map_or((Neighbor::default(), false), |p| {
            (
                Neighbor {
                    guid: crate::sim::device_guid(p.dev_index),
                    port: p.num as u8,
                    mgmt_allowed: fabric.mgmt_allowed(p.dev_index),
                },
                p.config().state != kernel::rdma::provider::PortState::Down,
            )
        });
        out.push(n, GFP_ATOMIC)?;
    }
    Ok(out)
}

/// Has the switch's SMA answer `smp` (its data at `at`), which came in on `ingress`.
fn to_sma(fabric: &Fabric, smp: &mut [u8], ingress: usize, at: usize) -> Result<usize> {
    let links = neighbors(fabric)?;
    let mut ns = KVec::with_capacity(links.len(), GFP_ATOMIC)?;
    for (n, _) in links.iter() {
        ns.push(*n, GFP_ATOMIC)?;
    }
    let mut st = fabric.switch.lock();
    for (i, (_, up)) in links.iter().enumerate() {
        st.link(i + 1, *up);
    }
    let mut s = SwSma {
        st: &mut st,
        ingress,
        neighbors: &ns,
        method: smp.get(3).copied().unwrap_or(0),
        mkey: u64::from(be32(smp, 24)) << 32 | u64::from(be32(smp, 28)),
    };
    Ok(answer(&mut s, smp, at))
}

/// Sends `payload` out of switch port `out` to the HFI port there, as QP0 traffic of `pkt`.
fn out_of(fabric: &Fabric, out: u8, pkt: &Packet<'_>, payload: &[u8]) {
    let Some(to) = usize::from(out).checked_sub(1).and_then(|i| fabric.slot(i)) else {
        Counters::inc(&fabric.unknown_dlid);
        return;
    };
    let p = Packet { payload, ..*pkt };
    let _ = ud::receive(&to, &p);
}

/// Takes the QP0 packet `pkt` that `from` sent, when it is the switch's: a directed-route
/// SMP, or a LID-routed one for the switch's LID. `false` leaves it to LID routing.
pub(crate) fn take(fabric: &Fabric, from: &Port, pkt: &Packet<'_>) -> bool {
    let class = pkt.payload.get(1).copied();
    let own = class == Some(CLASS_SUBN_LID_ROUTED) && fabric.switch.lock().is_own(pkt.dlid);
    if class != Some(CLASS_SUBN_DIRECTED_ROUTE) && !own {
        return false;
    }
    let Some(ingress) = fabric.slot_of(from).map(|i| i + 1) else {
        return true;
    };
    // A whole MAD: the answer may be longer than the request (a Get carries no data).
    let Ok(mut smp) = KVec::from_elem(0u8, OPA_MAD_SIZE, GFP_ATOMIC) else {
        return true;
    };
    let n = pkt.payload.len().min(OPA_MAD_SIZE);
    smp[..n].copy_from_slice(&pkt.payload[..n]);
    if own {
        if let Ok(n) = to_sma(fabric, &mut smp, ingress, LR_DATA) {
            // The answer goes back to the source LID, from the switch's.
            let lid = fabric.switch.lock().lid;
            let back = Packet {
                slid: lid,
                dlid: pkt.slid,
                dest_qp: pkt.src_qp,
                src_qp: 0,
                payload: smp.get(..n).unwrap_or(&[]),
                ..*pkt
            };
            if let Some(to) = fabric.forward_from_switch(back.dlid) {
                let _ = ud::receive(&to, &back);
            }
        }
        return true;
    }
    match dr_step(&mut smp, ingress as u8) {
        DrAction::Discard => Counters::inc(&fabric.unknown_dlid),
        DrAction::Forward(out) => out_of(fabric, out, pkt, &smp),
        DrAction::ToSlid(slid) => {
            let lid = fabric.switch.lock().lid;
            let on = Packet {
                slid: lid,
                dlid: slid,
                payload: &smp,
                ..*pkt
            };
            match fabric.forward_from_switch(slid) {
                Some(to) => {
                    let _ = ud::receive(&to, &on);
                }
                None => Counters::inc(&fabric.unknown_dlid),
            }
        }
        DrAction::Local => {
            let Ok(n) = to_sma(fabric, &mut smp, ingress, DR_DATA) else {
                return true;
            };
            let Some(resp) = smp.get_mut(..n) else {
                return true;
            };
            match dr_step(resp, ingress as u8) {
                DrAction::Forward(out) => out_of(fabric, out, pkt, resp),
                _ => Counters::inc(&fabric.unknown_dlid),
            }
        }
    }
    true
}
