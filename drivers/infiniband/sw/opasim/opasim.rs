// SPDX-License-Identifier: GPL-2.0-only

//! opasim: software Omni-Path HFIs joined by a simulated switch.
//!
//! The module registers RDMA devices (`opasim0`, `opasim1`, ...) whose ports are OPA ports
//! (OPA MADs of 2048 bytes) and VNIC capable, ACTIVE, with LIDs and P_Key tables set without
//! a subnet manager. The MAD stack and `/dev/infiniband/umad*` run on them; MADs travel
//! between the ports through the switch of [`fabric`], by destination LID, with the P_Key
//! rule of [`pkey`] applied on receive. See `Documentation/infiniband/opasim.rst`.

use kernel::{
    c_str,
    prelude::*,
    rdma::debugfs::{Dir, File},
    sync::Arc,
};

mod capture;
mod control;
mod fabric;
mod hfi;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit;
mod pkey;
mod port;
mod sim;
mod ud;
mod vnic;

/// The wire formats shared with the VNIC drivers and the host tools.
#[path = "../../ulp/opa_vnic_rs/wire/mod.rs"]
pub mod wire;

use control::{CaptureFile, DevicesFile};
use sim::Sim;

module! {
    type: OpasimModule,
    name: "opasim",
    author: "The opa_vnic_rs authors",
    description: "Software Omni-Path HFI and fabric",
    license: "GPL",
}

/// The devices made at load time.
const DEFAULT_DEVICES: u32 = 2;

/// The ports of each device made at load time.
const DEFAULT_PORTS: u32 = 1;

struct OpasimModule {
    capture_file: Option<File<CaptureFile>>,
    devices_file: Option<File<DevicesFile>>,
    sim: Arc<Sim>,
}

impl kernel::Module for OpasimModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let sim = Sim::new(module, Dir::new(c_str!("opasim"), None)?)?;
        let mut this = Self {
            capture_file: None,
            devices_file: None,
            sim,
        };
        for _ in 0..DEFAULT_DEVICES {
            let mut name = KVec::new();
            this.sim.add_device(DEFAULT_PORTS, &[], &mut name)?;
        }
        this.devices_file = Some(DevicesFile::create(&this.sim)?);
        this.capture_file = Some(CaptureFile::create(&this.sim)?);
        Ok(this)
    }
}

impl Drop for OpasimModule {
    fn drop(&mut self) {
        // No more run-time changes, then the devices, before the switch.
        drop(self.capture_file.take());
        drop(self.devices_file.take());
        self.sim.clear();
        pr_info!(
            "unloaded; the switch dropped {} packet(s) for unknown LIDs\n",
            port::Counters::get(&self.sim.fabric.unknown_dlid)
        );
    }
}
