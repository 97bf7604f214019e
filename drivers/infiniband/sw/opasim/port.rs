// SPDX-License-Identifier: GPL-2.0-only

//! A simulated OPA port: its LID and P_Key table, the QPs that receive on it, its counters.

use crate::{
    faults::Faults,
    hfi::Hfi,
    integrity::{DropCounters, PortView, DEFAULT_SC2VL, DEFAULT_VL_MTUS, NUM_DATA_VLS, NUM_SC},
    mgmt::Mgmt,
    pkey,
    sma_cong::Congestion,
};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::rdma::{provider::PortState, vnic::ProviderNetdev};
use kernel::{
    c_str, new_irq_spinlock,
    prelude::*,
    rdma::verbs::Qp,
    sync::{Arc, IrqSpinLock},
    types::ARef,
    workqueue::{OwnedQueue, WQ_MEM_RECLAIM},
};

/// The most VNIC netdevs open on a port.
pub(crate) const MAX_VNICS: usize = 16;

/// The size of a port's P_Key table.
pub(crate) const PKEY_TABLE_LEN: usize = 16;

/// The configuration of a port: what `query_port` and `query_pkey` report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortConfig {
    /// The LID (0: none, the port does not receive).
    pub(crate) lid: u32,
    /// The P_Key table; 0 marks an empty entry.
    pub(crate) pkeys: [u16; PKEY_TABLE_LEN],
    /// The logical port state, as the subnet manager (through the SMA) or the `state` file
    /// sets it. Only an ACTIVE port passes data; hfi1's, too (`HLS_UP_ACTIVE`).
    pub(crate) state: PortState,
}

impl PortConfig {
    /// A port with `lid` and the P_Keys `pkeys` (the rest of the table empty).
    pub(crate) fn new(lid: u32, pkeys: &[u16]) -> Self {
        let mut t = [0u16; PKEY_TABLE_LEN];
        for (d, s) in t.iter_mut().zip(pkeys) {
            *d = *s;
        }
        Self {
            lid,
            pkeys: t,
            state: PortState::Active,
        }
    }

    /// Whether the port is ACTIVE.
    pub(crate) fn active(&self) -> bool {
        self.state == PortState::Active
    }
}

/// The counters of a port, as `counters` in debugfs shows them.
#[derive(Default)]
pub(crate) struct Counters {
    /// Packets sent.
    pub(crate) xmit_packets: AtomicU64,
    /// Bytes sent (payload).
    pub(crate) xmit_bytes: AtomicU64,
    /// Packets the switch dropped: no port has the destination LID.
    pub(crate) xmit_unknown_dlid: AtomicU64,
    /// Packets sent with a P_Key index outside the table or on an empty entry.
    pub(crate) xmit_bad_pkey: AtomicU64,
    /// Packets received.
    pub(crate) rcv_packets: AtomicU64,
    /// Bytes received (payload).
    pub(crate) rcv_bytes: AtomicU64,
    /// Packets dropped on receive by the P_Key check (the port's bad P_Key counter).
    pub(crate) rcv_bad_pkey: AtomicU64,
    /// Packets dropped on receive for a wrong Q_Key.
    pub(crate) rcv_qkey_viol: AtomicU64,
    /// Packets dropped on receive: no such QP, or no receive buffer posted.
    pub(crate) rcv_dropped: AtomicU64,
    /// Packets received with an error the chip flagged (ICRC, framing): the PMA's
    /// PortRcvErrors.
    pub(crate) rcv_errors: AtomicU64,
}

impl Counters {
    /// Adds one to `c`.
    pub(crate) fn inc(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `n` to `c`.
    pub(crate) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    /// Reads `c`.
    pub(crate) fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// The SDMA rings of a port's VNIC netdevs, summed (`vnic_sdma` in debugfs): how often a
/// transmit found its ring full (`NETDEV_TX_BUSY`), queues stopped and woken, packets
/// completed (sent) or lost by the DMA (no memory to gather them), and frames on the queue of
/// another VL.
#[derive(Default)]
pub(crate) struct SdmaCounters {
    /// Transmits that found their ring full and returned `NETDEV_TX_BUSY`.
    pub(crate) busy: AtomicU64,
    /// Transmit queues stopped for want of descriptors.
    pub(crate) stops: AtomicU64,
    /// Stopped transmit queues woken by a completion.
    pub(crate) wakes: AtomicU64,
    /// Packets the DMA completed (sent, or dropped by the integrity checks).
    pub(crate) completed: AtomicU64,
    /// Packets the DMA lost: no memory to gather them.
    pub(crate) dma_errors: AtomicU64,
    /// Frames whose queue (chosen by `ndo_select_queue` from the metadata then) is not the one
    /// their metadata at transmit selects: hfi1 would post them to an SDMA engine of another
    /// VL (`sdma_select_engine_vl()`) than the VL in their PBC.
    pub(crate) queue_vl_mismatch: AtomicU64,
}

impl SdmaCounters {
    /// The counters with their names.
    pub(crate) fn read(&self) -> [(&'static str, u64); 6] {
        [
            ("tx_busy", Counters::get(&self.busy)),
            ("queue_stops", Counters::get(&self.stops)),
            ("queue_wakes", Counters::get(&self.wakes)),
            ("completed", Counters::get(&self.completed)),
            ("dma_errors", Counters::get(&self.dma_errors)),
            ("queue_vl_mismatch", Counters::get(&self.queue_vl_mismatch)),
        ]
    }
}

/// The capability masks of a port, as its users set them through `ib_modify_port()` (the IB
/// CM its `CapabilityMask`, an OPA VNIC driver its `CapabilityMask3`).
#[derive(Default)]
pub(crate) struct Capabilities {
    /// `CapabilityMask` (`IB_PORT_*_SUP`).
    pub(crate) ib: AtomicU32,
    /// OPA `CapabilityMask3`.
    pub(crate) opa3: AtomicU32,
}

impl Capabilities {
    /// Sets the bits `set`, then clears the bits `clear`, of `mask`.
    pub(crate) fn modify(mask: &AtomicU32, set: u32, clear: u32) {
        mask.fetch_or(set, Ordering::Relaxed);
        mask.fetch_and(!clear, Ordering::Relaxed);
    }

    /// Reads `mask`.
    pub(crate) fn get(mask: &AtomicU32) -> u32 {
        mask.load(Ordering::Relaxed)
    }
}

/// A port of a simulated HFI, attached to the fabric's switch.
#[pin_data]
pub(crate) struct Port {
    /// The number of the device the port belongs to (`opasim<dev>` is its name, usually).
    pub(crate) dev_index: u32,
    /// The port's number on its device (from 1).
    pub(crate) num: u32,
    /// The port's GUID.
    pub(crate) guid: u64,
    #[pin]
    config: IrqSpinLock<PortConfig>,
    /// QP0 and QP1 of the port, once the MAD stack has created them.
    #[pin]
    qps: IrqSpinLock<[Option<ARef<Qp<Hfi>>>; 2]>,
    /// The open VNIC netdevs of the port, by vesw id.
    #[pin]
    vnics: IrqSpinLock<[Option<(u16, ARef<ProviderNetdev<Hfi>>)>; MAX_VNICS]>,
    /// The port's SC-to-VL send table, which the HFI checks every VNIC packet against.
    #[pin]
    sc2vl: IrqSpinLock<[u8; NUM_SC]>,
    /// The MTU of each data VL, as the fabric manager sets it.
    #[pin]
    vl_mtu: IrqSpinLock<[u16; NUM_DATA_VLS as usize]>,
    /// What else the subnet manager sets through the SMA.
    #[pin]
    mgmt: IrqSpinLock<Mgmt>,
    /// The congestion control settings the SM sets.
    #[pin]
    pub(crate) congestion: IrqSpinLock<Congestion>,
    /// The port's counters.
    pub(crate) counters: Counters,
    /// The VNIC packets the HFI's integrity checks dropped, by reason.
    pub(crate) tx_drops: DropCounters,
    /// The VNIC netdevs' SDMA rings.
    pub(crate) sdma: SdmaCounters,
    /// The faults injected on the port: receive errors, operations to fail, the hold of its
    /// VNIC transmit completions.
    pub(crate) faults: Faults,
    /// The port's capability masks.
    pub(crate) caps: Capabilities,
    /// The workqueue of the port's VNIC DMA (hfi1's per-port `hfi1_wq`, which
    /// `create_workqueues()` of `init.c` allocates): `WQ_MEM_RECLAIM`
    /// as hfi1's, since a netdev going down flushes its DMA from a MAD handler, which runs on
    /// a `WQ_MEM_RECLAIM` queue of the RDMA core.
    pub(crate) wq: OwnedQueue,
}

impl Port {
    /// A new port.
    pub(crate) fn new(
        dev_index: u32,
        num: u32,
        guid: u64,
        config: PortConfig,
    ) -> Result<Arc<Self>> {
        let congestion = Congestion::new()?;
        let wq = OwnedQueue::new(c_str!("opasim_sdma"), WQ_MEM_RECLAIM, 0)?;
        Arc::pin_init(
            try_pin_init!(Self {
                dev_index,
                num,
                guid,
                config <- new_irq_spinlock!(config, "opasim_port_config"),
                qps <- new_irq_spinlock!([None, None], "opasim_port_qps"),
                vnics <- new_irq_spinlock!([const { None }; MAX_VNICS], "opasim_port_vnics"),
                sc2vl <- new_irq_spinlock!(DEFAULT_SC2VL, "opasim_port_sc2vl"),
                vl_mtu <- new_irq_spinlock!(DEFAULT_VL_MTUS, "opasim_port_vl_mtu"),
                mgmt <- new_irq_spinlock!(Mgmt::new(NUM_DATA_VLS), "opasim_port_mgmt"),
                congestion <- new_irq_spinlock!(congestion, "opasim_port_cong"),
                counters: Counters::default(),
                tx_drops: DropCounters::default(),
                sdma: SdmaCounters::default(),
                faults: Faults::default(),
                caps: Capabilities::default(),
                wq,
            }? Error),
            GFP_KERNEL,
        )
    }

    /// The port's configuration.
    pub(crate) fn config(&self) -> PortConfig {
        *self.config.lock()
    }

    /// Replaces the port's configuration.
    pub(crate) fn set_config(&self, c: PortConfig) {
        *self.config.lock() = c;
    }

    /// The port's LID if it is active (a port that is down neither sends nor receives).
    pub(crate) fn active_lid(&self) -> Option<u32> {
        let c = self.config.lock();
        (c.active() && c.lid != 0).then_some(c.lid)
    }

    /// The port's SC-to-VL send table.
    pub(crate) fn sc2vl(&self) -> [u8; NUM_SC] {
        *self.sc2vl.lock()
    }

    /// Replaces the port's SC-to-VL send table.
    pub(crate) fn set_sc2vl(&self, t: [u8; NUM_SC]) {
        *self.sc2vl.lock() = t;
    }

    /// The MTU of each data VL.
    pub(crate) fn vl_mtu(&self) -> [u16; NUM_DATA_VLS as usize] {
        *self.vl_mtu.lock()
    }

    /// Replaces the MTUs of the data VLs.
    pub(crate) fn set_vl_mtu(&self, t: [u16; NUM_DATA_VLS as usize]) {
        *self.vl_mtu.lock() = t;
    }

    /// The port's management state (a copy).
    pub(crate) fn mgmt(&self) -> Mgmt {
        *self.mgmt.lock()
    }

    /// Changes the port's management state with `f`, under its lock (which `f` must not
    /// take again), and returns what `f` returns.
    pub(crate) fn update_mgmt<R>(&self, f: impl FnOnce(&mut Mgmt) -> R) -> R {
        f(&mut self.mgmt.lock())
    }

    /// Changes the port's configuration with `f`, under its lock, and returns the old and the
    /// new configuration (the SMA's changes: the SM checks what it sets, not opasim).
    pub(crate) fn update_config(
        &self,
        f: impl FnOnce(&mut PortConfig),
    ) -> (PortConfig, PortConfig) {
        let mut c = self.config.lock();
        let old = *c;
        f(&mut c);
        (old, *c)
    }

    /// What the send-side checks need of the port, if it is active.
    pub(crate) fn tx_view(&self) -> Option<PortView> {
        let lid = self.active_lid()?;
        Some(PortView {
            lid,
            lmc: 0,
            sc2vl: self.sc2vl(),
            vl_mtu: self.vl_mtu(),
        })
    }

    /// The P_Key at `index`, if the entry exists and is not empty.
    pub(crate) fn pkey(&self, index: u16) -> Option<u16> {
        let c = self.config.lock();
        c.pkeys.get(usize::from(index)).copied().filter(|&p| p != 0)
    }

    /// The index of the port's P_Key that accepts a packet with P_Key `pkt`.
    pub(crate) fn accept_pkey(&self, pkt: u16) -> Option<u16> {
        pkey::find(&self.config.lock().pkeys, pkt)
    }

    /// The P_Key index a MAD (QP0, QP1) received with `pkt` reports, as hfi1 looks it up.
    pub(crate) fn mad_pkey_index(&self, pkt: u16) -> Option<u16> {
        pkey::mad_index(&self.config.lock().pkeys, pkt)
    }

    /// Makes `qp` (QP0 or QP1) the receiver of its number on this port; `EBUSY` if the port
    /// has one already.
    pub(crate) fn attach_qp(&self, n: usize, qp: &Qp<Hfi>) -> Result {
        let mut qps = self.qps.lock();
        let slot = qps.get_mut(n).ok_or(EINVAL)?;
        if slot.is_some() {
            return Err(EBUSY);
        }
        *slot = Some(ARef::from(qp));
        Ok(())
    }

    /// Removes `qp` from the port's receivers.
    pub(crate) fn detach_qp(&self, n: usize, qp: &Qp<Hfi>) {
        let old = {
            let mut qps = self.qps.lock();
            match qps.get_mut(n) {
                Some(slot) if slot.as_deref().is_some_and(|q| core::ptr::eq(q, qp)) => slot.take(),
                _ => None,
            }
        };
        // The reference is dropped outside the lock.
        drop(old);
    }

    /// The receiver of QP number `n` (0 or 1) on this port.
    pub(crate) fn qp(&self, n: u32) -> Option<ARef<Qp<Hfi>>> {
        let qps = self.qps.lock();
        qps.get(n as usize).and_then(|q| q.clone())
    }

    /// Makes `nd` the receiver of the VNIC packets of vesw `id` on this port: `EBUSY` if the
    /// vesw has one already, `ENOSPC` if the port has [`MAX_VNICS`].
    pub(crate) fn attach_vnic(&self, id: u16, nd: &ProviderNetdev<Hfi>) -> Result {
        let mut v = self.vnics.lock();
        if v.iter().flatten().any(|(i, _)| *i == id) {
            return Err(EBUSY);
        }
        let slot = v.iter_mut().find(|s| s.is_none()).ok_or(ENOSPC)?;
        *slot = Some((id, ARef::from(nd)));
        Ok(())
    }

    /// Removes `nd` from the VNIC receivers.
    pub(crate) fn detach_vnic(&self, nd: &ProviderNetdev<Hfi>) {
        let mut old = None;
        {
            let mut v = self.vnics.lock();
            for s in v.iter_mut() {
                if s.as_ref().is_some_and(|(_, n)| core::ptr::eq(&**n, nd)) {
                    old = s.take();
                }
            }
        }
        drop(old);
    }

    /// The VNIC netdev of vesw `id`.
    pub(crate) fn vnic(&self, id: u16) -> Option<ARef<ProviderNetdev<Hfi>>> {
        let v = self.vnics.lock();
        v.iter()
            .flatten()
            .find(|(i, _)| *i == id)
            .map(|(_, n)| n.clone())
    }

    /// The open VNIC netdevs of the port (taken under the lock, dropped by the caller).
    pub(crate) fn vnics(&self) -> [Option<ARef<ProviderNetdev<Hfi>>>; MAX_VNICS] {
        let v = self.vnics.lock();
        core::array::from_fn(|i| v[i].as_ref().map(|(_, n)| n.clone()))
    }

    /// The first VNIC netdev of the port.
    pub(crate) fn first_vnic(&self) -> Option<ARef<ProviderNetdev<Hfi>>> {
        let v = self.vnics.lock();
        v.iter().flatten().next().map(|(_, n)| n.clone())
    }
}
