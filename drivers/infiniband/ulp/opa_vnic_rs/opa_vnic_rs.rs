// SPDX-License-Identifier: GPL-2.0-only

//! Omni-Path Virtual Network Interface Controller (VNIC): Ethernet over an Omni-Path fabric.
//!
//! The module registers an IB client; every OPA device that can allocate VNIC netdevs is
//! taken on. See `Documentation/infiniband/opa_vnic_rs.rst`.

use kernel::rdma::{
    client,
    device::{Device, PortCapMask, OPA_CAP_MASK3_IS_ETH_ON_FABRIC_SUPPORTED},
    event::{EventHandler, EventRegistration, PortEvent},
    mad::Registration,
    scope::DeviceScope,
};
use kernel::sync::Arc;
use kernel::{c_str, prelude::*};

#[path = "wire/mod.rs"]
pub mod wire;

mod encap;
pub mod mac_table;
mod trap_sink;
pub mod vema_agent;
mod vema_backend;
mod vema_port;
mod vport;
mod vport_stats;

#[cfg(CONFIG_INFINIBAND_OPA_VNIC_RUST_KUNIT_TEST)]
mod encap_kunit;
#[cfg(CONFIG_INFINIBAND_OPA_VNIC_RUST_KUNIT_TEST)]
mod mac_table_kunit;
#[cfg(CONFIG_INFINIBAND_OPA_VNIC_RUST_KUNIT_TEST)]
mod vema_kunit;
#[cfg(CONFIG_INFINIBAND_OPA_VNIC_RUST_KUNIT_TEST)]
mod wire_kunit;

module! {
    type: OpaVnicModule,
    name: "opa_vnic_rs",
    author: "The opa_vnic_rs authors",
    description: "Intel OPA Virtual Network driver (Rust)",
    license: "GPL",
}

/// The IB client of the driver.
struct OpaVnicClient;

kernel::ib_client_vtable!(static CLIENT: OpaVnicClient);

/// What the driver keeps for an OPA VNIC device.
struct VnicDevice {
    /// The device's port numbers, first and last.
    ports: (u32, u32),
    /// The VEMA agents of its OPA ports.
    agents: KVec<Arc<Registration<vema_port::VemaPort>>>,
    /// The device's port events, for the carrier of the vports.
    events: Option<Pin<KBox<EventRegistration<PortEvents>>>>,
}

impl Drop for VnicDevice {
    fn drop(&mut self) {
        // No more port events; then the vports' netdevs, while their agents can still send
        // (`vema_unregister()`'s order); then (the fields' drop) the agents.
        self.events = None;
        for agent in self.agents.iter() {
            agent.handler().remove_vports();
        }
    }
}

/// Tells the subnet manager, through the port's capability mask, that `port` carries
/// Ethernet (`on`) or no longer does (`opa_vnic_ctrl_config_dev()`).
fn advertise_eth(device: &Device, port: u32, on: bool) {
    let bit = OPA_CAP_MASK3_IS_ETH_ON_FABRIC_SUPPORTED;
    let (set, clear) = if on { (bit, 0) } else { (0, bit) };
    if let Err(e) = device.modify_port_caps(port, PortCapMask::Opa3, set, clear) {
        pr_warn!(
            "{}: port {}: cannot {} IsEthOnFabricSupported: {:?}\n",
            device.name(),
            port,
            if on { "set" } else { "clear" },
            e
        );
    }
}

/// The ports' agents, by port, for the port events.
struct PortEvents {
    agents: KVec<Arc<Registration<vema_port::VemaPort>>>,
}

impl EventHandler for PortEvents {
    fn port_event(&self, port: u32, event: PortEvent) {
        let Some(agent) = self.agents.iter().find(|a| a.port() == port) else {
            return;
        };
        match event {
            PortEvent::Active => agent.handler().set_carrier(true),
            PortEvent::Error => agent.handler().set_carrier(false),
            PortEvent::PkeyChange => agent.handler().pkeys_changed(agent.device()),
        }
    }
}

impl client::Client for OpaVnicClient {
    const NAME: &'static CStr = c_str!("opa_vnic_rs");
    type DeviceData = KBox<VnicDevice>;

    fn add(device: &DeviceScope) -> Result<KBox<VnicDevice>> {
        let ports = device.ports();
        let vnic = device.cap_opa_vnic();
        pr_info!(
            "{}: ports {}-{}, OPA VNIC capable: {}\n",
            device.name(),
            ports.start(),
            ports.end(),
            if vnic { "yes" } else { "no" }
        );
        if !vnic {
            return Err(EOPNOTSUPP);
        }
        // Built first, so that on any error below its `Drop` takes down what was set up.
        let mut vnic_dev = KBox::new(
            VnicDevice {
                ports: (*ports.start(), *ports.end()),
                agents: KVec::new(),
                events: None,
            },
            GFP_KERNEL,
        )?;
        for port in ports.clone() {
            if !device.cap_opa_mad(port) {
                continue;
            }
            match vema_port::register(device, port) {
                Ok(agent) => {
                    vnic_dev.agents.push(Arc::new(agent, GFP_KERNEL)?, GFP_KERNEL)?;
                }
                // The MAD layer refuses a second agent for the same class and methods: that
                // is another VNIC driver (the C opa_vnic) owning the port.
                Err(e) => pr_err!(
                    "{}: port {}: cannot register the VEMA agent ({:?}); is another OPA VNIC driver (opa_vnic) loaded?\n",
                    device.name(),
                    port,
                    e
                ),
            }
        }
        pr_info!(
            "{}: VEMA agent on {} of {} ports\n",
            device.name(),
            vnic_dev.agents.len(),
            ports.clone().count()
        );
        let mut for_events = KVec::with_capacity(vnic_dev.agents.len(), GFP_KERNEL)?;
        for agent in vnic_dev.agents.iter() {
            for_events.push(agent.clone(), GFP_KERNEL)?;
        }
        vnic_dev.events = Some(KBox::pin_init(
            EventRegistration::new(device, PortEvents { agents: for_events }),
            GFP_KERNEL,
        )?);
        // Only the ports this driver serves: where another VNIC driver owns the agent, the
        // bit is that driver's to set and clear.
        for agent in vnic_dev.agents.iter() {
            advertise_eth(device, agent.port(), true);
        }
        Ok(vnic_dev)
    }

    fn remove(device: &Device, data: KBox<VnicDevice>) {
        pr_info!(
            "{}: released (ports {}-{}, {} VEMA agents)\n",
            device.name(),
            data.ports.0,
            data.ports.1,
            data.agents.len()
        );
        // Withdrawn before the agents and vports go, as the C driver does.
        for agent in data.agents.iter() {
            advertise_eth(device, agent.port(), false);
        }
    }
}

struct OpaVnicModule {
    _client: client::Registration<OpaVnicClient>,
}

impl kernel::Module for OpaVnicModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self {
            _client: client::Registration::new()?,
        })
    }
}
