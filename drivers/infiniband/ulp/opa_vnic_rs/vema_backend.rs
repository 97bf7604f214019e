// SPDX-License-Identifier: GPL-2.0-only

//! The vports of a port as the VEMA agent changes them: [`VportBackend`] over the port's
//! state, with the device the request arrived on.

use crate::mac_table::{merge, MacIndex};
use crate::trap_sink::TrapSink;
use crate::vema_agent::VportBackend;
use crate::vport::{VportMacs, VportShared, VportUlp};
use crate::vport_stats::{self, VportId};
use crate::wire::{
    tx_plan::TxPlan,
    vema_counters::{ErrorCounters, SummaryCounters},
    vema_info::{ClassPortInfo, VeswPortInfo, ETH_MTU_MAX, STATE_FORWARDING},
    vema_info_bytes::{VeswPortInfoBytes, VeswPortInfoRef, SIZE as INFO_SIZE},
    vema_mac::{MacTable, MacTableEntry},
    WireError,
};
use kernel::{
    net::rtnl::Rtnl,
    prelude::*,
    rdma::{
        mad::Sender,
        netdev::{AddrList, UlpNetdev},
        scope::DeviceScope,
    },
    sync::{rcu::Prepared, Arc, IrqSpinLock},
};

/// A virtual Ethernet switch port and its netdev.
pub(crate) struct Vport {
    pub(crate) num: u8,
    pub(crate) shared: Arc<VportShared>,
    pub(crate) netdev: UlpNetdev<VportUlp>,
    /// The base MAC the EM set last, given to the interface.
    pub(crate) vema_mac: [u8; 6],
    /// The MAC table, as the agent last published it for transmit; the agent reads it here.
    pub(crate) macs: Option<Arc<VportMacs>>,
}

impl Vport {
    /// Sets `info` (whose plan is `plan`, [`VportShared::prepare`]) and acts on it; with
    /// `macs`, also publishes that empty MAC table and zeroes the digest, in the same hold of
    /// the vport's lock as the info, so that a Get sees both or neither. Returns the info as
    /// it leaves it (the answer). Cannot fail: what it needs is allocated.
    fn apply_info(
        &mut self,
        info: &VeswPortInfoRef<'_>,
        plan: Prepared<TxPlan>,
        macs: Option<Prepared<Option<Arc<VportMacs>>>>,
    ) -> [u8; INFO_SIZE] {
        // The plan of the request: it reads only what `apply_set` copies from it, so it is
        // the plan of the info about to be set (the host tests check that for any info and
        // Set). Transmit may use it a moment before the info reads so, as C's transmit reads
        // each field as its Set writes it.
        self.shared.publish(plan, info);
        // The empty table before the digest says so, as a MAC table Set publishes its table
        // before it changes the digest.
        let released = macs.is_some();
        if let Some(macs) = macs {
            self.shared.publish_macs(macs);
            self.macs = None;
        }
        let netdev = self.netdev.netdev();
        // The MAC and MTU change under RTNL, serialised with `ip link set` (the C driver
        // serialises only the MAC, with its adapter lock); the state follows `IFF_UP` as it
        // is under RTNL, which open and stop change and report under RTNL too.
        let rtnl = Rtnl::lock();
        // The new values and the state they give (`opa_vnic_update_state()`, which C calls
        // last: with RTNL and the port's lock held, nothing reads the state in between), and
        // the answer, in one hold of the lock; what the rest needs of the new info, not the
        // info (280 bytes) itself.
        let (answer, mac, eth_mtu, vesw_id, forwarding) = {
            let mut st = self.shared.state.lock();
            st.info.apply_set(info);
            st.info.update_state(netdev.is_up(&rtnl));
            if released {
                st.info.set_mac_tbl_digest(0);
            }
            (
                *st.info.bytes(),
                st.info.base_mac_addr(),
                st.info.eth_mtu(),
                st.info.vesw_id(),
                st.info.config_state() == STATE_FORWARDING,
            )
        };
        if mac != self.vema_mac {
            netdev.set_mac(&rtnl, &mac);
            self.vema_mac = mac;
        }
        // The C driver takes any eth_mtu; above ETH_MTU_MAX frames no longer fit the 16B
        // length field.
        netdev.set_max_mtu(&rtnl, u32::from(eth_mtu.min(ETH_MTU_MAX)));
        // Under RTNL too: the device's `set_id` may reopen the netdev (hfi1 takes the vport's
        // mutex, which its open takes under RTNL: the same order).
        netdev.set_vesw_id(vesw_id);
        netdev.set_dormant(!forwarding);
        answer
    }
}

/// What the agent of a port keeps, under the port's lock.
pub(crate) struct PortState {
    /// The OPA port number.
    pub(crate) port: u32,
    pub(crate) class_port_info: ClassPortInfo,
    pub(crate) vports: KVec<Vport>,
}

impl PortState {
    pub(crate) fn vport(&self, num: u8) -> Option<&Vport> {
        self.vports.iter().find(|v| v.num == num)
    }

    fn vport_mut(&mut self, num: u8) -> Option<&mut Vport> {
        self.vports.iter_mut().find(|v| v.num == num)
    }
}

/// The port's state with the device the request arrived on: what [`vema_agent::process`]
/// works on.
pub(crate) struct Backend<'a> {
    pub(crate) state: &'a mut PortState,
    pub(crate) device: &'a DeviceScope,
    pub(crate) trap_sink: &'a Arc<IrqSpinLock<TrapSink>>,
    /// The sender of the port's own agent, which the netdevs send their traps with.
    pub(crate) sender: &'a Arc<Sender>,
}

impl Backend<'_> {
    /// What the counters of `v` are of (as the C driver: the OPA port number, not the vesw
    /// port number).
    fn vport_id(&self, v: &Vport) -> VportId {
        VportId {
            num: v.num,
            vesw_id: v.shared.state.lock().info.vesw_id(),
            port: self.state.port,
        }
    }

    fn new_vport(&self, num: u8) -> Result<Vport> {
        let shared = VportShared::new()?;
        let netdev = UlpNetdev::new(
            self.device,
            self.state.port,
            VportUlp {
                shared: shared.clone(),
                agent: self.sender.clone(),
                trap_sink: self.trap_sink.clone(),
                num,
            },
        )?;
        // The name and the MAC change under RTNL (`ip link set`).
        let vema_mac = {
            let rtnl = Rtnl::lock();
            pr_info!(
                "{}: port {} vport {}: {}\n",
                self.device.name(),
                self.state.port,
                num,
                netdev.netdev().name(&rtnl)
            );
            netdev.netdev().mac(&rtnl)
        };
        Ok(Vport {
            num,
            shared,
            vema_mac,
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
            .map(|v| v.shared.state.lock().info.info())
            .unwrap_or_else(VeswPortInfo::vema_pod)
    }

    /// Read where the vport keeps it, under its lock: not the whole info made for 4 bytes.
    fn mac_tbl_digest(&self, vport: u8) -> u32 {
        self.state
            .vport(vport)
            .map_or(VeswPortInfo::vema_pod().vport.mac_tbl_digest, |v| {
                v.shared.state.lock().info.mac_tbl_digest()
            })
    }

    /// Copied out of the vport, under its lock: the info is kept in its wire form.
    fn encode_vport_info(&self, vport: u8, out: &mut [u8]) -> Result<(), WireError> {
        match self.state.vport(vport) {
            Some(v) => v.shared.state.lock().info.encode(out),
            None => VeswPortInfo::vema_pod().encode(out),
        }
    }

    /// `opa_vnic_set_vesw_info()`, `opa_vnic_set_per_veswport_info()` and
    /// `opa_vnic_process_vema_config()`: the new values, then the interface's MAC, vesw id,
    /// MTU limit, flow table and state.
    ///
    /// What transmit reads is allocated first, since that is what can fail: a Set it fails
    /// is answered busy and changes nothing, rather than answered success with transmit
    /// still on the old values.
    fn set_vport_info(
        &mut self,
        vport: u8,
        info: &VeswPortInfoRef<'_>,
        out: &mut [u8],
    ) -> Result<(), WireError> {
        let Some(v) = self.state.vport_mut(vport) else {
            return VeswPortInfo::vema_pod().encode(out);
        };
        // The answer's room, found before anything changes: the Set cannot fail after it.
        let out = out
            .first_chunk_mut::<INFO_SIZE>()
            .ok_or(WireError::NoSpace)?;
        let plan = VportShared::prepare(info).map_err(|_| WireError::Busy)?;
        *out = v.apply_info(info, plan, None);
        Ok(())
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
        // Transmit's copy before anything changes: on failure nothing has.
        let published = Prepared::new(new.clone(), GFP_KERNEL).map_err(|_| WireError::NoSpace)?;
        v.shared.publish_macs(published);
        v.shared
            .state
            .lock()
            .info
            .set_mac_tbl_digest(table.hdr.mac_tbl_digest);
        v.macs = new;
        Ok(())
    }

    /// `vema_set_delete_vesw()`: the power-on info, acted on as a Set of it, then
    /// `opa_vnic_release_mac_tbl()`: no entries, digest 0. Both allocations are made first,
    /// so that a reset that cannot have both changes nothing (answered busy, and the EM
    /// deletes again) instead of leaving the info reset and the table as it was.
    fn reset_vport(&mut self, vport: u8) -> Result<(), WireError> {
        let Some(v) = self.state.vport_mut(vport) else {
            return Ok(());
        };
        let pod = VeswPortInfoBytes::from_info(&VeswPortInfo::vema_pod());
        let pod = pod.borrowed();
        let plan = VportShared::prepare(&pod).map_err(|_| WireError::Busy)?;
        let macs = Prepared::new(None, GFP_KERNEL).map_err(|_| WireError::Busy)?;
        v.apply_info(&pod, plan, Some(macs));
        Ok(())
    }

    /// `opa_vnic_query_ucast_macs()`: the device's addresses but the EM's base MAC, then the
    /// secondary unicast ones; `opa_vnic_query_mcast_macs()`: the multicast list.
    fn for_each_iface_mac(&self, vport: u8, mcast: bool, f: &mut dyn FnMut([u8; 6])) -> u16 {
        let Some(v) = self.state.vport(vport) else {
            return 0;
        };
        let (base_mac, uc_gen, mc_gen) = {
            let st = v.shared.state.lock();
            (
                st.info.base_mac_addr(),
                st.info.uc_macs_gen_count(),
                st.info.mc_macs_gen_count(),
            )
        };
        let netdev = v.netdev.netdev();
        // A list that cannot be copied (no atomic memory) is reported empty.
        let each = |which, f: &mut dyn FnMut([u8; 6])| {
            if let Ok(list) = netdev.addr_list(which) {
                list.iter().for_each(|&mac| f(mac));
            }
        };
        if mcast {
            each(AddrList::Multicast, f);
        } else {
            // One snapshot of both lists: the device list changes under RTNL, the unicast list
            // under the address lock, and RTNL keeps `ip link` from changing either meanwhile.
            let rtnl = Rtnl::lock();
            netdev.for_each_dev_addr(&rtnl, &mut |mac| {
                if mac != base_mac {
                    f(mac);
                }
            });
            each(AddrList::Unicast, f);
        }
        if mcast {
            mc_gen
        } else {
            uc_gen
        }
    }

    fn summary_counters(&self, vport: u8) -> SummaryCounters {
        self.state.vport(vport).map_or(SummaryCounters::ZERO, |v| {
            vport_stats::summary_counters(&self.vport_id(v), &v.netdev.stats())
        })
    }

    fn error_counters(&self, vport: u8) -> ErrorCounters {
        self.state.vport(vport).map_or(ErrorCounters::ZERO, |v| {
            vport_stats::error_counters(&self.vport_id(v), &v.netdev.stats())
        })
    }
}
