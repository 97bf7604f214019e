// SPDX-License-Identifier: GPL-2.0-only

//! The simulated HFI: the provider of opasim's RDMA devices (their attributes and QPs).

use crate::{
    cq::{self, HfiCq},
    fabric::Fabric,
    port::{Capabilities, Port, PKEY_TABLE_LEN},
    qp::{self, HfiQp},
    ud,
    vnic::HfiVnic,
};
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{
    prelude::*,
    rdma::{
        provider::{
            self,
            mad::{MadReply, MadRequest, MadVerdict},
            DeviceAttr, Mtu, PortAttr, PortCapMask, PortImmutable, PortModify, ProviderDevice,
            StatDesc, SPEED_EDR, WIDTH_4X,
        },
        verbs::{
            Cq, CqNotify, Qp, QpInit, QpModify, QpQuery, QpType, RecvWr, Refused, SendWr, WcWriter,
        },
    },
    sync::Arc,
};

/// The OUI of the simulated devices (Intel's, as hfi1 reports).
pub(crate) const VENDOR_ID: u32 = 0x1175;

/// The part id of the simulated devices (not a real part).
pub(crate) const PART_ID: u32 = 0x5053;

/// The provider of opasim's devices.
pub(crate) struct Hfi;

/// What opasim keeps for each device.
pub(crate) struct HfiDevice {
    /// The device's GUID.
    pub(crate) guid: u64,
    /// The switch the device's ports are attached to.
    pub(crate) fabric: Arc<Fabric>,
    /// The device's ports, port 1 first.
    pub(crate) ports: KVec<Arc<Port>>,
    /// The node description, as the SMA answers it: the IB core's copy, kept here too since
    /// the core changes its own without a lock (words, so a reader racing a change sees a
    /// mix of both descriptions, as on hfi1, but no torn word).
    node_desc: [AtomicU64; provider::NODE_DESC_LEN / 8],
}

impl HfiDevice {
    /// A device of GUID `guid` with `ports` on `fabric`, named by [`Hfi::NODE_DESC`] until
    /// someone changes it.
    pub(crate) fn new(guid: u64, fabric: Arc<Fabric>, ports: KVec<Arc<Port>>) -> Self {
        let d = Self {
            guid,
            fabric,
            ports,
            node_desc: [const { AtomicU64::new(0) }; provider::NODE_DESC_LEN / 8],
        };
        let mut desc = [0u8; provider::NODE_DESC_LEN];
        for (o, i) in desc
            .iter_mut()
            .zip(<Hfi as provider::Provider>::NODE_DESC.as_bytes())
        {
            *o = *i;
        }
        d.set_node_desc(&desc);
        d
    }

    /// The node description (NUL-padded).
    pub(crate) fn node_desc(&self) -> [u8; provider::NODE_DESC_LEN] {
        let mut out = [0u8; provider::NODE_DESC_LEN];
        for (o, w) in out.chunks_exact_mut(8).zip(self.node_desc.iter()) {
            o.copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
        }
        out
    }

    /// Replaces the node description.
    pub(crate) fn set_node_desc(&self, desc: &[u8; provider::NODE_DESC_LEN]) {
        for (c, w) in desc.chunks_exact(8).zip(self.node_desc.iter()) {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            w.store(u64::from_ne_bytes(b), Ordering::Relaxed);
        }
    }

    /// The port `num` (from 1).
    pub(crate) fn port(&self, num: u32) -> Result<&Arc<Port>> {
        let i = num.checked_sub(1).ok_or(EINVAL)?;
        self.ports.get(i as usize).ok_or(EINVAL)
    }
}

fn port_of(dev: &ProviderDevice<Hfi>, num: u32) -> Result<&Arc<Port>> {
    dev.data().port(num)
}

/// The per-port counters, in `hw_counters` (see [`crate::port::Counters`]).
static COUNTERS: [StatDesc; 9] = [
    StatDesc::new(kernel::c_str!("xmit_packets")),
    StatDesc::new(kernel::c_str!("xmit_bytes")),
    StatDesc::new(kernel::c_str!("xmit_unknown_dlid")),
    StatDesc::new(kernel::c_str!("xmit_bad_pkey")),
    StatDesc::new(kernel::c_str!("rcv_packets")),
    StatDesc::new(kernel::c_str!("rcv_bytes")),
    StatDesc::new(kernel::c_str!("rcv_bad_pkey")),
    StatDesc::new(kernel::c_str!("rcv_qkey_viol")),
    StatDesc::new(kernel::c_str!("rcv_dropped")),
];

#[vtable]
impl provider::Provider for Hfi {
    const NODE_DESC: &'static CStr = kernel::c_str!("opasim software OPA HFI");

    type Data = HfiDevice;
    type Cq = HfiCq;
    type Qp = HfiQp;
    type Vnic = HfiVnic;

    fn query_device(dev: &ProviderDevice<Self>) -> DeviceAttr {
        DeviceAttr {
            sys_image_guid: dev.data().guid,
            vendor_id: VENDOR_ID,
            vendor_part_id: PART_ID,
            max_qp: 16,
            max_qp_wr: 16384,
            max_sge: kernel::rdma::verbs::MAX_SGE as u32,
            max_cq: 64,
            max_cqe: cq::MAX_CQE,
            max_pd: 64,
            max_ah: 65536,
            max_pkeys: PKEY_TABLE_LEN as u16,
            opa_vnic: true,
        }
    }

    fn query_port(dev: &ProviderDevice<Self>, num: u32) -> Result<PortAttr> {
        let port = port_of(dev, num)?;
        let c = port.config();
        let m = port.mgmt();
        let n = |v: u64| v.min(u32::MAX.into()) as u32;
        Ok(PortAttr {
            state: c.state,
            lid: c.lid,
            sm_lid: m.sm_lid.unwrap_or_else(|| dev.data().fabric.sm_lid()),
            sm_sl: m.sm_sl,
            lmc: 0,
            gid_tbl_len: 1,
            pkey_tbl_len: PKEY_TABLE_LEN as u16,
            port_cap_flags: Capabilities::get(&port.caps.ib),
            max_msg_sz: 4096,
            bad_pkey_cntr: n(crate::port::Counters::get(&port.counters.rcv_bad_pkey)),
            qkey_viol_cntr: n(crate::port::Counters::get(&port.counters.rcv_qkey_viol)),
            // An OPA-100 port as hfi1 reports it to the IB core: 4096-byte InfiniBand MTU
            // (OPA MTUs are larger: 8192 physical), 4X EDR, the VLs opasim models for MADs.
            mtu: Mtu::Mtu4096,
            phys_mtu: 8192,
            max_vl_num: 4,
            subnet_timeout: m.subnet_timeout,
            active_width: WIDTH_4X,
            active_speed: SPEED_EDR,
        })
    }

    /// The node description changes as on hfi1 (`modify_device()` in `hw/hfi1/verbs.c`),
    /// where `rdma-ndd` writes `hostname hfi1_0` at boot. hfi1 also sends its SM a
    /// node-description-changed trap; opasim's SA reads the description when asked.
    fn modify_node_desc(
        dev: &ProviderDevice<Self>,
        desc: &[u8; provider::NODE_DESC_LEN],
    ) -> Result {
        dev.data().set_node_desc(desc);
        // hfi1 tells the SM (`hfi1_node_desc_chg()`: trap 144 with the description flag).
        for port in dev.data().ports.iter() {
            crate::sma_trap::local_changes(
                port,
                &dev.data().fabric,
                crate::sma_trap::CHANGE_NODE_DESC,
            );
        }
        Ok(())
    }

    /// The SMA and PMA of each port, as hfi1's (see [`crate::sma`]).
    fn process_mad(
        dev: &ProviderDevice<Self>,
        req: &MadRequest<'_>,
        reply: &mut MadReply<'_>,
    ) -> MadVerdict {
        crate::sma::process(dev, req, reply)
    }

    /// Capability bits change as asked (as rdmavt's `rvt_modify_port()`); the Q_Key violation
    /// counter can be zeroed. A port cannot be shut down this way: its state is the fabric's,
    /// set in debugfs.
    fn modify_port(dev: &ProviderDevice<Self>, num: u32, change: &PortModify) -> Result {
        let port = port_of(dev, num)?;
        if change.shutdown {
            return Err(EOPNOTSUPP);
        }
        let mask = match change.mask {
            PortCapMask::Ib => &port.caps.ib,
            PortCapMask::Opa3 => &port.caps.opa3,
        };
        let before = Capabilities::get(mask);
        Capabilities::modify(mask, change.set, change.clear);
        // A changed mask is told to the SM (trap 144), as rdmavt's `rvt_modify_port()` has
        // hfi1 do (`hfi1_cap_mask_chg()`).
        if Capabilities::get(mask) != before {
            crate::sma_trap::local_changes(port, &dev.data().fabric, 0);
        }
        if change.reset_qkey_cntr {
            port.counters.rcv_qkey_viol.store(0, Ordering::Relaxed);
        }
        Ok(())
    }

    fn port_immutable(dev: &ProviderDevice<Self>, num: u32) -> Result<PortImmutable> {
        port_of(dev, num)?;
        Ok(PortImmutable {
            opa: true,
            pkey_tbl_len: PKEY_TABLE_LEN as u16,
            gid_tbl_len: 1,
        })
    }

    fn query_pkey(dev: &ProviderDevice<Self>, num: u32, index: u16) -> Result<u16> {
        let c = port_of(dev, num)?.config();
        c.pkeys.get(usize::from(index)).copied().ok_or(EINVAL)
    }

    fn query_gid(dev: &ProviderDevice<Self>, num: u32, index: u32) -> Result<[u8; 16]> {
        let port = port_of(dev, num)?;
        if index != 0 {
            return Err(EINVAL);
        }
        let mut gid = [0u8; 16];
        gid[..8].copy_from_slice(&0xfe80_0000_0000_0000u64.to_be_bytes());
        gid[8..].copy_from_slice(&port.guid.to_be_bytes());
        Ok(gid)
    }

    fn create_cq(_dev: &ProviderDevice<Self>, entries: u32) -> Result<impl PinInit<HfiCq, Error>> {
        HfiCq::new(entries)
    }

    fn poll_cq(cq: &Cq<Self>, out: &mut WcWriter<'_>) {
        cq::poll(cq, out)
    }

    fn req_notify_cq(cq: &Cq<Self>, notify: &CqNotify) -> bool {
        cq::req_notify(cq, notify)
    }

    fn create_qp(
        dev: &ProviderDevice<Self>,
        init: &QpInit,
    ) -> Result<(u32, impl PinInit<HfiQp, Error>)> {
        let (qpn, slot) = match init.qp_type {
            QpType::Smi => (0, 0),
            QpType::Gsi => (1, 1),
            // Only the MAD stack's QPs are simulated.
            QpType::Ud => return Err(EOPNOTSUPP),
        };
        port_of(dev, init.port)?;
        Ok((qpn, HfiQp::new(Some(slot), init)))
    }

    fn modify_qp(qp: &Qp<Self>, attr: &QpModify) -> Result {
        qp::modify(qp, attr)
    }

    fn query_qp(qp: &Qp<Self>) -> QpQuery {
        qp::query(qp)
    }

    fn post_recv<'a>(qp: &Qp<Self>, wr: RecvWr<'a>) -> Result<(), Refused<RecvWr<'a>>> {
        qp::post_recv(qp, wr)
    }

    fn qp_ready(qp: &Qp<Self>) -> Result {
        if let Some(slot) = qp.data().slot {
            port_of(qp.device(), qp::port(qp))?.attach_qp(slot, qp)?;
        }
        Ok(())
    }

    fn destroy_qp(qp: &Qp<Self>) {
        if let (Some(slot), Ok(port)) = (qp.data().slot, port_of(qp.device(), qp::port(qp))) {
            port.detach_qp(slot, qp);
        }
    }

    fn port_counter_descs() -> &'static [StatDesc] {
        &COUNTERS
    }

    fn port_counters(dev: &ProviderDevice<Self>, num: u32, out: &mut [u64]) -> Result {
        let c = &port_of(dev, num)?.counters;
        let vals = [
            &c.xmit_packets,
            &c.xmit_bytes,
            &c.xmit_unknown_dlid,
            &c.xmit_bad_pkey,
            &c.rcv_packets,
            &c.rcv_bytes,
            &c.rcv_bad_pkey,
            &c.rcv_qkey_viol,
            &c.rcv_dropped,
        ];
        for (o, v) in out.iter_mut().zip(vals) {
            *o = crate::port::Counters::get(v);
        }
        Ok(())
    }

    fn post_send<'a>(qp: &Qp<Self>, wr: SendWr<'a>) -> Result<(), Refused<SendWr<'a>>> {
        ud::send(qp, wr)
    }
}
