// SPDX-License-Identifier: GPL-2.0-only

//! The VEMA agent of one OPA port: receives the EM's MADs, answers them with
//! [`vema_agent::process`] under the port's lock, and keeps the port's virtual ports, each
//! with its VNIC netdev.
//!
//! Locking: the port's [`Mutex`] serialises the agent (and so every change of configuration);
//! what the data path reads per packet (configuration, flow table, MAC table) sits in each
//! vport's [`IrqSpinLock`], taken briefly by the agent to publish a change and by transmit to
//! read it. The netdev callbacks never take the port's mutex (the agent holds it while it
//! takes RTNL to change the MTU). A MAC table update builds the new table off the lock and
//! only swaps a pointer under it.

use crate::encap::{encap_skb, TxInfo};
use crate::mac_table::{merge, MacIndex, MacSlot};
use crate::vema_agent::{self, VportBackend, RESPONSE_LEN};
use crate::wire::{
    encap::{crc32_le, entropy_from_hash, flow_table, frame_dmac, frame_vlan_tci},
    mad::{
        INTEL_OUI, METHOD_GET, METHOD_SET, OPA_EMA_CLASS_VERSION, OPA_MGMT_CLASS_INTEL_EMA,
        OPA_MGMT_MAD_SIZE,
    },
    trap::{
        VemaTrapMad, VeswPortTrap, TRAP_ETH_LINK_STATUS_CHANGE, TRAP_IFACE_MCAST_MAC_CHANGE,
        TRAP_IFACE_UCAST_MAC_CHANGE, TRAP_MAD_LEN,
    },
    vema_counters::{ErrorCounters, SummaryCounters},
    vema_info::{ClassPortInfo, VeswPortInfo, ETH_MTU_MAX, STATE_FORWARDING},
    vema_mac::{MacTable, MacTableEntry},
    WireError,
};
use kernel::{
    c_str,
    net::skbuff::SkBuff,
    new_irq_spinlock, new_mutex,
    prelude::*,
    rdma::{
        device::Device,
        irqlock::IrqSpinLock,
        mad::{Agent, AgentSpec, Dest, MadHandler, RecvMad},
        netdev::{AddrList, AddrLists, EthtoolStat, VnicNetdev, VnicNetdevRef, VnicUlp},
    },
    sync::{Arc, Mutex},
    time::{ktime_ms_delta, Ktime},
};

/// At most this many traps of a vport follow its first one within [`TRAP_WINDOW_MS`]
/// (`OPA_VNIC_TRAP_BURST_LIMIT`).
const TRAP_BURST_LIMIT: u32 = 4;
/// The rate limiting window of a vport's traps: 4.096 us * 2^18 (`OPA_VNIC_TRAP_TIMEOUT`).
const TRAP_WINDOW_MS: i64 = 1073;

/// What transmit reads per packet.
struct TxState {
    tx: TxInfo,
    /// Trap rate limiting: when the window opened, and the traps sent in it since.
    trap_window: Option<Ktime>,
    trap_count: u32,
    /// Checksums of the unicast and multicast lists at the last `set_rx_mode`.
    umac_hash: u32,
    mmac_hash: u32,
    /// The MAC table (`None`: empty), shared with the agent's [`Vport::macs`].
    macs: Option<Arc<VportMacs>>,
}

/// A vport's MAC table.
type VportMacs = MacIndex<KVec<MacSlot>>;

impl TxState {
    /// The DLID of the MAC table entry for `dmac` (0 if none), as `opa_vnic_chk_mac_tbl()`.
    fn lookup(&self, dmac: &[u8; 6]) -> u32 {
        self.macs.as_ref().map_or(0, |m| m.lookup(dmac))
    }
}

/// What a vport's netdev callbacks share with the agent.
#[pin_data]
struct VportShared {
    #[pin]
    tx: IrqSpinLock<TxState>,
}

impl VportShared {
    /// Oper state and link status follow the configured state and the interface's; the
    /// netdev is dormant unless configured forwarding (`opa_vnic_update_state()`).
    fn update_state(&self, netdev: &VnicNetdevRef, up: bool) {
        let forwarding = {
            let mut tx = self.tx.lock();
            tx.tx.info.vport.update_state(up);
            tx.tx.info.vport.config_state == STATE_FORWARDING
        };
        netdev.set_dormant(!forwarding);
    }
}

/// The driver's part of a vport's netdev.
struct VportUlp {
    shared: Arc<VportShared>,
    /// The port's agent, which sends the vport's traps.
    agent: Arc<Agent<VemaPort>>,
    num: u8,
}

/// The checksum `opa_vnic_mac_send_event()` keeps of an address list
/// ([`crate::wire::encap::iface_mac_list_crc`], computed as the list is walked).
fn list_crc(lists: &AddrLists<'_>, which: AddrList) -> u32 {
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
        let info = {
            let mut tx = self.shared.tx.lock();
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
            tx.tx.info
        };
        let port = self.agent.port();
        let (dlid, sl, tid, pkey_index) = {
            let mut sink = self.agent.handler().trap_sink.lock();
            if sink.lid == 0 {
                // The EM has not said where traps go (the C driver logs "Invalid dlid").
                return;
            }
            sink.tid = sink.tid.wrapping_add(1);
            (sink.lid, sink.sl, sink.tid, sink.pkey_index)
        };
        let trap = VeswPortTrap {
            fabric_id: info.vesw.fabric_id,
            veswid: info.vesw.vesw_id,
            veswportnum: info.vport.port_num,
            opaportnum: port as u16,
            veswportindex: self.num,
            opcode,
            reserved: 0,
        };
        let mut mad = [0u8; TRAP_MAD_LEN];
        if VemaTrapMad::new(tid, info.vport.encap_slid, &trap)
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
                let mut tx = self.shared.tx.lock();
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

/// What `ethtool -S` shows: the C driver's names, in its order.
const ETHTOOL_STATS: &[EthtoolStat] = &[
    ("rx_packets", |s| s.netstats.rx_packets),
    ("tx_packets", |s| s.netstats.tx_packets),
    ("rx_bytes", |s| s.netstats.rx_bytes),
    ("tx_bytes", |s| s.netstats.tx_bytes),
    ("rx_errors", |s| s.netstats.rx_errors),
    ("tx_errors", |s| s.netstats.tx_errors),
    ("rx_dropped", |s| s.netstats.rx_dropped),
    ("tx_dropped", |s| s.netstats.tx_dropped),
    ("tx_unicast", |s| s.tx_grp.unicast),
    ("tx_mcastbcast", |s| s.tx_grp.mcastbcast),
    ("tx_untagged", |s| s.tx_grp.untagged),
    ("tx_vlan", |s| s.tx_grp.vlan),
    ("tx_64_size", |s| s.tx_grp.s_64),
    ("tx_65_127", |s| s.tx_grp.s_65_127),
    ("tx_128_255", |s| s.tx_grp.s_128_255),
    ("tx_256_511", |s| s.tx_grp.s_256_511),
    ("tx_512_1023", |s| s.tx_grp.s_512_1023),
    ("tx_1024_1518", |s| s.tx_grp.s_1024_1518),
    ("tx_1519_max", |s| s.tx_grp.s_1519_max),
    ("rx_unicast", |s| s.rx_grp.unicast),
    ("rx_mcastbcast", |s| s.rx_grp.mcastbcast),
    ("rx_untagged", |s| s.rx_grp.untagged),
    ("rx_vlan", |s| s.rx_grp.vlan),
    ("rx_64_size", |s| s.rx_grp.s_64),
    ("rx_65_127", |s| s.rx_grp.s_65_127),
    ("rx_128_255", |s| s.rx_grp.s_128_255),
    ("rx_256_511", |s| s.rx_grp.s_256_511),
    ("rx_512_1023", |s| s.rx_grp.s_512_1023),
    ("rx_1024_1518", |s| s.rx_grp.s_1024_1518),
    ("rx_1519_max", |s| s.rx_grp.s_1519_max),
    ("rx_fifo_errors", |s| s.netstats.rx_fifo_errors),
    ("rx_length_errors", |s| s.netstats.rx_length_errors),
    ("tx_fifo_errors", |s| s.netstats.tx_fifo_errors),
    ("tx_carrier_errors", |s| s.netstats.tx_carrier_errors),
    ("tx_dlid_zero", |s| s.tx_dlid_zero),
    ("tx_drop_state", |s| s.tx_drop_state),
    ("rx_drop_state", |s| s.rx_drop_state),
    ("rx_oversize", |s| s.rx_oversize),
    ("rx_runt", |s| s.rx_runt),
];

impl VnicUlp for VportUlp {
    const DRIVER_NAME: &'static CStr = c_str!("opa_vnic_rs");
    const ETHTOOL_STATS: &'static [EthtoolStat] = ETHTOOL_STATS;

    fn opened(&self, netdev: &VnicNetdevRef) {
        self.shared.update_state(netdev, true);
        self.report(TRAP_ETH_LINK_STATUS_CHANGE);
    }

    fn stopped(&self, netdev: &VnicNetdevRef) {
        self.shared.update_state(netdev, false);
        self.report(TRAP_ETH_LINK_STATUS_CHANGE);
    }

    fn encap(&self, skb: &mut SkBuff) -> Result {
        let tx = self.shared.tx.lock();
        encap_skb(&tx.tx, |mac| tx.lookup(mac), skb)
    }

    fn vl_entropy(&self, skb: &mut SkBuff) -> (u8, u8) {
        let entropy = entropy_from_hash(skb.hash());
        let frame = skb.data();
        let Some(dmac) = frame_dmac(frame) else {
            return (0, entropy);
        };
        let tci = frame_vlan_tci(frame);
        let vl = self.shared.tx.lock().tx.info.vport.select_vl(&dmac, tci);
        (vl, entropy)
    }

    fn mac_changed(&self, _netdev: &VnicNetdevRef) {
        {
            let mut tx = self.shared.tx.lock();
            let count = &mut tx.tx.info.vport.uc_macs_gen_count;
            *count = count.wrapping_add(1);
        }
        self.report(TRAP_IFACE_UCAST_MAC_CHANGE);
    }

    /// `opa_vnic_set_rx_mode()`: each list's generation count goes up, and a list whose
    /// checksum changed is reported.
    fn rx_mode_changed(&self, _netdev: &VnicNetdevRef, lists: &AddrLists<'_>) {
        let uc = list_crc(lists, AddrList::Unicast);
        let mc = list_crc(lists, AddrList::Multicast);
        let (uc_changed, mc_changed) = {
            let mut tx = self.shared.tx.lock();
            let vport = &mut tx.tx.info.vport;
            vport.uc_macs_gen_count = vport.uc_macs_gen_count.wrapping_add(1);
            vport.mc_macs_gen_count = vport.mc_macs_gen_count.wrapping_add(1);
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

/// A virtual Ethernet switch port and its netdev.
struct Vport {
    num: u8,
    shared: Arc<VportShared>,
    netdev: VnicNetdev<VportUlp>,
    /// The base MAC the EM set last, given to the interface.
    vema_mac: [u8; 6],
    /// The MAC table, as transmit reads it from [`TxState::macs`]; the agent reads it here,
    /// without the transmit lock.
    macs: Option<Arc<VportMacs>>,
}

/// What the agent of a port keeps, under the port's lock.
struct PortState {
    /// The OPA port number.
    port: u32,
    class_port_info: ClassPortInfo,
    vports: KVec<Vport>,
}

impl PortState {
    fn vport(&self, num: u8) -> Option<&Vport> {
        self.vports.iter().find(|v| v.num == num)
    }

    fn vport_mut(&mut self, num: u8) -> Option<&mut Vport> {
        self.vports.iter_mut().find(|v| v.num == num)
    }
}

/// The port's state with the device the request arrived on: what [`vema_agent::process`]
/// works on.
struct Backend<'a> {
    state: &'a mut PortState,
    device: &'a Device,
    trap_sink: &'a IrqSpinLock<TrapSink>,
    /// The port's own agent, for the netdevs' traps; `None` once the port shuts down.
    agent: Option<&'a Arc<Agent<VemaPort>>>,
}

impl Backend<'_> {
    fn new_vport(&self, num: u8) -> Result<Vport> {
        let shared = Arc::pin_init(
            pin_init!(VportShared {
                tx <- new_irq_spinlock!(TxState {
                    tx: TxInfo {
                        info: VeswPortInfo::adapter_pod(),
                        flow_tbl: flow_table(0),
                    },
                    trap_window: None,
                    trap_count: 0,
                    umac_hash: 0,
                    mmac_hash: 0,
                    macs: None,
                }),
            }),
            GFP_KERNEL,
        )?;
        let agent = self.agent.ok_or(ENODEV)?.clone();
        let netdev = VnicNetdev::new(
            self.device,
            self.state.port,
            VportUlp {
                shared: shared.clone(),
                agent,
                num,
            },
        )?;
        pr_info!(
            "{}: port {} vport {}: {}\n",
            self.device.name(),
            self.state.port,
            num,
            netdev.netdev().name()
        );
        Ok(Vport {
            num,
            shared,
            vema_mac: netdev.netdev().mac(),
            netdev,
            macs: None,
        })
    }
}

impl VportBackend for Backend<'_> {
    fn class_port_info(&self) -> ClassPortInfo {
        self.state.class_port_info
    }

    fn set_class_port_info(&mut self, info: &ClassPortInfo) {
        self.state.class_port_info = *info;
        let mut sink = self.trap_sink.lock();
        sink.lid = info.trap_lid;
        sink.sl = info.trap_sl();
    }

    fn has_vport(&self, vport: u8) -> bool {
        self.state.vport(vport).is_some()
    }

    fn add_vport(&mut self, vport: u8) -> Result<(), WireError> {
        // Any failure (no VNIC netdev from the device, no memory) is answered like the C
        // driver's failure to add a vport.
        let new = self.new_vport(vport).map_err(|e| {
            pr_err!(
                "{}: port {}: cannot add vport {}: {:?}\n",
                self.device.name(),
                self.state.port,
                vport,
                e
            );
            WireError::NoSuchVport(vport)
        })?;
        self.state
            .vports
            .push(new, GFP_KERNEL)
            .map_err(|_| WireError::NoSuchVport(vport))
    }

    fn vport_info(&self, vport: u8) -> VeswPortInfo {
        self.state
            .vport(vport)
            .map(|v| v.shared.tx.lock().tx.info)
            .unwrap_or_else(VeswPortInfo::vema_pod)
    }

    /// `opa_vnic_set_vesw_info()`, `opa_vnic_set_per_veswport_info()` and
    /// `opa_vnic_process_vema_config()`: the new values, then the interface's MAC, vesw id,
    /// MTU limit, flow table and state.
    fn set_vport_info(&mut self, vport: u8, info: &VeswPortInfo) {
        let Some(v) = self.state.vport_mut(vport) else {
            return;
        };
        let now = {
            let mut tx = v.shared.tx.lock();
            tx.tx.info.apply_set(info);
            tx.tx.flow_tbl = flow_table(tx.tx.info.vesw.def_port_mask);
            tx.tx.info
        };
        let netdev = v.netdev.netdev();
        if now.vport.base_mac_addr != v.vema_mac {
            netdev.set_mac(&now.vport.base_mac_addr);
            v.vema_mac = now.vport.base_mac_addr;
        }
        netdev.set_vesw_id(now.vesw.vesw_id);
        // The C driver takes any eth_mtu; above ETH_MTU_MAX frames no longer fit the 16B
        // length field.
        netdev.set_max_mtu(u32::from(now.vesw.eth_mtu.min(ETH_MTU_MAX)));
        v.shared.update_state(netdev, netdev.is_up());
    }

    fn for_each_mac_entry(&self, vport: u8, f: &mut dyn FnMut(u16, &MacTableEntry)) {
        if let Some(macs) = self.state.vport(vport).and_then(|v| v.macs.as_ref()) {
            for s in macs.slots() {
                f(s.index, &s.entry);
            }
        }
    }

    /// `opa_vnic_update_mac_tbl()`: the entries outside the request's window stay, the
    /// window's non-zero entries replace what it held; transmit switches to the new table at
    /// once.
    fn update_mac_table(&mut self, vport: u8, table: &MacTable<'_>) -> Result<(), WireError> {
        let v = self
            .state
            .vport_mut(vport)
            .ok_or(WireError::NoSuchVport(vport))?;
        let old = v.macs.as_deref().map_or(&[][..], |m| m.slots());
        let mut slots = KVec::with_capacity(old.len() + table.len(), GFP_KERNEL)
            .map_err(|_| WireError::NoSpace)?;
        merge(old.iter(), table, &mut |s| {
            slots.push(s, GFP_KERNEL).map_err(|_| WireError::NoSpace)
        })?;
        let new = if slots.is_empty() {
            None
        } else {
            Some(Arc::new(MacIndex::new(slots), GFP_KERNEL).map_err(|_| WireError::NoSpace)?)
        };
        let old = {
            let mut tx = v.shared.tx.lock();
            tx.tx.info.vport.mac_tbl_digest = table.hdr.mac_tbl_digest;
            core::mem::replace(&mut tx.macs, new.clone())
        };
        v.macs = new;
        // The old table goes with its last reference, outside the lock.
        drop(old);
        Ok(())
    }

    /// `opa_vnic_release_mac_tbl()`: no entries, digest 0.
    fn release_mac_table(&mut self, vport: u8) {
        if let Some(v) = self.state.vport_mut(vport) {
            let old = {
                let mut tx = v.shared.tx.lock();
                tx.tx.info.vport.mac_tbl_digest = 0;
                tx.macs.take()
            };
            v.macs = None;
            drop(old);
        }
    }

    /// `opa_vnic_query_ucast_macs()`: the device's addresses but the EM's base MAC, then the
    /// secondary unicast ones; `opa_vnic_query_mcast_macs()`: the multicast list.
    fn for_each_iface_mac(&self, vport: u8, mcast: bool, f: &mut dyn FnMut([u8; 6])) -> u16 {
        let Some(v) = self.state.vport(vport) else {
            return 0;
        };
        let info = v.shared.tx.lock().tx.info;
        v.netdev.netdev().with_addr_lists(|lists| {
            if mcast {
                lists.for_each(AddrList::Multicast, f);
            } else {
                lists.for_each(AddrList::Device, &mut |mac| {
                    if mac != info.vport.base_mac_addr {
                        f(mac);
                    }
                });
                lists.for_each(AddrList::Unicast, f);
            }
        });
        if mcast {
            info.vport.mc_macs_gen_count
        } else {
            info.vport.uc_macs_gen_count
        }
    }

    /// `opa_vnic_get_summary_counters()`: from the device's statistics of the netdev.
    fn summary_counters(&self, vport: u8) -> SummaryCounters {
        let mut c = SummaryCounters::ZERO;
        let Some(v) = self.state.vport(vport) else {
            return c;
        };
        let s = v.netdev.stats();
        c.vp_instance = u16::from(v.num);
        c.vesw_id = v.shared.tx.lock().tx.info.vesw.vesw_id;
        // As the C driver: the OPA port number, not the vesw port number.
        c.veswport_num = self.state.port;
        c.tx_errors = s.netstats.tx_errors;
        c.rx_errors = s.netstats.rx_errors;
        c.tx_packets = s.netstats.tx_packets;
        c.rx_packets = s.netstats.rx_packets;
        c.tx_bytes = s.netstats.tx_bytes;
        c.rx_bytes = s.netstats.rx_bytes;
        let (t, r) = (&s.tx_grp, &s.rx_grp);
        c.tx_unicast = t.unicast;
        c.tx_mcastbcast = t.mcastbcast;
        c.tx_untagged = t.untagged;
        c.tx_vlan = t.vlan;
        c.tx_64_size = t.s_64;
        c.tx_65_127 = t.s_65_127;
        c.tx_128_255 = t.s_128_255;
        c.tx_256_511 = t.s_256_511;
        c.tx_512_1023 = t.s_512_1023;
        c.tx_1024_1518 = t.s_1024_1518;
        c.tx_1519_max = t.s_1519_max;
        c.rx_unicast = r.unicast;
        c.rx_mcastbcast = r.mcastbcast;
        c.rx_untagged = r.untagged;
        c.rx_vlan = r.vlan;
        c.rx_64_size = r.s_64;
        c.rx_65_127 = r.s_65_127;
        c.rx_128_255 = r.s_128_255;
        c.rx_256_511 = r.s_256_511;
        c.rx_512_1023 = r.s_512_1023;
        c.rx_1024_1518 = r.s_1024_1518;
        c.rx_1519_max = r.s_1519_max;
        c
    }

    /// `opa_vnic_get_error_counters()`: from the device's statistics of the netdev.
    fn error_counters(&self, vport: u8) -> ErrorCounters {
        let mut c = ErrorCounters::ZERO;
        let Some(v) = self.state.vport(vport) else {
            return c;
        };
        let s = v.netdev.stats();
        c.vp_instance = u16::from(v.num);
        c.vesw_id = v.shared.tx.lock().tx.info.vesw.vesw_id;
        c.veswport_num = self.state.port;
        c.tx_errors = s.netstats.tx_errors;
        c.rx_errors = s.netstats.rx_errors;
        c.tx_dlid_zero = s.tx_dlid_zero;
        c.tx_drop_state = s.tx_drop_state;
        c.tx_logic = s
            .netstats
            .tx_fifo_errors
            .wrapping_add(s.netstats.tx_carrier_errors);
        c.rx_bad_veswid = s.netstats.rx_nohandler;
        c.rx_runt = s.rx_runt;
        c.rx_oversize = s.rx_oversize;
        c.rx_drop_state = s.rx_drop_state;
        c.rx_logic = s.netstats.rx_fifo_errors;
        c
    }
}

/// The state of a port's agent and the buffer its answers are built in.
struct Locked {
    state: PortState,
    /// The request being answered, zero-filled past what arrived (see
    /// [`RecvMad::read_padded`]).
    req: KBox<[u8; OPA_MGMT_MAD_SIZE]>,
    rsp: KBox<[u8; RESPONSE_LEN]>,
    /// The agent itself, for the netdevs it creates to send traps through. This reference
    /// cycle (agent, handler, agent) is broken by [`VemaPort::shut_down`].
    agent: Option<Arc<Agent<VemaPort>>>,
}

/// Where traps go: what the EM set in ClassPortInfo, kept apart from the port's mutex so
/// that the netdev callbacks (under RTNL) can read it.
struct TrapSink {
    lid: u32,
    sl: u8,
    tid: u64,
    /// The P_Key index traps go with (see [`trap_pkey_index`]).
    pkey_index: u16,
}

/// The P_Key index of a port's traps: the full default P_Key's, else the limited one's, else
/// 1, as `vema_get_pkey_ix()` picks it. The C driver searches the table for every trap, in
/// atomic context too; this driver searches it when the agent starts and when the port's
/// P_Key table changes.
fn trap_pkey_index(device: &Device, port: u32) -> u16 {
    device
        .find_pkey(port, 0xffff)
        .or_else(|| device.find_pkey(port, 0x7fff))
        .unwrap_or(1)
}

/// The MAD handler of a port's VEMA agent.
#[pin_data]
pub(crate) struct VemaPort {
    port: u32,
    #[pin]
    locked: Mutex<Locked>,
    #[pin]
    trap_sink: IrqSpinLock<TrapSink>,
}

impl VemaPort {
    /// Hands the port its own agent, once registered: vports created from then on can send
    /// traps.
    pub(crate) fn start(agent: &Arc<Agent<VemaPort>>) {
        agent.handler().pkeys_changed(agent.device());
        agent.handler().locked.lock().agent = Some(agent.clone());
    }

    /// The port's P_Key table changed: finds the P_Key index of traps again.
    pub(crate) fn pkeys_changed(&self, device: &Device) {
        let index = trap_pkey_index(device, self.port);
        self.trap_sink.lock().pkey_index = index;
    }

    /// `opa_vnic_event()`: the port went up or down; so does the carrier of its vports.
    pub(crate) fn set_carrier(&self, on: bool) {
        let locked = self.locked.lock();
        for v in locked.state.vports.iter() {
            v.netdev.netdev().set_carrier(on);
        }
    }

    /// Removes the vports (their netdevs unregister, so no callback can send a trap any
    /// more) and drops the agent's reference to itself, before the agent is unregistered.
    pub(crate) fn shut_down(&self) {
        let (vports, agent) = {
            let mut locked = self.locked.lock();
            (
                core::mem::take(&mut locked.state.vports),
                locked.agent.take(),
            )
        };
        drop(vports);
        drop(agent);
    }
}

impl MadHandler for VemaPort {
    fn recv(&self, mad: &RecvMad<'_>) {
        let mut guard = self.locked.lock();
        let Locked {
            state,
            req,
            rsp,
            agent,
        } = &mut *guard;
        // A request may arrive trimmed to its attribute (as opa-fm sends them) or at the size
        // of an InfiniBand MAD: it is read as the C agent reads it, zero-filled to a whole MAD.
        mad.read_padded(&mut req[..]);
        let mut backend = Backend {
            state,
            device: mad.device(),
            trap_sink: &self.trap_sink,
            agent: agent.as_ref(),
        };
        match vema_agent::process(&mut backend, &req[..], &mut rsp[..]) {
            Ok(len) => {
                if let Err(e) = mad.respond(&rsp[..len]) {
                    pr_warn!(
                        "port {}: cannot answer LID {:#x}: {:?}\n",
                        self.port,
                        mad.slid(),
                        e
                    );
                }
            }
            Err(e) => pr_debug!(
                "port {}: unanswerable MAD from LID {:#x}: {:?}\n",
                self.port,
                mad.slid(),
                e
            ),
        }
    }
}

/// Registers the VEMA agent of `port` of `device`.
pub(crate) fn register(device: &Device, port: u32) -> Result<Agent<VemaPort>> {
    let spec = AgentSpec {
        class: OPA_MGMT_CLASS_INTEL_EMA,
        class_version: OPA_EMA_CLASS_VERSION,
        oui: INTEL_OUI,
        methods: &[METHOD_GET, METHOD_SET],
        rmpp_version: 1,
    };
    let req = KBox::new([0u8; OPA_MGMT_MAD_SIZE], GFP_KERNEL)?;
    let rsp = KBox::new([0u8; RESPONSE_LEN], GFP_KERNEL)?;
    // Inside `try_pin_init!` a field's name stands for the initialised field.
    let opa_port = port;
    Agent::register(
        device,
        port,
        &spec,
        try_pin_init!(VemaPort {
            port,
            locked <- new_mutex!(Locked {
                state: PortState {
                    port: opa_port,
                    class_port_info: ClassPortInfo::ZERO,
                    vports: KVec::new(),
                },
                req,
                rsp,
                agent: None,
            }),
            trap_sink <- new_irq_spinlock!(TrapSink {
                lid: 0,
                sl: 0,
                tid: 0,
                pkey_index: 1,
            }),
        }),
    )
}
