// SPDX-License-Identifier: GPL-2.0-only

//! The VEMA agent of one OPA port: receives the EM's MADs, answers them with
//! [`vema_agent::process`] under the port's lock, and keeps the port's virtual ports.
//!
//! The virtual ports are kept as the EM configures them (VESW port info, MAC table); their
//! netdevs and data path are not there yet, so an interface is never up: the oper state stays
//! drop-all, the interface MAC lists are empty and the counters zero.

use crate::vema_agent::{self, VportBackend, RESPONSE_LEN};
use crate::wire::{
    mad::{INTEL_OUI, METHOD_GET, METHOD_SET, OPA_EMA_CLASS_VERSION, OPA_MGMT_CLASS_INTEL_EMA},
    vema_counters::{ErrorCounters, SummaryCounters},
    vema_info::{ClassPortInfo, VeswPortInfo},
    vema_mac::{MacTable, MacTableEntry},
    WireError,
};
use kernel::{
    new_mutex,
    prelude::*,
    rdma::{
        device::Device,
        mad::{Agent, AgentSpec, MadHandler, RecvMad},
    },
    sync::Mutex,
};

/// A virtual Ethernet switch port as the EM configured it.
struct Vport {
    num: u8,
    info: VeswPortInfo,
    /// The MAC table: (index, entry), at most one entry per index.
    macs: KVec<(u16, MacTableEntry)>,
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

impl VportBackend for PortState {
    fn class_port_info(&self) -> ClassPortInfo {
        self.class_port_info
    }

    fn set_class_port_info(&mut self, info: &ClassPortInfo) {
        self.class_port_info = *info;
    }

    fn has_vport(&self, vport: u8) -> bool {
        self.vport(vport).is_some()
    }

    fn add_vport(&mut self, vport: u8) -> Result<(), WireError> {
        let new = Vport {
            num: vport,
            info: VeswPortInfo::adapter_pod(),
            macs: KVec::new(),
        };
        // An allocation failure is answered like the C driver's failure to add a vport.
        self.vports
            .push(new, GFP_KERNEL)
            .map_err(|_| WireError::NoSuchVport(vport))
    }

    fn vport_info(&self, vport: u8) -> VeswPortInfo {
        self.vport(vport)
            .map(|v| v.info)
            .unwrap_or_else(VeswPortInfo::vema_pod)
    }

    fn set_vport_info(&mut self, vport: u8, info: &VeswPortInfo) {
        if let Some(v) = self.vport_mut(vport) {
            v.info.apply_set(info);
            // No netdev yet: the interface is never up.
            v.info.vport.update_state(false);
        }
    }

    fn for_each_mac_entry(&self, vport: u8, f: &mut dyn FnMut(u16, &MacTableEntry)) {
        if let Some(v) = self.vport(vport) {
            for (index, entry) in v.macs.iter() {
                f(*index, entry);
            }
        }
    }

    fn update_mac_table(&mut self, vport: u8, table: &MacTable<'_>) -> Result<(), WireError> {
        let v = self.vport_mut(vport).ok_or(WireError::NoSuchVport(vport))?;
        // Build the new table aside, so that a failed allocation leaves the old one.
        let mut macs =
            KVec::with_capacity(v.macs.len(), GFP_KERNEL).map_err(|_| WireError::NoSpace)?;
        for (index, entry) in v.macs.iter() {
            if !table.hdr.covers(*index) {
                macs.push((*index, *entry), GFP_KERNEL)
                    .map_err(|_| WireError::NoSpace)?;
            }
        }
        for (i, entry) in table.entries().enumerate() {
            if entry.is_delete() {
                continue;
            }
            let index = table.hdr.offset.wrapping_add(i as u16);
            macs.push((index, entry), GFP_KERNEL)
                .map_err(|_| WireError::NoSpace)?;
        }
        v.macs = macs;
        v.info.vport.mac_tbl_digest = table.hdr.mac_tbl_digest;
        Ok(())
    }

    fn release_mac_table(&mut self, vport: u8) {
        if let Some(v) = self.vport_mut(vport) {
            v.macs = KVec::new();
        }
    }

    fn for_each_iface_mac(&self, vport: u8, mcast: bool, _f: &mut dyn FnMut([u8; 6])) -> u16 {
        // No netdev, so no interface addresses; the generation counts are the configured ones.
        self.vport(vport).map_or(0, |v| {
            if mcast {
                v.info.vport.mc_macs_gen_count
            } else {
                v.info.vport.uc_macs_gen_count
            }
        })
    }

    fn summary_counters(&self, vport: u8) -> SummaryCounters {
        let mut c = SummaryCounters::ZERO;
        if let Some(v) = self.vport(vport) {
            c.vp_instance = u16::from(v.num);
            c.vesw_id = v.info.vesw.vesw_id;
            // As the C driver: the OPA port number, not the vesw port number.
            c.veswport_num = self.port;
        }
        c
    }

    fn error_counters(&self, vport: u8) -> ErrorCounters {
        let mut c = ErrorCounters::ZERO;
        if let Some(v) = self.vport(vport) {
            c.vp_instance = u16::from(v.num);
            c.vesw_id = v.info.vesw.vesw_id;
            // As the C driver: the OPA port number, not the vesw port number.
            c.veswport_num = self.port;
        }
        c
    }
}

/// The state of a port's agent and the buffer its answers are built in.
struct Locked {
    state: PortState,
    rsp: KBox<[u8; RESPONSE_LEN]>,
}

/// The MAD handler of a port's VEMA agent.
#[pin_data]
pub(crate) struct VemaPort {
    port: u32,
    #[pin]
    locked: Mutex<Locked>,
}

impl MadHandler for VemaPort {
    fn recv(&self, mad: &RecvMad<'_>) {
        let mut guard = self.locked.lock();
        let Locked { state, rsp } = &mut *guard;
        match vema_agent::process(state, mad.bytes(), &mut rsp[..]) {
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
                rsp,
            }),
        }),
    )
}
