// SPDX-License-Identifier: GPL-2.0-only

//! The simulated switch: every port of every opasim device is attached to it. Without a subnet
//! manager it delivers packets by destination LID, to the port that has it; in the `managed`
//! mode it is a node the SM programs ([`crate::switch`]): directed-route SMPs find their way
//! hop by hop, everything else by the LFT and MFT the SM wrote. A packet that finds no port is
//! dropped and counted.

use crate::{
    capture::{Capture, Kind},
    port::{Counters, Port},
    switch::{passes, SwitchState, SWITCH_PORTS},
};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{
    new_irq_spinlock,
    prelude::*,
    sync::{Arc, IrqSpinLock},
};

/// The most ports the switch has.
pub(crate) const MAX_PORTS: usize = 64;

/// The switch's node GUID, as the HFI ports report their neighbour's (PortInfo's
/// NeighborNodeGUID).
pub(crate) const SWITCH_GUID: u64 = 0x0011_7501_00ff_0000;

/// The switch and the ports attached to it.
#[pin_data]
pub(crate) struct Fabric {
    #[pin]
    ports: IrqSpinLock<[Option<Arc<Port>>; MAX_PORTS]>,
    /// Packets dropped because no port has their destination LID.
    pub(crate) unknown_dlid: AtomicU64,
    /// The port the subnet manager runs on: `(device index + 1) << 8 | port number`, 0 for
    /// none. Every port reports that port's LID as its SMLID, as an SM sets it in the
    /// PortInfo of each port it brings up.
    sm: AtomicU32,
    /// The last packets sent.
    #[pin]
    pub(crate) capture: Capture,
    /// The switch is a node the SM programs (its tables route), rather than a LID lookup.
    pub(crate) managed: bool,
    /// The switch node's state (empty tables when not managed). Taken before `ports`, never
    /// while `ports` is held.
    #[pin]
    pub(crate) switch: IrqSpinLock<SwitchState>,
    /// The devices (bit `n`: device index `n`) whose switch port allows management: a real
    /// switch's per-port setting, which the HFI learns when its link comes up and reports as
    /// PortNeighborMode.MgmtAllowed, and which opa-fm's default Admin vFabric takes for full
    /// membership (`AllMgmtAllowed`); every other HFI is a limited member. Every device by
    /// default.
    mgmt_allowed: AtomicU64,
}

impl Fabric {
    /// An empty switch that routes by LID lookup.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Self::with_mode(false)
    }

    /// An empty switch; `managed`: a node the SM programs.
    pub(crate) fn with_mode(managed: bool) -> Result<Arc<Self>> {
        let capture = Capture::new()?;
        let sw = SwitchState::new(managed)?;
        Arc::pin_init(
            pin_init!(Self {
                ports <- new_irq_spinlock!([const { None }; MAX_PORTS], "opasim_fabric"),
                unknown_dlid: AtomicU64::new(0),
                sm: AtomicU32::new(0),
                capture <- capture,
                managed,
                switch <- new_irq_spinlock!(sw, "opasim_switch"),
                mgmt_allowed: AtomicU64::new(u64::MAX),
            }),
            GFP_KERNEL,
        )
    }

    /// Attaches `port` to the switch; `ENOSPC` when all switch ports are taken.
    pub(crate) fn attach(&self, port: Arc<Port>) -> Result {
        let room = if self.managed {
            SWITCH_PORTS
        } else {
            MAX_PORTS
        };
        let up = port.config().state != kernel::rdma::provider::PortState::Down;
        let mut ports = self.ports.lock();
        let i = ports
            .iter()
            .take(room)
            .position(|p| p.is_none())
            .ok_or(ENOSPC)?;
        ports[i] = Some(port);
        drop(ports);
        self.switch.lock().link(i + 1, up);
        Ok(())
    }

    /// The port attached to slot `i` (switch port `i + 1`).
    pub(crate) fn slot(&self, i: usize) -> Option<Arc<Port>> {
        self.ports.lock().get(i).cloned().flatten()
    }

    /// The slot `port` is attached to.
    pub(crate) fn slot_of(&self, port: &Port) -> Option<usize> {
        let ports = self.ports.lock();
        ports
            .iter()
            .position(|p| p.as_deref().is_some_and(|p| core::ptr::eq(p, port)))
    }

    /// The port the managed switch's LFT sends `dlid` to from switch port `ingress` (0: the
    /// switch itself), if the ports' states let the packet (an SMP, or data) through.
    fn route_managed(&self, ingress: usize, dlid: u32, smp: bool) -> Option<Arc<Port>> {
        let egress = {
            let st = self.switch.lock();
            if ingress != 0 && !passes(st.state(ingress), smp) {
                return None;
            }
            st.egress(dlid)
                .filter(|&e| e >= 1 && passes(st.state(e), smp))?
        };
        self.slot(egress - 1)
    }

    /// `port` became Active: the managed switch's port on the other end of its link follows
    /// if it is Armed, as a switch with cascade activation does (opa-fm's default
    /// `SwitchCascadeActivateEnable`: it activates the HFIs and relies on the switch ports
    /// following, `sweep_activate()`).
    pub(crate) fn neighbor_active(&self, port: &Port) {
        if !self.managed {
            return;
        }
        let Some(i) = self.slot_of(port) else {
            return;
        };
        let mut st = self.switch.lock();
        if let Some(p) = st.port_mut(i + 1) {
            if p.state == kernel::rdma::provider::PortState::Armed {
                p.state = kernel::rdma::provider::PortState::Active;
                st.port_state_change = true;
            }
        }
    }

    /// The port an SMP the managed switch sends itself goes to.
    pub(crate) fn forward_from_switch(&self, dlid: u32) -> Option<Arc<Port>> {
        self.route_managed(0, dlid, true)
    }

    /// The switch port `port` is attached to (from 1), as PortInfo's NeighborPortNum; 0 if
    /// it is not attached.
    pub(crate) fn switch_port(&self, port: &Port) -> u8 {
        let ports = self.ports.lock();
        ports
            .iter()
            .position(|p| p.as_deref().is_some_and(|p| core::ptr::eq(p, port)))
            .and_then(|i| u8::try_from(i + 1).ok())
            .unwrap_or(0)
    }

    /// Detaches the ports for which `f` is true from the switch.
    pub(crate) fn detach_where(&self, f: impl Fn(&Port) -> bool) {
        // The ports are dropped after the lock is released.
        let mut old: [Option<Arc<Port>>; MAX_PORTS] = [const { None }; MAX_PORTS];
        let mut ports = self.ports.lock();
        for (o, p) in old.iter_mut().zip(ports.iter_mut()) {
            if p.as_deref().is_some_and(&f) {
                *o = p.take();
            }
        }
        drop(ports);
        drop(old);
    }

    /// The active port whose LID is `dlid`.
    pub(crate) fn route(&self, dlid: u32) -> Option<Arc<Port>> {
        if dlid == 0 {
            return None;
        }
        let ports = self.ports.lock();
        ports
            .iter()
            .flatten()
            .find(|p| p.active_lid() == Some(dlid))
            .cloned()
    }

    /// Routes a data packet from `from` to `dlid`: the destination port, or `None` after
    /// counting the drop (in the switch and in the sender's `xmit_unknown_dlid`).
    pub(crate) fn forward(&self, from: &Port, dlid: u32) -> Option<Arc<Port>> {
        self.forward_as(from, dlid, false)
    }

    /// Routes an SMP (QP0, VL15) from `from` to `dlid`: as [`Self::forward`], but through
    /// managed switch ports that are up and not yet Active, too.
    pub(crate) fn forward_smp(&self, from: &Port, dlid: u32) -> Option<Arc<Port>> {
        self.forward_as(from, dlid, true)
    }

    fn forward_as(&self, from: &Port, dlid: u32, smp: bool) -> Option<Arc<Port>> {
        let to = if self.managed {
            self.slot_of(from)
                .and_then(|i| self.route_managed(i + 1, dlid, smp))
        } else {
            self.route(dlid)
        };
        if to.is_none() {
            Counters::inc(&self.unknown_dlid);
            Counters::inc(&from.counters.xmit_unknown_dlid);
        }
        to
    }

    /// Sets which devices' switch ports allow management (bit `n`: device index `n`).
    pub(crate) fn set_mgmt_allowed(&self, devices: u64) {
        self.mgmt_allowed.store(devices, Ordering::Relaxed);
    }

    /// Whether the switch port of device `dev_index` allows management (`all`, every bit
    /// set, covers devices past index 63 too).
    pub(crate) fn mgmt_allowed(&self, dev_index: u32) -> bool {
        let set = self.mgmt_allowed.load(Ordering::Relaxed);
        set == u64::MAX || (dev_index < 64 && set & (1 << dev_index) != 0)
    }

    /// Whether an attached port other than `except` has the LID `lid`.
    pub(crate) fn lid_in_use(&self, lid: u32, except: Option<&Port>) -> bool {
        let ports = self.ports.lock();
        ports
            .iter()
            .flatten()
            .any(|p| !except.is_some_and(|e| core::ptr::eq(e, &**p)) && p.config().lid == lid)
    }

    /// Makes port `num` of device `dev_index` the subnet manager's, or none.
    pub(crate) fn set_sm(&self, sm: Option<(u32, u32)>) {
        let v = sm.map_or(0, |(dev, num)| ((dev + 1) << 8) | (num & 0xff));
        self.sm.store(v, Ordering::Relaxed);
    }

    /// The device index and port number of the subnet manager's port.
    pub(crate) fn sm_port(&self) -> Option<(u32, u32)> {
        let v = self.sm.load(Ordering::Relaxed);
        (v != 0).then(|| ((v >> 8) - 1, v & 0xff))
    }

    /// The LID of the subnet manager's port now (0 without one, or while it is down): what
    /// every port reports as its SMLID, and where the EM sends SA queries.
    pub(crate) fn sm_lid(&self) -> u32 {
        let Some((dev, num)) = self.sm_port() else {
            return 0;
        };
        let ports = self.ports.lock();
        ports
            .iter()
            .flatten()
            .find(|p| p.dev_index == dev && p.num == num)
            .and_then(|p| p.active_lid())
            .unwrap_or(0)
    }

    /// Records a packet sent from `from` in the capture.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn capture(
        &self,
        kind: Kind,
        from: &Port,
        slid: u32,
        dlid: u32,
        pkey: u16,
        vl: Option<u8>,
        data: &[u8],
    ) {
        self.capture
            .record(kind, from.dev_index, from.num, slid, dlid, pkey, vl, data);
    }

    /// The active ports other than `from` a multicast packet to `dlid` goes to: the ports
    /// of the MFT's mask in the managed mode, else every one (the switch floods).
    pub(crate) fn flood(&self, from: &Port, dlid: u32) -> KVec<Arc<Port>> {
        let mut out = KVec::new();
        // Bit N of the mask is switch port N, which is slot N - 1; all slots without an SM.
        let mask = if self.managed {
            let st = self.switch.lock();
            (1..=SWITCH_PORTS)
                .filter(|&n| passes(st.state(n), false))
                .fold(0u64, |m, n| m | (1u64 << n))
                & st.mcast_mask(dlid)
        } else {
            !0
        };
        let ports = self.ports.lock();
        for (i, p) in ports.iter().enumerate() {
            let Some(p) = p else { continue };
            let bit = if self.managed {
                (mask >> (i + 1)) & 1
            } else {
                1
            };
            if bit != 0 && !core::ptr::eq(&**p, from) && p.active_lid().is_some() {
                // Atomic: the lock keeps interrupts off. A failure floods fewer ports, as a
                // congested switch would.
                let _ = out.push(p.clone(), GFP_ATOMIC);
            }
        }
        out
    }
}

/// The first multicast LID of 16B packets (24-bit LIDs); the permissive LID above them is not
/// multicast.
pub(crate) const MULTICAST_BASE: u32 = 0xf0_0000;

/// Whether `dlid` is a multicast LID of a 16B packet.
pub(crate) fn is_multicast(dlid: u32) -> bool {
    (MULTICAST_BASE..0xff_ffff).contains(&dlid)
}
