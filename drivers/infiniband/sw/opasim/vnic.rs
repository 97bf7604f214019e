// SPDX-License-Identifier: GPL-2.0-only

//! The OPA VNIC data path of the simulated HFI, as hfi1 does it
//! (`drivers/infiniband/hw/hfi1/vnic_main.c`, `vnic_sdma.c`): the netdev offers
//! scatter-gather; a transmit takes the metadata off the frame, drops it on an encapsulation
//! error, and posts the packet to the SDMA ring of its queue, or pushes back with
//! `NETDEV_TX_BUSY` when the ring is full ([`crate::vnic_dma`]); the ring's completion
//! gathers the head and the fragments, appends pad, ICRC and tail and sends the packet
//! through the switch by DLID. A receive checks the P_Key, finds the netdev by the low 8 bits
//! of the vesw id of the L4 header (hfi1's `VNIC_ID()`), and queues the packet for the
//! netdev's NAPI poll, which strips the 16B header, pad, ICRC and tail, checks the length and
//! hands the Ethernet frame to GRO. The statistics are hfi1's.

use crate::{
    capture::Kind,
    fabric::{self, Fabric},
    faults::Fault,
    hfi::Hfi,
    integrity::{self, TxDrop},
    port::{Counters, Port},
    rx_errors::RxErr,
    vnic_dma::{Post, VnicDma},
    vnic_stats::{self, VnicCounters, ETH_FCS_LEN},
    wire::hdr16b::{self, Hdr16b, RxLen},
};
use kernel::{
    bindings,
    net::skbuff::{SkBuff, SkBuffRef},
    new_mutex,
    prelude::*,
    rdma::{
        provider::ProviderDevice,
        vnic::{
            ProviderNetdev, SkbMetadata, VnicFeatures, VnicOps, VnicRx, Xmit, SKB_MDATA_ENCAP_ERR,
            SKB_MDATA_LEN,
        },
    },
    sync::{Arc, Mutex},
};

/// hfi1's `VNIC_MASK`: receive finds a netdev by the low 8 bits of the 12-bit vesw id
/// (`VNIC_ID()` keys `hfi1_netdev_add_data()`), so two vesws of one port whose ids are equal
/// modulo 256 collide: the second netdev's open fails with `EBUSY`, and frames of the other
/// vesw reach the first one.
pub(crate) const VNIC_ID_MASK: u16 = 0xff;

/// The vesw id of a VNIC netdev and whether it is bound to its port.
struct Binding {
    vesw_id: u32,
    up: bool,
    /// A vesw id change could not bring the open netdev up again: it is detached until it is
    /// closed or a later change brings it up (hfi1's `HFI1_VNIC_REOPEN_FAILED`).
    detached: bool,
}

/// What opasim keeps for a VNIC netdev.
pub(crate) struct HfiVnic {
    /// The port the netdev sends and receives on.
    pub(crate) port: Arc<Port>,
    /// The switch of the port.
    fabric: Arc<Fabric>,
    /// Serialises open, stop and a vesw id change (hfi1's `vinfo->lock`): a change that
    /// reopens the netdev must not interleave with `ndo_stop`, or an admin-down netdev could
    /// stay bound to its port (with the reference that holds), and unregistering it would
    /// wait forever.
    binding: Pin<KBox<Mutex<Binding>>>,
    /// The netdev's transmit queues (the `vnic_tx_queues` parameter when it was made).
    pub(crate) queues: u32,
    /// The netdev's statistics.
    pub(crate) stats: VnicCounters,
    /// The netdev's SDMA rings and receive queue (whose packets the netdev's NAPI poll
    /// delivers).
    pub(crate) dma: Arc<VnicDma>,
}

impl HfiVnic {
    /// A netdev's data on `port`.
    pub(crate) fn new(port: Arc<Port>, fabric: Arc<Fabric>) -> Result<Self> {
        let dma = VnicDma::new(crate::vnic_tx_queues.get(), crate::vnic_sdma_descs.get())?;
        Ok(Self {
            port,
            fabric,
            binding: KBox::pin_init(
                new_mutex!(
                    Binding {
                        vesw_id: 0,
                        up: false,
                        detached: false,
                    },
                    "opasim_vnic_binding"
                ),
                GFP_KERNEL,
            )?,
            queues: crate::vnic_tx_queues.get(),
            stats: VnicCounters::default(),
            dma,
        })
    }
}

impl Drop for HfiVnic {
    fn drop(&mut self) {
        // The netdev is unregistered (its stop sent what the rings held): wait for a DMA work
        // item that may still run, before the module it runs in can go.
        self.dma.flush_tx();
    }
}

/// hfi1's `hfi1_netdev_ops` and `rn.set_id`, for opasim's netdevs.
impl VnicOps<Hfi> for HfiVnic {
    /// `hfi1_vnic_alloc_rn()`: `NETIF_F_HIGHDMA | NETIF_F_SG`.
    const FEATURES: VnicFeatures = VnicFeatures::SG.with(VnicFeatures::HIGHDMA);

    fn alloc(dev: &ProviderDevice<Hfi>, num: u32) -> Result<Self> {
        let d = dev.data();
        HfiVnic::new(d.port(num)?.clone(), d.fabric.clone())
    }

    fn tx_queues(_dev: &ProviderDevice<Hfi>, _port: u32) -> u32 {
        crate::vnic_tx_queues.get()
    }

    fn set_id(nd: &ProviderNetdev<Hfi>, id: i32) {
        set_id(nd, id)
    }

    fn open(nd: &ProviderNetdev<Hfi>) -> Result {
        open(nd)
    }

    fn stop(nd: &ProviderNetdev<Hfi>) {
        stop(nd)
    }

    fn xmit(nd: &ProviderNetdev<Hfi>, skb: SkBuff) -> Xmit {
        xmit(nd, skb)
    }

    fn select_queue(nd: &ProviderNetdev<Hfi>, meta: &SkbMetadata) -> u16 {
        select_queue(meta, nd.data().queues)
    }

    fn stats(nd: &ProviderNetdev<Hfi>, out: &mut bindings::opa_vnic_stats) {
        vnic_stats::stats(nd, out)
    }

    fn poll(nd: &ProviderNetdev<Hfi>, rx: &VnicRx<'_, Hfi>, budget: i32) -> i32 {
        nd.data().dma.poll(nd, rx, budget)
    }
}

/// Binds the netdev to its port under its vesw id (which must be set).
fn up(nd: &ProviderNetdev<Hfi>, b: &mut Binding) -> Result {
    if b.vesw_id == 0 {
        return Err(EINVAL);
    }
    let v = nd.data();
    v.port.attach_vnic(b.vesw_id as u16 & VNIC_ID_MASK, nd)?;
    v.dma.attach(nd);
    nd.start();
    b.up = true;
    Ok(())
}

/// Unbinds the netdev from its port, if bound.
fn down(nd: &ProviderNetdev<Hfi>, b: &mut Binding) {
    if core::mem::take(&mut b.up) {
        let v = nd.data();
        v.port.detach_vnic(nd);
        nd.stop();
        // Nothing sends on the netdev now: what the rings hold goes out, the receive queue
        // is dropped. Only `binding`'s holder pauses the context, so this cannot be `EBUSY`.
        v.dma.flush_tx();
        let _ = nd.rx_paused(|| v.dma.detach());
    }
}

/// `ndo_open`. An injected fault (`fail_open`) fails it after the vesw id check, where
/// `hfi1_vnic_up()` fails when its receive queues cannot be set up.
pub(crate) fn open(nd: &ProviderNetdev<Hfi>) -> Result {
    let v = nd.data();
    let mut b = v.binding.lock();
    if b.vesw_id != 0 {
        v.port.faults.fail(Fault::Open, v.port.num)?;
    }
    up(nd, &mut b)
}

/// `ndo_stop`. A netdev detached by a failed reopen is attached again (the stack no longer
/// counts it running: only its present bit changes), so that its next open is not refused.
pub(crate) fn stop(nd: &ProviderNetdev<Hfi>) {
    let mut b = nd.data().binding.lock();
    down(nd, &mut b);
    if core::mem::take(&mut b.detached) {
        nd.attach();
    }
}

/// `rn.set_id`: a new vesw id; an open netdev is reopened with it, as hfi1 does.
pub(crate) fn set_id(nd: &ProviderNetdev<Hfi>, id: i32) {
    let id = (id as u32) & u32::from(hdr16b::VESW_ID_MASK);
    let mut b = nd.data().binding.lock();
    if b.vesw_id == id {
        return;
    }
    // A netdev an earlier change left detached is still open: this change retries.
    let reopen = b.up || b.detached;
    down(nd, &mut b);
    b.vesw_id = id;
    if reopen {
        // As hfi1: a failure (or an injected one, `fail_set_id`) leaves the netdev down, which
        // the next open or vesw id change retries; `set_id` cannot report it, the log says it.
        // The netdev is detached meanwhile: it stays open with its queues stopped, and the ULP
        // turns the carrier on when the port comes back, which would let the stack's transmit
        // watchdog find the queues stopped.
        let v = nd.data();
        let r = v.port.faults.fail(Fault::SetId, v.port.num);
        match r.and_then(|()| up(nd, &mut b)) {
            Err(e) => {
                pr_err!(
                    "port {}: vesw id {}: cannot bring the VNIC netdev up again ({:?}), detached until it is reopened\n",
                    v.port.num,
                    id,
                    e
                );
                if !core::mem::replace(&mut b.detached, true) {
                    nd.detach();
                }
            }
            Ok(()) => {
                if core::mem::take(&mut b.detached) {
                    nd.attach();
                }
            }
        }
    }
}

/// What the counters of a transmitted frame need (`hfi1_vnic_update_tx_counters()`), read
/// before the packet goes to its ring.
struct TxCount {
    len: u32,
    eth: [u8; 14],
}

impl TxCount {
    /// The frame that starts `offset` bytes into `skb`.
    fn of(skb: &SkBuffRef, offset: u32) -> Self {
        let mut copy = core::mem::MaybeUninit::uninit();
        Self {
            len: skb.len().saturating_sub(offset),
            eth: skb.header(offset, &mut copy).copied().unwrap_or([0; 14]),
        }
    }
}

/// `ndo_start_xmit` (`hfi1_netdev_start_xmit()`).
pub(crate) fn xmit(nd: &ProviderNetdev<Hfi>, mut skb: SkBuff) -> Xmit {
    let v = nd.data();
    let s = &v.stats;
    let q = skb.queue_mapping();
    if !nd.oper_up() {
        Counters::inc(&s.tx_drop_state);
        count_tx(s, &TxCount::of(&skb, 0), false);
        return Xmit::Done;
    }
    let meta = SkbMetadata::parse(skb.data()).unwrap_or_default();
    if q != select_queue(&meta, v.queues) {
        Counters::inc(&v.port.sdma.queue_vl_mismatch);
    }
    if skb.pull(SKB_MDATA_LEN as u32).is_err() {
        Counters::inc(&s.tx_carrier_errors);
        return Xmit::Done;
    }
    if meta.flags & SKB_MDATA_ENCAP_ERR != 0 {
        Counters::inc(&s.tx_dlid_zero);
        Counters::inc(v.port.tx_drops.of(TxDrop::EncapErr));
        count_tx(s, &TxCount::of(&skb, 0), false);
        return Xmit::Done;
    }
    // The counters see the Ethernet frame, as hfi1's (which pulls the header first).
    let count = TxCount::of(&skb, hdr16b::HDR_LEN as u32);
    match v.dma.post(q, skb, meta.vl) {
        Post::Queued => {
            v.dma.kick(&v.port.wq);
            count_tx(s, &count, true);
            Xmit::Done
        }
        Post::Dead(skb) => {
            Counters::inc(&s.tx_carrier_errors);
            count_tx(s, &count, false);
            drop(skb);
            Xmit::Done
        }
        Post::Busy(mut skb) => {
            // hfi1: the header pulled off, the queue stopped, and started again at once if
            // the ring is active meanwhile (`hfi1_vnic_maybe_stop_tx()`); no counter.
            let _ = skb.pull(hdr16b::HDR_LEN as u32);
            Counters::inc(&v.port.sdma.busy);
            Counters::inc(&v.port.sdma.stops);
            nd.stop_subqueue(q);
            if v.dma.write_avail(q) {
                // A completion freed the ring meanwhile, before the queue was stopped: it
                // did not wake it, so this does.
                Counters::inc(&v.port.sdma.wakes);
                nd.wake_subqueue(q);
            }
            Xmit::Busy(skb)
        }
    }
}

fn count_tx(s: &VnicCounters, c: &TxCount, good: bool) {
    Counters::inc(&s.tx_packets);
    Counters::add(&s.tx_bytes, u64::from(c.len) + ETH_FCS_LEN);
    s.tx_grp.count(&c.eth, c.len as usize, good);
}

/// The queue of a frame, from the metadata the ULP pushed in front of it: hfi1 picks an SDMA
/// engine by VL and entropy (`hfi1_vnic_select_queue()`, `sdma_select_engine_vl()`); opasim
/// spreads the flows of each VL over its `queues` queues the same way.
pub(crate) fn select_queue(meta: &SkbMetadata, queues: u32) -> u16 {
    let q = (u32::from(meta.vl) + u32::from(meta.entropy)) % queues.max(1);
    q as u16
}

/// What the HFI puts on the wire for the 16B packet `pkt` (header and frame, as the client
/// built it): the packet, the pad up to the length of the header's length field, a zero
/// ICRC and the tail byte with the pad count and the LT bits of a tail flit. `EINVAL` if the
/// header is bad or its length does not fit the packet.
pub(crate) fn wire_packet(pkt: &[u8]) -> Result<(Hdr16b, KVec<u8>)> {
    let hdr = Hdr16b::decode(pkt).map_err(|_| EINVAL)?;
    let total = usize::from(hdr.len_qw) * 8;
    let pad = total
        .checked_sub(pkt.len() + hdr16b::ICRC_TAIL_LEN)
        .filter(|&p| p < 8)
        .ok_or(EINVAL)?;
    let mut wire = KVec::with_capacity(total, GFP_ATOMIC)?;
    wire.extend_from_slice(pkt, GFP_ATOMIC)?;
    wire.extend_from_slice(&[0u8; 12][..pad + hdr16b::ICRC_TAIL_LEN], GFP_ATOMIC)?;
    hdr16b::write_tail(&mut wire[pkt.len()..], pad as u8).map_err(|_| EINVAL)?;
    if let Some(tail) = wire.last_mut() {
        *tail |= hdr16b::TAIL_LT_TAIL_FLIT;
    }
    Ok((hdr, wire))
}

/// Sends the packet in `skb` (16B header and frame, the rest of it in page fragments as the
/// stack built it) from the port of `v` on `vl`: the SDMA engine gathers the head and every
/// fragment (`build_vnic_ulp_payload()`), then [`send`].
pub(crate) fn dma_send(v: &HfiVnic, vl: u8, skb: &SkBuff) -> Result {
    let len = skb.len() as usize;
    let mut pkt = KVec::with_capacity(len, GFP_ATOMIC)?;
    pkt.extend_with(len, 0, GFP_ATOMIC)?;
    skb.copy_bits(0, &mut pkt)?;
    send(v, vl, &pkt)
}

/// Sends the 16B packet `pkt` (header and frame) from the port of `v` on `vl`: the HFI's
/// integrity checks (a packet that fails one is counted by reason and dropped, and the driver
/// is not told, as with hfi1), then pad, ICRC and tail, and the switch.
fn send(v: &HfiVnic, vl: u8, pkt: &[u8]) -> Result {
    let port = &v.port;
    let view = port.tx_view().ok_or(EINVAL)?;
    if let Err(why) = integrity::check(&view, vl, pkt) {
        Counters::inc(port.tx_drops.of(why));
        return Ok(());
    }
    let (hdr, wire) = wire_packet(pkt)?;
    Counters::inc(&port.counters.xmit_packets);
    Counters::add(&port.counters.xmit_bytes, wire.len() as u64);
    v.fabric.capture(
        Kind::Vnic,
        port,
        hdr.slid,
        hdr.dlid,
        hdr.pkey,
        Some(vl),
        &wire,
    );
    if fabric::is_multicast(hdr.dlid) {
        for to in v.fabric.flood(port, hdr.dlid).iter() {
            receive(to, &wire);
        }
    } else if let Some(to) = v.fabric.forward(port, hdr.dlid) {
        receive(&to, &wire);
    }
    Ok(())
}

/// Receives a 16B packet on `port`: P_Key check, demultiplexing by vesw id, decapsulation.
pub(crate) fn receive(port: &Port, wire: &[u8]) {
    let c = &port.counters;
    let Ok(d) = hdr16b::decap(wire) else {
        Counters::inc(&c.rcv_dropped);
        return;
    };
    if port.accept_pkey(d.hdr.pkey).is_none() {
        Counters::inc(&c.rcv_bad_pkey);
        return;
    }
    if d.hdr.l4_type != hdr16b::L4_ETHR {
        Counters::inc(&c.rcv_dropped);
        return;
    }
    let Some(nd) = port.vnic(d.hdr.vesw_id() & VNIC_ID_MASK) else {
        // hfi1 counts a packet for an unknown vesw on the first netdev of the port.
        if let Some(first) = port.first_vnic() {
            Counters::inc(&first.data().stats.rx_nohandler);
        }
        Counters::inc(&c.rcv_dropped);
        return;
    };
    if let Some(err) = port.faults.rx.take() {
        // The chip flagged the packet: hfi1 drops it in `hfi1_vnic_bypass_rcv()`, counted on
        // the vport it names (ICRC in `rx_crc_errors`, the rest in `rx_frame_errors`).
        let s = &nd.data().stats;
        Counters::inc(match err {
            RxErr::Icrc => &s.rx_crc_errors,
            RxErr::Frame => &s.rx_frame_errors,
        });
        Counters::inc(&c.rcv_errors);
        Counters::inc(&c.rcv_dropped);
        return;
    }
    Counters::inc(&c.rcv_packets);
    Counters::add(&c.rcv_bytes, wire.len() as u64);
    // The receive context's NAPI poll runs the driver's part ([`deliver`]).
    let mut copy = KVec::new();
    if copy.extend_from_slice(wire, GFP_ATOMIC).is_err() {
        Counters::inc(&c.rcv_dropped);
        return;
    }
    let v = nd.data();
    if v.dma.post_rx(copy).is_err() {
        Counters::inc(&c.rcv_dropped);
        return;
    }
    nd.schedule_rx();
}

/// `hfi1_vnic_bypass_rcv()` in the NAPI poll of `nd` (`rx`): the state check, decapsulation,
/// the length checks and counters, and the frame to GRO.
pub(crate) fn deliver(nd: &ProviderNetdev<Hfi>, rx: &VnicRx<'_, Hfi>, wire: &[u8]) {
    let s = &nd.data().stats;
    if !nd.oper_up() {
        Counters::inc(&s.rx_drop_state);
        return;
    }
    let Ok(d) = hdr16b::decap(wire) else {
        Counters::inc(&s.rx_runt);
        return;
    };
    let eth = d.eth;
    match hdr16b::rx_len_check(eth.len(), nd.mtu()) {
        RxLen::Ok => {}
        RxLen::Oversize => {
            Counters::inc(&s.rx_oversize);
            return;
        }
        RxLen::Runt => {
            Counters::inc(&s.rx_runt);
            return;
        }
    }
    // As `hfi1_vnic_update_rx_counters()` with patch 0021: only the frames passed up count.
    Counters::inc(&s.rx_packets);
    Counters::add(&s.rx_bytes, eth.len() as u64 + ETH_FCS_LEN);
    s.rx_grp.count(eth, eth.len(), true);
    let Ok(mut skb) = nd.alloc_skb(eth.len() as u32) else {
        Counters::inc(&s.rx_fifo_errors);
        return;
    };
    if skb.put_data(eth).is_err() {
        Counters::inc(&s.rx_fifo_errors);
        return;
    }
    // The length checks above keep runts away; the stack refuses a frame without an Ethernet
    // header all the same.
    if rx.receive_gro(skb).is_err() {
        Counters::inc(&s.rx_runt);
    }
}
