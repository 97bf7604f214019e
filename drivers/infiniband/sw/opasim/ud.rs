// SPDX-License-Identifier: GPL-2.0-only

//! The UD send engine: a send on QP0/QP1 becomes a packet that the switch delivers to the
//! destination port, where the P_Key and Q_Key checks pick or refuse the receiving QP.

use crate::{
    capture::Kind,
    faults::Fault,
    hfi::Hfi,
    port::{Counters, Port},
    qp,
};
use kernel::{
    prelude::*,
    rdma::verbs::{Qp, RecvInfo, Refused, SendWr, WcStatus, QP1_QKEY},
};

/// A UD packet on the wire, with the fields the simulated link layer carries.
pub(crate) struct Packet<'a> {
    /// The source LID.
    pub(crate) slid: u32,
    /// The destination LID.
    pub(crate) dlid: u32,
    /// The service level.
    pub(crate) sl: u8,
    /// The P_Key.
    pub(crate) pkey: u16,
    /// The source QP number.
    pub(crate) src_qp: u32,
    /// The destination QP number.
    pub(crate) dest_qp: u32,
    /// The Q_Key.
    pub(crate) qkey: u32,
    /// The immediate data.
    pub(crate) imm: Option<u32>,
    /// The solicited event bit.
    pub(crate) solicited: bool,
    /// The payload (a MAD, for QP0/QP1).
    pub(crate) payload: &'a [u8],
}

/// What sending a request needs, checked by [`prepare`].
struct Sendable<'q> {
    qkey: u32,
    port_num: u32,
    port: &'q Port,
    slid: u32,
    pkey: u16,
    payload: KVec<u8>,
}

/// What [`prepare`] makes of a request the QP takes.
enum Prepared<'q> {
    /// It goes on the wire.
    Send(Sendable<'q>),
    /// The port cannot put it on the wire: it completes with `IB_WC_GENERAL_ERR` (on the
    /// port numbered here).
    ///
    /// hfi1 takes such a request and fails it at its completion, not at the post:
    /// `hfi1_verbs_send_pio()` completes a send with `IB_WC_GENERAL_ERR` when
    /// `sc_buffer_alloc()` returns `-ECOMM` (the send contexts are stopped while the link is
    /// down, `SCF_LINK_DOWN`), and `hfi1_verbs_send()` one that fails `egress_pkey_check()`.
    /// A refusal at the post would show the MAD layer's users an error hfi1 never gives them:
    /// ib_core's response agent logs `ib_post_send_mad error` for an answer to a MAD that
    /// came in just before the link went down, and umad fails the `write()`.
    Fails(u32),
}

/// The checks of sending `wr` from `from`, and the payload gathered.
fn prepare<'q>(from: &'q Qp<Hfi>, wr: &SendWr<'_>) -> Result<Prepared<'q>> {
    let (qkey, pkey_index, port_num) = qp::send_keys(from, wr)?;
    let port = from.device().data().port(port_num)?;
    // SMPs (QP0) leave a port whose link is up, before the SM has made it Active (and given it
    // a LID); everything else needs an Active port.
    let c = port.config();
    let slid = match port.active_lid() {
        Some(l) => l,
        None if from.qp_num() == 0 && c.state != kernel::rdma::provider::PortState::Down => c.lid,
        None => return Ok(Prepared::Fails(port_num)),
    };
    let Some(pkey) = port.pkey(pkey_index) else {
        // `egress_pkey_check()` counts it in `port_xmit_constraint_errors`.
        Counters::inc(&port.counters.xmit_bad_pkey);
        return Ok(Prepared::Fails(port_num));
    };
    let mut payload = KVec::with_capacity(wr.len(), GFP_ATOMIC)?;
    wr.gather(&mut payload)?;
    Ok(Prepared::Send(Sendable {
        qkey,
        port_num,
        port,
        slid,
        pkey,
        payload,
    }))
}

/// Sends `wr` from the QP `from`: builds the packet and hands it to the switch. The send completes
/// successfully even when the packet is dropped on the way, as on a real fabric; it completes
/// with an error when the port cannot send it ([`Prepared::Fails`]).
pub(crate) fn send<'a>(from: &Qp<Hfi>, wr: SendWr<'a>) -> Result<(), Refused<SendWr<'a>>> {
    // Refused before it completes, or not at all: the completion consumes the request.
    let Sendable {
        qkey,
        port_num,
        port,
        slid,
        pkey,
        payload,
    } = match prepare(from, &wr) {
        Ok(Prepared::Send(s)) => s,
        Ok(Prepared::Fails(port_num)) => {
            qp::complete_send(from, wr, WcStatus::GeneralError, port_num);
            return Ok(());
        }
        Err(e) => return Err(Refused::new(wr, e)),
    };
    if port.faults.take(Fault::MadSend) {
        // As hfi1 completes a send it cannot put on the wire (see [`crate::faults`]).
        pr_info!(
            "port {}: injected fault: QP{} send completes with IB_WC_GENERAL_ERR\n",
            port_num,
            from.qp_num()
        );
        qp::complete_send(from, wr, WcStatus::GeneralError, port_num);
        return Ok(());
    }
    let dev = from.device().data();
    let ah = wr.ah();
    let pkt = Packet {
        slid,
        dlid: ah.dlid,
        sl: ah.sl,
        pkey,
        src_qp: from.qp_num(),
        dest_qp: wr.remote_qpn(),
        qkey,
        imm: wr.imm(),
        solicited: wr.solicited(),
        payload: &payload,
    };
    Counters::inc(&port.counters.xmit_packets);
    Counters::add(&port.counters.xmit_bytes, payload.len() as u64);
    qp::complete_send(from, wr, WcStatus::Success, port_num);
    dev.fabric
        .capture(Kind::Ud, port, slid, pkt.dlid, pkey, None, pkt.payload);
    // The managed switch takes the SMPs that are its own: directed-route ones, and those for
    // its LID.
    let smp = pkt.dest_qp == 0;
    if smp && dev.fabric.managed && crate::switch_smi::take(&dev.fabric, port, &pkt) {
        return Ok(());
    }
    let to = if smp {
        dev.fabric.forward_smp(port, pkt.dlid)
    } else {
        dev.fabric.forward(port, pkt.dlid)
    };
    if let Some(to) = to {
        // Refusals are counted by the receiving port.
        let _ = receive(&to, &pkt);
    }
    Ok(())
}

/// Why a port refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No P_Key of the port accepts the packet's.
    BadPkey,
    /// The Q_Key is not the receiving QP's.
    BadQkey,
    /// No such QP, or it has no receive posted.
    NoReceiver,
}

/// Receives `pkt` on `port`: the P_Key check, the QP lookup, the Q_Key check, delivery.
/// Refusals are counted in the port's counters.
pub(crate) fn receive(port: &Port, pkt: &Packet<'_>) -> core::result::Result<(), Refusal> {
    let c = &port.counters;
    let Some(pkey_index) = port.accept_pkey(pkt.pkey) else {
        Counters::inc(&c.rcv_bad_pkey);
        return Err(Refusal::BadPkey);
    };
    let Some(to) = port.qp(pkt.dest_qp) else {
        Counters::inc(&c.rcv_dropped);
        return Err(Refusal::NoReceiver);
    };
    // QP0 takes no Q_Key; QP1 only the well-known one.
    if pkt.dest_qp == 1 && pkt.qkey != QP1_QKEY {
        Counters::inc(&c.rcv_qkey_viol);
        return Err(Refusal::BadQkey);
    }
    // QP0 and QP1 report the index hfi1 looks up for a MAD, the management P_Keys by exact
    // match; the accepting entry otherwise.
    let pkey_index = match pkt.dest_qp {
        0 | 1 => port.mad_pkey_index(pkt.pkey).unwrap_or(pkey_index),
        _ => pkey_index,
    };
    let info = RecvInfo {
        slid: pkt.slid,
        src_qp: pkt.src_qp,
        sl: pkt.sl,
        pkey_index,
        imm: pkt.imm,
        solicited: pkt.solicited,
    };
    if qp::deliver_ud(&to, &[pkt.payload], &info).is_err() {
        Counters::inc(&c.rcv_dropped);
        return Err(Refusal::NoReceiver);
    }
    Counters::inc(&c.rcv_packets);
    Counters::add(&c.rcv_bytes, pkt.payload.len() as u64);
    Ok(())
}
