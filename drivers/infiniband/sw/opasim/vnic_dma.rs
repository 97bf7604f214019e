// SPDX-License-Identifier: GPL-2.0-only

//! What lies under an opasim VNIC netdev as under hfi1's: a bounded descriptor ring per
//! transmit queue whose packets go out after `ndo_start_xmit` returns (`vnic_sdma.c`: the
//! SDMA engine holds the skb until its completion frees it), and a receive queue that a NAPI
//! poll drains into GRO (hfi1 runs `hfi1_vnic_bypass_rcv()` from the NAPI poll of a receive
//! context, `netdev_rx.c`).
//!
//! The "DMA" is a work item on its port's workqueue: it runs when the sender lets the CPU go,
//! not when it enables bottom halves again, so a sender that posts a burst (a TCP window, a
//! qdisc run) fills the ring as it fills an SDMA engine that moves packets at link speed, and
//! meets `NETDEV_TX_BUSY` as on hfi1. A NAPI poll would run at the end of every transmit and
//! never let the ring fill.

use crate::{fifo::Fifo, hfi::Hfi, port::Counters, vnic};
use kernel::{
    impl_has_work,
    net::skbuff::SkBuff,
    new_irq_spinlock, new_work,
    prelude::*,
    rdma::vnic::{ProviderNetdev, VnicRx},
    sync::{Arc, IrqSpinLock},
    types::ARef,
    workqueue::{Queue, Work, WorkItem},
};

/// hfi1's `HFI1_VNIC_SDMA_DESC_WTRMRK`: a queue stopped for want of descriptors is woken once
/// this many are free. hfi1 sets the watermark only on rings larger than it; a smaller ring
/// wakes its queue at the first completion.
pub(crate) const DESC_WATERMARK: u32 = 64;

/// Received packets a netdev's receive queue holds for its poll (hfi1's receive header queue
/// has more entries; the poll drains this one at every run). Past it the port drops them
/// (`rcv_dropped`), as an HFI whose receive queue is full does.
pub(crate) const RX_QUEUE_LEN: usize = 1024;

/// The descriptors a packet takes in an SDMA ring (`build_vnic_tx_desc()`): the PBC, the head,
/// one per page fragment, and the pad with ICRC and tail.
pub(crate) fn descs_of(skb: &SkBuff) -> u32 {
    3 + skb.nr_frags()
}

/// A posted packet (`struct vnic_txreq`).
struct TxReq {
    skb: SkBuff,
    vl: u8,
    descs: u32,
}

/// An SDMA ring as one VNIC queue uses it.
struct Ring {
    reqs: Fifo<TxReq>,
    /// Descriptors of the posted packets.
    used: u32,
    /// hfi1's `HFI1_VNIC_SDMA_Q_DEFERRED`: a post found no room; the queue is stopped until
    /// the watermark frees.
    deferred: bool,
}

struct State {
    /// The netdev while it is up (its NAPI context delivers to it).
    netdev: Option<ARef<ProviderNetdev<Hfi>>>,
    rings: KVec<Ring>,
    rx: Fifo<KVec<u8>>,
}

/// What a post did.
pub(crate) enum Post {
    /// In the ring; the NAPI poll sends it.
    Queued,
    /// No room (`-EBUSY` of `sdma_send_txreq()`): the packet is handed back, and the ring is
    /// deferred until its watermark frees.
    Busy(SkBuff),
    /// The ring is deferred (hfi1's `-ECOMM` when the queue is not active): dropped.
    Dead(SkBuff),
}

/// A netdev's rings and receive queue, and the work item that completes its rings.
#[pin_data]
pub(crate) struct VnicDma {
    #[pin]
    state: IrqSpinLock<State>,
    /// Descriptors of each ring.
    descs: u32,
    #[pin]
    work: Work<VnicDma>,
}

impl_has_work! {
    impl HasWork<Self> for VnicDma { self.work }
}

impl WorkItem for VnicDma {
    type Pointer = Arc<VnicDma>;

    fn run(this: Arc<VnicDma>) {
        // While the port holds the completions (`vnic_tx_hold`), the packets stay in the
        // rings; the release kicks the work item again.
        while let Some((nd, q, req)) = this.pop_tx(true) {
            this.complete(&nd, q, req, true);
        }
    }
}

impl VnicDma {
    /// Rings of `descs` descriptors for `queues` transmit queues, and a receive queue.
    pub(crate) fn new(queues: u32, descs: u32) -> Result<Arc<Self>> {
        let mut rings = KVec::with_capacity(queues as usize, GFP_KERNEL)?;
        for _ in 0..queues.max(1) {
            rings.push(
                Ring {
                    // Every packet takes at least 3 descriptors.
                    reqs: Fifo::new((descs / 3) as usize)?,
                    used: 0,
                    deferred: false,
                },
                GFP_KERNEL,
            )?;
        }
        let state = State {
            netdev: None,
            rings,
            rx: Fifo::new(RX_QUEUE_LEN)?,
        };
        Arc::pin_init(
            pin_init!(Self {
                state <- new_irq_spinlock!(state, "opasim_vnic_dma"),
                descs,
                work <- new_work!("opasim_vnic_sdma"),
            }),
            GFP_KERNEL,
        )
    }

    /// Starts the DMA of the posted packets (the work item), unless it is queued already.
    pub(crate) fn kick(self: &Arc<Self>, wq: &Queue) {
        let _ = wq.enqueue(self.clone());
    }

    /// The netdev went up: the poll delivers to it.
    pub(crate) fn attach(&self, nd: &ProviderNetdev<Hfi>) {
        let old = {
            let mut st = self.state.lock();
            for r in st.rings.iter_mut() {
                r.deferred = false;
            }
            st.netdev.replace(ARef::from(nd))
        };
        drop(old);
    }

    /// Posts `skb` to the ring of `queue` for `vl`.
    pub(crate) fn post(&self, queue: u16, skb: SkBuff, vl: u8) -> Post {
        let descs = descs_of(&skb);
        let mut st = self.state.lock();
        let n = st.rings.len();
        let Some(ring) = st.rings.get_mut(usize::from(queue) % n.max(1)) else {
            return Post::Dead(skb);
        };
        if ring.deferred {
            return Post::Dead(skb);
        }
        if descs > self.descs - ring.used {
            ring.deferred = true;
            return Post::Busy(skb);
        }
        match ring.reqs.push(TxReq { skb, vl, descs }) {
            Ok(()) => {
                ring.used += descs;
                Post::Queued
            }
            Err(req) => {
                ring.deferred = true;
                Post::Busy(req.skb)
            }
        }
    }

    /// The packets posted to the rings and not completed yet.
    pub(crate) fn queued(&self) -> usize {
        self.state.lock().rings.iter().map(|r| r.reqs.len()).sum()
    }

    /// Whether the ring of `queue` takes posts (`hfi1_vnic_sdma_write_avail()`).
    pub(crate) fn write_avail(&self, queue: u16) -> bool {
        let st = self.state.lock();
        let n = st.rings.len();
        st.rings
            .get(usize::from(queue) % n.max(1))
            .is_some_and(|r| !r.deferred)
    }

    /// Queues a received packet for the poll; gives it back when the queue is full or the
    /// netdev is down.
    pub(crate) fn post_rx(&self, wire: KVec<u8>) -> Result<(), KVec<u8>> {
        let mut st = self.state.lock();
        if st.netdev.is_none() {
            return Err(wire);
        }
        st.rx.push(wire)
    }

    /// The next posted packet, and the netdev it is sent for; none while the port holds the
    /// completions, if `held` says the hold counts.
    fn pop_tx(&self, held: bool) -> Option<(ARef<ProviderNetdev<Hfi>>, u16, TxReq)> {
        let mut st = self.state.lock();
        let nd = st.netdev.as_deref()?;
        if held && nd.data().port.faults.tx_held() {
            return None;
        }
        let nd = ARef::from(nd);
        let (q, ring) = st
            .rings
            .iter_mut()
            .enumerate()
            .find(|(_, r)| r.reqs.len() > 0)?;
        let req = ring.reqs.pop()?;
        Some((nd, q as u16, req))
    }

    /// The descriptors of a completed packet are free again: whether the stopped queue is to
    /// be woken (`hfi1_vnic_sdma_wakeup()`, at the watermark).
    fn release(&self, queue: u16, descs: u32) -> bool {
        let mut st = self.state.lock();
        let Some(ring) = st.rings.get_mut(usize::from(queue)) else {
            return false;
        };
        ring.used -= descs.min(ring.used);
        let watermark = if self.descs > DESC_WATERMARK {
            DESC_WATERMARK
        } else {
            1
        };
        if ring.deferred && self.descs - ring.used >= watermark {
            ring.deferred = false;
            return true;
        }
        false
    }

    fn pop_rx(&self) -> Option<(ARef<ProviderNetdev<Hfi>>, KVec<u8>)> {
        let mut st = self.state.lock();
        let nd = st.netdev.clone()?;
        Some((nd, st.rx.pop()?))
    }

    /// Sends a posted packet (the DMA completes), then frees its descriptors.
    fn complete(&self, nd: &ProviderNetdev<Hfi>, q: u16, req: TxReq, wake: bool) {
        let v = nd.data();
        Counters::inc(&v.port.sdma.completed);
        match vnic::dma_send(v, req.vl, &req.skb) {
            // Sent, not dropped: drop monitors must not count it (`dev_kfree_skb_any()` of a
            // completed request).
            Ok(()) => req.skb.consume(),
            Err(_) => {
                Counters::inc(&v.port.sdma.dma_errors);
                drop(req.skb);
            }
        }
        if self.release(q, req.descs) && wake && nd.subqueue_stopped(q) {
            Counters::inc(&v.port.sdma.wakes);
            nd.wake_subqueue(q);
        }
    }

    /// The netdev goes down, nothing sends on it any more: a running DMA finishes, the posted
    /// packets still go out, as an SDMA engine completes what it was given, and the rings
    /// are empty and active again. Process context (it waits for the work item).
    pub(crate) fn flush_tx(&self) {
        self.work.flush();
        // A hold (`vnic_tx_hold`) does not keep a netdev that goes down: what its rings hold
        // goes out all the same, or it could not be unregistered while the port holds.
        while let Some((nd, q, req)) = self.pop_tx(false) {
            self.complete(&nd, q, req, false);
        }
        let mut st = self.state.lock();
        for r in st.rings.iter_mut() {
            r.deferred = false;
            r.used = 0;
        }
    }

    /// With the netdev's NAPI context paused: the received packets are dropped and counted
    /// (`rx_drop_state`), and nothing is delivered to the netdev any more.
    pub(crate) fn detach(&self) {
        while let Some((nd, _wire)) = self.pop_rx() {
            Counters::inc(&nd.data().stats.rx_drop_state);
        }
        let old = self.state.lock().netdev.take();
        drop(old);
    }
}

impl VnicDma {
    /// The NAPI poll of the receive queue of `nd` (whose queue this is): delivers at most
    /// `budget` packets while the netdev is attached.
    pub(crate) fn poll(&self, nd: &ProviderNetdev<Hfi>, rx: &VnicRx<'_, Hfi>, budget: i32) -> i32 {
        let mut n = 0;
        while n < budget {
            // The attached netdev is `nd`: only its own `up` attaches it.
            let Some((_attached, wire)) = self.pop_rx() else {
                break;
            };
            vnic::deliver(nd, rx, &wire);
            n += 1;
        }
        n
    }
}
