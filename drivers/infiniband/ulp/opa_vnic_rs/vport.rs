// SPDX-License-Identifier: GPL-2.0-only

//! A virtual Ethernet switch port's netdev side: what transmit reads per packet, the netdev
//! callbacks of the driver, and the vport's traps to the EM.

use crate::encap::{xmit_skb, SKB_HEADROOM};
use crate::mac_table::{MacIndex, MacSlot};
use crate::trap_sink::TrapSink;
use crate::vport_stats::ETHTOOL_STATS;
use crate::wire::{
    encap::{crc32_le, entropy_from_hash, frame_dmac, frame_vlan_tci},
    trap::{
        VemaTrapMad, VeswPortTrap, TRAP_ETH_LINK_STATUS_CHANGE, TRAP_IFACE_MCAST_MAC_CHANGE,
        TRAP_IFACE_UCAST_MAC_CHANGE, TRAP_MAD_LEN,
    },
    tx_plan::TxPlan,
    vema_info::{VeswPortInfo, STATE_FORWARDING},
    vema_info_bytes::{VeswPortInfoBytes, VeswPortInfoRef},
    vema_mac::ETH_ALEN,
    vl_table::VlTable,
};
use core::mem::MaybeUninit;
use kernel::{
    c_str,
    net::{
        rtnl::Rtnl,
        skbuff::{SkBuff, SkBuffRef},
    },
    new_irq_spinlock,
    prelude::*,
    rdma::{
        mad::{Dest, Sender},
        netdev::{AddrList, AddrLists, EthtoolStat, UlpNetdevAtomic, UlpNetdevRef, VnicUlp},
    },
    sync::{
        rcu::{Prepared, Rcu, ReadSide},
        Arc, IrqSpinLock,
    },
    time::{ktime_ms_delta, Ktime},
};

/// At most this many traps of a vport follow its first one within [`TRAP_WINDOW_MS`]
/// (`OPA_VNIC_TRAP_BURST_LIMIT`).
pub(crate) const TRAP_BURST_LIMIT: u32 = 4;
/// The rate limiting window of a vport's traps: 4.096 us * 2^18 (`OPA_VNIC_TRAP_TIMEOUT`).
pub(crate) const TRAP_WINDOW_MS: i64 = 1073;

/// The bytes of a frame that hold its destination MAC and, if tagged, its VLAN TCI (both MACs,
/// the tag protocol and the TCI).
const MAC_TAG_LEN: usize = 16;

/// A vport's MAC table.
pub(crate) type VportMacs = MacIndex<KVec<MacSlot>>;

/// What the agent and the netdev callbacks change of a vport, under its lock (never on the
/// transmit path).
pub(crate) struct VportState {
    /// The vport's info as the EM reads it: configuration, state, generation counts, digest;
    /// in its wire form, which a Get copies out and a Set copies into.
    pub(crate) info: VeswPortInfoBytes,
    /// Trap rate limiting: when the window opened, and the traps sent in it since.
    pub(crate) trap_window: Option<Ktime>,
    pub(crate) trap_count: u32,
    /// Checksums of the unicast and multicast lists at the last `set_rx_mode`.
    pub(crate) umac_hash: u32,
    pub(crate) mmac_hash: u32,
}

/// What a vport's netdev callbacks share with the agent.
///
/// What transmit reads per packet is two immutable objects behind RCU pointers, each replaced
/// whole by the agent when it changes and read under RCU with no lock: the transmit plan of
/// the vport's info (a VESW port info Set replaces it) and the MAC table (a MAC table Set
/// replaces it). A frame takes each as it was before or after a Set, never a mix within one.
#[pin_data]
pub(crate) struct VportShared {
    /// The transmit decisions of the vport's info.
    #[pin]
    pub(crate) plan: Rcu<TxPlan>,
    /// The MAC table (`None`: empty), shared with the agent's [`Vport::macs`].
    ///
    /// [`Vport::macs`]: crate::vema_backend::Vport::macs
    #[pin]
    pub(crate) macs: Rcu<Option<Arc<VportMacs>>>,
    /// What queue selection reads.
    vl: VlTable,
    #[pin]
    pub(crate) state: IrqSpinLock<VportState>,
}

impl VportShared {
    /// The shared part of a new vport: the adapter's power-on info, no MAC table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        let info = VeswPortInfoBytes::from_info(&VeswPortInfo::adapter_pod());
        Arc::pin_init(
            try_pin_init!(Self {
                plan <- Rcu::new(TxPlan::new(&info), GFP_KERNEL),
                macs <- Rcu::new(None, GFP_KERNEL),
                vl: VlTable::new(&info),
                state <- new_irq_spinlock!(VportState {
                    info,
                    trap_window: None,
                    trap_count: 0,
                    umac_hash: 0,
                    mmac_hash: 0,
                }),
            }? Error),
            GFP_KERNEL,
        )
    }

    /// The plan of `info`, allocated for [`VportShared::publish`]: the one step of a Set of
    /// the info that can fail, so it comes before anything changes.
    pub(crate) fn prepare(info: &VeswPortInfoRef<'_>) -> Result<Prepared<TxPlan>> {
        Prepared::new(TxPlan::new(info), GFP_KERNEL)
    }

    /// Publishes `plan`, the plan of `info` ([`VportShared::prepare`]), for transmit, and the
    /// VLs of `info` for queue selection, in that order: queue selection never picks by a
    /// plan that transmit does not send with. Does not wait for the transmits that may still
    /// read the plan it replaces (RCU frees that one later), so an EM's Sets do not queue
    /// behind grace periods. The caller serialises publishers (the agent holds the port's
    /// lock), so that the last plan published is the one of the last info set.
    pub(crate) fn publish(&self, plan: Prepared<TxPlan>, info: &VeswPortInfoRef<'_>) {
        self.plan.publish(plan);
        self.vl.set(info);
    }

    /// Publishes the MAC table `macs` for transmit, as [`VportShared::publish`] does the plan.
    pub(crate) fn publish_macs(&self, macs: Prepared<Option<Arc<VportMacs>>>) {
        self.macs.publish(macs);
    }

    /// Oper state and link status follow the configured state and the interface's; the
    /// netdev is dormant unless configured forwarding (`opa_vnic_update_state()`).
    pub(crate) fn update_state(&self, netdev: &UlpNetdevAtomic, up: bool) {
        let forwarding = {
            let mut st = self.state.lock();
            st.info.update_state(up);
            st.info.config_state() == STATE_FORWARDING
        };
        netdev.set_dormant(!forwarding);
    }
}

/// The driver's part of a vport's netdev.
pub(crate) struct VportUlp {
    pub(crate) shared: Arc<VportShared>,
    /// The sender of the port's agent, which sends the vport's traps (and nothing once the
    /// agent is being unregistered).
    pub(crate) agent: Arc<Sender>,
    /// Where the port's traps go.
    pub(crate) trap_sink: Arc<IrqSpinLock<TrapSink>>,
    pub(crate) num: u8,
}

/// The checksum `opa_vnic_mac_send_event()` keeps of an address list
/// ([`crate::wire::encap::iface_mac_list_crc`], computed as the list is walked).
pub(crate) fn list_crc(lists: &AddrLists<'_>, which: AddrList) -> u32 {
    let mut crc = 0u32;
    let mut n = 0u32;
    lists.for_each(which, &mut |mac| {
        crc = crc32_le(crc, &mac);
        n = n.wrapping_add(1);
    });
    !crc32_le(crc, &n.wrapping_mul(6).to_le_bytes())
}

impl VportUlp {
    /// Tells the EM about `opcode` with a trap to the trap LID it set in ClassPortInfo, as
    /// `opa_vnic_vema_report_event()` does (rate limited the same way). Traps are not
    /// guaranteed: a failure is logged, nothing more.
    fn report(&self, opcode: u8) {
        // What the trap says of the vport.
        let (fabric_id, veswid, veswportnum, slid) = {
            let mut tx = self.shared.state.lock();
            let now = Ktime::ktime_get();
            // As `opa_vnic_vema_send_trap()`: every attempt in an open window counts, but only
            // a trap actually posted opens a window (below), so attempts that send nothing
            // (no trap LID yet) cannot use up the burst of the first real traps.
            match tx.trap_window {
                Some(start) if ktime_ms_delta(now, start) < TRAP_WINDOW_MS => {
                    if tx.trap_count >= TRAP_BURST_LIMIT {
                        pr_warn!("vport {}: trap rate exceeded\n", self.num);
                        return;
                    }
                    tx.trap_count += 1;
                }
                _ => tx.trap_count = 0,
            }
            let i = &tx.info;
            (i.fabric_id(), i.vesw_id(), i.port_num(), i.encap_slid())
        };
        let port = self.agent.port();
        let (dlid, sl, tid, pkey_index) = {
            let mut sink = self.trap_sink.lock();
            if sink.lid == 0 {
                // The EM has not said where traps go (the C driver logs "Invalid dlid").
                return;
            }
            sink.tid = sink.tid.wrapping_add(1);
            (sink.lid, sink.sl, sink.tid, sink.pkey_index)
        };
        let trap = VeswPortTrap {
            fabric_id,
            veswid,
            veswportnum,
            opaportnum: port as u16,
            veswportindex: self.num,
            opcode,
            reserved: 0,
        };
        let mut mad = [0u8; TRAP_MAD_LEN];
        if VemaTrapMad::new(tid, slid, &trap)
            .encode_mad(&mut mad)
            .is_err()
        {
            return;
        }
        let dest = Dest {
            dlid,
            sl,
            pkey_index,
            remote_qpn: 1,
        };
        match self.agent.send(&dest, &mad) {
            Ok(()) => {
                // The first trap posted outside a window opens one.
                let mut tx = self.shared.state.lock();
                if tx.trap_count == 0 {
                    tx.trap_window = Some(Ktime::ktime_get());
                }
            }
            Err(e) => pr_err!(
                "vport {}: trap {} to LID {:#x} not sent: {:?}\n",
                self.num,
                opcode,
                dlid,
                e
            ),
        }
    }
}

impl VnicUlp for VportUlp {
    const DRIVER_NAME: &'static CStr = c_str!("opa_vnic_rs");
    const ETHTOOL_STATS: &'static [EthtoolStat] = ETHTOOL_STATS;
    const HEADROOM: u16 = SKB_HEADROOM;

    fn opened(&self, _rtnl: &Rtnl, netdev: &UlpNetdevRef) {
        self.shared.update_state(netdev, true);
        self.report(TRAP_ETH_LINK_STATUS_CHANGE);
    }

    fn stopped(&self, _rtnl: &Rtnl, netdev: &UlpNetdevRef) {
        self.shared.update_state(netdev, false);
        self.report(TRAP_ETH_LINK_STATUS_CHANGE);
    }

    // Inlined into the netdev's transmit, which only calls it. A frame that cannot be
    // padded, given a head of its own or encapsulated is dropped and counted.
    #[inline(always)]
    fn xmit(&self, netdev: &UlpNetdevAtomic, skb: SkBuff, rcu: &ReadSide) -> Option<SkBuff> {
        let plan = self.shared.plan.read(rcu);
        let macs = self.shared.macs.read(rcu);
        // The DLID of the MAC table entry for the frame's destination (0 if none), as
        // `opa_vnic_chk_mac_tbl()`.
        let lookup = |mac: &[u8; ETH_ALEN]| macs.as_ref().map_or(0, |m| m.lookup(mac));
        match xmit_skb(plan, lookup, skb) {
            Ok(skb) => Some(skb),
            Err(_) => {
                netdev.count_tx_dropped();
                None
            }
        }
    }

    // Inlined into the netdev's queue selection, which only calls it.
    #[inline(always)]
    fn vl_entropy(&self, skb: &SkBuffRef) -> (u8, u8) {
        let entropy = entropy_from_hash(skb.hash());
        // The destination MAC and a tag in the frame, wherever they lie (a packet socket on
        // a scatter-gather device leaves only the Ethernet header in the linear part); the
        // stack has not padded the frame yet, so it may be shorter than a tagged header.
        let mut hdr = MaybeUninit::<[u8; MAC_TAG_LEN]>::uninit();
        let mut mac = MaybeUninit::<[u8; ETH_ALEN]>::uninit();
        let (dmac, frame_tci) = match skb.header(0, &mut hdr) {
            Some(h) => (frame_dmac(h), frame_vlan_tci(h)),
            None => (skb.header(0, &mut mac).copied(), None),
        };
        let Some(dmac) = dmac else {
            return (0, entropy);
        };
        // The stack picks the queue before it moves a VLAN device's tag into the frame
        // (`validate_xmit_vlan()` runs after `netdev_core_pick_tx()`, as the netdev has no
        // VLAN offload), so the tag may still be out of band here; encap reads it from the
        // frame. Either way the VL comes from the tag the frame goes out with, so the queue
        // is the one of the VL the packet is sent on.
        let tci = skb.vlan_tci().or(frame_tci);
        (self.shared.vl.get(&dmac, tci), entropy)
    }

    fn mac_changed(&self, _rtnl: &Rtnl, _netdev: &UlpNetdevRef) {
        self.shared.state.lock().info.bump_uc_macs_gen_count();
        self.report(TRAP_IFACE_UCAST_MAC_CHANGE);
    }

    /// `opa_vnic_set_rx_mode()`: each list's generation count goes up, and a list whose
    /// checksum changed is reported.
    fn rx_mode_changed(&self, _netdev: &UlpNetdevAtomic, lists: &AddrLists<'_>) {
        let uc = list_crc(lists, AddrList::Unicast);
        let mc = list_crc(lists, AddrList::Multicast);
        let (uc_changed, mc_changed) = {
            let mut tx = self.shared.state.lock();
            tx.info.bump_uc_macs_gen_count();
            tx.info.bump_mc_macs_gen_count();
            let changed = (uc != tx.umac_hash, mc != tx.mmac_hash);
            tx.umac_hash = uc;
            tx.mmac_hash = mc;
            changed
        };
        if uc_changed {
            self.report(TRAP_IFACE_UCAST_MAC_CHANGE);
        }
        if mc_changed {
            self.report(TRAP_IFACE_MCAST_MAC_CHANGE);
        }
    }
}
