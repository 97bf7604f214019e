// SPDX-License-Identifier: GPL-2.0-only

//! opasim: software Omni-Path HFIs joined by a simulated switch.
//!
//! The module registers RDMA devices (`opasim0`, `opasim1`, ...) whose ports are OPA ports
//! (OPA MADs of 2048 bytes) and VNIC capable, ACTIVE, with LIDs and P_Key tables set without
//! a subnet manager. The MAD stack and `/dev/infiniband/umad*` run on them; MADs travel
//! between the ports through the switch of [`fabric`], by destination LID, with the P_Key
//! rule of [`pkey`] applied on receive. See `Documentation/infiniband/opasim.rst`.

use kernel::{c_str, prelude::*, rdma::provider::Registration, sync::Arc};

mod fabric;
mod hfi;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit;
mod pkey;
mod port;
mod ud;

use fabric::Fabric;
use hfi::{Hfi, HfiDevice};
use port::{Port, PortConfig};

module! {
    type: OpasimModule,
    name: "opasim",
    author: "The opa_vnic_rs authors",
    description: "Software Omni-Path HFI and fabric",
    license: "GPL",
}

/// The devices made at load time.
pub(crate) const DEFAULT_DEVICES: u32 = 2;

/// The ports of each device made at load time.
pub(crate) const DEFAULT_PORTS: u32 = 1;

/// The P_Key table of the ports made at load time: the default partition and the limited
/// member of partition 1.
pub(crate) const DEFAULT_PKEYS: [u16; 2] = [0xffff, 0x8001];

/// The GUID of device `index`; its port `n` has the GUID plus `n`.
pub(crate) fn device_guid(index: u32) -> u64 {
    0x0011_7501_0000_0000 | (u64::from(index) << 8)
}

/// A device of the module: its registration; its ports are attached to the switch.
struct SimDevice {
    reg: Option<Registration<Hfi>>,
    index: u32,
    fabric: Arc<Fabric>,
}

impl SimDevice {
    /// Creates device `index` with one port per configuration in `configs`, attaches the
    /// ports to the switch and registers the device.
    fn new(
        module: &'static ThisModule,
        fabric: &Arc<Fabric>,
        index: u32,
        configs: &[PortConfig],
    ) -> Result<Self> {
        let guid = device_guid(index);
        let mut ports = KVec::with_capacity(configs.len(), GFP_KERNEL)?;
        for (i, c) in (1u32..).zip(configs) {
            ports.push(Port::new(index, i, guid + u64::from(i), *c)?, GFP_KERNEL)?;
        }
        // From here on, dropping `this` detaches whatever was attached.
        let mut this = Self {
            reg: None,
            index,
            fabric: fabric.clone(),
        };
        for p in ports.iter() {
            fabric.attach(p.clone())?;
        }
        let data = HfiDevice {
            guid,
            fabric: fabric.clone(),
            ports,
        };
        let nports = u32::try_from(configs.len())?;
        this.reg = Some(Registration::new(
            module,
            c_str!("opasim%d"),
            nports,
            guid,
            data,
        )?);
        Ok(this)
    }
}

impl Drop for SimDevice {
    fn drop(&mut self) {
        // Unregister first: the clients stop using the ports before they leave the switch.
        drop(self.reg.take());
        let index = self.index;
        self.fabric.detach_where(|p| p.dev_index == index);
    }
}

struct OpasimModule {
    devices: KVec<SimDevice>,
    fabric: Arc<Fabric>,
}

impl kernel::Module for OpasimModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let fabric = Fabric::new()?;
        let mut devices = KVec::with_capacity(DEFAULT_DEVICES as usize, GFP_KERNEL)?;
        for index in 0..DEFAULT_DEVICES {
            let mut configs = KVec::with_capacity(DEFAULT_PORTS as usize, GFP_KERNEL)?;
            for p in 0..DEFAULT_PORTS {
                let lid = index * DEFAULT_PORTS + p + 1;
                configs.push(PortConfig::new(lid, &DEFAULT_PKEYS), GFP_KERNEL)?;
            }
            let dev = SimDevice::new(module, &fabric, index, &configs)?;
            pr_info!(
                "{}: {} port(s), LIDs from {}\n",
                dev.reg.as_ref().map_or(c_str!("?"), |r| r.device().name()),
                DEFAULT_PORTS,
                index * DEFAULT_PORTS + 1
            );
            devices.push(dev, GFP_KERNEL)?;
        }
        Ok(Self { devices, fabric })
    }
}

impl Drop for OpasimModule {
    fn drop(&mut self) {
        // The devices go before the switch.
        drop(core::mem::replace(&mut self.devices, KVec::new()));
        pr_info!(
            "unloaded; the switch dropped {} packet(s) for unknown LIDs\n",
            port::Counters::get(&self.fabric.unknown_dlid)
        );
    }
}
