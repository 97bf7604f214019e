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
    debugfs::{Dir, File},
    prelude::*,
    sync::Arc,
};

mod capture;
mod control;
mod cq;
mod fabric;
mod faults;
mod faults_ctl;
mod fifo;
mod hfi;
mod integrity;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit_mad;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit_managed;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit_pma;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit_sma;
#[cfg(CONFIG_INFINIBAND_OPASIM_KUNIT_TEST)]
mod kunit_switch;
mod mgmt;
mod pkey;
mod pma;
mod port;
mod portinfo_fields;
mod qp;
mod rx_errors;
mod sim;
mod sm;
mod sma;
mod sma_answer;
mod sma_cong;
mod sma_node;
mod sma_port;
mod sma_tables;
mod sma_trap;
mod switch;
mod switch_sma;
mod switch_smi;
mod ud;
mod vnic;
mod vnic_dma;
mod vnic_stats;

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

kernel::module_param_uint!(
    devices,
    2,
    "Devices made at load time, LIDs from 1 (0 to 16)"
);
kernel::module_param_uint!(
    managed,
    0,
    "1: the switch is a node a subnet manager programs (opa-fm): ports come up in Init without a LID, the switch forwards by the tables the SM writes; 0: LIDs from 1, ports Active, no SM needed"
);
kernel::module_param_uint!(ports, 1, "Ports of each device made at load time (1 to 8)");
kernel::module_param_charp!(
    mgmt_allowed,
    c_str!("all"),
    "Devices whose switch port allows management (PortNeighborMode.MgmtAllowed, full membership of opa-fm's Admin vFabric): all, or device indices, comma-separated"
);
kernel::module_param_charp!(
    pkeys,
    c_str!("default"),
    "P_Key table of the ports made at load time (up to 16, comma-separated); default: hfi1's after reset (0x8001,0x7fff) when managed, else 0xffff,0x8001,0x7fff"
);

kernel::module_param_uint!(
    vnic_tx_queues,
    4,
    "Transmit queues of each VNIC netdev (1 to 16), as hfi1 gives one per SDMA engine"
);

kernel::module_param_uint!(
    vnic_sdma_descs,
    2048,
    "Descriptors of each VNIC transmit queue's SDMA ring (a power of 2, 64 to 32768; hfi1's sdma_descq_cnt)"
);

/// The most devices made at load time.
const MAX_LOAD_DEVICES: u32 = 16;

/// Reads a set of device indices: `all`, or indices below 64, comma-separated; bit `n` of
/// the result is device `n`.
pub(crate) fn parse_device_set(input: &[u8]) -> Result<u64> {
    if control::words(input).eq([b"all".as_slice()]) {
        return Ok(u64::MAX);
    }
    let mut set = 0u64;
    for w in control::words(input) {
        let n = control::parse_num(w).filter(|&n| n < 64).ok_or(EINVAL)?;
        set |= 1 << n;
    }
    if set == 0 {
        return Err(EINVAL);
    }
    Ok(set)
}

struct OpasimModule {
    capture_file: Option<File<CaptureFile>>,
    sm_file: Option<File<sm::SmFile>>,
    devices_file: Option<File<DevicesFile>>,
    sim: Arc<Sim>,
}

impl kernel::Module for OpasimModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        if managed.get() > 1 {
            pr_err!("managed is 0 or 1\n");
            return Err(EINVAL);
        }
        let sim = Sim::new(
            module,
            Dir::new(c_str!("opasim"), None)?,
            managed.get() == 1,
        )?;
        let mut this = Self {
            capture_file: None,
            sm_file: None,
            devices_file: None,
            sim,
        };
        let (ndev, nports) = (devices.get(), ports.get());
        let table = match pkeys.get().as_bytes() {
            b"default" => *sim::default_pkeys(managed.get() == 1),
            keys => control::parse_pkeys(keys).inspect_err(|_| {
                pr_err!("pkeys: 1 to 16 P_Keys up to 0xffff, key part not 0, comma-separated\n")
            })?,
        };
        let allowed = parse_device_set(mgmt_allowed.get().as_bytes()).inspect_err(|_| {
            pr_err!("mgmt_allowed: all, or device indices below 64, comma-separated\n")
        })?;
        this.sim.fabric.set_mgmt_allowed(allowed);
        let txqs = vnic_tx_queues.get();
        if txqs == 0 || txqs > kernel::rdma::vnic::MAX_TX_QUEUES {
            pr_err!(
                "vnic_tx_queues is 1 to {}\n",
                kernel::rdma::vnic::MAX_TX_QUEUES
            );
            return Err(EINVAL);
        }
        let descs = vnic_sdma_descs.get();
        if !(64..=32768).contains(&descs) || !descs.is_power_of_two() {
            pr_err!("vnic_sdma_descs is a power of 2 from 64 to 32768\n");
            return Err(EINVAL);
        }
        if ndev > MAX_LOAD_DEVICES || nports == 0 || nports > sim::MAX_DEVICE_PORTS {
            pr_err!(
                "devices is 0 to {}, ports 1 to {}\n",
                MAX_LOAD_DEVICES,
                sim::MAX_DEVICE_PORTS
            );
            return Err(EINVAL);
        }
        for _ in 0..ndev {
            let mut name = KVec::new();
            this.sim.add_device(nports, &[], &table, &mut name)?;
        }
        this.devices_file = Some(DevicesFile::create(&this.sim)?);
        this.capture_file = Some(CaptureFile::create(&this.sim)?);
        this.sm_file = Some(sm::SmFile::create(&this.sim)?);
        Ok(this)
    }
}

impl Drop for OpasimModule {
    fn drop(&mut self) {
        // No more run-time changes, then the devices, before the switch.
        drop(self.sm_file.take());
        drop(self.capture_file.take());
        drop(self.devices_file.take());
        self.sim.clear();
        pr_info!(
            "unloaded; the switch dropped {} packet(s) for unknown LIDs\n",
            port::Counters::get(&self.sim.fabric.unknown_dlid)
        );
    }
}
